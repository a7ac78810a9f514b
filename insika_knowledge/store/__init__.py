"""Storage backends. `open_store` opens a tenant's SQLite database under the data directory.

Callers type a store with the protocols of `insika_knowledge.store.base` (`Store`,
`ConceptStore`, `FullTextIndex`, ...), never with `SQLiteStore`.
"""

from __future__ import annotations

import os
from collections.abc import Callable

from insika_knowledge.concept import utc_now
from insika_knowledge.store.base import (
    ConceptStore,
    ExtractionRecord,
    FullTextIndex,
    OperatorStore,
    ProcedureStorage,
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
from insika_knowledge.store.paths import DEFAULT_TENANT, data_dir, tenant_path, tenants
from insika_knowledge.store.sqlite import SQLiteStore

__all__ = [
    "DEFAULT_TENANT", "Alias", "ConceptStore", "ExtractionRecord", "FullTextIndex", "OperatorStore",
    "PossibleDuplicate", "ProcedureStorage", "SQLiteStore", "ScanRow", "ScanSource", "Sighting", "Store",
    "StoredConcept", "Tokenizer", "Transaction", "Version", "data_dir", "open_store",
    "tenant_path", "tenants",
]


def open_store(
    directory: str | os.PathLike[str] | None = None,
    tenant: str = DEFAULT_TENANT,
    *,
    clock: Callable[[], str] = utc_now,
    tokenizer: Tokenizer | None = None,
) -> Store:
    """Open (creating if needed) the database of `tenant` under the data directory.

    Args:
        directory: the data directory; None = ``$INSIKA_KNOWLEDGE_HOME`` or the user
            data folder (see `insika_knowledge.store.paths.data_dir`).
        tenant: the tenant name (``[a-z0-9][a-z0-9_-]{0,63}``).
        clock: the time source for stamps.
        tokenizer: what the full-text index tokenises with
            (`insika_knowledge.index.tokenizer.TOKENIZER`); None = no full-text index
            until one is registered (`Memory.store` always gives it).

    Raises:
        InvalidName: the tenant name is invalid or escapes the directory.
    """
    folder = data_dir(directory)
    return SQLiteStore(tenant_path(folder, tenant), clock=clock, tokenizer=tokenizer)
