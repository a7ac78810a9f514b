"""The activity page: an agent's recent changes, newest first (who, why, when).

``GET /studio/activity?agent=&tenant=&reason=&actor=&before=`` reads the append-only
``concept_versions`` table (`SQLiteStore.activity`), `PAGE_SIZE` rows a page; "Older"
pages by row id, so a page stays the same while new changes arrive.
"""

from __future__ import annotations

from typing import Any, Final

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response

from insika_knowledge.studio.render import concept_url, url
from insika_knowledge.studio.scope import nav, renderer_of, require_scope

PAGE_SIZE: Final = 50
#: Every reason a version row can carry (see migrations 001, 004 and 007 under sql/sqlite/).
REASONS: Final = ("extract", "confirm", "merge", "conflict", "edit", "resolve", "restore", "delete",
                  "approve")
ACTOR_MAX: Final = 100


def activity_page(request: Request) -> Response:
    """GET /studio/activity: the agent's changes, filtered by reason and actor.

    Raises:
        HTTPException: 400 for an unknown reason, a bad ``before`` or an over-long actor.
    """
    scope = require_scope(request)
    params = request.query_params
    reason = params.get("reason") or None
    if reason is not None and reason not in REASONS:
        raise HTTPException(400, f"reason={reason!r} is not one of: {', '.join(REASONS)}")
    actor = (params.get("actor") or "").strip() or None
    if actor is not None and len(actor) > ACTOR_MAX:
        raise HTTPException(400, f"actor is longer than {ACTOR_MAX} characters")
    raw = params.get("before") or ""
    if raw and not (raw.isascii() and raw.isdigit() and len(raw) <= 18):
        raise HTTPException(400, f"before={raw[:20]!r} is not a row id (a whole number)")
    before = int(raw) if raw else None
    rows = scope.store.activity(scope.agent, before=before, limit=PAGE_SIZE + 1, actor=actor,
                                reason=reason)
    more = len(rows) > PAGE_SIZE
    rows = rows[:PAGE_SIZE]

    def link(**changes: Any) -> str:
        values = {"reason": reason, "actor": actor, **changes}
        return url("/studio/activity", agent=scope.agent, tenant=scope.tenant, **values)

    return renderer_of(request).page(request, "activity.html", {
        **nav(scope),
        "rows": [{
            **row._asdict(),
            "href": concept_url(row.name, scope.agent, scope.tenant, f"/versions/{row.version}"),
        } for row in rows],
        "reason": reason,
        "actor": actor,
        "chips": [{"label": "All", "href": link(reason=None), "active": reason is None},
                  *({"label": r, "href": link(reason=r), "active": reason == r} for r in REASONS)],
        "older_href": link(before=rows[-1].id) if more else None,
        "newest_href": link() if before is not None else None,
        "clear_actor_href": link(actor=None) if actor else None,
    })
