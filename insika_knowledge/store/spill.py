"""The spill journal: turns waiting for a database write lock (or a database) survive a kill.

When an engine hook cannot write a finished turn to its tenant's outbox within its budget
(the write lock is held elsewhere, the store is still opening, the PostgreSQL server is
down), the learning queue keeps the turn in memory and writes it as soon as it can. Before
this journal, such a turn lived only in memory, and a process killed meanwhile lost it.
Now each one is first written to a file of its own in the data directory's ``spill/``
folder: a plain file, so no database lock is needed. Once the turn is in the outbox, its
file is overwritten with zeros and removed. A process that starts takes over the files of
processes that are gone (`SpillJournal.orphans`) and writes their turns to the outbox.

A file is ``<host>~<pid>~<token>~<n>.turn`` (the holder id of the queue that wrote it and
a sequence number), written whole under a temporary name, then renamed: a kill leaves
either the whole file or a ``.tmp`` that is ignored and removed. Files are not synced to
the disk (as SQLite's ``synchronous=NORMAL``): they survive a killed process, not
necessarily a power cut.
"""

from __future__ import annotations

import itertools
import json
import logging
import os
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Final

log = logging.getLogger(__name__)

#: Name of the journal's folder inside the data directory.
FOLDER: Final = "spill"
_SUFFIX: Final = ".turn"
_SEP: Final = "~"


class SpillJournal:
    """The ``spill/`` folder of one data directory, as used by one queue (one holder id).

    Args:
        folder: the journal's folder (created on first write, mode 0700).
        holder: the writing queue's holder id (``host:pid:token``,
            `insika_knowledge.store.leases.holder_id`).
    """

    def __init__(self, folder: Path, holder: str):
        self.folder = folder
        self.holder = holder
        self._prefix = _SEP.join(holder.split(":", 2)[:3]).replace("/", "_")
        self._numbers = itertools.count(1)

    def write(self, record: dict[str, Any]) -> Path:
        """Write one turn's record (JSON) to a file of its own; its path.

        Raises:
            OSError: the folder cannot be made or the file written (disk full, read-only).
        """
        self.folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        path = self.folder / f"{self._prefix}{_SEP}{next(self._numbers)}{_SUFFIX}"
        temporary = path.with_suffix(".tmp")
        data = json.dumps(record, ensure_ascii=False).encode("utf-8", "surrogatepass")
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            view = memoryview(data)
            while view:  # every byte, or an error: a cut file must never be taken for the turn
                written = os.write(fd, view)
                if written <= 0:
                    raise OSError(f"the journal file {temporary} took no more bytes")
                view = view[written:]
        except OSError:
            os.close(fd)
            temporary.unlink(missing_ok=True)
            raise
        os.close(fd)
        os.replace(temporary, path)
        return path

    def remove(self, path: Path) -> None:
        """Overwrite the file at `path` with zeros, then remove it (never raises)."""
        try:
            size = path.stat().st_size
            with open(path, "r+b", buffering=0) as handle:
                handle.write(b"\0" * size)
            path.unlink()
        except FileNotFoundError:
            return
        except OSError as exc:  # a file left behind is taken up again by the next start
            log.warning("could not remove the spilled turn %s: %s", path, exc)

    def orphans(self, alive: Callable[[str], bool]) -> Iterator[tuple[Path, dict[str, Any]]]:
        """Take over the files of queues that are gone; yields (path, record) of each.

        A file is taken by renaming it under this queue's holder id, so two processes
        starting together never both take it. Leftover ``.tmp`` files (a kill mid-write:
        the turn was never acknowledged as kept) of gone queues are removed.

        Args:
            alive: True for a holder id (``host:pid:token``) whose queue still runs.
        """
        try:
            entries = sorted(self.folder.iterdir())
        except OSError:
            return
        for path in entries:
            parts = path.name.split(_SEP)
            if len(parts) != 4 or path.suffix not in (_SUFFIX, ".tmp"):
                continue
            holder = ":".join(parts[:3])
            if holder == self.holder or alive(holder):
                continue
            if path.suffix == ".tmp":
                self.remove(path)
                continue
            taken = self.folder / f"{self._prefix}{_SEP}{next(self._numbers)}{_SUFFIX}"
            try:
                os.rename(path, taken)
            except OSError:  # another process took it first
                continue
            try:
                record = json.loads(taken.read_bytes().decode("utf-8", "surrogatepass"))
            except (OSError, ValueError) as exc:
                log.warning("a spilled turn %s cannot be read (%s); it is removed", path.name, exc)
                self.remove(taken)
                continue
            if isinstance(record, dict):
                yield taken, record
            else:
                self.remove(taken)


def waiting(folder: Path) -> Counter[str]:
    """The turns waiting in the journal at `folder`, counted per tenant (what ``status``
    reports beside the outboxes: a turn a process could not yet write to its outbox, kept
    here until one can). Reads only; a file that cannot be read, or holds no tenant, is
    not counted.
    """
    found: Counter[str] = Counter()
    try:
        entries = list(folder.iterdir())
    except OSError:
        return found
    for path in entries:
        if path.suffix != _SUFFIX or len(path.name.split(_SEP)) != 4:
            continue
        try:
            record = json.loads(path.read_bytes().decode("utf-8", "surrogatepass"))
        except (OSError, ValueError):
            continue
        if isinstance(record, dict) and isinstance(record.get("tenant"), str):
            found[record["tenant"]] += 1
    return found
