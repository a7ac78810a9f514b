"""The FTS5 plumbing of the SQLite store: the ``insika`` tokenizer, the index layout, queries.

The store does not analyse text. The index layer gives it a `Tokenizer` (the one
analyser's document terms, with the analysis version); `register` wraps it as the FTS5
tokenizer ``insika`` of a connection. Queries arrive already analysed: every MATCH
expression is built here from analysed terms, each quoted, so in query mode a token
passes through unchanged and nothing a customer types is read as FTS5 syntax.

Per-agent statistics: every indexed text reaches the tokenizer as
``<agent> US <text>`` (US = the unit separator, U+001F, which no agent id holds), and
each term is indexed as ``<agent> US <term>``. So an agent's terms are its own tokens:
their document frequencies (``fts5vocab``, and the idf ``bm25()`` computes) count that
agent's concepts only, and a query matches only that agent's concepts.

Ranking: not SQLite's ``bm25()``, whose idf is 0 for a term held by half the documents or
more, but `RANK_FUNCTION`, an auxiliary function registered with the tokenizer: the same BM25
(k1 1.2, b 0.75, the column weights, FTS5's document count and lengths) with a positive idf,
ln(1 + (N - df + 0.5) / (df + 0.5)), df the agent's own (given by the query, read from
``fts5vocab``). It is what Index::Postings computes (`insika_knowledge.index.bm25`).

The index is derived data: `ensure_index` drops and rebuilds it whenever its layout
(`LAYOUT`) or the analysis version differs from what the ``meta`` table records.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, Final

import apsw

from insika_knowledge.store.sqlite import migrations

#: The FTS5 tokenizer name the index is declared with (``tokenize='insika'``).
TOKENIZER_NAME: Final = "insika"
#: Separates the agent from the text (content) and from each term (tokens).
SEPARATOR: Final = "\x1f"
#: The layout of the FTS5 objects (``sql/sqlite/fts5_index.sql``); bump when that file changes.
LAYOUT: Final = 2
#: ``meta`` keys recording what the current index was built with.
LAYOUT_KEY: Final = "fts_layout"
ANALYSIS_KEY: Final = "analysis_version"
_LAYOUT_FILE: Final = "fts5_index.sql"
#: The auxiliary function queries rank by (``rank MATCH 'insika_bm25(w1, w2, w3, df...)'``).
RANK_FUNCTION: Final = "insika_bm25"
#: BM25's parameters, as SQLite's ``bm25()`` has them.
K1: Final = 1.2
B: Final = 0.75


def fts5_available(conn: apsw.Connection) -> bool:
    """True when this SQLite build has the FTS5 module."""
    try:
        return any(row[0] == "ENABLE_FTS5" for row in conn.execute("PRAGMA compile_options")) or \
            _probe(conn)
    except apsw.Error:
        return False


def _probe(conn: apsw.Connection) -> bool:
    try:
        conn.execute("CREATE VIRTUAL TABLE temp._insika_probe USING fts5(x)")
        conn.execute("DROP TABLE temp._insika_probe")
        return True
    except apsw.Error:
        return False


def register(conn: apsw.Connection, tokenize: Callable[[str], Iterable[str]]) -> None:
    """Register the ``insika`` FTS5 tokenizer on `conn`, analysing documents with `tokenize`.

    Every connection that writes concepts needs it once the index exists (the triggers
    re-index what they write).

    Args:
        conn: an apsw connection to the tenant's database.
        tokenize: a document's text -> its index terms in order (a `Tokenizer`, or the
            store's delegate that raises when no tokenizer was given).
    """

    def factory(con: apsw.Connection, args: list[str]) -> Any:
        def tokenize_utf8(utf8: bytes, flags: int, locale: str | None) -> Iterator[str]:
            text = utf8.decode("utf-8", "replace")
            if flags & apsw.FTS5_TOKENIZE_QUERY:
                yield text  # a term built by `match_expression`: already analysed
                return
            agent, separator, body = text.partition(SEPARATOR)
            if not separator:  # not laid out by this module: index the text as it is
                yield from tokenize(text)
                return
            prefix = agent + SEPARATOR
            for term in tokenize(body):
                yield prefix + term

        return tokenize_utf8

    conn.register_fts5_tokenizer(TOKENIZER_NAME, factory)
    conn.register_fts5_function(RANK_FUNCTION, _bm25)


def _bm25(api: apsw.FTS5ExtensionApi, *args: Any) -> float:
    """Minus the BM25 of the current row (lower is better, as ``bm25()``), with a positive idf.

    `args`: the weights of the three columns, then each query phrase's document frequency,
    in phrase order.
    """
    weights, doc_freqs = args[:3], args[3:]
    documents = api.row_count
    avgdl = api.column_total_size(-1) / documents if documents else 1.0
    norm = K1 * (1.0 - B + B * api.column_size(-1) / (avgdl or 1.0))
    total = 0.0
    for phrase in range(api.phrase_count):
        found = api.phrase_locations(phrase)
        f = sum(float(w) * len(at) for w, at in zip(weights, found, strict=False))
        if f:
            df = float(doc_freqs[phrase]) if phrase < len(doc_freqs) else 0.0
            weight = math.log(1.0 + (documents - df + 0.5) / (df + 0.5))
            total += weight * ((f * (K1 + 1.0)) / (f + norm))
    return -total


def rank_call(agent: str, terms: Iterable[str], weights: Sequence[float], conn: apsw.Connection) -> str:
    """The ``rank MATCH`` value for `match_expression` of `terms`: weights, then each phrase's df."""
    phrases = sorted({t for t in terms if t})
    found = doc_freqs(conn, agent, phrases)
    numbers = [*(f"{w:g}" for w in weights), *(str(found.get(t, 0)) for t in phrases)]
    return f"{RANK_FUNCTION}({', '.join(numbers)})"


def agent_term(agent: str, term: str) -> str:
    """The indexed token of `term` in `agent`'s concepts."""
    return agent + SEPARATOR + term


def match_expression(agent: str, terms: Iterable[str]) -> str | None:
    """An FTS5 MATCH expression OR-ing `agent`'s analysed `terms`, each quoted; None when empty.

    Terms come from our analyser, never raw user text; quoting (with ``"`` doubled)
    makes any character, operator word or column filter a plain token anyway.
    """
    quoted = ['"' + agent_term(agent, t).replace('"', '""') + '"' for t in sorted({t for t in terms if t})]
    return " OR ".join(quoted) if quoted else None


def doc_freqs(conn: apsw.Connection, agent: str, terms: Sequence[str]) -> dict[str, int]:
    """Concepts of `agent` holding each of `terms` (``fts5vocab``); absent terms are omitted."""
    out: dict[str, int] = {}
    for term in terms:
        row = conn.execute(
            "SELECT doc FROM concepts_fts_vocab WHERE term = ?", (agent_term(agent, term),)
        ).fetchone()
        if row is not None:
            out[term] = int(row[0])
    return out


def vocabulary(conn: apsw.Connection, agent: str) -> dict[str, int]:
    """Every term of `agent`'s concepts with its document frequency (one range read)."""
    low = agent + SEPARATOR
    high = agent + chr(ord(SEPARATOR) + 1)
    rows = conn.execute(
        "SELECT term, doc FROM concepts_fts_vocab WHERE term >= ? AND term < ?", (low, high)
    )
    return {str(term)[len(low):]: int(doc) for term, doc in rows}


def recorded(conn: apsw.Connection) -> dict[str, str]:
    """What the ``meta`` table records (empty before migration ``005_meta``)."""
    if not conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type='table' AND name='meta'"
    ).fetchone():
        return {}
    return {str(k): str(v) for k, v in conn.execute("SELECT key, value FROM meta")}


def is_current(conn: apsw.Connection, analysis_version: int) -> bool:
    """True when the FTS5 index exists with this layout and `analysis_version`."""
    meta = recorded(conn)
    return meta.get(LAYOUT_KEY) == str(LAYOUT) and meta.get(ANALYSIS_KEY) == str(analysis_version)


def ensure_index(conn: apsw.Connection, analysis_version: int) -> bool:
    """Build the FTS5 index afresh unless it is current; True when this call rebuilt it.

    Runs in one ``BEGIN IMMEDIATE`` transaction that re-reads ``meta`` first, so processes
    opening the database together rebuild it once. The ``insika`` tokenizer must be
    registered on `conn` with a tokenizer of `analysis_version`.

    Raises:
        apsw.Error: SQLite failed (the caller maps storage failures to the library's errors).
    """
    if is_current(conn, analysis_version):
        return False
    conn.execute("BEGIN IMMEDIATE")
    try:
        rebuilt = not is_current(conn, analysis_version)
        if rebuilt:
            conn.execute((migrations.folder() / _LAYOUT_FILE).read_text(encoding="utf-8"))
            conn.executemany(
                "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)",
                [(LAYOUT_KEY, str(LAYOUT)), (ANALYSIS_KEY, str(analysis_version))],
            )
        conn.execute("COMMIT")
    except BaseException:
        migrations.rollback(conn)
        raise
    return rebuilt
