"""The relay's Starlette app: the two model endpoints, and everything else passed through.

- ``POST /v1/chat/completions`` (OpenAI) and ``POST /v1/messages`` (Anthropic): the
  request is prepared by memory (`insika_knowledge.relay.prepare`), sent upstream, and the
  answer relayed as JSON (`insika_knowledge.relay.exchange.json_answer`) or as a stream
  (`insika_knowledge.relay.streaming.stream_answer`). A non-2xx upstream answer comes back
  as it was sent (status, headers, body).
- Any other method and path (``GET /v1/models``...) goes upstream untouched but for the
  relay's own headers, and its answer streams back as it arrives.

The upstream unreachable is a ``502`` whose body has the wire format's error shape. A
client that disconnects cancels the upstream request (``499`` is logged, nobody reads it).
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncGenerator, AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, Final

import httpx
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from insika_knowledge.relay.anthropic_format import PATH as ANTHROPIC_PATH
from insika_knowledge.relay.anthropic_format import AnthropicFormat
from insika_knowledge.relay.degraded import BODY, Degraded
from insika_knowledge.relay.exchange import Exchange, json_answer
from insika_knowledge.relay.identity import AGENT_HEADER
from insika_knowledge.relay.openai_format import PATH as OPENAI_PATH
from insika_knowledge.relay.openai_format import OpenAIFormat
from insika_knowledge.relay.prepare import Prepared, prepare
from insika_knowledge.relay.runtime import Relay
from insika_knowledge.relay.streaming import stream_answer
from insika_knowledge.relay.upstream import (
    ClientGone,
    encode,
    is_event_stream,
    request_headers,
    response_headers,
    until_disconnect,
    url,
)
from insika_knowledge.relay.wire import WireFormat

log = logging.getLogger(__name__)

#: The status logged for a request whose client went away (nginx's convention).
CLIENT_CLOSED: Final = 499
_METHODS: Final = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"]


def _parse(raw: bytes) -> dict[str, Any] | None:
    try:
        body = json.loads(raw)
    except (ValueError, RecursionError):  # not JSON, or nested deeper than Python reads: pass it on
        return None
    return body if isinstance(body, dict) else None


def _unreachable(wire: WireFormat, exc: httpx.HTTPError, prepared: Prepared) -> Response:
    log.warning("relay: upstream failed: %s: %s", type(exc).__name__, exc)
    body = json.dumps(wire.error(f"the relay could not reach the upstream: {type(exc).__name__}: {exc}"))
    response = Response(body, status_code=502, media_type="application/json")
    response.raw_headers.extend(encode(prepared.headers()))
    return response


async def _relay(request: Request, wire: WireFormat) -> Response:
    relay: Relay = request.app.state.relay
    raw = await request.body()
    headers = dict(request.headers.items())  # Starlette lower-cases the names
    degraded = Degraded(relay.degraded, headers.get(AGENT_HEADER))
    body = _parse(raw)
    if body is None:
        degraded.add(BODY, "the request body is not a JSON object")
        prepared = prepare(relay, wire, None, headers, degraded)
    else:
        prepared = await run_in_threadpool(prepare, relay, wire, body, headers, degraded)
    target = url(relay.settings.upstream, request.url.path, request.url.query)
    exchange = Exchange(relay, wire, prepared, target, request_headers(request.headers.items()), raw)
    try:
        return await until_disconnect(request.receive, _answer(exchange))
    except ClientGone:
        return Response(status_code=CLIENT_CLOSED)
    except httpx.HTTPError as exc:
        return _unreachable(wire, exc, prepared)


async def _answer(exchange: Exchange) -> Response:
    """The client's response: a whole one, or a stream whose first bytes are already read.

    Raises:
        httpx.HTTPError: the upstream could not be reached.
    """
    response = await exchange.send(exchange.first_content())
    if not (response.is_success and is_event_stream(response)):
        return await json_answer(exchange, response)
    pieces = stream_answer(exchange, response)
    try:
        first = await anext(pieces)
    except StopAsyncIteration:
        first = b""
    except BaseException:
        await pieces.aclose()
        raise
    if isinstance(first, Response):
        await pieces.aclose()
        return first
    out = StreamingResponse(_chain(first, pieces), status_code=response.status_code)
    out.raw_headers = exchange.relay_headers(response)
    return out


async def _chain(first: bytes, rest: AsyncGenerator[bytes | Response, None]) -> AsyncIterator[bytes]:
    try:
        if first:
            yield first
        async for piece in rest:
            if isinstance(piece, bytes):
                yield piece
    except httpx.HTTPError as exc:  # the upstream broke mid-stream: end the client's stream
        log.warning("relay: upstream stream failed: %s: %s", type(exc).__name__, exc)
    finally:
        await rest.aclose()


async def openai_endpoint(request: Request) -> Response:
    """``POST /v1/chat/completions``."""
    return await _relay(request, OpenAIFormat())


async def anthropic_endpoint(request: Request) -> Response:
    """``POST /v1/messages``."""
    return await _relay(request, AnthropicFormat())


async def passthrough(request: Request) -> Response:
    """Any other request: forwarded untouched (but for the relay's headers), streamed back."""
    relay: Relay = request.app.state.relay
    raw = await request.body()
    target = url(relay.settings.upstream, request.url.path, request.url.query)
    sending = relay.client.send(request.method, target, request_headers(request.headers.items()), raw)
    try:
        response = await until_disconnect(request.receive, sending)
    except ClientGone:
        return Response(status_code=CLIENT_CLOSED)
    except httpx.HTTPError as exc:
        return Response(f"the relay could not reach the upstream: {exc}", status_code=502)

    async def body() -> AsyncIterator[bytes]:
        try:
            async for chunk in response.aiter_bytes():
                yield chunk
        finally:
            await response.aclose()

    out = StreamingResponse(body(), status_code=response.status_code)
    out.raw_headers = response_headers(response.headers)
    return out


def create_app(relay: Relay) -> Starlette:
    """The relay's ASGI app over `relay` (its lifespan opens and closes the upstream client;
    closing `relay` itself is the caller's).
    """

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        relay.open_client()
        try:
            yield
        finally:
            await relay.close_client()

    app = Starlette(
        routes=[
            Route(OPENAI_PATH, openai_endpoint, methods=["POST"]),
            Route(ANTHROPIC_PATH, anthropic_endpoint, methods=["POST"]),
            Route("/{path:path}", passthrough, methods=_METHODS),
        ],
        lifespan=lifespan,
    )
    app.state.relay = relay
    return app
