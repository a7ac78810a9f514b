"""One tenant's SQLite database file: per-thread apsw connections, migrations, errors.

Both stores (`SQLiteStore` for concepts, `ProcedureStore` for procedures) are built on
`Database`, so connection settings, the FTS5 tokenizer, migrations, write transactions
and the mapping of storage failures to the library's errors exist once.
"""

from __future__ import annotations

import threading
import time
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import Final

import apsw

from insika_knowledge.concept import utc_now
from insika_knowledge.errors import UserError
from insika_knowledge.store import fts, migrations
from insika_knowledge.store.faults import storage_error

BUSY_TIMEOUT_MS: Final = 30_000


class Database:
    """The database file at `path`, one connection per thread, migrated on open.

    Args:
        path: the database file (created with its folder if missing); ``:memory:`` is
            not supported (each thread opens its own connection).
        clock: returns the current UTC time as ``YYYY-MM-DDTHH:MM:SSZ``; tests inject one.
        busy_timeout_ms: the longest the opening waits for the write lock when a
            migration is pending, in milliseconds (None: the store's 30 s); a hot path
            passes its small budget.

    Raises:
        StorageBusy: a migration is pending and the lock stayed busy beyond `busy_timeout_ms`.
        UserError: the path is a folder, the file is not a database, or the path cannot
            be used (its folder is under a regular file, not writable, ...); the message
            names the path.
        StorageError: the disk is full or failing, or the file is damaged, while the
            schema is written (a `RunTimeFailure`).
    """

    def __init__(self, path: str | Path, *, clock: Callable[[], str] = utc_now,
                 busy_timeout_ms: int | None = None):
        self.path = Path(path)
        self.clock = clock
        if self.path.is_dir():
            raise UserError(f"{self.path} is a folder; give a database file path")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise UserError(
                f"cannot use {self.path.parent} as the data directory: {exc.strerror or exc}"
            ) from None
        self._local = threading.local()
        self._all: dict[int, apsw.Connection] = {}  # id -> every connection still open
        self._lock = threading.Lock()
        with self._storage_errors(time.monotonic()):
            conn = self._conn()
            self.has_fts5 = fts.fts5_available(conn)
            budget = nullcontext() if busy_timeout_ms is None else self.busy_budget(busy_timeout_ms)
            with budget:
                migrations.migrate(conn, frozenset({"fts5"}) if self.has_fts5 else frozenset())
            self.fts_ready = self.has_fts5 and "002_fts5" in migrations.applied(conn)

    # ------------------------------------------------------------------ connections

    def _conn(self) -> apsw.Connection:
        """This thread's connection (opened on first use, closed when the thread ends).

        Each thread has its own connection, held by a `_Owned` in a thread-local: when
        the thread ends its thread-locals are freed and the connection is closed, so a
        thread pool that replaces its threads (the Studio's, a backfill's) leaves no file
        open behind it.
        """
        owned: _Owned | None = getattr(self._local, "owned", None)
        if owned is not None:
            return owned.conn
        try:
            conn = apsw.Connection(str(self.path))
        except (apsw.CantOpenError, apsw.ReadOnlyError, apsw.PermissionsError,
                apsw.AuthError, OSError) as exc:
            raise UserError(f"cannot open the database {self.path}: {exc}") from None
        try:
            conn.set_busy_timeout(BUSY_TIMEOUT_MS)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute("PRAGMA foreign_keys=ON")
            fts.register(conn)
        except BaseException as exc:
            conn.close(True)  # a connection that could not be set up is not kept open
            if isinstance(exc, apsw.NotADBError):
                raise UserError(f"{self.path} is not a SQLite database: {exc}") from None
            if isinstance(exc, (apsw.CantOpenError, apsw.ReadOnlyError, apsw.PermissionsError,
                                apsw.AuthError, OSError)):
                raise UserError(f"cannot open the database {self.path}: {exc}") from None
            raise
        with self._lock:
            self._all[id(conn)] = conn
        self._local.owned = _Owned(conn, self._all, self._lock)
        return conn

    def open_connections(self) -> int:
        """How many connections of this store are open now (one per live thread that used it)."""
        with self._lock:
            return len(self._all)

    def close(self) -> None:
        """Close every connection this store opened (in any thread)."""
        with self._lock:
            conns, self._all = list(self._all.values()), {}
        for conn in conns:
            conn.close(True)
        self._local = threading.local()

    def __enter__(self) -> Database:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def _storage_errors(self, started: float | None = None) -> Iterator[None]:
        """Turn SQLite's storage failures into the library's errors, naming the file.

        See `insika_knowledge.store.faults` for the mapping: busy, full, I/O, corrupt and
        read-only each have their `StorageError` subclass (all `RunTimeFailure`).

        Args:
            started: `time.monotonic` when the call began waiting for the lock (for the
                waited time a `StorageBusy` reports); None = unknown.
        """
        try:
            yield
        except apsw.Error as exc:
            waited_ms = 0.0 if started is None else (time.monotonic() - started) * 1000
            mapped = storage_error(exc, self.path, waited_ms=waited_ms)
            if mapped is None:
                raise
            raise mapped from None

    @contextmanager
    def busy_budget(self, budget_ms: int) -> Iterator[None]:
        """Within the block, this thread waits at most `budget_ms` for any lock (reads and writes).

        For hot paths (an engine hook): a lock held elsewhere beyond the budget raises
        `StorageBusy` at once instead of waiting the store's 30 s.

        Args:
            budget_ms: the longest wait for a lock, in milliseconds (>= 0).

        Raises:
            StorageBusy: (inside the block) a lock stayed busy beyond the budget.
        """
        conn = self._conn()
        previous = getattr(self._local, "budget_ms", None)
        self._local.budget_ms = budget_ms
        conn.set_busy_timeout(budget_ms)
        try:
            yield
        finally:
            self._local.budget_ms = previous
            conn.set_busy_timeout(BUSY_TIMEOUT_MS if previous is None else previous)

    @contextmanager
    def _write(self, busy_timeout_ms: int | None = None) -> Iterator[apsw.Connection]:
        """A ``BEGIN IMMEDIATE`` transaction: commits on exit, rolls back on error.

        Waits up to `busy_timeout_ms` for another writer (None: ``BUSY_TIMEOUT_MS``, 30 s).
        A ROLLBACK is only issued while a transaction is still open (SQLite ends it by
        itself after some errors, e.g. a full disk), so the original error is the one raised.

        Args:
            busy_timeout_ms: the longest wait for the write lock, in milliseconds; a hot
                path (an engine hook) passes a small budget.

        Raises:
            StorageBusy: the lock was not free within the wait; nothing was written.
            StorageFull: the disk is full ("disk full writing <path>").
            StorageReadOnly: the database file cannot be written (read-only, permissions).
            StorageError: another storage failure (I/O error, corruption).
        """
        conn = self._conn()
        started = time.monotonic()
        with self._storage_errors(started):
            if busy_timeout_ms is not None:
                conn.set_busy_timeout(busy_timeout_ms)
            try:
                conn.execute("BEGIN IMMEDIATE")
            finally:
                if busy_timeout_ms is not None:
                    budget = getattr(self._local, "budget_ms", None)
                    conn.set_busy_timeout(BUSY_TIMEOUT_MS if budget is None else budget)
            try:
                yield conn
                conn.execute("COMMIT")
            except BaseException:
                _rollback(conn)
                raise


class _Owned:
    """Holds one thread's connection; closes it when collected (the thread ended).

    Args:
        conn: the connection.
        registry: the store's open connections (the entry is removed on close).
        lock: the lock guarding `registry`.
    """

    def __init__(self, conn: apsw.Connection, registry: dict[int, apsw.Connection],
                 lock: threading.Lock):
        self.conn = conn
        weakref.finalize(self, _release, conn, registry, lock)


def _release(conn: apsw.Connection, registry: dict[int, apsw.Connection], lock: threading.Lock) -> None:
    """Forget and close a connection whose thread ended (never raises: runs at collection)."""
    with lock:
        registry.pop(id(conn), None)
    try:
        conn.close(True)
    except Exception:  # noqa: S110 - a finaliser must not raise; the file is closed either way
        pass


def _rollback(conn: apsw.Connection) -> None:
    """ROLLBACK if a transaction is still open; never hides the error being handled."""
    if not conn.in_transaction:
        return
    try:
        conn.execute("ROLLBACK")
    except apsw.Error:
        pass  # the error that made us roll back is the one worth reporting


