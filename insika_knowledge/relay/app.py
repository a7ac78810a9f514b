"""The relay's ASGI app: the two model endpoints, and everything else passed through.

- ``POST /v1/chat/completions`` (OpenAI) and ``POST /v1/messages`` (Anthropic), served as
  raw ASGI (`insika_knowledge.relay.asgi`): the request is prepared by memory
  (`insika_knowledge.relay.prepare`), sent upstream, and the answer relayed as JSON
  (`insika_knowledge.relay.exchange.json_answer`) or as a stream
  (`insika_knowledge.relay.streaming.stream_answer`). A non-2xx upstream answer comes back
  as it was sent (status, headers, body). Where the memory stages run, on the event loop or
  in a worker thread, is `insika_knowledge.relay.scheduling`'s choice; when the procedures
  skill cannot change the body (``shadow``), its stage starts once the request is written
  upstream, and the answer waits for it (its headers report it). A
  finished turn is handed to learning (a durable outbox write, in a worker thread) before
  the answer's last byte is sent (`insika_knowledge.relay.exchange.Exchange.seal`); an
  upstream stream that breaks is cut for the client too, without its end.
- ``GET /health``: the relay's learning state (`health`): the worker, and per tenant the
  queue, the counts and the last failed extractions (`insika_knowledge.memory.Memory.status`).
- ``GET /api/v1/skills``: the skills the relay runs (`skills`): ``skill_knowledge_graph``
  in the ``universal`` list, with its mode.
- Any other method and path (``GET /v1/models``...) goes upstream untouched but for the
  relay's own headers, and its answer streams back as it arrives.

Every request passes `insika_knowledge.relay.access.Access.admit` first (a known tenant,
its token when it has one; for a model request, a known agent when unknown names are
refused).

The upstream unreachable is a ``502`` whose body has the wire format's error shape. A
client that disconnects cancels the upstream request (a passed-through one is answered
``499``, which nobody reads).
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from concurrent.futures import Executor, ThreadPoolExecutor
from contextlib import asynccontextmanager
from typing import Any, Final

import httpx
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from insika_knowledge.procedures import OFF, SKILL_NAME
from insika_knowledge.relay.access import Refusal
from insika_knowledge.relay.anthropic_format import PATH as ANTHROPIC_PATH
from insika_knowledge.relay.anthropic_format import AnthropicFormat
from insika_knowledge.relay.asgi import ClientWatch, StreamAborted, read_body, send_stream
from insika_knowledge.relay.exchange import Exchange, json_answer
from insika_knowledge.relay.formats import WireFormat
from insika_knowledge.relay.openai_format import PATH as OPENAI_PATH
from insika_knowledge.relay.openai_format import OpenAIFormat
from insika_knowledge.relay.runtime import Relay
from insika_knowledge.relay.scheduling import Deferred, Scheduler, prepare_request
from insika_knowledge.relay.streaming import UpstreamBroke, stream_answer
from insika_knowledge.relay.upstream import (
    ClientGone,
    is_event_stream,
    request_headers,
    response_headers,
    until_disconnect,
    url,
)
from insika_knowledge.wire.headers import lower_headers

log = logging.getLogger(__name__)

#: The status logged for a request whose client went away (nginx's convention).
CLIENT_CLOSED: Final = 499
_METHODS: Final = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"]
#: Worker threads for the memory stages (SQLite reads and writes, kept off the event loop).
WORKERS: Final = 32


def _parse(raw: bytes) -> dict[str, Any] | None:
    try:
        body = json.loads(raw)
    except (ValueError, RecursionError):  # not JSON, or nested deeper than Python reads: pass it on
        return None
    return body if isinstance(body, dict) else None


def _refuse(refusal: Refusal, wire: WireFormat | None) -> Response:
    """The response to a refused request: its status, and an error body in the wire
    format's shape (both shapes at once for a passed-through path).
    """
    if wire is not None:
        body = wire.error(refusal.message, refusal.kind)
    else:
        body = {"type": "error", "error": {"type": refusal.kind, "message": refusal.message,
                                           "param": None, "code": refusal.kind}}
    return Response(json.dumps(body), status_code=refusal.status, media_type="application/json")


def _unreachable(wire: WireFormat, exc: httpx.HTTPError) -> Response:
    log.warning("relay: upstream failed: %s: %s", type(exc).__name__, exc)
    body = json.dumps(wire.error(f"the relay could not reach the upstream: {type(exc).__name__}: {exc}"))
    return Response(body, status_code=502, media_type="application/json")


async def _relay(relay: Relay, wire: WireFormat, executor: Executor, scheduler: Scheduler, scope: Scope,
                 receive: Receive, send: Send) -> None:
    raw = await read_body(receive)
    if raw is None:
        return  # the client went away before sending its request
    pairs = [(k.decode("latin-1"), v.decode("latin-1")) for k, v in scope["headers"]]  # names lower-case
    headers = dict(pairs)
    refusal = relay.access.admit(headers, model=True)
    if refusal is not None:
        await _refuse(refusal, wire)(scope, receive, send)
        return
    prepared, later = await prepare_request(relay, wire, _parse(raw), headers, executor, scheduler)
    target = url(relay.settings.upstream, scope["path"], scope["query_string"].decode("latin-1"))
    exchange = Exchange(relay, wire, prepared, target, request_headers(pairs), raw, executor,
                        scheduler.may_write_on_loop(relay, headers))
    deferred, memory = (later, None) if isinstance(later, Deferred) else (None, later)
    async with ClientWatch(receive):
        try:
            answer = await _answer(exchange, deferred.start if deferred is not None else None)
        except httpx.HTTPError as exc:
            answer = _unreachable(wire, exc)
        finally:
            if deferred is not None:  # the request went upstream, or never will: the stage runs
                deferred.start()
        if deferred is not None:
            memory = deferred.done
        if isinstance(answer, Response):
            if memory is not None:
                await memory  # the stages the response's headers report on
            await exchange.seal()  # the turn is in the outbox before the client has the answer
            answer.raw_headers.extend(exchange.relay_headers())
            await answer(scope, receive, send)
        else:
            status, upstream_headers, pieces = answer
            if memory is not None:
                try:
                    await memory
                except BaseException:  # the client left: the upstream stream is closed
                    await pieces.aclose()
                    raise
            await send_stream(send, status, upstream_headers + exchange.relay_headers(), pieces)
    if exchange.finished is not None and not exchange.sealed:  # the client left as the answer ended
        exchange.sealed = True
        await asyncio.get_running_loop().run_in_executor(executor, exchange.hand_off)


async def _answer(
    exchange: Exchange, on_sent: Callable[[], None] | None = None,
) -> Response | tuple[int, list[tuple[bytes, bytes]], AsyncGenerator[bytes, None]]:
    """The client's response: a whole one, or a stream's status, headers and pieces (its first
    bytes already read). `on_sent` is called once the request is written upstream.

    Raises:
        httpx.HTTPError: the upstream could not be reached.
    """
    response = await exchange.send(exchange.first_content(), on_sent)
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
    return response.status_code, response_headers(response.headers), _chain(first, pieces)


async def _chain(first: bytes, rest: AsyncGenerator[bytes | Response, None]) -> AsyncGenerator[bytes, None]:
    try:
        if first:
            yield first
        async for piece in rest:
            if isinstance(piece, bytes):
                yield piece
    except (httpx.HTTPError, UpstreamBroke) as exc:  # the upstream broke mid-stream: so does the client's
        log.warning("relay: the upstream stream broke, cutting the client's: %s: %s", type(exc).__name__, exc)
        raise StreamAborted(str(exc)) from None
    finally:
        await rest.aclose()


async def passthrough(request: Request) -> Response:
    """Any other request: forwarded untouched (but for the relay's headers), streamed back."""
    relay: Relay = request.app.state.relay
    refusal = relay.access.admit(lower_headers(request.headers), model=False)
    if refusal is not None:
        return _refuse(refusal, None)
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


async def health(request: Request) -> Response:
    """``GET /health``: ``{"status": "ok", "learning": {...}, "tenants": [...]}``.

    ``learning`` is ``{"on": the relay learns, "worker": {"running", "in_memory"}}``;
    ``tenants`` holds `insika_knowledge.memory.TenantStatus.to_dict` for each served tenant
    that has a database, or, when the relay requires tokens, for the request's tenant alone
    (its token in ``x-insika-token``).
    """
    relay: Relay = request.app.state.relay
    headers = lower_headers(request.headers)
    refusal = relay.access.admit(headers, model=False)
    if refusal is not None:
        return _refuse(refusal, None)
    tenants = [relay.access.tenant_of(headers)] if relay.access.requires_token else relay.access.tenants
    found = await asyncio.get_running_loop().run_in_executor(None, relay.memory.status, tenants)
    body = {"status": "ok", "learning": {"on": relay.learns, "worker": relay.memory.learning_worker()},
            "tenants": [t.to_dict() for t in found]}
    return Response(json.dumps(body), media_type="application/json")


async def skills(request: Request) -> Response:
    """``GET /api/v1/skills``: ``{"universal": ["skill_knowledge_graph"], "skills": [{"name",
    "mode", "max_injection_tokens"}]}`` (a skill whose mode is ``off`` is listed, not universal).
    """
    relay: Relay = request.app.state.relay
    refusal = relay.access.admit(lower_headers(request.headers), model=False)
    if refusal is not None:
        return _refuse(refusal, None)
    config = relay.procedures
    body = {"universal": [] if config.mode == OFF else [SKILL_NAME],
            "skills": [{"name": SKILL_NAME, "mode": config.mode,
                        "max_injection_tokens": config.max_injection_tokens}]}
    return Response(json.dumps(body), media_type="application/json")


def create_app(relay: Relay) -> ASGIApp:
    """The relay's ASGI app over `relay` (its lifespan opens and closes the upstream pool and
    the worker threads memory runs in; closing `relay` itself is the caller's).

    ``POST`` to the two model paths is served as raw ASGI (`insika_knowledge.relay.asgi`);
    everything else, the lifespan included, by a Starlette app.
    """
    executor = ThreadPoolExecutor(max_workers=WORKERS, thread_name_prefix="insika-relay-memory")
    scheduler = Scheduler()

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        relay.open_client()
        try:
            yield
        finally:
            await relay.close_client()
            executor.shutdown(wait=False)

    others = Starlette(routes=[
        Route("/health", health, methods=["GET", "HEAD"]),
        Route("/api/v1/skills", skills, methods=["GET", "HEAD"]),
        Route("/{path:path}", passthrough, methods=_METHODS),
    ], lifespan=lifespan)
    others.state.relay = relay
    wires: dict[str, WireFormat] = {OPENAI_PATH: OpenAIFormat(), ANTHROPIC_PATH: AnthropicFormat()}

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["method"] == "POST":
            wire = wires.get(scope["path"])
            if wire is not None:
                with scheduler.request():
                    await _relay(relay, wire, executor, scheduler, scope, receive, send)
                return
        await others(scope, receive, send)

    return app
