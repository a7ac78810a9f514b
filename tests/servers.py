"""Helpers for tests that run a server as its command in a subprocess."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def free_port() -> int:
    """A TCP port free on loopback now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def started(args: list[str], port: int, env: dict[str, str] | None = None,
            timeout_s: float = 30) -> subprocess.Popen[bytes]:
    """``python -m insika_knowledge ARGS`` running, once it listens on loopback `port`.

    Raises:
        AssertionError: it exited (its stderr is the message) or did not listen in time.
    """
    proc = subprocess.Popen([sys.executable, "-m", "insika_knowledge", *args],
                            env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})},
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return proc
        except OSError:
            assert proc.poll() is None, proc.communicate()[1].decode()[-2000:]
            assert time.monotonic() < deadline, "the server did not listen"
            time.sleep(0.1)
