"""`ProceduralMemory`: the skill's one entry point for a model request, and its upkeep.

`ProceduralMemory.handle_request` takes a request body (OpenAI chat or Anthropic messages)
and its headers, and returns the body to send upstream (the caller's own object unless
the block was injected) and the `Stage` that reports what happened (None in ``off``).
For a request with a session id it:

1. captures the new messages into the session's step buffer (`capture`);
2. recalls: on each new user message before the session's first write, the write
   operation (or chain) the nearest past tasks vote for (`recall.match`); otherwise a shell
   procedure for the task and the latest user message (`recall`); a session keeps what it
   was given for the rest of the task while it stays recallable;
3. follows the session's new steps through it (`cursor`);
4. renders the block (`render`) and, in ``prod`` or a canary treatment arm, places it
   when it fits the budget; once a session got a block, every later request carries the
   identical bytes at the identical place (`insika_knowledge.wire.placement`), so the
   upstream prefix stays byte-stable although the client never sends the block back;
5. writes the capture and the stage in one transaction (`insika_knowledge.store.procedure_store`);
6. on an explicit task outcome, judges the trace, counts it for or against procedures
   (`mine`; a tool-calling run in its task's record, `mining.operations`, where a recall the
   run contradicted counts against that operation), and starts a new task in the same
   session.

``x-ace-skills`` can only switch the skill off for a request (``skill_knowledge_graph=off``
or ``*=off``, names in any case); ``on`` keeps the deployment's mode; any other value (a
client asking for ``prod`` on a shadow deployment, a typo) is ignored with a note on the
stage. An outcome header that is no outcome is noted on the stage; capture and recall go on.

It never raises: a malformed body or any failure yields a ``failed`` stage (the reason is
the exception's class name) and the caller's body unchanged. `sweep` flushes sessions
idle for ``idle_flush_s`` (mining those their own verify steps prove), and
`start_sweeper` runs it every ``sweep_interval_s`` on a daemon thread.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from insika_knowledge.errors import StorageBusy, StorageUnavailable, UserError, check_types
from insika_knowledge.ids import DEFAULT_TENANT
from insika_knowledge.privacy.pseudonyms import pseudonymous
from insika_knowledge.procedure import Procedure
from insika_knowledge.procedures import modes
from insika_knowledge.procedures.capture import Captured, SessionCapture, new_steps
from insika_knowledge.procedures.config import ProceduresConfig
from insika_knowledge.procedures.mining import operations
from insika_knowledge.procedures.mining.mine import FAILURE, SUCCESS, Verdict, judge
from insika_knowledge.procedures.mining.scoring import MinedRun, OperationRun, mined_run
from insika_knowledge.procedures.recall.cursor import Cursor
from insika_knowledge.procedures.recall.inject import BLOCK, anchor_json, stored_anchor
from insika_knowledge.procedures.recall.match import MatchSettings
from insika_knowledge.procedures.recall.recall import Recall, RecallIndex, query_terms
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
from insika_knowledge.procedures.trace.steps import TOOL, Step, TraceBuilder, build
from insika_knowledge.sessions import Session
from insika_knowledge.store import open_procedure_store
from insika_knowledge.store.base import ProcedureStorage
from insika_knowledge.store.procedure_records import SessionRow
from insika_knowledge.wire.headers import (
    SKILLS_HEADER,
    lower_headers,
    read_outcome,
    session_id,
    skill_override,
)
from insika_knowledge.wire.messages import tool_names
from insika_knowledge.wire.placement import Anchor, carry, place

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
        repeated: sessions whose id an earlier session of the same pass had (a run counts
            once: only the first is mined).
        unknown_outcomes: outcome labels other than ``success`` and ``failure`` -> sessions
            (mined as unlabelled: ``"Success"``, ``"sucess"``).
    """

    traces: int = 0
    verdicts: dict[str, int] = field(default_factory=dict)
    reasons: dict[str, int] = field(default_factory=dict)
    counted: int = 0
    procedures: int = 0
    repeated: int = 0
    unknown_outcomes: dict[str, int] = field(default_factory=dict)


def task_key_of(metadata: Mapping[str, Any]) -> str | None:
    """The task a captured session names (``metadata.task_id``), scoped by its dataset and
    domain when it names them (``tau2_bench/retail/0``): task ``0`` of the airline file and
    task ``0`` of the retail file are two tasks in one tenant. None without a task id.
    """
    task = metadata.get("task_id")
    if task is None:
        return None
    scope = [str(metadata[k]) for k in ("dataset", "domain") if isinstance(metadata.get(k), (str, int))]
    return "/".join([*scope, str(task)])


class ProceduralMemory:
    """Procedural memory over one tenant's database.

    Args:
        store: the tenant's procedure store (SQLite `ProcedureStore` or PostgreSQL).
        config: the settings (default `ProceduresConfig()`: shadow mode), or a mapping of
            them (`ProceduresConfig.from_mapping`).
        clock: unix seconds now; tests inject one for the idle sweep.
        token_counter: a `TokenCounter` overriding ``config.token_counter``.

    Raises:
        UserError: the token counter cannot be built, or `config` is neither (a
            `ConfigError` names the setting).
    """

    def __init__(
        self,
        store: ProcedureStorage,
        config: ProceduresConfig | None = None,
        *,
        clock: Callable[[], float] = time.time,
        token_counter: TokenCounter | None = None,
    ):
        self.store = store
        self.config = ProceduresConfig.given(config, "ProceduralMemory()") or ProceduresConfig()
        self._closed = False
        self.clock = clock
        self.counter = token_counter or get_counter(self.config.token_counter)
        self.index = RecallIndex(
            self.config.min_confidence,
            self.config.min_match_score,
            match=MatchSettings(
                self.config.neighbours, self.config.min_similarity, self.config.min_agreement, self.config.margin
            ),
            environment_runs=self.config.environment_runs,
        )
        self.identity = operations.TaskIdentity()
        self.capture = SessionCapture(
            store, self.config.verify_regexes, verify_scripts=self.config.verify_scripts
        )
        self._generation = 0
        self._blocks: dict[tuple[tuple[str, int, int, int, str], ...], Block] = {}
        self._carried_tokens: dict[str, int] = {}
        self._lock = threading.RLock()
        self._stop = threading.Event()
        self._sweeper: threading.Thread | None = None

    @classmethod
    def open(
        cls,
        directory: str | os.PathLike[str] | None = None,
        tenant: str = DEFAULT_TENANT,
        config: ProceduresConfig | None = None,
        *,
        database: str | None = None,
        busy_timeout_ms: int | None = None,
        **kwargs: Any,
    ) -> ProceduralMemory:
        """Open the procedural memory of `tenant`: its database file under the data directory,
        or its schema of the PostgreSQL database a ``postgresql://`` `database` URL (or
        ``$INSIKA_DATABASE_URL``) names.

        Raises:
            InvalidName: the tenant name is invalid.
            UserError: PostgreSQL is chosen but unusable (missing extra, unreachable).
        """
        store = open_procedure_store(directory, tenant, database=database, busy_timeout_ms=busy_timeout_ms)
        return cls(store, config, **kwargs)

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
        if self._closed:  # the skill is off for good: nothing captured, nothing recalled
            return body, None
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
            notes: list[str] = []
            override = skill_override(lowered, STAGE_NAME)
            if override is not None:
                value = override.lower()
                if value == modes.OFF:
                    mode = modes.Mode(modes.OFF)
                elif value not in ("on", str(mode)):
                    notes.append(
                        f"header {SKILLS_HEADER}: {override[:40]!r} ignored: the header can "
                        "only switch the skill off"
                    )
            mode_name = str(mode)
            if not isinstance(body, Mapping):
                raise TypeError("request body must be a JSON object")
            sid = self._stored(session_id(body, lowered))
            request = "" if sid or mode.name != modes.CANARY else modes.request_key(body, lowered)
            arm = modes.arm(mode, sid, request)
            if arm is None:
                return body, None
            mode_name = arm.mode
            if not self._lock.acquire(timeout=-1 if wait_s is None else wait_s):
                raise StorageBusy(f"procedural memory was busy (sweeping) beyond {wait_s} s",
                                  path=self.store.location)
            try:
                return self._handle(body, lowered, sid, arm, started, notes)
            finally:
                self._lock.release()
        except Exception as exc:  # the request must go on without the skill
            log.debug("procedural memory failed on a request", exc_info=True)
            stage = Stage(
                action=FAILED,
                mode=mode_name,  # the arm when known, else the mode in force ("canary:N")
                reason=BUSY_DEFERRED if isinstance(exc, StorageBusy) else failure_reason(exc),
                max_injection_tokens=self.config.max_injection_tokens,
                duration_ms=(time.perf_counter() - started) * 1000,
            )
            if not isinstance(exc, (StorageBusy, StorageUnavailable)):  # busy or down: writing it would fail too
                try:
                    self.store.record_stage(stage.row())
                except Exception as failed:  # one line; the traceback at debug level
                    log.warning("could not record a failed procedural-memory stage: %s", failed)
                    log.debug("recording the stage failed", exc_info=True)
            return body, stage

    def _handle(
        self,
        body: Mapping[str, Any],
        headers: Mapping[str, str],
        sid: str | None,
        arm: modes.Arm,
        started: float,
        notes: list[str],
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
            notes=notes,
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
        outcome, problem = read_outcome(headers)
        if problem is not None:
            stage.notes.append(problem)
        tools = tool_names(body)
        captured = self.capture.observe(sid, body.get("messages"), tools, self.clock())
        row = captured.row
        stage.captured_turns = row.turns
        recall_started = time.perf_counter()
        self.refresh()
        anchor = stored_anchor(row.anchor) if row.block else None
        prefer = row.procedure_id or (anchor.label if anchor is not None else None)
        builder = captured.builder
        # The task as the process read it (unmasked: its directories name the environment),
        # else the stored, masked one (after a restart).
        task = builder.task or row.task
        if builder.query[0] != (task, builder.latest_user):
            key = (task, builder.latest_user)
            builder.query = (key, query_terms(*key, task_canonical=True))
        recall = self.index.recall_terms(builder.query[1], tools, prefer=prefer)
        if not (prefer and recall.key == prefer):
            recall = self._recall_operation(builder, tools) or recall
        if anchor is not None and recall.key != anchor.label:
            # The session carries a block: it keeps that block's procedure.
            recall = self._known_chain(anchor.label, recall)
        stage.recall_ms = (time.perf_counter() - recall_started) * 1000
        stage.matcher, stage.match_score = recall.matcher, round(recall.score, 4)
        result = original
        if recall.procedure is None:
            stage.action = MISS
            if row.procedure_id is not None:  # the pinned procedure stopped being recallable
                row.procedure_id = None
            if anchor is not None and arm.injects:
                result = self._carry(original, row, anchor, stage)
        else:
            result = self._recalled(original, recall, captured, arm, stage)
        stage.duration_ms = (time.perf_counter() - started) * 1000
        self.store.save_turn(row, captured.changed_steps(), stage.row())
        self.capture.remember(captured)
        if outcome is not None:
            self._finish(captured, outcome)
        return result, stage

    def _recall_operation(self, builder: TraceBuilder, tools: Sequence[str]) -> Recall | None:
        """The operation the session's new user messages ask for, until its first write."""
        if builder.wrote:
            return None
        asked = builder.asked
        while builder.recalled_upto < len(asked):
            i = builder.recalled_upto
            builder.recalled_upto += 1
            found, _ = self.index.recall_operation(asked[i], tools, before=asked[i - 1] if i else "")
            if found.hit:
                return found
        return None

    def _known_chain(self, key: str, recall: Recall) -> Recall:
        """The chain `key` names, from the latest known versions (recallable or not)."""
        chain = tuple(p for p in (self.index.get(pid) for pid in key.split("+")) if p)
        if len(chain) != len(key.split("+")):
            return recall
        return Recall(chain, recall.score if recall.key == key else 0.0, recall.matcher)

    def _recalled(
        self, body: dict[str, Any], recall: Recall, captured: Captured, arm: modes.Arm, stage: Stage
    ) -> dict[str, Any]:
        chain = recall.chain
        row = captured.row
        key = recall.key
        block = self._block(chain)
        stage.procedure_id = key
        stage.path_confidence = round(recall.path_confidence, 4)
        stage.composed_hops = recall.hops
        stage.block_tokens = self._carried_size(row.block) if row.block else block.tokens
        if not block.fits and not row.block:
            stage.action = SKIPPED_BUDGET
            return body
        if row.procedure_id != key:
            row.procedure_id = key
            row.cursor_step = row.matched_steps = row.diverged_steps = 0
        steps = [step for p in chain for step in p.steps]
        followed = dataclasses.replace(chain[0], steps=tuple(steps))
        cursor = Cursor(row.cursor_step, row.matched_steps, row.diverged_steps)
        new, row.tracked_upto = new_steps(captured.builder.steps, row.tracked_upto)
        matched, diverged = cursor.advance(followed, new)
        row.cursor_step, row.matched_steps, row.diverged_steps = (
            cursor.step,
            cursor.matched,
            cursor.diverged,
        )
        stage.matched_steps, stage.diverged_steps = matched, diverged
        stage.cursor_step = cursor.step
        stage.steps_remaining = cursor.remaining(followed)
        stage.adherence_delta = matched - diverged
        stage.divergence = diverged > 0
        stage.action = COMPLETED if stage.steps_remaining == 0 else HIT
        if not arm.injects:
            stage.would_inject_tokens = block.tokens
            return body
        anchor = stored_anchor(row.anchor) if row.block else None
        if anchor is not None:
            carried = self._carry(body, row, anchor, stage)
            if stage.injected:
                return carried
        placement = place(body, block.text, BLOCK, label=key)
        stage.injected = placement.placed
        stage.injected_tokens = block.tokens if placement.placed else 0
        stage.reason = placement.reason
        if placement.placed and placement.anchor is not None:
            row.block, row.anchor = block.text, anchor_json(placement.anchor)
            stage.block_tokens = block.tokens
        return placement.body

    def _carry(
        self, body: dict[str, Any], row: SessionRow, anchor: Anchor, stage: Stage
    ) -> dict[str, Any]:
        """Put the session's block back at its anchor; a lost anchor clears it."""
        placement = carry(body, row.block, anchor, BLOCK)
        if not placement.placed:
            row.block, row.anchor = "", ""
            stage.reason = placement.reason
            return body
        tokens = self._carried_size(row.block)
        stage.injected, stage.carried = True, True
        stage.injected_tokens = stage.block_tokens = tokens
        return placement.body

    def _carried_size(self, text: str) -> int:
        tokens = self._carried_tokens.get(text)
        if tokens is None:
            if len(self._carried_tokens) > 4096:
                self._carried_tokens.clear()
            tokens = self._carried_tokens[text] = self.counter.count(text)
        return tokens

    def _block(self, chain: tuple[Procedure, ...]) -> Block:
        # keyed by what the block shows: counts, and the last change (steps, notes)
        key = tuple((p.id, p.successes, p.failures, p.trigger_runs, p.updated_at) for p in chain)
        block = self._blocks.get(key)
        if block is None:
            if len(self._blocks) > 4096:
                self._blocks.clear()
            block = self._blocks[key] = render(
                chain, self.counter, self.config.max_injection_tokens
            )
        return block

    # ------------------------------------------------------------------ tasks and sessions

    def _finish(
        self, captured: Captured, outcome: str | None, *, keep: bool = True, if_unchanged: bool = False,
    ) -> Verdict | None:
        row, builder = captured.row, captured.builder
        verdict = judge(builder.steps, outcome, builder.given)
        runs: list[MinedRun | OperationRun] = [
            r
            for r in (mined_run(captured.run_id(), verdict, builder.task, outcome),)
            if r is not None
        ]
        recalled = self._recalled_operations(row.procedure_id)
        if (
            verdict.verdict != SUCCESS
            and outcome == FAILURE
            and row.procedure_id
            and not recalled
            and row.matched_steps > 0
            and row.procedure_id not in verdict.keys
        ):
            runs.append(MinedRun(captured.run_id(), FAILURE, (row.procedure_id,)))
        if verdict.kind == TOOL and outcome in (SUCCESS, FAILURE):
            runs.append(self._operation_run(captured.run_id(), builder, outcome, recalled))
        counted = self.store.finish_task(row, runs, keep=keep, if_unchanged=if_unchanged)
        self.capture.forget(row.session_id)
        return None if counted is None else verdict

    def _recalled_operations(self, chain: str | None) -> tuple[str, ...]:
        """The write operations of the operation procedures a session was given."""
        found = (self.index.get(pid) for pid in (chain or "").split("+") if pid)
        return tuple(op for op in (operations.operation_of(p) for p in found if p) if op)

    def _digest_key(self) -> bytes:
        if not self.index.key:
            self.index.set_key(self.store.digest_key())
        return self.index.key

    def _operation_run(
        self, run_id: str, builder: TraceBuilder, outcome: str, recalled: tuple[str, ...] = (),
        *, task_key: str | None = None,
    ) -> OperationRun:
        """The `OperationRun` of a tool-calling trace: its task told by `task_key`, else its first message."""
        run = operations.run_operations(builder)
        first, asked = operations.run_digests(self._digest_key(), run)
        if task_key is not None:
            task_id = operations.task_id_of("key\x1e" + task_key)
        else:
            task_id = self.identity.resolve(first) or operations.task_id_of(run_id)
        self.identity.note(task_id, first)
        # the sample is computed only for a task that has none yet (`OperationRun.record`)
        return OperationRun(run_id, task_id, outcome, run, first, asked, lambda: operations.sample_of(run), recalled)

    def close_session(self, session_id: str, outcome: str | None) -> Verdict | None:
        """Close the current task of `session_id` with `outcome` and mine it.

        Args:
            session_id: the session.
            outcome: ``success``, ``failure`` or None (verify steps alone decide).

        Returns:
            The trace's verdict, or None when nothing was captured for the session.

        Raises:
            UserError: `outcome` is neither None nor exactly ``success`` or ``failure``
                (a misspelt label would close the task unlabelled and lose the run's outcome).
        """
        self._check_open()
        check_types("close_session()", session_id=(session_id, str))
        if outcome is not None and outcome not in (SUCCESS, FAILURE):
            near = f" (did you mean {str(outcome).strip().lower()!r}?)" \
                if isinstance(outcome, str) and outcome.strip().lower() in (SUCCESS, FAILURE) else ""
            raise UserError(f"close_session(): outcome {outcome!r} is none of 'success', 'failure' or None{near}")
        with self._lock:
            row = self.store.load_session(self._stored(session_id) or session_id)
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
        self._check_open()
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
        """Stop the sweeper and close the store (again: nothing). Afterwards `handle_request`
        passes every request on unchanged, as with the skill off, and the other calls raise
        `UserError`.
        """
        self._closed = True
        self._stop.set()
        if self._sweeper is not None:
            self._sweeper.join(timeout=5)
            self._sweeper = None
        self.store.close()

    @property
    def closed(self) -> bool:
        """True once `close` was called."""
        return self._closed

    def _check_open(self) -> None:
        if self._closed:
            raise UserError("this procedural memory is closed: open a new one (nothing was read or written)")

    def __enter__(self) -> ProceduralMemory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ recall and mining

    def refresh(self) -> None:
        """Bring the recall index up to date with the store (reads only what changed)."""
        generation = self.store.generation()
        if generation != self._generation:
            previous = self._generation
            self._digest_key()
            self._generation, changed = self.store.procedures_since(previous)
            self.index.update_population(self.store.population_since(previous))
            self.index.update(changed)
            tasks = self.store.tasks_since(previous)
            self.index.update_tasks(tasks)
            for task in tasks:
                self.identity.add(task)

    def recall(self, task: str, tools: Iterable[str] | None = None, *, latest: str = "") -> Recall:
        """Recall a procedure for `task` (no capture, no telemetry).

        The write operation the message asks for (`latest`, else `task`, with the message
        before it as context) when the past tasks' vote gives one, else a shell procedure
        for the task and the latest message; on a miss, ``abstained`` says why the vote gave
        nothing.

        Args:
            task: the task text (the first user message).
            tools: the tools available; None skips the tool check.
            latest: the latest user message, if any.
        """
        self._check_open()
        check_types("recall()", task=(task, str), latest=(latest, str),
                    tools=(tools, (list, tuple, set, frozenset, type(None)), "a list of tool names or None"))
        offered = None if tools is None else tuple(tools)
        with self._lock:
            self.refresh()
            found, decision = self.index.recall_operation(latest or task, offered, before=task if latest else "")
            if found.hit:
                return found
            shell = self.index.recall(task, offered, latest=latest)
            if shell.hit:
                return shell
            matcher = found.matcher if decision.neighbours else shell.matcher  # the past tasks' vote abstained
            return dataclasses.replace(shell, abstained=decision.reason, matcher=matcher)

    def mine_sessions(self, sessions: Iterable[Session]) -> MineReport:
        """Mine stored sessions (normalised JSONL, `insika_knowledge.sessions.read_sessions`).

        Each session is one trace with its ``outcome`` label; its id is the run id, so
        mining the same file again counts nothing twice.

        Raises:
            UserError: a session's messages are malformed.
        """
        self._check_open()
        report = MineReport()
        runs: list[MinedRun | OperationRun] = []
        verdicts: dict[str, int] = {}
        reasons: dict[str, int] = {}
        with self._lock:
            self.refresh()  # the tasks already stored, for telling which task a run belongs to
        seen: set[str] = set()
        for session in sessions:
            if session.session_id in seen:
                report.repeated += 1
                continue
            seen.add(session.session_id)
            builder = self.steps_of(session.messages)
            outcome = session.outcome if session.outcome in (SUCCESS, FAILURE) else None
            if session.outcome is not None and outcome is None:
                label = str(session.outcome)[:40]
                report.unknown_outcomes[label] = report.unknown_outcomes.get(label, 0) + 1
            verdict = judge(builder.steps, outcome, builder.given)
            verdicts[verdict.verdict] = verdicts.get(verdict.verdict, 0) + 1
            reasons[verdict.reason] = reasons.get(verdict.reason, 0) + 1
            run = mined_run(session.session_id, verdict, _task_reader(builder), outcome)
            if run is not None:
                runs.append(run)
            if verdict.kind == TOOL and outcome is not None:
                runs.append(self._operation_run(session.session_id, builder, outcome,
                                                task_key=task_key_of(session.metadata)))
            report.traces += 1
        with self._lock:
            report.counted = self.store.record_runs(runs)
        report.verdicts, report.reasons = verdicts, reasons
        report.procedures = self.store.count()
        return report

    def steps_of(self, messages: Any) -> TraceBuilder:
        """The steps of a message list, as this memory reads them (for tools and tests)."""
        return build(
            messages, self.config.verify_regexes, verify_scripts=self.config.verify_scripts
        )

    def session_steps(self, session_id: str) -> list[Step]:
        """The captured steps of a session's current task."""
        return [Step.from_json(s) for s in self.store.session_steps(self._stored(session_id) or session_id)]

    def session(self, session_id: str) -> SessionRow | None:
        """The capture state of a session, or None."""
        return self.store.load_session(self._stored(session_id) or session_id)

    def _stored(self, session_id: str | None) -> str | None:
        """`session_id` as the store keeps it: an id holding personal data (a customer's
        number or e-mail) as its pseudonym under the database's key
        (`insika_knowledge.privacy.pseudonyms`); None for None.
        """
        return pseudonymous(session_id, self.store.digest_key()) if session_id else session_id


#: Characters of a failure's message kept in a stage's reason.
REASON_CHARS: Final = 200


def failure_reason(exc: BaseException) -> str:
    """A failed stage's reason: the class name, and for a request the library refused
    (`UserError`) what was wrong with it, on one line ("UserError: messages must be a
    list"); other exceptions' messages may carry request data and stay out.
    """
    if isinstance(exc, UserError):
        return f"{type(exc).__name__}: {' '.join(str(exc).split())}"[:REASON_CHARS]
    return type(exc).__name__
