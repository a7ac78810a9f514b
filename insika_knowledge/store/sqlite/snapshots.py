"""Index snapshots on SQLite: the blob read with incremental I/O (`insika_knowledge.store.snapshots`)."""

from __future__ import annotations

from collections.abc import Callable

import apsw

from insika_knowledge.store.snapshots import Snapshots


class SQLiteSnapshots(Snapshots):
    """`Snapshots` reading SQLite's blob incrementally, so a large snapshot is held once."""

    _conn: Callable[[], apsw.Connection]  # the store's (`insika_knowledge.store.sqlite.database.Database`)

    def load_index_snapshot(self, agent: str, kind: str) -> bytes | bytearray | None:
        """The snapshot `kind` of `agent`, or None (never written).

        Read through SQLite's incremental blob I/O into one buffer, so a large snapshot is
        held once in memory, not twice (statement result plus copy).
        """
        conn = self._conn()
        with conn:  # one read snapshot: another process may rewrite the row between the reads
            found = conn.execute("SELECT rowid, length(data) FROM index_snapshots WHERE agent=? AND kind=?",
                                 (agent, kind)).fetchone()
            if found is None:
                return None
            buffer = bytearray(int(found[1]))
            with conn.blob_open("main", "index_snapshots", "data", int(found[0]), False) as blob:
                blob.read_into(buffer)
        return buffer
