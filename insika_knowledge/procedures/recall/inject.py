"""Injection: the procedure block's shape, and where a session's block sits as stored.

The rules that get a block to the model without touching the cached prefix, and carry it
byte-identical on later requests, are `insika_knowledge.wire.placement`'s; this module
gives them the procedure block's shape (`BLOCK`: what `render` produces, so a block a
client echoes back is found) and keeps a session's `Anchor` in the session row
(`anchor_json`, `stored_anchor`), with the recalled procedure (or chain) as its label.
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict
from typing import Final

from insika_knowledge.procedures.recall.render import HEADER_PREFIX
from insika_knowledge.wire.placement import Anchor, BlockShape

SEPARATOR: Final = "\n\n"
#: Exactly what `render` produces: the header line, then one numbered line per step. Only
#: text of this shape, at the very end of a user message, is taken for an earlier block.
BLOCK_RE: Final = re.compile(
    re.escape(HEADER_PREFIX) + r"\d+ prior runs?, confidence \d+\.\d{2}\](?:\n\d+\. [^\n]*)*"
)
#: The procedure block, for `insika_knowledge.wire.placement`.
BLOCK: Final = BlockShape(HEADER_PREFIX, BLOCK_RE, SEPARATOR)


def anchor_json(anchor: Anchor) -> str:
    """The anchor as stored with the session (its label under ``procedure``)."""
    fields = asdict(anchor)
    fields["procedure"] = fields.pop("label")
    return json.dumps(fields, sort_keys=True, separators=(",", ":"))


def stored_anchor(text: str) -> Anchor | None:
    """The inverse of `anchor_json`; None for '' or anything malformed."""
    if not text:
        return None
    try:
        data = json.loads(text)
        return Anchor(
            str(data["kind"]),
            int(data["index"]),
            int(data.get("part", 0)),
            str(data.get("digest", "")),
            str(data.get("procedure", "")),
        )
    except (ValueError, KeyError, TypeError):
        return None
