"""Arrangement: does a text say a claim's words with its parts placed otherwise?

Two texts can share every word and value and still say different things: "5% off on Pix,
3% on boleto" and "3% off on Pix, 5% on boleto"; "ships from Extrema to Campinas" and
"from Campinas to Extrema"; "orders above $50" and "below $50"; "the store pays the return
shipping" and "the customer pays". A term set cannot tell them apart; the statements'
`analysis.structure.details` can: each value with the anchors of its phrase, each role
word with its object, each party with what it does.

`rearranged` compares a claim with a text that mentions it (a business sentence read as
support, a customer's message read as saying it first) and names the first part the text
places otherwise: a comparison's sides swapped, a role word turned around, the other party
doing it, or values (or parties) that trade places. It asks nothing of what the text
leaves out: a sentence that says less than the claim is not rearranged, only one that
says the same parts in other places.
"""

from __future__ import annotations

import dataclasses
import re
from functools import lru_cache
from typing import Final

from insika_knowledge.analysis.structure import (
    FREE,
    PARTY_TERMS,
    VALUE_WORDS,
    Details,
    content_terms,
    contrasted,
    details,
    names,
    next_content,
    plain_word,
    previous_content,
    priced,
    tokens,
)
from insika_knowledge.analysis.text import fold, negation_count, text_language

#: The parties that speak for the business ("we", "the store", "the seller") and those on
#: the customer's side ("you", "customers", "members", "passengers"), as terms: a text in
#: which one side does what the claim says the other does is another claim. A carrier or
#: a person named otherwise is on neither side.
BUSINESS_SIDE: Final = frozenset({"w:we"}) | PARTY_TERMS & frozenset(
    {"s_store", "sell", "sellers", "merchant", "compan", "company", "empres", "lojist", "vendedor"})
CUSTOMER_SIDE: Final = frozenset({"w:you", "w:person"}) | PARTY_TERMS & frozenset(
    {"s_customer", "buyer", "buyers", "comprador", "guest", "guests", "hosped", "memb", "members", "membr",
     "passeng", "passengers", "passageir", "assoc"})


_SIDES: Final = BUSINESS_SIDE | CUSTOMER_SIDE


#: The pronouns whose side depends on who writes: a customer's "you" is the business, and
#: their "I" the customer; an agent's "I" speaks for the business. ("We" reads as the
#: store's own name does, ``w:we``: the business's, whoever writes it.)
_WRITER: Final = frozenset({"w:i"})
_READER: Final = frozenset({"w:you"})


def _side(party: str, *, customer: bool = False) -> frozenset[str]:
    """The side `party` is on (`BUSINESS_SIDE`, `CUSTOMER_SIDE`, or neither: empty), in a
    text the customer wrote when `customer`.
    """
    if party in _WRITER:
        return CUSTOMER_SIDE if customer else BUSINESS_SIDE
    if party in _READER:
        return BUSINESS_SIDE if customer else CUSTOMER_SIDE
    return BUSINESS_SIDE if party in BUSINESS_SIDE else CUSTOMER_SIDE if party in CUSTOMER_SIDE else frozenset()


def _by_side(parties: frozenset[tuple[str, frozenset[str]]], *,
             customer: bool = False) -> frozenset[tuple[str, frozenset[str]]]:
    """Each party's phrase under the name of its side (`_side`: "the store" and "we" are one
    party), parties on neither side left out.
    """
    named = {BUSINESS_SIDE: "w:business", CUSTOMER_SIDE: "w:customer"}
    return frozenset((named[side], words) for party, words in parties if (side := _side(party, customer=customer)))


def _words(phrase: frozenset[str]) -> frozenset[str]:
    """A phrase's words that tell one value from another: no value, no party."""
    return frozenset(w for w in phrase if not w.startswith(("m:", "d:")) and w not in VALUE_WORDS) - _SIDES


def _placed_otherwise(mine: frozenset[tuple[str, frozenset[str]]],
                      theirs: frozenset[tuple[str, frozenset[str]]]) -> bool:
    """True when the claim's values trade places in the text: two of them sit among words
    the claim gives another value, one of them never among its own.

    Each value's *own* words are the words of its phrases in the claim that no other value's
    phrase has ("overdraft" of "the overdraft fee is $25, the returned-payment fee is $35");
    its rivals, the other values' own words. A value without own words, and the claim's
    numbers without a unit (a model's number, "Aero 2"), tell nothing apart. A number of
    the text without a unit is the claim's value of that number (a tool's data:
    ``"overdraft": "35.00"``). One value said among another's words is no trade ("no
    interior, cobramos R$ 120 pela montagem" for "a montagem é gratuita nas capitais; no
    interior custa R$ 120": the topic is in both phrases).

    Two values of one unit that trade places are read as a pair too, each one's own words
    those the other's phrase lacks: in a table of values ("first bag $35 domestic and free
    transatlantic; a second bag $45 domestic and $100 transatlantic") a word is shared
    by a row or a column, and "$100 domestic and $45 transatlantic" trades the second row's.
    """
    phrases: dict[str, frozenset[str]] = {}
    for value, phrase in mine:
        phrases[value] = phrases.get(value, frozenset()) | _words(phrase)
    if _traded(phrases, theirs):
        return True
    units: dict[str, list[str]] = {}
    for value in phrases:
        if value.startswith("m:") and not _bare(value):
            units.setdefault(_unit(value), []).append(value)
    return any(_traded({v: phrases[v], w: phrases[w]}, theirs)
               for values in units.values() if 2 < len(phrases) and len(values) >= 2
               for i, v in enumerate(values) for w in values[i + 1:])


def _traded(phrases: dict[str, frozenset[str]], theirs: frozenset[tuple[str, frozenset[str]]]) -> bool:
    """`_placed_otherwise` of the values of `phrases` (value -> its phrases' words in the claim)."""
    own = {v: words - frozenset().union(*(w for k, w in phrases.items() if k != v)) for v, words in phrases.items()}
    displaced: set[str] = set()  # values among another value's words in the text
    moved = False  # ...one of them never among its own
    for value, words in own.items():
        rivals = frozenset().union(*(w for k, w in own.items() if k != value and not _bare(k)))
        around = [_words(phrase) for v, phrase in theirs if v == value or _bare(v) and _number(v) == _number(value)]
        if words and any(a & rivals for a in around):
            displaced.add(value)
            moved = moved or not any(a & words for a in around)
    return moved and len(displaced) >= 2


def _gives_value_to_another(claim: str, text: str) -> bool:
    """True when `text` gives a price or share of `claim` to another thing and the claim's
    thing another value (`_given_another`), across its clauses and sentences ("Standard is
    $10; express is $25." for "Express delivery costs $10"). A text with fewer than two
    prices or shares is not read.
    """
    if sum(map(_bound, tokens(text))) < 2:
        return False
    body = claim.partition("\n")[2] or claim
    return _given_another(details(body).near, details(text).near, names(body) | names(text))


def _bound(token: str) -> bool:
    """A value `_given_another` reads: a price or share (`priced`), or an hour ("o check-in é
    a partir das 14h, o check-out até as 12h" gives 12h to the check-out); a range ("das 20h
    às 6h") is one value.
    """
    return priced(token) or (token.startswith("m:") and token.endswith(":hour"))


def _given_another(mine: frozenset[tuple[str, frozenset[str]]],
                   theirs: frozenset[tuple[str, frozenset[str]]], named: frozenset[str]) -> bool:
    """True when the text gives the claim's thing another value and the claim's value to
    another thing: a name (`named`) of a value's phrase in the claim sits in the text only with
    another value of that unit, and the claim's value, wherever the text says it, with a
    word the claim does not say ("Mexico is $15 and Canada is $20" for "Shipping to Canada
    costs $15"; "R$ 45 para Belém e R$ 60 para Manaus" for "O frete para Manaus custa R$
    45"; not "Shipping is $15; the express fee is $25" for "The shipping fee is $15", where
    $15 sits with no other thing). Prices and shares only (`priced`): an hour may be a
    time of day or a duration, and "20h e 6h" bound a window, not another thing. A thing is
    told by its name: a word such as "delivery" may be left implied beside a value ("the
    usual $2.99 fee applies").
    """
    claimed = frozenset().union(*(_words(p) for _, p in mine))
    for value, phrase in mine:
        if not _bound(value):
            continue
        here = [_words(p) for v, p in theirs if v == value]
        if not here or not all(h - claimed for h in here):
            continue  # not said, or said somewhere among the claim's own words only
        said_here = frozenset().union(*here)
        own = _words(phrase) - frozenset().union(*(_words(p) for v, p in mine if v != value))
        # told by a name, or by any word of its own when the value sits with none of them
        # ("Standard is $10; express is $25" for "Express delivery costs $10")
        telling = own if not said_here & own else own & named
        others = [_words(p) for v, p in theirs if v != value and _bound(v) and _unit(v) == _unit(value)]
        if any(o & (telling - said_here) for o in others):
            return True
    return False


def _crossed(mine: frozenset[tuple[str, frozenset[str]]], theirs: frozenset[tuple[str, frozenset[str]]]) -> bool:
    """True when the text binds two of the claim's values that the claim binds to others.

    A value bound to another of another unit in one phrase (a price to the date it holds
    until, a fee to a duration) is a tier: "$279 through March 15 and $199 from March
    16" binds $279 to March 15 and $199 to March 16, and "Registration is $199 through
    March 15" binds $199 to March 15, which the claim gives $279. Numbers without a unit
    (a model's, "5 litros") bind nothing; a claim that says two values in one phrase binds
    them, so a text that says them together crosses nothing.
    """
    def pairs(near: frozenset[tuple[str, frozenset[str]]]) -> set[tuple[str, str]]:
        return {(v, w) for v, phrase in near for w in phrase
                if w != v and _tiered(v) and _tiered(w) and _unit(v) != _unit(w)}

    claimed = pairs(mine)
    partners: dict[str, set[str]] = {}
    for v, w in claimed:
        partners.setdefault(v, set()).add(w)
    return any(v in partners and w in partners and partners[v] - {w} and partners[w] - {v}
               for v, w in pairs(theirs) - claimed)


#: The bound words of a tier: up to ("até", "until", "before", "through") and from ("após",
#: "from", "after", "above") a date, a day or a measure.
_UP_TO: Final = frozenset({"p:p_before", "p:p_at_most", "p:p_below", "r:through", "r:until"})
_FROM_ON: Final = frozenset({"p:p_after", "p:p_at_least", "p:p_above", "r:from", "r:since"})


#: What opens a clause that sets another case against the one before ("..., while orders over
#: $75 pay $6.99").
_CONTRAST: Final = frozenset({"c:while", "c:whereas"})


def _tiers(seq: tuple[str, ...]) -> dict[str, tuple[bool, str]]:
    """Each price of `seq` (or "free") said in a clause with one bound -> ``(from, the
    bound's value)``; the value of a bound is no price of the clause ("orders under $75 ship
    free": ``s_free`` -> ``(False, m:75:usd)``).

    A clause ends at a sentence's end, a list's "and" / "or" or a contrast's "while"; a
    clause with more than one price or bound binds none ("R$ 1.450,00 se paga até o dia 5":
    ``m:1450:brl`` -> ``(False, m:5:)``; "acima de 12.000 BTUs, R$ 480": ``m:480:brl`` ->
    ``(True, m:12000:)``).
    """
    found: dict[str, tuple[bool, str]] = {}
    clause: list[str] = []
    for token in (*seq, "."):
        if token != "." and token not in _EITHER and token not in _CONTRAST:
            clause.append(token)
            continue
        bounds, bounding = set(), set()
        for at, word in enumerate(clause):
            if word in _UP_TO or word in _FROM_ON:
                # the value right after the bound word ("orders under $75": a sum bounds too)
                value = next((t for t in clause[at + 1:at + 4] if t.startswith(("m:", "d:"))), None)
                if value is not None:
                    bounds.add((word in _FROM_ON, value))
                    bounding.add(value)
        prices = {t for t in clause if (priced(t) or t == FREE) and t not in bounding}
        if len(prices) == 1 and len(bounds) == 1:
            found.update(dict.fromkeys(prices, next(iter(bounds))))
        clause = []
    return found


def _tiers_swapped(mine: tuple[str, ...], theirs: tuple[str, ...]) -> bool:
    """True when the text gives a price of the claim the tier the claim gives another
    price ("R$ 1.610 até o dia 5 e R$ 1.450 após" / "R$ 1.450 se paga até o dia 5").
    """
    claimed, said = _tiers(mine), _tiers(theirs)
    price_of = {tier: price for price, tier in claimed.items()}
    if any(price in claimed and claimed[price] != tier and price_of.get(tier, price) != price
           for price, tier in said.items()):
        return True
    # ...or gives the claim's tier only another price, and the claim's price elsewhere
    # ("$199 until April 30 and $279 afterwards" for "$279 until April 30")
    at_tier = {tier: {p for p, t in said.items() if t == tier} for tier in set(said.values())}
    return any(tier in at_tier and price not in at_tier[tier] and price in theirs for price, tier in claimed.items())


def _tiered(value: str) -> bool:
    """A value that may bind another: a measure with its unit, or a date."""
    return value.startswith("d:") or (value.startswith("m:") and not _bare(value))


def _unit(value: str) -> str:
    """``date`` for a date, else a measure's unit (``m:199:usd`` -> ``usd``)."""
    return "date" if value.startswith("d:") else value.split(":")[2]


#: The words that count a value per something: "R$ 100 por trecho", "$35 per bag".
_PER: Final = frozenset({"r:por", "p:p_per"})
#: The words that tie a duration to the event it runs from or to: "24 hours of departure",
#: "7 dias após o recebimento", "até 24 horas antes do embarque".
_FROM_EVENT: Final = frozenset({"r:of", "r:from", "p:p_after", "p:p_before"})
_DURATION_UNITS: Final = frozenset({"minute", "hour", "day", "week", "month", "year"})
#: The events a duration runs from, as terms, by kind: two anchors of two kinds are two
#: rules ("24 hours of booking" / "of departure"); anchors of one kind, or of no kind
#: known here ("após a solicitação" / "após o pedido"), may be one said twice.
_EVENT_KINDS: Final = (
    frozenset({"book", "reserv", "s_order", "emissa", "issu", "agend", "schedul"}),
    frozenset({"departur", "embarqu", "part", "voo", "flight", "checkin", "takeoff", "consult", "appoint", "sessa",
               "session", "aula", "class", "event", "show"}),
    frozenset({"s_deliver", "receb", "receipt", "receiv", "arriv", "cheg"}),
)


def _event_kind(term: str) -> int:
    return next((k for k, kind in enumerate(_EVENT_KINDS) if term in kind), -1)


def _bases(seq: tuple[str, ...]) -> dict[str, set[str]]:
    """Each value of `seq` -> the terms it is counted per ("$20 per person per night":
    ``{"m:20:usd": {"person", "night"}}``), or, for a duration, the event it runs from
    ("24 hours of booking": ``{"m:24:hour": {"book"}}``); values counted per nothing are
    left out.
    """
    found: dict[str, set[str]] = {}
    for at, token in enumerate(seq):
        if not token.startswith("m:"):
            continue
        ties = _PER | _FROM_EVENT if token.split(":")[2] in _DURATION_UNITS else _PER
        k = at + 1
        while k + 1 < len(seq) and seq[k] in ties and plain_word(seq[k + 1]):
            found.setdefault(token, set()).add(seq[k + 1])
            k += 2
    return found


def other_basis(claim: str, text: str) -> bool:
    """True when `text` counts a value of `claim` per something else ("cem reais por
    trecho" for "R$ 100 pela viagem de ida e volta", "$15 per segment" for "$15 per trip"),
    or a duration from another kind of event ("within 24 hours of booking" for "of
    departure": `_EVENT_KINDS`).

    Compared only in one language (the words differ across two; a text too short to tell
    is taken as the other's), only for a value both count per something, and only when
    the text does not count it per the claim's word, the claim has the text's word nowhere,
    and neither is the start of the other ("a diária" is "por dia"). "R$ 60 por garrafa, no
    máximo 2 garrafas por mesa" counts R$ 60 per bottle, not per table.
    """
    body = claim.partition("\n")[2] or claim
    mine = _bases(tokens(body))
    if not mine or not _one_language(body, text):
        return False
    seq, claimed = tokens(text), tokens(body)
    theirs = _bases(seq)
    for value, per in mine.items():
        other = theirs.get(value, set())
        if value.split(":")[2] in _DURATION_UNITS and other:  # the events it runs from: two known kinds
            kinds, others = {_event_kind(t) for t in per}, {_event_kind(t) for t in other}
            if -1 not in kinds | others and not kinds & others:
                return True
        elif _apart(per, claimed, other, tuple(other)):  # its own basis, not a word said elsewhere
            return True
    return False


def _one_language(claim: str, text: str) -> bool:
    """True unless the two are in two languages (a text too short to tell is either)."""
    return len({text_language(claim), text_language(text)} - {"mixed"}) <= 1


def _apart(mine: set[str], claimed: tuple[str, ...], theirs: set[str], said: tuple[str, ...]) -> bool:
    """True when each side names something (`mine` in the claim's tokens `claimed`, `theirs`
    in the text's `said`), neither side's names are anywhere in the other, and none is the
    start of another ("a diária" is "por dia", "Lisboa" is "Lisbon").
    """
    return bool(mine and theirs) and mine.isdisjoint(said) and theirs.isdisjoint(claimed) \
        and not any(a.startswith(b) or b.startswith(a) for a in mine for b in theirs)


#: The role words whose object says where or to whom a rule applies: "para o Sul", "to
#: Canada", "no Nordeste", "for Gold members".
_PLACE_ROLES: Final = frozenset({"r:para", "r:to", "r:em", "r:in", "r:for"})
#: A capitalised word that does not open its sentence: a name ("Sul", "Canada", "Gold").
_NAME_RE: Final = re.compile(r"(?<![.!?:;\n]\s)(?<!^)(?<=\s)[A-ZÀ-Ý][^\W\d_]+")


def _names(text: str) -> set[str]:
    """The terms of the names (`_NAME_RE`) in `text`."""
    return {t for word in _NAME_RE.findall(text) for t in tokens(word) if plain_word(t)}


def _places(text: str) -> set[str]:
    """The names (`_NAME_RE`) a role word of `_PLACE_ROLES` in `text` applies the rule to,
    with the names of a list after it ("pras regiões Sul e Sudeste": ``{sul, sud}``).
    """
    names = _names(text)
    if not names:
        return set()
    seq, found = tokens(text), set()
    for at, token in enumerate(seq):
        if token not in _PLACE_ROLES:
            continue
        for nxt in seq[at + 1:]:
            if nxt in names:
                found.add(nxt)
            elif not (plain_word(nxt) or nxt.startswith("p:") or nxt in _EITHER):
                break
    return found


def other_place(claim: str, text: str) -> bool:
    """True when `text` applies what `claim` says to other named places or groups: "pras
    regiões Sul e Sudeste" for "para todo o Brasil", "to Canada" for "to Mexico".

    Only names after a role word that says where or to whom (`_PLACE_ROLES`) are
    compared, in one language, and only when they are apart (`_apart`).
    """
    body = claim.partition("\n")[2] or claim
    mine = _places(body)
    return bool(mine) and _one_language(body, text) and _apart(mine, tokens(claim), _places(text), tokens(text))


def _places_traded(claim: str, text: str) -> bool:
    """True when a name the two share follows, in `text`, the word the claim gives another
    name, and never its own: "retirar em São Paulo e devolver no Rio" for "retirar no Rio
    e devolver em São Paulo" (each name's word: the content word before its role word).
    """
    theirs = {name: heads for name, heads in _heads(text, _PLACE_ROLES).items() if name in _names(text)}
    if not theirs:
        return False
    mine = {name: heads for name, heads in _heads(claim, _PLACE_ROLES).items() if name in _names(claim)}
    owner: dict[str, set[str]] = {}
    for name, heads in mine.items():
        for head in heads:
            owner.setdefault(head, set()).add(name)
    return any(name in mine and not heads & mine[name] and any(owner.get(h, {name}) - {name} for h in heads)
               for name, heads in theirs.items())


def _priced_instead(mine: Details, theirs: Details) -> bool:
    """True when a word the claim says is free sits in the text with a price, and not with
    "free": "A emissão do cartão adicional é gratuita, porém ele possui anuidade de R$ 8,90"
    for "Cartões adicionais são isentos de anuidade". The text's "free" must share another
    word with the claim's (it speaks of the same thing; "..., free over $50" may leave its
    subject out), and the claim names no price itself.
    """
    free = {w for value, phrase in mine.worded if value == FREE for w in _words(phrase)}
    if not free or any(priced(v) for v, _ in mine.near):
        return False  # a claim with prices of its own ("free over $999", "free, then 20%") is read value by value
    their_free = {w for value, phrase in theirs.worded if value == FREE for w in _words(phrase)}
    if not their_free & free:
        return False
    with_price = {w for value, phrase in theirs.near if priced(value) for w in _words(phrase)}
    return bool((free & with_price) - their_free)


def _price_moved(mine: Details, theirs: Details) -> bool:
    """True when the claim's one price sits in the text with another subject, and the
    claim's subject with another price: "A meia porção custa R$ 35 e a inteira R$ 60" for
    "A meia porção custa R$ 60". A word of the claim's phrase counts when the text says it
    with the other price only, and not with every price (the thing priced, not "costs");
    two must move: one may be a head the text's list leaves out ("O plano Básico custa R$ 50
    e o Plus R$ 80" says nothing against "O plano custa R$ 80").
    """
    prices = {v for v, _ in mine.near if priced(v)}
    if len(prices) != 1:
        return False
    (price,) = prices
    claimed = set().union(*(_words(p) for v, p in mine.near if v == price))
    phrases = {v: _words(p) for v, p in theirs.near if priced(v)}
    if price not in phrases or len(phrases) < 2:
        return False
    common = frozenset.intersection(*phrases.values())
    own = phrases[price]
    return bool(own - claimed) and any(len(((claimed & words) - own) - common) >= 2
                                       for value, words in phrases.items() if value != price)


def _number(value: str) -> str:
    return value.split(":")[1] if value.startswith("m:") else value


def _bare(value: str) -> bool:
    """True for a number without a unit: a model's or a name's number ("Aero 2"), whose
    anchors are the thing the claim is about rather than a subject of its own.
    """
    return value.startswith("m:") and value.endswith(":")


#: The words that open where something goes after "de X": "do plano anual para o mensal",
#: "de São Paulo para o Rio" say from and to.
_ONWARD: Final = frozenset({"r:para", "r:a"})
_OF: Final = "r:de"
#: The verbs of leaving, as tokens ("sai", "saem", "saindo", "decola", "decolam"; not
#: "parte", also "part of").
_LEAVING: Final = frozenset({"sai", "saem", "saind", "decol"})
#: The most words between "de" and "para" in such a phrase.
_ORIGIN_WORDS: Final = 2


def _with_origins(found: Details, text: str) -> Details:
    """`found` with an origin (``("r", "r:from", X)``) for each "de X para Y" of `text`, X
    the word right before "para", and each "de X" after a verb of leaving ("sai de
    Confins", "decolam de BH"): Portuguese says from and to with "de" and "para", and "de"
    alone says "of" ("a taxa de entrega", read as it is).
    """
    seq = tokens(text)
    origins: set[tuple[str, ...]] = set()
    for at, token in enumerate(seq):
        if token != _OF:
            continue
        if at and seq[at - 1] in _LEAVING and at + 1 < len(seq) and plain_word(seq[at + 1]):
            origins.add(("r", "r:from", seq[at + 1]))
            continue
        words = 0
        for nxt in seq[at + 1:at + 2 + _ORIGIN_WORDS]:
            if nxt in _ONWARD and words:
                origins.add(("r", "r:from", seq[at + words]))
                break
            if not plain_word(nxt):
                break
            words += 1
    return dataclasses.replace(found, items=found.items | origins) if origins else found


#: Poles that put one thing on each side of them: a comparison ("Prata custa mais que o
#: Ouro") or a bound between two tiers ("R$ 30 before March 1st and R$ 25 after").
_COMPARING: Final = frozenset({"p:p_above", "p:p_below", "p:p_more", "p:p_less", "p:p_before", "p:p_after",
                               "p:p_at_least", "p:p_at_most"})


def _sentence_with(seq: tuple[str, ...], pole: str) -> tuple[str, ...] | None:
    """The one sentence of `seq` that holds `pole`, once; None when none, or more, do."""
    found: tuple[str, ...] | None = None
    start = 0
    for end in [*(i for i, t in enumerate(seq) if t == "."), len(seq)]:
        sentence, start = seq[start:end], end + 1
        if pole in sentence:
            if found is not None or sentence.count(pole) > 1:
                return None
            found = sentence
    return found


def _is_term(token: str) -> bool:
    return plain_word(token) or token.startswith(("m:", "d:"))


def _compared_otherwise(mine: tuple[str, ...], theirs: tuple[str, ...]) -> bool:
    """True when a comparison or a bound of the claim is said in the text with the same
    words and the same comparing words in the same order, but its two sides trade terms:
    one term of the claim's left side is on the text's right side only, and one of its
    right side on the text's left only ("Prata custa mais que o Ouro" / "Ouro custa mais
    que o Prata"; "R$ 30 before March 1st and R$ 25 after" / "R$ 25 before March 1st and
    R$ 30 after"). A clause moved whole ("for a full refund, cancel before shipping") moves
    terms one way only; other words ("demora mais" / "é mais rápido", "after March 1st ...,
    and before that") may say the same comparison from its other side.
    """
    for pole in _COMPARING & set(mine) & set(theirs):
        claim, text = _sentence_with(mine, pole), _sentence_with(theirs, pole)
        if claim is None or text is None or set(filter(_is_term, claim)) != set(filter(_is_term, text)):
            continue
        if [t for t in claim if t in _COMPARING] != [t for t in text if t in _COMPARING]:
            continue
        at, their_at = claim.index(pole), text.index(pole)
        left, right = set(filter(_is_term, claim[:at])), set(filter(_is_term, claim[at + 1:]))
        their_left, their_right = set(filter(_is_term, text[:their_at])), set(filter(_is_term, text[their_at + 1:]))
        if (left & their_right) - right - their_left and (right & their_left) - left - their_right:
            return True
    return False


def _may_move(mine: Details, said: Details, seq: tuple[str, ...]) -> bool:
    """True unless the text's tokens `seq` rule every reading out: it holds none of the
    claim's role objects, parties or acts, and fewer than two of its values (a cheap test
    before the text's `details`).
    """
    found = set(seq)
    anchors = {i[2] for i in mine.items if i[0] in ("r", "a") and len(i) > 2}
    anchors |= {i[1] for i in mine.items if i[0] == "a" or (i[0] == "r" and len(i) > 2 and i[2] in _SIDES)}
    if found & anchors:
        return True
    numbers = {_number(t) for t in found if t.startswith("m:")} | found
    values = {v for v, _ in said.near | said.worded}
    return len({v for v in values if v in found or _number(v) in numbers}) >= 2


@lru_cache(maxsize=8192)
def rearranged(claim: str, text: str, *, customer: bool = False) -> str:
    """The part of `claim` that `text` places otherwise, in a few words, or ``""``.

    Cached: the trust reader asks it of one claim and each customer message again for every
    business sentence of a turn (`trust.evidence._echo`), which made a long turn's cost grow
    with the square of its messages.

    - ``"a value sits with another subject"``: a value (a measure, a date, "free") sits in
      `text` only among words the claim gives another of its values, never among its own
      ("3% off on Pix" for "5% off on Pix, 3% on boleto"; "R$ 20 para o Sul" for "frete
      grátis para o Sul e R$ 20 para o Nordeste");
    - ``"a role word is turned around"``: an object of the claim's role word sits in `text`
      under a contrary one (`analysis.structure.CONTRARY_ROLES`: to/from, above/below,
      before/after, must/may, if/unless; a list's "and" or "or" against a joining "on" or
      "with": `_EITHER`) and never under the claim's, where the claim does not say both
      itself;
    - ``"the two sides of a comparison are swapped"``: a comparison or a bound between
      tiers keeps its word but its sides trade terms ("Ouro custa mais que o Prata" for
      "Prata custa mais que o Ouro"; "R$ 25 before March 1st and R$ 30 after");
    - ``"another party does it"``: what the claim says one side does (the business: "we",
      "the store"; the customer: "you", "customers") `text` says the other side does, and
      never the claim's side;
    - ``"a value is counted per, or from, another thing"``: `other_basis`;
    - ``"it is said of another place or group"``: `other_place`, or two named places trade
      the words they follow (`_places_traded`);
    - ``"another way or place is named"``: the claim word for word but one role word's
      object, another in its place (`_object_replaced`: "by email" for "by WhatsApp").

    Args:
        claim: the claim's text (description and body), written as the business's.
        text: the text read against it (one sentence, or a message).
        customer: `text` is the customer's: their "you" is the business ("Do you ship
            orders above $50 for free?" asks of "We ship every order above $50 for free").
    """
    body = claim.partition("\n")[2] or claim  # (the first line is the title)
    if _compared_otherwise(tokens(body), tokens(text)):
        return "the two sides of a comparison are swapped"
    if other_basis(claim, text):
        return "a value is counted per, or from, another thing"
    if other_place(claim, text):
        return "it is said of another place or group"
    if _price_moved(details(body), details(text)):
        return "a value sits with another subject"
    if _gives_value_to_another(claim, text):
        return "a value sits with another subject"  # "Standard is $10; express is $25" for "express is $10"
    replaced = "another way or place is named" if _object_replaced(body, text) else ""  # "by email" for
    mine, said = details(claim), details(body)  # "by WhatsApp" (read last: a party replaced is said so)
    if not _may_move(mine, said, tokens(text)):
        return replaced
    theirs = _with_origins(details(text), text)
    mine = _with_origins(mine, claim)
    if _turned_around(mine, theirs, said, body, text) or _turned_in_its_sentence(said, body, theirs, text):
        return "a role word is turned around"
    if _done_by_other_side(mine, theirs, customer=customer):
        return "another party does it"
    if _placed_otherwise(said.near | said.worded, theirs.near | theirs.worded) or _crossed(said.near, theirs.near) \
            or _tiers_swapped(tokens(body), tokens(text)) or _priced_instead(said, theirs):
        return "a value sits with another subject"  # (of the body: a title sums its values up)
    if _placed_otherwise(_by_side(said.parties), _by_side(theirs.parties, customer=customer)):
        return "another party does it"  # two parties trade subjects ("frete troca: pago pelo cliente, ...")
    if _places_traded(body, text):
        return "it is said of another place or group"
    if _payer_swapped(body, text):
        return "another party does it"  # "o IPTU fica por conta do proprietário" for "... pago pelo inquilino"
    return replaced


def _object_replaced(claim: str, text: str) -> bool:
    """True when `text` says `claim` word for word but the object of one of its role words,
    another word in its place that the claim never says ("Send the photo by email" for
    "Send the photo by WhatsApp"; "Enviamos pelos Correios" for "Enviamos por
    transportadora"): every other content word the same on both sides.
    """
    if _ANSWERING.match(fold(text)):
        return False  # "Yes, we deliver to both cities": its words stand for the question's
    mine, theirs = tokens(claim), tokens(text)
    own, said = content_words(mine), content_words(theirs)
    if not own or len(own) != len(said):
        return False
    for at, role in enumerate(mine[:-1]):
        if not role.startswith("r:") or not _is_word(mine[at + 1]):
            continue
        ours = mine[at + 1]
        for k, other in enumerate(theirs[:-1]):
            its = theirs[k + 1]
            if other == role and _is_word(its) and its != ours and ours not in said and its not in own \
                    and own - {ours} == said - {its}:
                return True
    return False


#: A reply's opening yes (folded): what follows may name the question's things in its own words.
_ANSWERING: Final = re.compile(r"^\W*(?:yes|yeah|yep|sure|of course|sim|claro|isso|pode sim|com certeza)\b")


def _is_word(token: str) -> bool:
    """True for a content word or a synonym group ("whatsapp", "s_email"), not a value or role."""
    return plain_word(token) or token.startswith("s_")


def content_words(seq: tuple[str, ...]) -> frozenset[str]:
    """The words and synonym groups of a token sequence (`_is_word`) and its parties: what a
    text says besides its values, roles and poles (`_object_replaced`, `consolidate.merge`).
    """
    return frozenset(t for t in seq if _is_word(t) or t.startswith("w:"))


def charged_on_top(seq: tuple[str, ...]) -> frozenset[str]:
    """The words a token sequence charges apart from a price or on top of it: the word before
    "extra", "à parte", "separately", "additional", "an add-on" (the words of charging between
    them skipped: "ear cleaning costs extra", "os impostos são cobrados à parte"; for "extra"
    and "an add-on", any word a few before: "Insurance is available as an add-on"), and the word
    after "plus" / "mais" ("plus VAT", "mais impostos"). "Is part of", "faz parte do" charge
    nothing. Read by the merge guard (`consolidate.merge`) and the trust gate (`trust.evidence`).
    """
    found: set[str] = set()
    for at, token in enumerate(seq):
        following = seq[at + 1] if at + 1 < len(seq) else ""
        if token in _ON_TOP and plain_word(following):
            found.add(following)
        if token not in _APART or following in _PART_OF:
            continue
        before = at - 1
        while before > 0 and (seq[before] in _CHARGING or seq[before] in _APART):
            before -= 1
        if before >= 0 and plain_word(seq[before]):
            found.add(seq[before])
        if token in _ADD_ON:
            found.update(t for t in seq[max(0, at - _ADD_ON_REACH):at] if plain_word(t))
    return frozenset(found)


#: The words `charged_on_top` reads, as `tokens` writes them: after a thing ("extra", "à parte",
#: "separately", "additional", "an add-on", "on top"), before one ("plus", "mais"), the charging
#: words between a thing and its mark, and "of" after "part".
_APART: Final = frozenset({"add", "added", "extra", "separ", "separately", "part", "apart", "top", "addit",
                           "additional", "adicion", "adicional"})
_ON_TOP: Final = frozenset({"plus", "p:p_more"})
_CHARGING: Final = frozenset({"s_price", "cobr", "charged", "t:past", "billed", "bill"})
_PART_OF: Final = frozenset({"r:of", "r:de"})
#: ... of which those said a few words after their thing, and how many.
_ADD_ON: Final = frozenset({"add", "extra"})
_ADD_ON_REACH: Final = 3


#: A list's words ("and", "or": either of its items) against the words that join one thing
#: to another ("on", "with": both at once): "for members and orders above R$ 99" or "...
#: ou para entregas no Sudeste" is not "for members on orders above R$ 99" or "acima de
#: R$ 199 com entrega no Sudeste". Contrary only where the joining side lists nothing: a
#: text with an "and" of its own may join clauses with it ("Boleto gets 5% off and Pix
#: gets 3%" is no "5% off on Pix"). "And" and "or" are not told apart: a list's "and"
#: often means "or" ("customers 65 and older", "110V e 220V" for "110V ou 220V").
_EITHER: Final = frozenset({"c:and", "c:or"})
_BOTH: Final = frozenset({"r:on", "r:em", "r:with", "r:com"})


#: The two sides of a bound ("until", "below", "before"; "from", "above", "after"): a claim
#: that says both is tiered, each tier under its own bound ("R$ 25 até 1º de março, depois
#: R$ 30", "até 12.000 BTUs R$ 350, acima R$ 480"); a text that names one tier's bound
#: turns nothing around (a tier's value said of another is `_placed_otherwise`'s to find).
_LOW: Final = frozenset({"p:p_before", "p:p_at_most", "p:p_below"})
_HIGH: Final = frozenset({"p:p_after", "p:p_at_least", "p:p_above"})


def _heads(text: str, roles: frozenset[str]) -> dict[str, set[str]]:
    """Each object of `roles` in `text` -> the content words right before its role word."""
    seq = tokens(text)
    found: dict[str, set[str]] = {}
    for at, token in enumerate(seq):
        if token in roles:
            obj, head = next_content(seq, at), previous_content(seq, at)
            if obj is not None and head is not None:
                found.setdefault(obj, set()).add(head)
    return found


def _same_head(claim: str, text: str) -> bool:
    """True when an object the claim lists and the text joins (or the other way round)
    follows the same word in both: "members and orders" / "members on orders", "acima de
    R$ 199 ou para entregas" / "acima de R$ 199 com entrega". Where the words before it
    differ, the two say other things of it ("após a entrega, com reembolso total" / "...
    a devolução, e o reembolso é integral"), not one thing listed or joined.
    """
    for mine, theirs in ((_EITHER, _BOTH), (_BOTH, _EITHER)):
        listed, joined = _heads(claim, mine), _heads(text, theirs)
        if any(listed[obj] & joined[obj] for obj in listed.keys() & joined.keys()):
            return True
    return False


def _lists(found: Details) -> bool:
    return any(i[0] == "r" and i[1] in _EITHER for i in found.items)


def _opposed(role: str, others: set[str]) -> bool:
    """True when one of `others` is contrary to `role`: a list's word against a joining word
    (`_EITHER`, `_BOTH`), or another pair of `analysis.structure.CONTRARY_ROLES`.
    """
    if role in _EITHER:
        return bool(others & _BOTH)
    if role in _BOTH:
        return bool(others & _EITHER)
    return contrasted(role, others - _EITHER - _BOTH)


def _turned(role: str, others: set[str], listed: bool, theirs: Details) -> bool:
    """True when `role` of the claim meets a contrary role among `others` (the text's roles
    on the same object, `_opposed`), a list's word against a joining word only where the
    joining side lists nothing (`listed`: the claim's body lists something).
    """
    if not _opposed(role, others):
        return False
    if role in _EITHER:
        return not others & _EITHER and not _lists(theirs)
    if role in _BOTH:
        return role not in others and not listed
    return True


def _turned_around(mine: Details, theirs: Details, body: Details, body_text: str, text: str) -> bool:
    """True when an object of the claim's role word sits in the text under a contrary role
    and never under the claim's, where the claim does not say both itself (nor is tiered:
    `_LOW`, `_HIGH`). A list against a joining word counts only in the claim's body (a
    title lists its topics: "Gift cards and PayPal" titles what "Gift cards cannot be
    combined with PayPal" joins), never of a value or of what either text negates ("with no
    compensation", "and no compensation"), and only where the same word comes before it in
    both (`_same_head`).
    """
    roles: dict[str, set[str]] = {}
    for item in theirs.items:
        if item[0] == "r" and len(item) > 2 and item[2]:
            roles.setdefault(item[2], set()).add(item[1])
    own: dict[str, set[str]] = {}
    for item in mine.items:
        if item[0] == "r" and len(item) > 2 and item[2]:
            own.setdefault(item[2], set()).add(item[1])
    said = {i[1] for i in mine.items if i[0] == "r"}
    tiered = bool(said & _LOW and said & _HIGH)  # "R$ 25 até 1º de março, depois R$ 30"
    for item in mine.items:
        if item[0] != "r" or len(item) < 3 or item[2] not in roles or (tiered and item[1] in _LOW | _HIGH):
            continue
        if not _turned(item[1], roles[item[2]], _lists(body), theirs) or _opposed(item[1], own[item[2]] - {item[1]}):
            continue  # (the claim says both itself)
        if item[1] not in _EITHER | _BOTH:
            return True
        negated = {t for t, no in mine.polarity | theirs.polarity if no}  # "with no compensation", "and no ..."
        if not item[2].startswith(("m:", "d:")) and item in body.items and item[2] not in negated \
                and _same_head(body_text, text):
            return True  # ("em 03/05, ou seja, 3 de maio": a value is listed or placed, not joined)
    return False


def _turned_in_its_sentence(said: Details, body: str, theirs: Details, text: str) -> bool:
    """True when the claim's body says both sides of a role itself, one in each sentence
    ("from postpaid to prepaid ... online; from prepaid to postpaid ... in a store"), and
    the text turns around the one sentence it shares most words with: the two directions
    trade what they allow ("from prepaid to postpaid can be done online"). The whole body
    says both, so only its sentences one at a time can tell.
    """
    if not _says_both(said):
        return False
    parts = [p for p in _BODY_SENTENCE.split(body) if p.strip()]
    if len(parts) < 2:
        return False
    words = content_terms(text)
    shared = [len(content_terms(p) & words) for p in parts]
    best = max(shared)
    if not best or shared.count(best) > 1:
        return False
    part = parts[shared.index(best)]
    mine = _with_origins(details(part), part)
    return _turned_around(mine, theirs, mine, part, text)


def _says_both(found: Details) -> bool:
    """True when an object of `found` stands under two contrary roles (`_opposed`); the
    bounds of tiers (`_LOW`, `_HIGH`: "até 12.000 BTUs ...; acima de 12.000 BTUs ...") are
    each tier's own, no two sides of one role.
    """
    roles: dict[str, set[str]] = {}
    for item in found.items:
        if item[0] == "r" and len(item) > 2 and item[2] and item[1] not in _LOW | _HIGH:
            roles.setdefault(item[2], set()).add(item[1])
    return any(_opposed(role, others - {role}) for others in roles.values() for role in others)


#: Where a body's sentence ends (". ", "; ", a line end): `_turned_in_its_sentence`.
_BODY_SENTENCE: Final = re.compile(r"(?<=[.!?;])\s+|\n+")


#: Who pays for something, named after it (folded text): "é pago pelo inquilino", "fica por
#: conta do proprietário", "é responsabilidade do locatário", "is paid by the seller", "is the
#: buyer's responsibility", "covered by the insurer"; or before it: "o inquilino paga o IPTU",
#: "the buyer pays (for) return shipping".
_PAID_BY: Final = re.compile(
    r"\b(?:pag[oa]s?|custead[oa]s?|arcad[oa]s?|paid|covered|borne)\s+(?:pel[oa]s?|by)\s+(?:the\s+|o\s+|a\s+)?(\w+)"
    r"|\b(?:por conta|a cargo|(?:de\s+)?responsabilidade)\s+d[oa]s?\s+(\w+)"
    r"|\bthe\s+(\w+)'s\s+responsibility")
_PAYS: Final = re.compile(r"\b(?:o|a|os|as|the)\s+(\w+)\s+(?:paga|pagam|pays|pay)\b")
#: Where a clause of `_payers` ends (before folding: "e", and, is no "é", is).
_PAYER_CLAUSE: Final = re.compile(r"[.;,!?\n]+|\s(?:e|and|mas|but|while|enquanto)\s", re.IGNORECASE)


def _payers(text: str) -> set[tuple[frozenset[str], str]]:
    """``(what is paid for, who pays)`` of each clause of `text` that names a payer
    (`_PAID_BY`, `_PAYS`), as content terms; a negated clause names none ("vc nem paga o
    frete de volta" says who does not).
    """
    found: set[tuple[frozenset[str], str]] = set()
    if _PAYING_HINT.search(text) is None:
        return found  # the common case, read on every sentence the gate reads: no one pays in it
    for clause in map(fold, _PAYER_CLAUSE.split(text)):
        match = _PAID_BY.search(clause) or _PAYS.search(clause)
        if match is None or negation_count(clause):
            continue
        named = next(g for g in match.groups() if g)
        # the business named as such ("a loja paga", "paid by the store") is its party, "we"
        payer = content_terms(named) or frozenset(t for t in tokens(named) if t in _BUSINESS_PARTY)
        thing = content_terms(clause[:match.start()] + " " + clause[match.end():]) - payer - _PAYMENT_TERMS
        if len(payer) == 1 and thing:
            found.add((thing, next(iter(payer))))
    return found


#: What every `_PAID_BY` or `_PAYS` match holds (a cheap test first, on the raw text).
_PAYING_HINT: Final = re.compile(r"(?i)pag|pay|paid|conta|cargo|responsab|responsib|covered|borne|custead|arcad")
#: The party token of the business (`analysis.structure.tokens`: "loja", "store", "we").
_BUSINESS_PARTY: Final = frozenset({"w:we"})
#: The terms of paying itself (not what is paid for).
_PAYMENT_TERMS: Final = frozenset({"s_payment", "s_price", "respons", "cont", "carg", "fic"})


def _payer_swapped(claim: str, text: str) -> bool:
    """True when `text` names another payer for what `claim` says someone pays, and never the
    claim's ("o IPTU fica por conta do proprietário" for "O IPTU é pago pelo inquilino").
    """
    theirs = _payers(text)
    if not theirs:
        return False
    for thing, payer in _payers(claim):
        best = max(len(what & thing) for what, _ in theirs)  # the text's clause most about the claim's thing
        said = {who for what, who in theirs if best and len(what & thing) == best}
        if said and payer not in said:
            return True
    return False


def _done_by_other_side(mine: Details, theirs: Details, *, customer: bool) -> bool:
    """True when what the claim says one side does (an act: no value, not "free"), or what
    a role word gives one side ("paid by the store", "por conta da loja"), the text gives
    the other side, and never the claim's side (`_side`).
    """
    doers: dict[tuple[str, str], set[str]] = {}  # (kind, act or role) -> the text's parties
    for item in theirs.items:
        if item[0] == "a" and item[2]:
            doers.setdefault(("a", item[2]), set()).add(item[1])
        elif item[0] == "r" and len(item) > 2 and _side(item[2], customer=customer):
            doers.setdefault(("r", item[1]), set()).add(item[2])
    for item in mine.items:
        if item[0] == "a" and item[2] and not item[2].startswith(("m:", "d:")) and item[2] not in VALUE_WORDS:
            party, key = item[1], ("a", item[2])  # ("passengers at no cost" / "ourselves at no cost": no act)
        elif item[0] == "r" and len(item) > 2 and item[1].startswith("r:") and (item[2], True) not in mine.polarity:
            party, key = item[2], ("r", item[1])  # (not "não da empresa": what it is not given to)
        else:
            continue
        side = _side(party)
        sides = {_side(o, customer=customer) for o in doers.get(key, ())}
        if side and side not in sides and any(o and o != side for o in sides):
            return True
    return False
