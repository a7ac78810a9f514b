"""One request's exchange with the upstream, and the JSON (non-streamed) answer.

`Exchange` holds what every upstream call of a request shares (URL, forwarded headers,
the prepared body) and builds the client's response from an upstream one: the upstream's
status, headers (`insika_knowledge.relay.upstream.response_headers`) and body bytes as
they came, plus the relay's headers (`insika_knowledge.relay.prepare.Prepared.headers`).

`json_answer` reads a whole JSON answer; a ``load_knowledge`` call makes it answer the
call and ask again (`insika_knowledge.relay.toolloop`); the final answer's bytes go to
the client as the upstream sent them, once the turn is handed to learning
(`Exchange.seal`: durable before the client has the answer, whatever it does next).
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Callable
from concurrent.futures import Executor
from dataclasses import dataclass, field
from typing import Any

import httpx
from starlette.concurrency import run_in_threadpool
from starlette.responses import Response

from insika_knowledge.relay.degraded import LEARN, LOAD_KNOWLEDGE
from insika_knowledge.relay.formats import WireFormat
from insika_knowledge.relay.learning import BUSY, hand_off, learns
from insika_knowledge.relay.prepare import Prepared
from insika_knowledge.relay.runtime import Relay
from insika_knowledge.relay.toolloop import answer_calls, next_body, runaway_message
from insika_knowledge.relay.upstream import encode, response_headers
from insika_knowledge.wire.answer import Answer

log = logging.getLogger(__name__)


def dumps(body: dict[str, Any]) -> bytes:
    """A request body as compact JSON bytes (non-ASCII escaped, so any text encodes)."""
    return json.dumps(body, separators=(",", ":")).encode("ascii")


@dataclass
class Exchange:
    """What the upstream calls of one request share.

    Attributes:
        relay: the relay's state.
        wire: the request's wire format.
        prepared: the prepared request.
        url: the upstream URL.
        headers: the headers to send upstream (`insika_knowledge.relay.upstream.request_headers`).
        raw_body: the request body as the client sent it.
        executor: the worker threads the hand-off's database write runs in.
        on_loop: the hand-off may first try its write on the event loop, never waiting
            for the lock (`insika_knowledge.relay.scheduling.Scheduler.may_write_on_loop`).
        finished: the final answer, once read whole, when it is to be learned.
        sealed: the finished turn has been handed to learning (`seal`).
    """

    relay: Relay
    wire: WireFormat
    prepared: Prepared
    url: str
    headers: list[tuple[str, str]]
    raw_body: bytes
    executor: Executor | None = None
    on_loop: Callable[[], bool] | None = None
    finished: Answer | None = field(default=None, init=False)
    sealed: bool = field(default=False, init=False)

    def first_content(self) -> bytes:
        """The first upstream request's body: the client's bytes unless memory changed it."""
        if not self.prepared.changed or self.prepared.body is None:
            return self.raw_body
        return dumps(self.prepared.body)

    async def send(self, content: bytes, on_sent: Callable[[], None] | None = None) -> httpx.Response:
        """POST `content` upstream; the response is open for streaming (close it). `on_sent` is
        called once the request is written (not when it never is).

        Raises:
            httpx.HTTPError: the upstream cannot be reached or stops answering.
        """
        return await self.relay.client.send("POST", self.url, self.headers, content, on_sent)

    def respond(self, response: httpx.Response, content: bytes) -> Response:
        """The client's response: the upstream's status, headers and `content` (the relay's
        headers are added when it is sent: `relay_headers`).
        """
        out = Response(content, status_code=response.status_code)
        out.raw_headers = [h for h in out.raw_headers if h[0] == b"content-length"]
        out.raw_headers.extend(response_headers(response.headers))
        return out

    def runaway(self, rounds: int) -> Response:
        """The client's response when the upstream called ``load_knowledge`` again after
        the continuation with tool calls off (`toolloop.runaway_message`): a ``502`` in the
        wire format's error shape, and a ``load_knowledge`` stage failure.
        """
        message = runaway_message(rounds)
        log.warning("relay: %s", message)
        self.prepared.degraded.add(LOAD_KNOWLEDGE, "the upstream kept calling load_knowledge")
        return Response(json.dumps(self.wire.error(message)), status_code=502, media_type="application/json")

    def relay_headers(self) -> list[tuple[bytes, bytes]]:
        """The relay's response headers (`insika_knowledge.relay.prepare.Prepared.headers`), raw;
        ask once every memory stage is over.
        """
        return encode(self.prepared.headers())

    def learn(self, answer: Answer) -> None:
        """Keep `answer` as the finished turn's, when it is one to learn (`seal` hands it off)."""
        if learns(self.prepared, answer):
            self.finished = answer

    async def seal(self) -> None:
        """Hand the finished turn, if any, to learning, once, so it is durable before the
        caller sends the answer's last byte: on the event loop when that needs no wait for
        a lock (`on_loop`; an open SQLite file, a quiet relay: a thread handoff would cost as
        much as the write), else, or when the lock is held, in a worker thread, awaited. A
        client gone meanwhile cancels the wait, never the write. Never raises but for that
        cancellation.
        """
        if self.finished is None or self.sealed:
            return
        self.sealed = True
        started = time.perf_counter()
        try:
            if self.on_loop is not None and self.on_loop():
                if hand_off(self.relay, self.prepared, self.wire, self.finished, without_waiting=True) != BUSY:
                    return
            if self.executor is None:
                self.hand_off()
                return
            await asyncio.get_running_loop().run_in_executor(self.executor, self.hand_off)
        finally:
            self.prepared.learning_ms = (time.perf_counter() - started) * 1000

    def hand_off(self) -> None:
        """Hand the finished turn, if any, to learning (`insika_knowledge.relay.learning.hand_off`:
        a database write, so run it off the event loop). Never raises.
        """
        if self.finished is not None:
            hand_off(self.relay, self.prepared, self.wire, self.finished)

    def unreadable(self, what: str) -> None:
        """Fail the ``learn`` stage: the upstream's answer could not be read (for learning)."""
        if self.prepared.agent is not None and self.prepared.learns:  # recall only: nothing was to learn
            self.prepared.degraded.add(LEARN, f"the upstream {what} is not an answer in the {self.wire.name} format")


async def json_answer(exchange: Exchange, response: httpx.Response) -> Response:
    """Read a JSON answer (answering ``load_knowledge`` calls) and build the client's response.

    Args:
        exchange: the request's exchange.
        response: the first upstream response, open, 2xx and not an event stream.

    Raises:
        httpx.HTTPError: a continuation could not reach the upstream.
    """
    prepared, wire = exchange.prepared, exchange.wire
    body = prepared.body
    rounds = 0
    while True:
        try:
            data = await response.aread()
        finally:
            await response.aclose()
        if not response.is_success:
            return exchange.respond(response, data)
        try:
            answer = wire.read(json.loads(data))
        except ValueError:
            exchange.unreadable("response")
            return exchange.respond(response, data)
        calls = answer.calls_to(prepared.intercept) if prepared.intercept else []
        if not calls or body is None:
            exchange.learn(answer)
            return exchange.respond(response, data)
        if rounds >= exchange.relay.settings.max_rounds:  # asked with tool calls off, it called again
            return exchange.runaway(rounds)
        results = await run_in_threadpool(answer_calls, exchange.relay, prepared, calls)
        rounds += 1
        body = next_body(wire, body, answer, results, rounds, exchange.relay.settings.max_rounds)
        response = await exchange.send(dumps(body))
