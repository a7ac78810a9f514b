"""How a sighting changes a concept record: counts, confidence, merges, contradictions.

Confidence of an observed concept is ``min(0.95, 0.5 + 0.1 * distinct_sources)``
(the seed's evidence rule, counted on the ledger); a ``provenance: policy`` concept keeps what its author set,
and its body is never changed by the engine. A contradicting claim is recorded under
``## Contradiction`` (one entry per distinct claim, `entries`), and confidence drops to a
flat 0.4.

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
from insika_knowledge.consolidate.entries import (
    NO_ROOM_NOTE,
    SESSIONS_PER_ENTRY,
    entries,
    head_line,
    indented,
    why_line,
)

CONFLICT_CONFIDENCE: Final = 0.4
FIRST_SIGHTING_CONFIDENCE: Final = 0.6
CONFIDENCE_CAP: Final = 0.95
#: The most supporting sessions a record lists in ``sources`` (the most recent ones;
#: the ledger keeps them all).
SOURCES_KEPT: Final = 64


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


def contradict(existing: Concept, candidate: Candidate, session_id: str, now: str, why: str = "") -> Concept:
    """Record `candidate` under ``## Contradiction``; confidence 0.4 flat.

    A new entry says `why` the claim is held (its ``Why:`` line, `entries.why_line`; none
    when "").

    One entry per distinct claim (`entries`): a claim an entry already states adds this
    session to the entry's ``also`` list (up to `entries.SESSIONS_PER_ENTRY` sessions;
    later ones only in the ledger); a new claim is appended as an entry naming the
    session and time. The record stays within `BODY_MAX` without ever cutting the
    heading or splitting an entry: when the whole entry does not fit, a short entry
    (session, time, `entries.NO_ROOM_NOTE`) is appended instead, and the write path
    holds the claim for review (`keeps`); when even that does not fit, no entry is
    added, but the heading is always there (the claim text is shortened to make room
    for it only if it has none and is already at the limit), so a 0.4 confidence is
    never without its visible conflict. When that leaves the record as it was (its
    confidence already 0.4), `existing` itself is returned, not re-dated: a sighting
    that changes nothing writes no version that differs only in its time (the ledger
    keeps the sighting).
    """
    session = safe_session_id(session_id)
    base = existing.body
    if not has_contradiction(base):
        base = f"{base}\n\n{CONTRADICTION_HEADING}"
        if len(base) > BODY_MAX:
            base = _make_room(existing.body, BODY_MAX - len(f"\n\n{CONTRADICTION_HEADING}"))
            base = f"{base}\n\n{CONTRADICTION_HEADING}"
    body = _seen_again(base, candidate, session)
    if body is None:
        body = base
        said = why_line(why)
        for entry in (f"{head_line((session,), now, candidate.description)}{said}\n\n{indented(candidate.body)}",
                      f"{head_line((session,), now, NO_ROOM_NOTE)}{said}", head_line((session,), now, NO_ROOM_NOTE)):
            if len(base) + 2 + len(entry) <= BODY_MAX:
                body = f"{base}\n\n{entry}"
                break
    if body == existing.body and existing.confidence == CONFLICT_CONFIDENCE:
        return existing
    return existing.replace(body=body, confidence=CONFLICT_CONFIDENCE, updated_at=now)


def _seen_again(body: str, candidate: Candidate, session: str) -> str | None:
    """`body` with `session` named by the entry stating `candidate`'s claim (unchanged when
    it is named already, the entry names enough sessions, or there is no room); None when
    no entry states the claim.
    """
    for entry in entries(body):
        if entry.states(candidate.description, candidate.body):
            if session in entry.sessions or len(entry.sessions) >= SESSIONS_PER_ENTRY:
                return body
            head = head_line((*entry.sessions, session), entry.at, entry.description)
            grown = f"{body[:entry.start]}{head}{body[entry.start + len(entry.head):]}"
            return grown if len(grown) <= BODY_MAX else body
    return None


def keeps(record: Concept, candidate: Candidate) -> bool:
    """True when `record`'s ``## Contradiction`` section states `candidate`'s claim (an
    entry keeps its text); False when the record had no room for it, so the write path
    holds the claim for review instead.
    """
    return any(e.states(candidate.description, candidate.body) for e in entries(record.body))


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
