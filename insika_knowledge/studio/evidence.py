"""The evidence beside a concept: its sightings, who supported it, aliases, extractions.

The editor page shows the newest `SIDE_ROWS` sightings in its side column;
``GET /studio/knowledge/<name>/evidence`` shows every sighting with the extraction
record of its turn (outcome, candidates, concepts written, what was dropped and why).
Sources: the ``sightings`` ledger and the ``extractions`` table of the tenant's store.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

from starlette.requests import Request
from starlette.responses import Response

from insika_knowledge.memory import ExtractionRecord, Sighting, StoredConcept
from insika_knowledge.studio import quarantine
from insika_knowledge.studio.render import concept_url
from insika_knowledge.studio.scope import Scope, concept_nav, concept_of, renderer_of

#: Sightings shown beside the editor (newest first); the evidence page shows them all.
SIDE_ROWS: Final = 12


@dataclass(frozen=True)
class Supporter:
    """A session that supported the concept: how often, first and last seen (UTC ``Z``)."""

    session_id: str
    sightings: int
    first_seen: str
    last_seen: str


def supporters(ledger: Sequence[Sighting]) -> list[Supporter]:
    """Distinct sessions with a supporting sighting (not ``conflict``), first seen first."""
    by_session: dict[str, list[Sighting]] = {}
    for sighting in ledger:
        if sighting.outcome != "conflict":
            by_session.setdefault(sighting.session_id, []).append(sighting)
    rows = [Supporter(session, len(seen), min(s.seen_at for s in seen),
                      max(s.seen_at for s in seen)) for session, seen in by_session.items()]
    return sorted(rows, key=lambda r: (r.first_seen, r.session_id))


def context(scope: Scope, stored: StoredConcept, *, limit: int | None = SIDE_ROWS) -> dict[str, Any]:
    """Template context for a concept's evidence (the newest `limit` sightings; None = all).

    Returns:
        ``{"sightings": [{session_id, turn_id, outcome, seen_at, extraction}], "sightings_total",
        "supporters", "contradicting", "aliases", "held", "evidence_href"}``; ``extraction``
        is the turn's `ExtractionRecord` or None (not recorded); ``held`` is why the concept
        is in quarantine (`quarantine.Held`), None when it is not.
    """
    name = stored.concept.name
    ledger = scope.store.sightings(scope.agent, name)
    newest = ledger[::-1] if limit is None else ledger[::-1][:limit]
    records: dict[tuple[str, str], ExtractionRecord] = scope.store.extractions_of(
        scope.agent, [(s.session_id, s.turn_id) for s in newest])
    return {
        "sightings": [{**s._asdict(), "extraction": records.get((s.session_id, s.turn_id))}
                      for s in newest],
        "sightings_total": len(ledger),
        "supporters": supporters(ledger),
        "contradicting": len({s.session_id for s in ledger if s.outcome == "conflict"}),
        "aliases": scope.store.aliases(scope.agent, name),
        "held": quarantine.held(scope, name),
        "evidence_href": concept_url(name, scope.agent, scope.tenant, "/evidence"),
    }


def evidence_page(request: Request) -> Response:
    """GET /studio/knowledge/<name>/evidence: every sighting and its turn's extraction."""
    scope, stored = concept_of(request)
    return renderer_of(request).page(request, "evidence.html", {
        **concept_nav(scope, stored.concept.name),
        "concept": stored.concept,
        **context(scope, stored, limit=None),
    })
