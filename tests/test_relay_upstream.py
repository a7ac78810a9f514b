"""The relay's connections to the upstream: kept alive, no state carried between callers,
and the asyncio sockets' failures as httpx reports them."""

from __future__ import annotations

import asyncio
import json
import shutil
import socket
import ssl
import subprocess
from collections.abc import Iterator
from pathlib import Path

import httpcore
import httpx
import pytest
from fakeupstream import FakeUpstream, Status, Text
from relayhelp import IDENTITY, QUESTION, Running, running_relay

from insika_knowledge.relay.client import Upstream
from insika_knowledge.relay.netbackend import AsyncioBackend
from insika_knowledge.relay.server import BackgroundServer

BODY = {"model": "m", "messages": [{"role": "user", "content": QUESTION}]}


@pytest.fixture
def upstream() -> Iterator[FakeUpstream]:
    with FakeUpstream() as fake:
        yield fake


@pytest.fixture
def relay(tmp_path: Path, upstream: FakeUpstream) -> Iterator[Running]:
    with running_relay(tmp_path / "data", upstream.url) as running:
        yield running


def post(relay: Running, headers: dict[str, str]) -> httpx.Response:
    return httpx.post(relay.url + "/v1/chat/completions", json=BODY, headers={**IDENTITY, **headers})


def test_requests_reuse_one_upstream_connection(relay: Running, upstream: FakeUpstream) -> None:
    for stream in (False, True, False, True):
        r = httpx.post(relay.url + "/v1/chat/completions", json={**BODY, "stream": stream}, headers=IDENTITY)
        assert r.status_code == 200
    assert len(upstream.requests) == 4 and len({seen.peer for seen in upstream.requests}) == 1


def test_an_upstream_cookie_is_not_sent_for_the_next_caller(relay: Running, upstream: FakeUpstream) -> None:
    upstream.reset([Status(429, "slow down", {"set-cookie": "upstream-session=caller-a; Path=/"}), Text("Oi.")])
    first = post(relay, {"authorization": "Bearer caller-a"})
    assert first.status_code == 429 and first.headers["set-cookie"] == "upstream-session=caller-a; Path=/"
    assert post(relay, {"authorization": "Bearer caller-b"}).status_code == 200
    assert "cookie" not in upstream.requests[1].headers
    assert post(relay, {"cookie": "mine=1"}).status_code == 200
    assert upstream.requests[2].headers["cookie"] == "mine=1"  # the caller's own cookie goes up as sent


def test_only_the_callers_headers_and_host_go_upstream(relay: Running, upstream: FakeUpstream) -> None:
    raw = json.dumps(BODY).encode()
    r = httpx.post(relay.url + "/v1/chat/completions", content=raw,
                   headers={**IDENTITY, "x-insika-memory": "off", "content-type": "application/json"})
    assert r.status_code == 200
    sent = upstream.requests[0].headers
    assert "user-agent" in sent and sent["user-agent"].startswith("python-httpx")  # the caller's, not ours twice
    assert sent["accept-encoding"] == "identity" and sent["content-length"] == str(len(raw))
    assert sent["host"] == upstream.url.removeprefix("http://")


def test_a_header_with_bytes_beyond_ascii_goes_upstream_byte_for_byte(relay: Running, upstream: FakeUpstream) -> None:
    note = "café ü".encode()  # UTF-8 (obs-text to HTTP): once a 500 from the relay
    headers = [(k.encode(), v.encode()) for k, v in IDENTITY.items()] + [(b"x-note", note)]
    assert httpx.get(relay.url + "/v1/models", headers=headers).status_code == 200  # passed through
    assert httpx.post(relay.url + "/v1/chat/completions", json=BODY, headers=headers).status_code == 200
    assert upstream.requests[-1].headers["x-note"].encode("latin-1") == note


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def test_an_unreachable_port_is_a_connect_error() -> None:
    async def connect() -> None:
        await AsyncioBackend().connect_tcp("127.0.0.1", _closed_port(), timeout=5)

    with pytest.raises(httpcore.ConnectError):
        asyncio.run(connect())


def test_an_upstream_that_stops_answering_is_a_read_timeout() -> None:
    async def silent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.read(1)
        await asyncio.sleep(5)

    async def ask() -> None:
        server = await asyncio.start_server(silent, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        upstream = Upstream(httpx.Timeout(10.0, read=0.2), httpx.Limits())  # a loaded machine may connect slowly
        try:
            async with server:
                await upstream.send("POST", f"http://127.0.0.1:{port}/v1/messages", [], b"{}")
        finally:
            await upstream.aclose()

    with pytest.raises(httpx.ReadTimeout):
        asyncio.run(ask())


def test_bytes_an_upstream_sends_unasked_are_never_the_next_requests_answer() -> None:
    """An idle kept-alive connection with unread bytes is dropped, not reused (response desync)."""

    def answer(text: bytes) -> bytes:
        return b"HTTP/1.1 200 OK\r\ncontent-length: %d\r\n\r\n%s" % (len(text), text)

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while await reader.readuntil(b"\r\n\r\n"):
                await reader.readexactly(2)  # the b"{}" body
                writer.write(answer(b"asked"))
                await writer.drain()
                await asyncio.sleep(0.05)
                writer.write(answer(b"unasked"))  # after the answer, in a packet of its own
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            writer.close()  # the relay dropped the connection

    async def ask() -> list[bytes]:
        server = await asyncio.start_server(serve, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        upstream = Upstream(httpx.Timeout(5), httpx.Limits())
        bodies = []
        try:
            async with server:
                for _ in range(2):
                    response = await upstream.send("POST", f"http://127.0.0.1:{port}/v1/messages", [], b"{}")
                    bodies.append(await response.aread())
                    await asyncio.sleep(0.2)
        finally:
            await upstream.aclose()
        return bodies

    assert asyncio.run(ask()) == [b"asked", b"asked"]


@pytest.mark.skipif(shutil.which("openssl") is None, reason="needs openssl to make a certificate")
def test_https_upstream_with_a_verified_certificate(tmp_path: Path) -> None:
    key, cert = tmp_path / "key.pem", tmp_path / "cert.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-out", str(cert),
                    "-days", "1", "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost"],
                   check=True, capture_output=True)
    fake = FakeUpstream()
    fake._server = BackgroundServer(fake.app, ssl_keyfile=str(key), ssl_certfile=str(cert))

    async def ask(context: ssl.SSLContext) -> list[int]:
        pool = httpcore.AsyncConnectionPool(ssl_context=context, network_backend=AsyncioBackend())
        async with pool:
            url = f"https://localhost:{fake._server.port}/v1/models"
            statuses = [(await pool.request("GET", url)).status for _ in range(2)]
            assert len(pool.connections) == 1  # kept alive over TLS
            return statuses

    with fake:
        assert asyncio.run(ask(ssl.create_default_context(cafile=str(cert)))) == [200, 200]
        with pytest.raises(httpcore.ConnectError, match="CERTIFICATE_VERIFY_FAILED"):
            asyncio.run(ask(ssl.create_default_context()))
