"""Naming a candidate's sighting: its own name, a concept that states the same claim, or a hold.

`record` routes a candidate through the trust gate before naming (`routed`), names it
(`consolidate.name_sighting`: a name no concept has is first searched for among the
agent's concepts), and records it under the concept that states the same claim (the
proposed name kept as an alias, ``knowledge_aliased``), as a possible duplicate of one
that only closely matches (``knowledge_possible_duplicate``; nothing written), or under
its own name (`insika_knowledge.learn.sighting.sight`).
"""

from __future__ import annotations

import functools
import logging
from collections import Counter
from dataclasses import replace
from typing import Final

from insika_knowledge import consolidate, trust
from insika_knowledge.candidate import Candidate
from insika_knowledge.concept import Concept
from insika_knowledge.consolidate import NameRule, Naming, Outcome
from insika_knowledge.events import (
    EventBus,
    KnowledgeAliased,
    KnowledgePossibleDuplicate,
)
from insika_knowledge.extract.model import ConceptModel
from insika_knowledge.learn.known import AgentSearch, ConceptSearch
from insika_knowledge.learn.meaning import MeaningSearch
from insika_knowledge.learn.sighting import sight_once
from insika_knowledge.store.base import Store
from insika_knowledge.store.naming import PossibleDuplicate

log = logging.getLogger(__name__)


#: How often a candidate is named again when the concept it restated changed meanwhile.
NAMING_ATTEMPTS: Final = 3


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
    meaning: MeaningSearch | None = None,
    why: list[str] | None = None,
    redacted: Counter[str] | None = None,
    written: frozenset[str] = frozenset(),
) -> tuple[str, Outcome]:
    """Name one candidate's sighting (`consolidate.name_sighting`) and record it.

    A name no concept has is first searched for among the agent's concepts with the
    candidate's description and body. The sighting is then recorded under the concept
    that states the same claim (the proposed name kept as its alias; a
    ``knowledge_aliased`` event names both), held as a possible duplicate of a concept
    that only closely matches (``knowledge_possible_duplicate``; nothing merged, no
    concept written), or sighted under its own name (`sight`). When the concept it
    restated changes before the write (another writer), or another writer created a
    concept it matches (`Transaction.created_since`, read at the write under the agent's
    naming lock: two writers proposing one rule under two new names at once end as one
    concept and a hold, as they would one after the other), it is named again, at most
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
        meaning: the semantic index's neighbours (`learn.meaning`): concepts close in
            meaning are possible duplicates too (None: the lexical close match alone).
        why: a ``conflict`` appends its reason here (`consolidate.Decision.conflict_reason`),
            a ``possible_duplicate`` its own (`consolidate.Naming.why`).
        redacted: a ``merged`` sighting adds the personal data redacted from the merge
            model's text here (placeholder kind -> items; see `sight_once`).
        written: the concepts this candidate's turn wrote before it (never its possible
            duplicates: `consolidate.name_sighting`).

    Returns:
        ``(name, outcome)``: the concept name the sighting was recorded under (the
        proposed name for a held possible duplicate) and what it did (`sight`'s
        outcomes, or ``possible_duplicate``).
    """
    search = index if isinstance(index, AgentSearch) else AgentSearch(store, index)
    cursor = store.version_cursor(agent)  # what was created after naming is checked at the write
    naming = _held_anyway(_name(store, agent, candidate, search, meaning, written), candidate, verdict)
    for _ in range(NAMING_ATTEMPTS):
        if naming.rule is NameRule.POSSIBLE_DUPLICATE:
            break
        target = candidate if naming.name == candidate.name else replace(candidate, name=naming.name)
        outcome = sight_once(store, agent, target, session_id, turn_id, model, events,
                             alias=candidate.name if naming.alias else None, verdict=verdict,
                             created_after=cursor if naming.rule is NameRule.NEW else None, why=why,
                             redacted=redacted)
        if outcome is not None:
            if target is not candidate and outcome != "replayed" and events is not None:
                events.emit(KnowledgeAliased(concept=naming.name, alias=candidate.name,
                                             agent=agent, outcome=outcome))
            return naming.name, outcome
        # The concept it restated changed, or another writer created a concept it matches.
        cursor = store.version_cursor(agent)
        naming = _held_anyway(_name(store, agent, candidate, search, meaning, written), candidate, verdict)
    if naming.rule is not NameRule.POSSIBLE_DUPLICATE:
        naming = Naming(NameRule.POSSIBLE_DUPLICATE, naming.name, naming.similarity,
                        f"another writer changed what it matches each of the {NAMING_ATTEMPTS} times it was named")
    outcome, held_why = _hold(store, agent, candidate, naming, session_id, turn_id, events)
    if why is not None and outcome == "possible_duplicate":
        why.append(held_why)
    return candidate.name, outcome


def _held_anyway(naming: Naming, candidate: Candidate, verdict: trust.Assessment | None) -> Naming:
    """`naming`, unless it holds as a possible duplicate a candidate the trust gate
    quarantines: that one is written and held in quarantine under its own name instead
    (either way it is flagged for a person and never injected; quarantine is the
    trust step's own state, and a later business sighting releases it).
    """
    if naming.rule is NameRule.POSSIBLE_DUPLICATE and verdict is not None and verdict.quarantined:
        return Naming(NameRule.NEW, candidate.name)
    return naming


def _name(store: Store, agent: str, candidate: Candidate, search: ConceptSearch,
          meaning: MeaningSearch | None = None, written: frozenset[str] = frozenset()) -> Naming:
    """Read what `consolidate.name_sighting` needs and ask it."""
    if store.get(agent, candidate.name) is not None:
        return consolidate.name_sighting(candidate, known=True)
    alias = store.alias_of(agent, candidate.name)
    if alias is not None and store.get(agent, alias) is None:
        alias = None  # the concept it named was deleted or renamed away
    matches = []
    held: set[str] = set()
    read = functools.cache(lambda name: store.get(agent, name))  # each concept read once per candidate
    if alias is None:
        query = f"{candidate.description}\n{candidate.body}"
        for hit in search.search(agent, query, consolidate.MATCHES_SEARCHED):
            stored = read(hit.entry.name)
            if stored is not None:
                matches.append(stored.concept)
                if stored.quarantined:
                    held.add(stored.concept.name)
    close: list[tuple[Concept, float]] = []
    apart = None
    if alias is None and meaning is not None:  # (a concept held in quarantine is none of its neighbours)
        found = meaning.close(agent, candidate, held=lambda name: bool(
            (stored := read(name)) is not None and stored.quarantined))
        apart = found.apart
        for name, score in found.found:
            stored = read(name)
            if stored is not None:
                close.append((stored.concept, score))
    return consolidate.name_sighting(candidate, known=False, alias_of=alias, matches=matches,
                                     held=frozenset(held), meaning=close, written=written, apart=apart)


def _hold(store: Store, agent: str, candidate: Candidate, naming: Naming, session_id: str,
          turn_id: str, events: EventBus | None) -> tuple[Outcome, str]:
    """Hold `candidate` as a possible duplicate of ``naming.name`` (once per session and
    turn), and say why. A claim a person already settled against that concept (dismissed,
    or learned as its own: the same description and body, spacing and case aside) is
    recorded as settled, not held again: the concept is not disputed anew and no
    ``knowledge_possible_duplicate`` fires.
    """
    with store.transaction() as tx:
        if tx.has_possible_duplicate(agent, candidate.name, session_id, turn_id):
            return "replayed", ""
        settled = any(consolidate.Entry.same_text(d, b, candidate.description, candidate.body)
                      for d, b in tx.settled_texts(agent, naming.name))
        why = SETTLED_WHY.format(name=naming.name) if settled else naming.why
        tx.add_possible_duplicate(agent, PossibleDuplicate(
            name=candidate.name, duplicate_of=naming.name, session_id=session_id,
            turn_id=turn_id, description=candidate.description, type=candidate.type,
            body=candidate.body, similarity=naming.similarity, why=why,
            status="resolved" if settled else "open",
        ))
    if events is not None and not settled:
        events.emit(KnowledgePossibleDuplicate(concept=candidate.name, duplicate_of=naming.name,
                                               agent=agent, why=why))
    return "possible_duplicate", why


#: Why a claim a person settled before is not held again (`_hold`).
SETTLED_WHY: Final = ("a person already settled this claim against {name} (dismissed it, or learned it as a "
                      "concept of its own): recorded, not held again")


def routed(store: Store, agent: str, candidate: Candidate, verdict: trust.Assessment) -> Candidate:
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
