"""The concept store's reads and operator writes, written once for both backends.

`ConceptReads` is mixed into `insika_knowledge.store.sqlite.SQLiteStore` and
`insika_knowledge.store.postgres.PostgresStore`. It reads with the store's own `rows` and
`row` (one statement each) and writes through its `transaction` (a
`insika_knowledge.store.concepts.ConceptWrites`). A backend provides those, its
`Dialect`, and `_stored_by_ids` (how a page's records are read by id); what stays in
each backend is what truly differs: connections and locks, full text, and the change feed.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from typing import Any, ClassVar, Final

from insika_knowledge.concept import Concept, check_written_body, parse, serialize
from insika_knowledge.errors import NotFound, StorageCorrupt, UserError
from insika_knowledge.store.base import (
    Activity,
    ConceptPage,
    ExtractionRecord,
    PageCounts,
    Quarantine,
    Sighting,
    StoredConcept,
    Version,
)
from insika_knowledge.store.concepts import (
    EXTRACTION_COLUMNS,
    MAX_VERSION,
    VERSION_COLUMNS,
    ConceptWrites,
    version_of,
)
from insika_knowledge.store.naming import CHALLENGED, NamingReads
from insika_knowledge.store.rows import CONCEPT_COLUMNS, Keyed, check_operator, row_to_stored, sort_keyed
from insika_knowledge.store.statements import Dialect, scalar

#: The ``meta`` key of the tenant's session pseudonym key (64 hex digits).
PSEUDONYM_KEY: Final = "pseudonym_key"
#: Columns `ConceptReads.page` can sort by (the Studio list's columns).
PAGE_SORTS: Final = ("name", "type", "provenance", "confidence", "occurrences", "updated_at", "status")
#: Columns `ConceptReads.concept_page` can sort by; ``rank`` is the order of its `ranked` names.
CONCEPT_PAGE_SORTS: Final = (*PAGE_SORTS, "rank")


def _checked_window(offset: int, limit: int) -> None:
    if offset < 0 or limit < 0:
        raise UserError("offset and limit must be >= 0")


class ConceptReads(NamingReads):
    """Reads, history, quarantine and operator writes of a tenant's concepts (either backend)."""

    #: The backend's SQL words (`insika_knowledge.store.statements`).
    dialect: ClassVar[Dialect]
    PAGE_SORTS: Final = PAGE_SORTS
    CONCEPT_PAGE_SORTS: Final = CONCEPT_PAGE_SORTS

    #: Returns the current UTC time as ``YYYY-MM-DDTHH:MM:SSZ`` (the store's).
    clock: Callable[[], str]

    def transaction(self) -> AbstractContextManager[ConceptWrites]:
        """A write transaction over the concepts (the backend's)."""
        raise NotImplementedError

    def _stored_by_ids(self, ids: Sequence[int]) -> list[StoredConcept]:
        """The records of the concepts `ids`, in that order (a concept deleted since is skipped)."""
        raise NotImplementedError

    # ------------------------------------------------------------------ reads

    def get(self, agent: str, name: str) -> StoredConcept | None:
        """The current record of `name` for `agent`, or None (deleted or never written)."""
        row = self.row(f"SELECT {CONCEPT_COLUMNS} FROM concepts WHERE agent = ? AND name = ?", (agent, name))
        return row_to_stored(row) if row else None

    def list_concepts(self, agent: str) -> list[StoredConcept]:
        """Every current concept of `agent`, by name."""
        return [row_to_stored(r) for r in self.rows(
            f"SELECT {CONCEPT_COLUMNS} FROM concepts WHERE agent = ? ORDER BY name", (agent,))]

    def salvage(self, agent: str) -> tuple[list[StoredConcept], str, tuple[str, ...]]:
        """What is still readable of `agent`'s current concepts in a damaged file:
        ``(records, where they came from, names of concepts no version of which could be read)``.

        The ``concepts`` table first; when reading it fails (`StorageCorrupt`: a damaged
        page), each concept's newest version in ``concept_versions``, which holds every
        record as it was after each change (a name whose newest version is a delete is
        left out, and one whose newest version is itself damaged is named as unreadable,
        never replaced by an older one). When the ``quarantine`` table cannot be read
        either, every salvaged record counts as held (never handed on as vouched for).

        Raises:
            StorageCorrupt: neither table can be read.
        """
        try:
            return self.list_concepts(agent), "concepts", ()
        except StorageCorrupt:
            pass
        newest: dict[str, tuple[int, str, str]] = {}
        for name, version, reason, markdown in self.rows(
                "SELECT name, version, reason, markdown FROM concept_versions WHERE agent = ?", (agent,)):
            if isinstance(name, str) and isinstance(version, int) and (name not in newest or version > newest[name][0]):
                newest[name] = (version, str(reason), markdown if isinstance(markdown, str) else "")
        try:
            held: frozenset[str] | None = self.quarantined_names(agent)
        except StorageCorrupt:
            held = None
        out, lost = [], []
        for name in sorted(newest):
            version, reason, markdown = newest[name]
            if reason == "delete":
                continue
            try:
                out.append(StoredConcept(parse(markdown), version, 0, held is None or name in held))
            except UserError:
                lost.append(name)  # its newest version is damaged too: an older one would be stale
        return out, "concept_versions", tuple(lost)

    def names(self, agent: str) -> list[str]:
        """Names of the current concepts of `agent`, sorted."""
        return [r[0] for r in self.rows("SELECT name FROM concepts WHERE agent = ? ORDER BY name", (agent,))]

    def agents(self) -> list[str]:
        """Agents with at least one concept or version in this tenant, sorted."""
        return [r[0] for r in self.rows(
            "SELECT agent FROM concepts UNION SELECT agent FROM concept_versions ORDER BY 1")]

    def count(self, agent: str) -> int:
        """How many current concepts `agent` has."""
        return int(scalar(self, "SELECT count(*) FROM concepts WHERE agent = ?", (agent,)))

    def generation(self, agent: str) -> int:
        """The agent's generation number: it changes whenever any of its concepts does.

        One indexed lookup (seen by every replica on PostgreSQL); 0 for an agent that never
        had a concept.
        """
        row = self.row("SELECT generation FROM generations WHERE agent = ?", (agent,))
        return int(row[0]) if row else 0

    def scan_versions(self, agent: str) -> dict[int, int]:
        """``{concept id: version}`` for every current concept of `agent` (cache refresh)."""
        return {int(i): int(v) for i, v in self.rows("SELECT id, version FROM concepts WHERE agent = ?", (agent,))}

    # ------------------------------------------------------------------ pages

    def _scope(self, agent: str, names: Sequence[str] | None) -> tuple[list[str], list[Any]]:
        """The conditions (and parameters) of `agent`'s concepts, only `names` when given."""
        where, params = ["agent = ?"], [agent]
        if names is not None:
            among, listed = self.dialect.in_list("name", names)
            where.append(among)
            params.extend(listed)
        return where, params

    @staticmethod
    def _filter(where: list[str], params: list[Any], columns: Sequence[tuple[str, Any]]) -> None:
        """Add ``column = value`` to `where` for each column whose value is not None."""
        for column, value in columns:
            if value is not None:
                where.append(f"{column} = ?")
                params.append(value)

    def concept_page(self, agent: str, *, status: str | None = None, type: str | None = None,
                     provenance: str | None = None, quarantined: bool | None = None,
                     ranked: Sequence[str] | None = None, sort: str = "name", desc: bool = False,
                     offset: int = 0, limit: int = 50) -> ConceptPage:
        """One page of `agent`'s current concepts: filtered in SQL, sorted naturally.

        Names sort naturally (``c2`` before ``c10``), as the tie-break of every other
        column too. The sort runs in Python over the filtered ``(id, key, name)`` rows
        (a few milliseconds for 5,000), then only the page's records are read.

        Args:
            agent: the agent id.
            status: keep only this ``concepts.status`` value (``conflict``, ``ok``, or a
                state a later migration adds); None keeps all. ``conflict`` also keeps a
                policy concept with an open challenge (`store.naming.CHALLENGED`), and it
                is counted there.
            type: keep only this concept type; None keeps all.
            provenance: keep only ``observed`` or ``policy``; None keeps both.
            quarantined: True keeps only the concepts held in quarantine (the
                ``quarantine`` table), False only the others; None keeps all.
            ranked: keep only these names (search hits, best first); None = no name
                filter, ``[]`` = nothing matches. Unknown names are ignored.
            sort: one of `CONCEPT_PAGE_SORTS`; ``rank`` needs `ranked`.
            desc: sort descending (ties still by name, ascending).
            offset: rows to skip (>= 0).
            limit: rows to return (>= 0).

        Returns:
            The page (rows, the total matching every filter, and the counts per type,
            status and provenance, and of quarantined ones, over the concepts matching
            `ranked` alone).

        Raises:
            UserError: `sort` is unknown (or ``rank`` without `ranked`), or offset/limit
                is negative.
        """
        if sort not in CONCEPT_PAGE_SORTS or (sort == "rank" and ranked is None):
            raise UserError(f"cannot sort by {sort!r}; use one of "
                            f"{', '.join(CONCEPT_PAGE_SORTS)} (rank needs ranked names)")
        _checked_window(offset, limit)
        scope, params = self._scope(agent, ranked)
        counts = PageCounts()
        for ctype, cstatus, cprovenance, number in self.rows(
            f"SELECT type, status, provenance, count(*) FROM concepts WHERE {' AND '.join(scope)} "
            "GROUP BY type, status, provenance", params,
        ):
            counts.add(ctype, cstatus, cprovenance, int(number))
        held = "name IN (SELECT q.name FROM quarantine q WHERE q.agent = ?)"
        counts.quarantined = int(scalar(
            self, f"SELECT count(*) FROM concepts WHERE {' AND '.join(scope)} AND {held}", [*params, agent]))
        challenged = int(scalar(
            self, f"SELECT count(*) FROM concepts WHERE {' AND '.join(scope)} AND status <> 'conflict' "
            f"AND {CHALLENGED}", [*params, agent]))
        if challenged:  # a challenged policy waits for a person like a concept in conflict
            counts.status["conflict"] = counts.status.get("conflict", 0) + challenged
        where, filters = list(scope), list(params)
        if status == "conflict":
            where.append(f"(status = 'conflict' OR {CHALLENGED})")
            filters.append(agent)
            status = None
        self._filter(where, filters, (("status", status), ("type", type), ("provenance", provenance)))
        if quarantined is not None:
            where.append(held if quarantined else f"NOT {held}")
            filters.append(agent)
        column = "NULL" if sort == "rank" else sort
        keyed: Keyed = [(int(i), str(n), key) for i, n, key in self.rows(
            f"SELECT id, name, {column} FROM concepts WHERE {' AND '.join(where)}", filters)]
        sort_keyed(keyed, sort, desc, ranked)
        # A concept deleted between the two reads leaves the page one shorter.
        rows = self._stored_by_ids([cid for cid, _, _ in keyed[offset:offset + limit]])
        return ConceptPage(rows, len(keyed), counts)

    # ------------------------------------------------------------------ history

    def versions(self, agent: str, name: str) -> list[Version]:
        """The version history of `name`, newest first (deletes included)."""
        return [version_of(self, r) for r in self.rows(
            f"SELECT {VERSION_COLUMNS} FROM concept_versions WHERE agent = ? AND name = ? "
            "ORDER BY version DESC", (agent, name))]

    def version(self, agent: str, name: str, number: int) -> Version:
        """One version of `name`.

        Raises:
            NotFound: no such version.
        """
        row = None if not 0 < number <= MAX_VERSION else self.row(  # beyond 64 bits: no such version
            f"SELECT {VERSION_COLUMNS} FROM concept_versions WHERE agent = ? AND name = ? AND version = ?",
            (agent, name, number))
        if row is None:
            raise NotFound(f"concept '{name}' of agent '{agent}' has no version {number}")
        return version_of(self, row)

    def deleted(self, agent: str) -> list[Version]:
        """The delete version of each concept of `agent` that is deleted now, newest first."""
        return [version_of(self, r) for r in self.rows(
            "SELECT v.agent, v.name, v.version, v.reason, v.actor, v.session_id, v.markdown, "
            "v.created_at FROM concept_versions v "
            "WHERE v.agent = ? AND v.reason = 'delete' "
            "AND v.version = (SELECT max(version) FROM concept_versions w "
            "                 WHERE w.agent = v.agent AND w.name = v.name) "
            "AND NOT EXISTS (SELECT 1 FROM concepts c WHERE c.agent = v.agent AND c.name = v.name) "
            "ORDER BY v.created_at DESC, v.name", (agent,))]

    def sightings(self, agent: str, name: str) -> list[Sighting]:
        """The ledger of `name`: ``(session_id, turn_id, outcome, seen_at)``, oldest first."""
        return [Sighting(*r) for r in self.rows(
            "SELECT session_id, turn_id, outcome, seen_at FROM sightings "
            "WHERE agent = ? AND name = ? ORDER BY seen_at, session_id, turn_id", (agent, name))]

    def activity(
        self, agent: str, *, before: int | None = None, limit: int = 50,
        actor: str | None = None, reason: str | None = None,
    ) -> Sequence[Activity]:
        """`agent`'s recent changes (``concept_versions``), newest first, without the bodies.

        Args:
            agent: the agent id.
            before: only changes with an id below this one (the previous page's last id).
            limit: changes to return at most (>= 0).
            actor: keep only changes by this actor (``engine``, ``studio``, ...).
            reason: keep only this reason (extract, confirm, ..., resolve).

        Raises:
            UserError: `limit` is negative.
        """
        if limit < 0:
            raise UserError("limit must be >= 0")
        where: list[str] = ["agent = ?"]
        params: list[Any] = [agent]
        self._filter(where, params, (("actor", actor), ("reason", reason)))
        if before is not None:
            where.append("id < ?")
            params.append(before)
        rows = self.rows(
            "SELECT id, name, version, reason, actor, session_id, created_at FROM concept_versions "
            f"WHERE {' AND '.join(where)} ORDER BY id DESC LIMIT ?", (*params, limit))
        return [Activity(int(i), n, int(v), r, a, s, c) for i, n, v, r, a, s, c in rows]

    # ------------------------------------------------------------------ extractions

    def extractions(self, agent: str) -> list[ExtractionRecord]:
        """Every recorded extraction attempt of `agent`, newest first."""
        return [ExtractionRecord.from_row(r) for r in self.rows(
            f"SELECT {EXTRACTION_COLUMNS} FROM extractions WHERE agent = ? "
            "ORDER BY attempted_at DESC, session_id, turn_id", (agent,))]

    def extraction_counts(self) -> dict[str, dict[str, int]]:
        """Recorded extraction attempts per agent and outcome (``{agent: {outcome: n}}``)."""
        out: dict[str, dict[str, int]] = {}
        for agent, outcome, number in self.rows(
                "SELECT agent, outcome, count(*) FROM extractions GROUP BY agent, outcome ORDER BY 1, 2"):
            out.setdefault(agent, {})[outcome] = int(number)
        return out

    def failed_extractions(self, limit: int) -> list[ExtractionRecord]:
        """The `limit` most recent extraction attempts whose outcome is not ``ok``, newest first."""
        return [ExtractionRecord.from_row(r) for r in self.rows(
            f"SELECT {EXTRACTION_COLUMNS} FROM extractions WHERE outcome <> 'ok' "
            "ORDER BY attempted_at DESC, session_id, turn_id LIMIT ?", (max(0, limit),))]

    def pseudonym_key(self) -> bytes:
        """The tenant's secret key for session pseudonyms (`insika_knowledge.privacy.pseudonyms`):
        32 random bytes, kept in ``meta`` (key `PSEUDONYM_KEY`), made by the first caller.

        Raises:
            RunTimeFailure, StorageError: the key cannot be read or written.
        """
        cached: bytes | None = self.__dict__.get("_pseudonym_key")
        if cached is not None:
            return cached
        row = self.row("SELECT value FROM meta WHERE key = ?", (PSEUDONYM_KEY,))
        if row is None:
            with self.transaction() as tx:  # two first callers: one key, the other's insert does nothing
                tx.sql.execute(f"INSERT INTO meta (key, value) VALUES (?, {self.dialect.random_key}) "
                               "ON CONFLICT (key) DO NOTHING", (PSEUDONYM_KEY,))
                row = tx.sql.row("SELECT value FROM meta WHERE key = ?", (PSEUDONYM_KEY,))
        assert row is not None  # inserted just above when missing
        key = self.__dict__["_pseudonym_key"] = bytes.fromhex(str(row[0]))
        return key

    def extraction(self, agent: str, session_id: str, turn_id: str) -> ExtractionRecord | None:
        """The recorded extraction of one turn, or None."""
        row = self.row(f"SELECT {EXTRACTION_COLUMNS} FROM extractions "
                       "WHERE agent = ? AND session_id = ? AND turn_id = ?", (agent, session_id, turn_id))
        return ExtractionRecord.from_row(row) if row else None

    def record_extraction(self, record: ExtractionRecord) -> None:
        """Store the outcome of one turn's extraction (replacing an earlier attempt)."""
        with self.transaction() as tx:
            tx.record_extraction(record)

    # ---------------------------------------------------------------- quarantine (trust)

    def quarantined_names(self, agent: str) -> frozenset[str]:
        """Names of `agent`'s concepts held in quarantine (never injected); a deleted
        concept's name stays held, so restoring it holds it again.
        """
        return frozenset(r[0] for r in self.rows("SELECT name FROM quarantine WHERE agent = ?", (agent,)))

    def quarantine_of(self, agent: str, name: str) -> Quarantine | None:
        """Why `name` is in quarantine, or None when it is not."""
        row = self.row("SELECT session_id, supported_by, markers, since FROM quarantine "
                       "WHERE agent = ? AND name = ?", (agent, name))
        if row is None:
            return None
        return Quarantine(agent=agent, name=name, session_id=row[0], supported_by=tuple(json.loads(row[1])),
                          markers=tuple(json.loads(row[2])), since=row[3])

    def approve(self, agent: str, name: str, *, actor: str, expected_version: int | None) -> StoredConcept:
        """Release `name` from quarantine by a person's decision (a version, reason ``approve``).

        Raises:
            NotFound: `name` does not exist.
            StaleVersion: the concept changed since `expected_version` was read.
            UserError: `name` is not in quarantine.
        """
        check_operator(actor, expected_version)
        with self.transaction() as tx:
            current = tx.current(agent, name, expected_version)
            if not tx.release(agent, name):
                raise UserError(f"concept '{name}' of agent '{agent}' is not in quarantine")
            return tx.put(agent, current.concept.replace(updated_at=self.clock()), reason="approve",
                          actor=actor)

    # ------------------------------------------------------------------ operator writes

    def dismiss_held(self, agent: str, name: str, *, actor: str, expected_version: int | None = None) -> int:
        """A person keeps `name` as it is: every open claim held against it (a policy's
        challenges, possible duplicates) is marked resolved; the record is not changed.

        Returns:
            How many claims were closed.

        Raises:
            NotFound: `name` does not exist.
            StaleVersion: `expected_version` is given and the concept changed since.
        """
        check_operator(actor, expected_version)
        with self.transaction() as tx:
            tx.current(agent, name, expected_version)
            return tx.close_held(agent, name)

    def learn_held(self, agent: str, concept: Concept, *, actor: str) -> StoredConcept:
        """A person learns the claim held under `concept`'s name as a possible duplicate of
        another concept as a concept of its own: `concept` is created (reason ``resolve``)
        and the claims held under its name are marked resolved, in one transaction; the
        concepts they were held against are not changed.

        Raises:
            UserError: the name is another concept's, or no claim is held open under it.
        """
        check_operator(actor, None)
        with self.transaction() as tx:
            if tx.get(agent, concept.name) is not None:
                raise UserError(f"'{concept.name}' is already a concept of agent '{agent}': nothing is held under "
                                "that name as a possible duplicate")
            if not tx.close_held_under(agent, concept.name):
                raise UserError(f"no claim of agent '{agent}' is held open under the name '{concept.name}'")
            return tx.put(agent, concept, reason="resolve", actor=actor)

    def edit(self, agent: str, name: str, markdown: str, *, expected_version: int,
             actor: str, release: bool = False) -> StoredConcept:
        """Replace `name` with an operator's `markdown` (reason ``edit``).

        The record is validated whole; ``updated_at`` is stamped now. Renaming is allowed
        (the history moves with it, and the claims held against it) unless the new name is
        taken. An edit that changes the description or the body decides the claims held
        against the concept (a policy's challenges, possible duplicates): they are marked
        resolved. With `release`, a concept held in quarantine is released in the same
        transaction (`Memory.put`: the person who puts a record vouches for it; the
        Studio's editor leaves that to its approve button).

        Raises:
            ConceptFormatError: the markdown is invalid (line and field named).
            NotFound: `name` does not exist.
            StaleVersion: the concept changed since `expected_version` was read.
            UserError: the new name belongs to another concept, or is an alias of another
                concept (its later sightings are recorded under that one).
        """
        check_operator(actor, expected_version)
        concept = parse(markdown)
        with self.transaction() as tx:
            before = tx.current(agent, name, expected_version).concept
            if concept.body != before.body:
                check_written_body(markdown, concept.body)
            if concept.name != name:
                if tx.get(agent, concept.name) is not None:
                    raise UserError(
                        f"line 2, field 'name': '{concept.name}' is already another concept's name"
                    )
                owner = tx.alias_of(agent, concept.name)
                if owner is not None and owner != name:  # its sightings are recorded under the owner
                    raise UserError(f"line 2, field 'name': '{concept.name}' is a name of concept '{owner}' "
                                    "(an old name or one a sighting was proposed under): choose another")
                tx.rename(agent, name, concept.name)
            stored = tx.put(agent, concept.replace(updated_at=self.clock()), reason="edit", actor=actor)
            if (before.description, before.body) != (concept.description, concept.body):
                tx.close_held(agent, concept.name)  # a person rewrote the rule: the claims held are decided
            if release:
                tx.release(agent, concept.name)
            return stored

    def create(self, agent: str, markdown: str, *, actor: str) -> StoredConcept:
        """Add a concept written by an operator (reason ``edit``).

        Raises:
            ConceptFormatError: the markdown is invalid.
            UserError: the name is taken.
        """
        check_operator(actor)
        concept = parse(markdown)
        check_written_body(markdown, concept.body)
        with self.transaction() as tx:
            if tx.get(agent, concept.name) is not None:
                raise UserError(f"line 2, field 'name': '{concept.name}' already exists")
            return tx.put(agent, concept, reason="edit", actor=actor)

    def delete(self, agent: str, name: str, *, actor: str, expected_version: int | None = None) -> Version:
        """Delete `name`, keeping its history (a ``delete`` version holds the last bytes).

        Raises:
            NotFound: `name` does not exist.
            StaleVersion: `expected_version` is given and is not current.
        """
        check_operator(actor, expected_version)
        with self.transaction() as tx:
            tx.current(agent, name, expected_version)
            return tx.remove(agent, name, actor=actor)

    def purge(self, agent: str, name: str, *, actor: str) -> int:
        """Erase `name`, live or deleted, with its whole history (`ConceptWrites.purge`): what
        a person's right to erasure asks; nothing is kept to restore. How many versions went.

        Raises:
            NotFound: no concept has or had `name`.
        """
        check_operator(actor)
        with self.transaction() as tx:
            erased = tx.purge(agent, name)
            if not erased:
                raise NotFound(f"no concept {name!r} for agent {agent!r}, live or deleted")
            return erased

    def restore(self, agent: str, name: str, number: int, *, actor: str,
                stamp: bool = False) -> StoredConcept:
        """Make version `number` of `name` current again, byte for byte (reason ``restore``).

        With `stamp`, ``updated_at`` is the time of the restore instead of the old
        version's (the Studio's restore); every other byte is the old version's, but the
        name: a version written before a rename is restored under `name`, the concept whose
        history it is (never under its old name, which may be another concept's now).
        Restoring the record already current writes nothing and returns the current record.

        Works for a deleted concept too (restoring its last live version).

        Raises:
            NotFound: no such version.
            UserError: the version is a ``delete`` marker whose bytes are not a live record
                (never happens for versions this store wrote).
        """
        check_operator(actor, number)
        with self.transaction() as tx:
            old = Version(*tx.version_row(agent, name, number))
            concept = parse(old.markdown)
            renamed = concept.name != name  # a version from before a rename names the old name
            if renamed:
                concept = concept.replace(name=name)
            current = tx.get(agent, name)
            if current is not None and (
                current.concept.replace(updated_at=concept.updated_at) == concept if stamp or renamed
                else current.markdown == old.markdown
            ):
                return current  # already this record: no new version
            if stamp:
                concept = concept.replace(updated_at=self.clock())
            restored = tx.put(agent, concept, reason="restore", actor=actor)
            tx.hold_restored(agent, name, number)
            return tx.get(agent, name) or restored

    def resolve(
        self, agent: str, name: str, choose: Callable[[Concept, Sequence[Sighting]], Concept], *,
        expected_version: int, actor: str,
    ) -> StoredConcept:
        """Resolve `name`'s conflict in one write (reason ``resolve``).

        In one transaction: read the record and its sightings ledger, refuse a stale
        version, let `choose` build the resolved record (a pure function: which claim
        stays, the sources and confidence the ledger supports), stamp ``updated_at`` now
        and write it; the ledger then counts as supporting exactly the resolved record's
        sources (a rejected claim's sessions no longer count at the next sighting).

        Args:
            agent: the agent id.
            name: the concept in conflict.
            choose: ``(current record, ledger oldest first) -> resolved record``; it may
                raise `UserError` (or `ConceptFormatError`) to refuse, writing nothing.
            expected_version: the version the operator resolved.
            actor: who resolved it.

        Raises:
            NotFound: `name` does not exist.
            StaleVersion: the concept changed since `expected_version`.
            UserError: `choose` refused, or the result renames the concept or still has a
                ``## Contradiction`` section.
            ConceptFormatError: the resolved record is invalid.
        """
        check_operator(actor, expected_version)
        with self.transaction() as tx:
            current = tx.current(agent, name, expected_version)
            concept = choose(current.concept, tx.ledger(agent, name))
            if concept.name != name:
                raise UserError(f"a resolution keeps the name '{name}'; rename it with an edit")
            if concept.in_conflict:
                raise UserError("a resolution must remove the ## Contradiction section")
            if concept.body != current.concept.body:
                check_written_body(serialize(concept), concept.body)
            stored = tx.put(agent, concept.replace(updated_at=self.clock()), reason="resolve", actor=actor)
            tx.align_ledger(agent, name, frozenset(concept.sources))
            return stored
