"""The trust verdict for one candidate: learn it, or keep it in quarantine."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from insika_knowledge.trust.grounding import Speaker, supporters
from insika_knowledge.trust.rules import rule_markers


@dataclass(frozen=True)
class Assessment:
    """Who supports a candidate and what follows.

    Attributes:
        supported_by: the speakers whose messages support the claim (see `supporters`).
        markers: why the claim is a rule of the business (see `rule_markers`); empty
            when it is not one.
        quarantined: True when only the customer supports a rule-shaped claim: it is
            stored but never injected, and a person (or a later sighting that an agent
            message or tool result supports) releases it.
    """

    supported_by: frozenset[Speaker]
    markers: tuple[str, ...]
    quarantined: bool

    @property
    def business_supported(self) -> bool:
        """True when anyone but the customer supports the claim."""
        return bool(self.supported_by - {"customer"})


def assess(claim: str, concept_type: str, messages: Iterable[Mapping[str, Any]]) -> Assessment:
    """Assess one candidate against the turn it came from.

    Args:
        claim: the candidate's description and body as one text (after redaction).
        concept_type: the candidate's type (``fact``, ``policy``, ...).
        messages: the turn's transcript, oldest first.

    Returns:
        The `Assessment`. A claim nobody's message supports (the model wrote it from
        nothing said) is treated as the customer's alone.
    """
    who = supporters(claim, list(messages))
    markers = tuple(rule_markers(claim, concept_type))
    business = bool(who - {"customer"})
    return Assessment(supported_by=who, markers=markers, quarantined=bool(markers) and not business)
