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
  punctuation, plurals, contractions (``can't``/``cannot``), number words, a duration in
  another unit it fills exactly (``12 meses``/``1 ano``, ``48h``/``2 days``), the synonyms
  of `analysis.structure.CLAIM_SYNONYMS`, the order of sentences, a leading phrase moved
  to the end, adjacent phrases with distinct role words swapped, the business named as
  "we", "the store" opening a clause or a Portuguese verb's person, and the passive of
  one of the business's own operations that names no one else ("orders are shipped
  free" restates "we ship orders free"; "duties are paid by the buyer", "returns are
  requested" do not: `analysis.structure.BUSINESS_PASSIVES`), but never its tense or
  modality ("were shipped", "will be shipped", "should ship" are other claims);
- the **descriptions**, one-line summaries whose wording is free, are either the same
  structure too, or each asserts nothing the other side does not: every value, date,
  name (a place, a region, a brand), party, negation and role word of one description,
  with what it bears on, is in the other side's description or body
  (`analysis.structure.details`), and every one of its content terms (summary words
  such as "policy" aside) occurs there (two descriptions of different things over one short body, "Free
  wifi, password on the receipt" and "Toilets on the second floor" over "Ask staff.",
  are two claims; so are "Frete grátis no Sul" and "Frete grátis no Nordeste", and
  "Desconto para pessoa jurídica" and "Desconto para pessoa física").

`similarity` (term overlap) says how close two claims are when they are not the same;
the naming step uses it to spot a possible duplicate proposed under another name
(`close_match`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal
from typing import Final

from insika_knowledge.analysis.statements import Statement, statement
from insika_knowledge.analysis.structure import (
    ELIDABLE_TERMS,
    canonical_terms,
    case_blind,
    claim_terms,
    content_terms,
    details,
    hours_disagree,
    names_read,
    structure,
    tense_shift,
    topic,
    whole_duration,
    with_names,
)
from insika_knowledge.analysis.text import fold
from insika_knowledge.candidate import Candidate
from insika_knowledge.concept import Concept, claim_text

#: Term-set Jaccard (description + body) from which a claim under another name is a
#: possible duplicate of a concept on record (see `consolidate.naming`).
CLOSE_MATCH: Final = 0.36
#: ...and the content terms the two must share at least (long texts overlap by chance).
CLOSE_MATCH_SHARED: Final = 6
#: A short rule (at most this many content terms on its shorter side: "Return shipping
#: costs R$ 15" has 3) is a close match of another when...
SHORT_RULE_TERMS: Final = 8
#: ...they share at least this share of the shorter side's terms...
SHORT_OVERLAP: Final = 0.6
#: ...and at least this many terms.
SHORT_SHARED: Final = 2


#: The share of a description's content terms the other side must hold for the same claim:
#: all of them (a segment, a city or a region named only in one description is a claim of
#: its own: "Desconto para pessoa jurídica" is not "Desconto para pessoa física").
DESCRIPTION_COVERED: Final = 1.0
#: Words a summary may add without asserting anything (folded; their terms are not counted).
SUMMARY_WORDS: Final = frozenset(
    "policy policies rule rules regra regras politica politicas info information informacao "
    "informacoes detail details detalhe detalhes note notes nota notas overview summary resumo "
    "guideline guidelines orientacao orientacoes".split()
)

#: What one text asserts (`analysis.statements.Statement`): terms, measures, negations, poles.
Claim = Statement


@dataclass(frozen=True)
class Assertion:
    """What one side of a comparison asserts: its body and its description as written,
    analysed on demand (each analysis is cached by text).

    Attributes:
        body_text: the claim body as written.
        description_text: the description as written.
    """

    body_text: str
    description_text: str

    @property
    def body(self) -> Statement:
        """The body's statement (`analysis.statements.statement`)."""
        return statement(self.body_text)

    @property
    def description(self) -> Statement:
        """The description's statement."""
        return statement(self.description_text)

    @property
    def measures(self) -> frozenset[tuple[Decimal, str]]:
        """The numbers (with units) of description and body together."""
        return self.body.measures | self.description.measures

    @property
    def terms(self) -> frozenset[str]:
        """The content terms of description and body together (`analysis.statements`:
        what `CLOSE_MATCH` was chosen on).
        """
        return self.body.terms | self.description.terms


def analyse(text: str) -> Claim:
    """What `text` asserts, read by the one analyser (`analysis.statements.statement`)."""
    return statement(text)


def assertion(description: str, body: str) -> Assertion:
    """One claim's `description` and `body`, to be analysed (see the module doc)."""
    return Assertion(body, description)


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
    """True when text `b` restates text `a`: the same words but for case, accents and
    punctuation (a separator between two digits counts), or the same canonical structure
    with no verb in another tense (`analysis.structure.tense_shift`: "oferecia" / "oferece")
    and no hour read as a time of day in one and a duration in the other
    (`analysis.structure.hours_disagree`: "delivery 1 am" / "delivery 1 hours").
    Read `cased_alike`.
    """
    a, b = cased_alike(a, b)
    return (_plain(a) == _plain(b) and _signs(a) == _signs(b)) or (
        structure(a).same_as(structure(b)) and not tense_shift(a, b) and not hours_disagree(a, b))


def cased_alike(a: str, b: str) -> tuple[str, str]:
    """`a` and `b`, read alike where one of them is all capitals or Title Case and the other
    is not: a letter naming a thing ("Store A opens") is read only where case tells it from
    an article, so a letter or a stop word the other text names is read as that name in
    this one too ("STORE A OPENS", "RECARGA OI TEM": `analysis.structure.with_names`). A
    name the other does not have stays missing ("A loja D abre" / "A LOJA ABRE" differ).
    The blind text is then read in lower case: its own capitals tell nothing ("DELIVERY ONE
    G." is one gram, no store G).
    """
    a_uncased, b_uncased = case_blind(a), case_blind(b)
    if a_uncased and not b_uncased:
        return with_names(a, names_read(b)).lower(), b
    if b_uncased and not a_uncased:
        return a, with_names(b, names_read(a)).lower()
    return a, b


_PUNCTUATION_RE: Final = re.compile(r"(?:(?<!\d)[^\w]|[^\w](?!\d))+")


_SIGN_RE: Final = re.compile(r"[<>\u2264\u2265%$\u20ac\u00a3\u00a5]|[+\u2212-](?=\s?(?:R\$|US\$|\$|\u20ac)?\s?\d)")


def _signs(text: str) -> list[str]:
    """The comparison marks, signs, currency signs and percent signs of `text`, in order
    ("> $50", "-$10", "10%" / "$10", "€15" / "$15"): punctuation `_plain` drops that changes
    a claim.
    """
    return _SIGN_RE.findall(text)


def _plain(text: str) -> str:
    """`text` folded (case, accents), its punctuation and spacing read as one space; a mark
    between two digits ("1,50", "1.299") is kept. "A devolucao e gratuita" is "A devolução é
    gratuita", whose "e" the structure can only read as "and".
    """
    return _PUNCTUATION_RE.sub(" ", _JOINED_RE.sub(_joiner, fold(text))).strip()


#: A dash or a slash between two words: a range ("Mon–Fri") or a choice ("Mon/Fri"), which no
#: comma nor space says ("Mon, Fri" lists two days).
_JOINED_RE: Final = re.compile(r"(?<=[^\W\d_])\s*([-\u2013\u2014/])\s*(?=[^\W\d_])")


def _joiner(match: re.Match[str]) -> str:
    """The word `_plain` keeps for a dash or slash between words."""
    return " slash " if match[1] == "/" else " dash "


#: The most terms two texts' words may differ by and their canonical readings still agree
#: (`analysis.structure.canonical_terms` leaves out a requirement's light verb per side and
#: puts a unit in the largest it fills: "8000 g" / "8 kg" differ by two terms, "must use" by one).
_CANONICAL_DROPS: Final = 4


def same_claims(old: Assertion, new: Assertion) -> bool:
    """True when `new` restates `old` (the rules of the module doc)."""
    old_body, new_body = cased_alike(old.body_text, new.body_text)
    differ = (claim_terms(old_body) ^ claim_terms(new_body)) - ELIDABLE_TERMS  # cheap: no equal structure
    if differ and (len(differ) > _CANONICAL_DROPS
                   or (canonical_terms(old_body) ^ canonical_terms(new_body)) - ELIDABLE_TERMS):
        # then (but for the terms a restatement may leave unsaid: "the store" as "we")
        return False
    if not same_statement(old_body, new_body):
        return False
    if same_statement(old.description_text, new.description_text):
        return True
    return _described(old, new) and _described(new, old)


def _described(one: Assertion, other: Assertion) -> bool:
    """True when `one`'s description asserts nothing `other` does not (module doc)."""
    other_text = f"{other.description_text}\n{other.body_text}"
    return (_covered(claim_terms(one.description_text), claim_terms(other_text))
            and details(one.description_text, summary=True).kept_in(details(other_text, summary=True)))


def _covered(description: frozenset[str], other: frozenset[str]) -> bool:
    """True when at least `DESCRIPTION_COVERED` of `description`'s terms (`SUMMARY_WORDS`
    aside) are in `other` (all of none).
    """
    description = description - _SUMMARY_TERMS
    return not description or len(description & other) >= DESCRIPTION_COVERED * len(description)


_SUMMARY_TERMS: Final = frozenset(t for w in SUMMARY_WORDS for t in content_terms(w))


def same_claim(existing: Concept, candidate: Candidate) -> bool:
    """True when `candidate` restates what `existing` claims (see the module doc).

    Compares description + body, ignoring the ``## Contradiction`` section on record.
    """
    return same_claims(claim_of(existing), candidate_claim(candidate))


def close_match(existing: Concept, candidate: Candidate) -> float | None:
    """`similarity` when the two claims are close, else None (the lexical fallback of
    the naming step; a semantic index may add its own neighbours, `consolidate.naming`).

    Close: a Jaccard of at least `CLOSE_MATCH` with `CLOSE_MATCH_SHARED` shared terms
    (long texts; content terms, or topic features), or, when the shorter side's topic (`analysis.structure.topic`:
    its content terms, poles, names and the units of its values) has at most
    `SHORT_RULE_TERMS` features, at least `SHORT_SHARED` shared features covering
    `SHORT_OVERLAP` of it (a short rule changed under a drifting name shares most of its
    few words with the old one: "The store opens at 9 am" and "... at 9 pm" share the
    store, opening and a time of day).
    """
    first, second = topic(f"{existing.description}\n{claim_text(existing.body)}"), \
        topic(f"{candidate.description}\n{candidate.body}")
    shared = len(first & second)
    shorter = min(len(first), len(second))
    close = (jaccard(first, second) >= CLOSE_MATCH and shared >= CLOSE_MATCH_SHARED) or (
        0 < shorter <= SHORT_RULE_TERMS and shared >= SHORT_SHARED and shared >= SHORT_OVERLAP * shorter)
    old, new = claim_of(existing).terms, candidate_claim(candidate).terms
    score = jaccard(old, new)
    if close or (score >= CLOSE_MATCH and len(old & new) >= CLOSE_MATCH_SHARED):
        return score
    return None


def other_values(existing: Concept, candidate: Candidate) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The amounts of `candidate` that `existing` does not state, and those of `existing`
    that `candidate` does not, each in words ("R$ 20", "24 months", "5%", "25/12"; `in_words`):
    what a person reviewing a held sighting looks at first.

    Compares the values of description and body together (`analysis.structure.details`),
    the ``## Contradiction`` section on record left out; a duration is compared in the
    largest unit it fills (`analysis.structure.whole_duration`: "48 hours" is "2 days",
    "12 months" "1 year"), and named as written.
    """
    old = values_of(f"{existing.description}\n{claim_text(existing.body)}")
    new = values_of(f"{candidate.description}\n{candidate.body}")
    old_whole, new_whole = frozenset(map(whole_duration, old)), frozenset(map(whole_duration, new))
    return (in_words(frozenset(v for v in new if whole_duration(v) not in old_whole)),
            in_words(frozenset(v for v in old if whole_duration(v) not in new_whole)))


def values_differ(existing: Concept, candidate: Candidate) -> str:
    """`other_values` in one line for a person ("R$ 20 here, R$ 15 on record"); "" when
    no value differs.
    """
    here, on_record = other_values(existing, candidate)
    return ", ".join([*(f"{v} here" for v in here), *(f"{v} on record" for v in on_record)])


def values_of(text: str) -> frozenset[str]:
    """The amounts and dates `text` states, as value tokens (``m:20:brl``, ``d:2/1``)."""
    return frozenset(item[1] for item in details(text).items if item[0] == "v" and item[1].startswith(("m:", "d:")))


def in_words(values: frozenset[str]) -> tuple[str, ...]:
    """Value tokens in words ("R$ 20", "24 months", "10h", "25/12", "Saturday"), amounts
    before dates, each unit's in increasing order; past `SAID_VALUES` of them, "and N more".
    """
    ordered = sorted(values, key=_order)
    said = [_said(v) for v in ordered[:SAID_VALUES]]
    if len(ordered) > SAID_VALUES:
        said.append(f"and {len(ordered) - SAID_VALUES} more")
    return tuple(said)


#: How many values a line for a person names (the rest are counted).
SAID_VALUES: Final = 6


def _order(value: str) -> tuple[str, str, Decimal, str]:
    """A value token's place: its kind and unit, then its number (a range by its start)."""
    kind, _, rest = value.partition(":")
    number, _, unit = rest.partition(":")
    try:
        amount = Decimal(number.split("-")[0])
    except ArithmeticError:
        amount = Decimal(0)
    return kind, unit, amount, value


_CURRENCY: Final = {"brl": "R$ ", "usd": "$", "eur": "\u20ac", "gbp": "\u00a3"}
#: Units written as a word, with their plural (an abbreviation, "km", "am", has none).
_WORD_UNITS: Final = {"minute": "minutes", "day": "days", "night": "nights",
                      "week": "weeks", "month": "months", "year": "years", "unit": "units",
                      "person": "people", "mile": "miles", "bag": "bags"}
#: A day's kind, said before it ("5 business days").
_DAY_KINDS: Final = {"business": "business", "calendar": "calendar"}
_WEEKDAYS: Final = ("Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")


def _said(value: str) -> str:
    """A value token in words: ``m:20:brl`` -> ``R$ 20``, ``m:24:month`` -> ``24 months``,
    ``m:5:day:business`` -> ``5 business days``, ``m:9:hour`` -> ``9h`` (a time of day or a
    duration: the token does not tell), ``m:5:%`` -> ``5%``, ``m:2:km`` -> ``2 km``,
    ``d:12-25`` -> ``25/12``, ``d:12-24:2026`` -> ``24/12/2026``, ``d:wd6`` -> ``Saturday``.
    """
    kind, _, rest = value.partition(":")
    if kind == "d":
        return _date_said(rest)
    number, _, unit = rest.partition(":")
    unit, _, qualifier = unit.partition(":")
    if unit in _CURRENCY:
        return f"{_CURRENCY[unit]}{number}"
    if unit in ("%", ""):
        return f"{number}{unit}"
    if unit == "hour":
        return f"{number}h"
    word = unit if number == "1" else _WORD_UNITS.get(unit, unit)
    return f"{number} {_DAY_KINDS[qualifier]} {word}" if qualifier in _DAY_KINDS else f"{number} {word}"


def _date_said(date: str) -> str:
    """A date token's text (after ``d:``) in words: ``12-25`` -> ``25/12``, ``wd6`` -> ``Saturday``."""
    if date.startswith("wd") and date[2:].isdigit() and int(date[2:]) < len(_WEEKDAYS):
        return _WEEKDAYS[int(date[2:])]
    day, _, year = date.partition(":")
    month, dash, dom = day.partition("-")
    if dash and month.isdigit() and dom.isdigit():
        return f"{dom}/{month}" + (f"/{year}" if year else "")
    return date


def similarity(existing: Concept, candidate: Candidate) -> float:
    """How close two claims are, 0..1.

    The Jaccard overlap of their content terms (description and body), whatever their
    numbers, negations and poles.
    """
    return jaccard(claim_of(existing).terms, candidate_claim(candidate).terms)
