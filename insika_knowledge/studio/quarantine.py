"""Quarantine in the Studio: why a concept is held back, and a person's approval.

A concept is in quarantine when only the customer supports it and it states or changes
a rule of the business (`insika_knowledge.trust`, the ``quarantine`` table): it is
stored, versioned and shown here, but never injected into a prompt. The editor shows
who supported it, what makes it a rule and since when, with an Approve button;
``POST /studio/knowledge/<name>/approve`` (CSRF token and the version the operator saw)
releases it through `SQLiteStore.approve`, which writes a version with reason
``approve``. A version that changed since the page was loaded is a 409 and nothing is
written.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from insika_knowledge.errors import NotFound, StaleVersion, UserError
from insika_knowledge.studio.render import concept_url, flash
from insika_knowledge.studio.scope import ACTOR, Scope, refused, versioned_post

#: What each rule marker (`insika_knowledge.trust.rule_markers`) means, for the page.
MARKER_LABELS: Final = {
    "type": "its type is a policy or a procedure",
    "price": "a price or an amount",
    "deadline": "a deadline",
    "entitlement": "something a customer gets (free, a discount, a gift...)",
    "schedule": "opening hours or a schedule",
    "instruction": "an instruction to the agent or the business",
}
#: Who a supporting speaker (`insika_knowledge.trust.Speaker`) is, for the page.
SPEAKER_LABELS: Final = {
    "customer": "the customer",
    "agent": "the agent",
    "human": "a human agent",
    "tool": "a tool result",
    "system": "the system",
}


@dataclass(frozen=True)
class Held:
    """Why a concept is in quarantine, worded for the page.

    Attributes:
        supported_by: who supported the claim (``the customer``, ...); empty when no one.
        markers: ``(marker, what it means)`` pairs, in `rule_markers` order.
        since: when it was put in quarantine (UTC ``Z``).
        session_id: the session whose sighting put it there.
    """

    supported_by: tuple[str, ...]
    markers: tuple[tuple[str, str], ...]
    since: str
    session_id: str


def held(scope: Scope, name: str) -> Held | None:
    """Why `name` is held in quarantine (`SQLiteStore.quarantine_of`), or None when it is not."""
    found = scope.store.quarantine_of(scope.agent, name)
    if found is None:
        return None
    return Held(
        supported_by=tuple(SPEAKER_LABELS.get(s, s) for s in found.supported_by),
        markers=tuple((m, MARKER_LABELS.get(m, m)) for m in found.markers),
        since=found.since,
        session_id=found.session_id,
    )


async def concept_approve(request: Request) -> Response:
    """POST /studio/knowledge/<name>/approve: release the concept from quarantine (reason approve)."""
    return await versioned_post(request, _approve)


def _approve(request: Request, scope: Scope, name: str, expected: int) -> Response:
    try:
        saved = scope.store.approve(scope.agent, name, actor=ACTOR, expected_version=expected)
    except StaleVersion as exc:
        return refused(request, scope, name, f"{exc}. Nothing was written: review what changed, then approve again.")
    except NotFound:
        raise  # a UserError too: the 404 page (`versioned_post`)
    except UserError:  # released meanwhile (by an agent-supported sighting or another person)
        return refused(request, scope, name, f"'{name}' is not in quarantine (any more): nothing was written.")
    flash(request, f"Approved: {name} is out of quarantine as version {saved.version}. It can "
                   "now be injected into agents' prompts like any other concept.")
    return RedirectResponse(concept_url(name, scope.agent, scope.tenant), 303)

