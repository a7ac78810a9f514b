"""Stored sessions fed to the miner the way the evaluation and the benchmarks both do it."""

from __future__ import annotations

from collections.abc import Callable

from insika_knowledge.procedures.mining.mine import FAILURE, SUCCESS, Miner
from insika_knowledge.procedures.trace.steps import TraceBuilder
from insika_knowledge.sessions import Session


def lazy_task(builder: TraceBuilder) -> Callable[[], str]:
    """The trace's task text, computed only when asked (the miner asks for verified runs only)."""
    return lambda: builder.task


def add_trace(miner: Miner, session: Session, builder: TraceBuilder) -> None:
    """Add `session`'s trace (already built into `builder`) to `miner`.

    The session's ``outcome`` label counts when it is ``success`` or ``failure``; any other
    label leaves the verdict to the trace's own verify steps. A tool-calling trace is
    counted in its task (told by its first user message, as the live path tells it).
    """
    outcome = session.outcome if session.outcome in (SUCCESS, FAILURE) else None
    miner.add_trace(session.session_id, builder, outcome)
