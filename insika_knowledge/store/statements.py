"""What the backend-neutral store code runs its SQL on: statements, and the dialect's few words.

The concept store, its naming tables, the outbox and the procedure store are written once
(`insika_knowledge.store.concepts`, `.naming`, `.outbox`, `.procedure_rows`) in the SQL
both backends accept: ``?`` placeholders (the PostgreSQL connection turns them into
``%s``), ``INSERT ... ON CONFLICT``, ``RETURNING``, ``count(*) FILTER (WHERE ...)``. What
differs is given by two small objects:

- `Statements`: one write transaction's statements (`rows`, `row`, `execute`, and
  `insert_rows`: many rows in one go, the backend's fastest way) and its key lock
  (`lock`: PostgreSQL's transaction-scoped advisory lock; nothing on SQLite, whose
  ``BEGIN IMMEDIATE`` already serialises every writer);
- `Dialect`: how "one of a list" is written (`Dialect.in_list`), row locks for a claim,
  and the SQL of a random key.

A store's reads are `Reads` (one statement each, outside any write transaction).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final, Protocol

#: Statement parameters: positional (``?``) values.
Params = Sequence[Any]
#: A column of `Statements.insert_rows`: its name and its PostgreSQL type (``text``, ``integer``...).
Column = tuple[str, str]


class Reads(Protocol):
    """Read statements of a store (each one statement, outside any write transaction)."""

    def rows(self, query: str, params: Params = ()) -> list[tuple[Any, ...]]:
        """Every row `query` returns."""
        ...

    def row(self, query: str, params: Params = ()) -> tuple[Any, ...] | None:
        """The first row `query` returns, or None."""
        ...


class Statements(Reads, Protocol):
    """The statements of one write transaction."""

    def execute(self, query: str, params: Params = ()) -> int:
        """Run `query`; how many rows it changed."""
        ...

    def insert_rows(self, table: str, columns: Sequence[Column], rows: Sequence[Params],
                    conflict: str = "", same: Sequence[tuple[str, str, Any]] = ()) -> None:
        """Insert `rows` (values in `columns` order) into `table`, then `conflict`.

        Args:
            table: the table.
            columns: the columns each row gives a value of (name, PostgreSQL type).
            rows: the rows.
            conflict: an ``ON CONFLICT`` clause, without parameters (it may name the
                table's columns as ``table.column``, and ``excluded``).
            same: columns every row has the same value of: (name, PostgreSQL type, value).
        """
        ...

    def lock(self, *key: str) -> None:
        """Serialise this transaction with every other one holding `key` until it ends."""
        ...


@dataclass(frozen=True, slots=True)
class Dialect:
    """The few words of SQL the two backends spell differently.

    Attributes:
        name: ``sqlite`` or ``postgresql``.
        in_list: ``(column, values) -> (condition, parameters)``: the condition "column
            is one of `values`" and the parameters its placeholders take.
        skip_locked: what a claim's ``SELECT ... LIMIT 1`` ends with so two workers never
            take the same row (PostgreSQL row locks; SQLite serialises writers already).
        for_update: what a read ends with to lock the row it reads until commit.
        random_key: an SQL expression for 64 random hex digits.
    """

    name: str
    in_list: Callable[[str, Sequence[Any]], tuple[str, tuple[Any, ...]]]
    skip_locked: str
    for_update: str
    random_key: str


#: Values SQLite takes as placeholders of one ``IN (...)`` list; a longer list is one JSON parameter.
INLINE_MAX: Final = 500


def _sqlite_in(column: str, values: Sequence[Any]) -> tuple[str, tuple[Any, ...]]:
    if len(values) <= INLINE_MAX:
        return f"{column} IN ({marks(len(values))})", tuple(values)
    return f"{column} IN (SELECT value FROM json_each(?))", (json.dumps(list(values), ensure_ascii=False),)


def _postgres_in(column: str, values: Sequence[Any]) -> tuple[str, tuple[Any, ...]]:
    return f"{column} = ANY(?)", (list(values),)


#: SQLite: a list is its placeholders (or one JSON parameter); ``BEGIN IMMEDIATE`` serialises writers.
SQLITE: Final = Dialect("sqlite", _sqlite_in, "", "", "lower(hex(randomblob(32)))")
#: PostgreSQL: a list is one array parameter; row locks where a claim or a check needs them.
POSTGRESQL: Final = Dialect("postgresql", _postgres_in, " FOR UPDATE SKIP LOCKED", " FOR UPDATE",
                            "md5(random()::text || clock_timestamp()::text) || md5(random()::text)")


def marks(count: int) -> str:
    """``?, ?, ...``: `count` placeholders."""
    return ", ".join("?" * count)


def upsert(table: str, columns: str, key: str, *, update: str | None = None) -> str:
    """``INSERT INTO table (columns) VALUES (?, ...) ON CONFLICT (key) DO UPDATE SET ...``.

    Args:
        table: the table.
        columns: its columns, comma separated (the parameters' order).
        key: the conflict target, comma separated.
        update: the ``SET`` list; None = every column not in `key` takes the new value.
    """
    names = [c.strip() for c in columns.split(",")]
    keys = {k.strip() for k in key.split(",")}
    if update is None:
        update = ", ".join(f"{c} = excluded.{c}" for c in names if c not in keys)
    return (f"INSERT INTO {table} ({', '.join(names)}) VALUES ({marks(len(names))}) "
            f"ON CONFLICT ({key}) DO UPDATE SET {update}")


def insert_new(table: str, columns: str, key: str) -> str:
    """``INSERT INTO table (columns) VALUES (?, ...) ON CONFLICT (key) DO NOTHING``."""
    names = [c.strip() for c in columns.split(",")]
    return (f"INSERT INTO {table} ({', '.join(names)}) VALUES ({marks(len(names))}) "
            f"ON CONFLICT ({key}) DO NOTHING")


def scalar(reads: Reads, query: str, params: Params = ()) -> Any:
    """The first column of the one row an aggregate query (``count``, ``max``...) returns."""
    found = reads.row(query, params)
    assert found is not None, query  # count(*), max(...) and coalesce(...) always return a row
    return found[0]
