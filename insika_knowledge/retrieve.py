"""Retrieval: the concepts relevant to a message, the ``<knowledge>`` block, ``load_knowledge``.

This module holds the one quarantine filter: a concept held in quarantine (a customer-only
rule, see `insika_knowledge.trust`; `StoredConcept.quarantined`) is never a search hit,
never in a block, never loaded by ``load_knowledge`` and never listed for a model, whoever
asks (the engine plugin, the relay, Hermes, MCP, `Memory`, the command line). Only an
operator's listing asks for held concepts too (``held=True``), and sees them flagged.

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
import functools
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final, Protocol
from xml.sax.saxutils import escape, quoteattr

from insika_knowledge.analysis.numbers import is_numeric_term
from insika_knowledge.concept import CONTRADICTION_HEADING, Concept, check_name, claim_text, serialize
from insika_knowledge.errors import InvalidName
from insika_knowledge.events import EventBus, KnowledgeDegraded, KnowledgeRetrieved
from insika_knowledge.index.fts5 import Fts5Index
from insika_knowledge.index.postings import PostingsIndex
from insika_knowledge.index.scan import Entry, Hit, ScanIndex, entry_score
from insika_knowledge.index.tokenizer import attach
from insika_knowledge.store.base import Store, StoredConcept

#: The most characters the ``load_knowledge`` tool hands the model (about 4,000 tokens).
#: A longer record is shortened: its sources to the `CAPPED_SOURCES` most recent, then its
#: body cut at a line end, with a note saying so (and the conflict heading kept, if any).
LOAD_KNOWLEDGE_MAX_CHARS: Final = 16_000
#: Sources a shortened ``load_knowledge`` record keeps.
CAPPED_SOURCES: Final = 8
#: The line that ends a body ``load_knowledge`` had to cut.
CUT_NOTE: Final = "…(cut to fit the load_knowledge size cap; the full record is in the Studio)"

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


class SearchIndex(Protocol):
    """What retrieval needs of an index (Scan and FTS5 both provide it)."""

    name: str

    def search(self, agent: str, query: str, top_k: int) -> list[Hit]: ...
    def lookup(self, agent: str, names: list[str]) -> dict[str, Entry]: ...
    def weight(self, agent: str) -> Callable[[str], int]: ...
    def analyse(self, agent: str, query: str) -> frozenset[str]: ...


@dataclass(frozen=True)
class Retrieved:
    """What retrieval chose for a message: matched concepts, then linked ones."""

    matched: list[Entry]
    linked: list[Entry]

    @property
    def entries(self) -> list[Entry]:
        """Matched then linked, in block order."""
        return [*self.matched, *self.linked]


#: What XML 1.0 forbids of the characters a concept may hold: control characters but tab,
#: line feed and carriage return, and the two non-characters U+FFFE and U+FFFF.
_NOT_XML: Final = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def _xml_safe(text: str) -> str:
    # drop them rather than emit a broken block
    return _NOT_XML.sub("", text)


class Retriever:
    """Searches one store's concepts and renders what a turn's prompt receives.

    Args:
        store: the tenant's store.
        index: the search index (a `ScanIndex` over the same store by default).
        events: where ``knowledge_retrieved`` goes when ``load_knowledge`` is called.
    """

    def __init__(self, store: Store, index: SearchIndex | None = None, events: EventBus | None = None):
        self.store = store
        self.index: SearchIndex = index or ScanIndex(store)
        self.events = events
        self._fts: Fts5Index | None = None
        self._postings: PostingsIndex | None = None
        self._warned: set[str] = set()

    def index_for(self, agent: str, mode: str) -> SearchIndex:
        """The index serving `agent` under the config's ``index`` `mode`.

        ``scan``: Scan. ``fts5``: FTS5, or Scan (with one ``knowledge_degraded`` event)
        where this SQLite build lacks FTS5. ``auto``: Postings (exact BM25, FTS5's formula,
        over a snapshot the database keeps; see `insika_knowledge.index.postings` and
        benchmarks/README.md) at every size.
        """
        if mode == "scan":
            return self.index
        if mode == "auto":
            if self._postings is None:
                self._postings = PostingsIndex(self.store)
            return self._postings
        fts = self._full_text()
        if fts is None:
            if mode == "fts5" and agent not in self._warned:
                self._warned.add(agent)
                if self.events is not None:
                    self.events.emit(KnowledgeDegraded(
                        agent=agent, feature="index", reason="SQLite lacks FTS5: using scan"))
            return self.index
        return fts

    def _full_text(self) -> Fts5Index | None:
        """The FTS5 index over the store, the analyser given to it first; None without FTS5."""
        if self._fts is None and attach(self.store):
            self._fts = Fts5Index(self.store)
        return self._fts

    def retrieve(self, agent: str, message: str, top_k: int, mode: str = "scan",
                 min_coverage: float = 0.0) -> Retrieved:
        """The top-k concepts for `message`, plus up to top-k concepts they link to.

        Args:
            agent: the agent id.
            message: the customer's message.
            top_k: matched concepts at most (and linked ones at most again).
            mode: the config's ``index`` (scan, fts5 or auto).
            min_coverage: the relevance floor, 0..1: when even the best concept covers less
                than this share of the message's weighted terms (`coverage`), the message
                is taken as one no concept answers and nothing is returned.
        """
        index = self.index_for(agent, mode)
        held = self._held(agent)
        hits = _unheld(index, agent, message, top_k, held)
        if min_coverage > 0 and hits:
            wanted = index.analyse(agent, message)
            weight = functools.cache(index.weight(agent))  # each term's weight once
            best = best_coverage([h.entry for h in hits], wanted, weight)
            if best < min_coverage:
                hits = []
        matched = [h.entry for h in hits]
        if not matched:
            return Retrieved([], [])
        chosen = {e.name for e in matched}
        links = list(dict.fromkeys(n for e in matched for n in e.links if n not in chosen))
        found = index.lookup(agent, links) if links else {}
        linked = [found[n] for n in links if n in found and n not in held][:top_k]
        return Retrieved(matched, linked)

    def search(self, agent: str, query: str, top_k: int, mode: str = "scan", *,
               held: bool = False) -> list[Hit]:
        """The agent's concepts best matching `query`, best first: what every search box asks.

        A concept held in quarantine is never a hit (whatever calls this may hand the
        hits to a model: `Memory.search`, MCP's ``search_knowledge``), unless `held`.

        Args:
            agent: the agent id.
            query: any text (a customer's message, a few keywords).
            top_k: hits at most.
            mode: the config's ``index`` (scan, fts5 or auto; see `index_for`).
            held: True for an operator's listing (the Studio's search box): held concepts
                are hits too (their records say ``quarantined``).

        Returns:
            The index's hits (`Hit`: entry and score, higher is better), at most `top_k`.
        """
        index = self.index_for(agent, mode)
        return _unheld(index, agent, query, top_k, frozenset() if held else self._held(agent))

    def concepts(self, agent: str, *, held: bool = False) -> list[StoredConcept]:
        """Every concept of `agent`, by name (`ConceptStore.list_concepts`).

        Those held in quarantine are left out (a listing a model reads: MCP's resources),
        unless `held` (an operator's listing; each record's ``quarantined`` says which).
        """
        return [s for s in self.store.list_concepts(agent) if held or not s.quarantined]

    def _held(self, agent: str) -> frozenset[str]:
        """The names the filter leaves out: `agent`'s concepts held in quarantine.

        Read from the store at each call (one small read), not from an index entry: the
        indexes' caches and the postings snapshot follow concept versions, and a release
        by a later sighting need not write a version.
        """
        return self.store.quarantined_names(agent)

    def block(self, agent: str, message: str, top_k: int, mode: str = "scan",
              min_coverage: float = 0.0) -> str | None:
        """The ``<knowledge>`` block for `message`, or None when nothing matches."""
        retrieved = self.retrieve(agent, message, top_k, mode, min_coverage)
        if not retrieved.matched:
            return None
        return render_block(retrieved.entries)

    def load_knowledge(
        self, agent: str, name: str, *, max_chars: int | None = LOAD_KNOWLEDGE_MAX_CHARS,
    ) -> dict[str, Any]:
        """The ``load_knowledge`` tool's handler.

        Args:
            agent: the agent id.
            name: the concept's name (as the model wrote it).
            max_chars: the most characters of markdown returned (see
                `LOAD_KNOWLEDGE_MAX_CHARS` and `capped_record`); None = the whole record.

        Returns:
            ``{"name": ..., "markdown": ...}`` with the concept's record (plus
            ``"cut": True`` when it was shortened to `max_chars`), and fires
            ``knowledge_retrieved``; or ``{"error": ...}`` for an unknown or invalid name,
            naming up to 3 close names (nothing fires). A concept held in quarantine is
            never handed to the model: it answers as an unknown name, and is never
            offered as a close one (an operator reads it through `Memory.load`).
        """
        if not isinstance(name, str):
            return {"error": "load_knowledge needs a concept name (text)"}
        candidate = name.strip()
        try:
            check_name(candidate)
            stored = self.store.get(agent, candidate)
        except InvalidName:
            stored = None
        if stored is None or stored.quarantined:
            held = self._held(agent)
            names = [n for n in self.store.names(agent) if n not in held]
            close = difflib.get_close_matches(candidate.lower(), names, n=3, cutoff=0.5)
            hint = f"; did you mean {', '.join(close)}?" if close else ""
            return {"error": f"no concept named {candidate[:100]!r}{hint}"}
        if self.events is not None:
            self.events.emit(KnowledgeRetrieved(concept=stored.concept.name, agent=agent))
        markdown = stored.markdown
        if max_chars is not None and len(markdown) > max_chars:
            return {"name": stored.concept.name, "markdown": capped_record(stored.concept, max_chars),
                    "cut": True}
        return {"name": stored.concept.name, "markdown": markdown}


def _unheld(index: SearchIndex, agent: str, query: str, top_k: int, held: frozenset[str]) -> list[Hit]:
    """`index`'s best `top_k` hits for `query` that are not `held` (the one quarantine filter)."""
    hits = index.search(agent, query, top_k + len(held))
    return [h for h in hits if h.entry.name not in held][:top_k]


def capped_record(concept: Concept, max_chars: int) -> str:
    """`concept`'s markdown in at most `max_chars` characters (when it can be; >= 2,000).

    First its sources are cut to the `CAPPED_SOURCES` most recent; then its body is cut
    at a line (or word) end and ends with `CUT_NOTE`. A body in conflict keeps a
    ``## Contradiction`` heading, so the model still sees that the claim is disputed.
    """
    shorter = concept.replace(sources=concept.sources[-CAPPED_SOURCES:])
    text = serialize(shorter)
    if len(text) <= max_chars:
        return text
    tail = f"\n\n{CUT_NOTE}"
    if concept.in_conflict:
        tail = f"{tail}\n\n{CONTRADICTION_HEADING}\n\n- (entries cut; see the full record)"
    room = max(1, max_chars - (len(text) - len(shorter.body)) - len(tail))
    body = shorter.body[:room]
    for separator in ("\n", " "):
        at = body.rfind(separator)
        if at >= room // 2:
            body = body[:at]
            break
    kept = claim_text(body).rstrip() or body.strip() or "…"
    return serialize(shorter.replace(body=kept + tail))


def coverage(entry: Entry, wanted: frozenset[str], weight: Callable[[str], int]) -> float:
    """The share of a message's weighted terms a concept covers, 0..1.

    ``entry_score / sum(2 * weight(t))`` over the message's word terms (numeric terms,
    told apart by `is_numeric_term`, are left out of the denominator: a message carries
    several per number). A term no concept has gets the highest weight, so a message
    about something the store never heard of covers little.
    """
    return best_coverage([entry], wanted, weight)


def best_coverage(entries: list[Entry], wanted: frozenset[str], weight: Callable[[str], int]) -> float:
    """The highest `coverage` among `entries` (the message's weighted terms summed once)."""
    total = sum(2 * weight(t) for t in wanted if not is_numeric_term(t))
    return max(entry_score(e, wanted, weight) for e in entries) / total if total and entries else 0.0


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
