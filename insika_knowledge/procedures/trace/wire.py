"""Wire formats: read OpenAI chat and Anthropic messages bodies as one stream of events.

Both formats, and the normalised session JSONL of ``shared/data/README.md``, come out as
`Event` values: the user's text, the assistant's text, a tool call (OpenAI ``tool_calls``,
Anthropic ``tool_use`` blocks) and a tool result (OpenAI ``role: tool`` messages,
Anthropic ``tool_result`` blocks, with ``is_error``). An assistant message that carries no
tool call but ends in a fenced shell block (```` ```bash ````) is read as a command whose
output is the next user message (the text-command protocol of shell agents).

This module also reads the request's session id (header ``x-ace-session`` or body
``session_id``), task outcome (headers ``x-ace-task-outcome``, ``x-ace-outcome``,
``x-ace-task-success``) and offered tools.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Final

from insika_knowledge.errors import UserError

SESSION_HEADER: Final = "x-ace-session"
OUTCOME_HEADERS: Final = ("x-ace-task-outcome", "x-ace-outcome", "x-ace-task-success")
SKILLS_HEADER: Final = "x-ace-skills"
SUCCESS: Final = "success"
FAILURE: Final = "failure"

_SUCCESS_WORDS: Final = frozenset(
    {"success", "succeeded", "successful", "pass", "passed", "ok", "true", "1", "yes"}
)
_FAILURE_WORDS: Final = frozenset({"failure", "failed", "fail", "error", "false", "0", "no"})
_FENCE_RE: Final = re.compile(r"```(bash|sh|shell|console|zsh)?[ \t]*\n(.*?)\n?```", re.S)


@dataclass(frozen=True, slots=True)
class Event:
    """One thing that happened in a conversation.

    Attributes:
        kind: ``user`` (the person's text), ``assistant`` (the model's text), ``call``
            (a tool call or a text command) or ``result`` (a tool's output).
        index: the message's position in the list.
        text: the text (user, assistant, result).
        call_id: the call's id (``call``, ``result``); ``text-<index>`` for text commands.
        name: the tool's name (``call``; ``bash`` for text commands).
        arguments: the call's arguments, a JSON object (``call``).
        is_error: the result was flagged as an error by the wire format.
    """

    kind: str
    index: int
    text: str = ""
    call_id: str = ""
    name: str = ""
    arguments: Any = None
    is_error: bool = False


def _text_of(content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for part in content:
            if isinstance(part, str):
                parts.append(part)
            elif isinstance(part, dict) and part.get("type") in (
                None,
                "text",
                "input_text",
                "output_text",
            ):
                text = part.get("text")
                if isinstance(text, str):
                    parts.append(text)
        return "\n".join(parts)
    if isinstance(content, dict):
        return _text_of([content])
    return str(content)


def _arguments(raw: Any) -> Any:
    if isinstance(raw, str):
        if not raw.strip():
            return {}
        try:
            return json.loads(raw)
        except ValueError:
            return {"args": raw}
    return raw if raw is not None else {}


def _calls(message: Mapping[str, Any], index: int) -> list[Event]:
    out = []
    for position, call in enumerate(message.get("tool_calls") or ()):
        if not isinstance(call, dict):
            continue
        function = call.get("function")
        if not isinstance(function, dict):
            function = call
        name = function.get("name")
        if not isinstance(name, str) or not name:
            continue
        call_id = call.get("id") or f"call-{index}-{position}"
        out.append(
            Event(
                "call",
                index,
                call_id=str(call_id),
                name=name,
                arguments=_arguments(function.get("arguments")),
            )
        )
    return out


def events(messages: Any, start: int = 0) -> Iterator[Event]:
    """The events of a message list, in order (demonstration turns, ``is_demo``, skipped).

    Args:
        messages: OpenAI or Anthropic ``messages`` (or normalised session messages).
        start: the first message to read (indexes stay those of the whole list).

    Raises:
        UserError: `messages` is not a list, or an item is not an object with a role.
    """
    if not isinstance(messages, list):
        raise UserError("request body: 'messages' must be a list")
    pending_text_call = ""
    for index in range(max(0, start), len(messages)):
        message = messages[index]
        if not isinstance(message, dict) or not isinstance(message.get("role"), str):
            raise UserError(f"request body: messages[{index}] must be an object with a 'role'")
        if message.get("is_demo"):
            continue
        role = message["role"]
        content = message.get("content")
        if role == "user":
            if pending_text_call and not isinstance(content, list):
                yield Event("result", index, text=_text_of(content), call_id=pending_text_call)
                pending_text_call = ""
                continue
            pending_text_call = ""
            if isinstance(content, list):
                texts = []
                for block in content:
                    if isinstance(block, dict) and block.get("type") == "tool_result":
                        yield Event(
                            "result",
                            index,
                            text=_text_of(block.get("content")),
                            call_id=str(block.get("tool_use_id", "")),
                            is_error=bool(block.get("is_error")),
                        )
                    elif isinstance(block, dict) and block.get("type") in ("text", "input_text"):
                        if isinstance(block.get("text"), str):
                            texts.append(block["text"])
                    elif isinstance(block, str):
                        texts.append(block)
                if texts:
                    yield Event("user", index, text="\n".join(texts))
            else:
                yield Event("user", index, text=_text_of(content))
        elif role == "assistant":
            pending_text_call = ""
            calls = _calls(message, index)
            if isinstance(content, list):
                texts = []
                for position, block in enumerate(content):
                    if not isinstance(block, dict):
                        continue
                    if block.get("type") == "tool_use" and isinstance(block.get("name"), str):
                        calls.append(
                            Event(
                                "call",
                                index,
                                call_id=str(block.get("id") or f"call-{index}-{position}"),
                                name=block["name"],
                                arguments=_arguments(block.get("input")),
                            )
                        )
                    elif block.get("type") in ("text", "output_text") and isinstance(
                        block.get("text"), str
                    ):
                        texts.append(block["text"])
                text = "\n".join(texts)
            else:
                text = _text_of(content)
            if text:
                yield Event("assistant", index, text=text)
            if not calls and text and "```" in text:
                fences = _FENCE_RE.findall(text)
                if fences and fences[-1][1].strip():
                    pending_text_call = f"text-{index}"
                    calls.append(
                        Event(
                            "call",
                            index,
                            call_id=pending_text_call,
                            name="bash",
                            arguments={"command": fences[-1][1].strip()},
                        )
                    )
            yield from calls
        elif role in ("tool", "function"):
            pending_text_call = ""
            yield Event(
                "result",
                index,
                text=_text_of(content),
                call_id=str(message.get("tool_call_id") or message.get("name") or ""),
                is_error=bool(message.get("is_error")),
            )
        else:
            pending_text_call = ""


def tool_names(body: Mapping[str, Any]) -> tuple[str, ...]:
    """Names of the tools the request offers (OpenAI ``function.name`` or Anthropic ``name``)."""
    names = []
    for tool in body.get("tools") or ():
        if not isinstance(tool, dict):
            continue
        function = tool.get("function")
        name = function.get("name") if isinstance(function, dict) else tool.get("name")
        if isinstance(name, str):
            names.append(name)
    return tuple(names)


def lower_headers(headers: Mapping[str, str] | None) -> dict[str, str]:
    """`headers` with lower-case names (HTTP header names are case-insensitive)."""
    return {str(k).lower(): str(v) for k, v in (headers or {}).items()}


def session_id(body: Mapping[str, Any], headers: Mapping[str, str]) -> str | None:
    """The session id: header ``x-ace-session``, else body ``session_id``; None when absent.

    Args:
        body: the request body.
        headers: lower-cased request headers (`lower_headers`).
    """
    value = headers.get(SESSION_HEADER) or body.get("session_id")
    if value is None:
        return None
    value = str(value).strip()
    return value[:200] or None


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
