"""Capture: buffer each session's steps across requests, durably.

A chat request carries the whole history, so each request only adds the messages after
the ones already captured (``messages_seen``); the last captured message is read again
so a text command's output that arrives in the next request finds its command. A history
that got shorter (the client trimmed it) is read whole, and calls already captured are
recognised by their ids. Nothing raw is kept: steps are stored canonicalised
(`insika_knowledge.procedures.trace.steps.Step`: secrets, personal data and volatile tokens
replaced, call ids as digests), the user's tokens only as hashes, and the task as
canonical text with every word that no two sessions' tasks shared masked
(`insika_knowledge.procedures.mining.shared.mask_unshared` against the stored population):
a customer's name or booking code never reaches the buffer. Recall loses nothing by it
(a term the population does not hold carries no weight in a recall), and the unmasked task
stays in the process's cache of builders for mining the task when it ends.

The state lives in the tenant database (``capture_sessions``, ``capture_steps``), so a
restart loses nothing; an in-process cache of builders saves re-reading the steps, and is
checked against the stored row (its ``run`` and ``turns``) on every request, so several
processes can serve one session.
"""

from __future__ import annotations

import re
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

from insika_knowledge.procedures.mining.shared import mask_unshared
from insika_knowledge.procedures.trace.events import events
from insika_knowledge.procedures.trace.steps import PENDING, Step, TraceBuilder
from insika_knowledge.store.base import ProcedureStorage
from insika_knowledge.store.procedure_records import SessionRow

_CACHE_SIZE: Final = 4096
_MAX_GIVEN: Final = 2048


@dataclass
class Captured:
    """A session after one request.

    Attributes:
        row: the session row, updated (not yet written).
        builder: the session's steps so far.
        touched: positions of the steps this request added or completed.
    """

    row: SessionRow
    builder: TraceBuilder
    touched: set[int]

    def changed_steps(self) -> list[tuple[int, list[Any]]]:
        """``(seq, step JSON)`` of the touched steps, for the store."""
        return [(i, self.builder.steps[i].to_json()) for i in sorted(self.touched)]

    def run_id(self) -> str:
        """The run id of the current task (``<session>`` or ``<session>#<n>``)."""
        return self.row.session_id if self.row.run == 0 else f"{self.row.session_id}#{self.row.run}"


class SessionCapture:
    """Reads requests into per-session step buffers.

    Args:
        store: the tenant's procedure store.
        extra_verify: configured verify patterns.
        verify_scripts: a script run after an edit of another file is a verify step.
    """

    def __init__(
        self,
        store: ProcedureStorage,
        extra_verify: tuple[re.Pattern[str], ...] = (),
        *,
        verify_scripts: bool = True,
    ):
        self.store = store
        self.extra_verify = extra_verify
        self.verify_scripts = verify_scripts
        self._cache: OrderedDict[str, tuple[int, int, TraceBuilder]] = OrderedDict()

    def builder(self, row: SessionRow) -> TraceBuilder:
        """The step buffer of `row`'s current task (cached, else read from the store)."""
        cached = self._cache.get(row.session_id)
        if cached is not None and cached[0] == row.run and cached[1] == row.turns:
            self._cache.move_to_end(row.session_id)
            return cached[2]
        builder = TraceBuilder(
            extra_verify=self.extra_verify,
            verify_scripts=self.verify_scripts,
            task_text=row.task,
            given=set(row.given),
        )
        builder.restore(Step.from_json(s) for s in self.store.session_steps(row.session_id))
        return builder

    def observe(self, session_id: str, messages: Any, tools: Sequence[str], now: float) -> Captured:
        """Read a request's new messages into the session's buffer.

        Args:
            session_id: the request's session.
            messages: the request's ``messages`` list.
            tools: the tool names the request offers.
            now: unix seconds (the injected clock).

        Raises:
            UserError: `messages` is malformed (`insika_knowledge.procedures.trace.events.events`).
        """
        row = self.store.load_session(session_id) or SessionRow(session_id, first_turn_at=now)
        builder = self.builder(row)
        count = len(messages) if isinstance(messages, list) else 0
        rewound = count < row.messages_seen
        start = 0 if rewound else max(0, row.messages_seen - 1)
        touched = builder.feed(events(messages, start=start), rewound=rewound)
        row.messages_seen = count
        row.turns += 1
        if builder.task and not row.task:  # the task arrived: store it masked, once
            row.task = mask_unshared(builder.task, self.store.population_terms)
        if len(row.given) != len(builder.given):
            row.given = sorted(builder.given)[:_MAX_GIVEN]
        row.tools = list(tools)
        row.last_turn_at = now
        if row.procedure_id is None:
            row.tracked_upto = _settled(builder.steps, row.tracked_upto)
        return Captured(row, builder, touched)

    def remember(self, captured: Captured) -> None:
        """Cache the builder of a written request (keyed by the row's run and turns)."""
        row = captured.row
        self._cache[row.session_id] = (row.run, row.turns, captured.builder)
        self._cache.move_to_end(row.session_id)
        while len(self._cache) > _CACHE_SIZE:
            self._cache.popitem(last=False)

    def forget(self, session_id: str) -> None:
        """Drop the cached builder of `session_id` (its task was closed)."""
        self._cache.pop(session_id, None)


def _settled(steps: Sequence[Step], start: int) -> int:
    """The position of the first step from `start` on that has no result yet (or the end)."""
    i = start
    while i < len(steps) and steps[i].status != PENDING:
        i += 1
    return i


def new_steps(steps: Sequence[Step], start: int) -> tuple[list[Step], int]:
    """Completed steps from `start` up to the first pending one, and the next start."""
    end = _settled(steps, start)
    return list(steps[start:end]), end
