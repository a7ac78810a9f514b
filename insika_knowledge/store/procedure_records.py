"""The procedure store's records: rows to procedures, capture sessions, and what counts a run.

Both procedure stores (`insika_knowledge.store.sqlite.procedures.ProcedureStore` on SQLite,
`insika_knowledge.store.postgres.procedures.PostgresProcedureStore`) read and write these rows
through `insika_knowledge.store.procedure_store.ProcedureMethods`, written once.

The store only reads and writes rows. How a judged run changes a procedure (which ids it
counts for, successes, failures, triggers) is the caller's: a `CountedRun` applies its
rules to the `ProcedureRows` of an open transaction
(`insika_knowledge.procedures.mining.scoring`).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from typing import Any, Final, Protocol

from insika_knowledge.procedure import Procedure, ProcedureStep, TaskRecord

PROC_COLUMNS: Final = (
    "id, kind, steps, tools, triggers, trigger_runs, successes, failures, sample_task, "
    "created_at, updated_at, scope"
)
#: Rows that are listed: the procedures two successful runs (tasks, for an operation) share
#: (`Procedure.recurs`; one run's steps, a whole short run's included, are that run's).
RECURS: Final = "successes >= 2"
#: The ``procedure_tasks`` columns a `TaskRecord` is read from.
TASK_COLUMNS: Final = "id, record, created_at, updated_at"
SESSION_COLUMNS: Final = (
    "session_id, run, messages_seen, turns, task, given, tools, procedure_id, cursor_step, "
    "matched_steps, diverged_steps, tracked_upto, first_turn_at, last_turn_at, block, anchor"
)
#: The ``procedure_stages`` columns, in order (a stage's keys: `insika_knowledge.procedures.telemetry`).
STAGE_COLUMNS: Final = tuple(
    "recorded_at session_id mode action reason injected injected_tokens would_inject_tokens block_tokens "
    "max_injection_tokens matcher match_score procedure_id path_confidence composed_hops cursor_step "
    "steps_remaining adherence_delta divergence matched_steps diverged_steps canary_bucket canary_percent "
    "canary_keyed_by session_scoped captured_turns duration_ms skill_attrs notes".split()
)


def procedure_of(row: tuple[Any, ...]) -> Procedure:
    """A `Procedure` from the `PROC_COLUMNS` of one ``procedures`` row."""
    (
        pid,
        kind,
        steps,
        tools,
        triggers,
        trigger_runs,
        successes,
        failures,
        sample_task,
        created_at,
        updated_at,
        scope,
    ) = row
    return Procedure(
        id=pid,
        kind=kind,
        steps=tuple(ProcedureStep.from_json(s) for s in json.loads(steps)),
        tools=tuple(json.loads(tools)),
        triggers=json.loads(triggers),
        trigger_runs=int(trigger_runs),
        successes=int(successes),
        failures=int(failures),
        sample_task=sample_task,
        created_at=created_at,
        updated_at=updated_at,
        scope=scope,
    )


def task_of(row: tuple[Any, ...]) -> TaskRecord:
    """A `TaskRecord` from the `TASK_COLUMNS` of one ``procedure_tasks`` row."""
    task_id, record, created_at, updated_at = row
    return TaskRecord.from_json(str(task_id), json.loads(record), str(created_at), str(updated_at))


class ProcedureRows(Protocol):
    """Procedure rows inside one write transaction (what a `CountedRun` reads and writes).

    The counting rules (which procedures a run counts for, how counts, triggers and
    confidence change) belong to the caller (`insika_knowledge.procedures.mining.scoring`);
    a backend only stores rows.
    """

    def now(self) -> str:
        """The current UTC time, ``YYYY-MM-DDTHH:MM:SSZ`` (the store's clock)."""
        ...

    def claim_run(self, procedure_id: str, run_id: str, verdict: str, at: str) -> bool:
        """Record that `run_id` counted for (or against) `procedure_id`, once.

        Args:
            procedure_id: a procedure id, or the id of a failed run's prefix.
            run_id: the run.
            verdict: ``success`` or ``failure``.
            at: the UTC ISO-8601 stamp.

        Returns:
            True when the pair is new; False when the run was already counted for that id
            (nothing is written).
        """
        ...

    def failures_recorded(self, procedure_id: str) -> int:
        """How many failed runs were counted against `procedure_id` (it may not exist yet)."""
        ...

    def get(self, procedure_id: str) -> Procedure | None:
        """One procedure as the transaction sees it, or None."""
        ...

    def put(self, procedure: Procedure) -> None:
        """Insert or replace `procedure` (its ``confidence`` is stored for ranking).

        Bumps the procedure generation, once per transaction (see `ProcedureStore.generation`).
        """
        ...

    def get_task(self, task_id: str) -> TaskRecord | None:
        """One task record as the transaction sees it, or None."""
        ...

    def put_task(self, record: TaskRecord) -> None:
        """Insert or replace a task record (bumps the procedure generation, once per transaction)."""
        ...

    def tasks_with(self, operation: str) -> list[TaskRecord]:
        """Every task record that made, failed or was given the write operation `operation`."""
        ...

    def defer(self, key: str, action: Callable[[], None]) -> None:
        """Run `action` once before the transaction commits (the last one given for `key`).

        A run that changes what many runs share (an operation procedure, folded from its
        tasks) defers the change, so a batch of runs folds each operation once.
        """
        ...

    def count_population(self, increments: Mapping[str, int]) -> None:
        """Add to the population: each term (``''``: the runs themselves) gains its increment.

        Bumps the procedure generation, once per transaction (`ProcedureStore.population_since`).
        """
        ...

    def population_terms(self, terms: Collection[str]) -> set[str]:
        """Which of `terms` the population holds (the shared ones)."""
        ...

    def note_terms(self, scope: str, session: str, terms: Collection[str]) -> dict[str, int]:
        """Note task terms that `scope` does not hold in the clear, for `session`.

        Neither a term nor the session is written: a note is their keyed digests and a
        run count. A term nobody noted under `scope` is noted for `session` (one run); a
        term `session` noted gains a run; a term another session noted is released (its
        note deleted).

        Args:
            scope: the counter: a procedure id, or the population's id.
            session: the session of the run (`insika_knowledge.procedures.mining.shared.session_of`).
            terms: distinct task terms.

        Returns:
            term -> runs of the other session, for each released term.
        """
        ...


class CountedRun(Protocol):
    """A judged run that knows how it changes the procedure rows.

    `insika_knowledge.procedures.mining.scoring.MinedRun` is the implementation.
    """

    def record(self, rows: ProcedureRows) -> int:
        """Count the run in `rows`; returns how many (procedure, run) pairs were new."""
        ...


def digest(key: bytes, person: bytes, value: str) -> str:
    """A 16-byte blake2b of `value` keyed by `key`, in hex (`person` tells terms from sessions)."""
    return hashlib.blake2b(
        value.encode("utf-8", "surrogatepass"), digest_size=16, key=key, person=person
    ).hexdigest()



@dataclass
class SessionRow:
    """The capture state of one open session (``capture_sessions``; see the migration)."""

    session_id: str
    run: int = 0
    messages_seen: int = 0
    turns: int = 0
    task: str = ""
    given: list[str] = field(default_factory=list)
    tools: list[str] = field(default_factory=list)
    procedure_id: str | None = None
    cursor_step: int = 0
    matched_steps: int = 0
    diverged_steps: int = 0
    tracked_upto: int = 0
    first_turn_at: float = 0.0
    last_turn_at: float = 0.0
    block: str = ""
    anchor: str = ""

    def values(self) -> tuple[Any, ...]:
        """The row's values in ``SESSION_COLUMNS`` order."""
        return (
            self.session_id,
            self.run,
            self.messages_seen,
            self.turns,
            self.task,
            json.dumps(self.given),
            json.dumps(self.tools),
            self.procedure_id,
            self.cursor_step,
            self.matched_steps,
            self.diverged_steps,
            self.tracked_upto,
            self.first_turn_at,
            self.last_turn_at,
            self.block,
            self.anchor,
        )
