"""Cache-safe placement: get a block to the model without touching the cached prefix.

Prompt caching keys on the bytes before a ``cache_control`` breakpoint, and a client never
sends an injected block back: it only knows its own messages. So a block is *placed* once
per session and then *carried*: every later request of the session gets the identical
block bytes at the identical place (relative to the client's own messages), and the
upstream prefix stays byte-stable from one request to the next.

What a block looks like is the caller's (`BlockShape`: how it starts, the whole of it,
what separates it from the text before it); this module knows no block's contents.

Placement, on the first request that gets a block (`place`):

- when the newest breakpoint is before the end of the last ``user`` message (in an earlier
  message, or on a part of that message), the block goes at the end of that message:
  appended to a string content after the shape's separator, or as a new
  ``{"type": "text"}`` part at the end of a content list (Anthropic content blocks and
  OpenAI content parts alike); every byte before the breakpoint stays as it was;
- when the newest breakpoint is on a message after the last user message (an agent loop
  that marks its newest tool result), or on the whole last user message, nothing before
  it may change, so the block goes after the last message: OpenAI chat takes a new
  ``user`` message there (a user turn may follow a tool or an assistant message); Anthropic
  messages takes a text part at the end of the last message when that is a ``user``
  message (text blocks may follow ``tool_result`` blocks), and a new ``user`` message after
  an assistant turn that is not a prefill. A body that ends in an assistant message under a
  breakpoint in Anthropic format is a prefill: nothing is placed (``assistant_prefill``);
- a body with no user message gets nothing (``no_user_message``); a body that already
  carries a block of the shape (a client that echoes it) keeps it, replaced in place when
  it is after the newest breakpoint, left alone inside the cached prefix
  (``block_in_cached_prefix``).

The place is an `Anchor`: the client message the block is attached to (or follows), how,
and a digest of that message (its JSON without the ``cache_control`` marks, which clients
move from request to request). `carry` puts the same bytes at the same anchor on every
later request, as long as the client still sends that message unchanged; when it does not
(the history was rewritten or trimmed), the carry is lost (``carry_lost``) and the next
placement starts afresh.

The caller's body is never mutated: the result shares every untouched object with it and
copies only the path to the changed message.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

OPENAI: Final = "openai"
ANTHROPIC: Final = "anthropic"
#: `Anchor.kind` values.
TAIL: Final = "tail"
PART: Final = "part"
MESSAGE: Final = "message"


@dataclass(frozen=True)
class BlockShape:
    """What a caller's block looks like, so a copy of it already in a body is found.

    Attributes:
        header: the text every block starts with (a string content is searched for its
            last occurrence).
        pattern: matches exactly one whole block (``fullmatch``); only text of this shape,
            at the very end of a string content or as a whole text part, is taken for a block.
        separator: between a string content and a block appended to it.
    """

    header: str
    pattern: re.Pattern[str]
    separator: str = "\n\n"


@dataclass(frozen=True)
class Anchor:
    """Where a session's block sits, relative to the client's own messages.

    Attributes:
        kind: ``tail`` (appended to the string content of message `index`), ``part`` (a
            text part at position `part` of message `index`'s content list) or ``message``
            (a new user message right after message `index`).
        index: the client message the block is attached to or follows.
        part: for ``part``, the position of the block in the content list.
        digest: 16 hex digits of blake2b over that client message (markers removed).
        label: what the caller names the block by, kept with the anchor ('' for none).
    """

    kind: str
    index: int
    part: int = 0
    digest: str = ""
    label: str = ""


@dataclass(frozen=True)
class Placement:
    """The outcome of a placement attempt.

    Attributes:
        body: the body to send upstream (the caller's object itself when unchanged).
        placed: the block is in `body` because this call put it there.
        reason: why not, when not (``no_user_message``, ``assistant_prefill``,
            ``block_in_cached_prefix``, ``carry_lost``), else None.
        anchor: where the block is (None when not placed, or placed over an echoed copy).
    """

    body: dict[str, Any]
    placed: bool
    reason: str | None = None
    anchor: Anchor | None = None


def wire_format(body: Mapping[str, Any]) -> str:
    """``anthropic`` (top-level ``system``, ``tool_use``/``tool_result`` blocks) or ``openai``."""
    if "system" in body:
        return ANTHROPIC
    for message in body.get("messages") or ():
        if not isinstance(message, Mapping):
            continue
        if message.get("role") in ("system", "tool", "developer") or "tool_calls" in message:
            return OPENAI
        content = message.get("content")
        if isinstance(content, list):
            for part in content:
                if isinstance(part, Mapping) and part.get("type") in ("tool_use", "tool_result"):
                    return ANTHROPIC
    return OPENAI


def digest(message: Any) -> str:
    """16 hex digits of blake2b over `message`'s JSON, ``cache_control`` marks removed."""
    text = json.dumps(unmarked(message), sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).hexdigest()


def unmarked(value: Any) -> Any:
    """A copy of the JSON value `value` with every ``cache_control`` key removed, at any depth."""
    if isinstance(value, Mapping):
        return {k: unmarked(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [unmarked(v) for v in value]
    return value


def has_breakpoint(value: Any) -> bool:
    """True when `value` is an object that carries a ``cache_control`` mark itself."""
    return isinstance(value, Mapping) and "cache_control" in value


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
                if has_breakpoint(content[j]):
                    return i, j
        if "cache_control" in message:
            return i, (len(content) - 1 if isinstance(content, list) else 0)
    return None


def _tail_block_start(content: str, shape: BlockShape) -> int | None:
    """Where a block of `shape` starts in a string content (a placed one is always the tail)."""
    start = content.rfind(shape.header)
    if start < 0 or not shape.pattern.fullmatch(content, start):
        return None
    if start and not content[:start].endswith(shape.separator):
        return None
    return start


def _block_position(content: Any, shape: BlockShape) -> int | None:
    """Where a block of `shape` sits in a content: list index, -1 for a string tail, None."""
    if isinstance(content, str):
        return -1 if _tail_block_start(content, shape) is not None else None
    if isinstance(content, list):
        for j, part in enumerate(content):
            if (
                isinstance(part, Mapping)
                and isinstance(part.get("text"), str)
                and shape.pattern.fullmatch(part["text"])
            ):
                return j
    return None


def find(body: Mapping[str, Any], shape: BlockShape) -> str | None:
    """The text of the block of `shape` in `body`, the one `place` would replace, or None.

    That is the first user message's block: a string content's tail or a whole text part.
    """
    messages = body.get("messages")
    for message in messages if isinstance(messages, list) else ():
        if not isinstance(message, Mapping) or message.get("role") != "user":
            continue
        content = message.get("content")
        if isinstance(content, str):
            start = _tail_block_start(content, shape)
            if start is not None:
                return content[start:]
        elif isinstance(content, list):
            position = _block_position(content, shape)
            if position is not None:
                return str(content[position]["text"])
    return None


def _with_block(content: Any, block: str, shape: BlockShape) -> Any:
    position = _block_position(content, shape)
    separator = shape.separator
    if isinstance(content, str):
        if position is not None:
            start = _tail_block_start(content, shape)
            assert start is not None
            head = content[:start]
            if head.endswith(separator):
                head = head[: -len(separator)]
            return (head + separator if head else "") + block
        return (content + separator if content else "") + block
    parts = list(content) if isinstance(content, list) else []
    if position is not None:
        parts[position] = {**parts[position], "text": block}
        return parts
    parts.append({"type": "text", "text": block})
    return parts


def _last_user(messages: list[Any]) -> int | None:
    return next(
        (
            i
            for i in range(len(messages) - 1, -1, -1)
            if isinstance(messages[i], Mapping) and messages[i].get("role") == "user"
        ),
        None,
    )


def place(
    body: Mapping[str, Any], block: str, shape: BlockShape, *, label: str = "", fmt: str | None = None
) -> Placement:
    """Put `block` into `body` for the first time (see the module docstring).

    Args:
        body: the request body (OpenAI chat or Anthropic messages); not modified.
        block: the block's text (of `shape`).
        shape: what a block looks like (to find a copy the client echoed).
        label: what the caller names the block by, kept in the anchor.
        fmt: the wire format when the caller knows it (a relay knows it from the route:
            ``anthropic`` or ``openai``); None reads it from the body (`wire_format`).

    Returns:
        The `Placement`, with the `Anchor` a session keeps for `carry` when placed.
    """
    original = body if isinstance(body, dict) else dict(body)
    messages = body.get("messages")
    if not isinstance(messages, list):
        return Placement(original, False, "no_user_message")
    last_user = _last_user(messages)
    if last_user is None:
        return Placement(original, False, "no_user_message")
    breakpoint = last_breakpoint(messages)
    echoed = _echoed(original, messages, breakpoint, block, shape)
    if echoed is not None:
        return echoed
    whole_marked = has_breakpoint(messages[last_user])
    if (breakpoint is None or breakpoint[0] <= last_user) and not whole_marked:
        content = messages[last_user].get("content")
        if isinstance(content, list):
            anchor = Anchor(PART, last_user, len(content), digest(messages[last_user]), label)
        else:
            anchor = Anchor(TAIL, last_user, 0, digest(messages[last_user]), label)
        return Placement(_attach(original, messages, anchor, block, shape), True, None, anchor)
    last = len(messages) - 1
    if (fmt or wire_format(original)) == ANTHROPIC:
        tail = messages[last]
        if isinstance(tail, Mapping) and tail.get("role") == "assistant":
            return Placement(original, False, "assistant_prefill")
        content = tail.get("content") if isinstance(tail, Mapping) else None
        if isinstance(content, list) and "cache_control" not in tail:
            anchor = Anchor(PART, last, len(content), digest(tail), label)
            return Placement(_attach(original, messages, anchor, block, shape), True, None, anchor)
    anchor = Anchor(MESSAGE, last, 0, digest(messages[last]), label)
    return Placement(_attach(original, messages, anchor, block, shape), True, None, anchor)


def _echoed(
    original: dict[str, Any],
    messages: list[Any],
    breakpoint: tuple[int, int] | None,
    block: str,
    shape: BlockShape,
) -> Placement | None:
    """A block the client sent back: replaced in place, or left alone in the cached prefix."""
    for i, message in enumerate(messages):
        if not isinstance(message, Mapping) or message.get("role") != "user":
            continue
        position = _block_position(message.get("content"), shape)
        if position is None:
            continue
        cached = breakpoint is not None and (
            i < breakpoint[0]
            or (i == breakpoint[0] and (position == -1 or position <= breakpoint[1]))
            or "cache_control" in message
        )
        if cached:
            return Placement(original, False, "block_in_cached_prefix")
        new_message = dict(message)
        new_message["content"] = _with_block(message.get("content"), block, shape)
        return Placement(_replaced(original, messages, i, new_message), True)
    return None


def carry(body: Mapping[str, Any], block: str, anchor: Anchor, shape: BlockShape) -> Placement:
    """Put a session's `block` back at `anchor` (the same bytes at the same place).

    Args:
        body: a later request of the session; not modified.
        block: the block the session received.
        anchor: where it was placed.
        shape: the block's shape (its separator joins a string content).

    Returns:
        The `Placement` (``carry_lost`` when the client no longer sends the anchor message
        as it was).
    """
    original = body if isinstance(body, dict) else dict(body)
    messages = body.get("messages")
    if (
        not isinstance(messages, list)
        or anchor.index >= len(messages)
        or digest(messages[anchor.index]) != anchor.digest
    ):
        return Placement(original, False, "carry_lost")
    return Placement(_attach(original, messages, anchor, block, shape), True, None, anchor)


def _attach(
    body: dict[str, Any], messages: list[Any], anchor: Anchor, block: str, shape: BlockShape
) -> dict[str, Any]:
    message = messages[anchor.index]
    if anchor.kind == MESSAGE:
        new_messages = list(messages)
        new_messages.insert(anchor.index + 1, {"role": "user", "content": block})
        return {**body, "messages": new_messages}
    content = message.get("content")
    new_message = dict(message)
    if anchor.kind == TAIL:
        text = content if isinstance(content, str) else ""
        new_message["content"] = (text + shape.separator if text else "") + block
    else:
        parts = list(content) if isinstance(content, list) else []
        parts.insert(min(anchor.part, len(parts)), {"type": "text", "text": block})
        new_message["content"] = parts
    return _replaced(body, messages, anchor.index, new_message)


def _replaced(
    body: dict[str, Any], messages: list[Any], index: int, message: dict[str, Any]
) -> dict[str, Any]:
    new_messages = list(messages)
    new_messages[index] = message
    new_body = dict(body)
    new_body["messages"] = new_messages
    return new_body
