"""Where tenant database files live inside the data directory.

The name rules are `insika_knowledge.ids`'; the directory and URL choice is
`insika_knowledge.location`'s.
"""

from __future__ import annotations

from pathlib import Path

from insika_knowledge.errors import InvalidName
from insika_knowledge.ids import TENANT_RE, check_tenant


def tenant_path(directory: Path, tenant: str) -> Path:
    """The database file of `tenant` inside `directory` (``<dir>/<tenant>.db``).

    Raises:
        InvalidName: the tenant name is not valid.
    """
    path = directory / f"{check_tenant(tenant)}.db"
    if path.resolve().parent != directory.resolve():  # belt and braces: no escape
        raise InvalidName(f"tenant {tenant!r} would leave the data directory")
    return path


#: The first bytes of every SQLite database file (https://www.sqlite.org/fileformat.html, 1.3).
SQLITE_HEADER = b"SQLite format 3\x00"


def tenants(directory: Path) -> list[str]:
    """Tenants that have a database file in `directory`, sorted.

    A ``.db`` file that is not a SQLite database (another program's file, notes saved
    there) is no tenant: it is left out, so whole-directory commands (``status``,
    ``agents``) still report the real tenants. An empty file is one being created and is
    listed. Asking for such a tenant by name still says what is wrong with its file.
    """
    if not directory.is_dir():
        return []
    return sorted(
        p.stem for p in directory.glob("*.db")
        if p.is_file() and TENANT_RE.fullmatch(p.stem) and _a_database(p)
    )


def _a_database(path: Path) -> bool:
    """True when `path` is empty or starts with the SQLite header (an unreadable file is listed:
    opening it says why).
    """
    try:
        with open(path, "rb") as handle:
            start = handle.read(len(SQLITE_HEADER))
    except OSError:
        return True
    return not start or start == SQLITE_HEADER
