"""Storage backends: SQLite files under the data directory (the default), or PostgreSQL.

`open_store` and `open_procedure_store` open a tenant's stores: the SQLite file
``<data dir>/<tenant>.db``, or, when a ``postgresql://`` URL is given (or is in
``$INSIKA_DATABASE_URL``, see `database_url`), the tenant's schema of that database
(`insika_knowledge.store.postgres`, imported only then: psycopg is an optional extra).
Callers type a store with the protocols of `insika_knowledge.store.base` (`Store`,
`ConceptStore`, `FullTextIndex`, `ProcedureStorage`), never with a backend class.

Layout: the modules of this package are backend-neutral (protocols and records, the
statements both backends run, rows, naming, versions, the outbox, migration files);
`insika_knowledge.store.sqlite` holds everything apsw, `insika_knowledge.store.postgres`
everything psycopg.
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Callable

from insika_knowledge.concept import utc_now
from insika_knowledge.errors import missing_extra
from insika_knowledge.ids import DEFAULT_TENANT, check_tenant
from insika_knowledge.location import data_dir, database_url
from insika_knowledge.store.base import (
    ConceptStore,
    ExtractionRecord,
    FullTextIndex,
    OperatorStore,
    OutboxStorage,
    ProcedureStorage,
    QueuedTurn,
    ScanRow,
    ScanSource,
    Sighting,
    Store,
    StoredConcept,
    Tokenizer,
    Transaction,
    Version,
)
from insika_knowledge.store.naming import Alias, PossibleDuplicate
from insika_knowledge.store.sqlite import SQLiteStore
from insika_knowledge.store.sqlite.outbox import has_pending
from insika_knowledge.store.sqlite.paths import tenant_path, tenants

__all__ = [
    "Alias", "ConceptStore", "ExtractionRecord", "FullTextIndex", "OperatorStore", "OutboxStorage", "QueuedTurn",
    "PossibleDuplicate", "ProcedureStorage", "SQLiteStore", "ScanRow", "ScanSource", "Sighting", "Store",
    "StoredConcept", "Tokenizer", "Transaction", "Version", "has_tenant", "list_tenants", "load_backend", "location",
    "open_procedure_store", "open_store", "tenant_path", "tenants", "tenants_with_pending",
]


def open_store(
    directory: str | os.PathLike[str] | None = None,
    tenant: str = DEFAULT_TENANT,
    *,
    clock: Callable[[], str] = utc_now,
    tokenizer: Tokenizer | None = None,
    database: str | None = None,
    busy_timeout_ms: int | None = None,
) -> Store:
    """Open (creating if needed) the concept store of `tenant`.

    Args:
        directory: the data directory; None = ``$INSIKA_KNOWLEDGE_HOME`` or the user
            data folder (see `insika_knowledge.location.data_dir`). Unused with PostgreSQL.
        tenant: the tenant name (``[a-z0-9][a-z0-9_-]{0,63}``).
        clock: the time source for stamps.
        tokenizer: what the full-text index tokenises with
            (`insika_knowledge.index.tokenizer.TOKENIZER`); None = no full-text index
            until one is registered (`Memory.store` always gives it).
        database: a ``postgresql://`` URL selects PostgreSQL (the tenant's schema);
            None = ``$INSIKA_DATABASE_URL``; anything else = the SQLite file.
        busy_timeout_ms: SQLite only: the longest the first opening waits for the write
            lock to migrate (None: 30 s).

    Raises:
        InvalidName: the tenant name is invalid or escapes the directory.
        UserError: PostgreSQL is chosen but psycopg is missing or the server unreachable.
    """
    url = _postgres_url(database)
    if url is not None:
        from insika_knowledge.store.postgres import PostgresStore

        return PostgresStore(url, tenant, clock=clock, tokenizer=tokenizer)
    folder = data_dir(directory)
    return SQLiteStore(tenant_path(folder, tenant), clock=clock, tokenizer=tokenizer,
                       busy_timeout_ms=busy_timeout_ms)


def load_backend(database: str | None = None) -> None:
    """Import the backend `database` selects, now, on the calling thread.

    A `Memory` calls it when it is made: the threads that later open stores (the hooks',
    the learning worker, the spill writer) then never import the PostgreSQL modules at the
    same moment, which Python's per-module import locks can turn into a
    ``_DeadlockError`` (seen under `bench --faults`: a deferred turn that failed to be
    written). SQLite's modules are imported with this package. A missing psycopg is said
    when a store is opened (`open_store`), not here.

    Args:
        database: as `open_store`'s.
    """
    if _postgres_url(database) is None:
        return
    try:
        import insika_knowledge.store.postgres  # noqa: F401 (imported for its side effect)
    except ImportError:
        return


def open_procedure_store(
    directory: str | os.PathLike[str] | None = None,
    tenant: str = DEFAULT_TENANT,
    *,
    database: str | None = None,
    busy_timeout_ms: int | None = None,
) -> ProcedureStorage:
    """Open (creating if needed) the procedure store of `tenant` (see `open_store`).

    Raises:
        InvalidName: the tenant name is invalid or escapes the directory.
        UserError: PostgreSQL is chosen but psycopg is missing or the server unreachable.
    """
    url = _postgres_url(database)
    if url is not None:
        from insika_knowledge.store.postgres.procedures import PostgresProcedureStore

        return PostgresProcedureStore(url, tenant)
    from insika_knowledge.store.sqlite.procedures import ProcedureStore

    return ProcedureStore(tenant_path(data_dir(directory), tenant), busy_timeout_ms=busy_timeout_ms)


def list_tenants(directory: str | os.PathLike[str] | None = None, database: str | None = None) -> list[str]:
    """Tenants that have a store: schemas of the PostgreSQL database, or files of the data directory.

    Raises:
        UserError: PostgreSQL is chosen but cannot be reached.
    """
    url = _postgres_url(database)
    if url is not None:
        from insika_knowledge.store.postgres import tenants as schemas

        return schemas(url)
    return tenants(data_dir(directory))


def has_tenant(tenant: str, directory: str | os.PathLike[str] | None = None,
               database: str | None = None) -> bool:
    """True when `tenant` has a store already (nothing is created).

    Raises:
        InvalidName: the tenant name is invalid.
        UserError: PostgreSQL is chosen but cannot be reached.
    """
    url = _postgres_url(database)
    if url is not None:
        from insika_knowledge.store.postgres import has_tenant as has_schema

        return has_schema(url, check_tenant(tenant))
    return tenant_path(data_dir(directory), tenant).exists()


def tenants_with_pending(directory: str | os.PathLike[str] | None = None,
                         database: str | None = None, *, held: bool = False) -> list[str]:
    """Tenants whose outbox holds queued turns (any process's), sorted; reads only, creates nothing.

    With `held`, turns held until the model can be used (`Outbox.hold`) count too.

    Raises:
        UserError: PostgreSQL is chosen but cannot be reached.
    """
    url = _postgres_url(database)
    if url is not None:
        from insika_knowledge.store.postgres.database import tenants_with_pending as schemas_with_pending

        return schemas_with_pending(url, held=held)
    folder = data_dir(directory)
    return [t for t in tenants(folder) if has_pending(tenant_path(folder, t), held=held)]


def location(directory: str | os.PathLike[str] | None = None, database: str | None = None) -> str:
    """Where the stores are, for messages: the data directory, or the URL without its password."""
    url = _postgres_url(database)
    if url is not None:
        from insika_knowledge.store.postgres import redact

        return redact(url)
    return str(data_dir(directory))


def _postgres_url(database: str | None) -> str | None:
    """The PostgreSQL URL `database` (or ``$INSIKA_DATABASE_URL``) selects, or None for SQLite.

    Raises:
        UserError: PostgreSQL is chosen but psycopg or psycopg_pool is not installed (an
            optional extra).
    """
    url = database_url(database)
    if url is None:
        return None
    for package in ("psycopg", "psycopg_pool"):
        if importlib.util.find_spec(package) is None:
            raise missing_extra("a postgresql:// database", "postgres", package)
    return url
