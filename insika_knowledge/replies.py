"""A cap on the size of a reply the package reads from a model or an embeddings endpoint.

An HTTP client reads a reply whole before its SDK parses it; an endpoint that answers
without end (a misconfigured proxy, a model that never stops, a hostile server) would
grow the process by as much as it sends and be reported, minutes later, as a timeout.
`capped_transport` asks for replies as they are (``Accept-Encoding: identity``) and stops
reading at a limit, counted on the bytes the SDK would get: a compressed reply (``gzip``,
``deflate``, stacked) is inflated here, chunk by chunk, so a few KiB that inflate to GiB
stop at the limit too; another encoding (``br``, ``zstd``) is refused. A reply may also be
given a time in all (an SDK's timeout bounds each wait for a byte only, so a reply that
trickles in a byte at a time lasts as long as it likes): past it, `ReplyTooSlow`. Past the
limit it raises `ReplyTooLarge`, which names the endpoint and the limit (the SDK wraps it as a
connection error: `refused` finds it); a ``Content-Length`` over the limit of a reply
sent as it is is refused before a byte of its body is read.
"""

from __future__ import annotations

import functools
import importlib
import time
import zlib
from collections.abc import Iterator
from types import ModuleType
from typing import Any, Final

#: The largest reply of a chat model read, in bytes: an extraction or merge answer is a few
#: KiB (a 4,096-token answer is about 16 KiB of JSON).
MODEL_REPLY_MAX_BYTES: Final = 8 * 1024 * 1024
#: The largest reply of an embeddings endpoint read, in bytes: a batch of 64 vectors of 4,096
#: floats as JSON numbers is about 6 MiB.
EMBEDDINGS_REPLY_MAX_BYTES: Final = 64 * 1024 * 1024
#: The content encodings inflated here (any other is refused).
INFLATED: Final = frozenset({"gzip", "x-gzip", "deflate"})


class ReplyRefused(Exception):
    """An endpoint's reply was not read to its end (`capped_transport`): the message says why."""


class ReplyTooLarge(ReplyRefused):
    """An endpoint's reply is over the cap (`capped_transport`).

    Attributes:
        limit: the cap, in bytes.
    """

    def __init__(self, url: str, limit: int, size: int | None = None) -> None:
        said = f"is {size:,} bytes" if size is not None else "runs"
        super().__init__(f"the reply of {url} {said} over the {limit:,}-byte limit; nothing more was read")
        self.limit = limit


class ReplyTooSlow(ReplyRefused):
    """An endpoint's reply took longer than the time allowed (`capped_transport`'s `deadline_s`).

    Attributes:
        deadline_s: the time allowed, in seconds.
    """

    def __init__(self, url: str, deadline_s: float) -> None:
        super().__init__(f"the reply of {url} took over {deadline_s:g} s in all; nothing more was read")
        self.deadline_s = deadline_s


def capped_transport(sdk_client: type, limit: int, deadline_s: float | None = None) -> Any:
    """A transport for an SDK's HTTP client whose replies are read up to `limit` bytes.

    The OpenAI and Anthropic SDKs build on ``httpx`` (``httpx2`` from openai 3): the
    transport is that library's ``HTTPTransport``, found from the SDK's client class.

    Args:
        sdk_client: the SDK's default HTTP client class (``openai.DefaultHttpxClient``).
        limit: the most bytes of one reply's body read, once inflated (a positive number).
        deadline_s: the most seconds a reply may take in all, from the request sent to its
            last byte (None: no such bound; an SDK's timeout bounds each wait for a byte,
            so a reply that trickles in a byte at a time would take as long as it likes).

    Returns:
        The transport (pass it as ``transport=`` to `sdk_client`); a reply over `limit`
        raises `ReplyTooLarge` as its body is read, or as soon as its ``Content-Length``
        says so; one still arriving after `deadline_s` raises `ReplyTooSlow`; a reply in an
        encoding not in `INFLATED`, or that does not inflate, raises `ReplyRefused`.

    Raises:
        ValueError: `limit` is not positive, or `sdk_client` is no ``httpx``-style client.
    """
    if limit <= 0:
        raise ValueError(f"a reply's limit must be a positive number of bytes, not {limit}")
    http = next((importlib.import_module(c.__module__.partition(".")[0]) for c in sdk_client.__mro__
                 if c.__module__.partition(".")[0] in ("httpx", "httpx2")), None)
    if http is None:
        raise ValueError(f"{sdk_client.__qualname__} is not an httpx client")
    return _transport_class(http)(limit, deadline_s)


class _Inflater:
    """One content encoding undone, its output held to `limit` bytes in all."""

    def __init__(self, encoding: str, limit: int, url: str) -> None:
        self.encoding, self.limit, self.url = encoding, limit, url
        self.raw = encoding == "deflate"  # a zlib stream, or (as some servers send) raw deflate
        self.decoder = zlib.decompressobj(zlib.MAX_WBITS | (16 if encoding != "deflate" else 0))
        self.started = False
        self.out = 0

    def feed(self, data: bytes) -> bytes:
        try:
            inflated = self.decoder.decompress(data, self.limit - self.out + 1)
        except zlib.error:
            if not (self.raw and not self.started):
                raise ReplyRefused(f"the reply of {self.url} is not valid {self.encoding}") from None
            self.raw = False
            self.decoder = zlib.decompressobj(-zlib.MAX_WBITS)
            return self.feed(data)
        self.started = True
        return self._counted(inflated, more=bool(self.decoder.unconsumed_tail))

    def flush(self) -> bytes:
        try:
            return self._counted(self.decoder.flush(), more=False)
        except zlib.error:
            raise ReplyRefused(f"the reply of {self.url} is not valid {self.encoding}") from None

    def _counted(self, inflated: bytes, *, more: bool) -> bytes:
        self.out += len(inflated)
        if more or self.out > self.limit:
            raise ReplyTooLarge(self.url, self.limit)
        return inflated


@functools.cache
def _transport_class(http: ModuleType) -> type:
    """The capped transport class of one HTTP library (`http`: ``httpx`` or ``httpx2``)."""

    class CappedStream(http.SyncByteStream):  # type: ignore[name-defined,misc]
        def __init__(self, stream: Any, limit: int, url: str, encodings: list[str], due: float | None,
                     deadline_s: float | None) -> None:
            self._stream, self._limit, self._url = stream, limit, url
            self._due, self._deadline_s = due, deadline_s
            # applied in the order listed: undone last first
            self._inflaters = [_Inflater(e, limit, url) for e in reversed(encodings)]

        def __iter__(self) -> Iterator[bytes]:
            seen = 0
            for chunk in self._stream:
                if self._due is not None and time.monotonic() > self._due:
                    raise ReplyTooSlow(self._url, self._deadline_s or 0.0)
                for inflater in self._inflaters:
                    chunk = inflater.feed(chunk)
                seen += len(chunk)
                if seen > self._limit:
                    raise ReplyTooLarge(self._url, self._limit)
                yield chunk
            for at, inflater in enumerate(self._inflaters):
                tail = inflater.flush()
                for later in self._inflaters[at + 1:]:
                    tail = later.feed(tail)
                seen += len(tail)
                if seen > self._limit:
                    raise ReplyTooLarge(self._url, self._limit)
                if tail:
                    yield tail

        def close(self) -> None:
            self._stream.close()

    class CappedTransport(http.HTTPTransport):  # type: ignore[name-defined,misc]
        def __init__(self, limit: int, deadline_s: float | None) -> None:
            super().__init__()
            self._limit, self._deadline_s = limit, deadline_s

        def handle_request(self, request: Any) -> Any:
            request.headers["Accept-Encoding"] = "identity"  # counted as it arrives
            due = None if self._deadline_s is None else time.monotonic() + self._deadline_s
            response = super().handle_request(request)
            url = str(request.url.copy_with(query=None))
            encodings = [e.strip().lower() for e in response.headers.get("content-encoding", "").split(",")
                         if e.strip() and e.strip().lower() != "identity"]
            unknown = [e for e in encodings if e not in INFLATED]
            length = response.headers.get("content-length", "")
            if unknown or (not encodings and length.isdigit() and int(length) > self._limit):
                response.close()
                if unknown:
                    raise ReplyRefused(f"the reply of {url} is in {', '.join(unknown)}, which is not read here")
                raise ReplyTooLarge(url, self._limit, int(length))
            if encodings:  # inflated here, held to the limit: the client reads it as it is
                del response.headers["content-encoding"]
            response.stream = CappedStream(response.stream, self._limit, url, encodings, due, self._deadline_s)
            return response

    return CappedTransport


def refused(exc: BaseException) -> ReplyRefused | None:
    """The `ReplyRefused` in `exc`'s chain of causes and contexts (an SDK wraps it), or None."""
    seen: list[BaseException] = []
    node: BaseException | None = exc
    while node is not None and node not in seen:
        if isinstance(node, ReplyRefused):
            return node
        seen.append(node)
        node = node.__cause__ or node.__context__
    return None
