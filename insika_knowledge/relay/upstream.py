"""Talking to the upstream: which headers cross the relay, the URL, and client disconnects.

Request headers go upstream as the client sent them (its ``authorization`` or
``x-api-key`` untouched) except the hop-by-hop ones, ``host``, ``content-length`` (the
body may have changed; httpx sets it), ``accept-encoding`` (the relay asks for
``identity`` so it can read the stream it forwards) and the relay's own
(`insika_knowledge.wire.headers.is_private`). Response headers come back except the
hop-by-hop ones, ``content-length`` and ``content-encoding``.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Iterable, Mapping
from typing import Final, TypeVar

import httpx
from starlette.types import Receive

from insika_knowledge.wire.headers import is_private

T = TypeVar("T")

_HOP_BY_HOP: Final = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-authenticate",
        "proxy-authorization",
        "proxy-connection",
        "te",
        "trailer",
        "transfer-encoding",
        "upgrade",
    }
)
_NOT_FORWARDED: Final = _HOP_BY_HOP | {"host", "content-length", "accept-encoding"}
_NOT_RETURNED: Final = _HOP_BY_HOP | {"content-length", "content-encoding"}


class ClientGone(Exception):
    """The client disconnected before its answer was ready."""


def request_headers(headers: Iterable[tuple[str, str]]) -> list[tuple[str, str]]:
    """The headers to send upstream, in order (see the module doc)."""
    out = [(k, v) for k, v in headers if k.lower() not in _NOT_FORWARDED and not is_private(k.lower())]
    out.append(("accept-encoding", "identity"))
    return out


def response_headers(headers: httpx.Headers) -> list[tuple[bytes, bytes]]:
    """The upstream response headers to return, raw (repeated headers kept)."""
    return [(k, v) for k, v in headers.raw if k.decode("latin-1").lower() not in _NOT_RETURNED]


def url(base: str, path: str, query: str) -> str:
    """The upstream URL of a request to `path` (with its query string) on the relay."""
    return f"{base}{path}" + (f"?{query}" if query else "")


def encode(headers: Mapping[str, str]) -> list[tuple[bytes, bytes]]:
    """`headers` as raw ASGI header pairs."""
    return [(k.encode("latin-1"), v.encode("latin-1")) for k, v in headers.items()]


def is_event_stream(response: httpx.Response) -> bool:
    """True when the upstream answers with server-sent events."""
    content_type: str = response.headers.get("content-type", "")
    return content_type.lower().startswith("text/event-stream")


async def _disconnect(receive: Receive) -> None:
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return


async def until_disconnect(receive: Receive, work: Awaitable[T]) -> T:
    """Await `work`, cancelling it if the client disconnects first.

    Call it only after the request body has been read: from then on the server's
    ``receive`` yields nothing but ``http.disconnect``.

    Raises:
        ClientGone: the client went away (`work` was cancelled).
    """
    task = asyncio.ensure_future(work)
    watcher = asyncio.ensure_future(_disconnect(receive))
    try:
        await asyncio.wait({task, watcher}, return_when=asyncio.FIRST_COMPLETED)
    except asyncio.CancelledError:
        task.cancel()
        raise
    finally:
        watcher.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await watcher
    if task.done():
        return task.result()
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError, Exception):
        await task
    raise ClientGone
