"""The write path: one finished turn in, concepts learned, confirmed, merged or contradicted.

`learn_turn` asks the model for candidates, screens them (`extract.candidates`), and
sights each one against the store (`sight`). A model failure (any exception the model
raises, or an answer that is not a list) is recorded as the turn's outcome (retryable)
and returned, never raised; a merge call that fails counts as contradicting.

What a sighting does is decided by `consolidate` (pure), and whether it is learned or
held in quarantine by the trust gate (`trust.admit`, pure: every candidate of every
writer passes it here); this module keeps only the transactions, the model calls, the
searches and the events:

- the extraction prompt lists the agent's concepts most relevant to the turn (found
  through the agent's own index, ``known_concepts`` of the config), so the model reuses a
  name for the same idea;
- `record` names each candidate (`consolidate.name_sighting`): a name no concept has is
  first searched for among the agent's concepts (the candidate's description and body);
  the sighting then goes to the concept that states the same claim (the proposed name
  kept as an alias, ``knowledge_aliased``), is held as a possible duplicate
  (``knowledge_possible_duplicate``), or is learned as new;
- `sight` decides and writes one sighting under one name, inside one ``BEGIN IMMEDIATE``
  transaction; a merge, which needs a model call, is asked outside it and its verdict
  committed with a compare-and-swap on the concept's claim.

Concurrent writers of one concept take turns at the merge model: the writer that must
ask takes the concept's merge lease (first come, first served, across processes) and
the others wait for it, then decide again against the record it left. A sighting that
agrees with the merged text is then a confirmation, one that is related a new merge;
a verdict made stale by another writer is asked again about the new body, never turned
into a conflict because the record moved (see `sight`).
"""

from __future__ import annotations

import logging
import math
import random
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Final, Protocol

from insika_knowledge import consolidate, trust
from insika_knowledge.analysis.text import MAX_QUERY_CHARS
from insika_knowledge.candidate import Candidate
from insika_knowledge.concept import Concept
from insika_knowledge.config import KnowledgeConfig
from insika_knowledge.consolidate import NameRule, Naming, Outcome, Rule
from insika_knowledge.errors import InsikaError, ModelFailure
from insika_knowledge.events import (
    EventBus,
    KnowledgeAliased,
    KnowledgeConflict,
    KnowledgeExtracted,
    KnowledgeLearned,
    KnowledgePossibleDuplicate,
    KnowledgeQuarantined,
)
from insika_knowledge.extract.candidates import screen
from insika_knowledge.extract.model import ConceptModel, ExtractionRequest, MergeRequest
from insika_knowledge.ids import check_session_id
from insika_knowledge.index.scan import Hit, ScanIndex
from insika_knowledge.privacy.redact import kept_contacts
from insika_knowledge.store.base import ExtractionRecord, Store, StoredConcept, Transaction
from insika_knowledge.store.leases import holder_gone, holder_id
from insika_knowledge.store.naming import PossibleDuplicate
from insika_knowledge.trust.evidence import pieces as trust_pieces
from insika_knowledge.trust.grounding import speaker
from insika_knowledge.wire.messages import message_text

log = logging.getLogger(__name__)

#: How often the merge model is asked again when the claim it judged changed meanwhile
#: (only writes that bypass the merge lease do that: an operator's edit, a writer without
#: a model); after that the sighting is decided as if there were no model.
MERGE_ATTEMPTS: Final = 3
#: How often a candidate is named again when the concept it restated changed meanwhile.
NAMING_ATTEMPTS: Final = 3
#: The extraction prompt's concepts are searched with at most this many characters of
#: the transcript (its end), in pieces of `MAX_QUERY_CHARS`.
KNOWN_SEARCH_CHARS: Final = 24_000
#: How long a writer may hold a concept's merge lease, in seconds (a model call's
#: 60 s timeout, with room); a lease of a crashed process is void at once.
MERGE_LEASE_S: Final = 120.0
#: How long a waiting writer keeps its place without asking again, in seconds.
MERGE_WAIT_TTL_S: Final = 10.0
#: First and longest pause between looks at a busy merge lease, in seconds (jittered).
MERGE_POLL_S: Final = (0.01, 0.5)
ENGINE: Final = "engine"


class ConceptSearch(Protocol):
    """What the write path needs of the agent's index (`ScanIndex` and `Fts5Index` fit)."""

    def search(self, agent: str, query: str, top_k: int) -> list[Hit]:
        """The agent's concepts best matching `query`, best first, at most `top_k`."""
        ...


@dataclass
class TurnReport:
    """What one turn's extraction did.

    Attributes:
        outcome: ``ok``, ``no_model`` or a model failure kind (``model_timeout``,
            ``model_rate_limited``, ``model_malformed``, ``model_empty``, ``model_error``).
        retryable: True when the turn can be extracted again later.
        proposed: candidates the model proposed.
        dropped: reason -> candidates dropped by the gates.
        redacted: placeholder kind -> personal data items replaced.
        results: ``(concept name, outcome)`` per surviving candidate, in answer order:
            the name the sighting was recorded under (an existing concept's when the
            candidate restated it under another name; the proposed name when it was
            held as a ``possible_duplicate``).
        detail: the failure, when there is one.
        retry_after_s: for ``model_rate_limited``, the wait the provider asked for, in
            seconds (None when it did not say).
    """

    session_id: str
    turn_id: str
    outcome: str = "ok"
    retryable: bool = False
    proposed: int = 0
    dropped: Counter[str] = field(default_factory=Counter)
    redacted: Counter[str] = field(default_factory=Counter)
    results: list[tuple[str, Outcome]] = field(default_factory=list)
    detail: str | None = None
    retry_after_s: float | None = None

    def count(self, outcome: Outcome) -> int:
        """How many candidates ended with `outcome`."""
        return sum(1 for _, o in self.results if o == outcome)


def learn_turn(
    store: Store,
    agent: str,
    config: KnowledgeConfig,
    model: ConceptModel | None,
    *,
    session_id: str,
    turn_id: str,
    messages: list[dict[str, Any]],
    events: EventBus | None = None,
    index: ConceptSearch | None = None,
) -> TurnReport:
    """Extract the concepts of one finished turn and consolidate them into the store.

    Args:
        store: the tenant's store.
        agent: the agent id.
        config: the agent's validated ``knowledge:`` block (``types``, ``prompt``,
            ``known_concepts``).
        model: the extraction and merge model; None records ``no_model`` and writes nothing.
        session_id: the conversation's id (becomes the concept's source).
        turn_id: the turn's id within the session (a replayed turn counts once).
        messages: the turn's transcript slice (normalised message dicts).
        events: where ``knowledge_learned`` / ``knowledge_conflict`` /
            ``knowledge_aliased`` / ``knowledge_possible_duplicate`` /
            ``knowledge_extracted`` go.
        index: the agent's index, searched for the prompt's known concepts and for a
            candidate's existing name; None = a `ScanIndex` over `store`, built on
            first need (pass the agent's own index to reuse its warm cache).

    Returns:
        The turn's report. Model failures are in ``outcome``; nothing is raised for them.

    Raises:
        UserError: `session_id` or `turn_id` is not 1-200 printable characters without
            backticks (checked before any model call; nothing is recorded).
        InsikaError: only for a store failure that is not the model's (e.g. a full disk).
    """
    check_session_id(session_id, "session_id")
    check_session_id(turn_id, "turn_id")
    report = TurnReport(session_id=session_id, turn_id=turn_id)
    if model is None:
        report.outcome, report.retryable, report.detail = "no_model", True, "no model configured"
    else:
        search = _Search(store, index)
        request = ExtractionRequest(
            agent, session_id, turn_id, messages, tuple(config.types), config.prompt,
            known=relevant_concepts(search, agent, messages, config.known_concepts),
        )
        items: Any = None
        try:
            items = model.propose(request)
        except ModelFailure as failure:
            report.outcome, report.retryable, report.detail = failure.outcome, True, failure.detail
            report.retry_after_s = failure.retry_after_s
        except Exception as exc:  # any other model failure: recorded, retryable, never raised
            log.info("extraction model failed for %s/%s", session_id, turn_id, exc_info=True)
            report.outcome, report.retryable = "model_error", True
            report.detail = f"{type(exc).__name__}: {exc}"[:300]
        else:
            if not isinstance(items, list):
                report.outcome, report.retryable = "model_malformed", True
                report.detail = f"the answer was {type(items).__name__}, not a list of candidates"
        if report.outcome == "ok":
            screened = screen(items, config.types, kept_contacts(
                (p.speaker, p.text) for p in trust_pieces(messages, speaker, message_text)))
            report.proposed = screened.proposed
            report.dropped = screened.dropped
            report.redacted = screened.redacted
            for candidate in screened.candidates:
                verdict = trust.assess(f"{candidate.description}\n{candidate.body}", candidate.type, messages,
                                       candidate.evidence)
                candidate = _routed(store, agent, candidate, verdict)
                report.results.append(record(
                    store, agent, candidate, session_id=session_id, turn_id=turn_id,
                    model=model, events=events, index=search, verdict=verdict,
                ))
    written = sum(1 for _, o in report.results if o != "replayed")
    store.record_extraction(ExtractionRecord(
        agent=agent, session_id=session_id, turn_id=turn_id, outcome=report.outcome,
        retryable=report.retryable, candidates=report.proposed, written=written,
        dropped=dict(report.dropped), detail=_storable(report.detail), attempted_at=store.clock(),
    ))
    if events is not None:
        events.emit(KnowledgeExtracted(
            agent=agent, session_id=session_id, turn_id=turn_id, outcome=report.outcome,
            candidates=report.proposed, written=written, dropped=dict(report.dropped),
        ))
    return report


def relevant_concepts(
    index: ConceptSearch, agent: str, messages: Sequence[Any], limit: int
) -> tuple[tuple[str, str], ...]:
    """``(name, description)`` of the agent's concepts most relevant to a transcript.

    The messages' text (its last `KNOWN_SEARCH_CHARS` characters) is searched in pieces
    of `MAX_QUERY_CHARS` through `index`; a concept ranks by its best rank in any piece,
    then by the first piece that found it.

    Args:
        index: the agent's index.
        agent: the agent id.
        messages: the turn's messages (their ``content``: text or content parts).
        limit: concepts at most; 0 returns none without searching.

    Returns:
        Best first, at most `limit`.
    """
    if limit <= 0:
        return ()
    text = "\n".join(message_text(m) for m in messages if isinstance(m, dict))[-KNOWN_SEARCH_CHARS:]
    best: dict[str, tuple[float, float, str]] = {}
    for piece, start in enumerate(range(0, len(text), MAX_QUERY_CHARS)):
        chunk = text[start:start + MAX_QUERY_CHARS]
        if not chunk.strip():
            continue
        for rank, hit in enumerate(index.search(agent, chunk, limit)):
            seen = best.get(hit.entry.name, (math.inf, math.inf, ""))
            key = (rank, piece, hit.entry.description)
            if key[:2] < seen[:2]:
                best[hit.entry.name] = key
    ranked = sorted(best.items(), key=lambda item: (item[1][0], item[1][1], item[0]))
    return tuple((name, description) for name, (_, _, description) in ranked[:limit])


class _Search:
    """The agent's index, or a `ScanIndex` over the store built on first use."""

    def __init__(self, store: Store, index: ConceptSearch | None) -> None:
        self.store = store
        self.index = index

    def search(self, agent: str, query: str, top_k: int) -> list[Hit]:
        if self.index is None:
            self.index = ScanIndex(self.store)
        return self.index.search(agent, query, top_k)


def record(
    store: Store,
    agent: str,
    candidate: Candidate,
    *,
    session_id: str,
    turn_id: str,
    model: ConceptModel | None = None,
    events: EventBus | None = None,
    index: ConceptSearch | None = None,
    verdict: trust.Assessment | None = None,
) -> tuple[str, Outcome]:
    """Name one candidate's sighting (`consolidate.name_sighting`) and record it.

    A name no concept has is first searched for among the agent's concepts with the
    candidate's description and body. The sighting is then recorded under the concept
    that states the same claim (the proposed name kept as its alias; a
    ``knowledge_aliased`` event names both), held as a possible duplicate of a concept
    that only closely matches (``knowledge_possible_duplicate``; nothing merged, no
    concept written), or sighted under its own name (`sight`). When the concept it
    restated changes before the write (another writer), it is named again, at most
    `NAMING_ATTEMPTS` times, then held as a possible duplicate.

    Args:
        store: the tenant's store.
        agent: the agent id.
        candidate: the screened candidate, under the name the model proposed.
        session_id: the sighting's session.
        turn_id: its turn.
        model: the merge model (None: a different claim is a conflict).
        events: where the events go.
        index: the agent's index (None = a `ScanIndex` over `store`).
        verdict: the trust assessment of the candidate against its turn (see `sight`).

    Returns:
        ``(name, outcome)``: the concept name the sighting was recorded under (the
        proposed name for a held possible duplicate) and what it did (`sight`'s
        outcomes, or ``possible_duplicate``).
    """
    search = index if isinstance(index, _Search) else _Search(store, index)
    naming = _held_anyway(_name(store, agent, candidate, search), candidate, verdict)
    for _ in range(NAMING_ATTEMPTS):
        if naming.rule is NameRule.POSSIBLE_DUPLICATE:
            break
        target = candidate if naming.name == candidate.name else replace(candidate, name=naming.name)
        outcome = _sight(store, agent, target, session_id, turn_id, model, events,
                         alias=candidate.name if naming.alias else None, verdict=verdict)
        if outcome is not None:
            if target is not candidate and outcome != "replayed" and events is not None:
                events.emit(KnowledgeAliased(concept=naming.name, alias=candidate.name,
                                             agent=agent, outcome=outcome))
            return naming.name, outcome
        naming = _held_anyway(_name(store, agent, candidate, search), candidate, verdict)  # it changed
    if naming.rule is not NameRule.POSSIBLE_DUPLICATE:
        naming = Naming(NameRule.POSSIBLE_DUPLICATE, naming.name, naming.similarity)
    return candidate.name, _hold(store, agent, candidate, naming, session_id, turn_id, events)


def _held_anyway(naming: Naming, candidate: Candidate, verdict: trust.Assessment | None) -> Naming:
    """`naming`, unless it holds as a possible duplicate a candidate the trust gate
    quarantines: that one is written and held in quarantine under its own name instead
    (either way it is flagged for a person and never injected; quarantine is the
    trust step's own state, and a later business sighting releases it).
    """
    if naming.rule is NameRule.POSSIBLE_DUPLICATE and verdict is not None and verdict.quarantined:
        return Naming(NameRule.NEW, candidate.name)
    return naming


def _name(store: Store, agent: str, candidate: Candidate, search: ConceptSearch) -> Naming:
    """Read what `consolidate.name_sighting` needs and ask it."""
    if store.get(agent, candidate.name) is not None:
        return consolidate.name_sighting(candidate, known=True)
    alias = store.alias_of(agent, candidate.name)
    if alias is not None and store.get(agent, alias) is None:
        alias = None  # the concept it named was deleted or renamed away
    matches = []
    held: set[str] = set()
    if alias is None:
        query = f"{candidate.description}\n{candidate.body}"
        for hit in search.search(agent, query, consolidate.MATCHES_SEARCHED):
            stored = store.get(agent, hit.entry.name)
            if stored is not None:
                matches.append(stored.concept)
                if stored.quarantined:
                    held.add(stored.concept.name)
    return consolidate.name_sighting(candidate, known=False, alias_of=alias, matches=matches,
                                     held=frozenset(held))


def _hold(store: Store, agent: str, candidate: Candidate, naming: Naming, session_id: str,
          turn_id: str, events: EventBus | None) -> Outcome:
    """Hold `candidate` as a possible duplicate of ``naming.name`` (once per session and turn)."""
    with store.transaction() as tx:
        if tx.has_possible_duplicate(agent, candidate.name, session_id, turn_id):
            return "replayed"
        tx.add_possible_duplicate(agent, PossibleDuplicate(
            name=candidate.name, duplicate_of=naming.name, session_id=session_id,
            turn_id=turn_id, description=candidate.description, type=candidate.type,
            body=candidate.body, similarity=naming.similarity,
        ))
    if events is not None:
        events.emit(KnowledgePossibleDuplicate(concept=candidate.name, duplicate_of=naming.name,
                                               agent=agent))
    return "possible_duplicate"


def sight(
    store: Store,
    agent: str,
    candidate: Candidate,
    *,
    session_id: str,
    turn_id: str,
    model: ConceptModel | None = None,
    events: EventBus | None = None,
    verdict: trust.Assessment | None = None,
) -> Outcome:
    """Record one sighting of `candidate` and apply its consolidation decision.

    `consolidate.decide` decides; this function reads its facts and writes its result
    in one transaction. When the decision is to ask the merge model, this writer takes
    the concept's merge lease (or waits its turn behind the writers already asking),
    asks outside the write lock, and decides again with the model's verdict, which
    counts only if the record still makes the claim the model saw (compare-and-swap; a
    confirmation that moved only the counts leaves it valid). A stale verdict is asked
    again about the new record; only after `MERGE_ATTEMPTS` changes by writers that
    bypass the lease (an operator's edits) is the sighting decided as if there were no
    model.

    `verdict` is the trust assessment of the candidate against its turn (None: not
    assessed, as for an operator's or a tool's proposal); the trust gate (`trust.admit`,
    asked inside the transaction) decides what follows: a new concept that only the
    customer supports and that is rule-shaped is stored in quarantine; a sighting of a
    quarantined concept that only the customer supports changes and counts nothing;
    one that an agent, a human agent, a tool or the system supports releases it.

    Returns:
        ``learned`` (new concept), ``quarantined`` (new concept held in quarantine, or a
        customer-only repeat of one: nothing written), ``confirmed`` (same claim),
        ``merged`` (related, model-merged), ``conflict`` (contradicting, or a policy
        concept challenged), or ``replayed`` (this session and turn already sighted the
        name: no change).
    """
    outcome = _sight(store, agent, candidate, session_id, turn_id, model, events, verdict=verdict)
    if outcome is None:
        raise AssertionError("only a sighting under an alias may be refused")
    return outcome


def _sight(
    store: Store,
    agent: str,
    candidate: Candidate,
    session_id: str,
    turn_id: str,
    model: ConceptModel | None,
    events: EventBus | None,
    *,
    alias: str | None = None,
    verdict: trust.Assessment | None = None,
) -> Outcome | None:
    """`sight`; with `alias`, only a same-claim sighting is written (the alias kept).

    Returns:
        The outcome; None when `alias` is given and the record no longer states the
        candidate's claim (nothing was written: the caller names the candidate again).
    """
    holder = holder_id(per_thread=True)
    judged: _Judged | None = None
    asked = 0
    pause = MERGE_POLL_S[0]
    try:
        while True:
            may_ask = model is not None and asked < MERGE_ATTEMPTS
            result = _decide_and_write(store, agent, candidate, session_id, turn_id, judged,
                                       may_ask, holder, alias, verdict)
            if result is None:
                return None
            if isinstance(result, _Wait):  # another writer is asking the model about it
                time.sleep(min(pause, max(0.0, result.until_s - time.time())) * random.uniform(0.5, 1.0))
                pause = min(MERGE_POLL_S[1], pause * 1.5)
                continue
            if isinstance(result, StoredConcept):
                if model is None:  # decide asks for a model only when one may be asked
                    raise AssertionError("asked for a merge without a model")
                asked += 1  # a first ask, or the claim changed under the verdict: ask again
                merge = _ask_merge(model, agent, session_id, result.concept.body, candidate)
                judged = _Judged(result.concept, merge)
                continue
            _announce(events, agent, candidate, result)
            return result
    except BaseException:
        _release(store, agent, candidate.name, holder)  # a lease or place left behind
        raise


@dataclass(frozen=True)
class _Judged:
    """The merge model's verdict and the record it was given."""

    record: Concept
    verdict: consolidate.MergeVerdict

    def still_holds_for(self, stored: Concept | None) -> bool:
        """True when `stored` makes the same claim as the judged record.

        Confirmations change only the counts (occurrences, sources, confidence,
        updated_at), which the verdict does not depend on; any other change (an edit,
        a merge, a contradiction, a delete) makes the verdict stale.
        """
        return stored is not None and all(
            getattr(stored, key) == getattr(self.record, key) for key in _CLAIM_FIELDS
        )


#: The fields a merge verdict depends on (see `_Judged.still_holds_for`).
_CLAIM_FIELDS: Final = ("name", "description", "type", "provenance", "body")


@dataclass(frozen=True)
class _Wait:
    """Another writer holds the concept's merge lease until at most `until_s` (unix seconds)."""

    until_s: float


def _decide_and_write(
    store: Store,
    agent: str,
    candidate: Candidate,
    session_id: str,
    turn_id: str,
    judged: _Judged | None,
    may_ask: bool,
    holder: str,
    alias: str | None = None,
    verdict: trust.Assessment | None = None,
) -> Outcome | StoredConcept | _Wait | None:
    """Decide the sighting and write the decision, in one write transaction.

    With `alias` (the name the candidate was proposed under, found to restate this
    concept), only a same-claim (or replayed) decision is written, and the alias kept.

    Returns:
        The outcome; the stored record when the merge model must be asked about it (the
        merge lease is then `holder`'s); `_Wait` when another writer has the lease; or
        None when `alias` is given and the decision is not the same claim.
    """
    with store.transaction() as tx:
        current = tx.get(agent, candidate.name)
        stored = None if current is None else current.concept
        # A verdict counts only for the claim the model was shown (compare-and-swap):
        # confirmations that only moved the counts leave it valid.
        fresh = judged is not None and judged.still_holds_for(stored)
        decision = consolidate.decide(
            stored,
            candidate,
            already_sighted=tx.has_sighting(agent, candidate.name, session_id, turn_id),
            model_available=may_ask,
            merge=judged.verdict if judged is not None and fresh else None,
        )
        admission = trust.admit(candidate, verdict, trust.OnRecord(
            exists=current is not None, held=current is not None and current.quarantined,
            creates=decision.outcome == "learned",
        ))
        if admission.action is trust.Action.HOLD:
            tx.release_merge_lease(agent, candidate.name, holder)  # if an earlier round took it
            return "quarantined"  # the customer again: never counts toward confidence
        if alias is not None and decision.rule not in (Rule.SAME_CLAIM, Rule.REPLAYED):
            tx.release_merge_lease(agent, candidate.name, holder)
            return None  # the concept changed since the naming step: name it again
        if decision.outcome is None:  # ask the model, outside the write lock, with the lease
            if current is None:
                raise AssertionError("decide asked for a merge with nothing on record")
            until = tx.take_merge_lease(
                agent, candidate.name, holder, lease_s=MERGE_LEASE_S,
                wait_ttl_s=MERGE_WAIT_TTL_S, gone=holder_gone, now_s=time.time(),
            )
            return current if until is None else _Wait(until)
        tx.release_merge_lease(agent, candidate.name, holder)
        if decision.rule is Rule.POLICY_CHALLENGED and stored is not None \
                and not tx.has_possible_duplicate(agent, candidate.name, session_id, turn_id):
            # The policy's body never changes: the claim is held for review under its name.
            tx.add_possible_duplicate(agent, PossibleDuplicate(
                name=candidate.name, duplicate_of=candidate.name, session_id=session_id, turn_id=turn_id,
                description=candidate.description, type=candidate.type, body=candidate.body,
                similarity=consolidate.similarity(stored, candidate)))
        if decision.sighting is not None:
            now = store.clock()
            tx.add_sighting(agent, candidate.name, session_id, turn_id, decision.sighting)
            sources: list[str] = []
            distinct: int | None = None
            if decision.needs_sources:
                sources, distinct = _supporting(tx, agent, candidate.name, stored, session_id)
            concept = consolidate.apply(
                decision, stored, candidate, sources=sources, session_id=session_id, now=now,
                distinct_sources=distinct,
            )
            if concept is not None:
                tx.put(agent, concept, reason=decision.sighting, actor=ENGINE, session_id=session_id)
            if alias is not None:
                tx.add_alias(agent, alias, candidate.name, session_id, turn_id)
        if admission.action is trust.Action.RELEASE:
            tx.release(agent, candidate.name)  # an agent, a tool or the system backs it now
        elif admission.action is trust.Action.QUARANTINE:
            tx.quarantine(agent, candidate.name, session_id=session_id,
                          supported_by=list(admission.supported_by), markers=list(admission.markers))
            return "quarantined"
        return decision.outcome


def _routed(store: Store, agent: str, candidate: Candidate, verdict: trust.Assessment) -> Candidate:
    """`candidate` under the name the trust gate routes it to (`trust.admit` before naming).

    A rule-shaped claim only the customer supports never touches what the business
    knows: when it would change (not restate) a concept that is not itself in
    quarantine, the gate keeps it apart under `trust.unverified_name`.
    """
    if not verdict.quarantined:  # only such a claim can be kept apart: no read needed
        return candidate
    current = store.get(agent, candidate.name)
    admission = trust.admit(candidate, verdict, trust.OnRecord(
        exists=current is not None,
        held=current is not None and current.quarantined,
        restated=current is not None and consolidate.same_claim(current.concept, candidate),
    ))
    return candidate if admission.name == candidate.name else replace(candidate, name=admission.name)


def _supporting(
    tx: Transaction, agent: str, name: str, stored: Concept | None, session_id: str
) -> tuple[list[str], int]:
    """The supporting sessions to merge into the record, and their distinct count.

    The count is read from the ledger up to `consolidate.SOURCES_KEPT` (enough for the
    confidence, which is full at 5). The sessions are the record's own plus this one,
    unless the record lists fewer than the ledger holds (an operator removed some):
    then the ledger's most recent ones. Either way the reads are bounded, so a concept
    sighted thousands of times costs what one sighted a hundred times does.
    """
    distinct = tx.source_count(agent, name, at_most=consolidate.SOURCES_KEPT)
    kept = set(stored.sources if stored is not None else ()) | {session_id}
    if len(kept) >= distinct:
        return [session_id], distinct
    return tx.recent_sources(agent, name, consolidate.SOURCES_KEPT), distinct


def _release(store: Store, agent: str, name: str, holder: str) -> None:
    """Give up `holder`'s merge lease or place, if a failure left one (best effort)."""
    try:
        with store.transaction() as tx:
            tx.release_merge_lease(agent, name, holder)
    except InsikaError:  # the store is failing: the row lapses by itself
        log.info("could not release the merge lease of %s", name)


def _ask_merge(
    model: ConceptModel, agent: str, session_id: str, old_body: str, candidate: Candidate
) -> consolidate.MergeVerdict:
    """Ask the merge model about `old_body` and `candidate`; a failed call is contradicting."""
    limit = consolidate.merge_limit(old_body, candidate.body)
    request = MergeRequest(agent, session_id, candidate.name, old_body, candidate.body, limit)
    try:
        answer = model.merge(request)
    except ModelFailure as failure:
        log.info("merge of %s failed (%s): treated as contradicting", candidate.name, failure.outcome)
        return consolidate.merge_failed(failure.outcome)
    except Exception as exc:  # any model failure is contradicting
        log.info("merge of %s failed (%s): treated as contradicting", candidate.name,
                 type(exc).__name__)
        return consolidate.merge_failed(type(exc).__name__)
    return consolidate.interpret_merge(answer, old_body, candidate.body)


def _storable(text: str | None) -> str | None:
    """`text` with anything UTF-8 cannot hold (lone surrogates) replaced by ``?``."""
    return None if text is None else text.encode("utf-8", "replace").decode("utf-8")


def _announce(events: EventBus | None, agent: str, candidate: Candidate, outcome: Outcome) -> None:
    if events is None:
        return
    if outcome in ("learned", "merged"):
        events.emit(KnowledgeLearned(concept=candidate.name, type=candidate.type, agent=agent))
    elif outcome == "quarantined":
        events.emit(KnowledgeQuarantined(concept=candidate.name, type=candidate.type, agent=agent))
    elif outcome == "conflict":
        events.emit(KnowledgeConflict(concept=candidate.name, agent=agent))


__all__ = ["ConceptSearch", "InsikaError", "Outcome", "TurnReport", "learn_turn", "record",
           "relevant_concepts", "sight"]
