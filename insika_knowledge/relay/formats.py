"""What the relay needs of a wire format (OpenAI chat completions, Anthropic messages).

Two formats implement `WireFormat`: `insika_knowledge.relay.openai_format` and
`insika_knowledge.relay.anthropic_format`. The relay's other modules only speak through
it. Reading a body (the answer, a stream, the transcript to learn from) is
`insika_knowledge.wire`'s; what is the relay's own is writing one: offering
``load_knowledge``, switching tool calls off, continuing the conversation with tool
results, and its error bodies.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from insika_knowledge.wire.answer import Answer, StreamReader
from insika_knowledge.wire.messages import ToolCall, tool_names


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

    def error(self, message: str, kind: str | None = None) -> dict[str, Any]:
        """An error response body of this format carrying `message` (the relay's own errors);
        `kind` is the error's type (``authentication_error``, ``permission_error``...; None:
        the format's generic one).
        """
        ...


def with_tool(body: dict[str, Any], tool: Mapping[str, Any], name: str) -> dict[str, Any]:
    """`body` with `tool` appended to its ``tools`` list (a new dict; `body` is not changed).

    Args:
        body: the request body.
        tool: the tool entry in the body's wire format.
        name: the tool's name.

    Returns:
        The new body; `body` itself when ``tools`` is not a list or already names `name`
        (`insika_knowledge.wire.messages.tool_names`).
    """
    tools = body.get("tools")
    if tools is not None and not isinstance(tools, list):
        return body
    if name in tool_names(body):
        return body
    return {**body, "tools": [*(tools or []), dict(tool)]}
