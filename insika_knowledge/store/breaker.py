"""A circuit breaker per database: a down database costs a caller nothing, and comes back by itself.

Without it, every call to a PostgreSQL server that is down waited for a pooled connection
(30 s): an engine's turn (two hooks) took about a minute, a relay request 90 s. With it:

- **closed** (normal): calls go through; a connection failure (the server refused or
  dropped the connection, no free connection in time) *opens* it;
- **open**: every call fails at once with `StorageUnavailable` (no connection attempt,
  no wait); a thread of the breaker's own probes the database after a back-off (0.5 s,
  doubled per failed probe up to 30 s, jittered);
- **half-open**: the probe is running (callers still fail at once); a probe that
  connects *closes* the breaker, one that fails opens it again for a longer back-off.

Callers never probe themselves, so no caller ever waits for a down server. Each store
compares `Breaker.epoch` with the one it last saw, to drop the pooled connections made
before the outage once it is over.
"""

from __future__ import annotations

import logging
import random
import threading
import time
from collections.abc import Callable
from typing import Final, Literal

from insika_knowledge.errors import StorageUnavailable

log = logging.getLogger(__name__)

#: First back-off before a probe, and its ceiling, in seconds.
BACKOFF_BASE_S: Final = 0.5
BACKOFF_CAP_S: Final = 30.0

State = Literal["closed", "open", "half-open"]


class Breaker:
    """The state of one database's reachability (see the module doc). Thread-safe.

    Args:
        where: the database, for messages (a URL without its password).
        probe: connects to the database and runs a trivial statement; raises when it
            cannot (called on the breaker's own thread only).
        base_s: the first back-off, in seconds.
        cap_s: the longest back-off, in seconds.
        clock: monotonic seconds (tests inject one).
    """

    def __init__(self, where: str, probe: Callable[[], None], *, base_s: float = BACKOFF_BASE_S,
                 cap_s: float = BACKOFF_CAP_S, clock: Callable[[], float] = time.monotonic):
        self.where = where
        self._probe = probe
        self.base_s = base_s
        self.cap_s = cap_s
        self.clock = clock
        self._lock = threading.Lock()
        self._state: State = "closed"
        self._failures = 0
        self._retry_at = 0.0
        self._reason = ""
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None
        #: Bumped each time the breaker closes after an outage (stores drop stale connections).
        self.epoch = 0

    @property
    def state(self) -> State:
        """``closed``, ``open`` or ``half-open``."""
        with self._lock:
            return self._state

    def check(self) -> None:
        """Return at once while the database is thought reachable.

        Raises:
            StorageUnavailable: the breaker is open or half-open (the database was down at
                the last try); the message says why and when it is tried again.
        """
        if self._state == "closed":  # the common case, read without the lock
            return
        with self._lock:
            if self.state_locked() == "closed":  # closed meanwhile
                return
            left = max(0.0, self._retry_at - self.clock())
            reason = self._reason
        raise StorageUnavailable(  # the same words for one outage: one knowledge_degraded per cause
            f"the database {self.where} is unreachable ({reason}); memory is off until it answers "
            "again, which is checked in the background", path=self.where, retry_in_s=left)

    def state_locked(self) -> State:
        """The state, read by a caller that holds the lock."""
        return self._state

    def failed(self, reason: str) -> None:
        """A call could not reach the database: open the breaker (a probe comes after a back-off)."""
        with self._lock:
            if self._state != "closed":
                return
            self._state = "open"
            self._failures = 1
            self._reason = reason[:200]
            self._retry_at = self.clock() + self._backoff()
            start = self._thread is None or not self._thread.is_alive()
            if start:
                self._thread = threading.Thread(target=self._run, name="insika-knowledge-breaker",
                                                daemon=True)
        log.warning("the database %s is unreachable: %s; memory is off until it answers again",
                    self.where, reason[:200])
        if start:
            assert self._thread is not None
            self._thread.start()
        self._wake.set()

    def succeeded(self) -> None:
        """A call reached the database (closes an open breaker; nothing when closed)."""
        if self._state == "closed":
            return
        self._close()

    def _close(self) -> None:
        with self._lock:
            if self._state == "closed":
                return
            self._state = "closed"
            self._failures = 0
            self.epoch += 1
        log.warning("the database %s answers again; memory is back on", self.where)

    def _backoff(self) -> float:
        ceiling = min(self.cap_s, self.base_s * 2.0 ** max(0, self._failures - 1))
        return float(ceiling / 2 + random.uniform(0.0, ceiling / 2))  # noqa: S311 - jitter, not security

    def _run(self) -> None:
        """Probe after each back-off until the database answers (then the thread ends)."""
        while True:
            with self._lock:
                if self._state == "closed":
                    return
                wait = self._retry_at - self.clock()
            if wait > 0:
                self._wake.wait(wait)
                self._wake.clear()
                continue
            with self._lock:
                self._state = "half-open"
            try:
                self._probe()
            except Exception as exc:  # still down: open again, longer
                with self._lock:
                    self._state = "open"
                    self._failures += 1
                    self._reason = _short(exc)
                    self._retry_at = self.clock() + self._backoff()
                log.debug("probe of %s failed", self.where, exc_info=True)
                continue
            self._close()
            return


def _short(exc: BaseException) -> str:
    """The first line of `exc`'s message (a driver's messages span several lines)."""
    text = str(exc).strip().splitlines()
    return (text[0] if text else type(exc).__name__)[:200]


_registry: dict[str, Breaker] = {}
_registry_lock = threading.Lock()


def breaker_for(key: str, where: str, probe: Callable[[], None]) -> Breaker:
    """The one breaker of the database `key` (a URL) in this process, made on first use."""
    with _registry_lock:
        found = _registry.get(key)
        if found is None:
            found = _registry[key] = Breaker(where, probe)
        return found


def short_reason(exc: BaseException) -> str:
    """`exc`'s message's first line, for one-line logs and events."""
    return _short(exc)
