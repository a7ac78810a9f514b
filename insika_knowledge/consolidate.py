"""Consolidation: what a repeat sighting of a known concept does to it.

Three outcomes, decided per sighting:

- **same claim** (deterministic, no model): the wording matches closely (term-set
  Jaccard >= `SAME_CLAIM_JACCARD` over description and claim body, after the shared
  tokeniser) and the numbers, units and negations are identical. Counts go up; the
  body is untouched.
- **related**: a model merges the two bodies into one statement (length-bounded);
  counts go up as for a same claim.
- **contradicting**: the new claim is appended under ``## Contradiction`` with its
  session and time; confidence drops to a flat 0.4; a human resolves it by editing.
  No model, or an unusable model answer, means contradicting.

Confidence of an observed concept is ``min(0.95, 0.5 + 0.1 * distinct_sources)``
(the seed's evidence rule); a ``provenance: policy`` concept keeps what its author set,
and its body is never changed by the engine. All functions here are pure.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Final

from insika_knowledge.concept import (
    BODY_MAX,
    CONTRADICTION_HEADING,
    Concept,
    claim_text,
    has_contradiction,
    surrogate_in,
)
from insika_knowledge.extract.candidates import MODEL_BODY_MAX, Candidate
from insika_knowledge.index.text import fold, terms

SAME_CLAIM_JACCARD: Final = 0.6
CONFLICT_CONFIDENCE: Final = 0.4
FIRST_SIGHTING_CONFIDENCE: Final = 0.6
CONFIDENCE_CAP: Final = 0.95
#: What a contradiction entry says when the claim itself does not fit in the record.
TOO_LONG_NOTE: Final = "claim too long to keep; see the ledger"

_NUMBER_RE: Final = re.compile(
    r"(?P<cur>r\$|us\$|\$|€|£)?\s?(?P<num>\d{1,3}(?:[.,]\d{3})+(?:[.,]\d{1,2})?|\d+(?:[.,]\d+)?)"
    r"\s?(?P<unit>%|[a-z]+)?"
)
_UNITS: Final[dict[str, str]] = {
    **dict.fromkeys(["h", "hr", "hrs", "hour", "hours", "hora", "horas"], "hour"),
    **dict.fromkeys(["min", "mins", "minute", "minutes", "minuto", "minutos"], "minute"),
    **dict.fromkeys(["d", "day", "days", "dia", "dias"], "day"),
    **dict.fromkeys(["week", "weeks", "semana", "semanas"], "week"),
    **dict.fromkeys(["month", "months", "mes", "meses"], "month"),
    **dict.fromkeys(["year", "years", "ano", "anos"], "year"),
    **dict.fromkeys(["unit", "units", "unidade", "unidades", "un", "pcs", "pieces", "pecas",
                     "item", "items", "itens"], "unit"),
    **dict.fromkeys(["%", "percent", "pct", "porcento"], "%"),
    **dict.fromkeys(["kg", "kilo", "kilos", "quilo", "quilos"], "kg"),
    **dict.fromkeys(["g", "grams", "gramas"], "g"),
    **dict.fromkeys(["km", "m", "cm", "mm"], "length"),
    **dict.fromkeys(["bag", "bags", "mala", "malas", "bagagem", "bagagens"], "bag"),
    **dict.fromkeys(["reais", "real", "brl"], "brl"),
    **dict.fromkeys(["dollars", "dollar", "usd"], "usd"),
}
_CURRENCIES: Final[dict[str, str]] = {"r$": "brl", "us$": "usd", "$": "usd", "€": "eur", "£": "gbp"}
_NEGATIONS: Final = frozenset(
    "not no never none nobody nothing neither nor cannot without nao nunca nem nenhum "
    "nenhuma jamais sem tampouco".split()
)


@dataclass(frozen=True)
class Claim:
    """What a statement asserts, as far as the same-claim check is concerned."""

    terms: frozenset[str]
    numbers: frozenset[Decimal]
    units: frozenset[str]
    negations: int


def analyse(text: str) -> Claim:
    """Break `text` into its terms (without numbers), numbers, units and negation count."""
    folded = fold(text)
    numbers: set[Decimal] = set()
    units: set[str] = set()
    for match in _NUMBER_RE.finditer(folded):
        value = _number(match.group("num"))
        if value is not None:
            numbers.add(value)
        if match.group("cur"):
            units.add(_CURRENCIES[match.group("cur")])
        unit = _UNITS.get(match.group("unit") or "")
        if unit:
            units.add(unit)
    words = re.findall(r"[^\W_]+", folded)
    negations = sum(1 for w in words if w in _NEGATIONS) + folded.count("n't")
    content = frozenset(t for t in terms(text) if not t.isdigit())
    return Claim(content, frozenset(numbers), frozenset(units), negations)


def _number(raw: str) -> Decimal | None:
    """``"1.250,00"`` -> 1250, ``"199,90"`` -> 199.9, ``"4"`` -> 4."""
    grouped = re.fullmatch(r"(\d{1,3}(?:[.,]\d{3})+)(?:[.,](\d{1,2}))?", raw)
    if grouped:
        text = re.sub(r"[.,]", "", grouped.group(1))
        if grouped.group(2):
            text += "." + grouped.group(2)
    else:
        text = raw.replace(",", ".")
    try:
        return Decimal(text).normalize()
    except InvalidOperation:
        return None


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    """|a & b| / |a | b|; 1.0 for two empty sets."""
    if not a and not b:
        return 1.0
    return len(a & b) / len(a | b)


def same_claim(existing: Concept, candidate: Candidate) -> bool:
    """True when `candidate` restates what `existing` claims (see the module doc).

    Compares description + body, ignoring the ``## Contradiction`` section on record.
    """
    old = analyse(f"{existing.description}\n{claim_text(existing.body)}")
    new = analyse(f"{candidate.description}\n{candidate.body}")
    return (
        old.numbers == new.numbers
        and old.units == new.units
        and old.negations == new.negations
        and jaccard(old.terms, new.terms) >= SAME_CLAIM_JACCARD
    )


def confidence(distinct_sources: int) -> float:
    """Evidence-weighted confidence: ``min(0.95, 0.5 + 0.1 * n)``, 2 decimals.

    Args:
        distinct_sources: distinct supporting sessions (n >= 0).

    Raises:
        ValueError: `distinct_sources` is negative.
    """
    if distinct_sources < 0:
        raise ValueError("distinct_sources must be >= 0")
    return round(min(CONFIDENCE_CAP, 0.5 + 0.1 * distinct_sources), 2)


def merged_sources(existing: Concept, ledger_sources: list[str]) -> tuple[str, ...]:
    """The record's sources joined with the ledger's supporting sessions, order kept."""
    return tuple(dict.fromkeys([*existing.sources, *ledger_sources]))


def confirm(existing: Concept, ledger_sources: list[str], now: str) -> Concept:
    """Apply a same-claim (or merged) sighting's counts: occurrences + 1, sources, confidence.

    The body is untouched. A policy concept keeps its confidence; a concept in
    conflict keeps the flat conflict confidence.
    """
    sources = merged_sources(existing, ledger_sources)
    if existing.provenance == "policy":
        value = existing.confidence
    elif existing.in_conflict:
        value = CONFLICT_CONFIDENCE
    else:
        value = confidence(len(sources))
    return existing.replace(
        sources=sources, occurrences=existing.occurrences + 1, confidence=value, updated_at=now
    )


def merge_limit(old_body: str, new_body: str) -> int:
    """The longest merged body accepted: the longer body twice plus 200, at most 4000 chars."""
    return min(MODEL_BODY_MAX, 2 * max(len(old_body), len(new_body)) + 200)


def usable_merge(body: object, limit: int) -> bool:
    """True when a model's merged body may replace the one on record."""
    return (
        isinstance(body, str)
        and bool(body.strip())
        and len(body) <= limit
        and not has_contradiction(body)
        and "\x00" not in body
        and surrogate_in(body) is None
    )


def contradict(existing: Concept, candidate: Candidate, session_id: str, now: str) -> Concept:
    """Append `candidate` under ``## Contradiction``; confidence 0.4 flat.

    The entry names the session and time. The record stays within `BODY_MAX` without
    ever cutting the heading or splitting an entry: when the whole entry does not fit,
    a short entry (session, time, "claim too long to keep; see the ledger") is appended
    instead; when even that does not fit, no entry is added, but the heading is always
    there (the claim text is shortened to make room for it only if it has none and is
    already at the limit), so a 0.4 confidence is never without its visible conflict.
    """
    who = f"- session `{safe_session_id(session_id)}` at {now}"
    entry_body = "\n".join(f"  {line}" if line else "" for line in candidate.body.split("\n"))
    entries = (f"{who}: {candidate.description}\n\n{entry_body}", f"{who}: {TOO_LONG_NOTE}")
    base = existing.body
    if not has_contradiction(base):
        base = f"{base}\n\n{CONTRADICTION_HEADING}"
        if len(base) > BODY_MAX:
            base = _make_room(existing.body, BODY_MAX - len(f"\n\n{CONTRADICTION_HEADING}"))
            base = f"{base}\n\n{CONTRADICTION_HEADING}"
    body = base
    for entry in entries:
        if len(base) + 2 + len(entry) <= BODY_MAX:
            body = f"{base}\n\n{entry}"
            break
    return existing.replace(body=body, confidence=CONFLICT_CONFIDENCE, updated_at=now)


def _make_room(body: str, limit: int) -> str:
    """`body` cut to at most `limit` characters at a line or word end, marked with "…"."""
    if len(body) <= limit:
        return body
    cut = body[: limit - 1]
    for sep in ("\n", " "):
        at = cut.rfind(sep)
        if at >= limit // 2:
            cut = cut[:at]
            break
    return cut.rstrip() + "…"


def safe_session_id(session_id: str) -> str:
    """`session_id` as it may appear inside a markdown code span in a record.

    Session ids are validated where they enter (printable, no backticks), but the
    entry must not be able to forge a heading, a link or the end of the code span
    whatever it is given: control and other unprintable characters become ``\\uXXXX``,
    a backtick becomes ``'``, brackets are backslash-escaped (``[[x]]`` is no link),
    and the result is at most 200 characters.
    """
    out: list[str] = []
    for char in str(session_id)[:200]:
        if char == "`":
            out.append("'")
        elif char in "[]":
            out.append("\\" + char)
        elif not char.isprintable():
            out.append(f"\\u{ord(char):04x}")
        else:
            out.append(char)
    return "".join(out)


def first_sighting(candidate: Candidate, session_id: str, now: str) -> Concept:
    """A new observed concept from its first sighting (confidence 0.6, one source)."""
    return Concept(
        name=candidate.name,
        description=candidate.description,
        type=candidate.type,
        provenance="observed",
        confidence=FIRST_SIGHTING_CONFIDENCE,
        sources=(session_id,),
        occurrences=1,
        created_at=now,
        updated_at=now,
        body=candidate.body,
    )
