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

import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Final

from insika_knowledge.concept import claim_text, has_contradiction, parse_links
from insika_knowledge.index.text import document_terms, query_terms
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
    """A search result: the entry and its score, higher is better.

    Scan: distinct query terms the concept shares. FTS5: minus SQLite's bm25.
    """

    entry: Entry
    score: float


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
        terms=document_terms(text),
        tiebreak=(-float(row.confidence), -_stamp(row.updated_at), row.name),
    )


def _stamp(timestamp: str) -> int:
    digits = "".join(c for c in timestamp if c.isdigit())
    return int(digits) if digits else 0


#: Changed concepts are served from a small delta until it outgrows this share of the
#: agent's concepts (or 64 entries); then the ranked base is rebuilt.
DELTA_SHARE: Final = 0.02
DELTA_MIN: Final = 64


@dataclass
class _AgentCache:
    """One agent's cached concepts: a ranked base snapshot plus a delta of later changes.

    ``ordered[slot]`` sorts the base by the tie-break (confidence desc, updated_at desc,
    name asc), so a lower slot always wins a tie. ``postings[term]`` lists the base
    slots holding the term; ``mask(term)`` is the same set as a bitmask, built on
    first use. A concept changed or deleted since the base was built has its slot in
    ``dead`` and (unless deleted) its new entry in ``delta``, scored directly.
    """

    generation: int = -1
    cursor: int = 0  # the last concept_versions id applied
    by_id: dict[int, Entry] = field(default_factory=dict)
    by_name: dict[str, Entry] = field(default_factory=dict)
    ordered: list[Entry] = field(default_factory=list)
    slot_of: dict[int, int] = field(default_factory=dict)
    postings: dict[str, list[int]] = field(default_factory=dict)
    masks: dict[str, int] = field(default_factory=dict)
    dead: int = 0
    delta: dict[int, Entry] = field(default_factory=dict)

    def rebuild(self) -> None:
        self.ordered = sorted(self.by_id.values(), key=lambda e: e.tiebreak)
        self.slot_of = {e.id: slot for slot, e in enumerate(self.ordered)}
        postings: dict[str, list[int]] = {}
        for slot, entry in enumerate(self.ordered):
            for term in entry.terms:
                postings.setdefault(term, []).append(slot)
        self.postings = postings
        self.masks = {}
        self.dead = 0
        self.delta = {}
        self.by_name = {e.name: e for e in self.ordered}

    def derive(self, generation: int, cursor: int) -> _AgentCache:
        """A copy for the next generation that shares the (immutable) base."""
        return _AgentCache(
            generation, cursor, dict(self.by_id), dict(self.by_name), self.ordered, self.slot_of,
            self.postings, self.masks, self.dead, dict(self.delta),
        )

    def drop(self, cid: int) -> None:
        entry = self.by_id.pop(cid, None)
        if entry is not None and self.by_name.get(entry.name) is entry:
            del self.by_name[entry.name]
        self.delta.pop(cid, None)
        slot = self.slot_of.get(cid)
        if slot is not None:
            self.dead |= 1 << slot

    def add(self, entry: Entry) -> None:
        self.drop(entry.id)
        self.by_id[entry.id] = entry
        self.by_name[entry.name] = entry
        self.delta[entry.id] = entry

    def mask(self, term: str) -> int:
        found = self.masks.get(term)
        if found is None:
            slots = self.postings.get(term)
            if not slots:
                return 0
            bits = bytearray((len(self.ordered) >> 3) + 1)
            for slot in slots:
                bits[slot >> 3] |= 1 << (slot & 7)
            found = self.masks[term] = int.from_bytes(bits, "little")
        return found


class ScanIndex:
    """Term-overlap search over one store's concepts, cached per agent in this process.

    Thread-safe: refreshes are serialised; a search reads one immutable snapshot.
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
            if cache is None or cache.generation != generation:
                cache = self._refresh(agent, cache, generation)
                self._caches[agent] = cache
            return cache

    def _refresh(self, agent: str, old: _AgentCache | None, generation: int) -> _AgentCache:
        if old is None:
            cursor = self.store.version_cursor(agent)
            fresh = _AgentCache(generation, cursor)
            fresh.by_id = {r.id: entry_from_row(r) for r in self.store.scan_rows(agent)}
            fresh.rebuild()
            return fresh
        cursor, names = self.store.changes_since(agent, old.cursor)
        fresh = old.derive(generation, cursor)
        if names:  # the versions table names what changed
            rows = {r.name: r for r in self.store.scan_rows_by_names(agent, sorted(names))}
            for name in names:
                entry = fresh.by_name.get(name)
                if entry is not None:
                    fresh.drop(entry.id)
                if name in rows:
                    fresh.add(entry_from_row(rows[name]))
        else:  # a change outside the versioned path: compare every version number
            versions = self.store.scan_versions(agent)
            for cid in [i for i in fresh.by_id if i not in versions]:
                fresh.drop(cid)
            changed = [i for i, v in versions.items() if fresh.by_id.get(i) is None
                       or fresh.by_id[i].version != v]
            for row in self.store.scan_rows(agent, changed):
                fresh.add(entry_from_row(row))
        if len(fresh.delta) > max(DELTA_MIN, DELTA_SHARE * len(fresh.by_id)):
            fresh.rebuild()
        return fresh

    name = "scan"

    def lookup(self, agent: str, names: list[str]) -> dict[str, Entry]:
        """Cached entries for the concepts called `names` (missing names are absent)."""
        by_name = self._cache(agent).by_name
        return {n: by_name[n] for n in names if n in by_name}

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
        return rank(self._cache(agent), query_terms(query), top_k)

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
        total += sum(sys.getsizeof(m) for m in cache.masks.values())
        return total


def rank(cache: _AgentCache, query_terms: frozenset[str], top_k: int) -> list[Hit]:
    """The best `top_k` entries by shared-term count, ties by slot (the tie-break order).

    Counting is bit-sliced over Python integers: each query term's slot bitmask is
    added into binary counter planes (``planes[i]`` holds bit i of every slot's count),
    so the cost is a few big-integer operations per term rather than a loop over
    every posting. Slots with count ``s`` are then read off from the highest ``s``
    down, lowest slot first, skipping slots whose concept changed since the base was
    built; the changed concepts (the delta) are scored directly and merged in. The
    result equals `scan_reference` exactly.
    """
    planes: list[int] = []
    matched = 0
    for term in query_terms:
        carry = cache.mask(term)
        if not carry:
            continue
        matched += 1
        for i, plane in enumerate(planes):
            planes[i] = plane ^ carry
            carry &= plane
            if not carry:
                break
        if carry:
            planes.append(carry)
    hits: list[Hit] = []
    alive = ~cache.dead
    for score in range(matched, 0, -1):
        selected = alive
        for i, plane in enumerate(planes):
            selected &= plane if score >> i & 1 else ~plane
        if score >> len(planes):
            continue
        while selected and len(hits) < top_k:
            lowest = selected & -selected
            hits.append(Hit(cache.ordered[lowest.bit_length() - 1], score))
            selected ^= lowest
        if len(hits) >= top_k:
            break
    if cache.delta:
        hits.extend(
            Hit(e, n) for e in cache.delta.values() if (n := len(query_terms & e.terms))
        )
        hits.sort(key=lambda h: (-h.score, h.entry.tiebreak))
        del hits[top_k:]
    return hits


def scan_reference(entries: Sequence[Entry], query: str, top_k: int) -> list[Hit]:
    """The same ranking by a plain scan of every entry (the inverted index's oracle)."""
    wanted = query_terms(query)
    scored = [Hit(e, len(wanted & e.terms)) for e in entries]
    scored = [h for h in scored if h.score > 0]
    scored.sort(key=lambda h: (-h.score, -h.entry.confidence, _reverse(h.entry.updated_at), h.entry.name))
    return scored[:top_k]


def _reverse(timestamp: str) -> tuple[int, ...]:
    # Written independently of `_stamp`: ISO 'Z' text, code points negated for descending.
    return tuple(-ord(c) for c in timestamp)
