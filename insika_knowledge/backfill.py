"""Backfill: replay stored sessions through the same extractor a live turn uses.

Each session is extracted as one turn (turn id ``session``) from its whole transcript.
A session already extracted successfully is skipped, so a re-run only retries what
failed or is new; one failing session never stops the others. The model is checked
once before any session runs (an unusable provider is a `UserError`, not one error per
session), and a session with nothing said in it is ``empty`` without one. The run ends
with a ``knowledge_backfilled`` event.

A rate-limited model (HTTP 429) is waited for, not hammered: the session is tried
again after the provider's ``Retry-After``, or after an exponential back-off with full
jitter when it gives none, and every worker thread waits out the same pause. A session
that still fails, or whose model call failed (timeout, rate limit, connection), is
`BackfillSummary.unfinished`, and the CLI exits 1 for it.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Final

from insika_knowledge.config import KnowledgeConfig
from insika_knowledge.errors import UserError
from insika_knowledge.events import KnowledgeBackfilled
from insika_knowledge.extract.model import ConceptModel, check_usable
from insika_knowledge.ids import DEFAULT_TENANT
from insika_knowledge.learn import stored_ids
from insika_knowledge.learn.turn import TurnReport
from insika_knowledge.memory import Memory
from insika_knowledge.sessions import TIME_KEYS, Session, read_sessions
from insika_knowledge.wire.messages import message_text

BACKFILL_TURN: Final = "session"
#: Outcomes that mean the session's extraction did not run to an answer (the run fails).
UNFINISHED: Final = frozenset({"error", "model_timeout", "model_rate_limited", "model_error"})
#: Tries of one session while the model answers HTTP 429.
RATE_LIMIT_ATTEMPTS: Final = 5
#: The first back-off after a 429 without ``Retry-After``, in seconds (doubled per try, jittered).
RATE_LIMIT_BASE_S: Final = 2.0
#: The longest pause a ``Retry-After`` may impose, in seconds; longer: the session is left.
RATE_LIMIT_MAX_WAIT_S: Final = 300.0


@dataclass
class SessionStatus:
    """One session's result: ``done``, ``skipped`` (already done), ``before-since``,
    ``undated`` (under ``--since``, its start time is written but reads as no date: left
    out), ``empty`` (no message holds text once the system prompt is left out: the model is
    not called), or a failure kind.
    """

    session_id: str
    status: str
    learned: int = 0
    confirmed: int = 0
    merged: int = 0
    conflicts: int = 0
    dropped: Counter[str] = field(default_factory=Counter)
    possible_duplicates: int = 0  # candidates held for a human (`consolidate.naming`)
    quarantined: int = 0  # concepts held in quarantine (`insika_knowledge.trust`)
    unsupported: int = 0  # live rules only the customer repeated: nothing counted (`trust`)
    detail: str | None = None


@dataclass
class BackfillSummary:
    """The whole run: per-session statuses and totals."""

    agent: str
    statuses: list[SessionStatus] = field(default_factory=list)

    def total(self, attr: str) -> int:
        """Sum of one numeric `SessionStatus` attribute over the run."""
        return sum(getattr(s, attr) for s in self.statuses)

    @property
    def failed(self) -> list[SessionStatus]:
        """Sessions that ended ``error`` (an exception, e.g. a full disk), not a model outcome."""
        return [s for s in self.statuses if s.status == "error"]

    @property
    def unfinished(self) -> list[SessionStatus]:
        """Sessions whose extraction did not run to an answer: ``error`` or a model call
        that failed (``model_timeout``, ``model_rate_limited``, ``model_error``).

        An answer the model gave but that held nothing usable (``model_empty``,
        ``model_malformed``) is a result, not a failure of the run.
        """
        return [s for s in self.statuses if s.status in UNFINISHED]

    @property
    def dropped(self) -> Counter[str]:
        """Reason -> candidates dropped over the run."""
        total: Counter[str] = Counter()
        for status in self.statuses:
            total.update(status.dropped)
        return total

    def by_status(self) -> Counter[str]:
        """Status -> how many sessions ended with it."""
        return Counter(s.status for s in self.statuses)


def parse_since(text: str | None) -> datetime | None:
    """Parse ``--since`` (ISO-8601, e.g. ``2026-08-01T00:00:00Z``).

    Raises:
        UserError: not an ISO-8601 time.
    """
    if text is None:
        return None
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise UserError(f"--since {text!r} is not an ISO-8601 time like 2026-08-01T00:00:00Z") from None
    if moment.tzinfo is None:
        from datetime import UTC

        moment = moment.replace(tzinfo=UTC)
    return moment


def session_time(session: Session) -> datetime | None:
    """The session's start time: the record's top-level one, else its metadata's, when it has one."""
    for value in (session.started_at, *(session.metadata.get(key) for key in TIME_KEYS)):
        if isinstance(value, str):
            try:
                return parse_since(value)
            except UserError:
                continue
    return None


def _unreadable_time(session: Session) -> str | None:
    """The session's start time as written when it has one and none reads as a date, else None."""
    for value in (session.started_at, *(session.metadata.get(key) for key in TIME_KEYS)):
        if value is not None:  # a number or a list is written too, and reads as no date
            return (value if isinstance(value, str) else json.dumps(value, default=str))[:40]
    return None


def backfill(
    memory: Memory,
    agent: str,
    config: KnowledgeConfig,
    sessions_path: str | os.PathLike[str],
    *,
    tenant: str = DEFAULT_TENANT,
    since: datetime | None = None,
    concurrency: int = 1,
    model: ConceptModel | None = None,
    on_start: Callable[[int], None] | None = None,
    on_progress: Callable[[SessionStatus], None] | None = None,
    rate_limit_attempts: int = RATE_LIMIT_ATTEMPTS,
    rate_limit_base_s: float = RATE_LIMIT_BASE_S,
) -> BackfillSummary:
    """Extract every stored session of `sessions_path` into `agent`'s concepts.

    Args:
        memory: where the concepts go.
        agent: the agent id.
        config: the agent's ``knowledge:`` block (types, prompt, model).
        sessions_path: a normalised JSONL file.
        tenant: the tenant.
        since: skip sessions that started before this time (sessions without a time
            in their metadata are always processed).
        concurrency: sessions extracted at once (threads; model calls overlap, writes
            serialise in SQLite).
        model: overrides the config's model.
        on_start: called once with the number of sessions in the file, after the file
            and the model were checked and before the first session runs.
        on_progress: called once per finished session (from worker threads).
        rate_limit_attempts: tries of one session while the model answers 429 (>= 1).
        rate_limit_base_s: the first back-off after a 429 without ``Retry-After``, in seconds.

    Returns:
        The summary; the ``knowledge_backfilled`` event has already fired.

    Raises:
        UserError: the file is missing or malformed, or gives one session twice (before
            anything is written), `concurrency` < 1, or the model spec is unusable.
    """
    if concurrency < 1:
        raise UserError("--concurrency must be at least 1")
    try:
        sessions = list(read_sessions(os.fspath(sessions_path)))  # malformed input fails before any write
    except UnicodeDecodeError as exc:
        raise UserError(f"sessions file {sessions_path} is not UTF-8 text: {exc.reason}") from None
    first: dict[str, int] = {}
    for session in sessions:  # a session is learned once: one given twice is a mistake in the file
        if session.session_id in first:
            raise UserError(f"{os.fspath(sessions_path)}:{session.line}: session_id {session.session_id!r} is "
                            f"also on line {first[session.session_id]}; each session appears once")
        first[session.session_id] = session.line
    chosen = model if model is not None else memory.model(config.resolved_model())
    check_usable(chosen)  # an unusable provider fails here, before any session runs
    store = memory.store(tenant)
    summary = BackfillSummary(agent)
    if on_start is not None:
        on_start(len(sessions))
    gate = RateGate(max(1, rate_limit_attempts), rate_limit_base_s)

    def one(session: Session) -> SessionStatus:
        status = _run_one(memory, agent, config, chosen, tenant, store, session, since, gate)
        if on_progress is not None:
            on_progress(status)
        return status

    if concurrency == 1:
        results = [one(s) for s in sessions]
    else:
        with ThreadPoolExecutor(concurrency, thread_name_prefix="insika-backfill") as pool:
            futures = [pool.submit(one, s) for s in sessions]
            results = [f.result() for f in as_completed(futures)]
        order = {s.session_id: i for i, s in enumerate(sessions)}
        results.sort(key=lambda r: order.get(r.session_id, 0))
    summary.statuses = results
    processed = [s for s in results if s.status == "done"]
    memory.events.emit(KnowledgeBackfilled(
        agent=agent,
        sessions=len(processed),
        concepts=sum(s.learned + s.confirmed + s.merged for s in processed),
        conflicts=sum(s.conflicts for s in processed),
        dropped=dict(summary.dropped),
    ))
    return summary


class RateGate:
    """The pause every worker waits out after a 429 (shared: one limit, one provider).

    Args:
        attempts: tries of one turn while the model answers HTTP 429.
        base_s: the first back-off after a 429 without ``Retry-After``, in seconds
            (doubled per try, jittered); a ``Retry-After`` over `RATE_LIMIT_MAX_WAIT_S`
            gives up instead.
    """

    def __init__(self, attempts: int, base_s: float):
        self.attempts = attempts
        self.base_s = base_s
        self._until = 0.0
        self._lock = threading.Lock()

    def wait(self) -> None:
        """Sleep until the current pause is over (at once when there is none)."""
        while True:
            with self._lock:
                left = self._until - time.monotonic()
            if left <= 0:
                return
            time.sleep(left)

    def pause(self, attempt: int, retry_after_s: float | None) -> bool:
        """Start (or lengthen) the pause after the `attempt`-th 429; False: give up instead."""
        from insika_knowledge.queue import backoff_s

        if attempt >= self.attempts:
            return False
        if retry_after_s is not None:
            if retry_after_s > RATE_LIMIT_MAX_WAIT_S:
                return False
            delay = retry_after_s
        else:
            delay = backoff_s(attempt, self.base_s, cap_s=RATE_LIMIT_MAX_WAIT_S)
        with self._lock:
            self._until = max(self._until, time.monotonic() + delay)
        return True


def learn_paced(gate: RateGate, learn: Callable[[], TurnReport]) -> TurnReport:
    """`learn`'s report, tried again while the model answers HTTP 429 (``model_rate_limited``)
    and `gate` allows: after the provider's ``Retry-After``, or its back-off. The last
    report when the gate gives up (its outcome still ``model_rate_limited``).
    """
    attempt = 0
    while True:
        gate.wait()
        attempt += 1
        report = learn()
        if report.outcome != "model_rate_limited" or not gate.pause(attempt, report.retry_after_s):
            return report


def _run_one(memory: Memory, agent: str, config: KnowledgeConfig, model: ConceptModel | None,
             tenant: str, store: object, session: Session, since: datetime | None,
             gate: RateGate) -> SessionStatus:
    started = session_time(session)
    if since is not None and started is not None and started < since:
        return SessionStatus(session.session_id, "before-since")
    if since is not None and started is None and (unread := _unreadable_time(session)) is not None:
        # its date is written but is no date: it may be old, so --since leaves it out, saying so
        return SessionStatus(session.session_id, "undated", detail=f"its start time {unread!r} is no date")
    try:
        conversation = _conversation(session.messages)
        if not any(message_text(m).strip() for m in conversation):
            return SessionStatus(session.session_id, "empty")  # nothing said: nothing to learn, no model call
        concepts = memory.store(tenant)
        previous = concepts.extraction(agent, *stored_ids(concepts, session.session_id, BACKFILL_TURN))
        if previous is not None and previous.outcome == "ok":
            return SessionStatus(session.session_id, "skipped")
        report = learn_paced(gate, lambda: memory.learn_turn(
            agent, config, session_id=session.session_id, turn_id=BACKFILL_TURN,
            messages=conversation, tenant=tenant, model=model,
            withheld=[message_text(m) for m in session.messages if m.get("role") == "system"],
        ))
    except Exception as exc:  # one failing session never stops the others
        return SessionStatus(session.session_id, "error", detail=f"{type(exc).__name__}: {exc}"[:300])
    status = "done" if report.outcome == "ok" else report.outcome
    return SessionStatus(
        session.session_id, status, learned=report.count("learned"),
        confirmed=report.count("confirmed"), merged=report.count("merged"),
        conflicts=report.count("conflict"), dropped=report.dropped, detail=report.detail,
        possible_duplicates=report.count("possible_duplicate"),
        quarantined=report.count("quarantined"), unsupported=report.count("unsupported"),
    )


def _conversation(messages: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    # The system prompt is pack data, not something the conversation taught.
    return [m for m in messages if m.get("role") != "system"]
