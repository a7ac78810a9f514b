"""The request side: what memory does to a request body before it goes upstream.

In order, each stage failing open (`insika_knowledge.relay.degraded`):

1. identity: ``x-insika-memory: off`` stops here (the body goes on without its
   ``session_id``), and so does a tenant the relay does not serve
   (`insika_knowledge.relay.access`: nothing is opened or created for it); an agent
   that is missing or not in the agents file has knowledge off (the response's
   ``x-insika-memory`` says which). The client's text that looks like memory's own
   blocks is then made inert (`insika_knowledge.relay.quoting`).
2. procedures: the tenant's `ProceduralMemory.handle_request` on the client's own body
   (capture, recall, and in prod the procedure block); a ``failed`` stage fails it.
3. knowledge, for an agent of the agents file with ``retrieve`` on: the ``<knowledge>``
   block for the last user message, placed by the procedure block's rules
   (`insika_knowledge.relay.placement`), and ``load_knowledge`` appended to the tools
   (on every request of the agent, so the tool list, which prompt caches include, never
   changes between turns).

This is synchronous (SQLite reads and writes): the app runs it in a worker thread, or on
the event loop without ever waiting for a lock (``without_waiting``; see
`insika_knowledge.relay.scheduling`). When the skill cannot change a body (its mode is
``shadow`` or ``off``), stage 2 is left for after stage 3 (``defer_procedures``, then
`run_deferred_procedures`): the app sends the request upstream first, and waits for the
stage before it answers the client (whose response carries the stage's headers).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from contextlib import nullcontext
from dataclasses import dataclass
from typing import Any, Final

from insika_knowledge.errors import StorageBusy
from insika_knowledge.procedures import BUSY_DEFERRED, FAILED, OFF, SHADOW, Stage
from insika_knowledge.relay.access import UNKNOWN_TENANT
from insika_knowledge.relay.agents import AgentKnowledge
from insika_knowledge.relay.degraded import PROCEDURES, RETRIEVE, STAGES, Degraded, reason_of
from insika_knowledge.relay.formats import WireFormat
from insika_knowledge.relay.identity import Identity, identify, without_identity
from insika_knowledge.relay.placement import place
from insika_knowledge.relay.quoting import inert
from insika_knowledge.relay.runtime import Relay
from insika_knowledge.retrieve import LOAD_KNOWLEDGE_SCHEMA
from insika_knowledge.wire.headers import (
    KNOWLEDGE_HEADER,
    LEARNING_HEADER,
    MEMORY_HEADER,
    SKILL_MODES_HEADER,
    TRACE_HEADER,
    wants_trace,
)
from insika_knowledge.wire.messages import last_user_text, tool_names
from insika_knowledge.wire.placement import Placement

TOOL_NAME: Final[str] = LOAD_KNOWLEDGE_SCHEMA["function"]["name"]
#: Why memory is off for a request (`Prepared.off`), beside `insika_knowledge.relay.access`'s.
BY_REQUEST: Final = "by request"
NO_KNOWLEDGE: Final = "agent has no knowledge block"
#: The name of the relay's own trace stage (``x-ace-trace``).
KNOWLEDGE_STAGE: Final = "knowledge"


@dataclass
class Prepared:
    """A request made ready for the upstream.

    Attributes:
        client_body: the body as the client sent it (None when it is not a JSON object).
        body: the body to send upstream (`client_body` itself when nothing changed).
        identity: who the request is for.
        agent: the agent's knowledge settings when knowledge is on for this request.
        intercept: ``load_knowledge`` when the relay offered it (and answers its calls).
        stage: the procedures stage (None when the skill is off or did not run).
        placement: where the knowledge block went (None when there was none).
        degraded: the failed stages.
        procedures_deferred: the procedures stage is left for `run_deferred_procedures`.
        busy: the knowledge stage met a lock held elsewhere while it could not wait
            (`prepare`'s `without_waiting`); nothing of it is kept: prepare the request again.
        off: why knowledge is off for this request (``by request``, ``unknown tenant``,
            ``no agent``, ``unknown agent``, ``agent has no knowledge block``), else None.
        learns: finished turns of this request go to learning (the relay learns, and the
            agent's ``extract`` is on).
        learning: what became of the finished turn (``queued``, ``deferred``, ``dropped``,
            ``failed``), once handed off; None before or when there is none.
        learning_ms: how long the hand-off held the answer back, in milliseconds (the
            outbox write, and the thread handoff when it had one); None without one.
        trace: the request asked for its trace stages (``x-ace-trace: full``).
        concepts: the concepts the ``<knowledge>`` block listed (for the trace).
        loaded: the concepts ``load_knowledge`` calls loaded (for the trace).
    """

    client_body: dict[str, Any] | None
    body: dict[str, Any] | None
    identity: Identity
    degraded: Degraded
    agent: AgentKnowledge | None = None
    intercept: str | None = None
    stage: Stage | None = None
    placement: Placement | None = None
    procedures_deferred: bool = False
    busy: bool = False
    off: str | None = None
    learns: bool = False
    learning: str | None = None
    learning_ms: float | None = None
    trace: bool = False
    concepts: int = 0
    loaded: list[str] | None = None

    @property
    def changed(self) -> bool:
        """The body to send is not the client's (so it must be serialised again)."""
        return self.body is not self.client_body

    def memory_state(self) -> str:
        """``x-insika-memory``: ``off: <why>``, else ``degraded: <stages>`` when a stage
        failed, else ``on`` (``on: recall only`` when finished turns are not learned).
        """
        if self.off is not None:
            return f"off: {self.off}"
        if self.degraded.stages:
            order = sorted(self.degraded.stages, key=lambda s: STAGES.index(s) if s in STAGES else len(STAGES))
            return "degraded: " + ", ".join(order)
        return "on" if self.learns or self.agent is None else "on: recall only"

    def headers(self) -> dict[str, str]:
        """The relay's response headers: the memory's state, the skill's, the knowledge
        placement, degraded stages, the learning hand-off, and the trace when asked for.
        """
        out: dict[str, str] = {MEMORY_HEADER: self.memory_state()}
        if self.stage is not None:
            out[SKILL_MODES_HEADER] = self.stage.mode_entry()
            out.update(self.stage.rewrite_headers())
        if self.placement is not None:
            out[KNOWLEDGE_HEADER] = (
                "injected" if self.placement.placed else f"skipped: {self.placement.reason}"
            )
        out.update(self.degraded.headers())
        if self.learning is not None:
            out[LEARNING_HEADER] = self.learning
        if self.trace:
            out[TRACE_HEADER] = json.dumps(self.trace_stages(), separators=(",", ":"))
        return out

    def trace_stages(self) -> list[dict[str, Any]]:
        """The request's trace: the ``skill_knowledge_graph`` stage (when the skill ran),
        then the relay's ``knowledge`` stage (memory state, block, concepts, loads, learning).
        """
        stages: list[dict[str, Any]] = [] if self.stage is None else [self.stage.to_dict()]
        knowledge: dict[str, Any] = {"name": KNOWLEDGE_STAGE, "memory": self.memory_state()}
        if self.placement is not None:
            knowledge["block"] = "injected" if self.placement.placed else f"skipped: {self.placement.reason}"
            knowledge["concepts"] = self.concepts
        if self.intercept is not None:
            knowledge["load_knowledge"] = list(self.loaded or [])
        if self.learning is not None:
            knowledge["learning"] = self.learning
        if self.learning_ms is not None:
            knowledge["learning_ms"] = round(self.learning_ms, 3)
        if self.degraded.stages:
            knowledge["degraded"] = list(self.degraded.stages)
        stages.append(knowledge)
        return stages


def prepare(
    relay: Relay,
    wire: WireFormat,
    body: dict[str, Any] | None,
    headers: Mapping[str, str],
    degraded: Degraded,
    *,
    defer_procedures: bool = False,
    without_waiting: bool = False,
) -> Prepared:
    """Run the memory stages on one request (see the module doc). Never raises.

    Args:
        relay: the relay's state.
        wire: the request's wire format.
        body: the parsed JSON body, None when it is not a JSON object (nothing runs).
        headers: the request headers with lower-case names.
        degraded: where failed stages are recorded.
        defer_procedures: leave the procedures stage for `run_deferred_procedures` (only
            when `skill_keeps_bodies`: the stage then never changes the body).
        without_waiting: the knowledge stage never waits for a lock (for the event loop):
            when one is held elsewhere it gives up and says so (`Prepared.busy`).
    """
    identity = identify(headers, body)
    prepared = Prepared(body, body, identity, degraded, trace=wants_trace(headers))
    if body is None:
        return prepared
    prepared.body = without_identity(body)
    if not identity.memory:
        prepared.off = BY_REQUEST
        return prepared
    if not relay.access.knows_tenant(identity.tenant):
        prepared.off = UNKNOWN_TENANT
        return prepared
    # a customer's text that looks like memory's own blocks is made inert before memory adds
    # them (`relay.quoting`): a forged tag or procedure header would pass for the relay's
    quoted = inert(body)
    if quoted is not body:
        body = quoted
        prepared.body = without_identity(body)
    if defer_procedures:
        prepared.procedures_deferred = True
    else:
        _procedures(relay, prepared, body, headers)
    prepared.off = relay.access.agent_off(headers)
    agent = relay.agents.get(identity.agent) if identity.agent is not None and prepared.off is None else None
    if agent is None:
        prepared.off = prepared.off or NO_KNOWLEDGE
        return prepared
    prepared.agent = agent
    prepared.learns = relay.learns and agent.config.extract
    if agent.config.retrieve:
        _knowledge(relay, wire, prepared, agent, without_waiting)
    return prepared


def skill_keeps_bodies(relay: Relay) -> bool:
    """True when the procedures skill never changes a request body (mode ``shadow`` or ``off``;
    a request's ``x-ace-skills`` header can only switch it off).
    """
    return relay.procedures.parsed_mode.name in (OFF, SHADOW)


def run_deferred_procedures(
    relay: Relay, prepared: Prepared, headers: Mapping[str, str], *, without_waiting: bool = False,
) -> bool:
    """The procedures stage `prepare` left for later (`Prepared.procedures_deferred`), on the
    client's body; it records the stage and failures on `prepared`. Never raises.

    Args:
        relay: the relay's state.
        prepared: the prepared request.
        headers: the request headers with lower-case names.
        without_waiting: never wait for a lock (for the event loop): when the tenant's
            procedural memory is not open yet, or a lock (the sweeper's, another writer's) is
            held, do nothing and return False; the stage is still to run.

    Returns:
        True when the stage is over (or there was none).
    """
    if not prepared.procedures_deferred or prepared.client_body is None:
        return True
    if without_waiting and relay.opened_skill(prepared.identity.tenant) is None:
        return False
    if not _procedures(relay, prepared, prepared.client_body, headers, apply=False,
                       lock_budget_ms=0 if without_waiting else None):
        return False
    prepared.procedures_deferred = False
    return True


def _procedures(relay: Relay, prepared: Prepared, body: dict[str, Any], headers: Mapping[str, str],
                *, apply: bool = True, lock_budget_ms: int | None = None) -> bool:
    """The procedures stage; False (nothing recorded) when a lock stayed busy beyond `lock_budget_ms`."""
    try:
        skill = relay.skill(prepared.identity.tenant)
        if lock_budget_ms is None:
            rewritten, stage = skill.handle_request(body, headers)
        else:
            rewritten, stage = skill.handle_request(body, headers, lock_budget_ms=lock_budget_ms)
            if stage is not None and stage.action == FAILED and stage.reason == BUSY_DEFERRED:
                return False  # nothing was captured: the stage runs again, waiting
    except Exception as exc:  # handle_request never raises; opening the tenant's store may
        prepared.degraded.add(PROCEDURES, reason_of(exc))
        return True
    prepared.stage = stage
    if stage is not None and stage.action == FAILED:
        prepared.degraded.add(PROCEDURES, stage.reason or "failed")
        return True
    if apply and rewritten is not body:  # deferred: the body has gone upstream already
        prepared.body = without_identity(rewritten)
    return True


def _knowledge(relay: Relay, wire: WireFormat, prepared: Prepared, agent: AgentKnowledge,
               without_waiting: bool = False) -> None:
    assert prepared.body is not None and prepared.client_body is not None
    identity, config = prepared.identity, agent.config
    try:
        body = prepared.body
        text = last_user_text(prepared.client_body.get("messages"))
        loop = prepared.client_body.get("n", 1) in (1, None)  # several choices: no tool loop
        if text.strip():
            retriever = relay.memory.retriever(identity.tenant)
            # the instruction names load_knowledge only when the model has it: the relay adds
            # it, or the client's tools already name it (not when `tools` is malformed)
            tool = loop and (wire.offer(body, LOAD_KNOWLEDGE_SCHEMA) is not body or TOOL_NAME in tool_names(body))
            with retriever.store.busy_budget(0) if without_waiting else nullcontext():
                block = retriever.block(identity.agent or "", text, config.top_k, config.index, config.min_coverage,
                                        tool=tool)
            if block is not None:
                prepared.concepts = block.count("<concept ")
                placement = place(body, block, wire.name)
                body = placement.body
                prepared.placement = placement
        if loop:
            offered = wire.offer(body, LOAD_KNOWLEDGE_SCHEMA)
            if offered is not body:
                prepared.intercept = TOOL_NAME
            body = offered
    except Exception as exc:
        prepared.placement = None
        prepared.intercept = None
        if without_waiting and isinstance(exc, StorageBusy):  # (an index snapshot not saved is no failure)
            prepared.busy = True
            return
        prepared.degraded.add(RETRIEVE, reason_of(exc))
        return
    prepared.body = body

