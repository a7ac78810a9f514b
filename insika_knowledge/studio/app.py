"""The Studio application: routes, middleware and error pages over one `Memory`.

``create_app(memory, token)`` returns a Starlette app. Requests pass, outermost first:
security headers (and ``Server-Timing``), the Host-header allowlist (400), the request
body cap (413), the signed session cookie, the login gate, then the routes. Every error
becomes an HTML page; a traceback never reaches the browser. A tenant's database file
deleted or replaced while the Studio runs is a 503 page, and nothing is written.
"""

from __future__ import annotations

import logging
import secrets
import time
from collections.abc import Iterable
from typing import Final

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.middleware.sessions import SessionMiddleware
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from insika_knowledge.errors import DatabaseFileChanged, RunTimeFailure
from insika_knowledge.memory import Memory
from insika_knowledge.studio import (
    activity,
    auth,
    create,
    edit,
    evidence,
    exports,
    quarantine,
    resolve,
    views,
)
from insika_knowledge.studio.hosts import LOOPBACK_HOSTS, HostAllowlist, normalize_host
from insika_knowledge.studio.limits import MAX_BODY_BYTES, BodyLimit
from insika_knowledge.studio.render import CSP_NONCE_KEY, STATIC, Renderer
from insika_knowledge.studio.scope import unavailable
from insika_knowledge.studio.throttle import LoginThrottle

log = logging.getLogger(__name__)
#: The ``index`` modes an agent's retrieval accepts (`Retriever.index_for`).
INDEX_MODES: Final = ("auto", "scan", "fts5")

#: The Content-Security-Policy; ``{nonce}`` is a fresh random value per response, which
#: only the style elements the editor (CodeMirror) creates carry. Scripts load from
#: /studio/static only: no inline script runs.
CSP: Final = (
    "default-src 'none'; script-src 'self'; style-src 'self' 'nonce-{nonce}'; img-src 'self'; "
    "form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
)
#: Where `Headers` leaves the response's style nonce in the ASGI scope (see `Renderer.page`).
NONCE_KEY: Final = CSP_NONCE_KEY
SECURITY_HEADERS: Final = (
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"no-referrer"),
    (b"cache-control", b"no-store"),
)


class Headers:
    """ASGI middleware: security headers on every response, and ``Server-Timing: app;dur=ms``.

    Each request gets a fresh style nonce (in ``scope[NONCE_KEY]``) named by its CSP.

    The duration runs from the request's arrival to the start of the response (the
    page is fully rendered by then), so it is the server-side cost of the request.
    """

    def __init__(self, app: ASGIApp):
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Pass the request on; add the headers when the response starts."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        start = time.perf_counter()
        nonce = scope[NONCE_KEY] = secrets.token_urlsafe(16)
        csp = (b"content-security-policy", CSP.format(nonce=nonce).encode())

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                duration_ms = (time.perf_counter() - start) * 1000
                headers = list(message.get("headers", []))
                headers.append(csp)
                headers.extend(SECURITY_HEADERS)
                headers.append((b"server-timing", f"app;dur={duration_ms:.3f}".encode()))
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, send_with_headers)


def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    renderer: Renderer = request.app.state.renderer
    detail = exc.detail if exc.status_code != 404 or exc.detail != "Not Found" else (
        f"There is no page at {request.url.path}."
    )
    if exc.status_code == 405:
        detail = f"{request.method} is not accepted here."
    response = renderer.error(request, exc.status_code, detail, link=getattr(exc, "link", None))
    response.headers.update(exc.headers or {})
    return response


def _file_changed(request: Request, exc: Exception) -> Response:
    """503: a write found the tenant's database file deleted or replaced (and wrote nothing)."""
    assert isinstance(exc, DatabaseFileChanged)
    renderer: Renderer = request.app.state.renderer
    return renderer.error(request, 503, unavailable(exc.problem))


def _storage_error(request: Request, exc: Exception) -> Response:
    """503 for a run-time failure (a busy, full, read-only or damaged database): say why."""
    log.warning("studio: %s %s failed: %s", request.method, request.url.path, exc)
    renderer: Renderer = request.app.state.renderer
    return renderer.error(request, 503, f"{exc}. Nothing more was written; try again later.")


def _server_error(request: Request, exc: Exception) -> Response:
    log.error("studio: %s %s failed", request.method, request.url.path, exc_info=exc)
    renderer: Renderer = request.app.state.renderer
    return renderer.error(
        request, 500, "The Studio hit an unexpected error; nothing more was written. "
        "The server's console has the details."
    )


def _home(request: Request) -> Response:
    return RedirectResponse(auth.HOME_PATH, 303)


def _favicon(request: Request) -> Response:
    return RedirectResponse("/studio/static/favicon.svg", 301)


def create_app(
    memory: Memory, token: str, *, secret: str | None = None, index_mode: str = "auto",
    allowed_hosts: Iterable[str] = LOOPBACK_HOSTS, max_body_bytes: int = MAX_BODY_BYTES,
) -> Starlette:
    """The Studio over `memory`, accessible with `token`.

    Args:
        memory: where concepts are read and written (every tenant under its directory).
        token: the admin token the login form asks for (at least
            `auth.MIN_TOKEN_LENGTH` characters).
        secret: signs the session cookie; a fresh random one when None (sessions then
            end when the process does).
        index_mode: the index the list's search uses for every agent, as the ``index``
            setting of an agent's ``knowledge:`` block (auto, scan or fts5).
        allowed_hosts: the names and addresses the ``Host`` header may name (any port);
            the loopback names by default. A test client must use one of them
            (``TestClient(app, base_url="http://127.0.0.1")``).
        max_body_bytes: the largest request body accepted (1 MiB).

    Raises:
        ValueError: `token` is too short, or `index_mode` is not auto, scan or fts5.
        UserError: a name in `allowed_hosts` is not a host name or address.
    """
    problem = auth.token_problem(token)
    if problem is not None:
        raise ValueError(problem)
    if index_mode not in INDEX_MODES:
        raise ValueError(f"index_mode must be one of {', '.join(INDEX_MODES)}, not {index_mode!r}")
    hosts = tuple(dict.fromkeys(normalize_host(h) for h in allowed_hosts))
    routes = [
        Route("/", _home),
        Route(auth.FAVICON_PATH, _favicon),
        Route("/studio", _home),
        Route("/studio/", _home),
        Route(auth.LOGIN_PATH, auth.login_form, methods=["GET"]),
        Route(auth.LOGIN_PATH, auth.login, methods=["POST"]),
        Route("/studio/logout", auth.logout, methods=["POST"]),
        Route("/studio/knowledge", views.knowledge_list, methods=["GET"]),
        Route("/studio/deleted", views.deleted_page, methods=["GET"]),
        Route("/studio/knowledge/{name}", edit.concept_page, methods=["GET"]),
        Route("/studio/knowledge/{name}", edit.concept_save, methods=["POST"]),
        Route("/studio/knowledge/{name}/versions/{number:int}", edit.version_page,
              methods=["GET"]),
        Route("/studio/knowledge/{name}/restore", edit.concept_restore, methods=["POST"]),
        Route("/studio/knowledge/{name}/rename", edit.concept_rename, methods=["POST"]),
        Route("/studio/knowledge/{name}/delete", edit.delete_page, methods=["GET"]),
        Route("/studio/knowledge/{name}/delete", edit.concept_delete, methods=["POST"]),
        Route("/studio/knowledge/{name}/resolve", resolve.resolve_page, methods=["GET"]),
        Route("/studio/knowledge/{name}/resolve", resolve.concept_resolve, methods=["POST"]),
        Route("/studio/knowledge/{name}/evidence", evidence.evidence_page, methods=["GET"]),
        Route("/studio/knowledge/{name}/approve", quarantine.concept_approve, methods=["POST"]),
        Route("/studio/knowledge/{name}/dismiss", resolve.concept_dismiss, methods=["POST"]),
        Route("/studio/new", create.new_page, methods=["GET"]),
        Route("/studio/new", create.concept_create, methods=["POST"]),
        Route("/studio/activity", activity.activity_page, methods=["GET"]),
        Route("/studio/export", exports.export_download, methods=["GET"]),
        Mount("/studio/static", StaticFiles(directory=str(STATIC)), name="static"),
    ]
    renderer = Renderer()
    app = Starlette(
        routes=routes,
        middleware=[
            Middleware(Headers),
            Middleware(HostAllowlist, renderer=renderer, hosts=hosts),
            Middleware(BodyLimit, renderer=renderer, limit=max_body_bytes),
            Middleware(
                SessionMiddleware, secret_key=secret or auth.new_secret(),
                session_cookie=auth.SESSION_COOKIE, max_age=auth.SESSION_MAX_AGE_S,
                same_site="strict", https_only=False,
            ),
            Middleware(auth.LoginGate, renderer=renderer),
        ],
        exception_handlers={HTTPException: _http_error, DatabaseFileChanged: _file_changed,
                            RunTimeFailure: _storage_error,
                            Exception: _server_error},
    )
    app.state.memory = memory
    app.state.token = token
    app.state.revoked_sessions = set()  # session ids logged out of (see auth.is_authenticated)
    app.state.login_throttle = LoginThrottle()  # login attempts per client address
    app.state.allowed_hosts = hosts
    app.state.renderer = renderer
    app.state.index_mode = index_mode  # Retriever.index_for mode for the list's search
    return app
