"""Index::Scan: term overlap over a per-process read cache, served by an inverted index.

The score of a concept for a message is the number of distinct message terms that
occur in the concept's name, description or body (terms from `index.text`). Ties
break by confidence, then recency (``updated_at``), then name. Concepts with no
shared term are never returned.

The cache holds, per agent, each concept's terms and summary, parsed once. Before
every search one indexed lookup reads the agent's generation number; when it moved,
only the concepts whose version changed are reloaded. The inverted index
(term -> concept slots) returns exactly what a full scan of the cache would.
"""

from __future__ import annotations

import heapq
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field

from insika_knowledge.concept import claim_text, has_contradiction, parse_links
from insika_knowledge.index.text import terms
from insika_knowledge.store.base import ScanRow, Store


@dataclass(frozen=True, slots=True)
class Entry:
    """One cached concept: what the block shows, its links, and its index terms."""

    id: int
    version: int
    name: str
    description: str
    type: str
    provenance: str
    confidence: float
    updated_at: str
    in_conflict: bool
    links: tuple[str, ...]
    terms: frozenset[str]
    tiebreak: tuple[float, int, str]  # (-confidence, -updated_at as YYYYMMDDHHMMSS, name)


@dataclass(frozen=True, slots=True)
class Hit:
    """A search result: the cached entry and its score (distinct shared terms)."""

    entry: Entry
    score: int


def entry_from_row(row: ScanRow) -> Entry:
    """Analyse one stored row into a cache entry (terms from name, description, body)."""
    text = f"{row.name.replace('-', ' ')}\n{row.description}\n{row.body}"
    return Entry(
        id=row.id,
        version=row.version,
        name=row.name,
        description=row.description,
        type=row.type,
        provenance=row.provenance,
        confidence=float(row.confidence),
        updated_at=row.updated_at,
        in_conflict=has_contradiction(row.body),
        links=parse_links(claim_text(row.body)),
        terms=terms(text),
        tiebreak=(-float(row.confidence), -_stamp(row.updated_at), row.name),
    )


def _stamp(timestamp: str) -> int:
    digits = "".join(c for c in timestamp if c.isdigit())
    return int(digits) if digits else 0


@dataclass
class _AgentCache:
    generation: int = -1
    by_id: dict[int, Entry] = field(default_factory=dict)
    by_name: dict[str, Entry] = field(default_factory=dict)
    postings: dict[str, list[Entry]] = field(default_factory=dict)

    def rebuild_postings(self) -> None:
        postings: dict[str, list[Entry]] = {}
        for entry in self.by_id.values():
            for term in entry.terms:
                postings.setdefault(term, []).append(entry)
        self.postings = postings
        self.by_name = {e.name: e for e in self.by_id.values()}


class ScanIndex:
    """Term-overlap search over one store's concepts, cached per agent in this process.

    Thread-safe: refreshes are serialised; searches read an immutable snapshot.
    """

    def __init__(self, store: Store):
        self.store = store
        self._caches: dict[str, _AgentCache] = {}
        self._lock = threading.Lock()

    def _cache(self, agent: str) -> _AgentCache:
        generation = self.store.generation(agent)
        cache = self._caches.get(agent)
        if cache is not None and cache.generation == generation:
            return cache
        with self._lock:
            cache = self._caches.get(agent)
            if cache is not None and cache.generation == generation:
                return cache
            fresh = _AgentCache(generation=generation)
            if cache is None:
                fresh.by_id = {r.id: entry_from_row(r) for r in self.store.scan_rows(agent)}
            else:
                versions = self.store.scan_versions(agent)
                kept = {
                    i: e for i, e in cache.by_id.items() if versions.get(i) == e.version
                }
                changed = [i for i in versions if i not in kept]
                if len(changed) > len(versions) // 4:
                    rows = [r for r in self.store.scan_rows(agent) if r.id in set(changed)]
                else:
                    rows = list(self.store.scan_rows(agent, changed))
                kept.update((r.id, entry_from_row(r)) for r in rows)
                fresh.by_id = kept
            fresh.rebuild_postings()
            self._caches[agent] = fresh
            return fresh

    def entries(self, agent: str) -> dict[str, Entry]:
        """Every cached concept of `agent` by name (refreshed if the store moved)."""
        return self._cache(agent).by_name

    def search(self, agent: str, query: str, top_k: int) -> list[Hit]:
        """The `top_k` concepts of `agent` sharing the most terms with `query`.

        Args:
            agent: the agent id.
            query: the customer's message (any text).
            top_k: at most this many hits (>= 1).

        Returns:
            Hits, best first: score desc, then confidence desc, updated_at desc, name asc.
            Empty when no concept shares a term with the query.
        """
        cache = self._cache(agent)
        return rank(cache.postings, terms(query), top_k)

    def memory_bytes(self, agent: str) -> int:
        """An estimate of the cache's size for `agent`, in bytes (entries and postings)."""
        import sys

        cache = self._cache(agent)
        total = sys.getsizeof(cache.by_id) + sys.getsizeof(cache.postings)
        for entry in cache.by_id.values():
            total += sys.getsizeof(entry) + sys.getsizeof(entry.terms)
            total += sum(sys.getsizeof(t) for t in entry.terms)
            total += sys.getsizeof(entry.description) + sys.getsizeof(entry.name)
        for term, slots in cache.postings.items():
            total += sys.getsizeof(term) + sys.getsizeof(slots)
        return total


def rank(postings: dict[str, list[Entry]], query_terms: frozenset[str], top_k: int) -> list[Hit]:
    """Score the entries reachable from `query_terms` and keep the best `top_k`."""
    scores: dict[int, int] = {}
    entries: dict[int, Entry] = {}
    for term in query_terms:
        for entry in postings.get(term, ()):
            key = entry.id
            scores[key] = scores.get(key, 0) + 1
            entries[key] = entry
    if not scores:
        return []
    best = heapq.nsmallest(
        top_k, scores.items(), key=lambda item: (-item[1], entries[item[0]].tiebreak)
    )
    return [Hit(entries[i], s) for i, s in best]


def scan_reference(entries: Sequence[Entry], query: str, top_k: int) -> list[Hit]:
    """The same ranking by a plain scan of every entry (the inverted index's oracle)."""
    query_terms = terms(query)
    scored = [Hit(e, len(query_terms & e.terms)) for e in entries]
    scored = [h for h in scored if h.score > 0]
    scored.sort(key=lambda h: (-h.score, -h.entry.confidence, _reverse(h.entry.updated_at), h.entry.name))
    return scored[:top_k]


def _reverse(timestamp: str) -> tuple[int, ...]:
    # Written independently of `_stamp`: ISO 'Z' text, code points negated for descending.
    return tuple(-ord(c) for c in timestamp)
