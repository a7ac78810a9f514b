"""A conflicted concept's claims, and the record that keeping one of them makes.

A concept in conflict asserts its body up to the ``## Contradiction`` heading (the
claim on record); under the heading, consolidation appends one entry per contradicting
claim, naming the sessions that made it (`consolidate.entries`)::

    - session `s9` at 2026-08-24T18:00:00Z (also `s12`): Returns are accepted within 30 days.

      The body of the contradicting claim, indented two spaces.

Resolving keeps one claim (or a text the operator writes), removes the section, and
recomputes sources, occurrences and confidence from the sightings ledger: the sessions
that support the kept claim, ``min(0.95, 0.5 + 0.1 x sessions)``. A ``policy`` concept
keeps its author's confidence. Every function here is pure.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from insika_knowledge.concept import Concept, claim_text, has_contradiction
from insika_knowledge.consolidate.entries import Entry, entries
from insika_knowledge.consolidate.records import confidence, safe_session_id
from insika_knowledge.errors import UserError
from insika_knowledge.store.base import Sighting

RECORD: Final = "record"
WRITTEN: Final = "written"


@dataclass(frozen=True)
class Claim:
    """One claim of a conflicted concept.

    Attributes:
        key: ``record`` for the claim on record, ``entry-N`` (1-based) for a contradiction.
        session_id: the entry's first session as written in the record (escaped); None on
            record.
        at: when that session made the claim (UTC ``Z``); None on record.
        description: the claim's one-line description.
        body: the claim's markdown ("" when the entry kept no text).
        keepable: False when there is no text to keep (the record had no room for it).
        sessions: every session the entry names (escaped), the first one first; () on
            record.
        why: why the entry is held as a contradiction, in words (`consolidate.Entry.why`;
            "" on record, and for an entry written before the reason was kept).
    """

    key: str
    session_id: str | None
    at: str | None
    description: str
    body: str
    keepable: bool
    sessions: tuple[str, ...] = ()
    why: str = ""

    def same_claim(self, other: Claim) -> bool:
        """True when both say the same thing (description and body, spacing ignored)."""
        return Entry.same_text(self.description, self.body, other.description, other.body)


def claims(concept: Concept) -> list[Claim]:
    """The claim on record, then each contradiction entry in order; [] when not in conflict.

    Text under the heading that is not an entry (a hand edit) is left out; the operator
    sees it in the record and can write a resolution instead.
    """
    if not has_contradiction(concept.body):
        return []
    record = claim_text(concept.body)
    out = [Claim(RECORD, None, None, concept.description, record, bool(record.strip()))]
    return out + [_claim(i, e) for i, e in enumerate(entries(concept.body), start=1)]


def _claim(number: int, entry: Entry) -> Claim:
    return Claim(f"entry-{number}", entry.sessions[0], entry.at, entry.description, entry.body,
                 entry.kept_text, entry.sessions, entry.why)


@dataclass(frozen=True)
class Resolution:
    """What a resolution writes beside the kept text: the evidence it counted."""

    sources: tuple[str, ...]
    occurrences: int
    confidence: float


def keep(current: Concept, key: str, ledger: Sequence[Sighting]) -> Concept:
    """The record with claim `key` kept and the Contradiction section gone.

    Keeping the claim on record counts the sessions whose sightings supported it
    (outcomes extract, confirm, merge, plus the record's own sources). Keeping an entry
    counts the sessions of every entry making the same claim (matched to the ledger's
    ``conflict`` sightings; the entry's session text when the ledger has none).

    Raises:
        UserError: the concept is not in conflict, `key` names no claim, or the claim
            has no text to keep.
    """
    found = {c.key: c for c in claims(current)}
    if not found:
        raise UserError(f"'{current.name}' has no ## Contradiction section: nothing to resolve")
    claim = found.get(key)
    if claim is None:
        raise UserError(f"'{current.name}' has no claim {key!r}: its claims are {', '.join(found)}")
    if not claim.keepable:
        raise UserError(f"claim {key!r} kept no text to restore; write the resolution instead")
    if claim.key == RECORD:
        supporting = [s for s in ledger if s.outcome != "conflict"]
        sessions = [*current.sources, *(s.session_id for s in supporting)]
        fallback = current.occurrences
    else:
        same = [c for c in found.values() if c.key != RECORD and c.same_claim(claim)]
        written = {session for c in same for session in c.sessions}
        supporting = [s for s in ledger
                      if s.outcome == "conflict" and safe_session_id(s.session_id) in written]
        matched = {safe_session_id(s.session_id) for s in supporting}
        sessions = [s.session_id for s in supporting]
        sessions += [s for c in same for s in c.sessions if s and s not in matched]
        fallback = len({s for c in same for s in c.sessions})
    evidence = _evidence(current, sessions, len(supporting) or fallback)
    return current.replace(
        description=claim.description, body=claim.body, sources=evidence.sources,
        occurrences=evidence.occurrences, confidence=evidence.confidence,
    )


def written(current: Concept, resolved: Concept, ledger: Sequence[Sighting]) -> Concept:
    """The operator's own resolution `resolved`, with the evidence recomputed.

    A written resolution reconciles every claim, so it counts every session of the
    ledger (and the record's sources); the operator's other fields are kept as written.

    Raises:
        UserError: `resolved` still has a ``## Contradiction`` section.
    """
    if has_contradiction(resolved.body):
        raise UserError("the resolution still has a ## Contradiction section: remove it")
    sessions = [*current.sources, *(s.session_id for s in ledger)]
    evidence = _evidence(resolved, sessions, len(ledger) or current.occurrences)
    return resolved.replace(sources=evidence.sources, occurrences=evidence.occurrences,
                            confidence=evidence.confidence)


def _evidence(concept: Concept, sessions: list[str], occurrences: int) -> Resolution:
    sources = tuple(dict.fromkeys(sessions))
    value = concept.confidence if concept.provenance == "policy" else confidence(len(sources))
    return Resolution(sources, max(occurrences, len(sources)), value)
