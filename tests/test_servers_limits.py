"""Servers with limits (issue 24): the Studio and the MCP server over HTTP, run as their
commands in subprocesses, cut slow clients (408), refuse oversized bodies (413) and still
serve a legitimate request while hundreds of sockets hang. The relay's are in
tests/test_relay_edges.py.
"""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from servers import free_port, started

from insika_knowledge import Memory


@pytest.fixture
def data(tmp_path: Path) -> Path:
    folder = tmp_path / "data"
    Memory(folder).store().close()
    return folder


@pytest.fixture(params=["studio", "mcp"])
def server(request: pytest.FixtureRequest, data: Path) -> Iterator[tuple[str, int, str]]:
    port = free_port()
    timeouts = ["--header-timeout", "0.5", "--body-timeout", "0.5"]
    if request.param == "studio":
        args = ["studio", "--data-dir", str(data), "--port", str(port), *timeouts]
        path, env = "/studio/login", {"INSIKA_ADMIN_TOKEN": "studio-admin-token-0123456789"}
    else:
        args = ["mcp", "--agent", "shop", "--data-dir", str(data), "--http", str(port), *timeouts]
        path, env = "/mcp", {}
    proc = started(args, port, env)
    try:
        yield request.param, port, path
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def _head(port: int, extra: bytes = b"", path: str = "/") -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port))
    sock.sendall(f"POST {path} HTTP/1.1\r\nhost: 127.0.0.1\r\n".encode() + extra)
    return sock


def test_slow_headers_and_bodies_are_cut_and_others_served(server: tuple[str, int, str]) -> None:
    _, port, path = server
    hanging = [_head(port) for _ in range(200)]
    try:
        answered = httpx.get(f"http://127.0.0.1:{port}{path}", timeout=5)
        assert answered.status_code in (200, 400, 405, 406)  # served (what it says is the app's)
        time.sleep(1.0)
        hanging[0].settimeout(3)
        assert hanging[0].recv(100).startswith(b"HTTP/1.1 408")
        form = b"content-type: application/x-www-form-urlencoded\r\n" if path.startswith("/studio") else \
            b"content-type: application/json\r\naccept: application/json, text/event-stream\r\n"
        slow_body = _head(port, form + b"content-length: 100\r\n\r\n{", path)  # a route that reads it
        slow_body.settimeout(3)
        assert slow_body.recv(100).startswith(b"HTTP/1.1 408")
        slow_body.close()
    finally:
        for sock in hanging:
            sock.close()


def test_a_body_over_the_cap_is_413(server: tuple[str, int, str]) -> None:
    name, port, path = server
    size = (1 if name == "studio" else 4) * 1024 * 1024 + 1
    sock = _head(port, f"content-length: {size}\r\ncontent-type: application/json\r\n\r\n".encode())
    sock.settimeout(3)
    assert sock.recv(100).startswith(b"HTTP/1.1 413")  # refused before a byte of it was read
    sock.close()
