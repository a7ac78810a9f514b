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

The numeric-term format (``z<kind><width>_<digits>``) is owned here: `is_numeric_term`
tells one from a word's term, so no caller tests a prefix.
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation
from typing import Final

#: Open-ended ranges ("over $50") stop here: 10 million for money and plain numbers.
OPEN_END: Final = 10_000_000
CEP_WIDTH: Final = 5
_CUR: Final = r"(?:r\$|us\$|\$|€|£)"
_NUM: Final = r"\d{1,3}(?:[.,]\d{3})+(?:[.,]\d{1,2})?|\d+(?:[.,]\d{1,2})?"
_CUR_WORDS: Final = r"(?:reais|real|dollars?|dolares|usd|brl|eur|euros?)"

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


_NUMERIC_TERM_RE: Final = re.compile(r"z(?:cep|money|num)[1-9]\d*_\d*")


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
    grouped = re.fullmatch(r"(\d{1,3}(?:[.,]\d{3})+)(?:[.,](\d{1,2}))?", raw)
    text = re.sub(r"[.,]", "", grouped.group(1)) if grouped else raw.replace(",", ".")
    try:
        return int(Decimal(text))
    except (InvalidOperation, ValueError):
        return None


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
        out.append(f"z{kind}{width}_{prefix}")
        lo += 10**size
    return out


def prefixes(value: int, kind: str) -> list[str]:
    """Every prefix term of one number (what a message carrying it is indexed under)."""
    digits = str(value).zfill(CEP_WIDTH) if kind == "cep" else str(value)
    width = len(digits)
    return [f"z{kind}{width}_{digits[:i]}" for i in range(width + 1)]


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
        lo, hi = to_int(m.group(2)), to_int(m.group(4))
        if lo is None or hi is None or lo >= hi or not free(m):
            continue
        out += blocks(lo, hi, _kind(m.group(1) or m.group(3), m.group(5)))
    return out


def query_terms(folded: str) -> list[str]:
    """Prefix terms for every number a message (case- and accent-folded) carries."""
    out: list[str] = []
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
        if value is None:
            continue
        digits = re.sub(r"\D", "", m.group(2))
        if cep_context and len(digits) == CEP_WIDTH and not m.group(1):
            out += prefixes(value, "cep")
        kind = _kind(m.group(1), m.group(3))
        out += prefixes(value, kind)
        if kind == "num":  # "my order came to 80": a bare amount is often money
            out += prefixes(value, "money")
    return out
