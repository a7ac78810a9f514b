"""The search peers of ``bench --scale``, fed the project's own analysed terms: bm25s and tantivy.

Each peer indexes every concept as the terms our tokenizer gives its name, description
and body (in order, repeats kept), and is queried with `query_terms` of the message
(analysed outside the timed call), so only the engines differ. Both are optional (the
``bench`` extra): a missing one is reported as absent.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

#: A peer's search: analysed query terms -> the row numbers of its top 5.
PeerSearch = Callable[[Sequence[str]], list[int]]


def bm25s_peer(documents: list[list[str]]) -> PeerSearch | None:
    """``bm25s.BM25`` over `documents` (term lists), or None when bm25s is not installed."""
    try:
        import bm25s  # type: ignore[import-untyped]  # ships no type information
    except ImportError:
        return None
    model = bm25s.BM25()
    model.index(documents, show_progress=False)
    vocabulary: dict[str, Any] = getattr(model, "vocab_dict", {}) or {}

    def search(terms: Sequence[str]) -> list[int]:
        known = [t for t in terms if t in vocabulary] if vocabulary else list(terms)
        if not known:
            return []
        docs, scores = model.retrieve([known], k=min(5, len(documents)), show_progress=False)
        return [int(d) for d, s in zip(docs[0], scores[0], strict=True) if s > 0]

    return search


def tantivy_peer(documents: list[list[str]]) -> PeerSearch | None:
    """A tantivy index in memory over `documents` (whitespace-joined terms), or None without tantivy.

    Searched with a disjunction of term queries, top 5, ``count=False`` (no hit count).
    """
    try:
        import tantivy  # type: ignore[import-not-found,unused-ignore]  # optional, ships no stubs
    except ImportError:
        return None
    builder = tantivy.SchemaBuilder()
    builder.add_text_field("t", stored=False, tokenizer_name="whitespace", index_option="freq")
    builder.add_integer_field("i", stored=True, fast=True)
    schema = builder.build()
    index = tantivy.Index(schema)
    writer = index.writer(200_000_000, 1)
    for row, terms in enumerate(documents):
        writer.add_document(tantivy.Document(t=" ".join(terms), i=row))
    writer.commit()
    writer.wait_merging_threads()
    index.reload()
    searcher = index.searcher()
    should = tantivy.Occur.Should

    def search(terms: Sequence[str]) -> list[int]:
        query = tantivy.Query.boolean_query([(should, tantivy.Query.term_query(schema, "t", t)) for t in terms])
        return [address.doc for _, address in searcher.search(query, limit=5, count=False).hits]

    return search
