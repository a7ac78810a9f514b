"""Knowledge placement: the ``<knowledge>`` block goes where the procedure block goes.

The rules are the procedure block's (`insika_knowledge.wire.placement`, given the
procedure block's shape, `insika_knowledge.procedures.PROCEDURE_BLOCK`): the block is
appended to the last user message (a string after a blank line, a content list as a new
text part), or, when the caller's last ``cache_control`` breakpoint lies after that
message or on the whole of it, after the last message; every byte before the breakpoint
stays as it was.

When the body already carries a procedure block (the skill just injected one, or the
client sent one back), placing would replace that block with whatever it is given; the
knowledge block is then given together with the procedure block (knowledge first, the
procedure block still at the tail), so both stay, in the procedure block's place.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from insika_knowledge.procedures import PROCEDURE_BLOCK
from insika_knowledge.wire import placement
from insika_knowledge.wire.placement import Placement


def place(body: dict[str, Any], block: str, fmt: str | None = None) -> Placement:
    """Place `block` in `body` by the procedure block's cache rules (see the module doc).

    Args:
        body: the request body (OpenAI chat or Anthropic messages); not modified.
        block: the ``<knowledge>`` block (`insika_knowledge.retrieve.Retriever.block`).
        fmt: the wire format the route says (``openai`` or ``anthropic``).

    Returns:
        Where the block went: `Placement.placed`, else `Placement.reason` (``no_user_message``,
        ``assistant_prefill``, ``block_in_cached_prefix``); its ``body`` is the given object
        itself when not placed.
    """
    procedure = procedure_block(body)
    given = block if procedure is None else block + PROCEDURE_BLOCK.separator + procedure
    return placement.place(body, given, PROCEDURE_BLOCK, fmt=fmt)


def procedure_block(body: Mapping[str, Any]) -> str | None:
    """The text of the procedure block placing would replace in `body`, or None.

    That is the first user message's block, a string content's tail or a whole text part
    of the procedure block's shape (`insika_knowledge.wire.placement.find`).
    """
    return placement.find(body, PROCEDURE_BLOCK)
