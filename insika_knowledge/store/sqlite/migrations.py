"""The SQLite migrations (``sql/sqlite/NNN_name.sql``): applied once each, recorded in a table.

The numbering and the records are `insika_knowledge.store.migrations`'.
"""

from __future__ import annotations

from pathlib import Path

import apsw

from insika_knowledge.store.migrations import MIGRATIONS_TABLE, Migration, former_ids, read_steps, sql_dir


def folder() -> Path:
    """The folder of the SQLite migrations (and of the FTS5 index's SQL, `insika_knowledge.store.sqlite.fts`)."""
    return sql_dir() / "sqlite"


def migrations() -> list[Migration]:
    """All SQLite migrations, in number order."""
    return read_steps(folder())


def applied(conn: apsw.Connection) -> list[str]:
    """Names of the migrations already recorded in `conn`, in order applied."""
    exists = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type='table' AND name=?", (MIGRATIONS_TABLE,)
    ).fetchone()
    if not exists:
        return []
    return [r[0] for r in conn.execute(f"SELECT name FROM {MIGRATIONS_TABLE} ORDER BY rowid")]


def pending(conn: apsw.Connection) -> list[Migration]:
    """Migrations not yet applied to `conn` (reads only)."""
    done = set(applied(conn))
    return [m for m in migrations() if not m.recorded_in(done)]


def migrate(conn: apsw.Connection, capabilities: frozenset[str] = frozenset()) -> list[str]:
    """Apply every pending migration, each with its record in one IMMEDIATE transaction.

    Safe when several processes open the same file at once: the pending list is
    re-read inside the write lock. A migration that requires a capability missing
    from `capabilities` is skipped and stays pending. Each step is recorded by its id,
    and the ids it had before beside them (`insika_knowledge.store.migrations.former_ids`).

    Returns:
        Names of the migrations this call applied.
    """
    done: list[str] = []
    if not pending(conn):
        return done
    steps = migrations()
    for migration in steps:
        if not migration.requires <= capabilities:
            continue
        conn.execute("BEGIN IMMEDIATE")
        try:
            conn.execute(
                f"CREATE TABLE IF NOT EXISTS {MIGRATIONS_TABLE} ("
                "name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)"
            )
            recorded = {r[0] for r in conn.execute(f"SELECT name FROM {MIGRATIONS_TABLE}")}
            if migration.recorded_in(recorded):
                conn.execute("COMMIT")
                continue
            conn.execute(migration.sql)
            for name in [migration.name, *former_ids(steps, recorded | {migration.name})]:
                conn.execute(
                    f"INSERT INTO {MIGRATIONS_TABLE} (name, applied_at) "
                    "VALUES (?, strftime('%Y-%m-%dT%H:%M:%SZ','now'))",
                    (name,),
                )
            conn.execute("COMMIT")
        except BaseException:
            rollback(conn)
            raise
        done.append(migration.name)
    return done


def rollback(conn: apsw.Connection) -> None:
    """ROLLBACK if a transaction is still open; never hides the error being handled.

    SQLite ends a transaction by itself after some errors (e.g. a full disk): only an
    open one is rolled back, so the original error is what surfaces.
    """
    if not conn.in_transaction:
        return
    try:
        conn.execute("ROLLBACK")
    except apsw.Error:
        pass  # the error that made us roll back is the one worth reporting
