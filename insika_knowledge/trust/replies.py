"""What a business reply says by answering the customer's question: a yes, a no, a value.

A customer asks; the business's reply may say little in words of its own ("Sim, acima de
R$ 199.", "1 to 2 business days.", "Não, só em 3 dias úteis."). These functions read what
such a reply affirms of the question (`affirmation`: what a yes or a correcting no
affirms, and what it passes over), what it leaves implied of a question for a value
(`topic`), and when it vouches for no claim at all (`vouches_for_none`: a yes narrowed to
a case the claim leaves out, a thing asked that it names none of, a yes-or-no question
asked beside a question for a value that it answers with the value alone).
`trust.grounding` reads a transcript's support with them.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Final

from insika_knowledge.analysis.structure import tokens
from insika_knowledge.analysis.text import fold
from insika_knowledge.trust.evidence import (
    after_no,
    after_yes,
    answered_question,
    asked_before,
    asserted,
    corrected_question,
    first_sentence,
    limited,
    narrowed_to,
    questions_in,
    sentences,
)
from insika_knowledge.trust.sources import Piece
from insika_knowledge.trust.values import features, is_number, replaced_values, unit

__all__ = ["affirmation", "affirmed", "as_answered", "topic", "vouches_for_none"]


#: Where a question of several things divides them ("..., and do you take PayPal?",
#: "Campinas e Jundiaí?"); the "and" of a range ("between 3 and 5 days", "entre R$ 50 e
#: R$ 100") joins no two things.
_CONJUNCT: Final = re.compile(r",\s+|;\s*|\s(?:and|e|or|ou)\s(?!(?:R\$|US\$|\$)?\s?\d)", re.I)


def affirmed(parts: Sequence[Piece], at: int) -> frozenset[str]:
    """The features a business piece says by answering yes to the customer's question
    (`trust.evidence.answered_question`): the question's ("Vocês têm frete grátis?" /
    "Sim, acima de R$ 199."), or of a question of two things, those of the one the answer
    names when it names one ("O frete é grátis acima de R$ 50 e vocês entregam em
    Campinas?" / "Sim, entregamos em Campinas"), less the question's values the answer
    replaces (`replaced_values`: "... em 1 dia?" / "Sim, em 1 a 2 dias úteis").
    """
    return affirmation(parts, at)[0]


def affirmation(parts: Sequence[Piece], at: int) -> tuple[frozenset[str], frozenset[str]]:
    """What a yes of ``parts[at]`` affirms (`affirmed`) and what it passes over: the
    features of the question's things it names none of ("Campinas e Jundiaí?" / "Sim, em
    Campinas": Jundiaí; of a message's questions, those it does not answer), the values it
    replaces (`replaced_values`) and the words it restates otherwise (`_requalified`); two
    empty sets for no yes.

    A no that gives another value in the unit of the question's and no word of its own
    (`trust.evidence.corrected_question`: "Vocês entregam em Campinas em 1 dia?" / "Não,
    só em 3 dias úteis") corrects the value, not the rest: it affirms the question less
    that value, which it passes over. Any other no affirms nothing ("No, we don't ship
    there", "Nope, $15 for standard").
    """
    question = answered_question(parts, at)
    if question is None:
        corrected, replaced = _correction(parts, at)
        return (corrected, replaced) if corrected or replaced else (frozenset(), _passed_over_unsaid(parts, at))
    answer = features(parts[at].text)
    customer = asked_before(parts, at)
    asked = (questions_in(customer.text) if customer is not None else []) or [question]
    questions = [q for q in asked if not asserted(q)] or [question]  # "$399, is that right? And parking?"
    found = frozenset().union(*(features(q) for q in questions))
    passed = (_things_passed_over(asked, answer, parts[at].text) & found) | replaced_values(found, answer) \
        | _requalified(question, after_yes(parts[at].text, question), answer)
    return found - passed, passed


def _passed_over_unsaid(parts: Sequence[Piece], at: int) -> frozenset[str]:
    """The features of the things of the customer's questions before ``parts[at]`` (a reply
    with no yes or no) that it names none of, when it names one: "Does the rate include
    unlimited km and a second driver?" / "Unlimited kilometres are included on all our
    standard rentals." says nothing of a second driver. A thing is named by any of its
    features the question's other things lack (a reply in its own words may name the
    unlimited km without "km").
    """
    customer = asked_before(parts, at)
    if customer is None or _EVERY.search(fold(parts[at].text)):
        return frozenset()
    asked = [q for q in questions_in(customer.text) if not asserted(q)]
    if any(_WH_QUESTION.search(fold(q)) for q in asked):
        return frozenset()  # a question for a value (`_values_passed_over` reads those)
    answer = features(parts[at].text)
    conjuncts = [c for q in asked for c in _CONJUNCT.split(q)]
    things = [features(c) for c in conjuncts]
    own = [t - frozenset().union(*things[:i], *things[i + 1:]) for i, t in enumerate(things)]
    named = [bool(o & answer) for o in own]
    if not any(named) or all(named):
        return frozenset()
    # a first part unnamed is told by its last word: its others are the question's verb
    return frozenset().union(*(_item(c) if not i else o
                               for i, (c, o, n) in enumerate(zip(conjuncts, own, named, strict=True)) if not n))


def _correction(parts: Sequence[Piece], at: int) -> tuple[frozenset[str], frozenset[str]]:
    """`affirmation` of a no that corrects the question's value (see there)."""
    question = corrected_question(parts, at)
    if question is None:
        return frozenset(), frozenset()
    found = features(question)
    said = features(after_no(parts[at].text))
    replaced = replaced_values(found, said)
    if not replaced or any(not is_number(t) for t in said - found):
        return frozenset(), frozenset()
    return found - replaced, replaced


#: A reply that names every thing asked at once ("Yes, we accept both", "Sim, os dois").
_EVERY: Final = re.compile(r"\b(?:both|all of them|all three|os dois|as duas|ambos|ambas|todos eles|todas elas)\b")


def _things_passed_over(asked: Sequence[str], answer: frozenset[str], text: str) -> frozenset[str]:
    """The features of the things of the questions `asked` that a yes (`text`, its features
    `answer`) names none of, when it names one: a question's thing is named by its own word
    (`_item`: "Do you take PayPal or Pix?" / "Yes, we take Pix" names Pix, not PayPal, whose
    conjunct holds the shared verb), a question of one thing by any of its words.
    """
    if _EVERY.search(fold(text)):
        return frozenset()
    things: list[tuple[frozenset[str], frozenset[str]]] = []
    for question in asked:
        conjuncts = _CONJUNCT.split(question)
        things += [(features(c), _item(c) if len(conjuncts) > 1 else features(c)) for c in conjuncts]
    named = [found for found, naming in things if naming & answer]
    if not named:
        return frozenset()
    return frozenset().union(*(found for found, naming in things if not naming & answer)) - frozenset().union(*named)


def _item(conjunct: str) -> frozenset[str]:
    """What one of a question's things is named by: its last content word or value ("Do you
    take PayPal" -> paypal; "in-seat power?" -> power; none for a conjunct without one).
    """
    found = features(conjunct)
    last = next((t for t in reversed(tokens(conjunct)) if t in found), None)
    return frozenset({last}) if last is not None else frozenset()


def _requalified(question: str, answer: str, replied: frozenset[str]) -> frozenset[str]:
    """The words of `question` a yes restates with other words in their place: `answer`
    (its first sentence after the yes; `replied`, the whole reply's features) says a
    content word of the question right after a content word of its own where the question
    has others the reply lacks ("Is the standard shipping fee $30?" / "Yes, the express fee
    is $30.": standard, shipping; "Is the downtown location open 24/7?" / "Yes, our
    Riverside location is."). A word before a value is no qualifier ("orders over $50 ship
    for free" restates "the free shipping threshold").
    """
    asked, said = features(question), features(answer)
    mine = [t for t in tokens(question) if t in asked and not is_number(t)]
    theirs = [t for t in tokens(answer) if t in said]
    out: set[str] = set()
    for i, word in enumerate(mine):
        if not i or word not in theirs:
            continue
        j = theirs.index(word)
        before = theirs[j - 1] if j else ""
        if not before or is_number(before) or before in asked or mine[i - 1] in replied:
            continue
        k = i - 1
        while k >= 0 and mine[k] not in replied:  # the run of the question's words it replaced
            out.add(mine[k])
            k -= 1
    return frozenset(out)


#: A question that asks for a value or a thing, not for a yes (folded): "quanto tá a air
#: fryer?", "qual o prazo?", "how long does shipping take?".
_WH_QUESTION: Final = re.compile(
    r"\b(?:quanto|quanta|quantos|quantas|qual|quais|quando|onde|como|que horas|what|which|when|where"
    r"|how (?:much|many|long|soon|often|far|late|early))\b")


def as_answered(parts: Sequence[Piece], at: int) -> str:
    """The customer's message before ``parts[at]`` as the yes or no of ``parts[at]``
    answers it, in one sentence with that answer's first ("O frete é grátis, Sim, acima de
    R$ 199."): a bound or a condition of the answer binds what was asked
    (`trust.evidence.drops_condition` reads it).
    """
    asked = asked_before(parts, at)
    first = first_sentence(parts[at].text)
    return f"{asked.text.strip().rstrip('?').rstrip()}, {first}" if asked is not None else first


def _asked_for_value(parts: Sequence[Piece], at: int) -> tuple[str, str] | None:
    """The customer's question for a value or a thing right before ``parts[at]`` (not a
    tag question, which asserts), as ``(what it asks for, a yes-or-no question asked with
    it in one breath)``: "Is delivery free and how long does it take?" is ``("how long does
    it take?", "Is delivery free")``; the second is "" for none. None for no such question.
    """
    before = next((p for p in reversed(parts[:at]) if p.speaker != "tool"), None)
    if before is None or before.speaker != "customer":
        return None
    asked = questions_in(before.text)
    if not asked or asserted(asked[-1]) or not _WH_QUESTION.search(fold(asked[-1])):
        return None
    question = asked[-1]
    clauses = _AND.split(question)
    first = next((k for k, c in enumerate(clauses) if _WH_QUESTION.search(fold(c))), 0)
    if not first:
        return question, ""
    cut = list(_AND.finditer(question))[first - 1]  # (the words as written: "Manaus e Belém" keeps its "e")
    return question[cut.end():], question[:cut.start()]


def vouches_for_none(parts: Sequence[Piece], at: int, claim: str, wanted: frozenset[str],
                     passed: frozenset[str]) -> bool:
    """True when ``parts[at]`` vouches for no claim of features `wanted`: its yes passed
    over a part of it (`passed`, of `affirmation`, that the piece does not say itself), is
    narrowed to a case the claim leaves out (`trust.evidence.narrowed_to`: "Is the refund
    window 60 days?" / "Yes, for premium members." is no "The refund window is 60 days"),
    or it answers a question for a value beside a yes-or-no one the claim holds
    (`_unanswered`).
    """
    question = answered_question(parts, at)
    said = features(parts[at].text)
    if wanted & (passed - said) or (question is None and (
            _unanswered(parts, at, wanted) or _values_passed_over(parts, at, said) & set(_WORD.findall(fold(claim))))):
        return True  # (a yes answers the yes-or-no part: "Yes, $10, and it takes 1 day")
    if question is None:
        return False
    narrowed = narrowed_to(parts[at].text, question)
    return (bool(narrowed) and not narrowed & wanted) or bool(limited(claim, fold(as_answered(parts, at))))


def _values_passed_over(parts: Sequence[Piece], at: int, answer: frozenset[str]) -> frozenset[str]:
    """The words (folded, as written: a stemmer may read a name apart in two sentences) of
    the things of the customer's question for a value that ``parts[at]`` (its features
    `answer`) names none of, when it names one: "Quanto custa o frete para Manaus e Belém?"
    / "R$ 45 para Belém." gives Belém's price, not Manaus's. A thing is named by its word
    (`_thing_word`): the first part's last ("... o frete para Manaus"), a later part's first
    ("a dermatology consultation", "Riverside gyms open on weekends?"); a later part that
    asks anew ("... e qual o prazo?") is no thing of the question.
    """
    asked = _asked_for_value(parts, at)
    if asked is None or _EVERY.search(fold(parts[at].text)) or _ALL in tokens(parts[at].text):
        return frozenset()  # "R$ 99 em todas as unidades"
    conjuncts = _CONJUNCT.split(asked[0])
    if len(conjuncts) < 2 or any(_WH_QUESTION.search(fold(c)) for c in conjuncts[1:]):
        return frozenset()
    replied = set(_WORD.findall(fold(parts[at].text)))
    each = [features(c) for c in conjuncts]
    things = [_thing_word(c, frozenset().union(*each[:i], *each[i + 1:]), last=not i) for i, c in enumerate(conjuncts)]
    named = [bool(word) and (word in replied or bool(features(word) & answer)) for word in things]
    if not any(named):
        return frozenset()
    return frozenset(word for word, n in zip(things, named, strict=True) if not n)


_WORD: Final = re.compile(r"\w+")


def _thing_word(conjunct: str, shared: frozenset[str], *, last: bool) -> str:
    """The first (or `last`) word of `conjunct` that is a content word and none of the
    features `shared` with the question's other parts, folded ("" for none): a thing's name
    as written, which the stemmer may read apart in another sentence ("Belém?" and "R$ 45
    para Belém."; "da unidade Barra?" is named by "barra", not by "unidade").
    """
    found = _WORD.findall(fold(conjunct))
    return next((w for w in (reversed(found) if last else found)
                 if features(w) and not features(w) <= shared and not w.isdigit()), "")


#: Every one of a kind ("em todas as unidades", "at every location").
_ALL: Final = "p:p_all"


def _unanswered(parts: Sequence[Piece], at: int, wanted: frozenset[str]) -> bool:
    """True when `wanted` (a claim's features) holds all of a yes-or-no question the
    customer asked beside a question for a value, which ``parts[at]`` answers with the value
    alone and says none of: "Is shipping free and how long does it take?" / "3 business
    days." does not say "Shipping is free and takes 3 business days" (it says "Shipping
    takes 3 business days"). The caller asks only of a reply that says no yes.
    """
    asked = _asked_for_value(parts, at)
    if asked is None or not asked[1]:
        return False
    left = features(asked[1]) - features(asked[0]) - features(parts[at].text)
    return bool(left) and left <= wanted


def topic(parts: Sequence[Piece], at: int, stated: frozenset[str]) -> frozenset[str]:
    """What the customer's question named that the business's answer leaves implied.

    "quanto tá a air fryer de 5 litros?" / "Tá saindo por R$ 1.299,00 à vista": the answer
    gives the price of the thing the question named. When ``parts[at]`` comes right after
    the customer's question for a value or a thing (`_WH_QUESTION`; not a tag question,
    which asserts), and its sentences that state the claim give one of the claim's values
    (`stated`: their features the claim has), the question's features are read with them,
    less the question's own values in a unit the answer gives (a value offered to be
    confirmed or corrected: "3 dias?" / "10 dias úteis"). Empty otherwise, for an answer
    to a yes-or-no question (`affirmed` reads those), and when a sentence of the answer
    gives the question's thing, by one of its words, another value in a unit of `stated`
    (`_answered_otherwise`: "How much is express shipping?" / "Standard is $10; express is
    $25.": the $10 is another thing's).
    """
    if not any(is_number(t) for t in stated):
        return frozenset()
    asked = _asked_for_value(parts, at)  # "Is it free and how long does it take?": the answer is the how long
    if asked is None:
        return frozenset()
    units = {unit(t) for t in stated if t.startswith("m:")}
    implied = frozenset(t for t in features(asked[0]) if not (t.startswith("m:") and unit(t) and unit(t) in units))
    return frozenset() if _answered_otherwise(parts[at].text, implied, stated, units) else implied


def _answered_otherwise(answer: str, asked: frozenset[str], stated: frozenset[str], units: set[str]) -> bool:
    """True when a sentence of `answer` that gives none of `stated` (the claim's values the
    answer gives) says a word of the question (its features `asked`) with a value in one of
    `units`: the answer says the question's thing has that value, and the values of its
    other sentences are other things' ("O normal sai R$ 15. O expresso sai R$ 30." for
    "quanto custa o expresso?").
    """
    for sentence in sentences(answer):
        said = features(sentence)
        if not said & stated and said & asked \
                and any(t.startswith("m:") and t not in stated and unit(t) in units for t in said):
            return True
    return False


#: The "and" of a yes-or-no question and a question for a value asked in one breath ("Is
#: delivery free and how long does it take?"; not a range's: "between 3 and 5 days").
_AND: Final = re.compile(r"\s(?:and|e)\s(?!(?:R\$|US\$|\$)?\s?\d)", re.I)
