"""`ProceduralMemory`: the skill's one entry point for a model request, and its upkeep.

`ProceduralMemory.handle_request` takes a request body (OpenAI chat or Anthropic messages)
and its headers, and returns the body to send upstream (the caller's own object unless
the block was injected) and the `Stage` that reports what happened (None in ``off``).
For a request with a session id it:

1. captures the new messages into the session's step buffer (`capture`);
2. recalls a procedure for the task (`recall`), keeping the one a session was given for
   the rest of the task while it stays recallable;
3. follows the session's new steps through it (`cursor`);
4. renders the block (`render`) and, in ``prod`` or a canary treatment arm, injects it
   (`inject`) when it fits the budget;
5. writes the capture and the stage in one transaction (`insika_knowledge.store.procedures`);
6. on an explicit task outcome, judges the trace, counts it for or against procedures
   (`mine`), and starts a new task in the same session.

It never raises: a malformed body or any failure yields a ``failed`` stage (the reason is
the exception's class name) and the caller's body unchanged. `sweep` flushes sessions
idle for ``idle_flush_s`` (mining those their own verify steps prove), and
`start_sweeper` runs it every ``sweep_interval_s`` on a daemon thread.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from insika_knowledge.errors import StorageBusy
from insika_knowledge.procedure import Procedure
from insika_knowledge.procedures import modes
from insika_knowledge.procedures.capture import Captured, SessionCapture, new_steps
from insika_knowledge.procedures.config import ProceduresConfig
from insika_knowledge.procedures.mining.mine import FAILURE, SUCCESS, Verdict, judge
from insika_knowledge.procedures.mining.scoring import MinedRun, mined_run
from insika_knowledge.procedures.recall.cursor import Cursor
from insika_knowledge.procedures.recall.inject import inject
from insika_knowledge.procedures.recall.recall import Recall, RecallIndex
from insika_knowledge.procedures.recall.render import Block, render
from insika_knowledge.procedures.recall.tokens import TokenCounter, get_counter
from insika_knowledge.procedures.telemetry import (
    COMPLETED,
    FAILED,
    HIT,
    MISS,
    SKIPPED,
    SKIPPED_BUDGET,
    STAGE_NAME,
    Stage,
)
from insika_knowledge.procedures.trace.steps import Step, TraceBuilder, build
from insika_knowledge.procedures.trace.wire import (
    lower_headers,
    session_id,
    skill_override,
    task_outcome,
    tool_names,
)
from insika_knowledge.sessions import Session
from insika_knowledge.store.paths import DEFAULT_TENANT, data_dir, tenant_path
from insika_knowledge.store.procedures import ProcedureStore, SessionRow

log = logging.getLogger(__name__)

#: The ``failed`` stage's reason when a lock stayed busy beyond the request's budget: the
#: request went on unchanged and its capture is left to the session's next request.
BUSY_DEFERRED: Final = "busy_deferred"


def _task_reader(builder: TraceBuilder) -> Callable[[], str]:
    """``builder.task``, read only when called (only a success needs the canonical task)."""
    return lambda: builder.task


@dataclass
class MineReport:
    """What a mining pass did.

    Attributes:
        traces: traces read.
        verdicts: verdict -> traces (``success``, ``failure``, ``unverified``).
        reasons: reason -> traces (see `insika_knowledge.procedures.mining.mine.Verdict`).
        counted: new (procedure, run) pairs (a re-run of the same file counts nothing).
        procedures: procedures in the store afterwards.
    """

    traces: int = 0
    verdicts: dict[str, int] = field(default_factory=dict)
    reasons: dict[str, int] = field(default_factory=dict)
    counted: int = 0
    procedures: int = 0


class ProceduralMemory:
    """Procedural memory over one tenant's database.

    Args:
        store: the tenant's `ProcedureStore`.
        config: the settings (default `ProceduresConfig()`: shadow mode).
        clock: unix seconds now; tests inject one for the idle sweep.
        token_counter: a `TokenCounter` overriding ``config.token_counter``.

    Raises:
        UserError: the token counter cannot be built.
    """

    def __init__(
        self,
        store: ProcedureStore,
        config: ProceduresConfig | None = None,
        *,
        clock: Callable[[], float] = time.time,
        token_counter: TokenCounter | None = None,
    ):
        self.store = store
        self.config = config or ProceduresConfig()
        self.clock = clock
        self.counter = token_counter or get_counter(self.config.token_counter)
        self.index = RecallIndex(self.config.min_confidence, self.config.min_match_score)
        self.capture = SessionCapture(store, self.config.verify_regexes)
        self._generation = 0
        self._blocks: dict[tuple[str, int, int], Block] = {}
        self._lock = threading.RLock()
        self._stop = threading.Event()
        self._sweeper: threading.Thread | None = None

    @classmethod
    def open(
        cls,
        directory: str | os.PathLike[str] | None = None,
        tenant: str = DEFAULT_TENANT,
        config: ProceduresConfig | None = None,
        **kwargs: Any,
    ) -> ProceduralMemory:
        """Open the procedural memory of `tenant` (its database file under the data directory).

        Raises:
            InvalidName: the tenant name is invalid.
        """
        return cls(ProcedureStore(tenant_path(data_dir(directory), tenant)), config, **kwargs)

    # ------------------------------------------------------------------ the request

    def handle_request(
        self, body: dict[str, Any], headers: Mapping[str, str] | None = None, *,
        lock_budget_ms: int | None = None,
    ) -> tuple[dict[str, Any], Stage | None]:
        """Capture, recall and (in prod) inject for one model request. Never raises.

        Args:
            body: the request body (OpenAI chat completions or Anthropic messages); it is
                not modified.
            headers: the request headers (any case): ``x-ace-session``,
                ``x-ace-task-outcome`` / ``x-ace-outcome`` / ``x-ace-task-success``,
                ``x-ace-skills``, ``x-request-id``.
            lock_budget_ms: the longest this call waits for a lock (this skill's, held by
                the sweeper, or the database's, held by another writer), in milliseconds;
                None = as long as it takes. Beyond it the request goes on unchanged with a
                ``failed`` stage whose reason is `BUSY_DEFERRED`: nothing of the request
                was captured, and the session's next request captures it (a request
                carries the conversation so far).

        Returns:
            ``(body to send upstream, stage)``: the body is the caller's object unless the
            block went in; the stage is None when the skill is off for this request.
        """
        if lock_budget_ms is None:
            return self._handle_request(body, headers, None)
        with self.store.busy_budget(lock_budget_ms):
            return self._handle_request(body, headers, lock_budget_ms / 1000)

    def _handle_request(
        self, body: dict[str, Any], headers: Mapping[str, str] | None, wait_s: float | None,
    ) -> tuple[dict[str, Any], Stage | None]:
        started = time.perf_counter()
        mode_name = str(self.config.parsed_mode)
        try:
            lowered = lower_headers(headers)
            mode = self.config.parsed_mode
            override = skill_override(lowered, STAGE_NAME)
            if override is not None:
                mode = modes.parse_mode(override, where="header x-ace-skills")
            mode_name = str(mode)
            if not isinstance(body, Mapping):
                raise TypeError("request body must be a JSON object")
            sid = session_id(body, lowered)
            request = "" if sid or mode.name != modes.CANARY else modes.request_key(body, lowered)
            arm = modes.arm(mode, sid, request)
            if arm is None:
                return body, None
            mode_name = arm.mode
            if not self._lock.acquire(timeout=-1 if wait_s is None else wait_s):
                raise StorageBusy(f"procedural memory was busy (sweeping) beyond {wait_s} s",
                                  path=str(self.store.path))
            try:
                return self._handle(body, lowered, sid, arm, started)
            finally:
                self._lock.release()
        except Exception as exc:  # the request must go on without the skill
            log.debug("procedural memory failed on a request", exc_info=True)
            stage = Stage(
                action=FAILED,
                mode=mode_name,  # the arm when known, else the mode in force ("canary:N")
                reason=BUSY_DEFERRED if isinstance(exc, StorageBusy) else type(exc).__name__,
                max_injection_tokens=self.config.max_injection_tokens,
                duration_ms=(time.perf_counter() - started) * 1000,
            )
            try:
                self.store.record_stage(stage.row())
            except Exception:
                log.warning("could not record a failed procedural-memory stage", exc_info=True)
            return body, stage

    def _handle(
        self,
        body: Mapping[str, Any],
        headers: Mapping[str, str],
        sid: str | None,
        arm: modes.Arm,
        started: float,
    ) -> tuple[dict[str, Any], Stage]:
        stage = Stage(
            action=SKIPPED,
            mode=arm.mode,
            max_injection_tokens=self.config.max_injection_tokens,
            canary_bucket=arm.canary_bucket,
            canary_percent=arm.canary_percent,
            canary_keyed_by=arm.canary_keyed_by,
            session_scoped=sid is not None,
            session_id=sid,
        )
        original: dict[str, Any] = body if isinstance(body, dict) else dict(body)
        if arm.mode == modes.CANARY_CONTROL or sid is None:
            stage.reason = (
                modes.CANARY_CONTROL if arm.mode == modes.CANARY_CONTROL else "no_session"
            )
            stage.duration_ms = (time.perf_counter() - started) * 1000
            self.store.record_stage(stage.row())
            return original, stage
        try:
            return self._capture_and_recall(body, headers, sid, arm, started, stage, original)
        except BaseException:
            self.capture.forget(sid)  # its cached buffer may hold what was not written
            raise

    def _capture_and_recall(
        self,
        body: Mapping[str, Any],
        headers: Mapping[str, str],
        sid: str,
        arm: modes.Arm,
        started: float,
        stage: Stage,
        original: dict[str, Any],
    ) -> tuple[dict[str, Any], Stage]:
        outcome = task_outcome(headers)
        tools = tool_names(body)
        captured = self.capture.observe(sid, body.get("messages"), tools, self.clock())
        row = captured.row
        stage.captured_turns = row.turns
        recall_started = time.perf_counter()
        self.refresh()
        recall = self.index.recall(row.task, tools, prefer=row.procedure_id)
        stage.recall_ms = (time.perf_counter() - recall_started) * 1000
        stage.matcher, stage.match_score = recall.matcher, round(recall.score, 4)
        result = original
        if recall.procedure is None:
            stage.action = MISS
            if row.procedure_id is not None:  # the pinned procedure stopped being recallable
                row.procedure_id = None
        else:
            result = self._recalled(original, recall, captured, arm, stage)
        stage.duration_ms = (time.perf_counter() - started) * 1000
        self.store.save_turn(row, captured.changed_steps(), stage.row())
        self.capture.remember(captured)
        if outcome is not None:
            self._finish(captured, outcome)
        return result, stage

    def _recalled(
        self, body: dict[str, Any], recall: Recall, captured: Captured, arm: modes.Arm, stage: Stage
    ) -> dict[str, Any]:
        procedure = recall.procedure
        assert procedure is not None
        row = captured.row
        block = self._block(procedure)
        stage.procedure_id = procedure.id
        stage.path_confidence = round(procedure.confidence, 4)
        stage.composed_hops = 0
        stage.block_tokens = block.tokens
        if not block.fits:
            stage.action = SKIPPED_BUDGET
            return body
        if row.procedure_id != procedure.id:
            row.procedure_id = procedure.id
            row.cursor_step = row.matched_steps = row.diverged_steps = 0
        cursor = Cursor(row.cursor_step, row.matched_steps, row.diverged_steps)
        steps, row.tracked_upto = new_steps(captured.builder.steps, row.tracked_upto)
        matched, diverged = cursor.advance(procedure, steps)
        row.cursor_step, row.matched_steps, row.diverged_steps = (
            cursor.step,
            cursor.matched,
            cursor.diverged,
        )
        stage.matched_steps, stage.diverged_steps = matched, diverged
        stage.cursor_step = cursor.step
        stage.steps_remaining = cursor.remaining(procedure)
        stage.adherence_delta = matched - diverged
        stage.divergence = diverged > 0
        stage.action = COMPLETED if stage.steps_remaining == 0 else HIT
        if not arm.injects:
            stage.would_inject_tokens = block.tokens
            return body
        injection = inject(body, block.text)
        stage.injected = injection.injected
        stage.injected_tokens = block.tokens if injection.injected else 0
        stage.reason = injection.reason
        return injection.body

    def _block(self, procedure: Procedure) -> Block:
        key = (procedure.id, procedure.successes, procedure.failures)
        block = self._blocks.get(key)
        if block is None:
            if len(self._blocks) > 4096:
                self._blocks.clear()
            block = self._blocks[key] = render(
                procedure, self.counter, self.config.max_injection_tokens
            )
        return block

    # ------------------------------------------------------------------ tasks and sessions

    def _finish(
        self, captured: Captured, outcome: str | None, *, keep: bool = True, if_unchanged: bool = False,
    ) -> Verdict | None:
        row, builder = captured.row, captured.builder
        verdict = judge(builder.steps, outcome, builder.given)
        runs = [r for r in (mined_run(captured.run_id(), verdict, builder.task),) if r is not None]
        if (
            verdict.verdict != SUCCESS
            and outcome == FAILURE
            and row.procedure_id
            and row.matched_steps > 0
            and row.procedure_id not in verdict.keys
        ):
            runs.append(MinedRun(captured.run_id(), FAILURE, (row.procedure_id,)))
        counted = self.store.finish_task(row, runs, keep=keep, if_unchanged=if_unchanged)
        self.capture.forget(row.session_id)
        return None if counted is None else verdict

    def close_session(self, session_id: str, outcome: str | None) -> Verdict | None:
        """Close the current task of `session_id` with `outcome` and mine it.

        Args:
            session_id: the session.
            outcome: ``success``, ``failure`` or None (verify steps alone decide).

        Returns:
            The trace's verdict, or None when nothing was captured for the session.
        """
        with self._lock:
            row = self.store.load_session(session_id)
            if row is None:
                return None
            return self._finish(Captured(row, self.capture.builder(row), set()), outcome)

    def sweep(self, now: float | None = None) -> list[str]:
        """Flush and mine every session idle for ``idle_flush_s`` seconds.

        Args:
            now: unix seconds (default: the clock).

        Returns:
            The flushed session ids.
        """
        now = self.clock() if now is None else now
        flushed = []
        with self._lock:
            for sid in self.store.idle_sessions(now - self.config.idle_flush_s):
                row = self.store.load_session(sid)
                if row is None:
                    continue
                verdict = self._finish(Captured(row, self.capture.builder(row), set()), None,
                                       keep=False, if_unchanged=True)
                if verdict is not None:  # None: a request arrived meanwhile; not idle after all
                    flushed.append(sid)
        return flushed

    def start_sweeper(self) -> None:
        """Run `sweep` every ``sweep_interval_s`` seconds on a daemon thread (idempotent)."""
        if self._sweeper is not None and self._sweeper.is_alive():
            return
        self._stop.clear()

        def loop() -> None:
            while not self._stop.wait(self.config.sweep_interval_s):
                try:
                    self.sweep()
                except Exception:
                    log.warning("procedural-memory sweep failed", exc_info=True)

        self._sweeper = threading.Thread(target=loop, name="insika-procedures-sweep", daemon=True)
        self._sweeper.start()

    def close(self) -> None:
        """Stop the sweeper and close the store."""
        self._stop.set()
        if self._sweeper is not None:
            self._sweeper.join(timeout=5)
            self._sweeper = None
        self.store.close()

    def __enter__(self) -> ProceduralMemory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ recall and mining

    def refresh(self) -> None:
        """Bring the recall index up to date with the store (reads only what changed)."""
        generation = self.store.generation()
        if generation != self._generation:
            self._generation, changed = self.store.procedures_since(self._generation)
            self.index.update(changed)

    def recall(self, task: str, tools: Iterable[str] | None = None) -> Recall:
        """Recall a procedure for `task` (no capture, no telemetry).

        Args:
            task: the task text.
            tools: the tools available; None skips the tool check.
        """
        with self._lock:
            self.refresh()
            return self.index.recall(task, None if tools is None else tuple(tools))

    def mine_sessions(self, sessions: Iterable[Session]) -> MineReport:
        """Mine stored sessions (normalised JSONL, `insika_knowledge.sessions.read_sessions`).

        Each session is one trace with its ``outcome`` label; its id is the run id, so
        mining the same file again counts nothing twice.

        Raises:
            UserError: a session's messages are malformed.
        """
        report = MineReport()
        runs: list[MinedRun] = []
        verdicts: dict[str, int] = {}
        reasons: dict[str, int] = {}
        for session in sessions:
            builder = build(session.messages, self.config.verify_regexes)
            outcome = session.outcome if session.outcome in (SUCCESS, FAILURE) else None
            verdict = judge(builder.steps, outcome, builder.given)
            verdicts[verdict.verdict] = verdicts.get(verdict.verdict, 0) + 1
            reasons[verdict.reason] = reasons.get(verdict.reason, 0) + 1
            run = mined_run(session.session_id, verdict, _task_reader(builder))
            if run is not None:
                runs.append(run)
            report.traces += 1
        with self._lock:
            report.counted = self.store.record_runs(runs)
        report.verdicts, report.reasons = verdicts, reasons
        report.procedures = self.store.count()
        return report

    def steps_of(self, messages: Any) -> TraceBuilder:
        """The steps of a message list, as this memory reads them (for tools and tests)."""
        return build(messages, self.config.verify_regexes)

    def session_steps(self, session_id: str) -> list[Step]:
        """The captured steps of a session's current task."""
        return [Step.from_json(s) for s in self.store.session_steps(session_id)]

    def session(self, session_id: str) -> SessionRow | None:
        """The capture state of a session, or None."""
        return self.store.load_session(session_id)
