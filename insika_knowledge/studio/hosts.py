"""The Host-header allowlist: the Studio answers only to the names it was told it has.

A web page on another site can point its own domain name at 127.0.0.1 (DNS rebinding)
and then talk to a Studio listening on loopback as if it were that site. The browser
still sends the attacker's name in the ``Host`` header, so a request whose host is not
on the list is refused (400) before anything else runs. The list holds the loopback
names by default (`LOOPBACK_HOSTS`); ``insika-knowledge studio --allowed-host NAME``
adds more (a name a reverse proxy forwards, a LAN address).
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterable
from typing import Final

from starlette.requests import Request
from starlette.types import ASGIApp, Receive, Scope, Send

from insika_knowledge.errors import UserError
from insika_knowledge.studio.render import Renderer

#: The names a Studio on loopback is reached by: what the default list holds.
LOOPBACK_HOSTS: Final = ("localhost", "127.0.0.1", "::1")
#: A DNS name (letters, digits, '-', dots), or an IPv4 address.
_NAME_RE: Final = re.compile(r"[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*")


def normalize_host(value: str) -> str:
    """An allowed-host setting as it is compared: lower case, no brackets, no final dot.

    Raises:
        UserError: `value` is not a host name or IP address (a port, a scheme, a path or
            a wildcard is refused, with the reason).
    """
    host = value.strip().lower().removesuffix(".")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    try:
        return str(ipaddress.ip_address(host))
    except ValueError:
        pass
    if len(host) > 253 or not _NAME_RE.fullmatch(host):
        raise UserError(f"--allowed-host {value!r} is not a host name or IP address: give the name "
                        "alone, without a scheme, port, path or wildcard (e.g. studio.example.com)")
    return host


def host_of(header: str) -> str | None:
    """The host named by a ``Host`` header value, normalised; None when it is malformed.

    ``Example.COM:8765`` -> ``example.com``; ``[::1]:8765`` -> ``::1``.
    """
    value = header.strip()
    if value.startswith("["):
        end = value.find("]")
        if end < 0 or (value[end + 1:] and not _is_port(value[end + 1:])):
            return None
        value = value[:end + 1]
    elif value.count(":") == 1:
        value, port = value.split(":")
        if not _is_port(":" + port):
            return None
    try:
        return normalize_host(value)
    except UserError:
        return None


def _is_port(text: str) -> bool:
    return text.startswith(":") and text[1:].isascii() and text[1:].isdigit() and len(text) <= 6


class HostAllowlist:
    """ASGI middleware: a request whose ``Host`` is not allowed gets a 400 page, nothing more.

    Args:
        app: the application inside.
        renderer: renders the error page.
        hosts: the allowed names and addresses (see `normalize_host`).

    Raises:
        UserError: a name in `hosts` is not a host name or address.
    """

    def __init__(self, app: ASGIApp, renderer: Renderer, hosts: Iterable[str]):
        self.app = app
        self.renderer = renderer
        self.hosts = frozenset(normalize_host(h) for h in hosts)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Pass a request for an allowed host on; answer any other one here."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = [v for k, v in scope.get("headers", []) if k == b"host"]
        host = host_of(headers[0].decode("latin-1")) if len(headers) == 1 else None
        if host in self.hosts:
            await self.app(scope, receive, send)
            return
        shown = headers[0].decode("latin-1")[:100] if headers else "(none)"
        response = self.renderer.error(
            Request(scope), 400,
            f"This Studio does not answer to the host {shown!r}. Open it by one of its names "
            f"({', '.join(sorted(self.hosts))}), or start it with --allowed-host NAME for the "
            "name you use.",
        )
        await response(scope, receive, send)
