"""Where and when a request's memory stages run: on the event loop, or in a worker thread.

What must precede the upstream call (`insika_knowledge.relay.prepare.prepare`: identity,
the ``<knowledge>`` block and the ``load_knowledge`` offer, and the procedures stage when
it can change the body) runs before it; when the procedures skill cannot change a body
(``shadow`` or ``off``), its stage is deferred and starts once the request has been
written upstream (`Deferred`), so it runs while the upstream works instead of delaying
the request. The answer waits for it (its response headers report on it).

A handoff to a worker thread and back costs 0.05-0.5 ms on a busy two-core machine, as
much as the stages themselves, so they run on the event loop when they wait on nothing
but the CPU and an SQLite file that is open already (`prepare_request`): a data directory
(not PostgreSQL), the procedures stage deferred, and the request's tenant and agent
served once before (their stores opened and migrated, their index loaded: `WarmKeys`), and
no more than `LOOP_MAX_IN_FLIGHT` model requests in the relay (a burst of requests goes to
the worker threads, so the loop keeps forwarding the streams already answering).
There they never wait for a lock: the knowledge stage reads with a busy timeout of 0
(SQLite's WAL readers do not wait for writers; the index snapshot a search may save is
derived data, skipped when the database is busy), and a request that meets a lock anyway
is prepared again in a worker thread. The deferred stage then runs on the loop too, right
after the request is written, with ``lock_budget_ms=0`` (the sweeper's lock, another
writer's: giving up leaves nothing behind), and not when the request declares a task
outcome; when it gives up it runs in a worker thread, waiting. Everything else (a first
request, PostgreSQL, a skill in ``prod`` or ``canary``) runs in a worker thread as before.
The event loop is thus never held by a wait, only by the stages' CPU, which in a worker
thread would hold the GIL all the same. The learning hand-off at the end of an answer (a
small outbox write) follows the same rule (`Scheduler.may_write_on_loop`): tried on the
loop with no wait for the lock, in a worker thread when the lock is held or the relay busy.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import Executor
from contextlib import contextmanager
from typing import Any, Final, TypeVar

from insika_knowledge.relay.degraded import BODY, Degraded
from insika_knowledge.relay.formats import WireFormat
from insika_knowledge.relay.prepare import Prepared, prepare, run_deferred_procedures, skill_keeps_bodies
from insika_knowledge.relay.runtime import Relay
from insika_knowledge.wire.headers import AGENT_HEADER, OUTCOME_HEADERS, TENANT_HEADER, memory_on

T = TypeVar("T")
log = logging.getLogger(__name__)

#: (tenant, agent) pairs `WarmKeys` remembers at most (then it forgets them all and relearns).
WARM_KEYS: Final = 4096
#: Model requests in the relay at most (this one included) for the stages to run on the loop.
LOOP_MAX_IN_FLIGHT: Final = 4


class WarmKeys:
    """The (tenant, agent) header pairs whose memory stages have run once (thread-safe)."""

    def __init__(self, limit: int = WARM_KEYS):
        self._keys: set[tuple[str, str]] = set()
        self._limit = limit
        self._lock = threading.Lock()

    @staticmethod
    def key(headers: Mapping[str, str]) -> tuple[str, str]:
        """The pair a request is remembered by: its tenant and agent headers as sent."""
        return headers.get(TENANT_HEADER, ""), headers.get(AGENT_HEADER, "")

    def __contains__(self, key: object) -> bool:
        return key in self._keys

    def add(self, key: tuple[str, str]) -> None:
        """Remember `key` (forgetting every key first when `limit` are held)."""
        with self._lock:
            if len(self._keys) >= self._limit:
                self._keys.clear()
            self._keys.add(key)


class Scheduler:
    """What decides where one request's memory stages run (see the module doc).

    Attributes:
        warm: the (tenant, agent) pairs served before.
        in_flight: the model requests in the relay now (`request` counts them; event loop only).
    """

    def __init__(self) -> None:
        self.warm = WarmKeys()
        self.in_flight = 0

    @contextmanager
    def request(self) -> Iterator[None]:
        """Count one model request as in the relay for the duration of the block."""
        self.in_flight += 1
        try:
            yield
        finally:
            self.in_flight -= 1

    def quiet(self) -> bool:
        """True when few enough requests are in the relay for work on the event loop."""
        return self.in_flight <= LOOP_MAX_IN_FLIGHT

    def on_loop(self, relay: Relay, headers: Mapping[str, str]) -> bool:
        """True when a request's memory stages may run on the event loop (see the module doc)."""
        return (self.quiet() and relay.memory.database is None and skill_keeps_bodies(relay)
                and WarmKeys.key(headers) in self.warm)

    def may_write_on_loop(self, relay: Relay, headers: Mapping[str, str]) -> Callable[[], bool]:
        """Whether the request's learning hand-off may try its outbox write on the event loop
        (never waiting for the lock), asked when the answer ends: a data directory, the
        request's tenant and agent served before (their store open), and the relay quiet
        then.
        """
        warm = relay.memory.database is None and WarmKeys.key(headers) in self.warm
        return lambda: warm and self.quiet()


def _settle(future: asyncio.Future[T], value: T) -> None:
    if not future.done():  # a request whose client left no longer waits
        future.set_result(value)


def _fail(future: asyncio.Future[Any], exc: BaseException) -> None:
    if not future.done():
        future.set_exception(exc)


def _memory_work(
    loop: asyncio.AbstractEventLoop, ready: asyncio.Future[Prepared], done: asyncio.Future[None],
    relay: Relay, wire: WireFormat, body: dict[str, Any], headers: dict[str, str], degraded: Degraded,
    warm: WarmKeys,
) -> None:
    """In a worker thread: `prepare`, then (in shadow) the deferred procedures stage."""
    try:
        prepared = prepare(relay, wire, body, headers, degraded, defer_procedures=skill_keeps_bodies(relay))
    except BaseException as exc:  # prepare never raises; a bug must not hang the request
        loop.call_soon_threadsafe(_fail, ready, exc)
        loop.call_soon_threadsafe(_settle, done, None)
        raise
    if not degraded.stages:  # a stage that failed (a store that would not open) is retried here
        warm.add(WarmKeys.key(headers))
    loop.call_soon_threadsafe(_settle, ready, prepared)
    try:
        run_deferred_procedures(relay, prepared, headers)
    finally:
        loop.call_soon_threadsafe(_settle, done, None)


def _deferred_work(
    loop: asyncio.AbstractEventLoop, done: asyncio.Future[None], relay: Relay, prepared: Prepared,
    headers: dict[str, str],
) -> None:
    """In a worker thread: the deferred procedures stage."""
    try:
        run_deferred_procedures(relay, prepared, headers)
    finally:
        loop.call_soon_threadsafe(_settle, done, None)


class Deferred:
    """The deferred procedures stage of a request prepared on the event loop: `start` runs
    it (once: call it when the request has gone upstream, and again whatever happens, so it
    always runs), on the loop when it need not wait, else in a worker thread; `done` is what
    the answer awaits.
    """

    def __init__(self, executor: Executor, relay: Relay, prepared: Prepared, headers: dict[str, str],
                 scheduler: Scheduler):
        self._executor = executor
        self._relay = relay
        self._prepared = prepared
        self._headers = headers
        self._scheduler = scheduler
        self.done: asyncio.Future[None] | None = None

    def start(self) -> None:
        """Run the stage, unless it has started already: here when it need not wait for a
        lock (see the module doc), else in a worker thread. Never raises.
        """
        if self.done is not None:
            return
        loop = asyncio.get_running_loop()
        self.done = loop.create_future()
        try:
            here = self._scheduler.quiet() and not any(name in self._headers for name in OUTCOME_HEADERS)
            if here and run_deferred_procedures(self._relay, self._prepared, self._headers, without_waiting=True):
                self.done.set_result(None)
                return
        except Exception:  # never raises; and the request it is called from must not fail
            log.exception("relay: the procedures stage failed on the event loop")
        self._executor.submit(_deferred_work, loop, self.done, self._relay, self._prepared, self._headers)


async def prepare_request(
    relay: Relay, wire: WireFormat, body: dict[str, Any] | None, headers: dict[str, str], executor: Executor,
    scheduler: Scheduler,
) -> tuple[Prepared, asyncio.Future[None] | Deferred | None]:
    """The prepared request, and what is left of its memory stages: the future of the ones
    still running in a worker thread after the request went upstream (await it before
    answering), a `Deferred` stage to start once the request has gone upstream, or None.

    Args:
        relay: the relay's state.
        wire: the request's wire format.
        body: the parsed JSON body, None when it is not a JSON object.
        headers: the request headers with lower-case names.
        executor: the worker threads.
        scheduler: where the stages run.
    """
    degraded = Degraded(relay.degraded, headers.get(AGENT_HEADER))
    if body is None:
        degraded.add(BODY, "the request body is not a JSON object")
        return prepare(relay, wire, None, headers, degraded), None
    if not memory_on(headers):  # nothing to read or write: no worker thread
        return prepare(relay, wire, body, headers, degraded), None
    if scheduler.on_loop(relay, headers):
        prepared = prepare(relay, wire, body, headers, degraded, defer_procedures=True, without_waiting=True)
        if not prepared.busy:
            later = Deferred(executor, relay, prepared, headers, scheduler) if prepared.procedures_deferred else None
            return prepared, later
        degraded = Degraded(relay.degraded, headers.get(AGENT_HEADER))  # a lock was held: wait for it there
    loop = asyncio.get_running_loop()
    ready: asyncio.Future[Prepared] = loop.create_future()
    done: asyncio.Future[None] = loop.create_future()
    executor.submit(_memory_work, loop, ready, done, relay, wire, body, headers, degraded, scheduler.warm)
    return await ready, done
