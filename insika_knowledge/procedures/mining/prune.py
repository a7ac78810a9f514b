"""Pruning: exploration collapse, target hoisting, and superseded steps.

Given a trace's steps in order, `prune` keeps what a later run has to do again:

- superseded steps go: a failed step that a later step with the same signature retried
  successfully (a failing verify run counts as retried by a later run of the same verify
  tool; two shell commands are the same attempt when their acting verbs and file
  arguments agree, whatever ``cd`` or environment they set), an edit whose file and range
  (or record) a later write overwrote (a whole-file write overwrites every earlier edit of
  that file), and a removal of a file that a later whole-file write created again;
- read-only exploration goes (``ls``, ``cat``, ``grep``, ``git status``, ``get_*`` tools...),
  but what it found stays useful: when a kept step uses a target (an id, a path) that a
  pruned step's output revealed and the user never gave, the kept step carries the note
  ``(parameter, "from <exploring step>")`` (a target an earlier kept step already used is
  not "discovered"); an editor step that names no file gets the
  file a pruned viewer step had opened, as ``("file", path)``;
- calls that never got a result go.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from insika_knowledge.procedure import ProcedureStep
from insika_knowledge.procedures.trace.shell import retry_key
from insika_knowledge.procedures.trace.steps import PENDING, SHELL, Step


def _retry_key(step: Step) -> str:
    if step.verify and not step.configured:
        return "verify:" + step.name
    return retry_key(step.template) if step.kind == SHELL else step.signature


def _resolved_edit_keys(steps: Sequence[Step]) -> list[str]:
    open_file = ""
    keys = []
    for step in steps:
        key = step.edit_key
        if key.startswith("@open|"):
            key = (open_file or "@open") + key[5:]
        keys.append(key)
        if step.opens:
            open_file = step.opens
        elif step.edit_key.endswith("|*") and not step.edit_key.startswith("@open"):
            open_file = step.edit_key[:-2]
    return keys


def superseded(steps: Sequence[Step]) -> set[int]:
    """Positions of the steps a later step retried or overwrote."""
    keys = _resolved_edit_keys(steps)
    drop: set[int] = set()
    later_ok: set[str] = set()
    later_writes: set[str] = set()
    later_whole: set[str] = set()
    for i in range(len(steps) - 1, -1, -1):
        step, key = steps[i], keys[i]
        if step.failed:
            if _retry_key(step) in later_ok:
                drop.add(i)
            continue
        if key:
            target, _, where = key.rpartition("|")
            if key in later_writes or target in later_whole:
                drop.add(i)
                continue
            later_writes.add(key)
            if where == "*":
                later_whole.add(target)
        later_ok.add(_retry_key(step))
    return drop


def sources(
    steps: Sequence[Step], given: set[str] | frozenset[str] = frozenset()
) -> list[tuple[tuple[str, str], ...]]:
    """For each step, the ``(parameter, "from <exploring step>")`` notes of its targets.

    The rule of `prune`'s hoisting, applied to every step, exploration included: a target
    a step uses that an earlier exploring step's output revealed (and the user never gave,
    nor an earlier write used) is noted with the exploring step's name.

    Args:
        steps: answered steps in order.
        given: hashes of the tokens the user wrote.

    Returns:
        One tuple of notes per step, in order.
    """
    discovered: dict[str, str] = {}
    known = set(given)
    out: list[tuple[tuple[str, str], ...]] = []
    for step in steps:
        hoisted: list[tuple[str, str]] = []
        params: set[str] = set()
        for param, h in step.uses:
            source = discovered.get(h)
            if source is not None and param not in params and h not in known:
                hoisted.append((param, "from " + source))
                params.add(param)
        out.append(tuple(hoisted))
        if step.read_only:
            if not step.failed:
                for h in step.finds:
                    if h not in known and h not in discovered:
                        discovered[h] = step.name
        else:
            known.update(h for _, h in step.uses)
    return out


def prune(
    steps: Iterable[Step], given: set[str] | frozenset[str] = frozenset()
) -> list[tuple[Step, ProcedureStep]]:
    """The steps worth repeating, each with its canonical `ProcedureStep`.

    Args:
        steps: the trace's steps in order (`insika_knowledge.procedures.trace.steps.Step`).
        given: hashes of the tokens the user wrote (targets that were not discovered).

    Returns:
        ``(step, procedure step)`` pairs in order; hoisted notes are on the procedure step.
    """
    answered = [s for s in steps if s.status != PENDING]
    drop = superseded(answered)
    discovered: dict[str, str] = {}
    known = set(given)
    open_file, open_by_explorer = "", False
    kept: list[tuple[Step, ProcedureStep]] = []
    for i, step in enumerate(answered):
        if i in drop:
            continue
        if step.read_only:
            for h in step.finds:
                if h not in known and h not in discovered:
                    discovered[h] = step.name
            if step.opens:
                open_file, open_by_explorer = step.opens, True
            continue
        hoisted: list[tuple[str, str]] = []
        params: set[str] = set()
        for param, h in step.uses:
            source = discovered.get(h)
            if source is not None and param not in params and h not in known:
                hoisted.append((param, "from " + source))
                params.add(param)
        known.update(h for _, h in step.uses)
        if step.on_open_file and open_by_explorer and open_file and "file" not in params:
            hoisted.append(("file", open_file))
        if step.opens:
            open_file, open_by_explorer = step.opens, False
        elif step.edit_key.endswith("|*") and not step.edit_key.startswith("@open"):
            open_file, open_by_explorer = step.edit_key[:-2], False
        kept.append(
            (step, ProcedureStep(step.template, step.signature, tuple(hoisted), step.verify))
        )
    return kept
