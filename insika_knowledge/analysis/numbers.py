"""Numbers and numeric ranges as index terms, so "CEP 13050-000" finds "CEPs 13000-13999".

A concept that states a range (``13000-13999``, ``13xxx``, ``acima de R$ 199``,
``orders over $50``, ``1-2 dias``) is indexed under *block terms*: the range is cut
into decimal-aligned blocks (like CIDR blocks, in base 10), each named by its kind,
digit count and shared prefix — ``[13000, 13999]`` of CEPs is the one block
``zcep5_13``; ``over $50`` is ``zmoney2_51 .. zmoney2_59, zmoney2_6 .. zmoney7_9``.
A number in a message is indexed under every prefix of its digits (``13050`` ->
``zcep5_``, ``zcep5_1``, ... ``zcep5_13050``). A number falls inside a range exactly
when one of its prefix terms equals one of the range's block terms, so plain term
matching (Scan's sets, FTS5's postings) does range matching with no special case.

Kinds: ``cep`` (Brazilian postal codes, compared by their 5-digit prefix), ``money``
(a currency sign or word next to the number), ``num`` (anything else).

The numeric-term format (``z<kind><width>_<digits>``) is owned here: `numeric_term` makes
one and `is_numeric_term` tells one from a word's term, so no caller tests a prefix.

`quantities` reads what a statement asserts with numbers (each value with its currency
and unit), for the same-claim check of consolidation.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Final

#: Open-ended ranges ("over $50") stop here: 10 million for money and plain numbers.
OPEN_END: Final = 10_000_000
CEP_WIDTH: Final = 5
#: The currency signs before an amount, folded ("r$", "us$", "ca$"...): `CURRENCIES`' keys.
_SIGNS: Final = r"r\$|us\$|(?<![a-z])(?:ca|c|au|nz|mx)\$|\$|€|£"
_CUR: Final = rf"(?:{_SIGNS})"
_NUM: Final = r"\d{1,3}(?:[.,]\d{3})+(?:[.,]\d{1,2})?|\d+(?:[.,]\d{1,2})?"
_CUR_WORDS: Final = r"(?:reais|real|dollars?|dolares|bucks?|usd|brl|eur|euros?)"

_CEP_RE: Final = re.compile(r"(?<![\d.,])(\d{5})-(\d{3})(?![\d-])")
_CEP_RANGE_RE: Final = re.compile(
    r"(?<![\d.,])(\d{5})(?:-\d{3})?\s*(?:-|–|a|ate|to|until)\s*(\d{5})(?:-\d{3})?(?![\d.,])"
)
_CEP_WILDCARD_RE: Final = re.compile(r"(?<![\d])(\d{1,4})(x{1,4})(?![a-z0-9])")
_ABOVE_RE: Final = re.compile(
    rf"(?:acima de|mais de|superior a|maior que|over|above|more than|greater than|exceeding)"
    rf"\s*({_CUR})?\s*({_NUM})\s*({_CUR_WORDS})?"
)
_FROM_RE: Final = re.compile(
    rf"(?:a partir de|pelo menos|no minimo|at least|from|starting at|minimum(?: of)?)"
    rf"\s*({_CUR})?\s*({_NUM})\s*({_CUR_WORDS})?(?!\s*(?:-|–|a|to|ate)\s*\d)"
)
_BELOW_RE: Final = re.compile(
    rf"(?:abaixo de|menos de|inferior a|menor que|under|below|less than)"
    rf"\s*({_CUR})?\s*({_NUM})\s*({_CUR_WORDS})?"
)
_UPTO_RE: Final = re.compile(
    rf"(?:ate|up to|no more than|at most|maximum(?: of)?|within)\s*({_CUR})?\s*({_NUM})\s*({_CUR_WORDS})?"
)
_SPAN_RE: Final = re.compile(
    rf"(?:entre\s+|between\s+)?({_CUR})?\s*(?<![\w.,])({_NUM})\s*(?:-|–|a|e|and|to|ate)\s*({_CUR})?\s*({_NUM})(?![\w])"
    rf"\s*({_CUR_WORDS})?"
)
_VALUE_RE: Final = re.compile(rf"({_CUR})?\s*(?<![\w.,])({_NUM})(?![\w])\s*({_CUR_WORDS})?")
_ANY_DIGIT_RE: Final = re.compile(r"\d+")
_CEP_CONTEXT_RE: Final = re.compile(r"\b(?:cep|ceps|zip|postal)\b")
#: Words that name what the number after them identifies (an order, a flight, a product):
#: the number is a name, not an amount ("my order number is 5520" is in no "over $50").
_NAMED_BY_RE: Final = re.compile(
    r"\b(?:pedido|pedidos|order|orders|flight|voo|protocolo|protocol|ticket|chamado|reserva|reservation"
    r"|booking|produto|product|sku|codigo|code|id|nota fiscal|invoice|rastreio|tracking)"
    r"(?:\s+(?:number|numero|no|id|code|codigo)(?:\s*(?:is|e|eh|:))?|\s*#|\s+n[o.]\.?)?\s*$")
_GROUPED_RE: Final = re.compile(r"(\d{1,3}(?:[.,]\d{3})+)(?:[.,](\d{1,2}))?")

#: The kinds a numeric term can have.
KINDS: Final[tuple[str, ...]] = ("cep", "money", "num")
_NUMERIC_TERM_RE: Final = re.compile(r"z(?:cep|money|num)[1-9]\d*_\d*")


def numeric_term(kind: str, width: int, digits: str) -> str:
    """The term of the numbers of `kind` with `width` digits that start with `digits`.

    ``numeric_term("cep", 5, "13")`` -> ``"zcep5_13"`` (every CEP 13000-13999).
    """
    return f"z{kind}{width}_{digits}"


def is_numeric_term(term: str) -> bool:
    """True when `term` is a numeric term (a range block or a number's prefix).

    Word terms never are, whatever letter they start with (``"zona"``, ``"zero"``):
    a word's term has no ``_``, and a synonym group's term starts with ``s_``.
    """
    return _NUMERIC_TERM_RE.fullmatch(term) is not None


#: Numbers with more digits than this are not numbers a range is about (ids, hashes).
MAX_DIGITS: Final = 15


def to_int(raw: str) -> int | None:
    """Parse ``"1.250,00"``, ``"1,250.00"``, ``"199,90"``, ``"80"`` to a whole number (floor).

    None when it is not a number or has more than `MAX_DIGITS` digits.
    """
    if sum(c.isdigit() for c in raw) > MAX_DIGITS:
        return None
    try:
        return int(Decimal(_decimal_text(raw)))
    except (InvalidOperation, ValueError):
        return None


def parse_decimal(raw: str) -> Decimal | None:
    """Parse ``"1.250,00"``, ``"1,250.00"``, ``"199,90"``, ``"4"`` to its exact value.

    Returns:
        The value, normalised (``Decimal("199.9")``, ``Decimal("1.25E+3")``), or None when
        `raw` is not a number.
    """
    try:
        return Decimal(_decimal_text(raw)).normalize()
    except (InvalidOperation, ValueError):
        return None


def _decimal_text(raw: str) -> str:
    """`raw` in Python's notation: thousands groups joined, the decimal mark a ``.``."""
    grouped = _GROUPED_RE.fullmatch(raw)
    if grouped is None:
        return raw.replace(",", ".")
    text = re.sub(r"[.,]", "", grouped.group(1))
    return f"{text}.{grouped.group(2)}" if grouped.group(2) else text


def blocks(lo: int, hi: int, kind: str) -> list[str]:
    """Block terms covering the integers ``lo..hi`` (inclusive) of `kind`.

    CEPs are fixed-width 5-digit prefixes (leading zeros kept); other kinds group
    numbers by digit count first.
    """
    if lo > hi:
        return []
    if kind == "cep":
        return _cover(max(lo, 0), min(hi, 10**CEP_WIDTH - 1), CEP_WIDTH, kind)
    out: list[str] = []
    lo, hi = max(lo, 0), min(hi, OPEN_END)
    for width in range(len(str(lo)), len(str(hi)) + 1):
        start = max(lo, 10 ** (width - 1) if width > 1 else 0)
        end = min(hi, 10**width - 1)
        out += _cover(start, end, width, kind)
    return out


def _cover(lo: int, hi: int, width: int, kind: str) -> list[str]:
    out = []
    while lo <= hi:
        size = 0
        while size < width and lo % 10 ** (size + 1) == 0 and lo + 10 ** (size + 1) - 1 <= hi:
            size += 1
        prefix = str(lo).zfill(width)[: width - size]
        out.append(numeric_term(kind, width, prefix))
        lo += 10**size
    return out


def prefixes(value: int, kind: str) -> list[str]:
    """Every prefix term of one number (what a message carrying it is indexed under)."""
    digits = str(value).zfill(CEP_WIDTH) if kind == "cep" else str(value)
    width = len(digits)
    return [numeric_term(kind, width, digits[:i]) for i in range(width + 1)]


def _kind(currency: str | None, word: str | None, default: str = "num") -> str:
    return "money" if currency or word else default


def range_terms(folded: str) -> list[str]:
    """Block terms for every range a concept's (case- and accent-folded) text states.

    Only the stretches around numbers are read (a range always has a digit, and its
    words sit within a few dozen characters of it), so long texts cost little.
    """
    out: list[str] = []
    for window in _windows(folded):
        out += _range_terms(window)
    return out


def _windows(folded: str, before: int = 40, after: int = 60) -> list[str]:
    spans: list[list[int]] = []
    for match in _ANY_DIGIT_RE.finditer(folded):
        start, end = max(0, match.start() - before), match.end() + after
        start = folded.rfind(" ", 0, start) + 1 if start else 0  # never cut a word in two
        space = folded.find(" ", end)
        end = len(folded) if space < 0 else space
        if spans and start <= spans[-1][1]:
            spans[-1][1] = max(spans[-1][1], end)
        else:
            spans.append([start, end])
    return [folded[a:b] for a, b in spans]


def _range_terms(folded: str) -> list[str]:
    out: list[str] = []
    taken: list[tuple[int, int]] = []

    def free(match: re.Match[str]) -> bool:
        span = match.span()
        if any(a < span[1] and span[0] < b for a, b in taken):
            return False
        taken.append(span)
        return True

    for m in _CEP_RANGE_RE.finditer(folded):
        lo, hi = int(m.group(1)), int(m.group(2))  # five digits each
        if lo < hi and free(m):
            out += blocks(lo, hi, "cep")
    for m in _CEP_WILDCARD_RE.finditer(folded):
        head, xs = m.group(1), m.group(2)
        if len(head) + len(xs) == CEP_WIDTH and free(m):
            out += blocks(int(head) * 10 ** len(xs), (int(head) + 1) * 10 ** len(xs) - 1, "cep")
    for m in _CEP_RE.finditer(folded):
        if free(m):
            out += prefixes(int(m.group(1)), "cep")[-1:]
    bounded = [(_ABOVE_RE, 1, None), (_FROM_RE, 0, None), (_BELOW_RE, None, -1), (_UPTO_RE, None, 0)]
    for pattern, low_shift, high_shift in bounded:
        for m in pattern.finditer(folded):
            value = to_int(m.group(2))
            if value is None or not free(m):
                continue
            kinds = {_kind(m.group(1), m.group(3))}
            if "money" not in kinds:
                kinds.add("money")  # "orders over 50": the unit is usually money in support text
            for kind in kinds:
                if low_shift is not None:
                    out += blocks(value + low_shift, OPEN_END, kind)
                else:
                    out += blocks(0, value + (high_shift or 0), kind)
    for m in _SPAN_RE.finditer(folded):
        first, last = to_int(m.group(2)), to_int(m.group(4))
        if first is None or last is None or first >= last or not free(m):
            continue
        out += blocks(first, last, _kind(m.group(1) or m.group(3), m.group(5)))
    return out


def query_terms(folded: str) -> list[str]:
    """Prefix terms for every number a message (case- and accent-folded) carries."""
    out: list[str] = []
    if _ANY_DIGIT_RE.search(folded) is None:  # every number pattern holds a digit
        return out
    ceps: set[tuple[int, int]] = set()
    for m in _CEP_RE.finditer(folded):
        ceps.add(m.span())
        out += prefixes(int(m.group(1)), "cep")
    cep_context = _CEP_CONTEXT_RE.search(folded) is not None
    for m in _VALUE_RE.finditer(folded):
        start, end = m.span(2)
        if any(a <= start < b for a, b in ceps):
            continue
        value = to_int(m.group(2))
        if value is None or (not m.group(1) and not m.group(3) and _NAMED_BY_RE.search(folded, 0, start)):
            continue  # "pedido 13250", "flight 4471": an identifier is in no range
        digits = re.sub(r"\D", "", m.group(2))
        if cep_context and len(digits) == CEP_WIDTH and not m.group(1):
            out += prefixes(value, "cep")
        kind = _kind(m.group(1), m.group(3))
        out += prefixes(value, kind)
        if kind == "num":  # "my order came to 80": a bare amount is often money
            out += prefixes(value, "money")
    return out


# ----------------------------------------------------------------------------- quantities

_QUANTITY_RE: Final = re.compile(
    r"(?P<cur>" + _SIGNS + r")?\s?(?P<num>\d{1,3}(?:[.,]\d{3})+(?:[.,]\d{1,2})?|\d+(?:[.,]\d+)?)"
    r"\s?(?P<unit>%|[a-z]+)?"
)
#: Folded unit words -> their canonical unit (also the unit of a `Measure`).
#: Currency codes written after an amount besides reais, dollars and euros (`UNITS`).
_OTHER_CURRENCIES: Final = ("gbp", "cad", "aud", "nzd", "chf", "jpy", "mxn", "ars", "clp", "cop", "pen", "uyu")
UNITS: Final[dict[str, str]] = {
    **dict.fromkeys(["h", "hr", "hrs", "hour", "hours", "hora", "horas"], "hour"),
    **dict.fromkeys(["min", "mins", "minute", "minutes", "minuto", "minutos"], "minute"),
    **dict.fromkeys(["d", "day", "days", "dia", "dias"], "day"),
    **dict.fromkeys(["night", "nights", "noite", "noites", "diaria", "diarias"], "night"),
    **dict.fromkeys(["week", "weeks", "semana", "semanas"], "week"),
    **dict.fromkeys(["month", "months", "mes", "meses"], "month"),
    **dict.fromkeys(["year", "years", "ano", "anos"], "year"),
    **dict.fromkeys(["am"], "am"),
    **dict.fromkeys(["pm"], "pm"),
    **dict.fromkeys(["unit", "units", "unidade", "unidades", "un", "pcs", "pieces", "pecas",
                     "item", "items", "itens"], "unit"),
    **dict.fromkeys(["time", "times", "vez", "vezes", "x", "parcela", "parcelas", "installment", "installments"],
                    "times"),  # "10x sem juros", "2x/year", "em 10 parcelas": "10x"
    **dict.fromkeys(["people", "persons", "person", "pessoa", "pessoas", "passenger",
                     "passengers", "passageiro", "passageiros", "guest", "guests", "hospede",
                     "hospedes"], "person"),
    **dict.fromkeys(["%", "percent", "pct", "porcento"], "%"),
    **dict.fromkeys(["tonelada", "toneladas", "tonne", "tonnes"], "t"),  # metric: "2 toneladas" is "2.000 kg"
    **dict.fromkeys(["kg", "kilo", "kilos", "quilo", "quilos", "kilograms", "quilogramas"], "kg"),
    **dict.fromkeys(["g", "grams", "gramas"], "g"),
    **dict.fromkeys(["lb", "lbs", "pound", "pounds", "libra", "libras"], "lb"),
    **dict.fromkeys(["km", "kms", "kilometers", "kilometres", "quilometros"], "km"),
    **dict.fromkeys(["m", "meters", "metres", "metro", "metros"], "m"),
    **dict.fromkeys(["cm"], "cm"),
    **dict.fromkeys(["mm"], "mm"),
    **dict.fromkeys(["mi", "mile", "miles", "milha", "milhas"], "mile"),
    **dict.fromkeys(["inch", "inches", "polegada", "polegadas"], "inch"),
    **dict.fromkeys(["ft", "foot", "feet"], "ft"),
    **dict.fromkeys(["bag", "bags", "mala", "malas", "bagagem", "bagagens"], "bag"),
    **dict.fromkeys(["gb", "gigabyte", "gigabytes", "giga", "gigas"], "gb"),  # a data plan's allowance
    **dict.fromkeys(["mb", "megabyte", "megabytes"], "mb"),
    **dict.fromkeys(["kb", "kilobyte", "kilobytes"], "kb"),
    **dict.fromkeys(["tb", "terabyte", "terabytes"], "tb"),
    **dict.fromkeys(["reais", "real", "brl"], "brl"),
    **dict.fromkeys(["dollars", "dollar", "usd", "dolares", "dolar", "bucks", "buck"], "usd"),
    **dict.fromkeys(["euros", "euro", "eur"], "eur"),
    # the codes of other currencies a business quotes in ("120 CAD"); "pounds" is a weight above
    **{code: code for code in _OTHER_CURRENCIES},
}
#: Currency signs -> their currency.
CURRENCIES: Final[dict[str, str]] = {"r$": "brl", "us$": "usd", "$": "usd", "€": "eur", "£": "gbp",
                                     "ca$": "cad", "c$": "cad", "au$": "aud", "nz$": "nzd", "mx$": "mxn"}
#: Every currency a value's unit may be (`UNITS`' and `CURRENCIES`'): an amount of money.
CURRENCY_UNITS: Final = frozenset(CURRENCIES.values()) | {"brl", "usd", "eur"} | frozenset(_OTHER_CURRENCIES)


@dataclass(frozen=True, slots=True)
class Quantity:
    """One number a statement asserts, with what it counts.

    Attributes:
        value: the exact value (`parse_decimal`), e.g. ``Decimal("1.25E+3")`` for ``1.250,00``.
        currency: the currency of a sign before it (``brl`` for ``R$``), or None.
        unit: the canonical unit of the word after it (`UNITS`: ``hour``, ``day``, ``%``,
            ``brl``...), or None.
    """

    value: Decimal
    currency: str | None
    unit: str | None


def quantities(folded: str) -> list[Quantity]:
    """Every number of case- and accent-folded text, in order, with currency and unit.

    ``"r$ 1.250,00 em 3 dias"`` -> ``[Quantity(1.25E+3, "brl", None), Quantity(3, None, "day")]``.
    A word after a number that is no known unit leaves `unit` None.
    """
    out: list[Quantity] = []
    for match in _QUANTITY_RE.finditer(folded):
        value = parse_decimal(match.group("num"))
        if value is None:  # the pattern only matches digits with one kind of mark: never
            continue
        currency = CURRENCIES[match.group("cur")] if match.group("cur") else None
        out.append(Quantity(value, currency, UNITS.get(match.group("unit") or "")))
    return out


# ----------------------------------------------------------------------------- number words

#: Folded number words (English and Portuguese) -> their value. ``um``/``uma`` are read as
#: 1 only where they count something (see `read_number_words`); elsewhere they are articles.
NUMBER_WORDS: Final[dict[str, int]] = {
    **{w: i for i, w in enumerate(
        "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
        "fifteen sixteen seventeen eighteen nineteen".split())},
    **{w: 10 * i for i, w in enumerate("twenty thirty forty fifty sixty seventy eighty ninety".split(), 2)},
    "zero": 0, "um": 1, "uma": 1, "dois": 2, "duas": 2, "tres": 3, "quatro": 4, "cinco": 5,
    "seis": 6, "sete": 7, "oito": 8, "nove": 9, "dez": 10, "onze": 11, "doze": 12, "treze": 13,
    "catorze": 14, "quatorze": 14, "quinze": 15, "dezesseis": 16, "dezasseis": 16,
    "dezessete": 17, "dezassete": 17, "dezoito": 18, "dezenove": 19, "dezanove": 19,
    **{w: 10 * i for i, w in enumerate(
        "vinte trinta quarenta cinquenta sessenta setenta oitenta noventa".split(), 2)},
    "cem": 100, "cento": 100,
    **{f"{w}{g}": 100 * i for i, w in enumerate(
        "duzent trezent quatrocent quinhent seiscent setecent oitocent novecent".split(), 2)
       for g in ("os", "as")},
    "hundred": 100, "thousand": 1000, "mil": 1000,
}
#: Words that multiply what comes before them (``two hundred``, ``dois mil``).
_MULTIPLIERS: Final[dict[str, int]] = {"hundred": 100, "thousand": 1000, "mil": 1000}
#: Words that join the parts of one number (``vinte e quatro``, ``one hundred and five``).
_JOINERS: Final = frozenset({"e", "and"})
#: Articles and pronouns that are also the number 1 (``one of them``, ``um pedido``).
_ARTICLES: Final = frozenset({"um", "uma", "one"})
#: Folded words after which ``one`` is a pronoun (``the one``, ``no one``, ``each one``).
_PRONOUN_CONTEXT: Final = frozenset("the no any each every this that which someone".split())
#: Folded words after ``one`` that make it a pronoun (``one of``, ``one to a card``).
_PRONOUN_NEXT: Final = frozenset(
    "of to and or that which who with for from at in on by is was are were can may must "
    "another other".split()
)
#: Folded words after which ``um``/``uma`` is a count, not an article.
_COUNT_CONTEXT: Final = frozenset(
    "maximo minimo apenas somente so ate exatamente mais menos".split()
)
_WORD_TOKEN_RE: Final = re.compile(r"[a-z]+|[^a-z]+")
#: Folded ordinal words -> their number, written as Portuguese writes "5º" ("5o"), so "the
#: fifth", "the 5th", "o quinto" and "o 5º" read alike. Left out: "first"/"second" and
#: "primeiro"/"segundo" (also "first purchase", "per second", "segundo o contrato") and the
#: feminine "quinta"/"sexta" (weekdays).
ORDINAL_WORDS: Final[dict[str, int]] = {
    **{w: i for i, w in enumerate(
        "third fourth fifth sixth seventh eighth ninth tenth eleventh twelfth".split(), 3)},
    "twentieth": 20, "thirtieth": 30,
    "terceiro": 3, "terceira": 3, "quinto": 5, "sexto": 6, "setimo": 7, "setima": 7, "oitavo": 8,
    "oitava": 8, "nono": 9, "nona": 9, "decimo": 10, "decima": 10,
}
_ORDINAL_WORDS_RE: Final = re.compile(rf"\b(?:{'|'.join(ORDINAL_WORDS)})\b")
#: Spans said in words, as the units they are: "a year and a half" is 18 months, "um quarto
#: de hora" 15 minutes.
_SPOKEN_SPANS: Final[dict[str, str]] = {
    "a year and a half": "18 months", "one year and a half": "18 months", "um ano e meio": "18 meses",
    "an hour and a half": "90 minutes", "one hour and a half": "90 minutes", "uma hora e meia": "90 minutos",
    "a quarter of an hour": "15 minutes", "um quarto de hora": "15 minutos",
    "a month and a half": "45 days", "um mes e meio": "45 dias",
}
_SPOKEN_SPAN_RE: Final = re.compile(r"\b(?:" + "|".join(map(re.escape, _SPOKEN_SPANS)) + r")\b")
#: A value changed from one number to another ("the warranty goes from 12 to 24 months", "a
#: mensalidade passa de R$ 109,90 para R$ 119,90"): what it is now is the second, and the
#: two are no range; the old value is left out (a claim of the new value restates it).
_CHANGED_FROM_RE: Final = re.compile(
    r"\b(?P<verb>goes|go|went|gone|going|rises|rise|rising|rose|increases|increased|increasing|drops|dropped"
    r"|falls|fell|changes|changed|changing|moves|moved|jumps|jumped|passa|passam|passando|passou|passara|sobe"
    r"|sobem|subiu|subindo|cai|caiu|caindo|vai|vao|aumenta|aumentou|aumentando|muda|mudou|mudando"
    r"|extends|extend|extended|extending|estende|estendida|estendido|prorroga|prorrogada|amplia|ampliada"
    r"|reduces|reduced|reduz|reduzida|reduzido|raises|raised|lowers|lowered)"
    r"(?P<mid>(?: [a-z]+){0,3}?) (?:from|de|do|da) (?:[a-z]{0,2}\$ ?)?\d[\d.,]*(?: ?(?:%|[a-z]+))?"
    r" (?P<to>to|para|pra|pro)\b"
    r"(?= (?:[a-z]{0,2}\$ ?)?\d)")
#: A third party, no ordinal: "a third party", "third-party", "um terceiro pode retirar", "por
#: terceiro" (not "o terceiro dia", "a terceira parcela": an ordinal before what it counts).
_THIRD_PARTY_RE: Final = re.compile(
    r"\bthird[- ]part(?:y|ies)\b|\b((?:um|uma|por|para|outro|outra|com|de) )terceir[oa]\b"
    r"(?! (?:dia|mes|ano|andar|lugar|item|pedido|parcela|vez|semana|hora|mensalidade|produto|unidade)s?\b)")
#: An English ordinal's letters after its digits ("5th", "1st", "22nd").
_ORDINAL_SUFFIX_RE: Final = re.compile(r"\b(\d{1,3})(?:st|nd|rd|th)\b")
_PERCENT_WORDS_RE: Final = re.compile(r"\bpor\s+cento\b|\bper\s+cent\b")


#: A fraction as the percent it is (two decimals), so "a third", "one-third", "um terço",
#: "1/3 of" and "33,33%" read alike, and "half" and "metade" are "50%".
_FRACTION_PERCENT: Final[dict[tuple[int, int], str]] = {
    (1, 2): "50", (1, 3): "33.33", (2, 3): "66.67", (1, 4): "25", (3, 4): "75"}
_FRACTION_NUMERATORS: Final = {"a": 1, "one": 1, "two": 2, "three": 3, "um": 1, "uma": 1, "dois": 2, "duas": 2}
_FRACTION_DENOMINATORS: Final = {"half": 2, "halves": 2, "third": 3, "thirds": 3, "quarter": 4, "quarters": 4,
                                 "terco": 3, "tercos": 3}
#: A fraction in words before what it is a fraction of ("one-third of", "a third of", "um
#: terço da") or before "off" ("a quarter off", a discount; not "get a third free", "a
#: quarter", a coin, nor "the third", an ordinal),
#: "half" and "metade" alone ("half the fee", "pay half", "a metade do valor"; not "half an
#: hour", "half past", "a half-day tour"), and a slashed one in digits
#: before what it is a fraction of ("1/3 of the daily rate", "1/2 da diária"; a slashed pair
#: elsewhere may be a date).
_FRACTION_RE: Final = re.compile(
    r"\b(?P<n>a|one|two|three|um|uma|dois|duas)[- ](?P<d>half|halves|thirds?|quarters?|tercos?)\b"
    r"(?= (?:of|da|do|das|dos|de|off)\b)"
    r"|\b(?P<half>half|metade)\b(?![- ](?:an?\b|past|hour|day|dozen|time|board|year|month|week|term))"
    r"|(?<![\d/])\b(?P<dn>[123])/(?P<dd>[234])\b(?![/\d])(?= (?:of|da|do|das|dos|de (?:a|o|um|uma)|daily|diaria)\b)")


#: Half price in Portuguese: "meia-entrada", "paga meia" (not "meia hora", "meia-noite",
#: read before, nor a sock): 50 %.
_MEIA_RE: Final = re.compile(r"\bmeia(?=[- ]entradas?\b)|(?:(?<=\bpaga )|(?<=\bpagam )|(?<=\bpagar ))meia\b")


#: Some text every `_FRACTION_RE` match holds (a cheap test first).
_FRACTION_HINTS: Final = ("half", "metade", "third", "terco", "quarter", "/")


def _fraction(match: re.Match[str]) -> str:
    if match["half"]:  # "half the fee" is "50% of the fee"
        return "50% of" if match["half"] == "half" and match.string.startswith(" the ", match.end()) else "50%"
    if match["dn"]:
        key = (int(match["dn"]), int(match["dd"]))
    else:
        key = (_FRACTION_NUMERATORS[match["n"]], _FRACTION_DENOMINATORS[match["d"]])
        if match["d"] in ("terco", "tercos") and match["n"] not in ("um", "dois"):
            return match.group(0)
    percent = _FRACTION_PERCENT.get(key)
    return match.group(0) if percent is None else f"{percent}%"


def _place(value: int) -> int:
    """The place a number word fills: 1 for 1-19, 10 for tens, 100 for hundreds..."""
    for place in (1000, 100, 10):
        if value >= place and value % place == 0 and value > 10:
            return place
    return 1


def read_number_words(folded: str) -> str:
    """`folded` text with its number words written in digits.

    ``"vinte e quatro meses"`` -> ``"24 meses"``, ``"one hour"`` -> ``"1 hour"``,
    ``"seven business days"`` -> ``"7 business days"``.
    English and Portuguese (`NUMBER_WORDS`). Parts join into one number only when each
    fills a smaller place than the one before (``twenty-four`` is 24, ``dois e três`` stays
    2 and 3); ``hundred``/``thousand``/``mil`` multiply. The Portuguese articles ``um`` and
    ``uma`` are read as 1 only before a unit word (`UNITS`) or after a limit word
    (``no máximo um``) or as the first end of a range (``um a dois dias``, ``one to two
    days``); English ``one`` is read as 1 unless it is a pronoun (``the one``, ``one of``,
    ``one to a card and another``); elsewhere they stay words.
    ``por cento`` becomes ``%``, and a fraction the percent it is (`_FRACTION_RE`:
    ``"a third"`` -> ``"33.33%"``, ``"metade"`` -> ``"50%"``); "a" / "an" before a unit of
    time after a word of a span is 1 (`_A_SPAN_RE`: ``"within a week"`` -> ``"within 1
    week"``; ``"$10 a week"`` stays); two numbers joined by "or" before one unit each take
    it (``"30 or 14 days"`` -> ``"30 days or 14 days"``).

    Args:
        folded: case- and accent-folded text (`analysis.text.fold`).

    Returns:
        The text with each number-word run replaced by its digits; everything else as it was.
    """
    folded = _PERCENT_WORDS_RE.sub("%", folded)
    if " e mei" in folded or " and a half" in folded or "quart" in folded:  # "um ano e meio": 18 meses
        folded = _SPOKEN_SPAN_RE.sub(lambda m: _SPOKEN_SPANS[m[0]], folded)
    if "dozen" in folded or "duzia" in folded:
        folded = _DOZEN_RE.sub(_dozens, folded)
    if "half" in folded or "meia" in folded:
        folded = _HALF_HOURS_RE.sub(_half_hours, folded)
        folded = _MEIA_RE.sub("50%", folded)
    if any(w in folded for w in _FRACTION_HINTS):
        folded = _FRACTION_RE.sub(_fraction, folded)
    if " a" in folded:
        folded = _A_SPAN_RE.sub(r"\g<lead> 1 \g<unit>", folded)
    folded = _thousands(folded)  # before "mil" alone is read as 1000 (Portuguese: "mil e cinquenta")
    portuguese = "mil" in folded and ("r$" in folded or _PORTUGUESE_HINT.search(folded) is not None)
    if "terceir" in folded or "third" in folded:  # "um terceiro pode retirar", "a third party": a person
        folded = _THIRD_PARTY_RE.sub(lambda m: "thirdparty" if m[0].startswith("third") else f"{m[1]}terceiroparte",
                                     folded)
    folded = _ORDINAL_WORDS_RE.sub(lambda m: f"{ORDINAL_WORDS[m.group(0)]}o", folded)
    folded = _ORDINAL_SUFFIX_RE.sub(r"\1o", folded)
    tokens = _WORD_TOKEN_RE.findall(folded)
    out: list[str] = []
    i = 0
    while i < len(tokens):
        token = tokens[i]
        if token not in NUMBER_WORDS or (token in _MULTIPLIERS and (
                token != "mil" or not portuguese or "".join(out[-2:]).rstrip()[-1:].isdigit())):
            out.append(token)
            i += 1
            continue
        end, value = _number_run(tokens, i)
        if end == i + 1 and token in _ARTICLES and not _counts(tokens, i):
            out.append(token)
        else:
            out.append(str(value))
        i = end
    joined = "".join(out)
    if " or " in joined or " ou " in joined:
        joined = _EITHER_UNIT_RE.sub(_either_unit, joined)
    if " from " in joined or " de " in joined:  # "goes from 12 to 24 months": 24 months, no range
        joined = _CHANGED_FROM_RE.sub(r"\g<verb>\g<mid> \g<to> ", joined)
    if "primeir" in joined or "ultim" in joined:  # "as 2 primeiras horas" are "as primeiras 2 horas"
        joined = _COUNT_BEFORE_PLACE_RE.sub(r"\g<place> \g<count> ", joined)
    return _spoken_cents(joined)


#: A count before "primeiras" / "últimas" and its unit ("as 2 primeiras horas"): said after it too.
_COUNT_BEFORE_PLACE_RE: Final = re.compile(r"\b(?P<count>\d+) (?P<place>primeir[oa]s|ultim[oa]s) (?=[a-z])")


#: A price said aloud in reais and centavos: "29 reais e 90 centavos", and after a word of
#: price, "custa 29 e 90" (Brazilian speech for R$ 29,90; digits as `read_number_words` writes them).
_REAIS_CENTAVOS_RE: Final = re.compile(r"\b(\d{1,6}) reais e (\d{2}) centavos\b")
_PRICE_CENTS_RE: Final = re.compile(
    r"\b(custa|custam|sai por|sai a|fica em|por apenas|valor de|preco de|taxa de|frete de|cobramos|e de)"
    r" (\d{1,6}) e (\d{2})\b(?! ?(?:%|(?:dias?|horas?|mes|meses|anos?|semanas?|minutos?|kg|km|g|cm|m|vezes|x"
    r"|pessoas|unidades|itens|parcelas)\b))")


#: Centavos alone ("50 centavos"; not "50 centavos de dólar"), after a sum in reais read
#: before ("R$ 4 e 50 centavos", "1 real e 50 centavos": `_REAIS_AND_CENTAVOS_RE`).
_CENTS_RE: Final = re.compile(r"(?<![\d.,])(?<!\be )(\d{1,2}) centavos\b(?! de (?:dolar|dolares|euro|euros)\b)")
_REAIS_AND_CENTAVOS_RE: Final = re.compile(r"(?:r\$ ?(\d{1,6})|\b(\d{1,6}) real) e (\d{2}) centavos\b")
#: Another currency named in the text: its centavos are not reais.
_OTHER_CURRENCY: Final = re.compile(r"us\$|€|£|\b(?:dolar|dolares|dollars?|euros?|usd|eur)\b")


#: "30 or 14 days", "5 ou 7 dias úteis", "5 or 10%": two numbers with one unit after the
#: second, each of that unit ("30 days or 14 days"; `read_number_words`).
_EITHER_UNIT_RE: Final = re.compile(
    r"(?<![\d.,])(?P<a>\d+(?:[.,]\d+)?)\s+(?P<or>or|ou)\s+(?P<b>\d+(?:[.,]\d+)?)\s*"
    r"(?P<unit>%|(?:(?:business|working|calendar)\s+)?(?:"
    + "|".join(sorted((re.escape(u) for u in UNITS if len(u) > 1 and u.isalpha()), key=len, reverse=True))
    + r")(?:\s+(?:uteis|corridos))?\b)")


def _either_unit(match: re.Match[str]) -> str:
    """An `_EITHER_UNIT_RE` match with its unit after each number ("5% or 10%")."""
    unit = match["unit"] if match["unit"] == "%" else f" {match['unit']}"
    return f"{match['a']}{unit} {match['or']} {match['b']}{unit}"


def _spoken_cents(text: str) -> str:
    """`text` with prices said in reais and centavos written as ``r$ 29,90``, and centavos
    alone as the fraction of a real they are (``50 centavos`` -> ``r$ 0,50``) unless the
    text names another currency (English "cents" may be a euro's: left as written).
    """
    if " e " in text:
        text = _REAIS_CENTAVOS_RE.sub(r"r$ \1,\2", text)
        text = _PRICE_CENTS_RE.sub(r"\1 r$ \2,\3", text)
        if "centavos" in text:
            text = _REAIS_AND_CENTAVOS_RE.sub(lambda m: f"r$ {m[1] or m[2]},{m[3]}", text)
    if "centavos" in text and _OTHER_CURRENCY.search(text) is None:
        text = _CENTS_RE.sub(lambda m: f"r$ 0,{int(m[1]):02d}", text)
    return text


#: Thousands written with "mil" after digits in Portuguese ("2,5 mil", "10 mil pontos",
#: "2 mil e 500", "de 2 a 3 mil reais": both ends), or with "k" after a sum of money
#: ("$12.5k"; "a 10k run" is ten kilometres). A mark before three digits ("1,250 mil",
#: "$2.125k") may group or part: left as written.
_THOUSANDS_RE: Final = re.compile(
    r"(?:(?P<range>\b(?:de|entre) (?:r\$ ?)?)(?P<low>\d{1,3}) (?P<to>a|e|ate) (?P<rcur>r\$ ?)?)?"
    r"(?<![\w.,])(?P<num>\d{1,3}(?:[.,]\d{1,2})?) mil\b(?: e (?P<plus>\d{1,3})\b(?![.,]\d))?"
    r"|(?P<cur>" + _SIGNS + r") ?(?P<money>\d{1,3}(?:[.,]\d{1,2})?)k\b")
#: Words only Portuguese writes (folded): "mil" is then a thousand, not English "a mil" (a
#: thousandth of an inch) or "$2 mil" (two million).
_PORTUGUESE_HINT: Final = re.compile(
    r"\b(?:de|do|da|dos|das|para|com|nao|voce|reais|real|ate|sao|uma|ou|por|pelo|pela|custa|custam|cada)\b")


def _thousands(text: str) -> str:
    """`text` with thousands in "mil" or "k" written in digits (`_THOUSANDS_RE`)."""
    if "mil" not in text and "k" not in text:
        return text
    portuguese = "r$" in text or _PORTUGUESE_HINT.search(text) is not None

    def written(match: re.Match[str]) -> str:
        if match["num"] is not None and not portuguese:
            return match.group(0)
        value = parse_decimal(match["num"] or match["money"])
        if value is None:
            return match.group(0)
        thousands = value * 1000 + (int(match["plus"]) if match["plus"] else 0)
        digits = format(thousands.normalize(), "f")
        if match["cur"]:
            return f"{match['cur']} {digits}"
        if match["low"]:  # "de 2 a 3 mil": the low end is thousands too
            return f"{match['range']}{int(match['low']) * 1000} {match['to']} {match['rcur'] or ''}{digits}"
        return digits

    return _THOUSANDS_RE.sub(written, text)


#: What may follow a half hour's "half" / "meia" (folded): the end of its phrase. Not a
#: noun the half belongs to ("a half-day rental", "meia-entrada", "meia diária").
_HALF_END: Final = (r"(?=\s*(?:$|[.,;:!?)])|\s(?:for|of|to|before|after|long|each|per|a|an|the|and|or|in|on|with"
                    r"|without|is|are|max|e|ou|de|do|da|para|por|antes|depois|cada|no|na|em|com|sem|no maximo)\b)")
#: Words before a clock time or a rate (folded): "às 9 horas e meia" is 9:30, and "$3 an hour
#: and a half" a price per hour: no duration.
_AT_CLOCK: Final = "".join(f"(?<!\\b{w} )" for w in ("at", "by", "from", "until", "till", "as", "a", "das",
                                                      "per", "the", "por")) + r"(?<!\d to )(?<!\d )"
#: "a" / "an" before a unit of time after a word of a span ("within a week", "in an hour",
#: "less than a day", "for a year"): one of it. Not a rate ("$10 a week", "twice a month"),
#: nor "a day" anywhere else ("a day pass").
_A_SPAN_RE: Final = re.compile(
    r"\b(?P<lead>within|in|after|for|up to|under|than|about|around|takes?|took|lasts?)\s+an?\s+"
    r"(?P<unit>(?:business |working |calendar )?(?:minute|hour|day|week|month|year))\b(?!-)")
#: Half hours said in words (folded, number words not read yet): "an hour and a half",
#: "one and a half hours", "two and a half hours", "half an hour", "meia hora", "uma hora e
#: meia", "duas horas e meia": the minutes they are.
_HALF_HOURS_RE: Final = re.compile(
    rf"{_AT_CLOCK}\b(?P<n1>an?|one|\d+|[a-z]+) hours? and a half{_HALF_END}"
    rf"|{_AT_CLOCK}\b(?P<n2>one|\d+|[a-z]+) and a half hours?\b"
    rf"|{_AT_CLOCK}\b(?P<n3>uma|um|\d+|[a-z]+) horas? e meia{_HALF_END}"
    r"|\b(?:half an hour|a half[- ]hour|meia[- ]hora)\b")


#: A dozen ("a dozen", "uma dúzia", "half a dozen", "meia dúzia", "2 dozen", "duas dúzias").
_DOZEN_RE: Final = re.compile(
    r"\b(?:(?P<half>half a|meia)|(?P<n>a|one|uma|\d+|two|duas|three|tres))\s+(?:dozens?|duzias?)\b")
_DOZENS: Final = {"a": 12, "one": 12, "uma": 12, "two": 24, "duas": 24, "three": 36, "tres": 36}


def _dozens(match: re.Match[str]) -> str:
    if match["half"]:
        return "6"
    count = match["n"]
    return str(int(count) * 12) if count.isdigit() else str(_DOZENS[count])


def _half_hours(match: re.Match[str]) -> str:
    portuguese = "hora" in match.group(0) or "meia" in match.group(0)
    unit = "minutos" if portuguese else "minutes"
    word = match["n1"] or match["n2"] or match["n3"]
    if word is None:  # "half an hour", "meia hora"
        hours = 0
    else:
        hours = 1 if word in ("a", "an") and not portuguese else int(word) if word.isdigit() \
            else NUMBER_WORDS.get(word, -1)
        if hours < 0 or hours > 24:  # "the hour and a half"? not a count: left as written
            return match.group(0)
    return f"{hours * 60 + 30} {unit}"


def _number_run(tokens: list[str], start: int) -> tuple[int, int]:
    """The end (exclusive) and value of the number-word run starting at `tokens[start]`."""
    total, current, last_place = 0, NUMBER_WORDS[tokens[start]], _place(NUMBER_WORDS[tokens[start]])
    end = start + 1
    i = start + 1
    while i + 1 < len(tokens) and tokens[i].strip() in ("", "-"):
        word = tokens[i + 1]
        step = 2
        if word in _JOINERS and i + 3 < len(tokens) and not tokens[i + 2].strip():
            word, step = tokens[i + 3], 4
        value = NUMBER_WORDS.get(word)
        if value is None:
            break
        if word in _MULTIPLIERS:
            if step == 4:
                break
            if value == 1000:
                total, current = total + max(current, 1) * 1000, 0
            else:
                current = max(current, 1) * value
            last_place = value
        elif value < last_place:
            current += value
            last_place = _place(value)
        else:
            break
        i += step
        end = i
    return end, total + current


def _counts(tokens: list[str], at: int) -> bool:
    """True when the article at `tokens[at]` counts something (see `read_number_words`)."""
    after = tokens[at + 2] if at + 2 < len(tokens) and tokens[at + 1].strip() in ("", "-") else ""
    before = tokens[at - 2] if at >= 2 and not tokens[at - 1].strip() else ""
    if _RANGE_NEXT_RE.match("".join(tokens[at + 1:at + 5])):
        return True  # "one to two days", "um a dois dias": the first end of a range
    if not after and before and _parallel_count(tokens, at, before):
        return True  # "Economy allows two bags and Business allows one.": the other clause's count
    if tokens[at] == "one":  # English: a count unless it is a pronoun
        return bool(after) and before not in _PRONOUN_CONTEXT and after not in _PRONOUN_NEXT
    return after in UNITS or before in _COUNT_CONTEXT


def _parallel_count(tokens: list[str], at: int, before: str) -> bool:
    """True when the article at `tokens[at]` ends its clause (no word follows it) and the word
    before it stands before a number elsewhere in the text: an elliptical count in a
    parallel clause ("Economy allows two carry-on bags and Business allows one.", "A
    Econômica permite duas malas e a Executiva, uma."), not a pronoun ("the one I bought").
    """
    if at + 1 < len(tokens) and not _CLAUSE_END_RE.match("".join(tokens[at + 1:at + 3])):
        return False
    for j in range(2, len(tokens)):
        if j != at and tokens[j - 2] == before and not tokens[j - 1].strip() and (
                tokens[j].isdigit() or (tokens[j] in NUMBER_WORDS and tokens[j] not in _ARTICLES)):
            return True
    return False


#: What may follow a clause-final count: punctuation or the text's end.
_CLAUSE_END_RE: Final = re.compile(r"\s*(?:[.,;:!?)]|$)")


_RANGE_NEXT_RE: Final = re.compile(
    r"\s*(?:-|–|\s(?:to|or|a|ou|ate)\s)\s*(?:\d|(?:" + "|".join(
        w for w in NUMBER_WORDS if w not in ("um", "uma", "one", "hundred", "thousand", "mil")) + r")\b)")


# ----------------------------------------------------------------------------- measures

#: Words that qualify a unit's kind, before it (``3 business days``) or after it
#: (``3 dias úteis``): a measure's unit is then ``day:business``.
UNIT_KINDS: Final[dict[str, str]] = {
    **dict.fromkeys(["business", "working", "uteis", "util"], "business"),
    **dict.fromkeys(["calendar", "corridos", "corrido", "consecutive", "consecutivos",
                     "consecutivas"], "calendar"),
}
_MEASURE_RE: Final = re.compile(
    r"(?P<cur>" + _SIGNS + r")?\s?(?<![\w.,])(?P<num>\d{1,3}(?:[.,]\d{3})+(?:[.,]\d{1,2})?|\d+(?:[.,]\d+)?)"
)
#: What may follow a number as its unit: after a space, or a hyphen in an English compound
#: ("a 30-day window", "a 59-minute grace period": the unit of the number).
_AFTER_RE: Final = re.compile(r"(?:\s|-(?=[a-z]))?(?P<w1>%|a\.m\.?|p\.m\.?|[a-z]+)(?:\s(?P<w2>[a-z]+))?")


@dataclass(frozen=True, slots=True)
class Measure:
    """One number a statement asserts, with the kind of what it counts.

    Attributes:
        value: the exact value (`parse_decimal`).
        unit: its currency (a sign before it) or unit (`UNITS`), with the unit's kind when
            one is named (``day:business``, ``day:calendar``), or ``""`` for a bare number.
        start: where it starts in the text it was read from (characters).
        end: where it ends there: after its unit and kind words, if any.
    """

    value: Decimal
    unit: str
    start: int
    end: int


def measures(text: str) -> list[Measure]:
    """Every number of folded, number-word-read text (`read_number_words`), with its unit.

    ``"r$ 20 em 3 dias uteis"`` -> ``[Measure(20, "brl", ..), Measure(3, "day:business", ..)]``;
    ``"9 pm"`` -> ``[Measure(9, "pm", ..)]``. A currency sign before a number wins over a
    unit word after it.
    """
    out: list[Measure] = []
    for match in _MEASURE_RE.finditer(text):
        value = parse_decimal(match.group("num"))
        if value is None:  # the pattern only matches digits with one kind of mark: never
            continue
        unit, end = _unit_after(text, match.end())
        currency = CURRENCIES[match.group("cur")] if match.group("cur") else None
        out.append(Measure(value, currency or unit, match.start(), end))
    return out


def _unit_after(text: str, at: int) -> tuple[str, int]:
    """The unit (with its kind) named right after position `at`, and where it ends."""
    after = _AFTER_RE.match(text, at)
    if after is None:
        return "", at
    first = after.group("w1").replace(".", "")
    second = after.group("w2") or ""
    if first in UNIT_KINDS and second in UNITS:
        return f"{UNITS[second]}:{UNIT_KINDS[first]}", after.end("w2")
    if first not in UNITS:
        return "", at
    if second in UNIT_KINDS:
        return f"{UNITS[first]}:{UNIT_KINDS[second]}", after.end("w2")
    return UNITS[first], after.end("w1")
