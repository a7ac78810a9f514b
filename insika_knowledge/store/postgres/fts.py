"""Full text on PostgreSQL: our analyser's terms as a ``tsvector``, ranked by BM25 in SQL.

The store never analyses text: the index layer gives it a `Tokenizer`, and this module
turns the terms of a concept's name, description and body into a ``tsvector`` literal,
cast as it is (no parser or dictionary of PostgreSQL touches a term, as with the
``simple`` configuration), and a query's analysed terms into a ``tsquery`` OR-ing them.

Each term carries one position per occurrence in the concept: numbered from 1 in the
name, from 4001 in the description, from 8001 in the body, so a term's weighted frequency
is exactly what SQLite's ``bm25()`` sums (column weight x occurrences in that column).
Positions carry no weight label (all ``D``): a search labels the query's terms ``A`` to
keep only them (``setweight`` + ``ts_filter``) before reading their positions.
PostgreSQL keeps at most `MAX_POSITIONS` positions per term and refuses terms longer than
`MAX_TERM_BYTES`: beyond 256 occurrences a term's frequency stays at 256 (BM25 saturates
long before), and an over-long term is left out of both the document and the query.

`SEARCH_SQL` is FTS5's ``bm25()`` (k1 = 1.2, b = 0.75) with a positive idf,
ln(1 + (N - df + 0.5) / (df + 0.5)) (``013_positive_idf``, as `insika_knowledge.index.bm25`),
with the agent's own statistics: N and the average length are the agent's
concepts' (``generations``), each term's document frequency the agent's
(``concept_terms``). The GIN index finds the candidates (``tsv @@ query``); of those,
only the ones that can reach the top are scored (``fts_bm25_pruned``, migration 007: a
term held once, in the body only, adds at most a known ceiling to a score, so concepts
holding the query's terms only so are skipped once the best scores are above the sum of
those ceilings). The result is the one scoring every candidate gives, float for float.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Final

#: PostgreSQL's limit of positions kept per term in one tsvector.
MAX_POSITIONS: Final = 256
#: PostgreSQL's limit on one term's length, in bytes (``word is too long``).
MAX_TERM_BYTES: Final = 2046
#: Where each field's positions start: name 1, description 4001, body 8001 (``fts_bm25``
#: reads a position's field from its range; PostgreSQL keeps positions up to 16383).
FIELD_OFFSETS: Final = (0, 4000, 8000)
#: ``meta`` key recording the analysis version the stored terms follow.
ANALYSIS_KEY: Final = "analysis_version"
#: BM25's parameters, as SQLite's ``bm25()`` has them.
K1: Final = 1.2
B: Final = 0.75


def _quoted(term: str) -> str:
    """`term` as a quoted tsvector/tsquery lexeme (``'`` doubled, ``\\`` escaped)."""
    return "'" + term.replace("\\", "\\\\").replace("'", "''") + "'"


def usable(term: str) -> bool:
    """True when PostgreSQL can store `term` as a lexeme (not empty, not too long)."""
    return bool(term) and len(term.encode("utf-8", "surrogatepass")) <= MAX_TERM_BYTES


def document(fields: Sequence[str], tokenize: Callable[[str], Iterable[str]]) -> tuple[str, int]:
    """The tsvector literal of a concept's fields, and its length in terms.

    Args:
        fields: name, description and body, in that order (weights A, B, C).
        tokenize: text -> its analysed terms, in order, repeats kept (the `Tokenizer`).

    Returns:
        ``(literal, length)``: ``'term':1,8001 ...`` (a term's positions number its
        occurrences in each field from that field's `FIELD_OFFSETS`, at most
        `MAX_POSITIONS` in all), and every term the fields yield (BM25's |D|, as FTS5
        counts tokens).
    """
    positions: dict[str, list[str]] = {}
    length = 0
    for offset, text in zip(FIELD_OFFSETS, fields, strict=True):
        in_field: dict[str, int] = {}
        for term in tokenize(text):
            length += 1
            if not usable(term):
                continue
            seen = positions.setdefault(term, [])
            if len(seen) < MAX_POSITIONS:
                number = in_field[term] = in_field.get(term, 0) + 1
                seen.append(str(offset + number))
    literal = " ".join(f"{_quoted(term)}:{','.join(marks)}" for term, marks in positions.items())
    return literal, length


def query(terms: Iterable[str]) -> str | None:
    """A tsquery literal OR-ing the analysed `terms`, each quoted; None when none is usable."""
    kept = sorted({t for t in terms if usable(t)})
    return " | ".join(_quoted(t) for t in kept) if kept else None


def search_params(agent: str, terms: Iterable[str], limit: int,
                  weights: tuple[float, float, float]) -> dict[str, object] | None:
    """The parameters of `SEARCH_SQL` for `agent`'s best `limit` concepts by the analysed `terms`.

    Args:
        agent: whose concepts (and statistics) are searched.
        terms: analysed query terms; those PostgreSQL cannot store are left out.
        limit: rows wanted (the window read is ``max(4 * limit, 32)``, as FTS5 is asked).
        weights: field weights for (name, description, body).

    Returns:
        The parameter mapping, or None when no term is usable or `limit` is below 1.
    """
    kept = sorted({t for t in terms if usable(t)})
    if not kept or limit <= 0:
        return None
    wa, wb, wc = (float(w) for w in weights)
    return {"agent": agent, "terms": kept, "lexemes": [_quoted(t) for t in kept],
            "wa": wa, "wb": wb, "wc": wc, "window": max(4 * limit, 32), "lim": limit}


#: BM25 over the candidates the GIN index finds, by migration 007's ``fts_bm25_pruned``
#: function (see ``sql/postgres/012_fts_pruned.sql``). Parameters: `search_params`.
#: Returns the scan columns and the score (higher is better), best first, ties by
#: confidence, recency and name. As FTS5 is asked, the best `window` by score are read,
#: then sorted with the tie-breaks.
SEARCH_SQL: Final = """
SELECT c.id, c.version, c.name, c.description, c.type, c.provenance, c.confidence,
       c.updated_at, c.body, s.score
  FROM fts_bm25_pruned(%(agent)s, %(terms)s::text[], %(lexemes)s::text[], %(wa)s, %(wb)s,
                       %(wc)s, %(window)s) AS s
  JOIN concepts c ON c.id = s.id
 ORDER BY s.score DESC, c.confidence DESC, c.updated_at DESC, c.name
 LIMIT %(lim)s
"""
