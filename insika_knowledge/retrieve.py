"""Retrieval: the concepts relevant to a message, the ``<knowledge>`` block, ``load_knowledge``.

The block lists the top-k concepts for the customer's message, then the concepts
they link to with ``[[name]]`` (one hop, at most top-k more, unknown names ignored),
then an explicit, ordered instruction. Every value is XML-escaped, so no stored text
can close the block or forge a tag::

    <knowledge>
      <concept name="cep-13-campinas" confidence="0.60" provenance="observed">CEPs ...</concept>
    </knowledge>

    <instruction text>
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Any, Final
from xml.sax.saxutils import escape, quoteattr

from insika_knowledge.concept import check_name
from insika_knowledge.errors import InvalidName
from insika_knowledge.events import EventBus, KnowledgeRetrieved
from insika_knowledge.index.scan import Entry, ScanIndex
from insika_knowledge.store.base import Store

INSTRUCTION: Final = """\
These concepts were learned from earlier conversations. Follow these steps in order:
1. When the customer's question needs more than a summary above, call \
`load_knowledge("<name>")` FIRST, before any other lookup or tool for that topic.
2. Treat a concept with provenance="observed" as past practice, never as a guarantee: \
do not promise it to the customer. Only provenance="policy" is official.
3. A concept marked status="conflict" has contradicting reports: do not rely on it; \
say you will confirm."""

LOAD_KNOWLEDGE_SCHEMA: Final[dict[str, Any]] = {
    "type": "function",
    "function": {
        "name": "load_knowledge",
        "description": (
            "Load the full text of one learned concept listed in the <knowledge> block. "
            "Call it first, before other lookups, when the summary is not enough."
        ),
        "parameters": {
            "type": "object",
            "properties": {
                "name": {
                    "type": "string",
                    "description": "The concept's name exactly as in the block, e.g. 'cep-13-campinas'.",
                }
            },
            "required": ["name"],
            "additionalProperties": False,
        },
    },
}


@dataclass(frozen=True)
class Retrieved:
    """What retrieval chose for a message: matched concepts, then linked ones."""

    matched: list[Entry]
    linked: list[Entry]

    @property
    def entries(self) -> list[Entry]:
        """Matched then linked, in block order."""
        return [*self.matched, *self.linked]


def _xml_safe(text: str) -> str:
    # XML 1.0 forbids most control characters; drop them rather than emit a broken block.
    return "".join(c for c in text if c in "\t\n\r" or (ord(c) >= 0x20 and c not in "\ufffe\uffff"))


class Retriever:
    """Searches one store's concepts and renders what a turn's prompt receives.

    Args:
        store: the tenant's store.
        index: the search index (a `ScanIndex` over the same store by default).
        events: where ``knowledge_retrieved`` goes when ``load_knowledge`` is called.
    """

    def __init__(self, store: Store, index: ScanIndex | None = None, events: EventBus | None = None):
        self.store = store
        self.index = index or ScanIndex(store)
        self.events = events

    def retrieve(self, agent: str, message: str, top_k: int) -> Retrieved:
        """The top-k concepts for `message`, plus up to top-k concepts they link to."""
        hits = self.index.search(agent, message, top_k)
        matched = [h.entry for h in hits]
        if not matched:
            return Retrieved([], [])
        by_name = self.index.entries(agent)
        chosen = {e.name for e in matched}
        linked: list[Entry] = []
        for entry in matched:
            for name in entry.links:
                if len(linked) >= top_k:
                    break
                target = by_name.get(name)
                if target is not None and name not in chosen:
                    chosen.add(name)
                    linked.append(target)
        return Retrieved(matched, linked)

    def block(self, agent: str, message: str, top_k: int) -> str | None:
        """The ``<knowledge>`` block for `message`, or None when nothing matches."""
        retrieved = self.retrieve(agent, message, top_k)
        if not retrieved.matched:
            return None
        return render_block(retrieved.entries)

    def load_knowledge(self, agent: str, name: str) -> dict[str, Any]:
        """The ``load_knowledge`` tool's handler.

        Returns:
            ``{"name": ..., "markdown": ...}`` with the concept's full record, and fires
            ``knowledge_retrieved``; or ``{"error": ...}`` for an unknown or invalid name,
            naming up to 3 close names (nothing fires).
        """
        if not isinstance(name, str):
            return {"error": "load_knowledge needs a concept name (text)"}
        candidate = name.strip()
        try:
            check_name(candidate)
            stored = self.store.get(agent, candidate)
        except InvalidName:
            stored = None
        if stored is None:
            close = difflib.get_close_matches(candidate.lower(), self.store.names(agent), n=3, cutoff=0.5)
            hint = f"; did you mean {', '.join(close)}?" if close else ""
            return {"error": f"no concept named {candidate[:100]!r}{hint}"}
        if self.events is not None:
            self.events.emit(KnowledgeRetrieved(concept=stored.concept.name, agent=agent))
        return {"name": stored.concept.name, "markdown": stored.markdown}


def render_block(entries: list[Entry]) -> str:
    """The ``<knowledge>`` block for `entries`, then the instruction (see module doc)."""
    lines = ["<knowledge>"]
    for entry in entries:
        attrs = (
            f"name={quoteattr(_xml_safe(entry.name))} confidence=\"{entry.confidence:.2f}\" "
            f"provenance={quoteattr(_xml_safe(entry.provenance))}"
        )
        if entry.in_conflict:
            attrs += ' status="conflict"'
        lines.append(f"  <concept {attrs}>{escape(_xml_safe(entry.description))}</concept>")
    lines.append("</knowledge>")
    return "\n".join(lines) + "\n\n" + INSTRUCTION
