"""Which agent, tenant and session ids are acceptable: the one set of rules every edge checks.

- A **tenant** names a database file (``<data dir>/<tenant>.db``) or a PostgreSQL schema
  (``insika_<tenant>``), so it is a safe file-name stem: ``[a-z0-9][a-z0-9_-]{0,63}``, not a
  reserved device name.
- An **agent** id is ``[A-Za-z0-9][A-Za-z0-9_.-]{0,127}``.
- A **session** (or turn) id is 1-200 printable characters without backticks (it is quoted
  in records inside a markdown code span).

Pure functions over strings: no I/O, nothing imported from the rest of the package but
the errors.
"""

from __future__ import annotations

import re
from typing import Final

from insika_knowledge.errors import InvalidName, UserError, wrong_type

#: The tenant a call uses when it names none.
DEFAULT_TENANT: Final = "default"
TENANT_RE: Final = re.compile(r"[a-z0-9][a-z0-9_-]{0,63}")
AGENT_RE: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,127}")
#: The longest session (or turn) id accepted, in characters.
SESSION_ID_MAX: Final = 200
_RESERVED: Final = frozenset({"con", "prn", "aux", "nul"})


def check_tenant(tenant: str) -> str:
    """Return `tenant` if it is a safe file-name stem, else raise.

    Raises:
        ArgumentTypeError: `tenant` is not a str (as `check_agent`).
        InvalidName: not ``[a-z0-9][a-z0-9_-]{0,63}`` (so no ``/``, ``..``, or dots at all),
            or a reserved device name.
    """
    if not isinstance(tenant, str):
        raise wrong_type("tenant name", "tenant", tenant, "a str")
    if not TENANT_RE.fullmatch(tenant) or tenant in _RESERVED:
        raise InvalidName(
            f"tenant {quoted(tenant)} is not valid: start with a lowercase letter or digit, then up to 63 "
            "lowercase letters, digits, '_' or '-' (not con, prn, aux or nul)"
        )
    return tenant


def check_agent(agent: str) -> str:
    """Return `agent` if it is a valid agent id (``[A-Za-z0-9][A-Za-z0-9_.-]{0,127}``).

    Raises:
        ArgumentTypeError: `agent` is not a str.
        InvalidName: it is not a valid id.
    """
    if not isinstance(agent, str):
        raise wrong_type("agent id", "agent", agent, "a str")
    if not AGENT_RE.fullmatch(agent):
        raise InvalidName(
            f"agent {quoted(agent)} is not valid: start with a letter or digit, then up to 127 "
            "letters, digits, '_', '.' or '-'"
        )
    return agent


#: The most characters of a refused id an error message quotes.
_SHOWN: Final = 80


def quoted(value: object) -> str:
    """`value` quoted for an error message; a long one cut, with its length said."""
    if isinstance(value, str) and len(value) > _SHOWN:
        return f"{value[:_SHOWN]!r}... ({len(value)} characters)"
    return repr(value)


def session_id_problem(value: object) -> str | None:
    """What is wrong with `value` as a session or turn id, or None when it is fine.

    An id is 1-200 printable characters (no control characters, no line breaks, no
    lone surrogates), not only blanks, and without backticks (it is quoted in records
    inside a markdown code span).
    """
    if not isinstance(value, str):
        return f"must be text, got {type(value).__name__}"
    if not value.strip():
        return "must be non-empty text"
    if len(value) > SESSION_ID_MAX:
        return f"is {len(value)} characters; at most {SESSION_ID_MAX}"
    if not value.isprintable():
        return "must be printable text (no control characters, line breaks or lone surrogates)"
    if "`" in value:
        return "must not contain a backtick (`)"
    return None


def check_session_id(value: object, label: str = "session_id") -> str:
    """Return `value` if it is a valid session or turn id (see `session_id_problem`).

    Raises:
        UserError: naming `label` and the problem.
    """
    problem = session_id_problem(value)
    if problem is not None or not isinstance(value, str):  # not text always has a problem
        shown = repr(value) if len(repr(value)) <= 60 else repr(value)[:59] + "…"
        raise UserError(f"{label} {shown} {problem}")
    return value
