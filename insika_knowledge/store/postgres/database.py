"""One tenant's schema of a PostgreSQL database: connections, migrations, statements, errors.

A ``postgresql://`` URL (``--database``, ``Memory(database=...)``,
``$INSIKA_DATABASE_URL``) selects the PostgreSQL backend; this module and the stores
built on `PgDatabase` (`insika_knowledge.store.postgres.PostgresStore`,
`insika_knowledge.store.postgres.procedures.PostgresProcedureStore`) are the only ones that
import psycopg. Each tenant is a schema (`schema_for`: ``insika_<tenant>``), created and
brought up to date at open by the numbered migrations of ``sql/postgres/`` (one numbering
with SQLite's: `insika_knowledge.store.migrations`), all pending ones in one transaction
under an advisory lock, so replicas starting together migrate once. Each store keeps a
`psycopg_pool` pool of autocommit connections whose ``search_path`` is the tenant's
schema; a read is one statement, a write one transaction.

The backend-neutral store code writes ``?`` placeholders (`insika_knowledge.store.statements`);
`PgWriter` and `PgDatabase` turn them into psycopg's ``%s`` (`pg_query`).
"""

from __future__ import annotations

import functools
import re
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, ClassVar, Final

import psycopg
import psycopg.errors
import psycopg_pool
from psycopg import sql
from psycopg.rows import TupleRow

from insika_knowledge.concept import utc_now
from insika_knowledge.errors import RunTimeFailure, StorageBusy, StorageFull, StorageUnavailable, UserError
from insika_knowledge.ids import check_tenant
from insika_knowledge.store import migrations
from insika_knowledge.store.breaker import Breaker, breaker_for, short_reason
from insika_knowledge.store.outbox import due_before
from insika_knowledge.store.rows import not_text
from insika_knowledge.store.statements import POSTGRESQL, Column, Dialect

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
#: Seconds the breaker's probe waits for the server (`insika_knowledge.store.breaker`).
PROBE_TIMEOUT_S: Final = 2
#: SQLSTATEs of a server that cannot serve: connection exceptions, shutting down, starting up.
_DOWN_STATES: Final = ("08", "57P01", "57P02", "57P03")
_SEPARATOR: Final = "\x1f"

Conn = psycopg.Connection[TupleRow]
Params = Sequence[Any] | dict[str, Any]


@functools.lru_cache(maxsize=1024)
def pg_query(query: str) -> str:
    """`query` with the neutral code's ``?`` placeholders as psycopg's ``%s``.

    A query written for psycopg (``%s``, ``%(name)s``) has no ``?`` and is kept as it is.
    """
    return query.replace("?", "%s") if "?" in query else query


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


def breaker(url: str) -> Breaker:
    """The circuit breaker of the database at `url` (one per URL in this process)."""
    return breaker_for(url, redact(url), functools.partial(_probe, url))


def _probe(url: str) -> None:
    """Connect to `url` and run ``SELECT 1`` (the breaker's probe); raises when it cannot."""
    with psycopg.connect(url, autocommit=True, connect_timeout=PROBE_TIMEOUT_S) as conn:
        conn.execute("SELECT 1")


def is_down(exc: BaseException) -> bool:
    """True when `exc` says the server cannot be reached or cannot serve (not a bad statement)."""
    if isinstance(exc, (psycopg_pool.PoolTimeout, psycopg.InterfaceError)):  # a connection closed under us
        return True
    if not isinstance(exc, psycopg.OperationalError):
        return False
    state = getattr(exc, "sqlstate", None)
    return state is None or state.startswith(_DOWN_STATES)


def _connect(url: str) -> Conn:
    """One autocommit connection to `url`, unless its breaker is open.

    Raises:
        StorageUnavailable: the database was unreachable at the last try (at once, no wait).
        UserError: the server cannot be reached or refuses the login (the message names
            the URL without its password); a server that cannot be reached opens the breaker.
    """
    gate = breaker(url)
    gate.check()
    try:
        conn = psycopg.connect(url, autocommit=True, connect_timeout=CONNECT_TIMEOUT_S)
    except psycopg.Error as exc:
        if is_down(exc):
            gate.failed(short_reason(exc))
        raise UserError(f"cannot connect to the database {redact(url)}: {short_reason(exc)}".strip()) from None
    gate.succeeded()
    return conn


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


def tenants_with_pending(url: str, *, held: bool = False) -> list[str]:
    """Tenants whose schema's outbox holds turns to learn (claimed or not), sorted; reads
    only. With `held`, turns held until the model can be used count too (`Outbox.hold`).

    Raises:
        UserError: the database cannot be reached.
    """
    found = []
    with _connect(url) as conn:
        for tenant in tenants(url):
            schema = schema_for(tenant)
            exists = conn.execute("SELECT to_regclass(%s)", (f'"{schema}".outbox',)).fetchone()
            if exists is None or exists[0] is None:
                continue
            if conn.execute(f'SELECT 1 FROM "{schema}".outbox WHERE not_before < %s LIMIT 1',
                            (due_before(held),)).fetchone() is not None:
                found.append(tenant)
    return found


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
    return migrations.read_steps(migrations_dir())


def _lock_sql() -> sql.SQL:
    return sql.SQL("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))")


def migrate(conn: Conn, schema: str, tenant: str) -> list[str]:
    """Create `schema` if needed and apply its pending migrations, in one transaction.

    The transaction first takes an advisory lock on the schema's name, then reads what is
    applied: processes opening the same tenant together wait, and the later ones find
    nothing left to do. Each step is recorded by its id, and the ids it had before beside
    them (`insika_knowledge.store.migrations.former_ids`).

    Returns:
        Names of the migrations this call applied.
    """
    wanted = pg_migrations()
    done: list[str] = []
    recorded = _applied(conn, schema)
    if all(m.recorded_in(recorded) for m in wanted):
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
            if migration.recorded_in(applied):
                continue
            conn.execute(migration.sql.encode())
            done.append(migration.name)
        for name in done + migrations.former_ids(wanted, applied.union(done)):
            conn.execute(
                f"INSERT INTO {migrations.MIGRATIONS_TABLE} (name, applied_at) VALUES "
                "(%s, to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'))",
                (name,),
            )
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

    def rows(self, query: str, params: Params = ()) -> list[tuple[Any, ...]]:
        """Every row `query` returns."""
        return self.conn.execute(pg_query(query), params).fetchall()

    def row(self, query: str, params: Params = ()) -> tuple[Any, ...] | None:
        """The first row `query` returns, or None."""
        return self.conn.execute(pg_query(query), params).fetchone()

    def execute(self, query: str, params: Params = ()) -> int:
        """Run `query`; how many rows it changed."""
        return self.conn.execute(pg_query(query), params).rowcount

    def insert_rows(self, table: str, columns: Sequence[Column], rows: Sequence[Sequence[Any]],
                    conflict: str = "", same: Sequence[tuple[str, str, Any]] = ()) -> None:
        """Insert `rows` into `table` in one statement (``unnest`` of one typed array per column)."""
        if rows:
            names = [name for name, _ in columns] + [name for name, _, _ in same]
            arrays = ", ".join(f"%s::{kind}[]" for _, kind in columns)
            fixed = "".join(f", %s::{kind}" for _, kind, _ in same)
            self.conn.execute(
                f"INSERT INTO {table} ({', '.join(names)}) SELECT u.*{fixed} FROM unnest({arrays}) AS u {conflict}",
                [*(value for _, _, value in same), *(list(values) for values in zip(*rows, strict=True))])

    def lock(self, *key: str) -> None:
        """Hold the advisory lock on (tenant, `key`...) until this transaction ends (once per key)."""
        text = _SEPARATOR.join((self.schema, *key))
        if text in self._locked:
            return
        self.conn.execute(_lock_sql(), (text,))
        self._locked.add(text)


class PgDatabase:
    """One tenant's schema in a PostgreSQL database: a connection pool, migrated on open.

    Its reads (`rows`, `row`) and write transactions (`write`, a `PgWriter`) are the
    `insika_knowledge.store.statements` the backend-neutral store code runs on.

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

    #: The SQL words this backend spells its own way (`insika_knowledge.store.statements`).
    dialect: ClassVar[Dialect] = POSTGRESQL

    def __init__(self, url: str, tenant: str = "default", *, clock: Callable[[], str] = utc_now,
                 pool_size: int = POOL_SIZE):
        self.url = url
        self.tenant = check_tenant(tenant)
        self.schema = schema_for(tenant)
        self.clock = clock
        self.where = f"{redact(url)} (schema {self.schema})"
        self._local = threading.local()
        self._breaker = breaker(url)
        self._epoch = self._breaker.epoch
        with self._errors():
            try:
                opened = _connect(url)
            except UserError as exc:  # unreachable now: a run-time failure, tried again later
                if self._breaker.state == "closed":
                    raise
                raise StorageUnavailable(str(exc), path=self.where) from None
            with opened as conn:
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

        A server that cannot be reached (or no free connection in time) is
        `StorageUnavailable` and opens the database's breaker (`breaker`), so the next
        calls fail at once until it answers again; a full disk, a deadlock or another
        server failure is a `RunTimeFailure`; a login that may not write, and a value
        PostgreSQL refuses (a NUL character, text that is not UTF-8), is a `UserError`.
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
        except (psycopg.OperationalError, psycopg.InterfaceError, psycopg_pool.PoolTimeout) as exc:
            if is_down(exc):
                self._breaker.failed(short_reason(exc))
                raise StorageUnavailable(f"the database {self.where} is unreachable: {short_reason(exc)}",
                                         path=self.where) from None
            raise RunTimeFailure(f"database error on {self.where}: {short_reason(exc)}") from None
        except psycopg.DataError as exc:  # a value PostgreSQL refuses (a NUL character in text...)
            raise UserError(f"a value the database {self.where} refuses: {exc}") from None
        except UnicodeEncodeError as exc:
            raise not_text(exc) from None

    @contextmanager
    def _connection(self, budget_ms: float | None = None) -> Iterator[Conn]:
        """A pooled connection, waiting at most `budget_ms` (None: the thread's `busy_budget`,
        else `POOL_TIMEOUT_S`) for one.

        Raises:
            StorageUnavailable: the breaker is open (at once, no wait).
            StorageBusy: a budget was given and no connection came within it.
            psycopg_pool.PoolTimeout: none came within `POOL_TIMEOUT_S` (`_errors` maps it).
        """
        self._breaker.check()
        if self._epoch != self._breaker.epoch:  # an outage ended: drop connections made before it
            self._epoch = self._breaker.epoch
            self._pool.check()
        budget = getattr(self._local, "budget_ms", None) if budget_ms is None else budget_ms
        if budget is None:  # no connection within 30 s: the server is taken to be down
            with self._pool.connection(timeout=POOL_TIMEOUT_S) as conn:
                yield conn
        else:
            try:
                held = self._pool.getconn(timeout=max(0.001, budget / 1000))
            except psycopg_pool.PoolTimeout:  # every connection in use (or being made): busy
                self._local.waited_ms = budget
                raise StorageBusy(f"the database {self.where} had no free connection within {budget:.0f} ms",
                                  path=self.where, waited_ms=float(budget)) from None
            try:
                with held:  # as the pool's own context: ends a transaction left open
                    yield held
            finally:
                self._pool.putconn(held)
        self._breaker.succeeded()

    def rows(self, query: str, params: Params = ()) -> list[tuple[Any, ...]]:
        """Every row one read statement returns."""
        with self._errors(), self._connection() as conn:
            return conn.execute(pg_query(query), params).fetchall()

    def row(self, query: str, params: Params = ()) -> tuple[Any, ...] | None:
        """The first row one read statement returns, or None."""
        with self._errors(), self._connection() as conn:
            return conn.execute(pg_query(query), params).fetchone()

    def scalar(self, query: str, params: Params = ()) -> Any:
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
        with self._errors(), self._connection(budget) as conn, conn.transaction():
            if budget is not None:
                self._local.waited_ms = budget
                # lock_timeout 0 would mean no limit: the smallest budget is 1 ms.
                conn.execute(sql.SQL("SET LOCAL lock_timeout = {}").format(
                    sql.Literal(f"{max(1, int(budget))}ms")))
            yield PgWriter(conn, self.schema)

    def autocommit(self, query: str) -> None:
        """Run one statement outside a transaction (``VACUUM``)."""
        with self._errors(), self._connection() as conn:
            conn.execute(query)

