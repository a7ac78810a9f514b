"""The concept store, written once for both backends: the write transaction and the writes.

`ConceptWrites` is one write transaction over a tenant's concepts: versions, the sightings
ledger, quarantine, merge leases and extraction records, on any backend's `Statements`.
Before it reads or writes a concept it takes the concept's key lock (`Statements.lock`):
PostgreSQL's advisory lock, held until commit; nothing on SQLite, whose ``BEGIN
IMMEDIATE`` already holds the file's write lock. A backend subclass writes the concept row
itself (`ConceptWrites._upsert`: the full-text columns and how the row comes back differ)
and says whether version rows are packed as deltas (`ConceptWrites.PACKS_VERSIONS`).

`insika_knowledge.store.concept_reads.ConceptReads` holds the store's reads and operator
writes, on top of these transactions.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any, ClassVar, Final

from insika_knowledge.concept import Concept, check_name, serialize
from insika_knowledge.errors import NotFound, StaleVersion, UserError
from insika_knowledge.ids import check_agent
from insika_knowledge.store import versions
from insika_knowledge.store.base import ExtractionRecord, Sighting, StoredConcept, Version
from insika_knowledge.store.naming import RENAMED, NamingWrites
from insika_knowledge.store.rows import CONCEPT_COLUMNS, row_to_stored
from insika_knowledge.store.statements import Dialect, Reads, scalar, upsert

#: The columns of a ``concept_versions`` row, as `Version` holds them.
VERSION_COLUMNS: Final = "agent, name, version, reason, actor, session_id, markdown, created_at"
#: The columns of an ``extractions`` row (`ExtractionRecord.to_row`).
EXTRACTION_COLUMNS: Final = ("agent, session_id, turn_id, outcome, retryable, candidates, written, "
                             "dropped, detail, attempted_at")
#: Upsert one turn's extraction outcome (a later attempt replaces an earlier one).
RECORD_EXTRACTION: Final = upsert("extractions", EXTRACTION_COLUMNS, "agent, session_id, turn_id")
#: The concept columns a write sets, in the order of `concept_values`.
WRITE_COLUMNS: Final = ("description, type, provenance, confidence, sources, occurrences, created_at, "
                        "updated_at, status, body, version, agent, name")
_ADD_VERSION: Final = f"INSERT INTO concept_versions ({VERSION_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
#: The largest version number a store can hold (a signed 64-bit integer, both backends).
MAX_VERSION: Final = 2**63 - 1
_SUPPORTING: Final = "WHERE agent = ? AND name = ? AND outcome <> 'conflict'"
#: The lock key (after the agent) a writer creating a concept takes (no concept name has a space).
NAMING_LOCK: Final = " naming"


def concept_values(agent: str, concept: Concept, number: int) -> tuple[Any, ...]:
    """The values of `WRITE_COLUMNS` for version `number` of `concept`."""
    return (
        concept.description, concept.type, concept.provenance, round(concept.confidence, 2),
        json.dumps(list(concept.sources), ensure_ascii=False), concept.occurrences,
        concept.created_at, concept.updated_at, concept.status, concept.body, number, agent,
        concept.name,
    )


def version_of(reads: Reads, row: Sequence[Any]) -> Version:
    """A `Version` from a ``concept_versions`` row, its record unpacked (`store.versions`)."""
    agent, name, number, reason, actor, session_id, stored, created_at = row
    markdown = versions.unpack(reads, agent, name, int(number), stored)
    return Version(agent, name, number, reason, actor, session_id, markdown, created_at)


#: The reasons a write may create a concept under a deleted name anew.
_NEW_CONCEPT: Final = frozenset({"extract", "edit"})
#: Joins a name and the version of its delete marker in a quarantine kept aside
#: (``name@7``: no concept can have that name).
HELD_BEFORE: Final = "@"


class ConceptWrites(NamingWrites):
    """The writes (and consistent reads) inside one write transaction, on either backend.

    The alias and possible-duplicate rows are `NamingWrites`'.
    """

    #: True when version rows between snapshots hold zlib deltas (`store.versions.pack`).
    PACKS_VERSIONS: ClassVar[bool] = False
    #: The backend's SQL words (`insika_knowledge.store.statements`).
    dialect: ClassVar[Dialect]

    def _upsert(self, agent: str, concept: Concept, number: int) -> StoredConcept:
        """Insert or update the concept row of `concept` at version `number`; the row as stored."""
        raise NotImplementedError

    def _saw(self, agent: str, name: str, stored: StoredConcept | None) -> None:
        """Note what this transaction last read or wrote of `name` (None: no row now)."""

    def get(self, agent: str, name: str) -> StoredConcept | None:
        """The current record of `name`, or None."""
        self.sql.lock(agent, name)
        row = self.sql.row(f"SELECT {CONCEPT_COLUMNS} FROM concepts WHERE agent = ? AND name = ?",
                           (agent, name))
        if row is None:
            return None
        stored = row_to_stored(row)
        self._saw(agent, name, stored)
        return stored

    def current(self, agent: str, name: str, expected_version: int | None) -> StoredConcept:
        """The current record of `name`, checked against `expected_version` (None: any).

        Raises:
            NotFound: `name` does not exist.
            StaleVersion: it is not at `expected_version`.
        """
        current = self.get(agent, name)
        if current is None:
            raise NotFound(f"agent '{agent}' has no concept '{name}'")
        if expected_version is not None and current.version != expected_version:
            raise StaleVersion(name, expected_version, current.version)
        return current

    def created_since(self, agent: str, cursor: int) -> list[StoredConcept]:
        """`agent`'s live concepts created (version 1 written) after change-feed position
        `cursor` (`version_cursor`), read under the agent's naming lock, held until commit:
        a writer about to create a concept sees every concept another such writer created
        since it named its candidate (on SQLite the file's write lock is that lock).
        """
        self.sql.lock(agent, NAMING_LOCK)
        names = [str(row[0]) for row in self.sql.rows(
            "SELECT name FROM concept_versions WHERE id > ? AND agent = ? AND version = 1", (cursor, agent))]
        return [stored for name in names if (stored := self.get(agent, name)) is not None]

    # -------------------------------------------------------------- the sightings ledger

    def has_sighting(self, agent: str, name: str, session_id: str, turn_id: str) -> bool:
        """True when this (session, turn) already sighted `name` (a replay)."""
        self.sql.lock(agent, name)
        return self.sql.row(
            "SELECT 1 FROM sightings WHERE agent = ? AND name = ? AND session_id = ? AND turn_id = ?",
            (agent, name, session_id, turn_id)) is not None

    def add_sighting(self, agent: str, name: str, session_id: str, turn_id: str, outcome: str) -> None:
        """Record one sighting in the ledger."""
        self.sql.lock(agent, name)
        self.sql.execute(
            "INSERT INTO sightings (agent, name, session_id, turn_id, outcome, seen_at) "
            "VALUES (?, ?, ?, ?, ?, ?)", (agent, name, session_id, turn_id, outcome, self.clock()))

    def supporting_sources(self, agent: str, name: str) -> list[str]:
        """Distinct sessions whose sightings support `name` (not contradictions), first first."""
        self.sql.lock(agent, name)
        return [r[0] for r in self.sql.rows(
            f"SELECT session_id FROM sightings {_SUPPORTING} "
            "GROUP BY session_id ORDER BY min(seen_at), session_id", (agent, name))]

    def recent_sources(self, agent: str, name: str, limit: int) -> list[str]:
        """The `limit` most recent distinct sessions supporting `name`, oldest of them first."""
        self.sql.lock(agent, name)
        rows = self.sql.rows(
            f"SELECT session_id FROM sightings {_SUPPORTING} "
            "GROUP BY session_id ORDER BY min(seen_at) DESC, session_id DESC LIMIT ?", (agent, name, limit))
        return [str(r[0]) for r in reversed(rows)]

    def source_count(self, agent: str, name: str, *, at_most: int) -> int:
        """How many distinct sessions support `name` on the ledger, counted up to `at_most`.

        Reads the ledger's primary key in order and stops at `at_most` distinct sessions.
        """
        self.sql.lock(agent, name)
        return int(scalar(self.sql, "SELECT count(*) FROM (SELECT DISTINCT session_id FROM sightings "
                                    f"{_SUPPORTING} LIMIT ?) AS s", (agent, name, at_most)))

    def align_ledger(self, agent: str, name: str, supporting: frozenset[str]) -> None:
        """Make the ledger of `name` count as supporting exactly the sessions in `supporting`
        (a resolution's kept claim, or none for a new concept under a deleted name): the
        others' sightings read as contradictions (``conflict``), theirs as confirmations.
        """
        for sighting in self.ledger(agent, name):
            supports = sighting.outcome != "conflict"
            if supports != (sighting.session_id in supporting):
                self.sql.execute(
                    "UPDATE sightings SET outcome = ? WHERE agent = ? AND name = ? AND session_id = ? "
                    "AND turn_id = ?", ("conflict" if supports else "confirm", agent, name,
                                        sighting.session_id, sighting.turn_id))

    def ledger(self, agent: str, name: str) -> Sequence[Sighting]:
        """The sightings of `name`, oldest first."""
        self.sql.lock(agent, name)
        return [Sighting(s, t, o, at) for s, t, o, at in self.sql.rows(
            "SELECT session_id, turn_id, outcome, seen_at FROM sightings "
            "WHERE agent = ? AND name = ? ORDER BY seen_at, session_id, turn_id", (agent, name))]

    # -------------------------------------------------------------- merge leases

    def take_merge_lease(
        self, agent: str, name: str, holder: str, *, lease_s: float, wait_ttl_s: float,
        gone: Callable[[str], bool], now_s: float,
    ) -> float | None:
        """Take the merge lease of `name` for `holder`, first come first served.

        A writer that cannot have the lease yet is queued by ticket (its row is kept
        alive by asking again within `wait_ttl_s`); the oldest waiter gets the lease
        when it is free. Rows past their time, or of processes that are gone, are removed.
        The concept's key lock serialises the writers reading the queue.

        Args:
            agent: the agent id.
            name: the concept name.
            holder: who asks (`insika_knowledge.store.leases.holder_id`).
            lease_s: how long the lease lasts once taken, in seconds.
            wait_ttl_s: how long a waiter's place is kept without asking again, in seconds.
            gone: True for a holder whose process is dead.
            now_s: the current unix time, in seconds.

        Returns:
            None when `holder` has the lease now; else the unix time when the writer
            ahead of it lets go at the latest.
        """
        self.sql.lock(agent, name)
        rows = self.sql.rows(
            "SELECT holder, ticket, holding, expires_at FROM merge_leases WHERE agent = ? AND name = ?",
            (agent, name))
        stale = [r[0] for r in rows if r[0] != holder and (float(r[3]) < now_s or gone(str(r[0])))]
        if stale:
            among, listed = self.dialect.in_list("holder", stale)
            self.sql.execute(f"DELETE FROM merge_leases WHERE agent = ? AND name = ? AND {among}",
                             (agent, name, *listed))
        live = [r for r in rows if r[0] not in stale]
        mine = next((r for r in live if r[0] == holder), None)
        if mine is None:
            ticket = max((int(r[1]) for r in live), default=0) + 1
            mine = (holder, ticket, 0, now_s + wait_ttl_s)
            live.append(mine)
            self.sql.execute(
                "INSERT INTO merge_leases (agent, name, holder, ticket, holding, expires_at) "
                "VALUES (?, ?, ?, ?, 0, ?)", (agent, name, holder, ticket, now_s + wait_ttl_s))
        ahead = [r for r in live if r[0] != holder and (int(r[2]) or int(r[1]) < int(mine[1]))]
        if ahead:
            if not int(mine[2]):
                self.sql.execute(
                    "UPDATE merge_leases SET expires_at = ? WHERE agent = ? AND name = ? AND holder = ?",
                    (now_s + wait_ttl_s, agent, name, holder))
            return min(float(r[3]) for r in ahead)
        self.sql.execute(
            "UPDATE merge_leases SET holding = 1, expires_at = ? WHERE agent = ? AND name = ? AND holder = ?",
            (now_s + lease_s, agent, name, holder))
        return None

    def release_merge_lease(self, agent: str, name: str, holder: str) -> None:
        """Remove `holder`'s lease or place in the queue for `name` (nothing if it has none)."""
        self.sql.lock(agent, name)
        self.sql.execute("DELETE FROM merge_leases WHERE agent = ? AND name = ? AND holder = ?",
                         (agent, name, holder))

    # -------------------------------------------------------------- records and versions

    def put(self, agent: str, concept: Concept, *, reason: str, actor: str,
            session_id: str | None = None) -> StoredConcept:
        """Insert or update `concept` and write its version row.

        The concept row is written before the version row (on PostgreSQL its trigger bumps
        the agent's generation row first, which orders the agent's version ids by commit).

        Raises:
            ConceptFormatError: the concept breaks a record rule (nothing is written).
            UserError: the store has a full-text index but no tokenizer.
        """
        check_agent(agent)
        check_name(concept.name)
        markdown = serialize(concept)  # validates
        self.sql.lock(agent, concept.name)
        number = self.next_version(agent, concept.name)
        taken = number == 1  # a name no concept had: a rename's alias of it ends here
        if reason in _NEW_CONCEPT and number > 1 and self._deleted(agent, concept.name, number - 1):
            # a new concept under a deleted name: the deleted one's quarantine and sightings are
            # not its own (a `restore` keeps them: the restored record is held again); the
            # quarantine is kept aside under `name@<delete version>` for a later restore of
            # one of the deleted concept's versions (`hold_restored`)
            self.sql.execute("UPDATE quarantine SET name = ? WHERE agent = ? AND name = ?",
                             (f"{concept.name}{HELD_BEFORE}{number - 1}", agent, concept.name))
            self.align_ledger(agent, concept.name, frozenset({session_id} if session_id else ()))
            taken = True
        if taken:
            self.sql.execute("DELETE FROM aliases WHERE agent = ? AND alias = ? AND turn_id = ?",
                             (agent, concept.name, RENAMED))
        stored = self._upsert(agent, concept, number)
        self._saw(agent, concept.name, stored)
        self._add_version(agent, concept.name, number, reason, actor, session_id, markdown, self.clock())
        return stored

    def _deleted(self, agent: str, name: str, number: int) -> bool:
        """True when version `number` of `name` is a ``delete`` marker."""
        return self.sql.row("SELECT 1 FROM concept_versions WHERE agent = ? AND name = ? AND version = ? "
                            "AND reason = 'delete'", (agent, name, number)) is not None

    def _add_version(self, agent: str, name: str, number: int, reason: str, actor: str,
                     session_id: str | None, markdown: str, now: str) -> None:
        stored = versions.pack(self.sql, agent, name, number, markdown) if self.PACKS_VERSIONS else markdown
        self.sql.execute(_ADD_VERSION, (agent, name, number, reason, actor, session_id, stored, now))

    def next_version(self, agent: str, name: str) -> int:
        """The number the next version of `name` gets (history survives deletes)."""
        self.sql.lock(agent, name)
        return int(scalar(self.sql, "SELECT coalesce(max(version), 0) FROM concept_versions "
                                    "WHERE agent = ? AND name = ?", (agent, name))) + 1

    def version_row(self, agent: str, name: str, number: int) -> tuple[Any, ...]:
        """A raw ``concept_versions`` row (see `Version`), its record unpacked.

        Raises:
            NotFound: no such version.
        """
        self.sql.lock(agent, name)
        row = None if not 0 < number <= MAX_VERSION else self.sql.row(  # beyond 64 bits: no such version
            f"SELECT {VERSION_COLUMNS} FROM concept_versions WHERE agent = ? AND name = ? AND version = ?",
            (agent, name, number))
        if row is None:
            raise NotFound(f"concept '{name}' of agent '{agent}' has no version {number}")
        return tuple(version_of(self.sql, row))

    def remove(self, agent: str, name: str, *, actor: str) -> Version:
        """Delete the current row of `name`, writing a ``delete`` version with its last bytes.

        Raises:
            NotFound: `name` does not exist.
        """
        current = self.current(agent, name, None)
        number = self.next_version(agent, name)
        now = self.clock()
        markdown = serialize(current.concept)
        self.sql.execute("DELETE FROM concepts WHERE agent = ? AND name = ?", (agent, name))
        # nothing left to decide (a new concept of its name starts clear); the claims this
        # closes are kept aside under `name@<delete version>` for a restore to open again
        self.sql.execute(
            "UPDATE possible_duplicates SET status = 'resolved', duplicate_of = ? WHERE agent = ? "
            "AND duplicate_of = ? AND status = 'open'", (f"{name}{HELD_BEFORE}{number}", agent, name))
        # its other names (a rename's, a sighting's) go with it: a new concept of its name is another one
        self.sql.execute("DELETE FROM aliases WHERE agent = ? AND name = ?", (agent, name))
        self._saw(agent, name, None)
        self._add_version(agent, name, number, "delete", actor, None, markdown, now)
        return Version(agent, name, number, "delete", actor, None, markdown, now)

    def purge(self, agent: str, name: str) -> int:
        """Erase `name` and everything kept of it: its row, every version, its sightings, its
        quarantine row, the claims held under or against it (also those a delete kept aside,
        ``name@N``), its aliases and its vectors (they go with the row); the agent's index
        snapshots are dropped (they may hold its terms) and rebuilt on the next search.
        Unlike `remove`, nothing is kept to restore. How many versions were erased.
        """
        self.sql.lock(agent, name)
        found = self.sql.row("SELECT count(*) FROM concept_versions WHERE agent = ? AND name = ?", (agent, name))
        count = int(found[0]) if found is not None else 0
        self.sql.execute("DELETE FROM concepts WHERE agent = ? AND name = ?", (agent, name))
        for table in ("concept_versions", "sightings", "quarantine"):
            self.sql.execute(f"DELETE FROM {table} WHERE agent = ? AND name = ?", (agent, name))
        self.sql.execute(
            "DELETE FROM possible_duplicates WHERE agent = ? AND (name = ? OR duplicate_of = ? "
            "OR duplicate_of LIKE ?)", (agent, name, name, f"{name}{HELD_BEFORE}%"))
        self.sql.execute("DELETE FROM aliases WHERE agent = ? AND (name = ? OR alias = ?)", (agent, name, name))
        self.sql.execute("DELETE FROM index_snapshots WHERE agent = ?", (agent,))
        self._saw(agent, name, None)
        return count

    def rename(self, agent: str, old: str, new: str) -> None:
        """Move `old`'s row, history, ledger, aliases and possible duplicates to `new`, and
        keep `old` as an alias of `new` (a ``[[link]]``, a ``load_knowledge`` or a sighting
        under the old name reaches the concept, until a concept takes that name again).

        The caller checked `new` is free.

        Raises:
            UserError: `new` belongs to a deleted concept.
        """
        check_name(new)
        self.sql.lock(agent, old)
        self.sql.lock(agent, new)
        if self.sql.row("SELECT 1 FROM concept_versions WHERE agent = ? AND name = ?", (agent, new)):
            raise UserError(
                f"line 2, field 'name': '{new}' belongs to a deleted concept; restore it "
                "or choose another name"
            )
        for table in ("concepts", "concept_versions", "sightings", "quarantine"):
            self.sql.execute(f"UPDATE {table} SET name = ? WHERE agent = ? AND name = ?", (new, agent, old))
        self.rename_naming(agent, old, new)
        # `old` now names `new` (the last concept renamed from it), and `new` is a name, no alias
        self.sql.execute("DELETE FROM aliases WHERE agent = ? AND alias IN (?, ?)", (agent, old, new))
        self.add_alias(agent, old, new, "", RENAMED)
        self._saw(agent, old, None)

    # -------------------------------------------------------------- quarantine (trust)

    def is_quarantined(self, agent: str, name: str) -> bool:
        """True when `name` is held in quarantine (stored, never injected)."""
        self.sql.lock(agent, name)
        return self.sql.row("SELECT 1 FROM quarantine WHERE agent = ? AND name = ?",
                            (agent, name)) is not None

    def held_session(self, agent: str, name: str) -> str | None:
        """The session whose sighting put `name` in quarantine, or None when it is not held."""
        self.sql.lock(agent, name)
        row = self.sql.row("SELECT session_id FROM quarantine WHERE agent = ? AND name = ?", (agent, name))
        return None if row is None else str(row[0])

    def quarantine(self, agent: str, name: str, *, session_id: str, supported_by: list[str],
                   markers: list[str]) -> None:
        """Hold `name` in quarantine (kept if it already is)."""
        self.sql.lock(agent, name)
        self.sql.execute(
            "INSERT INTO quarantine (agent, name, session_id, supported_by, markers, since) "
            "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (agent, name) DO NOTHING",
            (agent, name, session_id, json.dumps(sorted(supported_by)), json.dumps(markers), self.clock()))

    def hold_restored(self, agent: str, name: str, number: int) -> None:
        """Hold `name` in quarantine again when version `number`, just restored, belongs to a
        deleted concept of that name that was held when deleted (a restore is no approval),
        though a new concept took the name in between (`put` kept its quarantine aside); and
        open again the claims held against it that its delete closed (`remove` kept them aside).
        """
        prefix = f"{name}{HELD_BEFORE}"
        closed = [int(key) for (held,) in self.sql.rows(
            "SELECT DISTINCT duplicate_of FROM possible_duplicates WHERE agent = ? AND substr(duplicate_of, 1, ?) = ?",
            (agent, len(prefix), prefix)) if (key := str(held)[len(prefix):]).isdigit() and int(key) >= number]
        if closed:  # the first delete at or after the restored version (its marker holds the record) closed them
            self.sql.execute(
                "UPDATE possible_duplicates SET status = 'open', duplicate_of = ? WHERE agent = ? "
                "AND duplicate_of = ?", (name, agent, f"{prefix}{min(closed)}"))
        kept = [r for r in self.sql.rows(
            "SELECT name, session_id, supported_by, markers FROM quarantine WHERE agent = ? "
            "AND substr(name, 1, ?) = ?", (agent, len(prefix), prefix))
            if str(r[0])[len(prefix):].isdigit() and int(str(r[0])[len(prefix):]) >= number]
        if kept:
            _, session_id, supported_by, markers = min(kept, key=lambda r: int(str(r[0])[len(prefix):]))
            self.quarantine(agent, name, session_id=str(session_id), supported_by=json.loads(supported_by),
                            markers=json.loads(markers))

    def release(self, agent: str, name: str) -> bool:
        """Take `name` out of quarantine; True when it was in."""
        self.sql.lock(agent, name)
        return self.sql.execute("DELETE FROM quarantine WHERE agent = ? AND name = ?", (agent, name)) > 0

    def record_extraction(self, record: ExtractionRecord) -> None:
        """Upsert one turn's extraction outcome."""
        self.sql.execute(RECORD_EXTRACTION, record.to_row())
