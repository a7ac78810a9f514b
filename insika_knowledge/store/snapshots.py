"""Derived search-index snapshots in the database (``sql/011_index_snapshots.sql``), both backends.

The store keeps them as opaque blobs keyed by (agent, kind); the index layer writes and
reads its own format. A mixin per backend, so each store class gains the two methods of
`insika_knowledge.index.postings.SnapshotStore` without growing.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import Any, Final, Protocol

import apsw

#: The longest a snapshot write waits for the write lock, in milliseconds: it is derived
#: data written from a search, which must not stall behind a long writer.
WRITE_BUDGET_MS: Final = 2000


class _SQLiteHost(Protocol):
    def _conn(self) -> apsw.Connection: ...
    def _write(self, busy_timeout_ms: int | None = None) -> AbstractContextManager[apsw.Connection]: ...


class SQLiteSnapshots:
    """`load_index_snapshot` and `save_index_snapshot` for `SQLiteStore`."""

    def load_index_snapshot(self: _SQLiteHost, agent: str, kind: str) -> bytes | bytearray | None:
        """The snapshot `kind` of `agent`, or None (never written).

        Read through SQLite's incremental blob I/O into one buffer, so a large snapshot is
        held once in memory, not twice (statement result plus copy).
        """
        conn = self._conn()
        row = conn.execute("SELECT rowid, length(data) FROM index_snapshots WHERE agent=? AND kind=?",
                           (agent, kind)).fetchone()
        if row is None:
            return None
        buffer = bytearray(int(row[1]))
        with conn.blob_open("main", "index_snapshots", "data", int(row[0]), False) as blob:
            blob.read_into(buffer)
        return buffer

    def save_index_snapshot(self: _SQLiteHost, agent: str, kind: str, data: bytes) -> None:
        """Replace the snapshot `kind` of `agent` with `data`.

        Raises:
            StorageBusy: the write lock stayed busy beyond `WRITE_BUDGET_MS`.
            RunTimeFailure: the disk is full or failing.
            UserError: the database cannot be written.
        """
        with self._write(WRITE_BUDGET_MS) as conn:
            conn.execute("INSERT OR REPLACE INTO index_snapshots (agent, kind, data) VALUES (?, ?, ?)",
                         (agent, kind, data))



class _PgHost(Protocol):
    def row(self, query: str, params: Sequence[Any] = ()) -> tuple[Any, ...] | None: ...
    def write(self, busy_timeout_ms: int | None = None) -> AbstractContextManager[Any]: ...


class PgSnapshots:
    """`load_index_snapshot` and `save_index_snapshot` for `PostgresStore`."""

    def load_index_snapshot(self: _PgHost, agent: str, kind: str) -> bytes | bytearray | None:
        """The snapshot `kind` of `agent`, or None (never written)."""
        row = self.row("SELECT data FROM index_snapshots WHERE agent = %s AND kind = %s", (agent, kind))
        return bytes(row[0]) if row is not None else None

    def save_index_snapshot(self: _PgHost, agent: str, kind: str, data: bytes) -> None:
        """Replace the snapshot `kind` of `agent` with `data` (see `SQLiteSnapshots`)."""
        with self.write(WRITE_BUDGET_MS) as writer:
            writer.conn.execute(
                "INSERT INTO index_snapshots (agent, kind, data) VALUES (%s, %s, %s) "
                "ON CONFLICT (agent, kind) DO UPDATE SET data = excluded.data", (agent, kind, data))


