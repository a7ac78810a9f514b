"""A cap on the size of a reply the package reads from a model or an embeddings endpoint.

An HTTP client reads a reply whole before its SDK parses it; an endpoint that answers
without end (a misconfigured proxy, a model that never stops, a hostile server) would
grow the process by as much as it sends and be reported, minutes later, as a timeout.
`capped_transport` stops reading at a limit and raises `ReplyTooLarge`, which names the
endpoint and the limit (the SDK wraps it as a connection error: `too_large` finds it); a
``Content-Length`` over the limit is refused before a byte of the body is read. The limit
is on the bytes as they arrive, before any decompression.
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Iterator
from types import ModuleType
from typing import Any, Final

#: The largest reply of a chat model read, in bytes: an extraction or merge answer is a few
#: KiB (a 4,096-token answer is about 16 KiB of JSON).
MODEL_REPLY_MAX_BYTES: Final = 8 * 1024 * 1024
#: The largest reply of an embeddings endpoint read, in bytes: a batch of 64 vectors of 4,096
#: floats as JSON numbers is about 6 MiB.
EMBEDDINGS_REPLY_MAX_BYTES: Final = 64 * 1024 * 1024


class ReplyTooLarge(Exception):
    """An endpoint's reply is over the cap (`capped_transport`).

    Attributes:
        limit: the cap, in bytes.
    """

    def __init__(self, url: str, limit: int, size: int | None = None) -> None:
        said = f"{size:,} bytes" if size is not None else "more"
        super().__init__(f"the reply of {url} is {said}, over the {limit:,}-byte limit; nothing more was read")
        self.limit = limit


def capped_transport(sdk_client: type, limit: int) -> Any:
    """A transport for an SDK's HTTP client whose replies are read up to `limit` bytes.

    The OpenAI and Anthropic SDKs build on ``httpx`` (``httpx2`` from openai 3): the
    transport is that library's ``HTTPTransport``, found from the SDK's client class.

    Args:
        sdk_client: the SDK's default HTTP client class (``openai.DefaultHttpxClient``).
        limit: the most bytes of one reply's body read (a positive number).

    Returns:
        The transport (pass it as ``transport=`` to `sdk_client`); a reply over `limit`
        raises `ReplyTooLarge` as its body is read, or as soon as its ``Content-Length`` says so.

    Raises:
        ValueError: `limit` is not positive, or `sdk_client` is no ``httpx``-style client.
    """
    if limit <= 0:
        raise ValueError(f"a reply's limit must be a positive number of bytes, not {limit}")
    http = next((importlib.import_module(c.__module__.partition(".")[0]) for c in sdk_client.__mro__
                 if c.__module__.partition(".")[0] in ("httpx", "httpx2")), None)
    if http is None:
        raise ValueError(f"{sdk_client.__qualname__} is not an httpx client")
    return _transport_class(http)(limit)


@functools.cache
def _transport_class(http: ModuleType) -> type:
    """The capped transport class of one HTTP library (`http`: ``httpx`` or ``httpx2``)."""

    class CappedStream(http.SyncByteStream):  # type: ignore[name-defined,misc]
        def __init__(self, stream: Any, limit: int, url: str) -> None:
            self._stream, self._limit, self._url = stream, limit, url

        def __iter__(self) -> Iterator[bytes]:
            seen = 0
            for chunk in self._stream:
                seen += len(chunk)
                if seen > self._limit:
                    raise ReplyTooLarge(self._url, self._limit)
                yield chunk

        def close(self) -> None:
            self._stream.close()

    class CappedTransport(http.HTTPTransport):  # type: ignore[name-defined,misc]
        def __init__(self, limit: int) -> None:
            super().__init__()
            self._limit = limit

        def handle_request(self, request: Any) -> Any:
            response = super().handle_request(request)
            url = str(request.url.copy_with(query=None))
            length = response.headers.get("content-length", "")
            if length.isdigit() and int(length) > self._limit:
                response.close()
                raise ReplyTooLarge(url, self._limit, int(length))
            response.stream = CappedStream(response.stream, self._limit, url)
            return response

    return CappedTransport


def too_large(exc: BaseException) -> ReplyTooLarge | None:
    """The `ReplyTooLarge` in `exc`'s chain of causes and contexts (an SDK wraps it), or None."""
    seen: list[BaseException] = []
    node: BaseException | None = exc
    while node is not None and node not in seen:
        if isinstance(node, ReplyTooLarge):
            return node
        seen.append(node)
        node = node.__cause__ or node.__context__
    return None
