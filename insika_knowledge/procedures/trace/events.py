"""Trace events: a conversation's messages as one stream of what happened.

OpenAI chat and Anthropic messages bodies, and the normalised session JSONL of
``shared/data/README.md``, come out as `Event` values: the user's text, the assistant's
text, a tool call (OpenAI ``tool_calls``, Anthropic ``tool_use`` blocks) and a tool result
(OpenAI ``role: tool`` messages, Anthropic ``tool_result`` blocks, with ``is_error``).
An assistant message that carries no tool call but ends in a fenced shell block
(```` ```bash ````) is read as a command whose output is the next user message (the
text-command protocol of shell agents).

A message's text and tool calls are read by `insika_knowledge.wire.messages`, as every
other reader of a message reads them; the request's headers by
`insika_knowledge.wire.headers`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Final

from insika_knowledge.errors import UserError
from insika_knowledge.wire.messages import NAME_MAX, SEPARATOR, safe_name, text_of, text_parts, tool_calls

_FENCE_RE: Final = re.compile(r"```(bash|sh|shell|console|zsh)?[ \t]*\n(.*?)\n?```", re.S)


@dataclass(slots=True)
class Event:
    """One thing that happened in a conversation (read-only by convention: not frozen,
    because a frozen dataclass costs three times as much to make, and a trace holds
    thousands).

    Attributes:
        kind: ``user`` (the person's text), ``assistant`` (the model's text), ``call``
            (a tool call or a text command) or ``result`` (a tool's output).
        index: the message's position in the list.
        text: the text (user, assistant, result).
        call_id: the call's id (``call``, ``result``); ``call-<index>-<position>`` for a
            call the message gives no id, ``text-<index>`` for text commands.
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


def _arguments(value: Any) -> Any:
    # `tool_calls` gives JSON text of an object as a dict; JSON text of another value is
    # parsed too (a shell tool may take its command as one JSON string), and text that is
    # no JSON at all (or nested past what the parser reads) becomes the ``args`` value.
    # Every key is a `safe_name`.
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except (ValueError, RecursionError):
            return {"args": value}
    return _safe_keys(value, 0)


#: How deep `_safe_keys` reads a call's arguments; deeper, a value is its placeholder.
_ARGUMENTS_DEPTH: Final = 32


def _safe_keys(value: Any, depth: int) -> Any:
    """`value` with the keys of every object `safe_name`s (past `_ARGUMENTS_DEPTH` levels,
    an object or a list is ``"..."``); `value` itself when nothing changes (the usual case).
    """
    return value if _is_safe(value, depth) else _made_safe(value, depth)


def _is_safe(value: Any, depth: int) -> bool:
    if isinstance(value, dict):
        return depth < _ARGUMENTS_DEPTH and all(
            type(k) is str and k.isidentifier() and len(k) <= NAME_MAX and _is_safe(v, depth + 1)
            for k, v in value.items())
    if isinstance(value, list):
        return depth < _ARGUMENTS_DEPTH and all(_is_safe(v, depth + 1) for v in value)
    return True


def _made_safe(value: Any, depth: int) -> Any:
    if isinstance(value, dict):
        if depth >= _ARGUMENTS_DEPTH:
            return "..."
        return {safe_name(str(k)): _made_safe(v, depth + 1) for k, v in value.items()}
    if isinstance(value, list):
        if depth >= _ARGUMENTS_DEPTH:
            return "..."
        return [_made_safe(v, depth + 1) for v in value]
    return value


def _calls(message: dict[str, Any], index: int) -> list[Event]:
    return [
        Event(
            "call",
            index,
            call_id=call.id or f"call-{index}-{call.position}",
            name=safe_name(call.name),
            arguments=_arguments(call.arguments),
        )
        for call in tool_calls(message)
    ]


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
                yield Event("result", index, text=text_of(content), call_id=pending_text_call)
                pending_text_call = ""
                continue
            pending_text_call = ""
            if isinstance(content, list):
                for block in content:
                    if isinstance(block, dict) and block.get("type") == "tool_result":
                        yield Event(
                            "result",
                            index,
                            text=text_of(block.get("content")),
                            call_id=str(block.get("tool_use_id", "")),
                            is_error=bool(block.get("is_error")),
                        )
                texts = text_parts(content)
                if texts:
                    yield Event("user", index, text=SEPARATOR.join(texts))
            else:
                yield Event("user", index, text=text_of(content))
        elif role == "assistant":
            pending_text_call = ""
            calls = _calls(message, index)
            text = text_of(content)
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
                text=text_of(content),
                call_id=str(message.get("tool_call_id") or message.get("name") or ""),
                is_error=bool(message.get("is_error")),
            )
        else:
            pending_text_call = ""
