"""Exact top-k BM25 over a `bm25.Postings` base: every posting counted, or MaxScore when the lists are long.

A query's score for a concept is the sum, in `bm25.query_plan` order (idf descending), of
each term's share ``idf * f * (k1 + 1) / (f + norm)``. `top_k` returns exactly what
`bm25.reference_top_k` (every concept scored) returns, floats included:

- **Few postings** (at most `PRUNE_FROM` in all): every share is added into one
  accumulator, term after term in plan order, as the reference sums it: a term most
  concepts hold as one array over every slot (`Saturation.spread`, 0.0 where it is
  absent: x + 0.0 == x), the lists between two such terms joined and added by one
  ``np.add.at`` (which adds its inputs in order).
- **Long lists**: MaxScore (Turtle and Flood, "Query evaluation: strategies and
  optimizations", 1995), term at a time. The rarest terms (their lists a small part of
  the postings) give a lower bound of the k-th best score: the k-th best partial score
  among the concepts of the longest of them (or of all they touch, when it is short).
  The *essential* terms are the shortest prefix of the plan after which the remaining
  terms' largest possible shares (`Saturation.bound`) sum below that bound: a concept
  holding none of them cannot reach the top k. The essential terms are added into the
  same accumulator; the remaining (long, low-idf) lists are then added, in plan order,
  for the concepts whose partial score plus that sum still reaches the bound (each list
  binary-searched for them, read once against a mark, or added whole, whichever costs
  least).

Both paths return slots by score desc, then slot asc (the base's tie-break order).
"""

from __future__ import annotations

import math
import threading
from collections.abc import Sequence
from itertools import accumulate
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from insika_knowledge.index.bm25 import K1, FloatArray, Postings, length_norm, length_norms

#: A relative margin on the pruning bound, far above float rounding over a few dozen terms.
_MARGIN: Final = 1e-9
#: And one relative to the bound itself: a sum of up to thousands of shares rounds less.
_ROUNDING: Final = 1e-12
#: Shares kept per `Saturation` at most (postings; 8 bytes each).
KEEP_AT_MOST: Final = 8_000_000
#: At most this many postings in all: every posting is added, no pruning.
PRUNE_FROM: Final = 500_000
#: A term held by at least 1/_DENSE_FROM of the slots is added as one array over every slot
#: (`Saturation.spread`), within `DENSE_BUDGET` bytes per `Saturation`.
_DENSE_FROM: Final = 4
DENSE_BUDGET: Final = 16 * 2**20
#: Up to this many slots, the k-th best score is found among all of them (a copy and a
#: partition cost less than choosing and reading a list of them).
_PARTITION_UP_TO: Final = 4096
#: Lists of at most this many postings in all are joined and added in one call (`_Scratch.add`).
_JOINED_UP_TO: Final = 65_536
#: The lists the k-th score is first bounded from hold at most this share of the postings.
_PROBE_SHARE: Final = 16
#: Costs, in postings added to the accumulator (about 1 ns each here): binary-searching a
#: list for one concept (10-19 by the list's length); reading one posting against the
#: marks (plus 3 per concept marked); computing one posting's share.
_SEARCH_COST: Final = 16
_MARK_COST: Final = 1
_SHARE_COST: Final = 5
#: A list holding at least 1/_MAPPED_FROM of the slots is looked up through a per-base map
#: of positions (`Postings.positions`, a gather per concept), within `MAPS_BUDGET` bytes.
_MAPPED_FROM: Final = 16
MAPS_BUDGET: Final = 16 * 2**20

#: The first `_COLD_SEARCHES` searches of a `Saturation` (a write moved the statistics: no
#: share of the previous one can be reused) go the cold path (`_top_k_cold`) when computing
#: their common terms' shares, 1 + `_SHARE_COST` per posting not yet computed, would cost
#: more than this. Later searches compute them (kept for the searches after).
COLD_PRUNE_FROM: Final = 500_000
_COLD_SEARCHES: Final = 4
#: A term held by at least 1/_COMMON_FROM of the slots is common on the cold path.
_COMMON_FROM: Final = 4
#: The cold path's seeds: from the rarest lists' first `_SEEDS_FROM` postings, the
#: `_SEEDS` concepts with the best partial scores.
_SEEDS_FROM: Final = 4096
_SEEDS: Final = 64
#: Bytes of common terms' frequencies per slot kept per base (`Postings.frequencies`).
FREQUENCIES_BUDGET: Final = 16 * 2**20

#: `Saturation.spread`'s mark of a term it never spreads.
_NARROW: Final[tuple[float, None]] = (math.nan, None)
#: One query term: (term id, idf, (lo, hi) of its postings).
Term = tuple[int, float, tuple[int, int]]


class Saturation:
    """Per term, each posting's ``idf * f * (k1 + 1) / (f + norm)`` under one avgdl, computed once.

    A term's share of every score it touches, as one array aligned with its posting list
    (or, for a common term, laid over every slot: `spread`), so a warm query adds what is
    kept. Arrays are kept up to `budget` postings in all
    (first come, first kept), each with the idf it was weighted with (a term whose idf
    moved is weighted again). Tied to one avgdl: a write that moves it needs a new
    `Saturation`.
    """

    def __init__(self, base: Postings, avgdl: float, budget: int | None = None,
                 scratch: list[_Scratch] | None = None):
        self.base = base
        self.avgdl = avgdl
        self.norms = length_norms(base.lengths, avgdl)
        self.budget = budget if budget is not None else min(len(base.inv_docs), KEEP_AT_MOST)
        self._kept: dict[int, tuple[float, FloatArray]] = {}
        self._spread: dict[int, tuple[float, FloatArray | None]] = {}
        self._spread_budget = DENSE_BUDGET
        self._bounds: dict[int, float] = {}
        #: Searches that used this saturation (`top_k`).
        self.searches = 0
        self._lock = threading.Lock()
        #: Idle working arrays; the next `Saturation` of the same base takes the list over.
        self.scratch: list[_Scratch] = scratch if scratch is not None else []

    def take(self) -> _Scratch:
        """Working arrays for one search (one per concurrent search; returned with `give`)."""
        try:
            return self.scratch.pop()
        except IndexError:
            return _Scratch(self.base.size)

    def give(self, scratch: _Scratch) -> None:
        """Return `scratch` (its dense scores zeroed) for the next search."""
        self.scratch.append(scratch)

    def of(self, tid: int, weight: float) -> FloatArray:
        """``weight`` times term `tid`'s saturation per posting (aligned with its ``inv_docs`` slice)."""
        found = self._kept.get(tid)
        if found is not None and found[0] == weight:
            return found[1]
        base = self.base
        lo, hi = base.span(tid)
        saturation = self._saturation(base.inv_codes[lo:hi], base.inv_docs[lo:hi])
        self._bounds[tid] = float(saturation.max()) if hi > lo else 0.0
        value: FloatArray = weight * saturation
        with self._lock:
            self._keep(tid, weight, value)
        return value

    def _saturation(self, codes: npt.NDArray[Any], slots: npt.NDArray[Any]) -> FloatArray:
        """``f * (k1 + 1) / (f + norm)`` of postings given by their codes and slots (the one formula)."""
        f = (codes >> 1).astype(np.float64)
        value: FloatArray = (f * (K1 + 1.0)) / (f + self.norms[slots])
        return value

    def _keep(self, tid: int, weight: float, value: FloatArray) -> None:
        """Keep `value` as term `tid`'s shares under `weight` while the budget allows (lock held)."""
        found = self._kept.get(tid)
        if found is not None or len(value) <= self.budget:
            if found is None:
                self.budget -= len(value)
            self._kept[tid] = (weight, value)

    def many(self, terms: list[Term]) -> list[FloatArray]:
        """`of` of each of `terms`, the ones not kept computed together (one pass over their postings).

        The same operations per posting as `of`, so the same floats.
        """
        kept = self._kept
        out: list[FloatArray | None] = []
        missing: list[int] = []
        for tid, weight, _ in terms:
            found = kept.get(tid)
            if found is not None and found[0] == weight:
                out.append(found[1])
            else:
                missing.append(len(out))
                out.append(None)
        if len(missing) == 1:
            tid, weight, _ = terms[missing[0]]
            out[missing[0]] = self.of(tid, weight)
        elif missing:
            base = self.base
            spans = [terms[i][2] for i in missing]
            saturation = self._saturation(np.concatenate([base.inv_codes[lo:hi] for lo, hi in spans]),
                                          np.concatenate([base.inv_docs[lo:hi] for lo, hi in spans]))
            sizes = [hi - lo for lo, hi in spans]
            weighted = np.repeat([terms[i][1] for i in missing], sizes) * saturation
            starts = accumulate(sizes[:-1], initial=0)
            with self._lock:  # (no exact `bound` here: `bound` falls back to max_f and min_length)
                for i, a, size in zip(missing, starts, sizes, strict=True):
                    value = out[i] = weighted[a:a + size]
                    self._keep(terms[i][0], terms[i][1], value)
        return out  # type: ignore[return-value]  # every None was filled

    def spread(self, tid: int, weight: float) -> FloatArray | None:
        """`of(tid, weight)` laid over every slot (float[n], 0.0 where `tid` is absent), or None.

        Only for a term held by at least 1/`_DENSE_FROM` of the slots, while such arrays
        stay within `DENSE_BUDGET` bytes: adding it whole (``dense += spread``) costs less
        than adding its postings one by one, and adds exactly the same (x + 0.0 == x).
        """
        found = self._spread.get(tid)
        if found is not None and (found[0] == weight or found[1] is None):
            return found[1]
        base = self.base
        lo, hi = base.span(tid)
        n = base.size
        if (hi - lo) * _DENSE_FROM < n or (found is None and self._spread_budget < 8 * n):
            self._spread[tid] = _NARROW  # for good: the list and the budget only ever shrink
            return None
        value = np.zeros(n)
        value[base.inv_docs[lo:hi]] = self.of(tid, weight)
        with self._lock:
            if found is None:
                self._spread_budget -= 8 * n
            self._spread[tid] = (weight, value)
        return value

    def holds(self, tid: int, weight: float) -> bool:
        """True when term `tid`'s shares under `weight` are computed and kept."""
        found = self._kept.get(tid)
        return found is not None and found[0] == weight

    def at(self, tid: int, lo: int, positions: npt.NDArray[Any], weight: float) -> FloatArray:
        """`of(tid, weight)` at `positions` of its list (which starts at ``inv_docs[lo]``)."""
        found = self._kept.get(tid)
        if found is not None and found[0] == weight:
            kept: FloatArray = found[1][positions]
            return kept
        base = self.base
        value: FloatArray = weight * self._saturation(base.inv_codes[lo + positions], base.inv_docs[lo + positions])
        return value

    def bound(self, tid: int) -> float:
        """The largest saturation (idf not applied) any posting of `tid` can have (exact once seen)."""
        known = self._bounds.get(tid)
        if known is not None:
            return known
        maxf = float(self.base.max_f[tid])
        # Saturation grows with f and shrinks with length: the largest f over the shortest holder.
        return (maxf * (K1 + 1.0)) / (maxf + length_norm(float(self.base.min_length[tid]), self.avgdl))


class _Scratch:
    """One search's working arrays, reused: a query allocates nothing the size of the base.

    (Temporaries of a few hundred KiB each cost more than the search itself when the C
    allocator maps fresh pages for them on every call.)
    """

    def __init__(self, n: int):
        self.dense = np.zeros(n)  # zero between uses
        self.copy = np.empty(n)
        self.marked = np.zeros(n, dtype=bool)  # False between uses

    def add(self, base: Postings, saturation: Saturation, terms: list[Term]) -> None:
        """Add `terms`' shares to `dense`, term after term, each list in order: plan order kept.

        Up to `_JOINED_UP_TO` postings, the lists are joined (in plan order) and added in one
        ``np.add.at``, which adds its inputs one after another: each slot's shares still
        arrive in plan order, and a query pays one call instead of one per term.
        """
        dense, spread = self.dense, saturation.spread
        start = 0  # terms[start:i] wait to be added, in plan order
        for i, (tid, weight, _) in enumerate(terms):
            whole = spread(tid, weight)
            if whole is not None:
                if start < i:
                    self._add_lists(base, saturation, terms[start:i])
                np.add(dense, whole, out=dense)
                start = i + 1
        if start < len(terms):
            self._add_lists(base, saturation, terms[start:] if start else terms)

    def _add_lists(self, base: Postings, saturation: Saturation, terms: list[Term]) -> None:
        """Add `terms`' shares to `dense` posting by posting (joined in one call when short)."""
        dense, inv_docs = self.dense, base.inv_docs
        if len(terms) > 1 and sum(hi - lo for _, _, (lo, hi) in terms) <= _JOINED_UP_TO:
            np.add.at(dense, np.concatenate([inv_docs[lo:hi] for _, _, (lo, hi) in terms], dtype=np.intp),
                      np.concatenate(saturation.many(terms)))
            return
        for tid, weight, (lo, hi) in terms:
            np.add.at(dense, inv_docs[lo:hi].astype(np.intp), saturation.of(tid, weight))

    def add_at(self, base: Postings, saturation: Saturation, terms: list[Term], slots: npt.NDArray[Any]) -> None:
        """Add `terms`' shares to `dense` at `slots` (ascending, distinct), term after term.

        Per term, whichever costs least: a binary search of its list for each slot; for a
        long list, one read per slot of the base's map of its positions; one pass over the
        list against a mark per slot (these compute only the shares found); or adding the
        whole list (other slots get a share too, which nothing reads).
        """
        if len(slots) == 0:
            return
        dense, inv_docs, marked = self.dense, base.inv_docs, self.marked
        needles = slots.astype(inv_docs.dtype, copy=False)  # searchsorted converts the list otherwise
        marking = False
        try:
            for tid, weight, (lo, hi) in terms:
                posting = inv_docs[lo:hi]
                search = len(needles) * _SEARCH_COST
                mark = (hi - lo) * _MARK_COST + 3 * len(needles)
                whole = (hi - lo) * (1 if saturation.holds(tid, weight) else 1 + _SHARE_COST)
                if whole <= search and whole <= mark:
                    np.add.at(dense, posting, saturation.of(tid, weight))
                    continue
                mapped = base.positions(tid, MAPS_BUDGET) if (hi - lo) * _MAPPED_FROM >= base.size else None
                positions: npt.NDArray[Any]
                if mapped is not None and 2 * len(needles) < min(search, mark):
                    found = mapped[needles]
                    held = found >= 0
                    positions, where = found[held], needles[held]
                elif search < mark:
                    at = np.searchsorted(posting, needles)
                    np.minimum(at, hi - lo - 1, out=at)
                    held = posting[at] == needles
                    positions, where = at[held], needles[held]
                else:
                    if not marking:
                        marked[slots] = marking = True
                    positions = np.flatnonzero(marked[posting])
                    where = posting[positions]
                if len(positions):
                    dense[where] += saturation.at(tid, lo, positions, weight)
        finally:
            if marking:
                marked[slots] = False


def top_k(base: Postings, alive: npt.NDArray[np.bool_] | None, saturation: Saturation,
          plan: list[tuple[str, float]], k: int,
          extra: Sequence[float] = ()) -> list[tuple[int, float]]:
    """The best `k` live base slots for `plan`, exact: ``[(slot, score)]`` by score desc, slot asc.

    Args:
        base: the postings.
        alive: bool[n], False for slots whose concept changed or went (never returned);
            None when every slot is live.
        saturation: the `Saturation` of `base` under the current avgdl.
        plan: `bm25.query_plan` of the query (scores are summed in its order).
        k: hits wanted (>= 1).
        extra: full scores of concepts outside the base (changed ones) that compete for
            the same k places: they only raise the pruning bound.

    Returns:
        Up to `k` (slot, score) pairs; only slots sharing at least one term.
    """
    located = base.located
    terms: list[Term] = [(at[0], w, at[1]) for t, w in plan if (at := located(t)) is not None]
    if not terms or base.size == 0 or k <= 0:
        return []
    scratch = saturation.take()
    try:
        return _top_k(base, alive, saturation, terms, k, extra, scratch)
    finally:
        scratch.dense.fill(0.0)
        saturation.give(scratch)


def _top_k(base: Postings, alive: npt.NDArray[np.bool_] | None, saturation: Saturation, terms: list[Term], k: int,
           extra: Sequence[float], scratch: _Scratch) -> list[tuple[int, float]]:
    sizes = [hi - lo for _, _, (lo, hi) in terms]
    total = sum(sizes)
    partial = scratch.dense
    saturation.searches += 1
    if saturation.searches <= _COLD_SEARCHES:
        common = len(terms)
        while common > 0 and sizes[common - 1] * _COMMON_FROM >= base.size:
            common -= 1
        if 0 < common < len(terms) and (1 + _SHARE_COST) * _unheld(saturation, terms[common:]) > COLD_PRUNE_FROM:
            found = _top_k_cold(base, alive, saturation, terms, common, k, extra, scratch)
            if found is not None:
                return found
    if total <= PRUNE_FROM:
        scratch.add(base, saturation, terms)
        return _ranked_dense(scratch, alive, k, terms, base)
    # The rarest terms (at least one) bound the k-th best score from below.
    probe, counted = 1, sizes[0]
    while probe < len(terms) and counted + sizes[probe] <= total // _PROBE_SHARE:
        counted += sizes[probe]
        probe += 1
    scratch.add(base, saturation, terms[:probe])
    longest = max(range(probe), key=sizes.__getitem__)
    pool = base.inv_docs[slice(*terms[longest][2])] if sizes[longest] >= 4 * k else np.flatnonzero(partial > 0.0)
    threshold = max(_kth(partial, pool, alive, k), _kth_of(extra, k))
    # The essential terms: the shortest prefix whose remaining terms cannot reach the bound.
    reach = [0.0] * (len(terms) + 1)
    for i in range(len(terms) - 1, -1, -1):
        reach[i] = reach[i + 1] + terms[i][1] * saturation.bound(terms[i][0])
    essential = next((j for j in range(probe, len(terms)) if _slack(reach[j], threshold) < threshold), len(terms))
    rest = total - sum(sizes[:essential])
    if essential == len(terms) or rest <= PRUNE_FROM // _PROBE_SHARE:
        scratch.add(base, saturation, terms[probe:])
        return _ranked_dense(scratch, alive, k, terms, base)
    scratch.add(base, saturation, terms[probe:essential])
    chosen = np.flatnonzero(partial >= threshold - _slack(reach[essential], threshold))
    chosen = _live(chosen, alive)
    if len(chosen) >= k:  # the k-th best partial score among them is a tighter bound
        scores = partial[chosen]
        best = float(np.partition(scores, len(scores) - k)[len(scores) - k])
        if best > threshold:
            threshold = best
            chosen = chosen[scores >= threshold - _slack(reach[essential], threshold)]
    scratch.add_at(base, saturation, terms[essential:], chosen)
    return _ranked(chosen, partial[chosen], k)


def _unheld(saturation: Saturation, terms: list[Term]) -> int:
    """Postings of `terms` whose shares `saturation` has not computed yet."""
    return sum(hi - lo for tid, weight, (lo, hi) in terms if not saturation.holds(tid, weight))


def _top_k_cold(base: Postings, alive: npt.NDArray[np.bool_] | None, saturation: Saturation, terms: list[Term],
                common: int, k: int, extra: Sequence[float], scratch: _Scratch) -> list[tuple[int, float]] | None:
    """`_top_k` when most shares are still to compute (a write moved the statistics), or None.

    ``terms[common:]`` are held by a `_COMMON_FROM`-th of the slots or more. The terms
    before them are added in full; a few concepts with the best partial scores (from the
    rarest lists) are completed with the common terms, and the k-th best of their exact
    scores bounds the k-th score from below. Only the concepts whose partial score plus
    the common terms' largest shares reaches that bound are completed, in plan order, so
    each score is the sum the other paths compute, float for float. None (nothing added)
    when the common terms' frequencies cannot be kept (`FREQUENCIES_BUDGET`).
    """
    rest = terms[common:]
    rows = []
    for tid, _, _ in rest:
        row = base.frequencies(tid, FREQUENCIES_BUDGET)
        if row is None:
            return None
        rows.append(row)
    weights = np.array([weight for _, weight, _ in rest])
    reach = [0.0] * (len(rest) + 1)
    for i in range(len(rest) - 1, -1, -1):
        reach[i] = reach[i + 1] + rest[i][1] * saturation.bound(rest[i][0])
    # Seeds: concepts of the rarest lists (at most `_SEEDS_FROM` postings, repeats included).
    seeds_from, held = [], 0
    for _, _, (lo, hi) in terms[:common]:
        seeds_from.append(base.inv_docs[lo:min(hi, lo + _SEEDS_FROM - held)])
        held += len(seeds_from[-1])
        if held >= _SEEDS_FROM:
            break
    pool = np.concatenate(seeds_from) if len(seeds_from) > 1 else seeds_from[0]
    dense = scratch.dense
    scratch.add(base, saturation, terms[:common])
    seeds = max(_SEEDS, 2 * k)
    if len(pool) > seeds:
        pool = pool[np.argpartition(dense[pool], len(pool) - seeds)[len(pool) - seeds:]]
    pool = _live(np.unique(pool), alive)
    seeded = _completed(rows, weights, saturation.norms, pool, dense[pool])
    threshold = max(float(np.partition(seeded, len(seeded) - k)[len(seeded) - k]) if len(seeded) >= k else 0.0,
                    _kth_of(extra, k))
    floor = threshold - _slack(reach[0], threshold)
    if floor <= 0.0:  # a concept holding only common terms may still win: every share is needed
        scratch.add(base, saturation, rest)
        return _ranked_dense(scratch, alive, k, terms, base)
    chosen = _live(np.flatnonzero(dense >= floor), alive)
    return _ranked(chosen, _completed(rows, weights, saturation.norms, chosen, dense[chosen]), k)


def _completed(rows: list[npt.NDArray[Any]], weights: FloatArray, norms: FloatArray, slots: npt.NDArray[Any],
               scores: FloatArray) -> FloatArray:
    """`scores` of `slots` with each term's share added in order (term i: ``rows[i]``, its
    frequency per slot, and ``weights[i]``): the operations of `Saturation.of`, one term after
    another, so the same floats (an absent term adds 0.0, which changes no sum).
    """
    if len(slots) == 0:
        return scores
    f = np.stack([row[slots] for row in rows]).astype(np.float64)
    shares = weights[:, None] * ((f * (K1 + 1.0)) / (f + norms[slots]))
    for share in shares:
        scores += share
    return scores


def _live(slots: npt.NDArray[Any], alive: npt.NDArray[np.bool_] | None) -> npt.NDArray[Any]:
    """The live ones of `slots` (all of them when `alive` is None: no slot is dead)."""
    return slots if alive is None else slots[alive[slots]]


def _slack(reach: float, threshold: float) -> float:
    """`reach` (the remaining terms' largest sum) widened past any rounding of the sums compared."""
    return reach * (1.0 + _MARGIN) + abs(threshold) * _ROUNDING


def _kth(partial: FloatArray, slots: npt.NDArray[Any], alive: npt.NDArray[np.bool_] | None, k: int) -> float:
    """The k-th best `partial` score among the live `slots` (distinct), 0.0 when fewer than k."""
    scores = partial[_live(slots, alive)]
    return float(np.partition(scores, len(scores) - k)[len(scores) - k]) if len(scores) >= k else 0.0


def _kth_of(scores: Sequence[float], k: int) -> float:
    """The k-th best of `scores`, 0.0 when fewer than k."""
    return sorted(scores, reverse=True)[k - 1] if len(scores) >= k else 0.0


def _ranked_dense(scratch: _Scratch, alive: npt.NDArray[np.bool_] | None, k: int,
                  terms: list[Term], base: Postings) -> list[tuple[int, float]]:
    """The `k` best live slots of the scratch's dense scores (ties: lower slot first).

    Only the slots at or above a lower bound of the k-th score are ranked: the k-th best
    live score among the holders of one of `terms` (the first list of at least 2k postings
    and at most a quarter of the slots; above `_PARTITION_UP_TO` slots), else the k-th best
    of all slots (when dead slots held that one up, every slot with a score is ranked).
    """
    dense = scratch.dense
    n = len(dense)
    cut = 0.0
    if n > k:
        pool = None if n <= _PARTITION_UP_TO else \
            next((base.inv_docs[lo:hi] for _, _, (lo, hi) in terms if 2 * k <= hi - lo <= n // 4), None)
        if pool is not None:
            cut = _kth(dense, pool, alive, k)
        else:
            np.copyto(scratch.copy, dense)
            scratch.copy.partition(n - k)
            cut = float(scratch.copy[n - k])
    if cut > 0.0:
        candidates = np.flatnonzero(dense >= cut)
        candidates = _live(candidates, alive)
        if len(candidates) >= k:  # else dead slots held the cut up
            return _ranked(candidates, dense[candidates], k)
    candidates = np.flatnonzero(dense > 0.0)  # every share is positive
    candidates = _live(candidates, alive)
    return _ranked(candidates, dense[candidates], k)


def _ranked(candidates: npt.NDArray[Any], scores: FloatArray, k: int) -> list[tuple[int, float]]:
    """The `k` best `candidates` by `scores` (ties: lower slot first); all of them when k or fewer."""
    if len(candidates) > max(k, 64):  # else sorting them all costs less than a partition
        cut = float(np.partition(scores, len(scores) - k)[len(scores) - k])
        keep = scores >= cut
        candidates, scores = candidates[keep], scores[keep]
    ranked = sorted(zip((-scores).tolist(), candidates.tolist(), strict=True))[:k]
    return [(slot, -score) for score, slot in ranked]
