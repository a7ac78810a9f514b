"""Streamed answers: passed through as they arrive, byte for byte.

Without ``load_knowledge`` on offer, every chunk the upstream sends is forwarded the moment
it arrives, and only then read (for the answer learning needs). With it on offer, the
relay must see a call coming before the client does, so it forwards whole events: the
opening events that decide nothing yet (OpenAI's role-only chunk, Anthropic's
``message_start`` and ``ping``) are held until the first event that shows text or another
tool (then they go out together, unchanged), and from an event that starts a
``load_knowledge`` call on, the rest of that upstream answer is read but not forwarded.
The relay answers the calls and streams the continuation's events the same way. Either
way the client receives exactly the upstream's bytes, never re-serialised.

In the usual case (the model calls ``load_knowledge`` before writing anything) the client
sees one ordinary answer: the continuation's. When text came first, the client has seen
it, then the continuation follows (for Anthropic, as a second ``message_start``).

The upstream stream read to its end marker (OpenAI ``[DONE]``, Anthropic ``message_stop``)
is a finished answer: it is handed to learning (`insika_knowledge.relay.exchange.Exchange.seal`,
a durable outbox write) before the bytes holding that end marker go to the client, so a
client that stops reading at the marker (the OpenAI SDK does) or leaves right after it
loses nothing, and the turn is learned once. A client that disconnects before the end
marker reached the relay cancels the task reading the upstream, which closes the upstream
response (`httpx.Response.aclose`), dropping the connection; nothing of that partial
answer is learned.

An upstream stream that breaks (the connection drops, a read times out, a continuation
fails after bytes went out) raises `UpstreamBroke`: the client's stream is then cut
without its end (`insika_knowledge.relay.asgi.send_stream`), so its SDK raises as it
would talking to the upstream directly.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Awaitable, Callable
from typing import Final

import httpx
from starlette.concurrency import run_in_threadpool
from starlette.responses import Response

from insika_knowledge.relay.exchange import Exchange, dumps
from insika_knowledge.relay.toolloop import answer_calls, next_body, runaway_message
from insika_knowledge.relay.upstream import is_event_stream
from insika_knowledge.wire.answer import DIVERT, PASS, Answer, StreamReader
from insika_knowledge.wire.sse import SSEEvent, SSESplitter, parse_event

_WAITING: Final = "waiting"
_PASSING: Final = "passing"
_DIVERTED: Final = "diverted"


class UpstreamBroke(Exception):
    """The upstream's stream ended without its end (after bytes went to the client)."""


class StreamRound:
    """One upstream streamed answer, relayed.

    Args:
        response: the upstream response, open, 2xx, an event stream.
        reader: the wire format's reader for it.
        gated: forward whole events only, holding undecided ones and dropping a diverted
            answer (``load_knowledge`` is on offer); else forward chunks as they arrive.
        on_complete: awaited with the answer once its end marker is read, before the
            bytes holding it are yielded (not for a diverted or unreadable answer).
    """

    def __init__(self, response: httpx.Response, reader: StreamReader, gated: bool,
                 on_complete: Callable[[Answer], Awaitable[None]] | None = None):
        self.response = response
        self.reader = reader
        self.gated = gated
        self.state = _WAITING if gated else _PASSING
        self.unreadable = False
        self._splitter = SSESplitter()
        self._on_complete = on_complete
        self._completed = False

    async def _complete(self) -> None:
        """Call `on_complete` once, when the answer's end marker has just been read."""
        if self._completed or not self.reader.complete or self.diverted or self.unreadable:
            return
        self._completed = True
        if self._on_complete is not None:
            await self._on_complete(self.reader.answer())

    @property
    def diverted(self) -> bool:
        """The answer started a ``load_knowledge`` call (the client saw none of what followed)."""
        return self.state == _DIVERTED

    def _read(self, event: SSEEvent) -> str:
        try:
            return self.reader.feed(event)
        except ValueError:
            self.unreadable = True
            return PASS

    def _route(self, events: list[SSEEvent], held: list[bytes]) -> bytes:
        """The bytes of `events` the client should get now (gated), holding undecided ones."""
        out: list[bytes] = []
        for event in events:
            verdict = self._read(event)
            if self.state == _DIVERTED:
                continue
            if verdict == DIVERT:
                self.state = _DIVERTED
                held.clear()
            elif self.state == _PASSING:
                out.append(event.raw)
            else:
                held.append(event.raw)
                if verdict == PASS:
                    self.state = _PASSING
                    out.extend(held)
                    held.clear()
        return b"".join(out)

    async def pieces(self) -> AsyncGenerator[bytes, None]:
        """The bytes the client should receive, as soon as it should receive them."""
        held: list[bytes] = []
        async for chunk in self.response.aiter_bytes():
            if not self.gated:
                for event in self._splitter.feed(chunk):
                    self._read(event)
                await self._complete()
                yield chunk
                continue
            out = self._route(self._splitter.feed(chunk), held)
            await self._complete()
            if out:
                yield out
        last = self._splitter.feed(b"", final=True)
        rest = self._splitter.flush()  # an unterminated last event
        if rest:
            last.append(parse_event(rest))
        if not self.gated:
            for event in last:  # already forwarded as they arrived
                self._read(event)
            await self._complete()
            return
        out = self._route(last, held)
        if self.state == _WAITING:
            out += b"".join(held)
        await self._complete()
        if out:
            yield out


async def stream_answer(
    exchange: Exchange, response: httpx.Response
) -> AsyncGenerator[bytes | Response, None]:
    """Relay a streamed answer, rounds of ``load_knowledge`` included.

    Yields the bytes for the client. When a continuation fails before anything was
    forwarded, the first (and only) item is instead a whole `Response` to send (the
    upstream's error as it came). The finished answer is handed to learning before its
    last bytes are yielded (`Exchange.seal`).

    Args:
        exchange: the request's exchange.
        response: the first upstream response, open, 2xx, an event stream.

    Raises:
        httpx.HTTPError: the upstream could not be reached for a continuation, or the
            stream broke.
        UpstreamBroke: a continuation failed after bytes went to the client.
    """
    prepared, wire, relay = exchange.prepared, exchange.wire, exchange.relay
    body = prepared.body
    intercept = prepared.intercept if body is not None else None
    rounds = 0
    forwarded = False

    async def finish(answer: Answer) -> None:
        exchange.learn(answer)
        await exchange.seal()

    try:
        while True:
            relayed = StreamRound(response, wire.reader(intercept), gated=intercept is not None, on_complete=finish)
            async for piece in relayed.pieces():
                forwarded = True
                yield piece
            await response.aclose()
            answer = relayed.reader.answer()
            if not relayed.diverted or body is None:
                if relayed.unreadable:
                    exchange.unreadable("stream")
                elif relayed.reader.complete:
                    exchange.learn(answer)
                return
            if rounds >= relay.settings.max_rounds:  # asked with tool calls off, it called again
                if not forwarded:
                    yield exchange.runaway(rounds)
                    return
                raise UpstreamBroke(runaway_message(rounds))
            results = await run_in_threadpool(answer_calls, relay, prepared, answer.calls_to(intercept or ""))
            rounds += 1
            body = next_body(wire, body, answer, results, rounds, relay.settings.max_rounds)
            response = await exchange.send(dumps(body))
            if not response.is_success or not is_event_stream(response):
                data = await response.aread()
                if not forwarded:
                    yield exchange.respond(response, data)
                    return
                raise UpstreamBroke(f"the continuation answered {response.status_code}, "
                                    f"not a stream, after the client had part of the answer")
    finally:
        await response.aclose()
