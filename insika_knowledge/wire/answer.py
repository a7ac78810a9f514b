"""A model's answer, read from a JSON response or assembled from a stream, in either format.

`insika_knowledge.wire.openai` and `insika_knowledge.wire.anthropic` read a response into
an `Answer` and offer a `StreamReader` that assembles one event by event. Each event read
says what it shows (`WAIT`, `PASS`, `DIVERT`), so a caller that forwards the stream can
hold back a call it answers itself.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Final, Protocol

from insika_knowledge.wire.messages import ToolCall
from insika_knowledge.wire.sse import SSEEvent

#: `StreamReader.feed` results: the event decides nothing yet / shows an answer the client
#: should see / starts a call to the reader's `intercept` tool.
WAIT: Final = "wait"
PASS: Final = "pass"
DIVERT: Final = "divert"


@dataclass
class Answer:
    """An assistant answer.

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
    """Reads one streamed answer event by event (one reader per response)."""

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
