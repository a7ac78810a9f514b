"""HTTP servers with limits: how the relay, the Studio and the MCP server listen (uvicorn).

uvicorn reads a request body of any size and waits for a request's headers for as long
as the client likes, so one client could fill the memory, or hold sockets open a byte at
a time until a legitimate request found none left. `LimitedProtocol` is uvicorn's
httptools protocol with four limits (`Limits`), enforced before the app sees anything:

- a request body over `Limits.max_body_bytes` is answered ``413`` and the connection
  closed (a ``content-length`` over it is refused before a byte of body is read);
- request headers (with the request line) over `Limits.max_header_bytes` are ``431``;
- a request whose headers have not all arrived `Limits.header_timeout_s` seconds after
  the connection opened (or after its first byte, on a kept-alive connection) is ``408``;
- a request whose body has not all arrived `Limits.body_timeout_s` seconds after its
  headers is ``408``.

The refusal bodies are JSON in a shape both OpenAI and Anthropic clients read
(``{"type": "error", "error": {"type", "message", "code"}}``). `raise_open_files` lifts
the process's soft limit of open files to its hard limit, so held sockets do not run
out of descriptors before the timeouts free them. `Limits` and the rules every server
shares for access tokens are `insika_knowledge.httplimits`' (no uvicorn needed to read them).
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any, ClassVar, Final

import uvicorn
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from insika_knowledge.httplimits import Limits

log = logging.getLogger(__name__)

_REASONS: Final = {408: "Request Timeout", 413: "Content Too Large", 431: "Request Header Fields Too Large"}


def refusal_body(status: int, message: str) -> bytes:
    """A JSON error body both OpenAI and Anthropic clients read (``error.message``)."""
    kind = {408: "timeout_error", 413: "request_too_large", 431: "request_too_large"}.get(status, "invalid_request")
    return json.dumps({"type": "error", "error": {"type": kind, "message": message, "param": None,
                                                  "code": kind}}).encode("utf-8")


class LimitedProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol with `Limits` (see the module doc); `with_limits` makes one."""

    limits: ClassVar[Limits] = Limits()

    @classmethod
    def with_limits(cls, limits: Limits) -> type[LimitedProtocol]:
        """A protocol class enforcing `limits` (uvicorn's ``http`` setting takes a class)."""
        return type("LimitedProtocol", (cls,), {"limits": limits})

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        """Open the connection; its first request's headers are due within the header timeout."""
        self._deadline: asyncio.TimerHandle | None = None
        self._refused = False
        self._header_bytes = 0
        self._body_bytes = 0
        super().connection_made(transport)
        self._arm(self.limits.header_timeout_s, "the request's headers")

    def connection_lost(self, exc: Exception | None) -> None:
        """Forget the pending deadline, then as uvicorn."""
        self._disarm()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        """Nothing more is read from a connection whose request was refused."""
        if not self._refused:
            super().data_received(data)

    def on_message_begin(self) -> None:
        """A request starts: count its header bytes; on a kept-alive connection its headers
        are due within the header timeout from now.
        """
        self._header_bytes = 0
        self._body_bytes = 0
        super().on_message_begin()
        if self._deadline is None:
            self._arm(self.limits.header_timeout_s, "the request's headers")

    def on_url(self, url: bytes) -> None:
        """Count the request line against `Limits.max_header_bytes`."""
        self._header_bytes += len(url)
        if self._header_bytes > self.limits.max_header_bytes:
            self._refuse(431, f"the request line and headers are over {self.limits.max_header_bytes} bytes")
            return
        super().on_url(url)

    def on_header(self, name: bytes, value: bytes) -> None:
        """Count a header against `Limits.max_header_bytes`."""
        if self._refused:
            return
        self._header_bytes += len(name) + len(value) + 4
        if self._header_bytes > self.limits.max_header_bytes:
            self._refuse(431, f"the request line and headers are over {self.limits.max_header_bytes} bytes")
            return
        super().on_header(name, value)

    def on_headers_complete(self) -> None:
        """Refuse a declared body over the cap; else start the request, its body due in time."""
        if self._refused:
            return
        self._disarm()
        declared = self._declared_length()
        if declared is not None and declared > self.limits.max_body_bytes:
            self._refuse(413, f"the request body ({declared} bytes) is over the "
                              f"{self.limits.max_body_bytes}-byte limit")
            return
        super().on_headers_complete()
        if declared != 0:
            self._arm(self.limits.body_timeout_s, "the request's body")

    def on_body(self, body: bytes) -> None:
        """Count the body against `Limits.max_body_bytes`."""
        if self._refused:
            return
        self._body_bytes += len(body)
        if self._body_bytes > self.limits.max_body_bytes:
            self._refuse(413, f"the request body is over the {self.limits.max_body_bytes}-byte limit")
            return
        super().on_body(body)

    def on_message_complete(self) -> None:
        """The whole request is in: no deadline until the next one begins."""
        if self._refused:
            return
        self._disarm()
        super().on_message_complete()

    def _declared_length(self) -> int | None:
        for name, value in self.headers:
            if name == b"content-length":
                try:
                    return int(value)
                except ValueError:
                    return None
        return None

    def _arm(self, seconds: float, what: str) -> None:
        self._disarm()
        self._deadline = self.loop.call_later(seconds, self._expired, what, seconds)

    def _disarm(self) -> None:
        deadline, self._deadline = getattr(self, "_deadline", None), None
        if deadline is not None:
            deadline.cancel()

    def _expired(self, what: str, seconds: float) -> None:
        self._deadline = None
        if self.transport.is_closing():
            return
        self._refuse(408, f"{what} took longer than {seconds:g} s")

    def _refuse(self, status: int, message: str) -> None:
        """Answer `status` (unless a response has started) and close the connection."""
        self._refused = True
        self._disarm()
        if self.transport.is_closing():
            return
        cycle = self.cycle
        started = cycle is not None and not cycle.response_complete and cycle.response_started
        if not started:
            body = refusal_body(status, message)
            head = (f"HTTP/1.1 {status} {_REASONS[status]}\r\ncontent-type: application/json\r\n"
                    f"content-length: {len(body)}\r\nconnection: close\r\n\r\n").encode("latin-1")
            self.transport.write(head + body)
        if cycle is not None and not cycle.response_complete:
            cycle.disconnected = True  # the app reads a disconnect; whatever it sends is dropped
            cycle.message_event.set()
        log.info("refused a request from %s: %s", self.client, message)
        self.transport.close()


def protocol(limits: Limits | None = None) -> type[LimitedProtocol]:
    """The protocol class (uvicorn's ``http`` setting) enforcing `limits` (None: the defaults)."""
    return LimitedProtocol.with_limits(limits or Limits())


def config(app: Any, host: str, port: int, limits: Limits | None = None, **options: Any) -> uvicorn.Config:
    """Uvicorn settings for `app` with `limits` (None: the defaults) on the httptools parser.

    Args:
        app: the ASGI app.
        host: the address to listen on.
        port: the TCP port.
        limits: what one request may take.
        options: more `uvicorn.Config` settings (they win over the defaults here).
    """
    settings: dict[str, Any] = {"http": protocol(limits), **options}
    return uvicorn.Config(app, host=host, port=port, **settings)


def raise_open_files() -> int:
    """Lift this process's soft limit of open files to its hard limit; returns the limit
    now in force (0 where the platform has none to read).
    """
    try:
        import resource
    except ImportError:  # not on this platform
        return 0
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = hard if hard != resource.RLIM_INFINITY else max(soft, 65536)
    if soft == resource.RLIM_INFINITY or soft >= wanted:
        return int(soft)
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))
    except (ValueError, OSError):
        return int(soft)
    return int(wanted)
