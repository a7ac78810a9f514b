"""One tenant's SQLite database file: per-thread apsw connections, migrations, errors.

Both stores (`SQLiteStore` for concepts, `ProcedureStore` for procedures) are built on
`Database`, so connection settings, migrations, write transactions and the mapping of
storage failures to the library's errors exist once. A subclass prepares each new
connection (`_prepare`) and opens the file (`_open`) its own way: `SQLiteStore`
registers the FTS5 tokenizer and builds the full-text index there.
"""

from __future__ import annotations

import functools
import logging
import os
import threading
import time
import weakref
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import Any, ClassVar, Final

import apsw

from insika_knowledge.concept import utc_now
from insika_knowledge.errors import DatabaseFileChanged, NotADatabase, StorageBusy, StorageCorrupt, UserError
from insika_knowledge.store.sqlite import migrations
from insika_knowledge.store.sqlite.faults import damaged_error, storage_error
from insika_knowledge.store.statements import SQLITE, Column, Dialect, Params, marks

log = logging.getLogger(__name__)
#: The longest `Database.close` waits for a connection busy in another thread, in seconds.
CLOSE_WAIT_S: Final = 5.0

BUSY_TIMEOUT_MS: Final = 30_000
#: Files up to this size are checked (``PRAGMA quick_check``) when opened; larger ones are
#: checked by their first failing read or write only (a check reads the whole file).
QUICK_CHECK_MAX_BYTES: Final = 64 * 1024 * 1024
#: The longest a scrub (`Database.scrub_wal`) waits for readers and writers, in milliseconds.
SCRUB_BUSY_MS: Final = 200
#: Connections after the first open the file read-write without creating it: a thread
#: that arrives after the file was deleted gets an error, never a new empty database.
_REOPEN_FLAGS: Final = apsw.SQLITE_OPEN_READWRITE


@functools.lru_cache(maxsize=64)
def _insert_sql(table: str, names: tuple[str, ...], conflict: str) -> str:
    return f"INSERT INTO {table} ({', '.join(names)}) VALUES ({marks(len(names))}) {conflict}"


class ApswStatements:
    """`insika_knowledge.store.statements.Statements` on one apsw connection.

    SQLite serialises writers with ``BEGIN IMMEDIATE``, so `lock` has nothing to do.
    """

    __slots__ = ("conn",)

    def __init__(self, conn: apsw.Connection):
        self.conn = conn

    def rows(self, query: str, params: Params = ()) -> list[tuple[Any, ...]]:
        """Every row `query` returns."""
        return self.conn.execute(query, params).fetchall()

    def row(self, query: str, params: Params = ()) -> tuple[Any, ...] | None:
        """The first row `query` returns, or None."""
        found: tuple[Any, ...] | None = self.conn.execute(query, params).fetchone()
        return found

    def execute(self, query: str, params: Params = ()) -> int:
        """Run `query`; how many rows it changed."""
        self.conn.execute(query, params)
        return int(self.conn.changes())

    def insert_rows(self, table: str, columns: Sequence[Column], rows: Sequence[Params],
                    conflict: str = "", same: Sequence[tuple[str, str, Any]] = ()) -> None:
        """Insert `rows` into `table` with one prepared statement run per row (``executemany``)."""
        if rows:
            names = tuple(name for name, _ in columns) + tuple(name for name, _, _ in same)
            fixed = tuple(value for _, _, value in same)
            self.conn.executemany(_insert_sql(table, names, conflict), [(*row, *fixed) for row in rows])

    def lock(self, *key: str) -> None:
        """Nothing: the transaction already holds the database's write lock."""


class Database:
    """The database file at `path`, one connection per thread, migrated on open.

    Args:
        path: the database file (created with its folder if missing); ``:memory:`` is
            not supported (each thread opens its own connection).
        clock: returns the current UTC time as ``YYYY-MM-DDTHH:MM:SSZ``; tests inject one.
        busy_timeout_ms: the longest the opening waits for the write lock when a
            migration is pending, in milliseconds (None: the store's 30 s); a hot path
            passes its small budget.

    The file's identity (device and inode) is taken when it is opened; `file_problem`
    compares it with the file now at the path, and every write transaction checks it
    (`DatabaseFileChanged` when the file was deleted or replaced since).

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
        self._identity: tuple[int, int] | None = None  # (st_dev, st_ino) once opened
        #: Why the file is known to be damaged (None: not known to be): writes are refused.
        self.damaged: str | None = None
        with self._storage_errors(time.monotonic()):
            conn = self._conn()
            self._check_integrity(conn)
            budget = nullcontext() if busy_timeout_ms is None else self.busy_budget(busy_timeout_ms)
            with budget:
                self._open(conn)
        self._identity = _identity(self.path)

    #: The SQL words this backend spells its own way (`insika_knowledge.store.statements`).
    dialect: ClassVar[Dialect] = SQLITE

    def _open(self, conn: apsw.Connection) -> None:
        """Bring the file up to date on open: apply the migrations that need no capability."""
        migrations.migrate(conn)

    def _check_integrity(self, conn: apsw.Connection) -> None:
        """``PRAGMA quick_check`` a file up to `QUICK_CHECK_MAX_BYTES` when it is opened.

        A damaged file stays open for reads (an export saves what is still readable) and
        is marked (`damaged`): every write is refused with a message saying how to
        restore it. One log line says so.
        """
        try:
            size = self.path.stat().st_size
        except OSError:
            return
        if not size or size > QUICK_CHECK_MAX_BYTES:
            return
        for _ in range(3):
            try:
                found = [str(r[0]) for r in conn.execute("PRAGMA quick_check(3)").fetchall()]
                break
            except apsw.SchemaChangeError:  # another process is creating the schema: look again
                continue
        else:
            return  # still being created: nothing to check yet
        if found != ["ok"]:
            log.warning("%s", self.mark_damaged(" ".join("; ".join(found).split())[:200]))

    def mark_damaged(self, detail: str) -> StorageCorrupt:
        """Remember that the file is damaged (writes are refused from now on); the error to raise."""
        self.damaged = self.damaged or detail
        return damaged_error(self.path, self.damaged)

    def scrub_wal(self) -> bool:
        """Checkpoint the write-ahead log into the file and truncate it to nothing.

        With ``secure_delete`` on (every connection), a deleted row's bytes are zeroed in
        the file's pages; the log still holds the pages as they were before, until it is
        checkpointed and cut. The learning queue calls this after turns are learned, so no
        byte of a learned turn's messages stays in the file or its log. Waits at most
        `SCRUB_BUSY_MS` for readers and writers.

        Returns:
            True when the whole log was checkpointed and truncated (False: a reader or
            writer held it; the next scrub finishes the job).
        """
        conn = self._conn()
        conn.set_busy_timeout(SCRUB_BUSY_MS)
        try:
            with self._storage_errors():
                row = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
        except StorageBusy:
            return False
        finally:
            conn.set_busy_timeout(BUSY_TIMEOUT_MS)
        return row is not None and int(row[0]) == 0

    def _prepare(self, conn: apsw.Connection) -> None:
        """Set up a connection just opened (nothing beyond the common settings here)."""

    # ------------------------------------------------------------------ the file

    @property
    def location(self) -> str:
        """Where the data lives, for messages: the database file."""
        return str(self.path)

    def file_problem(self) -> str | None:
        """What happened to the database file since it was opened; None while it is in place.

        Compares the device and inode of the file at `path` with those taken at open (one
        ``stat``, a few microseconds).

        Returns:
            None, or a sentence naming the path: it was deleted, replaced by another file,
            or cannot be read.
        """
        try:
            now = _identity(self.path)
        except FileNotFoundError:
            return f"the database file {self.path} was deleted after it was opened"
        except OSError as exc:
            return f"the database file {self.path} cannot be read: {exc.strerror or exc}"
        if now != self._identity:
            return f"the database file {self.path} was replaced by another file after it was opened"
        return None

    def check_file(self) -> None:
        """Raise when the database file was deleted or replaced since it was opened.

        Raises:
            DatabaseFileChanged: see `file_problem`.
        """
        problem = self.file_problem()
        if problem is not None:
            raise DatabaseFileChanged(problem)

    # ------------------------------------------------------------------ connections

    def _conn(self) -> apsw.Connection:
        """This thread's connection (opened on first use, closed when the thread ends).

        Each thread has its own connection, held by a `_Owned` in a thread-local: when
        the thread ends its thread-locals are freed and the connection is closed, so a
        thread pool that replaces its threads (the Studio's, a backfill's) leaves no file
        open behind it. Connections after the first open the file without creating it.
        """
        owned: _Owned | None = getattr(self._local, "owned", None)
        if owned is not None:
            return owned.conn
        try:
            if self._identity is None:  # the first connection creates the file
                conn = apsw.Connection(str(self.path))
            else:
                conn = apsw.Connection(str(self.path), flags=_REOPEN_FLAGS)
        except apsw.NotADBError as exc:
            raise NotADatabase(f"{self.path} is not a SQLite database: {exc}") from None
        except (apsw.CantOpenError, apsw.ReadOnlyError, apsw.PermissionsError,
                apsw.AuthError, OSError) as exc:
            raise UserError(_cannot_open(self.path, exc)) from None
        try:
            conn.set_busy_timeout(BUSY_TIMEOUT_MS)
            _use_wal(conn)
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute("PRAGMA foreign_keys=ON")
            # A deleted row (a learned turn's messages) is zeroed in the file, not left in a
            # free page; the log is cut back to nothing after each reset (`scrub_wal`).
            conn.execute("PRAGMA secure_delete=ON")
            conn.execute("PRAGMA journal_size_limit=0")
            self._prepare(conn)
        except BaseException as exc:
            conn.close(True)  # a connection that could not be set up is not kept open
            if isinstance(exc, apsw.NotADBError):
                raise NotADatabase(f"{self.path} is not a SQLite database: {exc}") from None
            if isinstance(exc, (apsw.CantOpenError, apsw.ReadOnlyError, apsw.PermissionsError,
                                apsw.AuthError, OSError)):
                raise UserError(_cannot_open(self.path, exc)) from None
            raise
        with self._lock:
            self._all[id(conn)] = conn
        self._local.owned = _Owned(conn, self._all, self._lock)
        return conn

    def rows(self, query: str, params: Params = ()) -> list[tuple[Any, ...]]:
        """Every row one read statement returns (this thread's connection)."""
        return self._conn().execute(query, params).fetchall()

    def row(self, query: str, params: Params = ()) -> tuple[Any, ...] | None:
        """The first row one read statement returns, or None."""
        found: tuple[Any, ...] | None = self._conn().execute(query, params).fetchone()
        return found

    @contextmanager
    def write(self, busy_timeout_ms: int | None = None) -> Iterator[ApswStatements]:
        """One ``BEGIN IMMEDIATE`` write transaction's statements (see `_write`).

        Raises:
            StorageBusy: the lock was not free within the wait; nothing was written.
            StorageError: the file changed, the disk is full, read-only or failing.
        """
        with self._write(busy_timeout_ms) as conn:
            yield ApswStatements(conn)

    def open_connections(self) -> int:
        """How many connections of this store are open now (one per live thread that used it)."""
        with self._lock:
            return len(self._all)

    def close(self) -> None:
        """Close every connection this store opened (in any thread).

        A connection another thread is running a statement on is closed once that
        statement ends (waiting at most `CLOSE_WAIT_S` seconds; after that it is left to
        be closed with its thread), never interrupted: SQLite refuses to close a busy
        connection (``apsw.ThreadingViolationError``).
        """
        with self._lock:
            conns, self._all = list(self._all.values()), {}
        deadline = time.monotonic() + CLOSE_WAIT_S
        for conn in conns:
            while True:
                try:
                    conn.close(True)
                    break
                except apsw.ThreadingViolationError:
                    if time.monotonic() >= deadline:
                        log.info("a connection to %s was still busy in another thread; left open", self.path)
                        break
                    time.sleep(0.005)
        self._local = threading.local()

    def __enter__(self) -> Database:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def _storage_errors(self, started: float | None = None) -> Iterator[None]:
        """Turn SQLite's storage failures into the library's errors, naming the file.

        See `insika_knowledge.store.sqlite.faults` for the mapping: busy, full, I/O, corrupt and
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
            if isinstance(mapped, StorageCorrupt):
                raise self.mark_damaged(str(exc)) from None
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
        Once the write lock is held, the file at the path must still be the one opened
        (`check_file`), so a write never lands in a deleted or replaced file. A ROLLBACK
        is only issued while a transaction is still open (SQLite ends it by itself after
        some errors, e.g. a full disk), so the original error is the one raised.

        Args:
            busy_timeout_ms: the longest wait for the write lock, in milliseconds; a hot
                path (an engine hook) passes a small budget.

        Raises:
            StorageCorrupt: the file is known to be damaged (`damaged`): nothing is written.
            StorageBusy: the lock was not free within the wait; nothing was written.
            DatabaseFileChanged: the file was deleted or replaced since it was opened.
            StorageFull: the disk is full ("disk full writing <path>").
            StorageReadOnly: the database file cannot be written (read-only, permissions).
            StorageError: another storage failure (I/O error, corruption).
        """
        if self.damaged is not None:
            raise damaged_error(self.path, self.damaged)
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
                self.check_file()
                yield conn
                conn.execute("COMMIT")
            except BaseException:
                migrations.rollback(conn)
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


def _use_wal(conn: apsw.Connection) -> None:
    """Put the file in WAL mode (kept in the file, so later opens find it set).

    Switching a new file's journal mode takes an exclusive lock, and SQLite answers a
    connection that meets another one switching at the same moment with SQLITE_BUSY at
    once, without its busy handler (processes opening one new database together). The
    switch is retried with a growing pause for up to ``BUSY_TIMEOUT_MS``.

    Raises:
        apsw.BusyError: the file stayed locked for ``BUSY_TIMEOUT_MS``.
    """
    deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
    pause = 0.001
    while True:
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            return
        except apsw.BusyError:
            if time.monotonic() + pause > deadline:
                raise
            time.sleep(pause)
            pause = min(pause * 2, 0.05)


def _identity(path: Path) -> tuple[int, int]:
    """The (device, inode) of the file at `path`.

    Raises:
        OSError: the file cannot be stat'ed (FileNotFoundError when it is gone).
    """
    found = os.stat(path)
    return found.st_dev, found.st_ino


def _cannot_open(path: Path, exc: BaseException) -> str:
    """Why the database file at `path` could not be opened, in one line: a folder on a
    read-only disk or without write permission is named as such (SQLite writes its
    write-ahead log, ``-wal`` and ``-shm``, beside the file, even to read it).
    """
    folder = path.parent
    try:
        read_only = bool(os.statvfs(folder).f_flag & os.ST_RDONLY) or not os.access(folder, os.W_OK)
    except OSError:
        read_only = False
    if read_only:
        return (f"cannot open the database {path}: its folder {folder} is read-only, and SQLite writes its "
                "write-ahead log (-wal, -shm) beside the file even to read it; copy the folder somewhere "
                f"writable or give write access ({exc})")
    return f"cannot open the database {path}: {exc}"
