"""Our HTTP headers: the ``x-ace-*`` and ``x-insika-*`` names, and how their values read.

Both memories and every edge that carries model requests (the relay, an engine calling
the ``request`` hook) read them here. Request headers, never forwarded upstream
(`is_private`):

- ``x-ace-session`` (or the body's ``session_id``): the session procedures and learning
  are keyed by (`session_id`);
- ``x-ace-task-outcome``, ``x-ace-outcome``, ``x-ace-task-success``: the task is over,
  with this outcome (`read_outcome`);
- ``x-ace-skills``: per-skill overrides, ``name=value`` entries (`skill_override`);
- ``x-insika-tenant``, ``x-insika-agent``: who the request is for;
- ``x-insika-token``: the tenant's access token (a relay that requires one);
- ``x-insika-memory: off``: both memories off for this request (`memory_on`);
- ``x-ace-trace: full``: the response carries the request's trace stages (``x-ace-trace``).

Response headers: ``x-ace-skill-modes``, the ``x-ace-body-rewritten`` /
``x-ace-rewrite-tokens`` / ``x-ace-rewritten-by`` trio of a rewritten body,
``x-insika-knowledge`` (where the knowledge block went), ``x-insika-degraded``,
``x-insika-memory`` (the memory's state for the request: ``on``, ``off: <why>``,
``degraded: <stages>``), ``x-insika-learning`` (what became of the finished turn) and
``x-ace-trace``.

Header names are case-insensitive: every reader here takes headers with lower-case names
(`lower_headers`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from insika_knowledge.errors import UserError

SESSION_HEADER: Final = "x-ace-session"
#: The body field that may carry the session id instead of `SESSION_HEADER`.
SESSION_FIELD: Final = "session_id"
OUTCOME_HEADERS: Final = ("x-ace-task-outcome", "x-ace-outcome", "x-ace-task-success")
SKILLS_HEADER: Final = "x-ace-skills"
SKILL_MODES_HEADER: Final = "x-ace-skill-modes"
BODY_REWRITTEN_HEADER: Final = "x-ace-body-rewritten"
REWRITE_TOKENS_HEADER: Final = "x-ace-rewrite-tokens"
REWRITTEN_BY_HEADER: Final = "x-ace-rewritten-by"
TENANT_HEADER: Final = "x-insika-tenant"
AGENT_HEADER: Final = "x-insika-agent"
MEMORY_HEADER: Final = "x-insika-memory"
TOKEN_HEADER: Final = "x-insika-token"
LEARNING_HEADER: Final = "x-insika-learning"
TRACE_HEADER: Final = "x-ace-trace"
KNOWLEDGE_HEADER: Final = "x-insika-knowledge"
DEGRADED_HEADER: Final = "x-insika-degraded"
#: Header name prefixes that belong to the memory and its skills, never to the upstream.
PRIVATE_PREFIXES: Final = ("x-insika-", "x-ace-")
#: `read_outcome` results.
SUCCESS: Final = "success"
FAILURE: Final = "failure"

_SUCCESS_WORDS: Final = frozenset(
    {"success", "succeeded", "successful", "pass", "passed", "ok", "true", "1", "yes"}
)
_FAILURE_WORDS: Final = frozenset({"failure", "failed", "fail", "error", "false", "0", "no"})
_OFF_WORDS: Final = frozenset({"off", "false", "0", "no"})


def lower_headers(headers: Mapping[str, str] | None) -> dict[str, str]:
    """`headers` with lower-case names (HTTP header names are case-insensitive)."""
    return {str(k).lower(): str(v) for k, v in (headers or {}).items()}


def is_private(name: str) -> bool:
    """True for a header kept from the upstream (`PRIVATE_PREFIXES`, lower-case `name`)."""
    return name.startswith(PRIVATE_PREFIXES)


def session_id(body: Mapping[str, Any], headers: Mapping[str, str]) -> str | None:
    """The session id: header ``x-ace-session``, else body ``session_id``; None when absent.

    Args:
        body: the request body.
        headers: lower-cased request headers (`lower_headers`).

    Returns:
        The id stripped and cut to 200 characters; None when absent or blank.
    """
    value = headers.get(SESSION_HEADER) or body.get(SESSION_FIELD)
    if value is None:
        return None
    value = str(value).strip()
    return value[:200] or None


def wants_trace(headers: Mapping[str, str]) -> bool:
    """True when the request asks for its trace (``x-ace-trace: full``, any case)."""
    return headers.get(TRACE_HEADER, "").strip().lower() == "full"


def memory_on(headers: Mapping[str, str]) -> bool:
    """False when ``x-insika-memory`` switches memory off (``off``, ``false``, ``0``, ``no``, any case)."""
    return headers.get(MEMORY_HEADER, "").strip().lower() not in _OFF_WORDS


def task_outcome(headers: Mapping[str, str]) -> str | None:
    """The task outcome the request declares: ``success``, ``failure`` or None.

    Args:
        headers: lower-cased request headers.

    Raises:
        UserError: an outcome header has a value that is neither a success nor a failure word.
    """
    outcome, problem = read_outcome(headers)
    if problem is not None:
        raise UserError(problem)
    return outcome


def read_outcome(headers: Mapping[str, str]) -> tuple[str | None, str | None]:
    """The declared outcome and, for a value that is no outcome, a note saying so.

    The first outcome header present decides (``x-ace-task-outcome``, ``x-ace-outcome``,
    ``x-ace-task-success``). Never raises: an unparsable value gives ``(None, note)``.

    Args:
        headers: lower-cased request headers.

    Returns:
        ``(success | failure | None, None | note)``.
    """
    for name in OUTCOME_HEADERS:
        raw = headers.get(name)
        if raw is None:
            continue
        value = raw.strip().lower()
        if value in _SUCCESS_WORDS:
            return SUCCESS, None
        if value in _FAILURE_WORDS:
            return FAILURE, None
        return None, f"header {name}: {raw[:100]!r} is not an outcome; use success or failure"
    return None, None


def skill_override(headers: Mapping[str, str], skill: str) -> str | None:
    """The value ``x-ace-skills`` gives `skill` (its own entry, else ``*``), or None.

    The header is a comma-separated list of ``name=value`` entries, e.g.
    ``skill_knowledge_graph=off`` or ``*=off``; names are case-insensitive. The value is
    returned as written (stripped); what it may do is the caller's rule.
    """
    raw = headers.get(SKILLS_HEADER)
    if not raw:
        return None
    found: dict[str, str] = {}
    for entry in raw.split(","):
        name, sep, mode = entry.partition("=")
        if sep:
            found[name.strip().lower()] = mode.strip()
    return found.get(skill.lower(), found.get("*"))
