"""Client text that looks like memory's own blocks, made inert before the memory stages run.

A relay's client never receives what memory adds to the upstream request (the ``<knowledge>``
block, the procedure block): it sends only its own messages. So text of a block's shape in a
client's ``user`` or ``tool`` message (a tool result inside an Anthropic user message too) was
written by someone else, a customer quoting or forging one, and taken as it is it would pass
for memory's: a ``</knowledge>`` would close the block the relay appends to that same message
and open a forged one; a procedure header would be found as the session's own block, so the
procedure block would be put in that message (every later request changing it: the cached
prefix lost), or left alone in the cached prefix with knowledge off for the session.

`inert` rewrites, in those messages' text only:

- each ``<`` (or a look-alike) that opens or closes a ``knowledge`` or ``concept`` tag, as
  ``&lt;`` (`insika_knowledge.escaping.inert_tags`);
- the procedure header's opening ``[``, as the full-width ``［`` (`escaping.quoted_header`,
  as every stored text a prompt gets): the words read the same, and no block of that shape is
  found there.

The client's system prompt and the model's own messages are the business's and are kept. The
same message always gives the same bytes, so a session's history reads alike on every request
and its cached prefix stays byte-stable. Nothing is mutated: changed messages are copies.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from insika_knowledge.escaping import inert_tags, quoted_header

#: The tags of the ``<knowledge>`` block (`insika_knowledge.retrieve`).
BLOCK_TAGS: Final = frozenset({"knowledge", "concept"})
#: The roles whose text a client's users or tools wrote.
_CLIENT_ROLES: Final = frozenset({"user", "tool", "function"})


def inert_text(text: str) -> str:
    """`text` with memory's block tags and procedure header made inert (see the module doc);
    `text` itself when nothing changed.
    """
    if "<" not in text and text.isascii():  # (the header and every look-alike ``<`` are not ASCII)
        return text
    out = quoted_header(inert_tags(text, BLOCK_TAGS))
    return text if out == text else out


def inert(body: dict[str, Any]) -> dict[str, Any]:
    """`body` (OpenAI chat or Anthropic messages) with its client-written text made inert.

    Returns `body` itself when nothing changed; else a shallow copy whose changed messages
    (and only those) are copies.
    """
    messages = body.get("messages")
    if not isinstance(messages, list):
        return body
    changed = [_message(m) for m in messages]
    if all(new is old for new, old in zip(changed, messages, strict=True)):
        return body
    return {**body, "messages": changed}


def _message(message: Any) -> Any:
    if not isinstance(message, Mapping) or message.get("role") not in _CLIENT_ROLES:
        return message
    content = message.get("content")
    new = _content(content)
    return message if new is content else {**message, "content": new}


def _content(content: Any) -> Any:
    if isinstance(content, str):
        return inert_text(content)
    if not isinstance(content, list):
        return content
    parts = [_part(p) for p in content]
    return content if all(new is old for new, old in zip(parts, content, strict=True)) else parts


def _part(part: Any) -> Any:
    if isinstance(part, str):
        return inert_text(part)
    if not isinstance(part, Mapping):
        return part
    if isinstance(part.get("text"), str):
        text = inert_text(part["text"])
        return part if text is part["text"] else {**part, "text": text}
    if part.get("type") == "tool_result":
        inner = _content(part.get("content"))
        return part if inner is part.get("content") else {**part, "content": inner}
    return part

