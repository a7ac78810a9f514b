"""The write path: one finished turn in, concepts learned, confirmed, merged or contradicted.

`learn_turn` asks the model for candidates, screens them (`extract.candidates`), and
sights each one against the store (`sight`). A model failure (any exception the model
raises, or an answer that is not a list) is recorded as the turn's outcome (retryable)
and returned, never raised; a merge call that fails counts as contradicting.

What a sighting does is decided by `consolidate.decide` (pure); this module keeps only
the transactions, the model calls and the events. Each sighting is decided and written
inside one ``BEGIN IMMEDIATE`` transaction; a merge, which needs a model call, is asked
outside it and its verdict committed with a compare-and-swap on the concept's body.

Concurrent writers of one concept take turns at the merge model: the writer that must
ask takes the concept's merge lease (first come, first served, across processes) and
the others wait for it, then decide again against the record it left. A sighting that
agrees with the merged text is then a confirmation, one that is related a new merge;
a verdict made stale by another writer is asked again about the new body, never turned
into a conflict because the record moved (see `sight`).
"""

from __future__ import annotations

import logging
import random
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Final

from insika_knowledge import consolidate
from insika_knowledge.concept import Concept
from insika_knowledge.config import KnowledgeConfig
from insika_knowledge.consolidate import Outcome
from insika_knowledge.errors import InsikaError, ModelFailure
from insika_knowledge.events import (
    EventBus,
    KnowledgeConflict,
    KnowledgeExtracted,
    KnowledgeLearned,
)
from insika_knowledge.extract.candidates import Candidate, screen
from insika_knowledge.extract.model import ConceptModel, ExtractionRequest, MergeRequest
from insika_knowledge.sessions import check_session_id
from insika_knowledge.store.base import ExtractionRecord, Store, StoredConcept, Transaction
from insika_knowledge.store.leases import holder_gone, holder_id

log = logging.getLogger(__name__)

#: How often the merge model is asked again when the claim it judged changed meanwhile
#: (only writes that bypass the merge lease do that: an operator's edit, a writer without
#: a model); after that the sighting is decided as if there were no model.
MERGE_ATTEMPTS: Final = 3
#: How long a writer may hold a concept's merge lease, in seconds (a model call's
#: 60 s timeout, with room); a lease of a crashed process is void at once.
MERGE_LEASE_S: Final = 120.0
#: How long a waiting writer keeps its place without asking again, in seconds.
MERGE_WAIT_TTL_S: Final = 10.0
#: First and longest pause between looks at a busy merge lease, in seconds (jittered).
MERGE_POLL_S: Final = (0.01, 0.5)
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

    Returns:
        ``learned`` (new concept), ``confirmed`` (same claim), ``merged`` (related,
        model-merged), ``conflict`` (contradicting, or a policy concept challenged),
        or ``replayed`` (this session and turn already sighted the name: no change).
    """
    holder = holder_id(per_thread=True)
    judged: _Judged | None = None
    asked = 0
    pause = MERGE_POLL_S[0]
    try:
        while True:
            may_ask = model is not None and asked < MERGE_ATTEMPTS
            result = _decide_and_write(
                store, agent, candidate, session_id, turn_id, judged, may_ask, holder
            )
            if isinstance(result, _Wait):  # another writer is asking the model about it
                time.sleep(min(pause, max(0.0, result.until_s - time.time())) * random.uniform(0.5, 1.0))
                pause = min(MERGE_POLL_S[1], pause * 1.5)
                continue
            if isinstance(result, StoredConcept):
                if model is None:  # decide asks for a model only when one may be asked
                    raise AssertionError("asked for a merge without a model")
                asked += 1  # a first ask, or the claim changed under the verdict: ask again
                verdict = _ask_merge(model, agent, session_id, result.concept.body, candidate)
                judged = _Judged(result.concept, verdict)
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
) -> Outcome | StoredConcept | _Wait:
    """Decide the sighting and write the decision, in one write transaction.

    Returns:
        The outcome; or the stored record when the merge model must be asked about it
        (the merge lease is then `holder`'s); or `_Wait` when another writer has the lease.
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
        if decision.outcome is None:  # ask the model, outside the write lock, with the lease
            if current is None:
                raise AssertionError("decide asked for a merge with nothing on record")
            until = tx.take_merge_lease(
                agent, candidate.name, holder, lease_s=MERGE_LEASE_S,
                wait_ttl_s=MERGE_WAIT_TTL_S, gone=holder_gone, now_s=time.time(),
            )
            return current if until is None else _Wait(until)
        tx.release_merge_lease(agent, candidate.name, holder)
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
        return decision.outcome


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
    elif outcome == "conflict":
        events.emit(KnowledgeConflict(concept=candidate.name, agent=agent))


__all__ = ["InsikaError", "Outcome", "TurnReport", "learn_turn", "sight"]
