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
- failed runs given the right and the wrong operation;
- per intent (the label), and 95 % bootstrap intervals over test tasks (1000 resamples).
"""

from __future__ import annotations

import itertools
import random
import statistics
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from insika_knowledge.bench.holdout import half_of
from insika_knowledge.errors import UserError
from insika_knowledge.procedure import Procedure, wilson_lower_bound
from insika_knowledge.procedures.config import ProceduresConfig
from insika_knowledge.procedures.mining.mine import FAILURE, SUCCESS, Miner
from insika_knowledge.procedures.mining.operations import CONFIRM_SIGNATURE, operation_of
from insika_knowledge.procedures.recall.match import MatchSettings, recallable_operations
from insika_knowledge.procedures.recall.recall import RecallIndex
from insika_knowledge.procedures.trace.steps import PENDING, TraceBuilder, build, is_handoff_tool
from insika_knowledge.procedures.trace.terms import asked_terms, digests, message_terms
from insika_knowledge.sessions import Session, read_sessions

TARGETS: Final = {"precision": 0.85, "wrong_recall_rate": 0.03, "coverage": 0.20}
#: The sweep on dev: (neighbours, min_similarity, min_agreement, margin, min_confidence).
GRID: Final = {
    "neighbours": (2, 3, 4, 5),
    "min_similarity": (0.2, 0.3, 0.4, 0.5, 0.6),
    "min_agreement": (0.5, 0.6, 0.75, 1.0),
    "margin": (0.0, 0.05, 0.1, 0.2),
    "min_confidence": (0.2, 0.3, 0.4),
}
BOOTSTRAP: Final = 1000


@dataclass(frozen=True)
class Setting:
    """One point of the sweep."""

    neighbours: int
    min_similarity: float
    min_agreement: float
    margin: float
    min_confidence: float

    @property
    def match(self) -> MatchSettings:
        """The matcher's part."""
        return MatchSettings(self.neighbours, self.min_similarity, self.min_agreement, self.margin)

    def as_dict(self) -> dict[str, float]:
        """JSON-ready."""
        return {"neighbours": self.neighbours, "min_similarity": self.min_similarity,
                "min_agreement": self.min_agreement, "margin": self.margin,
                "min_confidence": self.min_confidence}


def configured(config: ProceduresConfig) -> Setting:
    """The setting `config` holds."""
    return Setting(config.neighbours, config.min_similarity, config.min_agreement, config.margin,
                   config.min_confidence)


@dataclass
class Run:
    """One session, read once."""

    session: Session
    file: str
    group: str
    task: str
    half: str
    intent: str
    outcome: str | None
    builder: TraceBuilder
    writes: dict[str, set[str]] = field(default_factory=dict)  # tool -> signatures of its calls that went through
    tools: list[str] = field(default_factory=list)  # tool names called, in order (answered steps)
    first_write: int = -1


def _read(path: str) -> list[Run]:
    out = []
    for session in read_sessions(path):
        meta = session.metadata
        task = meta.get("task_id")
        if task is None:
            raise UserError(f"session {session.session_id} (line {session.line}) has no metadata.task_id; "
                            "the evaluation splits by user group or task")
        group = str(meta.get("user_group") or task)
        builder = build(session.messages)
        run = Run(session, str(path), f"{path}:{group}", f"{path}:{task}", half_of(group),
                  str(meta.get("intent", "")), session.outcome if session.outcome in (SUCCESS, FAILURE) else None,
                  builder)
        for step in builder.steps:
            if step.status == PENDING:
                continue
            run.tools.append(step.name)
            if not step.read_only and run.first_write < 0:
                run.first_write = len(run.tools) - 1
            if not step.read_only and not step.failed and not is_handoff_tool(step.name):
                run.writes.setdefault(step.name, set()).add(step.signature)
        out.append(run)
    return out


@dataclass
class Fold:
    """Procedures mined from some runs, and the replays of others."""

    index: RecallIndex
    procedures: dict[str, Procedure]  # operation -> its procedure (every one mined)
    # run id -> per asked message: (asking terms, analysed terms, ranked similarities)
    ranked: dict[str, list[tuple[frozenset[str], frozenset[str], list[tuple[float, str]]]]] = field(
        default_factory=dict)


def _fold(train: Sequence[Run], held: Sequence[Run], identity: str) -> Fold:
    miner = Miner()
    for run in train:
        miner.add_trace(run.session.session_id, run.builder, run.outcome,
                        task_key=run.task if identity == "task" else None)
    index = RecallIndex(0.0, 1.0, key=miner.key)
    mined = miner.procedures()
    index.update(mined)
    index.update_tasks(miner.tasks.values())
    fold = Fold(index, {operation_of(p): p for p in mined if operation_of(p)})
    matcher = index.matcher
    for run in held:
        ranked = fold.ranked[run.session.session_id] = []
        before: frozenset[str] = frozenset()
        for message in run.builder.asked:
            terms = message_terms(message)
            asking = asked_terms(message)
            asks = matcher.asks(asking)
            ranked.append((asking, terms, matcher.similarities(digests(miner.key, terms | before)) if asks else []))
            before = terms
    return fold


def _recallable(fold: Fold, min_confidence: float) -> dict[str, Procedure]:
    return {op: p for op, p in fold.procedures.items()
            if p.confidence >= min_confidence and p.recurs and p.steps}


def _replay(run: Run, fold: Fold, setting: Setting, allowed: Mapping[str, Procedure]) -> dict[str, Any]:
    check = recallable_operations(allowed, None)
    for at, (terms, words, ranked) in enumerate(fold.ranked[run.session.session_id]):
        decision = fold.index.matcher.decide(terms, (), check, settings=setting.match, ranked=ranked, words=words)
        if decision.operations:
            return {"at": at, "operations": list(decision.operations), "score": round(decision.score, 4),
                    "agreement": round(decision.agreement, 4)}
    return {"at": -1, "operations": [], "score": 0.0, "agreement": 0.0}


def _skeleton(run: Run, procedures: Sequence[Procedure]) -> tuple[float, float]:
    """``(precision, coverage)`` of the recalled steps against the run's tool calls (see the module)."""
    wanted = [s.signature.split("(", 1)[0] for p in procedures for s in p.steps if s.signature != CONFIRM_SIGNATURE]
    if not wanted:
        return 0.0, 0.0
    done, i = 0, 0
    for tool in run.tools:
        if i < len(wanted) and tool == wanted[i]:
            done, i = done + 1, i + 1
        elif tool in wanted[i:]:
            i = wanted.index(tool, i) + 1
            done += 1
    last = max((k for k, t in enumerate(run.tools) if t in {operation_of(p) for p in procedures}), default=-1)
    upto = set(run.tools[: last + 1]) if last >= 0 else set(run.tools)
    coverage = len(upto & set(wanted)) / len(upto) if upto else 0.0
    return done / len(wanted), coverage


def _score_row(run: Run, replay: dict[str, Any], fold: Fold, allowed: Mapping[str, Procedure]) -> dict[str, Any]:
    ops = replay["operations"]
    row: dict[str, Any] = {
        "session_id": run.session.session_id,
        "file": Path(run.file).parent.name or run.file,
        "task": run.task,
        "group": run.group,
        "intent": run.intent,
        "outcome": run.outcome,
        "writes": sorted(run.writes),
        "recalled": ops,
        "at_message": replay["at"],
        "score": replay["score"],
        "reachable": any(op in allowed for op in run.writes),
        "correct": None,
        "slot_correct": None,
        "skeleton_precision": None,
        "skeleton_coverage": None,
    }
    if ops:
        procedures = [fold.procedures[op] for op in ops]
        row["correct"] = all(op in run.writes for op in ops)
        row["slot_correct"] = all(
            op in run.writes and p.steps[-1].signature in run.writes[op] for op, p in zip(ops, procedures, strict=True)
        )
        precision, coverage = _skeleton(run, procedures)
        row["skeleton_precision"], row["skeleton_coverage"] = round(precision, 4), round(coverage, 4)
    return row


def _ratio(num: float, den: float) -> float | None:
    return num / den if den else None


def summarise(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Recalls, correct, wrong, precision, coverage, reachable, skeleton, failed runs (see the module)."""
    ok = [r for r in rows if r["outcome"] == SUCCESS]
    failed = [r for r in rows if r["outcome"] == FAILURE]
    recalled = [r for r in ok if r["recalled"]]
    correct = [r for r in recalled if r["correct"]]
    slot = [r for r in recalled if r["slot_correct"]]
    reachable = [r for r in ok if r["reachable"]]
    skel = [r for r in recalled if r["skeleton_precision"] is not None]
    failed_recalled = [r for r in failed if r["recalled"]]
    return {
        "successful_runs": len(ok),
        "failed_runs": len(failed),
        "recalls": len(recalled),
        "correct": len(correct),
        "slot_correct": len(slot),
        "wrong": len(recalled) - len(correct),
        "precision": _ratio(len(correct), len(recalled)),
        "slot_precision": _ratio(len(slot), len(recalled)),
        "wrong_recall_rate": _ratio(len(recalled) - len(correct), len(ok)),
        "coverage": _ratio(len(recalled), len(ok)),
        "correct_coverage": _ratio(len(correct), len(ok)),
        "reachable": len(reachable),
        "coverage_of_reachable": _ratio(len([r for r in correct if r["reachable"]]), len(reachable)),
        "skeleton_precision": statistics.fmean(r["skeleton_precision"] for r in skel) if skel else None,
        "skeleton_coverage": statistics.fmean(r["skeleton_coverage"] for r in skel) if skel else None,
        "failed_given_right": sum(1 for r in failed_recalled if r["correct"]),
        "failed_given_wrong": sum(1 for r in failed_recalled if not r["correct"]),
    }


def meets(summary: Mapping[str, Any]) -> dict[str, bool | None]:
    """Which targets `summary` meets (None: no recall to measure precision on)."""
    p, w, c = summary["precision"], summary["wrong_recall_rate"], summary["coverage"]
    return {
        "precision": None if p is None else p >= TARGETS["precision"],
        "wrong_recalls": None if w is None else w <= TARGETS["wrong_recall_rate"],
        "coverage": None if c is None else c >= TARGETS["coverage"],
    }


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

    qualified = [(s, m) for s, m in scored if m["recalls"] and m["precision"] >= TARGETS["precision"]
                 and m["wrong_recall_rate"] <= TARGETS["wrong_recall_rate"]]
    if qualified:
        best = max(qualified, key=lambda item: (item[1]["correct"], -item[1]["wrong"], strict(item)))
        return best[0], best[1], True
    best = max(scored, key=lambda item: (wilson_lower_bound(item[1]["correct"], item[1]["recalls"]),
                                         item[1]["correct"], strict(item)))
    return best[0], best[1], False


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
) -> dict[str, Any]:
    """Choose the settings on dev (leave one group out), score test once (see the module).

    Args:
        paths: normalised JSONL files (each one tenant).
        config: verify settings; its thresholds are what the report compares the choice with.
        identity: ``task`` (the sessions' task ids) or ``derived`` (the first user message).
        grid: the sweep (default `GRID`).
        fixed: score test with this setting instead of the dev choice (dev is still swept).
        progress: called with a line per step.

    Returns:
        ``{"files", "identity", "dev": {...}, "chosen": {...}, "configured": {...},
        "test": {...}, "test_by_intent": {...}, "test_intervals": {...}, "runs": [...],
        "targets", "meets_targets"}``.

    Raises:
        UserError: a file is unreadable or a session has no task id.
    """
    if identity not in ("task", "derived"):
        raise UserError(f"identity {identity!r}: use task or derived")
    config = config or ProceduresConfig()
    say = progress or (lambda _line: None)
    files = {path: _read(path) for path in paths}
    settings = _grid(grid or GRID)
    # 1. dev: leave one group out, every setting scored on the same replays
    dev_rows: dict[Setting, list[dict[str, Any]]] = {s: [] for s in settings}
    for runs in files.values():
        dev = [r for r in runs if r.half == "dev"]
        for group in sorted({r.group for r in dev}):
            held = [r for r in dev if r.group == group]
            fold = _fold([r for r in dev if r.group != group], held, identity)
            say(f"dev fold {group}: {len(held)} runs")
            for confidence in sorted({s.min_confidence for s in settings}):
                allowed = _recallable(fold, confidence)
                for setting in (s for s in settings if s.min_confidence == confidence):
                    dev_rows[setting].extend(_score_row(r, _replay(r, fold, setting, allowed), fold, allowed)
                                             for r in held)
    scored = [(s, summarise(rows)) for s, rows in dev_rows.items()]
    chosen, chosen_dev, dev_met = _choose(scored)
    use = fixed or chosen
    # 2. test, once
    rows: list[dict[str, Any]] = []
    for path, runs in files.items():
        dev = [r for r in runs if r.half == "dev"]
        test = [r for r in runs if r.half == "test"]
        fold = _fold(dev, test, identity)
        allowed = _recallable(fold, use.min_confidence)
        say(f"test {path}: {len(test)} runs, {len(allowed)} recallable operations")
        rows.extend(_score_row(r, _replay(r, fold, use, allowed), fold, allowed) for r in test)
    summary = summarise(rows)
    intents = sorted({r["intent"] for r in rows})
    at_config = configured(config)
    return {
        "files": list(paths),
        "identity": identity,
        "dev": {"groups": len({r.group for runs in files.values() for r in runs if r.half == "dev"}),
                "settings_swept": len(settings), "chosen_summary": chosen_dev, "targets_met_on_dev": dev_met,
                "configured_summary": next((m for s, m in scored if s == at_config), None)},
        "chosen": chosen.as_dict(),
        "configured": at_config.as_dict(),
        "configured_is_chosen": at_config == chosen,
        "scored_with": use.as_dict(),
        "test": summary,
        "test_by_intent": {i: summarise([r for r in rows if r["intent"] == i]) for i in intents},
        "test_by_file": {f: summarise([r for r in rows if r["file"] == f]) for f in sorted({r["file"] for r in rows})},
        "test_intervals": bootstrap(rows),
        "test_groups": len({r["group"] for r in rows}),
        "runs": rows,
        "targets": dict(TARGETS),
        "meets_targets": meets(summary),
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
        f"{report['chosen']} ({'meets' if d['targets_met_on_dev'] else 'does NOT meet'} the targets on dev)",
        "  " + line("dev (chosen)", d["chosen_summary"]),
        f"  configured defaults {report['configured']}: "
        + ("the dev choice" if report["configured_is_chosen"] else "NOT the dev choice"),
        f"test: {report['test_groups']} user groups, scored once with {report['scored_with']}",
        "  " + line("test", report["test"]),
        f"  95% intervals over tasks: precision {ci.get('precision')}, wrong {ci.get('wrong_recall_rate')}, "
        f"coverage {ci.get('coverage')}",
    ]
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
    for row in report["runs"]:
        if row["recalled"]:
            verdict = "correct" if row["correct"] else "WRONG"
            out.append(f"  {row['session_id']} ({row['outcome']}): {'+'.join(row['recalled'])} at message "
                       f"{row['at_message']}, score {row['score']:.2f}: {verdict}")
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
