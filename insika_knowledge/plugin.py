"""The plugin a host engine loads from the ``insika.plugins`` entry point (``knowledge``).

`plugin` is a module-level `KnowledgePlugin`. It reads its data directory from
``$INSIKA_KNOWLEDGE_HOME`` (or the user data folder) the first time it is used;
a host may call `KnowledgePlugin.configure` before that. ``after_turn`` writes the
turn to its tenant's durable outbox and returns (`insika_knowledge.outbox`); one
background thread per process extracts queued turns, and a process that starts
again resumes the turns an earlier one left (even after a crash).

No hook ever raises into the engine: whatever goes wrong (an invalid block, an
unusable data directory, a bad tenant, a malformed turn) makes the hook return
nothing and emits ``knowledge_degraded`` once per cause.

Every event the plugin's `Memory` emits also goes to the ``track_event`` hook of its
plugin manager: by default one of its own (`load_plugins`: every installed
``insika.plugins`` entry point), so an analytics or OpenTelemetry plugin needs only
implement ``track_event``; a host may hand its own manager to `KnowledgePlugin.configure`.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Final

import pluggy

from insika_knowledge import hookspecs
from insika_knowledge.config import KnowledgeConfig, load_config
from insika_knowledge.errors import InsikaError, StorageBusy
from insika_knowledge.events import EventBus, KnowledgeDegraded, TrackEventForwarder
from insika_knowledge.hookspecs import AgentSpec, Fragment, Tool, Turn, hookimpl
from insika_knowledge.ids import DEFAULT_TENANT, check_agent, check_tenant
from insika_knowledge.memory import Memory
from insika_knowledge.outbox import ExtractionQueue, OutboxSettings
from insika_knowledge.retrieve import LOAD_KNOWLEDGE_SCHEMA

if TYPE_CHECKING:
    from insika_knowledge.procedures import ProceduralMemory, ProceduresConfig

log = logging.getLogger(__name__)

#: Where the block sits among prompt fragments: below curated skills (80), above memory (75).
KNOWLEDGE_PRIORITY: Final = 77
#: The entry-point group plugins are installed under (the engine's and this package's).
ENTRY_POINTS: Final = "insika.plugins"


def load_plugins() -> pluggy.PluginManager:
    """A plugin manager with the ``insika`` hookspecs and every installed ``insika.plugins`` plugin.

    Never raises: an installed plugin that fails to load is logged, and the manager keeps
    the plugins loaded before it (the engine's turn must not depend on an analytics plugin).
    """
    manager = pluggy.PluginManager(hookspecs.PROJECT)
    manager.add_hookspecs(hookspecs)
    try:
        manager.load_setuptools_entrypoints(ENTRY_POINTS)
    except Exception:  # a broken third-party plugin must not take the knowledge plugin down
        log.exception("could not load every %s entry point", ENTRY_POINTS)
    return manager


class KnowledgePlugin:
    """Hook implementations over one `Memory`, with a durable extraction queue.

    Args:
        memory: the `Memory` to use (None: one from the environment, on first use).
        plugin_manager: whose ``track_event`` plugins get every event (None: `load_plugins`).
        outbox: the extraction queue's bounds (None: `OutboxSettings.from_env`).
    """

    def __init__(self, memory: Memory | None = None,
                 plugin_manager: pluggy.PluginManager | None = None,
                 outbox: OutboxSettings | None = None):
        self._memory: Memory | None = None
        self._plugin_manager = plugin_manager
        self._unsubscribe: Callable[[], None] | None = None
        self._queue: ExtractionQueue | None = None
        #: Bounds of the extraction queue (None: `OutboxSettings.from_env` when it starts).
        self.outbox_settings = outbox
        self._lock = threading.Lock()
        self._warned: set[tuple[str, str]] = set()
        self._skills: dict[str, ProceduralMemory] = {}
        #: Settings of procedural memory (the `request` hook); None = from the environment.
        self.procedures_config: ProceduresConfig | None = None
        if memory is not None:
            self._use(memory)

    # ------------------------------------------------------------------ setup

    def configure(self, memory: Memory, *,
                  plugin_manager: pluggy.PluginManager | None = None,
                  outbox: OutboxSettings | None = None) -> None:
        """Use `memory` from now on (closing the previous one after pending work).

        Its events go to the ``track_event`` hook of `plugin_manager` (None: keep the
        current manager, by default `load_plugins`'s). `outbox` sets the extraction
        queue's bounds (None: keep the current settings).
        """
        self.drain()
        if plugin_manager is not None:
            with self._lock:
                self._plugin_manager = plugin_manager
        if outbox is not None:
            self.outbox_settings = outbox
        with self._lock:
            queue, self._queue = self._queue, None
        if queue is not None:
            queue.close()
        old = self._use(memory)
        if old is not None and old is not memory:
            old.close()

    @property
    def plugin_manager(self) -> pluggy.PluginManager:
        """The manager whose plugins' ``track_event`` receive every event (loaded on first use)."""
        with self._lock:
            manager = self._plugin_manager
        if manager is None:
            manager = load_plugins()  # outside the lock: loading registers this very plugin
            with self._lock:
                if self._plugin_manager is None:
                    self._plugin_manager = manager
                manager = self._plugin_manager
        return manager

    def _use(self, memory: Memory) -> Memory | None:
        """Make `memory` current, its events forwarded to ``track_event``; returns the previous one."""
        forward = TrackEventForwarder(self.plugin_manager)
        with self._lock:
            old, self._memory = self._memory, memory
            unsubscribe, self._unsubscribe = self._unsubscribe, memory.events.subscribe(forward)
        if unsubscribe is not None:
            unsubscribe()
        return old

    @property
    def memory(self) -> Memory:
        """The `Memory` in use (created from the environment on first use)."""
        with self._lock:
            if self._memory is not None:
                return self._memory
        forward = TrackEventForwarder(self.plugin_manager)  # before the lock, as in `_use`
        with self._lock:
            if self._memory is None:
                self._memory = Memory()
                self._unsubscribe = self._memory.events.subscribe(forward)
            return self._memory

    @property
    def lock_budget_ms(self) -> int:
        """The longest a hook waits for a database lock, in milliseconds.

        `OutboxSettings.lock_budget_ms` (``$INSIKA_LOCK_BUDGET_MS``, default 50): the
        request hook, ``context_fragments`` and ``after_turn`` all use it.
        """
        settings = self.outbox_settings
        if settings is None:
            settings = self.outbox_settings = OutboxSettings.from_env()
        return settings.lock_budget_ms

    @property
    def queue(self) -> ExtractionQueue:
        """The extraction queue of the current `Memory` (started on first use).

        Starting it resumes the turns left in the outboxes of the data directory.
        """
        memory = self.memory
        with self._lock:
            queue = self._queue
            if queue is None or queue.memory is not memory:
                queue = ExtractionQueue(memory, self.outbox_settings, on_failure=self._failed)
                self._queue = queue
        queue.start()
        return queue

    @property
    def events(self) -> EventBus:
        """The event bus subscribers attach to."""
        return self.memory.events

    def _config(self, agent: AgentSpec) -> KnowledgeConfig | None:
        try:
            return load_config(agent.knowledge)
        except InsikaError as exc:
            self._degraded(_agent_id(agent), "config", str(exc))
            return None

    def _degraded(self, agent: str, feature: str, reason: str) -> None:
        key = (agent, feature + reason)
        with self._lock:
            if key in self._warned:
                return
            self._warned.add(key)
        log.warning("knowledge %s degraded for agent %s: %s", feature, agent, reason)
        try:
            self.memory.events.emit(KnowledgeDegraded(agent=agent, feature=feature, reason=reason))
        except Exception:  # even the event bus failing must not reach the engine
            log.exception("could not emit knowledge_degraded")

    def _failed(self, agent: object, feature: str, exc: BaseException) -> None:
        """Report an unexpected failure of a hook as ``knowledge_degraded`` (once per cause)."""
        reason = str(exc) if isinstance(exc, InsikaError) else f"{type(exc).__name__}: {exc}"
        if isinstance(exc, StorageBusy):  # one cause, whatever the wait: one event
            reason = f"the database {exc.path} was busy beyond the lock budget"
        self._degraded(_agent_id(agent), feature, reason[:300])

    # ------------------------------------------------------------------ hooks

    @hookimpl
    def after_turn(self, turn: Turn) -> None:
        """Write `turn` to its tenant's outbox and return; a worker extracts it. Never raises.

        The write waits at most `OutboxSettings.lock_budget_ms` for the database's lock
        (beyond it the turn waits in memory for the worker). A full outbox drops the turn,
        records it and counts it in ``knowledge_dropped``.
        """
        try:
            config = self._config(turn.agent)
            if config is None or not config.extract:
                return
            self.queue.submit(
                tenant=turn.agent.tenant, agent=turn.agent.id, knowledge=turn.agent.knowledge,
                session_id=turn.session_id, turn_id=turn.turn_id, messages=turn.messages,
            )
        except Exception as exc:  # the engine's turn is already over: never raise into it
            self._failed(getattr(turn, "agent", None), "extract", exc)

    @hookimpl
    def context_fragments(self, turn: Turn) -> list[Fragment]:
        """The ``<knowledge>`` block for the turn's last user message, at priority 77.

        Waits at most `lock_budget_ms` for the database (a lock held elsewhere); beyond
        it the turn goes on without the block. Never raises: any failure returns ``[]``
        and emits ``knowledge_degraded``.
        """
        try:
            config = self._config(turn.agent)
            if config is None or not config.retrieve:
                return []
            message = turn.last_user_text()
            if not isinstance(message, str) or not message.strip():
                return []
            budget = self.lock_budget_ms  # never the store's 30 s wait, even to migrate
            retriever = self.memory.retriever(turn.agent.tenant, busy_timeout_ms=budget)
            store = self.memory.store(turn.agent.tenant)  # the retriever's store
            with store.busy_budget(budget):
                block = retriever.block(
                    turn.agent.id, message, config.top_k, config.index, config.min_coverage
                )
            if block is None:
                return []
            return [Fragment(text=block, priority=KNOWLEDGE_PRIORITY, source="knowledge")]
        except Exception as exc:  # the engine's turn must go on without knowledge
            self._failed(getattr(turn, "agent", None), "retrieve", exc)
            return []

    @hookimpl
    def tools(self, agent: AgentSpec) -> list[Tool]:
        """``load_knowledge`` when the agent's retrieve switch is on.

        Never raises: any failure returns ``[]`` and emits ``knowledge_degraded``.
        """
        try:
            config = self._config(agent)
            if config is None or not config.retrieve:
                return []
            check_agent(agent.id)
            retriever = self.memory.retriever(agent.tenant, busy_timeout_ms=self.lock_budget_ms)
        except Exception as exc:
            self._failed(agent, "tools", exc)
            return []

        def load_knowledge(name: str) -> dict[str, Any]:
            return retriever.load_knowledge(agent.id, name)

        return [Tool(name="load_knowledge", schema=LOAD_KNOWLEDGE_SCHEMA, handler=load_knowledge)]

    @hookimpl
    def request(self, body: Any, headers: Any) -> tuple[Any, Any]:
        """Procedural memory on a model request: ``(body, stage)``; never raises.

        The tenant comes from the ``x-insika-tenant`` header (default ``default``); the
        mode from `KnowledgePlugin.procedures_config` (``$INSIKA_PROCEDURES_MODE``, else
        ``shadow``). The request waits at most `lock_budget_ms` for a lock: beyond it, it
        goes on unchanged, its stage says ``failed`` / ``busy_deferred``, and the session's
        next request captures what this one could not. A failure leaves the body
        unchanged and emits ``knowledge_degraded``.
        """
        try:
            tenant = DEFAULT_TENANT
            if isinstance(headers, Mapping):
                lowered = {str(k).lower(): v for k, v in headers.items()}
                tenant = str(lowered.get("x-insika-tenant", DEFAULT_TENANT))
            result: tuple[Any, Any] = self._procedures(tenant).handle_request(
                body, headers, lock_budget_ms=self.lock_budget_ms
            )
            return result
        except Exception as exc:  # the request goes upstream as sent
            self._degraded("-", "procedures", f"{type(exc).__name__}: {exc}"[:300])
            return body, None

    def _procedures(self, tenant: str) -> ProceduralMemory:
        from insika_knowledge.procedures import ProceduralMemory, ProceduresConfig

        check_tenant(tenant)
        memory = self.memory  # takes the lock itself: read it first
        directory, database = memory.directory, memory.database or ""
        budget = self.lock_budget_ms
        with self._lock:
            skill = self._skills.get(tenant)
            if skill is None:
                if self.procedures_config is None:
                    mode = os.environ.get("INSIKA_PROCEDURES_MODE", "shadow")
                    self.procedures_config = ProceduresConfig(mode=mode)
                skill = ProceduralMemory.open(directory, tenant, self.procedures_config, database=database,
                                              busy_timeout_ms=budget)
                skill.start_sweeper()
                self._skills[tenant] = skill
            return skill

    # ------------------------------------------------------------------ lifecycle

    def drain(self, timeout_s: float | None = None) -> bool:
        """Wait until the turns this process queued are extracted; True when none is left.

        Args:
            timeout_s: the longest wait in seconds (None: no limit).
        """
        with self._lock:
            queue = self._queue
        return True if queue is None else queue.drain(timeout_s)

    def close(self, timeout_s: float | None = None) -> bool:
        """Stop the extraction worker within `timeout_s` seconds, then close the stores.

        Turns not extracted by then stay in the outbox; the next process that starts
        with the same data directory extracts them.

        Args:
            timeout_s: the longest wait for the worker, in seconds (None: until the
                turn in progress is done; queued turns are left either way).

        Returns:
            True when the worker stopped within the time.
        """
        with self._lock:
            queue, self._queue = self._queue, None
            memory, self._memory = self._memory, None
            skills, self._skills = self._skills, {}
            unsubscribe, self._unsubscribe = self._unsubscribe, None
        stopped = True if queue is None else queue.close(timeout_s)
        if unsubscribe is not None:
            unsubscribe()
        for skill in skills.values():
            skill.close()
        if memory is not None:
            memory.close()
        return stopped


def _agent_id(agent: object) -> str:
    """The agent id for an event, whatever the host passed."""
    value = getattr(agent, "id", None)
    return value if isinstance(value, str) else repr(value)[:130]


plugin = KnowledgePlugin()
