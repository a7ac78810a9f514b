"""Knowledge placement: the ``<knowledge>`` block goes where the procedure block goes.

The rules are the procedure skill's (`insika_knowledge.procedures.recall.inject.inject`), reused
as they are: the block is appended to the last user message (a string after a blank line,
a content list as a new text part), so every byte before the caller's last
``cache_control`` breakpoint stays as it was; nothing is placed when that breakpoint lies
after the last user message or on the message itself.

When the body already carries a procedure block (the skill just injected one, or the
client sent one back), `inject` would replace that block with whatever it is given; the
knowledge block is then given together with the procedure block (knowledge first, the
procedure block still at the tail), so both stay, in the procedure block's place.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from insika_knowledge.procedures.recall.inject import BLOCK_RE, SEPARATOR, inject
from insika_knowledge.procedures.recall.render import HEADER_PREFIX


@dataclass(frozen=True)
class Placement:
    """Where the knowledge block went.

    Attributes:
        body: the body to send upstream (the given object itself when not placed).
        placed: the block is in `body`.
        reason: why not, when not (``no_user_message``,
            ``cache_breakpoint_after_last_user``, ``block_in_cached_prefix``), else None.
    """

    body: dict[str, Any]
    placed: bool
    reason: str | None = None


def place(body: dict[str, Any], block: str, fmt: str | None = None) -> Placement:
    """Place `block` in `body` by the procedure block's cache rules (see the module doc).

    Args:
        body: the request body (OpenAI chat or Anthropic messages); not modified.
        block: the ``<knowledge>`` block (`insika_knowledge.retrieve.Retriever.block`).
        fmt: the wire format the route says (``openai`` or ``anthropic``).
    """
    procedure = procedure_block(body)
    injection = inject(body, block if procedure is None else block + SEPARATOR + procedure, fmt)
    return Placement(injection.body, injection.injected, injection.reason)


def procedure_block(body: Mapping[str, Any]) -> str | None:
    """The text of the procedure block `inject` would replace in `body`, or None.

    That is the first user message's block, a string content's tail or a whole text part
    matching `BLOCK_RE`.
    """
    messages = body.get("messages")
    for message in messages if isinstance(messages, list) else ():
        if not isinstance(message, Mapping) or message.get("role") != "user":
            continue
        content = message.get("content")
        if isinstance(content, str):
            start = content.rfind(HEADER_PREFIX)
            if start >= 0 and BLOCK_RE.fullmatch(content, start) and (
                start == 0 or content[:start].endswith(SEPARATOR)
            ):
                return content[start:]
        elif isinstance(content, list):
            for part in content:
                text = part.get("text") if isinstance(part, Mapping) else None
                if isinstance(text, str) and BLOCK_RE.fullmatch(text):
                    return text
    return None
