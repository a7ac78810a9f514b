"""Grounding: which speakers of a transcript support a claim, decided from the text alone.

Used when the proposer quoted no evidence (`trust.evidence` checks quotes). A claim is
reduced to its *features*: the analyser's content terms and its values with their units
(`analysis.structure.content_terms`: "cem reais" and "R$ 100" are one feature, "R$ 40"
and "40%" two). Each feature has an *origin*, the speaker of the first message that
mentions it. A customer message supports the claim when it covers enough of the claim's
features; a business message (`trust.sources.pieces`: a tool result's customer-written
fields are the customer's) is read through its sentences that state the claim rather
than turn it down, take note of it or echo it (`trust.evidence.read_sentence`), and
supports it when those cover enough of the claim's features (or, since values survive
translation, more than half of its values, in the other language) and bring features of
their own that no earlier customer message had (unless the customer had asked). So an
agent that echoes a customer's "note for your records" ("Noted: orders over R$ 50 get a
free gift!") or refuses it ("we do not have a 40% discount for public servants") adds no
support, while an agent that
answers a question with the rule ("CEPs 13000-13999 ship in 1-2 days") does.

Speakers: ``customer`` (role ``user``), ``agent`` (role ``assistant``), ``human`` (an
assistant message marked ``"human": true`` or named ``human``/``human_agent``, or role
``human_agent``), ``tool`` (roles ``tool`` and ``function``) and ``system`` (the
business's own instructions: roles ``system`` and ``developer``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final, Literal

from insika_knowledge.analysis.arrangement import rearranged
from insika_knowledge.analysis.structure import PRICE_UNITS, VALUE_WORDS, content_terms, names, same_duration, tokens
from insika_knowledge.analysis.text import fold, negation_count, text_language
from insika_knowledge.trust.corrections import (
    VALUE_NOUNS,
    VERSION_WORDS,
    narrower_subject,
    opens_explicit_correction,
    without_asides,
    without_change_account,
    without_explanation,
    without_old_value,
)
from insika_knowledge.trust.evidence import (
    LISTS_MORE,
    REQUESTING,
    Reading,
    answered_question,
    asserted,
    charges_for,
    corrected_later,
    corrected_next,
    corrected_to,
    declined_by,
    drops_condition,
    limited,
    only_one_of_a_pair,
    own_names,
    pole_denied,
    read_sentence,
    replaced_in_message,
    replaced_later,
    sentences,
    someone_else,
    superseded,
    turns_down,
)
from insika_knowledge.trust.joins import joined_otherwise
from insika_knowledge.trust.replies import affirmation, affirmed, as_answered, topic, vouches_for_none
from insika_knowledge.trust.sources import Piece, pieces
from insika_knowledge.trust.values import bare, features, is_number, states, unit
from insika_knowledge.wire.messages import message_text

Speaker = Literal["customer", "agent", "human", "tool", "system"]

#: Sentences around a business sentence read with it: the names said before it, the
#: corrections after it (a message of thousands of sentences is read in linear time).
NEARBY: Final = 24
#: Share of the claim's features a message must mention to support it.
MIN_COVERAGE: Final = 0.5
#: Features a non-customer message must bring that no earlier customer message had:
#: at least this share of the claim's features, or any number of the claim.
MIN_NOVELTY: Final = 0.25


def speaker(message: Mapping[str, Any]) -> Speaker | None:
    """Who wrote `message` (None for a role this module does not know)."""
    role = message.get("role")
    name = str(message.get("name") or "").lower()
    if role == "user":
        return "customer"
    marked_human = message.get("human") is True or name in {"human", "human_agent"}
    if role == "human_agent" or (role == "assistant" and marked_human):
        return "human"
    if role == "assistant":
        return "agent"
    if role in ("tool", "function"):
        return "tool"
    if role in ("system", "developer"):  # OpenAI's newer name for the business's instructions
        return "system"
    return None


def unstated_values(claim: str, messages: Iterable[Mapping[str, Any]], known: Iterable[str] = ()) -> frozenset[str]:
    """The values of `claim` (``m:10:``, shown without their units) that nothing the model read states.

    What it read: every message of the turn and `known`, the texts of the stored concepts it
    was shown (those that share a content term with the claim). A message states a value
    when it says the same number in the same unit ("10 days" is no "10%", "R$ 50" no
    "$50"); a number without a unit states it too when the business side wrote it (a tool's
    data: ``{"fee": 10}``; a date states its year), never the customer's (an order number).
    A value found nowhere was written from nothing ("Refunds carry a 10% fee" after "Refunds
    go back to the original card"). A 0 or 1 is checked only as a price or a share (else it
    is an article or "only one"), and neither a link's target nor a step's number is a value.
    """
    claimed = features(_NOT_VALUE_TEXT_RE.sub(" ", claim))
    wanted = _values_of(claimed)
    if not wanted:
        return frozenset()
    about = {t for t in claimed if not is_number(t)}
    for message in messages:
        found = features(message_text(message))
        wanted = {t for t in wanted if not states(t, found, business=speaker(message) != "customer")}
        if not wanted:
            return frozenset()
    for text in known:
        found = features(text)
        if about & found:
            wanted = {t for t in wanted if not states(t, found, business=False)}
    return frozenset(bare(t) for t in wanted)


def unsaid_by_business(claim: str, messages: Sequence[Mapping[str, Any]], known: Iterable[str] = (),
                       withheld: Iterable[str] = ()) -> frozenset[str]:
    """The values of `claim` (as `unstated_values` gives them) that no business piece of
    `messages` states, nor `withheld` (the business's texts the turn ran under) nor `known`
    (the stored concepts the model was shown): a value only the customer said ("I heard it's
    5 days" beside "reviewed within {{claim_review_days}} business days"), or only a link's
    path held (".../troca-gratis-30-dias": `trust.sources.pieces` reads a link as its host).
    """
    said = [{"role": "assistant", "content": p.text}
            for p in pieces(list(messages), speaker, message_text) if p.business]
    return unstated_values(claim, [*said, *({"role": "system", "content": t} for t in withheld)], known)
#: Numbers of a claim that are no values: a link's target (``[[cep-13-campinas]]``), a
#: step's number (``1) ...``, ``2. ...`` at a line's start) and a masked pattern ("CEPs
#: 13xxx", "01xxx-xxx": a prefix, not a number anyone states).
_NOT_VALUE_TEXT_RE: Final = re.compile(
    r"\[\[[^\]]*\]\]|(?m:^\s*\d{1,2}[.)](?=\s))|(?<=\s)\d{1,2}\)(?=\s)|\b\d+[xX]{2,}(?:-[xX]+)?\b")
#: Values too common to be made up unless they are a price or a share: "only one order",
#: "um item" (an article or a count); "a 1% fee" and "R$ 1" are checked.
_NOT_VALUES: Final = frozenset({"m:0:", "m:1:"})
#: Units of time: "1 year" is a value ("a year" reads as one too), "1 bag" may be "a bag".
_TIMED: Final = frozenset({"minute", "hour", "day", "week", "month", "year"})


def _claim_values(claim: str) -> set[str]:
    """The values a message must hold to support `claim` (its value features, masks and
    other non-values left out: `_NOT_VALUE_TEXT_RE`, `_values_of`).
    """
    return _values_of(content_terms(_NOT_VALUE_TEXT_RE.sub(" ", claim)))


def _values_of(claimed: frozenset[str]) -> set[str]:
    """The value features of a claim's features that count as values (see `unstated_values`)."""
    return {t for t in claimed if is_number(t) and (bare(t) not in _NOT_VALUES or unit(t) in PRICE_UNITS | _TIMED)}


def supporters(claim: str, messages: Iterable[Mapping[str, Any]]) -> frozenset[Speaker]:
    """The speakers whose messages support `claim`.

    Args:
        claim: the candidate's description and body, as one text.
        messages: the turn's transcript, oldest first (OpenAI-style dicts with ``role``
            and ``content``).

    Returns:
        A set of `Speaker` values; empty when no message supports the claim (for example
        when the model wrote it from nothing said).
    """
    wanted = features(claim)
    if not wanted:
        return frozenset()
    numbers = {t for t in wanted if is_number(t)}
    values = _claim_values(claim)  # what a supporter must hold
    claim_language = text_language(claim)
    said_by_customer: set[str] = set()
    asked = False  # the customer's last message asked a question (an answer may repeat its words)
    found: set[Speaker] = set()
    parts = pieces(list(messages), speaker, message_text)
    ours = own_names(parts)
    named, spoken = _names_said(claim, parts, ours)
    for at, piece in enumerate(parts):
        if piece.speaker == "customer":
            have = features(piece.text) & wanted
            if len(have) >= MIN_COVERAGE * len(wanted) and not REQUESTING.search(fold(piece.text)):
                found.add("customer")  # a request ("please cancel order 5521") asserts no rule
            if have and not rearranged(claim, piece.text, customer=True):
                said_by_customer |= have  # (another version of it, "5% on boleto" for "5% on Pix",
                # leaves the business's own version something new)
            asked = not asserted(piece.text)
            continue
        if _taken_back(parts, at, claim):
            continue  # taken back by the business's next message ("Sorry, correction: ...")
        if not asked and _SETS_STRAIGHT.search(re.split(r"[.!?:;,\u2014]", fold(piece.text), maxsplit=1)[0]) \
                and len(said_by_customer) >= MIN_COVERAGE * len(wanted):
            continue  # "Fuel is full-to-full, right?" / "Actually, it's prepaid": not the customer's version
        # The message's sentences that state the claim (not refuse, note or echo it),
        # read together: a rule may take two sentences to say.
        text, passed = affirmation(parts, at)
        if vouches_for_none(parts, at, claim, wanted, passed):
            continue  # a yes that passed over a part of the claim, or gave it another value
        said = [earlier.text for earlier in parts[:at] if earlier.speaker == "customer"][-1:] if text else []
        if said:  # a bound of the yes binds the question ("O frete é grátis?" / "Sim, acima de R$ 199")
            said.append(as_answered(parts, at))
            own = features(piece.text)
            if _valued_otherwise(values, own) and not all(states(v, own, business=True) for v in values):
                continue  # the yes is to something else: the message gives the claim's subject another
                # value of its own ("A Estrada devolve tudo até 24h antes?" / "Sim, a Estrada tem essa
                # política. Aqui, o reembolso integral vale até 72h antes")
        split = sentences(piece.text)
        if _gainsaid(claim, split, answered=bool(text)):
            continue  # "Yes, delivery is free over £50. Next-day is an extra £4.95" is no free next-day
        corrected: set[str] = set()  # values the message corrected its own sentences to
        stated_here: list[str] = []  # the message's sentences that state a part of it
        elsewhere: set[str] = set()  # the claim's words a sentence of it binds to another value
        readings = _readings(claim, parts, at, wanted, ours)
        if _declines(claim, readings, split, wanted):
            continue  # a sentence that says most of it declines it: the message's others state no part of it
        for k, sentence in enumerate(split):
            if not features(sentence) & wanted or (piece.speaker == "system" and PERSONA.match(sentence)):
                continue  # (a system prompt's persona, "You are the support assistant for X", states no rule)
            reading = readings[k]
            assert reading is not None
            if named and _of_another_name(named, names(sentence) - ours, spoken):
                continue  # "5 GB is included on the Premium plan" is not the Start plan's, which the
                # business names elsewhere ("On Start, roaming is charged")
            if reading.states and piece.speaker != "tool" and _valued_otherwise(values, features(sentence)) \
                    and any(features(earlier) & wanted & numbers for earlier in split[:k]):
                elsewhere |= features(sentence) & wanted
                continue  # "Standard is $10; express is $25.": express is not the $10's (a value said
                # after it may correct it: "A taxa é R$ 30. Ops, quis dizer R$ 40.")
            if reading.states:  # as it was read: a correction's reason after it is no part of the claim
                stated = without_explanation(sentence)
                text |= features(stated)
                said.append(stated)
                stated_here.append(stated)
            elif reading.why == "corrected":  # a value corrected in the message to the claim's
                replaced, new = corrected_to(claim, sentence, piece.speaker, _later(split, k))
                if replaced:  # the sentence as corrected: its words, the correction's value
                    text |= (features(sentence) - replaced) | new
                    said.append(sentence)
                    corrected |= new
        if len(values) > 1 and len(stated_here) > 1 and rearranged(claim, " ".join(stated_here)):
            continue  # each sentence one part, the two with their values traded ("The club is £12 ... .
            # Breakfast club is separate, at £6" for "the club costs £6 and breakfast club £12")
        if piece.speaker == "tool":  # data carries no units: a bare value matches any
            text = text | {t for t in wanted if bare(t) in text}
        if elsewhere - text:  # a word of the claim the message says only of another value ("Até 12x
            continue  # no cartão! Até 6x fica sem juros": no 12x without interest)
        implied = topic(parts, at, text & wanted) if said else frozenset()
        text |= implied
        durations = {same_duration(t) for t in text if t.startswith("m:")}  # "24 horas" says "1 dia"
        text = text | {t for t in numbers if t.startswith("m:") and same_duration(t) in durations}
        have = text & wanted
        novel = have if asked else have - said_by_customer
        brings = (novel & numbers) or len(novel) / len(wanted) >= MIN_NOVELTY
        # Values survive translation where words do not: a message in the other language
        # holding most of the claim's values covers it ("7 dias" said, "7 days" proposed);
        # in the claim's own language its words must too.
        numeric = (bool(numbers) and 2 * len(have & numbers) >= len(numbers) + 1
                   and (piece.speaker == "tool" or _in_another_language(piece.text, claim_language)))
        held = features(" ".join(said)) | corrected | implied
        valued = numeric or all(states(v, held, business=True) for v in values)
        if (len(have) >= MIN_COVERAGE * len(wanted) or numeric) and brings and valued \
                and not drops_condition(claim, said):  # "free for orders over R$ 200" for "free"
            found.add(piece.speaker)  # type: ignore[arg-type]
    return frozenset(found)


#: A system prompt's sentence that says who the assistant is ("You are the support assistant
#: for Tallyboard", "Você é o atendente virtual da Loja X", "Act as ..."), as written.
PERSONA: Final = re.compile(
    r"^\W*(?i:(?:you are|you're|voc[eê] [eé]) (?:the|an?|o|a|um|uma)\b|act as|your role is|voc[eê] atua|atue como"
    r"|seu papel [eé])\b")  # ("You're allowed to give students 10% off" is a rule)


def _names_said(claim: str, parts: Sequence[Piece], ours: frozenset[str]) -> tuple[frozenset[str], frozenset[str]]:
    """The claim's names but the business's own (`ours`), and the names the business side says."""
    named = names(claim) - ours
    return named, frozenset().union(*(names(p.text) for p in parts if p.business)) if named else frozenset()


def _of_another_name(named: frozenset[str], said: frozenset[str], spoken: frozenset[str]) -> bool:
    """True when a business sentence (its names `said`) names something the claim (its names
    `named`) does not, and leaves out a name of the claim that the business side says
    elsewhere (`spoken`): it speaks of another plan, branch or product than the claim's.
    """
    return bool(said - named) and bool((named - said) & spoken)


def _gainsaid(claim: str, split: Sequence[str], *, answered: bool) -> bool:
    """True when a sentence of a business message (`split`) takes back a part of `claim` that
    its other sentences seem to state: after a yes (`answered`), it charges for what the
    claim calls free (`trust.evidence.charges_for`: "Yes, delivery is free on orders over
    £50. Next-day is an extra £4.95 though" for free next-day delivery; a message of two
    things may charge for one, "The paid tier ... costs $10 a month" beside "The free tier
    includes 3 projects"), or it allows only one of two names the claim joins
    (`trust.evidence.only_one_of_a_pair`: "Aceitamos sim para limpeza, nos dois convênios.
    Tratamento de canal pelo convênio só atendemos Amil." for Amil and SulAmérica for both),
    or its condition asks for both of two things the claim asks for either of
    (`trust.joins.joined_otherwise`).
    """
    return any((answered and charges_for(claim, sentence)) or only_one_of_a_pair(claim, sentence)
               or joined_otherwise(claim, sentence) for sentence in split)


def _valued_otherwise(values: set[str], said: frozenset[str]) -> bool:
    """True when a sentence (its features `said`) gives a value in a unit of the claim's
    `values` and none of the claim's values in that unit: it says the claim's subject has
    another value ("Standard shipping to Canada is CA$12 and takes 7-10 business days" for
    "... CA$12 and takes 2-4 business days"), not a part of the claim (a window "entre 22h e
    7h" beside a claim's "plantão 24 horas" says one of its values of hours).
    """
    units = {unit(t) for t in said if t.startswith("m:")} - {""}
    return any(not any(v in said or states(v, said, business=True) for v in values if unit(v) == u)
               for u in units if any(unit(v) == u for v in values))


def _in_another_language(text: str, claim_language: str) -> bool:
    """True when `text` is in a language, and not the claim's: a terse answer of values
    ("30 days.", "2 dias úteis.") is in none (``mixed``), and says nothing of the words of a
    claim a customer's question put around them.
    """
    language = text_language(text)
    return "mixed" not in (language, claim_language) and language != claim_language


#: Words that set the customer's statement straight, in a reply's first clause (folded):
#: "Actually, ...", "At this location it's actually ...", "Na verdade, ...", "Not quite: ...".
_SETS_STRAIGHT: Final = re.compile(
    r"\b(?:(?:actually|in fact|na verdade|na real)(?![\s,!:]+(?:yes|yeah|that'?s (?:right|correct)|you'?re right"
    r"|correct|sim|e isso|isso mesmo|exatamente))|not quite|not exactly|nao exatamente"
    r"|(?:it'?s|it is|e) (?:the reverse|the opposite|o contrario|o inverso)|pelo contrario|on the contrary)\b")
#: How a business sentence that says a claim limits it, or says another version of it
#: (`trust.evidence.read_sentence`'s reasons), as the quarantine row records it
#: (`trust.gate.held_because`: "the business side said it for a limited time, ...").
LIMITS: Final = {
    "says it for a limited time": "said it for a limited time",
    "grants it once": "granted it once",
    "narrower": "said it of something narrower",
    "rearranged": "said another version of it",
    "corrected": "took it back",
    "gainsaid": "took part of it back",
}


def limited_by_business(claim: str, messages: Iterable[Mapping[str, Any]]) -> str:
    """How the business side limited `claim` where it said it, or ``""``.

    A business sentence that mentions at least `MIN_COVERAGE` of the claim's features but
    says it only for a while, only this once, of something narrower (one branch, one
    kind of product), takes it back ("Frete grátis acima de R$ 199. Desculpe, correção:
    acima de R$ 249"; a next piece that corrects it), or with its parts placed otherwise (`analysis.arrangement`: "an
    overdraft costs $35 and a returned payment $25" for "the overdraft fee is $25 and the
    returned-payment fee $35"), or charges for what the claim calls free
    (`trust.evidence.charges_for`: "Next-day is an extra £4.95" for free next-day delivery)
    gives its reason (a value of `LIMITS`): "This week only,
    shipping is free on all orders" for "Shipping is free on all orders". ``""`` when no such sentence
    says it, or when a business sentence states it as the standing rule.

    Args:
        claim: the candidate's description and body, as one text.
        messages: the turn's transcript, oldest first.
    """
    parts = pieces(list(messages), speaker, message_text)
    wanted = features(claim) - own_names(parts)  # (the business's own name is in every sentence it says)
    if not wanted:
        return ""
    found = ""
    values = _claim_values(claim)
    for at, piece in enumerate(parts):
        if not piece.business:
            continue
        gone = _taken_back(parts, at, claim)
        split = sentences(piece.text)
        whole = not gone and len(features(piece.text) & wanted) >= MIN_COVERAGE * len(wanted)
        if whole and rearranged(claim, piece.text):  # two sentences, each a tier, say another version
            found = found or LIMITS["rearranged"]
        gainsaid = not gone and _gainsaid(claim, split, answered=bool(affirmed(parts, at)))
        for k, sentence in enumerate(split):
            if len(features(sentence) & wanted) < MIN_COVERAGE * len(wanted):
                if whole and features(sentence) & wanted:  # the message says it in parts, one of them
                    reading = _reading(claim, piece, split, k, parts[:at])  # for others only, say
                    if reading.why == "narrower":  # ("Domingo só pra empresas com plano corporativo")
                        found = found or LIMITS["narrower"]
                if features(sentence) & wanted and limited(claim, fold(sentence)) == "grants it once":
                    found = found or LIMITS["grants it once"]  # "... I'll waive it just this once"
                continue
            if gone:  # the business's next piece takes this one back, speaking of it
                found = found or LIMITS["corrected"]
                continue
            reading = _reading(claim, piece, split, k, parts[:at])
            if reading.states and drops_condition(claim, [sentence]):
                found = found or LIMITS["narrower"]  # "free for orders over R$ 200" for "free"
            elif reading.states and not gainsaid and all(states(v, features(sentence), business=True) for v in values) \
                    and wanted & VALUE_WORDS <= features(sentence):  # "free" is a value: not "Você é o atendente
                return ""  # do Estacionamento Shopping" / stated as the standing rule (not "acima de R$ 249")
            elif reading.states and _valued_otherwise(values, features(sentence)):
                found = found or LIMITS["rearranged"]  # "Standard ... takes 7-10 days" for "... 2-4 days"
            found = found or LIMITS.get(reading.why, "")
        if gainsaid:
            found = found or LIMITS["gainsaid"]
    return found


def _taken_back(parts: Sequence[Piece], at: int, claim: str) -> bool:
    """True when the business takes ``parts[at]`` back as to `claim`: its next piece opens
    with a correction (naming nothing else, `trust.evidence.corrected_next`, or saying more:
    "preciso corrigir a informação anterior: ..., inclusive aos fins de semana") that may be
    of the claim (`_corrects`), or a later sentence gives the claim's unit another value
    (`trust.evidence.replaced_later`).
    """
    index = parts[at].index
    if replaced_later(parts, index, claim) or corrected_later(claim, index, parts):
        return True  # (or a later correction declines it: "Corrigindo o que falei: ... vale só para ...")
    later = next((p.text for p in parts[at + 1:] if p.business), "")
    return (corrected_next(parts, index, claim) or opens_explicit_correction(later)) \
        and _corrects(claim, later, parts[at].text)


def _after(split: Sequence[str], k: int) -> str:
    """The sentence after ``split[k]`` ("" for none), with the one after it when it only
    opens a correction: it ends in a colon ("Uma correção:" + "o frete é R$ 15."), or it
    corrects in words and gives no number ("Desculpa, errei o valor!" + "O básico é R$
    79,90.").
    """
    if k + 1 >= len(split):
        return ""
    after = split[k + 1]
    announces = after.rstrip().endswith(":") or (
        opens_explicit_correction(after) and not _DIGIT.search(after))
    return f"{after} {split[k + 2]}" if announces and k + 2 < len(split) else after


_DIGIT: Final = re.compile(r"\d")


def _reading(claim: str, piece: Piece, split: Sequence[str], k: int, before: Sequence[Piece]) -> Any:
    """`read_sentence` of ``split[k]`` (a sentence of business `piece`), where a next
    sentence that corrects something takes it back only when it speaks of the claim
    (`_corrects`: "Frete SP R$ 15. Desculpe, correção: o prazo é de 3 dias úteis" still
    states the fee), and what follows it in the message (the rest of the sentence after an
    inline "ou melhor", "or rather"; the later sentences) takes it back when it gives the
    claim's subject another value (`replaced_in_message`: "R$ 15, ou melhor, R$ 18").
    """
    sentence, after = without_explanation(split[k]), _after(split, k)  # a correction is read without its reason
    said = " ".join(split[max(0, k + 1 - NEARBY):k + 1])  # what the business said up to it (its own names)
    reading = read_sentence(claim, sentence, before, after)
    if reading.why == "corrected" and not _corrects(claim, after, said):
        reading = read_sentence(claim, sentence, before)
    if reading.states and replaced_in_message(claim, piece.speaker, _later(split, k), said):
        return Reading(False, "corrected")
    return reading


def _readings(claim: str, parts: Sequence[Piece], at: int, wanted: frozenset[str],
              ours: frozenset[str]) -> list[Reading | None]:
    """`_own_reading` of each sentence of business ``parts[at]`` that shares a feature of
    `claim` (its features `wanted`); None for the others.
    """
    split = sentences(parts[at].text)
    return [_own_reading(claim, parts[at], split, k, parts[:at], ours) if features(sentence) & wanted else None
            for k, sentence in enumerate(split)]


def _declines(claim: str, readings: Sequence[Reading | None], split: Sequence[str], wanted: frozenset[str],
              passing: frozenset[str] = frozenset()) -> bool:
    """`trust.evidence.declined_by` of a message's `readings` (`_readings`): a sentence that
    says most of the claim (`MIN_COVERAGE` of its features) declines it, unless its reading's
    reason is in `passing`.
    """
    shares = [len(features(sentence) & wanted) for sentence in split]
    return declined_by(claim, [r if r is not None and (r.states or (share >= MIN_COVERAGE * len(wanted)
                                                                     and r.why not in passing)) else None
                               for r, share in zip(readings, shares, strict=True)], shares)


def misstated(claim: str, messages: Iterable[Mapping[str, Any]]) -> bool:
    """True when no business sentence states most of `claim` (`MIN_COVERAGE` of its features,
    as the claim says it) and one speaks of it otherwise: it gives one of the claim's values
    another bound or arrangement (`read_sentence` reads "rearranged": "Standard parcels can
    weigh up to 30 kg" for "... 30 kg or more"), lists the claim's alternatives with one fewer
    (`trust.evidence.lists_more`), negates a pole the claim asserts
    (`trust.evidence.pole_denied`: "No, breakfast is not included"), or, holding every value of
    the claim or a quarter of its features, binds it to a condition or a while the claim drops
    (`trust.evidence.drops_condition`; a yes to the customer's question too: "posso pintar a
    parede?" / "Pode sim, mas só com autorização por escrito"). `trust.assess` asks it of a
    claim no one's words support, where the business side said some of its words.
    """
    values = {t for t in tokens(claim) if t.startswith("m:")}
    parts = pieces(list(messages), speaker, message_text)
    ours = own_names(parts)
    wanted = features(claim)
    turned = False
    for at, piece in enumerate(parts):
        if not piece.business:
            continue
        if affirmation(parts, at)[0] and drops_condition(claim, [as_answered(parts, at)]):
            turned = True  # "posso pintar a parede?" / "Pode sim, mas só com autorização por escrito"
        for sentence, reading in zip(sentences(piece.text), _readings(claim, parts, at, wanted, ours), strict=True):
            if reading is None:
                continue
            if reading.states and len(features(sentence) & wanted) >= MIN_COVERAGE * len(wanted):
                return False  # a sentence that says most of the claim, as the claim says it
            said = set(tokens(sentence))
            turned |= (reading.why in _MISREAD and bool(values & said)) or reading.why == LISTS_MORE \
                or (reading.why == "contradicts" and pole_denied(claim, sentence)) \
                or (((bool(values) and values <= said) or len(features(sentence) & wanted) >= _OF_IT * len(wanted))
                    and drops_condition(claim, [sentence]))  # (the cheap test first)
    return turned


#: The share of a claim's features a business sentence holds to speak of the claim (when it
#: holds not all its values): "Se quiser só o burger, fica R$ 32" is one price of three.
_OF_IT: Final = 0.25
#: Readings of a business sentence that give one of the claim's values another sense (not
#: "contradicts": a polarity misread, "It's not true that we don't offer it", would hold a rule).
_MISREAD: Final = frozenset({"rearranged"})


def declined(claim: str, messages: Iterable[Mapping[str, Any]], passing: frozenset[str] = frozenset()) -> bool:
    """True when a business message declines `claim` as `supporters` reads it (`_declines`),
    another case said beside it aside (`_OTHER_CASE`; and the readings in `passing`), and a
    message that answers the customer's question with a yes aside (its "you won't be
    charged" is the rule's own no): the business spoke of the claim and did not state it ("A
    Amazon oferece frete grátis para assinantes Prime. Nós ainda não temos programa de
    assinatura, ..." for "Assinantes têm frete grátis").
    """
    wanted = features(claim)
    if not wanted:
        return False
    parts = pieces(list(messages), speaker, message_text)
    ours = own_names(parts)
    return any(_declines(claim, _readings(claim, parts, at, wanted, ours), sentences(piece.text), wanted,
                         _OTHER_CASE | passing) for at, piece in enumerate(parts)
               if piece.business and answered_question(parts, at) is None)  # (a yes declines nothing)


#: Readings of a sentence that says another case beside the claim's rather than refusing it
#: ("Cancelling after check-in costs the first night. Before check-in, it's free.").
_OTHER_CASE: Final = frozenset({"rearranged"})


def _own_reading(claim: str, piece: Piece, split: Sequence[str], k: int, before: Sequence[Piece],
                 ours: frozenset[str]) -> Any:
    """`_reading`, where a sentence whose subject is a name the claim leaves out and the
    business does not use for itself (`ours`) reports that one's rule (`someone_else`: "A
    Amazon oferece frete grátis para assinantes Prime"), as a quote of it does.
    """
    reading = _reading(claim, piece, split, k, before)
    return Reading(False, "reported") if reading.states and someone_else(claim, split[k], ours) else reading


def _later(split: Sequence[str], k: int) -> list[str]:
    """What follows ``split[k]`` in its message: the rest of the sentence after an inline
    correction ("ou melhor", "or rather"), then each of the `NEARBY` later sentences (`_after`).
    """
    end = min(len(split) - 1, k + NEARBY)
    return [*_INLINE_CORRECTION.split(split[k])[1:], *(_after(split, j) for j in range(k, end))]


#: Where a sentence corrects itself in the middle ("R$ 15, ou melhor, R$ 18"; not "ou
#: melhor ainda", "or better still"): what follows may give the claim another value.
_INLINE_CORRECTION: Final = re.compile(
    r"[,;:(\u2014\u2013-]\s*"
    r"(?=(?:ou melhor(?!\W+ainda)|or rather|quer dizer|quis dizer|digo|i mean|i meant|sorry|desculp\w*|perd[aã]o"
    r"|er|uh|wait|make that|melhor dizendo|ali[aá]s)\b)", re.IGNORECASE)


def _corrects(claim: str, text: str, said: str = "") -> bool:
    """True when `text`, which corrects what came before it (`said`: what the business said
    up to it), may correct the claim: it
    withdraws the whole message before it ("Desconsidere minha mensagem anterior", "Just
    kidding."), speaks of the claim, denies what was said (pointing back at it, or in at
    most one word and no value: "we don't offer that", "não damos"), or says no word but
    another value of a unit the claim states ("Desculpe, correção: acima de R$ 249",
    "Sorry, correction: 14 days"). One of another or a narrower subject states that
    subject's rule (`trust.corrections.narrower_subject`: "Correction: same-day delivery is
    $12" after "Delivery is $5"; "Correção: o plano Plus custa R$ 59,90"). One that speaks only of other
    things corrects those ("Correção: o prazo é de 3 dias úteis" for a fee), and so does one
    that names more words of something else than of the claim ("Correction: gift cards
    cannot be returned" after "Returns are accepted within 30 days"; the reason given after
    a corrected value is not counted: `without_explanation`); one that says
    the correction word is no joke affirms ("Sério, não é brincadeira!"), and one that says
    the claim's value again confirms it ("Actually, no, it's 30 days").
    """
    folded = fold(text)
    if _WHOLE_RETRACTION.search(folded):
        return True
    clipped = without_explanation(text)
    if narrower_subject(claim, clipped, said):
        return False  # "Correction: same-day delivery is $12" states another rule
    wanted = features(claim)
    rest = without_change_account(without_asides(fold(without_old_value(clipped))), claim)
    found = features(rest)
    words = {t for t in found if not is_number(t)}
    if words & wanted:
        # it speaks of the claim, unless it names more of something else than of the claim
        # ("Correction: gift cards cannot be returned" after "Returns are accepted ...")
        return len(words - wanted - VERSION_WORDS - VALUE_NOUNS) <= len(words & wanted)  # not "the new fee"
    if _NO_JOKE_RE.search(folded):
        return False
    if negation_count(rest) and ((len(words) <= 1 and found == words) or _BACK_REFERENCE_RE.search(rest)):
        return True
    if words:
        return False
    numbers = {t for t in found if t.startswith("m:")}
    units = {t.split(":")[2] for t in wanted if t.startswith("m:")}
    return not numbers or any(t not in wanted and t.split(":")[2] in units for t in numbers)


#: What a correction says "it is no joke" with: it affirms what came before (folded).
_NO_JOKE_RE: Final = re.compile(r"\b(?:nao|nem) (?:e|eh|foi|era) (?:brincadeira|mentira|piada)\b"
                                r"|\bnot (?:a joke|kidding|joking)\b|\bno joke\b")
#: A word pointing back at what was said ("we don't offer that", "não fazemos isso").
_BACK_REFERENCE_RE: Final = re.compile(r"\b(?:that|this|isso|isto|esse|essa|aquilo)\b")  # not "esta" (está)


#: A message taking back the whole message before it (folded).
_WHOLE_RETRACTION: Final = re.compile(
    r"\b(?:desconsider\w*|ignor\w*|disregard|ignore)\s+(?:a\s+|minha\s+|my\s+|the\s+|that\s+)?"
    r"(?:ultima\s+|last\s+|previous\s+)?(?:mensagem|msg|message|resposta|answer|reply)\b")


def said_shares(claim: str, messages: Iterable[Mapping[str, Any]]) -> tuple[float, float]:
    """How much of `claim` each side's words mention at all, over the whole turn.

    Returns:
        ``(business, asserted)``: the share (0..1) of the claim's features anywhere in the
        business side's messages (whatever their sentences do with them: stated, refused
        or noted; a system prompt's persona, "You are the assistant for IronPeak Fitness",
        only names the business), and in the customer's messages that assert rather than ask
        (`trust.evidence.asserted`).
    """
    wanted = features(claim)
    if not wanted:
        return 0.0, 0.0
    business: set[str] = set()
    customer: set[str] = set()
    parts = pieces(list(messages), speaker, message_text)
    for at, piece in enumerate(parts):
        if piece.speaker == "customer":
            if asserted(piece.text):
                customer |= features(piece.text) & wanted
        else:
            affirms, passed = affirmation(parts, at)
            if vouches_for_none(parts, at, claim, wanted, passed):
                affirms = frozenset()  # "Yes, as a one-time gesture": the question's words are not the reply's
            text = piece.text if piece.speaker != "system" else " ".join(
                s for s in sentences(piece.text) if not PERSONA.match(s))  # the persona names the business only
            business |= (features(text) | affirms) & wanted
    return len(business) / len(wanted), len(customer) / len(wanted)


def shares(claim: str, messages: Iterable[Mapping[str, Any]]) -> tuple[float, float]:
    """How much of `claim` the business side and the customer said, over the whole turn.

    Returns:
        ``(business, customer)``: the share (0..1) of the claim's features found in the
        business side's sentences that state rather than refuse, note or echo it
        (`trust.evidence.read_sentence`), all of them together; and in the customer's
        messages together. A claim the model wrote from a whole conversation (a procedure
        the agent followed) is covered by the business side's sentences taken together
        even when no one sentence states it; but only when they hold its values too ("O
        nosso desconto no Pix é de 5%" covers none of "Pix tem 30% de desconto").
    """
    wanted = features(claim)
    if not wanted:
        return 0.0, 0.0
    business: set[str] = set()
    customer: set[str] = set()
    stated: set[str] = set()  # every feature of the business sentences that state it
    values = _claim_values(claim)
    numbers = {t for t in wanted if is_number(t)}
    elsewhere: set[str] = set()  # the claim's words a business sentence binds to another value
    parts = pieces(list(messages), speaker, message_text)
    ours = own_names(parts)
    named, spoken = _names_said(claim, parts, ours)
    for at, piece in enumerate(parts):
        if piece.speaker == "customer":
            customer |= features(piece.text) & wanted
            continue
        if superseded(parts, piece.index, claim):
            continue  # taken back by the business's next message
        affirms, passed = affirmation(parts, at)
        split = sentences(piece.text)
        if vouches_for_none(parts, at, claim, wanted, passed) or _gainsaid(claim, split, answered=bool(affirms)):
            continue  # as `supporters` reads it: a yes that passed over a part of the claim
        if affirms and drops_condition(claim, [as_answered(parts, at)]):
            affirms = frozenset()  # a yes bound to a value or condition the claim leaves out
        business |= affirms & wanted
        stated |= affirms
        for k, sentence in enumerate(split):
            text = features(sentence)
            if piece.speaker == "tool":
                text = text | {t for t in wanted if bare(t) in text}
            elif _valued_otherwise(values, text) and any(features(earlier) & wanted & numbers
                                                         for earlier in split[:k]):
                elsewhere |= text & wanted
                continue  # as `supporters` reads it: "Até 12x. Até 6x fica sem juros" is not 12x's
            if named and _of_another_name(named, names(sentence) - ours, spoken):
                continue  # as `supporters` reads it: another plan's, branch's or product's
            after = split[k + 1] if k + 1 < len(split) else ""
            if text & wanted and read_sentence(claim, sentence, parts[:at], after).states:
                business |= text & wanted
                stated |= text
    if not all(states(v, frozenset(stated), business=True) for v in values) or elsewhere - business:
        business = set()  # the business side stated other values, or none, or a part only of another
    return len(business) / len(wanted), len(customer) / len(wanted)


def said_of_another_value(claim: str, messages: Iterable[Mapping[str, Any]]) -> bool:
    """True when a business message says a word of `claim` only in a sentence that gives the
    claim's unit another value, after a sentence holding the claim's value: "You can pay in up
    to 12x; up to 6x interest-free" says "interest-free" of 6x, not of the claim's 12x (as
    `supporters` and `shares` read it).
    """
    wanted = features(claim)
    values = _claim_values(claim)
    numbers = {t for t in wanted if is_number(t)}
    if not numbers:
        return False
    for piece in pieces(list(messages), speaker, message_text):
        if not piece.business or piece.speaker == "tool":
            continue
        split = sentences(piece.text)
        elsewhere: set[str] = set()
        said: set[str] = set()
        for k, sentence in enumerate(split):
            text = features(sentence)
            if _valued_otherwise(values, text) and any(features(earlier) & wanted & numbers for earlier in split[:k]):
                elsewhere |= text & wanted
            else:
                said |= text
        if elsewhere - said:
            return True
    return False


def turned_down(claim: str, messages: Iterable[Mapping[str, Any]]) -> bool:
    """True when a business sentence that shares words with `claim` turns it down
    (`trust.evidence.turns_down`: asks about it, reports it, or mostly negates it).
    """
    wanted = features(claim)
    for piece in pieces(list(messages), speaker, message_text):
        if piece.business:
            for sentence in sentences(piece.text):
                if features(sentence) & wanted and turns_down(claim, sentence):
                    return True
    return False
