"""`Upstream`: the relay's one keep-alive connection pool to the upstream.

Requests go straight to an httpx transport (httpcore's pool over
`insika_knowledge.relay.netbackend.AsyncioBackend`), not through `httpx.AsyncClient`: the
relay needs none of the client's layers (auth, redirects, default headers, event hooks),
and its cookie jar would be wrong here, keeping one caller's upstream cookies for the
next caller. The upstream sees the caller's headers (`insika_knowledge.relay.upstream.request_headers`)
and nothing else but ``host`` and ``content-length``. Responses are `httpx.Response`
values open for streaming; failures are `httpx.HTTPError` subclasses, as with the client.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Sequence
from typing import Final

import httpcore
import httpx

from insika_knowledge.relay.netbackend import AsyncioBackend

#: Upstream URLs parsed once and kept (the relay sees a handful of paths).
_URL_CACHE_SIZE: Final = 256


def transport(limits: httpx.Limits) -> httpx.AsyncHTTPTransport:
    """The httpx HTTP/1.1 transport with its pool on asyncio sockets (no proxy from the
    environment, system certificates).
    """
    out = httpx.AsyncHTTPTransport(limits=limits, trust_env=False)
    out._pool = httpcore.AsyncConnectionPool(
        ssl_context=httpx.create_ssl_context(trust_env=False),
        max_connections=limits.max_connections,
        max_keepalive_connections=limits.max_keepalive_connections,
        keepalive_expiry=limits.keepalive_expiry,
        network_backend=AsyncioBackend(),
    )
    return out


class Upstream:
    """The pool of connections to the upstream (open it in the event loop that uses it).

    Args:
        timeout: connect and read timeouts.
        limits: connections at most, and kept alive.
    """

    def __init__(self, timeout: httpx.Timeout, limits: httpx.Limits):
        self._transport = transport(limits)
        self._timeout = timeout.as_dict()
        self._urls: dict[str, httpx.URL] = {}

    def _url(self, url: str) -> httpx.URL:
        parsed = self._urls.get(url)
        if parsed is None:
            if len(self._urls) >= _URL_CACHE_SIZE:
                self._urls.clear()
            parsed = self._urls[url] = httpx.URL(url)
        return parsed

    async def send(
        self, method: str, url: str, headers: Sequence[tuple[str, str]], content: bytes,
        on_sent: Callable[[], None] | None = None,
    ) -> httpx.Response:
        """Send one request; the response is open for streaming (read or close it).

        Args:
            method: the HTTP method.
            url: the absolute upstream URL.
            headers: the headers to send, in order (``host`` and ``content-length`` are added);
                text is Latin-1, one character per byte received (as ASGI servers decode).
            content: the body.
            on_sent: called once the whole request is written (before its answer is read);
                not called when it never is.

        Raises:
            httpx.HTTPError: the upstream cannot be reached or stopped answering.
        """
        # Latin-1: each header byte as the client sent it (UTF-8 or obs-text included).
        raw = [(k.encode("latin-1"), v.encode("latin-1")) for k, v in headers]
        body: bytes | _Signalling = content
        if on_sent is not None:  # a body httpx streams: its length said here, as httpx would
            raw.append((b"Content-Length", str(len(content)).encode("ascii")))
            body = _Signalling(content, on_sent)
        request = httpx.Request(method, self._url(url), headers=raw, content=body,
                                extensions={"timeout": self._timeout})
        response = await self._transport.handle_async_request(request)
        response.request = request
        return response

    async def aclose(self) -> None:
        """Close every connection."""
        await self._transport.aclose()


class _Signalling:
    """A request body that calls `on_sent` once httpcore has written it (when it asks for more)."""

    def __init__(self, content: bytes, on_sent: Callable[[], None]):
        self._content = content
        self._on_sent = on_sent

    async def __aiter__(self) -> AsyncIterator[bytes]:
        if self._content:
            yield self._content
        self._on_sent()
