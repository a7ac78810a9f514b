"""The Studio's browsing pages: the agent picker, the concept list, and Recently deleted.

GET handlers only read; Starlette runs these plain functions in its thread pool.
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from insika_knowledge.memory import Memory
from insika_knowledge.studio import listing
from insika_knowledge.studio.render import concept_url, url
from insika_knowledge.studio.scope import (
    memory_of,
    nav,
    open_store,
    renderer_of,
    require_scope,
    resolve_scope,
)

# ---------------------------------------------------------------------------- list


def knowledge_list(request: Request) -> Response:
    """GET /studio/knowledge: the agent picker, or one agent's concepts."""
    renderer = renderer_of(request)
    scope = resolve_scope(request)
    if scope is None:
        return renderer.page(request, "picker.html", {"tenants": _picker(memory_of(request))})
    query = listing.ListQuery.from_params(request.query_params, scope.agent, scope.tenant)
    # The tenant's retriever lives as long as the `Memory`, so its read cache stays warm.
    context = listing.build(scope.store, memory_of(request).retriever(scope.tenant),
                            request.app.state.index_mode, query)
    context["deleted_href"] = url("/studio/deleted", agent=scope.agent, tenant=scope.tenant)
    context["new_href"] = url("/studio/new", agent=scope.agent, tenant=scope.tenant)
    context["export_links"] = [
        (label, url("/studio/export", agent=scope.agent, tenant=scope.tenant, format=fmt))
        for fmt, label in (("md", "Markdown (zip)"), ("graphml", "GraphML"), ("json", "JSON"))
    ]
    return renderer.page(request, "list.html", {**nav(scope), **context})


def _picker(memory: Memory) -> list[dict[str, Any]]:
    out = []
    for tenant in memory.tenants():
        store = open_store(memory, tenant)
        agents = []
        for agent in store.agents():
            counts = store.concept_page(agent, limit=0).counts  # a challenged policy counts as a conflict
            agents.append({"agent": agent, "concepts": counts.all,
                           "conflicts": counts.status.get("conflict", 0),
                           "href": url("/studio/knowledge", agent=agent, tenant=tenant)})
        out.append({"tenant": tenant, "agents": agents})
    return out


def deleted_page(request: Request) -> Response:
    """GET /studio/deleted: the agent's deleted concepts, newest first, each restorable."""
    scope = require_scope(request)
    rows = [{
        "name": v.name, "deleted_at": v.created_at, "actor": v.actor, "version": v.version,
        "restore_number": v.version - 1,
        "restore_action": concept_url(v.name, scope.agent, scope.tenant, "/restore"),
        "history_href": concept_url(v.name, scope.agent, scope.tenant,
                                    f"/versions/{v.version - 1}"),
    } for v in scope.store.deleted(scope.agent)]
    return renderer_of(request).page(request, "deleted.html", {**nav(scope), "rows": rows})
