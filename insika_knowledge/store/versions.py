"""How a concept's version rows hold their records: periodic snapshots and small deltas.

Every `SNAPSHOT_EVERY`-th version of a concept (1, 33, 65, ...) keeps its whole record
as text in ``concept_versions.markdown``. The versions between keep theirs as a BLOB:
the record compressed with zlib using that snapshot as the preset dictionary, so a
sighting that only moved the counts costs a few dozen bytes instead of a whole record.
`unpack` reads either form; rows written before this scheme are all text, as are all
rows of the PostgreSQL store, which keeps whole records (`pack` is SQLite's).
"""

from __future__ import annotations

import zlib
from typing import Any, Final

from insika_knowledge.store.statements import Reads

#: One full-text snapshot every this many versions of a concept.
SNAPSHOT_EVERY: Final = 32


def snapshot_of(number: int) -> int:
    """The version number whose text a version's delta is compressed against."""
    return number - (number - 1) % SNAPSHOT_EVERY


def pack(conn: Reads, agent: str, name: str, number: int, markdown: str) -> str | bytes:
    """What to store in ``concept_versions.markdown`` for version `number` of `name`.

    Returns:
        `markdown` itself for a snapshot version (or when its snapshot is missing);
        otherwise the zlib delta against the snapshot's text.
    """
    base = _snapshot_text(conn, agent, name, number)
    if base is None:
        return markdown
    packer = zlib.compressobj(9, zdict=base.encode("utf-8"))
    return packer.compress(markdown.encode("utf-8")) + packer.flush()


def unpack(conn: Reads, agent: str, name: str, number: int, stored: Any) -> str:
    """The record text of a ``concept_versions`` row whose markdown column holds `stored`.

    Raises:
        ValueError: a delta whose snapshot is missing or does not match (a damaged table).
    """
    if isinstance(stored, str):
        return stored
    base = _snapshot_text(conn, agent, name, number)
    if base is None or not isinstance(stored, bytes):
        raise ValueError(f"version {number} of '{name}' cannot be read: its snapshot is missing")
    unpacker = zlib.decompressobj(zdict=base.encode("utf-8"))
    try:
        return (unpacker.decompress(stored) + unpacker.flush()).decode("utf-8")
    except (zlib.error, UnicodeDecodeError) as exc:
        raise ValueError(f"version {number} of '{name}' cannot be read: {exc}") from None


def _snapshot_text(conn: Reads, agent: str, name: str, number: int) -> str | None:
    """The text of `number`'s snapshot version, or None when `number` is one itself."""
    base = snapshot_of(number)
    if base == number:
        return None
    row = conn.row(
        "SELECT markdown FROM concept_versions WHERE agent=? AND name=? AND version=?",
        (agent, name, base),
    )
    return row[0] if row is not None and isinstance(row[0], str) else None
