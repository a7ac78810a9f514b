"""The trust gate: whether an observed claim is learned or held in quarantine, and why.

`admit` is the one place that decides it, for every writer of observed knowledge
(extraction, `Memory.propose`, the MCP server's ``propose_concept``, the relay and the
Hermes provider all reach it through `insika_knowledge.learn.learn_turn`). It is pure:
it takes what the write path knows (the candidate, who supports it, `assess`'s verdict,
and what the store holds under its name) and returns a frozen `Admission`; the write
path reads those facts and writes only what it was told.

The write path asks twice per candidate:

1. before the candidate is named (``OnRecord.creates`` is None), the gate only routes
   it: a rule that only the customer supports and that would change (not restate) a
   concept on record that is not itself held goes apart, under `unverified_name`
   (``KEEP_APART``); anything else keeps its name (``LEARN``);
2. in the write transaction, once consolidation has decided (``creates`` known): a
   sighting of a held concept that no one but the customer supports writes and counts
   nothing (``HOLD``); one that the agent, a person, a tool or the system supports
   releases it (``RELEASE``); a new concept that only the customer supports and that is
   rule-shaped is written and held (``QUARANTINE``); such a rule sighted again under the
   name of a live concept writes and counts nothing (``UNCOUNTED``: a customer repeating a
   rule neither confirms it nor disputes it); otherwise consolidation's write stands
   (``LEARN``).

A candidate that was not assessed (None: an operator's write, or a caller of
`insika_knowledge.learn.sight` that gives no verdict) is always ``LEARN``.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final

from insika_knowledge.candidate import Candidate
from insika_knowledge.trust.assess import LIMIT_MARKERS, UNSTATED_VALUE, Assessment, unverified_name


class Action(enum.Enum):
    """What the write path does about trust for one sighting."""

    #: Write what consolidation decides; trust adds nothing.
    LEARN = "learn"
    #: Before naming: write it under `Admission.name` (its unverified name) instead.
    KEEP_APART = "keep_apart"
    #: A held concept again, without the business: write nothing, count nothing.
    HOLD = "hold"
    #: Write the new concept consolidation creates, and hold it in quarantine.
    QUARANTINE = "quarantine"
    #: Write what consolidation decides, and take the concept out of quarantine.
    RELEASE = "release"
    #: A live concept sighted again without the business: write nothing, count nothing.
    UNCOUNTED = "uncounted"


@dataclass(frozen=True, slots=True)
class OnRecord:
    """What the store holds under the candidate's name when the gate is asked.

    Attributes:
        exists: a concept has the name now.
        held: that concept is held in quarantine.
        restated: the candidate states the same claim as that concept
            (`insika_knowledge.consolidate.same_claim`); False when there is none.
        creates: None before the candidate is named (the gate then only routes it);
            in the write transaction, True when this sighting creates the concept
            (consolidation's outcome is ``learned``), else False.
    """

    exists: bool = False
    held: bool = False
    restated: bool = False
    creates: bool | None = None


@dataclass(frozen=True, slots=True)
class Admission:
    """The gate's decision for one sighting.

    Attributes:
        action: what the write path does (`Action`).
        name: the name the sighting is written under: the candidate's, or for
            ``KEEP_APART`` its unverified name.
        reason: why, in one line (for logs, reports and operators; never a body).
        supported_by: the speakers who support the claim, sorted (what a quarantine
            row records); empty when it was not assessed.
        markers: why it is a rule of the business (`insika_knowledge.trust.rule_markers`).
    """

    action: Action
    name: str
    reason: str
    supported_by: tuple[str, ...] = ()
    markers: tuple[str, ...] = ()

    @property
    def held(self) -> bool:
        """True when the sighting ends in quarantine (kept apart, held again, or held new)."""
        return self.action in (Action.KEEP_APART, Action.HOLD, Action.QUARANTINE)


def admit(candidate: Candidate, assessment: Assessment | None, on_record: OnRecord) -> Admission:
    """Decide whether `candidate` is learned or held in quarantine (see the module doc).

    Args:
        candidate: the screened, redacted candidate, under the name it would be written to.
        assessment: `assess`'s verdict of the candidate against its turn; None when it
            was not assessed.
        on_record: what the store holds under that name; ``creates`` None before naming.

    Returns:
        The `Admission`. Before naming its action is ``LEARN`` or ``KEEP_APART``; in the
        write it is ``LEARN``, ``HOLD``, ``RELEASE``, ``QUARANTINE`` or ``UNCOUNTED``.
    """
    if assessment is None:
        return Admission(Action.LEARN, candidate.name, "not assessed (an operator's or a caller's own write)")
    supported_by = tuple(sorted(assessment.supported_by))
    markers = tuple(assessment.markers)

    def decided(action: Action, reason: str, name: str = candidate.name) -> Admission:
        return Admission(action, name, reason, supported_by, markers)

    why = held_because(supported_by, markers) if assessment.quarantined else _learned_because(assessment)
    if on_record.creates is None:  # before naming: route it
        if assessment.quarantined and on_record.exists and not on_record.held and not on_record.restated:
            apart = unverified_name(candidate.name, candidate.body)
            return decided(Action.KEEP_APART, f"{why}; it would change a concept on record: kept apart",
                           apart)
        return decided(Action.LEARN, why)
    if on_record.held:
        if assessment.business_supported:
            return decided(Action.RELEASE, f"{_learned_because(assessment)}: released from quarantine")
        return decided(Action.HOLD, "held in quarantine, and no one but the customer supports it now")
    if assessment.quarantined and on_record.creates:
        return decided(Action.QUARANTINE, why)
    if assessment.quarantined and on_record.exists:
        return decided(Action.UNCOUNTED, f"{why}; the concept on record stays as it is, uncounted")
    return decided(Action.LEARN, why)


def held_because(supported_by: Iterable[str], markers: Iterable[str]) -> str:
    """Why a concept is held, in one line, from its quarantine row.

    E.g. ``only the customer supported it, and it states a rule (price, entitlement)``,
    ``the business side said it for a limited time, and it states a rule (entitlement)``, or
    ``what the agent said does not state it as a standing rule, ...`` (held though the
    business side spoke of it: its quotes did not vouch).
    """
    listed = list(markers)
    if UNSTATED_VALUE in listed:
        return f"a value it states is in no message of the turn{_a_rule(m for m in listed if m != UNSTATED_VALUE)}"
    limits = [m for m in listed if m in LIMIT_MARKERS]
    if limits:
        return f"the business side {limits[0]}{_a_rule(m for m in listed if m not in LIMIT_MARKERS)}"
    speakers = sorted(supported_by)
    business = [s for s in speakers if s != "customer"]
    who = ("only the customer supported it" if speakers == ["customer"]
           else "no message supported it" if not speakers
           # held though the business side spoke of it: its words do not state it as a rule
           else f"what the {' and the '.join(business)} said does not state it as a standing rule")
    return f"{who}{_a_rule(listed)}"


def _a_rule(markers: Iterable[str]) -> str:
    """``", and it states a rule (price, entitlement)"``, or "" when no sign of a rule is listed
    (``type`` is read as what it means: "a policy or procedure by its type").
    """
    signs = ", ".join(_SIGNS.get(m, m) for m in markers)
    return f", and it states a rule ({signs})" if signs else ""


#: How a rule's sign reads where its marker's name alone says little.
_SIGNS: Final = {"type": "a policy or procedure by its type"}


def _learned_because(assessment: Assessment) -> str:
    """Why a claim that is not quarantined passes, in one line."""
    if assessment.business_supported:
        return f"supported by {', '.join(sorted(assessment.supported_by - {'customer'}))}"
    if not assessment.markers:
        return "not a rule of the business"
    return "no message of the turn supports it (judged as any claim)"
