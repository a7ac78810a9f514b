"""The naming tables of one tenant on PostgreSQL: aliases and possible duplicates.

The PostgreSQL counterpart of `insika_knowledge.store.naming` (same rows, same
semantics; ``sql/postgres/003_naming_population.sql``): `PgNamingWrites` is mixed into
`insika_knowledge.store.postgres.Transaction`, `PgNamingReads` into `PostgresStore`.
The first attribution of an alias stands and a replayed turn holds its candidate once
(``ON CONFLICT DO NOTHING``), so replicas writing the same row together keep one.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol

from insika_knowledge.store.naming import DUPLICATE_COLUMNS, Alias, PossibleDuplicate, duplicate_row

Params = Sequence[Any] | dict[str, Any]


class Statements(Protocol):
    """What the naming writes run their statements on (`postgres.PgWriter`)."""

    def row(self, query: str, params: Params = ()) -> tuple[Any, ...] | None:
        """The first row `query` returns, or None."""
        ...

    def execute(self, query: str, params: Params = ()) -> int:
        """Run `query`; how many rows it changed."""
        ...


class PgNamingWrites:
    """Alias and possible-duplicate rows, inside the store's write transaction."""

    writer: Statements
    clock: Callable[[], str]

    def alias_of(self, agent: str, alias: str) -> str | None:
        """The concept name `alias` is recorded under, or None."""
        row = self.writer.row("SELECT name FROM aliases WHERE agent = %s AND alias = %s", (agent, alias))
        return None if row is None else str(row[0])

    def add_alias(self, agent: str, alias: str, name: str, session_id: str, turn_id: str) -> None:
        """Keep `alias` as a name of `name` (the first attribution of an alias stands)."""
        self.writer.execute(
            "INSERT INTO aliases (agent, alias, name, session_id, turn_id, created_at) "
            "VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT (agent, alias) DO NOTHING",
            (agent, alias, name, session_id, turn_id, self.clock()))

    def has_possible_duplicate(self, agent: str, name: str, session_id: str, turn_id: str) -> bool:
        """True when this (session, turn) already held a candidate called `name` (a replay)."""
        return self.writer.row(
            "SELECT 1 FROM possible_duplicates WHERE agent = %s AND name = %s AND session_id = %s "
            "AND turn_id = %s", (agent, name, session_id, turn_id)) is not None

    def add_possible_duplicate(self, agent: str, held: PossibleDuplicate) -> None:
        """Hold one candidate as a possible duplicate (``open``, stamped now)."""
        self.writer.execute(
            f"INSERT INTO possible_duplicates (agent, {DUPLICATE_COLUMNS}) "
            "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, 'open', %s) "
            "ON CONFLICT (agent, name, session_id, turn_id) DO NOTHING",
            (agent, held.name, held.duplicate_of, held.session_id, held.turn_id,
             held.description, held.type, held.body, round(min(max(held.similarity, 0.0), 1.0), 4),
             self.clock()))

    def rename_naming(self, agent: str, old: str, new: str) -> None:
        """Point the aliases and possible duplicates of concept `old` at `new`."""
        self.writer.execute("UPDATE aliases SET name = %s WHERE agent = %s AND name = %s",
                            (new, agent, old))
        self.writer.execute(
            "UPDATE possible_duplicates SET duplicate_of = %s WHERE agent = %s AND duplicate_of = %s",
            (new, agent, old))


class PgNamingReads:
    """Reads of the naming tables, for the Studio, the benchmark and tests."""

    def rows(self, query: str, params: Params = ()) -> list[tuple[Any, ...]]:
        """Every row one read statement returns (the store's)."""
        raise NotImplementedError

    def alias_of(self, agent: str, alias: str) -> str | None:
        """The concept name `alias` is recorded under, or None."""
        found = self.rows("SELECT name FROM aliases WHERE agent = %s AND alias = %s", (agent, alias))
        return str(found[0][0]) if found else None

    def aliases(self, agent: str, name: str) -> list[Alias]:
        """The aliases of concept `name`, oldest first."""
        return [Alias(*r) for r in self.rows(
            "SELECT alias, name, session_id, turn_id, created_at FROM aliases "
            "WHERE agent = %s AND name = %s ORDER BY created_at, alias", (agent, name))]

    def possible_duplicates(self, agent: str, name: str | None = None,
                            status: str | None = "open") -> list[PossibleDuplicate]:
        """Candidates held as possible duplicates of concept `name` (None: of any concept).

        Args:
            agent: the agent id.
            name: the concept they closely match; None for every concept of `agent`.
            status: ``open``, ``resolved``, or None for both.

        Returns:
            The held candidates, oldest first.
        """
        where, params = ["agent = %s"], [agent]
        if name is not None:
            where.append("duplicate_of = %s")
            params.append(name)
        if status is not None:
            where.append("status = %s")
            params.append(status)
        return [duplicate_row(r) for r in self.rows(
            f"SELECT {DUPLICATE_COLUMNS} FROM possible_duplicates WHERE {' AND '.join(where)} "
            "ORDER BY seen_at, name, session_id, turn_id", params)]

    def duplicate_names(self, agent: str) -> list[str]:
        """Names of `agent`'s concepts with at least one open possible duplicate, sorted."""
        return [str(r[0]) for r in self.rows(
            "SELECT DISTINCT duplicate_of FROM possible_duplicates WHERE agent = %s "
            "AND status = 'open' ORDER BY 1", (agent,))]
