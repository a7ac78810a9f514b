"""The same-claim check: does a new sighting restate what the record already says?

Deterministic, no model: the two statements (description and claim body, the
``## Contradiction`` section on record left out) are analysed by the one analyser
(`insika_knowledge.analysis`) and compared. They are the same claim when their numbers,
units and negation counts are identical and their word terms overlap enough
(Jaccard >= `SAME_CLAIM_JACCARD`).
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Final

from insika_knowledge.analysis.numbers import quantities
from insika_knowledge.analysis.text import fold, negation_count, terms
from insika_knowledge.concept import Concept, claim_text
from insika_knowledge.extract.candidates import Candidate

SAME_CLAIM_JACCARD: Final = 0.6


@dataclass(frozen=True)
class Claim:
    """What a statement asserts, as far as the same-claim check is concerned.

    Attributes:
        terms: its word terms (numbers left out).
        numbers: the values of its numbers.
        units: the currencies and canonical units next to them (``brl``, ``hour``...).
        negations: how many negations it carries.
    """

    terms: frozenset[str]
    numbers: frozenset[Decimal]
    units: frozenset[str]
    negations: int


def analyse(text: str) -> Claim:
    """Break `text` into its terms (without numbers), numbers, units and negation count."""
    found = quantities(fold(text))
    units = {q.currency for q in found if q.currency} | {q.unit for q in found if q.unit}
    content = frozenset(t for t in terms(text) if not t.isdigit())
    return Claim(content, frozenset(q.value for q in found), frozenset(units), negation_count(text))


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    """|a & b| / |a | b|; 1.0 for two empty sets."""
    if not a and not b:
        return 1.0
    return len(a & b) / len(a | b)


def same_claim(existing: Concept, candidate: Candidate) -> bool:
    """True when `candidate` restates what `existing` claims (see the module doc).

    Compares description + body, ignoring the ``## Contradiction`` section on record.
    """
    old = analyse(f"{existing.description}\n{claim_text(existing.body)}")
    new = analyse(f"{candidate.description}\n{candidate.body}")
    return (
        old.numbers == new.numbers
        and old.units == new.units
        and old.negations == new.negations
        and jaccard(old.terms, new.terms) >= SAME_CLAIM_JACCARD
    )
