"""The PostgreSQL backend (psycopg): one schema per tenant of a database many replicas share.

`store` holds the concept store, `procedures` the procedure store, `database` the pool,
migrations (``sql/postgres/``) and errors they share, `fts` the tsvector full text. The
only package that imports psycopg; `insika_knowledge.store` imports it only when a
``postgresql://`` URL is given (psycopg is the optional ``postgres`` extra).
"""

from __future__ import annotations

from insika_knowledge.store.postgres.database import has_tenant, redact, schema_for, tenants
from insika_knowledge.store.postgres.procedures import PostgresProcedureStore
from insika_knowledge.store.postgres.store import PostgresStore

__all__ = ["PostgresProcedureStore", "PostgresStore", "has_tenant", "redact", "schema_for", "tenants"]
