"""The OpenAI chat-completions wire format (``POST /v1/chat/completions``), as the relay writes it.

Reading a response, a stream and the transcript is `insika_knowledge.wire.openai`'s. Tool
results go back as ``role: tool`` messages after an assistant message with the calls.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Final

from insika_knowledge.relay.formats import with_tool
from insika_knowledge.wire import openai
from insika_knowledge.wire.answer import Answer
from insika_knowledge.wire.messages import ToolCall
from insika_knowledge.wire.openai import OpenAIStreamReader

PATH: Final = "/v1/chat/completions"


class OpenAIFormat:
    """`insika_knowledge.relay.formats.WireFormat` for OpenAI chat completions."""

    name = "openai"

    def offer(self, body: dict[str, Any], schema: Mapping[str, Any]) -> dict[str, Any]:
        """Append `schema` (an OpenAI function tool) to ``tools`` unless its name is taken."""
        return with_tool(body, schema, schema["function"]["name"])

    def forbid_tools(self, body: dict[str, Any]) -> dict[str, Any]:
        """``tool_choice: none``."""
        return {**body, "tool_choice": "none"}

    def read(self, data: Any) -> Answer:
        """``choices[0].message`` as an `Answer` (`insika_knowledge.wire.openai.read_response`).

        Raises:
            ValueError: there is no ``choices[0].message`` object.
        """
        return openai.read_response(data)

    def reader(self, intercept: str | None) -> OpenAIStreamReader:
        """A reader for one streamed completion."""
        return OpenAIStreamReader(intercept)

    def continuation(
        self, body: dict[str, Any], answer: Answer, results: list[tuple[ToolCall, str]]
    ) -> dict[str, Any]:
        """The messages plus an assistant message with the answered calls, then one tool message each."""
        assistant: dict[str, Any] = {
            "role": "assistant",
            "content": answer.text or None,
            "tool_calls": [
                {
                    "id": call.id,
                    "type": "function",
                    "function": {
                        "name": call.name,
                        "arguments": call.arguments
                        if isinstance(call.arguments, str)
                        else json.dumps(call.arguments, ensure_ascii=False),
                    },
                }
                for call, _ in results
            ],
        }
        replies = [{"role": "tool", "tool_call_id": call.id, "content": result} for call, result in results]
        return {**body, "messages": [*body.get("messages", []), assistant, *replies]}

    def transcript(self, body: Mapping[str, Any], answer: Answer) -> list[dict[str, Any]]:
        """The request's messages and the answer's text (`insika_knowledge.wire.openai.transcript`)."""
        return openai.transcript(body, answer)

    def error(self, message: str, kind: str | None = None) -> dict[str, Any]:
        """``{"error": {"message", "type", "param", "code"}}`` (type and code `kind`, else ``relay_error``)."""
        kind = kind or "relay_error"
        return {"error": {"message": message, "type": kind, "param": None, "code": kind}}
