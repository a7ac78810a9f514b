"""Operation procedures: one per write operation of a tool-calling agent, mined across tasks.

A tool-calling run (a customer-service agent's) is a sequence of reads (authenticate, look
up, check a field) and writes (book, cancel, exchange...). Whole runs rarely recur, and
their literal values never do; what recurs across tasks is how each *write operation* is
done. So a successful run contributes, for each distinct write it made (`run_operations`):

- the reads that preceded the write (from the run's start for its first write, from the
  previous write on for a later one), each once, in order, with the exploring step a
  target came from (``order_id: from get_user_details``); the agent's scratch tools
  (``think``, ``calculate``) are no reads;
- whether the user spoke between the last step before the write and the write (the
  explicit confirmation a policy asks for);
- the write itself, every argument a slot (``cabin=<CABIN>``), and the enumeration values
  its arguments had (``economy``, ``no longer needed``), kept as a distribution;
- the state of the record the write acted on: the enumeration fields (``status``) of the
  latest read that looked that record up (by the same id).

A hand-off (``transfer_to_human_agents``) is never a write operation, and a write that
failed or was retried is left out.

Runs are grouped by *task* (`TaskRecord`; repeated trials of one request are one task, not
recurrence): `TaskIdentity` gives a run the task whose first user message shares at least
`SAME_TASK` (Jaccard, over analysed terms) with one of the task's runs, else a new one.
The task keeps, as keyed digests, the user messages its successful runs sent before their
first write (the exemplars recall votes on), and what they wrote (`add_success`); failed
runs and contradicted recalls count against the writes they made or were given
(`add_failure`, `add_contradiction`).

`operation_procedure` folds the tasks that made one write into its procedure: a read every
supporting task took is a plain step; one at least a third of them took is optional
(``optional, 2 of 5 tasks``); rarer ones are dropped. The confirmation is a step
when most runs confirmed. A field of the acted-on record that had one value in every
supporting task (three at least) is a condition of the write (``when: status is pending in
all 6 tasks``). Support and the Wilson bound count distinct tasks: a success is a
task a successful run of which made the write; a failure is a task none of whose
successful runs made it while a failed run made it or a run contradicted a recall of it.
"""

from __future__ import annotations

import hashlib
import math
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Final

from insika_knowledge.procedure import (
    OPERATION,
    TASK_PREFIX,
    OperationUse,
    Procedure,
    ProcedureStep,
    TaskRecord,
    operation_id,
)
from insika_knowledge.procedures.mining.prune import sources, superseded
from insika_knowledge.procedures.mining.shared import mask_unshared
from insika_knowledge.procedures.trace.canonical import PLACEHOLDER_RE, TEXT, key_placeholder
from insika_knowledge.procedures.trace.steps import (
    PENDING,
    TOOL,
    Step,
    TraceBuilder,
    is_handoff_tool,
    tool_base_name,
)
from insika_knowledge.procedures.trace.terms import digests, message_terms

#: Two first messages whose analysed terms overlap this much (Jaccard) are one task.
SAME_TASK: Final = 0.4
#: Exemplar messages a task keeps, and first messages it keeps for its identity.
MAX_MESSAGES: Final = 32
MAX_FIRSTS: Final = 8
#: The supporting tasks a condition of the acted-on record needs (one value in all of them).
MIN_CONDITION_TASKS: Final = 3
#: A read some supporting tasks took is optional when at least this share of them took it.
OPTIONAL_SHARE: Final = 1 / 3
#: Exploring tools that look nothing up (the agent's own scratch work): never a skeleton step.
_NOT_A_LOOKUP: Final = frozenset({"think", "calculate", "calculator", "reflect", "plan", "note", "noop"})
#: The template of the confirmation step (no tool: the cursor never matches it).
CONFIRM: Final = "confirm the details with the user; wait for an explicit yes"
CONFIRM_SIGNATURE: Final = "@confirm"


@dataclass(frozen=True)
class RunOperations:
    """What one run did, as operations.

    Attributes:
        ops: the distinct writes it made, in the order of their first call, each with how
            (`OperationUse`, one run).
        asked: the user messages it sent before its first write (raw, in memory only).
        read_first: gives its first user message, canonical (`first`).
        opening: its first user message, raw ('' after a restart: the canonical one stands in).
    """

    ops: tuple[tuple[str, OperationUse], ...]
    asked: tuple[str, ...]
    read_first: Callable[[], str] = field(compare=False, repr=False)
    opening: str = ""

    @property
    def first(self) -> str:
        """Its first user message, canonical.

        Read on first use: canonicalising runs the personal-data redactor, and a run of a
        task already known needs it only when its first message was not asked before a write.
        """
        return self.read_first()

    @property
    def names(self) -> tuple[str, ...]:
        """The writes, in order."""
        return tuple(op for op, _ in self.ops)

    @property
    def chain(self) -> str:
        """``"op1>op2"`` for a run of two writes or more, else ''."""
        return ">".join(self.names) if len(self.ops) > 1 else ""


def _split_arguments(inner: str) -> list[str]:
    """A canonical call's argument list split at the top-level ``", "``."""
    parts, depth, start = [], 0, 0
    for i, c in enumerate(inner):
        if c in "[{(":
            depth += 1
        elif c in "]})":
            depth -= 1
        elif c == "," and depth == 0:
            parts.append(inner[start:i].strip())
            start = i + 1
    tail = inner[start:].strip()
    if tail:
        parts.append(tail)
    return parts


@lru_cache(maxsize=8192)
def slotted(template: str) -> str:
    """A canonical call with every literal top-level argument value made its slot.

    ``update(cabin=economy, reason=<TEXT>, reservation_id=<RESERVATION_ID>)`` ->
    ``update(cabin=<CABIN>, reason=<REASON>, reservation_id=<RESERVATION_ID>)``: a literal
    or free text becomes the argument's own slot; lists, objects and typed placeholders stay.
    """
    head, paren, rest = template.partition("(")
    if not paren or not rest.endswith(")"):
        return template
    out = []
    for part in _split_arguments(rest[:-1]):
        key, eq, value = part.partition("=")
        if eq and value and value[0] not in "[{" and (not PLACEHOLDER_RE.fullmatch(value) or value == TEXT):
            value = key_placeholder(key)
        out.append(f"{key}{eq}{value}")
    return f"{head}({', '.join(out)})"


def run_operations(builder: TraceBuilder) -> RunOperations:
    """The writes a run made, each with its reads, confirmation and slots (see the module).

    Args:
        builder: the run's steps and what its user asked.
    """
    answered = [s for s in builder.steps if s.status != PENDING]
    drop = superseded(answered)
    notes = sources(answered, builder.given)
    seen: dict[str, OperationUse] = {}
    start = 0
    for i, step in enumerate(answered):
        if i in drop or step.read_only or step.failed or step.kind != TOOL or is_handoff_tool(step.name):
            continue
        if step.name in seen:
            continue
        reads: dict[str, tuple[str, str, tuple[tuple[str, str], ...]]] = {}
        for j in range(start, i):
            read = answered[j]
            if j in drop or not read.read_only or read.failed or read.signature in reads:
                continue
            if tool_base_name(read.name) in _NOT_A_LOOKUP:
                continue
            reads[read.signature] = (read.signature, read.template, notes[j])
        # the user spoke after the last step before the write (not the request that opened the task)
        before = answered[i - 1].index if i > 0 else (builder.user_at[0] if builder.user_at else -1)
        confirm = int(builder.spoke_between(before, step.index))
        seen[step.name] = OperationUse(
            tuple(reads.values()),
            slotted(step.template),
            step.signature,
            confirm,
            tuple((arg, (value,)) for arg, value in step.values),
            1,
            notes[i],
            tuple((f, (v,)) for f, v in _target_state(answered, i, drop)),
        )
        start = i + 1
    return RunOperations(tuple(seen.items()), tuple(builder.asked), lambda: builder.task, builder.opening)


# ---------------------------------------------------------------------- tasks


def task_id_of(run_id: str) -> str:
    """A new task's id, from the run that founded it: ``task-`` + 12 hex digits."""
    return TASK_PREFIX + hashlib.blake2b(run_id.encode("utf-8", "surrogatepass"), digest_size=6).hexdigest()


@dataclass
class TaskIdentity:
    """Which task a run belongs to, by its first user message (in memory).

    Attributes:
        threshold: the Jaccard overlap of first-message digests that makes two runs one task.
    """

    threshold: float = SAME_TASK
    _firsts: list[tuple[str, int]] = field(default_factory=list)  # (task id, digests) of each first message
    _of_task: dict[str, set[frozenset[str]]] = field(default_factory=dict)
    _postings: dict[str, list[int]] = field(default_factory=dict)

    def add(self, record: TaskRecord) -> None:
        """Index `record`'s first messages (those not indexed yet)."""
        for first in record.firsts:
            self.note(record.id, first)

    def note(self, task_id: str, first: Sequence[str]) -> None:
        """Index one more first message of `task_id` (a run counted but not stored yet)."""
        fresh = frozenset(first)
        known = self._of_task.setdefault(task_id, set())
        if not fresh or fresh in known:
            return
        known.add(fresh)
        slot = len(self._firsts)
        self._firsts.append((task_id, len(fresh)))
        for d in fresh:
            self._postings.setdefault(d, []).append(slot)

    def resolve(self, first: Sequence[str]) -> str | None:
        """The task whose runs' first message overlaps `first` most, if at the threshold."""
        wanted = frozenset(first)
        if not wanted:
            return None
        shared: Counter[int] = Counter()
        for d in wanted:
            shared.update(self._postings.get(d, ()))
        best, best_score = None, 0.0
        for slot, count in shared.items():
            task, size = self._firsts[slot]
            score = count / (len(wanted) + size - count)
            if score > best_score or (score == best_score and best is not None and task < best):
                best, best_score = task, score
        return best if best is not None and best_score >= self.threshold else None


def sample_of(run: RunOperations) -> str:
    """The run's first message for people: every word masked but stop words and the words of its writes' names.

    ``Hi, I'd like to cancel … … order …``: what the task was about, with nothing of
    its customer (a word of a name survives only if it names a write operation).
    """
    shown = frozenset().union(*(message_terms(op.replace("_", " ")) for op in run.names)) if run.ops else frozenset()
    return mask_unshared(run.first, lambda wanted: wanted & shown)


def run_digests(key: bytes, run: RunOperations) -> tuple[tuple[str, ...], tuple[tuple[str, ...], ...]]:
    """``(first message digests, asked message digests)`` of a run under `key`."""
    asked = tuple(d for d in (digests(key, message_terms(m)) for m in run.asked) if d)
    # the first message is the first one asked, when it came before any write
    first = asked[0] if asked and run.asked[0] == run.opening else (
        digests(key, message_terms(run.first)) if run.first else ())
    if not asked and first:
        asked = (first,)
    return first, asked


def _target_state(answered: Sequence[Step], i: int, drop: set[int]) -> tuple[tuple[str, str], ...]:
    """The enumeration fields of the record write `i` acted on: the latest read that used its id."""
    write = answered[i]
    targets = {h for _, h in write.uses}
    if not targets:
        return ()
    for j in range(i - 1, -1, -1):
        read = answered[j]
        if j in drop or not read.read_only or read.failed or not read.fields:
            continue
        if targets & {h for _, h in read.uses}:
            return read.fields
    return ()


def _merge_use(old: OperationUse | None, new: OperationUse) -> OperationUse:
    if old is None:
        return new
    reads = {sig: (sig, tpl, notes) for sig, tpl, notes in old.reads}
    for sig, tpl, notes in new.reads:
        reads.setdefault(sig, (sig, tpl, notes))
    return OperationUse(
        tuple(reads.values()),
        new.write,
        new.signature or old.signature,
        old.confirm + new.confirm,
        _merge_values(old.values, new.values),
        old.runs + new.runs,
        old.write_notes or new.write_notes,
        _merge_values(old.state, new.state),
    )


def _merge_values(
    old: tuple[tuple[str, tuple[str, ...]], ...], new: tuple[tuple[str, tuple[str, ...]], ...]
) -> tuple[tuple[str, tuple[str, ...]], ...]:
    merged: dict[str, set[str]] = {f: set(vs) for f, vs in old}
    for f, vs in new:
        merged.setdefault(f, set()).update(vs)
    return tuple((f, tuple(sorted(vs))) for f, vs in sorted(merged.items()))


def _add_messages(
    known: tuple[tuple[str, ...], ...], fresh: Iterable[tuple[str, ...]], cap: int
) -> tuple[tuple[str, ...], ...]:
    out = list(known)
    seen = set(known)
    for message in fresh:
        if message and message not in seen and len(out) < cap:
            out.append(message)
            seen.add(message)
    return tuple(out)


def add_success(
    record: TaskRecord,
    run: RunOperations,
    first: tuple[str, ...],
    asked: tuple[tuple[str, ...], ...],
    *,
    sample: str = "",
    now: str = "",
) -> TaskRecord:
    """`record` with one more successful run (see the module).

    Args:
        record: the task as it was.
        run: the run's operations.
        first: digests of its first message.
        asked: digests of its messages before its first write.
        sample: its first message, masked (kept when the task has none yet).
        now: the UTC ISO-8601 stamp.
    """
    ops = dict(record.ops)
    uses = dict(record.uses)
    for op, use in run.ops:
        ops[op] = ops.get(op, 0) + 1
        uses[op] = _merge_use(uses.get(op), use)
    chains = dict(record.chains)
    if run.chain:
        chains[run.chain] = chains.get(run.chain, 0) + 1
    return replace(
        record,
        firsts=_add_messages(record.firsts, (first,), MAX_FIRSTS),
        messages=_add_messages(record.messages, asked, MAX_MESSAGES),
        sample=record.sample or sample,
        runs=record.runs + 1,
        quiet=record.quiet + (0 if run.ops else 1),
        ops=ops,
        chains=chains,
        uses=uses,
        created_at=record.created_at or now,
        updated_at=now or record.updated_at,
    )


def add_failure(record: TaskRecord, run: RunOperations, first: tuple[str, ...], *, now: str = "") -> TaskRecord:
    """`record` with one more failed run: each write it made counts against its operation."""
    failed = dict(record.failed)
    for op in run.names:
        failed[op] = failed.get(op, 0) + 1
    return replace(
        record,
        firsts=_add_messages(record.firsts, (first,), MAX_FIRSTS),
        failed=failed,
        created_at=record.created_at or now,
        updated_at=now or record.updated_at,
    )


def add_contradiction(record: TaskRecord, operations: Iterable[str], *, now: str = "") -> TaskRecord:
    """`record` with one more run that was given `operations` and did not make them."""
    contradicted = dict(record.contradicted)
    for op in operations:
        contradicted[op] = contradicted.get(op, 0) + 1
    return replace(record, contradicted=contradicted, updated_at=now or record.updated_at)


# ---------------------------------------------------------------------- procedures


def _tool_of(signature: str) -> str:
    return signature.split("(", 1)[0]


def _share_note(k: int, n: int) -> str:
    return f"optional, {k} of {n} tasks"


def _values_note(values: Counter[tuple[str, str]], tasks: int) -> tuple[tuple[str, str], ...]:
    by_arg: dict[str, list[tuple[int, str]]] = {}
    for (arg, value), k in values.items():
        by_arg.setdefault(arg, []).append((k, value))
    out = []
    for arg in sorted(by_arg):
        seen = sorted(by_arg[arg], key=lambda kv: (-kv[0], kv[1]))
        shared = [(k, v) for k, v in seen if k >= 2 or tasks < 2]
        if shared:
            out.append((arg, ", ".join(f"{v} {k}" for k, v in shared[:6]) + f" of {tasks} tasks"))
    return tuple(out)


def _state_note(state: dict[str, Counter[str]], tasks: int) -> tuple[tuple[str, str], ...]:
    """The record's state every supporting task wrote in: a field with one value in all of them."""
    held = sorted(
        (name, value) for name, counts in state.items() if len(counts) == 1
        for value, k in counts.items() if k == tasks >= MIN_CONDITION_TASKS
    )
    if not held:
        return ()
    return (("when", ", ".join(f"{name} is {value}" for name, value in held) + f" in all {tasks} tasks"),)


def operation_procedure(operation: str, tasks: Iterable[TaskRecord]) -> Procedure | None:
    """The procedure of `operation` over the tasks (see the module); None when no task made it.

    Args:
        operation: the write tool's name.
        tasks: every task record (those that neither made nor were counted against the
            operation are skipped).
    """
    supporting: list[TaskRecord] = []
    against = 0
    for task in tasks:
        if task.supports(operation):
            supporting.append(task)
        elif task.against(operation):
            against += 1
    supporting = [t for t in supporting if operation in t.uses]
    if not supporting:
        return None
    supporting.sort(key=lambda t: t.id)
    n = len(supporting)
    read_tasks: Counter[str] = Counter()
    read_rank: dict[str, float] = {}
    read_form: dict[str, Counter[tuple[str, tuple[tuple[str, str], ...]]]] = {}
    write_form: Counter[tuple[str, tuple[tuple[str, str], ...]]] = Counter()
    signature = ""
    values: Counter[tuple[str, str]] = Counter()
    confirm = runs = 0
    state: dict[str, Counter[str]] = {}
    for task in supporting:
        use = task.uses[operation]
        for field_name, seen_values in use.state:
            state.setdefault(field_name, Counter()).update(seen_values)
        for rank, (sig, tpl, notes) in enumerate(use.reads):
            read_tasks[sig] += 1
            read_rank[sig] = read_rank.get(sig, 0.0) + rank / max(1, len(use.reads))
            read_form.setdefault(sig, Counter())[(tpl, notes)] += 1
        write_form[(use.write, use.write_notes)] += 1
        signature = signature or use.signature
        values.update((arg, v) for arg, vs in use.values for v in vs)
        confirm += use.confirm
        runs += use.runs
    steps: list[ProcedureStep] = []
    required_tools = {operation}
    ordered = sorted(read_tasks, key=lambda sig: (read_rank[sig] / read_tasks[sig], sig))
    for sig in ordered:
        k = read_tasks[sig]
        if k < n and k < math.ceil(OPTIONAL_SHARE * n):
            continue
        (tpl, notes), _ = min(read_form[sig].items(), key=lambda kv: (-kv[1], kv[0]))
        steps.append(ProcedureStep(tpl, sig, notes, note="" if k == n else _share_note(k, n)))
        if k == n:
            required_tools.add(_tool_of(sig))
    if runs and 2 * confirm >= runs:
        steps.append(ProcedureStep(CONFIRM, CONFIRM_SIGNATURE))
    (write, write_notes), _ = min(write_form.items(), key=lambda kv: (-kv[1], kv[0]))
    notes = write_notes + _values_note(values, n) + _state_note(state, n)
    steps.append(ProcedureStep(write, signature or operation + "()", notes))
    sample = max(supporting, key=lambda t: (t.ops.get(operation, 0), t.id)).sample
    return Procedure(
        id=operation_id(operation),
        kind=TOOL,
        steps=tuple(steps),
        tools=tuple(sorted(required_tools)),
        triggers={},
        trigger_runs=sum(t.ops.get(operation, 0) for t in supporting),
        successes=n,
        failures=against,
        sample_task=sample,
        created_at=min((t.created_at for t in supporting if t.created_at), default=""),
        updated_at=max((t.updated_at for t in supporting if t.updated_at), default=""),
        scope=OPERATION,
    )


def operations_of(tasks: Iterable[TaskRecord]) -> set[str]:
    """Every write operation a task made or was counted against."""
    out: set[str] = set()
    for task in tasks:
        out.update(task.ops)
        out.update(task.failed)
        out.update(task.contradicted)
    return out


def operation_of(procedure: Procedure) -> str:
    """The write tool an operation procedure ends with ('' for any other procedure)."""
    if procedure.scope != OPERATION or not procedure.steps:
        return ""
    return _tool_of(procedure.steps[-1].signature)
