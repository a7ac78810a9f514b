"""What the relay needs of a wire format (OpenAI chat completions, Anthropic messages).

Two formats implement `WireFormat`: `insika_knowledge.relay.openai_format` and
`insika_knowledge.relay.anthropic_format`. The relay's other modules only speak through
it: the text to retrieve for, offering ``load_knowledge``, reading an answer (JSON or
streamed), continuing the conversation with tool results, and the transcript to learn from.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final, Protocol

from insika_knowledge.relay.sse import SSEEvent

#: `StreamReader.feed` results: the event decides nothing yet / shows an answer the client
#: should see / starts a call the relay answers itself.
WAIT: Final = "wait"
PASS: Final = "pass"
DIVERT: Final = "divert"


@dataclass(frozen=True, slots=True)
class ToolCall:
    """A tool call in an answer.

    Attributes:
        id: the call's id (OpenAI ``tool_calls[].id``, Anthropic ``tool_use.id``).
        name: the tool's name.
        arguments: the parsed JSON arguments (a dict), or the raw text when unparseable.
    """

    id: str
    name: str
    arguments: Any


@dataclass
class Answer:
    """An assistant answer, read from a JSON response or assembled from a stream.

    Attributes:
        text: the answer's text ('' when it only calls tools).
        calls: every tool call, in order.
        parts: Anthropic content blocks as the model sent them (text, thinking, tool_use),
            kept so a continuation can send them back; empty for OpenAI.
    """

    text: str = ""
    calls: list[ToolCall] = field(default_factory=list)
    parts: list[dict[str, Any]] = field(default_factory=list)

    def calls_to(self, name: str) -> list[ToolCall]:
        """The calls of the tool `name`, in order."""
        return [c for c in self.calls if c.name == name]


class StreamReader(Protocol):
    """Reads one streamed answer event by event (one reader per upstream response)."""

    @property
    def complete(self) -> bool:
        """The stream's end marker was seen (OpenAI ``[DONE]``, Anthropic ``message_stop``)."""
        ...

    def feed(self, event: SSEEvent) -> str:
        """Read one event; `WAIT`, `PASS` or `DIVERT` (see the module constants).

        Raises:
            ValueError: the event's data is not the JSON the format defines.
        """
        ...

    def answer(self) -> Answer:
        """The answer assembled from the events read so far."""
        ...


class WireFormat(Protocol):
    """One provider API as the relay sees it."""

    name: str

    def offer(self, body: dict[str, Any], schema: Mapping[str, Any]) -> dict[str, Any]:
        """`body` with the tool of OpenAI-style function `schema` appended to its tools.

        Appending keeps every tool definition before it (and its prompt-cache prefix) as it
        was. Returns `body` itself when the client already offers a tool of that name.
        """
        ...

    def forbid_tools(self, body: dict[str, Any]) -> dict[str, Any]:
        """`body` with tool calls switched off (``tool_choice`` none); tools stay defined."""
        ...

    def read(self, data: Any) -> Answer:
        """The answer in a JSON response body.

        Raises:
            ValueError: `data` is not a response of this format.
        """
        ...

    def reader(self, intercept: str | None) -> StreamReader:
        """A reader for one streamed answer; calls to `intercept` make it return `DIVERT`."""
        ...

    def continuation(
        self, body: dict[str, Any], answer: Answer, results: list[tuple[ToolCall, str]]
    ) -> dict[str, Any]:
        """`body` continued by the answer's calls in `results` and their results (JSON text)."""
        ...

    def transcript(self, body: Mapping[str, Any], answer: Answer) -> list[dict[str, Any]]:
        """The request's messages then the answer, in the normalised session schema."""
        ...

    def error(self, message: str) -> dict[str, Any]:
        """An error response body of this format carrying `message` (the relay's own errors)."""
        ...


def arguments(raw: Any) -> Any:
    """Tool-call arguments as a dict when they are JSON text or a dict, else the raw value."""
    if isinstance(raw, dict):
        return raw
    if isinstance(raw, str):
        try:
            parsed = json.loads(raw or "{}")
        except ValueError:
            return raw
        return parsed if isinstance(parsed, dict) else raw
    return raw


def text_of(content: Any) -> str:
    """The text of a message content: a string, or the ``text`` of its parts joined by blank lines."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n\n".join(
            p["text"] for p in content if isinstance(p, Mapping) and isinstance(p.get("text"), str)
        )
    return ""


def with_tool(body: dict[str, Any], tool: Mapping[str, Any], name: str, key: str) -> dict[str, Any]:
    """`body` with `tool` appended to its ``tools`` list (a new dict; `body` is not changed).

    Args:
        body: the request body.
        tool: the tool entry in the body's wire format.
        name: the tool's name.
        key: where an entry of ``tools`` names its tool (see `named_tools`).

    Returns:
        The new body; `body` itself when ``tools`` is not a list or already names `name`.
    """
    tools = body.get("tools")
    if tools is not None and not isinstance(tools, list):
        return body
    if name in named_tools(tools, key):
        return body
    return {**body, "tools": [*(tools or []), dict(tool)]}


def named_tools(tools: Any, key: str) -> set[str]:
    """The names of the tools in a ``tools`` list (`key` picks the name out of one entry)."""
    names: set[str] = set()
    for tool in tools if isinstance(tools, list) else ():
        if isinstance(tool, Mapping):
            value = tool.get(key)
            if isinstance(value, Mapping):
                value = value.get("name")
            if isinstance(value, str):
                names.add(value)
    return names
