"""SQLite's storage failures as the library's errors, each naming the file and a next step.

`storage_error` maps one apsw exception; `mapped_errors` is the class decorator that
applies it to every public method of a store, reads included (generators too), so no
raw ``apsw`` exception, ``database is locked`` or ``disk I/O error`` leaves the store;
text that cannot be UTF-8 (a lone surrogate) is a `UserError`.

============================  ====================  =======================================
SQLite says                   raised as             message
============================  ====================  =======================================
busy / locked                 `StorageBusy`         the database is busy (waited N ms)
full                          `StorageFull`         disk full writing <path>
I/O error, little disk left   `StorageFull`         disk full: cannot use <path>
I/O error                     `StorageError`        disk I/O error on <path>
corrupt / not a database      `StorageCorrupt`      <path> is damaged; writes refused
read-only, permissions        `StorageReadOnly`     cannot write the database <path>
string or blob too big        `StorageError`        a value too big for <path>
============================  ====================  =======================================
"""

from __future__ import annotations

import functools
import inspect
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Final, NoReturn, TypeVar

import apsw

from insika_knowledge.errors import (
    MemoryClosed,
    StorageBusy,
    StorageCorrupt,
    StorageError,
    StorageFull,
    StorageReadOnly,
)
from insika_knowledge.store.rows import not_text

#: Below this many free bytes on the database's disk, an I/O error is reported as a full disk.
LOW_DISK_BYTES: Final = 4 * 1024 * 1024

T = TypeVar("T")


def free_bytes(path: Path) -> int | None:
    """Free bytes on the disk holding `path` (its nearest existing folder), or None if unknown."""
    folder = path if path.is_dir() else path.parent
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    try:
        return shutil.disk_usage(folder).free
    except OSError:
        return None


def storage_error(exc: apsw.Error, path: Path, *, waited_ms: float = 0.0) -> StorageError | None:
    """The library error for SQLite failure `exc` on the database at `path`, or None.

    Args:
        exc: what apsw raised.
        path: the database file.
        waited_ms: how long the call waited for the write lock (for `StorageBusy`).

    Returns:
        A `StorageError` subclass (see the module table), or None when `exc` is not a
        storage failure (an SQL mistake, a constraint: a bug, left to surface as is).
    """
    where = str(path)
    if isinstance(exc, (apsw.BusyError, apsw.LockedError)):
        return StorageBusy(
            f"the database {where} is busy: another writer held its lock for more than "
            f"{waited_ms:.0f} ms; nothing was written, try again", path=where, waited_ms=waited_ms,
        )
    if isinstance(exc, apsw.FullError):
        return StorageFull(f"disk full writing {where}; free some space and try again", path=where)
    if isinstance(exc, apsw.IOError):
        free = free_bytes(path)
        if free is not None and free < LOW_DISK_BYTES:
            return StorageFull(
                f"disk full: cannot use {where} ({free} bytes free on its disk); "
                "free some space and try again", path=where,
            )
        return StorageError(f"disk I/O error on {where}: {exc}; check the disk", path=where)
    if isinstance(exc, apsw.TooBigError):  # beyond SQLITE_LIMIT_LENGTH (PostgreSQL: a RunTimeFailure too)
        return StorageError(f"a value too big for {where}: {exc}", path=where)
    if isinstance(exc, (apsw.CorruptError, apsw.NotADBError)):
        return damaged_error(path, str(exc))
    if isinstance(exc, (apsw.ReadOnlyError, apsw.PermissionsError, apsw.CantOpenError, apsw.AuthError)):
        return StorageReadOnly(
            f"cannot write the database {where}: {exc}; check the file's and its folder's "
            "permissions and that the disk is not read-only", path=where,
        )
    return None


def mapped_errors(cls: type[T]) -> type[T]:
    """Class decorator: every public method of `cls` raises `storage_error`'s errors.

    Inherited methods too (the backend-neutral store code is written once, without apsw):
    each public function of the class or its bases is wrapped once, on `cls`. The class
    must have a ``path`` attribute (the database file). Methods that are generators are
    wrapped so errors raised while iterating are mapped too.
    """
    members: dict[str, Any] = {}
    for klass in reversed(cls.__mro__[:-1]):  # the most derived definition wins
        members.update(vars(klass))
    for name, member in members.items():
        if name.startswith("_") or not inspect.isfunction(member) or member in _WRAPPERS:
            continue
        setattr(cls, name, _wrap(member))
    return cls


#: The wrappers `mapped_errors` made (a method inherited already wrapped is not wrapped again).
_WRAPPERS: set[Callable[..., Any]] = set()


def _wrap(function: Callable[..., Any]) -> Callable[..., Any]:
    wrapper: Callable[..., Any]
    if inspect.isgeneratorfunction(function):
        @functools.wraps(function)
        def generator(self: Any, *args: Any, **kwargs: Any) -> Iterator[Any]:
            try:
                yield from function(self, *args, **kwargs)
            except apsw.Error as exc:
                _reraise(self, exc)
            except UnicodeEncodeError as exc:
                raise not_text(exc) from None

        wrapper = generator
    else:
        @functools.wraps(function)
        def plain(self: Any, *args: Any, **kwargs: Any) -> Any:
            try:
                return function(self, *args, **kwargs)
            except apsw.Error as exc:
                _reraise(self, exc)
            except UnicodeEncodeError as exc:
                raise not_text(exc) from None

        wrapper = plain
    _WRAPPERS.add(wrapper)
    return wrapper


def _reraise(store: Any, exc: apsw.Error) -> NoReturn:
    """Raise `exc`'s `storage_error` (the store's ``path`` named), or `exc` itself.

    A damaged file is remembered by the store (``mark_damaged``): its writes are refused.
    A connection closed under a call in progress (`Memory.close` from another thread,
    between two of the call's statements) is `MemoryClosed`, as the call's next one would be.
    """
    if isinstance(exc, apsw.ConnectionClosedError):
        raise MemoryClosed() from None
    mapped = storage_error(exc, Path(store.path))
    if mapped is None:
        raise exc
    if isinstance(mapped, StorageCorrupt) and hasattr(store, "mark_damaged"):
        raise store.mark_damaged(str(exc)) from None
    raise mapped from None


def damaged_error(path: Path, detail: str) -> StorageCorrupt:
    """The one-line error of a damaged file: what was found, and how to restore it."""
    detail = " ".join(detail.split())  # one line, whatever SQLite's report holds
    return StorageCorrupt(
        f"{path} is damaged ({detail}); writes to it are refused: restore it from a backup, or "
        "save what is still readable with `insika-knowledge export --agent AGENT --out FOLDER` "
        "(with this file's --data-dir and --tenant) and start a new file", path=str(path))
