"""The same-claim check: does a new sighting restate what the record already says?

Deterministic, no model, and conservative: a false "same" silently loses the new claim
(its text is stored nowhere, counts go up, no conflict fires), while a false "not same"
only costs a merge call (or, with no model, a human look at a conflict). Both claims are
read by the one analyser (`insika_knowledge.analysis.statements`) and they are the same
claim only when the restatement adds, drops or changes nothing that carries meaning:

- the two **bodies** (the ``## Contradiction`` section on record left out) have the same
  content terms, the same measures (numbers with their units and unit kinds), the same
  number of negations (change verbs included) and the same poles (direction, scope and
  modality words: above/below, only, all/some, may/must...);
- the **descriptions**, one-line summaries whose wording is free, assert nothing the
  other side does not: the numbers of description and body together are the same on
  both sides, and so are the descriptions' negation counts and poles; and each
  description is about what the other side says: more than `DESCRIPTION_COVERED` of its
  content terms occur in the other side's description or body (two descriptions of
  different things over one short body, "Free wifi, password on the receipt" and
  "Toilets on the second floor" over "Ask staff.", are two claims; so are "Delivery fee."
  and "Delivery refund.", whose one shared term of two is only half).

Reworded restatements (order, punctuation, case, accents, plural, ``e-mail``/``email``,
synonyms of one group, ``2``/``two``) are still the same claim.

`similarity` (term overlap) says how close two claims are when they are not the same;
the naming step uses it to spot a possible duplicate proposed under another name.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Final

from insika_knowledge.analysis.statements import Statement, statement
from insika_knowledge.candidate import Candidate
from insika_knowledge.concept import Concept, claim_text

#: Term-set Jaccard (description + body) from which a claim under another name is a
#: possible duplicate of a concept on record (see `consolidate.naming`).
CLOSE_MATCH: Final = 0.36
#: ...and the content terms the two must share at least (short texts overlap by chance).
CLOSE_MATCH_SHARED: Final = 6


#: The share of a description's content terms the other side must hold more than, for the same claim.
DESCRIPTION_COVERED: Final = 0.5

#: What one text asserts (`analysis.statements.Statement`): terms, measures, negations, poles.
Claim = Statement


@dataclass(frozen=True)
class Assertion:
    """What one side of a comparison asserts: its body and its description, analysed.

    Attributes:
        body: the claim body's statement.
        description: the description's statement.
    """

    body: Statement
    description: Statement

    @property
    def measures(self) -> frozenset[tuple[Decimal, str]]:
        """The numbers (with units) of description and body together."""
        return self.body.measures | self.description.measures

    @property
    def terms(self) -> frozenset[str]:
        """The content terms of description and body together."""
        return self.body.terms | self.description.terms


def analyse(text: str) -> Claim:
    """What `text` asserts, read by the one analyser (`analysis.statements.statement`)."""
    return statement(text)


def assertion(description: str, body: str) -> Assertion:
    """Analyse one claim's `description` and `body` (see the module doc)."""
    return Assertion(statement(body), statement(description))


def claim_of(concept: Concept) -> Assertion:
    """What a record asserts: its description and its body without the contradictions."""
    return assertion(concept.description, claim_text(concept.body))


def candidate_claim(candidate: Candidate) -> Assertion:
    """What a candidate asserts."""
    return assertion(candidate.description, candidate.body)


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    """|a & b| / |a | b|; 1.0 for two empty sets."""
    if not a and not b:
        return 1.0
    return len(a & b) / len(a | b)


def same_statement(a: Statement, b: Statement) -> bool:
    """True when `b` restates `a`: equal terms, measures, negations and poles."""
    return a == b


def same_claims(old: Assertion, new: Assertion) -> bool:
    """True when `new` restates `old` (the rules of the module doc)."""
    return (
        same_statement(old.body, new.body)
        and old.measures == new.measures
        and old.description.negations == new.description.negations
        and old.description.poles == new.description.poles
        and _covered(old.description.terms, new.terms)
        and _covered(new.description.terms, old.terms)
    )


def _covered(description: frozenset[str], other: frozenset[str]) -> bool:
    """True when more than `DESCRIPTION_COVERED` of `description`'s terms are in `other` (all of none)."""
    return not description or len(description & other) > DESCRIPTION_COVERED * len(description)


def same_claim(existing: Concept, candidate: Candidate) -> bool:
    """True when `candidate` restates what `existing` claims (see the module doc).

    Compares description + body, ignoring the ``## Contradiction`` section on record.
    """
    return same_claims(claim_of(existing), candidate_claim(candidate))


def close_match(existing: Concept, candidate: Candidate) -> float | None:
    """`similarity` when the two claims are close (`CLOSE_MATCH`, `CLOSE_MATCH_SHARED`), else None."""
    old, new = claim_of(existing).terms, candidate_claim(candidate).terms
    score = jaccard(old, new)
    return score if score >= CLOSE_MATCH and len(old & new) >= CLOSE_MATCH_SHARED else None


def similarity(existing: Concept, candidate: Candidate) -> float:
    """How close two claims are, 0..1.

    The Jaccard overlap of their content terms (description and body), whatever their
    numbers, negations and poles.
    """
    return jaccard(claim_of(existing).terms, candidate_claim(candidate).terms)
