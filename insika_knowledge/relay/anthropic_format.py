"""The Anthropic messages wire format (``POST /v1/messages``), as the relay writes it.

Reading a response, a stream and the transcript is `insika_knowledge.wire.anthropic`'s.
Tool results go back in a ``user`` message of ``tool_result`` blocks, after the answer's
own blocks (thinking included, so a continuation keeps its signature).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from insika_knowledge.relay.formats import with_tool
from insika_knowledge.wire import anthropic
from insika_knowledge.wire.answer import Answer
from insika_knowledge.wire.anthropic import AnthropicStreamReader
from insika_knowledge.wire.messages import ToolCall

PATH: Final = "/v1/messages"


class AnthropicFormat:
    """`insika_knowledge.relay.formats.WireFormat` for Anthropic messages."""

    name = "anthropic"

    def offer(self, body: dict[str, Any], schema: Mapping[str, Any]) -> dict[str, Any]:
        """Append `schema` as an Anthropic tool (``name``, ``description``, ``input_schema``)."""
        function = schema["function"]
        tool = {
            "name": function["name"],
            "description": function["description"],
            "input_schema": function["parameters"],
        }
        return with_tool(body, tool, function["name"])

    def forbid_tools(self, body: dict[str, Any]) -> dict[str, Any]:
        """``tool_choice: {"type": "none"}``."""
        return {**body, "tool_choice": {"type": "none"}}

    def read(self, data: Any) -> Answer:
        """The message's content blocks as an `Answer` (`insika_knowledge.wire.anthropic.read_response`).

        Raises:
            ValueError: `data` is not a message with a ``content`` list.
        """
        return anthropic.read_response(data)

    def reader(self, intercept: str | None) -> AnthropicStreamReader:
        """A reader for one streamed message."""
        return AnthropicStreamReader(intercept)

    def continuation(
        self, body: dict[str, Any], answer: Answer, results: list[tuple[ToolCall, str]]
    ) -> dict[str, Any]:
        """The messages plus the answer (its other tool calls left out) and a tool_result message."""
        answered = {call.id for call, _ in results}
        kept = [p for p in answer.parts if p.get("type") != "tool_use" or p.get("id") in answered]
        reply = [
            {"type": "tool_result", "tool_use_id": call.id, "content": result} for call, result in results
        ]
        turn = [{"role": "assistant", "content": kept}, {"role": "user", "content": reply}]
        return {**body, "messages": [*body.get("messages", []), *turn]}

    def transcript(self, body: Mapping[str, Any], answer: Answer) -> list[dict[str, Any]]:
        """System, messages and answer in the normalised schema (`insika_knowledge.wire.anthropic.transcript`)."""
        return anthropic.transcript(body, answer)

    def error(self, message: str, kind: str | None = None) -> dict[str, Any]:
        """``{"type": "error", "error": {"type", "message"}}`` (type `kind`, else ``api_error``)."""
        return {"type": "error", "error": {"type": kind or "api_error", "message": message}}
