"""How a judged run changes the stored procedures: run counts, triggers and confidence.

The store only reads and writes rows (`insika_knowledge.store.procedure_records.ProcedureRows`);
the counting rules live here:

- a success counts for each of its parts (its whole step sequence and the runs of steps
  that end in a verified step, `insika_knowledge.procedures.mining.mine.Part`): it
  creates the procedure when new (taking the failures already recorded against that
  sequence), adds one success and merges the task's index terms into the triggers, and
  its task, masked, becomes the procedure's sample task;
- a failure counts against every procedure id it ended or began like
  (`insika_knowledge.procedures.mining.mine.Verdict.against`), now or when such a
  procedure appears later;
- a run labelled or judged successful (a hand-off or a refusal with a ``success`` label
  included) counts once in the population: the task terms of successful runs, which
  recall weighs a procedure's triggers against;
- a run counts once per procedure id (replayed or re-mined traces count nothing twice);
- a term counts, as a trigger or in the population, only once the tasks of two distinct
  sessions had it (`insika_knowledge.procedures.mining.shared`): until then it is only
  noted, as digests, so one customer's name or booking code is never stored. The sample
  task is the latest successful task with every word whose terms the population does not
  hold masked (`insika_knowledge.procedures.mining.shared.mask_unshared`).

A procedure's confidence (the Wilson lower bound of its success rate,
`insika_knowledge.procedure.Procedure.confidence`) follows from the new counts.

A tool-calling run is counted as an `OperationRun` instead: in its task's record
(`insika_knowledge.procedure.TaskRecord`, ``procedure_tasks``), once per run, after which
the procedure of every write operation the run touched is folded again from the records
of the tasks that name it (`insika_knowledge.procedures.mining.operations`). It counts in no
population (its customer's words never do: one customer's two sessions would share a name).
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable
from dataclasses import dataclass

from insika_knowledge.procedure import PART, TASK, Procedure, ProcedureStep, TaskRecord
from insika_knowledge.procedures.mining import operations
from insika_knowledge.procedures.mining.mine import (
    FAILURE,
    POPULATION,
    RUNS,
    SUCCESS,
    Part,
    Verdict,
    task_terms,
)
from insika_knowledge.procedures.mining.shared import (
    mask_unshared,
    session_of,
    shared_increments,
)
from insika_knowledge.procedures.trace.steps import TOOL
from insika_knowledge.store.procedure_records import ProcedureRows


@dataclass(frozen=True)
class MinedRun:
    """One judged trace, ready to be counted (`mined_run` builds it from a `Verdict`).

    Attributes:
        run_id: the session id (``#n`` appended for the n-th later task of a session).
        verdict: ``success``, ``failure`` or ``unverified`` (population only).
        keys: a success: procedure ids of every prefix of its steps (the last is its own);
            a failure: the ids it counts against.
        kind: ``tool`` or ``shell``.
        steps: the canonical steps (stored when a success creates the procedure).
        tools: tool names the steps call.
        terms: index terms of the task (`insika_knowledge.analysis.text.terms`); only
            those two sessions' tasks had are ever stored.
        task: the canonical task text (stored masked, as the sample task).
        parts: the procedures a success counts for (none: its whole sequence only).
        population: count the run in the population (it is labelled or judged successful).
    """

    run_id: str
    verdict: str
    keys: tuple[str, ...]
    kind: str = "tool"
    steps: tuple[ProcedureStep, ...] = ()
    tools: tuple[str, ...] = ()
    terms: frozenset[str] = frozenset()
    task: str = ""
    parts: tuple[Part, ...] = ()
    population: bool = False

    def record(self, rows: ProcedureRows) -> int:
        """Count this run in the open write transaction `rows`.

        Args:
            rows: the store's rows inside one transaction (`ProcedureStore.record_runs`
                and `ProcedureStore.finish_task` pass it).

        Returns:
            How many (procedure, run) pairs were new (0 when the run was already counted).
        """
        now = rows.now()
        new = 0
        session = session_of(self.run_id)
        if self.population and rows.claim_run(POPULATION, self.run_id, SUCCESS, now):
            increments = shared_increments(
                rows.population_terms(self.terms),
                self.terms,
                lambda fresh: rows.note_terms(POPULATION, session, fresh),
            )
            rows.count_population({RUNS: 1, **increments})
        if self.verdict == FAILURE:
            new += _record_failure(rows, self, now)
        elif self.verdict == SUCCESS:
            parts = self.parts or (
                (Part(self.keys[-1], self.steps, self.tools),) if self.keys else ()
            )
            whole = self.keys[-1] if self.keys else ""
            sample = functools.cache(lambda: mask_unshared(self.task, rows.population_terms))
            new += sum(
                _record_success(rows, self, part, now, whole=part.key == whole, sample=sample)
                for part in parts
            )
        return new


def _record_failure(rows: ProcedureRows, run: MinedRun, now: str) -> int:
    new = 0
    for key in run.keys:
        if not rows.claim_run(key, run.run_id, FAILURE, now):
            continue
        new += 1
        procedure = rows.get(key)
        if procedure is not None:
            rows.put(
                dataclasses.replace(procedure, failures=procedure.failures + 1, updated_at=now)
            )
    return new


def _record_success(
    rows: ProcedureRows,
    run: MinedRun,
    part: Part,
    now: str,
    *,
    whole: bool,
    sample: Callable[[], str],
) -> int:
    """Count a success for `part`; `sample` gives the run's masked task (computed once)."""
    key = part.key
    if not rows.claim_run(key, run.run_id, SUCCESS, now):
        return 0
    procedure = rows.get(key)
    triggers = dict(procedure.triggers) if procedure is not None else {}
    session = session_of(run.run_id)
    for term, runs in shared_increments(
        triggers, run.terms, lambda fresh: rows.note_terms(key, session, fresh)
    ).items():
        triggers[term] = triggers.get(term, 0) + runs
    if procedure is None:
        rows.put(
            Procedure(
                id=key,
                kind=run.kind,
                steps=part.steps,
                tools=part.tools,
                triggers=dict(sorted(triggers.items())),
                trigger_runs=1,
                successes=1,
                failures=rows.failures_recorded(key),
                sample_task=sample(),
                created_at=now,
                updated_at=now,
                scope=TASK if whole else PART,
            )
        )
        return 1
    rows.put(
        dataclasses.replace(
            procedure,
            triggers=triggers,
            trigger_runs=procedure.trigger_runs + 1,
            successes=procedure.successes + 1,
            sample_task=sample() or procedure.sample_task,
            updated_at=now,
            scope=TASK if whole else procedure.scope,
        )
    )
    return 1


def mined_run(
    run_id: str,
    verdict: Verdict,
    task: str | Callable[[], str],
    outcome: str | None = None,
) -> MinedRun | None:
    """The run to count for a judged trace, or None when it counts for nothing.

    Args:
        run_id: the run's id.
        verdict: the trace's verdict.
        task: the canonical task text, or a callable returning it (called only for a run
            labelled or judged successful).
        outcome: the declared outcome: an unverified trace labelled ``success`` still counts
            in the population.
    """
    population = verdict.verdict == SUCCESS or outcome == SUCCESS
    if verdict.kind == TOOL:
        # A tool-calling run's procedures are operations (`OperationRun`), recalled by the
        # vote of past tasks; the population only serves the shell procedures' matcher,
        # and a customer's words (a name two sessions of one customer share) never enter it.
        return None
    if verdict.verdict == FAILURE and verdict.against:
        return MinedRun(run_id, FAILURE, verdict.against, verdict.kind, population=population)
    if not population:
        return None
    text = task() if callable(task) else task
    if verdict.verdict != SUCCESS or not verdict.keys:
        return MinedRun(run_id, "unverified", (), verdict.kind, terms=task_terms(text), population=True)
    return MinedRun(
        run_id,
        verdict.verdict,
        verdict.keys,
        verdict.kind,
        verdict.steps,
        verdict.tools,
        task_terms(text),
        text,
        parts=verdict.parts,
        population=True,
    )



@dataclass(frozen=True)
class OperationRun:
    """One tool-calling run, ready to be counted in its task's record.

    Attributes:
        run_id: the session id (``#n`` appended for the n-th later task of a session).
        task_id: the task the run belongs to (`operations.TaskIdentity`, or the task id the
            capture has).
        outcome: ``success`` or ``failure``.
        run: what it wrote and how (`operations.run_operations`; its text is never stored).
        first: digests of its first user message's terms (the task's identity).
        asked: digests of its messages before the first write (the exemplars).
        sample: its first message, masked for people (`mask_unshared`), computed when needed.
        recalled: write operations a recall gave it (a success that made none of them
            contradicts them).
    """

    run_id: str
    task_id: str
    outcome: str
    run: operations.RunOperations
    first: tuple[str, ...] = ()
    asked: tuple[tuple[str, ...], ...] = ()
    sample: Callable[[], str] | str = ""
    recalled: tuple[str, ...] = ()

    def record(self, rows: ProcedureRows) -> int:
        """Count this run in its task's record; the operations it touched are folded again.

        Returns:
            1 when the run was new, else 0 (a run counts once).
        """
        now = rows.now()
        if not rows.claim_run(self.task_id, self.run_id, SUCCESS if self.outcome == SUCCESS else FAILURE, now):
            return 0
        record = rows.get_task(self.task_id) or TaskRecord(self.task_id)
        if self.outcome == SUCCESS:
            sample = "" if record.sample else self.sample() if callable(self.sample) else self.sample
            record = operations.add_success(record, self.run, self.first, self.asked, sample=sample, now=now)
            contradicted = [op for op in self.recalled if op not in self.run.names]
            if contradicted:
                record = operations.add_contradiction(record, contradicted, now=now)
        else:
            record = operations.add_failure(record, self.run, self.first, now=now)
        rows.put_task(record)
        for op in sorted({*self.run.names, *self.recalled}):
            rows.defer("operation\x1e" + op, functools.partial(fold_operation, rows, op))
        return 1


def fold_operation(rows: ProcedureRows, operation: str) -> None:
    """Write the procedure of `operation`, folded from the task records that name it."""
    procedure = operations.operation_procedure(operation, rows.tasks_with(operation))
    if procedure is None:
        return
    now = rows.now()
    old = rows.get(procedure.id)
    rows.put(dataclasses.replace(procedure, created_at=old.created_at if old else now, updated_at=now))
