"""Reading the OpenAI chat-completions format (``POST /v1/chat/completions``).

A JSON answer is ``choices[0].message`` (``content``, ``tool_calls``); a streamed one is a
series of ``data: {chunk}`` events whose ``choices[0].delta`` carries the content and the
tool calls piece by piece (a call's ``id`` and ``function.name`` come in its first piece),
ended by ``data: [DONE]``. The request's messages already are the normalised session
schema (role, content, tool_calls, tool_call_id, name).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from insika_knowledge.wire.answer import DIVERT, PASS, WAIT, Answer
from insika_knowledge.wire.messages import ToolCall, arguments, message_text, tool_calls
from insika_knowledge.wire.sse import SSEEvent


@dataclass
class _Call:
    id: str = ""
    name: str = ""
    arguments: str = ""


@dataclass
class OpenAIStreamReader:
    """Assembles a streamed chat completion (choice 0) from its chunks.

    Attributes:
        intercept: the tool whose call makes `feed` return `DIVERT` (None: no tool).
        complete: ``data: [DONE]`` was read.
    """

    intercept: str | None
    complete: bool = False
    _text: list[str] = field(default_factory=list)
    _calls: dict[int, _Call] = field(default_factory=dict)

    def feed(self, event: SSEEvent) -> str:
        """Read one chunk event (see `insika_knowledge.wire.answer.StreamReader.feed`).

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
            ToolCall(c.id, c.name, arguments(c.arguments), position)
            for position, (_, c) in enumerate(sorted(self._calls.items()))
        ]
        return Answer("".join(self._text), calls)


def _stronger(a: str, b: str) -> str:
    order = (WAIT, PASS, DIVERT)
    return a if order.index(a) >= order.index(b) else b


def read_response(data: Any) -> Answer:
    """The answer of a JSON chat completion: ``choices[0].message``'s text and tool calls.

    Raises:
        ValueError: there is no ``choices[0].message`` object.
    """
    try:
        message = data["choices"][0]["message"]
    except (KeyError, IndexError, TypeError):
        raise ValueError("not a chat completion: no choices[0].message") from None
    if not isinstance(message, Mapping):
        raise ValueError("not a chat completion: choices[0].message is not an object")
    return Answer(message_text(message), tool_calls(message))


def transcript(body: Mapping[str, Any], answer: Answer) -> list[dict[str, Any]]:
    """The request's messages (already the normalised schema), then the answer's text."""
    messages = [dict(m) for m in body.get("messages") or () if isinstance(m, Mapping)]
    return [*messages, {"role": "assistant", "content": answer.text}]
