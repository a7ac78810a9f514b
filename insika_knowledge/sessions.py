"""Transcripts: readers for stored sessions (JSONL) and session-id checks.

The turn the engine hands over (`Turn`, `AgentSpec`) is defined with the hooks in
`insika_knowledge.hookspecs` and re-exported here.

The JSONL schema is the normalised one of ``shared/data/README.md``: one object per
line with ``session_id``, ``messages`` (role, content, optional tool_calls,
tool_call_id, name), ``outcome`` and ``metadata``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from insika_knowledge.errors import UserError
from insika_knowledge.hookspecs import AgentSpec as AgentSpec  # re-exported: the hook types
from insika_knowledge.hookspecs import Turn as Turn

ROLES = frozenset({"system", "user", "assistant", "tool"})
#: The longest session (or turn) id accepted.
SESSION_ID_MAX: Final = 200


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


@dataclass(frozen=True)
class Session:
    """A stored conversation: its id, messages, outcome label and metadata."""

    session_id: str
    messages: list[dict[str, Any]]
    outcome: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    line: int = 0


def read_sessions(path: str | os.PathLike[str]) -> Iterator[Session]:
    """Read a normalised JSONL file lazily, one `Session` per non-blank line.

    Raises:
        UserError: the file is missing, or a line is not such a JSON object (the message
            names the file and line number).
    """
    source = Path(path)
    try:
        handle = source.open(encoding="utf-8")
    except FileNotFoundError:
        raise UserError(f"sessions file {source} does not exist") from None
    except OSError as exc:
        raise UserError(f"cannot read sessions file {source}: {exc}") from None
    with handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            yield parse_session(line, where=f"{source}:{number}", line=number)


def parse_session(text: str, *, where: str = "<input>", line: int = 0) -> Session:
    """Parse one JSONL line into a `Session`.

    Raises:
        UserError: invalid JSON, a missing or invalid ``session_id`` (see
            `session_id_problem`), a missing ``messages``, a message without a known
            role, or text that cannot be written as UTF-8 (a lone surrogate, which JSON
            can spell as ``\\ud800``); the message starts with `where`.
    """
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UserError(f"{where}: not JSON ({exc.msg} at column {exc.colno})") from None
    except RecursionError:
        raise UserError(f"{where}: nested too deeply to read") from None
    if not isinstance(data, dict):
        raise UserError(f"{where}: a session must be a JSON object")
    session_id = data.get("session_id")
    if "session_id" not in data:
        raise UserError(f"{where}: 'session_id' must be non-empty text")
    problem = session_id_problem(session_id)
    if problem is not None or not isinstance(session_id, str):  # not text always has a problem
        raise UserError(f"{where}: 'session_id' {problem}")
    messages = data.get("messages")
    if not isinstance(messages, list):
        raise UserError(f"{where}: 'messages' must be a list")
    for i, message in enumerate(messages):
        if not isinstance(message, dict) or message.get("role") not in ROLES:
            raise UserError(f"{where}: messages[{i}] needs a role of {sorted(ROLES)}")
        if not _encodable(message):
            raise UserError(
                f"{where}: messages[{i}] holds text that cannot be written as UTF-8 "
                "(a lone surrogate such as \\ud800)"
            )
    metadata: dict[str, Any] = data["metadata"] if isinstance(data.get("metadata"), dict) else {}
    return Session(session_id, messages, data.get("outcome"), metadata, line)


def _encodable(value: Any) -> bool:
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
