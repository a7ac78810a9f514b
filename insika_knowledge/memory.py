"""`Memory`: the library's front door, one per process, over a data directory or a database.

It owns one `insika_knowledge.tenant.Tenant` per tenant name (its stores, retriever,
procedural memory and learning hand-off, opened on first use), the learning queue's worker
(one for every tenant, `insika_knowledge.queue`), the models built from specs, and the
event bus. Its events go to every subscriber and to the ``track_event`` hook of the
process's plugins (`insika_knowledge.plugins.default_manager`, or the manager an engine
gives). The plugin, the relay, the Hermes provider, the MCP server, the Studio, the
command line and the demo all go through it; none of them opens a store itself.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import logging
import os
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Protocol, cast, runtime_checkable

import pluggy

from insika_knowledge.authored import authors_error, check_times, complete
from insika_knowledge.concept import (
    SPACE_SEPARATORS,
    Concept,
    parse,
    serialize,
    short_repr,
    status_of,
    unsafe_body_error,
    unsafe_in_body,
    unsafe_in_text,
    utc_now,
)
from insika_knowledge.config import KnowledgeConfig, load_config
from insika_knowledge.consolidate import FIRST_SIGHTING_CONFIDENCE, resolution
from insika_knowledge.consolidate.records import confidence
from insika_knowledge.consolidate.resolution import Claim as Claim
from insika_knowledge.errors import (
    ConceptFormatError,
    ConfigError,
    InsikaError,
    InterruptedAfterWrite,
    MemoryClosed,
    ModelFailure,
    ModelNotReady,
    NotADatabase,
    NotFound,
    Quarantined,
    RunTimeFailure,
    StaleVersion,
    StorageBusy,
    StorageError,
    StorageUnavailable,
    UserError,
    check_types,
    check_version,
    wrong_type,
)
from insika_knowledge.events import EventBus, KnowledgeDegraded, KnowledgeDeleted, TrackEventForwarder
from insika_knowledge.extract.given import GivenModel
from insika_knowledge.extract.model import ConceptModel, InstructorModel, check_base_url, load_model
from insika_knowledge.extract.timed import MODEL_TIMEOUT_S, timed
from insika_knowledge.hookspecs import Turn
from insika_knowledge.ids import DEFAULT_TENANT, check_agent, check_tenant
from insika_knowledge.index.scan import Entry
from insika_knowledge.index.tokenizer import TOKENIZER
from insika_knowledge.learn import TurnReport
from insika_knowledge.location import data_dir, database_url
from insika_knowledge.plugins import default_manager
from insika_knowledge.privacy.pseudonyms import letters
from insika_knowledge.queue import ExtractionQueue, OutboxSettings, Submitted, backoff_s, bounded_tail
from insika_knowledge.retrieve import Retriever
from insika_knowledge.store import ConceptStore as ConceptStore  # re-exported: the types edges read
from insika_knowledge.store import ExtractionRecord as ExtractionRecord
from insika_knowledge.store import (
    OutboxStorage,
    QueuedTurn,
    Version,
    has_tenant,
    list_tenants,
    load_backend,
    location,
    open_procedure_store,
    open_store,
    spill,
    tenants_with_pending,
)
from insika_knowledge.store import PossibleDuplicate as PossibleDuplicate
from insika_knowledge.store import Sighting as Sighting
from insika_knowledge.store import Store as Store
from insika_knowledge.store import StoredConcept as StoredConcept
from insika_knowledge.tenant import Tenant
from insika_knowledge.trust import held_because
from insika_knowledge.wire.messages import MESSAGE_ROLES as MESSAGE_ROLES  # re-exported (the plugin reads it)

log = logging.getLogger(__name__)

#: How often `Memory.put` / `Memory.update` re-reads a concept another writer changed
#: meanwhile, pausing a jittered, growing while (`PUT_PAUSE_S`) before each new read.
PUT_ATTEMPTS: Final = 8
#: The first such pause's upper bound, in seconds (doubled per try, at most 0.5 s).
PUT_PAUSE_S: Final = 0.01
#: Who a front-door write names in the concept's history.
PYTHON_ACTOR: Final = "python"
#: What `Memory.put` keeps from the record on file when the author leaves the key out.
KEPT_ON_PUT: Final = ("confidence", "sources", "occurrences", "created_at")


class Memory:
    """Concepts of every tenant under one data directory, or in one PostgreSQL database.

    Args:
        directory: the data directory (None = ``$INSIKA_KNOWLEDGE_HOME`` or the user
            data folder).
        database: a ``postgresql://`` URL: every tenant is a schema of that database,
            shared by every replica given the same URL (None = ``$INSIKA_DATABASE_URL``;
            no URL or an empty one: the SQLite files under `directory`; any other value
            raises `UserError`, see `insika_knowledge.location.database_url`).
        events: the event bus (a new one when None).
        clock: UTC time source for stamps.
        base_url: the endpoint of live models: OpenAI-compatible for ``openai/`` ones,
            Anthropic-compatible (without ``/v1``) for ``anthropic/`` ones (None =
            the provider's default; not ``http(s)://`` with a host: `UserError`).
        plugin_manager: whose ``track_event`` plugins get every event (None: the process's
            `insika_knowledge.plugins.default_manager`, loaded at the first event).
        outbox: the learning queue's bounds (None: `OutboxSettings.from_env` when it starts).
        embeddings: the embedding provider of the semantic index (None: ``$INSIKA_EMBEDDINGS``,
            else ``auto``: the offline model when installed; ``off``: lexical only; or a model
            name served by an OpenAI-compatible endpoint, see `insika_knowledge.index.embedders`).
        model_timeout_s: the longest one call to a model may take, in seconds (default
            60); a call that takes longer fails as ``model_timeout`` (retryable). A model
            spec's HTTP client gets it as its request timeout; a model *object* (with
            ``propose`` and ``merge``) is watched by a thread that stops waiting for it.

    Every public method checks its arguments' types first: a wrong one raises
    `insika_knowledge.errors.ArgumentTypeError` (a `UserError` and a `TypeError`) naming
    the argument, before anything is read or written. After `close`, every use raises
    `insika_knowledge.errors.MemoryClosed` (a `UserError`): open a new `Memory`.

    Raises:
        UserError: `database` (or ``$INSIKA_DATABASE_URL``) is set to something other than a
            PostgreSQL URL; an argument has the wrong type; `model_timeout_s` is not a
            positive number; the data directory is an existing file.
    """

    def __init__(
        self,
        directory: str | os.PathLike[str] | None = None,
        *,
        database: str | None = None,
        events: EventBus | None = None,
        clock: Callable[[], str] = utc_now,
        base_url: str | None = None,
        plugin_manager: pluggy.PluginManager | None = None,
        outbox: OutboxSettings | None = None,
        embeddings: str | None = None,
        model_timeout_s: float = MODEL_TIMEOUT_S,
    ):
        check_types(
            "Memory()", directory=(directory, (str, os.PathLike, type(None)), "str, os.PathLike or None"),
            database=(database, (str, type(None))), events=(events, (EventBus, type(None))),
            clock=(clock, _CALLABLE, "a function returning a UTC ISO-8601 time"),
            base_url=(base_url, (str, type(None))),
            plugin_manager=(plugin_manager, (pluggy.PluginManager, type(None))),
            outbox=(outbox, (OutboxSettings, type(None))), embeddings=(embeddings, (str, type(None))),
            model_timeout_s=(model_timeout_s, (int, float), "a number of seconds"),
        )
        if isinstance(model_timeout_s, bool) or not 0 < model_timeout_s <= threading.TIMEOUT_MAX:
            raise UserError(f"Memory(): model_timeout_s must be a positive number of seconds, at most "
                            f"{threading.TIMEOUT_MAX:.0f}, not {short_repr(model_timeout_s)}")
        if directory is not None and not os.fspath(directory).strip():
            raise UserError("Memory(): directory is empty: give a folder, or None for the default "
                            "($INSIKA_KNOWLEDGE_HOME or the user data folder)")
        if directory is not None and "\x00" in str(os.fspath(directory)):
            raise UserError(f"Memory(): directory {short_repr(os.fspath(directory))} holds a NUL character, "
                            "which no path can")
        self.directory = data_dir(directory)
        if self.directory.exists() and not self.directory.is_dir():  # reads would find nothing there
            raise UserError(f"Memory(): {short_repr(str(self.directory))} is a file, not a directory: the "
                            "data directory holds one database per tenant (give a folder)")
        self.database = database_url(database)
        if self.database:
            load_backend(self.database)  # never imported by two of our threads at once
        self.events = events or EventBus()
        self.clock = clock
        if base_url is not None:
            check_base_url(base_url, "Memory(base_url=...):")
        self.base_url = base_url
        self.outbox_settings = outbox
        if embeddings is None or isinstance(embeddings, str):
            from insika_knowledge.index.embedders import check_spec, spec_from_env

            check_spec(spec_from_env(embeddings))  # a typo (given, or $INSIKA_EMBEDDINGS) is said here,
            # not at the first search, where a customer's turn would fail
        self.embeddings = embeddings
        self.model_timeout_s = float(model_timeout_s)
        self._tenants: dict[str, Tenant] = {}
        self._opening: dict[str, threading.Lock] = {}  # one lock per tenant being opened
        self._background: dict[str, _Opening] = {}  # tenants being opened off the caller's thread
        self._models: dict[str, ConceptModel] = {}
        self._queue: ExtractionQueue | None = None
        self._warned: set[tuple[str, str]] = set()
        self._lock = threading.Lock()
        self._closed = False
        self._forwarder = _Forwarder(plugin_manager)
        self._unsubscribe = self.events.subscribe(self._forwarder)

    # ------------------------------------------------------------------ tenants

    def tenant(self, name: str = DEFAULT_TENANT, *, busy_timeout_ms: int | None = None) -> Tenant:
        """The tenant's memory (`insika_knowledge.tenant.Tenant`), its store opened (and migrated) on first use.

        The store is given the analyser (`index.tokenizer.TOKENIZER`), so its full-text
        index exists, and is rebuilt at open when it was built under another analysis.

        Args:
            name: the tenant name.
            busy_timeout_ms: the longest a first opening waits for the write lock to
                migrate, in milliseconds (None: 30 s); an engine hook passes its budget.

        Raises:
            InvalidName: the tenant name is invalid.
            UserError: the PostgreSQL database is unusable (missing extra, unreachable).
            StorageBusy: the first opening could not migrate within `busy_timeout_ms`
                (nothing is cached: the next call tries again).
            MemoryClosed: this memory is closed.
        """
        check_types("Memory.tenant()", busy_timeout_ms=(busy_timeout_ms, (int, type(None))))
        with self._lock:
            if self._closed:
                raise MemoryClosed()
            tenant = self._tenants.get(name)
            if tenant is not None:
                return tenant
            gate = self._opening.setdefault(name, threading.Lock())
        with gate:  # one opening per tenant; other tenants (and opened ones) never wait for it
            with self._lock:
                tenant = self._tenants.get(name)
            if tenant is not None:
                return tenant
            check_tenant(name)
            store = open_store(self.directory, name, clock=self.clock, tokenizer=TOKENIZER,
                               database=self.database or "", busy_timeout_ms=busy_timeout_ms)
            tenant = Tenant(name, store, events=self.events, queue=self.learning_queue,
                            models=self.model, open_procedures=self._procedure_store(name, busy_timeout_ms),
                            embeddings=self.embeddings, base_url=self.base_url)
            with self._lock:
                self._tenants[name] = tenant
            return tenant

    def tenant_within(self, name: str, budget_ms: int | None) -> Tenant:
        """The tenant's memory if it is open, or opens within `budget_ms`; never waits longer.

        An engine hook's way in: the first call for a tenant starts opening (and migrating)
        its store on a thread of its own and waits at most `budget_ms` for it; when the
        open takes longer, the call raises and the next calls find the tenant open.

        Args:
            name: the tenant name.
            budget_ms: the longest wait, in milliseconds (None: open on this thread, as
                `tenant` does).

        Raises:
            InvalidName: the tenant name is invalid.
            StorageUnavailable: the store is still opening after `budget_ms` (memory is
                off for this call), or the database is down.
            StorageError, UserError: the opening failed (as `tenant`); the next call tries again.
        """
        if budget_ms is None:
            return self.tenant(name)
        with self._lock:
            tenant = self._tenants.get(name)
            if tenant is not None:
                return tenant
            check_tenant(name)
            opening = self._background.get(name)
            if opening is None:
                opening = self._background[name] = _Opening()
                threading.Thread(target=self._open_in_background, args=(name, opening),
                                 name="insika-knowledge-open", daemon=True).start()
        if not opening.done.wait(max(0, budget_ms) / 1000):
            raise StorageUnavailable(
                f"the store of tenant {name!r} is still being opened ({self.location}); memory is off "
                "for this call and on once it is open", path=self.location)
        if opening.error is not None:
            raise opening.error
        with self._lock:
            tenant = self._tenants.get(name)
        if tenant is None:  # closed meanwhile
            raise StorageUnavailable(f"the store of tenant {name!r} was closed", path=self.location)
        return tenant

    def _open_in_background(self, name: str, opening: _Opening) -> None:
        try:
            self.tenant(name)
        except Exception as exc:  # handed to the caller that waits, and the next one tries again
            opening.error = exc
        finally:
            with self._lock:
                if self._background.get(name) is opening:
                    del self._background[name]
            opening.done.set()

    def submit(self, turn: Turn, *, lock_budget_ms: int | None = None, open_budget_ms: int | None = None,
               defer: bool = True) -> Submitted:
        """Hand a finished turn to its tenant (`insika_knowledge.tenant.Tenant.submit`), even
        when its store is not open yet or its database is down.

        When the tenant is not open within `open_budget_ms` (it opens in the background,
        `tenant_within`) or its database is down, the turn is deferred: written to the
        spill journal and written to the outbox as soon as the store can take it
        (``knowledge_deferred`` says so, then says ``written`` or ``failed``).

        Args:
            turn: the finished turn.
            lock_budget_ms: the longest wait for the outbox's write lock (None: the queue's).
            open_budget_ms: the longest wait for the tenant's store to open (None: open it
                on this thread).
            defer: False raises `StorageBusy` instead of deferring (nothing kept).

        Returns:
            ``queued``, ``deferred``, ``dropped`` or ``off`` (see `Tenant.submit`).

        Raises:
            As `Tenant.submit`; `ArgumentTypeError` when `turn` is not a `Turn`.
        """
        check_types("Memory.submit()", turn=(turn, Turn))
        name = turn.agent.tenant
        try:
            tenant = self.tenant_within(name, open_budget_ms)
        except UserError:  # an invalid tenant name, an unusable data directory: said, not kept
            raise
        except Exception as exc:  # opening, busy, down, failing: the turn is kept (the spill journal)
            config = load_config(turn.agent.knowledge)
            if config is None or not config.extract:
                return "off"
            if not defer:
                raise StorageBusy(str(exc), path=self.location) from None
            reason = "the store is still opening" if "still being opened" in str(exc) else str(exc)
            return self.learning_queue().hold(
                tenant=name, agent=turn.agent.id, knowledge=turn.agent.knowledge, session_id=turn.session_id,
                turn_id=turn.turn_id, messages=turn.messages, reason=reason)
        return tenant.submit(turn, lock_budget_ms=lock_budget_ms, defer=defer)

    def opened(self, name: str) -> Tenant | None:
        """The tenant if `Memory.tenant` has opened it, else None (never opens anything)."""
        with self._lock:
            return self._tenants.get(name)

    def _procedure_store(self, tenant: str, busy_timeout_ms: int | None) -> Callable[[], Any]:
        def opened() -> Any:
            return open_procedure_store(self.directory, tenant, database=self.database or "",
                                        busy_timeout_ms=busy_timeout_ms)
        return opened

    def store(self, tenant: str = DEFAULT_TENANT, *, busy_timeout_ms: int | None = None) -> Store:
        """The tenant's concept store (`Memory.tenant`'s ``store``).

        Raises:
            As `Memory.tenant`.
        """
        return self.tenant(tenant, busy_timeout_ms=busy_timeout_ms).store

    def retriever(self, tenant: str = DEFAULT_TENANT, *, busy_timeout_ms: int | None = None) -> Retriever:
        """The tenant's retriever (`Memory.tenant`'s ``retriever``); its read cache lives as long as this `Memory`.

        Raises:
            As `Memory.tenant`.
        """
        return self.tenant(tenant, busy_timeout_ms=busy_timeout_ms).retriever

    def has_tenant(self, tenant: str) -> bool:
        """True when the tenant's store exists: its file, or its schema (nothing is created)."""
        self._check_open()
        check_types("Memory.has_tenant()", tenant=(tenant, str))
        return tenant in self._tenants or has_tenant(tenant, self.directory, self.database or "")

    def tenants(self) -> list[str]:
        """Tenants that have a store (files of the directory, or schemas of the database), sorted."""
        self._check_open()
        return list_tenants(self.directory, self.database or "")

    @property
    def location(self) -> str:
        """Where the stores are, for messages: the directory, or the URL without its password."""
        return location(self.directory, self.database or "")

    def model(self, spec: str | None) -> ConceptModel | None:
        """The model a spec names (cached per spec); None for None.

        Raises:
            UserError: the spec is not usable (bad provider string, missing replay file).
        """
        check_types("Memory.model()", spec=(spec, (str, type(None))))
        if spec is None:
            return None
        with self._lock:
            model = self._models.get(spec)
            if model is None:
                model = load_model(spec, base_url=self.base_url, timeout_s=self.model_timeout_s)
                assert model is not None
                if isinstance(model, InstructorModel):
                    model.warm()  # the SDK's import is not charged to the first call's time limit
                self._models[spec] = model
            return model

    def _chosen(self, model: str | ConceptModel | None) -> ConceptModel | None:
        """The model a ``model`` argument names: a spec's (`model`), or the object.

        An object is held to ``model_timeout_s`` per call (`extract.timed.TimedModel`).
        """
        return self.model(model) if isinstance(model, str) else timed(model, self.model_timeout_s)

    # ------------------------------------------------------------------ events

    def forward_events_to(self, plugin_manager: pluggy.PluginManager | None) -> None:
        """Send every later event to the ``track_event`` hook of `plugin_manager` (None: the default)."""
        self._forwarder.manager = plugin_manager

    @property
    def plugin_manager(self) -> pluggy.PluginManager:
        """The manager whose ``track_event`` plugins get this memory's events (loaded on first use)."""
        return self._forwarder.resolved()

    def degraded(self, agent: str, feature: str, exc: BaseException | str) -> None:
        """Log a failure the caller survives (one line) and emit ``knowledge_degraded`` once per cause.

        Never raises.
        """
        if isinstance(exc, StorageBusy):  # one cause, whatever the wait: one event
            reason = f"the database {exc.path} was busy beyond the lock budget"
        elif isinstance(exc, BaseException):
            reason = str(exc) if isinstance(exc, InsikaError) else f"{type(exc).__name__}: {exc}"
        else:
            reason = exc
        reason = reason[:300]
        key = (agent, feature + reason)
        with self._lock:
            repeated = key in self._warned
            self._warned.add(key)
        if repeated:  # one log line and one event per cause; the repeats at debug level
            log.debug("knowledge %s degraded for agent %s: %s", feature, agent, reason)
            return
        log.warning("knowledge %s degraded for agent %s: %s", feature, agent, reason)
        try:
            self.events.emit(KnowledgeDegraded(agent=agent, feature=feature, reason=reason))
        except Exception:  # even the event bus failing must not reach the caller
            log.exception("could not emit knowledge_degraded")

    # ------------------------------------------------------------------ the learning queue

    @property
    def lock_budget_ms(self) -> int:
        """The longest an engine hook or hand-off waits for a database lock, in milliseconds.

        `OutboxSettings.lock_budget_ms` (``$INSIKA_LOCK_BUDGET_MS``, default 50).
        """
        if self.outbox_settings is None:
            self.outbox_settings = OutboxSettings.from_env()
        return self.outbox_settings.lock_budget_ms

    def learning_queue(self) -> ExtractionQueue:
        """The learning queue of every tenant (made on first use; its worker starts with the first turn).

        Raises:
            UserError: ``$INSIKA_OUTBOX_MAX_PENDING`` or ``$INSIKA_LOCK_BUDGET_MS`` is invalid.
        """
        with self._lock:
            if self._closed:
                raise MemoryClosed()
            if self._queue is None:
                if self.outbox_settings is None:
                    self.outbox_settings = OutboxSettings.from_env()
                self._queue = ExtractionQueue(self, self.outbox_settings, on_failure=self.degraded)
            return self._queue

    def start_learning(self) -> None:
        """Start the learning worker now: it resumes every turn left queued (files or schemas).

        Edges that own a queue (the engine plugin, the relay, the Hermes provider) call it
        when they start, so turns an earlier process left are learned without new traffic.
        The embedding provider is opened and warmed on a background thread at the same time,
        so the first customer's turn does not pay for loading the models.
        """
        self.learning_queue().start()
        threading.Thread(target=self._warm_embeddings, name="insika-embeddings-warm-up", daemon=True).start()

    def _warm_embeddings(self) -> None:
        """Open the embedding provider and embed one text (models load on first use); never raises."""
        from insika_knowledge.index.embedders import resolve

        try:
            embedder, _ = resolve(self.embeddings, base_url=self.base_url)
            if embedder is not None:
                embedder.queries(["warm up"])
        except Exception as exc:  # a warm-up that fails changes nothing: the first search reports it
            log.debug("embedding warm-up failed: %s", exc)

    def drain(self, timeout_s: float | None = None) -> bool:
        """Wait until the turns this process queued are learned; True when none is left.

        Args:
            timeout_s: the longest wait in seconds (None: no limit).

        Raises:
            MemoryClosed: this memory is closed (its turns not learned by then wait in the
                outbox for the next start: nothing here can say they are learned).
        """
        check_types("Memory.drain()", timeout_s=(timeout_s, (int, float, type(None))))
        self._check_open()
        if timeout_s is not None and not 0 <= timeout_s <= threading.TIMEOUT_MAX:  # NaN fails too
            raise UserError(f"Memory.drain(): timeout_s must be 0 or more seconds (or None), not {timeout_s!r}")
        with self._lock:
            queue = self._queue
        return True if queue is None else queue.drain(timeout_s)

    def outbox(self, tenant: str) -> OutboxStorage:
        """The outbox of `tenant` (`insika_knowledge.queue.QueueHost`).

        Raises:
            StorageError: this memory is closed (a worker that outlived `close`: its turn
                stays queued for the next start).
        """
        return self._queued_tenant(tenant).store.outbox()

    def _queued_tenant(self, tenant: str) -> Tenant:
        """`tenant` for the learning queue: closed, the turn stays queued (a `StorageError`)."""
        try:
            return self.tenant(tenant)
        except MemoryClosed as exc:
            raise StorageError(f"{exc}; the turn stays queued for the next start") from None

    def _check_open(self) -> None:
        """Raise `MemoryClosed` after `close`."""
        if self._closed:
            raise MemoryClosed()

    def learn_queued(self, tenant: str, turn: QueuedTurn) -> bool:
        """Learn one turn the queue claimed (`insika_knowledge.queue.QueueHost`).

        Returns:
            True when the model answered (the turn's outcome is ``ok`` and the model was asked).

        Raises:
            StorageError: the database failed (the turn is tried again later).
            ModelFailure: the model failed transiently (`TurnReport.transient`; the outcome
                is recorded; the turn is tried again later).
            ModelNotReady: the configured model cannot be used (`TurnReport.configuration`:
                no key, HTTP 401/403/404; the outcome is recorded; the queue holds the turn).
        """
        config = load_config(json.loads(turn.knowledge))
        if config is None or not config.extract:
            return False
        report = self._queued_tenant(tenant).learn(turn.agent, config, session_id=turn.session_id,
                                           turn_id=turn.turn_id, messages=json.loads(turn.messages))
        if report.outcome != "ok":  # one line per failed extraction, with its reason
            log.warning("learning failed for %s/%s (session %s, turn %s): %s%s", tenant, turn.agent,
                        turn.session_id, turn.turn_id, report.outcome,
                        f": {report.detail}" if report.detail else "")
        if report.transient:
            raise ModelFailure(report.outcome, report.detail or "", retry_after_s=report.retry_after_s,
                               transient=True)
        if report.configuration:
            raise ModelNotReady(report.outcome, report.detail or "")
        return report.outcome == "ok" and report.detail is None

    def tenants_with_pending(self, *, held: bool = False) -> list[str]:
        """Tenants whose outbox holds turns to learn (`insika_knowledge.queue.QueueHost`; reads
        only); with `held`, turns held until the model can be used count too.
        """
        if self._closed:
            raise StorageError(str(MemoryClosed()))
        return tenants_with_pending(self.directory, self.database or "", held=held)

    def status(self, tenants: Sequence[str] | None = None, *, failures: int = 5) -> list[TenantStatus]:
        """What learning is doing, per tenant: the queue, the counts, the last failures.

        Reads only: a tenant without a database is left out, never created.

        Args:
            tenants: the tenants to report (None: every tenant that has a database).
            failures: how many of the most recent failed extractions to list per tenant.

        Returns:
            One `TenantStatus` per tenant, by name.

        Raises:
            InvalidName: a tenant name is invalid.
        """
        check_types("Memory.status()", tenants=(tenants, (list, tuple, set, frozenset, type(None)),
                                                 "a list of tenant names or None"),
                    failures=(failures, int))
        if failures < 0:
            raise UserError(f"Memory.status(): failures must be 0 or more, not {failures}")
        failures = min(failures, _MOST_FAILURES)  # more than are on record lists them all
        names = self.tenants() if tenants is None else [check_tenant(t) for t in tenants]
        spilled = spill.waiting(self.directory / spill.FOLDER)
        out: list[TenantStatus] = []
        for name in sorted({*names, *(spilled if tenants is None else ())}):
            if not self.has_tenant(name):
                if spilled[name]:  # a turn kept before its tenant's store could open
                    out.append(TenantStatus(tenant=name, queued=0, dropped=0, agents=[], failures=[],
                                            spilled=spilled[name]))
                continue
            try:
                store = self.store(name)
                outbox = store.outbox()
            except NotADatabase as exc:
                if tenants is not None:
                    raise
                # another program's file named like a database: reported, the others go on
                out.append(TenantStatus(tenant=name, queued=0, dropped=0, agents=[], failures=[],
                                        spilled=spilled[name], error=str(exc)))
                continue
            counts = store.extraction_counts()
            agents = sorted(set(counts) | set(store.agents()))
            out.append(TenantStatus(
                tenant=name, queued=outbox.pending(), held=outbox.held(), dropped=outbox.dropped(),
                agents=[AgentLearning(a, store.count(a), dict(counts.get(a, {}))) for a in agents],
                failures=store.failed_extractions(failures), spilled=spilled[name],
            ))
        return out

    def learning_worker(self) -> dict[str, Any]:
        """This process's learning worker: ``{"running": bool, "in_memory": turns waiting
        in memory for a database write lock}``.
        """
        with self._lock:
            queue = self._queue
        if queue is None:
            return {"running": False, "in_memory": 0}
        return {"running": queue.running(), "in_memory": queue.waiting_in_memory()}

    # ------------------------------------------------------------------ learning and deleting

    def learn_turn(
        self,
        agent: str,
        config: KnowledgeConfig,
        *,
        session_id: str,
        turn_id: str,
        messages: list[dict[str, Any]],
        tenant: str = DEFAULT_TENANT,
        model: str | ConceptModel | None = None,
        withheld: Sequence[str] = (),
    ) -> TurnReport:
        """Extract and consolidate one turn now (`insika_knowledge.tenant.Tenant.learn`).

        `model` (a spec such as ``replay:PATH``, or a model object) overrides the config's
        model (``config.resolved_model()`` otherwise). `withheld`: the business's own texts
        the turn ran under that `messages` leave out (a system prompt not shown to the
        model, as backfill does), a list of strings: the trust verdict reads a value they
        state as stated by the business (`insika_knowledge.trust.assess`).

        Raises:
            InvalidName: the agent or tenant name is invalid.
            ArgumentTypeError: an argument has the wrong type (`withheld` not a list or
                tuple of strings, ...).
            UserError: the configured model spec is unusable.
        """
        where = "Memory.learn_turn()"
        check_types(where, config=(config, KnowledgeConfig), session_id=(session_id, str),
                    turn_id=(turn_id, str), model=(model, (str, _ModelObject, type(None)), _MODEL_KINDS),
                    withheld=(withheld, (list, tuple), "a list of strings"))
        messages = _messages(where, "messages", messages)
        for text in withheld:
            if not isinstance(text, str):
                raise wrong_type(where, "withheld's items", text, "str")
        check_agent(agent)
        chosen = self._chosen(model)
        return self.tenant(tenant).learn(agent, config, session_id=session_id, turn_id=turn_id,
                                         messages=messages, model=chosen, withheld=tuple(withheld))

    def delete(
        self, name: str, *, agent: str, actor: str = PYTHON_ACTOR, tenant: str = DEFAULT_TENANT,
        expected_version: int | None = None,
    ) -> Version:
        """Delete a concept (its history is kept) and fire ``knowledge_deleted``.

        ``memory.delete("x", agent="shop")``, in the order of `update`, `history` and
        `restore` (``memory.delete(agent="shop", name="x")`` works too); `actor` is who the
        history names (default ``python``).

        Raises:
            NotFound: no such concept.
            StaleVersion: `expected_version` is given and is not current.
        """
        check_types("Memory.delete()", name=(name, str), actor=(actor, str),
                    expected_version=(expected_version, (int, type(None))))
        check_version("Memory.delete()", "expected_version", expected_version)
        store = self.store(tenant)
        try:
            version = store.delete(agent, name, actor=actor, expected_version=expected_version)
        except NotFound as exc:
            raise _hinted(exc, store, agent, name) from None
        self.events.emit(KnowledgeDeleted(concept=name, agent=agent))
        return version

    def purge(self, name: str, *, agent: str, actor: str = PYTHON_ACTOR, tenant: str = DEFAULT_TENANT) -> int:
        """Erase a concept, live or deleted, and everything kept of it: every version, its
        sightings, its quarantine row, the claims held under or against it, its aliases and
        vectors; then, on SQLite, cut the write-ahead log (deleted rows are zeroed in the file:
        ``secure_delete``; the full-text index erases their terms). What a person's right to
        erasure asks (`delete` keeps the history and `restore` brings it back; a purge
        cannot be undone). Fires ``knowledge_deleted``. On PostgreSQL a deleted row's tuple
        stays until ``VACUUM`` (docs/postgresql.md).

        Returns:
            How many versions were erased.

        Raises:
            NotFound: no concept has or had `name` (close names named).
        """
        check_types("Memory.purge()", name=(name, str), actor=(actor, str))
        check_agent(agent)
        store = self.store(tenant)
        try:
            erased = store.purge(agent, name, actor=actor)
        except NotFound as exc:
            raise _hinted(exc, store, agent, name) from None
        store.outbox().scrub()
        self.events.emit(KnowledgeDeleted(concept=name, agent=agent))
        return erased

    def close(self, timeout_s: float | None = None) -> bool:
        """Stop the learning worker within `timeout_s` seconds, then close every store.

        Turns not learned by then stay in the outbox; the next process that starts with the
        same data directory (or database) learns them.

        Args:
            timeout_s: the longest wait for the worker, in seconds (None: until the turn
                in progress is done; queued turns are left either way).

        Returns:
            True when the worker stopped within the time. False: its threads still run (a
            turn in progress, a wait for a held lock) and keep the stores they use open
            until they end; nothing is raised, and unwritten turns stay in the outbox or the
            spill journal for the next start.
        """
        check_types("Memory.close()", timeout_s=(timeout_s, (int, float, type(None))))
        with self._lock:
            queue, self._queue = self._queue, None
        stopped = True if queue is None else queue.close(timeout_s)
        with self._lock:  # closed only now: the worker finishes the turn in progress first
            self._closed = True
            tenants, self._tenants = list(self._tenants.values()), {}
        if not stopped:  # its threads still use the stores (a turn, a lock wait): they keep them
            log.info("the learning worker did not stop within %s s: its stores stay open until it ends; "
                     "turns not written yet stay in the outbox or the spill journal", timeout_s)
            return False
        for tenant in tenants:
            tenant.close()
        return stopped

    def __enter__(self) -> Memory:
        """This memory, for a ``with`` block.

        Raises:
            MemoryClosed: it was closed already (as a closed file refuses ``with``).
        """
        self._check_open()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ the Python front door
    # Keyword arguments with guessable defaults: one agent per call, the default tenant,
    # the default ``knowledge:`` settings (`KnowledgeConfig()`) unless `config` is given.

    def learn(
        self,
        messages: Sequence[Mapping[str, Any]],
        *,
        agent: str,
        session_id: str,
        turn_id: str | None = None,
        model: str | ConceptModel | None = None,
        tenant: str = DEFAULT_TENANT,
        config: KnowledgeConfig | None = None,
    ) -> TurnReport:
        """Learn from one finished turn (or a whole short conversation) of `agent`.

        Args:
            messages: OpenAI-style message dicts (``role``, ``content``...), oldest first.
            agent: the agent id.
            session_id: the conversation's id (becomes each concept's source).
            turn_id: the turn's id in the session; None = a digest of `messages`, so
                learning the same messages twice counts once.
            model: a model spec (``replay:PATH``, ``openai/gpt-4o-mini``) or a model object
                (`insika_knowledge.extract.model.ConceptModel`); None = ``config.model``,
                else ``$INSIKA_UTILITY_MODEL`` (no model: the report says ``no_model``).
            tenant: the tenant whose database holds the agent's concepts.
            config: the agent's settings (types, prompt); None = the defaults.

        The turn is bounded as the learning queue bounds it: at most
        `OutboxSettings.turn_bytes_max` bytes of message JSON (256 KiB by default), the
        oldest messages cut first, so the model is never sent more than `after_turn` sends it.

        Returns:
            The turn's report (``outcome``, ``results`` as (name, outcome) pairs...).
            A model failure is in ``outcome``, never raised.

        Raises:
            InvalidName: the agent or tenant name is invalid.
            UserError: the ids are not printable text, the model spec is unusable, or the
                last message alone is over `OutboxSettings.turn_bytes_max` bytes of JSON.
        """
        where = "Memory.learn()"
        check_types(where, session_id=(session_id, str), turn_id=(turn_id, (str, type(None))),
                    model=(model, (str, _ModelObject, type(None)), _MODEL_KINDS), config=_config_arg(config))
        listed = self._bounded(where, _messages(where, "messages", messages))
        settings = config or KnowledgeConfig()
        chosen = self._chosen(model)
        return self.learn_turn(
            agent, settings, session_id=session_id, turn_id=turn_id or digest_id(listed),
            messages=listed, tenant=tenant, model=chosen,
        )

    def _bounded(self, where: str, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """`messages` without the oldest ones beyond `OutboxSettings.turn_bytes_max` bytes of JSON.

        Raises:
            UserError: the last message alone is over the bound.
        """
        limit = (self.outbox_settings or OutboxSettings()).turn_bytes_max
        kept = bounded_tail(messages, limit)
        if kept is None:
            size = len(json.dumps(messages[-1:], ensure_ascii=False, default=str).encode("utf-8", "surrogatepass"))
            raise UserError(f"{where}: the turn's last message alone is {size} bytes of JSON, over {limit} "
                            "(OutboxSettings.turn_bytes_max); the learning queue drops such a turn too")
        return messages[len(messages) - kept:]

    def search(
        self, query: str, *, agent: str, top_k: int = 5, tenant: str = DEFAULT_TENANT,
        index: str = "auto", type: str | None = None, provenance: str | None = None,
        status: str | None = None,
    ) -> list[Hit]:
        """The agent's concepts that best match `query`, best first.

        Args:
            query: the text to match (a customer's message, a few keywords).
            agent: the agent id.
            top_k: hits at most (1-50).
            tenant: the tenant.
            index: ``auto``, ``scan`` or ``fts5`` (see `KnowledgeConfig.index`).
            type: only concepts of this type (fact, entity, procedure, policy, objection).
            provenance: only ``observed`` (learned) or only ``policy`` (set by a person).
            status: only ``ok`` or only ``conflict`` concepts.

        Returns:
            Up to `top_k` `Hit` (the best `top_k` among the concepts the filters let
            through), each with its body; ``score`` is the index's (Scan: shared query
            terms, title terms counting twice; FTS5: minus SQLite's bm25), higher is
            better. A concept held in quarantine (`insika_knowledge.trust`) is never a hit:
            what search finds may be handed to a model (the MCP server's
            ``search_knowledge``); `Retriever.search` filters it. A tenant without a
            database has none, and reading creates nothing.

        Raises:
            InvalidName: the agent or tenant name is invalid.
            ConfigError: `top_k`, `index` or a filter's value is out of range.
        """
        check_types("Memory.search()", query=(query, str), tenant=(tenant, str), top_k=(top_k, int), index=(index, str),
                    type=(type, (str, _NONE)), provenance=(provenance, (str, _NONE)), status=(status, (str, _NONE)))
        check_agent(agent)
        settings = _settings("Memory.search()", top_k=top_k, index=index)
        wanted = _filters(type=type, provenance=provenance, status=status)
        if not self.has_tenant(tenant):
            return []  # a read creates no tenant (a mistyped name would become one)
        retriever = self.retriever(tenant)
        depth = settings.top_k if not wanted else max(settings.top_k, retriever.store.count(agent))
        challenged = self._challenged(agent, tenant)
        found = [h for h in retriever.search(agent, query, depth, settings.index)
                 if _passes(wanted, h.entry.type, h.entry.provenance, status_of(h.entry, challenged))]
        hits = found[: settings.top_k]
        bodies = {h.entry.name: retriever.store.get(agent, h.entry.name) for h in hits}
        return [Hit.of(h.entry, h.score, body=_body(bodies[h.entry.name]), status=status_of(h.entry, challenged))
                for h in hits]

    def _challenged(self, agent: str, tenant: str) -> frozenset[str]:
        """Names of `agent`'s policies whose contradicting sightings await a person (none without a database)."""
        return frozenset(self.store(tenant).challenged_names(agent)) if self.has_tenant(tenant) else frozenset()

    def knowledge_block(
        self, message: str, *, agent: str, tenant: str = DEFAULT_TENANT,
        config: KnowledgeConfig | None = None,
    ) -> str | None:
        """The ``<knowledge>`` block a prompt gets for `message`, or None when nothing matches
        (or the tenant has no database: reading creates none).

        Raises:
            InvalidName: the agent or tenant name is invalid.
            ArgumentTypeError: `message` is not text, or `config` not a `KnowledgeConfig`.
        """
        check_types("Memory.knowledge_block()", message=(message, str), tenant=(tenant, str),
                    config=_config_arg(config))
        check_agent(agent)
        settings = config or KnowledgeConfig()
        if not self.has_tenant(tenant):
            return None
        return self.retriever(tenant).block(
            agent, message, settings.top_k, settings.index, settings.min_coverage
        )

    def load(self, name: str, *, agent: str, tenant: str = DEFAULT_TENANT, held: bool = False) -> str:
        """One concept's full markdown record, as stored (``load_knowledge`` returns it uncut
        and made prompt-safe for a model: `escaping.prompt_text`).

        A concept held in quarantine is never loaded for a model (the ``load_knowledge``
        tool answers as if it did not exist); here, for a person, it is said to be held.

        Args:
            name: the concept's name.
            agent: the agent id.
            tenant: the tenant.
            held: True returns the record of a concept held in quarantine too (an
                operator's read: the command line's ``show``); False raises `Quarantined`.

        Raises:
            InvalidName: the agent or tenant name is invalid.
            Quarantined: the concept is held in quarantine and `held` is False (a
                `NotFound`: the message names it, why it is held and how to release it).
            NotFound: no such concept (the message names up to 3 close names).
        """
        check_types("Memory.load()", name=(name, str), held=(held, bool), tenant=(tenant, str))
        check_agent(agent)
        if not self.has_tenant(tenant):
            raise NotFound(f"no concept named {name!r}: tenant {tenant!r} has no database")
        result = self.retriever(tenant).load_knowledge(agent, name, max_chars=None, for_model=False)
        if "error" not in result:
            return str(result["markdown"])
        store = self.store(tenant)
        why = store.quarantine_of(agent, name.strip()) if isinstance(name, str) else None
        stored = store.get(agent, why.name) if why is not None else None
        if why is None or stored is None:  # unknown (or deleted since): whose concept was asked for
            raise _hinted(NotFound(f"agent {agent!r} (tenant {tenant!r}): {result['error']}"), store, agent,
                          name.strip())
        if not held:
            raise Quarantined(agent, why.name, reason=held_because(why.supported_by, why.markers),
                              since=why.since)
        return stored.markdown

    def records(
        self, *, agent: str, tenant: str = DEFAULT_TENANT, held: bool = True, type: str | None = None,
        provenance: str | None = None, status: str | None = None,
    ) -> list[StoredConcept]:
        """Every concept of `agent` as stored, by name: its record, version and ``quarantined``
        (none for a tenant without a database: reading creates nothing).

        Args:
            agent: the agent id.
            tenant: the tenant.
            held: False leaves out the concepts held in quarantine (a listing a model
                reads; `Retriever.concepts`).
            type: only concepts of this type.
            provenance: only ``observed`` or only ``policy`` concepts.
            status: only ``ok`` or only ``conflict`` concepts (``conflict``: contradicting
                reports in the body, or a policy whose contradicting sightings are held for
                a person, as `conflicts`; `Concept.status` reads the body alone).

        Raises:
            InvalidName: the agent or tenant name is invalid.
            ConfigError: a filter's value is not one the records can have.
        """
        check_types("Memory.records()", held=(held, bool), tenant=(tenant, str), type=(type, (str, _NONE)),
                    provenance=(provenance, (str, _NONE)), status=(status, (str, _NONE)))
        check_agent(agent)
        wanted = _filters(type=type, provenance=provenance, status=status)
        if not self.has_tenant(tenant):
            return []  # a read creates no tenant
        found = self.retriever(tenant).concepts(agent, held=held)
        challenged = self._challenged(agent, tenant) if wanted.get("status") else frozenset()
        return [s for s in found
                if _passes(wanted, s.concept.type, s.concept.provenance, status_of(s.concept, challenged))]

    def concepts(
        self, *, agent: str, tenant: str = DEFAULT_TENANT, held: bool = True, type: str | None = None,
        provenance: str | None = None, status: str | None = None,
    ) -> list[Concept]:
        """Every concept of `agent`, by name (`records` without the row data; the same filters).

        Concepts held in quarantine are included unless `held` is False; `records` says
        which they are.

        Raises:
            InvalidName: the agent or tenant name is invalid.
            ConfigError: a filter's value is not one the records can have.
        """
        check_types("Memory.concepts()", held=(held, bool), tenant=(tenant, str), type=(type, (str, _NONE)),
                    provenance=(provenance, (str, _NONE)), status=(status, (str, _NONE)))
        return [s.concept for s in self.records(agent=agent, tenant=tenant, held=held, type=type,
                                                provenance=provenance, status=status)]

    def agents(self, *, tenant: str = DEFAULT_TENANT) -> dict[str, int]:
        """The tenant's agents that have concepts -> how many current concepts each has, by name.

        An agent whose concepts were all deleted is left out. A tenant without a database
        has none, and reading creates nothing.

        Raises:
            InvalidName: the tenant name is invalid.
        """
        check_types("Memory.agents()", tenant=(tenant, str))
        if not self.has_tenant(tenant):
            return {}
        store = self.store(tenant)
        counts = {agent: store.count(agent) for agent in store.agents()}
        return {agent: n for agent, n in counts.items() if n}

    def conflicts(self, *, agent: str, tenant: str = DEFAULT_TENANT, held: bool = True) -> list[Concept]:
        """The concepts of `agent` awaiting a person (``status == "conflict"``): those holding
        contradicting reports in the body, and those with claims held against them for
        review (`held_claims`: a policy's contradicting sightings, since the engine never
        changes a policy's body, and close matches proposed under another name, such as a
        changed rule under a drifting name). An edit of the concept or `dismiss_held`
        closes the held claims.

        `held` False leaves out those held in quarantine (as `concepts`).

        Raises:
            InvalidName: the agent or tenant name is invalid.
        """
        check_types("Memory.conflicts()", held=(held, bool), tenant=(tenant, str))
        challenged = set(self.store(tenant).challenged_names(agent)) if self.has_tenant(tenant) else set()
        return [c for c in self.concepts(agent=agent, tenant=tenant, held=held)
                if status_of(c, challenged) == "conflict"]

    def held_claims(self, *, agent: str, name: str | None = None, tenant: str = DEFAULT_TENANT,
                    ) -> list[PossibleDuplicate]:
        """The sightings held for a person's review, oldest first: claims contradicting a
        policy concept, or one whose record (at most 20,000 characters) had no room left
        for them (held under the concept's own name: ``name == duplicate_of``; a claim
        held open is not held twice), and candidates that closely
        match a concept without restating it (possible duplicates). Each keeps the claim's
        description, type and body as proposed (screened, redacted), its session and turn.

        Args:
            agent: the agent id.
            name: only those held against this concept; None for every concept.
            tenant: the tenant.

        Raises:
            InvalidName: the agent or tenant name is invalid.
            ArgumentTypeError: `name` is not a str or None.
        """
        check_types("Memory.held_claims()", name=(name, (str, _NONE)), tenant=(tenant, str))
        check_agent(agent)
        if not self.has_tenant(tenant):
            return []
        return self.store(tenant).possible_duplicates(agent, name)

    def dismiss_held(self, name: str, *, agent: str, tenant: str = DEFAULT_TENANT,
                     actor: str = PYTHON_ACTOR) -> int:
        """Keep concept `name` as it is: close every claim held against it (`held_claims`:
        a policy's challenges, possible duplicates), which leaves `conflicts()`; the record
        is not changed (to take a claim instead, edit the concept: `update`).

        Returns:
            How many held claims were closed.

        Raises:
            InvalidName: the agent or tenant name is invalid.
            NotFound: no such concept.
            ArgumentTypeError: `name` or `actor` is not a str.
        """
        check_types("Memory.dismiss_held()", name=(name, str), actor=(actor, str), tenant=(tenant, str))
        check_agent(agent)
        store = self.store(tenant)
        try:
            return store.dismiss_held(agent, name, actor=actor)
        except NotFound as exc:
            raise _hinted(exc, store, agent, name) from None

    def learn_held(self, name: str, *, agent: str, tenant: str = DEFAULT_TENANT,
                   actor: str = PYTHON_ACTOR) -> Concept:
        """Learn the claim held under `name` as a possible duplicate of another concept as a
        concept of its own: a person read it and found another rule, not a change of the one
        it was held against ("Orders over $100 get free gift wrap" held against "Orders over
        $50 ship free"). The concept is created under `name` (observed; description, type and
        body of its latest sighting; one source per session that proposed it, and the
        confidence they give), its history reason ``resolve``; the claims held under `name`
        are closed, so the concept they were held against is no longer served as disputed.
        A later sighting under `name` confirms it.

        Returns:
            The new concept.

        Raises:
            InvalidName: the agent or tenant name is invalid.
            UserError: nothing is held open under `name` as a possible duplicate (the names
                held are listed), or `name` is a concept already (when claims are held under
                it, the concept was renamed to the name they were proposed under: they
                challenge it now).
            ArgumentTypeError: `name` or `actor` is not a str.
        """
        check_types("Memory.learn_held()", name=(name, str), actor=(actor, str), tenant=(tenant, str))
        check_agent(agent)
        store = self.store(tenant)
        every = store.possible_duplicates(agent)  # open ones, oldest first: one read
        held = [h for h in every if h.name == name and h.duplicate_of != name]
        if not held and any(h.name == h.duplicate_of == name for h in every):
            raise UserError(f"'{name}' is a concept of agent '{agent}' now: the claims held under its name challenge "
                            "it (a policy's contradicting sightings, or a concept renamed to the name they were "
                            "proposed under); keep it as it is (dismiss) or edit it")
        if not held:
            names = sorted({h.name for h in every if h.name != h.duplicate_of})
            said = f"; held: {', '.join(names[:10])}" if names else "; none is held"
            raise UserError(f"no claim of agent '{agent}' is held open under the name '{name}'{said}")
        latest, now = held[-1], store.clock()
        sessions = tuple(dict.fromkeys(h.session_id for h in held))
        concept = Concept(name=name, description=latest.description, type=latest.type, provenance="observed",
                          confidence=confidence(len(sessions)), sources=sessions, occurrences=len(sessions),
                          created_at=min(held[0].seen_at, now), updated_at=now, body=latest.body)
        saved = store.learn_held(agent, concept, actor=actor)
        self._embed_written(tenant, agent)  # its vector: found by meaning at once
        return saved.concept

    def claims(self, name: str, *, agent: str, tenant: str = DEFAULT_TENANT) -> list[Claim]:
        """The claims of a concept whose body holds contradicting reports: the claim on
        record (``key`` ``record``), then each contradiction (``entry-1``, ``entry-2``...,
        with its sessions, time and why it is held); [] when its body holds none. What
        `resolve` chooses among (as the Studio's resolve page does).

        Raises:
            InvalidName: the agent or tenant name is invalid.
            NotFound: no such concept (the message names close names).
        """
        check_types("Memory.claims()", name=(name, str), tenant=(tenant, str))
        return resolution.claims(parse(self.load(name, agent=agent, tenant=tenant, held=True)))

    def resolve(
        self, name: str, *, agent: str, tenant: str = DEFAULT_TENANT, keep: str | None = None,
        written: str | None = None, expected_version: int | None = None, actor: str = PYTHON_ACTOR,
    ) -> Concept:
        """Resolve a concept's contradicting reports in one write (history reason ``resolve``).

        Either `keep` one of its claims (`claims`: ``record`` or ``entry-N``), whose text
        becomes the body, or give the whole record a person `written` (markdown, as
        `put` takes; its ``## Contradiction`` section gone). Either way the section goes,
        and the record's sources, occurrences and confidence are what the sightings ledger
        supports for what is kept (`consolidate.resolution`: ``min(0.95, 0.5 + 0.1 x
        sessions)``: a kept claim's own sessions; every session for a written record, which
        reconciles them all; a ``policy`` keeps its confidence); the ledger then counts only
        those sessions as the concept's support. Claims held apart (`held_claims`) are not
        touched: `dismiss_held` closes them.

        Args:
            name: the concept in conflict.
            agent: the agent id.
            tenant: the tenant.
            keep: the claim to keep (``record``, ``entry-N``).
            written: the resolved record instead (its name must stay `name`).
            expected_version: fail with `StaleVersion` unless this is the current version
                (None: whatever is current).
            actor: who the history names.

        Returns:
            The resolved concept.

        Raises:
            InvalidName: the agent or tenant name is invalid.
            NotFound: no such concept.
            UserError: neither or both of `keep` and `written`; the concept holds no
                contradicting reports; `keep` names no claim; `written` renames the concept
                or still has the section.
            ConceptFormatError: `written` is not a valid record (line and field named).
            StaleVersion: `expected_version` is given and is not current.
        """
        check_types("Memory.resolve()", name=(name, str), keep=(keep, (str, _NONE)), written=(written, (str, _NONE)),
                    expected_version=(expected_version, (int, _NONE)), actor=(actor, str), tenant=(tenant, str))
        check_version("Memory.resolve()", "expected_version", expected_version)
        if (keep is None) == (written is None):
            raise UserError("Memory.resolve(): give one of keep (a claim's key: record, entry-N) or written "
                            "(the resolved record)")
        check_agent(agent)
        stored = self.store(tenant).get(agent, name) if self.has_tenant(tenant) else None
        if stored is None:
            self.load(name, agent=agent, tenant=tenant, held=True)  # raises NotFound with close names
            raise NotFound(f"no concept {name!r} for agent {agent!r}")  # (deleted meanwhile)
        current = stored.concept
        resolved = None if written is None else _written_record(written, current)
        if not current.in_conflict:
            raise UserError(f"Memory.resolve(): '{name}' holds no contradicting reports: nothing to resolve "
                            "(held claims: dismiss_held, or update the concept)")

        def choose(concept: Concept, ledger: Sequence[Sighting]) -> Concept:
            if resolved is not None:
                return resolution.written(concept, resolved, ledger)
            assert keep is not None
            return resolution.keep(concept, keep, ledger)

        return self.store(tenant).resolve(agent, name, choose, actor=actor,
                                          expected_version=stored.version if expected_version is None
                                          else expected_version).concept

    def reindex(
        self, *, agent: str, tenant: str = DEFAULT_TENANT, fresh: bool = False,
        progress: Callable[[int, int], None] | None = None,
    ) -> Reindexed:
        """Make every missing or stale vector of `agent`'s concepts for the semantic index.

        For a store written before embeddings, after a change of provider (vectors of the
        others are dropped), or to catch up with Studio edits (which the learning worker
        otherwise embeds after its next turn).

        Args:
            agent: the agent id.
            tenant: the tenant.
            fresh: drop the agent's vectors first and make every one again.
            progress: called with (concepts done, concepts in all) as batches finish.

        Returns:
            What was done: the provider's model id, the concepts, and the vectors made.

        Raises:
            InvalidName: the agent or tenant name is invalid.
            UserError: no embedding provider is available (the message says why).
            RunTimeFailure: the provider failed (the vectors made so far are kept: run it again).
        """
        check_types("Memory.reindex()", fresh=(fresh, bool),
                    progress=(progress, (_CALLABLE, _NONE), "a function (done, total) or None"))
        check_agent(agent)
        retriever = self.retriever(tenant)
        semantic = retriever.semantic(logged=False)  # the error says why, once
        if semantic is None:
            raise UserError(f"no embedding provider: {retriever.semantic_reason}")
        made = semantic.reindex(agent, progress=progress, fresh=fresh)
        total, _ = semantic.coverage(agent)
        return Reindexed(semantic.model, total, made)

    def put(
        self, markdown: str, *, agent: str, tenant: str = DEFAULT_TENANT, actor: str = PYTHON_ACTOR,
    ) -> Concept:
        """Add or replace a concept a person wrote (history reason ``edit``).

        Only ``name`` and ``description`` are required in the frontmatter
        (see `insika_knowledge.authored`). Left out: ``provenance`` is ``policy`` (a person
        vouches for it; write ``observed`` to keep it as past practice), ``type`` is
        ``fact``, ``updated_at`` is now; ``confidence``, ``sources``, ``occurrences`` and
        ``created_at`` keep the values on record, or for a new concept: confidence 1.0
        (policy) or 0.6 (observed), no sources, 0 occurrences, now.

        The concept is served at once: one held in quarantine under its name is released
        (the person who puts a record vouches for it). Its vector for the semantic index is
        made in this call (when a provider is configured), so a search right after finds it
        by meaning too.

        Returns:
            The concept as stored.

        Raises:
            InvalidName: the agent or tenant name is invalid.
            ConceptFormatError: the markdown is not a valid record (line and field named).
            RunTimeFailure: the concept was written by others on every one of
                `PUT_ATTEMPTS` tries (heavy contention on one name); nothing was written.
        """
        check_types("Memory.put()", markdown=(markdown, str), actor=(actor, str))
        check_agent(agent)
        store = self.store(tenant)
        concept: Concept | None = None
        unsafe = unsafe_in_body(markdown)  # the line in the author's own text
        if unsafe is not None and unsafe[1] == "\x00":
            raise unsafe_body_error(unsafe[1], line=unsafe[0])  # never storable
        for attempt in range(PUT_ATTEMPTS):
            _pause(attempt)
            now = store.clock()  # each try: another writer may have created it since the last one
            guess = {"provenance": "policy", "type": "fact", "confidence": 1.0, "sources": [],
                     "occurrences": 0, "created_at": now, "updated_at": now}
            text, filled = complete(markdown, guess)
            try:
                concept = parse(text)
            except ConceptFormatError as exc:
                raise authors_error(exc, markdown, len(filled)) from None
            current = store.get(agent, concept.name)
            if unsafe is not None and (current is None or current.concept.body != concept.body):
                raise unsafe_body_error(unsafe[1], line=unsafe[0])  # a body stored before is left alone
            kept: dict[str, Any] = {}
            if current is not None:
                kept = {k: getattr(current.concept, k) for k in KEPT_ON_PUT if k in filled}
            elif "confidence" in filled and concept.provenance != "policy":
                kept = {"confidence": FIRST_SIGHTING_CONFIDENCE}
            if "updated_at" in filled and str(kept.get("created_at", now)) > now:
                continue  # created by another writer after this try's clock: try again with a later one
            record = serialize(check_times(concept.replace(**kept)))
            try:
                if current is None:
                    saved = store.create(agent, record, actor=actor)
                else:
                    saved = store.edit(agent, concept.name, record, expected_version=current.version,
                                       actor=actor, release=True)  # a person vouches for it: served at once
                try:
                    self._embed_written(tenant, agent)  # its vector, in this request
                except KeyboardInterrupt:  # the write stands: never reported as failed
                    raise InterruptedAfterWrite(saved.concept.name) from None
                return saved.concept
            except (StaleVersion, NotFound):
                continue  # written or deleted meanwhile: read it again
            except UserError:
                if current is not None or store.get(agent, concept.name) is None:
                    raise
                continue  # created meanwhile: read it again
        name = concept.name if concept is not None else "?"
        raise RunTimeFailure(f"{agent}/{name} kept changing while it was being put: nothing of this put was "
                             "written; read it again and put again")

    def propose(
        self,
        candidate: Mapping[str, Any],
        *,
        agent: str,
        session_id: str,
        turn_id: str | None = None,
        tenant: str = DEFAULT_TENANT,
        config: KnowledgeConfig | None = None,
        model: str | ConceptModel | None = None,
        messages: Sequence[Mapping[str, Any]] = (),
    ) -> TurnReport:
        """Learn one concept proposed by a tool or an agent, exactly as extraction would.

        The candidate (``name``, ``description``, ``type``, ``body``) passes the same gates,
        redaction, trust gate and consolidation as a model's answer, with provenance
        ``observed``. The trust gate checks it against `messages`: a rule that only the
        customer's messages support is held in quarantine (outcome ``quarantined``), as
        it is when extraction proposes it. Without messages nothing supports the claim,
        and it is judged as any claim no message supports: a rule (a deadline, a price, a
        "must") is held in quarantine, and so is a fact with a value (a number, an amount, a
        date: nothing stated it); a plain fact is learned.

        Args:
            candidate: the proposed concept's four keys.
            agent: the agent id.
            session_id: where the proposal comes from (becomes the concept's source).
            turn_id: None = a digest of `candidate` (and of `messages`, when given): the
                same proposal counts once.
            tenant: the tenant.
            config: the agent's settings (``types`` allowlist); None = the defaults.
            model: the model asked to merge a related repeat; None = ``config.model``,
                else ``$INSIKA_UTILITY_MODEL``, else none (a different repeat is a conflict).
            messages: the conversation the proposal comes from (OpenAI-style dicts with
                ``role`` and ``content``, oldest first), the evidence the trust gate reads.

        Returns:
            The report: ``results`` holds ``(name, outcome)`` when the candidate was kept,
            ``dropped`` the reason when a gate refused it and ``why`` what was wrong
            (``["candidate 0: invalid: description is 301 characters (at most 300)"]``).

        `messages` are bounded as `learn` bounds a turn (at most `OutboxSettings.turn_bytes_max`
        bytes of message JSON, the oldest cut first).

        Raises:
            InvalidName: the agent or tenant name is invalid.
            UserError: the ids are not printable text, the model spec is unusable, or the
                last message alone is over `OutboxSettings.turn_bytes_max` bytes of JSON.
        """
        where = "Memory.propose()"
        check_types(where, candidate=(candidate, Mapping, "a mapping (name, description, type, body)"),
                    session_id=(session_id, str), turn_id=(turn_id, (str, _NONE)),
                    model=(model, (str, _ModelObject, _NONE), _MODEL_KINDS), config=_config_arg(config))
        evidence = _messages(where, "messages", messages)
        evidence = self._bounded(where, evidence) if evidence else evidence
        settings = config or KnowledgeConfig()
        merger = model if model is not None else settings.resolved_model()
        chosen = self._chosen(merger)
        if isinstance(chosen, InstructorModel):
            chosen.check()  # an unusable spec ("nope/x", no API key) is the caller's mistake, said now
        item = dict(candidate)
        digest = digest_id([item, evidence] if evidence else item)
        return self.learn_turn(
            agent, settings, session_id=session_id, turn_id=turn_id or digest,
            messages=evidence, tenant=tenant, model=GivenModel([item], chosen),
        )

    def update(
        self, name: str, *, agent: str, tenant: str = DEFAULT_TENANT, description: str | None = None,
        body: str | None = None, type: str | None = None, provenance: str | None = None,
        rename: str | None = None, expected_version: int | None = None, actor: str = PYTHON_ACTOR,
    ) -> Concept:
        """Change some fields of an existing concept (history reason ``edit``); the rest stays.

        An update that leaves a concept in conflict without its ``## Contradiction``
        section is a person's written resolution (`resolve`: reason ``resolve``, sources,
        occurrences and confidence recomputed from the sightings ledger, then a rename if
        asked); any update of the description or body closes the claims held against it.

        Args:
            name: the concept's current name.
            agent: the agent id.
            tenant: the tenant.
            description: the new one-line summary.
            body: the new markdown body.
            type: the new type (fact, entity, procedure, policy, objection).
            provenance: ``policy`` (a person vouches for it) or ``observed``.
            rename: a new name (a kebab-case slug; the history moves with it).
            expected_version: fail with `StaleVersion` unless this is the current version
                (None: whatever is current when read, re-read if another writer wins).
            actor: who the history names.

        Returns:
            The concept as stored (``updated_at`` stamped now); when no field changes,
            the concept as it was, and no version is written.

        Raises:
            InvalidName: the agent or tenant name is invalid.
            NotFound: no such concept (the message names close names).
            ConceptFormatError: a new value is invalid (the field named).
            StaleVersion: `expected_version` is given and is not current.
            UserError: `rename` is another concept's name.
            RunTimeFailure: other writers changed the concept on every try.
        """
        check_types("Memory.update()", name=(name, str), description=(description, (str, _NONE)),
                    body=(body, (str, _NONE)), type=(type, (str, _NONE)), provenance=(provenance, (str, _NONE)),
                    rename=(rename, (str, _NONE)), expected_version=(expected_version, (int, _NONE)),
                    actor=(actor, str))
        check_version("Memory.update()", "expected_version", expected_version)
        check_agent(agent)
        store = self.store(tenant)
        if description is not None:  # a no-break or ideographic space reads as a space, as in `put`
            description = SPACE_SEPARATORS.sub(" ", description)
        changes = {k: v for k, v in (("description", description), ("body", body), ("type", type),
                                     ("provenance", provenance), ("name", rename)) if v is not None}
        for attempt in range(PUT_ATTEMPTS):
            _pause(attempt)
            current = store.get(agent, name)
            if current is None:
                if _now_called(store, agent, name) is None:
                    self.load(name, agent=agent, tenant=tenant, held=True)  # raises NotFound with close names
                raise _hinted(NotFound(f"no concept {name!r} for agent {agent!r}"), store, agent, name)
            if body is not None and body != current.concept.body and (bad := unsafe_in_text(body)):
                raise unsafe_body_error(bad[1], line=None, where=f"Memory.update(): body, line {bad[0]}: ")
            try:
                changed = current.concept.replace(**changes)
                record = serialize(changed)  # validated
            except ConceptFormatError as exc:
                raise ConceptFormatError(f"Memory.update(): {str(exc).replace(_NAME_FIELD, 'rename:', 1)}") from None
            if changed == current.concept and expected_version in (None, current.version):
                return current.concept  # nothing changes: no new version
            try:
                if current.concept.in_conflict and not changed.in_conflict:  # a person settles the conflict
                    return self._settled(store, agent, name, changed, actor=actor,
                                         expected_version=current.version if expected_version is None
                                         else expected_version)
                return store.edit(agent, name, record, actor=actor,
                                  expected_version=current.version if expected_version is None
                                  else expected_version).concept
            except StaleVersion:
                if expected_version is not None:
                    raise
            except UserError as exc:
                if rename is not None and _NAME_FIELD in str(exc):  # the record's line: say the argument
                    said = str(exc).split(_NAME_FIELD, 1)[1].strip()  # not the record's line: the argument
                    raise UserError(f"Memory.update(): rename: {said}") from None
                raise
        raise RunTimeFailure(f"{agent}/{name} kept changing while it was being updated")

    @staticmethod
    def _settled(store: Store, agent: str, name: str, changed: Concept, *, actor: str,
                 expected_version: int) -> Concept:
        """`update` of a concept in conflict to `changed`, which has no ``## Contradiction``
        section: a written resolution (`resolve`: the evidence recomputed from the ledger,
        not the conflict's flat 0.4 kept), then the rename, if any, as an edit; the claims
        held against it are decided, as any edit of its text decides them.

        Raises:
            StaleVersion: the concept is not at `expected_version`.
            UserError: `changed` renames it to another concept's name.
        """
        settled = changed.replace(name=name)
        stored = store.resolve(agent, name, lambda concept, ledger: resolution.written(concept, settled, ledger),
                               expected_version=expected_version, actor=actor)
        store.dismiss_held(agent, name, actor=actor)
        if changed.name == name:
            return stored.concept
        return store.edit(agent, name, serialize(stored.concept.replace(name=changed.name)), actor=actor,
                          expected_version=stored.version).concept

    def history(self, name: str, *, agent: str, tenant: str = DEFAULT_TENANT) -> list[Version]:
        """Every version of a concept, oldest first: who changed it, why, and the record after.

        A `Version` is ``(agent, name, version, reason, actor, session_id, markdown,
        created_at)``; ``reason`` is extract, confirm, merge, conflict, edit, restore,
        resolve or delete (for delete, ``markdown`` is the last record before it). A
        deleted concept keeps its history.

        Raises:
            InvalidName: the agent or tenant name is invalid.
            NotFound: the concept never existed.
        """
        check_types("Memory.history()", name=(name, str))
        check_agent(agent)
        store = self.store(tenant)
        versions = store.versions(agent, name)
        if not versions:
            raise _hinted(NotFound(f"no concept {name!r} for agent {agent!r} has a history"), store, agent, name)
        return sorted(versions, key=lambda v: v.version)

    def restore(self, name: str, version: int, *, agent: str, tenant: str = DEFAULT_TENANT,
                actor: str = PYTHON_ACTOR) -> Concept:
        """Make version `version` of a concept current again, byte for byte (reason ``restore``).

        Works for a deleted concept too (give one of its live versions). Restoring the
        record already current writes nothing.

        Raises:
            InvalidName: the agent or tenant name is invalid.
            NotFound: no such version (see `history`).
        """
        check_types("Memory.restore()", name=(name, str), version=(version, int), actor=(actor, str))
        check_agent(agent)
        store = self.store(tenant)
        try:
            return store.restore(agent, name, version, actor=actor).concept
        except NotFound as exc:
            raise _hinted(exc, store, agent, name) from None

    def approve(self, name: str, *, agent: str, tenant: str = DEFAULT_TENANT, actor: str = PYTHON_ACTOR,
                expected_version: int | None = None) -> Concept:
        """Release a concept held in quarantine by a person's decision (reason ``approve``).

        A held concept (`insika_knowledge.trust`: a rule only the customer stated, or one the
        business took back) is never handed to a model; once approved it is served like
        any other, and the history names `actor`. The Studio's Approve does the same.

        Args:
            name: the held concept.
            agent: the agent id.
            tenant: the tenant.
            actor: who the history names (default ``python``).
            expected_version: fail with `StaleVersion` unless this is the current version
                (None: whatever is current).

        Returns:
            The concept, now served.

        Raises:
            InvalidName: the agent or tenant name is invalid.
            NotFound: no such concept.
            UserError: it is not in quarantine (nothing is written).
            StaleVersion: `expected_version` is given and is not current.
        """
        check_types("Memory.approve()", name=(name, str), actor=(actor, str), tenant=(tenant, str),
                    expected_version=(expected_version, (int, _NONE)))
        check_version("Memory.approve()", "expected_version", expected_version)
        check_agent(agent)
        store = self.store(tenant)
        try:
            return store.approve(agent, name, actor=actor, expected_version=expected_version).concept
        except NotFound as exc:
            raise _hinted(exc, store, agent, name) from None

    def _embed_written(self, tenant: str, agent: str) -> None:
        """Make the vectors of what a person just wrote; a failure is reported, never raised
        (the write happened: the caller must not be told otherwise).
        """
        try:
            self.retriever(tenant).embed_pending(agent)
        except Exception as exc:  # the vector is made by the worker's next turn or `reindex`
            self.degraded(agent, "embeddings", exc)



@dataclass(frozen=True)
class AgentLearning:
    """One agent's learning, as recorded in its tenant's database.

    Attributes:
        agent: the agent id.
        concepts: its current concepts.
        turns: recorded extraction attempts per outcome (``ok``, ``no_model``,
            ``model_error``, ``dropped_outbox_full``...).
    """

    agent: str
    concepts: int
    turns: dict[str, int]

    @property
    def failed(self) -> int:
        """Attempts whose outcome is not ``ok``."""
        return sum(n for outcome, n in self.turns.items() if outcome != "ok")


@dataclass(frozen=True)
class TenantStatus:
    """What `Memory.status` reports for one tenant.

    Attributes:
        tenant: the tenant name.
        queued: turns in its outbox, waiting to be learned (claimed or not).
        held: turns in its outbox held until its model can be used (no API key, HTTP
            401/403/404): tried again when a process starts, or when the model answers a
            later turn (`insika_knowledge.queue`).
        dropped: turns the queue refused (outbox full, turn too large), on record.
        agents: per agent, by id.
        failures: the most recent failed extractions, newest first.
        spilled: turns waiting in the data directory's spill journal for its outbox (a
            process could not write them yet: its store was still opening or busy; the
            next process to start writes them there).
        error: why the tenant's store could not be read ("" when it could): its file is not
            a SQLite database (`NotADatabase`), in a report of every tenant.
    """

    tenant: str
    queued: int
    dropped: int
    agents: list[AgentLearning]
    failures: list[ExtractionRecord]
    spilled: int = 0
    error: str = ""
    held: int = 0

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: the fields, each failure as agent, session_id, turn_id, outcome, detail, attempted_at."""
        return {
            "tenant": self.tenant, "queued": self.queued, "held": self.held, "spilled": self.spilled,
            "dropped": self.dropped, "error": self.error,
            "agents": [{"agent": a.agent, "concepts": a.concepts, "turns": a.turns, "failed": a.failed}
                       for a in self.agents],
            "failures": [{"agent": f.agent, "session_id": f.session_id, "turn_id": f.turn_id,
                          "outcome": f.outcome, "detail": f.detail, "attempted_at": f.attempted_at}
                         for f in self.failures],
        }


@dataclass(frozen=True, slots=True)
class Reindexed:
    """What `Memory.reindex` did.

    Attributes:
        model: the embedding model's id (every vector made carries it).
        concepts: the agent's concepts.
        made: vectors made now (a concept whose vector was current is not counted).
    """

    model: str
    concepts: int
    made: int


@dataclass(frozen=True, slots=True)
class HitSummary:
    """One search result as a block or a tool list shows it (no body).

    Attributes:
        name: the concept's name.
        description: its one-line summary.
        type: fact, entity, procedure, policy or objection.
        score: the index's score, higher is better (see `Memory.search`).
        confidence: 0..1.
        provenance: ``observed`` (learned) or ``policy`` (set by a person).
        status: ``ok``, or ``conflict`` when contradicting reports await a person.
    """

    name: str
    description: str
    type: str
    score: float
    confidence: float
    provenance: str
    status: str

    def summary(self) -> HitSummary:
        """This hit without its body."""
        return HitSummary(self.name, self.description, self.type, self.score, self.confidence,
                          self.provenance, self.status)


@dataclass(frozen=True, slots=True)
class Hit(HitSummary):
    """One search result (`HitSummary`'s fields), with its body.

    Attributes:
        body: the concept's markdown body (its whole claim; `Memory.load` gives the record).
    """

    body: str = ""

    @classmethod
    def of(cls, entry: Entry, score: float, body: str = "", status: str | None = None) -> Hit:
        """The hit for one index entry (with the concept's `body`, when read; `status`
        None reads it from the entry's body alone).
        """
        return cls(entry.name, entry.description, entry.type, float(score), entry.confidence,
                   entry.provenance, status or status_of(entry, frozenset()), body)


class _Opening:
    """A tenant being opened on a thread of its own (`Memory.tenant_within`)."""

    def __init__(self) -> None:
        self.done = threading.Event()
        self.error: BaseException | None = None


class _Forwarder:
    """The subscriber that hands a `Memory`'s events to a plugin manager's ``track_event``."""

    def __init__(self, manager: pluggy.PluginManager | None):
        self.manager = manager

    def resolved(self) -> pluggy.PluginManager:
        if self.manager is None:
            self.manager = default_manager()
        return self.manager

    def __call__(self, event: Any) -> None:
        TrackEventForwarder(self.resolved())(event)  # one lookup of the hook; nothing kept


def _now_called(store: Store, agent: str, name: str) -> str | None:
    """The live concept `name` is an alias of (an old name kept by a rename, or a name a
    sighting was proposed under), or None.
    """
    alias = store.alias_of(agent, name)
    return alias if alias is not None and store.get(agent, alias) is not None else None


#: The most characters of a missing concept's name a not-found message quotes.
_SHOWN_NAME: Final = 100
#: Agents a "no such concept" names at most when the agent has none here.
_NAMED_AGENTS: Final = 10


def _hinted(exc: NotFound, store: Store, agent: str, name: str) -> NotFound:
    """`exc`, saying which live concept `name` is an alias of when it is one, else naming up
    to 3 close names ("did you mean ...?", as `load` does) when there are.
    """
    if len(name) > _SHOWN_NAME:  # no name is that long: say so without echoing it whole
        return NotFound(str(exc).replace(f"'{name}'", f"{name[:_SHOWN_NAME]!r}... ({len(name)} characters)"))
    now = _now_called(store, agent, name)
    if now is None:
        names = store.names(agent)
        if "did you mean" in str(exc) or name in names:  # a live concept's missing version: no other name
            return exc
        gone = next((v for v in store.deleted(agent) if v.name == name), None)
        if gone is not None:  # "no concept named x" of a deleted one left its history unsaid
            return NotFound(f"{exc}; it was deleted at {gone.created_at} by {gone.actor} (version {gone.version}): "
                            "its history keeps every version, and restoring one brings it back")
        close = difflib.get_close_matches(name.lower(), names, n=3, cutoff=0.5)
        if close:
            return NotFound(f"{exc}; did you mean {', '.join(close)}?")
        agents = store.agents()
        if names or agent in agents:
            return exc
        near = difflib.get_close_matches(agent, agents, n=3, cutoff=0.5)
        said = f"did you mean agent {', '.join(near)}?" if near else \
            f"agents here: {', '.join(agents[:_NAMED_AGENTS])}" if agents else "no agent has any here"
        return NotFound(f"{exc}; agent {agent!r} has no concept or history here ({said})")
    return NotFound(f"{exc}; it is an alias of {now!r} (an old name a rename kept, or a name a sighting was "
                    f"proposed under): use {now!r}")


def digest_id(value: object) -> str:
    """A short stable id for a JSON-like value: ``d-`` and 16 lowercase letters of its
    SHA-256 (about 75 bits). Letters, not hex: a run of 8 digits in an id reads as a phone
    number and would be stored as a pseudonym (`insika_knowledge.privacy.pseudonyms`).
    """
    text = json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)
    return "d-" + letters(hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest())


#: What `Memory.search` and `Memory.records` filters may ask for.
_FILTER_VALUES: Final = {
    "type": ("fact", "entity", "procedure", "policy", "objection"),
    "provenance": ("observed", "policy"),
    "status": ("ok", "conflict"),
}


def _filters(**given: str | None) -> dict[str, str]:
    """The filters given (None left out), checked against `_FILTER_VALUES`.

    Raises:
        ConfigError: a value is not one a concept can have.
    """
    wanted = {k: v for k, v in given.items() if v is not None}
    for key, value in wanted.items():
        if value not in _FILTER_VALUES[key]:
            raise ConfigError(f"{key}={value!r}: use one of {', '.join(_FILTER_VALUES[key])}")
    return wanted


def _passes(wanted: Mapping[str, str], type_: str, provenance: str, status: str) -> bool:
    return (wanted.get("type", type_) == type_ and wanted.get("provenance", provenance) == provenance
            and wanted.get("status", status) == status)


def _body(stored: StoredConcept | None) -> str:
    return stored.concept.body if stored is not None else ""


def _settings(call: str, **block: Any) -> KnowledgeConfig:
    """`block` (arguments of `call` named as `KnowledgeConfig`'s fields) as settings.

    Raises:
        ConfigError: a value is out of range, named as `call`'s argument.
    """
    try:
        config = load_config(block)
    except ConfigError as exc:
        raise ConfigError(f"{call}: {str(exc).replace('knowledge.', '', 1)}") from None
    assert config is not None
    return config


@runtime_checkable
class _ModelObject(Protocol):
    """What a ``model`` object must have at least, for the type check (`ConceptModel`)."""

    def propose(self, request: Any) -> list[Any]: ...


_NONE: Final = type(None)
#: How a `ConceptFormatError` names the name field (`update` calls it ``rename``).
_NAME_FIELD: Final = "field 'name':"
#: Anything callable, as `check_types` takes it (the ABC `Callable`).
_CALLABLE: Final = cast(type, Callable)
#: What a ``model`` argument may be, for messages.
_MODEL_KINDS: Final = "a model spec (str), a model object (propose and merge) or None"


def _config_arg(config: object) -> tuple[object, tuple[type, ...], str]:
    """The `check_types` spec of a ``config`` argument (a dict is told how to make one)."""
    hint = " (insika_knowledge.config.load_config({...}) makes one from a dict)" if isinstance(config, Mapping) else ""
    return config, (KnowledgeConfig, _NONE), "a KnowledgeConfig or None" + hint


#: The roles whose message may carry no content: an assistant's that calls tools, as the
#: OpenAI chat format allows.
_CONTENT_OPTIONAL: Final = frozenset({"assistant"})


def _messages(where: str, argument: str, messages: object) -> list[dict[str, Any]]:
    """`messages` as a list of dicts, checked: a sequence (not text) of mappings.

    Raises:
        ArgumentTypeError: `messages` is not such a sequence, or one item is not a mapping
            with text keys (named by its index), or its content is not text, parts or None.
        UserError: a message's role is not one of `MESSAGE_ROLES`, or a message other than
            an assistant's has no content.
    """
    if isinstance(messages, (str, bytes, bytearray)) or not isinstance(messages, Sequence):
        raise wrong_type(where, argument, messages, "a list of message dicts (role, content)")
    for i, message in enumerate(messages):
        if not isinstance(message, Mapping):
            raise wrong_type(where, f"{argument}[{i}]", message, "a message dict (role, content)")
        key = next((k for k in message if not isinstance(k, str)), None)
        if key is not None:
            raise wrong_type(where, f"a key of {argument}[{i}]", key, "a str")
        if message.get("role") not in MESSAGE_ROLES:
            raise UserError(f"{where}: {argument}[{i}]['role'] is {message.get('role')!r}; "
                            f"a message's role is one of {', '.join(sorted(MESSAGE_ROLES))}")
        content = message.get("content")
        if not isinstance(content, (str, list, type(None))):
            raise wrong_type(where, f"{argument}[{i}]['content']", content, "a str, a list of content parts or None")
        if content is None and message["role"] not in _CONTENT_OPTIONAL:
            said = "has no 'content'" if "content" not in message else "['content'] is None"
            raise UserError(f"{where}: {argument}[{i}]{' ' if said[0] == 'h' else ''}{said}; "
                            f"a {message['role']} message needs its text (only an assistant's may go without, "
                            "when it calls tools)")
    return [dict(m) for m in messages]


def _written_record(markdown: str, current: Concept) -> Concept:
    """A person's resolution of `current`: `markdown`, the keys it leaves out taken from
    `current` (only name and description are required, as `Memory.put` takes a record).

    Raises:
        ConceptFormatError: the record is invalid (the author's line and field named).
    """
    fields = json.loads(json.dumps({k: getattr(current, k) for k in ("type", "provenance", "sources", "occurrences",
                                                                     "created_at", "updated_at")}))
    fields["confidence"] = 1.0  # as `put`: a policy a person vouches for (an observed one's is recomputed)
    text, filled = complete(markdown, fields)
    try:
        return parse(text)
    except ConceptFormatError as exc:
        raise authors_error(exc, markdown, len(filled)) from None


#: The most failures `Memory.status` lists per tenant (a larger number lists them all: the
#: database's LIMIT takes a 64-bit integer).
_MOST_FAILURES: Final = 2**31



def _pause(attempt: int) -> None:
    """Before a re-read after another writer won (`attempt` > 0): a jittered, growing pause
    (`PUT_PAUSE_S`), so two writers of one name do not collide again at once.
    """
    if attempt:
        time.sleep(backoff_s(attempt, PUT_PAUSE_S, cap_s=0.5))
