"""The request body cap: no request makes the Studio hold more than `MAX_BODY_BYTES` of it.

Starlette reads a whole urlencoded form into memory before parsing it, so one request
with a large body (logged in or not: the login form is public) could make the server
allocate as much as the client sends. `BodyLimit` runs before the session, the login
gate and the form parser, and refuses with a 413 page:

- a request whose ``Content-Length`` says more than the cap, before any of the body is
  read;
- a request without one (chunked), as soon as the bytes received pass the cap, while
  the route is still reading its form (nothing is written then: every handler reads its
  whole form before it writes).

Either answer says ``Connection: close``, so the server stops reading the rest.
"""

from __future__ import annotations

from typing import Final

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from insika_knowledge.studio.render import Renderer

#: The largest request body accepted: 1 MiB. The largest form is a concept record
#: (`concept.BODY_MAX` is 20,000 characters: at most about 240 KB once URL-encoded).
MAX_BODY_BYTES: Final = 1024 * 1024


def too_large(limit: int) -> str:
    """The 413 page's message for a `limit`-byte cap."""
    return (f"The request is larger than the Studio accepts ({limit // 1024} KiB); nothing was "
            "read or written.")


class BodyTooLarge(HTTPException):
    """The body passed the cap while it was being read (a 413 page)."""

    def __init__(self, limit: int):
        super().__init__(413, too_large(limit), headers={"connection": "close"})


class BodyLimit:
    """ASGI middleware: refuse request bodies over `limit` bytes (413).

    Args:
        app: the application inside.
        renderer: renders the error page when the declared length is already too large.
        limit: the cap in bytes (`MAX_BODY_BYTES` by default).
    """

    def __init__(self, app: ASGIApp, renderer: Renderer, limit: int = MAX_BODY_BYTES):
        self.app = app
        self.renderer = renderer
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Refuse a declared-too-large body at once; count the bytes of any other one."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = [v for k, v in scope.get("headers", []) if k == b"content-length"]
        if any(not (v.isdigit() and int(v) <= self.limit) for v in declared):
            status = 413 if all(v.isdigit() for v in declared) else 400
            message = too_large(self.limit) if status == 413 else "The Content-Length header is not a number."
            response = self.renderer.error(Request(scope), status, message)
            response.headers["connection"] = "close"
            await response(scope, receive, send)
            return
        received = 0

        async def counted() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.limit:
                    raise BodyTooLarge(self.limit)
            return message

        await self.app(scope, counted, send)
