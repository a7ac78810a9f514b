"""The write path: one finished turn in, concepts learned, confirmed, merged or contradicted.

`learn_turn` asks the model for candidates, screens them (`extract.candidates`), and
sights each one against the store (`sight`). A model failure (any exception the model
raises, or an answer that is not a list) is recorded as the turn's outcome (retryable)
and returned, never raised; a merge call that fails counts as contradicting. Each sighting is decided and
written inside one ``BEGIN IMMEDIATE`` transaction; only a merge, which needs a model
call, is decided outside it and then committed with a compare-and-swap on the
concept's version (re-decided if another writer got there first).
"""

from __future__ import annotations

import logging
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from insika_knowledge import consolidate
from insika_knowledge.config import KnowledgeConfig
from insika_knowledge.errors import InsikaError, ModelFailure
from insika_knowledge.events import (
    EventBus,
    KnowledgeConflict,
    KnowledgeExtracted,
    KnowledgeLearned,
)
from insika_knowledge.extract.candidates import Candidate, screen
from insika_knowledge.extract.model import ConceptModel, ExtractionRequest, MergeRequest
from insika_knowledge.extract.redact import redact
from insika_knowledge.sessions import check_session_id
from insika_knowledge.store.base import ExtractionRecord, Store

log = logging.getLogger(__name__)

Outcome = Literal["learned", "confirmed", "merged", "conflict", "replayed"]
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
                outcome = sight(
                    store, agent, candidate, session_id=session_id, turn_id=turn_id,
                    model=model, events=events,
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
) -> Outcome:
    """Record one sighting of `candidate` and apply its consolidation outcome.

    Returns:
        ``learned`` (new concept), ``confirmed`` (same claim), ``merged`` (related,
        model-merged), ``conflict`` (contradicting, or a policy concept challenged),
        or ``replayed`` (this session and turn already sighted the name: no change).
    """
    for _ in range(MERGE_ATTEMPTS):
        decided = _decide_in_transaction(store, agent, candidate, session_id, turn_id)
        if decided is not None:
            _announce(events, agent, candidate, decided)
            return decided
        # Not the same claim: ask the model outside the write lock, then compare-and-swap.
        current = store.get(agent, candidate.name)
        if current is None:
            continue
        merged_body = _ask_merge(model, agent, session_id, current.concept.body, candidate)
        outcome = _commit_merge_or_conflict(
            store, agent, candidate, session_id, turn_id, current.version, merged_body
        )
        if outcome is not None:
            _announce(events, agent, candidate, outcome)
            return outcome
    # Writers kept racing us: take the conservative outcome inside one transaction.
    outcome = _commit_merge_or_conflict(store, agent, candidate, session_id, turn_id, None, None)
    assert outcome is not None
    _announce(events, agent, candidate, outcome)
    return outcome


def _decide_in_transaction(
    store: Store, agent: str, candidate: Candidate, session_id: str, turn_id: str
) -> Outcome | None:
    """Handle every outcome that needs no model; None means "ask the model"."""
    with store.transaction() as tx:
        if tx.has_sighting(agent, candidate.name, session_id, turn_id):
            return "replayed"
        current = tx.get(agent, candidate.name)
        now = store.clock()
        if current is None:
            tx.add_sighting(agent, candidate.name, session_id, turn_id, "extract")
            concept = consolidate.first_sighting(candidate, session_id, now)
            tx.put(agent, concept, reason="extract", actor=ENGINE, session_id=session_id)
            return "learned"
        existing = current.concept
        if consolidate.same_claim(existing, candidate):
            tx.add_sighting(agent, candidate.name, session_id, turn_id, "confirm")
            sources = tx.supporting_sources(agent, candidate.name)
            concept = consolidate.confirm(existing, sources, now)
            tx.put(agent, concept, reason="confirm", actor=ENGINE, session_id=session_id)
            return "confirmed"
        if existing.provenance == "policy":
            # The engine never changes a policy body: the challenge is recorded in the
            # ledger and announced; the record itself stays as its author wrote it.
            tx.add_sighting(agent, candidate.name, session_id, turn_id, "conflict")
            return "conflict"
        if existing.in_conflict:
            # Already waiting for a human: add this claim to the open contradiction.
            tx.add_sighting(agent, candidate.name, session_id, turn_id, "conflict")
            concept = consolidate.contradict(existing, candidate, session_id, now)
            tx.put(agent, concept, reason="conflict", actor=ENGINE, session_id=session_id)
            return "conflict"
        return None


def _ask_merge(
    model: ConceptModel | None, agent: str, session_id: str, old_body: str, candidate: Candidate
) -> str | None:
    """The merged body the model proposes, or None (no model, contradicting, unusable)."""
    if model is None:
        return None
    limit = consolidate.merge_limit(old_body, candidate.body)
    request = MergeRequest(agent, session_id, candidate.name, old_body, candidate.body, limit)
    try:
        answer = model.merge(request)
        if answer.verdict != "related" or not consolidate.usable_merge(answer.body, limit):
            return None
    except ModelFailure as failure:
        log.info("merge of %s failed (%s): treated as contradicting", candidate.name, failure.outcome)
        return None
    except Exception as exc:  # any model failure (or a malformed answer) is contradicting
        log.info("merge of %s failed (%s): treated as contradicting", candidate.name,
                 type(exc).__name__)
        return None
    body = redact(answer.body or "").text.strip()
    return body if consolidate.usable_merge(body, limit) else None


def _commit_merge_or_conflict(
    store: Store,
    agent: str,
    candidate: Candidate,
    session_id: str,
    turn_id: str,
    expected_version: int | None,
    merged_body: str | None,
) -> Outcome | None:
    """Write the merge (or the contradiction) if the concept is still at `expected_version`.

    Returns None when another writer changed the concept first (decide again).
    """
    with store.transaction() as tx:
        if tx.has_sighting(agent, candidate.name, session_id, turn_id):
            return "replayed"
        current = tx.get(agent, candidate.name)
        if current is None or (expected_version is not None and current.version != expected_version):
            return None
        now = store.clock()
        existing = current.concept
        if merged_body is not None and not existing.in_conflict and existing.provenance != "policy":
            tx.add_sighting(agent, candidate.name, session_id, turn_id, "merge")
            sources = tx.supporting_sources(agent, candidate.name)
            concept = consolidate.confirm(existing.replace(body=merged_body), sources, now)
            tx.put(agent, concept, reason="merge", actor=ENGINE, session_id=session_id)
            return "merged"
        tx.add_sighting(agent, candidate.name, session_id, turn_id, "conflict")
        if existing.provenance != "policy":
            concept = consolidate.contradict(existing, candidate, session_id, now)
            tx.put(agent, concept, reason="conflict", actor=ENGINE, session_id=session_id)
        return "conflict"


def _storable(text: str | None) -> str | None:
    """`text` with anything UTF-8 cannot hold (lone surrogates) replaced by ``?``."""
    return None if text is None else text.encode("utf-8", "replace").decode("utf-8")


def _announce(events: EventBus | None, agent: str, candidate: Candidate, outcome: Outcome) -> None:
    if events is None:
        return
    if outcome in ("learned", "merged"):
        events.emit(KnowledgeLearned(concept=candidate.name, type=candidate.type, agent=agent))
    elif outcome == "conflict":
        events.emit(KnowledgeConflict(concept=candidate.name, agent=agent))


__all__ = ["InsikaError", "Outcome", "TurnReport", "learn_turn", "sight"]
