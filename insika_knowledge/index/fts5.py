"""Index::FTS5: SQLite's full-text index, ranked by ``bm25()``, over the same analysed terms.

The query is the message's analysed terms (`index.text.query_terms`) OR-ed together,
each quoted, so nothing a customer types is ever read as FTS5 syntax. Ranking is
SQLite's bm25 with column weights name 8, description 4, body 1: a term in a concept's
name or one-line summary says far more about what the concept is than the same term
somewhere in its body (the same reason the `<knowledge>` block shows only those two).
Ties break by confidence, then recency, then name, as in Scan.

Hits carry ``score = -bm25`` (higher is better). Only the top-k rows (and the linked
concepts retrieval asks for) are read, so memory does not grow with the store.

Per agent: the document frequencies (candidate restriction, typo correction's
vocabulary, `weight`) and bm25's idf count the agent's own concepts (the store keeps
each agent's terms apart), so another agent's concepts in the tenant do not change
which terms count as rare. bm25's document count and average field lengths remain the
tenant's (SQLite computes them over the whole table).

Candidate restriction: bm25 gives a term in most documents an idf near zero, yet
ranking must visit every document it matches. So the query keeps its rarest terms,
in order of document frequency, until they cover `CANDIDATE_BUDGET` documents (always
at least one term); only when those yield fewer than top-k hits are the common
terms added back. Ranking among the candidates is then bm25 over the kept terms.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Final

from insika_knowledge.analysis.text import query_terms
from insika_knowledge.index.scan import Entry, Hit, entry_from_row, term_weight
from insika_knowledge.index.tokenizer import attach
from insika_knowledge.index.typos import correct
from insika_knowledge.store.base import FullTextIndex, ScanRow

#: bm25 column weights for (name, description, body); see the module doc.
WEIGHTS: Final = (8.0, 4.0, 1.0)
#: Query terms are kept, rarest first, until their document frequencies add up to this.
CANDIDATE_BUDGET: Final = 2000
#: How long the vocabulary used for typo correction is reused, in seconds.
VOCABULARY_TTL_S: Final = 60.0


class Fts5Index:
    """bm25 search over a store's full-text index, with the agent's own statistics.

    Args:
        store: the tenant's store; it is given the analyser (`index.tokenizer.attach`),
            so its index is built if needed. Where the store can have no full-text index
            (SQLite without FTS5), every search finds nothing: check `attach` first, as
            `Retriever.index_for` does.
        weights: bm25 column weights for (name, description, body).
        budget: the candidate budget (see the module doc).

    Raises:
        RunTimeFailure: the disk is full or failing while the index is built.
        UserError: the database file cannot be written while the index is built.
    """

    name = "fts5"

    def __init__(self, store: FullTextIndex, weights: tuple[float, float, float] = WEIGHTS,
                 budget: int = CANDIDATE_BUDGET):
        attach(store)
        self.store = store
        self.weights = weights
        self.budget = budget
        self._vocabularies: dict[str, tuple[float, dict[str, int]]] = {}
        self._lock = threading.Lock()

    def _vocabulary_now(self, agent: str) -> dict[str, int]:
        """`agent`'s vocabulary (term -> its concepts holding it), re-read after the TTL."""
        now = time.monotonic()
        cached = self._vocabularies.get(agent)
        if cached is None or now - cached[0] > VOCABULARY_TTL_S:
            cached = (now, self.store.fts_vocabulary(agent))
            with self._lock:
                self._vocabularies[agent] = cached
        return cached[1]

    def _doc_freqs(self, agent: str, terms: list[str]) -> dict[str, int]:
        """`agent`'s document frequencies from the cached vocabulary; a term new since it was
        read is looked up (a minute-old count is as good for choosing candidates).
        """
        vocabulary = self._vocabulary_now(agent)
        missing = [t for t in terms if t not in vocabulary]
        if missing:
            vocabulary.update(self.store.fts_doc_freqs(agent, missing[:64]))
        return {t: vocabulary.get(t, 0) for t in terms}

    def analyse(self, agent: str, query: str) -> frozenset[str]:
        """The terms `search` uses: `query_terms`, typos corrected against `agent`'s vocabulary.

        The vocabulary (term -> documents) is read from the index and kept for
        `VOCABULARY_TTL_S` seconds: a correction against a minute-old vocabulary is as
        good, and it spares a full vocabulary read after every write.
        """
        wanted = query_terms(query)
        freqs = self._doc_freqs(agent, sorted(wanted))  # terms new since the vocabulary was read
        vocabulary = self._vocabulary_now(agent)
        return correct(wanted, lambda t: freqs.get(t) or vocabulary.get(t, 0), (freqs.keys(), vocabulary.keys()))

    def search(self, agent: str, query: str, top_k: int) -> list[Hit]:
        """The `top_k` best concepts of `agent` for `query` by bm25; [] when no term matches."""
        freqs = self._doc_freqs(agent, sorted(self.analyse(agent, query)))
        present = sorted((df, t) for t, df in freqs.items() if df > 0)
        if not present:
            return []
        kept: list[str] = []
        covered = 0
        for df, term in present:
            if kept and covered + df > self.budget:
                break
            kept.append(term)
            covered += df
        rows = self._rank(agent, kept, top_k)
        if len(rows) < top_k and len(kept) < len(present):
            rows = self._rank(agent, [t for _, t in present], top_k)
        return [Hit(entry_from_row(row), score) for row, score in rows]

    def weight(self, agent: str) -> Callable[[str], int]:
        """Term weights as Scan computes them (`term_weight`), from `agent`'s own counts."""
        total = max(1, self.store.count(agent))

        def weight(term: str) -> int:
            return term_weight(total, self._doc_freqs(agent, [term])[term])

        return weight

    def _rank(self, agent: str, terms: list[str], top_k: int) -> list[tuple[ScanRow, float]]:
        return self.store.fts_search(agent, terms, top_k, self.weights)

    def lookup(self, agent: str, names: list[str]) -> dict[str, Entry]:
        """Entries for the concepts called `names` (missing names are absent)."""
        return {r.name: entry_from_row(r) for r in self.store.scan_rows_by_names(agent, names)}
