"""The procedural-memory store on PostgreSQL: the procedure store every replica shares.

Same tables and rows as the SQLite `insika_knowledge.store.sqlite.procedures.ProcedureStore`
(``sql/postgres/003_procedures.sql``), in the tenant's schema, through the same pool and
migrations as the concept store (`insika_knowledge.store.postgres.database.PgDatabase`). Every
read and write is the backend-neutral
`insika_knowledge.store.procedure_store.ProcedureMethods`, whose ``procedures`` key lock
is here an advisory lock held until commit, so two replicas counting runs for one
procedure never lose a count (their transactions run one after the other, as ``BEGIN
IMMEDIATE`` makes them on SQLite).
"""

from __future__ import annotations

from insika_knowledge.store.postgres.database import PgDatabase
from insika_knowledge.store.procedure_store import ProcedureMethods


class PostgresProcedureStore(PgDatabase, ProcedureMethods):
    """Procedures, runs, captured sessions and stages of one tenant's schema.

    Args:
        url: a ``postgresql://`` URL.
        tenant: the tenant (its schema: `insika_knowledge.store.postgres.database.schema_for`).
        clock: returns the current UTC time as ``YYYY-MM-DDTHH:MM:SSZ``.
        pool_size: connections kept at most.

    Raises:
        InvalidName: the tenant name is invalid.
        UserError: the database cannot be reached or written.
    """
