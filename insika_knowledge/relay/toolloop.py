"""The ``load_knowledge`` loop: the relay answers the model's calls itself.

When an answer calls ``load_knowledge`` (a tool the relay added, so the client knows
nothing of it), the relay runs each call against the agent's concepts
(`insika_knowledge.retrieve.Retriever.load_knowledge`, which fires
``knowledge_retrieved``), then sends the conversation on upstream: the request, the
answer's ``load_knowledge`` calls and their results. Other tool calls in that answer are
left out of the continuation (the model asks again for what it still needs once it has
read the concepts). After `insika_knowledge.relay.runtime.MAX_ROUNDS` rounds the
continuation goes with tool calls switched off, so the client always gets an answer; an
upstream that calls ``load_knowledge`` even then (it ignores ``tool_choice``) gets no
further round: the client is answered ``502`` (`runaway_message`), never left waiting
while the relay sends the upstream one growing request after another.
"""

from __future__ import annotations

import json
from typing import Any, Final

from insika_knowledge.relay.degraded import LOAD_KNOWLEDGE, reason_of
from insika_knowledge.relay.formats import WireFormat
from insika_knowledge.relay.prepare import Prepared
from insika_knowledge.relay.runtime import Relay
from insika_knowledge.retrieve import load_knowledge_name
from insika_knowledge.wire.answer import Answer
from insika_knowledge.wire.messages import ToolCall

#: What the model reads when a call could not be answered (the reason goes to the event).
UNAVAILABLE: Final = {"error": "load_knowledge is unavailable right now: answer without it"}


def answer_calls(relay: Relay, prepared: Prepared, calls: list[ToolCall]) -> list[tuple[ToolCall, str]]:
    """Run `calls` (``load_knowledge`` calls) and return each with its JSON result.

    A failure answers the call with `UNAVAILABLE` and fails the ``load_knowledge`` stage.
    Synchronous (SQLite reads): run it in a worker thread.

    Returns:
        ``(call, result as JSON text)`` per call, in order; a result is ``{"name",
        "markdown"}`` or ``{"error"}`` (see `Retriever.load_knowledge`; arguments that do
        not fit the tool's schema: `insika_knowledge.retrieve.load_knowledge_name`).
    """
    identity = prepared.identity
    out: list[tuple[ToolCall, str]] = []
    for call in calls:
        name = load_knowledge_name(call.arguments)  # the model wrote them: an error, never a raise
        result: dict[str, Any]
        if isinstance(name, dict):
            out.append((call, json.dumps(name, ensure_ascii=False)))
            continue
        try:
            retriever = relay.memory.retriever(identity.tenant)
            result = retriever.load_knowledge(identity.agent or "", name)
            if "error" not in result:
                prepared.loaded = [*(prepared.loaded or []), str(result.get("name", name))]
        except Exception as exc:
            prepared.degraded.add(LOAD_KNOWLEDGE, reason_of(exc))
            result = dict(UNAVAILABLE)
        out.append((call, json.dumps(result, ensure_ascii=False)))
    return out


def runaway_message(rounds: int) -> str:
    """What the client is told when the upstream called ``load_knowledge`` after `rounds`
    rounds, the last with tool calls switched off.
    """
    return (f"the upstream called load_knowledge again after {rounds} round(s), the last with tool calls "
            "switched off (it does not honour tool_choice): the relay stopped instead of asking it again; "
            "set the agent's retrieve tools off for this upstream, or use one that honours tool_choice")


def next_body(
    wire: WireFormat,
    body: dict[str, Any],
    answer: Answer,
    results: list[tuple[ToolCall, str]],
    rounds: int,
    max_rounds: int,
) -> dict[str, Any]:
    """The continuation after round `rounds` (1-based); tool calls off from `max_rounds` on."""
    continued = wire.continuation(body, answer, results)
    return wire.forbid_tools(continued) if rounds >= max_rounds else continued
