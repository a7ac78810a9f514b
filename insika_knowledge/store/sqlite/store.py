"""The embedded store: one SQLite database file per tenant, through apsw.

Every write runs in a ``BEGIN IMMEDIATE`` transaction and writes a row of
``concept_versions``; triggers bump the agent's generation number on every change. The
reads, writes and operator edits are the backend-neutral ones
(`insika_knowledge.store.concept_reads`, `insika_knowledge.store.concepts`); this module
keeps what is SQLite's own: connections, FTS5, the change feed and delta-packed versions.
Each thread gets its own connection (apsw connections are not shared across threads
here), in WAL mode with a busy timeout, so readers never block the writer.

Full text: the FTS5 index is built with the `Tokenizer` the index layer gives the store
(`tokenizer=` or `register_tokenizer`); this module never analyses text. Without one, the
store works without the index (FTS5 migrations stay pending), and a write that the index
would have to re-tokenise fails with a `UserError` that says how to give it one.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Final

import apsw

from insika_knowledge.concept import Concept, utc_now
from insika_knowledge.errors import UserError
from insika_knowledge.store.base import ExtractionRecord, ScanRow, StoredConcept, Tokenizer
from insika_knowledge.store.concept_reads import ConceptReads
from insika_knowledge.store.concepts import EXTRACTION_COLUMNS, WRITE_COLUMNS, ConceptWrites, concept_values
from insika_knowledge.store.outbox import Outbox
from insika_knowledge.store.rows import CONCEPT_COLUMNS, SCAN_COLUMNS, row_to_stored, scan_row
from insika_knowledge.store.sqlite import fts, migrations
from insika_knowledge.store.sqlite.database import ApswStatements, Database
from insika_knowledge.store.sqlite.faults import mapped_errors
from insika_knowledge.store.sqlite.snapshots import SQLiteSnapshots
from insika_knowledge.store.statements import SQLITE, Dialect, scalar, upsert
from insika_knowledge.store.vectors import Vectors


@mapped_errors  # no raw apsw error leaves a public method (see store.sqlite.faults)
class SQLiteStore(Database, ConceptReads, SQLiteSnapshots, Vectors):
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
        StorageBusy, UserError, StorageError: as `Database` does when the file cannot be
            opened or migrated (the message names the path).
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
        """This tenant's extraction outbox (``sql/sqlite/008_outbox.sql``; see `store.outbox`)."""
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

    # ------------------------------------------------------------------ reads of SQLite's own

    def _stored_by_ids(self, ids: Sequence[int]) -> list[StoredConcept]:
        """The records of `ids`, in order, one primary-key read each (a deleted one is skipped)."""
        conn = self._conn()
        return [row_to_stored(found) for cid in ids if (found := conn.execute(
            f"SELECT {CONCEPT_COLUMNS} FROM concepts WHERE id=?", (cid,)).fetchone()) is not None]

    def scan_rows(self, agent: str, ids: list[int] | None = None) -> Iterator[ScanRow]:
        """What the read cache needs of each concept, all of `agent` or only `ids`.

        One prepared statement per shape, reused by apsw's statement cache.
        """
        sql = f"SELECT {SCAN_COLUMNS} FROM concepts WHERE "
        conn = self._conn()
        if ids is None:
            for row in conn.execute(sql + "agent=?", (agent,)):
                yield scan_row(row)
            return
        for cid in ids:
            found = conn.execute(sql + "id=? AND agent=?", (cid, agent)).fetchone()
            if found is not None:
                yield scan_row(found)

    def version_cursor(self, agent: str) -> int:
        """The id of the newest ``concept_versions`` row (any agent): a change-feed position."""
        return int(scalar(self, "SELECT coalesce(max(id), 0) FROM concept_versions"))

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
            row = conn.execute(f"SELECT {SCAN_COLUMNS} FROM concepts WHERE agent=? AND name=?",
                               (agent, name)).fetchone()
            if row is not None:
                yield scan_row(row)


    # ------------------------------------------------------------------ full text (search)

    def fts_search(
        self, agent: str, terms: Sequence[str], limit: int, weights: tuple[float, float, float]
    ) -> list[tuple[ScanRow, float]]:
        """The best `limit` concepts of `agent` for any of the analysed `terms`, by bm25.

        Args:
            agent: the agent whose concepts are searched (only its concepts can match, and
                bm25's document frequencies are its own: see `insika_knowledge.store.sqlite.fts`).
            terms: analysed query terms (never raw user text); [] finds nothing.
            limit: rows to return at most.
            weights: bm25 column weights for (name, description, body).

        Returns:
            ``[(row, score), ...]`` best first; score is the BM25 of `fts.RANK_FUNCTION`
            (``bm25()``'s formula with a positive idf; higher is better); ties by confidence
            desc, updated_at desc, name.

        Raises:
            UserError: this database has no FTS5 index (check `fts_ready`).
        """
        if not self._fts_ready:
            raise UserError(f"{self.path} has no FTS5 index")
        match = fts.match_expression(agent, terms)
        if match is None or limit <= 0:
            return []
        conn = self._conn()
        rank = fts.rank_call(agent, terms, weights, conn)  # BM25 with a positive idf (`fts._bm25`)
        # FTS5 ranks inside the virtual table (ORDER BY rank), then the few best rows are
        # joined to their concepts; the window beyond `limit` lets equal scores break ties
        # by confidence, recency and name as Scan does.
        rows: list[tuple[Any, ...]] = conn.execute(
            "SELECT c.id, c.version, c.name, c.description, c.type, c.provenance, "
            "c.confidence, c.updated_at, c.body, f.score FROM ("
            "  SELECT rowid AS rid, rank AS score FROM concepts_fts "
            "  WHERE concepts_fts MATCH ? AND rank MATCH ? ORDER BY rank LIMIT ?"
            ") AS f CROSS JOIN concepts AS c ON c.id = f.rid WHERE c.agent = ? "
            "ORDER BY f.score, c.confidence DESC, c.updated_at DESC, c.name LIMIT ?",
            (match, rank, max(4 * limit, 32), agent, limit),
        ).fetchall()
        return [(scan_row(r[:9]), -float(r[9])) for r in rows]

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
                f"SELECT {EXTRACTION_COLUMNS} FROM extractions WHERE agent=? AND session_id=? AND turn_id=?",
                (agent, session_id, turn_id),
            ).fetchone()
            if row is not None:
                out[(session_id, turn_id)] = ExtractionRecord.from_row(row)
        return out


@dataclass
class Transaction(ConceptWrites):
    """The writes (and consistent reads) inside one ``BEGIN IMMEDIATE`` transaction.

    Every statement is `ConceptWrites`' but the concept row's own upsert; version rows
    between snapshots are packed as deltas (`insika_knowledge.store.versions`).
    """

    conn: apsw.Connection
    clock: Callable[[], str]
    sql: ApswStatements = field(init=False)
    PACKS_VERSIONS: ClassVar[bool] = True
    dialect: ClassVar[Dialect] = SQLITE

    def __post_init__(self) -> None:
        self.sql = ApswStatements(self.conn)

    def _upsert(self, agent: str, concept: Concept, number: int) -> StoredConcept:
        self.conn.execute(_UPSERT_CONCEPT, concept_values(agent, concept, number))
        stored = self.get(agent, concept.name)
        assert stored is not None
        return stored

    def purge(self, agent: str, name: str) -> int:
        """`ConceptWrites.purge`, with the full-text index told to erase what it deletes
        (FTS5's ``secure-delete``), then merged into one segment (``optimize``): no page of
        the index keeps the erased row's terms (without the merge, 3 of its 5 terms were
        still in the file). Where the index exists.
        """
        fts = self.sql.row("SELECT 1 FROM sqlite_master WHERE name = 'concepts_fts'") is not None
        if fts:
            self.conn.execute("INSERT INTO concepts_fts (concepts_fts, rank) VALUES ('secure-delete', 1)")
        erased = super().purge(agent, name)
        if fts:  # the segments merged into one: no page keeps the erased row's terms
            self.conn.execute("INSERT INTO concepts_fts (concepts_fts) VALUES ('optimize')")
        return erased


_UPSERT_CONCEPT: Final = upsert("concepts", WRITE_COLUMNS, "agent, name")
