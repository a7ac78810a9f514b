"""Injection: put the block into the last user message without touching the cached prefix.

The block goes at the end of the last ``user`` message: appended to a string content
after a blank line, or as a new ``{"type": "text"}`` part at the end of a content list
(Anthropic content blocks and OpenAI content parts alike). Prompt caching keys on the
bytes before a ``cache_control`` breakpoint, so:

- when the caller's last breakpoint is in an earlier message or in the last user message
  itself, appending at the end leaves every byte before it as it was;
- when the last breakpoint lies after the last user message, nothing is injected
  (``cache_breakpoint_after_last_user``);
- when the body already carries a block (a previous turn's, sent back by the client), that
  block is replaced in place instead of adding a second one; if it sits before the last
  breakpoint it is left exactly as it is (``block_in_cached_prefix``).

The caller's body is never mutated: the result shares every untouched object with it and
copies only the path to the changed message.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from insika_knowledge.procedures.recall.render import HEADER_PREFIX

SEPARATOR: Final = "\n\n"
#: Exactly what `render` produces: the header line, then one numbered line per step. Only
#: text of this shape, at the very end of a user message, is taken for an earlier block.
BLOCK_RE: Final = re.compile(
    re.escape(HEADER_PREFIX) + r"\d+ prior runs?, confidence \d+\.\d{2}\](?:\n\d+\. [^\n]*)*"
)


@dataclass(frozen=True)
class Injection:
    """The outcome of an injection attempt.

    Attributes:
        body: the body to send upstream (the caller's object itself when unchanged).
        injected: the block is in `body` because this call put it there.
        reason: why not, when not (``no_user_message``, ``cache_breakpoint_after_last_user``,
            ``block_in_cached_prefix``), else None.
    """

    body: dict[str, Any]
    injected: bool
    reason: str | None = None


def _has_breakpoint(value: Any) -> bool:
    if isinstance(value, Mapping):
        return "cache_control" in value
    return False


def last_breakpoint(messages: list[Any]) -> tuple[int, int] | None:
    """``(message index, part index)`` of the last ``cache_control`` in `messages`, or None.

    A breakpoint set on a message object rather than on one of its parts covers the whole
    message; it is reported at the message's last part.
    """
    for i in range(len(messages) - 1, -1, -1):
        message = messages[i]
        if not isinstance(message, Mapping):
            continue
        content = message.get("content")
        if isinstance(content, list):
            for j in range(len(content) - 1, -1, -1):
                if _has_breakpoint(content[j]):
                    return i, j
        if "cache_control" in message:
            return i, (len(content) - 1 if isinstance(content, list) else 0)
    return None


def _tail_block_start(content: str) -> int | None:
    """Where a block this skill wrote starts in a string content (it is always the tail)."""
    start = content.rfind(HEADER_PREFIX)
    if start < 0 or not BLOCK_RE.fullmatch(content, start):
        return None
    if start and not content[:start].endswith(SEPARATOR):
        return None
    return start


def _block_position(content: Any) -> int | None:
    """Where a previous block sits in a content: list index, -1 for a string tail, None."""
    if isinstance(content, str):
        return -1 if _tail_block_start(content) is not None else None
    if isinstance(content, list):
        for j, part in enumerate(content):
            if (
                isinstance(part, Mapping)
                and isinstance(part.get("text"), str)
                and BLOCK_RE.fullmatch(part["text"])
            ):
                return j
    return None


def _with_block(content: Any, block: str) -> Any:
    position = _block_position(content)
    if isinstance(content, str):
        if position is not None:
            start = _tail_block_start(content)
            assert start is not None
            head = content[:start]
            if head.endswith(SEPARATOR):
                head = head[: -len(SEPARATOR)]
            return (head + SEPARATOR if head else "") + block
        return (content + SEPARATOR if content else "") + block
    parts = list(content) if isinstance(content, list) else []
    if position is not None:
        parts[position] = {**parts[position], "text": block}
        return parts
    parts.append({"type": "text", "text": block})
    return parts


def inject(body: Mapping[str, Any], block: str) -> Injection:
    """Add (or update in place) `block` in the last user message of `body`.

    Args:
        body: the request body (OpenAI chat or Anthropic messages); not modified.
        block: the rendered block (starts with ``[recalled procedure — ``).

    Returns:
        The `Injection`.
    """
    original = body if isinstance(body, dict) else dict(body)
    messages = body.get("messages")
    if not isinstance(messages, list):
        return Injection(original, False, "no_user_message")
    last_user = next(
        (
            i
            for i in range(len(messages) - 1, -1, -1)
            if isinstance(messages[i], Mapping) and messages[i].get("role") == "user"
        ),
        None,
    )
    if last_user is None:
        return Injection(original, False, "no_user_message")
    breakpoint = last_breakpoint(messages)
    if breakpoint is not None and breakpoint[0] > last_user:
        return Injection(original, False, "cache_breakpoint_after_last_user")
    if isinstance(messages[last_user], Mapping) and "cache_control" in messages[last_user]:
        # A breakpoint on the message itself covers all of it, whatever is appended.
        return Injection(original, False, "block_in_cached_prefix")
    for i, message in enumerate(messages):
        if not isinstance(message, Mapping) or message.get("role") != "user":
            continue
        position = _block_position(message.get("content"))
        if position is None or i == last_user:
            continue
        cached = breakpoint is not None and (
            i < breakpoint[0]
            or (i == breakpoint[0] and (position == -1 or position <= breakpoint[1]))
        )
        if cached:
            return Injection(original, False, "block_in_cached_prefix")
        return Injection(_replace(original, messages, i, block), True)
    position = _block_position(messages[last_user].get("content"))
    if (
        position is not None
        and breakpoint is not None
        and breakpoint[0] == last_user
        and (position == -1 or position <= breakpoint[1])
    ):
        return Injection(original, False, "block_in_cached_prefix")
    return Injection(_replace(original, messages, last_user, block), True)


def _replace(body: dict[str, Any], messages: list[Any], index: int, block: str) -> dict[str, Any]:
    message = dict(messages[index])
    message["content"] = _with_block(message.get("content"), block)
    new_messages = list(messages)
    new_messages[index] = message
    new_body = dict(body)
    new_body["messages"] = new_messages
    return new_body
