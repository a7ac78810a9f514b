"""Where a deployment's memory lives: the data directory of SQLite files, or a PostgreSQL URL.

Read from arguments first, then the environment (``$INSIKA_KNOWLEDGE_HOME``,
``$INSIKA_DATABASE_URL``), then the user data folder. Nothing here opens or creates
anything: `insika_knowledge.store` does, given what these functions answer.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Final

from insika_knowledge.errors import UserError

#: Environment variable naming the data directory.
HOME_ENV: Final = "INSIKA_KNOWLEDGE_HOME"
#: Names the shared database: a ``postgresql://`` URL selects PostgreSQL (see `database_url`).
DATABASE_ENV: Final = "INSIKA_DATABASE_URL"
_POSTGRES_SCHEMES: Final = ("postgresql://", "postgres://")
#: The ``--database`` option's help, the same on every command that has it.
DATABASE_HELP: Final = (
    "PostgreSQL URL (postgresql://...): every tenant is a schema of that database, shared by "
    "every replica given it. Default: $INSIKA_DATABASE_URL, else the SQLite files of --data-dir "
    "(an empty value: the files; any other value is refused)."
)


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


def database_url(explicit: str | None = None, environ: Mapping[str, str] | None = None) -> str | None:
    """The PostgreSQL URL to use, or None for the SQLite files under the data directory.

    `explicit` (``--database``, ``Memory(database=...)``) wins, even empty; None reads
    ``$INSIKA_DATABASE_URL`` (of `environ`, default the process's). A ``postgresql://`` (or ``postgres://``) URL selects
    PostgreSQL; an empty (or blank) value, or none, means the SQLite files.

    Raises:
        UserError: the value is anything else (``mysql://``, a typo of the scheme,
            ``sqlite:///...``, a path): writes must not go to the files in its stead. The
            message names the value (its password hidden), where it came from, and what
            is accepted.
    """
    chosen = explicit if explicit is not None else (os.environ if environ is None else environ).get(DATABASE_ENV)
    if chosen is None or not chosen.strip():
        return None
    if not is_postgres_url(chosen):
        source = "the database" if explicit is not None else f"${DATABASE_ENV}"
        raise UserError(
            f"{source} {without_password(chosen)!r} is not a PostgreSQL URL: give a postgresql:// "
            "(or postgres://) URL, or an empty value for the SQLite files of the data directory"
        )
    return chosen


def is_postgres_url(url: str) -> bool:
    """True when `url` names a PostgreSQL database (``postgresql://...``, ``postgres://...``)."""
    return url.strip().lower().startswith(_POSTGRES_SCHEMES)


def without_password(url: str) -> str:
    """`url` with its password replaced by ``***`` (``user:***@host``, ``password=***``), for messages."""
    url = re.sub(r"(://[^:/@]*:)[^@/]*@", r"\1***@", url)
    return re.sub(r"(password=)[^&\s]*", r"\1***", url)
