"""How a judged run changes the stored procedures: run counts, triggers and confidence.

The store only reads and writes rows (`insika_knowledge.store.procedures.ProcedureRows`);
the counting rules live here:

- a success counts for the procedure of its whole step sequence: it creates the procedure
  when new (taking the failures already recorded against that sequence), adds one success
  and merges the task's index terms into the triggers;
- a failure counts against every procedure whose id is one of its prefix keys, now or when
  such a procedure appears later;
- a run counts once per procedure id (replayed or re-mined traces count nothing twice).

A procedure's confidence (the Wilson lower bound of its success rate,
`insika_knowledge.procedure.Procedure.confidence`) follows from the new counts.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass

from insika_knowledge.analysis.text import terms
from insika_knowledge.procedure import Procedure, ProcedureStep
from insika_knowledge.procedures.mining.mine import FAILURE, SUCCESS, Verdict
from insika_knowledge.store.procedures import ProcedureRows


@dataclass(frozen=True)
class MinedRun:
    """One judged trace, ready to be counted (`mined_run` builds it from a `Verdict`).

    Attributes:
        run_id: the session id (``#n`` appended for the n-th later task of a session).
        verdict: ``success`` or ``failure``.
        keys: procedure ids of every prefix of the run's steps; the last is its own.
        kind: ``tool`` or ``shell``.
        steps: the canonical steps (stored when a success creates the procedure).
        tools: tool names the steps call.
        terms: index terms of the task (`insika_knowledge.analysis.text.terms`).
        task: the canonical task text.
    """

    run_id: str
    verdict: str
    keys: tuple[str, ...]
    kind: str = "tool"
    steps: tuple[ProcedureStep, ...] = ()
    tools: tuple[str, ...] = ()
    terms: frozenset[str] = frozenset()
    task: str = ""

    def record(self, rows: ProcedureRows) -> int:
        """Count this run in the open write transaction `rows`.

        Args:
            rows: the store's rows inside one transaction (`ProcedureStore.record_runs`
                and `ProcedureStore.finish_task` pass it).

        Returns:
            How many (procedure, run) pairs were new (0 when the run was already counted).
        """
        now = rows.now()
        if self.verdict == FAILURE:
            return _record_failure(rows, self, now)
        return _record_success(rows, self, now)


def _record_failure(rows: ProcedureRows, run: MinedRun, now: str) -> int:
    new = 0
    for key in run.keys:
        if not rows.claim_run(key, run.run_id, FAILURE, now):
            continue
        new += 1
        procedure = rows.get(key)
        if procedure is not None:
            rows.put(
                dataclasses.replace(
                    procedure, failures=procedure.failures + 1, updated_at=now
                )
            )
    return new


def _record_success(rows: ProcedureRows, run: MinedRun, now: str) -> int:
    if not run.keys:
        return 0
    key = run.keys[-1]
    if not rows.claim_run(key, run.run_id, SUCCESS, now):
        return 0
    procedure = rows.get(key)
    if procedure is None:
        rows.put(
            Procedure(
                id=key,
                kind=run.kind,
                steps=run.steps,
                tools=run.tools,
                triggers={t: 1 for t in sorted(run.terms)},
                trigger_runs=1,
                successes=1,
                failures=rows.failures_recorded(key),
                sample_task=run.task,
                created_at=now,
                updated_at=now,
            )
        )
        return 1
    triggers = dict(procedure.triggers)
    for term in run.terms:
        triggers[term] = triggers.get(term, 0) + 1
    rows.put(
        dataclasses.replace(
            procedure,
            triggers=triggers,
            trigger_runs=procedure.trigger_runs + 1,
            successes=procedure.successes + 1,
            updated_at=now,
        )
    )
    return 1


def mined_run(run_id: str, verdict: Verdict, task: str | Callable[[], str]) -> MinedRun | None:
    """The run to count for a judged trace, or None for an unverified one.

    Args:
        run_id: the run's id.
        verdict: the trace's verdict.
        task: the canonical task text, or a callable returning it (called for a success only).
    """
    if verdict.verdict not in (SUCCESS, FAILURE) or not verdict.keys:
        return None
    if verdict.verdict == FAILURE:
        return MinedRun(run_id, FAILURE, verdict.keys, verdict.kind)
    text = task() if callable(task) else task
    return MinedRun(
        run_id,
        verdict.verdict,
        verdict.keys,
        verdict.kind,
        verdict.steps,
        verdict.tools,
        terms(text),
        text,
    )
