"""Exact BM25 over compact posting lists (numpy): the formula, the immutable base, the reference ranking.

The formula is SQLite FTS5's ``bm25()`` with the column weights of `index.fts5`
(name 8, description 4, body 1), computed over one agent's own concepts:

    score(d) = sum over query terms t in d of idf(t) * f * (k1 + 1) / (f + k1 * (1 - b + b * D / avgdl))

where f = 8 * tf(name) + 4 * tf(description) + tf(body), D = the concept's token
count over the three fields, avgdl = the mean D, idf(t) = ln(1 + (N - df + 0.5) / (df + 0.5))
(Lucene's, always positive), k1 = 1.2, b = 0.75. Ties break by confidence desc, updated_at
desc, name asc (the slot order of a `Postings` base).

The idf is not SQLite's: FTS5's ``bm25()`` uses ln((N - df + 0.5) / (df + 0.5)), which is 0
(clamped to 1e-6) for a term held by half the concepts or more. In a store of a handful of
concepts that is most of the words that matter ("entrega", "prazo" in four of six concepts
about delivery), so the right concept could rank last. Every BM25 of ours uses this idf:
Index::Postings, the FTS5 path (its own ranking function, `insika_knowledge.store.sqlite.fts`)
and PostgreSQL's (``sql/postgres/013_positive_idf.sql``); Index::Scan's weights already did.

`Postings` is an immutable base: concepts in tie-break order (slots), the vocabulary,
per term the slots holding it with their weighted frequency (``fcode = f << 1 | title``),
and per slot its term ids (``tid << 1 | title``). `index.topk` ranks a query over it
exactly and fast; `reference_top_k` is the same ranking by brute force (the oracle of
tests/test_postings.py).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

import numpy as np
import numpy.typing as npt

K1: Final = 1.2
B: Final = 0.75
#: Column weights (name, description, body), as `index.fts5.WEIGHTS`.
WEIGHTS: Final = (8, 4, 1)

IntArray = npt.NDArray[np.int64]
Int32Array = npt.NDArray[np.int32]
FloatArray = npt.NDArray[np.float64]


def idf(documents: int, containing: int) -> float:
    """Lucene's idf: ``ln(1 + (N - df + 0.5) / (df + 0.5))``, positive for any df <= N."""
    return math.log(1.0 + (documents - containing + 0.5) / (containing + 0.5))


def length_norm(length: float, avgdl: float) -> float:
    """``k1 * (1 - b + b * D / avgdl)`` for one concept (the same operations as `length_norms`)."""
    return K1 * ((1.0 - B) + (B * length) / avgdl)


def length_norms(lengths: npt.NDArray[Any], avgdl: float) -> FloatArray:
    """`length_norm` of every slot, as a float64 array."""
    return K1 * ((1.0 - B) + (B * lengths.astype(np.float64)) / avgdl)


def contribution(weight: float, f: float, norm: float) -> float:
    """One term's share of a concept's score: ``idf * (f * (k1 + 1)) / (f + norm)``."""
    return weight * ((f * (K1 + 1.0)) / (f + norm))


def readable(array: npt.NDArray[Any], dtype: Any = None) -> memoryview:
    """`array` (as `dtype`, default its own) to be read one value at a time as Python numbers.

    A memoryview gives a Python number per read (numpy boxes a scalar) but reads only
    contiguous, aligned, native-order memory: `array` is copied when it is not (e.g. the
    sections of a snapshot written on a machine of the other byte order, or read into a
    buffer that starts off an 8-byte boundary).
    """
    return np.require(array, dtype if dtype is not None else array.dtype.newbyteorder("="), ["C", "A"]).data


@dataclass(frozen=True, slots=True)
class Doc:
    """One analysed concept: ``fcodes[term] = f << 1 | title``, and its token count `length`."""

    fcodes: Mapping[str, int]
    length: int

    def f(self, term: str) -> int:
        """The weighted frequency of `term` (0 when absent)."""
        return self.fcodes.get(term, 0) >> 1


def analyse_fields(tokenize: Callable[[str], Sequence[str]], name: str, description: str, body: str) -> Doc:
    """The `Doc` of a concept whose fields are tokenised by `tokenize` (FTS5's per-column view)."""
    codes: dict[str, int] = {}
    length = 0
    for weight, text in zip(WEIGHTS, (name, description, body), strict=True):
        tokens = tokenize(text)
        length += len(tokens)
        title = 1 if weight != 1 else 0
        for term in tokens:
            codes[term] = (codes.get(term, 0) + (weight << 1)) | title
    return Doc(codes, length)


class Postings:
    """An immutable base: slots in tie-break order, the vocabulary, inverted and forward lists.

    Attributes:
        vocab: term id -> term.
        term_id: term -> id.
        inv_ptr: int64[V + 1]; term t's postings are ``inv_docs[inv_ptr[t]:inv_ptr[t + 1]]``
            (slots, ascending) with ``inv_codes`` (``f << 1 | title``, uint16 or uint32).
        fwd_ptr: int64[n + 1]; slot s's terms are ``fwd_codes[fwd_ptr[s]:fwd_ptr[s + 1]]``
            (``tid << 1 | title``, uint16 or uint32).
        lengths: int32[n], each slot's token count D.
    """

    def __init__(self, vocab: list[str], inv_ptr: IntArray, inv_docs: Int32Array,
                 inv_codes: npt.NDArray[Any], fwd_ptr: IntArray, fwd_codes: npt.NDArray[Any],
                 lengths: Int32Array, max_f: npt.NDArray[Any] | None = None,
                 min_length: Int32Array | None = None):
        self.vocab = vocab
        self.term_id = {t: i for i, t in enumerate(vocab)}
        self.inv_ptr = inv_ptr
        self.inv_docs = inv_docs
        self.inv_codes = inv_codes
        self.fwd_ptr = fwd_ptr
        self.fwd_codes = fwd_codes
        self.lengths = lengths
        self.df = np.diff(inv_ptr)
        self._ptr = readable(inv_ptr, np.int64)  # read one value at a time
        self._positions: dict[int, Int32Array] = {}
        self._frequencies: dict[int, npt.NDArray[Any]] = {}
        self._frequencies_bytes = 0
        self._max_f = max_f
        self._min_length = min_length

    @property
    def max_f(self) -> npt.NDArray[Any]:
        """Per term, the largest weighted frequency among its postings."""
        found = self._max_f
        if found is None:
            starts = self.inv_ptr[:-1]
            found = self._max_f = (np.maximum.reduceat(self.inv_codes, starts) >> 1) if len(starts) else \
                np.zeros(0, dtype=np.uint32)
        return found

    @property
    def min_length(self) -> Int32Array:
        """Per term, the token count of the shortest concept holding it."""
        if self._min_length is None:
            starts = self.inv_ptr[:-1]
            self._min_length = np.minimum.reduceat(self.lengths[self.inv_docs], starts) if len(starts) else \
                np.zeros(0, dtype=np.int32)
        return self._min_length

    @property
    def size(self) -> int:
        """Slots in the base."""
        return len(self.lengths)

    def span(self, tid: int) -> tuple[int, int]:
        """(lo, hi): term `tid`'s postings are ``inv_docs[lo:hi]`` (as Python ints)."""
        ptr = self._ptr
        return ptr[tid], ptr[tid + 1]

    def located(self, term: str) -> tuple[int, tuple[int, int]] | None:
        """(term id, `span`) of `term`, or None when no slot holds it."""
        tid = self.term_id.get(term)
        if tid is None:
            return None
        ptr = self._ptr
        return tid, (ptr[tid], ptr[tid + 1])

    def positions(self, tid: int, budget: int) -> Int32Array | None:
        """int32[n]: where each slot sits in term `tid`'s list (-1: not in it), or None.

        Built on first use and kept with the base (which never changes), while the kept
        maps stay within `budget` bytes in all; None past it. A long list's lookups for
        many concepts are then one gather instead of a binary search each.
        """
        found = self._positions.get(tid)
        if found is None:
            if (len(self._positions) + 1) * self.size * 4 > budget:
                return None
            lo, hi = self.span(tid)
            found = np.full(self.size, -1, dtype=np.int32)
            found[self.inv_docs[lo:hi]] = np.arange(hi - lo, dtype=np.int32)
            self._positions[tid] = found
        return found

    def frequencies(self, tid: int, budget: int) -> npt.NDArray[Any] | None:
        """uint8 (or uint16) [n]: each slot's weighted frequency f of term `tid` (0: absent), or None.

        Built on first use and kept with the base (which never changes), while the kept
        arrays stay within `budget` bytes in all; None past it. A common term's shares
        at many concepts are then one gather instead of a lookup in its list each.
        """
        found = self._frequencies.get(tid)
        if found is None:
            dtype = np.uint8 if int(self.max_f[tid]) < 2**8 else np.uint16
            width = np.dtype(dtype).itemsize * self.size
            if self._frequencies_bytes + width > budget:
                return None
            lo, hi = self.span(tid)
            found = np.zeros(self.size, dtype=dtype)
            found[self.inv_docs[lo:hi]] = self.inv_codes[lo:hi] >> 1
            self._frequencies[tid] = found
            self._frequencies_bytes += width
        return found

    def doc_freq(self, term: str) -> int:
        """Base slots holding `term` (dead ones included)."""
        tid = self.term_id.get(term)
        if tid is None:
            return 0
        ptr = self._ptr
        return ptr[tid + 1] - ptr[tid]

    def terms_of(self, slot: int) -> tuple[frozenset[str], frozenset[str]]:
        """(all terms, title terms) of `slot`."""
        codes = self.fwd_codes[self.fwd_ptr[slot]:self.fwd_ptr[slot + 1]].tolist()
        vocab = self.vocab
        return frozenset(vocab[c >> 1] for c in codes), frozenset(vocab[c >> 1] for c in codes if c & 1)

    def doc(self, slot: int) -> Doc:
        """`slot` as a `Doc` (for tests and rebuilds of a few slots)."""
        codes = self.fwd_codes[self.fwd_ptr[slot]:self.fwd_ptr[slot + 1]].tolist()
        out: dict[str, int] = {}
        for c in codes:
            tid = c >> 1
            lo, hi = int(self.inv_ptr[tid]), int(self.inv_ptr[tid + 1])
            at = lo + int(np.searchsorted(self.inv_docs[lo:hi], slot))
            out[self.vocab[tid]] = int(self.inv_codes[at])
        return Doc(out, int(self.lengths[slot]))

    def coo(self) -> tuple[Int32Array, Int32Array, npt.NDArray[np.uint32]]:
        """Every posting as (slot, term id, fcode) arrays, term-major."""
        tids = np.repeat(np.arange(len(self.vocab), dtype=np.int32), self.df)
        return self.inv_docs, tids, self.inv_codes


def assemble(vocab: list[str], slots: Int32Array, tids: Int32Array, codes: npt.NDArray[np.uint32],
             lengths: Int32Array) -> Postings:
    """A `Postings` from its postings in any order (slot, term id, fcode), unused terms dropped."""
    used, inverse = np.unique(tids, return_inverse=True)
    tids = inverse.astype(np.int32)
    vocab = [vocab[i] for i in used.tolist()]
    n = len(lengths)
    by_term = np.lexsort((slots, tids))
    inv_docs = slots[by_term].astype(np.int32)
    inv_codes = codes[by_term].astype(_narrowest(int(codes.max()) if len(codes) else 0))
    inv_ptr = np.zeros(len(vocab) + 1, dtype=np.int64)
    np.cumsum(np.bincount(tids, minlength=len(vocab)), out=inv_ptr[1:])
    by_slot = np.lexsort((tids, slots))
    fwd_codes = ((tids[by_slot].astype(np.int64) << 1) | (codes[by_slot] & 1)).astype(
        _narrowest(2 * len(vocab) + 1))
    fwd_ptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(slots, minlength=n), out=fwd_ptr[1:])
    built = Postings(vocab, inv_ptr, inv_docs, inv_codes, fwd_ptr, fwd_codes, lengths.astype(np.int32))
    _ = built.max_f, built.min_length  # computed once here, kept in the snapshot
    return built


def _narrowest(largest: int) -> type[np.unsignedinteger[Any]]:
    """uint16 when `largest` fits (half the bytes of a snapshot), else uint32."""
    return np.uint16 if largest < 2**16 else np.uint32


def from_docs(docs: Sequence[Doc]) -> Postings:
    """A `Postings` of `docs`, slot i = docs[i] (already in tie-break order)."""
    vocab: dict[str, int] = {}
    slots: list[int] = []
    tids: list[int] = []
    codes: list[int] = []
    for slot, doc in enumerate(docs):
        for term, code in doc.fcodes.items():
            slots.append(slot)
            tids.append(vocab.setdefault(term, len(vocab)))
            codes.append(code)
    return assemble(list(vocab), np.array(slots, dtype=np.int32), np.array(tids, dtype=np.int32),
                    np.array(codes, dtype=np.uint32), np.array([d.length for d in docs], dtype=np.int32))


@dataclass(frozen=True, slots=True)
class Stats:
    """The collection statistics a query is scored with: N, total tokens, df per term."""

    documents: int
    tokens: int
    doc_freq: Callable[[str], int]

    @property
    def avgdl(self) -> float:
        """The mean token count (1.0 for an empty collection)."""
        return self.tokens / self.documents if self.documents else 1.0


def query_plan(terms: frozenset[str], stats: Stats) -> list[tuple[str, float]]:
    """The query's terms present in the collection with their idf, highest idf first (then term).

    This is the order every score is summed in, by `top_k` and `reference_top_k` alike.
    """
    plan = [(t, idf(stats.documents, df)) for t in terms if (df := stats.doc_freq(t)) > 0]
    plan.sort(key=lambda p: (-p[1], p[0]))
    return plan


def score_doc(doc: Doc, plan: list[tuple[str, float]], norm: float) -> float:
    """One concept's exact score, summed in `plan` order (what `topk.top_k` computes for a slot)."""
    total = 0.0
    codes = doc.fcodes
    for term, weight in plan:
        code = codes.get(term)
        if code is not None:  # `contribution`, inlined: this runs for every changed concept
            f = float(code >> 1)
            total += weight * ((f * (K1 + 1.0)) / (f + norm))
    return total


def reference_top_k(docs: Sequence[Doc], plan: list[tuple[str, float]], avgdl: float,
                    k: int) -> list[tuple[int, float]]:
    """`topk.top_k` by brute force over `docs` (index = slot): every document scored, sorted."""
    scored = [(i, score_doc(d, plan, length_norm(d.length, avgdl))) for i, d in enumerate(docs)]
    scored = [(i, s) for i, s in scored if s > 0.0]
    scored.sort(key=lambda p: (-p[1], p[0]))
    return scored[:k]
