"""One tenant's SQLite database file: per-thread apsw connections, migrations, errors.

Both stores (`SQLiteStore` for concepts, `ProcedureStore` for procedures) are built on
`Database`, so connection settings, migrations, write transactions and the mapping of
storage failures to the library's errors exist once. A subclass prepares each new
connection (`_prepare`) and opens the file (`_open`) its own way: `SQLiteStore`
registers the FTS5 tokenizer and builds the full-text index there.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Final

import apsw

from insika_knowledge.concept import utc_now
from insika_knowledge.errors import DatabaseFileChanged, RunTimeFailure, UserError
from insika_knowledge.store import migrations

BUSY_TIMEOUT_MS: Final = 30_000
#: Connections after the first open the file read-write without creating it: a thread
#: that arrives after the file was deleted gets an error, never a new empty database.
_REOPEN_FLAGS: Final = apsw.SQLITE_OPEN_READWRITE


class Database:
    """The database file at `path`, one connection per thread, migrated on open.

    Args:
        path: the database file (created with its folder if missing); ``:memory:`` is
            not supported (each thread opens its own connection).
        clock: returns the current UTC time as ``YYYY-MM-DDTHH:MM:SSZ``; tests inject one.

    The file's identity (device and inode) is taken when it is opened; `file_problem`
    compares it with the file now at the path, and every write transaction checks it
    (`DatabaseFileChanged` when the file was deleted or replaced since).

    Raises:
        UserError: the path is a folder, the file is not a database, or the path cannot
            be used (its folder is under a regular file, not writable, ...); the message
            names the path.
        RunTimeFailure: the disk is full (or failing) while the schema is written.
    """

    def __init__(self, path: str | Path, *, clock: Callable[[], str] = utc_now):
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
        self._all: list[apsw.Connection] = []
        self._lock = threading.Lock()
        self._identity: tuple[int, int] | None = None  # (st_dev, st_ino) once opened
        with self._storage_errors():
            self._open(self._conn())
        self._identity = _identity(self.path)

    def _open(self, conn: apsw.Connection) -> None:
        """Bring the file up to date on open: apply the migrations that need no capability."""
        migrations.migrate(conn)

    def _prepare(self, conn: apsw.Connection) -> None:
        """Set up a connection just opened (nothing beyond the common settings here)."""

    # ------------------------------------------------------------------ the file

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
        conn = getattr(self._local, "conn", None)
        if conn is None:
            try:
                if self._identity is None:  # the first connection creates the file
                    conn = apsw.Connection(str(self.path))
                else:
                    conn = apsw.Connection(str(self.path), flags=_REOPEN_FLAGS)
                conn.set_busy_timeout(BUSY_TIMEOUT_MS)
                conn.execute("PRAGMA journal_mode=WAL")
                conn.execute("PRAGMA synchronous=NORMAL")
                conn.execute("PRAGMA foreign_keys=ON")
                self._prepare(conn)
            except apsw.NotADBError as exc:
                raise UserError(f"{self.path} is not a SQLite database: {exc}") from None
            except (apsw.CantOpenError, apsw.ReadOnlyError, apsw.PermissionsError,
                    apsw.AuthError, OSError) as exc:
                raise UserError(f"cannot open the database {self.path}: {exc}") from None
            self._local.conn = conn
            with self._lock:
                self._all.append(conn)
        return conn

    def close(self) -> None:
        """Close every connection this store opened (in any thread)."""
        with self._lock:
            for conn in self._all:
                conn.close()
            self._all.clear()
        self._local = threading.local()

    def __enter__(self) -> Database:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def _storage_errors(self) -> Iterator[None]:
        """Turn SQLite's storage failures into the library's errors, naming the file.

        A full disk or an I/O error is a `RunTimeFailure`; a file that cannot be opened
        or written (permissions, read-only) is a `UserError`.
        """
        try:
            yield
        except apsw.FullError:
            raise RunTimeFailure(f"disk full writing {self.path}") from None
        except apsw.IOError as exc:
            raise RunTimeFailure(f"disk I/O error on {self.path}: {exc}") from None
        except (apsw.CantOpenError, apsw.ReadOnlyError, apsw.PermissionsError) as exc:
            raise UserError(f"cannot write the database {self.path}: {exc}") from None

    @contextmanager
    def _write(self) -> Iterator[apsw.Connection]:
        """A ``BEGIN IMMEDIATE`` transaction: commits on exit, rolls back on error.

        Waits up to 30 s for another writer (``BUSY_TIMEOUT_MS``). Once the write lock is
        held, the file at the path must still be the one opened (`check_file`), so a write
        never lands in a deleted or replaced file. A ROLLBACK is only issued while a
        transaction is still open (SQLite ends it by itself after some errors, e.g. a full
        disk), so the original error is the one raised.

        Raises:
            RunTimeFailure: the disk is full or failing ("disk full writing <path>").
            DatabaseFileChanged: the file was deleted or replaced since it was opened.
            UserError: the database file cannot be written (read-only, permissions).
        """
        conn = self._conn()
        with self._storage_errors():
            conn.execute("BEGIN IMMEDIATE")
            try:
                self.check_file()
                yield conn
                conn.execute("COMMIT")
            except BaseException:
                migrations.rollback(conn)
                raise


def _identity(path: Path) -> tuple[int, int]:
    """The (device, inode) of the file at `path`.

    Raises:
        OSError: the file cannot be stat'ed (FileNotFoundError when it is gone).
    """
    found = os.stat(path)
    return found.st_dev, found.st_ino
