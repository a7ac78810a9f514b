"""Claim features and their values: what a text says, as the trust gate compares it.

A text's *features* are the analyser's content terms and its values with their units
(`analysis.structure.content_terms`: "cem reais" and "R$ 100" are one feature, "R$ 40"
and "40%" two). A value feature is ``m:<number>:<unit>[:<qualifier>]`` (``m:1-2:day:
business``) or a date ``d:...``; `states` says when a text's features state a value.
"""

from __future__ import annotations

from typing import Final

from insika_knowledge.analysis.structure import content_terms, same_duration
from insika_knowledge.trust.evidence import RANGE_VALUE

__all__ = ["bare", "features", "is_number", "replaced_values", "states", "unit"]


def features(text: str) -> frozenset[str]:
    """The claim features of `text`: its content terms and its values with their units."""
    return content_terms(text)


def is_number(term: str) -> bool:
    """True when feature `term` is a value or a date (``m:...``, ``d:...``)."""
    return term.startswith(("m:", "d:"))


def bare(term: str) -> str:
    """A value without its unit (a tool's data has none): ``m:12.9:brl`` -> ``m:12.9:``."""
    return ":".join(term.split(":")[:2]) + ":" if term.startswith("m:") else term


def _kind(value: str) -> str:
    """The kind a value's unit is qualified with (``m:3:day:business`` -> ``business``), or ``""``."""
    parts = value.split(":")
    return parts[3] if value.startswith("m:") and len(parts) > 3 else ""


def unit(value: str) -> str:
    """The unit of a value feature (``m:10:%`` -> ``%``; ``m:3-5:day:business`` -> ``day``)."""
    return value.split(":")[2] if value.startswith("m:") else ""


def states(value: str, found: frozenset[str], *, business: bool) -> bool:
    """`found` (a text's features) states the claim's `value`: the same number in the same
    unit, or either side without a unit (a source's only when `business`); a date its year;
    a range its two ends, said apart ("opens at 5 a.m. ... until 11 p.m."); a duration in
    any unit it fills.
    """
    if value in found or found & _DAYS_NAMED.get(value, frozenset()):
        return True  # (Monday and Friday of "Monday to Friday" are "weekdays")
    whole = same_duration(value)  # "7 dias" is "uma semana", "12 meses" "1 ano", "2,000 grams" "2 kg"
    if any(same_duration(t) == whole for t in found if t.startswith("m:")):
        return True
    ends = RANGE_VALUE.fullmatch(value)
    if ends is not None and all(states(f"m:{end}:{ends[3]}", found, business=business) for end in (ends[1], ends[2])):
        return True  # (else the range as a whole, below: "aged 6 to 12" is "de 6 a 12 anos")
    number, wanted, kind = bare(value), unit(value), _kind(value)
    for t in found:
        if t.startswith("m:") and bare(t) == number and (
                not wanted or unit(t) == wanted or (business and not unit(t))) \
                and not (kind and _kind(t) != kind and (_kind(t) or (kind == "business" and unit(t)))):
            # "10 dias úteis" is no "10 dias corridos", and "5 days" says no business days
            return True
        if business and t.startswith("d:") and t.count(":") == 2 and number == f"m:{t.rsplit(':', 1)[1]}:":
            return True
    return False


#: A weekday's token -> the words that name it among others ("weekdays": Monday to Friday).
_DAYS_NAMED: Final[dict[str, frozenset[str]]] = {
    **{f"d:wd{day}": frozenset({"weekday"}) for day in range(1, 6)},
    **{f"d:wd{day}": frozenset({"weekend"}) for day in (6, 7)},
}


def replaced_values(asked: frozenset[str], answer: frozenset[str]) -> frozenset[str]:
    """The values of `asked` (a question's features) in a unit `answer` gives another value
    in: "1 dia?" / "1 a 2 dias úteis", "acima de R$ 100?" / "acima de R$ 199" (the customer's
    value is offered, the business's is what it says).
    """
    units = {unit(t) for t in answer if t.startswith("m:")} - {""}
    return frozenset(t for t in asked if t.startswith("m:") and unit(t) in units
                     and not states(t, answer, business=True))
