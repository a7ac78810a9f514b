"""Procedures: the canonical steps mined from verified traces, with their evidence.

The procedure model, below every layer that uses it: the store reads and writes it, the
procedures service mines, recalls and injects it. It imports nothing from the library.

Two kinds of unit live here. A *sequence* procedure (``scope`` ``task`` or ``part``) is a
run of canonical steps some runs shared: what a shell agent's runs of one repository
share (how it runs its checks). An *operation* procedure (``scope`` ``operation``) is one
write operation of a tool-calling agent, mined across tasks: the reads that preceded the
write in successful runs, the confirmation, and the write with a slot for every argument.
Its evidence is a set of `TaskRecord` values, one per past task: what the task's users
asked before its first write (as keyed digests of analysed terms, never the text), what
its successful runs wrote, and how (`OperationUse`). Support and the Wilson bound of an
operation procedure count distinct tasks, not runs.

A procedure's confidence is the lower bound of the Wilson score interval of its success
rate: a procedure that worked 3 times out of 3 is not "100 % reliable"; the bound says how
low the true success rate may plausibly be, and grows with support (1/1 -> 0.21,
3/3 -> 0.44, 10/10 -> 0.72, 95/100 -> 0.89 at 95 %). Source: Edwin B. Wilson, "Probable
Inference, the Law of Succession, and Statistical Inference", Journal of the American
Statistical Association 22 (158): 209-212, 1927.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Final

#: Prefix of every procedure id (``proc-`` + 12 hex digits of the sequence's blake2b).
ID_PREFIX: Final = "proc-"

#: `Procedure.scope` values.
TASK: Final = "task"
PART: Final = "part"
OPERATION: Final = "operation"

#: The two-sided 95 % standard normal quantile (Phi^-1(0.975)).
Z_95: Final = 1.959963984540054


def wilson_lower_bound(successes: int, trials: int, z: float = Z_95) -> float:
    """The lower bound of the Wilson score interval for a binomial proportion.

    With p = successes / trials and n = trials (Wilson 1927, JASA 22:209-212):

        lower = (p + z^2/(2n) - z * sqrt(p(1-p)/n + z^2/(4n^2))) / (1 + z^2/n)

    Args:
        successes: runs that succeeded (0 <= successes <= trials).
        trials: all runs (successes + failures).
        z: the normal quantile; the default gives a 95 % two-sided interval.

    Returns:
        The lower bound in [0, 1]; 0.0 when there are no trials.

    Raises:
        ValueError: counts are negative or successes exceed trials.
    """
    if trials < 0 or successes < 0 or successes > trials:
        raise ValueError(f"need 0 <= successes <= trials, got {successes}/{trials}")
    if trials == 0:
        return 0.0
    n = float(trials)
    p = successes / n
    z2 = z * z
    centre = p + z2 / (2 * n)
    margin = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n))
    return max(0.0, min(1.0, (centre - margin) / (1 + z2 / n)))


@dataclass(frozen=True, slots=True)
class ProcedureStep:
    """One step of a procedure.

    Attributes:
        template: the canonical call or command (placeholders for volatile values).
        signature: what a live step is matched on when the cursor follows the procedure.
        hoisted: ``(parameter, value)`` notes for targets earlier exploration found:
            ``("reservation_id", "from get_user_details")``, ``("file", "src/x.py")``.
        verify: the step is the verify command that proved the trace.
        note: how often the step was seen, for a step only some supporting tasks took
            (``optional, 2 of 5 tasks``); '' for a step every one took.
    """

    template: str
    signature: str
    hoisted: tuple[tuple[str, str], ...] = ()
    verify: bool = False
    note: str = ""

    @property
    def key(self) -> str:
        """The step's identity in the canonical sequence (note, template, hoisted notes)."""
        text = f"({self.note}) {self.template}" if self.note else self.template
        if not self.hoisted:
            return text
        return text + " [" + "; ".join(f"{p}: {v}" for p, v in self.hoisted) + "]"

    def display(self) -> str:
        """The step as shown in a recalled block (`key`, continuation lines indented)."""
        return self.key.replace("\n", "\n   ")

    def to_json(self) -> list[Any]:
        """``[template, signature, hoisted, verify]``, and the note when there is one."""
        out = [self.template, self.signature, [list(h) for h in self.hoisted], int(self.verify)]
        return out + [self.note] if self.note else out

    @classmethod
    def from_json(cls, data: Sequence[Any]) -> ProcedureStep:
        """The inverse of `to_json`."""
        template, signature, hoisted, is_verify = data[:4]
        return cls(
            template,
            signature,
            tuple((str(p), str(v)) for p, v in hoisted),
            bool(is_verify),
            str(data[4]) if len(data) > 4 else "",
        )


def procedure_keys(steps: Sequence[ProcedureStep]) -> list[str]:
    """The id of every non-empty prefix of `steps`; the last one is the whole sequence's id.

    Ids are ``proc-`` + 12 hex digits of blake2b over the step keys, so equal sequences get
    equal ids in every process.
    """
    digest = hashlib.blake2b(digest_size=6)
    out = []
    for step in steps:
        digest.update(step.key.encode("utf-8", "surrogatepass"))
        digest.update(b"\x1e")
        out.append(ID_PREFIX + digest.copy().hexdigest())
    return out


def procedure_id(steps: Sequence[ProcedureStep]) -> str:
    """The id of the whole sequence (see `procedure_keys`); '' for no steps."""
    keys = procedure_keys(steps)
    return keys[-1] if keys else ""


@dataclass(frozen=True)
class Procedure:
    """A procedure and its evidence.

    Attributes:
        id: ``proc-`` + 12 hex digits.
        kind: ``tool`` (tool-calling traces) or ``shell`` (command traces with verify steps).
        steps: the canonical steps, in order.
        tools: tool names the steps call (a request must offer them all to recall it).
        triggers: index term -> how many successful runs' tasks contained it; only terms
            the tasks of two distinct sessions or more had (one customer's name or
            booking code is never a trigger).
        trigger_runs: successful runs the triggers were counted over.
        successes: successful runs with exactly this step sequence.
        failures: failed runs whose steps followed it (it is a prefix of theirs).
        sample_task: the canonical task text of the latest successful run, for people,
            with every word whose terms no two sessions' tasks shared masked (``…``).
        created_at: first success, UTC ISO-8601 ``Z``.
        updated_at: last change, UTC ISO-8601 ``Z``.
        scope: ``task`` when some successful run had exactly these steps, ``part`` when
            they were only ever a run of steps ending in a verified step inside longer runs
            (a sub-procedure; see `recurs`), ``operation`` for an operation procedure (its
            successes and failures count distinct tasks; `trigger_runs` the successful
            runs behind it).
    """

    id: str
    kind: str
    steps: tuple[ProcedureStep, ...]
    tools: tuple[str, ...] = ()
    triggers: dict[str, int] = field(default_factory=dict)
    trigger_runs: int = 0
    successes: int = 0
    failures: int = 0
    sample_task: str = ""
    created_at: str = ""
    updated_at: str = ""
    scope: str = TASK

    @property
    def recurs(self) -> bool:
        """Two successes share it: one run's steps (a whole short run's included) are that
        run's, not yet a procedure (docs/procedures.md).
        """
        return self.successes >= 2

    @property
    def support(self) -> int:
        """Runs (tasks, for an operation) counted for this procedure (successes + failures)."""
        return self.successes + self.failures

    @property
    def prior_runs(self) -> int:
        """The runs behind the procedure, the block header's N.

        A sequence procedure's `support`; an operation's successful runs (`trigger_runs`).
        """
        return self.trigger_runs if self.scope == OPERATION else self.support

    @cached_property
    def confidence(self) -> float:
        """The Wilson 95 % lower bound of the success rate (`wilson_lower_bound`)."""
        return wilson_lower_bound(self.successes, self.support)

    def trigger_weights(self) -> dict[str, float]:
        """Term -> share of the successful runs whose task contained it (0..1]."""
        runs = max(1, self.trigger_runs)
        return {t: min(1.0, c / runs) for t, c in self.triggers.items()}


# ---------------------------------------------------------------------- operations

#: The prefix of a task record's id (``task-`` + 12 hex digits).
TASK_PREFIX: Final = "task-"


def operation_id(operation: str) -> str:
    """The id of the operation procedure of the write tool `operation` (``proc-`` + 12 hex)."""
    digest = hashlib.blake2b(("operation\x1e" + operation).encode("utf-8", "surrogatepass"), digest_size=6)
    return ID_PREFIX + digest.hexdigest()


@dataclass(frozen=True)
class OperationUse:
    """How one task made one write operation, over its successful runs that made it.

    Attributes:
        reads: the read steps that preceded the write, in order, each
            ``(signature, template, hoisted notes)``; a read any of the runs took.
        write: the write's template, every argument a slot (``cabin=<CABIN>``).
        signature: the write's signature (tool name and argument names).
        confirm: the runs in which a user message came between the last step before
            the write and the write (the user's explicit confirmation).
        values: ``(argument, values)``: the enumeration values (``economy``, ``no longer
            needed``) the runs passed, distinct and sorted.
        runs: the task's successful runs that made the write.
        write_notes: the write's ``(parameter, "from <read>")`` notes.
        state: ``(field, values)``: the enumeration fields (``status``) of the record the
            write acted on, as the read that looked it up returned them.
    """

    reads: tuple[tuple[str, str, tuple[tuple[str, str], ...]], ...]
    write: str
    signature: str
    confirm: int = 0
    values: tuple[tuple[str, tuple[str, ...]], ...] = ()
    runs: int = 1
    write_notes: tuple[tuple[str, str], ...] = ()
    state: tuple[tuple[str, tuple[str, ...]], ...] = ()

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {
            "reads": [[sig, tpl, [list(h) for h in hoisted]] for sig, tpl, hoisted in self.reads],
            "write": self.write,
            "signature": self.signature,
            "confirm": self.confirm,
            "values": [[arg, list(values)] for arg, values in self.values],
            "runs": self.runs,
            "write_notes": [list(n) for n in self.write_notes],
            "state": [[f, list(values)] for f, values in self.state],
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> OperationUse:
        """The inverse of `to_json`."""
        return cls(
            tuple(
                (str(sig), str(tpl), tuple((str(p), str(v)) for p, v in hoisted))
                for sig, tpl, hoisted in data.get("reads", ())
            ),
            str(data["write"]),
            str(data.get("signature", "")),
            int(data.get("confirm", 0)),
            tuple((str(arg), tuple(str(v) for v in values)) for arg, values in data.get("values", ())),
            int(data.get("runs", 1)),
            tuple((str(p), str(v)) for p, v in data.get("write_notes", ())),
            tuple((str(f), tuple(str(v) for v in values)) for f, values in data.get("state", ())),
        )


@dataclass(frozen=True)
class TaskRecord:
    """One past task: what its users asked before the first write, and what its runs did.

    A task groups the runs of one recurring request (trials of one task are one task, not
    recurrence). Nothing in it is text a user wrote: the user's words are kept as keyed
    digests of their analysed terms (`first`, `messages`), which recall compares with the
    digests of a new session's terms; `sample` is the first message with every word no two
    sessions shared masked (for people).

    Attributes:
        id: ``task-`` + 12 hex digits.
        firsts: digests of the terms of the first user message, one tuple per run (at most
            8): the task's identity (a new run whose first message shares enough terms with
            one of them is a run of this task).
        messages: digests of the terms of each user message its successful runs sent before
            their first write, one tuple per distinct message (the exemplars recall votes on).
        sample: the first message, masked, for people.
        runs: its successful runs.
        quiet: its successful runs that made no write (a refusal, a hand-off).
        ops: write operation -> its successful runs that made it.
        chains: ``"op1>op2"`` -> successful runs that made these different writes in this order.
        failed: write operation -> its failed runs that made it.
        contradicted: write operation -> runs given that operation that made another write,
            or none (a recall the agent contradicted).
        uses: write operation -> how the task made it (`OperationUse`).
        created_at: first run counted, UTC ISO-8601 ``Z``.
        updated_at: last change, UTC ISO-8601 ``Z``.
    """

    id: str
    firsts: tuple[tuple[str, ...], ...] = ()
    messages: tuple[tuple[str, ...], ...] = ()
    sample: str = ""
    runs: int = 0
    quiet: int = 0
    ops: dict[str, int] = field(default_factory=dict)
    chains: dict[str, int] = field(default_factory=dict)
    failed: dict[str, int] = field(default_factory=dict)
    contradicted: dict[str, int] = field(default_factory=dict)
    uses: dict[str, OperationUse] = field(default_factory=dict)
    created_at: str = ""
    updated_at: str = ""

    def share(self, operation: str) -> float:
        """The share of its successful runs that made `operation` (0.0 without runs)."""
        return self.ops.get(operation, 0) / self.runs if self.runs else 0.0

    @property
    def quiet_share(self) -> float:
        """The share of its successful runs that made no write."""
        return self.quiet / self.runs if self.runs else 0.0

    def supports(self, operation: str) -> bool:
        """A successful run of the task made `operation`."""
        return self.ops.get(operation, 0) > 0

    def against(self, operation: str) -> bool:
        """No successful run made `operation`, and a failed run made it or a run contradicted it."""
        return not self.supports(operation) and (
            self.failed.get(operation, 0) > 0 or self.contradicted.get(operation, 0) > 0
        )

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict (the ``procedure_tasks.record`` column)."""
        return {
            "firsts": [list(f) for f in self.firsts],
            "messages": [list(m) for m in self.messages],
            "sample": self.sample,
            "runs": self.runs,
            "quiet": self.quiet,
            "ops": dict(sorted(self.ops.items())),
            "chains": dict(sorted(self.chains.items())),
            "failed": dict(sorted(self.failed.items())),
            "contradicted": dict(sorted(self.contradicted.items())),
            "uses": {op: use.to_json() for op, use in sorted(self.uses.items())},
        }

    @classmethod
    def from_json(cls, task_id: str, data: dict[str, Any], created_at: str = "", updated_at: str = "") -> TaskRecord:
        """The inverse of `to_json`."""
        return cls(
            id=task_id,
            firsts=tuple(tuple(str(d) for d in f) for f in data.get("firsts", ())),
            messages=tuple(tuple(str(d) for d in m) for m in data.get("messages", ())),
            sample=str(data.get("sample", "")),
            runs=int(data.get("runs", 0)),
            quiet=int(data.get("quiet", 0)),
            ops={str(k): int(v) for k, v in data.get("ops", {}).items()},
            chains={str(k): int(v) for k, v in data.get("chains", {}).items()},
            failed={str(k): int(v) for k, v in data.get("failed", {}).items()},
            contradicted={str(k): int(v) for k, v in data.get("contradicted", {}).items()},
            uses={str(k): OperationUse.from_json(v) for k, v in data.get("uses", {}).items()},
            created_at=created_at,
            updated_at=updated_at,
        )
