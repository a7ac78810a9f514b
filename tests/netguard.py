"""No test reaches the network beyond loopback: a guard on this process's sockets (for conftest).

`install` wraps `socket.socket.connect`/`connect_ex` and `socket.getaddrinfo`: a connection
to an address that is not loopback (nor the unspecified 0.0.0.0/::, which is this machine),
or a name lookup of anything but ``localhost``, is refused (``ENETUNREACH``, ``EAI_NONAME``) and noted;
the `conftest` fixture then fails the test that made it, so a test whose code swallowed the
error (a retry loop, a fallback) is caught as well. Unix sockets and IP literals in lookups
(no resolver is asked) pass.

It sees Python's sockets in the test process only: libpq (PostgreSQL, over a Unix socket
anyway), uvloop's C transports and subprocesses are not guarded; the install step (test.sh)
is where the network is used.
"""

from __future__ import annotations

import errno
import ipaddress
import socket
from typing import Any

#: What was refused since the last `take`: one line each.
_refused: list[str] = []
_installed = False


def _local_host(host: object) -> bool:
    if host is None:
        return True
    if isinstance(host, bytes):
        host = host.decode(errors="replace")
    if not isinstance(host, str):
        return False
    name = host.strip("[]").split("%")[0].lower().rstrip(".")
    if name in ("", "localhost") or name.endswith(".localhost"):
        return True
    try:
        address = ipaddress.ip_address(name)
    except ValueError:
        return False
    return address.is_loopback or address.is_unspecified


def _is_literal(host: object) -> bool:
    if isinstance(host, bytes):
        host = host.decode(errors="replace")
    try:
        ipaddress.ip_address(str(host).strip("[]").split("%")[0])
    except ValueError:
        return False
    return True


def _refuse(what: str) -> str:
    _refused.append(what)
    return f"tests reach no network beyond loopback (tests/netguard.py): {what}"


def install() -> None:
    """Guard this process's sockets (idempotent)."""
    global _installed
    if _installed:
        return
    _installed = True
    connect, connect_ex, getaddrinfo = socket.socket.connect, socket.socket.connect_ex, socket.getaddrinfo

    def _check(sock: socket.socket, address: Any) -> None:
        if sock.family in (socket.AF_INET, socket.AF_INET6) and not _local_host(address[0]):
            raise OSError(errno.ENETUNREACH, _refuse(f"connect to {address!r}"))

    def guarded_connect(self: socket.socket, address: Any) -> None:
        _check(self, address)
        connect(self, address)

    def guarded_connect_ex(self: socket.socket, address: Any) -> int:
        _check(self, address)
        return connect_ex(self, address)

    def guarded_getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
        if not (_local_host(host) or _is_literal(host)):
            raise socket.gaierror(socket.EAI_NONAME, _refuse(f"name lookup of {host!r}"))
        return getaddrinfo(host, *args, **kwargs)

    socket.socket.connect = guarded_connect  # type: ignore[method-assign]
    socket.socket.connect_ex = guarded_connect_ex  # type: ignore[method-assign]
    socket.getaddrinfo = guarded_getaddrinfo


def take() -> list[str]:
    """What was refused since the last call (and forget it)."""
    refused = list(_refused)
    _refused.clear()
    return refused
