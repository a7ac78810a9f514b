"""The guard behind "no test reaches the network beyond loopback" (tests/netguard.py)."""

from __future__ import annotations

import socket

import netguard
import pytest


def test_beyond_loopback_is_refused_and_noted() -> None:
    with pytest.raises(OSError, match="no network beyond loopback"):
        socket.create_connection(("192.0.2.1", 9), timeout=0.1)  # TEST-NET-1
    with pytest.raises(socket.gaierror):
        socket.getaddrinfo("example.com", 443)
    assert netguard.take() == ["connect to ('192.0.2.1', 9)", "name lookup of 'example.com'"]


def test_loopback_and_literals_pass() -> None:
    with socket.create_server(("127.0.0.1", 0)) as server:
        port = server.getsockname()[1]
        for host in ("127.0.0.1", "localhost"):
            socket.create_connection((host, port), timeout=1).close()
    assert socket.getaddrinfo("192.0.2.1", 9)  # a literal: no resolver is asked
    assert netguard.take() == []
