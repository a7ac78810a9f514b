"""Index::Semantic: an agent's concept vectors in memory, ranked by cosine similarity.

What is embedded of a concept is `embed_text`: its name (hyphens as spaces), description
and the claim of its body (the ``## Contradiction`` section left out), which a provider may
cut (`insika_knowledge.index.embedders.local.PASSAGE_CHARS`). Vectors are made off the
customer's turn: by the learning worker after each turn (`SemanticIndex.embed_pending`), by
a person's `put` in its own request, and by ``reindex`` for a whole store; a search only
embeds the customer's message (`SemanticIndex.query_vector`, remembered for repeats).

The vectors are stored with the concept (`insika_knowledge.store.base.VectorStore`), one per
concept and model, with the concept version and a digest of the text they were made from.
A vector is stale when its concept has moved to a version with another text, or when it was
made by another model: the first is found by `embed_pending` and made again (a new version
with the same text, a confirmation, only moves the vector's version), the second is never
read (every read names the model).

Per agent, the index holds the vectors of one model as one float32 matrix (rows of deleted
or changed concepts masked, new ones appended, compacted when a quarter is dead), kept in
step with two cheap reads per search: the agent's generation (a concept changed: its
vector is re-read by name) and the highest vector sequence number (new vectors: read those).
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from typing import Final, Protocol

import numpy as np
import numpy.typing as npt

from insika_knowledge.concept import claim_text
from insika_knowledge.index.embedders.protocol import Embedder, Vectors
from insika_knowledge.store.base import ScanRow, ScanSource, StoredVector, VectorStore, VectorWrite

#: Concepts embedded per batch by `SemanticIndex.embed_pending` and ``reindex``.
BATCH: Final = 32
#: Query vectors remembered per index (the same message asked again costs no embedding).
QUERY_CACHE: Final = 2048
#: Passage vectors remembered per index (`SemanticIndex.passage_vector`), by text digest.
PASSAGE_CACHE: Final = 256
#: A message is embedded by its first this many characters.
QUERY_CHARS: Final = 2000
#: Vectors read per statement when an agent's index is loaded.
LOAD_PAGE: Final = 2000


class SemanticStore(ScanSource, VectorStore, Protocol):
    """What the semantic index reads and writes: the change feed and the vectors."""


def embed_text(name: str, description: str, body: str) -> str:
    """The text of a concept that is embedded: name (hyphens as spaces), description, claim."""
    return f"{name.replace('-', ' ')}. {description}\n{claim_text(body)}".strip()


def text_digest(text: str) -> str:
    """SHA-256 of `text` (UTF-8), hex: what a stored vector says it was made of."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def as_bytes(vector: npt.NDArray[np.float32]) -> bytes:
    """`vector` as little-endian float32 bytes (what the store keeps)."""
    return np.asarray(vector, dtype="<f4").tobytes()


def from_bytes(data: bytes, dim: int) -> npt.NDArray[np.float32] | None:
    """The float32 vector of `data`, or None when it is not `dim` numbers long."""
    if len(data) != 4 * dim:
        return None
    return np.frombuffer(data, dtype="<f4").astype(np.float32)


@dataclass
class _State:
    """One agent's vectors of one model at one (generation, sequence number)."""

    generation: int
    cursor: int  # the change feed position applied
    seq: int  # the highest vector sequence number read
    dim: int
    matrix: npt.NDArray[np.float32] = field(default_factory=lambda: np.zeros((0, 0), dtype=np.float32))
    names: list[str] = field(default_factory=list)
    ids: list[int] = field(default_factory=list)
    alive: npt.NDArray[np.bool_] = field(default_factory=lambda: np.zeros(0, dtype=bool))
    size: int = 0
    row_of_id: dict[int, int] = field(default_factory=dict)
    dead: int = 0
    by_name: dict[str, list[int]] | None = None  # name -> rows, built by `rows_of`; None after a change

    def __post_init__(self) -> None:
        if self.matrix.shape[1:] != (self.dim,):
            self.matrix = np.zeros((0, self.dim), dtype=np.float32)

    def copy(self) -> _State:
        """A copy a refresh may change while searches read this one (rows appended copy the matrix)."""
        return _State(self.generation, self.cursor, self.seq, self.dim, self.matrix, list(self.names),
                      list(self.ids), self.alive.copy(), self.size, dict(self.row_of_id), self.dead)

    def rows_of(self, name: str) -> list[int]:
        """The rows `name` has had (live or dead), from an index built at the first call after a change."""
        if self.by_name is None:
            by_name: dict[str, list[int]] = {}
            for row, held in enumerate(self.names[:self.size]):
                by_name.setdefault(held, []).append(row)
            self.by_name = by_name
        return self.by_name.get(name, [])

    def drop_name(self, name: str) -> None:
        for cid in [i for i, r in self.row_of_id.items() if self.names[r] == name]:
            self.drop_id(cid)

    def drop_id(self, concept_id: int) -> None:
        row = self.row_of_id.pop(concept_id, None)
        if row is not None and self.alive[row]:
            self.alive[row] = False
            self.dead += 1

    def add(self, found: Sequence[StoredVector]) -> None:
        vectors = [(v, vec) for v in found if (vec := from_bytes(v.vector, self.dim)) is not None]
        if not vectors:
            return
        for v, _ in vectors:
            self.drop_id(v.concept_id)
        need = self.size + len(vectors)
        if need > len(self.matrix):
            self.reserve(max(need, 2 * len(self.matrix), 64))
        # Rows are only ever appended past `size` (a changed concept's old row is masked, not
        # overwritten), so a state still read by a search, whose size is smaller, shares the
        # matrix safely.
        self.by_name = None
        for v, vec in vectors:
            row = self.size
            self.matrix[row] = vec
            self.alive[row] = True
            if row < len(self.names):
                self.names[row], self.ids[row] = v.name, v.concept_id
            else:
                self.names.append(v.name)
                self.ids.append(v.concept_id)
            self.row_of_id[v.concept_id] = row
            self.size += 1
            self.seq = max(self.seq, v.seq)

    def reserve(self, rows: int) -> None:
        """Room for `rows` vectors (a new matrix: the live rows copied once)."""
        if rows <= len(self.matrix):
            return
        grown = np.zeros((rows, self.dim), dtype=np.float32)
        grown[:self.size] = self.matrix[:self.size]
        self.matrix = grown
        alive = np.zeros(rows, dtype=bool)
        alive[:self.size] = self.alive[:self.size]
        self.alive = alive

    def compacted(self) -> _State:
        """The live rows only (when a quarter or more are dead)."""
        if self.dead * 4 < max(self.size, 64):
            return self
        keep = np.flatnonzero(self.alive[:self.size])
        fresh = _State(self.generation, self.cursor, self.seq, self.dim)
        fresh.matrix = np.ascontiguousarray(self.matrix[keep])
        fresh.names = [self.names[r] for r in keep.tolist()]
        fresh.ids = [self.ids[r] for r in keep.tolist()]
        fresh.alive = np.ones(len(keep), dtype=bool)
        fresh.size = len(keep)
        fresh.row_of_id = {cid: row for row, cid in enumerate(fresh.ids)}
        return fresh


@dataclass(frozen=True)
class Similarities:
    """One query's cosine similarity to each concept of an agent that has a vector.

    Attributes:
        names: the concepts, in the index's row order (rows of concepts since changed or
            deleted included: their score is minus infinity).
        scores: float32, the similarity of each row (same order).
        live: how many rows are live (score above minus infinity).
    """

    names: Sequence[str]
    scores: npt.NDArray[np.float32]
    live: int

    def top(self, k: int) -> list[tuple[str, float]]:
        """The `k` most similar: (name, cosine), best first, ties by name."""
        size = len(self.scores)
        k = min(k, self.live)
        if k <= 0:
            return []
        best = np.argpartition(-self.scores, k - 1)[:k] if k < size else np.arange(size)
        ranked = sorted(((self.names[r], float(self.scores[r])) for r in best.tolist()
                         if self.scores[r] > -np.inf), key=lambda p: (-p[1], p[0]))
        return ranked[:k]

    def best(self) -> float:
        """The highest similarity (0.0 for none)."""
        return float(self.scores.max()) if self.live else 0.0

    def median(self) -> float:
        """The median similarity of the live rows (0.0 for none): how close an ordinary concept is."""
        if not self.live:
            return 0.0
        scores = self.scores if self.live == len(self.scores) else self.scores[self.scores > -np.inf]
        return float(np.median(scores))


class SemanticIndex:
    """Cosine-similarity search over one store's concept vectors of one `Embedder`.

    Thread-safe: refreshes are serialised; a search reads one state.

    Args:
        store: the tenant's store (change feed and vectors).
        embedder: the provider; its `Embedder.model_id` selects the vectors read and written.
    """

    name = "semantic"

    def __init__(self, store: SemanticStore, embedder: Embedder):
        self.store = store
        self.embedder = embedder
        self.model = embedder.model_id
        self._states: dict[str, _State] = {}
        self._lock = threading.Lock()
        self._queries: OrderedDict[str, Vectors] = OrderedDict()
        self._passages: OrderedDict[str, Vectors] = OrderedDict()
        self._query_lock = threading.Lock()

    # ------------------------------------------------------------------ state

    def _state(self, agent: str) -> _State:
        generation = self.store.generation(agent)
        seq = self.store.vector_seq(agent, self.model)
        state = self._states.get(agent)
        if state is not None and state.generation == generation and state.seq >= seq:
            return state
        with self._lock:
            state = self._states.get(agent)
            if state is None or state.dim != self._dim():
                state = self._load(agent, generation)
            elif state.generation != generation or state.seq < seq:
                state = self._refresh(agent, state, generation)
            self._states[agent] = state
            return state

    def _dim(self) -> int:
        return int(self.embedder.dim)

    def _load(self, agent: str, generation: int) -> _State:
        cursor = self.store.version_cursor(agent)
        state = _State(generation, cursor, 0, self._dim())
        if not state.dim:
            return state
        state.reserve(self.store.vector_counts(agent, self.model)[0])  # at most one vector per concept
        while True:  # in pages: the rows' bytes are never all held at once beside the matrix
            page = self.store.vectors_since(agent, self.model, state.seq, LOAD_PAGE)
            state.add(page)
            if len(page) < LOAD_PAGE:
                return state

    def _refresh(self, agent: str, old: _State, generation: int) -> _State:
        fresh = old.copy()
        if old.generation != generation:
            cursor, names = self.store.changes_since(agent, old.cursor)
            fresh.generation, fresh.cursor = generation, cursor
            for name in names:
                fresh.drop_name(name)
            if names:
                fresh.add(self.store.vectors_of(agent, self.model, sorted(names)))
        fresh.add(self.store.vectors_since(agent, self.model, old.seq))
        return fresh.compacted()

    # ------------------------------------------------------------------ search

    def query_vector(self, query: str) -> Vectors:
        """The vector of `query` (its first `QUERY_CHARS` characters), remembered for repeats.

        Raises:
            RunTimeFailure: the provider failed.
        """
        # A lone surrogate (a broken emoji from a client) cannot be encoded for the model.
        text = query[:QUERY_CHARS].encode("utf-8", "replace").decode("utf-8")
        return self._remembered(self._queries, text, QUERY_CACHE, lambda: self.embedder.queries([text])[0])

    def _remembered(self, cache: OrderedDict[str, Vectors], key: str, limit: int,
                    make: Callable[[], Vectors]) -> Vectors:
        """`cache[key]`, else `make()` kept there (least recently used dropped past `limit`)."""
        with self._query_lock:
            found = cache.get(key)
            if found is not None:
                cache.move_to_end(key)
                return found
        vector = make()
        with self._query_lock:
            cache[key] = vector
            while len(cache) > limit:
                cache.popitem(last=False)
        return vector

    def similarities(self, agent: str, vector: Vectors, hidden: Collection[str] = ()) -> Similarities:
        """The cosine similarity of `vector` (a `query_vector`) to each of `agent`'s concepts with a
        vector, but those named in `hidden` (concepts held in quarantine: no hit, and not the
        closest concept nor a part of the median either, which set the no-answer floor's reading).
        """
        state = self._state(agent)
        if state.size == 0 or vector.shape[-1] != state.dim:
            return Similarities([], np.zeros(0, dtype=np.float32), 0)
        scores = state.matrix[:state.size] @ vector.astype(np.float32)
        alive = state.alive[:state.size]
        if hidden:
            rows = [r for name in hidden for r in state.rows_of(name)]
            if rows:
                alive = alive.copy()
                alive[rows] = False
        live = int(np.count_nonzero(alive)) if hidden else state.size - state.dead
        if live < state.size:
            scores[~alive] = -np.inf
        return Similarities(state.names, scores, live)

    def search_vector(self, agent: str, vector: Vectors, top_k: int) -> list[tuple[str, float]]:
        """`agent`'s `top_k` concepts most similar to `vector`: (name, cosine), best first, ties by name."""
        return self.similarities(agent, vector).top(top_k)

    def search(self, agent: str, query: str, top_k: int) -> list[tuple[str, float]]:
        """`search_vector` for the vector of `query` (see `query_vector`).

        Raises:
            RunTimeFailure: the provider failed.
        """
        return self.search_vector(agent, self.query_vector(query), top_k)

    def coverage(self, agent: str) -> tuple[int, int]:
        """(concepts of `agent`, of them with a current vector of this model)."""
        return self.store.vector_counts(agent, self.model)

    # ------------------------------------------------------------------ writing vectors

    def embed_rows(self, agent: str, pending: Sequence[tuple[ScanRow, str | None]]) -> int:
        """Make and store the vectors of `pending` concepts (row, digest of its stale vector).

        A concept whose text is what its stale vector was made of only has the vector's
        version moved; the others are embedded in one provider call. Returns how many
        vectors were made (not counting the moved ones).

        Raises:
            RunTimeFailure: the provider failed (nothing is stored).
            StorageBusy: the write lock stayed busy.
        """
        touched: list[tuple[int, int]] = []
        todo: list[tuple[ScanRow, str, str]] = []
        for row, stale in pending:
            text = embed_text(row.name, row.description, row.body)
            digest = text_digest(text)
            if stale == digest:
                touched.append((row.id, row.version))
            else:
                todo.append((row, text, digest))
        if touched:
            self.store.touch_vectors(agent, self.model, touched)
        if not todo:
            return 0
        with self._query_lock:
            known = {digest: self._passages.get(digest) for _, _, digest in todo}
        missing = [(row, text, digest) for row, text, digest in todo if known[digest] is None]
        if missing:
            made = self.embedder.passages([t for _, t, _ in missing])
            for (_, _, digest), vec in zip(missing, made, strict=True):
                known[digest] = vec
        writes = [VectorWrite(row.id, row.version, digest, as_bytes(known[digest]))  # type: ignore[arg-type]
                  for row, _, digest in todo]
        return self.store.save_vectors(agent, self.model, writes)

    def passage_vector(self, text: str) -> Vectors:
        """The passage vector of `text` (a concept's `embed_text`), remembered by its digest:
        the naming step embeds a candidate, and the concept it becomes is then stored with
        that vector instead of being embedded again (`embed_rows`).

        Raises:
            RunTimeFailure: the provider failed.
        """
        return self._remembered(self._passages, text_digest(text), PASSAGE_CACHE,
                                lambda: self.embedder.passages([text])[0])

    def embed_pending(self, agent: str, limit: int = BATCH) -> int:
        """Make the vectors of up to `limit` of `agent`'s concepts that lack a current one.

        What the learning worker calls after each turn (never the customer's turn).
        Returns how many vectors were made.

        Raises:
            RunTimeFailure: the provider failed.
            StorageBusy: the write lock stayed busy.
        """
        pending = self.store.vector_pending(agent, self.model, limit)
        return self.embed_rows(agent, pending) if pending else 0

    def reindex(self, agent: str, *, progress: Callable[[int, int], None] | None = None,
                batch: int = BATCH, fresh: bool = False) -> int:
        """Make every missing or stale vector of `agent` under this model, in batches.

        Args:
            agent: the agent.
            progress: called with (done, total) after each batch.
            batch: concepts per provider call.
            fresh: drop every vector of `agent` first (all are made again), else drop only
                the vectors of other models.

        Returns:
            How many vectors were made.

        Raises:
            RunTimeFailure: the provider failed (the vectors made so far are kept; when it
                fails on its first call, nothing was dropped: the provider is asked once
                before any vector is, so an unreachable endpoint leaves the store as it was).
            StorageBusy: the write lock stayed busy.
        """
        self.embedder.passages(["reindex: is the provider there?"])  # raises before anything is dropped
        self.store.drop_vectors(agent, keep_model=None if fresh else self.model)
        total, current = self.store.vector_counts(agent, self.model)
        done = current
        made = 0
        if progress is not None:
            progress(done, total)
        while True:
            pending = self.store.vector_pending(agent, self.model, batch)
            if not pending:
                break
            made += self.embed_rows(agent, pending)
            done = min(total, done + len(pending))
            if progress is not None:
                progress(done, total)
        return made
