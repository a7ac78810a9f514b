"""Derived search-index snapshots in the database (migration 011), both backends.

The store keeps them as opaque blobs keyed by (agent, kind); the index layer writes and
reads its own format (`insika_knowledge.index.snapshot`). A mixin over the backend-neutral
statements (`insika_knowledge.store.statements`), so each store class gains the two methods
of `insika_knowledge.store.base.SnapshotStore` without growing; SQLite only reads the blob
its own way (`insika_knowledge.store.sqlite.snapshots`).
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import Any, Final, Protocol

from insika_knowledge.store.statements import Params, Statements, upsert

#: The longest a snapshot write waits for the write lock, in milliseconds: it is derived
#: data written from a search, which must not stall behind a long writer.
WRITE_BUDGET_MS: Final = 2000
_SAVE: Final = upsert("index_snapshots", "agent, kind, data", "agent, kind")


class _Host(Protocol):
    def row(self, query: str, params: Params = ()) -> tuple[Any, ...] | None: ...
    def write(self, busy_timeout_ms: int | None = None) -> AbstractContextManager[Statements]: ...


class Snapshots:
    """`load_index_snapshot` and `save_index_snapshot` for a store with `row` and `write`."""

    def load_index_snapshot(self: _Host, agent: str, kind: str) -> bytes | bytearray | None:
        """The snapshot `kind` of `agent`, or None (never written)."""
        found = self.row("SELECT data FROM index_snapshots WHERE agent = ? AND kind = ?", (agent, kind))
        return bytes(found[0]) if found is not None else None

    def save_index_snapshot(self: _Host, agent: str, kind: str, data: bytes) -> None:
        """Replace the snapshot `kind` of `agent` with `data`.

        Raises:
            StorageBusy: the write lock stayed busy beyond `WRITE_BUDGET_MS`.
            RunTimeFailure: the disk is full or failing.
            UserError: the database cannot be written.
        """
        with self.write(WRITE_BUDGET_MS) as statements:
            statements.execute(_SAVE, (agent, kind, data))
