"""The semantic index's vectors in the database (migration 014), both backends.

One row per (concept, embedding model): the vector as float32 bytes, the concept version
and the digest of the text it was made from, and a write sequence number readers follow
(`vectors_since`). The store treats a vector as bytes; the index layer decides what text is
embedded and reads the bytes back as numbers (`insika_knowledge.index.semantic`). A mixin
over the backend-neutral statements, as `insika_knowledge.store.snapshots` is.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import Any, ClassVar, Final, Protocol

from insika_knowledge.store.base import ScanRow, StoredVector, VectorWrite
from insika_knowledge.store.statements import Dialect, Params, Statements

#: The longest a vector write waits for the write lock, in milliseconds (derived data,
#: written by the learning worker or `reindex`, which may wait their turn).
WRITE_BUDGET_MS: Final = 5000
_SCAN_COLUMNS: Final = "c.id, c.version, c.name, c.description, c.type, c.provenance, c.confidence, " \
                       "c.updated_at, c.body"


class _Host(Protocol):
    dialect: ClassVar[Dialect]

    def row(self, query: str, params: Params = ()) -> tuple[Any, ...] | None: ...
    def rows(self, query: str, params: Params = ()) -> list[tuple[Any, ...]]: ...
    def write(self, busy_timeout_ms: int | None = None) -> AbstractContextManager[Statements]: ...


class Vectors:
    """The `insika_knowledge.store.base.VectorStore` methods for a store with `row`, `rows` and `write`."""

    def vector_seq(self: _Host, agent: str, model: str) -> int:
        """The highest write sequence number among `agent`'s vectors of `model` (0: none); one index probe."""
        found = self.row("SELECT max(seq) FROM concept_vectors WHERE model = ? AND agent = ?", (model, agent))
        return int(found[0]) if found is not None and found[0] is not None else 0

    def vectors_since(self: _Host, agent: str, model: str, seq: int, limit: int | None = None) -> list[StoredVector]:
        """`agent`'s vectors of `model` written after `seq` (all of them for 0), with the concepts' names.

        In write order; at most `limit` (None: all), so a reader can page through many.
        """
        rows = self.rows(
            "SELECT v.concept_id, c.name, v.seq, v.vector FROM concept_vectors v "
            "JOIN concepts c ON c.id = v.concept_id WHERE v.model = ? AND v.agent = ? AND v.seq > ? "
            "ORDER BY v.seq LIMIT ?", (model, agent, seq, 2**62 if limit is None else limit))
        return [StoredVector(int(i), str(n), int(s), bytes(v)) for i, n, s, v in rows]

    def vectors_of(self: _Host, agent: str, model: str, names: Sequence[str]) -> list[StoredVector]:
        """The vectors of `model` of `agent`'s concepts called `names` (a concept without one is absent)."""
        if not names:
            return []
        among, params = self.dialect.in_list("c.name", list(names))
        rows = self.rows(
            "SELECT v.concept_id, c.name, v.seq, v.vector FROM concepts c "
            "JOIN concept_vectors v ON v.concept_id = c.id AND v.model = ? "
            f"WHERE c.agent = ? AND {among}", (model, agent, *params))
        return [StoredVector(int(i), str(n), int(s), bytes(v)) for i, n, s, v in rows]

    def vector_pending(self: _Host, agent: str, model: str, limit: int) -> list[tuple[ScanRow, str | None]]:
        """Up to `limit` of `agent`'s concepts whose vector of `model` is missing or older than the concept.

        Returns:
            ``(row, digest)`` pairs, oldest concept id first: the concept as the read cache
            loads it, and the digest of the text its stale vector was made of (None: no vector).
        """
        rows = self.rows(
            f"SELECT {_SCAN_COLUMNS}, v.digest FROM concepts c "
            "LEFT JOIN concept_vectors v ON v.concept_id = c.id AND v.model = ? "
            "WHERE c.agent = ? AND (v.version IS NULL OR v.version <> c.version) ORDER BY c.id LIMIT ?",
            (model, agent, limit))
        return [(ScanRow(int(r[0]), int(r[1]), str(r[2]), str(r[3]), str(r[4]), str(r[5]), float(r[6]),
                         str(r[7]), str(r[8])), None if r[9] is None else str(r[9])) for r in rows]

    def vector_counts(self: _Host, agent: str, model: str) -> tuple[int, int]:
        """(concepts of `agent`, of them with a current vector of `model`)."""
        found = self.row(
            "SELECT count(*), count(v.concept_id) FROM concepts c LEFT JOIN concept_vectors v "
            "ON v.concept_id = c.id AND v.model = ? AND v.version = c.version WHERE c.agent = ?", (model, agent))
        return (int(found[0]), int(found[1])) if found is not None else (0, 0)

    def save_vectors(self: _Host, agent: str, model: str, vectors: Sequence[VectorWrite]) -> int:
        """Store `vectors` of `model` for `agent`'s concepts; how many were stored.

        A vector whose concept is gone, or moved on to another version meanwhile, is not
        stored (the next pending read finds the concept again). Each stored vector gets the
        next write sequence number.

        Raises:
            StorageBusy: the write lock stayed busy beyond `WRITE_BUDGET_MS`.
            RunTimeFailure: the disk is full or failing.
            UserError: the database cannot be written.
        """
        if not vectors:
            return 0
        stored = 0
        with self.write(WRITE_BUDGET_MS) as sql:
            sql.lock("vectors")  # sequence numbers in commit order (PostgreSQL; SQLite serialises writers)
            top = sql.row("SELECT coalesce(max(seq), 0) FROM concept_vectors")
            seq = int(top[0]) if top is not None else 0
            for item in vectors:
                current = sql.row("SELECT version FROM concepts WHERE id = ? AND agent = ?", (item.concept_id, agent))
                if current is None or int(current[0]) != item.version:
                    continue
                seq += 1
                sql.execute(
                    "INSERT INTO concept_vectors (concept_id, model, agent, version, digest, seq, vector) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (concept_id, model) DO UPDATE SET "
                    "version = excluded.version, digest = excluded.digest, seq = excluded.seq, "
                    "vector = excluded.vector",
                    (item.concept_id, model, agent, item.version, item.digest, seq, item.vector))
                stored += 1
        return stored

    def touch_vectors(self: _Host, agent: str, model: str, current: Sequence[tuple[int, int]]) -> None:
        """Mark vectors of `model` current at a new concept version whose text did not change.

        Args:
            agent: the agent.
            model: the model id.
            current: (concept id, version) pairs; the vector keeps its bytes and sequence number.
        """
        if not current:
            return
        with self.write(WRITE_BUDGET_MS) as sql:
            for concept_id, version in current:
                sql.execute("UPDATE concept_vectors SET version = ? WHERE concept_id = ? AND model = ? AND agent = ?",
                            (version, concept_id, model, agent))

    def drop_vectors(self: _Host, agent: str, *, keep_model: str | None = None) -> int:
        """Delete `agent`'s vectors of every model but `keep_model` (None: all); how many went."""
        with self.write(WRITE_BUDGET_MS) as sql:
            if keep_model is None:
                return sql.execute("DELETE FROM concept_vectors WHERE agent = ?", (agent,))
            return sql.execute("DELETE FROM concept_vectors WHERE agent = ? AND model <> ?", (agent, keep_model))
