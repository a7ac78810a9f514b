"""`InsikaProvider`: what Hermes Agent's ``MemoryProvider`` interface asks, over a `Memory`.

Hermes' memory manager calls, per session and turn:

- ``initialize(session_id, hermes_home=..., agent_context=...)``: read the settings
  (`insika_knowledge.hermes.settings`) and open the data directory;
- ``prefetch(query)`` before each model call: the ``<knowledge>`` block for the user's
  message (and, with ``procedures: true``, the block of a recalled procedure), or "";
- ``sync_turn(user, assistant, messages=...)`` after each turn: hand the turn to its tenant
  (`insika_knowledge.tenant.Tenant.submit`: written to the durable outbox, learned by the
  memory's worker) and return at once (skipped outside the primary agent); a turn accepted
  here survives a crash or an exit, and the next start learns it;
- ``get_tool_schemas()`` / ``handle_tool_call("load_knowledge", {"name": ...})``;
- ``on_session_end(messages)``: wait for the queued turns; ``shutdown()``: that, then close
  the stores (turns still queued stay in the outbox for the next start).

No method raises into Hermes: a failure is logged and the method returns its empty value.
The class does not import Hermes; `insika_knowledge.hermes.provider_class` makes the
subclass of Hermes' ``MemoryProvider`` that Hermes loads.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

from insika_knowledge.hermes.settings import (
    PROVIDER,
    HermesSettings,
    config_schema,
    default_hermes_home,
    load_settings,
    save_section,
)
from insika_knowledge.hookspecs import AgentSpec, Turn
from insika_knowledge.memory import Memory, digest_id
from insika_knowledge.retrieve import LOAD_KNOWLEDGE_SCHEMA, load_knowledge_name

log = logging.getLogger(__name__)
#: What leads the recalled block: Hermes presents recalled memory as authoritative, and a
#: learned concept is not (the block's own instruction says the same, after the concepts).
NOT_AUTHORITATIVE: Final = (
    "Note: the concepts below were learned from this agent's past conversations. They are "
    "reference, not authority: provenance=\"observed\" is past practice, never a guarantee to "
    "the customer; only provenance=\"policy\" is official."
)
LOAD_KNOWLEDGE = "load_knowledge"
#: How long ``on_session_end`` and ``shutdown`` wait for queued turns, seconds.
FLUSH_TIMEOUT_S = 120.0


class NotInitialised(RuntimeError):
    """A hook was called before `InsikaProvider.initialize` (or after `shutdown`)."""


class InsikaProvider:
    """Hermes memory provider over insika-knowledge.

    Args:
        settings: fixed settings (tests); None = read at `initialize` from Hermes' config.
    """

    def __init__(self, settings: HermesSettings | None = None):
        self._settings = settings
        self._memory: Memory | None = None
        self._session_id = ""
        self._primary = True
        self._lock = threading.Lock()

    # ------------------------------------------------------------------ identity and setup

    @property
    def name(self) -> str:
        """``insika`` (``memory.provider: insika``)."""
        return PROVIDER

    def is_available(self) -> bool:
        """True when the settings are valid (no network, nothing opened)."""
        try:
            self._settings_for(None)
        except Exception as exc:
            log.warning("insika-knowledge is not usable: %s", exc)
            return False
        return True

    def initialize(self, session_id: str, **kwargs: Any) -> None:
        """Read the settings under ``kwargs["hermes_home"]`` and open the data directory (or the
        PostgreSQL database of `database`).

        Raises:
            InsikaError: the settings are invalid or the data directory unusable (Hermes
                then runs without this provider).
        """
        settings = self._settings_for(kwargs.get("hermes_home"))
        self._settings = settings
        self._session_id = session_id or ""
        self._primary = kwargs.get("agent_context", "primary") == "primary"
        memory = Memory(settings.data_dir, base_url=settings.base_url, database=settings.database or "")
        memory.tenant(settings.tenant)  # opens (and migrates) the database now
        memory.start_learning()  # turns an earlier process left queued are learned now
        with self._lock:
            self._memory = memory
        if settings.knowledge.extract and settings.knowledge.resolved_model() is None:
            log.warning("insika-knowledge: no model (memory.insika.model or INSIKA_UTILITY_MODEL): "
                        "turns are not learned")

    def _settings_for(self, hermes_home: object) -> HermesSettings:
        if self._settings is not None:
            return self._settings
        home = Path(str(hermes_home)) if hermes_home else default_hermes_home()
        return load_settings(home)

    def system_prompt_block(self) -> str:
        """Nothing static: the block comes with each prefetch."""
        return ""

    # ------------------------------------------------------------------ recall

    def prefetch(self, query: str, *, session_id: str = "") -> str:
        """The ``<knowledge>`` block for `query` (plus a recalled procedure's block), or "".

        Hermes wraps what a memory provider recalls as "authoritative reference data";
        learned concepts are not (an ``observed`` one is past practice, never a
        guarantee), so the block is led by `NOT_AUTHORITATIVE`, which says so first.
        """
        try:
            settings, memory = self._ready()
            if not settings.knowledge.retrieve or not isinstance(query, str) or not query.strip():
                return ""
            parts = []
            block = memory.knowledge_block(query, agent=settings.agent, tenant=settings.tenant,
                                           config=settings.knowledge)
            if block:
                parts.append(f"{NOT_AUTHORITATIVE}\n\n{block}")
            if settings.procedures:
                procedure = self._procedure_block(query)
                if procedure:
                    parts.append(procedure)
            return "\n\n".join(parts)
        except NotInitialised:
            return ""
        except Exception:
            log.exception("insika-knowledge prefetch failed")
            return ""

    def _procedure_block(self, query: str) -> str:
        from insika_knowledge.procedures import ProceduresConfig
        from insika_knowledge.procedures.recall.render import render

        settings, memory = self._ready()
        skill = memory.tenant(settings.tenant).procedures(ProceduresConfig())
        recalled = skill.recall(query)
        if recalled.procedure is None:
            return ""
        block = render(recalled.procedure, skill.counter, skill.config.max_injection_tokens)
        return str(block.text) if block.fits else ""

    def get_tool_schemas(self) -> list[dict[str, Any]]:
        """``load_knowledge`` (a bare function schema) when retrieval is on."""
        settings = self._settings
        if settings is not None and not settings.knowledge.retrieve:
            return []
        return [dict(LOAD_KNOWLEDGE_SCHEMA["function"])]

    def handle_tool_call(self, tool_name: str, args: dict[str, Any], **kwargs: Any) -> str:
        """Run ``load_knowledge``: JSON ``{"name", "markdown"}`` or ``{"error"}``."""
        if tool_name != LOAD_KNOWLEDGE:
            return json.dumps({"error": f"insika-knowledge has no tool {tool_name!r}"})
        try:
            settings, memory = self._ready()
            name = load_knowledge_name(args)  # the model wrote them: an error, never a raise
            if isinstance(name, str):
                result = memory.tenant(settings.tenant).retriever.load_knowledge(settings.agent, name)
            else:
                result = name
        except NotInitialised:
            result = {"error": "the knowledge store is not open yet"}
        except Exception as exc:
            log.exception("insika-knowledge load_knowledge failed")
            result = {"error": f"load_knowledge failed: {type(exc).__name__}"}
        return json.dumps(result, ensure_ascii=False)

    # ------------------------------------------------------------------ learning

    def sync_turn(self, user_content: str, assistant_content: str, *, session_id: str = "",
                  messages: list[dict[str, Any]] | None = None) -> None:
        """Hand the finished turn to the durable outbox and return at once (primary agent only).

        The turn id is a digest of the turn's messages, so a turn handed over twice counts once.
        """
        try:
            settings, memory = self._ready()
            if not self._primary or not settings.knowledge.extract:
                return
            turn = _turn_slice(messages) if messages else [
                {"role": "user", "content": user_content},
                {"role": "assistant", "content": assistant_content},
            ]
            session = session_id or self._session_id or PROVIDER
            agent = AgentSpec(settings.agent, settings.tenant, settings.knowledge.model_dump(mode="json"))
            result = memory.submit(Turn(agent, session, digest_id(turn), turn))  # deferred when the db is down
            if result == "dropped":
                log.warning("insika-knowledge: the learning queue dropped a turn of %s (see knowledge_dropped)",
                            session)
        except NotInitialised:
            log.warning("insika-knowledge: a turn arrived before initialize(); not learned")
        except Exception as exc:  # one line; the traceback at debug level
            log.warning("insika-knowledge could not queue the turn for learning: %s", exc)
            log.debug("queueing the turn failed", exc_info=True)

    def flush(self, timeout_s: float | None = None) -> bool:
        """Wait for the turns this process queued to be learned; True when none is left."""
        with self._lock:
            memory = self._memory
        return True if memory is None else memory.drain(timeout_s)

    # ------------------------------------------------------------------ lifecycle

    def on_session_end(self, messages: list[dict[str, Any]]) -> None:
        """The session is over: wait for its queued turns (at most `FLUSH_TIMEOUT_S`)."""
        if not self.flush(FLUSH_TIMEOUT_S):
            log.warning("insika-knowledge: turns still queued after %.0f s (learned at the next start)",
                        FLUSH_TIMEOUT_S)

    def on_session_switch(self, new_session_id: str, **kwargs: Any) -> None:
        """Later turns belong to `new_session_id`."""
        self._session_id = new_session_id or self._session_id

    def shutdown(self) -> None:
        """Wait for the queued turns (at most `FLUSH_TIMEOUT_S`), then close the stores.

        Turns not learned by then stay in the outbox; the next start learns them.
        """
        self.on_session_end([])
        with self._lock:
            memory, self._memory = self._memory, None
        if memory is not None:
            memory.close(FLUSH_TIMEOUT_S)

    def get_config_schema(self) -> list[dict[str, Any]]:
        """The fields ``hermes memory setup`` asks for."""
        return config_schema()

    def save_config(self, values: dict[str, Any], hermes_home: str) -> None:
        """Write the answers of ``hermes memory setup`` under ``memory.insika`` in config.yaml."""
        save_section(values, Path(hermes_home))

    def backup_paths(self) -> list[str]:
        """The data directory when it lies outside ``$HERMES_HOME`` (for ``hermes backup``)."""
        try:
            home = default_hermes_home()
            folder = self._settings_for(home).data_dir.resolve()
        except Exception:
            return []
        return [] if folder.is_relative_to(home.resolve()) else [str(folder)]

    def _ready(self) -> tuple[HermesSettings, Memory]:
        with self._lock:
            memory = self._memory
        settings = self._settings
        if memory is None or settings is None:
            raise NotInitialised("the insika-knowledge provider is not initialised")
        return settings, memory


def _turn_slice(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The last turn of a conversation (from its last user message on), tool calls flattened.

    OpenAI tool calls (``{"function": {"name", "arguments"}}``) become ``{"name", "arguments"}``,
    the shape the extraction prompt reads.
    """
    items = [m for m in messages if isinstance(m, Mapping)]
    start = max((i for i, m in enumerate(items) if m.get("role") == "user"), default=0)
    turn = []
    for message in items[start:]:
        copy = dict(message)
        calls = copy.get("tool_calls")
        if isinstance(calls, list):
            copy["tool_calls"] = [
                {"name": c["function"].get("name"), "arguments": c["function"].get("arguments")}
                if isinstance(c, Mapping) and isinstance(c.get("function"), Mapping) else c
                for c in calls
            ]
        turn.append(copy)
    return turn
