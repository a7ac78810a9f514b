"""Server-sent events, split as they arrive without ever re-serialising them.

The relay forwards an upstream stream to its client byte for byte, but it must also read
the events (to see a ``load_knowledge`` call coming, and to assemble the answer it learns
from). `SSESplitter` cuts the incoming bytes at event boundaries (a blank line, with
``\\n``, ``\\r\\n`` or ``\\r`` line ends, as the WHATWG event-stream grammar allows) and
hands back each event's raw bytes beside its parsed ``event`` and ``data`` fields. The
parsing libraries (``httpx-sse``, ``sse-starlette``) return parsed events only, so the
raw bytes could not be forwarded exactly.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

_LINE_END: Final = re.compile(rb"\r\n|\n|\r")
_TEXT_LINE_END: Final = re.compile(r"\r\n|\n|\r")


@dataclass(frozen=True, slots=True)
class SSEEvent:
    """One event of a stream.

    Attributes:
        raw: the event's bytes exactly as received, its terminating blank line included.
        event: the ``event:`` field ('' when absent).
        data: the ``data:`` lines joined by ``\\n`` ('' when absent, e.g. a comment).
    """

    raw: bytes
    event: str = ""
    data: str = ""


def parse_event(raw: bytes) -> SSEEvent:
    """The fields of one event's bytes (undecodable bytes are replaced, never raised on)."""
    name = ""
    data: list[str] = []
    for line in _TEXT_LINE_END.split(raw.decode("utf-8", "replace")):
        if not line or line.startswith(":"):
            continue
        field, _, value = line.partition(":")
        if value.startswith(" "):
            value = value[1:]
        if field == "data":
            data.append(value)
        elif field == "event":
            name = value
    return SSEEvent(raw, name, "\n".join(data))


class SSESplitter:
    """Cuts a byte stream into `SSEEvent` values, keeping every byte.

    Feed it chunks as they arrive; it returns the events they complete (the last chunk
    with ``final=True``). The bytes of all returned events, then `flush`, concatenate to
    exactly the bytes fed.
    """

    def __init__(self) -> None:
        self._buffer = bytearray()
        self._scan = 0  # where the next unread line starts in the buffer

    def feed(self, chunk: bytes, *, final: bool = False) -> list[SSEEvent]:
        """Add `chunk`; return the events it completes, in order.

        Args:
            chunk: the next bytes of the stream.
            final: no bytes follow (a trailing ``\r`` is then a whole line end).
        """
        self._buffer += chunk
        events: list[SSEEvent] = []
        start = 0
        position = self._scan
        while True:
            match = _LINE_END.search(self._buffer, position)
            if match is None:
                break
            if match.group() == b"\r" and match.end() == len(self._buffer) and not final:
                break  # maybe the first half of "\r\n": wait for the next chunk
            blank = match.start() == position
            position = match.end()
            if blank:
                events.append(parse_event(bytes(self._buffer[start:position])))
                start = position
        if start:
            del self._buffer[:start]
        self._scan = position - start
        return events

    def flush(self) -> bytes:
        """The bytes of an unfinished event at the end of the stream (b'' when none)."""
        rest = bytes(self._buffer)
        self._buffer.clear()
        self._scan = 0
        return rest
