"""The shared backend: one PostgreSQL database for many replicas, one schema per tenant.

A ``postgresql://`` URL (``--database``, ``Memory(database=...)``,
``$INSIKA_DATABASE_URL``) selects it. Each tenant is a schema, with its pool and
migrations (`insika_knowledge.store.postgres.database`). The reads, writes and operator edits
are the backend-neutral ones (`insika_knowledge.store.concept_reads`,
`insika_knowledge.store.concepts`); this module keeps what is PostgreSQL's own: the
full-text columns, the per-agent change feed, and reads of many rows in one statement.

Write discipline: row locks, not SERIALIZABLE. A write transaction runs in READ COMMITTED
and, before its first read or write of a concept, takes a transaction-scoped advisory
lock on that concept's key (tenant, agent, name), held until commit. Every writer of a
concept queues on that lock, and once it holds it each statement sees every committed
write of the concept, so N replicas sighting one name count every sighting and create one
row: what ``BEGIN IMMEDIATE`` gives the SQLite store, per concept instead of per file.
Why not SERIALIZABLE with retry: a write transaction is the caller's ``with`` block
(consolidation decides inside it), which a context manager cannot replay, so a
serialization failure would need a retry loop in every caller; under contention (many
replicas confirming one popular concept) it would also abort and redo work that a lock
simply queues. A key that does not exist yet is locked the same way (a row lock could not
lock an absent row). The per-agent ``generations`` row, which every concept write bumps,
serialises the writes of one agent from their first row change to their commit: so the
change feed's ids grow in commit order per agent (`changes_since` reads per agent),
and writers of one agent never deadlock on the vocabulary rows the triggers update.
Procedure writes that read and rewrite counts take one tenant-wide procedures lock.

Full text: `insika_knowledge.store.postgres.fts` (tsvector + GIN, BM25 with the agent's own
statistics). The index is built with the `Tokenizer` the index layer gives the store; a
store without one works (rows stay unindexed) until the index has been built, after
which a write without the tokenizer is refused, as on SQLite.
"""


from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import ClassVar, Final

from insika_knowledge.concept import Concept, utc_now
from insika_knowledge.errors import UserError
from insika_knowledge.store.base import ExtractionRecord, ScanRow, StoredConcept, Tokenizer
from insika_knowledge.store.concept_reads import ConceptReads
from insika_knowledge.store.concepts import EXTRACTION_COLUMNS, WRITE_COLUMNS, ConceptWrites, concept_values
from insika_knowledge.store.outbox import Outbox
from insika_knowledge.store.postgres import fts as pg_fts
from insika_knowledge.store.postgres.database import POOL_SIZE, PgDatabase, PgWriter
from insika_knowledge.store.rows import CONCEPT_COLUMNS, SCAN_COLUMNS, row_to_stored, scan_row
from insika_knowledge.store.snapshots import Snapshots
from insika_knowledge.store.statements import POSTGRESQL, Dialect, marks
from insika_knowledge.store.vectors import Vectors

_BATCH: Final = 500


# ---------------------------------------------------------------------------- the concept store


class PostgresStore(PgDatabase, ConceptReads, Snapshots, Vectors):
    """The concepts of every agent of one tenant, in its schema of a PostgreSQL database.

    Args:
        url: a ``postgresql://`` URL.
        tenant: the tenant (its schema: `schema_for`).
        clock: returns the current UTC time as ``YYYY-MM-DDTHH:MM:SSZ``; tests inject one.
        tokenizer: what the full-text index is built with (the index layer's
            `insika_knowledge.index.tokenizer.TOKENIZER`); None = no full-text index until
            `register_tokenizer` is called. With one, rows not yet indexed (or indexed
            under another analysis version) are indexed before the constructor returns.
        pool_size: connections kept at most.

    Raises:
        InvalidName: the tenant name is invalid.
        UserError: the database cannot be reached or written.
        RunTimeFailure: the database failed while the schema was written.
    """

    def __init__(self, url: str, tenant: str = "default", *, clock: Callable[[], str] = utc_now,
                 tokenizer: Tokenizer | None = None, pool_size: int = POOL_SIZE):
        super().__init__(url, tenant, clock=clock, pool_size=pool_size)
        self._tokenizer: Tokenizer | None = None
        self._fts_lock = threading.Lock()
        self._fts_ready = False
        if tokenizer is not None:
            self.register_tokenizer(tokenizer)

    def file_problem(self) -> str | None:
        """Always None: a PostgreSQL store has no database file to be deleted or replaced."""
        return None

    # ------------------------------------------------------------------ full text (setup)

    @property
    def fts_ready(self) -> bool:
        """True once the tokenizer is registered and every row is indexed with its version."""
        return self._fts_ready

    def register_tokenizer(self, tokenizer: Tokenizer) -> bool:
        """Give the store what its full-text index is built with; index what needs it.

        Under an advisory lock (replicas opening together index once): every row when
        the recorded analysis version differs, else the rows not indexed yet. Calling it
        again with the same tokenizer costs nothing.

        Returns:
            True (PostgreSQL always has full text).

        Raises:
            RunTimeFailure: the database failed while indexing.
            UserError: the login may not write.
        """
        with self._fts_lock:
            if self._fts_ready and tokenizer is self._tokenizer:
                return True
            self._tokenizer = tokenizer
            self._index_rows(tokenizer)
            self._fts_ready = True
            return True

    def _index_rows(self, tokenizer: Tokenizer) -> None:
        version = str(tokenizer.version)
        with self.write() as w:
            w.lock("fts")
            recorded = w.row("SELECT value FROM meta WHERE key = %s", (pg_fts.ANALYSIS_KEY,))
            where = "" if recorded is None or recorded[0] != version else " WHERE tsv IS NULL"
            last = 0
            while True:
                batch = w.rows(
                    "SELECT id, name, description, body FROM concepts"
                    + (where + " AND" if where else " WHERE") + " id > %s ORDER BY id LIMIT %s",
                    (last, _BATCH),
                )
                if not batch:
                    break
                last = int(batch[-1][0])
                ids, names, literals, lengths = [], [], [], []
                for cid, name, description, body in batch:
                    literal, length = pg_fts.document((name, description, body), tokenizer)
                    ids.append(int(cid))
                    names.append(name)
                    literals.append(literal)
                    lengths.append(length)
                w.execute(
                    "UPDATE concepts c SET tsv = v.tsv::tsvector, doc_len = v.len "
                    "FROM unnest(%s::bigint[], %s::text[], %s::text[], %s::int[]) AS v(id, name, tsv, len) "
                    "WHERE c.id = v.id AND c.name = v.name",
                    (ids, names, literals, lengths),
                )
            w.execute(
                "INSERT INTO meta (key, value) VALUES (%s, %s) "
                "ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value",
                (pg_fts.ANALYSIS_KEY, version),
            )

    def _document(self, concept: Concept, writer: PgWriter) -> tuple[str | None, int | None]:
        """The tsvector literal and length of `concept`; (None, None) before any index exists.

        Raises:
            UserError: the index exists but this store was given no tokenizer.
        """
        tokenizer = self._tokenizer
        if tokenizer is None:
            if writer.row("SELECT 1 FROM meta WHERE key = %s", (pg_fts.ANALYSIS_KEY,)) is not None:
                raise UserError(
                    f"{self.where} has a full-text index, which needs the analyser to index "
                    "this write: open the store through Memory, or pass "
                    "tokenizer=insika_knowledge.index.tokenizer.TOKENIZER"
                )
            return None, None
        return pg_fts.document((concept.name, concept.description, concept.body), tokenizer)

    def outbox(self) -> Outbox:
        """This tenant's extraction outbox (``sql/postgres/008_outbox.sql``; see `store.outbox`)."""
        return Outbox(self)

    @contextmanager
    def transaction(self) -> Iterator[Transaction]:
        """A write transaction over the concepts (key locks: see the module doc).

        Raises:
            RunTimeFailure: the database failed (disk full, connection lost, deadlock).
            UserError: the login may not write.
        """
        with self.write() as w:
            yield Transaction(w, self.clock, self._document)

    def _stored_by_ids(self, ids: Sequence[int]) -> list[StoredConcept]:
        """The records of `ids`, in order, in one statement (a deleted one is skipped)."""
        if not ids:
            return []
        found = {int(r[0]): row_to_stored(r) for r in self.rows(
            f"SELECT {CONCEPT_COLUMNS} FROM concepts WHERE id = ANY(%s)", (list(ids),))}
        return [found[c] for c in ids if c in found]

    def scan_rows(self, agent: str, ids: list[int] | None = None) -> Iterator[ScanRow]:
        """What the read cache needs of each concept, all of `agent` or only `ids`."""
        if ids is None:
            rows = self.rows(f"SELECT {SCAN_COLUMNS} FROM concepts WHERE agent = %s", (agent,))
        else:
            rows = self.rows(f"SELECT {SCAN_COLUMNS} FROM concepts WHERE agent = %s AND id = ANY(%s)",
                             (agent, ids))
        return iter([scan_row(r) for r in rows])

    def version_cursor(self, agent: str) -> int:
        """The id of `agent`'s newest ``concept_versions`` row: a change-feed position.

        Per agent: an agent's version ids grow in commit order (see the module doc); the
        ids of different agents' concurrent transactions do not.
        """
        return int(self.scalar(
            "SELECT coalesce(max(id), 0) FROM concept_versions WHERE agent = %s", (agent,)))

    def changes_since(self, agent: str, cursor: int) -> tuple[int, set[str]]:
        """Names of `agent`'s concepts written after `cursor`, and the new cursor."""
        rows = self.rows("SELECT id, name FROM concept_versions WHERE agent = %s AND id > %s "
                         "ORDER BY id", (agent, cursor))
        if not rows:
            return cursor, set()
        return int(rows[-1][0]), {str(r[1]) for r in rows}

    def scan_rows_by_names(self, agent: str, names: list[str]) -> Iterator[ScanRow]:
        """`scan_rows` for the concepts called `names`, in that order (missing names skipped)."""
        rows = {r[2]: r for r in self.rows(
            f"SELECT {SCAN_COLUMNS} FROM concepts WHERE agent = %s AND name = ANY(%s)",
            (agent, list(names)))}
        return iter([scan_row(rows[n]) for n in dict.fromkeys(names) if n in rows])

    # ------------------------------------------------------------------ full text (search)

    def fts_search(
        self, agent: str, terms: Sequence[str], limit: int, weights: tuple[float, float, float]
    ) -> list[tuple[ScanRow, float]]:
        """The best `limit` concepts of `agent` for any of the analysed `terms`, by BM25.

        Args:
            agent: the agent whose concepts are searched (BM25's statistics are its own).
            terms: analysed query terms (never raw user text); [] finds nothing.
            limit: rows to return at most.
            weights: field weights for (name, description, body).

        Returns:
            ``[(row, score), ...]`` best first; score is what SQLite's ``-bm25()`` is
            (higher is better); ties by confidence desc, updated_at desc, name.

        Raises:
            UserError: no tokenizer was registered (check `fts_ready`).
        """
        if not self._fts_ready:
            raise UserError(f"{self.where} has no full-text index yet (no tokenizer registered)")
        params = pg_fts.search_params(agent, terms, limit, weights)
        if params is None:
            return []
        rows = self.rows(pg_fts.SEARCH_SQL, params)
        return [(scan_row(r[:9]), float(r[9])) for r in rows]

    def fts_doc_freqs(self, agent: str, terms: Sequence[str]) -> dict[str, int]:
        """How many of `agent`'s concepts hold each of `terms`; absent terms are omitted."""
        if not terms:
            return {}
        return {str(t): int(d) for t, d in self.rows(
            "SELECT term, docs FROM concept_terms WHERE agent = %s AND term = ANY(%s) AND docs > 0",
            (agent, list(terms)))}

    def fts_vocabulary(self, agent: str) -> dict[str, int]:
        """Every term of `agent`'s concepts with its document frequency (one range read)."""
        return {str(t): int(d) for t, d in self.rows(
            "SELECT term, docs FROM concept_terms WHERE agent = %s AND docs > 0", (agent,))}

    def fts_optimize(self) -> None:
        """Vacuum and analyse the concepts (after bulk loads: the GIN index's pending list
        is merged and the planner's statistics refreshed).
        """
        self.autocommit("VACUUM (ANALYZE) concepts")
        self.autocommit("ANALYZE concept_terms")

    def extractions_of(
        self, agent: str, turns: Sequence[tuple[str, str]]
    ) -> dict[tuple[str, str], ExtractionRecord]:
        """The recorded extraction of each ``(session_id, turn_id)`` in `turns` that has one."""
        wanted = list(dict.fromkeys(turns))
        if not wanted:
            return {}
        rows = self.rows(
            f"SELECT {EXTRACTION_COLUMNS} FROM extractions e "
            "JOIN unnest(%s::text[], %s::text[]) AS w(session_id, turn_id) "
            "USING (session_id, turn_id) WHERE e.agent = %s",
            ([s for s, _ in wanted], [t for _, t in wanted], agent),
        )
        return {(r[1], r[2]): ExtractionRecord.from_row(r) for r in rows}



@dataclass
class Transaction(ConceptWrites):
    """The writes (and consistent reads) of one PostgreSQL write transaction.

    Every statement is `ConceptWrites`' but the concept row's own upsert, which keeps the
    row's full-text columns when its text did not change since this transaction read it.
    Every method naming a concept first takes that concept's key lock (`PgWriter.lock`),
    so what it reads is the latest committed state and stays so until commit.
    """

    sql: PgWriter
    clock: Callable[[], str]
    document: Callable[[Concept, PgWriter], tuple[str | None, int | None]]
    _seen: dict[tuple[str, str], StoredConcept] = field(default_factory=dict)
    dialect: ClassVar[Dialect] = POSTGRESQL

    def _saw(self, agent: str, name: str, stored: StoredConcept | None) -> None:
        if stored is None:
            self._seen.pop((agent, name), None)
        else:
            self._seen[(agent, name)] = stored

    def purge(self, agent: str, name: str) -> int:
        """`ConceptWrites.purge`, and the agent's terms no concept holds any more dropped from
        the document frequencies (`concept_terms`: a term row outlives its last concept with
        ``docs`` 0, and would keep the erased concept's words).
        """
        erased = super().purge(agent, name)
        self.sql.execute("DELETE FROM concept_terms WHERE agent = ? AND docs <= 0", (agent,))
        return erased

    def _upsert(self, agent: str, concept: Concept, number: int) -> StoredConcept:
        seen = self._seen.get((agent, concept.name))
        keep = seen is not None and (seen.concept.name, seen.concept.description, seen.concept.body) \
            == (concept.name, concept.description, concept.body)
        tsv, length = (None, None) if keep else self.document(concept, self.sql)
        row = self.sql.row(_UPSERT_CONCEPT, (*concept_values(agent, concept, number), tsv, length, keep, keep))
        assert row is not None
        return row_to_stored(row)


_UPSERT_CONCEPT: Final = (
    f"INSERT INTO concepts ({WRITE_COLUMNS}, tsv, doc_len) VALUES ({marks(13)}, ?::tsvector, ?) "
    "ON CONFLICT (agent, name) DO UPDATE SET "
    + ", ".join(f"{c} = EXCLUDED.{c}" for c in WRITE_COLUMNS.split(", ")[:11])
    + ", tsv = CASE WHEN ? THEN concepts.tsv ELSE EXCLUDED.tsv END, "
    "doc_len = CASE WHEN ? THEN concepts.doc_len ELSE EXCLUDED.doc_len END "
    f"RETURNING {CONCEPT_COLUMNS}"
)
