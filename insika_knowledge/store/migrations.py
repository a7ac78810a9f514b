"""Numbered SQL migrations, one numbering for both backends (``sql/README.md``).

A step is ``NNN_name``: ``sql/sqlite/NNN_name.sql`` and ``sql/postgres/NNN_name.sql`` are
the same schema change on each backend; a step one backend does not need has no file on
that side. Each backend applies its own files in number order
(`insika_knowledge.store.sqlite.migrations`, `insika_knowledge.store.postgres.database.migrate`)
and records each step applied by its id in the `MIGRATIONS_TABLE` of the tenant's database.

Header lines at the top of a file, before anything else:

* ``-- requires: fts5``: the step waits (stays pending, unrecorded) on a database that
  lacks the capability;
* ``-- formerly: 003_naming_population``: the id(s) a database recorded for this step
  before it was renumbered; such a record counts as this step applied, so a database
  migrated by an earlier release neither runs it again nor skips it. Records are never
  rewritten, and a step applied now is recorded under its former ids too (`former_ids`):
  a replica still running the earlier release opens the database either way.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Final

MIGRATIONS_TABLE: Final = "_insika_migrations"
#: The backends' folders under ``sql/``.
BACKENDS: Final = ("sqlite", "postgres")
_FILE_RE: Final = re.compile(r"(\d{3})_[a-z0-9_]+\.sql")
_HEADER_RE: Final = re.compile(r"-- (requires|formerly):(.*)")


@dataclass(frozen=True)
class Migration:
    """One migration file: its id (``001_concepts``, the file's stem) and SQL text."""

    name: str
    sql: str

    def _header(self, key: str) -> frozenset[str]:
        """The values of the header line ``-- <key>: a, b`` (empty when there is none)."""
        for line in self.sql.split("\n"):
            match = _HEADER_RE.fullmatch(line.rstrip())
            if match is None:
                break
            if match[1] == key:
                return frozenset(v.strip() for v in match[2].split(",") if v.strip())
        return frozenset()

    @property
    def requires(self) -> frozenset[str]:
        """Capabilities named on the ``-- requires:`` header line."""
        return self._header("requires")

    @property
    def formerly(self) -> frozenset[str]:
        """Ids named on the ``-- formerly:`` header line: what older releases recorded for this step."""
        return self._header("formerly")

    def recorded_in(self, names: Collection[str]) -> bool:
        """True when `names` (a database's records) hold this step, by its id or a former one."""
        return self.name in names or any(old in names for old in self.formerly)


def former_ids(steps: Sequence[Migration], recorded: Collection[str]) -> list[str]:
    """The former ids (``-- formerly:``) to record beside `recorded`, sorted: each one not
    recorded yet whose every step (one id may stand for several) is recorded by some id.
    """
    former = sorted({old for step in steps for old in step.formerly} - set(recorded))
    return [old for old in former if all(s.recorded_in(recorded) for s in steps if old in s.formerly)]


def sql_dir() -> Path:
    """The folder holding the migrations: packaged in the wheel, or ``sql/`` of a checkout."""
    packaged = resources.files("insika_knowledge").joinpath("sql")
    if packaged.is_dir():
        return Path(str(packaged))
    return Path(__file__).resolve().parents[2] / "sql"


def read_steps(folder: Path) -> list[Migration]:
    """The migrations of `folder` (files ``NNN_name.sql``), in number order."""
    files = sorted(p for p in folder.iterdir() if _FILE_RE.fullmatch(p.name))
    return [Migration(p.stem, p.read_text(encoding="utf-8")) for p in files]


def steps() -> list[str]:
    """The one ordered list of step ids: every backend's, by number.

    Raises:
        ValueError: two files share a number under different names (on one backend or
            across the two): the numbering is no longer one.
    """
    by_number: dict[str, str] = {}
    for backend in BACKENDS:
        for migration in read_steps(sql_dir() / backend):
            number = migration.name[:3]
            if by_number.setdefault(number, migration.name) != migration.name:
                raise ValueError(f"step {number} is both {by_number[number]} and {migration.name} "
                                 f"(sql/{backend}): one number, one schema change")
    return [by_number[number] for number in sorted(by_number)]
