"""Rendering helpers: the Jinja2 environment, the markdown preview, diffs and URLs.

This module is the Studio's only user of Jinja2 and markdown-it-py. Autoescape is on
for every template, so every value rendered is HTML-escaped unless marked safe here.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final
from urllib.parse import urlencode

import jinja2
from markdown_it import MarkdownIt
from markupsafe import Markup, escape
from starlette.requests import Request
from starlette.responses import HTMLResponse

from insika_knowledge.concept import normalize_name
from insika_knowledge.errors import InvalidName
from insika_knowledge.studio import csrf

HERE: Final = Path(__file__).parent
TEMPLATES: Final = HERE / "templates"
STATIC: Final = HERE / "static"
#: Session keys: logged in (True), and a one-shot message for the next page.
AUTH_KEY: Final = "auth"
FLASH_KEY: Final = "flash"
TITLES: Final = {
    400: "Bad request", 401: "Not logged in", 403: "Refused", 404: "Not found",
    405: "Method not allowed", 409: "Conflict", 422: "Invalid record", 500: "Something went wrong",
    503: "Database unavailable",
}

# CommonMark with raw HTML disabled: a "<script>" in a body is shown as text.
_MARKDOWN: Final = MarkdownIt("commonmark", {"html": False, "linkify": False})
# [[name]] as it appears in already-escaped HTML (no <, >, [ or ] inside).
_WIKILINK: Final = re.compile(r"\[\[([^\[\]<>\n]{1,120})\]\]")


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

    Link targets are normalised concept names (slugs), so they need no further escaping.
    """
    html = _MARKDOWN.render(body)

    def link(match: re.Match[str]) -> str:
        try:
            name = normalize_name(match.group(1))
        except InvalidName:
            return match.group(0)
        href = escape(concept_url(name, agent, tenant))
        return f'<a class="wikilink" href="{href}">[[{match.group(1)}]]</a>'

    return Markup(_WIKILINK.sub(link, html))  # noqa: S704 - markdown-it escaped the text


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
    one-shot message, consumed) and ``nav_agent``/``nav_tenant`` (None unless given).
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
