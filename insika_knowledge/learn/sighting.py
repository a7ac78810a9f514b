"""One sighting under one name: decided (`consolidate`, pure), gated (`trust.admit`, pure), written.

`sight` decides and writes one sighting inside one ``BEGIN IMMEDIATE`` transaction; a
merge, which needs a model call, is asked outside it and its verdict committed with a
compare-and-swap on the concept's claim. Concurrent writers of one concept take turns at
the merge model: the writer that must ask takes the concept's merge lease (first come,
first served, across processes) and the others wait for it, then decide again against the
record it left. A sighting that agrees with the merged text is then a confirmation, one
that is related a new merge; a verdict made stale by another writer is asked again about
the new body, never turned into a conflict because the record moved.
"""

from __future__ import annotations

import logging
import random
import time
from collections import Counter
from dataclasses import dataclass
from typing import Final

from insika_knowledge import consolidate, trust
from insika_knowledge.candidate import Candidate
from insika_knowledge.concept import Concept
from insika_knowledge.consolidate import Change, Outcome, Rule
from insika_knowledge.errors import InsikaError, ModelFailure
from insika_knowledge.events import (
    EventBus,
    KnowledgeConflict,
    KnowledgeLearned,
    KnowledgeQuarantined,
)
from insika_knowledge.extract.model import ConceptModel, MergeRequest
from insika_knowledge.store.base import Store, StoredConcept, Transaction
from insika_knowledge.store.leases import holder_gone, holder_id
from insika_knowledge.store.naming import PossibleDuplicate

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
    one that an agent, a human agent, a tool or the system supports releases it, unless it
    contradicts it (then the business's claim is recorded beside the held one, which stays
    held for a person: it never reaches a prompt).

    Returns:
        ``learned`` (new concept), ``quarantined`` (new concept held in quarantine, or a
        customer-only repeat of one: nothing written), ``confirmed`` (same claim),
        ``merged`` (related, model-merged), ``conflict`` (contradicting, or a policy
        concept challenged), or ``replayed`` (this session and turn already sighted the
        name: no change).

    Raises:
        ModelFailure: the merge model failed transiently (`_ask_merge`); nothing of this
            sighting was recorded.
    """
    outcome = sight_once(store, agent, candidate, session_id, turn_id, model, events, verdict=verdict)
    if outcome is None:
        raise AssertionError("only a sighting under an alias may be refused")
    return outcome


def sight_once(
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
    created_after: int | None = None,
    why: list[str] | None = None,
    redacted: Counter[str] | None = None,
) -> Outcome | None:
    """`sight`; with `alias`, only a same-claim sighting is written (the alias kept).

    A ``conflict`` appends its reason (`consolidate.Decision.conflict_reason`) to `why`
    when given, and the ``knowledge_conflict`` event carries it. A ``merged`` sighting
    adds to `redacted` (when given) the personal data redaction removed from the merge
    model's text (`consolidate.MergeVerdict.redacted`).

    With `created_after` (the change-feed position the candidate was named at, as a new
    concept), a new concept is written only if no concept created since then states the
    same claim or closely matches it (`consolidate.name_sighting`).

    Returns:
        The outcome; None when `alias` is given and the record no longer states the
        candidate's claim, or when a concept created since `created_after` matches it
        (nothing was written: the caller names the candidate again).
    """
    holder = holder_id(per_thread=True)
    reasons: list[str] = []
    judged: _Judged | None = None
    asked = 0
    pause = MERGE_POLL_S[0]
    try:
        while True:
            may_ask = model is not None and asked < MERGE_ATTEMPTS
            reasons.clear()
            result = _decide_and_write(store, agent, candidate, session_id, turn_id, judged,
                                       may_ask, holder, alias, verdict, created_after, reasons)
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
            if why is not None:
                why.extend(reasons)
            if redacted is not None and result == "merged" and judged is not None:
                redacted.update(judged.verdict.redacted)
            announce(events, agent, candidate, result, reasons[0] if reasons else "")
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
    created_after: int | None = None,
    reasons: list[str] | None = None,
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
        if admission.action is trust.Action.UNCOUNTED:
            tx.release_merge_lease(agent, candidate.name, holder)
            if reasons is not None:
                reasons.append(UNSUPPORTED_WHY)
            return "unsupported"  # a live rule that only the customer repeats: no confirmation, no conflict
        if alias is not None and decision.rule not in (Rule.SAME_CLAIM, Rule.REPLAYED):
            tx.release_merge_lease(agent, candidate.name, holder)
            return None  # the concept changed since the naming step: name it again
        if created_after is not None and decision.outcome == "learned" and _matched_since(
                tx, agent, candidate, created_after):
            return None  # another writer created a concept it matches: name it again
        if current is not None and current.quarantined and admission.action is trust.Action.RELEASE \
                and decision.rule not in (Rule.SAME_CLAIM, Rule.REPLAYED):
            tx.release_merge_lease(agent, candidate.name, holder)
            _replace_held(tx, agent, current.concept, candidate, session_id, turn_id, now=store.clock())
            return "learned"
        if decision.outcome is None:  # ask the model, outside the write lock, with the lease
            if current is None:
                raise AssertionError("decide asked for a merge with nothing on record")
            until = tx.take_merge_lease(
                agent, candidate.name, holder, lease_s=MERGE_LEASE_S,
                wait_ttl_s=MERGE_WAIT_TTL_S, gone=holder_gone, now_s=time.time(),
            )
            return current if until is None else _Wait(until)
        tx.release_merge_lease(agent, candidate.name, holder)
        if admission.action is trust.Action.RELEASE and stored is not None and decision.change is Change.CONFIRM:
            stored = _without_unvetted(tx, agent, stored)
        if decision.sighting is not None:
            now = store.clock()
            tx.add_sighting(agent, candidate.name, session_id, turn_id, decision.sighting)
            sources: list[str] = []
            distinct: int | None = None
            if decision.needs_sources:
                sources, distinct = _supporting(tx, agent, candidate.name, stored, session_id)
            disputes = stored is not None and (
                decision.change is Change.CONTRADICT or decision.rule is Rule.POLICY_CHALLENGED)
            held = disputes and stored is not None and _held_already(tx, agent, stored, candidate)
            concept = None if held and decision.change is Change.CONTRADICT else consolidate.apply(
                decision, stored, candidate, sources=sources, session_id=session_id, now=now,
                distinct_sources=distinct,
            )  # a claim held already for want of room adds no second note: the ledger counts it
            if concept is not None:
                tx.put(agent, concept, reason=decision.sighting, actor=ENGINE, session_id=session_id)
            if disputes and not held and stored is not None and (
                    decision.rule is Rule.POLICY_CHALLENGED or not consolidate.keeps(concept or stored, candidate)):
                challenge = decision.rule is Rule.POLICY_CHALLENGED  # else the record had no room
                _hold_claim(tx, agent, stored, candidate, session_id, turn_id, why=(
                    decision.conflict_reason or "") + ("" if challenge else f"; {NO_ROOM_WHY}"))
            if alias is not None:
                tx.add_alias(agent, alias, candidate.name, session_id, turn_id)
        if admission.action is trust.Action.RELEASE and decision.change is not Change.CONTRADICT \
                and decision.rule is not Rule.POLICY_CHALLENGED:
            # an agent, a tool or the system backs it now; a business claim that contradicts
            # it backs another claim, not the one held: it stays held, the claim beside it
            tx.release(agent, candidate.name)
        elif admission.action is trust.Action.QUARANTINE:
            tx.quarantine(agent, candidate.name, session_id=session_id,
                          supported_by=list(admission.supported_by), markers=list(admission.markers))
            return "quarantined"
        if decision.outcome == "conflict" and reasons is not None:
            reasons.append(decision.conflict_reason or "")
        return decision.outcome


def _without_unvetted(tx: Transaction, agent: str, stored: Concept) -> Concept:
    """`stored`, held in quarantine and now stated by the business side, without the session
    that put it there (a customer's: it vouches for nothing) among its sources, and the
    ledger aligned so it counts toward no confidence (`Transaction.align_ledger`).
    """
    unvetted = tx.held_session(agent, stored.name)
    if unvetted is None:
        return stored
    supporting = frozenset(s.session_id for s in tx.ledger(agent, stored.name) if s.outcome != "conflict")
    tx.align_ledger(agent, stored.name, supporting - {unvetted})
    return stored.replace(sources=tuple(s for s in stored.sources if s != unvetted))


def _replace_held(tx: Transaction, agent: str, held: Concept, candidate: Candidate, session_id: str,
                  turn_id: str, *, now: str) -> None:
    """Learn `candidate`, a claim the business side states, in place of `held`, a claim under
    its name held in quarantine (only a customer stated it) that it does not restate: a new
    version with the business's claim alone, released (the held text stays in the history).

    Neither a contradiction beside the held text (a claim nobody vouched for would bury the
    business's, which was then never served) nor a merge with it (a merged text would serve
    the customer's claim once released).
    """
    fresh = consolidate.decide(None, candidate, model_available=False)
    if fresh.sighting is not None:
        tx.add_sighting(agent, candidate.name, session_id, turn_id, fresh.sighting)
    # the held claim's sessions support another claim: they count toward this one's confidence no more
    tx.align_ledger(agent, candidate.name, frozenset({session_id}))
    concept = consolidate.apply(fresh, None, candidate, sources=[session_id], session_id=session_id, now=now)
    if concept is None:
        raise AssertionError("a new concept's decision wrote no record")
    tx.put(agent, concept.replace(created_at=held.created_at), reason=fresh.sighting or "extract", actor=ENGINE,
           session_id=session_id)
    tx.release(agent, candidate.name)


#: Why an ``unsupported`` sighting changed nothing (`TurnReport.why`).
UNSUPPORTED_WHY: Final = ("no agent message, tool result or system prompt states it, and a concept on record "
                          "does: a sighting the business side does not state (the customer's, or no one's) "
                          "confirms nothing and contradicts nothing")
#: What a held claim's `why` adds when the concept's record had no room for its entry.
NO_ROOM_WHY: Final = "the record had no room left for its entry"


def _held_already(tx: Transaction, agent: str, stored: Concept, candidate: Candidate) -> bool:
    """True when `candidate`'s claim (description and body, spacing and case aside, as
    `consolidate.Entry.states` compares) is held open against `stored` under its own name.
    """
    return any(consolidate.Entry.same_text(d, b, candidate.description, candidate.body)
               for d, b in tx.held_texts(agent, stored.name))


def _hold_claim(tx: Transaction, agent: str, stored: Concept, candidate: Candidate, session_id: str,
                turn_id: str, *, why: str) -> None:
    """Hold `candidate` for review under the concept's own name: a claim contradicting a
    policy (whose body the engine never changes) or one its record has no room for, with
    `why` it contradicts (`consolidate.Decision.conflict_reason`).

    Held once: not again for a replayed turn (nor, as the caller checks, while the same
    claim is held open against the concept; the ledger counts every sighting).
    """
    if tx.has_possible_duplicate(agent, candidate.name, session_id, turn_id):
        return
    tx.add_possible_duplicate(agent, PossibleDuplicate(
        name=candidate.name, duplicate_of=stored.name, session_id=session_id, turn_id=turn_id,
        description=candidate.description, type=candidate.type, body=candidate.body,
        similarity=consolidate.similarity(stored, candidate), why=why))


def _matched_since(tx: Transaction, agent: str, candidate: Candidate, cursor: int) -> bool:
    """True when a concept created after `cursor` states `candidate`'s claim or closely
    matches it (the naming rules, on those concepts alone).
    """
    created = [s for s in tx.created_since(agent, cursor) if s.concept.name != candidate.name]
    if not created:
        return False
    naming = consolidate.name_sighting(candidate, known=False, matches=[s.concept for s in created],
                                       held=frozenset(s.concept.name for s in created if s.quarantined))
    return naming.rule is not consolidate.NameRule.NEW


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
    """Ask the merge model about `old_body` and `candidate`; a failed call is contradicting,
    unless it may pass by itself.

    Raises:
        ModelFailure: the call failed transiently (``transient``: a timeout, HTTP 429 or
            5xx, a failed connection). A model that cannot answer now has judged nothing,
            so no conflict is recorded: the turn is tried again later (`learn_turn`).
    """
    limit = consolidate.merge_limit(old_body, candidate.body)
    request = MergeRequest(agent, session_id, candidate.name, old_body, candidate.body, limit)
    try:
        answer = model.merge(request)
    except ModelFailure as failure:
        if failure.transient:
            raise
        log.info("merge of %s failed (%s): treated as contradicting", candidate.name, failure.outcome)
        return consolidate.merge_failed(failure.outcome)
    except MemoryError:  # this process ran out of memory: no verdict of the model's
        raise
    except Exception as exc:  # any model failure is contradicting
        log.info("merge of %s failed (%s): treated as contradicting", candidate.name,
                 type(exc).__name__)
        return consolidate.merge_failed(type(exc).__name__)
    try:
        return consolidate.interpret_merge(answer, old_body, candidate.body)
    except Exception as exc:  # an answer object that fails when read is an unusable answer
        log.info("merge answer for %s unreadable (%s): treated as contradicting", candidate.name,
                 type(exc).__name__)
        return consolidate.merge_failed(type(exc).__name__)


def storable(text: str | None) -> str | None:
    """`text` with anything UTF-8 cannot hold (lone surrogates) replaced by ``?``."""
    return None if text is None else text.encode("utf-8", "replace").decode("utf-8")


def announce(events: EventBus | None, agent: str, candidate: Candidate, outcome: Outcome, why: str = "") -> None:
    """Emit the event a sighting's outcome calls for (learned, quarantined or conflict; none otherwise).

    `why` is a conflict's reason (`consolidate.Decision.conflict_reason`).
    """
    if events is None:
        return
    if outcome in ("learned", "merged"):
        events.emit(KnowledgeLearned(concept=candidate.name, type=candidate.type, agent=agent))
    elif outcome == "quarantined":
        events.emit(KnowledgeQuarantined(concept=candidate.name, type=candidate.type, agent=agent))
    elif outcome == "conflict":
        events.emit(KnowledgeConflict(concept=candidate.name, agent=agent, why=why))
