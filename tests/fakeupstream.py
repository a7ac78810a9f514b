"""A fake model API on loopback speaking OpenAI chat completions and Anthropic messages.

A Starlette app (run with uvicorn on a thread) that answers from a script: a list of
replies consumed in order (the last one repeats), or a function of the request. A reply is
`Text` (a final answer), `Calls` (tool calls, with optional text before them) or `Status`
(an HTTP error with a body). Each is sent as JSON, or as server-sent events when the
request says ``stream: true``, in the API of the path it came to.

It records every request (path, headers, body) in `requests`, every response's exact
bytes in `sent`, and how many streams were cut by the client in `cancelled`.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import threading
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from insika_knowledge.relay.server import BackgroundServer


@dataclass
class Text:
    text: str
    pieces: int = 3          # stream deltas
    delay_s: float = 0.0     # between two stream events
    linger_s: float = 0.0    # after the end marker, before the body ends
    break_after: int | None = None  # the stream breaks (connection dropped) after this many events


@dataclass
class Call:
    name: str
    arguments: dict[str, Any]
    id: str = ""


@dataclass
class Calls:
    calls: list[Call]
    text: str = ""
    delay_s: float = 0.0


@dataclass
class Status:
    code: int
    message: str = "error"
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class Raw:
    content: bytes
    content_type: str = "text/html"


Reply = Text | Calls | Status | Raw


@dataclass
class Seen:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]
    raw: bytes
    peer: str = ""  # the client's "host:port" (one per connection)


class FakeUpstream:
    def __init__(self, replies: list[Reply] | Callable[[Seen], Reply] | None = None):
        self.replies: list[Reply] | Callable[[Seen], Reply] = replies if replies is not None else [Text("Hello there.")]
        self.requests: list[Seen] = []
        self.sent: list[bytes] = []
        self.cancelled = 0
        self.finished = 0
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self.app = Starlette(routes=[
            Route("/v1/chat/completions", self._openai, methods=["POST"]),
            Route("/v1/messages", self._anthropic, methods=["POST"]),
            Route("/v1/models", self._models, methods=["GET"]),
        ])
        self._server = BackgroundServer(self.app)

    @property
    def url(self) -> str:
        return self._server.url

    def __enter__(self) -> FakeUpstream:
        self._server.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.stop()

    # ------------------------------------------------------------------ script

    async def _next(self, request: Request) -> tuple[Seen, Reply]:
        raw = await request.body()
        try:
            body = json.loads(raw or b"{}")
        except (ValueError, RecursionError):
            body = {}
        peer = f"{request.client.host}:{request.client.port}" if request.client else ""
        seen = Seen(request.url.path, dict(request.headers.items()), body if isinstance(body, dict) else {}, raw, peer)
        with self._lock:
            self.requests.append(seen)
            if callable(self.replies):
                return seen, self.replies(seen)
            if len(self.replies) > 1:
                return seen, self.replies.pop(0)
            return seen, self.replies[0]

    def reset(self, replies: list[Reply] | Callable[[Seen], Reply] | None = None) -> None:
        self.replies = replies if replies is not None else [Text("Hello there.")]
        self.requests.clear()
        self.sent.clear()
        self.cancelled = self.finished = 0

    def _id(self, prefix: str) -> str:
        return f"{prefix}{next(self._ids)}"

    def _respond(self, data: bytes, status: int = 200, headers: dict[str, str] | None = None) -> Response:
        with self._lock:
            self.sent.append(data)
        return Response(data, status_code=status, media_type="application/json",
                        headers={"x-request-id": self._id("req_"), **(headers or {})})

    def _stream(self, events: list[bytes], delay_s: float, linger_s: float = 0.0,
                break_after: int | None = None) -> StreamingResponse:
        fake = self
        record = bytearray()

        async def body() -> AsyncIterator[bytes]:
            try:
                for n, event in enumerate(events):
                    if break_after is not None and n == break_after:
                        raise ConnectionResetError("the fake upstream dropped the stream")
                    if delay_s:
                        await asyncio.sleep(delay_s)
                    record.extend(event)
                    yield event
                if linger_s:
                    await asyncio.sleep(linger_s)
                fake.finished += 1
            except asyncio.CancelledError:
                fake.cancelled += 1
                raise
            finally:
                with fake._lock:
                    fake.sent.append(bytes(record))

        return StreamingResponse(body(), media_type="text/event-stream",
                                 headers={"x-request-id": self._id("req_"), "cache-control": "no-cache"})

    async def _models(self, request: Request) -> Response:
        return JSONResponse({"object": "list", "data": [{"id": "fake-model", "object": "model"}]})

    # ------------------------------------------------------------------ OpenAI

    async def _openai(self, request: Request) -> Response:
        seen, reply = await self._next(request)
        if isinstance(reply, Raw):
            with self._lock:
                self.sent.append(reply.content)
            return Response(reply.content, media_type=reply.content_type)
        if isinstance(reply, Status):
            payload = {"error": {"message": reply.message, "type": "fake", "param": None, "code": str(reply.code)}}
            return self._respond(json.dumps(payload).encode(), reply.code, reply.headers)
        model = seen.body.get("model", "fake-model")
        calls = [(c.id or self._id("call_"), c) for c in reply.calls] if isinstance(reply, Calls) else []
        text = reply.text
        if not seen.body.get("stream"):
            message: dict[str, Any] = {"role": "assistant", "content": text or None}
            if calls:
                message["tool_calls"] = [
                    {"id": i, "type": "function", "function": {"name": c.name, "arguments": json.dumps(c.arguments)}}
                    for i, c in calls
                ]
            return self._respond(json.dumps({
                "id": self._id("chatcmpl-"), "object": "chat.completion", "created": int(time.time()),
                "model": model,
                "choices": [{"index": 0, "message": message, "logprobs": None,
                             "finish_reason": "tool_calls" if calls else "stop"}],
                "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
            }).encode())
        cid, created = self._id("chatcmpl-"), int(time.time())

        def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
            data = {"id": cid, "object": "chat.completion.chunk", "created": created, "model": model,
                    "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}]}
            return b"data: " + json.dumps(data).encode() + b"\n\n"

        events = [chunk({"role": "assistant", "content": ""})]
        pieces = reply.pieces if isinstance(reply, Text) else 2
        events += [chunk({"content": p}) for p in _split(text, pieces)]
        for n, (i, c) in enumerate(calls):
            arguments = json.dumps(c.arguments)
            half = len(arguments) // 2
            events.append(chunk({"tool_calls": [{"index": n, "id": i, "type": "function",
                                                 "function": {"name": c.name, "arguments": ""}}]}))
            events.append(chunk({"tool_calls": [{"index": n, "function": {"arguments": arguments[:half]}}]}))
            events.append(chunk({"tool_calls": [{"index": n, "function": {"arguments": arguments[half:]}}]}))
        events.append(chunk({}, "tool_calls" if calls else "stop"))
        events.append(b"data: [DONE]\n\n")
        return self._stream(events, reply.delay_s, *_tail(reply))

    # ------------------------------------------------------------------ Anthropic

    async def _anthropic(self, request: Request) -> Response:
        seen, reply = await self._next(request)
        if isinstance(reply, Raw):
            with self._lock:
                self.sent.append(reply.content)
            return Response(reply.content, media_type=reply.content_type)
        if isinstance(reply, Status):
            payload = {"type": "error", "error": {"type": "rate_limit_error" if reply.code == 429 else "api_error",
                                                  "message": reply.message}}
            return self._respond(json.dumps(payload).encode(), reply.code, reply.headers)
        model = seen.body.get("model", "fake-model")
        calls = [(c.id or self._id("toolu_"), c) for c in reply.calls] if isinstance(reply, Calls) else []
        text = reply.text
        stop = "tool_use" if calls else "end_turn"
        content: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
        content += [{"type": "tool_use", "id": i, "name": c.name, "input": c.arguments} for i, c in calls]
        mid = self._id("msg_")
        usage = {"input_tokens": 10, "output_tokens": 5}
        if not seen.body.get("stream"):
            return self._respond(json.dumps({
                "id": mid, "type": "message", "role": "assistant", "model": model, "content": content,
                "stop_reason": stop, "stop_sequence": None, "usage": usage,
            }).encode())

        def event(name: str, data: dict[str, Any]) -> bytes:
            return f"event: {name}\ndata: {json.dumps({'type': name, **data})}\n\n".encode()

        events = [
            event("message_start", {"message": {"id": mid, "type": "message", "role": "assistant", "model": model,
                                                "content": [], "stop_reason": None, "stop_sequence": None,
                                                "usage": {"input_tokens": 10, "output_tokens": 1}}}),
            event("ping", {}),
        ]
        index = 0
        if text:
            pieces = reply.pieces if isinstance(reply, Text) else 2
            events.append(event("content_block_start", {"index": 0, "content_block": {"type": "text", "text": ""}}))
            events += [event("content_block_delta", {"index": 0, "delta": {"type": "text_delta", "text": p}})
                       for p in _split(text, pieces)]
            events.append(event("content_block_stop", {"index": 0}))
            index = 1
        for n, (i, c) in enumerate(calls, start=index):
            arguments = json.dumps(c.arguments)
            half = len(arguments) // 2
            events.append(event("content_block_start", {
                "index": n, "content_block": {"type": "tool_use", "id": i, "name": c.name, "input": {}}}))
            for part in (arguments[:half], arguments[half:]):
                events.append(event("content_block_delta", {
                    "index": n, "delta": {"type": "input_json_delta", "partial_json": part}}))
            events.append(event("content_block_stop", {"index": n}))
        events.append(event("message_delta", {"delta": {"stop_reason": stop, "stop_sequence": None},
                                              "usage": {"output_tokens": 5}}))
        events.append(event("message_stop", {}))
        return self._stream(events, reply.delay_s, *_tail(reply))


def _tail(reply: Reply) -> tuple[float, int | None]:
    return (reply.linger_s, reply.break_after) if isinstance(reply, Text) else (0.0, None)


def _split(text: str, pieces: int) -> list[str]:
    if not text:
        return []
    size = max(1, -(-len(text) // max(1, pieces)))
    return [text[i:i + size] for i in range(0, len(text), size)]
