"""Login throttling: at most `MAX_ATTEMPTS` login attempts per client address in `WINDOW_S` seconds.

Every login POST with a valid CSRF token counts as an attempt, counted before its admin
token is compared (`auth.login`); a successful login clears the address's count. Past
the limit the login answers 429 with ``Retry-After``: the whole seconds until the
oldest counted attempt leaves the window.

An IPv6 client is counted by its /64 network (one host usually holds the whole /64, so
it could otherwise take a fresh address per guess). The address is the peer's, or, when
the peer is a reverse proxy on the same machine (a loopback address), the last address
in ``X-Forwarded-For`` (`client_address`): the one that proxy added, which a client
cannot choose (addresses a client wrote itself come before it). Without that, every
user behind the proxy shared one count. The table keeps at most `MAX_CLIENTS` addresses
(the least recently seen is forgotten first).
"""

from __future__ import annotations

import ipaddress
import math
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable
from typing import Final

#: Attempts allowed per address within `WINDOW_S` seconds.
MAX_ATTEMPTS: Final = 5
WINDOW_S: Final = 60.0
MAX_CLIENTS: Final = 4096


def client_address(peer: str | None, forwarded_for: str | None) -> str | None:
    """The client's address: `peer`, or behind a proxy on this machine, the proxy's client.

    Args:
        peer: the address the connection comes from.
        forwarded_for: the ``X-Forwarded-For`` header (None: absent).

    Returns:
        The last valid IP address of `forwarded_for` when `peer` is a loopback address,
        else `peer`.
    """
    if not forwarded_for or not _loopback(peer):
        return peer
    for entry in reversed(forwarded_for.split(",")):
        candidate = entry.strip().strip("[]")
        try:
            return str(ipaddress.ip_address(candidate))
        except ValueError:
            continue
    return peer


def _loopback(host: str | None) -> bool:
    if not host:
        return False
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def client_key(host: str | None) -> str:
    """The key an address is counted under: itself for IPv4, its /64 network for IPv6.

    A missing or non-IP client (a test client, a Unix socket) is counted as itself.
    """
    if not host:
        return "unknown"
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return host
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return str(address.ipv4_mapped)
        return str(ipaddress.ip_network(f"{address}/64", strict=False))
    return str(address)


class LoginThrottle:
    """A sliding window of login attempts per client address (thread-safe).

    Args:
        max_attempts: attempts allowed per address within `window_s`.
        window_s: the window, in seconds.
        clock: monotonic seconds; tests inject one.
        max_clients: addresses remembered at most.
    """

    def __init__(
        self, *, max_attempts: int = MAX_ATTEMPTS, window_s: float = WINDOW_S,
        clock: Callable[[], float] = time.monotonic, max_clients: int = MAX_CLIENTS,
    ):
        self.max_attempts = max_attempts
        self.window_s = window_s
        self.clock = clock
        self.max_clients = max_clients
        self._attempts: OrderedDict[str, deque[float]] = OrderedDict()
        self._lock = threading.Lock()

    def attempt(self, key: str) -> int | None:
        """Count one login attempt from `key`; None when it may go on.

        Returns:
            None when the attempt is allowed (and counted), else the whole seconds (>= 1)
            to wait before the next one is (the refused attempt is not counted).
        """
        now = self.clock()
        with self._lock:
            seen = self._attempts.pop(key, None) or deque()
            while seen and seen[0] <= now - self.window_s:
                seen.popleft()
            self._attempts[key] = seen  # most recently seen last
            if len(seen) >= self.max_attempts:
                return max(1, math.ceil(seen[0] + self.window_s - now))
            seen.append(now)
            while len(self._attempts) > self.max_clients:
                self._attempts.popitem(last=False)
            return None

    def succeeded(self, key: str) -> None:
        """Forget `key`'s attempts: it logged in."""
        with self._lock:
            self._attempts.pop(key, None)
