"""The write path: one finished turn in, concepts learned, confirmed, merged or contradicted.

`learn_turn` asks the model for candidates, screens them (`extract.candidates`), and
sights each one against the store (`sight`). A model failure (any exception the model
raises, or an answer that is not a list) is recorded as the turn's outcome (retryable)
and returned, never raised; a merge call that fails counts as contradicting.

What a sighting does is decided by `consolidate.decide` (pure); this module keeps only
the transactions, the model calls and the events. Each sighting is decided and written
inside one ``BEGIN IMMEDIATE`` transaction; a merge, which needs a model call, is asked
outside it and its verdict committed with a compare-and-swap on the concept's version
(decided again if another writer got there first).
"""

from __future__ import annotations

import dataclasses
import logging
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Final

from insika_knowledge import consolidate, trust
from insika_knowledge.config import KnowledgeConfig
from insika_knowledge.consolidate import Outcome
from insika_knowledge.errors import InsikaError, ModelFailure
from insika_knowledge.events import (
    EventBus,
    KnowledgeConflict,
    KnowledgeExtracted,
    KnowledgeLearned,
    KnowledgeQuarantined,
)
from insika_knowledge.extract.candidates import Candidate, screen
from insika_knowledge.extract.model import ConceptModel, ExtractionRequest, MergeRequest
from insika_knowledge.sessions import check_session_id
from insika_knowledge.store.base import ExtractionRecord, Store, StoredConcept

log = logging.getLogger(__name__)

#: How often a merge is re-decided when another writer changed the concept meanwhile.
MERGE_ATTEMPTS: Final = 3
ENGINE: Final = "engine"


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
        results: ``(concept name, outcome)`` per surviving candidate, in answer order.
        detail: the failure, when there is one.
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
) -> TurnReport:
    """Extract the concepts of one finished turn and consolidate them into the store.

    Args:
        store: the tenant's store.
        agent: the agent id.
        config: the agent's validated ``knowledge:`` block (``types``, ``prompt``).
        model: the extraction and merge model; None records ``no_model`` and writes nothing.
        session_id: the conversation's id (becomes the concept's source).
        turn_id: the turn's id within the session (a replayed turn counts once).
        messages: the turn's transcript slice (normalised message dicts).
        events: where ``knowledge_learned`` / ``knowledge_conflict`` /
            ``knowledge_extracted`` go.

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
        request = ExtractionRequest(
            agent, session_id, turn_id, messages, tuple(config.types), config.prompt
        )
        items: Any = None
        try:
            items = model.propose(request)
        except ModelFailure as failure:
            report.outcome, report.retryable, report.detail = failure.outcome, True, failure.detail
        except Exception as exc:  # any other model failure: recorded, retryable, never raised
            log.info("extraction model failed for %s/%s", session_id, turn_id, exc_info=True)
            report.outcome, report.retryable = "model_error", True
            report.detail = f"{type(exc).__name__}: {exc}"[:300]
        else:
            if not isinstance(items, list):
                report.outcome, report.retryable = "model_malformed", True
                report.detail = f"the answer was {type(items).__name__}, not a list of candidates"
        if report.outcome == "ok":
            screened = screen(items, config.types)
            report.proposed = screened.proposed
            report.dropped = screened.dropped
            report.redacted = screened.redacted
            for candidate in screened.candidates:
                verdict = trust.assess(f"{candidate.description}\n{candidate.body}", candidate.type, messages)
                candidate = _kept_apart(store, agent, candidate, verdict)
                outcome = sight(
                    store, agent, candidate, session_id=session_id, turn_id=turn_id,
                    model=model, events=events, verdict=verdict,
                )
                report.results.append((candidate.name, outcome))
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
    in one transaction. When the decision is to ask the merge model, the model is
    asked outside the write lock and the sighting decided again with the model's
    verdict, which counts only if the record is still at the version the model saw
    (compare-and-swap); after `MERGE_ATTEMPTS` answers made stale by other writers, the
    sighting is decided as if there were no model.

    `verdict` is the trust assessment of the candidate against its turn (None: not
    assessed, as for an operator's or a tool's proposal): a new concept that only the
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
    judged: _Judged | None = None
    for attempt in range(MERGE_ATTEMPTS + 1):
        may_ask = model is not None and attempt < MERGE_ATTEMPTS
        result = _decide_and_write(store, agent, candidate, session_id, turn_id, judged, may_ask, verdict)
        if isinstance(result, StoredConcept):
            if model is None:  # decide asks for a model only when one may be asked
                raise AssertionError("asked for a merge without a model")
            judged = _Judged(result.version, _ask_merge(model, agent, session_id, result.concept.body, candidate))
            continue
        _announce(events, agent, candidate, result)
        return result
    raise AssertionError("the last attempt decides without asking the model")


@dataclass(frozen=True)
class _Judged:
    """The merge model's verdict and the record version it was given."""

    version: int
    verdict: consolidate.MergeVerdict


def _decide_and_write(
    store: Store,
    agent: str,
    candidate: Candidate,
    session_id: str,
    turn_id: str,
    judged: _Judged | None,
    may_ask: bool,
    verdict: trust.Assessment | None = None,
) -> Outcome | StoredConcept:
    """Decide the sighting and write the decision, in one write transaction.

    Returns:
        The outcome; or the stored record when the merge model must be asked about it.
    """
    with store.transaction() as tx:
        held = verdict is not None and tx.is_quarantined(agent, candidate.name)
        if held and verdict is not None and not verdict.business_supported:
            return "quarantined"  # the customer again: never counts toward confidence
        current = tx.get(agent, candidate.name)
        stored = None if current is None else current.concept
        # A verdict counts only for the version the model was shown (compare-and-swap).
        fresh = judged is not None and current is not None and current.version == judged.version
        decision = consolidate.decide(
            stored,
            candidate,
            already_sighted=tx.has_sighting(agent, candidate.name, session_id, turn_id),
            model_available=may_ask,
            merge=judged.verdict if judged is not None and fresh else None,
        )
        if decision.outcome is None:  # ask the model, outside the write lock
            if current is None:
                raise AssertionError("decide asked for a merge with nothing on record")
            return current
        if decision.sighting is not None:
            now = store.clock()
            tx.add_sighting(agent, candidate.name, session_id, turn_id, decision.sighting)
            sources = tx.supporting_sources(agent, candidate.name) if decision.needs_sources else []
            concept = consolidate.apply(
                decision, stored, candidate, sources=sources, session_id=session_id, now=now
            )
            if concept is not None:
                tx.put(agent, concept, reason=decision.sighting, actor=ENGINE, session_id=session_id)
        if verdict is not None:
            if held:
                tx.release(agent, candidate.name)  # an agent, a tool or the system backs it now
            elif current is None and verdict.quarantined and decision.outcome == "learned":
                tx.quarantine(
                    agent, candidate.name, session_id=session_id,
                    supported_by=sorted(verdict.supported_by), markers=list(verdict.markers),
                )
                return "quarantined"
        return decision.outcome


def _kept_apart(store: Store, agent: str, candidate: Candidate, verdict: trust.Assessment) -> Candidate:
    """`candidate`, renamed when a customer alone would change a concept on record.

    A rule-shaped claim only the customer supports never touches what the business
    knows: when it would change (not restate) a concept that is not itself in
    quarantine, it is kept apart under `trust.unverified_name` and quarantined there.
    """
    if not verdict.quarantined:
        return candidate
    current = store.get(agent, candidate.name)
    if current is None or store.quarantine_of(agent, candidate.name) is not None:
        return candidate
    if consolidate.same_claim(current.concept, candidate):
        return candidate
    return dataclasses.replace(candidate, name=trust.unverified_name(candidate.name, candidate.body))


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


__all__ = ["InsikaError", "Outcome", "TurnReport", "learn_turn", "sight"]
