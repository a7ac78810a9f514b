"""How a sighting changes a concept record: counts, confidence, merges, contradictions.

Confidence of an observed concept is ``min(0.95, 0.5 + 0.1 * distinct_sources)``
(the seed's evidence rule, counted on the ledger); a ``provenance: policy`` concept keeps what its author set,
and its body is never changed by the engine. A contradicting claim is appended under
``## Contradiction`` with its session and time, and confidence drops to a flat 0.4.

The record's ``sources`` is bounded: it keeps the `SOURCES_KEPT` most recent supporting
sessions (oldest of them first); the sightings ledger keeps every one of them, and the
number of distinct supporting sessions behind the confidence is counted there. So a
concept sighted 5,000 times keeps a small record, and its versions stay small too.
All functions here are pure.
"""

from __future__ import annotations

from typing import Final

from insika_knowledge.candidate import Candidate
from insika_knowledge.concept import (
    BODY_MAX,
    CONTRADICTION_HEADING,
    Concept,
    has_contradiction,
)

CONFLICT_CONFIDENCE: Final = 0.4
FIRST_SIGHTING_CONFIDENCE: Final = 0.6
CONFIDENCE_CAP: Final = 0.95
#: The most supporting sessions a record lists in ``sources`` (the most recent ones;
#: the ledger keeps them all).
SOURCES_KEPT: Final = 64
#: What a contradiction entry says when the claim itself does not fit in the record.
TOO_LONG_NOTE: Final = "claim too long to keep; see the ledger"


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
    """The record's sources joined with the ledger's supporting sessions, order kept,
    cut to the `SOURCES_KEPT` most recent (the last ones).
    """
    return tuple(dict.fromkeys([*existing.sources, *ledger_sources]))[-SOURCES_KEPT:]


def confirm(
    existing: Concept, ledger_sources: list[str], now: str, *, distinct_sources: int | None = None,
) -> Concept:
    """Apply a same-claim (or merged) sighting's counts: occurrences + 1, sources, confidence.

    The body is untouched. A policy concept keeps its confidence; a concept in
    conflict keeps the flat conflict confidence.

    Args:
        existing: the record on file.
        ledger_sources: the ledger's most recent supporting sessions, oldest first
            (at most `SOURCES_KEPT` are kept).
        now: the time of the change.
        distinct_sources: how many distinct sessions support the concept on the ledger
            (the confidence's n); None = the number of sources kept in the record.
    """
    sources = merged_sources(existing, ledger_sources)
    if existing.provenance == "policy":
        value = existing.confidence
    elif existing.in_conflict:
        value = CONFLICT_CONFIDENCE
    else:
        value = confidence(len(sources) if distinct_sources is None else distinct_sources)
    return existing.replace(
        sources=sources, occurrences=existing.occurrences + 1, confidence=value, updated_at=now
    )


def contradict(existing: Concept, candidate: Candidate, session_id: str, now: str) -> Concept:
    """Append `candidate` under ``## Contradiction``; confidence 0.4 flat.

    The entry names the session and time. The record stays within `BODY_MAX` without
    ever cutting the heading or splitting an entry: when the whole entry does not fit,
    a short entry (session, time, "claim too long to keep; see the ledger") is appended
    instead; when even that does not fit, no entry is added, but the heading is always
    there (the claim text is shortened to make room for it only if it has none and is
    already at the limit), so a 0.4 confidence is never without its visible conflict.
    When that leaves the record as it was (the body full, its confidence already 0.4),
    `existing` itself is returned, not re-dated: a contradiction the record has no room
    for writes no version that differs only in its time (the ledger keeps the sighting).
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
    if body == existing.body and existing.confidence == CONFLICT_CONFIDENCE:
        return existing
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
