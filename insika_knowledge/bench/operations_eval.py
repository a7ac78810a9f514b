"""Held-out evaluation of operation procedures: dev and test halves by user group.

For files of tool-calling sessions (the tau2-bench airline and retail samples), each file is
one tenant (its own memory). The sessions are split by ``metadata.user_group`` (else
``metadata.task_id``; a group wholly on one side) into ``dev`` and ``test``
(`insika_knowledge.bench.holdout.half_of`: a hash of the group, never file order).

1. **Dev only, leave one group out.** For every dev group, the procedures are mined from
   the file's *other* dev groups, and the group's runs are replayed as the live path sees
   them: a recall on each user message before the run's first write, the first hit kept.
   Every setting of the sweep (`GRID`: neighbours, min_similarity, min_agreement, margin,
   min_confidence) is scored on those replays; the chosen one recalls the most correct
   runs with precision >= 0.85 and wrong recalls <= 3 % of successful runs, or, when none
   does, has the highest Wilson lower bound of precision.
2. **Test, once.** The procedures are mined from every dev group of the file, and every
   test run is replayed once with the chosen settings.

The labels (``metadata.intent``, ``gt_actions``) are read only here, to score; mining and
recall never see them. A task's identity in mining is the task id the sessions carry
(``metadata.task_id``, as ``procedures mine`` reads a file), or, with
``identity="derived"``, the first user message (what the live path has).

Scored over successful runs (a recall should help them) and, apart, failed ones:

- **correct**: every recalled write was made by the run (a call of that tool that went
  through), at name level; ``slot_correct`` also needs the run's call to have the
  procedure's argument names; **wrong**: the other recalls;
- **precision** = correct / recalls; **wrong rate** = wrong / successful runs; **coverage**
  = recalls / successful runs, and as a share of the **reachable** ceiling: successful runs
  that made a write the dev procedures can recall (some mined operation passes the bounds);
- **skeleton precision**: the recalled procedure's tool steps the run performed, in order,
  over the recalled tool steps; **skeleton coverage**: the run's distinct tools up to its
  last recalled write that the recalled steps name;
- failed runs given the right and the wrong operation (judged against the task's label,
  ``metadata.intent``: what a failed run wrote may be why it failed);
- per intent (the label), and 95 % bootstrap intervals over test tasks (1000 resamples).
"""

from __future__ import annotations

import itertools
import os
import random
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Final

from insika_knowledge.bench.datasets import benchmark_data, half_of, jsonl_rows
from insika_knowledge.bench.operations_deployed import ORDERS, deployed
from insika_knowledge.bench.operations_runs import (
    TARGETS,
    Setting,
    fold_of,
    meets,
    off_domain_recalls,
    read_runs,
    recallable_of,
    replay_run,
    score_run,
    summarise,
)
from insika_knowledge.errors import UserError
from insika_knowledge.procedure import wilson_lower_bound
from insika_knowledge.procedures.config import ProceduresConfig
from insika_knowledge.procedures.trace.steps import build
from insika_knowledge.sessions import read_sessions

#: The sweep on dev: (neighbours, min_similarity, min_agreement, margin, min_confidence).
GRID: Final = {
    "neighbours": (2, 3, 4, 5),
    "min_similarity": (0.2, 0.3, 0.4, 0.5, 0.6),
    "min_agreement": (0.5, 0.6, 0.75, 1.0),
    "margin": (0.0, 0.05, 0.1, 0.2),
    "min_confidence": (0.2, 0.3, 0.4),
}
BOOTSTRAP: Final = 1000


def configured(config: ProceduresConfig) -> Setting:
    """The setting `config` holds."""
    return Setting(config.neighbours, config.min_similarity, config.min_agreement, config.margin,
                   config.min_confidence)


def bootstrap(rows: Sequence[dict[str, Any]], *, resamples: int = BOOTSTRAP, seed: int = 23) -> dict[str, list[float]]:
    """95 % percentile intervals of precision, wrong rate and coverage, resampling tasks."""
    by_task: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        by_task.setdefault(row["task"], []).append(row)
    tasks = sorted(by_task)
    if not tasks:
        return {}
    rnd = random.Random(seed)
    samples: dict[str, list[float]] = {"precision": [], "wrong_recall_rate": [], "coverage": []}
    for _ in range(resamples):
        chosen = [r for _ in tasks for r in by_task[tasks[rnd.randrange(len(tasks))]]]
        s = summarise(chosen)
        for name in samples:
            if s[name] is not None:
                samples[name].append(s[name])
    out = {}
    for name, values in samples.items():
        if values:
            values.sort()
            low, high = values[int(0.025 * (len(values) - 1))], values[int(0.975 * (len(values) - 1))]
            out[name] = [round(low, 4), round(high, 4)]
    return out


def _choose(scored: list[tuple[Setting, dict[str, Any]]]) -> tuple[Setting, dict[str, Any], bool]:
    """The setting dev prefers (see the module): ``(setting, its dev summary, targets met on dev)``."""
    def strict(item: tuple[Setting, dict[str, Any]]) -> tuple[float, ...]:
        s = item[0]
        return (s.min_similarity, s.min_agreement, s.margin, s.min_confidence, -s.neighbours)

    def counted(m: dict[str, Any]) -> tuple[int, int, int]:  # an off-domain recall is a wrong recall
        off = m["off_domain_recalled"]
        return m["recalls"] + off, m["correct"], m["wrong"] + off

    def qualifies(m: dict[str, Any]) -> bool:
        recalls, correct, wrong = counted(m)
        return bool(recalls) and correct >= TARGETS["precision"] * recalls \
            and wrong <= TARGETS["wrong_recall_rate"] * m["successful_runs"]

    qualified = [(s, m) for s, m in scored if qualifies(m)]
    if qualified:
        best = max(qualified, key=lambda item: (item[1]["correct"], -counted(item[1])[2], strict(item)))
        return best[0], best[1], True
    best = max(scored, key=lambda item: (wilson_lower_bound(item[1]["correct"], counted(item[1])[0]),
                                         item[1]["correct"], strict(item)))
    return best[0], best[1], False


#: The shipped off-domain requests (`benchmarks/procedures/off_domain.jsonl`, its README).
OFF_DOMAIN: Final = "procedures/off_domain.jsonl"


def off_domain_requests(path: Path | None = None) -> tuple[list[str], list[str]]:
    """The dev and the test requests of an off-domain set (even and odd ``id``: `half_of`),
    each in ``id`` order (default: `OFF_DOMAIN`).

    Raises:
        UserError: the file is missing, or a line is not JSON or not ``{"id": int, "text": str}``
            (file and line named: `jsonl_rows`).
    """
    where = benchmark_data(OFF_DOMAIN) if path is None else path
    found: list[tuple[int, str]] = []
    for number, row in jsonl_rows(where, "the off-domain requests", "procedures"):
        try:
            found.append((int(row["id"]), str(row["text"])))
        except (KeyError, TypeError, ValueError) as exc:
            raise UserError(f"{where}:{number}: not an off-domain request ({exc!r})") from None
    found.sort()
    return ([text for i, text in found if half_of(i) == "dev"], [text for i, text in found if half_of(i) == "test"])


def _grid(grid: Mapping[str, Sequence[float]]) -> list[Setting]:
    return [Setting(int(n), s, a, m, c) for n, s, a, m, c in itertools.product(
        grid["neighbours"], grid["min_similarity"], grid["min_agreement"], grid["margin"], grid["min_confidence"])]


def evaluate_operations(
    paths: Sequence[str],
    *,
    config: ProceduresConfig | None = None,
    identity: str = "task",
    grid: Mapping[str, Sequence[float]] | None = None,
    fixed: Setting | None = None,
    progress: Callable[[str], None] | None = None,
    off_domain: tuple[Sequence[str], Sequence[str]] | None = None,
) -> dict[str, Any]:
    """Choose the settings on dev (leave one group out), score test once (see the module).

    Args:
        paths: normalised JSONL files (each one tenant).
        config: verify settings; its thresholds are what the report compares the choice with.
        identity: ``task`` (the sessions' task ids) or ``derived`` (the first user message).
        grid: the sweep (default `GRID`).
        fixed: score test with this setting instead of the dev choice (dev is still swept).
        progress: called with a line per step.
        off_domain: ``(dev, test)`` requests no operation serves, each a new session's whole
            first message (None: `OFF_DOMAIN`, the shipped set, by `off_domain_requests`).
            Each dev one is asked once of one leave-one-out fold per file, and its recall
            counts as a wrong one while the thresholds are chosen; each test one is asked
            once per file of the test fold, and counted (``test_off_domain``).

    Returns:
        ``{"files", "identity", "dev": {...}, "chosen": {...}, "configured": {...},
        "test": {...}, "test_by_intent": {...}, "test_intervals": {...}, "runs": [...],
        "targets", "meets_targets", "deployed": {...}}`` (``deployed``: the test runs
        learned one by one after scoring, `insika_knowledge.bench.operations_deployed`).

    Raises:
        UserError: a file is unreadable, a session has no task id or a label of the wrong
            type, a tool call has no name, or a session id is given twice
            (`insika_knowledge.bench.operations_runs.read_runs`).
    """
    if identity not in ("task", "derived"):
        raise UserError(f"identity {identity!r}: use task or derived")
    config = config or ProceduresConfig()
    say = progress or (lambda _line: None)
    given = [os.path.realpath(path) for path in paths]
    twice = next((path for path, real in zip(paths, given, strict=True) if given.count(real) > 1), None)
    if twice is not None:
        raise UserError(f"{twice} is given twice (each file's runs count once)")
    seen: dict[str, str] = {}  # session id -> where: a run given twice is refused
    files = {path: read_runs(path, seen) for path in paths}
    settings = _grid(grid or GRID)
    dev_requests, test_requests = off_domain_requests() if off_domain is None else off_domain
    # 1. dev: leave one group out, every setting scored on the same replays
    dev_rows: dict[Setting, list[dict[str, Any]]] = {s: [] for s in settings}
    dev_off: dict[Setting, int] = dict.fromkeys(settings, 0)
    for runs in files.values():
        dev = [r for r in runs if r.half == "dev"]
        groups = sorted({r.group for r in dev})
        for k, group in enumerate(groups):
            held = [r for r in dev if r.group == group]
            fold = fold_of([r for r in dev if r.group != group], held, identity, dev_requests[k::len(groups)])
            say(f"dev fold {group}: {len(held)} runs")
            for confidence in sorted({s.min_confidence for s in settings}):
                allowed = recallable_of(fold, confidence)
                for setting in (s for s in settings if s.min_confidence == confidence):
                    dev_rows[setting].extend(score_run(r, replay_run(r, fold, setting, allowed), fold, allowed)
                                             for r in held)
                    dev_off[setting] += off_domain_recalls(fold, setting, allowed)
    dev_asked = len(dev_requests) * sum(1 for runs in files.values() if any(r.half == "dev" for r in runs))
    scored = [(s, {**summarise(rows), "off_domain_asked": dev_asked, "off_domain_recalled": dev_off[s]})
              for s, rows in dev_rows.items()]
    chosen, chosen_dev, dev_met = _choose(scored)
    dev_recalled = any(m["recalls"] for _, m in scored)
    if not dev_recalled:  # no dev run, or one dev group (nothing to mine from): nothing to choose on
        chosen = configured(config)
        chosen_dev = next((m for s, m in scored if s == chosen), summarise([]))
    use = fixed or chosen
    # 2. test, once
    rows: list[dict[str, Any]] = []
    test_off = {"asked": 0, "recalled": 0}
    for path, runs in files.items():
        dev = [r for r in runs if r.half == "dev"]
        test = [r for r in runs if r.half == "test"]
        fold = fold_of(dev, test, identity, test_requests)
        allowed = recallable_of(fold, use.min_confidence)
        say(f"test {path}: {len(test)} runs, {len(allowed)} recallable operations")
        rows.extend(score_run(r, replay_run(r, fold, use, allowed), fold, allowed) for r in test)
        test_off["asked"] += len(test_requests)
        test_off["recalled"] += off_domain_recalls(fold, use, allowed)
    summary = summarise(rows)
    say(f"test as deployed: file order and {ORDERS} shuffled orders")
    as_deployed = deployed(files, use, identity)
    intents = sorted({r["intent"] for r in rows})
    at_config = configured(config)
    return {
        "files": list(paths),
        "identity": identity,
        "dev": {"groups": len({r.group for runs in files.values() for r in runs if r.half == "dev"}),
                "settings_swept": len(settings), "chosen_summary": chosen_dev, "targets_met_on_dev": dev_met,
                "chosen_on_dev": dev_recalled,
                "configured_summary": next((m for s, m in scored if s == at_config), None)},
        "chosen": chosen.as_dict(),
        "configured": at_config.as_dict(),
        "configured_is_chosen": at_config == chosen,
        "scored_with": use.as_dict(),
        "test": summary,
        "test_off_domain": test_off,
        "test_by_intent": {i: summarise([r for r in rows if r["intent"] == i]) for i in intents},
        "test_by_file": {f: summarise([r for r in rows if r["file"] == f]) for f in sorted({r["file"] for r in rows})},
        "test_intervals": bootstrap(rows),
        "test_groups": len({r["group"] for r in rows}),
        "runs": rows,
        "targets": dict(TARGETS),
        "meets_targets": meets(summary),
        "deployed": as_deployed,
    }


def format_operations(report: Mapping[str, Any]) -> str:
    """A plain-text rendering of `evaluate_operations`' report."""

    def pct(value: float | None) -> str:
        return "n/a" if value is None else f"{100 * value:.1f}%"

    def line(name: str, s: Mapping[str, Any]) -> str:
        return (f"{name}: {s['successful_runs']} successful runs, {s['recalls']} recalls, {s['correct']} correct "
                f"({s['slot_correct']} at slot level), {s['wrong']} wrong; precision {pct(s['precision'])}, "
                f"wrong {pct(s['wrong_recall_rate'])}, coverage {pct(s['coverage'])} "
                f"(correct {pct(s['correct_coverage'])}; {pct(s['coverage_of_reachable'])} of {s['reachable']} "
                f"reachable); skeleton precision {pct(s['skeleton_precision'])}, coverage "
                f"{pct(s['skeleton_coverage'])}; failed runs {s['failed_runs']}, given the right operation "
                f"{s['failed_given_right']}, the wrong one {s['failed_given_wrong']}")

    d = report["dev"]
    ci = report["test_intervals"]
    met = report["meets_targets"]
    t = report["targets"]
    out = [
        f"files: {', '.join(report['files'])} (task identity: {report['identity']})",
        f"dev: {d['groups']} user groups, leave one group out, {d['settings_swept']} settings swept; chosen "
        f"{report['chosen']} ({'meets' if d['targets_met_on_dev'] else 'does NOT meet'} the targets on dev)"
        if d.get("chosen_on_dev", True) else
        f"dev: {d['groups']} user groups: no setting recalled anything on dev (reachable writes: "
        f"{d['chosen_summary'].get('reachable', 0)}), so nothing was chosen; the configured thresholds are used: "
        f"{report['chosen']}",
        "  " + line("dev (chosen)", d["chosen_summary"]),
        f"  dev off-domain requests (each asked of one fold per file): "
        f"{d['chosen_summary'].get('off_domain_recalled', 0)} of {d['chosen_summary'].get('off_domain_asked', 0)} "
        "recalled an operation",
        f"  configured defaults {report['configured']}: "
        + (("the dev choice" if report["configured_is_chosen"] else "NOT the dev choice")
           if d.get("chosen_on_dev", True) else "in use (nothing was chosen)"),
        f"test: {report['test_groups']} user groups, scored once with {report['scored_with']}",
        "  " + line("test", report["test"]),
        f"  test off-domain requests (each asked once per file): {report['test_off_domain']['recalled']} of "
        f"{report['test_off_domain']['asked']} recalled an operation",
        f"  95% intervals over tasks: precision {ci.get('precision', 'n/a')}, wrong "
        f"{ci.get('wrong_recall_rate', 'n/a')}, coverage {ci.get('coverage', 'n/a')}",
    ]
    if report["test"]["unscored_runs"]:
        out.append(f"  {report['test']['unscored_runs']} test runs have no outcome 'success' or 'failure' and were "
                   "not scored")
    for name, s in report["test_by_file"].items():
        out.append("  " + line(f"test {name}", s))
    for intent, s in report["test_by_intent"].items():
        out.append(f"    {intent or '(none)'}: {s['successful_runs']} ok / {s['failed_runs']} failed runs; recalls "
                   f"{s['recalls']}, correct {s['correct']}, wrong {s['wrong']}, coverage {pct(s['coverage'])}, "
                   f"reachable {s['reachable']}")
    out.append(
        f"targets (test): precision >= {t['precision']:.2f} {_yes(met['precision'])}, wrong <= "
        f"{100 * t['wrong_recall_rate']:.0f}% {_yes(met['wrong_recalls'])}, coverage >= "
        f"{100 * t['coverage']:.0f}% {_yes(met['coverage'])}"
    )
    dep = report["deployed"]
    spread = ", ".join(f"{name.replace('_recall_rate', '')} {' / '.join(pct(v) for v in dep['shuffled'][name])}"
                       for name in ("precision", "wrong_recall_rate", "coverage") if name in dep["shuffled"])
    dmet = dep["meets_targets"]
    out += [
        "test as deployed (the memory starts from dev and learns each test run after scoring it):",
        "  " + line("file order", dep["summary"]),
        f"  {dep['orders']} shuffled arrival orders (min / median / max): {spread or 'n/a'}",
        f"targets (test as deployed, file order): precision {_yes(dmet['precision'])}, wrong "
        f"{_yes(dmet['wrong_recalls'])}, coverage {_yes(dmet['coverage'])}",
        "recalls on test (scored once, memory frozen at dev):",
    ]
    for row in report["runs"]:
        if row["recalled"]:
            verdict = "correct" if row["correct"] else "WRONG"
            out.append(f"  {row['session_id']} ({row['outcome']}): {'+'.join(row['recalled'])} at message "
                       f"{row['at_message']}, score {row['score']:.2f}: {verdict}")
    if not any(row["recalled"] for row in report["runs"]):
        out.append("  (none: the memory abstained on every test run)")
    return "\n".join(out)


def _yes(value: bool | None) -> str:
    return "n/a" if value is None else ("met" if value else "NOT met")


def tool_calling(paths: Iterable[str]) -> bool:
    """Most sessions of the files are tool-calling traces (no shell command), with user groups or task ids."""
    tool = shell = 0
    for path in paths:
        for session in itertools.islice(read_sessions(path), 50):
            steps = build(session.messages).steps
            if any(s.kind == "shell" for s in steps):
                shell += 1
            else:
                tool += 1
    return tool > shell


__all__ = ["GRID", "TARGETS", "Setting", "bootstrap", "configured", "evaluate_operations", "format_operations",
           "meets", "summarise", "tool_calling"]
