"""Index::FTS5: SQLite's full-text index, ranked by ``bm25()``, over the same analysed terms.

The query is the message's analysed terms (`index.text.query_terms`) OR-ed together,
each quoted, so nothing a customer types is ever read as FTS5 syntax. Ranking is
SQLite's bm25 with column weights name 8, description 4, body 1: a term in a concept's
name or one-line summary says far more about what the concept is than the same term
somewhere in its body (the same reason the `<knowledge>` block shows only those two).
Ties break by confidence, then recency, then name, as in Scan.

Hits carry ``score = -bm25`` (higher is better). Only the top-k rows (and the linked
concepts retrieval asks for) are read, so memory does not grow with the store.
"""

from __future__ import annotations

from typing import Final

from insika_knowledge.index.scan import Entry, Hit, entry_from_row
from insika_knowledge.index.text import query_terms
from insika_knowledge.store.base import Store
from insika_knowledge.store.fts import match_expression

#: bm25 column weights for (name, description, body); see the module doc.
WEIGHTS: Final = (8.0, 4.0, 1.0)


class Fts5Index:
    """bm25 search over a store's FTS5 table (the store must have ``fts_ready``)."""

    name = "fts5"

    def __init__(self, store: Store, weights: tuple[float, float, float] = WEIGHTS):
        self.store = store
        self.weights = weights

    def search(self, agent: str, query: str, top_k: int) -> list[Hit]:
        """The `top_k` best concepts of `agent` for `query` by bm25; [] when no term matches."""
        match = match_expression(query_terms(query))
        if match is None:
            return []
        rows = self.store.fts_search(agent, match, top_k, self.weights)  # type: ignore[attr-defined]
        return [Hit(entry_from_row(row), -score) for row, score in rows]

    def lookup(self, agent: str, names: list[str]) -> dict[str, Entry]:
        """Entries for the concepts called `names` (missing names are absent)."""
        return {r.name: entry_from_row(r) for r in self.store.scan_rows_by_names(agent, names)}
