"""Mining: judge a finished trace, and group verified traces into procedures.

A trace is judged (`judge`) as:

- ``success`` when it ends in a verified passing step. A shell trace (one with shell
  commands) needs a verify command whose last run passed; its procedure ends at that run
  (later clean-up is unverified and left out). A tool-calling trace needs the task
  outcome ``success`` and its last state-changing call to have returned without error;
- ``failure`` when the outcome is ``failure`` or a shell trace's last verify run failed;
- ``unverified`` otherwise (no outcome and no verify command, an outcome that disagrees
  with the trace's own last write, nothing left after pruning): such a trace is not used.

`Miner` groups successful traces by their canonical step sequence (one procedure per
sequence) and counts a failed trace against every procedure whose sequence is a prefix of
its own: it followed that procedure and still failed.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Final

from insika_knowledge.analysis.text import terms
from insika_knowledge.procedure import Procedure, ProcedureStep, procedure_keys
from insika_knowledge.procedures.mining.prune import prune
from insika_knowledge.procedures.trace.steps import PENDING, SHELL, TOOL, Step
from insika_knowledge.procedures.trace.verify import FAIL, PASS

SUCCESS: Final = "success"
FAILURE: Final = "failure"
UNVERIFIED: Final = "unverified"


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
    """

    verdict: str
    reason: str
    kind: str
    steps: tuple[ProcedureStep, ...] = ()
    keys: tuple[str, ...] = ()
    tools: tuple[str, ...] = ()

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
        return _verdict(SUCCESS, "verify_passed", kind, kept[: end + 1])
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
    return _verdict(SUCCESS, "outcome_success", kind, kept)


def _verdict(
    verdict: str, reason: str, kind: str, kept: Sequence[tuple[Step, ProcedureStep]]
) -> Verdict:
    steps = tuple(p for _, p in kept)
    return Verdict(
        verdict, reason, kind, steps, tuple(procedure_keys(steps)), tools_of(s for s, _ in kept)
    )


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


@dataclass
class Miner:
    """Groups judged traces into procedures, in memory (the store does the same durably).

    Attributes:
        verdicts: how many traces got each verdict.
        reasons: how many traces got each reason.
    """

    verdicts: Counter[str] = field(default_factory=Counter)
    reasons: Counter[str] = field(default_factory=Counter)
    _drafts: dict[str, _Draft] = field(default_factory=dict)
    _failed: dict[str, set[str]] = field(default_factory=dict)

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
                called for a success).
            given: hashes of the tokens the user wrote.
        """
        verdict = judge(steps, outcome, given)
        if verdict.verdict == SUCCESS and callable(task):
            task = task()
        self.add_verdict(run_id, verdict, task if isinstance(task, str) else "")
        return verdict

    def add_verdict(self, run_id: str, verdict: Verdict, task: str = "") -> None:
        """Count an already judged trace (see `add`)."""
        self.verdicts[verdict.verdict] += 1
        self.reasons[verdict.reason] += 1
        if verdict.verdict == SUCCESS:
            key = verdict.procedure_id
            draft = self._drafts.get(key)
            if draft is None:
                draft = self._drafts[key] = _Draft(verdict.kind, verdict.steps, verdict.tools, task)
            if run_id not in draft.successes:
                draft.successes.add(run_id)
                draft.triggers.update(terms(task))
        elif verdict.verdict == FAILURE:
            for key in verdict.keys:
                self._failed.setdefault(key, set()).add(run_id)

    def procedures(self) -> list[Procedure]:
        """Every procedure found so far, most supported first (then by id)."""
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
                sample_task=d.sample_task,
            )
            for key, d in self._drafts.items()
        ]
        out.sort(key=lambda p: (-p.support, -p.confidence, p.id))
        return out


def mine(traces: Iterable[tuple[str, Sequence[Step], str | None, str, set[str]]]) -> Miner:
    """Mine ``(run_id, steps, outcome, task, given)`` traces into a fresh `Miner`."""
    miner = Miner()
    for run_id, steps, outcome, task, given in traces:
        miner.add(run_id, steps, outcome, task=task, given=given)
    return miner
