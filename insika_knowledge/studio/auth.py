"""Access to the Studio: one admin token, a login form, and a signed session cookie.

The token comes from ``$INSIKA_ADMIN_TOKEN`` (at least `MIN_TOKEN_LENGTH` characters)
or is generated at start. Logging in (a POST with the token and a CSRF token) marks the
session as authenticated; the session lives in a cookie signed with a per-process
secret (Starlette's SessionMiddleware, itsdangerous), HttpOnly and SameSite=strict.
Login attempts are throttled per client address (`throttle`, 429 with Retry-After).

`LoginGate` lets only the login page and static files through without a session; any
other GET goes to the login form with a validated same-origin ``next`` (`safe_next`),
where logging in leads back. A browser never sends a SameSite=strict cookie with a
navigation from another site, so a link to the Studio on another site would find even
a logged-in operator logged out: such a GET (``Sec-Fetch-Site: cross-site``) gets a page
that reloads the same address from the Studio itself, which carries the cookie.
"""

from __future__ import annotations

import hmac
import secrets
from typing import Final
from urllib.parse import urlsplit

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.types import ASGIApp, Receive, Scope, Send

from insika_knowledge.studio import csrf
from insika_knowledge.studio.render import AUTH_KEY, Renderer, url
from insika_knowledge.studio.throttle import LoginThrottle, client_address, client_key

TOKEN_ENV: Final = "INSIKA_ADMIN_TOKEN"
SESSION_COOKIE: Final = "insika_studio"
SESSION_MAX_AGE_S: Final = 12 * 3600
LOGIN_PATH: Final = "/studio/login"
HOME_PATH: Final = "/studio/knowledge"
_PUBLIC: Final = (LOGIN_PATH, "/studio/static/")
#: Asked for by browsers on their own: answered without a session, so a request racing
#: the login page never starts a second session (and a second CSRF token).
FAVICON_PATH: Final = "/favicon.ico"
#: The shortest admin token accepted. The Studio can only count characters, not judge
#: randomness; 16 random characters, even from lower-case letters and digits alone,
#: are 36**16 (about 8e24, 82 bits) values, far beyond reach at the throttled rate
#: (`throttle.MAX_ATTEMPTS` a minute per address). Generated tokens have 32.
MIN_TOKEN_LENGTH: Final = 16
#: The longest ``next`` (a path and query of this Studio) accepted.
NEXT_MAX: Final = 2000


def token_problem(token: str) -> str | None:
    """Why `token` cannot be the admin token (too short); None when it can."""
    if len(token) < MIN_TOKEN_LENGTH:
        return (f"the admin token is {len(token)} character{'' if len(token) == 1 else 's'} long; "
                f"the Studio needs at least {MIN_TOKEN_LENGTH}, random. Leave ${TOKEN_ENV} unset "
                "and the Studio makes one, or make one with: python -c \"import secrets; "
                "print(secrets.token_urlsafe(24))\"")
    return None


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
    """Where to go after logging in: a page of this Studio, never another site.

    `target` is kept when it is a path under ``/studio/`` (with its query) of at most
    `NEXT_MAX` printable ASCII characters; anything else is `HOME_PATH`: an absolute
    URL (``https://evil.example/``), a scheme-relative one (``//evil.example``), a
    backslash (browsers read ``/\\evil.example`` as ``//evil.example``), a space or
    control character (browsers drop tabs and line breaks from URLs, so ``/\t/evil``
    would become ``//evil``), or the login page itself.
    """
    if (
        not isinstance(target, str) or len(target) > NEXT_MAX or not target.isascii()
        or any(c <= " " or c in "\\\x7f" for c in target)
    ):
        return HOME_PATH
    parts = urlsplit(target)
    if parts.scheme or parts.netloc or not parts.path.startswith("/studio/") or (
        parts.path.rstrip("/") == LOGIN_PATH
    ):
        return HOME_PATH
    return target


def target_of(scope: Scope) -> str:
    """The request's own path and query, as the browser sent them (still URL-encoded)."""
    raw: bytes = scope.get("raw_path") or scope.get("path", "").encode()
    query: bytes = scope.get("query_string", b"")
    return raw.decode("latin-1") + (f"?{query.decode('latin-1')}" if query else "")


def is_cross_site(scope: Scope) -> bool:
    """True for a request a page of another site started (``Sec-Fetch-Site: cross-site``)."""
    return any(k == b"sec-fetch-site" and v == b"cross-site" for k, v in scope.get("headers", []))


class LoginGate:
    """ASGI middleware: requests without a logged-in session go to the login page.

    A GET or HEAD is redirected (303) to the login form, remembering where it was
    going; any other method gets a 401 page. A GET or HEAD that another site started
    first gets a page reloading it from here (see the module). Runs inside the session
    middleware.
    """

    def __init__(self, app: ASGIApp, renderer: Renderer):
        self.app = app
        self.renderer = renderer

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Let a logged-in or public request through; answer any other one here."""
        path = scope.get("path", "")
        if scope["type"] != "http" or path.startswith(_PUBLIC[1]) or path == FAVICON_PATH:
            await self.app(scope, receive, send)
            return
        request = Request(scope, receive)
        response: Response
        reading = request.method in ("GET", "HEAD")
        if reading and is_cross_site(scope):
            if path == LOGIN_PATH:  # the login form, and where it leads after
                target = url(LOGIN_PATH, next=safe_next(request.query_params.get("next")))
            else:
                target = safe_next(target_of(scope))
            # Rendered without the session: a new (empty) one would be sent back as a
            # cookie and replace the operator's own.
            sessionless = Request({k: v for k, v in scope.items() if k != "session"})
            response = self.renderer.page(sessionless, "reload.html", {"target": target})
            await response(scope, receive, send)
            return
        if path == LOGIN_PATH or is_authenticated(request):
            await self.app(scope, receive, send)
            return
        if reading:
            response = RedirectResponse(url(LOGIN_PATH, next=safe_next(target_of(scope))), 303)
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
    """POST /studio/login: check the CSRF token and the admin token; 401 page if wrong.

    A request with the right CSRF token counts toward its client address's limit
    (`throttle`); past the limit the answer is a 429 login page with ``Retry-After``,
    whatever the token. One without it is refused (403) and not counted, so a page on
    another site cannot lock the operator out by posting wrong tokens from their
    browser (it cannot send the session cookie). Counting and checking the token run
    with no ``await`` between them: parallel requests cannot pass the count together.
    """
    renderer: Renderer = request.app.state.renderer
    throttle: LoginThrottle = request.app.state.login_throttle
    form = await request.form()
    csrf.check(request, form)
    target = safe_next(form.get("next"))
    client = client_key(client_address(request.client.host if request.client else None,
                                       request.headers.get("x-forwarded-for")))
    wait = throttle.attempt(client)
    if wait is not None:
        response = renderer.page(request, "login.html", {
            "next": target,
            "error": f"Too many login attempts from your address: wait {wait} second"
                     f"{'' if wait == 1 else 's'}, then try again.",
        }, status=429)
        response.headers["retry-after"] = str(wait)
        return response
    given = form.get("token")
    if not isinstance(given, str) or not token_matches(given.strip(), request.app.state.token):
        return renderer.page(
            request, "login.html",
            {"next": target, "error": "That token is not right. Use the one printed at start "
             f"(or ${TOKEN_ENV})."},
            status=401,
        )
    throttle.succeeded(client)
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
