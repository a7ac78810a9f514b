"""Failing open: what a memory failure leaves behind on one request.

The relay never fails a request because memory failed. A failing stage contributes
nothing (the body goes on as the stages before it left it; when every stage before it
was a no-op, that is the body as the client sent it), the response carries
``x-insika-degraded`` naming the failed stages, and ``knowledge_degraded`` is emitted
once per (agent, stage, reason), like the plugin's hooks do.

Stages, in request order: ``body`` (the request body is not a JSON object),
``procedures`` (the ``request`` hook),
``retrieve`` (the ``<knowledge>`` block and the ``load_knowledge`` offer),
``load_knowledge`` (answering a call), ``learn`` (handing the finished turn to extraction).
"""

from __future__ import annotations

import logging
import threading
from typing import Final

from insika_knowledge.errors import InsikaError
from insika_knowledge.events import EventBus, KnowledgeDegraded
from insika_knowledge.wire.headers import DEGRADED_HEADER

log = logging.getLogger(__name__)

BODY: Final = "body"
PROCEDURES: Final = "procedures"
RETRIEVE: Final = "retrieve"
LOAD_KNOWLEDGE: Final = "load_knowledge"
LEARN: Final = "learn"
#: The stages in request order (the order `Degraded.headers` names them in).
STAGES: Final = (BODY, PROCEDURES, RETRIEVE, LOAD_KNOWLEDGE, LEARN)


def reason_of(exc: BaseException) -> str:
    """A short reason for an exception: its message for our errors, else its class too."""
    text = str(exc) if isinstance(exc, InsikaError) else f"{type(exc).__name__}: {exc}"
    return text[:300]


class DegradedLog:
    """Emits ``knowledge_degraded`` once per (agent, stage, reason) on `events`.

    Args:
        events: the memory's event bus.
    """

    def __init__(self, events: EventBus):
        self.events = events
        self._seen: set[tuple[str, str, str]] = set()
        self._lock = threading.Lock()

    def report(self, agent: str | None, stage: str, reason: str) -> None:
        """Log and emit one failure (the first time this cause is seen). Never raises."""
        key = (agent or "-", stage, reason)
        with self._lock:
            if key in self._seen:
                return
            self._seen.add(key)
        log.warning("relay %s degraded for agent %s: %s", stage, key[0], reason)
        try:
            self.events.emit(KnowledgeDegraded(agent=key[0], feature=stage, reason=reason))
        except Exception:  # a failing subscriber must not fail the request
            log.exception("could not emit knowledge_degraded")


class Degraded:
    """The failed stages of one request, in order.

    Args:
        log: where each failure is reported.
        agent: the request's agent (for the event).
    """

    def __init__(self, log: DegradedLog, agent: str | None = None):
        self._log = log
        self.agent = agent
        self.stages: list[str] = []

    def add(self, stage: str, reason: str) -> None:
        """Record that `stage` failed for `reason`."""
        if stage not in self.stages:
            self.stages.append(stage)
        self._log.report(self.agent, stage, reason)

    def headers(self) -> dict[str, str]:
        """``{"x-insika-degraded": "stage, stage"}`` in request order, or {} when nothing failed."""
        order = sorted(self.stages, key=lambda s: STAGES.index(s) if s in STAGES else len(STAGES))
        return {DEGRADED_HEADER: ", ".join(order)} if order else {}
