"""The embedded store: one SQLite database file per tenant, through apsw.

Every write runs in a ``BEGIN IMMEDIATE`` transaction and writes a row of
``concept_versions``; triggers bump the agent's generation number on every change.
Each thread gets its own connection (apsw connections are not shared across threads
here), in WAL mode with a busy timeout, so readers never block the writer.

Full text: the FTS5 index is built with the `Tokenizer` the index layer gives the store
(`tokenizer=` or `register_tokenizer`); this module never analyses text. Without one, the
store works without the index (FTS5 migrations stay pending), and a write that the index
would have to re-tokenise fails with a `UserError` that says how to give it one.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import apsw

from insika_knowledge.concept import Concept, check_name, parse, serialize, utc_now
from insika_knowledge.errors import NotFound, StaleVersion, UserError
from insika_knowledge.store import fts, migrations, versions
from insika_knowledge.store.base import (
    Activity,
    ConceptPage,
    ExtractionRecord,
    PageCounts,
    Quarantine,
    ScanRow,
    Sighting,
    StoredConcept,
    Tokenizer,
    Version,
)
from insika_knowledge.store.database import Database
from insika_knowledge.store.faults import mapped_errors
from insika_knowledge.store.naming import NamingReads, NamingWrites
from insika_knowledge.store.outbox import Outbox
from insika_knowledge.store.paths import check_agent
from insika_knowledge.store.rows import CONCEPT_COLUMNS as _CONCEPT_COLS
from insika_knowledge.store.rows import Keyed, sort_keyed
from insika_knowledge.store.rows import check_operator as _check_operator
from insika_knowledge.store.rows import row_to_stored as _row_to_stored
from insika_knowledge.store.rows import scan_row as _scan_row
from insika_knowledge.store.snapshots import SQLiteSnapshots


def _scalar(conn: apsw.Connection, sql: str, params: Sequence[Any] = ()) -> Any:
    """The first column of the one row an aggregate query returns."""
    row = conn.execute(sql, params).fetchone()
    assert row is not None, sql  # count(*), max(...) and coalesce(...) always return a row
    return row[0]


@mapped_errors  # no raw apsw error leaves a public method (see store.faults)
class SQLiteStore(Database, NamingReads, SQLiteSnapshots):
    """The concepts of every agent of one tenant, in one SQLite file.

    Args:
        path: the database file (created with its folder if missing), or ``:memory:``
            is NOT supported (each thread opens its own connection).
        clock: returns the current UTC time as ``YYYY-MM-DDTHH:MM:SSZ``; tests inject one.
        tokenizer: what the FTS5 index tokenises documents with (the index layer's
            `insika_knowledge.index.tokenizer.TOKENIZER`); None = no full-text index until
            `register_tokenizer` is called. With one, the index is created, or rebuilt when
            it was built under another analysis version, before the constructor returns.
        busy_timeout_ms: the longest the opening waits for the write lock when a
            migration is pending, in milliseconds (None: the store's 30 s).

    Raises:
        StorageBusy: a migration is pending and the lock stayed busy beyond `busy_timeout_ms`.
        UserError: the path is a folder, the file is not a database, or the path cannot
            be used (its folder is under a regular file, not writable, ...); the message
            names the path.
        StorageError: the disk is full or failing, or the file is damaged, while the
            schema is written (a `RunTimeFailure`).
    """

    def __init__(self, path: str | Path, *, clock: Callable[[], str] = utc_now,
                 tokenizer: Tokenizer | None = None, busy_timeout_ms: int | None = None):
        self._tokenizer = tokenizer
        self._fts_lock = threading.Lock()
        self._fts_ready = False
        self.has_fts5 = False
        super().__init__(path, clock=clock, busy_timeout_ms=busy_timeout_ms)

    # ------------------------------------------------------------------ full text (setup)

    def _prepare(self, conn: apsw.Connection) -> None:
        fts.register(conn, self._tokenize)

    def _open(self, conn: apsw.Connection) -> None:
        self.has_fts5 = fts.fts5_available(conn)
        tokenizer = self._tokenizer
        can_index = self.has_fts5 and tokenizer is not None
        migrations.migrate(conn, frozenset({"fts5"}) if can_index else frozenset())
        if tokenizer is not None and can_index:
            fts.ensure_index(conn, tokenizer.version)
            self._fts_ready = True

    def _tokenize(self, text: str) -> Iterable[str]:
        """The registered tokenizer's terms of `text` (what the ``insika`` FTS5 tokenizer calls).

        Raises:
            UserError: no tokenizer was given, yet the index must tokenise a document.
        """
        tokenizer = self._tokenizer
        if tokenizer is None:
            raise UserError(
                f"{self.path} has a full-text index, which needs the analyser to index "
                "this write: open the store through Memory, or pass "
                "tokenizer=insika_knowledge.index.tokenizer.TOKENIZER"
            )
        return tokenizer(text)

    def outbox(self) -> Outbox:
        """This tenant's extraction outbox (``sql/008_outbox.sql``; see `store.outbox`)."""
        return Outbox(self)

    @property
    def fts_ready(self) -> bool:
        """True when the FTS5 index exists and was built with the registered tokenizer's version."""
        return self._fts_ready

    def register_tokenizer(self, tokenizer: Tokenizer) -> bool:
        """Give the store what its FTS5 index tokenises with; build the index if needed.

        Applies the migrations that need FTS5, then builds the index afresh when it is
        missing or was built under another layout or analysis version (one transaction;
        see `fts.ensure_index`). Calling it again with the same tokenizer costs nothing.

        Args:
            tokenizer: document text -> index terms, with its analysis ``version``.

        Returns:
            `fts_ready`: False when this SQLite build lacks FTS5 (the store then works
            without the index).

        Raises:
            RunTimeFailure: the disk is full or failing while the index is built.
            UserError: the database file cannot be written.
        """
        with self._fts_lock:
            if self._fts_ready and tokenizer is self._tokenizer:
                return True
            self._tokenizer = tokenizer
            if not self.has_fts5:
                return False
            with self._storage_errors():
                conn = self._conn()
                migrations.migrate(conn, frozenset({"fts5"}))
                fts.ensure_index(conn, tokenizer.version)
            self._fts_ready = True
            return True

    @contextmanager
    def transaction(self) -> Iterator[Transaction]:
        """A write transaction over the concepts (see `Database._write`).

        Raises:
            RunTimeFailure: the disk is full or failing ("disk full writing <path>").
            UserError: the database file cannot be written (read-only, permissions).
        """
        with self._write() as conn:
            yield Transaction(conn, self.clock)

    # ------------------------------------------------------------------ reads

    def get(self, agent: str, name: str) -> StoredConcept | None:
        """The current record of `name` for `agent`, or None (deleted or never written)."""
        return Transaction(self._conn(), self.clock).get(agent, name)

    def list_concepts(self, agent: str) -> list[StoredConcept]:
        """Every current concept of `agent`, by name."""
        rows = self._conn().execute(
            f"SELECT {_CONCEPT_COLS} FROM concepts WHERE agent=? ORDER BY name", (agent,)
        )
        return [_row_to_stored(r) for r in rows]

    def names(self, agent: str) -> list[str]:
        """Names of the current concepts of `agent`, sorted."""
        rows = self._conn().execute("SELECT name FROM concepts WHERE agent=? ORDER BY name", (agent,))
        return [r[0] for r in rows]

    def agents(self) -> list[str]:
        """Agents with at least one concept or version in this tenant, sorted."""
        rows = self._conn().execute(
            "SELECT agent FROM concepts UNION SELECT agent FROM concept_versions ORDER BY 1"
        )
        return [r[0] for r in rows]

    def count(self, agent: str) -> int:
        """How many current concepts `agent` has."""
        return int(_scalar(self._conn(), "SELECT count(*) FROM concepts WHERE agent=?", (agent,)))

    def generation(self, agent: str) -> int:
        """The agent's generation number: it changes whenever any of its concepts does.

        One indexed lookup; 0 for an agent that never had a concept.
        """
        row = self._conn().execute(
            "SELECT generation FROM generations WHERE agent=?", (agent,)
        ).fetchone()
        return int(row[0]) if row else 0

    def scan_versions(self, agent: str) -> dict[int, int]:
        """``{concept id: version}`` for every current concept of `agent` (cache refresh)."""
        rows = self._conn().execute("SELECT id, version FROM concepts WHERE agent=?", (agent,))
        return {int(i): int(v) for i, v in rows}

    def scan_rows(self, agent: str, ids: list[int] | None = None) -> Iterator[ScanRow]:
        """What the read cache needs of each concept, all of `agent` or only `ids`.

        One prepared statement per shape, reused by apsw's statement cache.
        """
        sql = (
            "SELECT id, version, name, description, type, provenance, confidence, "
            "updated_at, body FROM concepts WHERE "
        )
        conn = self._conn()
        if ids is None:
            for row in conn.execute(sql + "agent=?", (agent,)):
                yield _scan_row(row)
            return
        for cid in ids:
            found = conn.execute(sql + "id=? AND agent=?", (cid, agent)).fetchone()
            if found is not None:
                yield _scan_row(found)

    def version_cursor(self, agent: str) -> int:
        """The id of the newest ``concept_versions`` row (any agent): a change-feed position."""
        return int(_scalar(self._conn(), "SELECT coalesce(max(id), 0) FROM concept_versions"))

    def changes_since(self, agent: str, cursor: int) -> tuple[int, set[str]]:
        """Names of `agent`'s concepts written after `cursor`, and the new cursor.

        Reads the append-only ``concept_versions`` table by primary key, so the cost
        follows the number of changes, not the number of concepts.
        """
        rows: list[tuple[Any, ...]] = self._conn().execute(
            "SELECT id, name, agent FROM concept_versions WHERE id > ? ORDER BY id", (cursor,)
        ).fetchall()
        if not rows:
            return cursor, set()
        return int(rows[-1][0]), {str(name) for _, name, owner in rows if owner == agent}

    def scan_rows_by_names(self, agent: str, names: list[str]) -> Iterator[ScanRow]:
        """`scan_rows` for the concepts called `names` (missing names are skipped)."""
        conn = self._conn()
        for name in names:
            row = conn.execute(
                "SELECT id, version, name, description, type, provenance, confidence, "
                "updated_at, body FROM concepts WHERE agent=? AND name=?",
                (agent, name),
            ).fetchone()
            if row is not None:
                yield _scan_row(row)

    #: Columns `page` can sort by (the Studio list's columns).
    PAGE_SORTS: Final = ("name", "type", "provenance", "confidence", "occurrences",
                         "updated_at", "status")

    def page(
        self,
        agent: str,
        *,
        status: str | None = None,
        type: str | None = None,
        names: list[str] | None = None,
        sort: str = "name",
        desc: bool = False,
        offset: int = 0,
        limit: int = 50,
    ) -> tuple[list[StoredConcept], int, dict[str, int]]:
        """One page of `agent`'s current concepts, filtered and sorted in SQL.

        Args:
            agent: the agent id.
            status: ``conflict`` or ``ok`` to keep only those; None keeps both.
            type: a concept type to keep only that one; None keeps all.
            names: keep only these names (e.g. search hits); None = no name filter,
                ``[]`` = nothing matches.
            sort: one of `PAGE_SORTS`; ties break by name, ascending.
            desc: sort descending.
            offset: rows to skip (>= 0).
            limit: rows to return (>= 0).

        Returns:
            ``(rows, total, counts)``: the page's records; how many match all filters;
            and, over the concepts matching `names` only (status and type ignored),
            ``counts[type]`` per type present, ``counts["conflict"]`` and ``counts["all"]``.

        Raises:
            UserError: `sort` is not a sortable column, or offset/limit is negative.
        """
        if sort not in self.PAGE_SORTS:
            raise UserError(f"cannot sort by {sort!r}; use one of {', '.join(self.PAGE_SORTS)}")
        if offset < 0 or limit < 0:
            raise UserError("offset and limit must be >= 0")
        where = ["agent=?"]
        params: list[Any] = [agent]
        if names is not None:
            where.append("name IN (SELECT value FROM json_each(?))")
            params.append(json.dumps(names))
        scope_sql, scope_params = " AND ".join(where), list(params)
        if status is not None:
            where.append("status=?")
            params.append(status)
        if type is not None:
            where.append("type=?")
            params.append(type)
        where_sql = " AND ".join(where)
        direction = "DESC" if desc else "ASC"
        order = f"{sort} {direction}" + ("" if sort == "name" else ", name ASC")
        conn = self._conn()
        # Sort the narrow (id, key) rows first, then read only the page's full records.
        ids = [r[0] for r in conn.execute(
            f"SELECT id FROM concepts WHERE {where_sql} ORDER BY {order} LIMIT ? OFFSET ?",
            (*params, limit, offset),
        )]
        rows = [_row_to_stored(found) for cid in ids if (found := conn.execute(
            f"SELECT {_CONCEPT_COLS} FROM concepts WHERE id=?", (cid,)
        ).fetchone()) is not None]
        total = int(_scalar(conn, f"SELECT count(*) FROM concepts WHERE {where_sql}", params))
        counts: dict[str, int] = {"all": 0, "conflict": 0}
        for ctype, number, conflicts in conn.execute(
            f"SELECT type, count(*), sum(status='conflict') FROM concepts WHERE {scope_sql} "
            "GROUP BY type",
            scope_params,
        ):
            counts[ctype] = int(number)
            counts["all"] += int(number)
            counts["conflict"] += int(conflicts or 0)
        return rows, total, counts

    # ------------------------------------------------------------------ full text (search)

    def fts_search(
        self, agent: str, terms: Sequence[str], limit: int, weights: tuple[float, float, float]
    ) -> list[tuple[ScanRow, float]]:
        """The best `limit` concepts of `agent` for any of the analysed `terms`, by bm25.

        Args:
            agent: the agent whose concepts are searched (only its concepts can match, and
                bm25's document frequencies are its own: see `insika_knowledge.store.fts`).
            terms: analysed query terms (never raw user text); [] finds nothing.
            limit: rows to return at most.
            weights: bm25 column weights for (name, description, body).

        Returns:
            ``[(row, score), ...]`` best first; score is minus SQLite's ``bm25()`` (higher
            is better); ties by confidence desc, updated_at desc, name.

        Raises:
            UserError: this database has no FTS5 index (check `fts_ready`).
        """
        if not self._fts_ready:
            raise UserError(f"{self.path} has no FTS5 index")
        match = fts.match_expression(agent, terms)
        if match is None or limit <= 0:
            return []
        rank = "bm25({:g}, {:g}, {:g})".format(*weights)
        # FTS5 ranks inside the virtual table (ORDER BY rank), then the few best rows are
        # joined to their concepts; the window beyond `limit` lets equal scores break ties
        # by confidence, recency and name as Scan does.
        rows: list[tuple[Any, ...]] = self._conn().execute(
            "SELECT c.id, c.version, c.name, c.description, c.type, c.provenance, "
            "c.confidence, c.updated_at, c.body, f.score FROM ("
            "  SELECT rowid AS rid, rank AS score FROM concepts_fts "
            "  WHERE concepts_fts MATCH ? AND rank MATCH ? ORDER BY rank LIMIT ?"
            ") AS f CROSS JOIN concepts AS c ON c.id = f.rid WHERE c.agent = ? "
            "ORDER BY f.score, c.confidence DESC, c.updated_at DESC, c.name LIMIT ?",
            (match, rank, max(4 * limit, 32), agent, limit),
        ).fetchall()
        return [(_scan_row(r[:9]), -float(r[9])) for r in rows]

    def fts_doc_freqs(self, agent: str, terms: Sequence[str]) -> dict[str, int]:
        """How many of `agent`'s concepts hold each of `terms`; absent terms are omitted."""
        if not self._fts_ready or not terms:
            return {}
        return fts.doc_freqs(self._conn(), agent, terms)

    def fts_vocabulary(self, agent: str) -> dict[str, int]:
        """Every term of `agent`'s concepts in the FTS5 index, with its document frequency."""
        if not self._fts_ready:
            return {}
        return fts.vocabulary(self._conn(), agent)

    def fts_optimize(self) -> None:
        """Merge the FTS5 index's segments into one (faster queries; run after bulk loads)."""
        if self._fts_ready:
            with self._write() as conn:
                conn.execute("INSERT INTO concepts_fts (concepts_fts) VALUES ('optimize')")

    # ------------------------------------------------------------------ history

    def versions(self, agent: str, name: str) -> list[Version]:
        """The version history of `name`, newest first (deletes included)."""
        rows = self._conn().execute(
            "SELECT agent, name, version, reason, actor, session_id, markdown, created_at "
            "FROM concept_versions WHERE agent=? AND name=? ORDER BY version DESC",
            (agent, name),
        )
        conn = self._conn()
        return [_version(conn, r) for r in rows]

    def version(self, agent: str, name: str, number: int) -> Version:
        """One version of `name`.

        Raises:
            NotFound: no such version.
        """
        row = self._conn().execute(
            "SELECT agent, name, version, reason, actor, session_id, markdown, created_at "
            "FROM concept_versions WHERE agent=? AND name=? AND version=?",
            (agent, name, number),
        ).fetchone()
        if row is None:
            raise NotFound(f"concept '{name}' of agent '{agent}' has no version {number}")
        return _version(self._conn(), row)

    def deleted(self, agent: str) -> list[Version]:
        """The delete version of each concept of `agent` that is deleted now, newest first."""
        rows = self._conn().execute(
            "SELECT v.agent, v.name, v.version, v.reason, v.actor, v.session_id, v.markdown, "
            "v.created_at FROM concept_versions v "
            "WHERE v.agent=? AND v.reason='delete' "
            "AND v.version = (SELECT max(version) FROM concept_versions w "
            "                 WHERE w.agent=v.agent AND w.name=v.name) "
            "AND NOT EXISTS (SELECT 1 FROM concepts c WHERE c.agent=v.agent AND c.name=v.name) "
            "ORDER BY v.created_at DESC, v.name",
            (agent,),
        )
        conn = self._conn()
        return [_version(conn, r) for r in rows]

    def sightings(self, agent: str, name: str) -> list[Sighting]:
        """The ledger of `name`: ``(session_id, turn_id, outcome, seen_at)``, oldest first."""
        rows = self._conn().execute(
            "SELECT session_id, turn_id, outcome, seen_at FROM sightings "
            "WHERE agent=? AND name=? ORDER BY seen_at, session_id, turn_id",
            (agent, name),
        )
        return [Sighting(*r) for r in rows]

    def extractions(self, agent: str) -> list[ExtractionRecord]:
        """Every recorded extraction attempt of `agent`, newest first."""
        rows = self._conn().execute(
            "SELECT agent, session_id, turn_id, outcome, retryable, candidates, written, "
            "dropped, detail, attempted_at FROM extractions WHERE agent=? "
            "ORDER BY attempted_at DESC, session_id, turn_id",
            (agent,),
        )
        return [ExtractionRecord.from_row(r) for r in rows]

    def extraction(self, agent: str, session_id: str, turn_id: str) -> ExtractionRecord | None:
        """The recorded extraction of one turn, or None."""
        row = self._conn().execute(
            "SELECT agent, session_id, turn_id, outcome, retryable, candidates, written, "
            "dropped, detail, attempted_at FROM extractions "
            "WHERE agent=? AND session_id=? AND turn_id=?",
            (agent, session_id, turn_id),
        ).fetchone()
        return ExtractionRecord.from_row(row) if row else None

    # ---------------------------------------------------------------- quarantine (trust)

    def quarantined_names(self, agent: str) -> frozenset[str]:
        """Names of `agent`'s concepts held in quarantine (never injected)."""
        rows = self._conn().execute("SELECT name FROM quarantine WHERE agent=?", (agent,))
        return frozenset(r[0] for r in rows)

    def quarantine_of(self, agent: str, name: str) -> Quarantine | None:
        """Why `name` is in quarantine, or None when it is not."""
        row = self._conn().execute(
            "SELECT session_id, supported_by, markers, since FROM quarantine WHERE agent=? AND name=?",
            (agent, name),
        ).fetchone()
        if row is None:
            return None
        return Quarantine(
            agent=agent, name=name, session_id=row[0], supported_by=tuple(json.loads(row[1])),
            markers=tuple(json.loads(row[2])), since=row[3],
        )

    def approve(self, agent: str, name: str, *, actor: str, expected_version: int) -> StoredConcept:
        """Release `name` from quarantine by a person's decision (a version, reason ``approve``).

        Raises:
            NotFound: `name` does not exist.
            StaleVersion: the concept changed since `expected_version` was read.
            UserError: `name` is not in quarantine.
        """
        _check_operator(actor, expected_version)
        with self.transaction() as tx:
            current = tx.get(agent, name)
            if current is None:
                raise NotFound(f"agent '{agent}' has no concept '{name}'")
            if current.version != expected_version:
                raise StaleVersion(name, expected_version, current.version)
            if not tx.release(agent, name):
                raise UserError(f"concept '{name}' of agent '{agent}' is not in quarantine")
            concept = current.concept.replace(updated_at=self.clock())
            return tx.put(agent, concept, reason="approve", actor=actor)

    # ------------------------------------------------------------------ operator writes

    def edit(
        self, agent: str, name: str, markdown: str, *, expected_version: int, actor: str
    ) -> StoredConcept:
        """Replace `name` with an operator's `markdown` (reason ``edit``).

        The record is validated whole; ``updated_at`` is stamped now. Renaming is allowed
        (the history moves with it) unless the new name is taken.

        Raises:
            ConceptFormatError: the markdown is invalid (line and field named).
            NotFound: `name` does not exist.
            StaleVersion: the concept changed since `expected_version` was read.
            UserError: the new name belongs to another concept.
        """
        _check_operator(actor, expected_version)
        concept = parse(markdown)
        with self.transaction() as tx:
            current = tx.get(agent, name)
            if current is None:
                raise NotFound(f"agent '{agent}' has no concept '{name}'")
            if current.version != expected_version:
                raise StaleVersion(name, expected_version, current.version)
            if concept.name != name:
                if tx.get(agent, concept.name) is not None:
                    raise UserError(
                        f"line 2, field 'name': '{concept.name}' is already another concept's name"
                    )
                tx.rename(agent, name, concept.name)
            concept = concept.replace(updated_at=self.clock())
            return tx.put(agent, concept, reason="edit", actor=actor)

    def create(self, agent: str, markdown: str, *, actor: str) -> StoredConcept:
        """Add a concept written by an operator (reason ``edit``).

        Raises:
            ConceptFormatError: the markdown is invalid.
            UserError: the name is taken.
        """
        _check_operator(actor)
        concept = parse(markdown)
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
        _check_operator(actor, expected_version)
        with self.transaction() as tx:
            current = tx.get(agent, name)
            if current is None:
                raise NotFound(f"agent '{agent}' has no concept '{name}'")
            if expected_version is not None and current.version != expected_version:
                raise StaleVersion(name, expected_version, current.version)
            return tx.remove(agent, name, actor=actor)

    def restore(
        self, agent: str, name: str, number: int, *, actor: str, stamp: bool = False
    ) -> StoredConcept:
        """Make version `number` of `name` current again, byte for byte (reason ``restore``).

        With `stamp`, ``updated_at`` is the time of the restore instead of the old
        version's (the Studio's restore); every other byte is the old version's.
        Restoring the record already current writes nothing and returns the current record.

        Works for a deleted concept too (restoring its last live version).

        Raises:
            NotFound: no such version.
            UserError: the version is a ``delete`` marker whose bytes are not a live record
                (never happens for versions this store wrote).
        """
        _check_operator(actor, number)
        with self.transaction() as tx:
            old = Version(*tx.version_row(agent, name, number))
            concept = parse(old.markdown)
            current = tx.get(agent, name)
            if current is not None and (
                current.concept.replace(updated_at=concept.updated_at) == concept if stamp
                else current.markdown == old.markdown
            ):
                return current  # already this record: no new version
            if stamp:
                concept = concept.replace(updated_at=self.clock())
            stored = tx.put(agent, concept, reason="restore", actor=actor)
        return stored

    def record_extraction(self, record: ExtractionRecord) -> None:
        """Store the outcome of one turn's extraction (replacing an earlier attempt)."""
        with self.transaction() as tx:
            tx.record_extraction(record)

    # ------------------------------------------------------------------ Studio queries
    # (issue 14) What the Studio's list, evidence, activity and resolve pages need.

    #: Columns `concept_page` can sort by; ``rank`` is the order of its `ranked` names.
    CONCEPT_PAGE_SORTS: Final = ("name", "type", "provenance", "confidence", "occurrences",
                                 "updated_at", "status", "rank")

    def concept_page(
        self,
        agent: str,
        *,
        status: str | None = None,
        type: str | None = None,
        provenance: str | None = None,
        quarantined: bool | None = None,
        ranked: Sequence[str] | None = None,
        sort: str = "name",
        desc: bool = False,
        offset: int = 0,
        limit: int = 50,
    ) -> ConceptPage:
        """One page of `agent`'s current concepts: filtered in SQL, sorted naturally.

        Names sort naturally (``c2`` before ``c10``), as the tie-break of every other
        column too. The sort runs in Python over the filtered ``(id, key, name)`` rows
        (a few milliseconds for 5,000), then only the page's records are read.

        Args:
            agent: the agent id.
            status: keep only this ``concepts.status`` value (``conflict``, ``ok``, or a
                state a later migration adds); None keeps all.
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
        if sort not in self.CONCEPT_PAGE_SORTS or (sort == "rank" and ranked is None):
            raise UserError(f"cannot sort by {sort!r}; use one of "
                            f"{', '.join(self.CONCEPT_PAGE_SORTS)} (rank needs ranked names)")
        if offset < 0 or limit < 0:
            raise UserError("offset and limit must be >= 0")
        scope = ["agent=?"]
        params: list[Any] = [agent]
        if ranked is not None:
            scope.append("name IN (SELECT value FROM json_each(?))")
            params.append(json.dumps(ranked))
        conn = self._conn()
        counts = PageCounts()
        for ctype, cstatus, cprovenance, number in conn.execute(
            f"SELECT type, status, provenance, count(*) FROM concepts WHERE {' AND '.join(scope)} "
            "GROUP BY type, status, provenance", params,
        ):
            counts.add(ctype, cstatus, cprovenance, int(number))
        held = "name IN (SELECT name FROM quarantine WHERE agent=?)"
        held_row = conn.execute(
            f"SELECT count(*) FROM concepts WHERE {' AND '.join(scope)} AND {held}", [*params, agent]
        ).fetchone()
        counts.quarantined = int(held_row[0]) if held_row else 0
        where, filters = list(scope), list(params)
        for column, value in (("status", status), ("type", type), ("provenance", provenance)):
            if value is not None:
                where.append(f"{column}=?")
                filters.append(value)
        if quarantined is not None:
            where.append(held if quarantined else f"NOT {held}")
            filters.append(agent)
        column = "NULL" if sort == "rank" else sort
        keyed: Keyed = [(int(i), str(n), key) for i, n, key in conn.execute(
            f"SELECT id, name, {column} FROM concepts WHERE {' AND '.join(where)}", filters
        )]
        sort_keyed(keyed, sort, desc, ranked)
        rows = []
        for cid, _, _ in keyed[offset:offset + limit]:
            row = conn.execute(f"SELECT {_CONCEPT_COLS} FROM concepts WHERE id=?", (cid,)).fetchone()
            if row is not None:  # deleted between the two reads: the page is one shorter
                rows.append(_row_to_stored(row))
        return ConceptPage(rows, len(keyed), counts)

    def extractions_of(
        self, agent: str, turns: Sequence[tuple[str, str]]
    ) -> dict[tuple[str, str], ExtractionRecord]:
        """The recorded extraction of each ``(session_id, turn_id)`` in `turns` that has one.

        Reads the ``extractions`` table by primary key, one lookup per turn.
        """
        conn = self._conn()
        out: dict[tuple[str, str], ExtractionRecord] = {}
        for session_id, turn_id in dict.fromkeys(turns).keys():
            row = conn.execute(
                "SELECT agent, session_id, turn_id, outcome, retryable, candidates, written, "
                "dropped, detail, attempted_at FROM extractions "
                "WHERE agent=? AND session_id=? AND turn_id=?",
                (agent, session_id, turn_id),
            ).fetchone()
            if row is not None:
                out[(session_id, turn_id)] = ExtractionRecord.from_row(row)
        return out

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
        where, params = ["agent=?"], _params(agent)
        for column, value in (("actor", actor), ("reason", reason)):
            if value is not None:
                where.append(f"{column}=?")
                params.append(value)
        if before is not None:
            where.append("id<?")
            params.append(before)
        rows = self._conn().execute(
            "SELECT id, name, version, reason, actor, session_id, created_at FROM concept_versions "
            f"WHERE {' AND '.join(where)} ORDER BY id DESC LIMIT ?", (*params, limit),
        )
        return [Activity(int(i), n, int(v), r, a, s, c) for i, n, v, r, a, s, c in rows]

    def resolve(
        self, agent: str, name: str, choose: Callable[[Concept, Sequence[Sighting]], Concept], *,
        expected_version: int, actor: str,
    ) -> StoredConcept:
        """Resolve `name`'s conflict in one write (reason ``resolve``).

        In one transaction: read the record and its sightings ledger, refuse a stale
        version, let `choose` build the resolved record (a pure function: which claim
        stays, the sources and confidence the ledger supports), stamp ``updated_at`` now
        and write it.

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
        _check_operator(actor, expected_version)
        with self.transaction() as tx:
            current = tx.get(agent, name)
            if current is None:
                raise NotFound(f"agent '{agent}' has no concept '{name}'")
            if current.version != expected_version:
                raise StaleVersion(name, expected_version, current.version)
            concept = choose(current.concept, tx.ledger(agent, name))
            if concept.name != name:
                raise UserError(f"a resolution keeps the name '{name}'; rename it with an edit")
            if concept.in_conflict:
                raise UserError("a resolution must remove the ## Contradiction section")
            return tx.put(agent, concept.replace(updated_at=self.clock()), reason="resolve",
                          actor=actor)


def _version(conn: apsw.Connection, row: Any) -> Version:
    """A `Version` from a ``concept_versions`` row, its record unpacked (`store.versions`)."""
    agent, name, number, reason, actor, session_id, stored, created_at = row
    markdown = versions.unpack(conn, agent, name, int(number), stored)
    return Version(agent, name, number, reason, actor, session_id, markdown, created_at)


@dataclass
class Transaction(NamingWrites):
    """The writes (and consistent reads) inside one ``BEGIN IMMEDIATE`` transaction.

    The alias and possible-duplicate rows are `NamingWrites`'.
    """

    conn: apsw.Connection
    clock: Callable[[], str]

    def get(self, agent: str, name: str) -> StoredConcept | None:
        """The current record of `name`, or None."""
        row = self.conn.execute(
            f"SELECT {_CONCEPT_COLS} FROM concepts WHERE agent=? AND name=?", (agent, name)
        ).fetchone()
        return _row_to_stored(row) if row else None

    def has_sighting(self, agent: str, name: str, session_id: str, turn_id: str) -> bool:
        """True when this (session, turn) already sighted `name` (a replay)."""
        return self.conn.execute(
            "SELECT 1 FROM sightings WHERE agent=? AND name=? AND session_id=? AND turn_id=?",
            (agent, name, session_id, turn_id),
        ).fetchone() is not None

    def add_sighting(
        self, agent: str, name: str, session_id: str, turn_id: str, outcome: str
    ) -> None:
        """Record one sighting in the ledger."""
        self.conn.execute(
            "INSERT INTO sightings (agent, name, session_id, turn_id, outcome, seen_at) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            (agent, name, session_id, turn_id, outcome, self.clock()),
        )

    def recent_sources(self, agent: str, name: str, limit: int) -> list[str]:
        """The `limit` most recent distinct sessions supporting `name`, oldest of them first."""
        rows: list[Any] = self.conn.execute(
            "SELECT session_id FROM sightings WHERE agent=? AND name=? AND outcome != 'conflict' "
            "GROUP BY session_id ORDER BY min(seen_at) DESC, session_id DESC LIMIT ?",
            (agent, name, limit),
        ).fetchall()
        return [str(r[0]) for r in reversed(rows)]

    def source_count(self, agent: str, name: str, *, at_most: int) -> int:
        """How many distinct sessions support `name` on the ledger, counted up to `at_most`.

        Reads the ledger's primary key in order and stops at `at_most` distinct sessions.
        """
        row: Any = self.conn.execute(
            "SELECT count(*) FROM (SELECT DISTINCT session_id FROM sightings "
            "WHERE agent=? AND name=? AND outcome != 'conflict' LIMIT ?)", (agent, name, at_most),
        ).fetchone()
        return int(row[0]) if row is not None else 0

    def supporting_sources(self, agent: str, name: str) -> list[str]:
        """Distinct sessions whose sightings support `name` (not contradictions), first first."""
        rows = self.conn.execute(
            "SELECT session_id FROM sightings WHERE agent=? AND name=? AND outcome != 'conflict' "
            "GROUP BY session_id ORDER BY min(seen_at), session_id",
            (agent, name),
        )
        return [r[0] for r in rows]

    def put(
        self,
        agent: str,
        concept: Concept,
        *,
        reason: str,
        actor: str,
        session_id: str | None = None,
    ) -> StoredConcept:
        """Insert or update `concept` and write its version row.

        Raises:
            ConceptFormatError: the concept breaks a record rule (nothing is written).
        """
        check_agent(agent)
        check_name(concept.name)
        markdown = serialize(concept)  # validates
        number = self.next_version(agent, concept.name)
        values = (
            concept.description, concept.type, concept.provenance, round(concept.confidence, 2),
            json.dumps(list(concept.sources), ensure_ascii=False), concept.occurrences,
            concept.created_at, concept.updated_at, concept.status, concept.body, number,
        )
        self.conn.execute(
            "INSERT INTO concepts (description, type, provenance, confidence, sources, "
            "occurrences, created_at, updated_at, status, body, version, agent, name) "
            "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?) "
            "ON CONFLICT (agent, name) DO UPDATE SET description=excluded.description, "
            "type=excluded.type, provenance=excluded.provenance, confidence=excluded.confidence, "
            "sources=excluded.sources, occurrences=excluded.occurrences, "
            "created_at=excluded.created_at, updated_at=excluded.updated_at, "
            "status=excluded.status, body=excluded.body, version=excluded.version",
            (*values, agent, concept.name),
        )
        self.conn.execute(
            "INSERT INTO concept_versions (agent, name, version, reason, actor, session_id, "
            "markdown, created_at) VALUES (?,?,?,?,?,?,?,?)",
            (agent, concept.name, number, reason, actor, session_id,
             versions.pack(self.conn, agent, concept.name, number, markdown), self.clock()),
        )
        stored = self.get(agent, concept.name)
        assert stored is not None
        return stored

    def next_version(self, agent: str, name: str) -> int:
        """The number the next version of `name` gets (history survives deletes)."""
        return int(_scalar(
            self.conn,
            "SELECT coalesce(max(version), 0) FROM concept_versions WHERE agent=? AND name=?",
            (agent, name),
        )) + 1

    def version_row(self, agent: str, name: str, number: int) -> tuple[Any, ...]:
        """A raw ``concept_versions`` row (see `Version`).

        Raises:
            NotFound: no such version, or it is a delete marker.
        """
        row = self.conn.execute(
            "SELECT agent, name, version, reason, actor, session_id, markdown, created_at "
            "FROM concept_versions WHERE agent=? AND name=? AND version=?",
            (agent, name, number),
        ).fetchone()
        if row is None:
            raise NotFound(f"concept '{name}' of agent '{agent}' has no version {number}")
        return tuple(_version(self.conn, row))

    def remove(self, agent: str, name: str, *, actor: str) -> Version:
        """Delete the current row of `name`, writing a ``delete`` version with its last bytes."""
        current = self.get(agent, name)
        if current is None:
            raise NotFound(f"agent '{agent}' has no concept '{name}'")
        number = self.next_version(agent, name)
        now = self.clock()
        markdown = serialize(current.concept)
        self.conn.execute(
            "INSERT INTO concept_versions (agent, name, version, reason, actor, session_id, "
            "markdown, created_at) VALUES (?,?,?,?,?,?,?,?)",
            (agent, name, number, "delete", actor, None,
             versions.pack(self.conn, agent, name, number, markdown), now),
        )
        self.conn.execute("DELETE FROM concepts WHERE agent=? AND name=?", (agent, name))
        return Version(agent, name, number, "delete", actor, None, markdown, now)

    def rename(self, agent: str, old: str, new: str) -> None:
        """Move `old`'s row, history, ledger, aliases and possible duplicates to `new`.

        The caller checked `new` is free.
        """
        check_name(new)
        if self.conn.execute(
            "SELECT 1 FROM concept_versions WHERE agent=? AND name=?", (agent, new)
        ).fetchone():
            raise UserError(
                f"line 2, field 'name': '{new}' belongs to a deleted concept; restore it "
                "or choose another name"
            )
        for table in ("concepts", "concept_versions", "sightings", "quarantine"):
            self.conn.execute(
                f"UPDATE {table} SET name=? WHERE agent=? AND name=?", (new, agent, old)
            )
        self.rename_naming(agent, old, new)

    # -------------------------------------------------------------- quarantine (trust)

    def is_quarantined(self, agent: str, name: str) -> bool:
        """True when `name` is held in quarantine (stored, never injected)."""
        return self.conn.execute(
            "SELECT 1 FROM quarantine WHERE agent=? AND name=?", (agent, name)
        ).fetchone() is not None

    def quarantine(
        self, agent: str, name: str, *, session_id: str, supported_by: list[str], markers: list[str]
    ) -> None:
        """Hold `name` in quarantine (kept if it already is)."""
        self.conn.execute(
            "INSERT OR IGNORE INTO quarantine (agent, name, session_id, supported_by, markers, since) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            (agent, name, session_id, json.dumps(sorted(supported_by)), json.dumps(markers), self.clock()),
        )

    def release(self, agent: str, name: str) -> bool:
        """Take `name` out of quarantine; True when it was in."""
        self.conn.execute("DELETE FROM quarantine WHERE agent=? AND name=?", (agent, name))
        return bool(self.conn.changes())

    def take_merge_lease(
        self, agent: str, name: str, holder: str, *, lease_s: float, wait_ttl_s: float,
        gone: Callable[[str], bool], now_s: float,
    ) -> float | None:
        """Take the merge lease of `name` for `holder`, first come first served.

        A writer that cannot have the lease yet is queued by ticket (its row is kept
        alive by asking again within `wait_ttl_s`); the oldest waiter gets the lease
        when it is free. Rows past their time, or of processes that are gone, are removed.

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
        rows: list[Any] = self.conn.execute(
            "SELECT holder, ticket, holding, expires_at FROM merge_leases WHERE agent=? AND name=?",
            (agent, name),
        ).fetchall()
        stale = [r[0] for r in rows if r[0] != holder and (float(r[3]) < now_s or gone(str(r[0])))]
        for who in stale:
            self.conn.execute(
                "DELETE FROM merge_leases WHERE agent=? AND name=? AND holder=?", (agent, name, who)
            )
        live = [r for r in rows if r[0] not in stale]
        mine = next((r for r in live if r[0] == holder), None)
        if mine is None:
            ticket = max((int(r[1]) for r in live), default=0) + 1
            mine = (holder, ticket, 0, now_s + wait_ttl_s)
            live.append(mine)
            self.conn.execute(
                "INSERT INTO merge_leases (agent, name, holder, ticket, holding, expires_at) "
                "VALUES (?,?,?,?,0,?)", (agent, name, holder, ticket, now_s + wait_ttl_s),
            )
        ahead = [r for r in live if r[0] != holder and (int(r[2]) or int(r[1]) < int(mine[1]))]
        if ahead:
            if not int(mine[2]):
                self.conn.execute(
                    "UPDATE merge_leases SET expires_at=? WHERE agent=? AND name=? AND holder=?",
                    (now_s + wait_ttl_s, agent, name, holder),
                )
            return min(float(r[3]) for r in ahead)
        self.conn.execute(
            "UPDATE merge_leases SET holding=1, expires_at=? WHERE agent=? AND name=? AND holder=?",
            (now_s + lease_s, agent, name, holder),
        )
        return None

    def release_merge_lease(self, agent: str, name: str, holder: str) -> None:
        """Remove `holder`'s lease or place in the queue for `name` (nothing if it has none)."""
        self.conn.execute(
            "DELETE FROM merge_leases WHERE agent=? AND name=? AND holder=?", (agent, name, holder)
        )

    def record_extraction(self, record: ExtractionRecord) -> None:
        """Upsert one turn's extraction outcome."""
        self.conn.execute(
            "INSERT OR REPLACE INTO extractions (agent, session_id, turn_id, outcome, retryable, "
            "candidates, written, dropped, detail, attempted_at) VALUES (?,?,?,?,?,?,?,?,?,?)",
            record.to_row(),
        )

    # (issue 14) the Studio's resolve reads the ledger inside its transaction.

    def ledger(self, agent: str, name: str) -> Sequence[Sighting]:
        """The sightings of `name`, oldest first."""
        rows = self.conn.execute(
            "SELECT session_id, turn_id, outcome, seen_at FROM sightings "
            "WHERE agent=? AND name=? ORDER BY seen_at, session_id, turn_id",
            (agent, name),
        )
        return [Sighting(s, t, o, at) for s, t, o, at in rows]


def _params(*values: Any) -> list[Any]:
    """SQL parameters, a list to append to (typed here: `SQLiteStore.list` hides the builtin)."""
    return list(values)
