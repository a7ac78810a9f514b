"""The same-claim check: does a new sighting restate what the record already says?

Deterministic, no model, and conservative: a false "same" silently loses the new claim
(its text is stored nowhere, counts go up, no conflict fires), while a false "not same"
only costs a merge call (or, with no model, a human look at a conflict). Both claims are
read by the one analyser as **ordered statements** (`insika_knowledge.analysis.structure`),
not as bags of words, and they are the same claim only when:

- the two **bodies** (the ``## Contradiction`` section on record left out) have the same
  canonical structure: every value bound to what it qualifies ("5% on Pix, 3% on boleto"
  is not "3% on Pix, 5% on boleto"), negations where they stand ("exchanged but not
  refunded" is not "refunded but not exchanged"), direction and parties ("to Campinas
  from Extrema" is not "to Extrema from Campinas", "the customer pays" is not "the store
  pays"), conditions joined as written ("for members and orders above R$ 99" is not "for
  members on orders above R$ 99"), dates read as dates (``02/01`` is not ``01/02``) and
  money normalised (``R$ 1.299,00`` is ``R$ 1299``). What may differ: case, accents,
  punctuation, plurals, contractions (``can't``/``cannot``), number words, the synonyms
  of `analysis.structure.CLAIM_SYNONYMS`, the order of sentences, a leading phrase moved
  to the end, adjacent phrases with distinct role words swapped;
- the **descriptions**, one-line summaries whose wording is free, are either the same
  structure too, or each asserts nothing the other side does not: every value, date,
  name (a place, a region, a brand), party, negation and role word of one description,
  with what it bears on, is in the other side's description or body
  (`analysis.structure.details`), and at least `DESCRIPTION_COVERED` of its content
  terms occur there (two descriptions of different things over one short body, "Free
  wifi, password on the receipt" and "Toilets on the second floor" over "Ask staff.",
  are two claims; so are "Frete grátis no Sul" and "Frete grátis no Nordeste").

`similarity` (term overlap) says how close two claims are when they are not the same;
the naming step uses it to spot a possible duplicate proposed under another name
(`close_match`).
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Final

from insika_knowledge.analysis.statements import Statement, statement
from insika_knowledge.analysis.structure import details, structure
from insika_knowledge.candidate import Candidate
from insika_knowledge.concept import Concept, claim_text

#: Term-set Jaccard (description + body) from which a claim under another name is a
#: possible duplicate of a concept on record (see `consolidate.naming`).
CLOSE_MATCH: Final = 0.36
#: ...and the content terms the two must share at least (short texts overlap by chance).
CLOSE_MATCH_SHARED: Final = 6


#: The share of a description's content terms the other side must hold for the same claim.
DESCRIPTION_COVERED: Final = 0.5

#: What one text asserts (`analysis.statements.Statement`): terms, measures, negations, poles.
Claim = Statement


@dataclass(frozen=True)
class Assertion:
    """What one side of a comparison asserts: its body and its description, analysed.

    Attributes:
        body: the claim body's statement.
        description: the description's statement.
        body_text: the claim body as written.
        description_text: the description as written.
    """

    body: Statement
    description: Statement
    body_text: str = ""
    description_text: str = ""

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
    return Assertion(statement(body), statement(description), body, description)


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


def same_statement(a: str, b: str) -> bool:
    """True when text `b` restates text `a`: the same canonical structure."""
    return structure(a).same_as(structure(b))


def same_claims(old: Assertion, new: Assertion) -> bool:
    """True when `new` restates `old` (the rules of the module doc)."""
    if not same_statement(old.body_text, new.body_text):
        return False
    if same_statement(old.description_text, new.description_text):
        return True
    return _described(old, new) and _described(new, old)


def _described(one: Assertion, other: Assertion) -> bool:
    """True when `one`'s description asserts nothing `other` does not (module doc)."""
    said = details(f"{other.description_text}\n{other.body_text}")
    return (details(one.description_text).kept_in(said)
            and _covered(one.description.terms, other.terms))


def _covered(description: frozenset[str], other: frozenset[str]) -> bool:
    """True when at least `DESCRIPTION_COVERED` of `description`'s terms are in `other` (all of none)."""
    return not description or len(description & other) >= DESCRIPTION_COVERED * len(description)


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
