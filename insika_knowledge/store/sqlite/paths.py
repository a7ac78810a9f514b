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


def tenants(directory: Path) -> list[str]:
    """Tenants that have a database file in `directory`, sorted."""
    if not directory.is_dir():
        return []
    return sorted(
        p.stem for p in directory.glob("*.db") if p.is_file() and TENANT_RE.fullmatch(p.stem)
    )
