"""The SQLite side of the extraction outbox: is a tenant file's outbox empty (`insika_knowledge.store.outbox`)."""

from __future__ import annotations

from pathlib import Path

import apsw

from insika_knowledge.store.outbox import due_before


def has_pending(path: Path, *, busy_timeout_ms: int = 2_000, held: bool = False) -> bool:
    """True when the database file at `path` may have turns to learn in its outbox (reads only);
    with `held`, turns held until the model can be used count too (`Outbox.hold`).

    Opens its own short-lived connection, so checking many tenant files at start-up keeps
    no file open. A file without the outbox table, or that is not a database, has none;
    a file that stays busy (another connection recovering it) counts as having some, so
    it is looked at again rather than forgotten.
    """
    try:
        conn = apsw.Connection(str(path))
    except apsw.Error:
        return False
    try:
        conn.set_busy_timeout(busy_timeout_ms)
        return conn.execute("SELECT 1 FROM outbox WHERE not_before < ? LIMIT 1",
                            (due_before(held),)).fetchone() is not None
    except (apsw.BusyError, apsw.LockedError):
        return True
    except apsw.Error:
        return False
    finally:
        conn.close()
