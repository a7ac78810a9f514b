"""Where tenant databases live, and which tenant and agent names are acceptable."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Final

from insika_knowledge.errors import InvalidName

HOME_ENV: Final = "INSIKA_KNOWLEDGE_HOME"
#: Names the shared database: a ``postgresql://`` URL selects PostgreSQL (see `database_url`).
DATABASE_ENV: Final = "INSIKA_DATABASE_URL"
_POSTGRES_SCHEMES: Final = ("postgresql://", "postgres://")
#: The ``--database`` option's help, the same on every command that has it.
DATABASE_HELP: Final = (
    "PostgreSQL URL (postgresql://...): every tenant is a schema of that database, shared by "
    "every replica given it. Default: $INSIKA_DATABASE_URL, else the SQLite files of --data-dir."
)
DEFAULT_TENANT: Final = "default"
TENANT_RE: Final = re.compile(r"[a-z0-9][a-z0-9_-]{0,63}")
AGENT_RE: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,127}")
_RESERVED: Final = frozenset({"con", "prn", "aux", "nul"})


def data_dir(explicit: str | os.PathLike[str] | None = None) -> Path:
    """The data directory: `explicit`, else ``$INSIKA_KNOWLEDGE_HOME``, else the user data folder.

    The user data folder comes from `platformdirs` (e.g. ``~/.local/share/insika-knowledge``
    on Linux). The directory is not created here.
    """
    if explicit:
        return Path(explicit).expanduser()
    env = os.environ.get(HOME_ENV)
    if env:
        return Path(env).expanduser()
    import platformdirs

    return Path(platformdirs.user_data_dir("insika-knowledge", appauthor=False))


def database_url(explicit: str | None = None) -> str | None:
    """The PostgreSQL URL to use, or None for the SQLite files under the data directory.

    `explicit` (``--database``, ``Memory(database=...)``) wins, even empty; None reads
    ``$INSIKA_DATABASE_URL``. Only a ``postgresql://`` (or ``postgres://``) URL selects
    PostgreSQL; anything else, an empty value included, means the SQLite files.
    """
    chosen = explicit if explicit is not None else os.environ.get(DATABASE_ENV)
    return chosen if chosen and is_postgres_url(chosen) else None


def is_postgres_url(url: str) -> bool:
    """True when `url` names a PostgreSQL database (``postgresql://...``, ``postgres://...``)."""
    return url.strip().lower().startswith(_POSTGRES_SCHEMES)


def check_tenant(tenant: str) -> str:
    """Return `tenant` if it is a safe file-name stem, else raise.

    Raises:
        InvalidName: not ``[a-z0-9][a-z0-9_-]{0,63}`` (so no ``/``, ``..``, or dots at all).
    """
    if not isinstance(tenant, str) or not TENANT_RE.fullmatch(tenant) or tenant in _RESERVED:
        raise InvalidName(
            f"tenant {tenant!r} is not valid: use 1-64 lowercase letters, digits, '_' or '-'"
        )
    return tenant


def check_agent(agent: str) -> str:
    """Return `agent` if it is a valid agent id (``[A-Za-z0-9][A-Za-z0-9_.-]{0,127}``).

    Raises:
        InvalidName: otherwise.
    """
    if not isinstance(agent, str) or not AGENT_RE.fullmatch(agent):
        raise InvalidName(
            f"agent {agent!r} is not valid: use 1-128 letters, digits, '_', '.' or '-'"
        )
    return agent


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
