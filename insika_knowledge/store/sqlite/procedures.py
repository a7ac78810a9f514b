"""The procedural-memory store on SQLite: procedures, their runs, captured sessions and stages.

Same tenant database file as the concepts (`insika_knowledge.store.sqlite.SQLiteStore`),
opened through apsw the same way (one connection per thread, WAL, busy timeout) and
migrated by `insika_knowledge.store.sqlite.migrations.migrate` (``sql/sqlite/003_procedures.sql``).
Writes run in ``BEGIN IMMEDIATE`` transactions; a request's capture, cursor update and
stage row go in one. Every read and write is the backend-neutral
`insika_knowledge.store.procedure_store.ProcedureMethods`; the records are
`insika_knowledge.store.procedure_records`'.

A task term only one session had is never written in the clear: the rows keep it as a
note (``procedure_term_notes``, ``sql/sqlite/010_procedure_term_notes.sql``) of two blake2b
digests (hex) keyed by the database's own random key, the term's and the session's
(`ProcedureRows.note_terms`).
"""

from __future__ import annotations

from insika_knowledge.store.procedure_store import ProcedureMethods
from insika_knowledge.store.sqlite.database import Database
from insika_knowledge.store.sqlite.faults import mapped_errors


@mapped_errors  # no raw apsw error leaves a public method (see store.sqlite.faults)
class ProcedureStore(Database, ProcedureMethods):
    """Procedures, runs, captured sessions and stages of one tenant's database file.

    Args:
        path: the tenant's database file (created with its folder if missing).
        clock: returns the current UTC time as ``YYYY-MM-DDTHH:MM:SSZ``.
        busy_timeout_ms: the longest the opening waits for the write lock when a
            migration is pending, in milliseconds (None: the store's 30 s).

    Raises:
        UserError: the path is a folder or not a database.
    """
