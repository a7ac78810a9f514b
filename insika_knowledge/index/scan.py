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

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Final

from insika_knowledge.analysis.text import document_terms, query_terms
from insika_knowledge.concept import claim_text, has_contradiction, parse_links, searchable_text
from insika_knowledge.index.generations import PerAgent, miscounted
from insika_knowledge.index.typos import correct
from insika_knowledge.store.base import ScanRow, ScanSource


class Terms:
    """A concept's index terms and its title terms (name and description), worked out on first use.

    Either known when made (`Terms.known`) or computed by a function the first time they
    are read (an index that holds them in another form, e.g. a forward list, pays for
    the sets only for the hits whose terms someone reads). Equal when the pairs are.
    """

    __slots__ = ("_compute", "_pair")

    def __init__(self, compute: Callable[[], tuple[frozenset[str], frozenset[str]]]):
        self._compute: Callable[[], tuple[frozenset[str], frozenset[str]]] | None = compute
        self._pair: tuple[frozenset[str], frozenset[str]] | None = None

    @classmethod
    def known(cls, terms: frozenset[str], title_terms: frozenset[str]) -> Terms:
        """Terms already worked out."""
        made = cls.__new__(cls)
        made._compute, made._pair = None, (terms, title_terms)
        return made

    def pair(self) -> tuple[frozenset[str], frozenset[str]]:
        """(every term, title terms)."""
        # No lock: two first readers may both compute them (same result). The function is read
        # before the pair: it is dropped only once the pair is kept, so one of the two is there.
        compute = self._compute
        pair = self._pair
        if pair is None:
            assert compute is not None
            pair = self._pair = compute()
            self._compute = None
        return pair

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Terms) and self.pair() == other.pair()

    def __hash__(self) -> int:
        return hash(self.pair())

    def __repr__(self) -> str:
        return f"Terms({sorted(self.pair()[0])!r})"


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
    analysed: Terms  # `terms` and `title_terms`, worked out when first read
    tiebreak: tuple[float, int, str]  # (-confidence, -updated_at as YYYYMMDDHHMMSS, name)

    @property
    def terms(self) -> frozenset[str]:
        """Every index term of the concept."""
        return self.analysed.pair()[0]

    @property
    def title_terms(self) -> frozenset[str]:
        """The terms of the name and description (weighted twice by Scan)."""
        return self.analysed.pair()[1]


@dataclass(frozen=True, slots=True)
class Hit:
    """A search result: the entry and its score, higher is better.

    Scan: distinct query terms the concept shares. FTS5: minus SQLite's bm25.
    """

    entry: Entry
    score: float


def entry_from_row(row: ScanRow) -> Entry:
    """Analyse one stored row into a cache entry (terms from name, description, body)."""
    # Each field is analysed on its own, exactly as FTS5 tokenises each column, so the two
    # indexes agree on what matches (a range never runs from one field into the next).
    title = document_terms(row.name) | document_terms(row.description)
    return entry_with_terms(row, title | document_terms(searchable_text(row.body)), title)


def entry_with_terms(row: ScanRow, terms: frozenset[str], title_terms: frozenset[str]) -> Entry:
    """A cache entry for `row` whose index terms are already known (no text analysis)."""
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
        analysed=Terms.known(terms, title_terms),
        tiebreak=(-float(row.confidence), -_stamp(row.updated_at), row.name),
    )


_NOT_DIGITS: Final = re.compile(r"\D+")


def _stamp(timestamp: str) -> int:
    """An ISO timestamp as one number (its digits: YYYYMMDDHHMMSS...), 0 without digits."""
    digits = _NOT_DIGITS.sub("", timestamp)
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
    title_postings: dict[str, list[int]] = field(default_factory=dict)
    masks: dict[str, int] = field(default_factory=dict)
    title_masks: dict[str, int] = field(default_factory=dict)
    dead: int = 0
    delta: dict[int, Entry] = field(default_factory=dict)
    _delta_terms: set[str] | None = None

    def rebuild(self) -> None:
        self.ordered = sorted(self.by_id.values(), key=lambda e: e.tiebreak)
        self.slot_of = {e.id: slot for slot, e in enumerate(self.ordered)}
        postings: dict[str, list[int]] = {}
        title_postings: dict[str, list[int]] = {}
        for slot, entry in enumerate(self.ordered):
            for term in entry.terms:
                postings.setdefault(term, []).append(slot)
            for term in entry.title_terms:
                title_postings.setdefault(term, []).append(slot)
        self.postings = postings
        self.title_postings = title_postings
        self.masks = {}
        self.title_masks = {}
        self.dead = 0
        self.delta = {}
        self._delta_terms = None
        self.by_name = {e.name: e for e in self.ordered}

    def derive(self, generation: int, cursor: int) -> _AgentCache:
        """A copy for the next generation that shares the (immutable) base."""
        return _AgentCache(
            generation, cursor, dict(self.by_id), dict(self.by_name), self.ordered, self.slot_of,
            self.postings, self.title_postings, self.masks, self.title_masks, self.dead,
            dict(self.delta),
        )

    def drop(self, cid: int) -> None:
        self._delta_terms = None
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

    def mask(self, term: str, title: bool = False) -> int:
        masks = self.title_masks if title else self.masks
        found = masks.get(term)
        if found is None:
            slots = (self.title_postings if title else self.postings).get(term)
            if not slots:
                return 0
            bits = bytearray((len(self.ordered) >> 3) + 1)
            for slot in slots:
                bits[slot >> 3] |= 1 << (slot & 7)
            found = masks[term] = int.from_bytes(bits, "little")
        return found

    def frequency(self, term: str) -> int:
        """Concepts holding `term`: in the base, plus changed concepts (the delta)."""
        return len(self.postings.get(term, ())) + (term in self.delta_terms())

    def delta_terms(self) -> set[str]:
        """The terms of the changed concepts (computed once per cache state)."""
        if self._delta_terms is None:
            self._delta_terms = {t for e in self.delta.values() for t in e.terms}
        return self._delta_terms

    def weight(self, term: str) -> int:
        """The term's weight: its BM25 idf over the base, doubled and rounded, 1..15."""
        return term_weight(len(self.ordered), len(self.postings.get(term, ())))


def term_weight(documents: int, containing: int) -> int:
    """``round(2 * idf)`` clamped to 1..15, idf = ln(1 + (N - df + 0.5) / (df + 0.5)).

    The idf is BM25's (Robertson and Zaragoza, "The Probabilistic Relevance Framework:
    BM25 and Beyond", 2009); doubling before rounding keeps half-steps apart.
    """
    idf = math.log(1 + (documents - containing + 0.5) / (containing + 0.5))
    return max(1, min(15, round(2 * idf)))


def entry_score(entry: Entry, query: frozenset[str], weight: Callable[[str], int]) -> int:
    """An entry's score for `query`: the weight of each shared term, twice in the title."""
    return sum(weight(t) * (2 if t in entry.title_terms else 1) for t in query & entry.terms)


class ScanIndex:
    """Term-overlap search over one store's concepts, cached per agent in this process.

    Thread-safe: refreshes are serialised; a search reads one immutable snapshot.
    """

    def __init__(self, store: ScanSource):
        self.store = store
        self._caches: PerAgent[_AgentCache] = PerAgent(self._refresh)

    def _cache(self, agent: str) -> _AgentCache:
        return self._caches.get(agent, self.store.generation(agent))

    def _refresh(self, agent: str, old: _AgentCache | None, generation: int) -> _AgentCache:
        if old is None:
            cursor = self.store.version_cursor(agent)
            fresh = _AgentCache(generation, cursor)
            fresh.by_id = {r.id: entry_from_row(r) for r in self.store.scan_rows(agent)}
            fresh.rebuild()
            return fresh
        cursor, names = self.store.changes_since(agent, old.cursor)
        fresh = old.derive(generation, cursor)
        rows = {r.name: r for r in self.store.scan_rows_by_names(agent, sorted(names))} if names else {}
        # A rename moves a concept's history to its new name, so a concept cached under its
        # old name, renamed and then deleted, shows in the feed only as a deleted name the
        # cache never held: then the concepts are counted, and a mismatch read in full.
        unheld = any(n not in rows and n not in fresh.by_name for n in names)
        for name in names:
            entry = fresh.by_name.get(name)
            if entry is not None:
                fresh.drop(entry.id)
            if name in rows:
                fresh.add(entry_from_row(rows[name]))
        if not names or (unheld and miscounted(self.store, agent, len(fresh.by_id))):
            # compare every version number (a change outside the versioned path, or the above)
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

    def weight(self, agent: str) -> Callable[[str], int]:
        """The term-weight function `search` uses for `agent` now."""
        return self._cache(agent).weight

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
        return self.search_terms(agent, self.analyse(agent, query), top_k)

    def analyse(self, agent: str, query: str) -> frozenset[str]:
        """The terms `search` uses for `query`: `query_terms`, typos corrected (`index.typos`)."""
        cache = self._cache(agent)
        return correct(query_terms(query), cache.frequency, (cache.postings.keys(), cache.delta_terms()))

    def search_terms(self, agent: str, wanted: frozenset[str], top_k: int) -> list[Hit]:
        """`search` for already analysed terms (exact: what `scan_reference` returns)."""
        return rank(self._cache(agent), wanted, top_k)

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
    """The best `top_k` entries by weighted shared terms, ties by slot (the tie-break order).

    Score = sum over shared terms of the term's weight (`term_weight`, an idf), counted
    twice when the term is in the name or description. Counting is bit-sliced over
    Python integers: ``planes[i]`` holds bit i of every slot's score, and adding a
    term adds its weight into the planes of the slots in its bitmask (a few big-integer
    operations per term, not a loop over postings). The best slots are then read off
    by descending the planes from the top bit (the highest score present, its lowest
    slots first), once per hit. Concepts changed since the base was built are scored
    directly (the delta) and merged in. The result equals `scan_reference` exactly.
    """
    planes: list[int] = []

    def add(mask: int, weight: int) -> None:
        bit = 0
        while weight:
            if weight & 1:
                carry = mask
                i = bit
                while carry:
                    while i >= len(planes):
                        planes.append(0)
                    plane = planes[i]
                    planes[i] = plane ^ carry
                    carry &= plane
                    i += 1
            weight >>= 1
            bit += 1

    for term in query_terms:
        mask = cache.mask(term)
        if not mask:
            continue
        weight = cache.weight(term)
        add(mask, weight)
        title = cache.mask(term, title=True)
        if title:
            add(title, weight)
    hits: list[Hit] = []
    remaining = 0
    for plane in planes:
        remaining |= plane
    remaining &= ~cache.dead
    while remaining and len(hits) < top_k:
        best, value = remaining, 0
        for i in range(len(planes) - 1, -1, -1):
            narrowed = best & planes[i]
            if narrowed:
                best, value = narrowed, value | 1 << i
        while best and len(hits) < top_k:
            lowest = best & -best
            hits.append(Hit(cache.ordered[lowest.bit_length() - 1], value))
            best ^= lowest
            remaining ^= lowest
    if cache.delta:
        hits.extend(
            Hit(e, n) for e in cache.delta.values()
            if (n := entry_score(e, query_terms, cache.weight))
        )
        hits.sort(key=lambda h: (-h.score, h.entry.tiebreak))
        del hits[top_k:]
    return hits


def scan_reference(
    entries: Sequence[Entry], wanted: frozenset[str], top_k: int, weight: Callable[[str], int]
) -> list[Hit]:
    """The same ranking by a plain scan of every entry (the bit-sliced ranking's oracle)."""
    scored = [Hit(e, entry_score(e, wanted, weight)) for e in entries]
    scored = [h for h in scored if h.score > 0]
    scored.sort(key=lambda h: (-h.score, -h.entry.confidence, _reverse(h.entry.updated_at), h.entry.name))
    return scored[:top_k]


def _reverse(timestamp: str) -> tuple[int, ...]:
    # Written independently of `_stamp`: ISO 'Z' text, code points negated for descending.
    return tuple(-ord(c) for c in timestamp)
