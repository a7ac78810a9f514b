"""Mining: judge a finished trace, and group verified traces into procedures.

A trace is judged (`judge`) as:

- ``success`` when it ends in a verified passing step. A shell trace (one with shell
  commands) needs a verify command whose last run passed; its procedure ends at that run
  (later clean-up is unverified and left out). A tool-calling trace needs the task
  outcome ``success`` and its last state-changing call to have returned without error;
- ``failure`` when the outcome is ``failure`` or a shell trace's last verify run failed;
- ``unverified`` otherwise (no outcome and no verify command, an outcome that disagrees
  with the trace's own last write, nothing left after pruning): such a trace is not used.

A successful trace contributes its *parts*, the candidate procedures it proves:

- its whole step sequence (a whole-task procedure, kept where whole tasks recur);
- every run of up to `MAX_PART_STEPS` consecutive steps that ends in a verified step: a
  verify run that passed for a shell trace (a test run, or a script run after an edit),
  the last step for a tool-calling trace (its outcome verified the end state). Such a
  sub-procedure (``create the script; run it with PYTHONPATH=repo``) recurs across
  different tasks that share an environment even when no two whole traces are alike, and
  it leaves out a step seen in only some of the runs that share it (``cancel`` is its own
  part of ``upgrade, cancel``).

A procedure is a distinct step sequence; each successful run counts once for each of its
parts. A failed trace counts against every procedure whose sequence is a prefix of its
own (it followed that procedure and still failed) and against every run of up to
`MAX_PART_STEPS` steps that ends its sequence (it ended the way that part does and failed).

`Miner` does the grouping in memory; it also keeps the *population*: how many runs
labelled successful (verified or not, a hand-off or a refusal included) had each task term,
which recall uses to tell terms specific to a procedure's tasks from common ones. Like the
store, it keeps a term as a trigger or in the population only once the tasks of two
distinct sessions had it (`insika_knowledge.procedures.mining.shared`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Final

from insika_knowledge.analysis.text import terms
from insika_knowledge.procedure import PART, TASK, Procedure, ProcedureStep, procedure_keys
from insika_knowledge.procedures.mining.prune import prune
from insika_knowledge.procedures.mining.shared import (
    MemoryNotes,
    mask_unshared,
    session_of,
    shared_increments,
)
from insika_knowledge.procedures.trace.steps import PENDING, SHELL, TOOL, Step
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
        parts: on success, the procedures the run proves (the whole sequence first, then
            the runs of steps ending in a verified step).
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
    if kind == SHELL:
        return Verdict(UNVERIFIED, "no_verify_step", kind)
    if outcome != SUCCESS:
        return Verdict(UNVERIFIED, "no_outcome", kind)
    writes = [s for s in answered if not s.read_only]
    if not writes:
        return Verdict(UNVERIFIED, "no_write", kind)
    if writes[-1].failed:
        return Verdict(UNVERIFIED, "last_write_failed", kind)
    if not kept:
        return Verdict(UNVERIFIED, "empty", kind)
    return _verdict(SUCCESS, "outcome_success", kind, kept, [len(kept) - 1])


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
    out = {keys[-1]: Part(keys[-1], steps, tools)}
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


@dataclass
class _Draft:
    kind: str
    steps: tuple[ProcedureStep, ...]
    tools: tuple[str, ...]
    sample_task: str
    triggers: Counter[str] = field(default_factory=Counter)
    successes: set[str] = field(default_factory=set)
    whole: bool = False


@dataclass
class Miner:
    """Groups judged traces into procedures, in memory (the store does the same durably).

    Attributes:
        verdicts: how many traces got each verdict.
        reasons: how many traces got each reason.
        population: term -> runs labelled successful whose task had it, for the terms
            two sessions' tasks had (``''``: every such run).
    """

    verdicts: Counter[str] = field(default_factory=Counter)
    reasons: Counter[str] = field(default_factory=Counter)
    population: Counter[str] = field(default_factory=Counter)
    _drafts: dict[str, _Draft] = field(default_factory=dict)
    _failed: dict[str, set[str]] = field(default_factory=dict)
    _counted: set[str] = field(default_factory=set)
    _notes: MemoryNotes = field(default_factory=MemoryNotes)

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
        task_terms = terms(task) if task else frozenset()
        session = session_of(run_id)
        if (verdict.verdict == SUCCESS or outcome == SUCCESS) and run_id not in self._counted:
            self._counted.add(run_id)
            self.population[RUNS] += 1
            self.population.update(self._increments(POPULATION, self.population, session, task_terms))
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
                        self._increments(part.key, draft.triggers, session, task_terms)
                    )
                    draft.sample_task = task or draft.sample_task
                    draft.whole = draft.whole or part.key == verdict.procedure_id
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

        Each one's sample task is its latest successful task with the words the population
        does not hold masked, as the store keeps it.

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
                scope=TASK if d.whole else PART,
            )
            for key, d in self._drafts.items()
            if latent or d.whole or len(d.successes) >= 2
        ]
        out.sort(key=lambda p: (-p.support, -p.confidence, p.id))
        return out


def mine(traces: Iterable[tuple[str, Sequence[Step], str | None, str, set[str]]]) -> Miner:
    """Mine ``(run_id, steps, outcome, task, given)`` traces into a fresh `Miner`."""
    miner = Miner()
    for run_id, steps, outcome, task, given in traces:
        miner.add(run_id, steps, outcome, task=task, given=given)
    return miner
