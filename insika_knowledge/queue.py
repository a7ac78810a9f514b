"""The durable learning queue: every finished turn, from every edge, survives a crash; bounded.

`ExtractionQueue.submit` writes a finished turn to its tenant's outbox table (one small
transaction, waiting at most `OutboxSettings.lock_budget_ms` for the write lock) and
returns. One worker thread per queue claims turns (from any tenant it knows of), has its
host learn them (`QueueHost.learn_queued`: `insika_knowledge.memory.Memory`, through the
tenant's `insika_knowledge.tenant.Tenant.learn`), and removes them. When it starts, the
worker resumes every turn left in the outboxes its host can reach (the SQLite files of the
data directory, or the schemas of the PostgreSQL database), including turns a crashed
process had claimed.

Callers hand a turn over with `insika_knowledge.tenant.Tenant.submit` (the plugin's
``after_turn``, the relay, the Hermes provider and the demo all do); nothing else writes
to the outbox.

Bounds:

- at most `OutboxSettings.max_pending` turns wait per tenant; a turn beyond that is
  dropped, recorded in ``extractions`` (outcome ``dropped_outbox_full``) and counted in
  a ``knowledge_dropped`` event (one per agent per `OutboxSettings.drop_window_s`);
- a turn's messages are cut to `OutboxSettings.turn_bytes_max` bytes of JSON, oldest
  messages first;
- when the write lock is busy beyond the budget (or the store is still opening, or the
  PostgreSQL server is down), the turn is *deferred*: written to the spill journal (a file
  of its own in the data directory's ``spill/`` folder, `insika_knowledge.store.spill`:
  it survives a killed process) and kept in memory (at most `OutboxSettings.spill_max`
  turns), then written to the outbox by a thread of its own as soon as it can be (never
  behind a turn being learned), and its journal file zeroed and removed. Each deferred turn
  is a ``knowledge_deferred`` event and a log line, and so is its end (``written``, or
  ``failed`` with the reason). Beyond `OutboxSettings.spill_max`, a turn is dropped and
  counted the same way as above; a process that starts takes over the journal files of
  processes that are gone;
- `ExtractionQueue.close` waits at most its ``timeout_s``; unfinished turns stay in
  the outbox for the next start.

Before a turn is written (outbox or journal), what extraction never needs is masked
(`insika_knowledge.privacy.turns.for_queue`: credentials, payment cards, CPF, CNPJ, IBAN).
Once learned, its outbox row is deleted with its bytes zeroed (SQLite's ``secure_delete``)
and the worker checkpoints and truncates the write-ahead log (`Outbox.scrub`) when its
tenant's outbox is idle, at most every `OutboxSettings.scrub_s` seconds otherwise.

A turn whose configured model cannot be used (it has no API key, the provider answers
HTTP 401, 403 or 404: `insika_knowledge.errors.ModelNotReady`) is *held* in its outbox
(`Outbox.hold`) instead of being dropped: over the relay or the hooks the turn is stored
nowhere else. Held turns are tried again when a queue worker starts (a process started once
the configuration is fixed) and as soon as the model answers a later turn of their tenant;
they count toward `OutboxSettings.max_pending`, ``status`` shows them, and
`ExtractionQueue.drain` and `ExtractionQueue.wait_empty` do not wait for them.

Delivery is at least once: a turn extracted twice (a crash between the extraction and
its removal) counts once, because sightings are keyed by session and turn. Claims are
leases (`OutboxSettings.lease_s`), so replicas on one PostgreSQL database, or processes on
one data directory, share the queued turns: each claim takes the oldest turn no live
worker holds.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import os
import random
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, Literal, Protocol

from insika_knowledge.errors import (
    InsikaError,
    ModelFailure,
    ModelNotReady,
    RunTimeFailure,
    StorageBusy,
    StorageError,
    UserError,
)
from insika_knowledge.events import EventBus, KnowledgeDeferred, KnowledgeDropped
from insika_knowledge.ids import check_agent, check_session_id, check_tenant
from insika_knowledge.privacy.pseudonyms import stored_ids
from insika_knowledge.privacy.turns import for_queue
from insika_knowledge.store.base import OutboxStorage, QueuedTurn
from insika_knowledge.store.breaker import short_reason
from insika_knowledge.store.leases import holder_gone, holder_id
from insika_knowledge.store.outbox import DROPPED_FULL, DROPPED_TOO_LARGE
from insika_knowledge.store.spill import FOLDER as SPILL_FOLDER
from insika_knowledge.store.spill import SpillJournal

log = logging.getLogger(__name__)

#: What a hand-off did with a turn: written to the outbox, waiting in memory for the write
#: lock, dropped and counted, or not queued because the agent's ``extract`` is off.
Submitted = Literal["queued", "deferred", "dropped", "off"]
#: Environment variable that sets `OutboxSettings.max_pending`.
MAX_PENDING_ENV: Final = "INSIKA_OUTBOX_MAX_PENDING"
#: Environment variable that sets `OutboxSettings.lock_budget_ms` (and the hooks' budget).
LOCK_BUDGET_ENV: Final = "INSIKA_LOCK_BUDGET_MS"
#: The longest a turn waits for its next attempt, in seconds, whatever ``Retry-After`` asks.
_LONGEST_WAIT_S: Final = 3600.0


@dataclass(frozen=True)
class OutboxSettings:
    """Bounds and timings of the extraction queue.

    Attributes:
        max_pending: turns that may wait per tenant (>= 1); more are dropped and counted.
        turn_bytes_max: the most bytes of message JSON kept per turn (oldest messages
            are cut first; a turn whose last message alone is larger is dropped).
        lock_budget_ms: the longest ``submit`` waits for the write lock, in milliseconds;
            beyond it the turn waits in memory and the worker writes it.
        spill_max: turns that may wait in memory for the lock, all tenants together.
        drop_window_s: at most one ``knowledge_dropped`` event per agent per this many
            seconds (the event counts every drop of its window).
        lease_s: how long a claimed turn stays with its worker before another may take it.
        max_attempts: claims of one turn before it is given up (recorded as ``error``).
        retry_base_s: first back-off after a storage failure, doubled per attempt, jittered.
        model_retry_base_s: first back-off after a transient model failure (a timeout,
            HTTP 429 or 5xx, a failed connection: `insika_knowledge.errors.ModelFailure`),
            in seconds, doubled per attempt, equal jitter (half fixed, half random), never
            shorter than the provider's ``Retry-After``. A turn is tried at most
            `max_attempts` times in all; the last failure stays recorded in ``extractions``
            (``backfill`` can try it again).
        poll_s: how often an idle worker looks for turns queued by other processes.
        rescan_s: how often the worker looks again through the data directory for
            tenants with queued turns (another process's, or one that ended).
        scrub_s: the longest a learned turn's bytes may stay in a busy SQLite file's
            write-ahead log before the worker checkpoints and truncates it (an idle
            outbox is scrubbed at once).
    """

    max_pending: int = 10_000
    turn_bytes_max: int = 256 * 1024
    lock_budget_ms: int = 50
    spill_max: int = 1_000
    drop_window_s: float = 60.0
    lease_s: float = 600.0
    max_attempts: int = 5
    retry_base_s: float = 1.0
    model_retry_base_s: float = 10.0
    poll_s: float = 1.0
    rescan_s: float = 60.0
    scrub_s: float = 2.0

    def __post_init__(self) -> None:
        if self.max_pending < 1 or self.turn_bytes_max < 1024 or self.spill_max < 0:
            raise UserError("outbox: max_pending >= 1, turn_bytes_max >= 1024, spill_max >= 0")
        if self.lock_budget_ms < 0 or self.lease_s <= 0 or self.max_attempts < 1:
            raise UserError("outbox: lock_budget_ms >= 0, lease_s > 0, max_attempts >= 1")
        if not (self.retry_base_s >= 0 and self.model_retry_base_s >= 0):  # NaN fails too
            raise UserError("outbox: retry_base_s >= 0, model_retry_base_s >= 0 (seconds)")

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> OutboxSettings:
        """The defaults, with `MAX_PENDING_ENV` and `LOCK_BUDGET_ENV` applied when set.

        Raises:
            UserError: a variable is not a whole number in range.
        """
        env = os.environ if environ is None else environ
        values: dict[str, int] = {}
        for name, key in ((MAX_PENDING_ENV, "max_pending"), (LOCK_BUDGET_ENV, "lock_budget_ms")):
            raw = env.get(name)
            if raw is None or not raw.strip():
                continue
            try:
                values[key] = int(raw)
            except ValueError:
                raise UserError(f"${name} must be a whole number, got {raw[:20]!r}") from None
        return dataclasses.replace(cls(), **values)


@dataclass
class _Spilled:
    """A turn waiting in memory (and in its journal file, when it has one) for the write lock."""

    tenant: str
    agent: str
    session_id: str
    turn_id: str
    knowledge: str
    messages: str
    journal: Path | None = None
    reason: str = ""
    failures: int = 0  # unexpected errors met writing it (see `ExtractionQueue._flush_spill`)

    def record(self) -> dict[str, str]:
        """What its journal file holds."""
        return {"tenant": self.tenant, "agent": self.agent, "session_id": self.session_id,
                "turn_id": self.turn_id, "knowledge": self.knowledge, "messages": self.messages}

    @classmethod
    def of(cls, record: dict[str, Any], journal: Path) -> _Spilled | None:
        """The turn a journal file holds (None: not one)."""
        keys = ("tenant", "agent", "session_id", "turn_id", "knowledge", "messages")
        if not all(isinstance(record.get(k), str) for k in keys):
            return None
        tenant, agent, session_id, turn_id, knowledge, messages = (str(record[k]) for k in keys)
        return cls(tenant, agent, session_id, turn_id, knowledge, messages, journal=journal,
                   reason="taken over from a process that ended")


#: Holder ids of the queues of this process that are still open (their journal files are theirs).
_LIVE: set[str] = set()
_LIVE_LOCK = threading.Lock()


def _alive(holder: str) -> bool:
    """True when the queue `holder` may still write its journal files (not gone)."""
    with _LIVE_LOCK:
        if holder in _LIVE:
            return True
    host, _, rest = holder.partition(":")
    pid = rest.partition(":")[0]
    if pid == str(os.getpid()) and host == holder_id().partition(":")[0]:
        return False  # this process, a queue that was closed
    return not holder_gone(holder)


@dataclass
class _Window:
    """Drops of one (tenant, agent) since its last ``knowledge_dropped`` event."""

    emitted_at: float
    count: int = 0
    pending: int = 0
    reason: str = ""


@dataclass
class _Tracked:
    """Ids this process queued that it has not yet seen finished, per tenant."""

    ids: dict[str, set[int]] = field(default_factory=dict)

    def total(self) -> int:
        return sum(len(v) for v in self.ids.values())


FailureHandler = Callable[[str, str, BaseException], None]


class QueueHost(Protocol):
    """What the queue needs of its owner (`insika_knowledge.memory.Memory` is one)."""

    @property
    def events(self) -> EventBus:
        """Where ``knowledge_dropped`` goes."""

    @property
    def location(self) -> str:
        """Where the outboxes are, for messages."""

    def outbox(self, tenant: str) -> OutboxStorage:
        """The outbox of `tenant` (its store opened on first use)."""

    @property
    def directory(self) -> Path:
        """The data directory (its ``spill/`` folder holds the spill journal)."""

    def learn_queued(self, tenant: str, turn: QueuedTurn) -> bool:
        """Learn one claimed turn; True when the model answered.

        Raises:
            StorageError: the database failed; the turn is tried again later.
            ModelFailure: the model failed transiently (``transient``; the outcome is
                recorded already); the turn is tried again later.
            ModelNotReady: the model cannot be used as configured (the outcome is recorded
                already); the turn is held.
        """

    def tenants_with_pending(self, *, held: bool = False) -> list[str]:
        """Tenants whose outbox holds turns to learn, any process's (reads only); with
        `held`, turns held until the model can be used count too.
        """


class ExtractionQueue:
    """The outbox-backed learning queue of one host (see the module doc).

    Args:
        host: where turns are stored and learned (a `insika_knowledge.memory.Memory`).
        settings: bounds and timings (None: `OutboxSettings.from_env`).
        on_failure: called as ``(agent, feature, exc)`` when a turn cannot be queued or
            extracted for a reason other than a full outbox (the plugin turns it into
            ``knowledge_degraded``); never raises into the caller.
        autostart: start the worker on the first `submit` (False: only `start` does;
            turns are queued durably meanwhile).
    """

    def __init__(self, host: QueueHost, settings: OutboxSettings | None = None, *,
                 on_failure: FailureHandler | None = None, autostart: bool = True):
        self.host = host
        self.settings = settings or OutboxSettings.from_env()
        self.worker_id = holder_id()
        self._on_failure = on_failure
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._spill_thread: threading.Thread | None = None
        self._spilled = threading.Event()
        self._flushing = threading.Lock()  # one writer of the spill at a time
        self._tenants: dict[str, None] = {}
        self._holding: set[str] = set()  # tenants with turns this worker held (`Outbox.hold`)
        self._spill: deque[_Spilled] = deque()
        self._tracked = _Tracked()
        self._windows: dict[tuple[str, str], _Window] = {}
        self._busy = False
        self._autostart = autostart
        self._resumed = threading.Event()
        folder = getattr(host, "directory", None)
        self._journal = SpillJournal(Path(folder) / SPILL_FOLDER, self.worker_id) if folder is not None else None
        self._scrubbed: dict[str, float] = {}  # tenant -> when its log was last scrubbed (0: due)
        self._logged: dict[str, float] = {}  # a failure's message -> when it was last logged
        with _LIVE_LOCK:
            _LIVE.add(self.worker_id)

    # ------------------------------------------------------------------ submit

    def submit(
        self,
        *,
        tenant: str,
        agent: str,
        knowledge: Mapping[str, Any] | None,
        session_id: str,
        turn_id: str,
        messages: Any,
        lock_budget_ms: int | None = None,
        defer: bool = True,
    ) -> Submitted:
        """Queue one finished turn durably and return (``queued``, ``deferred`` or ``dropped``).

        ``deferred``: the write lock was busy beyond the budget; the turn waits in memory
        and the worker writes it. ``dropped``: the outbox (or the memory spill) is full,
        or the turn is too large; it is recorded and counted (``knowledge_dropped``).

        Args:
            tenant: the tenant whose outbox takes the turn.
            agent: the agent id.
            knowledge: the agent's ``knowledge:`` block (written with the turn).
            session_id: the session id.
            turn_id: the turn id in the session.
            messages: the turn's messages (a list; cut to the settings' byte bound).
            lock_budget_ms: the longest wait for the write lock (None: the settings').
            defer: keep the turn in memory when the lock stays busy (False: raise
                `StorageBusy` instead, nothing kept: the caller tries again, e.g. with a
                longer budget off the event loop).

        Raises:
            StorageBusy: `defer` is False and the lock stayed busy beyond the budget.
            InvalidName: the tenant or agent name is invalid.
            UserError: the ids are not printable text, or `messages` is not a list of dicts.
            StorageError: the tenant's database cannot be written (full, read-only, damaged).
        """
        knowledge_json, messages_json = self._encoded(tenant, agent, knowledge, session_id, turn_id, messages)
        if messages_json is None:
            outbox = self._store(tenant)
            outbox.record_refusal(
                agent, *stored_ids(outbox, session_id, turn_id), DROPPED_TOO_LARGE,
                f"the turn's last message alone is over {self.settings.turn_bytes_max} bytes",
            )
            self._count_drop(tenant, agent, 0, DROPPED_TOO_LARGE)
            return "dropped"
        spilled = _Spilled(tenant, agent, session_id, turn_id, knowledge_json, messages_json)
        with self._lock:
            waiting = bool(self._spill)
        if waiting:  # keep arrival order: behind turns already waiting in memory
            if not defer:
                raise StorageBusy(f"turns wait in memory for {tenant}'s write lock", path=self.host.location)
            spilled.reason = "earlier turns wait for the database"
            return self._defer(spilled)
        try:
            done = self._write(spilled, self.settings.lock_budget_ms if lock_budget_ms is None else lock_budget_ms)
        except UserError:  # the caller's mistake (or a login that may not write): said, not kept
            raise
        except Exception as exc:  # busy, down, failing: kept (the spill journal), written later
            if not defer:
                if isinstance(exc, StorageBusy):
                    raise
                raise StorageBusy(_why(exc), path=self.host.location) from None
            spilled.reason = _why(exc)
            return self._defer(spilled)
        return done

    def hold(
        self,
        *,
        tenant: str,
        agent: str,
        knowledge: Mapping[str, Any] | None,
        session_id: str,
        turn_id: str,
        messages: Any,
        reason: str,
    ) -> Submitted:
        """Defer one finished turn without trying its outbox (its store is not open yet, or
        its database is down): the spill journal, then the outbox as soon as it can be.

        Returns:
            ``deferred``, or ``dropped`` (too large, or `OutboxSettings.spill_max` turns wait).

        Raises:
            InvalidName: the tenant or agent name is invalid.
            UserError: the ids are not printable text, or `messages` is not a list of dicts.
        """
        knowledge_json, messages_json = self._encoded(tenant, agent, knowledge, session_id, turn_id, messages)
        if messages_json is None:
            self._count_drop(tenant, agent, 0, DROPPED_TOO_LARGE)
            return "dropped"
        return self._defer(_Spilled(tenant, agent, session_id, turn_id, knowledge_json, messages_json,
                                    reason=reason))

    def _encoded(self, tenant: str, agent: str, knowledge: Mapping[str, Any] | None, session_id: str,
                 turn_id: str, messages: Any) -> tuple[str, str | None]:
        """The turn checked and as stored: (knowledge JSON, messages JSON or None when too large).

        Masks what extraction never needs (`insika_knowledge.privacy.turns.for_queue`) and
        starts the worker (when `autostart`).

        Raises:
            InvalidName: the tenant or agent name is invalid.
            UserError: the ids are not printable text, or `messages` is not a list of dicts.
        """
        check_tenant(tenant)
        check_agent(agent)
        check_session_id(session_id, "session_id")
        check_session_id(turn_id, "turn_id")
        if not isinstance(messages, (list, tuple)):
            raise UserError(f"a turn's messages must be a list, got {type(messages).__name__}")
        for i, message in enumerate(messages):
            if not isinstance(message, Mapping):
                raise UserError(f"a turn's messages[{i}] must be a message dict (role, content), "
                                f"got {type(message).__name__}")
            key = next((k for k in message if not isinstance(k, str)), None)
            if key is not None:
                raise UserError(f"a turn's messages[{i}] has a key that is not text: {key!r}")
        knowledge_json = json.dumps(dict(knowledge) if knowledge is not None else None,
                                    ensure_ascii=False, default=str)
        try:
            # bounded before masking, as `Memory.learn` bounds: what is cut is never masked (a
            # 1 MB message took the engine's hook 1.4 s to mask and was then dropped)
            listed, limit = list(messages), self.settings.turn_bytes_max
            kept = bounded_tail(listed, limit)
            messages_json = None if kept is None else bounded_messages(for_queue(listed[len(listed) - kept:]), limit)
        except (TypeError, ValueError, RecursionError) as exc:  # a value JSON cannot hold
            raise UserError(f"a turn's messages[{_unencodable(messages)}] cannot be stored as JSON: "
                            f"{str(exc)[:200]}") from None
        if self._autostart:
            self.start()
        return knowledge_json, messages_json

    def _defer(self, spilled: _Spilled) -> Submitted:
        """Keep `spilled` for the spill thread: its journal file, then memory (or drop it when full).

        One ``knowledge_deferred`` event and one log line say so.
        """
        with self._lock:
            if len(self._spill) >= self.settings.spill_max:
                self._count_drop_locked(spilled.tenant, spilled.agent, len(self._spill), "spill_full")
                return "dropped"
        if self._journal is not None and spilled.journal is None:
            try:
                spilled.journal = self._journal.write(spilled.record())
            except OSError as exc:  # kept in memory only: a kill now loses it, and says so
                spilled.reason += f" (not journalled: {exc.strerror or exc})"
        with self._lock:
            self._spill.append(spilled)
        self._spilled.set()
        where = "journal and memory" if spilled.journal is not None else "memory only"
        log.info("turn %s/%s of %s/%s deferred (%s; in the %s)", spilled.session_id, spilled.turn_id,
                 spilled.tenant, spilled.agent, spilled.reason, where)
        self._tell(spilled, "deferred", spilled.reason)
        return "deferred"

    def _tell(self, item: _Spilled, outcome: str, reason: str) -> None:
        """Emit ``knowledge_deferred`` for `item` (never raises)."""
        try:
            self.host.events.emit(KnowledgeDeferred(
                agent=item.agent, tenant=item.tenant, session_id=item.session_id, turn_id=item.turn_id,
                outcome=outcome, reason=reason[:300]))
        except Exception:  # the bus never breaks the queue
            log.exception("could not emit knowledge_deferred")

    def _write(self, item: _Spilled, busy_timeout_ms: int | None) -> Submitted:
        """Insert `item` into its tenant's outbox; ``queued`` or ``dropped`` (full)."""
        outbox = self._store(item.tenant)
        result = outbox.enqueue(
            item.agent, *stored_ids(outbox, item.session_id, item.turn_id), knowledge=item.knowledge,
            messages=item.messages, max_pending=self.settings.max_pending,
            busy_timeout_ms=busy_timeout_ms,
        )
        if not result.queued:
            self._count_drop(item.tenant, item.agent, result.pending, DROPPED_FULL)
            return "dropped"
        with self._lock:
            self._tenants.setdefault(item.tenant, None)
            if result.id is not None:
                self._tracked.ids.setdefault(item.tenant, set()).add(result.id)
        self._wake.set()
        return "queued"

    def _store(self, tenant: str) -> OutboxStorage:
        return self.host.outbox(tenant)

    # ------------------------------------------------------------------ drops

    def _count_drop(self, tenant: str, agent: str, pending: int, reason: str) -> None:
        with self._lock:
            self._count_drop_locked(tenant, agent, pending, reason)
        self._emit_due_windows()

    def _count_drop_locked(self, tenant: str, agent: str, pending: int, reason: str) -> None:
        window = self._windows.setdefault(
            (tenant, agent), _Window(emitted_at=time.monotonic() - self.settings.drop_window_s)
        )
        window.count += 1
        window.pending = pending
        window.reason = reason

    def _emit_due_windows(self, *, all_now: bool = False) -> None:
        """Emit ``knowledge_dropped`` for every window that has drops and is due."""
        now = time.monotonic()
        due: list[KnowledgeDropped] = []
        with self._lock:
            for (tenant, agent), window in self._windows.items():
                if window.count and (all_now or now - window.emitted_at >= self.settings.drop_window_s):
                    due.append(KnowledgeDropped(
                        agent=agent, tenant=tenant, dropped=window.count, pending=window.pending,
                        limit=self.settings.max_pending, window_s=self.settings.drop_window_s,
                        reason=window.reason,
                    ))
                    window.count, window.emitted_at = 0, now
        for event in due:
            log.warning("knowledge extraction dropped %d turn(s) of %s/%s: %s",
                        event.dropped, event.tenant, event.agent, event.reason)
            try:
                self.host.events.emit(event)
            except Exception:  # the bus never breaks the queue
                log.exception("could not emit knowledge_dropped")

    # ------------------------------------------------------------------ worker

    def start(self) -> None:
        """Start the worker thread (once), which first resumes turns left in the data
        directory, and the thread that writes turns waiting in memory for the lock.
        """
        with self._lock:
            if self._thread is not None or self._stop.is_set():
                return
            self._thread = threading.Thread(target=self._run, name="insika-knowledge-outbox",
                                            daemon=True)
            self._spill_thread = threading.Thread(target=self._run_spill, name="insika-knowledge-spill",
                                                  daemon=True)
            self._thread.start()
            self._spill_thread.start()

    def _run_spill(self) -> None:
        """Write turns waiting in memory as soon as their tenant's write lock frees."""
        while not self._stop.is_set():
            self._spilled.wait(self.settings.poll_s)
            self._spilled.clear()
            try:
                if self._flush_spill():
                    self._wake.set()
            except Exception as exc:  # the thread must survive anything the disk throws
                self._log_once("writing turns waiting for the database failed", exc)
            with self._changed:
                self._changed.notify_all()

    def resume(self) -> list[str]:
        """Register every tenant with turns in its outbox (files or schemas); returns them.

        The worker does it when it starts and every `OutboxSettings.rescan_s` seconds, so
        turns another process queued (and left, when it ended) are served too. It also
        takes over the spill journal files of processes that are gone (their deferred turns).
        """
        self._adopt_orphans()
        found = self.host.tenants_with_pending()
        with self._lock:
            for tenant in found:
                self._tenants.setdefault(tenant, None)
        return found

    def _adopt_orphans(self) -> int:
        """Take over the deferred turns of processes that are gone; how many."""
        if self._journal is None:
            return 0
        taken = 0
        for path, record in self._journal.orphans(_alive):
            item = _Spilled.of(record, path)
            if item is None:
                self._journal.remove(path)
                continue
            with self._lock:
                self._spill.append(item)
            taken += 1
        if taken:
            log.info("took over %d deferred turn(s) of processes that ended", taken)
            self._spilled.set()
        return taken

    def _log_once(self, what: str, exc: BaseException, every_s: float = 60.0) -> None:
        """One log line for a failure (the same message again only after `every_s`);
        the traceback at debug level.
        """
        message = f"{what}: {_why(exc)}"
        now = time.monotonic()
        with self._lock:
            last = self._logged.get(message)
            due = last is None or now - last >= every_s
            if due:
                self._logged[message] = now
                if len(self._logged) > 256:
                    self._logged.clear()
        if due:
            log.warning("%s", message)
        log.debug("%s", what, exc_info=exc)

    def _run(self) -> None:
        try:
            self._release_all_held()
        except Exception as exc:  # cannot look: the held turns wait for the next start
            self._log_once(f"could not look for held turns in {self.host.location}", exc)
        try:
            self.resume()
        except Exception as exc:  # an unreadable directory: only this process's own turns are served
            self._log_once(f"could not look for unfinished turns in {self.host.location}", exc)
        self._resumed.set()
        rescanned = time.monotonic()
        while not self._stop.is_set():
            if time.monotonic() - rescanned >= self.settings.rescan_s:
                rescanned = time.monotonic()
                try:
                    self.resume()
                except Exception as exc:
                    self._log_once(f"could not look for queued turns in {self.host.location}", exc)
            worked = False
            try:
                worked = self._work_round()
            except Exception as exc:  # the worker must survive anything a turn or the disk throws
                self._log_once("the learning worker could not go on", exc)
            self._emit_due_windows()
            with self._changed:
                self._changed.notify_all()
            if not worked:
                self._wake.wait(self.settings.poll_s)
                self._wake.clear()

    def _flush_spill(self) -> bool:
        """Write turns waiting in memory to their outboxes (the full 30 s lock wait)."""
        wrote = False
        with self._flushing:
            while not self._stop.is_set():
                with self._lock:
                    if not self._spill:
                        return wrote
                    item = self._spill[0]
                try:
                    self._write(item, None)
                except StorageBusy:
                    self._spilled.set()  # still busy: try again next round
                    return wrote
                except (RunTimeFailure, OSError) as exc:  # down, full, failing (storage or PostgreSQL): later
                    self._log_once("deferred turns wait for the database", exc)
                    self._stop.wait(self.settings.poll_s)
                    self._spilled.set()
                    return wrote
                except UserError as exc:  # refused for good: never written, said out loud (event, log line)
                    log.warning("deferred turn %s/%s of %s/%s could not be written: %s", item.session_id,
                                item.turn_id, item.tenant, item.agent, _why(exc))
                    self._tell(item, "failed", _why(exc))
                    self._fail(item.agent, exc)
                except Exception as exc:  # unexpected (a bug, an import race): kept, never dropped
                    item.failures += 1
                    if item.failures < self.settings.max_attempts or item.journal is None:
                        self._log_once("a deferred turn could not be written yet", exc)
                        self._stop.wait(self.settings.poll_s)
                        self._spilled.set()
                        return wrote
                    log.warning("deferred turn %s/%s of %s/%s could not be written after %d tries (%s): "
                                "left in the spill journal for the next start", item.session_id, item.turn_id,
                                item.tenant, item.agent, item.failures, _why(exc))
                    with self._lock:
                        self._spill.popleft()
                    self._fail(item.agent, exc)
                    continue  # its file stays: the next process takes it over
                else:
                    self._tell(item, "written", "")
                with self._lock:
                    self._spill.popleft()
                if item.journal is not None and self._journal is not None:
                    self._journal.remove(item.journal)
                wrote = True
        return wrote

    def _work_round(self) -> bool:
        """Extract at most one turn of each known tenant; True when any was found."""
        with self._lock:
            known = list(self._tenants)
        worked = False
        for tenant in known:
            if self._stop.is_set():
                break
            outbox = self._store(tenant)
            turn = outbox.claim(self.worker_id, lease_s=self.settings.lease_s, gone=holder_gone)
            if turn is None:
                self._forget_finished(tenant, outbox)
                self._scrub(tenant, outbox, idle=True)
                continue
            worked = True
            with self._lock:
                self._busy = True
            try:
                self._extract(tenant, outbox, turn)
            finally:
                with self._lock:
                    self._busy = False
                    ids = self._tracked.ids.get(tenant)
                    if ids is not None:
                        ids.discard(turn.id)
                    self._scrubbed.setdefault(tenant, time.monotonic())
            self._scrub(tenant, outbox, idle=False)
        return worked

    def _scrub(self, tenant: str, outbox: OutboxStorage, *, idle: bool) -> None:
        """Cut learned turns' bytes out of the tenant's write-ahead log (`Outbox.scrub`):
        when its outbox is idle, or `OutboxSettings.scrub_s` after the first turn learned
        since the last scrub.
        """
        with self._lock:
            since = self._scrubbed.get(tenant)
        if since is None or (not idle and time.monotonic() - since < self.settings.scrub_s):
            return
        try:
            done = outbox.scrub()
        except StorageError as exc:
            self._log_once(f"could not scrub the log of {tenant}", exc)
            return
        if done:
            with self._lock:
                self._scrubbed.pop(tenant, None)

    def _extract(self, tenant: str, outbox: OutboxStorage, turn: QueuedTurn) -> None:
        try:
            answered = self.host.learn_queued(tenant, turn)
        except ModelNotReady as exc:  # the same failure for every turn until someone fixes it
            self._hold(tenant, outbox, turn, exc)
            return
        except StorageError as exc:  # the disk or the lock: the turn stays, tried again later
            if turn.attempts >= self.settings.max_attempts:
                self._fail(turn.agent, exc)
                self._give_up(outbox, turn, exc)
                return
            delay = backoff_s(turn.attempts, self.settings.retry_base_s)
            log.info("extraction of %s/%s deferred %.1f s: %s", turn.session_id, turn.turn_id, delay, exc)
            try:
                outbox.retry_later(turn.id, time.time() + delay)
            except StorageError:
                pass  # the claim lapses by itself
            return
        except ModelFailure as exc:  # recorded already; the model may answer in a while
            if turn.attempts < self.settings.max_attempts:
                delay = max(exc.retry_after_s or 0.0,
                            backoff_s(turn.attempts, self.settings.model_retry_base_s, jitter=0.5))
                log.info("extraction of %s/%s tried again in %.1f s: %s", turn.session_id, turn.turn_id,
                         delay, exc)
                try:
                    outbox.retry_later(turn.id, time.time() + min(delay, _LONGEST_WAIT_S))
                    return
                except StorageError:
                    return  # the claim lapses by itself
            log.warning("extraction of %s/%s given up after %d attempt(s): %s", turn.session_id,
                        turn.turn_id, turn.attempts, exc)
        except Exception as exc:  # a turn that cannot be learned must not come back forever
            self._fail(turn.agent, exc)
            self._give_up(outbox, turn, exc)
            return
        else:
            if answered and tenant in self._holding:  # the model answers again: the held turns are due
                self._release_held(tenant, outbox)
        outbox.finish(turn.id)

    def _hold(self, tenant: str, outbox: OutboxStorage, turn: QueuedTurn, exc: ModelNotReady) -> None:
        """Hold `turn` in its outbox until the model can be used (`Outbox.hold`)."""
        try:
            outbox.hold(turn.id)
        except StorageError:
            return  # the claim lapses by itself: the turn is tried again, and held again
        with self._lock:
            self._holding.add(tenant)
        self._log_once(f"turns of tenant {tenant} are held until its model can be used (they are "
                       "tried again when a process starts, or when the model answers a later turn)", exc)

    def _release_held(self, tenant: str, outbox: OutboxStorage) -> None:
        try:
            released = outbox.release_held()
        except StorageError as exc:
            self._log_once(f"held turns of tenant {tenant} could not be released yet", exc)
            return
        with self._lock:
            self._holding.discard(tenant)
        if released:
            log.info("%d held turn(s) of tenant %s are tried again", released, tenant)

    def _release_all_held(self) -> None:
        """At start: the held turns of every tenant are due (the configuration may be fixed)."""
        for tenant in self.host.tenants_with_pending(held=True):
            with self._lock:
                self._tenants.setdefault(tenant, None)
            try:
                self._release_held(tenant, self._store(tenant))
            except Exception as exc:  # an unreadable tenant: its held turns wait for the next start
                self._log_once(f"held turns of tenant {tenant} could not be released", exc)

    def _give_up(self, outbox: OutboxStorage, turn: QueuedTurn, exc: BaseException) -> None:
        reason = str(exc) if isinstance(exc, InsikaError) else f"{type(exc).__name__}: {exc}"
        try:
            outbox.give_up(turn, f"gave up after {turn.attempts} attempt(s): {reason}")
        except StorageError:
            log.warning("could not record giving up %s/%s", turn.session_id, turn.turn_id)

    def _fail(self, agent: str, exc: BaseException) -> None:
        if self._on_failure is None:
            log.warning("knowledge extraction failed for %s: %s", agent, exc)
            return
        try:
            self._on_failure(agent, "extract", exc)
        except Exception:
            log.exception("the failure handler failed")

    def _forget_finished(self, tenant: str, outbox: OutboxStorage) -> None:
        """Drop tracked ids another process finished (this worker found nothing to claim)."""
        with self._lock:
            ids = set(self._tracked.ids.get(tenant, ()))
        if not ids:
            return
        still = outbox.present(ids)
        with self._lock:
            current = self._tracked.ids.get(tenant)
            if current is not None:
                current.intersection_update(still | (current - ids))

    # ------------------------------------------------------------------ lifecycle

    def running(self) -> bool:
        """True while the worker thread runs."""
        with self._lock:
            return self._thread is not None and self._thread.is_alive()

    def waiting_in_memory(self) -> int:
        """Turns waiting in memory for a database write lock (not durable yet)."""
        with self._lock:
            return len(self._spill)

    def pending(self) -> int:
        """Turns this process queued (or holds in memory) that are not extracted yet."""
        with self._lock:
            return self._tracked.total() + len(self._spill)

    def drain(self, timeout_s: float | None = None) -> bool:
        """Wait until every turn this process queued is extracted or put back for a later
        try; True when none is left in this process's hands.

        A turn put back (the model failed transiently, the disk or a lock was busy) waits
        in the tenant's outbox for its back-off, not in this wait: it is durable, the
        worker (or the next process) takes it again, and `wait_empty` waits for it too.

        Args:
            timeout_s: the longest wait in seconds (None: no limit).
        """
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        with self._changed:
            while self._tracked.total() or self._spill or self._busy:
                if self._thread is None or not self._thread.is_alive():
                    return False
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    return False
                self._wake.set()
                self._changed.wait(0.05 if left is None else min(0.05, left))
        return True

    def wait_empty(self, timeout_s: float | None = None) -> bool:
        """Wait until the outboxes of every tenant this queue can reach are empty.

        Unlike `drain`, this includes turns resumed from earlier processes and turns
        other processes queue meanwhile in the same files or database: the tenants with
        queued turns are looked up again (`resume`) every quarter of a second, so a
        tenant that another process fills after this queue started counts too, and so
        do turns waiting in memory or in the spill journal. A database that cannot be
        read is not empty.

        Args:
            timeout_s: the longest wait in seconds (None: no limit).

        Returns:
            True when they are empty (False at the timeout, or when the worker stopped).
        """
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        self._resumed.wait(timeout_s)
        looked = 0.0
        while True:
            found: list[str] = []
            if time.monotonic() - looked >= 0.25:
                looked = time.monotonic()
                try:
                    found = self.resume()
                except Exception:  # cannot look: not known to be empty
                    found = ["?"]
            with self._lock:
                known = list(self._tenants)
                spilled = bool(self._spill)
                alive = self._thread is not None and self._thread.is_alive()
            if not spilled and not found and self._all_empty(known):
                return True
            if not alive or (deadline is not None and time.monotonic() >= deadline):
                return False
            self._wake.set()
            time.sleep(0.02)

    def _all_empty(self, tenants: list[str]) -> bool:
        try:
            return all(self._store(t).pending() == 0 for t in tenants)
        except Exception:  # a store that cannot be read is not known to be empty
            return False

    def close(self, timeout_s: float | None = None) -> bool:
        """Stop the worker within `timeout_s` seconds; unfinished turns stay in the outbox.

        Turns still waiting in memory for the lock are written first when the lock
        allows it within the time; those that cannot be are dropped and counted. A
        turn being extracted when the time runs out finishes in the background (the
        worker is a daemon thread) or, if the process ends first, is taken up again by
        the next process.

        Returns:
            True when the worker stopped within the time.
        """
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        self._stop.set()
        self._wake.set()
        self._spilled.set()
        with self._lock:
            thread, spiller = self._thread, self._spill_thread
        stopped = True
        if thread is not None:
            thread.join(None if deadline is None else max(0.0, deadline - time.monotonic()))
            stopped = not thread.is_alive()
        if spiller is not None:
            spiller.join(None if deadline is None else max(0.0, deadline - time.monotonic()))
            stopped = stopped and not spiller.is_alive()  # still in a lock wait: its store stays in use
        self._write_spill_on_close(deadline)
        if stopped:
            for tenant in list(self._tenants):
                try:
                    self._store(tenant).release(self.worker_id)
                except Exception:  # the next start takes the claims over once the process is gone
                    log.info("could not release claims in %s", tenant)
        with _LIVE_LOCK:
            _LIVE.discard(self.worker_id)  # its journal files are anyone's now
        self._emit_due_windows(all_now=True)
        return stopped

    def _write_spill_on_close(self, deadline: float | None) -> None:
        left = None if deadline is None else max(0.0, deadline - time.monotonic())
        if not self._flushing.acquire(timeout=-1 if left is None else left):
            return  # the spill thread is still writing (its lock wait outlived the deadline)
        try:
            self._write_spill_locked(deadline)
        finally:
            self._flushing.release()

    def _write_spill_locked(self, deadline: float | None) -> None:
        while True:
            with self._lock:
                if not self._spill:
                    return
                item = self._spill.popleft()
            left_ms = None if deadline is None else int(max(0.0, deadline - time.monotonic()) * 1000)
            try:
                self._write(item, left_ms)
            except Exception as exc:
                deadline = time.monotonic()  # one full wait at most: the others are tried without waiting
                if item.journal is not None:  # kept in the journal: the next start writes it
                    log.info("deferred turn %s/%s stays in the spill journal for the next start: %s",
                             item.session_id, item.turn_id, _why(exc))
                    continue
                with self._lock:
                    self._count_drop_locked(item.tenant, item.agent, 0, "closed while the lock was busy")
            else:
                self._tell(item, "written", "")
                if item.journal is not None and self._journal is not None:
                    self._journal.remove(item.journal)


def bounded_messages(messages: list[Any], limit_bytes: int) -> str | None:
    """`messages` as JSON of at most `limit_bytes` UTF-8 bytes, oldest messages cut first.

    Values JSON cannot hold are written as their ``str``. The cut is found by halving,
    so a long list costs O(log n) encodings.

    Returns:
        The JSON text, or None when even the last message alone is over the limit.
    """
    found = _fitting_tail(messages, limit_bytes)
    return None if found is None else found[1]


def bounded_tail(messages: list[Any], limit_bytes: int) -> int | None:
    """How many of the newest `messages` fit in `limit_bytes` UTF-8 bytes of JSON (see
    `bounded_messages`); None when even the last message alone is over the limit.
    """
    found = _fitting_tail(messages, limit_bytes)
    return None if found is None else len(messages) - found[0]


def _fitting_tail(messages: list[Any], limit_bytes: int) -> tuple[int, str] | None:
    """The first start whose tail of `messages` fits, with that tail's JSON; None if none."""
    def encoded(start: int) -> str | None:
        text = json.dumps(messages[start:], ensure_ascii=False, default=str)
        return text if len(text.encode("utf-8", "surrogatepass")) <= limit_bytes else None

    whole = encoded(0)
    if whole is not None:
        return 0, whole
    low, high = 1, len(messages) - 1  # the first start whose tail fits, if any
    best = encoded(high) if high >= low else None
    if best is None:
        return None
    while low < high:
        middle = (low + high) // 2
        text = encoded(middle)
        if text is not None:
            high, best = middle, text
        else:
            low = middle + 1
    return high, best


def backoff_s(attempt: int, base_s: float, *, cap_s: float = 300.0, jitter: float = 1.0) -> float:
    """Exponential back-off with jitter: a random delay in ``[(1 - jitter) c, c]``, where
    ``c = min(cap, base * 2**(n-1))`` (AWS Architecture Blog, "Exponential Backoff And
    Jitter", 2015: ``jitter=1`` is its "full jitter", ``0.5`` its "equal jitter").

    Args:
        attempt: the attempt that just failed (1 = the first).
        base_s: the first delay's upper bound, in seconds.
        cap_s: the largest delay, in seconds.
        jitter: the random share of the delay, 0-1.
    """
    ceiling = min(cap_s, base_s * 2 ** max(0, attempt - 1))
    return random.uniform((1.0 - jitter) * ceiling, ceiling)  # noqa: S311 - jitter, not security


def _why(exc: BaseException) -> str:
    """A failure in one line: the library's message, or the exception's type and first line."""
    if isinstance(exc, StorageBusy):
        return "the write lock was busy beyond the budget"
    if isinstance(exc, InsikaError):
        return short_reason(exc)
    return f"{type(exc).__name__}: {short_reason(exc)}"


def _unencodable(messages: Sequence[Any]) -> int | str:
    """The index of the first message JSON cannot encode (``?`` when each alone can)."""
    for i, message in enumerate(messages):
        try:
            json.dumps(message, ensure_ascii=False)
        except (TypeError, ValueError, RecursionError):
            return i
    return "?"
