"""Access to the Studio: one admin token, a login form, and a signed session cookie.

The token comes from ``$INSIKA_ADMIN_TOKEN`` or is generated at start. Logging in
(a POST with the token and a CSRF token) marks the session as authenticated; the
session lives in a cookie signed with a per-process secret (Starlette's
SessionMiddleware, itsdangerous), HttpOnly and SameSite=strict. `LoginGate` lets
only the login page and static files through without it.
"""

from __future__ import annotations

import hmac
import secrets
from typing import Final

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.types import ASGIApp, Receive, Scope, Send

from insika_knowledge.studio import csrf
from insika_knowledge.studio.render import AUTH_KEY, Renderer, url

TOKEN_ENV: Final = "INSIKA_ADMIN_TOKEN"
SESSION_COOKIE: Final = "insika_studio"
SESSION_MAX_AGE_S: Final = 12 * 3600
LOGIN_PATH: Final = "/studio/login"
HOME_PATH: Final = "/studio/knowledge"
_PUBLIC: Final = (LOGIN_PATH, "/studio/static/")


def new_token() -> str:
    """A fresh admin token (192 random bits, URL-safe text)."""
    return secrets.token_urlsafe(24)


def new_secret() -> str:
    """A fresh secret for signing session cookies (sessions end when the process does)."""
    return secrets.token_urlsafe(32)


def token_matches(given: str, token: str) -> bool:
    """Constant-time comparison of a submitted token with the admin token."""
    return hmac.compare_digest(given.encode(), token.encode())


SESSION_ID_KEY = "sid"


def is_authenticated(request: Request) -> bool:
    """True when the request's session has logged in and has not logged out since.

    The session lives in a signed cookie, so logging out also records the session's id
    as revoked (in this process): a copy of the cookie taken before is refused too.
    """
    session = request.scope.get("session") or {}
    if session.get(AUTH_KEY) is not True:
        return False
    revoked: set[str] = request.app.state.revoked_sessions
    return session.get(SESSION_ID_KEY) not in revoked


def safe_next(target: object) -> str:
    """Where to go after logging in: a Studio path, never another site."""
    if isinstance(target, str) and target.startswith("/studio/") and "\\" not in target:
        return target
    return HOME_PATH


class LoginGate:
    """ASGI middleware: requests without a logged-in session go to the login page.

    A GET or HEAD is redirected (303) to the login form, remembering where it was
    going; any other method gets a 401 page. Runs inside the session middleware.
    """

    def __init__(self, app: ASGIApp, renderer: Renderer):
        self.app = app
        self.renderer = renderer

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Let a logged-in or public request through; answer any other one here."""
        path = scope.get("path", "")
        if (
            scope["type"] != "http"
            or path == LOGIN_PATH
            or path.startswith(_PUBLIC[1])
            or is_authenticated(Request(scope))
        ):
            await self.app(scope, receive, send)
            return
        request = Request(scope, receive)
        response: Response
        if request.method in ("GET", "HEAD"):
            target = path + (f"?{request.url.query}" if request.url.query else "")
            response = RedirectResponse(url(LOGIN_PATH, next=safe_next(target)), 303)
        else:
            response = self.renderer.error(
                request, 401, "Log in first: this action needs a logged-in session."
            )
        await response(scope, receive, send)


async def login_form(request: Request) -> Response:
    """GET /studio/login: the token form (already logged in: straight on)."""
    target = safe_next(request.query_params.get("next"))
    if is_authenticated(request):
        return RedirectResponse(target, 303)
    renderer: Renderer = request.app.state.renderer
    return renderer.page(request, "login.html", {"next": target, "error": None})


async def login(request: Request) -> Response:
    """POST /studio/login: check the CSRF token and the admin token; 401 page if wrong."""
    form = await request.form()
    csrf.check(request, form)
    target = safe_next(form.get("next"))
    given = form.get("token")
    if not isinstance(given, str) or not token_matches(given.strip(), request.app.state.token):
        renderer: Renderer = request.app.state.renderer
        return renderer.page(
            request, "login.html",
            {"next": target, "error": "That token is not right. Use the one printed at start "
             f"(or ${TOKEN_ENV})."},
            status=401,
        )
    request.session.clear()  # a fresh session: new CSRF token after logging in
    request.session[AUTH_KEY] = True
    request.session[SESSION_ID_KEY] = secrets.token_urlsafe(16)
    csrf.token(request)
    return RedirectResponse(target, 303)


async def logout(request: Request) -> Response:
    """POST /studio/logout: end the session."""
    form = await request.form()
    csrf.check(request, form)
    sid = request.session.get(SESSION_ID_KEY)
    if isinstance(sid, str):
        request.app.state.revoked_sessions.add(sid)
    request.session.clear()
    return RedirectResponse(LOGIN_PATH, 303)
