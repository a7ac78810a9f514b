"""Numbered SQL migrations (``sql/NNN_name.sql``): the files and their records, for both backends.

Each backend applies its own (`insika_knowledge.store.sqlite.migrations`,
`insika_knowledge.store.postgres.database.migrate`) and records each one applied by name
in the `MIGRATIONS_TABLE` of the tenant's database.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Final

MIGRATIONS_TABLE: Final = "_insika_migrations"
_FILE_RE: Final = re.compile(r"(\d{3})_[a-z0-9_]+\.sql")


@dataclass(frozen=True)
class Migration:
    """One migration file: its name (``001_concepts``), SQL text, and required capabilities.

    A first line ``-- requires: fts5`` makes the migration wait (stay pending, unrecorded)
    on a database whose SQLite build lacks that capability.
    """

    name: str
    sql: str

    @property
    def requires(self) -> frozenset[str]:
        """Capabilities named on the ``-- requires:`` first line."""
        first = self.sql.split("\n", 1)[0]
        if first.startswith("-- requires:"):
            return frozenset(c.strip() for c in first.removeprefix("-- requires:").split(","))
        return frozenset()


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
