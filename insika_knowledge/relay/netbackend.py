"""The relay's sockets to the upstream: `httpcore` over plain asyncio streams.

httpcore picks AnyIO to talk to sockets when it runs under asyncio, and AnyIO's
per-read and per-write cancel scopes cost about a third of a millisecond per relayed
request on loopback (measured with ``bench --relay``). `AsyncioBackend` is the same
`httpcore.AsyncNetworkBackend` contract (TCP only) on `asyncio.open_connection` streams, with
``TCP_NODELAY``, TLS (`start_tls`), timeouts (`asyncio.timeout`), and httpcore's own
exceptions (``ConnectError``, ``ReadTimeout``...), which httpx maps to its own.
"""

from __future__ import annotations

import asyncio
import socket
import ssl
from collections.abc import Iterable
from typing import Any

import httpcore

#: A ``setsockopt`` argument tuple (httpcore's ``SOCKET_OPTION``).
SocketOption = tuple[int, int, int] | tuple[int, int, bytes | bytearray] | tuple[int, int, None, int]
#: Bytes the writer may buffer before `AsyncioStream.write` waits for the socket to drain.
_WRITE_LIMIT = 64 * 1024


class AsyncioStream(httpcore.AsyncNetworkStream):
    """One connection: `reader` and `writer` from `asyncio.open_connection`."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter):
        self._reader = reader
        self._writer = writer

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        """Up to `max_bytes` bytes (b'' at the end of the stream).

        Raises:
            httpcore.ReadTimeout: nothing came within `timeout` seconds.
            httpcore.ReadError: the connection failed.
        """
        try:
            async with asyncio.timeout(timeout):
                return await self._reader.read(max_bytes)
        except TimeoutError as exc:
            raise httpcore.ReadTimeout(str(exc)) from exc
        except (OSError, RuntimeError) as exc:
            raise httpcore.ReadError(str(exc)) from exc

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        """Send `buffer` (waiting, up to `timeout` seconds, only when the socket is backed up).

        Raises:
            httpcore.WriteTimeout: the socket did not drain within `timeout` seconds.
            httpcore.WriteError: the connection failed.
        """
        if not buffer:
            return
        try:
            if self._writer.is_closing():
                raise ConnectionResetError("the connection is closed")
            self._writer.write(buffer)
            if self._writer.transport.get_write_buffer_size() > _WRITE_LIMIT:
                async with asyncio.timeout(timeout):
                    await self._writer.drain()
        except TimeoutError as exc:
            raise httpcore.WriteTimeout(str(exc)) from exc
        except (OSError, RuntimeError) as exc:
            raise httpcore.WriteError(str(exc)) from exc

    async def aclose(self) -> None:
        """Close the connection (without waiting for the peer)."""
        self._writer.close()

    async def start_tls(
        self, ssl_context: ssl.SSLContext, server_hostname: str | None = None, timeout: float | None = None
    ) -> httpcore.AsyncNetworkStream:
        """Upgrade the connection to TLS; returns this stream.

        Raises:
            httpcore.ConnectTimeout: the handshake took longer than `timeout` seconds.
            httpcore.ConnectError: the handshake failed.
        """
        try:
            async with asyncio.timeout(timeout):
                await self._writer.start_tls(ssl_context, server_hostname=server_hostname)
        except TimeoutError as exc:
            self._writer.close()
            raise httpcore.ConnectTimeout(str(exc)) from exc
        except (OSError, ssl.SSLError) as exc:
            self._writer.close()
            raise httpcore.ConnectError(str(exc)) from exc
        return self

    def get_extra_info(self, info: str) -> Any:
        """``is_readable`` (True when the peer closed or sent bytes nobody asked for: the
        connection cannot be reused, or the next request would read them as its answer),
        else the transport's extra info (``ssl_object``, ``socket``...).
        """
        if info == "is_readable":
            # asyncio reads the socket into the reader's buffer as bytes come, so the socket
            # itself never looks readable: the buffer is where unasked-for bytes wait.
            unread = len(getattr(self._reader, "_buffer", b""))
            return self._reader.at_eof() or unread > 0 or self._writer.is_closing()
        return self._writer.get_extra_info(info)


class AsyncioBackend(httpcore.AsyncNetworkBackend):
    """`httpcore.AsyncNetworkBackend` on asyncio streams (see the module doc)."""

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[SocketOption] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        """A TCP connection to `host`:`port` with ``TCP_NODELAY``.

        Raises:
            httpcore.ConnectTimeout: not connected within `timeout` seconds.
            httpcore.ConnectError: the connection failed.
        """
        local = (local_address, 0) if local_address else None
        try:
            async with asyncio.timeout(timeout):
                reader, writer = await asyncio.open_connection(host, port, local_addr=local)
        except TimeoutError as exc:
            raise httpcore.ConnectTimeout(str(exc)) from exc
        except OSError as exc:
            raise httpcore.ConnectError(str(exc)) from exc
        sock = writer.get_extra_info("socket")
        if sock is not None:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            for option in socket_options or ():
                sock.setsockopt(*option)
        return AsyncioStream(reader, writer)

    async def sleep(self, seconds: float) -> None:
        """`asyncio.sleep`."""
        await asyncio.sleep(seconds)
