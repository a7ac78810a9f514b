"""The OpenAI chat-completions wire format (``POST /v1/chat/completions``).

A JSON answer is ``choices[0].message`` (``content``, ``tool_calls``); a streamed one is a
series of ``data: {chunk}`` events whose ``choices[0].delta`` carries the content and the
tool calls piece by piece (a call's ``id`` and ``function.name`` come in its first piece),
ended by ``data: [DONE]``. Tool results go back as ``role: tool`` messages.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from insika_knowledge.relay.sse import SSEEvent
from insika_knowledge.relay.wire import DIVERT, PASS, WAIT, Answer, ToolCall, arguments, with_tool

PATH: Final = "/v1/chat/completions"


@dataclass
class _Call:
    id: str = ""
    name: str = ""
    arguments: str = ""


@dataclass
class OpenAIStreamReader:
    """Assembles a streamed chat completion (choice 0) from its chunks."""

    intercept: str | None
    complete: bool = False
    _text: list[str] = field(default_factory=list)
    _calls: dict[int, _Call] = field(default_factory=dict)

    def feed(self, event: SSEEvent) -> str:
        """Read one chunk event (see `insika_knowledge.relay.wire.StreamReader.feed`).

        Raises:
            ValueError: the data is neither ``[DONE]`` nor a JSON object.
        """
        data = event.data
        if not data:
            return WAIT
        if data.strip() == "[DONE]":
            self.complete = True
            return WAIT
        chunk = json.loads(data)
        if not isinstance(chunk, dict):
            raise ValueError("a chat completion chunk must be a JSON object")
        if "error" in chunk:
            return PASS
        verdict = WAIT
        for choice in chunk.get("choices") or ():
            if not isinstance(choice, Mapping) or choice.get("index", 0) != 0:
                continue
            delta = choice.get("delta")
            if isinstance(delta, Mapping):
                verdict = _stronger(verdict, self._delta(delta))
            if choice.get("finish_reason"):
                verdict = _stronger(verdict, PASS)
        return verdict

    def _delta(self, delta: Mapping[str, Any]) -> str:
        verdict = WAIT
        content = delta.get("content")
        if isinstance(content, str) and content:
            self._text.append(content)
            verdict = PASS
        if delta.get("refusal"):
            verdict = PASS
        for piece in delta.get("tool_calls") or ():
            if not isinstance(piece, Mapping):
                continue
            index = piece.get("index", 0)
            call = self._calls.setdefault(index if isinstance(index, int) else 0, _Call())
            function = piece.get("function")
            if not isinstance(function, Mapping):
                function = {}
            if isinstance(piece.get("id"), str):
                call.id = piece["id"]
            name = function.get("name")
            if isinstance(name, str) and name:
                call.name += name
                verdict = _stronger(verdict, DIVERT if call.name == self.intercept else PASS)
            if isinstance(function.get("arguments"), str):
                call.arguments += function["arguments"]
        return verdict

    def answer(self) -> Answer:
        """The text and calls read so far."""
        calls = [
            ToolCall(c.id, c.name, arguments(c.arguments))
            for _, c in sorted(self._calls.items())
        ]
        return Answer("".join(self._text), calls)


def _stronger(a: str, b: str) -> str:
    order = (WAIT, PASS, DIVERT)
    return a if order.index(a) >= order.index(b) else b


class OpenAIFormat:
    """`insika_knowledge.relay.wire.WireFormat` for OpenAI chat completions."""

    name = "openai"

    def offer(self, body: dict[str, Any], schema: Mapping[str, Any]) -> dict[str, Any]:
        """Append `schema` (an OpenAI function tool) to ``tools`` unless its name is taken."""
        return with_tool(body, schema, schema["function"]["name"], "function")

    def forbid_tools(self, body: dict[str, Any]) -> dict[str, Any]:
        """``tool_choice: none``."""
        return {**body, "tool_choice": "none"}

    def read(self, data: Any) -> Answer:
        """``choices[0].message`` as an `Answer`.

        Raises:
            ValueError: there is no ``choices[0].message`` object.
        """
        try:
            message = data["choices"][0]["message"]
        except (KeyError, IndexError, TypeError):
            raise ValueError("not a chat completion: no choices[0].message") from None
        if not isinstance(message, Mapping):
            raise ValueError("not a chat completion: choices[0].message is not an object")
        content = message.get("content")
        calls = []
        for call in message.get("tool_calls") or ():
            if not isinstance(call, Mapping) or not isinstance(call.get("function"), Mapping):
                continue
            function = call["function"]
            calls.append(
                ToolCall(str(call.get("id", "")), str(function.get("name", "")), arguments(function.get("arguments")))
            )
        return Answer(content if isinstance(content, str) else "", calls)

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
        """The request's messages (already the normalised schema) and the answer's text."""
        messages = [dict(m) for m in body.get("messages") or () if isinstance(m, Mapping)]
        return [*messages, {"role": "assistant", "content": answer.text}]

    def error(self, message: str) -> dict[str, Any]:
        """``{"error": {"message", "type", "code"}}``."""
        return {"error": {"message": message, "type": "relay_error", "param": None, "code": "relay_error"}}
