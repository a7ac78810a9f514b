"""Mining: judge a finished trace, and group verified traces into procedures.

A trace is judged (`judge`) as:

- ``success`` when it ends in a verified passing step. A shell trace (one with shell
  commands) needs a verify command whose last run passed; its procedure ends at that run
  (later clean-up is unverified and left out). A tool-calling trace needs the task
  outcome ``success`` and its last state-changing call to have returned without error (its
  verdict carries no steps: it is mined into operations);
- ``failure`` when the outcome is ``failure`` or a shell trace's last verify run failed;
- ``unverified`` otherwise (no outcome and no verify command, an outcome that disagrees
  with the trace's own last write, nothing left after pruning): such a trace is not used.

A successful shell trace contributes its *parts*, the candidate procedures it proves:
every run of up to `MAX_PART_STEPS` consecutive steps that ends in a verify run that passed
(a test run, or a script run after an edit). Such a sub-procedure (``create the script;
run it with PYTHONPATH=repo``) recurs across different tasks of one repository even when
no two whole traces are alike. A whole trace is no procedure of its own: a coding task's
whole sequence is that task's, and the data never showed one recur. A part is listed once
two runs share it; its triggers hold the directories of the runs' tasks (their
environments, `insika_knowledge.procedures.trace.terms.paths_in`), so recall can tell how
many runs of one repository took it.

A procedure is a distinct step sequence; each successful run counts once for each of its
parts. A failed trace counts against every procedure whose sequence is a prefix of its
own (it followed that procedure and still failed) and against every run of up to
`MAX_PART_STEPS` steps that ends its sequence (it ended the way that part does and failed).

A tool-calling trace is mined into *operation procedures* instead
(`insika_knowledge.procedures.mining.operations`): `Miner.add_trace` gives each run a task
(`operations.TaskIdentity`) and counts it in that task's record; `Miner.procedures` folds
the tasks into one procedure per write operation.

`Miner` does the grouping in memory; it also keeps the *population*: how many shell runs
labelled successful (verified or not) had each task term, which the shell matcher uses to
tell terms specific to a procedure's tasks from common ones (tool-calling runs stay out of
it: their customers' words never enter it). Like the
store, it keeps a term as a trigger or in the population only once the tasks of two
distinct sessions had it (`insika_knowledge.procedures.mining.shared`).
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Final

from insika_knowledge.analysis.text import terms
from insika_knowledge.procedure import PART, Procedure, ProcedureStep, TaskRecord, procedure_keys
from insika_knowledge.procedures.mining import operations
from insika_knowledge.procedures.mining.prune import prune
from insika_knowledge.procedures.mining.shared import (
    MemoryNotes,
    mask_unshared,
    session_of,
    shared_increments,
)
from insika_knowledge.procedures.trace.steps import PENDING, SHELL, TOOL, Step, TraceBuilder
from insika_knowledge.procedures.trace.terms import paths_in
from insika_knowledge.procedures.trace.verify import FAIL, PASS

SUCCESS: Final = "success"
FAILURE: Final = "failure"
UNVERIFIED: Final = "unverified"
#: The longest sub-procedure (steps ending in a verified step) a run contributes.
MAX_PART_STEPS: Final = 4
#: The population's key for the number of runs itself.
RUNS: Final = ""
#: The population's id among the counters (`insika_knowledge.procedures.mining.scoring`).
POPULATION: Final = "@population"


@dataclass(frozen=True)
class Part:
    """A candidate procedure one successful run proves.

    Attributes:
        key: its procedure id (`insika_knowledge.procedure.procedure_id` of `steps`).
        steps: the canonical steps.
        tools: tool names the steps call.
    """

    key: str
    steps: tuple[ProcedureStep, ...]
    tools: tuple[str, ...]


@dataclass(frozen=True)
class Verdict:
    """What one trace contributes.

    Attributes:
        verdict: ``success``, ``failure`` or ``unverified``.
        reason: why, in a word (``verify_passed``, ``outcome_success``, ``verify_failed``,
            ``outcome_failure``, ``no_verify_step``, ``no_outcome``, ``last_write_failed``,
            ``no_write``, ``empty``).
        kind: ``shell`` or ``tool``.
        steps: the canonical steps (pruned; cut after the proving verify run on success).
        keys: procedure ids of every prefix of `steps`; the last is the trace's procedure.
        tools: tool names the kept steps call.
        parts: on success, the procedures the run proves (the runs of steps ending in a
            verified step).
        against: on failure, the procedure ids it counts against (its prefixes, then the
            runs of up to `MAX_PART_STEPS` steps that end it).
    """

    verdict: str
    reason: str
    kind: str
    steps: tuple[ProcedureStep, ...] = ()
    keys: tuple[str, ...] = ()
    tools: tuple[str, ...] = ()
    parts: tuple[Part, ...] = ()
    against: tuple[str, ...] = ()

    @property
    def procedure_id(self) -> str:
        """The id of the whole step sequence ('' when there are no steps)."""
        return self.keys[-1] if self.keys else ""


def judge(
    steps: Sequence[Step], outcome: str | None, given: set[str] | frozenset[str] = frozenset()
) -> Verdict:
    """Judge one finished trace.

    Args:
        steps: the trace's steps in order.
        outcome: the declared task outcome (``success``, ``failure`` or None).
        given: hashes of tokens the user wrote (see `insika_knowledge.procedures.mining.prune`).

    Returns:
        The `Verdict`.
    """
    answered = [s for s in steps if s.status != PENDING]
    kind = SHELL if any(s.kind == SHELL for s in answered) else TOOL
    if kind == TOOL:
        return _tool_verdict(answered, outcome)
    kept = prune(answered, given)
    checks = [s for s in answered if s.verify and s.status in (PASS, FAIL)]
    if kind == SHELL and checks:
        last = checks[-1]
        if last.status == FAIL or outcome == FAILURE:
            return _verdict(
                FAILURE, "verify_failed" if last.status == FAIL else "outcome_failure", kind, kept
            )
        end = max((i for i, (s, _) in enumerate(kept) if s is last), default=-1)
        if end < 0:
            return Verdict(UNVERIFIED, "empty", kind)
        kept = kept[: end + 1]
        verified = [i for i, (s, _) in enumerate(kept) if s.verify and s.status == PASS]
        return _verdict(SUCCESS, "verify_passed", kind, kept, verified)
    if outcome == FAILURE:
        return _verdict(FAILURE, "outcome_failure", kind, kept)
    return Verdict(UNVERIFIED, "no_verify_step", kind)


def _tool_verdict(answered: Sequence[Step], outcome: str | None) -> Verdict:
    """A tool-calling trace's verdict: its outcome, checked against its last write.

    No step sequence comes with it: a tool-calling trace is mined into operations
    (`insika_knowledge.procedures.mining.operations`), not into a sequence procedure.
    """
    if outcome == FAILURE:
        return Verdict(FAILURE, "outcome_failure", TOOL)
    if outcome != SUCCESS:
        return Verdict(UNVERIFIED, "no_outcome", TOOL)
    writes = [s for s in answered if not s.read_only]
    if not writes:
        return Verdict(UNVERIFIED, "no_write", TOOL)
    if writes[-1].failed:
        return Verdict(UNVERIFIED, "last_write_failed", TOOL)
    return Verdict(SUCCESS, "outcome_success", TOOL)


def _verdict(
    verdict: str,
    reason: str,
    kind: str,
    kept: Sequence[tuple[Step, ProcedureStep]],
    verified: Sequence[int] = (),
) -> Verdict:
    steps = tuple(p for _, p in kept)
    keys = tuple(procedure_keys(steps))
    tools = tools_of(s for s, _ in kept)
    if verdict == SUCCESS:
        parts = _parts(kept, keys, tools, verified)
        return Verdict(verdict, reason, kind, steps, keys, tools, parts=parts)
    against = dict.fromkeys(keys)
    for start in range(max(0, len(kept) - MAX_PART_STEPS), len(kept)):
        against.setdefault(procedure_keys(steps[start:])[-1])
    return Verdict(verdict, reason, kind, steps, keys, tools, against=tuple(against))


def _parts(
    kept: Sequence[tuple[Step, ProcedureStep]],
    keys: Sequence[str],
    tools: tuple[str, ...],
    verified: Sequence[int],
) -> tuple[Part, ...]:
    steps = tuple(p for _, p in kept)
    out: dict[str, Part] = {}
    for end in verified:
        for start in range(max(0, end + 1 - MAX_PART_STEPS), end + 1):
            window = steps[start : end + 1]
            key = procedure_keys(window)[-1]
            if key not in out:
                out[key] = Part(key, window, tools_of(s for s, _ in kept[start : end + 1]))
    return tuple(out.values())


def tools_of(steps: Iterable[Step]) -> tuple[str, ...]:
    """Sorted distinct tool names of the tool-kind `steps`."""
    return tuple(sorted({s.name for s in steps if s.kind == TOOL}))


def task_terms(task: str) -> frozenset[str]:
    """The index terms of a canonical task and its directories (its environment)."""
    return terms(task) | frozenset(paths_in(task)) if task else frozenset()


@dataclass
class _Draft:
    kind: str
    steps: tuple[ProcedureStep, ...]
    tools: tuple[str, ...]
    sample_task: str
    triggers: Counter[str] = field(default_factory=Counter)
    successes: set[str] = field(default_factory=set)


@dataclass
class Miner:
    """Groups judged traces into procedures, in memory (the store does the same durably).

    Attributes:
        verdicts: how many traces got each verdict.
        reasons: how many traces got each reason.
        population: term -> runs labelled successful whose task had it, for the terms
            two sessions' tasks had (``''``: every such run).
        tasks: task id -> its record (tool-calling traces, `add_trace`).
        identity: which task a run belongs to.
        key: the key of the term digests (random, per miner).
    """

    verdicts: Counter[str] = field(default_factory=Counter)
    reasons: Counter[str] = field(default_factory=Counter)
    population: Counter[str] = field(default_factory=Counter)
    tasks: dict[str, TaskRecord] = field(default_factory=dict)
    identity: operations.TaskIdentity = field(default_factory=operations.TaskIdentity)
    key: bytes = field(default_factory=lambda: os.urandom(32))
    _drafts: dict[str, _Draft] = field(default_factory=dict)
    _failed: dict[str, set[str]] = field(default_factory=dict)
    _counted: set[str] = field(default_factory=set)
    _notes: MemoryNotes = field(default_factory=MemoryNotes)
    _task_of_run: dict[str, str] = field(default_factory=dict)

    def add(
        self,
        run_id: str,
        steps: Sequence[Step],
        outcome: str | None,
        *,
        task: str | Callable[[], str] = "",
        given: set[str] | frozenset[str] = frozenset(),
    ) -> Verdict:
        """Judge one trace and count it.

        Args:
            run_id: the run's id (a session id); a run counts once per procedure.
            steps: its steps.
            outcome: the declared outcome or None.
            task: its canonical task text (the trigger), or a callable returning it (only
                called for a run labelled or judged successful).
            given: hashes of the tokens the user wrote.
        """
        verdict = judge(steps, outcome, given)
        if callable(task):
            task = task() if verdict.verdict == SUCCESS or outcome == SUCCESS else ""
        self.add_verdict(run_id, verdict, task, outcome)
        return verdict

    def add_trace(
        self,
        run_id: str,
        builder: TraceBuilder,
        outcome: str | None,
        *,
        recalled: Sequence[str] = (),
        task_key: str | None = None,
    ) -> Verdict:
        """Judge one trace and count it: a shell trace's parts, a tool trace's operations.

        Args:
            run_id: the run's id (a session id); a run counts once.
            builder: its steps and what its user asked.
            outcome: the declared outcome or None.
            recalled: write operations a recall gave the run (a successful run that did not
                make one contradicts it).
            task_key: the task id the capture has (a sessions file's ``metadata.task_id``);
                None: the task is told by the first user message (`operations.TaskIdentity`).
        """
        verdict = judge(builder.steps, outcome, builder.given)
        labelled = verdict.verdict == SUCCESS or outcome == SUCCESS
        self.add_verdict(run_id, verdict, builder.task if labelled and verdict.kind != TOOL else "", outcome)
        if verdict.kind == TOOL and outcome in (SUCCESS, FAILURE):
            self.add_operations(
                run_id, operations.run_operations(builder), outcome, recalled=recalled, task_key=task_key
            )
        return verdict

    def add_operations(
        self,
        run_id: str,
        run: operations.RunOperations,
        outcome: str,
        *,
        recalled: Sequence[str] = (),
        task_key: str | None = None,
    ) -> str:
        """Count a tool-calling run in its task's record; returns the task id.

        Args:
            run_id: the run's id; a run counts once.
            run: what the run did (`operations.run_operations`).
            outcome: ``success`` or ``failure`` (the declared outcome).
            recalled: write operations a recall gave the run.
            task_key: the task id the capture has, if any (see `add_trace`).
        """
        known = self._task_of_run.get(run_id)
        if known is not None:
            return known
        first, asked = operations.run_digests(self.key, run)
        task_id = (
            operations.task_id_of("key\x1e" + task_key)
            if task_key is not None
            else self.identity.resolve(first) or operations.task_id_of(run_id)
        )
        record = self.tasks.get(task_id) or TaskRecord(task_id)
        if outcome == SUCCESS:
            record = operations.add_success(record, run, first, asked,
                                            sample="" if record.sample else operations.sample_of(run))
            contradicted = [op for op in recalled if op not in run.names]
            if contradicted:
                record = operations.add_contradiction(record, contradicted)
        else:
            record = operations.add_failure(record, run, first)
        self.tasks[task_id] = record
        self.identity.add(record)
        self._task_of_run[run_id] = task_id
        return task_id

    def add_verdict(
        self, run_id: str, verdict: Verdict, task: str = "", outcome: str | None = None
    ) -> None:
        """Count an already judged trace (see `add`).

        Args:
            run_id: the run's id.
            verdict: its verdict.
            task: its canonical task text.
            outcome: the declared outcome; a ``success`` label counts the run in the
                population even when the trace itself is unverified.
        """
        self.verdicts[verdict.verdict] += 1
        self.reasons[verdict.reason] += 1
        if verdict.kind != SHELL:
            return  # tool-calling traces are mined as operations (`add_trace`), not in the population
        run_terms = task_terms(task)
        session = session_of(run_id)
        if (verdict.verdict == SUCCESS or outcome == SUCCESS) and run_id not in self._counted:
            self._counted.add(run_id)
            self.population[RUNS] += 1
            self.population.update(self._increments(POPULATION, self.population, session, run_terms))
        if verdict.verdict == SUCCESS:
            for part in verdict.parts:
                draft = self._drafts.get(part.key)
                if draft is None:
                    draft = self._drafts[part.key] = _Draft(
                        verdict.kind, part.steps, part.tools, task
                    )
                if run_id not in draft.successes:
                    draft.successes.add(run_id)
                    draft.triggers.update(
                        self._increments(part.key, draft.triggers, session, run_terms)
                    )
                    draft.sample_task = task or draft.sample_task
        elif verdict.verdict == FAILURE:
            for key in verdict.against:
                self._failed.setdefault(key, set()).add(run_id)

    def _increments(
        self, scope: str, known: Counter[str], session: str, task_terms: frozenset[str]
    ) -> dict[str, int]:
        """`shared_increments` of a run's terms for the counter `scope` (notes in memory)."""
        return shared_increments(
            known, task_terms, lambda fresh: self._notes.note(scope, session, fresh)
        )

    def _shared(self, wanted: set[str]) -> set[str]:
        return {t for t in wanted if self.population.get(t, 0) > 0}

    def procedures(self, *, latent: bool = False) -> list[Procedure]:
        """The procedures found so far, most supported first (then by id).

        The shell parts (each one's sample task is its latest successful task with the
        words the population does not hold masked, as the store keeps it), then one
        operation procedure per write operation the tasks made.

        Args:
            latent: also the sub-procedures only one run has shown (`Procedure.recurs`).
        """
        out = [
            Procedure(
                id=key,
                kind=d.kind,
                steps=d.steps,
                tools=d.tools,
                triggers=dict(d.triggers),
                trigger_runs=len(d.successes),
                successes=len(d.successes),
                failures=len(self._failed.get(key, set()) - d.successes),
                sample_task=mask_unshared(d.sample_task, self._shared),
                scope=PART,
            )
            for key, d in self._drafts.items()
            if latent or len(d.successes) >= 2
        ]
        records = list(self.tasks.values())
        for op in sorted(operations.operations_of(records)):
            procedure = operations.operation_procedure(op, records)
            if procedure is not None:
                out.append(procedure)
        out.sort(key=lambda p: (-p.support, -p.confidence, p.id))
        return out


def mine(traces: Iterable[tuple[str, Sequence[Step], str | None, str, set[str]]]) -> Miner:
    """Mine ``(run_id, steps, outcome, task, given)`` traces into a fresh `Miner`."""
    miner = Miner()
    for run_id, steps, outcome, task, given in traces:
        miner.add(run_id, steps, outcome, task=task, given=given)
    return miner
