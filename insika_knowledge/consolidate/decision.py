"""The decision tree of a sighting: one pure function, `decide`, owns every rule.

A sighting is one (session, turn) proposing a candidate under a concept name. `decide`
takes what is on record (the stored concept or None), the candidate, and the facts the
write path read for it (the ledger; whether a merge model may be asked; the model's
interpreted answer, once asked), and returns a `Decision`. The rules, first match wins:

1. ``REPLAYED``: this session and turn already sighted the name: nothing changes.
2. ``NEW``: nothing on record: the concept is learned from this first sighting.
3. ``SAME_CLAIM``: the candidate restates the record (`claims.same_claim`): confirmed,
   counts go up, the body is untouched.
4. ``POLICY_CHALLENGED``: the record is a ``provenance: policy`` concept: the engine
   never changes its body; the challenge goes to the ledger and is announced.
5. ``OPEN_CONFLICT``: the record already waits for a human: the claim joins its
   ``## Contradiction`` section.
6. ``MERGED``: the merge model said related and its body is usable (`merge.MergeVerdict`):
   the body is replaced, counts go up.
7. ``CONTRADICTING``: the merge model said contradicting, answered something unusable,
   or failed: the claim is recorded under ``## Contradiction`` (`records.contradict`:
   one entry per distinct claim; a claim with no room left is held by the write path).
8. ``NO_MODEL``: no merge model may be asked: a different claim is a contradiction.
9. ``ASK_MODEL``: otherwise the merge model must be asked (outside the write lock),
   and `decide` called again with its verdict.

`apply` turns a decision into the record to write. Neither does any I/O.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Final, Literal

from insika_knowledge.candidate import Candidate
from insika_knowledge.concept import Concept
from insika_knowledge.consolidate.claims import same_claim
from insika_knowledge.consolidate.merge import (
    CONTRADICTING,
    INVENTED,
    LISTED,
    LOST_DETAIL,
    MODEL_FAILED,
    UNUSABLE,
    MergeVerdict,
)
from insika_knowledge.consolidate.records import confirm, contradict, first_sighting

#: What a sighting ended as, as the write path reports it (``possible_duplicate``: held for
#: a human by the naming step, `consolidate.naming`; ``quarantined``: held by the trust
#: step, `insika_knowledge.trust`; ``unsupported``: a live concept's rule that only the
#: customer repeated, nothing written or counted, by the trust step; none of the three is
#: ever an outcome of `decide`).
Outcome = Literal[
    "learned", "confirmed", "merged", "conflict", "replayed", "quarantined", "possible_duplicate", "unsupported"
]
#: The ledger entry a sighting leaves (also the reason of the record's new version).
SightingKind = Literal["extract", "confirm", "merge", "conflict"]


class Rule(StrEnum):
    """The rule of the decision tree that decided a sighting (see the module doc)."""

    REPLAYED = "replayed"
    NEW = "new"
    SAME_CLAIM = "same_claim"
    POLICY_CHALLENGED = "policy_challenged"
    OPEN_CONFLICT = "open_conflict"
    MERGED = "merged"
    CONTRADICTING = "contradicting"
    NO_MODEL = "no_model"
    ASK_MODEL = "ask_model"


class Change(StrEnum):
    """How the record changes."""

    NONE = "none"
    CREATE = "create"
    CONFIRM = "confirm"
    MERGE = "merge"
    CONTRADICT = "contradict"


@dataclass(frozen=True, slots=True)
class Effect:
    """What a rule does: its reported outcome, its ledger entry, its record change.

    Attributes:
        outcome: the outcome reported, or None while the model must still be asked.
        sighting: the ledger entry to add, or None (nothing recorded).
        change: how the record changes.
    """

    outcome: Outcome | None
    sighting: SightingKind | None
    change: Change


EFFECTS: Final[Mapping[Rule, Effect]] = {
    Rule.REPLAYED: Effect("replayed", None, Change.NONE),
    Rule.NEW: Effect("learned", "extract", Change.CREATE),
    Rule.SAME_CLAIM: Effect("confirmed", "confirm", Change.CONFIRM),
    Rule.POLICY_CHALLENGED: Effect("conflict", "conflict", Change.NONE),
    Rule.OPEN_CONFLICT: Effect("conflict", "conflict", Change.CONTRADICT),
    Rule.MERGED: Effect("merged", "merge", Change.MERGE),
    Rule.CONTRADICTING: Effect("conflict", "conflict", Change.CONTRADICT),
    Rule.NO_MODEL: Effect("conflict", "conflict", Change.CONTRADICT),
    Rule.ASK_MODEL: Effect(None, None, Change.NONE),
}


#: `Decision.conflict_reason` of each `MergeVerdict.why` that holds a claim as contradicting.
_MERGE_REASONS: Final[Mapping[str, str]] = {
    CONTRADICTING: "the merge model said the claims contradict each other",
    UNUSABLE: "the merge model's answer cannot be used (not a usable merged text, nor 'contradicting')",
    LOST_DETAIL: ("the merge model's merged text drops or changes a value, date, name, party, negation "
                  "or condition of a claim"),
    LISTED: ("the merge model merged two versions of one claim (its text says both), which folds a change "
             "instead of merging"),
    INVENTED: "the merge model's merged text says something neither claim says",
}


@dataclass(frozen=True, slots=True)
class Decision:
    """What to do with one sighting.

    Attributes:
        rule: the rule that decided it.
        body: the merged body to write (``MERGED`` only).
        why: why the claims count as contradicting (``CONTRADICTING`` only: the
            `MergeVerdict.why`).
    """

    rule: Rule
    body: str | None = None
    why: str | None = None

    @property
    def outcome(self) -> Outcome | None:
        """The outcome to report; None only for ``ASK_MODEL``."""
        return EFFECTS[self.rule].outcome

    @property
    def sighting(self) -> SightingKind | None:
        """The ledger entry to add (and the new version's reason), or None."""
        return EFFECTS[self.rule].sighting

    @property
    def change(self) -> Change:
        """How the record changes."""
        return EFFECTS[self.rule].change

    @property
    def conflict_reason(self) -> str | None:
        """Why a ``conflict`` outcome is one, in words for a person (None for any other outcome).

        ``"the merge model failed (model_timeout)"``, ``"the merge model said the claims
        contradict each other"``, ``"it contradicts a policy, whose text the engine never
        changes"``...: what `insika_knowledge.learn.turn.TurnReport.why` and the
        ``knowledge_conflict`` event say of it.
        """
        if self.rule is Rule.POLICY_CHALLENGED:
            return "it contradicts a policy, whose text the engine never changes"
        if self.rule is Rule.OPEN_CONFLICT:
            return "the concept already waits for a person to resolve a conflict; the claim joins it"
        if self.rule is Rule.NO_MODEL:
            return "it differs from the record and no merge model could be asked"
        if self.rule is not Rule.CONTRADICTING:
            return None
        why = self.why or ""
        if why.startswith(f"{MODEL_FAILED}:"):
            return f"the merge model failed ({why.split(':', 1)[1]})"
        if why.startswith(f"{UNUSABLE}:"):  # what was wrong with the merged text, named
            return f"the merge model's merged text cannot be used: {why.split(':', 1)[1]}"
        if why.startswith(f"{LOST_DETAIL}:"):  # the amounts or dates it dropped, named
            return f"{_MERGE_REASONS[LOST_DETAIL]} (it drops {why.split(':', 1)[1]})"
        return _MERGE_REASONS.get(why, f"the merge model's answer was not used ({why or 'no reason'})")

    @property
    def needs_sources(self) -> bool:
        """True when `apply` needs the ledger's supporting sessions (read after the entry is added)."""
        return self.change in (Change.CONFIRM, Change.MERGE)


def decide(
    stored: Concept | None,
    candidate: Candidate,
    *,
    already_sighted: bool = False,
    model_available: bool = True,
    merge: MergeVerdict | None = None,
) -> Decision:
    """Decide what one sighting of `candidate` does (the rules of the module doc).

    Args:
        stored: the concept on record under ``candidate.name``, or None.
        candidate: the screened candidate.
        already_sighted: the ledger already holds this (name, session, turn).
        model_available: a merge model may be asked (False without a model, or when the
            write path gives up asking after concurrent writers kept changing the record).
        merge: the merge model's interpreted verdict on exactly this `stored` record,
            once asked; None before.

    Returns:
        The decision; ``ASK_MODEL`` only when `merge` is None and `model_available`.
    """
    if already_sighted:
        return Decision(Rule.REPLAYED)
    if stored is None:
        return Decision(Rule.NEW)
    if same_claim(stored, candidate):
        return Decision(Rule.SAME_CLAIM)
    if stored.provenance == "policy":
        return Decision(Rule.POLICY_CHALLENGED)
    if stored.in_conflict:
        return Decision(Rule.OPEN_CONFLICT)
    if merge is not None:
        if merge.body is not None:
            return Decision(Rule.MERGED, body=merge.body)
        return Decision(Rule.CONTRADICTING, why=merge.why)
    if not model_available:
        return Decision(Rule.NO_MODEL)
    return Decision(Rule.ASK_MODEL)


def apply(
    decision: Decision,
    stored: Concept | None,
    candidate: Candidate,
    *,
    sources: list[str],
    session_id: str,
    now: str,
    distinct_sources: int | None = None,
) -> Concept | None:
    """The record to write after `decision`, or None when the record does not change.

    Args:
        decision: what `decide` returned for (`stored`, `candidate`).
        stored: the concept on record (None only for ``NEW``).
        candidate: the sighting's candidate.
        sources: the ledger's supporting sessions, read after this sighting's entry was
            added, oldest first (used when `Decision.needs_sources`; the most recent
            `records.SOURCES_KEPT` are enough).
        distinct_sources: how many distinct sessions support the concept on the ledger
            (None: counted from `sources`).
        session_id: the sighting's session.
        now: the time of the change (``YYYY-MM-DDTHH:MM:SSZ``).

    Raises:
        ValueError: the decision changes a record and `stored` is None, or a merge
            carries no body.
    """
    change = decision.change
    if change is Change.NONE:
        return None
    if change is Change.CREATE:
        return first_sighting(candidate, session_id, now)
    if stored is None:
        raise ValueError(f"a {decision.rule} decision needs the stored concept")
    if change is Change.CONFIRM:
        return confirm(stored, sources, now, distinct_sources=distinct_sources)
    if change is Change.MERGE:
        if decision.body is None:
            raise ValueError("a merge decision carries no body")
        return confirm(stored.replace(body=decision.body), sources, now,
                       distinct_sources=distinct_sources)
    contradicted = contradict(stored, candidate, session_id, now, why=decision.conflict_reason or "")
    return None if contradicted is stored else contradicted  # no room left for the entry
