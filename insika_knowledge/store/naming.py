"""The naming tables of one tenant: aliases and possible duplicates (migration 006).

One idea, one name: a candidate proposed under a new name that restates a concept on
record is recorded under that concept, and the proposed name is kept as an **alias**
(the next sighting under it goes straight to the concept). A candidate that only
closely matches a concept is held as a **possible duplicate** for a human (the Studio),
never merged and never written as a second concept. A sighting that contradicts a
``provenance: policy`` concept is held the same way, under the concept's own name
(``name == duplicate_of``: a **challenge**), since the engine never changes a policy's
body. Either way the claim is kept for review, and the concept it is held against counts
as in conflict until a person decides (`CHALLENGED`): edits it (taking or rewriting the
claim) or dismisses the held claims. The decision is
`insika_knowledge.consolidate.naming`'s; this module only reads and writes the rows.

`NamingWrites` is mixed into either backend's write transaction, `NamingReads` into
either store (the SQL is written once: `insika_knowledge.store.statements`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

from insika_knowledge.concept import WHY_MAX, one_line
from insika_knowledge.store.statements import Params, Reads, Statements, insert_new


@dataclass(frozen=True, slots=True)
class Alias:
    """A name a model proposed for a concept on record, or the name a person renamed it
    from (an ``aliases`` row).

    Attributes:
        alias: the proposed slug (or the old name).
        name: the concept its sightings are recorded under.
        session_id: the sighting that made the alias ('' for a rename).
        turn_id: its turn (`RENAMED` for a rename).
        created_at: when (UTC ``YYYY-MM-DDTHH:MM:SSZ``).
    """

    alias: str
    name: str
    session_id: str
    turn_id: str
    created_at: str


@dataclass(frozen=True, slots=True)
class PossibleDuplicate:
    """A candidate held for a human because it closely matches a concept on record.

    Attributes:
        name: the slug it was proposed under.
        duplicate_of: the concept it closely matches.
        session_id: the sighting that proposed it.
        turn_id: its turn.
        description: the candidate's description (screened, redacted).
        type: its concept type.
        body: its body.
        similarity: how close it is to `duplicate_of`, 0..1: the content-term overlap
            (Jaccard) when the lexical close match held it, the cosine of the two
            vectors when the semantic index did (`insika_knowledge.learn.meaning`).
        status: ``open`` (waits for a human) or ``resolved``.
        seen_at: when (UTC ``YYYY-MM-DDTHH:MM:SSZ``).
        why: why it is held, in words for the person who reviews it (what the turn's
            `TurnReport.why` and its event said; at most `WHY_MAX` characters, one line;
            '' for a claim held before the store kept it).
    """

    name: str
    duplicate_of: str
    session_id: str
    turn_id: str
    description: str
    type: str
    body: str
    similarity: float
    status: str = "open"
    seen_at: str = ""
    why: str = ""


#: The SQL condition (one parameter: the agent) of a concept with an open held claim: a
#: challenge under its own name or a possible duplicate under another (see the module doc).
CHALLENGED = ("name IN (SELECT p.duplicate_of FROM possible_duplicates p WHERE p.agent = ? "
              "AND p.status = 'open')")

#: The ``turn_id`` of an alias a person's rename made: the concept's name before it.
RENAMED: Final = "rename"

#: The ``possible_duplicates`` columns `duplicate_row` reads, in order (after ``agent``).
DUPLICATE_COLUMNS = (
    "name, duplicate_of, session_id, turn_id, description, type, body, similarity, status, seen_at, why"
)


class NamingWrites:
    """Alias and possible-duplicate rows, inside the store's write transaction (either backend).

    The first attribution of an alias stands and a replayed turn holds its candidate once
    (``ON CONFLICT DO NOTHING``), so writers storing the same row together keep one.
    """

    sql: Statements
    clock: Callable[[], str]

    def alias_of(self, agent: str, alias: str) -> str | None:
        """The concept name `alias` is recorded under, or None."""
        return alias_row(self.sql, agent, alias)

    def add_alias(self, agent: str, alias: str, name: str, session_id: str, turn_id: str) -> None:
        """Keep `alias` as a name of `name` (the first attribution of an alias stands)."""
        self.sql.execute(
            insert_new("aliases", "agent, alias, name, session_id, turn_id, created_at", "agent, alias"),
            (agent, alias, name, session_id, turn_id, self.clock()),
        )

    def has_possible_duplicate(self, agent: str, name: str, session_id: str, turn_id: str) -> bool:
        """True when this (session, turn) already held a candidate called `name` (a replay)."""
        return self.sql.row(
            "SELECT 1 FROM possible_duplicates WHERE agent = ? AND name = ? AND session_id = ? "
            "AND turn_id = ?", (agent, name, session_id, turn_id),
        ) is not None

    def held_texts(self, agent: str, duplicate_of: str) -> list[tuple[str, str]]:
        """``(description, body)`` of each claim held open against concept `duplicate_of` under
        its own name (a challenge, or a claim its record had no room for).
        """
        return [(str(d), str(b)) for d, b in self.sql.rows(
            "SELECT description, body FROM possible_duplicates WHERE agent = ? AND duplicate_of = ? "
            "AND name = ? AND status = 'open'", (agent, duplicate_of, duplicate_of))]

    def settled_texts(self, agent: str, duplicate_of: str) -> list[tuple[str, str]]:
        """``(description, body)`` of each claim held against concept `duplicate_of` that a
        person settled (``resolved``: dismissed, or learned as a concept of its own).
        """
        return [(str(d), str(b)) for d, b in self.sql.rows(
            "SELECT description, body FROM possible_duplicates WHERE agent = ? AND duplicate_of = ? "
            "AND status = 'resolved'", (agent, duplicate_of))]

    def add_possible_duplicate(self, agent: str, held: PossibleDuplicate) -> None:
        """Hold one candidate as a possible duplicate (its `status`: ``open``, or ``resolved``
        for a claim a person settled before: recorded, not held), stamped now.
        """
        self.sql.execute(
            f"INSERT INTO possible_duplicates (agent, {DUPLICATE_COLUMNS}) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
            "ON CONFLICT (agent, name, session_id, turn_id) DO NOTHING",
            (agent, held.name, held.duplicate_of, held.session_id, held.turn_id,
             held.description, held.type, held.body, round(min(max(held.similarity, 0.0), 1.0), 4),
             "resolved" if held.status == "resolved" else "open", self.clock(), one_line(held.why, WHY_MAX)),
        )

    def rename_naming(self, agent: str, old: str, new: str) -> None:
        """Point the aliases and possible duplicates of concept `old` at `new`; a claim held
        against `old` itself (a challenge of a policy: its name is the concept's) moves with it.
        """
        self.sql.execute("UPDATE aliases SET name = ? WHERE agent = ? AND name = ?", (new, agent, old))
        self.sql.execute(  # unless the turn proposed a claim under `new` too: that row keeps `old`
            "UPDATE possible_duplicates SET name = ?, duplicate_of = ? WHERE agent = ? AND name = ? "
            "AND duplicate_of = ? AND NOT EXISTS (SELECT 1 FROM possible_duplicates q WHERE "
            "q.agent = possible_duplicates.agent AND q.name = ? AND q.session_id = possible_duplicates.session_id "
            "AND q.turn_id = possible_duplicates.turn_id)", (new, new, agent, old, old, new))
        self.sql.execute(
            "UPDATE possible_duplicates SET duplicate_of = ? WHERE agent = ? AND duplicate_of = ?",
            (new, agent, old),
        )


    def close_held_under(self, agent: str, name: str) -> int:
        """Mark every open claim proposed under `name` as a possible duplicate of another
        concept resolved (a person learned it as a concept of its own). Returns how many.
        """
        return self.sql.execute(
            "UPDATE possible_duplicates SET status = 'resolved' WHERE agent = ? AND name = ? "
            "AND duplicate_of <> ? AND status = 'open'", (agent, name, name))

    def close_held(self, agent: str, name: str) -> int:
        """Mark every open claim held against concept `name` resolved (its challenges and its
        possible duplicates): a person decided none of them changes it. Returns how many.
        """
        return self.sql.execute(
            "UPDATE possible_duplicates SET status = 'resolved' WHERE agent = ? AND duplicate_of = ? "
            "AND status = 'open'", (agent, name))


class NamingReads:
    """Reads of the naming tables, for the Studio, the benchmark and tests (either backend)."""

    def rows(self, query: str, params: Params = ()) -> list[tuple[Any, ...]]:
        """Every row one read statement returns (the store's)."""
        raise NotImplementedError

    def row(self, query: str, params: Params = ()) -> tuple[Any, ...] | None:
        """The first row one read statement returns, or None (the store's)."""
        raise NotImplementedError

    def alias_of(self, agent: str, alias: str) -> str | None:
        """The concept name `alias` is recorded under, or None."""
        return alias_row(self, agent, alias)

    def aliases(self, agent: str, name: str) -> list[Alias]:
        """The aliases of concept `name`, oldest first."""
        return [Alias(*r) for r in self.rows(
            "SELECT alias, name, session_id, turn_id, created_at FROM aliases "
            "WHERE agent = ? AND name = ? ORDER BY created_at, alias", (agent, name))]

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
        where, params = ["agent = ?"], [agent]
        for column, value in (("duplicate_of", name), ("status", status)):
            if value is not None:
                where.append(f"{column} = ?")
                params.append(value)
        return [duplicate_row(r) for r in self.rows(
            f"SELECT {DUPLICATE_COLUMNS} FROM possible_duplicates WHERE {' AND '.join(where)} "
            "ORDER BY seen_at, name, session_id, turn_id", params)]

    def challenged_names(self, agent: str) -> list[str]:
        """Names of `agent`'s concepts with an open held claim (a contradicting sighting of a
        policy, or a possible duplicate under another name: both kept for review), sorted.
        """
        return [str(r[0]) for r in self.rows(
            "SELECT DISTINCT duplicate_of FROM possible_duplicates WHERE agent = ? "
            "AND status = 'open' ORDER BY 1", (agent,))]


def alias_row(reads: Reads, agent: str, alias: str) -> str | None:
    """The concept name `alias` is recorded under, or None."""
    row = reads.row("SELECT name FROM aliases WHERE agent = ? AND alias = ?", (agent, alias))
    return None if row is None else str(row[0])


def duplicate_row(row: tuple[Any, ...]) -> PossibleDuplicate:
    """A `PossibleDuplicate` from a row of `DUPLICATE_COLUMNS`."""
    (name, duplicate_of, session_id, turn_id, description, ctype, body, similarity, status,
     seen_at, why) = row
    return PossibleDuplicate(name, duplicate_of, session_id, turn_id, description, ctype, body,
                             float(similarity), status, seen_at, why)
