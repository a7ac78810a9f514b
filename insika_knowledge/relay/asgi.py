"""Raw ASGI for the relay's two model endpoints: the request body, the client going away,
and a streamed answer.

The model endpoints are served without Starlette's request, routing and streaming-response
layers (about a tenth of a millisecond per request): one task watches for the client's
disconnect (`ClientWatch`) instead of the two or three a Starlette streaming response and
a guarded upstream call start.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator
from types import TracebackType

from starlette.types import Receive, Send


async def read_body(receive: Receive) -> bytes | None:
    """The whole request body; None when the client disconnected before sending it."""
    message = await receive()
    if message["type"] == "http.disconnect":
        return None
    body: bytes = message.get("body", b"")
    if not message.get("more_body", False):
        return body
    chunks = [body]
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return None
        chunks.append(message.get("body", b""))
        if not message.get("more_body", False):
            return b"".join(chunks)


class ClientWatch:
    """``async with ClientWatch(receive):`` cancels its body when the client disconnects.

    Use it once the request body is read (from then on ``receive`` yields nothing but
    ``http.disconnect``). The cancellation ends the body (an upstream request in flight is
    cancelled, which drops its connection) and is swallowed on the way out; `gone` says it
    happened. Any other exception, and a cancellation from elsewhere, go on as they are.
    """

    def __init__(self, receive: Receive):
        self._receive = receive
        self._task: asyncio.Task[object] | None = None
        self._watcher: asyncio.Task[None] | None = None
        self.gone = False

    async def _watch(self) -> None:
        while (await self._receive())["type"] != "http.disconnect":
            pass
        self.gone = True
        if self._task is not None:
            self._task.cancel()

    async def __aenter__(self) -> ClientWatch:
        self._task = asyncio.current_task()
        self._watcher = asyncio.get_running_loop().create_task(self._watch())
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> bool:
        if self._watcher is not None:
            self._watcher.cancel()
        if self.gone and self._task is not None:
            self._task.uncancel()
            return exc_type is asyncio.CancelledError
        return False


class StreamAborted(Exception):
    """A streamed body failed after its response started: the response is left unfinished."""


async def send_stream(
    send: Send, status: int, headers: list[tuple[bytes, bytes]], body: AsyncGenerator[bytes, None]
) -> bool:
    """Send a response whose body is `body`'s pieces, each the moment it comes (`body` is
    closed after, whatever happens).

    When `body` raises `StreamAborted`, the response is left without its end: the server
    then closes the connection, and the client reads a broken stream (its HTTP library
    raises on the missing final chunk), never a clean end.

    Returns:
        True when the response was sent whole, False when it was aborted.
    """
    try:
        await send({"type": "http.response.start", "status": status, "headers": headers})
        async for piece in body:
            await send({"type": "http.response.body", "body": piece, "more_body": True})
        await send({"type": "http.response.body", "body": b"", "more_body": False})
    except StreamAborted:
        return False
    finally:
        await body.aclose()
    return True
