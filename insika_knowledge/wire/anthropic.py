"""Reading the Anthropic messages format (``POST /v1/messages``).

A JSON answer is a message whose ``content`` is a list of blocks (``text``, ``tool_use``,
``thinking``...). A streamed one is ``message_start``, then per block
``content_block_start`` / ``content_block_delta`` (``text_delta``, ``input_json_delta``,
``thinking_delta``, ``signature_delta``) / ``content_block_stop``, then ``message_delta``
and ``message_stop``. Tool results come in a ``user`` message of ``tool_result`` blocks.
The top-level ``system`` (text or text blocks) is the conversation's system message.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from insika_knowledge.wire.answer import DIVERT, PASS, WAIT, Answer
from insika_knowledge.wire.messages import arguments, text_of, tool_calls
from insika_knowledge.wire.sse import SSEEvent


@dataclass
class AnthropicStreamReader:
    """Assembles a streamed message's content blocks from its events.

    Attributes:
        intercept: the tool whose ``tool_use`` block makes `feed` return `DIVERT`.
        complete: ``message_stop`` was read.
    """

    intercept: str | None
    complete: bool = False
    _blocks: dict[int, dict[str, Any]] = field(default_factory=dict)
    _json: dict[int, list[str]] = field(default_factory=dict)

    def feed(self, event: SSEEvent) -> str:
        """Read one event (see `insika_knowledge.wire.answer.StreamReader.feed`).

        Raises:
            ValueError: the data is not a JSON object.
        """
        if not event.data:
            return WAIT
        data = json.loads(event.data)
        if not isinstance(data, dict):
            raise ValueError("a messages stream event must be a JSON object")
        kind = data.get("type", event.event)
        if kind == "content_block_start":
            return self._start(data)
        if kind == "content_block_delta":
            self._delta(data)
            return WAIT
        if kind == "message_stop":
            self.complete = True
            return WAIT
        if kind in ("message_delta", "error"):
            return PASS
        return WAIT  # message_start, ping, content_block_stop

    def _start(self, data: Mapping[str, Any]) -> str:
        block = data.get("content_block")
        index = data.get("index")
        if not isinstance(block, Mapping) or not isinstance(index, int):
            return PASS
        self._blocks[index] = dict(block)
        if block.get("type") == "tool_use" and block.get("name") == self.intercept:
            return DIVERT
        return PASS

    def _delta(self, data: Mapping[str, Any]) -> None:
        index = data.get("index")
        delta = data.get("delta")
        if not isinstance(index, int) or not isinstance(delta, Mapping) or index not in self._blocks:
            return
        block = self._blocks[index]
        kind = delta.get("type")
        if kind == "text_delta":
            block["text"] = block.get("text", "") + str(delta.get("text", ""))
        elif kind == "input_json_delta":
            self._json.setdefault(index, []).append(str(delta.get("partial_json", "")))
        elif kind == "thinking_delta":
            block["thinking"] = block.get("thinking", "") + str(delta.get("thinking", ""))
        elif kind == "signature_delta":
            block["signature"] = block.get("signature", "") + str(delta.get("signature", ""))

    def answer(self) -> Answer:
        """The blocks read so far, as an `Answer`."""
        parts = []
        for index, block in sorted(self._blocks.items()):
            if block.get("type") == "tool_use" and index in self._json:
                block = {**block, "input": arguments("".join(self._json[index]))}
            parts.append(block)
        return _answer(parts)


def _answer(parts: list[dict[str, Any]]) -> Answer:
    # The text blocks of one answer are pieces of one text (citations cut a sentence into
    # several blocks): joined with nothing, unlike the parts of a message (`text_of`).
    text = "".join(str(p.get("text", "")) for p in parts if p.get("type") == "text")
    return Answer(text, tool_calls({"content": parts}), parts)


def read_response(data: Any) -> Answer:
    """The answer of a JSON message: its content blocks' text, tool calls and the blocks.

    Raises:
        ValueError: `data` is not a message with a ``content`` list.
    """
    content = data.get("content") if isinstance(data, Mapping) else None
    if not isinstance(content, list):
        raise ValueError("not a message: no content list")
    return _answer([dict(p) for p in content if isinstance(p, Mapping)])


def transcript(body: Mapping[str, Any], answer: Answer) -> list[dict[str, Any]]:
    """System, messages and answer in the normalised session schema.

    ``tool_use`` blocks become the message's OpenAI-style ``tool_calls`` (arguments as JSON
    text), ``tool_result`` blocks ``tool`` messages, and every content its text (`text_of`).
    """
    out: list[dict[str, Any]] = []
    system = text_of(body.get("system"))
    if system:
        out.append({"role": "system", "content": system})
    for message in body.get("messages") or ():
        if isinstance(message, Mapping):
            out.extend(_normalised(message))
    out.append({"role": "assistant", "content": answer.text})
    return out


def _normalised(message: Mapping[str, Any]) -> list[dict[str, Any]]:
    role = str(message.get("role", "user"))
    content = message.get("content")
    if not isinstance(content, list):
        return [{"role": role, "content": text_of(content)}]
    out: list[dict[str, Any]] = []
    for part in content:
        if isinstance(part, Mapping) and part.get("type") == "tool_result":
            call_id = str(part.get("tool_use_id", ""))
            out.append({"role": "tool", "tool_call_id": call_id, "content": text_of(part.get("content"))})
    calls = [
        {"id": call.id, "type": "function", "function": {"name": call.name, "arguments": json.dumps(call.arguments)}}
        for call in tool_calls(message)
    ]
    text = text_of(content)
    if text or calls or not out:
        message_out: dict[str, Any] = {"role": role, "content": text}
        if calls:
            message_out["tool_calls"] = calls
        # An assistant's calls come before nothing; a user's tool results answer earlier calls.
        out.insert(0 if role == "assistant" else len(out), message_out)
    return out
