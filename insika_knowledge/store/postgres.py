"""The shared backend: one PostgreSQL database for many replicas, one schema per tenant.

A ``postgresql://`` URL (``--database``, ``Memory(database=...)``,
``$INSIKA_DATABASE_URL``) selects it; this is the only module that imports psycopg.
Each tenant is a schema (`schema_for`: ``insika_<tenant>``), created and brought up to
date at open by the numbered migrations of ``sql/postgres/``, all pending ones in one
transaction under an advisory lock, so replicas starting together migrate once. Each
store keeps a `psycopg_pool` pool of autocommit connections whose ``search_path`` is the
tenant's schema; a read is one statement, a write one transaction.

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

Full text: `insika_knowledge.store.pg_fts` (tsvector + GIN, BM25 with the agent's own
statistics). The index is built with the `Tokenizer` the index layer gives the store; a
store without one works (rows stay unindexed) until the index has been built, after
which a write without the tokenizer is refused, as on SQLite.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import psycopg
import psycopg.errors
import psycopg_pool
from psycopg import sql
from psycopg.rows import TupleRow

from insika_knowledge.concept import Concept, check_name, parse, serialize, utc_now
from insika_knowledge.errors import (
    NotFound,
    RunTimeFailure,
    StaleVersion,
    StorageBusy,
    StorageFull,
    UserError,
)
from insika_knowledge.store import migrations, pg_fts
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
from insika_knowledge.store.paths import check_agent, check_tenant
from insika_knowledge.store.pg_naming import PgNamingReads, PgNamingWrites
from insika_knowledge.store.pg_outbox import PgOutbox
from insika_knowledge.store.rows import (
    CONCEPT_COLUMNS,
    SCAN_COLUMNS,
    Keyed,
    check_operator,
    row_to_stored,
    scan_row,
    sort_keyed,
)

#: Schema names: ``insika_<tenant>``; a tenant too long for PostgreSQL's 63-byte names
#: keeps its first 40 characters, then ``~`` (never in a tenant name) and a digest.
SCHEMA_PREFIX: Final = "insika_"
_MAX_IDENTIFIER: Final = 63
#: How a tenant's schema is labelled (`tenants` lists the schemas carrying it).
_COMMENT_PREFIX: Final = "insika-knowledge tenant: "
#: Connections a store's pool keeps at most.
POOL_SIZE: Final = 8
#: Seconds to wait for the server when opening, and for a free pooled connection.
CONNECT_TIMEOUT_S: Final = 10
POOL_TIMEOUT_S: Final = 30.0
_SEPARATOR: Final = "\x1f"
_BATCH: Final = 500

Conn = psycopg.Connection[TupleRow]


def schema_for(tenant: str) -> str:
    """The schema holding `tenant` (``insika_<tenant>``, shortened past 63 bytes).

    Raises:
        InvalidName: the tenant name is not valid (see `check_tenant`).
    """
    import hashlib

    name = SCHEMA_PREFIX + check_tenant(tenant)
    if len(name) <= _MAX_IDENTIFIER:
        return name
    digest = hashlib.blake2b(tenant.encode(), digest_size=6).hexdigest()
    return f"{SCHEMA_PREFIX}{tenant[:40]}~{digest}"


def redact(url: str) -> str:
    """`url` without its password (for messages)."""
    url = re.sub(r"(://[^:/@]*:)[^@/]*@", r"\1***@", url)
    return re.sub(r"(password=)[^&\s]*", r"\1***", url)


def _connect(url: str) -> Conn:
    """One autocommit connection to `url`.

    Raises:
        UserError: the server cannot be reached or refuses the login (the message names
            the URL without its password).
    """
    try:
        return psycopg.connect(url, autocommit=True, connect_timeout=CONNECT_TIMEOUT_S)
    except psycopg.Error as exc:
        raise UserError(f"cannot connect to the database {redact(url)}: {exc}".strip()) from None


def tenants(url: str) -> list[str]:
    """Tenants that have a schema in the database at `url`, sorted.

    Raises:
        UserError: the database cannot be reached.
    """
    with _connect(url) as conn:
        rows = conn.execute(
            "SELECT obj_description(oid, 'pg_namespace') FROM pg_namespace "
            "WHERE starts_with(nspname, %s)", (SCHEMA_PREFIX,),
        ).fetchall()
    found = [str(r[0])[len(_COMMENT_PREFIX):] for r in rows
             if r[0] is not None and str(r[0]).startswith(_COMMENT_PREFIX)]
    return sorted(t for t in found if _valid_tenant(t))


def has_tenant(url: str, tenant: str) -> bool:
    """True when `tenant` has a schema in the database at `url` (nothing is created).

    Raises:
        InvalidName: the tenant name is not valid.
        UserError: the database cannot be reached.
    """
    schema = schema_for(tenant)
    with _connect(url) as conn:
        row = conn.execute("SELECT 1 FROM pg_namespace WHERE nspname = %s", (schema,)).fetchone()
    return row is not None


def _valid_tenant(name: str) -> bool:
    try:
        check_tenant(name)
    except UserError:
        return False
    return True


def migrations_dir() -> Path:
    """The folder of the PostgreSQL migrations (``sql/postgres``)."""
    return migrations.sql_dir() / "postgres"


def pg_migrations() -> list[migrations.Migration]:
    """The PostgreSQL migrations, in number order."""
    files = sorted(p for p in migrations_dir().iterdir() if re.fullmatch(r"\d{3}_[a-z0-9_]+\.sql", p.name))
    return [migrations.Migration(p.stem, p.read_text(encoding="utf-8")) for p in files]


def _lock_sql() -> sql.SQL:
    return sql.SQL("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))")


def migrate(conn: Conn, schema: str, tenant: str) -> list[str]:
    """Create `schema` if needed and apply its pending migrations, in one transaction.

    The transaction first takes an advisory lock on the schema's name, then reads what is
    applied: processes opening the same tenant together wait, and the later ones find
    nothing left to do.

    Returns:
        Names of the migrations this call applied.
    """
    wanted = pg_migrations()
    done: list[str] = []
    if _applied(conn, schema) >= {m.name for m in wanted}:
        return done
    with conn.transaction():
        conn.execute(_lock_sql(), ("insika-migrate" + _SEPARATOR + schema,))
        conn.execute(sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(sql.Identifier(schema)))
        conn.execute(sql.SQL("COMMENT ON SCHEMA {} IS {}").format(
            sql.Identifier(schema), sql.Literal(_COMMENT_PREFIX + tenant)))
        conn.execute(sql.SQL("SET LOCAL search_path TO {}").format(sql.Identifier(schema)))
        conn.execute(f"CREATE TABLE IF NOT EXISTS {migrations.MIGRATIONS_TABLE} ("
                     "name text PRIMARY KEY, applied_at text NOT NULL)")
        applied = {r[0] for r in conn.execute(f"SELECT name FROM {migrations.MIGRATIONS_TABLE}")}
        for migration in wanted:
            if migration.name in applied:
                continue
            conn.execute(migration.sql.encode())
            conn.execute(
                f"INSERT INTO {migrations.MIGRATIONS_TABLE} (name, applied_at) VALUES "
                "(%s, to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'))",
                (migration.name,),
            )
            done.append(migration.name)
    return done


def _applied(conn: Conn, schema: str) -> set[str]:
    """Migrations recorded in `schema` (empty when it or its table does not exist)."""
    qualified = sql.Identifier(schema).as_string(conn) + "." + migrations.MIGRATIONS_TABLE
    exists = conn.execute("SELECT to_regclass(%s)", (qualified,)).fetchone()
    if exists is None or exists[0] is None:
        return set()
    query = sql.SQL("SELECT name FROM {}.{}").format(
        sql.Identifier(schema), sql.Identifier(migrations.MIGRATIONS_TABLE))
    return {str(r[0]) for r in conn.execute(query)}


class PgWriter:
    """Statements inside one write transaction of a `PgDatabase` (READ COMMITTED)."""

    def __init__(self, conn: Conn, schema: str):
        self.conn = conn
        self.schema = schema
        self._locked: set[str] = set()

    def rows(self, query: str, params: Sequence[Any] | dict[str, Any] = ()) -> list[tuple[Any, ...]]:
        """Every row `query` returns."""
        return self.conn.execute(query, params).fetchall()

    def row(self, query: str, params: Sequence[Any] | dict[str, Any] = ()) -> tuple[Any, ...] | None:
        """The first row `query` returns, or None."""
        return self.conn.execute(query, params).fetchone()

    def execute(self, query: str, params: Sequence[Any] | dict[str, Any] = ()) -> int:
        """Run `query`; how many rows it changed."""
        return self.conn.execute(query, params).rowcount

    def lock(self, *key: str) -> None:
        """Hold the advisory lock on (tenant, `key`...) until this transaction ends (once per key)."""
        text = _SEPARATOR.join((self.schema, *key))
        if text in self._locked:
            return
        self.conn.execute(_lock_sql(), (text,))
        self._locked.add(text)


class PgDatabase:
    """One tenant's schema in a PostgreSQL database: a connection pool, migrated on open.

    Args:
        url: a ``postgresql://`` URL (libpq's URL or key=value form).
        tenant: the tenant; its schema is `schema_for` (created if missing).
        clock: returns the current UTC time as ``YYYY-MM-DDTHH:MM:SSZ``.
        pool_size: connections kept at most.

    Raises:
        InvalidName: the tenant name is invalid.
        UserError: the database cannot be reached, or the login may not create the schema.
        RunTimeFailure: the database failed while the schema was written.
    """

    def __init__(self, url: str, tenant: str = "default", *, clock: Callable[[], str] = utc_now,
                 pool_size: int = POOL_SIZE):
        self.url = url
        self.tenant = check_tenant(tenant)
        self.schema = schema_for(tenant)
        self.clock = clock
        self.where = f"{redact(url)} (schema {self.schema})"
        self._local = threading.local()
        with self._errors(), _connect(url) as conn:
            migrate(conn, self.schema, self.tenant)
        self._pool: psycopg_pool.ConnectionPool[Conn] = psycopg_pool.ConnectionPool(
            url, min_size=1, max_size=max(1, pool_size), open=True, timeout=POOL_TIMEOUT_S,
            kwargs={"autocommit": True, "connect_timeout": CONNECT_TIMEOUT_S},
            configure=self._configure, name=f"insika-{self.tenant}",
        )

    def _configure(self, conn: Conn) -> None:
        conn.execute(sql.SQL("SET search_path TO {}").format(sql.Identifier(self.schema)))

    def close(self) -> None:
        """Close the pool (every connection this store opened)."""
        self._pool.close()

    def __enter__(self) -> PgDatabase:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def _errors(self) -> Iterator[None]:
        """Turn the database's failures into the library's errors, naming the database.

        A full disk, a lost connection, a deadlock or a pool with no free connection is a
        `RunTimeFailure`; a login that may not write is a `UserError`.
        """
        try:
            yield
        except psycopg.errors.LockNotAvailable:
            waited = getattr(self._local, "waited_ms", 0)
            raise StorageBusy(f"the database {self.where} was busy beyond {waited} ms",
                              path=self.where, waited_ms=float(waited)) from None
        except psycopg.errors.DiskFull:
            raise StorageFull(f"disk full writing {self.where}", path=self.where) from None
        except (psycopg.errors.InsufficientPrivilege, psycopg.errors.ReadOnlySqlTransaction) as exc:
            raise UserError(f"cannot write the database {self.where}: {exc}") from None
        except psycopg.OperationalError as exc:
            raise RunTimeFailure(f"database error on {self.where}: {exc}") from None
        except psycopg_pool.PoolTimeout as exc:
            raise RunTimeFailure(f"no free connection to {self.where}: {exc}") from None

    def rows(self, query: str, params: Sequence[Any] | dict[str, Any] = ()) -> list[tuple[Any, ...]]:
        """Every row one read statement returns."""
        with self._errors(), self._pool.connection() as conn:
            return conn.execute(query, params).fetchall()

    def row(self, query: str, params: Sequence[Any] | dict[str, Any] = ()) -> tuple[Any, ...] | None:
        """The first row one read statement returns, or None."""
        with self._errors(), self._pool.connection() as conn:
            return conn.execute(query, params).fetchone()

    def scalar(self, query: str, params: Sequence[Any] | dict[str, Any] = ()) -> Any:
        """The first column of the one row an aggregate query returns."""
        found = self.row(query, params)
        assert found is not None, query  # count(*), max(...) and coalesce(...) return a row
        return found[0]

    @property
    def location(self) -> str:
        """Where the data lives, for messages: the URL without its password, and the schema."""
        return self.where

    @contextmanager
    def busy_budget(self, budget_ms: int) -> Iterator[None]:
        """Within the block, this thread's write transactions wait at most `budget_ms` for a lock.

        The PostgreSQL counterpart of `Database.busy_budget`: each write transaction begun
        in the block sets ``lock_timeout`` (row and advisory locks); reads take no lock
        under MVCC, so they never wait.

        Args:
            budget_ms: the longest wait for a lock, in milliseconds (>= 0).

        Raises:
            StorageBusy: (inside the block) a lock stayed busy beyond the budget.
        """
        previous = getattr(self._local, "budget_ms", None)
        self._local.budget_ms = budget_ms
        try:
            yield
        finally:
            self._local.budget_ms = previous

    @contextmanager
    def write(self, busy_timeout_ms: int | None = None) -> Iterator[PgWriter]:
        """One write transaction: commits on exit, rolls back on error.

        Args:
            busy_timeout_ms: the longest wait for a lock, in milliseconds (None: the
                thread's `busy_budget`, else no limit).

        Raises:
            StorageBusy: a lock stayed busy beyond the budget.
            RunTimeFailure: the disk is full, the connection was lost, or a deadlock.
            UserError: the login may not write.
        """
        budget = busy_timeout_ms if busy_timeout_ms is not None else getattr(self._local, "budget_ms", None)
        with self._errors(), self._pool.connection() as conn, conn.transaction():
            if budget is not None:
                self._local.waited_ms = budget
                # lock_timeout 0 would mean no limit: the smallest budget is 1 ms.
                conn.execute(sql.SQL("SET LOCAL lock_timeout = {}").format(
                    sql.Literal(f"{max(1, int(budget))}ms")))
            yield PgWriter(conn, self.schema)

    def autocommit(self, query: str) -> None:
        """Run one statement outside a transaction (``VACUUM``)."""
        with self._errors(), self._pool.connection() as conn:
            conn.execute(query)


# ---------------------------------------------------------------------------- the concept store


class PostgresStore(PgDatabase, PgNamingReads):
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

    def outbox(self) -> PgOutbox:
        """This tenant's extraction outbox (``sql/postgres/004_outbox.sql``; see `store.pg_outbox`)."""
        return PgOutbox(self)

    @contextmanager
    def transaction(self) -> Iterator[Transaction]:
        """A write transaction over the concepts (key locks: see the module doc).

        Raises:
            RunTimeFailure: the database failed (disk full, connection lost, deadlock).
            UserError: the login may not write.
        """
        with self.write() as w:
            yield Transaction(w, self.clock, self._document)

    # ------------------------------------------------------------------ reads

    def get(self, agent: str, name: str) -> StoredConcept | None:
        """The current record of `name` for `agent`, or None (deleted or never written)."""
        row = self.row(f"SELECT {CONCEPT_COLUMNS} FROM concepts WHERE agent = %s AND name = %s",
                       (agent, name))
        return row_to_stored(row) if row else None

    def list_concepts(self, agent: str) -> list[StoredConcept]:
        """Every current concept of `agent`, by name."""
        rows = self.rows(f"SELECT {CONCEPT_COLUMNS} FROM concepts WHERE agent = %s ORDER BY name",
                         (agent,))
        return [row_to_stored(r) for r in rows]

    def names(self, agent: str) -> list[str]:
        """Names of the current concepts of `agent`, sorted."""
        return [r[0] for r in self.rows("SELECT name FROM concepts WHERE agent = %s ORDER BY name",
                                        (agent,))]

    def agents(self) -> list[str]:
        """Agents with at least one concept or version in this tenant, sorted."""
        return [r[0] for r in self.rows(
            "SELECT agent FROM concepts UNION SELECT agent FROM concept_versions ORDER BY 1")]

    def count(self, agent: str) -> int:
        """How many current concepts `agent` has."""
        return int(self.scalar("SELECT count(*) FROM concepts WHERE agent = %s", (agent,)))

    def generation(self, agent: str) -> int:
        """The agent's generation number: it changes whenever any of its concepts does.

        One indexed lookup, seen by every replica; 0 for an agent that never had a concept.
        """
        row = self.row("SELECT generation FROM generations WHERE agent = %s", (agent,))
        return int(row[0]) if row else 0

    def scan_versions(self, agent: str) -> dict[int, int]:
        """``{concept id: version}`` for every current concept of `agent` (cache refresh)."""
        return {int(i): int(v) for i, v in self.rows(
            "SELECT id, version FROM concepts WHERE agent = %s", (agent,))}

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

        Same contract as `SQLiteStore.page`.

        Raises:
            UserError: `sort` is not a sortable column, or offset/limit is negative.
        """
        if sort not in self.PAGE_SORTS:
            raise UserError(f"cannot sort by {sort!r}; use one of {', '.join(self.PAGE_SORTS)}")
        if offset < 0 or limit < 0:
            raise UserError("offset and limit must be >= 0")
        where = ["agent = %s"]
        params: list[Any] = [agent]
        if names is not None:
            where.append("name = ANY(%s)")
            params.append(list(names))
        scope_sql, scope_params = " AND ".join(where), list(params)
        for column, value in (("status", status), ("type", type)):
            if value is not None:
                where.append(f"{column} = %s")
                params.append(value)
        where_sql = " AND ".join(where)
        order = f"{sort} {'DESC' if desc else 'ASC'}" + ("" if sort == "name" else ", name ASC")
        rows = [row_to_stored(r) for r in self.rows(
            f"SELECT {CONCEPT_COLUMNS} FROM concepts WHERE {where_sql} ORDER BY {order} "
            "LIMIT %s OFFSET %s", (*params, limit, offset))]
        total = int(self.scalar(f"SELECT count(*) FROM concepts WHERE {where_sql}", params))
        counts: dict[str, int] = {"all": 0, "conflict": 0}
        for ctype, number, conflicts in self.rows(
            f"SELECT type, count(*), count(*) FILTER (WHERE status = 'conflict') FROM concepts "
            f"WHERE {scope_sql} GROUP BY type", scope_params,
        ):
            counts[ctype] = int(number)
            counts["all"] += int(number)
            counts["conflict"] += int(conflicts or 0)
        return rows, total, counts

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

    # ------------------------------------------------------------------ history

    _VERSION_COLUMNS: Final = "agent, name, version, reason, actor, session_id, markdown, created_at"

    def versions(self, agent: str, name: str) -> list[Version]:
        """The version history of `name`, newest first (deletes included)."""
        return [Version(*r) for r in self.rows(
            f"SELECT {self._VERSION_COLUMNS} FROM concept_versions WHERE agent = %s AND name = %s "
            "ORDER BY version DESC", (agent, name))]

    def version(self, agent: str, name: str, number: int) -> Version:
        """One version of `name`.

        Raises:
            NotFound: no such version.
        """
        row = self.row(f"SELECT {self._VERSION_COLUMNS} FROM concept_versions "
                       "WHERE agent = %s AND name = %s AND version = %s", (agent, name, number))
        if row is None:
            raise NotFound(f"concept '{name}' of agent '{agent}' has no version {number}")
        return Version(*row)

    def deleted(self, agent: str) -> list[Version]:
        """The delete version of each concept of `agent` that is deleted now, newest first."""
        return [Version(*r) for r in self.rows(
            "SELECT v.agent, v.name, v.version, v.reason, v.actor, v.session_id, v.markdown, "
            "v.created_at FROM concept_versions v "
            "WHERE v.agent = %s AND v.reason = 'delete' "
            "AND v.version = (SELECT max(version) FROM concept_versions w "
            "                 WHERE w.agent = v.agent AND w.name = v.name) "
            "AND NOT EXISTS (SELECT 1 FROM concepts c WHERE c.agent = v.agent AND c.name = v.name) "
            "ORDER BY v.created_at DESC, v.name", (agent,))]

    def sightings(self, agent: str, name: str) -> list[Sighting]:
        """The ledger of `name`: ``(session_id, turn_id, outcome, seen_at)``, oldest first."""
        return [Sighting(*r) for r in self.rows(
            "SELECT session_id, turn_id, outcome, seen_at FROM sightings "
            "WHERE agent = %s AND name = %s ORDER BY seen_at, session_id, turn_id", (agent, name))]

    _EXTRACTION_COLUMNS: Final = ("agent, session_id, turn_id, outcome, retryable, candidates, "
                                  "written, dropped, detail, attempted_at")

    def extractions(self, agent: str) -> list[ExtractionRecord]:
        """Every recorded extraction attempt of `agent`, newest first."""
        return [ExtractionRecord.from_row(r) for r in self.rows(
            f"SELECT {self._EXTRACTION_COLUMNS} FROM extractions WHERE agent = %s "
            "ORDER BY attempted_at DESC, session_id, turn_id", (agent,))]

    def extraction(self, agent: str, session_id: str, turn_id: str) -> ExtractionRecord | None:
        """The recorded extraction of one turn, or None."""
        row = self.row(f"SELECT {self._EXTRACTION_COLUMNS} FROM extractions "
                       "WHERE agent = %s AND session_id = %s AND turn_id = %s",
                       (agent, session_id, turn_id))
        return ExtractionRecord.from_row(row) if row else None

    def extractions_of(
        self, agent: str, turns: Sequence[tuple[str, str]]
    ) -> dict[tuple[str, str], ExtractionRecord]:
        """The recorded extraction of each ``(session_id, turn_id)`` in `turns` that has one."""
        wanted = list(dict.fromkeys(turns))
        if not wanted:
            return {}
        rows = self.rows(
            f"SELECT {self._EXTRACTION_COLUMNS} FROM extractions e "
            "JOIN unnest(%s::text[], %s::text[]) AS w(session_id, turn_id) "
            "USING (session_id, turn_id) WHERE e.agent = %s",
            ([s for s, _ in wanted], [t for _, t in wanted], agent),
        )
        return {(r[1], r[2]): ExtractionRecord.from_row(r) for r in rows}

    def record_extraction(self, record: ExtractionRecord) -> None:
        """Store the outcome of one turn's extraction (replacing an earlier attempt)."""
        with self.transaction() as tx:
            tx.record_extraction(record)

    # ---------------------------------------------------------------- quarantine (trust)

    def quarantined_names(self, agent: str) -> frozenset[str]:
        """Names of `agent`'s concepts held in quarantine (never injected)."""
        return frozenset(r[0] for r in self.rows("SELECT name FROM quarantine WHERE agent = %s", (agent,)))

    def quarantine_of(self, agent: str, name: str) -> Quarantine | None:
        """Why `name` is in quarantine, or None when it is not."""
        row = self.row("SELECT session_id, supported_by, markers, since FROM quarantine "
                       "WHERE agent = %s AND name = %s", (agent, name))
        if row is None:
            return None
        return Quarantine(agent=agent, name=name, session_id=row[0],
                          supported_by=tuple(json.loads(row[1])), markers=tuple(json.loads(row[2])),
                          since=row[3])

    def approve(self, agent: str, name: str, *, actor: str, expected_version: int) -> StoredConcept:
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

    def edit(self, agent: str, name: str, markdown: str, *, expected_version: int,
             actor: str) -> StoredConcept:
        """Replace `name` with an operator's `markdown` (reason ``edit``); renaming allowed.

        Raises:
            ConceptFormatError: the markdown is invalid (line and field named).
            NotFound: `name` does not exist.
            StaleVersion: the concept changed since `expected_version` was read.
            UserError: the new name belongs to another concept.
        """
        check_operator(actor, expected_version)
        concept = parse(markdown)
        with self.transaction() as tx:
            tx.current(agent, name, expected_version)
            if concept.name != name:
                if tx.get(agent, concept.name) is not None:
                    raise UserError(
                        f"line 2, field 'name': '{concept.name}' is already another concept's name"
                    )
                tx.rename(agent, name, concept.name)
            return tx.put(agent, concept.replace(updated_at=self.clock()), reason="edit", actor=actor)

    def create(self, agent: str, markdown: str, *, actor: str) -> StoredConcept:
        """Add a concept written by an operator (reason ``edit``).

        Raises:
            ConceptFormatError: the markdown is invalid.
            UserError: the name is taken.
        """
        check_operator(actor)
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
        check_operator(actor, expected_version)
        with self.transaction() as tx:
            tx.current(agent, name, expected_version)
            return tx.remove(agent, name, actor=actor)

    def restore(self, agent: str, name: str, number: int, *, actor: str,
                stamp: bool = False) -> StoredConcept:
        """Make version `number` of `name` current again, byte for byte (reason ``restore``).

        Same contract as `SQLiteStore.restore`.

        Raises:
            NotFound: no such version.
            UserError: the version is a ``delete`` marker whose bytes are not a live record.
        """
        check_operator(actor, number)
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
            return tx.put(agent, concept, reason="restore", actor=actor)

    def resolve(
        self, agent: str, name: str, choose: Callable[[Concept, Sequence[Sighting]], Concept], *,
        expected_version: int, actor: str,
    ) -> StoredConcept:
        """Resolve `name`'s conflict in one write (reason ``resolve``); see `SQLiteStore.resolve`.

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
            return tx.put(agent, concept.replace(updated_at=self.clock()), reason="resolve",
                          actor=actor)

    # ------------------------------------------------------------------ Studio queries

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

        Same contract as `SQLiteStore.concept_page`.

        Raises:
            UserError: `sort` is unknown (or ``rank`` without `ranked`), or offset/limit
                is negative.
        """
        if sort not in self.CONCEPT_PAGE_SORTS or (sort == "rank" and ranked is None):
            raise UserError(f"cannot sort by {sort!r}; use one of "
                            f"{', '.join(self.CONCEPT_PAGE_SORTS)} (rank needs ranked names)")
        if offset < 0 or limit < 0:
            raise UserError("offset and limit must be >= 0")
        scope = ["agent = %s"]
        params: list[Any] = [agent]
        if ranked is not None:
            scope.append("name = ANY(%s)")
            params.append(list(ranked))
        counts = PageCounts()
        for ctype, cstatus, cprovenance, number in self.rows(
            f"SELECT type, status, provenance, count(*) FROM concepts WHERE {' AND '.join(scope)} "
            "GROUP BY type, status, provenance", params,
        ):
            counts.add(ctype, cstatus, cprovenance, int(number))
        held = "name IN (SELECT q.name FROM quarantine q WHERE q.agent = %s)"
        counts.quarantined = int(self.scalar(
            f"SELECT count(*) FROM concepts WHERE {' AND '.join(scope)} AND {held}", [*params, agent]))
        where, filters = list(scope), list(params)
        for column, value in (("status", status), ("type", type), ("provenance", provenance)):
            if value is not None:
                where.append(f"{column} = %s")
                filters.append(value)
        if quarantined is not None:
            where.append(held if quarantined else f"NOT {held}")
            filters.append(agent)
        column = "NULL" if sort == "rank" else sort
        keyed: Keyed = [(int(i), str(n), key) for i, n, key in self.rows(
            f"SELECT id, name, {column} FROM concepts WHERE {' AND '.join(where)}", filters)]
        sort_keyed(keyed, sort, desc, ranked)
        chosen = [cid for cid, _, _ in keyed[offset:offset + limit]]
        found = {int(r[0]): row_to_stored(r) for r in self.rows(
            f"SELECT {CONCEPT_COLUMNS} FROM concepts WHERE id = ANY(%s)", (chosen,))} if chosen else {}
        # A concept deleted between the two reads leaves the page one shorter.
        return ConceptPage([found[c] for c in chosen if c in found], len(keyed), counts)

    def activity(
        self, agent: str, *, before: int | None = None, limit: int = 50,
        actor: str | None = None, reason: str | None = None,
    ) -> Sequence[Activity]:
        """`agent`'s recent changes (``concept_versions``), newest first, without the bodies.

        Raises:
            UserError: `limit` is negative.
        """
        if limit < 0:
            raise UserError("limit must be >= 0")
        where: list[str] = ["agent = %s"]
        params: list[Any] = [agent]
        for column, value in (("actor", actor), ("reason", reason)):
            if value is not None:
                where.append(f"{column} = %s")
                params.append(value)
        if before is not None:
            where.append("id < %s")
            params.append(before)
        rows = self.rows(
            "SELECT id, name, version, reason, actor, session_id, created_at FROM concept_versions "
            f"WHERE {' AND '.join(where)} ORDER BY id DESC LIMIT %s", (*params, limit))
        return [Activity(int(i), n, int(v), r, a, s, c) for i, n, v, r, a, s, c in rows]


@dataclass
class Transaction(PgNamingWrites):
    """The writes (and consistent reads) of one PostgreSQL write transaction.

    The alias and possible-duplicate rows are `PgNamingWrites`'.

    Every method naming a concept first takes that concept's key lock (`PgWriter.lock`),
    so what it reads is the latest committed state and stays so until commit.
    """

    writer: PgWriter
    clock: Callable[[], str]
    document: Callable[[Concept, PgWriter], tuple[str | None, int | None]]
    _seen: dict[tuple[str, str], StoredConcept] = field(default_factory=dict)

    def _lock(self, agent: str, name: str) -> None:
        self.writer.lock(agent, name)

    def get(self, agent: str, name: str) -> StoredConcept | None:
        """The current record of `name`, or None."""
        self._lock(agent, name)
        row = self.writer.row(f"SELECT {CONCEPT_COLUMNS} FROM concepts WHERE agent = %s AND name = %s",
                              (agent, name))
        if row is None:
            return None
        stored = self._seen[(agent, name)] = row_to_stored(row)
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

    def has_sighting(self, agent: str, name: str, session_id: str, turn_id: str) -> bool:
        """True when this (session, turn) already sighted `name` (a replay)."""
        self._lock(agent, name)
        return self.writer.row(
            "SELECT 1 FROM sightings WHERE agent = %s AND name = %s AND session_id = %s AND turn_id = %s",
            (agent, name, session_id, turn_id)) is not None

    def add_sighting(self, agent: str, name: str, session_id: str, turn_id: str, outcome: str) -> None:
        """Record one sighting in the ledger."""
        self._lock(agent, name)
        self.writer.execute(
            "INSERT INTO sightings (agent, name, session_id, turn_id, outcome, seen_at) "
            "VALUES (%s, %s, %s, %s, %s, %s)",
            (agent, name, session_id, turn_id, outcome, self.clock()))

    def supporting_sources(self, agent: str, name: str) -> list[str]:
        """Distinct sessions whose sightings support `name` (not contradictions), first first."""
        self._lock(agent, name)
        return [r[0] for r in self.writer.rows(
            "SELECT session_id FROM sightings WHERE agent = %s AND name = %s AND outcome <> 'conflict' "
            "GROUP BY session_id ORDER BY min(seen_at), session_id", (agent, name))]

    def recent_sources(self, agent: str, name: str, limit: int) -> list[str]:
        """The `limit` most recent distinct sessions supporting `name`, oldest of them first."""
        self._lock(agent, name)
        rows = self.writer.rows(
            "SELECT session_id FROM sightings WHERE agent = %s AND name = %s AND outcome <> 'conflict' "
            "GROUP BY session_id ORDER BY min(seen_at) DESC, session_id DESC LIMIT %s",
            (agent, name, limit))
        return [str(r[0]) for r in reversed(rows)]

    def source_count(self, agent: str, name: str, *, at_most: int) -> int:
        """How many distinct sessions support `name` on the ledger, counted up to `at_most`."""
        self._lock(agent, name)
        row = self.writer.row(
            "SELECT count(*) FROM (SELECT DISTINCT session_id FROM sightings "
            "WHERE agent = %s AND name = %s AND outcome <> 'conflict' LIMIT %s) AS s",
            (agent, name, at_most))
        return int(row[0]) if row is not None else 0

    def take_merge_lease(
        self, agent: str, name: str, holder: str, *, lease_s: float, wait_ttl_s: float,
        gone: Callable[[str], bool], now_s: float,
    ) -> float | None:
        """Take the merge lease of `name` for `holder`, first come first served.

        Same contract as `insika_knowledge.store.sqlite.Transaction.take_merge_lease`; the
        concept's key lock (held until commit) serialises the writers reading the queue.

        Returns:
            None when `holder` has the lease now; else the unix time when the writer
            ahead of it lets go at the latest.
        """
        self._lock(agent, name)
        rows = self.writer.rows(
            "SELECT holder, ticket, holding, expires_at FROM merge_leases WHERE agent = %s AND name = %s",
            (agent, name))
        stale = [r[0] for r in rows if r[0] != holder and (float(r[3]) < now_s or gone(str(r[0])))]
        if stale:
            self.writer.execute(
                "DELETE FROM merge_leases WHERE agent = %s AND name = %s AND holder = ANY(%s)",
                (agent, name, stale))
        live = [r for r in rows if r[0] not in stale]
        mine = next((r for r in live if r[0] == holder), None)
        if mine is None:
            ticket = max((int(r[1]) for r in live), default=0) + 1
            mine = (holder, ticket, 0, now_s + wait_ttl_s)
            live.append(mine)
            self.writer.execute(
                "INSERT INTO merge_leases (agent, name, holder, ticket, holding, expires_at) "
                "VALUES (%s, %s, %s, %s, 0, %s)", (agent, name, holder, ticket, now_s + wait_ttl_s))
        ahead = [r for r in live if r[0] != holder and (int(r[2]) or int(r[1]) < int(mine[1]))]
        if ahead:
            if not int(mine[2]):
                self.writer.execute(
                    "UPDATE merge_leases SET expires_at = %s WHERE agent = %s AND name = %s AND holder = %s",
                    (now_s + wait_ttl_s, agent, name, holder))
            return min(float(r[3]) for r in ahead)
        self.writer.execute(
            "UPDATE merge_leases SET holding = 1, expires_at = %s "
            "WHERE agent = %s AND name = %s AND holder = %s", (now_s + lease_s, agent, name, holder))
        return None

    def release_merge_lease(self, agent: str, name: str, holder: str) -> None:
        """Remove `holder`'s lease or place in the queue for `name` (nothing if it has none)."""
        self._lock(agent, name)
        self.writer.execute("DELETE FROM merge_leases WHERE agent = %s AND name = %s AND holder = %s",
                            (agent, name, holder))

    def put(self, agent: str, concept: Concept, *, reason: str, actor: str,
            session_id: str | None = None) -> StoredConcept:
        """Insert or update `concept` (with its terms) and write its version row.

        The concept row is written before the version row: its trigger bumps the agent's
        generation row first, which orders the agent's version ids by commit.

        Raises:
            ConceptFormatError: the concept breaks a record rule (nothing is written).
            UserError: the store has a full-text index but no tokenizer.
        """
        check_agent(agent)
        check_name(concept.name)
        markdown = serialize(concept)  # validates
        self._lock(agent, concept.name)
        number = self.next_version(agent, concept.name)
        seen = self._seen.get((agent, concept.name))
        keep = seen is not None and (seen.concept.name, seen.concept.description, seen.concept.body) \
            == (concept.name, concept.description, concept.body)
        tsv, length = (None, None) if keep else self.document(concept, self.writer)
        row = self.writer.row(
            "INSERT INTO concepts (description, type, provenance, confidence, sources, occurrences, "
            "created_at, updated_at, status, body, version, agent, name, tsv, doc_len) "
            "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s::tsvector, %s) "
            "ON CONFLICT (agent, name) DO UPDATE SET description = EXCLUDED.description, "
            "type = EXCLUDED.type, provenance = EXCLUDED.provenance, confidence = EXCLUDED.confidence, "
            "sources = EXCLUDED.sources, occurrences = EXCLUDED.occurrences, "
            "created_at = EXCLUDED.created_at, updated_at = EXCLUDED.updated_at, "
            "status = EXCLUDED.status, body = EXCLUDED.body, version = EXCLUDED.version, "
            "tsv = CASE WHEN %s THEN concepts.tsv ELSE EXCLUDED.tsv END, "
            "doc_len = CASE WHEN %s THEN concepts.doc_len ELSE EXCLUDED.doc_len END "
            f"RETURNING {CONCEPT_COLUMNS}",
            (concept.description, concept.type, concept.provenance, round(concept.confidence, 2),
             json.dumps(list(concept.sources), ensure_ascii=False), concept.occurrences,
             concept.created_at, concept.updated_at, concept.status, concept.body, number, agent,
             concept.name, tsv, length, keep, keep),
        )
        self.writer.execute(
            "INSERT INTO concept_versions (agent, name, version, reason, actor, session_id, markdown, "
            "created_at) VALUES (%s, %s, %s, %s, %s, %s, %s, %s)",
            (agent, concept.name, number, reason, actor, session_id, markdown, self.clock()))
        assert row is not None
        stored = self._seen[(agent, concept.name)] = row_to_stored(row)
        return stored

    def next_version(self, agent: str, name: str) -> int:
        """The number the next version of `name` gets (history survives deletes)."""
        self._lock(agent, name)
        row = self.writer.row("SELECT coalesce(max(version), 0) FROM concept_versions "
                              "WHERE agent = %s AND name = %s", (agent, name))
        assert row is not None
        return int(row[0]) + 1

    def version_row(self, agent: str, name: str, number: int) -> tuple[Any, ...]:
        """A raw ``concept_versions`` row (see `Version`).

        Raises:
            NotFound: no such version.
        """
        self._lock(agent, name)
        row = self.writer.row(
            "SELECT agent, name, version, reason, actor, session_id, markdown, created_at "
            "FROM concept_versions WHERE agent = %s AND name = %s AND version = %s", (agent, name, number))
        if row is None:
            raise NotFound(f"concept '{name}' of agent '{agent}' has no version {number}")
        return tuple(row)

    def remove(self, agent: str, name: str, *, actor: str) -> Version:
        """Delete the current row of `name`, writing a ``delete`` version with its last bytes.

        Raises:
            NotFound: `name` does not exist.
        """
        current = self.get(agent, name)
        if current is None:
            raise NotFound(f"agent '{agent}' has no concept '{name}'")
        number = self.next_version(agent, name)
        now = self.clock()
        markdown = serialize(current.concept)
        self.writer.execute("DELETE FROM concepts WHERE agent = %s AND name = %s", (agent, name))
        self.writer.execute(
            "INSERT INTO concept_versions (agent, name, version, reason, actor, session_id, markdown, "
            "created_at) VALUES (%s, %s, %s, %s, %s, %s, %s, %s)",
            (agent, name, number, "delete", actor, None, markdown, now))
        self._seen.pop((agent, name), None)
        return Version(agent, name, number, "delete", actor, None, markdown, now)

    def rename(self, agent: str, old: str, new: str) -> None:
        """Move `old`'s row, history, ledger, aliases and possible duplicates to `new`.

        The caller checked `new` is free.

        Raises:
            UserError: `new` belongs to a deleted concept.
        """
        check_name(new)
        self._lock(agent, old)
        self._lock(agent, new)
        if self.writer.row("SELECT 1 FROM concept_versions WHERE agent = %s AND name = %s", (agent, new)):
            raise UserError(
                f"line 2, field 'name': '{new}' belongs to a deleted concept; restore it "
                "or choose another name"
            )
        for table in ("concepts", "concept_versions", "sightings", "quarantine"):
            self.writer.execute(f"UPDATE {table} SET name = %s WHERE agent = %s AND name = %s",
                                (new, agent, old))
        self.rename_naming(agent, old, new)
        self._seen.pop((agent, old), None)

    # -------------------------------------------------------------- quarantine (trust)

    def is_quarantined(self, agent: str, name: str) -> bool:
        """True when `name` is held in quarantine (stored, never injected)."""
        self._lock(agent, name)
        return self.writer.row("SELECT 1 FROM quarantine WHERE agent = %s AND name = %s",
                               (agent, name)) is not None

    def quarantine(self, agent: str, name: str, *, session_id: str, supported_by: list[str],
                   markers: list[str]) -> None:
        """Hold `name` in quarantine (kept if it already is)."""
        self._lock(agent, name)
        self.writer.execute(
            "INSERT INTO quarantine (agent, name, session_id, supported_by, markers, since) "
            "VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT (agent, name) DO NOTHING",
            (agent, name, session_id, json.dumps(sorted(supported_by)), json.dumps(markers), self.clock()))

    def release(self, agent: str, name: str) -> bool:
        """Take `name` out of quarantine; True when it was in."""
        self._lock(agent, name)
        return self.writer.execute("DELETE FROM quarantine WHERE agent = %s AND name = %s",
                                   (agent, name)) > 0

    def record_extraction(self, record: ExtractionRecord) -> None:
        """Upsert one turn's extraction outcome."""
        self.writer.execute(
            "INSERT INTO extractions (agent, session_id, turn_id, outcome, retryable, candidates, "
            "written, dropped, detail, attempted_at) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s) "
            "ON CONFLICT (agent, session_id, turn_id) DO UPDATE SET outcome = EXCLUDED.outcome, "
            "retryable = EXCLUDED.retryable, candidates = EXCLUDED.candidates, "
            "written = EXCLUDED.written, dropped = EXCLUDED.dropped, detail = EXCLUDED.detail, "
            "attempted_at = EXCLUDED.attempted_at",
            record.to_row())

    def ledger(self, agent: str, name: str) -> Sequence[Sighting]:
        """The sightings of `name`, oldest first."""
        self._lock(agent, name)
        return [Sighting(s, t, o, at) for s, t, o, at in self.writer.rows(
            "SELECT session_id, turn_id, outcome, seen_at FROM sightings "
            "WHERE agent = %s AND name = %s ORDER BY seen_at, session_id, turn_id", (agent, name))]
