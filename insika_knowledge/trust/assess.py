"""The trust verdict for one candidate: learn it, or keep it in quarantine."""

from __future__ import annotations

import hashlib
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
        The `Assessment`. Only a claim the customer supports and no one else does can be
        quarantined: one that no message supports (the model wrote it from nothing said)
        is not a customer's instruction, and is judged like any other claim.
    """
    who = supporters(claim, list(messages))
    markers = tuple(rule_markers(claim, concept_type))
    return Assessment(supported_by=who, markers=markers, quarantined=bool(markers) and who == {"customer"})


#: Suffix of the name a customer's proposed change to a concept is kept apart under.
UNVERIFIED_SUFFIX = "-unverified-"


def unverified_name(name: str, body: str) -> str:
    """The name a customer-only change to `name` is quarantined under.

    ``<name>-unverified-<6 hex of the body>`` (the base cut so the whole stays within
    the 80-character name limit): the same proposal lands on the same name each time.
    """
    digest = hashlib.blake2b(body.encode("utf-8", "surrogatepass"), digest_size=3).hexdigest()
    base = name[: 80 - len(UNVERIFIED_SUFFIX) - len(digest)].rstrip("-")
    return f"{base}{UNVERIFIED_SUFFIX}{digest}"
