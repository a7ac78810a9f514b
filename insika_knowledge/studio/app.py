"""The Studio application: routes, middleware and error pages over one `Memory`.

``create_app(memory, token)`` returns a Starlette app. Requests pass, outermost first:
security headers (and ``Server-Timing``), the signed session cookie, the login gate,
then the routes. Every error becomes an HTML page; a traceback never reaches the browser.
"""

from __future__ import annotations

import logging
import threading
import time
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

from insika_knowledge.errors import RunTimeFailure
from insika_knowledge.memory import Memory
from insika_knowledge.studio import auth, edit, views
from insika_knowledge.studio.render import STATIC, Renderer

log = logging.getLogger(__name__)

SECURITY_HEADERS: Final = (
    (b"content-security-policy",
     b"default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
     b"form-action 'self'; frame-ancestors 'none'; base-uri 'none'"),
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"no-referrer"),
    (b"cache-control", b"no-store"),
)


class Headers:
    """ASGI middleware: security headers on every response, and ``Server-Timing: app;dur=ms``.

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

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                duration_ms = (time.perf_counter() - start) * 1000
                headers = list(message.get("headers", []))
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
    return renderer.error(request, exc.status_code, detail, link=getattr(exc, "link", None))


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


def create_app(memory: Memory, token: str, *, secret: str | None = None) -> Starlette:
    """The Studio over `memory`, accessible with `token`.

    Args:
        memory: where concepts are read and written (every tenant under its directory).
        token: the admin token the login form asks for (non-empty).
        secret: signs the session cookie; a fresh random one when None (sessions then
            end when the process does).

    Raises:
        ValueError: `token` is empty.
    """
    if not token:
        raise ValueError("the Studio needs a non-empty admin token")
    routes = [
        Route("/", _home),
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
        Route("/studio/knowledge/{name}/delete", edit.delete_page, methods=["GET"]),
        Route("/studio/knowledge/{name}/delete", edit.concept_delete, methods=["POST"]),
        Mount("/studio/static", StaticFiles(directory=str(STATIC)), name="static"),
    ]
    renderer = Renderer()
    app = Starlette(
        routes=routes,
        middleware=[
            Middleware(Headers),
            Middleware(
                SessionMiddleware, secret_key=secret or auth.new_secret(),
                session_cookie=auth.SESSION_COOKIE, max_age=auth.SESSION_MAX_AGE_S,
                same_site="strict", https_only=False,
            ),
            Middleware(auth.LoginGate, renderer=renderer),
        ],
        exception_handlers={HTTPException: _http_error, RunTimeFailure: _storage_error,
                            Exception: _server_error},
    )
    app.state.memory = memory
    app.state.token = token
    app.state.revoked_sessions = set()  # session ids logged out of (see auth.is_authenticated)
    app.state.renderer = renderer
    app.state.indexes = {}  # tenant -> ScanIndex for the list's q filter
    app.state.lock = threading.Lock()
    return app
