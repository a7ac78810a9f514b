"""Index::Postings: exact BM25 (FTS5's formula) over a compact per-agent index, opened from a snapshot.

What ``index: auto`` uses at every size. Per agent, a `bm25.Postings` base (numpy posting
lists, see `index.bm25`) plus the concepts changed since it was built (the delta, scored
directly). The base is persisted in the database (`index.snapshot`, the store's
``index_snapshots`` table), so a new process opens it in milliseconds instead of
analysing every concept; it is brought up to date from the versions change feed
(`ScanSource.changes_since`) as Index::Scan's cache is; as a rename moves a concept's
history to its new name, the concepts are also counted after opening a snapshot and when
the feed names a deleted concept the index never held, and every version number compared
when the count differs. When the delta holds more than `DELTA_ROOT` times the square
root of the agent's concept count (and more than `DELTA_MIN`), the base is rebuilt from
the arrays and the delta (no text is analysed again); the snapshot is written anew at the
first rebuild after `DELTA_SHARE` of the concepts changed.

The ranking equals `bm25.reference_top_k` (brute-force BM25 over the same analysed
terms, tests/test_postings.py) at every size: no candidate restriction. Statistics (N,
document frequencies, average length) are the agent's own. Hits carry the BM25 score.
"""

from __future__ import annotations

import bisect
import heapq
import math
from collections.abc import Callable, Iterable, KeysView, Sequence
from functools import partial
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from insika_knowledge.analysis.text import ANALYSIS_VERSION, query_terms
from insika_knowledge.errors import RunTimeFailure, UserError
from insika_knowledge.index import bm25, snapshot, topk
from insika_knowledge.index.bm25 import FloatArray
from insika_knowledge.index.generations import PerAgent, miscounted
from insika_knowledge.index.scan import Entry, Hit, Terms, _stamp, entry_with_terms, term_weight
from insika_knowledge.index.tokenizer import TOKENIZER
from insika_knowledge.index.typos import correct
from insika_knowledge.store.base import ScanRow, ScanSource, SnapshotStore

#: Changed concepts are scored from the delta until it holds more than `DELTA_ROOT` * sqrt(N)
#: of the agent's N concepts (and more than `DELTA_MIN`); then the base is rebuilt. Measured
#: at 50k: the delta costs a search about 2 us per concept in it, a rebuild about 2.4 us per
#: concept of the agent. A limit D costs each write R/D in rebuilds and each search D/2 in
#: scoring, cheapest at sqrt(2.4 N / s) for s searches per write: 1.1 sqrt(N) at s = 2 (a
#: turn that learns), 0.5 sqrt(N) at s = 10 (turns that mostly confirm); 0.7 is within 10%
#: of the cheapest across that range.
DELTA_MIN: Final = 64
DELTA_ROOT: Final = 0.7
#: The snapshot is written anew at the first rebuild after this share of the concepts (or
#: `DELTA_MIN`) changed since the last one written: at most about that many concepts are
#: read from the change feed and analysed by a process that opens it.
DELTA_SHARE: Final = 0.01
#: The snapshot kind this index stores (``index_snapshots.kind``).
KIND: Final = "bm25"
#: Hit entries kept per index (base slot -> entry), so a popular concept is built once.
ENTRY_CACHE: Final = 8192


def analyse_row(row: ScanRow) -> bm25.Doc:
    """The BM25 document of a stored concept: each field tokenised as FTS5 does."""
    return bm25.analyse_fields(TOKENIZER, row.name, row.description, row.body)


def _entry(row: ScanRow, doc: bm25.Doc) -> Entry:
    title = frozenset(t for t, code in doc.fcodes.items() if code & 1)
    return entry_with_terms(row, frozenset(doc.fcodes), title)


class _State:
    """One agent's index at one generation: the snapshot's base plus a delta (copy on derive)."""

    def __init__(self, snap: snapshot.Snapshot, generation: int, cursor: int):
        self.snap = snap
        self.base = snap.base
        self.generation = generation
        self.cursor = cursor
        self.alive = np.ones(self.base.size, dtype=bool)
        self.dead = 0  # slots of `alive` that are False
        self._slot_of_name: dict[str, int] | None = None
        self._numbers: tuple[memoryview, memoryview, memoryview, memoryview] | None = None
        self._slot_of_id: dict[int, int] | None = None
        self.adjust: dict[str, int] = {}
        self.delta: dict[str, tuple[Entry, bm25.Doc]] = {}
        self.documents = self.base.size
        self.tokens = int(self.base.lengths.sum(dtype=np.int64))
        self._saturation: topk.Saturation | None = None
        self._previous: topk.Saturation | None = None
        self._idf: dict[str, float] = {}
        self._df: dict[str, int] = {}
        self._avgdl: float | None = None
        self._owned = True
        #: Changes applied since the snapshot the store holds was written (or read).
        self.unsaved = 0
        #: Hit entries by base slot, shared by the states derived from this one (same base).
        self.entries: dict[int, Entry] = {}
        #: The delta's terms as numbers (the base's term ids, then ids of terms it lacks),
        #: shared by the derived states; each delta document's (term ids, frequencies).
        self._delta_ids: dict[str, int] = {}
        self.delta_arrays: dict[str, tuple[npt.NDArray[np.int64], FloatArray]] = {}
        self._delta_block: _DeltaBlock | None = None

    def derive(self, generation: int, cursor: int) -> _State:
        fresh = _State.__new__(_State)
        fresh.__dict__.update(self.__dict__)
        fresh.generation, fresh.cursor = generation, cursor
        fresh.adjust, fresh.delta, fresh.delta_arrays = dict(self.adjust), dict(self.delta), dict(self.delta_arrays)
        # The saturation arrays stay exact while avgdl does not move (e.g. a confirmation).
        fresh._previous = self._saturation or self._previous
        fresh._saturation, fresh._idf, fresh._df, fresh._avgdl, fresh._owned = None, {}, {}, None, False
        fresh._delta_block = None
        return fresh

    def _delta_id(self, term: str) -> int:
        """`term`'s number: its base term id, else one past the base's (refreshes only: serialised)."""
        found = self.base.term_id.get(term)
        if found is None:
            found = self._delta_ids.get(term)
            if found is None:
                found = self._delta_ids[term] = len(self.base.vocab) + len(self._delta_ids)
        return found

    def delta_block(self) -> _DeltaBlock:
        """The delta's documents as arrays (built once per state from each document's arrays)."""
        block = self._delta_block
        if block is None:
            block = self._delta_block = _DeltaBlock(
                [(entry, doc, *self.delta_arrays[name]) for name, (entry, doc) in self.delta.items()])
        return block

    def delta_scores(self, plan: list[tuple[str, float]]) -> list[tuple[Entry, float]]:
        """``(entry, score)`` of each changed concept with a positive score for `plan`.

        `bm25.score_doc` of every delta document, in arrays: each score summed in plan
        order, as it sums it, so the same floats.
        """
        if not self.delta:
            return []
        known = [(i, w) for t, w in plan if (i := self._known_id(t)) is not None]
        if not known:
            return []
        block = self.delta_block()
        ids = np.fromiter((i for i, _ in known), dtype=np.int64, count=len(known))
        weights = np.fromiter((w for _, w in known), dtype=np.float64, count=len(known))
        order = np.argsort(ids)
        ranked = ids[order]
        at = np.searchsorted(ranked, block.tids)
        np.minimum(at, len(ranked) - 1, out=at)
        held = ranked[at] == block.tids
        position = order[at[held]]  # each posting's place in the plan
        by = np.argsort(position, kind="stable")  # np.add.at adds in this order: each document's in plan order
        docs, position, f = block.docs[held][by], position[by], block.f[held][by]
        norms = bm25.length_norms(block.lengths, self.avgdl)[docs]
        totals = np.zeros(len(block.entries))
        np.add.at(totals, docs, weights[position] * ((f * (bm25.K1 + 1.0)) / (f + norms)))
        return [(block.entries[i], s) for i, s in enumerate(totals.tolist()) if s > 0.0]

    def _known_id(self, term: str) -> int | None:
        found = self.base.term_id.get(term)
        return found if found is not None else self._delta_ids.get(term)

    @property
    def numbers(self) -> tuple[memoryview, memoryview, memoryview, memoryview]:
        """The snapshot's ids, versions, confidences and conflict flags as memoryviews.

        Read one value at a time (`bm25.readable`).
        """
        if self._numbers is None:
            snap = self.snap
            ids, versions, confidence, conflict = (bm25.readable(a) for a in
                                                   (snap.ids, snap.versions, snap.confidence, snap.conflict))
            self._numbers = (ids, versions, confidence, conflict)
        return self._numbers

    @property
    def slot_of_name(self) -> dict[str, int]:
        if self._slot_of_name is None:
            self._slot_of_name = {name: slot for slot, name in enumerate(self.snap.names)}
        return self._slot_of_name

    @property
    def slot_of_id(self) -> dict[int, int]:
        if self._slot_of_id is None:
            self._slot_of_id = {int(i): slot for slot, i in enumerate(self.snap.ids.tolist())}
        return self._slot_of_id

    def doc_freq(self, term: str) -> int:
        """Concepts holding `term` (remembered per state: the typo check and the plan both ask)."""
        known = self._df
        found = known.get(term)
        if found is None:
            if len(known) > 100_000:
                known.clear()
            found = known[term] = self.base.doc_freq(term) + self.adjust.get(term, 0)
        return found

    def vocabularies(self) -> tuple[KeysView[str], KeysView[str]]:
        """Every term `doc_freq` can count: the base's, and those the delta changed."""
        return self.base.term_id.keys(), self.adjust.keys()

    def stats(self) -> bm25.Stats:
        return bm25.Stats(self.documents, self.tokens, self.doc_freq)

    @property
    def avgdl(self) -> float:
        """`stats().avgdl`, remembered."""
        found = self._avgdl
        if found is None:
            found = self._avgdl = self.stats().avgdl
        return found

    def plan(self, wanted: frozenset[str]) -> list[tuple[str, float]]:
        """`bm25.query_plan` of `wanted`, each term's idf computed once per state."""
        known = self._idf
        if len(known) > 100_000:
            known.clear()
        out = []
        for term in wanted:
            weight = known.get(term)
            if weight is None:
                df = self.doc_freq(term)
                weight = known[term] = bm25.idf(self.documents, df) if df > 0 else 0.0
            if weight:
                out.append((term, weight))
        out.sort(key=lambda p: (-p[1], p[0]))
        return out

    def saturation(self) -> topk.Saturation:
        if self._saturation is None:
            avgdl = self.avgdl
            previous = self._previous
            if previous is not None and previous.base is self.base and previous.avgdl == avgdl:
                self._saturation = previous
            else:
                idle = previous.scratch if previous is not None and previous.base is self.base else None
                self._saturation = topk.Saturation(self.base, avgdl, scratch=idle)
            self._previous = None
        return self._saturation

    def _count(self, terms: Iterable[str], step: int, length: int) -> None:
        self._idf, self._df, self._avgdl = {}, {}, None
        for term in terms:
            self.adjust[term] = self.adjust.get(term, 0) + step
        self.documents += step
        self.tokens += step * length

    def kill(self, slot: int) -> None:
        if not self.alive[slot]:
            return
        if not self._owned:
            self.alive, self._owned = self.alive.copy(), True
        self.alive[slot] = False
        self.dead += 1
        terms, _ = self.base.terms_of(slot)
        self._count(terms, -1, int(self.base.lengths[slot]))

    def holds(self, name: str) -> bool:
        """True when a concept called `name` is searchable here (a live base slot or the delta)."""
        slot = self.slot_of_name.get(name)
        return name in self.delta or (slot is not None and bool(self.alive[slot]))

    def remove(self, name: str) -> None:
        self.delta_arrays.pop(name, None)
        held = self.delta.pop(name, None)
        if held is not None:
            self._count(held[1].fcodes, -1, held[1].length)
        slot = self.slot_of_name.get(name)
        if slot is not None:
            self.kill(slot)

    def add(self, row: ScanRow) -> None:
        self.remove(row.name)
        slot = self.slot_of_id.get(row.id)
        if slot is not None:  # renamed since the base was built
            self.kill(slot)
        for old in [n for n, (e, _) in self.delta.items() if e.id == row.id]:  # renamed since it changed
            self.remove(old)
        doc = analyse_row(row)
        self.delta[row.name] = (_entry(row, doc), doc)
        self.delta_arrays[row.name] = (np.array([self._delta_id(t) for t in doc.fcodes], dtype=np.int64),
                                       np.array([c >> 1 for c in doc.fcodes.values()], dtype=np.float64))
        self._count(doc.fcodes, 1, doc.length)

    def versions(self) -> dict[int, int]:
        live = np.flatnonzero(self.alive)
        out = dict(zip(self.snap.ids[live].tolist(), self.snap.versions[live].tolist(), strict=True))
        out.update((e.id, e.version) for e, _ in self.delta.values())
        return out

    def tiebreak(self, slot: int) -> tuple[float, int, str]:
        snap = self.snap
        return (-float(snap.confidence[slot]), -_stamp(snap.updated[slot]), snap.names[slot])


class _DeltaBlock:
    """The delta's documents as arrays: every (document, term id, frequency) posting, and lengths."""

    def __init__(self, parts: list[tuple[Entry, bm25.Doc, npt.NDArray[np.int64], FloatArray]]):
        self.entries = [entry for entry, _, _, _ in parts]
        sizes = [len(tids) for _, _, tids, _ in parts]
        self.docs = np.repeat(np.arange(len(parts), dtype=np.int64), sizes)
        self.tids = np.concatenate([tids for _, _, tids, _ in parts]) if parts else np.zeros(0, dtype=np.int64)
        self.f = np.concatenate([f for _, _, _, f in parts]) if parts else np.zeros(0)
        self.lengths = np.array([doc.length for _, doc, _, _ in parts], dtype=np.int64)


def build(rows: Iterable[ScanRow], generation: int, cursor: int) -> _State:
    """A state holding `rows`, analysed (what a process without a snapshot pays once)."""
    analysed = sorted(((_entry(r, d), d) for r in rows for d in [analyse_row(r)]),
                      key=lambda pair: pair[0].tiebreak)
    return _State(_snapshot([e for e, _ in analysed], bm25.from_docs([d for _, d in analysed]),
                            generation, cursor), generation, cursor)


def _snapshot(entries: list[Entry], base: bm25.Postings, generation: int, cursor: int) -> snapshot.Snapshot:
    return snapshot.Snapshot(
        base, np.array([e.id for e in entries], dtype=np.int64),
        np.array([e.version for e in entries], dtype=np.int64),
        np.array([e.confidence for e in entries], dtype=np.float64),
        np.array([e.in_conflict for e in entries], dtype=np.uint8),
        *_as_columns(_columns(entries)), cursor, generation, ANALYSIS_VERSION,
    )


def _as_columns(values: tuple[list[str], ...]) -> tuple[snapshot.Column, snapshot.Column, snapshot.Column,
                                                         snapshot.Column, snapshot.Column, snapshot.Column]:
    names, descriptions, types, provenances, updated, links = (snapshot.Column.of(v) for v in values)
    return names, descriptions, types, provenances, updated, links


def _columns(entries: list[Entry]) -> tuple[list[str], ...]:
    """(names, descriptions, types, provenances, updated, links) of `entries`."""
    return ([e.name for e in entries], [e.description for e in entries], [e.type for e in entries],
            [e.provenance for e in entries], [e.updated_at for e in entries],
            [snapshot.LINK_SEPARATOR.join(e.links) for e in entries])


def entry_of(state: _State, slot: int) -> Entry:
    """The `Entry` of base `slot`, from the snapshot alone (nothing read, nothing analysed)."""
    snap = state.snap
    ids, versions, confidences, conflicts = state.numbers
    name, updated, confidence = snap.names[slot], snap.updated[slot], confidences[slot]
    links = snap.links[slot]
    return Entry(
        id=ids[slot], version=versions[slot], name=name,
        description=snap.descriptions[slot], type=snap.types[slot], provenance=snap.provenances[slot],
        confidence=confidence, updated_at=updated, in_conflict=bool(conflicts[slot]),
        links=tuple(links.split(snapshot.LINK_SEPARATOR)) if links else (),
        analysed=Terms(partial(state.base.terms_of, slot)), tiebreak=(-confidence, -_stamp(updated), name),
    )


def rebuild(state: _State) -> _State:
    """`state` as a fresh base (live slots and the delta merged in tie-break order); no analysis.

    In array operations (`_merge_postings`, `_gather`): nothing per live concept is
    decoded or re-encoded.
    """
    snap = state.snap
    live = np.flatnonzero(state.alive)
    delta = sorted(state.delta.values(), key=lambda pair: pair[0].tiebreak)
    # Each delta concept goes before the first live slot it beats (live slots are in tie-break order).
    live_list = live.tolist()
    places = np.array([bisect.bisect_right(live_list, e.tiebreak, key=state.tiebreak) for e, _ in delta],
                      dtype=np.int64)
    size = len(live) + len(delta)
    delta_new = places + np.arange(len(delta), dtype=np.int64)
    live_new = np.arange(len(live), dtype=np.int64) + np.searchsorted(places, np.arange(len(live)), side="right")
    fresh = _merge_postings(state, live, live_new, [d for _, d in delta], delta_new, size)
    entries = [e for e, _ in delta]

    def numbers(values: np.ndarray, field: Callable[[Entry], float], dtype: type) -> np.ndarray:
        out: np.ndarray = np.empty(size, dtype=dtype)
        out[live_new] = np.asarray(values)[live]
        out[delta_new] = [field(e) for e in entries]
        return out

    def column(old: Sequence[str], new_values: list[str]) -> snapshot.Column:
        held = old if isinstance(old, snapshot.Column) else snapshot.Column.of(list(old))
        added = [v.encode("utf-8") for v in new_values]
        data, offsets = _gather(
            np.concatenate([np.frombuffer(held.data, dtype=np.uint8),
                            np.frombuffer(b"".join(added), dtype=np.uint8)]),
            held.offsets, live, live_new, [len(a) for a in added], delta_new, size)
        return snapshot.Column(data.tobytes(), offsets)

    old_columns = (snap.names, snap.descriptions, snap.types, snap.provenances, snap.updated, snap.links)
    names, descriptions, types, provenances, updated, links = (
        column(old, new) for old, new in zip(old_columns, _columns(entries), strict=True))
    merged = snapshot.Snapshot(
        fresh, numbers(snap.ids, lambda e: e.id, np.int64), numbers(snap.versions, lambda e: e.version, np.int64),
        numbers(snap.confidence, lambda e: e.confidence, np.float64),
        numbers(snap.conflict, lambda e: e.in_conflict, np.uint8), names, descriptions, types,
        provenances, updated, links, state.cursor, state.generation, ANALYSIS_VERSION,
    )
    return _State(merged, state.generation, state.cursor)


def _merge_postings(state: _State, live: np.ndarray, live_new: np.ndarray, docs: list[bm25.Doc],
                    docs_new: np.ndarray, size: int) -> bm25.Postings:
    """What `bm25.assemble` builds of the `live` slots (now at `live_new`) and `docs` (at `docs_new`).

    The base's term order is kept, new terms are appended, unused ones dropped. The live
    slots keep their relative order, so their posting lists stay sorted: only the delta's
    postings are sorted and merged in.
    """
    base = state.base
    vocab = list(base.vocab)
    term_id = dict(base.term_id)
    extra_slots: list[int] = []
    extra_tids: list[int] = []
    extra_codes: list[int] = []
    for new, doc in zip(docs_new.tolist(), docs, strict=True):
        for term, code in doc.fcodes.items():
            tid = term_id.get(term)
            if tid is None:
                tid = term_id[term] = len(vocab)
                vocab.append(term)
            extra_slots.append(new)
            extra_tids.append(tid)
            extra_codes.append(code)
    new_of_old = np.full(base.size, -1, dtype=np.int64)
    new_of_old[live] = live_new
    slots, tids, codes = base.coo()
    keep = state.alive[slots]
    kept_slots, kept_tids, kept_codes = new_of_old[slots[keep]], tids[keep], codes[keep]
    add_slots = np.array(extra_slots, dtype=np.int64)
    add_codes = np.array(extra_codes, dtype=np.uint32)
    used = np.zeros(len(vocab), dtype=bool)
    used[kept_tids] = True
    used[extra_tids] = True
    remap = np.cumsum(used) - 1  # term id -> new term id (unused terms dropped, order kept)
    terms = int(remap[-1]) + 1 if len(remap) else 0
    add_tids = remap[np.array(extra_tids, dtype=np.int64)]

    # Inverted lists, ordered by (term, slot): the live ones already are; merge the delta's in.
    kept_keys = remap[kept_tids] * size + kept_slots
    add_keys = add_tids * size + add_slots
    by_key = np.argsort(add_keys)
    at = np.searchsorted(kept_keys, add_keys[by_key]) + np.arange(len(add_keys))
    from_base = np.ones(len(kept_keys) + len(add_keys), dtype=bool)
    from_base[at] = False
    inv_keys = np.empty(len(from_base), dtype=np.int64)
    inv_keys[from_base], inv_keys[at] = kept_keys, add_keys[by_key]
    inv_all = np.empty(len(from_base), dtype=np.uint32)
    inv_all[from_base], inv_all[at] = kept_codes, add_codes[by_key]
    inv_ptr = np.zeros(terms + 1, dtype=np.int64)
    np.cumsum(np.bincount(inv_keys // max(size, 1), minlength=terms), out=inv_ptr[1:])

    # Forward lists, ordered by (slot, term): each live slot's renumbered, the delta's sorted.
    old_fwd = base.fwd_codes.astype(np.int64)
    add_fwd = ((add_tids << 1) | (add_codes & 1))[np.lexsort((add_tids, add_slots))]
    fwd_codes, fwd_ptr = _gather(np.concatenate([(remap[old_fwd >> 1] << 1) | (old_fwd & 1), add_fwd]),
                                 base.fwd_ptr, live, live_new, [len(d.fcodes) for d in docs], docs_new, size)
    lengths = np.zeros(size, dtype=np.int32)
    lengths[live_new] = base.lengths[live]
    lengths[docs_new] = [d.length for d in docs]
    merged = bm25.Postings(
        vocab if terms == len(vocab) else [vocab[i] for i in np.flatnonzero(used).tolist()], inv_ptr,
        (inv_keys % max(size, 1)).astype(np.int32),
        inv_all.astype(_narrowest(int(inv_all.max()) if len(inv_all) else 0)), fwd_ptr,
        fwd_codes.astype(_narrowest(2 * terms + 1)), lengths)
    _ = merged.max_f, merged.min_length  # computed once here, kept in the snapshot (as `bm25.assemble` does)
    return merged


def _gather(source: np.ndarray, ptr: np.ndarray, live: np.ndarray, live_new: np.ndarray,
            added: list[int], delta_new: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray]:
    """Segments ``source[ptr[s]:ptr[s + 1]]`` of the `live` slots at `live_new`, and the delta's.

    The delta's segments follow the base's in `source` (``added`` long each, in delta
    order) and go to `delta_new`. Returns the values in new slot order and their offsets.
    """
    ptr = np.asarray(ptr, dtype=np.int64)
    starts = np.zeros(size, dtype=np.int64)
    counts = np.zeros(size, dtype=np.int64)
    starts[live_new], counts[live_new] = ptr[live], ptr[live + 1] - ptr[live]
    added_counts = np.array(added, dtype=np.int64)
    added_starts = ptr[-1] + np.cumsum(added_counts) - added_counts
    starts[delta_new], counts[delta_new] = added_starts, added_counts
    offsets = np.zeros(size + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    index = np.repeat(starts - offsets[:-1], counts) + np.arange(offsets[-1], dtype=np.int64)
    return source[index], offsets


def _narrowest(largest: int) -> type[np.unsignedinteger[Any]]:
    return np.uint16 if largest < 2**16 else np.uint32


class PostingsIndex:
    """Exact BM25 search over one store's concepts, per agent, opened from a persisted snapshot.

    Thread-safe: refreshes are serialised; a search reads one immutable state.

    Args:
        store: the tenant's store. Where it keeps snapshots (`SnapshotStore`), a process
            opens an agent's index from it; otherwise every process builds it once.
        persist: write snapshots back (False: read them only).
    """

    name = "postings"

    def __init__(self, store: ScanSource, persist: bool = True):
        self.store = store
        self.persist = persist
        self._states: PerAgent[_State] = PerAgent(self._refresh)
        #: (state, query, its terms) of the last analysis (one tuple: replaced whole).
        self._last: tuple[_State | None, str, frozenset[str]] = (None, "", frozenset())

    # ------------------------------------------------------------------ state

    def _state(self, agent: str) -> _State:
        return self._states.get(agent, self.store.generation(agent))

    def _open(self, agent: str) -> _State:
        store = self.store
        if isinstance(store, SnapshotStore):
            data = store.load_index_snapshot(agent, KIND)
            snap = snapshot.loads(data) if data is not None else None
            if snap is not None and snap.analysis == ANALYSIS_VERSION:
                return _State(snap, snap.generation, snap.cursor)
        cursor = store.version_cursor(agent)
        generation = store.generation(agent)
        state = build(store.scan_rows(agent), generation, cursor)
        self._save(agent, state)
        return state

    def _save(self, agent: str, state: _State) -> None:
        if self.persist and isinstance(self.store, SnapshotStore):
            try:
                self.store.save_index_snapshot(agent, KIND, snapshot.dumps(state.snap))
            except (RunTimeFailure, UserError):
                pass  # derived data: the next process builds it again

    def _refresh(self, agent: str, old: _State | None, generation: int) -> _State:
        opened = old is None
        if old is None:
            old = self._open(agent)
            if old.generation == generation:
                return old
        cursor, names = self.store.changes_since(agent, old.cursor)
        fresh = old.derive(generation, cursor)
        fresh.unsaved += len(names)
        rows = {r.name: r for r in self.store.scan_rows_by_names(agent, sorted(names))} if names else {}
        # A rename moves a concept's history to its new name: a concept the index holds under
        # its old name, renamed and then deleted, shows in the feed only as a deleted name it
        # never held (or, deleted and its name reused and renamed, as a new name: checked over
        # a snapshot's longer window). The concepts are then counted: one more held than
        # stored is one that went unnamed.
        unheld = any(n not in rows and not fresh.holds(n) for n in names)
        for name in sorted(names):
            fresh.remove(name)
            if name in rows:
                fresh.add(rows[name])
        if not names or ((unheld or opened) and miscounted(self.store, agent, fresh.documents)):
            self._reconcile(agent, fresh)  # compare every version number
        if len(fresh.delta) > max(DELTA_MIN, DELTA_ROOT * math.sqrt(fresh.documents)):
            unsaved = fresh.unsaved
            fresh = rebuild(fresh)
            fresh.unsaved = unsaved
            if unsaved > max(DELTA_MIN, DELTA_SHARE * fresh.documents):
                self._save(agent, fresh)
                fresh.unsaved = 0
        return fresh

    def _reconcile(self, agent: str, fresh: _State) -> None:
        """Bring `fresh` to the store's concepts by comparing every version number (one read of all)."""
        now = self.store.scan_versions(agent)
        held = fresh.versions()
        gone = {i for i in held if i not in now}
        for name, slot in list(fresh.slot_of_name.items()):
            if fresh.alive[slot] and int(fresh.snap.ids[slot]) in gone:
                fresh.remove(name)
        for name in [n for n, (e, _) in fresh.delta.items() if e.id in gone]:
            fresh.remove(name)
        changed = [i for i, v in now.items() if held.get(i) != v]
        fresh.unsaved += len(gone) + len(changed)
        for row in self.store.scan_rows(agent, changed):
            fresh.add(row)

    # ------------------------------------------------------------------ search

    def analyse(self, agent: str, query: str) -> frozenset[str]:
        """The terms `search` uses for `query`: `query_terms`, typos corrected (`index.typos`).

        The last analysis is remembered with the state it was made against, so asking
        again right after `search` (the relevance floor does) costs nothing.
        """
        return self._analysed(self._state(agent), query)

    def _analysed(self, state: _State, query: str) -> frozenset[str]:
        last = self._last
        if last[0] is state and last[1] == query:
            return last[2]
        wanted = correct(query_terms(query), state.doc_freq, state.vocabularies())
        self._last = (state, query, wanted)
        return wanted

    def search(self, agent: str, query: str, top_k: int) -> list[Hit]:
        """The `top_k` concepts of `agent` by BM25 for `query`; [] when no term matches.

        Returns:
            Hits, best first: score (BM25, higher is better) desc, then confidence desc,
            updated_at desc, name asc.
        """
        state = self._state(agent)
        return self._rank(agent, state, self._analysed(state, query), top_k)

    def search_terms(self, agent: str, wanted: frozenset[str], top_k: int) -> list[Hit]:
        """`search` for already analysed terms (exact: what `bm25.reference_top_k` ranks)."""
        return self._rank(agent, self._state(agent), wanted, top_k)

    def _rank(self, agent: str, state: _State, wanted: frozenset[str], top_k: int) -> list[Hit]:
        plan = state.plan(wanted)
        if not plan or top_k <= 0:
            return []
        changed = state.delta_scores(plan)
        alive = None if state.dead == 0 else state.alive
        best = topk.top_k(state.base, alive, state.saturation(), plan, top_k, [s for _, s in changed])
        entries = self._base_entries(agent, state, [slot for slot, _ in best])
        hits = [Hit(entries[slot], score) for slot, score in best if slot in entries]
        if changed:  # sorted(hits + changed)[:top_k], with only the best top_k of `changed` made hits
            best_changed = heapq.nsmallest(top_k, changed, key=lambda pair: (-pair[1], pair[0].tiebreak))
            hits.extend(Hit(e, s) for e, s in best_changed)
            hits.sort(key=lambda h: (-h.score, h.entry.tiebreak))
            del hits[top_k:]
        return hits

    def _base_entries(self, agent: str, state: _State, slots: list[int]) -> dict[int, Entry]:
        # Per base (its states share one cache): a slot means one concept only within its
        # base, and another agent's searches never see this agent's entries.
        cache = state.entries
        out: dict[int, Entry] = {}
        for slot in slots:
            found = cache.get(slot)
            if found is None:
                if len(cache) > ENTRY_CACHE:
                    cache.clear()
                found = cache[slot] = entry_of(state, slot)
            out[slot] = found
        return out

    def weight(self, agent: str) -> Callable[[str], int]:
        """Term weights as Scan computes them (`term_weight`), from `agent`'s own counts."""
        state = self._state(agent)
        return lambda term: term_weight(max(1, state.documents), state.doc_freq(term))

    def lookup(self, agent: str, names: list[str]) -> dict[str, Entry]:
        """Entries for the concepts called `names` (missing names are absent)."""
        state = self._state(agent)
        out = {n: state.delta[n][0] for n in names if n in state.delta}
        slots = [s for n in names if n not in out and (s := state.slot_of_name.get(n)) is not None
                 and state.alive[s]]
        for slot, entry in self._base_entries(agent, state, slots).items():
            out[state.snap.names[slot]] = entry
        return out

    def memory_bytes(self, agent: str) -> int:
        """The arrays of `agent`'s base, in bytes (vocabulary and name strings not counted)."""
        snap = self._state(agent).snap
        base = snap.base
        return sum(a.nbytes for a in (base.inv_ptr, base.inv_docs, base.inv_codes, base.fwd_ptr,
                                      base.fwd_codes, base.lengths, snap.ids, snap.versions, snap.confidence))
