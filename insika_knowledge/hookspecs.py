"""The hooks a host engine calls (pluggy specifications, project name ``insika``)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pluggy

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


@hookspec
def after_turn(turn: Any) -> None:
    """The turn is over (the customer has the answer): learn from it off the critical path.

    Must return at once and never raise into the engine.
    """


@hookspec
def context_fragments(turn: Any) -> list[Fragment]:
    """Prompt fragments for the turn about to run (the ``<knowledge>`` block at 77)."""


@hookspec
def tools(agent: Any) -> list[Tool]:
    """Tools to offer the agent's model (``load_knowledge`` when retrieve is on)."""


@hookspec(firstresult=True)
def request(body: Any, headers: Any) -> Any:
    """A model request passing through (engine or relay): capture it, maybe recall into it.

    Returns ``(body, stage)``: the body to send upstream (rewritten only when a recalled
    procedure was injected) and the ``skill_knowledge_graph`` stage (None when the skill
    is off for this request). Never raises; a failure leaves the body unchanged.
    """


@hookspec
def register_commands(cli: click.Group) -> None:
    """Register additional command-line commands, e.g. ``insika-knowledge mycommand ...``."""
