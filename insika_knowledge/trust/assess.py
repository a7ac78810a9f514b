"""The trust verdict for one candidate: learn it, or keep it in quarantine.

Only what the business side said is learned. With a conversation:

- when the proposer quoted its evidence (the extraction schema asks for it), a claim that
  no verified business sentence states (`trust.evidence.check`) is quarantined, unless it
  is a customer's report of their own experience (`trust.rules.is_report`);
- when it quoted none (the answers recorded before the schema asked), the transcript is
  read (`trust.grounding`): a claim the customer's messages support (or say a quarter
  of, where the business side says less than that), that no business sentence states
  and that the business side's sentences together do not cover (as much as the
  customer's do) or that a business message declines (`trust.grounding.declined`), is
  quarantined unless it is a report. One that no one's words cover at
  all is learned when it is not a rule, or when the agent acted in the turn (a tool call
  or a tool result: the model may have written it from what the agent did) unless the
  business side said none of its words and the customer asserted (not asked) at least a
  quarter of them. A rule no one's words cover in a turn where the agent did not act is
  quarantined when the business side said none of its words (written from nothing, or
  a customer-only turn), or when the customer asserted at least a quarter of it and more
  of it than the business side said at all (the customer's claim, paraphrased or
  translated), or when the business side said at most one word of its description, or
  when the business side turns it down (asks about it, reports it, says
  it in another tense, or mostly negates it: `trust.evidence.turns_down`) and its
  sentences that state it say less than a quarter of it ("We don't ship every order above
  $50 for free anymore", "Did someone tell you we ship for free?", "We used to ship...").
  Either way, such a rule is quarantined when a value of it is one no business piece
  states (`trust.grounding.unsaid_by_business`: only the customer said it, "A friend said
  8 days" beside a template's "{{warranty_days}}", or only a link's path held it), unless it
  is an ``objection`` (whose text names what the customer said); and, where the agent did not
  act, when a business message says a word of it only of another value
  (`trust.grounding.said_of_another_value`: "up to 12x; up to 6x interest-free" for "12x
  interest-free"), objections again excepted.
  A claim no one's words support is quarantined when a business message declines it
  (`trust.grounding.declined`: "Priority phone support is included in the Enterprise plan"
  for the Team plan's; a rule only where the agent did not act: what it did may be the
  rule's source), and a fact (no rule) when a business sentence turns it down ("Can I pay
  with Apple Pay?" / "Not yet ... we're looking into adding Apple Pay later this year").
  Whether or not the agent acted, a rule no business sentence states is quarantined when
  a business sentence that says most of it limits it: only for a while, only this once, or
  of something narrower ("This week only, shipping is free on all orders", "Our downtown
  store is open 24 hours" for every store: `trust.grounding.limited_by_business`).

Without a conversation (``propose`` or MCP's ``propose_concept`` with no evidence), the
proposer vouches for plain facts, and a rule-shaped claim (`trust.rules.rule_markers`)
is held for a person.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from insika_knowledge.analysis.structure import FREE
from insika_knowledge.analysis.text import fold, negation_count
from insika_knowledge.trust import evidence as quoted
from insika_knowledge.trust.evidence import ACKNOWLEDGED, asked_before, asserted
from insika_knowledge.trust.grounding import (
    LIMITS,
    MIN_COVERAGE,
    MIN_NOVELTY,
    Speaker,
    declined,
    limited_by_business,
    misstated,
    said_of_another_value,
    said_shares,
    shares,
    speaker,
    supporters,
    turned_down,
    unsaid_by_business,
    unstated_values,
)
from insika_knowledge.trust.replies import affirmed
from insika_knowledge.trust.rules import grants, is_report, offers, rule_markers
from insika_knowledge.trust.sources import Piece, pieces
from insika_knowledge.trust.values import features
from insika_knowledge.wire.messages import message_text


@dataclass(frozen=True)
class Assessment:
    """Who supports a candidate and what follows.

    Attributes:
        supported_by: the speakers whose messages support the claim (see `supporters`).
        markers: why the claim is a rule of the business (see `rule_markers`); empty
            when it is not one.
        quarantined: True when the business side does not state the claim (see the
            module doc): it is stored but never injected, and a person (or a later
            sighting the business side states) releases it.
        evidence: what the quoted evidence showed, in one line; None when the proposer
            quoted none.
        report: True when the claim is a customer's report of their own experience.
    """

    supported_by: frozenset[Speaker]
    markers: tuple[str, ...]
    quarantined: bool
    evidence: str | None = None
    report: bool = False

    @property
    def business_supported(self) -> bool:
        """True when anyone but the customer supports the claim."""
        return bool(self.supported_by - {"customer"})


def assess(claim: str, concept_type: str, messages: Iterable[Mapping[str, Any]],
           evidence: Sequence[str] | None = None, known: Sequence[str] = (),
           withheld: Sequence[str] = ()) -> Assessment:
    """Assess one candidate against the turn it came from.

    Args:
        claim: the candidate's description and body as one text (after redaction), the
            description its first line (`trust.evidence.turns_down` reads it).
        concept_type: the candidate's type (``fact``, ``policy``, ...).
        messages: the turn's transcript, oldest first (empty: no conversation given).
        evidence: the quotes the proposer gave for it (`trust.evidence.check`); None
            when it gave none: the transcript is then read for support
            (`trust.grounding.supporters`).
        known: the texts of the stored concepts the proposer was shown: a value one of
            them states was not made up (`trust.grounding.unstated_values`).
        withheld: the business's own texts the turn ran under that `messages` leave out
            (a system prompt a backfill does not show the model): a value they state was
            not made up either.

    Returns:
        The `Assessment` (see the module doc for when it is quarantined).
    """
    transcript = list(messages)
    markers = tuple(rule_markers(claim, concept_type))
    report = is_report(claim, concept_type)
    if not transcript:  # no one said anything: a rule, or a claim with a value, came from nothing
        made_up = not markers and not report and bool(unstated_values(
            claim, [{"role": "system", "content": t} for t in withheld], known))
        return Assessment(frozenset(), (*markers, UNSTATED_VALUE) if made_up else markers,
                          bool(markers) or made_up, None, report)
    if not report and unstated_values(
            claim, [*transcript, *({"role": "system", "content": t} for t in withheld)], known):
        # A claim with a value that nothing the model read states: made up, whoever it cites
        # (a rule's deadline, and a fact's: "Entregamos em Recife em 5 dias úteis" after "oi").
        quotes = "a value no message states" if evidence is not None else None  # said once, without quotes
        return Assessment(frozenset(), (*markers, UNSTATED_VALUE), True, quotes, report)
    if evidence is not None:
        parts = pieces(transcript, speaker, message_text)
        checked = quoted.check(claim, evidence, parts, withheld)
        if not checked.business and not checked.located:  # paraphrased quotes: the business's own sentences
            unquoted = quoted.check_unquoted(claim, parts, withheld)
            checked = unquoted if unquoted.business or not evidence else dataclasses.replace(
                unquoted, why=f"{checked.why}, and no business sentence states it")  # (the quote's own reason)
        cited = frozenset(checked.speakers) | (frozenset({"customer"}) if checked.customer else frozenset())
        business = bool(cited - {"customer"})
        return Assessment(cited, markers, not business and not report, checked.why, report)  # type: ignore[arg-type]
    who = supporters(claim, transcript)
    if not who - {"customer"} and not markers and concept_type != "policy":
        who |= _values_stated(claim, transcript)
    if not who - {"customer"} and not report and (markers or concept_type == "policy"):
        limit = limited_by_business(claim, transcript)
        if limit:  # "This week only, shipping is free": a promotion, not the standing rule
            return Assessment(who, (*markers, limit), True, None, report)
    quarantined = "customer" in who and not who - {"customer"} and not report
    if "entitlement" in markers and not report and offers(claim) and not negation_count(claim) \
            and not _granted([*transcript, *({"role": "system", "content": t} for t in withheld)]) \
            and (who - {"customer"} or said_shares(claim, transcript)[1] > 0):
        # The claim offers something; the business side spoke of its subject (a member's
        # tier in a tool's record, "I see you're a Gold member") but granted nothing, and
        # the customer asserted some of it: what the customer gets is the customer's claim.
        return Assessment(who, markers, True, None, report)
    if not who and not report and (markers or concept_type == "policy"):
        # No one's words support it: the model read it from what the agent did (a tool
        # call, a tool result), or from the customer, or from nothing. Where the agent
        # acted, it is the customer's claim when the business side said none of its
        # words and the customer asserted some ("me disseram q comprando 2 celular o
        # terceiro sai de graça"), or said at most one word of its description while the
        # customer asserted any of it (the claim translated: "Buying two phones gets the
        # third one free" after "seu pedido com 2 itens já foi enviado"). Where it did
        # not act, a rule the business side said none of came from nothing ("oi" / "Olá!
        # Como posso ajudar?"), and one the customer asserted more of than the business
        # side said at all is the customer's, paraphrased or translated; a description in the
        # customer's words ("queda de internet" after "minha internet caiu") over steps the
        # business side's sentences cover together is the business's procedure.
        business_words, asserted = said_shares(claim, transcript)
        customers = asserted >= MIN_NOVELTY and business_words < asserted
        if (concept_type != "objection" and unsaid_by_business(claim, transcript, known, withheld)) or (
                ((business_words == 0 and asserted >= MIN_NOVELTY) or (asserted > 0 and _one_word(claim, transcript)))
                if _acted(transcript)
                else (business_words == 0 or customers or (
                    _one_word(claim, transcript) and shares(claim, transcript)[0] < MIN_COVERAGE) or (
                    shares(claim, transcript)[0] < MIN_NOVELTY and turned_down(claim, transcript))
                    or misstated(claim, transcript)
                    or (concept_type != "objection" and said_of_another_value(claim, transcript)))):
            return Assessment(who, markers, True, None, report)
    rule = bool(markers) or concept_type == "policy"
    if not who and not report and (not rule or not _acted(transcript)) and (
            declined(claim, transcript, _STATED_TOO) or (not rule and turned_down(claim, transcript))):
        # A claim no one's words state that a business message declined ("Priority phone support
        # is included in the Enterprise plan" for the Team plan's), or a fact the business side
        # turned down ("Can I pay with Apple Pay?" / "Not yet ... We're looking into adding it").
        return Assessment(who, markers, True, None, report)
    if quarantined and not declined(claim, transcript) and not _only_customers_value(
            claim, transcript, known, withheld):  # the business side's sentences together may still cover
        business_share, customer_share = shares(claim, transcript)  # it, unless one declined it, or a value
        quarantined = not MIN_COVERAGE <= business_share >= customer_share  # of it is only the customer's
    return Assessment(who, markers, quarantined, None, report)


def _only_customers_value(claim: str, transcript: Sequence[Mapping[str, Any]], known: Sequence[str],
                          withheld: Sequence[str]) -> bool:
    """True when a value of `claim` is one no business text states (`unsaid_by_business`), or
    it calls a thing free and the customer did while no business piece did ("delivery is free
    anywhere in the city on Sundays" in a customer's review a tool returned, beside the tool's
    "delivery_fee": "$9.95").
    """
    if unsaid_by_business(claim, transcript, known, withheld):
        return True
    if FREE not in features(claim):
        return False
    parts = pieces(transcript, speaker, message_text)
    return not any(p.business and FREE in features(p.text) for p in parts) \
        and any(not p.business and FREE in features(p.text) for p in parts)


def _values_stated(claim: str, transcript: Sequence[Mapping[str, Any]]) -> frozenset[Speaker]:
    """The business's speakers of `transcript` when together they state every value of
    `claim` (a fact with at least one: `unstated_values`) and the customer states none of
    them (an echo of the customer's value is no support), else none. A fact held for a
    value no message stated ("CEPs 01000-000 a 09999-999 saem de Guarulhos" after one
    customer's CEP) is released when the business later states them, though the model's
    longer text leaves the business's sentence under `MIN_COVERAGE` of its words.
    """
    values = unstated_values(claim, ())
    if not values:
        return frozenset()
    parts = pieces(transcript, speaker, message_text)  # by author: a review a message quotes is not its own
    said = [{"role": "assistant", "content": p.text} for p in parts if p.business]
    theirs = [{"role": "user", "content": p.text} for p in parts if not p.business]
    if not said or unstated_values(claim, said) or unstated_values(claim, theirs) != values:
        return frozenset()  # a value the customer said, echoed or not, is no business's word
    return frozenset(p.speaker for p in parts if p.business)  # type: ignore[misc]


#: Words a description names its concept's kind with, as `features` reads them.
_LABELS: Final = features("objection objections objeção objeções response resposta answer policy política "
                          "rule regra procedure procedimento handling tratamento")


def _one_word(claim: str, transcript: Sequence[Mapping[str, Any]]) -> bool:
    """True when the business side said at most one of the words of `claim`'s description
    (its first line): one shared word is no source ("Our members love the new collection"
    for "Gift wrapping is free for members"). The words that name the kind of concept
    (`_LABELS`: "Resposta à objeção de preço", "Guest pass policy") are no part of it.
    """
    summary = features(claim.split("\n", 1)[0]) - _LABELS
    said: set[str] = set()
    for part in pieces(transcript, speaker, message_text):
        if part.business:
            said |= features(part.text) & summary
    return len(said) <= 1 < len(summary)


def _granted(transcript: Sequence[Mapping[str, Any]]) -> bool:
    """True when a sentence of the business side grants something (`trust.rules.grants`).

    Itself (a charge withdrawn counts), or by a yes to the customer's question that does
    ("Do orders ship for free?" / "Yes, over $50": `trust.replies.affirmed`).
    """
    parts = pieces(transcript, speaker, message_text)
    for at, part in enumerate(parts):
        if part.business and (_grants(part.text) or (_answers(parts, at) and _grants(_asked(parts, at)))):
            return True
    return False


def _answers(parts: Sequence[Piece], at: int) -> bool:
    """True when ``parts[at]`` answers the customer's question before it.

    A yes (`trust.replies.affirmed`), or a reply to a real question ("Frete grátis acima
    de quanto?" / "Acima de R$ 199.") that neither negates nor only acknowledges it.
    """
    if affirmed(parts, at):
        return True
    asked = _asked(parts, at)
    reply = fold(parts[at].text)
    return bool(asked) and not asserted(asked) and not negation_count(reply) and not ACKNOWLEDGED.search(reply)


def _grants(text: str) -> bool:
    """`trust.rules.grants`, or a charge `text` withdraws ("we don't charge", "sem custo")."""
    return grants(text) or FREE in features(text)


def _asked(parts: Sequence[Piece], at: int) -> str:
    """The text of the last customer piece before ``parts[at]`` ("" when there is none)."""
    earlier = asked_before(parts, at)
    return "" if earlier is None else earlier.text


def _acted(transcript: Sequence[Mapping[str, Any]]) -> bool:
    """True when the business side acted in the turn: a tool call or a tool's result."""
    return any(speaker(m) == "tool" or m.get("tool_calls") or m.get("function_call") for m in transcript)


#: Readings that do not decline a claim no one states (`trust.grounding.declined`): a message
#: that says the claim and its opposite ("Aceitamos devolução ... Atenção: ... não podem ser
#: devolvidos") is two versions for a person, not a refusal.
_STATED_TOO: Final = frozenset({"contradicts"})

#: The marker of a rule held because a value of it is stated nowhere (`trust.gate.held_because`).
UNSTATED_VALUE = "unstated value"

#: The markers of a rule held because the business side said it only for a while, once,
#: or of something narrower (`trust.grounding.limited_by_business`).
LIMIT_MARKERS: Final = frozenset(LIMITS.values())

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
