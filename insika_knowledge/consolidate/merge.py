"""The second pure step of consolidation: what the merge model's answer means.

When a sighting is not the same claim, the merge model is asked whether the two bodies
are ``related`` (and, if so, for one merged body) or ``contradicting``. `interpret_merge`
turns whatever came back into a `MergeVerdict`: a usable merged body (redacted for
personal data, length-bounded, no ``## Contradiction`` heading, writable as UTF-8, and
keeping every detail of both claims: `keeps_details`), or a contradiction with the
reason. `merge_failed` is the verdict when the call itself failed.

The merge guard (`keeps_details`): a model that answers "related" but writes a body
that drops or changes any value, date, place or other name, party, negation or
condition of either claim has folded two different claims into one (a changed rule
written over the old one, or the old text kept and the change lost); the sighting is
then a conflict (`LOST_DETAIL`), never a merge. The details are read by the one
analyser (`analysis.structure.details`): each value and date with the names, parties
and role objects of its phrase ("5% on Pix" is not kept by "5% on boleto"), each
negation with the term it negates, each role or clause word with what it introduces
("to Campinas", "and orders", "on orders"), each party with what it does ("the customer
pays"). A merge may reword everything else; one that rewords a detail away is refused,
and a person reads the two claims instead.

A merge that keeps every detail of two versions of one claim ("Return labels are sent by
email." and "... by WhatsApp.") merges nothing: side by side, or joined into one sentence
("by email or WhatsApp"), it says both versions and folds the change into one record
unseen. Two versions of one claim (`versions`) are therefore never merged, however the
merged text is worded (`LISTED`): a person reads them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from difflib import SequenceMatcher
from functools import lru_cache
from typing import Final

from insika_knowledge.analysis.arrangement import charged_on_top, content_words
from insika_knowledge.analysis.numbers import CURRENCY_UNITS
from insika_knowledge.analysis.remedies import other_remedy
from insika_knowledge.analysis.structure import (
    CONDITION_TOKENS,
    JOINS,
    MODAL_CONTRARIES,
    PARTY_TERMS,
    PHRASE,
    RESTRICTIONS,
    SENTENCE,
    WITHDRAWAL,
    base_duration,
    claim_terms,
    content_terms,
    details,
    kept_together,
    plain_word,
    structure,
    tokens,
    whole_duration,
)
from insika_knowledge.analysis.text import announces_change, fold
from insika_knowledge.candidate import MODEL_BODY_MAX
from insika_knowledge.concept import has_contradiction, surrogate_in
from insika_knowledge.consolidate.claims import in_words, same_statement, values_of
from insika_knowledge.escaping import model_text
from insika_knowledge.privacy import scrub
from insika_knowledge.privacy.redact import PLACEHOLDERS, kept_contacts, redact

#: `MergeVerdict.why` of a usable related answer.
RELATED: Final = "related"
#: `MergeVerdict.why` when the model said the two claims contradict each other.
CONTRADICTING: Final = "contradicting"
#: `MergeVerdict.why` when the answer was related but its body cannot be used.
UNUSABLE: Final = "unusable"
#: `MergeVerdict.why` when the merged body loses a number, unit or negation of a claim.
LOST_DETAIL: Final = "lost_detail"
#: `MergeVerdict.why` when the merged body holds a sentence that neither claim says (`invents`).
INVENTED: Final = "invented"
#: `MergeVerdict.why` when the model merged two versions of one claim (`versions`).
LISTED: Final = "listed"
#: `MergeVerdict.why` prefix when the call failed (``model_failed:<kind>``).
MODEL_FAILED: Final = "model_failed"


@dataclass(frozen=True, slots=True)
class MergeVerdict:
    """The merge model's answer on one stored body and one new sighting, interpreted.

    Attributes:
        body: the merged body to write (stripped, redacted), or None: the claims are
            then treated as contradicting.
        why: `RELATED`, `CONTRADICTING`, `UNUSABLE` (``unusable:it is 5000 characters, at
            most 4000`` when a merged text was given), `LOST_DETAIL` (``lost_detail:R$ 20,
            30 days`` when it names the amounts or dates the merged text dropped),
            `INVENTED` (a sentence of it says what neither claim says: `invents`), `LISTED`
            (the two claims are versions of one claim, `versions`: no merged text of them
            is a merge), or ``model_failed:<kind>``.
        redacted: placeholder kind -> personal data items redaction replaced in the merged
            `body` (`privacy.redact.Redaction.counts`; empty without a body).
    """

    body: str | None
    why: str
    redacted: Mapping[str, int] = field(default_factory=dict)

    @property
    def related(self) -> bool:
        """True when the verdict carries a body to write."""
        return self.body is not None


def merge_limit(old_body: str, new_body: str) -> int:
    """The longest merged body accepted: the longer body twice plus 200, at most 4000 chars."""
    return min(MODEL_BODY_MAX, 2 * max(len(old_body), len(new_body)) + 200)


def usable_merge(body: object, limit: int) -> bool:
    """True when a model's merged body may replace the one on record."""
    return not unusable_because(body, limit)


def unusable_because(body: object, limit: int) -> str:
    """Why a model's merged body may not replace the one on record, in words ("it is 30000
    characters, at most 4000"); "" when it may.
    """
    if not isinstance(body, str):
        return "it is no text"
    if not body.strip():
        return "it is empty"
    if len(body) > limit:
        return f"it is {len(body)} characters, at most {limit}"
    if has_contradiction(body):
        return "it holds a '## Contradiction' heading"
    if "\x00" in body:
        return "it holds a NUL character"
    if surrogate_in(body) is not None:
        return "it holds a lone surrogate"
    return ""


def keeps_details(merged: str, *claims: str) -> bool:
    """True when `merged` keeps every detail of each of `claims` (after analysis).

    Every detail of each claim (`analysis.structure.details`: values and dates with what
    they are bound to, names, parties and what they do, negations with their scope, role
    and clause words with what they introduce) must be in `merged`, and `merged` must
    carry at least as many negations (change verbs included) as the claim that has most;
    a term one claim negates and another asserts must be there both ways.
    Case, plurals, number words, money and date forms and the synonyms of
    `analysis.structure.CLAIM_SYNONYMS` keep a detail; dropping or changing it does not.
    A merged text that is one of the claims as written (same structure) must also hold
    every content word of the others: a model that answers with one side has merged
    nothing, and a plain word of the other side ("digitally", "optional") may carry the
    rule.
    """
    written = details(merged, whole=True)  # "two weeks" keeps "14 days"
    if not kept_together(written, *(details(claim, whole=True) for claim in claims)):
        return False
    # A "merge" that is one claim as written (the model answered with one side) keeps the
    # others only when they add nothing to it: every content word of each is in it
    # ("sent by post" answered for "sent by post" and "sent digitally" drops "digitally").
    shape = structure(merged)
    if any(shape.same_as(structure(claim)) for claim in claims):
        said = _words(merged)
        return all(_words(claim) <= said for claim in claims)
    return True


def invents(merged: str, *claims: str) -> bool:
    """True when a sentence of `merged` says what no claim says: of its content terms
    (`analysis.structure.claim_terms`, two or more), fewer than `INVENTED_SHARE` are the
    claims' ("All items can be returned for free." merged from "Shipping is free." and
    "Shipping to the North costs R$ 20."; an instruction to the agent), or the text adds a
    party, a pole of scope (`_SCOPE_POLES`: "only", "all", "must") or a word that widens
    (`_scope_marks`: "even used ones", "always") that no claim says. A merge rewords; it
    adds no claim, and the detail guard reads only what the claims hold.
    """
    known = frozenset().union(*(claim_terms(claim) for claim in claims))
    said = frozenset().union(*(tokens(claim) for claim in claims))
    for sentence in _SENTENCE_END.split(merged.strip()):
        terms = claim_terms(_PLACEHOLDER_RE.sub(" ", sentence))  # what redaction removed says nothing
        if len(terms) >= 2 and len(terms & known) < INVENTED_SHARE * len(terms):
            return True
    added = frozenset(tokens(_PLACEHOLDER_RE.sub(" ", merged))) - said - _ANYONE
    widening = PARTY_TERMS | _scope_marks() | _SCOPE_POLES
    return bool(added & widening) or any(t.startswith("w:") for t in added)


#: Poles that narrow, widen or require ("only", "all", "must"): a merge that adds one adds a
#: claim ("except" may join a rule and its exception: "free, except to the North").
_SCOPE_POLES: Final = frozenset({"p:p_only", "p:p_all", "p:p_must"})


#: The customer named in other words ("Clientes da classe executiva" for "Passageiros ..."):
#: no party a merge adds.
_ANYONE: Final = frozenset({"s_customer", "w:you", "w:person"})


@lru_cache(maxsize=1)
def _scope_marks() -> frozenset[str]:
    """Words that widen or stress a claim ("even used ones", "always", "mesmo sem nota",
    "inclusive de produtos usados"), as `tokens` reads them in either language: a merge that
    adds one adds a claim (`invents`).
    """
    said = (*tokens("Items even always are."), *tokens("Os itens mesmo sempre inclusive são."))
    return frozenset(t for t in said if plain_word(t)) - frozenset(tokens("Items are. Os itens são."))


#: The placeholders redaction writes ("[email]", "[name]": `privacy.redact.PLACEHOLDERS`).
_PLACEHOLDER_RE: Final = re.compile("|".join(map(re.escape, PLACEHOLDERS.values())))
#: The least share of a merged sentence's content terms that the claims must hold (`invents`).
INVENTED_SHARE: Final = 0.5
#: Where a sentence of a merged text ends: after ``. ! ? ;`` and a space, or at a line end.
_SENTENCE_END: Final = re.compile(r"(?<=[.!?;])\s+|\s*\n\s*")


def versions(old: str, new: str) -> bool:
    """True when `old` and `new` read as two versions of one claim, not one adding to another.

    They are not the same statement, neither says "also" where the other has no "only" or
    "except" (`_adds_to`: "Customers can also pay by PayPal" is an alternative beside the
    other), and they have

    - the same content words and parties once values are set aside ("5% on Pix, 3% on
      boleto" / "3% on Pix, 5% on boleto"; "R$ 15" / "R$ 20"; "must" / "may"), unless one
      only adds a value to the other's ("free breakfast" / "... on Sundays") or both the
      values and the poles differ (two aspects, each with its value: "Check-in opens 24
      hours before" / "Check-in closes 45 minutes before"). A side without the other's
      value that says "all" / "any" or negates where the other does not has not left the
      value unsaid, it says the contrary ("Free returns apply to orders over $100" / "...
      to all orders"; "Gift cards expire after 12 months" / "Gift cards never expire");
    - or all but one of the same words, and one value of a kind the other states otherwise
      ("Um carrinho aceita até 10 itens" / "Cada carrinho tem no máximo 20 itens"), or
      one side negating, withdrawing or restricting ("only") what the other says (`_turned`:
      "Electronics can be returned" / "Only sealed electronics can be returned");
    - or one side restricting the claim ("only") to one thing the other lists with more
      (`_widened`: "Gift cards can be used online only" / "... online and in stores"), or
      withdrawing what the other says in no word of its own (`_withdraws`), or either
      announcing a change (`analysis.text.announces_change`: "now", "agora", "from now
      on") with one value of the same kind otherwise ("within 30 days" / "The return
      window is now 14 days");
    - or the same values and words but one or two replaced on each side, with at least as
      many shared (two or more): "the store pays" / "the customer pays"; "by e-mail" / "by
      WhatsApp"; "by phone" / "in the mobile app"; or, in order, one run of at most two
      words replaced by another ("refunded to the customer" / "charged to the customer":
      the replacing word may stand elsewhere in the claim). A word replaced and the values
      changed too reads as two subjects, each with its own value ("Gold members get 20%" /
      "Silver members get 10%");
    - or one side requiring what the other permits (`_modality_turned`), saying free what
      the other prices (`_priced`), or saying "without" what the other states of the same
      subject (`_denies`), with the same values; or a sentence of one negating a sentence
      of the other (`_sentence_versions`). A share and an amount, two currencies, two units
      of one length are values of one kind (`_kind`: "10% off" / "$10 off");
    - or, one sentence each, opening alike and ending in the same words, one ending negated
      (`_ending_negated`: "..., and points can also be transferred back" / "..., but points
      cannot be transferred back"), whatever either adds.
    """
    if _ending_negated(old, new):
        return True
    if same_statement(old, new) or _adds_to(old, new) or _adds_to(new, old):
        return False
    if _charged_apart(old, new) or _charged_apart(new, old) or _made_extra(old, new) or _made_extra(new, old) \
            or _excepted(old, new) or _excepted(new, old) or _all_narrowed(old, new) or _all_narrowed(new, old) \
            or _unconditioned(old, new) \
            or _unconditioned(new, old) or _narrowed(old, new) or _narrowed(new, old) \
            or _free_or_charged(old, new) or _free_or_charged(new, old):
        return True
    if _widened(old, new) or _widened(new, old) or _listed_otherwise(old, new) or _listed_otherwise(new, old) \
            or _withdraws(old, new) or _withdraws(new, old) or _tail_replaced(old, new) \
            or (other_remedy(old, new) and (_opening(old) == _opening(new) or _replacing(old, new))):
        return True  # a refund to the card and one as store credit, both of refunds, or one said to
        # replace the other ("Cash purchases are refunded as store credit" is of some)
    mine, theirs = _plain_terms(old), _plain_terms(new)
    said, saying = _values(old), _values(new)
    if (announces_change(old) or announces_change(new)) and _one_value_otherwise(said, saying):
        return True
    if mine == theirs:
        if said == saying:
            return True
        if said < saying or saying < said:
            return _contrary_scope(old, new, said, saying, negated=True)
        return _poles(old) == _poles(new)
    if (mine <= theirs or theirs <= mine) and len(mine ^ theirs) <= 1 and _turned(old, new, said, saying):
        return True
    if said == saying and (_modality_turned(old, new, mine, theirs) or _modality_turned(new, old, theirs, mine)):
        return True
    if _priced(old, new, mine, theirs, said, saying) or _priced(new, old, theirs, mine, saying, said):
        return True
    dropped, added, shared = len(mine - theirs), len(theirs - mine), len(mine & theirs)
    if said == saying and (_one_run_replaced(old, new) or (
            1 <= dropped <= _REPLACED and 1 <= added <= _REPLACED and shared >= max(2, dropped, added))):
        return True
    if said == saying and (_denies(old, new, mine, theirs) or _denies(new, old, theirs, mine)):
        return True
    return _sentence_versions(old, new)


def _narrowed(one: str, other: str) -> bool:
    """True when `one` restates `other` and restricts it ("only", "apenas"): "Parcelamos em
    até 10x sem juros" / "... apenas para compras acima de R$ 500"; "A primeira troca é
    gratuita" / "... gratuita apenas para clientes do clube" (every word and value of
    `other` kept, the business a passive leaves unsaid aside). A requirement restated as
    "only ... once it is paid" is no restriction of it ("A 20% deposit is required").
    """
    return bool(RESTRICTIONS & _poles(one)) and not RESTRICTIONS & _poles(other) \
        and _plain_terms(other) - _IMPLIED <= _plain_terms(one) and _values(other) <= _values(one) \
        and _negations(one) == _negations(other) and _MUST not in _poles(other)


def _free_or_charged(one: str, other: str) -> bool:
    """True when `one` says free what `other` charges for, no amount on either side, in the
    same words but the words of price, or `other` charging it for "all" ("Returns are free"
    / "Returns are paid"; "Shipping is never charged" / "Shipping is charged on every
    order"): with an amount, `_priced` reads it.
    """
    its, theirs = _plain_terms(one), _plain_terms(other)
    if _FREE not in its or _FREE in theirs or not theirs & _CHARGES or its & _CHARGES \
            or _values(one) != _values(other) or any(_kind(v).startswith(_AMOUNT) for v in _values(one)):
        return False  # ("Two checked bags are free" / "Checked bags over 23 kg pay a fee": a case of its own)
    rest, others = its - _PRICE_WORDS - _IMPLIED, theirs - _PRICE_WORDS - _CHARGES - _IMPLIED
    return bool(rest) and (rest == others or (rest < others and len(others - rest) == 1
                                              and "p:p_all" in _poles(other)))


#: The terms of charging ("charged", "paid", "cobrado", "pago"), as `tokens` reads them.
_CHARGES: Final = frozenset({"s_price", "s_payment", "cobr", "charged"})


def _replacing(one: str, other: str) -> bool:
    """True when either text says it replaces something ("instead of", "em vez de", "rather
    than", "no lugar de", "not cash"): a remedy given in place of the other's.
    """
    return any(_REPLACING.search(fold(text)) for text in (one, other))


#: A replacement said in words (folded).
_REPLACING: Final = re.compile(r"\b(?:instead of|rather than|in place of|em vez de|ao inves de|no lugar de"
                               r"|not (?:in )?cash|nao em dinheiro)\b")


def _charged_apart(one: str, other: str) -> bool:
    """True when `one` says a price includes a thing and `other` charges that thing apart,
    in the same words but the words of charging apart (`_APART_TERMS`): "All rates include
    sales tax" / "Sales tax is added to all rates"; "Os preços já incluem impostos" / "Os
    impostos são cobrados à parte dos preços".
    """
    if _INCLUDE not in _poles(one) or _INCLUDE in _poles(other) or _values(one) != _values(other) \
            or _negations(one):  # "não está incluso" is "cobrado à parte"
        return False
    its, theirs = _plain_terms(one), _plain_terms(other)
    added = theirs - its
    return not its - theirs and bool(added & _APART_MARKS) and added <= _APART_TERMS


#: The pole of "include", "incluir" (`analysis.statements.POLES`).
_INCLUDE: Final = "p:p_include"
#: The terms of a thing charged apart (as `tokens` reads "added", "extra", "separately",
#: "à parte", "on top", "additional", "adicional"), and the charging words beside them.
_APART_MARKS: Final = frozenset({"add", "added", "extra", "separ", "separately", "part", "apart", "top", "addit",
                                 "additional", "adicion", "adicional"})
_APART_TERMS: Final = _APART_MARKS | frozenset({"s_price", "cobr", "charged"})


def _made_extra(one: str, other: str) -> bool:
    """True when `one` says a price includes a thing and `other`, which may still include
    others, charges that thing apart (`analysis.arrangement.charged_on_top`: "The rental price
    includes insurance and unlimited mileage" / "... includes unlimited mileage; insurance is
    extra"; "... ear cleaning costs extra").
    """
    return _INCLUDE in _poles(one) and _values(one) == _values(other) \
        and bool(charged_on_top(tokens(other)) & _plain_terms(one))


def _excepted(one: str, other: str) -> bool:
    """True when `one` restates `other` and makes an exception of it ("except the final
    exam", "salvo em dias de jogo", "com exceção de computadores"): every word and value of
    `other` kept, as many negations. A rule with an exception is another version of it.
    """
    return _EXCEPT in _poles(one) and _EXCEPT not in _poles(other) \
        and _plain_terms(other) - _IMPLIED <= _plain_terms(one) and _values(other) <= _values(one) \
        and _negations(one) == _negations(other)


def _all_narrowed(one: str, other: str) -> bool:
    """True when `one` says a rule of "all" of a kind and `other` restates it of a narrower
    kind, its words and one or two more, with the same values ("O desconto vale para todos
    os cursos" / "... para os cursos de inglês"; "All rooms have a minibar" / "All suites
    and deluxe rooms ..." has no "all" left out, and is read by the list rule).
    """
    mine, theirs = _plain_terms(one), _plain_terms(other)
    if CONDITION_TOKENS & set(tokens(other)):
        return False  # "if a competitor advertises a lower price" is any competitor's
    return bool(_poles(one) & _UNBOUNDED) and not _poles(other) & _UNBOUNDED and mine < theirs \
        and len(theirs - mine) <= _REPLACED and _values(one) == _values(other) \
        and _negations(one) == _negations(other)


#: The pole of "except", "exceto", "salvo" (`analysis.statements.POLES`).
_EXCEPT: Final = "p:p_except"


def _unconditioned(one: str, other: str) -> bool:
    """True when `one` states a rule under a condition ("if", "provided", "se", "desde
    que") and `other` states it "regardless" of one (`_REGARDLESS`), in the same words
    before them: "... once, provided they attended 80% of classes" / "... once, regardless
    of attendance"; "gratuito se feito com 7 dias de antecedência" / "gratuito,
    independentemente da antecedência".
    """
    regardless = _REGARDLESS.search(other)
    mine = tokens(one)
    if regardless is None or _REGARDLESS.search(one) is not None or _IF not in mine:
        return False
    head = content_words(mine[:mine.index(_IF)])
    return bool(head) and head == content_words(tokens(other[:regardless.start()]))


#: "regardless of", "no matter", "whatever the", "independentemente de", "seja qual for".
_REGARDLESS: Final = re.compile(
    r"(?i)\b(?:regardless|irrespective|no matter|whatever the|independente(?:mente)?|seja (?:qual|quem) for"
    r"|qualquer que seja)\b")
#: The token of "if", "provided", "se", "desde que".
_IF: Final = "c:if"


def _sentence_versions(old: str, new: str) -> bool:
    """True when a sentence of one side (of several) negates a sentence of the other.

    The same words and values, one negated ("É necessário agendar horário." / "Não é
    necessário agendar horário; o atendimento é por ordem de chegada."): the rule and its
    contrary, whatever the other sentence adds. (A sentence of a longer restatement is read
    no further: it may leave unsaid what its other sentence says.)
    """
    mine, theirs = _sentences(old), _sentences(new)
    if len(mine) == 1 and len(theirs) == 1:
        return False
    return any(_plain_terms(one) == _plain_terms(other) and _values(one) == _values(other)
               and _negations(one) != _negations(other) for one in mine for other in theirs)


def _sentences(text: str) -> list[str]:
    """The sentences of `text` (split after ``. ! ? ;`` and at line ends), empty ones dropped."""
    return [part for part in _SENTENCE_END.split(text.strip()) if part.strip()]


def _denies(one: str, other: str, its: frozenset[str], theirs: frozenset[str]) -> bool:
    """True when `one` says "without" (``sem``) what `other` states, of the same subject:
    at least `_DENIED_SHARED` of the shorter side's other words are the other's, two or more
    ("a companhia oferece reembolso integral" / "a companhia oferece crédito ..., sem
    reembolso"): the remedy changed, not a second remedy beside it.
    """
    denied = _after(one, _WITHOUT) & its & theirs
    said = details(other).polarity  # (term, negated) of each term `other` says
    if not denied or _negations(one) != _negations(other) \
            or any((term, True) in said for term in denied) or denied & _after(other, _WITHOUT):
        return False  # "não tem multa" / "sem multa" deny it alike; "Sem a nota, não trocamos" restates
    rest_one, rest_other = its - denied, theirs - denied
    shared = len(rest_one & rest_other)
    return shared >= 2 and shared >= _DENIED_SHARED * min(len(rest_one), len(rest_other))


def _after(text: str, marker: str) -> frozenset[str]:
    """The tokens of `text` right after each `marker` token ("sem reembolso" -> the refund
    after ``r:without``; "$10 per day" -> the day after ``p:p_per``).
    """
    seq = _sequence(text)
    return frozenset(seq[i + 1] for i, token in enumerate(seq[:-1]) if token == marker)


#: The role token of "without", "sem" (`analysis.structure.tokens`).
_WITHOUT: Final = "r:without"
#: The least share of the shorter side's words (the denied one aside) both sides hold (`_denies`).
_DENIED_SHARED: Final = 0.6


#: The most words one side of a replacement may have (`versions`).
_REPLACED: Final = 2
#: The pole of "also", "too", "as well", "também": a side that says it adds to the other (`versions`).
_ALSO: Final = frozenset({"p:p_also"})
#: The poles that exclude what "also" would add ("only sealed software" / "opened software too").
_EXCLUDING: Final = RESTRICTIONS | {"p:p_except"}
#: The poles a side says "all" with where the other states a value (`versions`).
_UNBOUNDED: Final = frozenset({"p:p_all", "p:p_any"})


def _adds_to(one: str, other: str) -> bool:
    """True when `one` says "also" (`_ALSO`) and `other` neither restricts nor excepts what
    it would add to (`_EXCLUDING`: "Only sealed software can be returned" / "Opened software
    can be returned too" are two versions).
    """
    return bool(_ALSO & _poles(one)) and not _EXCLUDING & _poles(other)


def _widened(one: str, other: str) -> bool:
    """True when `one` restricts a claim to one thing ("only", no list) that `other` says of
    a list holding it and more, with the same values ("Gift cards can be used online only"
    / "... online and in stores"; "Só entregamos em São Paulo capital" / "... capital e na
    Grande São Paulo").
    """
    return bool(RESTRICTIONS & _poles(one)) and not RESTRICTIONS & _poles(other) \
        and _plain_terms(one) < _plain_terms(other) and _values(one) == _values(other) \
        and not JOINS & set(tokens(one)) and bool(JOINS & set(tokens(other)))


def _listed_otherwise(one: str, other: str) -> bool:
    """True when `other` says what `one` says of a list with more in it, every word it adds
    an item of its list, with the same values and negations ("The discount applies to
    grooming services" / "... to grooming and boarding services"; "por boleto ou Pix" /
    "por boleto, Pix ou cartão"; "em Curitiba" / "em Curitiba e região metropolitana"): the
    rule's scope or its alternatives changed. "Also" / "também" adding one is `_adds_to`'s.
    """
    mine, theirs = _plain_terms(one), _plain_terms(other)
    if not mine < theirs or _values(one) != _values(other) or _negations(one) != _negations(other):
        return False
    seq, own = tokens(other), tokens(one)
    if not JOINS & set(seq) or _separators(seq) <= _separators(own):
        return False  # (the same list, reordered or reworded around: "Pix, dinheiro ou cartão")
    listed: set[str] = set()
    for at, token in enumerate(seq):
        if token in JOINS or token == ",":
            listed.update(seq[max(0, at - 1):at])
            listed.update(_item_after(seq, at + 1))
    return theirs - mine <= listed


def _tail_replaced(old: str, new: str) -> bool:
    """True when `old` and `new` open alike and end otherwise: their readings share a first
    run of at least `_SHARED_OPENING` content tokens and half the shorter reading, then each
    goes on in its own words ("If the flight is cancelled by the airline, passengers receive
    a full refund" / "... a refund minus a $50 service fee"; "A limpeza da piscina do clube é
    feita às segundas" / "... às sextas"): one subject, said two ways. Not when either
    lists what is included or added ("The plan includes 10 GB" / "The plan includes
    unlimited WhatsApp"), nor when each ending has its own words and values (two subjects, each
    with its value), nor when the endings hold opposite poles with other words too
    (two branches of one condition: "Transfers placed after 5 pm are processed the next
    day" / "... before 5 pm ... the same day").
    """
    if len(_sentences(old)) > 1 or len(_sentences(new)) > 1:
        return False  # (a description and its body, or two rules: their sentences are read apart)
    mine, theirs = _sequence(old), _sequence(new)
    shared = _shared_opening(mine, theirs)
    if shared in (len(mine), len(theirs)) or 2 * shared < min(len(mine), len(theirs)) \
            or sum(map(_opening_token, mine[:shared])) < _SHARED_OPENING:
        return False
    if _ADDING_POLES & {*mine, *theirs}:
        return False
    its, their = mine[shared:], theirs[shared:]
    its_values, their_values = {t for t in its if _valued(t)}, {t for t in their if _valued(t)}
    if its_values and their_values and its_values != their_values \
            and {t for t in its if _subject(t)} != {t for t in their if _subject(t)}:
        return False  # two subjects, each with its value ("retirados na loja de BH em 2 dias" / "de Fortaleza em 5")
    its_poles, their_poles = {t for t in its if t.startswith("p:")}, {t for t in their if t.startswith("p:")}
    return not (its_poles and their_poles and its_poles != their_poles
                and {t for t in its if _worded(t)} != {t for t in their if _worded(t)})


def _ending_negated(old: str, new: str) -> bool:
    """True when `old` and `new`, one sentence each, open alike (`_SHARED_OPENING` content
    tokens) and end in the same words, one ending negated and the other not: "Points can be
    transferred to Atlas, and Atlas points can also be transferred back" / "..., but Atlas
    points cannot be transferred back". Whatever one adds ("also"), the other denies it.
    """
    if len(_sentences(old)) > 1 or len(_sentences(new)) > 1:
        return False
    mine, theirs = _sequence(old), _sequence(new)
    shared = _shared_opening(mine, theirs)
    if shared in (len(mine), len(theirs)) or sum(map(_opening_token, mine[:shared])) < _SHARED_OPENING:
        return False
    its, their = mine[shared:], theirs[shared:]
    return its.count("n") != their.count("n") and {t for t in its if _worded(t)} == {t for t in their if _worded(t)}


def _shared_opening(mine: Sequence[str], theirs: Sequence[str]) -> int:
    """How many tokens two readings open with alike."""
    shared = 0
    while shared < min(len(mine), len(theirs)) and mine[shared] == theirs[shared]:
        shared += 1
    return shared


def _opening_token(token: str) -> bool:
    """A content token of a reading: a word, a synonym group or a pole."""
    return plain_word(token) or token.startswith(("s_", "p:"))


def _worded(token: str) -> bool:
    """A word or a value of a reading."""
    return plain_word(token) or _valued(token)


def _valued(token: str) -> bool:
    """A value of a reading: an amount, a date, "free" (a weekday is when, `_subject`)."""
    return (token.startswith(("m:", "d:")) and not token.startswith(_WEEKDAY)) or token == "s_free"


def _subject(token: str) -> bool:
    """A token that names what a value is of: a word, a weekday ("8 am to 8 pm on weekdays")."""
    return plain_word(token) or token.startswith(_WEEKDAY)


#: The prefix of a weekday's token (``d:wd1`` is Monday).
_WEEKDAY: Final = "d:wd"


#: The content tokens two readings must open with for `_tail_replaced`.
_SHARED_OPENING: Final = 3
#: Poles that add to a claim rather than restate it: "also" (`_ALSO`), "includes".
_ADDING_POLES: Final = _ALSO | {"p:p_include"}


def _item_after(seq: tuple[str, ...], at: int) -> list[str]:
    """The words of the list item that starts at ``seq[at]``: up to `_ITEM_WORDS` of them,
    "de" / "of" between them ("cartão de crédito", "região metropolitana").
    """
    item: list[str] = []
    while at < len(seq) and len(item) < _ITEM_WORDS and (seq[at] in _ITEM_LINKS or plain_word(seq[at])):
        if seq[at] not in _ITEM_LINKS:
            item.append(seq[at])
        at += 1
    return item


#: The role words inside a list item ("cartão de crédito", "proof of address").
_ITEM_LINKS: Final = frozenset({"r:de", "r:of"})


def _separators(seq: tuple[str, ...]) -> int:
    """How many "and", "or" and commas `seq` holds: one list item more is one more."""
    return sum(1 for t in seq if t in JOINS or t == ",")


#: How many tokens after "and", "or" or a comma an item of a list may take ("região
#: metropolitana"); before one, its last word only.
_ITEM_WORDS: Final = 2


def _turned(old: str, new: str, said: frozenset[str], saying: frozenset[str]) -> bool:
    """True when two claims with (all but one of) the same words say it otherwise: one value
    of a kind the other states otherwise ("até 10 itens" / "no máximo 20 itens"; two values
    changed read as two subjects, "Weekday ... at 7 am" / "Saturday ... at 8 am", and a
    word that qualifies as an exception, `_qualifies`), a side without the other's value
    saying "all" ("Frete grátis acima de R$ 199" / "Agora toda compra tem frete grátis"), or one
    negates, withdraws or restricts ("only") what the other says, with no value or word the
    other lacks (not an exception: "not accepted on Sundays"; "... can be returned if
    defective"; a withdrawal may leave the withdrawn verb unsaid: "Same-day delivery is
    offered" / "Same-day delivery was discontinued"; a change announced in a negation that
    leaves one word of the other unsaid: "We accept payment by bank slip" / "We no longer
    accept bank slips").
    """
    if _one_value_otherwise(said, saying) and not _qualifies(old, new) and not _qualifies(new, old):
        return True
    if (said < saying or saying < said) and _contrary_scope(old, new, said, saying):
        return True
    for one, other, its, theirs in ((old, new, said, saying), (new, old, saying, said)):
        if its <= theirs and (_plain_terms(other) - _IMPLIED <= _plain_terms(one) or (
                _plain_terms(one) < _plain_terms(other) and _negations(one) > _negations(other)
                and announces_change(one))) and (
                (_negations(one) > _negations(other) and not _antonyms(one, other))
                or (bool(RESTRICTIONS & _poles(one) - _poles(other)) and _MUST not in _poles(other))):
            return True  # (the business a passive leaves unsaid, "always" against "never": `_IMPLIED`)
    return False


def _antonyms(one: str, other: str) -> bool:
    """True when one text says a pole of `_ANTONYMS` and the other its contrary: a negation
    then restates ("closed on Sundays" / "doesn't open on Sundays").
    """
    mine, theirs = _poles(one), _poles(other)
    return any((a in mine and b in theirs) or (b in mine and a in theirs) for a, b in _ANTONYMS)


#: The pole of "must", "required", "obrigatório".
_MUST: Final = "p:p_must"
#: Poles that say each other's contrary.
_ANTONYMS: Final = (("p:p_open", "p:p_close"),)


#: Words a negated side may leave unsaid (`_turned`): the business ("We offer gift wrapping"
#: / "Gift wrapping is no longer offered") and "always" ("Sempre reembolsamos o frete" /
#: "Nunca reembolsamos o frete"), as `tokens` reads them.
_IMPLIED: Final = frozenset({"w:we", "always", "sempr"})


def _modality_turned(one: str, other: str, its: frozenset[str], theirs: frozenset[str]) -> bool:
    """True when `one` requires ("must", "obrigatório") what `other` permits ("may", "can",
    "não é obrigatório", "optional": `MODAL_CONTRARIES`) with `one`'s words (but two) and at
    most `_REPLACED` more ("Customers must schedule an appointment" / "Customers may schedule an appointment
    ... if they wish"; "O uso de touca é obrigatório" / "... é recomendado, mas não é
    obrigatório"): one rule made optional, not a second rule beside it.
    """
    required, permitted = MODAL_CONTRARIES
    return bool(required & _poles(one)) and not required & _poles(other) and bool(permitted & _poles(other)) \
        and len(its - theirs) <= 2 and len(theirs - its) <= _REPLACED  # (two left unsaid: "Patients must
    # fast for 8 hours" / "Fasting for 8 hours is optional")


def _priced(one: str, other: str, its: frozenset[str], theirs: frozenset[str],
            said: frozenset[str], saying: frozenset[str]) -> bool:
    """True when `one` says free what `other` prices, of the same thing ("In-store pickup is
    free" / "In-store pickup costs $5"): `one` says "free" and no amount, `other` an amount
    and not "free", and their words and poles are the same once the price words and the
    amount's basis ("per day") are set aside ("Wire transfers are free" / "International
    wire transfers cost $25" price another thing).
    """
    if _FREE not in its or _FREE in theirs or any(_kind(v).startswith(_AMOUNT) for v in said) \
            or not any(_kind(v).startswith(_AMOUNT) for v in saying):
        return False
    basis = _after(other, _PER)  # "$10 per day": the price's basis, not what is priced
    return its - _PRICE_WORDS == theirs - _PRICE_WORDS - basis and _poles(one) == _poles(other) - {_PER}


#: The pole of "per", "por", "a cada" (`analysis.statements.POLES`).
_PER: Final = "p:p_per"
#: The term of "free", "grátis" (`analysis.structure.CLAIM_SYNONYMS`).
_FREE: Final = "s_free"
#: The terms that say a price (`_priced`): "free", "costs", "price", "fee".
_PRICE_WORDS: Final = frozenset({_FREE, "s_price"})
#: The kind of an amount charged, paid or discounted, whatever its currency, or a share
#: (`_kind`): "10% off" and "$10 off", "a €15 fee" and "a $15 fee" state one slot otherwise.
_AMOUNT: Final = "m:amount:"
#: The units of an amount (`_AMOUNT`): the currencies of `analysis.numbers` and "%".
_AMOUNT_UNITS: Final = CURRENCY_UNITS | {"%"}


def _contrary_scope(old: str, new: str, said: frozenset[str], saying: frozenset[str], *,
                    negated: bool = False) -> bool:
    """True when the side without the other's value (`said` < `saying` or the reverse) says
    "all" / "any" where the other does not (`_UNBOUNDED`), or, with `negated`, negates more:
    it says the contrary of the value's condition, it does not leave it unsaid.
    """
    fewer, more = (old, new) if said < saying else (new, old)
    return bool((_poles(fewer) - _poles(more)) & _UNBOUNDED) or (negated and _negations(fewer) > _negations(more))


def _one_value_otherwise(said: frozenset[str], saying: frozenset[str]) -> bool:
    """True when each side states one value the other does not, of the same kind and unit
    ("R$ 15" / "R$ 25"; "30 days" / "14 days").
    """
    lost, gained = said - saying, saying - said
    return len(lost) == 1 and len(gained) == 1 and _kind(next(iter(lost))) == _kind(next(iter(gained)))


def _withdraws(one: str, other: str) -> bool:
    """True when `one` withdraws ("was discontinued", "deixamos de") what `other` says: it
    says no word or value `other` does not, the withdrawn verb and the party left unsaid
    ("We accept payment by boleto" / "Payment by boleto was discontinued"; "We offer gift
    wrapping and engraving" / "Engraving was discontinued"). A withdrawal with a word of
    its own is an exception ("... discontinued for electronics").
    """
    return _withdrawn(one) > _withdrawn(other) and _plain_terms(one) <= _plain_terms(other) \
        and _values(one) <= _values(other)


def _withdrawn(text: str) -> int:
    """How many withdrawals `text` says ("discontinued", "deixou de", "was retired")."""
    return sum(1 for t in tokens(text) if t == WITHDRAWAL)


def _qualifies(one: str, other: str) -> bool:
    """True when a word of `one` that `other` lacks is a role word's object ("para o Norte",
    "for members"): a qualifier, as an exception with its own value has ("Frete de R$ 15" /
    "Frete de R$ 25 para o Norte").
    """
    extra = _plain_terms(one) - _plain_terms(other)
    seq = _sequence(one)
    return any(token in extra and seq[i - 1].startswith(("r:", "c:")) for i, token in enumerate(seq) if i)


def _kind(value: str) -> str:
    """A value token's kind and unit (``m:20:unit`` -> ``m:unit:``, ``d:11-20`` -> ``d``); a
    duration's unit is time, whichever unit it fills (``m:2:week`` and ``m:30:day`` are both
    ``m:time:``: `whole_duration` writes 14 days as 2 weeks), its kind of day kept
    (``m:5:day:business`` -> ``m:time:business``); lengths, weights and data sizes alike
    (`_MEASURES`); an amount of money in any currency and a share are one kind (`_AMOUNT`:
    "10% off" / "$10 off").
    """
    kind, _, rest = value.partition(":")
    if kind == "d":
        return kind
    unit, _, qualifier = rest.partition(":")[2].partition(":")
    if unit in _AMOUNT_UNITS:
        return f"{kind}:amount:{qualifier}"
    return f"{kind}:{_MEASURES.get(unit, unit)}:{qualifier}"


#: A unit (`analysis.numbers.UNITS`) -> what it measures, where several units measure one
#: thing (`_kind`): "55 cm" / "55 inches" and "30 days" / "2 weeks" state one slot otherwise.
_MEASURES: Final = {
    **dict.fromkeys(("minute", "hour", "day", "night", "week", "month", "year"), "time"),
    **dict.fromkeys(("mm", "cm", "m", "km", "inch", "ft", "mile"), "length"),
    **dict.fromkeys(("g", "kg", "lb"), "weight"),
    **dict.fromkeys(("kb", "mb", "gb", "tb"), "data"),
}


def _poles(text: str) -> frozenset[str]:
    """The poles of `text` ("must", "opens", "before"...: `analysis.structure.tokens`)."""
    return frozenset(t for t in tokens(text) if t.startswith("p:"))


def _negations(text: str) -> int:
    """How many negations `text` says (`analysis.structure.tokens`: "not", "never", "não")."""
    return sum(1 for t in tokens(text) if t in _NEGATING)


def _one_run_replaced(old: str, new: str) -> bool:
    """True when `new`'s tokens are `old`'s in order but for one run of at most `_REPLACED`
    tokens put in place of another such run, with at least two tokens kept.
    """
    mine, theirs = _sequence(old), _sequence(new)
    changes = [op for op in SequenceMatcher(None, mine, theirs, autojunk=False).get_opcodes() if op[0] != "equal"]
    if len(changes) != 1 or changes[0][0] != "replace":
        return False
    _, start, end, their_start, their_end = changes[0]
    return end - start <= _REPLACED and their_end - their_start <= _REPLACED and len(mine) - (end - start) >= 2


def _sequence(text: str) -> list[str]:
    """`text`'s tokens without its phrase and sentence marks (`analysis.structure.tokens`)."""
    return [t for t in tokens(text) if t not in _MARKS]


#: The tokens that only mark a phrase or a sentence's end.
_MARKS: Final = frozenset({SENTENCE, PHRASE})
#: The tokens of a negation and of a withdrawal ("discontinued", "deixou de": `analysis.structure.tokens`).
_NEGATING: Final = frozenset({"n", WITHDRAWAL})


def _values(text: str) -> frozenset[str]:
    """The amounts, dates and durations of `text`, durations in the largest unit they fill."""
    return frozenset(map(whole_duration, values_of(text)))


def _plain_terms(text: str) -> frozenset[str]:
    """The content words of `text` (`analysis.structure.claim_terms`), values set aside,
    and its parties ("we", "you": "the store" is read as "we").
    """
    parties = (t for t in tokens(text) if t.startswith("w:"))
    return frozenset(t for t in claim_terms(text) if not t.startswith(("m:", "d:"))).union(parties)


def _opening(text: str) -> str:
    """The first content word of `text`'s reading (`analysis.structure.tokens`): what it is of."""
    return next((t for t in tokens(text) if plain_word(t) or t.startswith("s_")), "")


def _words(text: str) -> frozenset[str]:
    """The content words and poles of `text` ("included" and "optional" both count)."""
    return content_terms(text) | {t for t in tokens(text) if t.startswith("p:")}


def interpret_merge(answer: object, old_body: str, new_body: str) -> MergeVerdict:
    """What the merge model's `answer` about `old_body` and `new_body` means.

    Args:
        answer: what the model returned: normally a ``MergeAnswer`` (``verdict`` and
            ``body`` attributes); anything else is unusable.
        old_body: the body on record the model was shown.
        new_body: the new sighting's body the model was shown.

    Returns:
        A related verdict with the merged body, redacted and stripped, when the model
        said ``related``, the body is usable before and after redaction (see
        `usable_merge`, bounded by `merge_limit`), it keeps every detail of both bodies
        (`keeps_details`) and says nothing neither says (`invents`), and the two bodies
        are not versions of one claim (`versions`); otherwise a contradicting verdict
        (`LISTED` for two versions of one claim, named first when the text holds every
        word of both; `LOST_DETAIL` for a body that loses a detail; `INVENTED` for one
        that adds a claim). Never raises
        for a malformed answer.
    """
    limit = merge_limit(old_body, new_body)
    verdict = getattr(answer, "verdict", None)
    body = getattr(answer, "body", None)
    if verdict != "related":
        return MergeVerdict(None, CONTRADICTING if verdict == "contradicting" else UNUSABLE)
    if not isinstance(body, str) or not usable_merge(body, limit):
        return MergeVerdict(None, f"{UNUSABLE}:{unusable_because(body, limit)}")
    # Contacts already on record (or in the sighting) passed redaction there: kept. A credential
    # the model wrote is never kept (as in a candidate: `extract.candidates`).
    # Stored as a candidate's body is: no terminal escapes, tag characters or direction overrides.
    redaction = redact(scrub(model_text(body)), kept_contacts([("system", old_body), ("system", new_body)]))
    cleaned = redaction.text.strip()
    if not usable_merge(cleaned, limit):
        return MergeVerdict(None, f"{UNUSABLE}:{unusable_because(cleaned, limit)} after redaction")
    two = versions(old_body, new_body)
    if two and _words(old_body) | _words(new_body) <= _words(cleaned):
        return MergeVerdict(None, LISTED)  # both versions said: what is wrong is that it merges them
    if not keeps_details(cleaned, old_body, new_body):
        kept = {base_duration(v) for v in values_of(cleaned)}  # "two weeks" keeps "14 days"
        dropped = in_words(frozenset(v for v in values_of(old_body) | values_of(new_body)
                                     if base_duration(v) not in kept))
        return MergeVerdict(None, f"{LOST_DETAIL}:{', '.join(dropped)}" if dropped else LOST_DETAIL)
    if invents(cleaned, old_body, new_body):
        return MergeVerdict(None, INVENTED)
    if two:
        return MergeVerdict(None, LISTED)
    return MergeVerdict(cleaned, RELATED, redaction.counts)


def merge_failed(kind: str) -> MergeVerdict:
    """The verdict when the merge call failed (`kind`: the failure's outcome or type)."""
    return MergeVerdict(None, f"{MODEL_FAILED}:{kind}")
