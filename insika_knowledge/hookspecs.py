"""The hooks a host engine calls (pluggy specifications, project name ``insika``).

The hook arguments (`AgentSpec`, `Turn`) and results (`Fragment`, `Tool`) are plain
dataclasses defined here, so a host or a plugin can use them without the store.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pluggy

from insika_knowledge.events import Event
from insika_knowledge.wire.messages import last_user_text

if TYPE_CHECKING:
    import click

PROJECT = "insika"
hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)


@dataclass(frozen=True)
class Fragment:
    """A piece of prompt context: text, its priority (higher survives longer), pinned or not."""

    text: str
    priority: int
    source: str
    pinned: bool = False


@dataclass(frozen=True)
class Tool:
    """A tool offered to the model: its OpenAI-style function schema and handler.

    The handler takes the call's arguments as keyword arguments and returns a
    JSON-serialisable result.
    """

    name: str
    schema: dict[str, Any]
    handler: Callable[..., Any]


@dataclass(frozen=True)
class AgentSpec:
    """The agent a hook call concerns.

    Attributes:
        id: the agent id (``[A-Za-z0-9][A-Za-z0-9_.-]{0,127}``; checked by the plugin, not here).
        tenant: the tenant whose database holds the agent's concepts (``default``, the
            store's ``DEFAULT_TENANT``, when the host has no tenants).
        knowledge: the agent's ``knowledge:`` block as pack data, None when absent
            (the feature is off).
    """

    id: str
    tenant: str = "default"
    knowledge: Mapping[str, Any] | None = None


@dataclass(frozen=True)
class Turn:
    """One finished (or starting) turn of a conversation.

    Attributes:
        agent: the agent answering.
        session_id: the conversation's id.
        turn_id: the turn's id within the session.
        messages: the turn's transcript slice, normalised message dicts
            (``{"role": ..., "content": ...}``, optionally ``tool_calls``, ``tool_call_id``, ``name``).
        time_utc: when the turn happened, ``YYYY-MM-DDTHH:MM:SSZ``.
    """

    agent: AgentSpec
    session_id: str
    turn_id: str
    messages: list[dict[str, Any]] = field(default_factory=list)
    time_utc: str = ""

    def last_user_text(self) -> str:
        """The text of the last user message ('' when there is none).

        Read as every reader of a message reads it (`insika_knowledge.wire.messages`),
        and tolerant of what a host may hand over: no message list, items that are not
        message objects, and content that is neither text nor a list of text parts
        are all read as "no text".
        """
        return last_user_text(self.messages)


@hookspec
def after_turn(turn: Turn) -> None:
    """The turn is over (the customer has the answer): learn from it off the critical path.

    Must return at once and never raise into the engine.
    """


@hookspec
def context_fragments(turn: Turn) -> list[Fragment]:
    """Prompt fragments for the turn about to run (the ``<knowledge>`` block at 77)."""
    raise NotImplementedError  # a specification: pluggy calls the implementations, never this


@hookspec
def tools(agent: AgentSpec) -> list[Tool]:
    """Tools to offer the agent's model (``load_knowledge`` when retrieve is on)."""
    raise NotImplementedError  # a specification: pluggy calls the implementations, never this


@hookspec(firstresult=True)
def request(body: Any, headers: Any) -> Any:
    """A model request passing through (engine or relay): capture it, maybe recall into it.

    Returns ``(body, stage)``: the body to send upstream (rewritten only when a recalled
    procedure was injected) and the ``skill_knowledge_graph`` stage (None when the skill
    is off for this request). Never raises; a failure leaves the body unchanged.
    """


@hookspec
def track_event(event: Event) -> None:
    """An event happened: every ``knowledge_*`` event (`insika_knowledge.events`) comes here.

    `event` is a frozen dataclass with a wire ``name`` (``knowledge_learned``,
    ``knowledge_conflict``, ``knowledge_retrieved``, ...) and ``payload()`` (ids, names,
    types and counts, never a message body). Called synchronously, on the thread that
    emitted the event (often the extraction worker), after the write is committed: keep
    it quick and hand slow work to a queue. An implementation that raises is logged and
    skipped; it never undoes the write, and the other implementations still get the event.
    """


@hookspec
def register_commands(cli: click.Group) -> None:
    """Register additional command-line commands, e.g. ``insika-knowledge mycommand ...``."""
