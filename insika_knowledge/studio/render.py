"""Rendering helpers: the Jinja2 environment, the markdown preview, diffs and URLs.

This module is the Studio's only user of Jinja2 and markdown-it-py. Autoescape is on
for every template, so every value rendered is HTML-escaped unless marked safe here.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final
from urllib.parse import urlencode

import jinja2
from markdown_it import MarkdownIt
from markupsafe import Markup
from starlette.requests import Request
from starlette.responses import HTMLResponse

from insika_knowledge.studio import csrf
from insika_knowledge.studio.wikilinks import HREF_KEY, use_wikilinks

HERE: Final = Path(__file__).parent
TEMPLATES: Final = HERE / "templates"
STATIC: Final = HERE / "static"
#: Session keys: logged in (True), and a one-shot message for the next page.
AUTH_KEY: Final = "auth"
FLASH_KEY: Final = "flash"
#: The ASGI scope key where the app's header middleware leaves the response's CSP style nonce.
CSP_NONCE_KEY: Final = "insika.csp_nonce"
TITLES: Final = {
    400: "Bad request", 401: "Not logged in", 403: "Refused", 404: "Not found",
    405: "Method not allowed", 409: "Conflict", 413: "Request too large", 422: "Invalid record",
    429: "Too many attempts", 500: "Something went wrong", 503: "Database unavailable",
}

# CommonMark with raw HTML disabled (a "<script>" in a body is shown as text), and
# [[name]] links made on the token stream (see wikilinks).
_MARKDOWN: Final = use_wikilinks(MarkdownIt("commonmark", {"html": False, "linkify": False}))


def environment() -> jinja2.Environment:
    """The templates' environment: autoescape on, undefined variables are errors."""
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(TEMPLATES)),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.globals["url"] = url
    return env


def url(path: str, **params: Any) -> str:
    """`path` with the non-empty `params` as a query string (values URL-encoded)."""
    query = urlencode({k: v for k, v in params.items() if v not in (None, "", False)})
    return f"{path}?{query}" if query else path


def concept_url(name: str, agent: str, tenant: str, suffix: str = "", **params: Any) -> str:
    """The URL of concept `name`'s page (or a sub-page such as ``/delete``)."""
    return url(f"/studio/knowledge/{name}{suffix}", agent=agent, tenant=tenant, **params)


def preview(body: str, agent: str, tenant: str) -> Markup:
    """The body rendered as HTML (CommonMark, raw HTML off), ``[[links]]`` made clickable.

    markdown-it escapes every text and attribute it renders, the wikilinks included
    (they are tokens like any other link), so the HTML is safe as it is.
    """
    def href_of(name: str) -> str:
        return concept_url(name, agent, tenant)

    return Markup(_MARKDOWN.render(body, {HREF_KEY: href_of}))  # noqa: S704 - escaped by markdown-it


@dataclass(frozen=True, slots=True)
class DiffLine:
    """One line of a unified diff; ``kind`` is add, del, hunk, file or same."""

    kind: str
    text: str


def diff(old: str, new: str, old_label: str, new_label: str) -> list[DiffLine]:
    """A unified diff (difflib, 3 lines of context) from `old` to `new`; empty when equal."""
    lines = difflib.unified_diff(
        old.splitlines(), new.splitlines(), old_label, new_label, lineterm="", n=3
    )
    out = []
    for line in lines:
        if line.startswith(("---", "+++")):
            kind = "file"
        elif line.startswith("@@"):
            kind = "hunk"
        elif line.startswith("+"):
            kind = "add"
        elif line.startswith("-"):
            kind = "del"
        else:
            kind = "same"
        out.append(DiffLine(kind, line))
    return out


def line_count(text: str) -> int:
    """How many lines the editor's gutter numbers for `text` (at least 1)."""
    return max(1, text.count("\n") + (0 if text.endswith("\n") else 1))


class Renderer:
    """Renders the Studio's templates into HTML responses with the shared page context.

    Every page gets ``csrf`` (the session's token), ``authed``, ``flash`` (the pending
    one-shot message, consumed), ``nav_agent``/``nav_tenant`` (None unless given) and
    ``csp_nonce`` (the response's style nonce; the editor's style elements carry it).
    """

    def __init__(self) -> None:
        self.env = environment()

    def page(
        self, request: Request, template: str, context: dict[str, Any], *, status: int = 200
    ) -> HTMLResponse:
        """Render `template` with `context` plus the shared keys, as a `status` response."""
        has_session = "session" in request.scope
        shared: dict[str, Any] = {
            "csrf": csrf.token(request) if has_session else "",
            "authed": has_session and request.session.get(AUTH_KEY) is True,
            "flash": request.session.pop(FLASH_KEY, None) if has_session else None,
            "nav_agent": None,
            "nav_tenant": None,
            "csp_nonce": request.scope.get(CSP_NONCE_KEY, ""),
        }
        html = self.env.get_template(template).render({**shared, **context})
        return HTMLResponse(html, status_code=status)

    def error(
        self, request: Request, status: int, message: str, *,
        link: tuple[str, str] | None = None, **context: Any,
    ) -> HTMLResponse:
        """An error page: a title for `status`, the `message`, and an optional (href, label)."""
        return self.page(
            request, "error.html",
            {"status": status, "title": TITLES.get(status, "Error"), "message": message,
             "link": link, **context},
            status=status,
        )


def flash(request: Request, message: str) -> None:
    """Leave `message` for the next page this session renders."""
    request.session[FLASH_KEY] = message
