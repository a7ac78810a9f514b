"""The SQLite backend (apsw): one database file per tenant under the data directory.

`store` holds the concept store, `procedures` the procedure store, `database` the
connections and write transactions they share, `migrations` the numbered steps of
``sql/sqlite/``, `fts` the FTS5 index, `faults` the mapping of SQLite's failures,
`paths` the file layout. The only package that imports apsw.
"""

from __future__ import annotations

from insika_knowledge.store.sqlite.procedures import ProcedureStore
from insika_knowledge.store.sqlite.store import SQLiteStore

__all__ = ["ProcedureStore", "SQLiteStore"]
