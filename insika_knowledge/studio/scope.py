"""What a request is about: its tenant, agent and store, and the helpers every page shares.

``?agent=`` and ``?tenant=`` name the scope; an unknown or invalid one is a 404 page.
A tenant whose database file was deleted or replaced since the Studio opened it is a
503 page (`open_store`): nothing is read from the old file or written, and no empty
database is created in its place. Form helpers check the CSRF token before anything
else is read.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

from starlette.concurrency import run_in_threadpool
from starlette.datastructures import FormData
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response

from insika_knowledge.errors import InvalidName, NotFound
from insika_knowledge.ids import check_agent, check_tenant
from insika_knowledge.memory import Memory, Store, StoredConcept
from insika_knowledge.studio import csrf
from insika_knowledge.studio.render import Renderer, concept_url, url

#: Who the version history names for writes made here.
ACTOR: Final = "studio"
LINE_RE: Final = re.compile(r"^line (\d+)")


@dataclass(frozen=True)
class Scope:
    """The tenant and agent a request is about, with the tenant's store."""

    store: Store
    agent: str
    tenant: str


def memory_of(request: Request) -> Memory:
    """The app's `Memory`."""
    memory: Memory = request.app.state.memory
    return memory


def renderer_of(request: Request) -> Renderer:
    """The app's `Renderer`."""
    renderer: Renderer = request.app.state.renderer
    return renderer


def open_store(memory: Memory, tenant: str) -> Store:
    """The tenant's store, while its database file is still the one the Studio opened.

    Raises:
        HTTPException: 503 when the file was deleted or replaced since it was opened.
    """
    store = memory.store(tenant)
    problem = store.file_problem()
    if problem is not None:
        raise HTTPException(503, unavailable(problem))
    return store


def unavailable(problem: str) -> str:
    """The 503 page's message for a database file `problem` (`Database.file_problem`)."""
    return (f"{problem[:1].upper()}{problem[1:].rstrip('.')}. The Studio stopped using it: nothing "
            "was written, and no new database was made in its place. Put the file back, or "
            "restart the Studio to open the file now at that path.")


def _tenants_of(memory: Memory, agent: str) -> list[str]:
    return [t for t in memory.tenants() if agent in open_store(memory, t).agents()]


def resolve_scope(request: Request) -> Scope | None:
    """The scope named by ``?agent=`` and ``?tenant=``; None when no agent is given.

    Without a tenant, the one tenant that has the agent is used.

    Raises:
        HTTPException: 404 for an unknown or invalid agent or tenant; 400 when the agent
            exists in several tenants and none is named; 503 when the tenant's database
            file was deleted or replaced while the Studio ran.
    """
    memory = memory_of(request)
    agent = request.query_params.get("agent") or ""
    tenant = request.query_params.get("tenant") or ""
    if not agent:
        return None
    try:
        check_agent(agent)
        if tenant:
            check_tenant(tenant)
    except InvalidName as exc:
        raise HTTPException(404, str(exc)) from None
    if not tenant:
        found = _tenants_of(memory, agent)
        if not found:
            raise HTTPException(404, f"no tenant in {memory.location} has an agent {agent!r}")
        if len(found) > 1:
            raise HTTPException(
                400, f"agent {agent!r} exists in tenants {', '.join(found)}: add &tenant=NAME"
            )
        tenant = found[0]
    if not memory.has_tenant(tenant):
        raise HTTPException(404, f"there is no tenant {tenant!r} in {memory.location}")
    store = open_store(memory, tenant)
    if store.count(agent) == 0 and agent not in store.agents():
        raise HTTPException(404, f"tenant {tenant!r} has no agent {agent!r}")
    return Scope(store, agent, tenant)


def require_scope(request: Request) -> Scope:
    """`resolve_scope`, where a missing agent is a 404 page too."""
    scope = resolve_scope(request)
    if scope is None:
        raise HTTPException(404, "no agent given: add ?agent=NAME (pick one on the list page)")
    return scope


def nav(scope: Scope) -> dict[str, Any]:
    """Template context naming the scope (the header's links use it)."""
    return {"nav_agent": scope.agent, "nav_tenant": scope.tenant, "agent": scope.agent,
            "tenant": scope.tenant}


def current_or_404(scope: Scope, name: str) -> StoredConcept:
    """The concept `name`, or a 404 page (pointing at Recently deleted when it was deleted)."""
    stored = scope.store.get(scope.agent, name)
    if stored is not None:
        return stored
    history = scope.store.versions(scope.agent, name)
    if history and history[0].reason == "delete":
        raise PageError(
            404, f"concept {name!r} was deleted at {history[0].created_at}; its history is "
            "kept and it can be restored.",
            link=(url("/studio/deleted", agent=scope.agent, tenant=scope.tenant),
                  "Recently deleted"),
        )
    raise HTTPException(404, f"agent {scope.agent!r} has no concept {name!r}")


def concept_of(request: Request) -> tuple[Scope, StoredConcept]:
    """The request's scope and the concept its path's ``<name>`` names (404 pages as `current_or_404`)."""
    scope = require_scope(request)
    return scope, current_or_404(scope, request.path_params["name"])


def concept_nav(scope: Scope, name: str) -> dict[str, Any]:
    """Template context of a page about concept `name`: `nav`, its ``name`` and ``concept_href``."""
    return {**nav(scope), "name": name, "concept_href": concept_url(name, scope.agent, scope.tenant)}


def refused(request: Request, scope: Scope, name: str, message: str) -> Response:
    """The 409 page of a write on concept `name` that wrote nothing, linking back to the concept."""
    return renderer_of(request).error(
        request, 409, message, link=(concept_url(name, scope.agent, scope.tenant), f"Review {name}"), **nav(scope)
    )


class PageError(HTTPException):
    """An error page with a way on: `link` is (href, label)."""

    def __init__(self, status: int, detail: str, *, link: tuple[str, str] | None = None):
        super().__init__(status, detail)
        self.link = link


async def read_form(request: Request) -> FormData:
    """The request's form, after its CSRF token is checked (403 page otherwise)."""
    form = await request.form()
    csrf.check(request, form)
    return form


def int_field(form: FormData, key: str) -> int:
    """The whole number in form field `key`, or a 400 page."""
    value = form.get(key)
    if not isinstance(value, str) or not (value.isascii() and value.isdigit()) or len(value) > 9:
        raise HTTPException(400, f"the form's {key!r} field must be a whole number")
    return int(value)


#: A write on one concept: ``(request, scope, name, version)`` -> the response.
VersionedWrite = Callable[[Request, Scope, str, int], Response]


async def versioned_post(request: Request, write: VersionedWrite) -> Response:
    """Answer a POST on the concept its path's ``<name>`` names, with the form's ``version``.

    The CSRF token and the ``version`` field are checked first (403 and 400 pages), then
    `write` runs in the thread pool with the request's scope (`require_scope`); a concept
    that is not there (`NotFound`) is the 404 page.
    """
    form = await read_form(request)
    version = int_field(form, "version")
    return await run_in_threadpool(_scoped_write, request, write, version)


def _scoped_write(request: Request, write: VersionedWrite, version: int) -> Response:
    try:
        return write(request, require_scope(request), request.path_params["name"], version)
    except NotFound as exc:
        raise HTTPException(404, str(exc)) from None
