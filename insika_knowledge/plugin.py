"""The plugin a host engine loads from the ``insika.plugins`` entry point (``knowledge``).

`plugin` is a module-level `KnowledgePlugin`. It reads its data directory from
``$INSIKA_KNOWLEDGE_HOME`` (or the user data folder) the first time it is used;
a host may call `KnowledgePlugin.configure` before that. Either way, the `Memory`'s
learning worker starts then (`Memory.start_learning`): turns an earlier process left
queued (even after a crash) are learned without waiting for a new turn. ``after_turn``
hands the turn to its tenant (`Memory.submit`: the durable outbox) and returns.

Every hook stays within its budget (``$INSIKA_LOCK_BUDGET_MS``, 50 ms) even when the
database is not there: a tenant's store opens on a thread of its own (the first hooks for
a new tenant go on without memory until it is open), and a PostgreSQL server that is down
turns memory off at once (a circuit breaker, `insika_knowledge.store.breaker`) until it
answers again. A turn that cannot be written within the budget is deferred: kept in the
spill journal and written as soon as it can be (``knowledge_deferred``).

No hook ever raises into the engine: whatever goes wrong (an invalid block, an
unusable data directory, a bad tenant, a malformed turn) makes the hook return
nothing and emits ``knowledge_degraded`` once per cause.

Every event the plugin's `Memory` emits also goes to the ``track_event`` hook of a plugin
manager: by default the process's (`insika_knowledge.plugins.default_manager`: every
installed ``insika.plugins`` entry point), so an analytics or OpenTelemetry plugin needs
only implement ``track_event``; a host may hand its own manager to `KnowledgePlugin.configure`.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, Final

import pluggy

from insika_knowledge.config import KnowledgeConfig, load_config
from insika_knowledge.errors import InsikaError
from insika_knowledge.events import EventBus
from insika_knowledge.hookspecs import AgentSpec, Fragment, Tool, Turn, hookimpl
from insika_knowledge.ids import DEFAULT_TENANT, check_agent, check_tenant
from insika_knowledge.memory import MESSAGE_ROLES, Memory
from insika_knowledge.plugins import ENTRY_POINTS as ENTRY_POINTS
from insika_knowledge.plugins import load_plugins as load_plugins
from insika_knowledge.queue import ExtractionQueue, OutboxSettings
from insika_knowledge.retrieve import LOAD_KNOWLEDGE_SCHEMA, load_knowledge_name
from insika_knowledge.wire.headers import TENANT_HEADER
from insika_knowledge.wire.messages import arguments

if TYPE_CHECKING:
    from insika_knowledge.procedures import ProceduralMemory, ProceduresConfig

#: Where the block sits among prompt fragments: below curated skills (80), above memory (75).
KNOWLEDGE_PRIORITY: Final = 77


class KnowledgePlugin:
    """Hook implementations over one `Memory` (its tenants, its learning queue).

    Args:
        memory: the `Memory` to use (None: one from the environment, on first use).
        plugin_manager: whose ``track_event`` plugins get every event (None: the
            process's `insika_knowledge.plugins.default_manager`).
        outbox: the learning queue's bounds (None: `OutboxSettings.from_env`).
    """

    def __init__(self, memory: Memory | None = None,
                 plugin_manager: pluggy.PluginManager | None = None,
                 outbox: OutboxSettings | None = None):
        self._memory: Memory | None = None
        self._plugin_manager = plugin_manager
        #: Bounds of the learning queue (None: `OutboxSettings.from_env` when it starts).
        self.outbox_settings = outbox
        self._lock = threading.Lock()
        #: Settings of procedural memory (the `request` hook); None = from the environment.
        self.procedures_config: ProceduresConfig | None = None
        #: Agents told that their turns have roles no reader knows (once each).
        self._unread_told: set[str] = set()
        if memory is not None:
            self._use(memory)

    # ------------------------------------------------------------------ setup

    def configure(self, memory: Memory, *,
                  plugin_manager: pluggy.PluginManager | None = None,
                  outbox: OutboxSettings | None = None) -> None:
        """Use `memory` from now on (closing the previous one after pending work).

        Its events go to the ``track_event`` hook of `plugin_manager` (None: keep the
        current manager, by default the process's). `outbox` sets the learning queue's
        bounds (None: keep the current settings).
        """
        self.drain()
        if plugin_manager is not None:
            with self._lock:
                self._plugin_manager = plugin_manager
        if outbox is not None:
            self.outbox_settings = outbox
        old = self._use(memory)
        if old is not None and old is not memory:
            old.close()

    def prepare(self, tenants: Iterable[str]) -> list[str]:
        """Open (and migrate) the stores of `tenants` now, on this thread, so the first hooks
        of each find it open instead of going on without memory while it opens.

        An engine calls it at start-up with the tenants of its agents. Never raises.

        Returns:
            The tenants that could not be opened (each reported as ``knowledge_degraded``).
        """
        failed = []
        for name in tenants:
            try:
                self.memory.tenant(name)
            except Exception as exc:
                self._failed("-", "open", exc)
                failed.append(name)
        return failed

    @property
    def plugin_manager(self) -> pluggy.PluginManager:
        """The manager whose plugins' ``track_event`` receive every event (loaded on first use)."""
        with self._lock:
            manager = self._plugin_manager
        return manager if manager is not None else self.memory.plugin_manager

    def _use(self, memory: Memory) -> Memory | None:
        """Make `memory` current, its events forwarded to ``track_event``; returns the previous one."""
        with self._lock:
            old, self._memory = self._memory, memory
            manager = self._plugin_manager
        if manager is not None:
            memory.forward_events_to(manager)
            if old is not None and old is not memory:
                old.forward_events_to(None)  # the host's manager hears only the memory in use
        if self.outbox_settings is not None and memory.outbox_settings is None:
            memory.outbox_settings = self.outbox_settings
        try:  # resume what earlier processes left, without waiting for a new turn
            memory.start_learning()
        except Exception as exc:  # e.g. an invalid $INSIKA_OUTBOX_MAX_PENDING: the hooks report it
            self._failed("-", "extract", exc)
        return old

    @property
    def memory(self) -> Memory:
        """The `Memory` in use (created from the environment on first use)."""
        with self._lock:
            if self._memory is not None:
                return self._memory
            created = Memory(plugin_manager=self._plugin_manager, outbox=self.outbox_settings)
        self._use(created)
        return created

    @property
    def lock_budget_ms(self) -> int:
        """The longest a hook waits for a database lock, in milliseconds.

        `OutboxSettings.lock_budget_ms` (``$INSIKA_LOCK_BUDGET_MS``, default 50): the
        request hook, ``context_fragments`` and ``after_turn`` all use it.
        """
        return self.memory.lock_budget_ms

    @property
    def queue(self) -> ExtractionQueue:
        """The learning queue of the current `Memory` (started on first use).

        Starting it resumes the turns left in the outboxes the memory reaches.
        """
        queue = self.memory.learning_queue()
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
        try:
            self.memory.degraded(agent, feature, reason)
        except Exception:  # an unusable environment: nothing to report through
            pass

    def _failed(self, agent: object, feature: str, exc: BaseException) -> None:
        """Report an unexpected failure of a hook as ``knowledge_degraded`` (once per cause)."""
        try:
            self.memory.degraded(_agent_id(agent), feature, exc)
        except Exception:
            pass

    # ------------------------------------------------------------------ hooks

    @hookimpl
    def after_turn(self, turn: Turn) -> None:
        """Write `turn` to its tenant's outbox and return; a worker extracts it. Never raises.

        The write waits at most `OutboxSettings.lock_budget_ms` for the database's lock or
        for the tenant's store to open; beyond it (or with the database down) the turn is
        deferred: kept in the spill journal, written as soon as it can be, and reported
        (``knowledge_deferred``: ``deferred``, then ``written`` or ``failed``, each with a
        log line). A full outbox drops the turn, records it and counts it in
        ``knowledge_dropped``.
        """
        try:
            config = self._config(turn.agent)
            if config is None or not config.extract:
                return
            memory = self.memory
            budget = memory.lock_budget_ms
            memory.submit(turn, lock_budget_ms=budget, open_budget_ms=budget)
            unread = _unread_roles(turn.messages)
            agent_id = _agent_id(turn.agent)
            if unread and agent_id not in self._unread_told:  # learned all the same; said once per agent
                self._unread_told.add(agent_id)
                self._degraded(agent_id, "extract",
                               f"messages with role {', '.join(unread)} are read as no one's words (a rule "
                               f"only they state is held in quarantine); the roles read are "
                               f"{', '.join(sorted(MESSAGE_ROLES))}")
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
            budget = self.lock_budget_ms  # never the store's 30 s wait, even to open or migrate
            tenant = self.memory.tenant_within(turn.agent.tenant, budget)
            with tenant.store.busy_budget(budget):
                block = tenant.retriever.block(
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
            retriever = self.memory.tenant_within(agent.tenant, self.lock_budget_ms).retriever
        except Exception as exc:
            self._failed(agent, "tools", exc)
            return []

        def load_knowledge(*args: Any, **kwargs: Any) -> dict[str, Any]:
            """The tool's handler: the model's arguments as keywords (``name``), or as one
            object (a dict, or the JSON text of one, as OpenAI's ``arguments`` come), or the
            name alone; any other call answers ``{"error"}``, as does a failure (degraded once).
            """
            if len(args) > 1 or (args and kwargs):
                return {"error": "load_knowledge takes one argument, name: a concept's name as text"}
            given = arguments(args[0]) if args and (isinstance(args[0], Mapping) or _json_object(args[0])) \
                else {"name": args[0]} if args else kwargs
            name = load_knowledge_name(given)
            if isinstance(name, dict):
                return name
            try:
                return retriever.load_knowledge(agent.id, name)
            except Exception as exc:  # the model answers without it; the engine's turn goes on
                self._failed(agent, "load_knowledge", exc)
                return {"error": "load_knowledge is unavailable right now: answer without it"}

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
                tenant = str(lowered.get(TENANT_HEADER, DEFAULT_TENANT))
            result: tuple[Any, Any] = self._procedures(tenant).handle_request(
                body, headers, lock_budget_ms=self.lock_budget_ms
            )
            return result
        except Exception as exc:  # the request goes upstream as sent
            self._failed("-", "procedures", exc)
            return body, None

    def _procedures(self, tenant: str) -> ProceduralMemory:
        from insika_knowledge.procedures import ProceduresConfig

        check_tenant(tenant)
        with self._lock:
            if self.procedures_config is None:
                self.procedures_config = ProceduresConfig(mode=os.environ.get("INSIKA_PROCEDURES_MODE", "shadow"))
            config = self.procedures_config
        memory = self.memory
        return memory.tenant_within(tenant, memory.lock_budget_ms).procedures(config)

    # ------------------------------------------------------------------ lifecycle

    def drain(self, timeout_s: float | None = None) -> bool:
        """Wait until the turns this process queued are learned; True when none is left.

        Args:
            timeout_s: the longest wait in seconds (None: no limit).
        """
        with self._lock:
            memory = self._memory
        return True if memory is None else memory.drain(timeout_s)

    def close(self, timeout_s: float | None = None) -> bool:
        """Stop the learning worker within `timeout_s` seconds, then close the stores.

        Turns not learned by then stay in the outbox; the next process that starts
        with the same data directory learns them.

        Args:
            timeout_s: the longest wait for the worker, in seconds (None: until the
                turn in progress is done; queued turns are left either way).

        Returns:
            True when the worker stopped within the time.
        """
        with self._lock:
            memory, self._memory = self._memory, None
            manager = self._plugin_manager
        if memory is None:
            return True
        stopped = memory.close(timeout_s)
        if manager is not None:
            memory.forward_events_to(None)  # the host's manager hears nothing after close
        return stopped


def _agent_id(agent: object) -> str:
    """The agent id for an event, whatever the host passed."""
    value = getattr(agent, "id", None)
    return value if isinstance(value, str) else repr(value)[:130]


plugin = KnowledgePlugin()


def _unread_roles(messages: object) -> list[str]:
    """The roles of `messages` no reader of a transcript knows (`MESSAGE_ROLES`), quoted
    (at most 80 characters each), sorted; a role that is no text is one of them.
    """
    if isinstance(messages, (str, bytes)) or not isinstance(messages, (list, tuple)):
        return []
    roles = [m.get("role") for m in messages if isinstance(m, Mapping)]
    return sorted({repr(r)[:80] for r in roles if not (isinstance(r, str) and r in MESSAGE_ROLES)})


def _json_object(value: object) -> bool:
    """True for text that reads as a JSON object's (a name, a slug, never starts with ``{``)."""
    return isinstance(value, str) and value.lstrip().startswith("{")
