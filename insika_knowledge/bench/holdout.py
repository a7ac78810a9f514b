"""Leave-one-task-out evaluation of mining and recall on a file of judged sessions.

For every task of the file (``metadata.task_id``; all trials of a task together), the
procedures are mined from the traces of every *other* task, and the held-out task's traces
are replayed as the live path would see them: a recall on each request that brings a new
user message, with the task (first user message) and the latest user message, until the
first hit, which the session keeps. Nothing is written: mining and recall run in memory
with the same code as the live path (`insika_knowledge.procedures.mining.mine.Miner`,
`insika_knowledge.procedures.recall.recall.RecallIndex`).

Reported, over the held-out runs labelled successful (the runs a recall should help):

- **precision**: recalls whose procedure (every procedure of a chain) only writes what the
  run wrote: each of its step templates is the template of a write the run made (a step
  that is not exploration and did not fail). Target >= 0.7;
- **wrong recalls**: recalls that fail that test, as a share of all successful runs. Target
  <= 5 %;
- **coverage**: successful runs that got a recall, and those that got a correct one;
- **reachable**: successful runs that some procedure mined from the other tasks would
  serve correctly, whatever its score (listed, with steps, not a hand-off): the ceiling of
  correct coverage any recall rule could reach on the file;

and, for successful and failed runs apart, how often they got a recall and their
**adherence**: the steps they took after the recall that followed the recalled procedure,
over those that followed or left it (the cursor tracker, exploration and failed steps
counted in neither).

``tasks`` restricts the held-out side to some tasks (mining still uses every other task),
so figures can be reported on tasks that were not used to tune the thresholds. Every report
also gives the figures for two fixed halves of the tasks (`half_of`: ``dev`` and ``test``,
by a hash of the task id, not by file order), so a threshold tuned on one half is checked
on the other.
"""

from __future__ import annotations

import hashlib
import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from insika_knowledge.errors import UserError
from insika_knowledge.procedure import Procedure
from insika_knowledge.procedures.config import ProceduresConfig
from insika_knowledge.procedures.mining.mine import FAILURE, SUCCESS, Miner, Verdict, judge
from insika_knowledge.procedures.recall.cursor import Cursor
from insika_knowledge.procedures.recall.recall import RecallIndex, is_handoff, query_terms
from insika_knowledge.procedures.trace.events import events
from insika_knowledge.procedures.trace.steps import PENDING, TraceBuilder, build
from insika_knowledge.procedures.trace.verify import ERROR
from insika_knowledge.sessions import Session, read_sessions

TARGETS: Final = {"precision": 0.7, "wrong_recall_rate": 0.05}


@dataclass
class _Trace:
    session: Session
    task_id: str
    builder: TraceBuilder
    verdict: Verdict
    outcome: str | None
    task: str
    writes: frozenset[str] = field(default_factory=frozenset)


def task_of(session: Session) -> str:
    """The session's ``metadata.task_id``.

    Raises:
        UserError: the session has none.
    """
    task = session.metadata.get("task_id")
    if task is None:
        raise UserError(
            f"session {session.session_id} (line {session.line}) has no metadata.task_id; "
            "the held-out evaluation splits by task"
        )
    return str(task)


def _prepare(sessions: Iterable[Session], config: ProceduresConfig) -> list[_Trace]:
    out = []
    for session in sessions:
        builder = build(
            session.messages, config.verify_regexes, verify_scripts=config.verify_scripts
        )
        outcome = session.outcome if session.outcome in (SUCCESS, FAILURE) else None
        verdict = judge(builder.steps, outcome, builder.given)
        writes = frozenset(
            s.template
            for s in builder.steps
            if not s.read_only and s.status not in (PENDING, ERROR)
        )
        out.append(
            _Trace(session, task_of(session), builder, verdict, outcome, builder.task, writes)
        )
    return out


def half_of(task_id: str) -> str:
    """``dev`` or ``test``: the fixed half of the tasks `task_id` belongs to (blake2b parity)."""
    digest = hashlib.blake2b(task_id.encode("utf-8"), digest_size=2).digest()
    return "dev" if digest[-1] % 2 == 0 else "test"


def _serves(procedure: Procedure, writes: frozenset[str]) -> bool:
    """Every step template of `procedure` is a write of the run."""
    return all(s.template in writes for s in procedure.steps)


def _recall_run(
    trace: _Trace, index: RecallIndex, candidates: Sequence[Procedure] = ()
) -> dict[str, Any]:
    """Replay one held-out run: recall on each new user message until the first hit.

    `candidates`: the procedures any recall rule could give (for the ``reachable`` ceiling).
    """
    task = latest = ""
    recalled = None
    at = -1
    messages = trace.session.messages
    for event in events(messages):
        if event.kind != "user" or not event.text.strip():
            continue
        if not task:
            task = event.text
        latest = event.text
        found = index.recall_terms(query_terms(task, latest))
        if found.hit:
            recalled, at = found, event.index
            break
    row: dict[str, Any] = {
        "session_id": trace.session.session_id,
        "task_id": trace.task_id,
        "outcome": trace.outcome,
        "recalled": None,
        "score": 0.0,
        "hops": 0,
        "correct": None,
        "matched": 0,
        "diverged": 0,
        "reachable": any(_serves(p, trace.writes) for p in candidates),
    }
    if recalled is None:
        return row
    steps = [s for p in recalled.chain for s in p.steps]
    wanted = {s.template for s in steps}
    followed = Procedure(id=recalled.key, kind=recalled.chain[0].kind, steps=tuple(steps))
    cursor = Cursor()
    cursor.advance(followed, [s for s in trace.builder.steps if s.index > at])
    row.update(
        recalled=recalled.key,
        score=round(recalled.score, 4),
        hops=recalled.hops,
        correct=wanted <= trace.writes,
        matched=cursor.matched,
        diverged=cursor.diverged,
        steps=[s.key for s in steps],
    )
    return row


def ratio(num: float, den: float) -> float | None:
    """``num / den``, or None when there is nothing to divide by (a figure not measured)."""
    return num / den if den else None


def summarise(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Precision, wrong recalls, coverage and adherence over replayed runs (see the module)."""
    ok = [r for r in rows if r["outcome"] == SUCCESS]
    failed = [r for r in rows if r["outcome"] == FAILURE]
    recalled_ok = [r for r in ok if r["recalled"]]
    correct = [r for r in recalled_ok if r["correct"]]
    reachable = sum(bool(r.get("reachable")) for r in ok)
    wrong = len(recalled_ok) - len(correct)

    def adherence(selected: list[dict[str, Any]]) -> float | None:
        matched = sum(r["matched"] for r in selected)
        return ratio(matched, matched + sum(r["diverged"] for r in selected))

    recalled_failed = [r for r in failed if r["recalled"]]
    out = {
        "successful_runs": len(ok),
        "failed_runs": len(failed),
        "recalls_on_successful": len(recalled_ok),
        "correct_recalls": len(correct),
        "wrong_recalls": wrong,
        "precision": ratio(len(correct), len(recalled_ok)),
        "wrong_recall_rate": ratio(wrong, len(ok)),
        "coverage": ratio(len(recalled_ok), len(ok)),
        "correct_coverage": ratio(len(correct), len(ok)),
        "reachable": reachable,
        "reachable_rate": ratio(reachable, len(ok)),
        "successful_adherence": adherence(recalled_ok),
        "failed_recall_rate": ratio(len(recalled_failed), len(failed)),
        "failed_adherence": adherence(recalled_failed),
        "composed": sum(r["hops"] > 0 for r in rows),
    }
    precision = out["precision"]
    wrong_rate = out["wrong_recall_rate"]
    out["meets_targets"] = {
        "precision": None if precision is None else precision >= TARGETS["precision"],
        "wrong_recalls": None if wrong_rate is None else wrong_rate <= TARGETS["wrong_recall_rate"],
    }
    return out


def leave_one_task_out(
    path: str | Path,
    *,
    config: ProceduresConfig | None = None,
    tasks: Iterable[str] | None = None,
) -> dict[str, Any]:
    """Mine all other tasks, replay each task's runs, for every task of `path`.

    Args:
        path: normalised JSONL whose sessions carry ``metadata.task_id`` and an outcome.
        config: thresholds and verify settings (default `ProceduresConfig()`).
        tasks: hold out only these tasks (default: every task of the file).

    Returns:
        ``{"file", "config", "tasks", "summary", "halves", "by_task", "runs", "targets"}``:
        the summary of `summarise` over every held-out run, the same for the ``dev`` and
        ``test`` halves (`half_of`) and per task, and one row per replayed run (recalled
        chain, score, correct, reachable, matched and diverged steps).

    Raises:
        UserError: the file is unreadable or a session has no task id.
    """
    config = config or ProceduresConfig()
    traces = _prepare(read_sessions(path), config)
    all_tasks = sorted({t.task_id for t in traces}, key=lambda t: (len(t), t))
    held = all_tasks if tasks is None else [t for t in all_tasks if t in set(tasks)]
    unknown = sorted(set(tasks or ()) - set(all_tasks))
    if unknown:  # scoring 0 runs would print a report of nothing
        shown = ", ".join(all_tasks[:10]) + (f" and {len(all_tasks) - 10} more" if len(all_tasks) > 10 else "")
        raise UserError(f"--tasks: {', '.join(map(repr, unknown))} is no task of {path} (its tasks: {shown})")
    rows: list[dict[str, Any]] = []
    procedures_mined = []
    for task in held:
        miner = Miner()
        for trace in traces:
            if trace.task_id != task:
                miner.add_verdict(
                    trace.session.session_id,
                    trace.verdict,
                    trace.task
                    if trace.verdict.verdict == SUCCESS or trace.outcome == SUCCESS
                    else "",
                    trace.outcome,
                )
        index = RecallIndex(config.min_confidence, config.min_match_score)
        index.update_population(miner.population)
        mined = miner.procedures()
        index.update(mined)
        procedures_mined.append((len(mined), len(index)))
        candidates = [p for p in mined if p.steps and p.recurs and not is_handoff(p)]
        rows.extend(_recall_run(t, index, candidates) for t in traces if t.task_id == task)
    by_task = {task: summarise([r for r in rows if r["task_id"] == task]) for task in held}
    return {
        "file": str(path),
        "config": {
            "min_confidence": config.min_confidence,
            "min_match_score": config.min_match_score,
            "verify_patterns": list(config.verify_patterns),
            "verify_scripts": config.verify_scripts,
        },
        "tasks": held,
        "procedures_per_split": statistics.fmean(n for n, _ in procedures_mined)
        if procedures_mined
        else 0.0,
        "recallable_per_split": statistics.fmean(n for _, n in procedures_mined)
        if procedures_mined
        else 0.0,
        "summary": summarise(rows),
        "halves": {
            half: summarise([r for r in rows if half_of(r["task_id"]) == half])
            for half in ("dev", "test")
        },
        "by_task": by_task,
        "runs": rows,
        "targets": dict(TARGETS),
    }


def format_holdout(report: dict[str, Any]) -> str:
    """A plain-text rendering of `leave_one_task_out`'s report."""

    def pct(value: float | None) -> str:
        return "n/a" if value is None else f"{100 * value:.1f}%"

    s = report["summary"]
    cfg = report["config"]
    lines = [
        f"{report['file']}: leave-one-task-out over {len(report['tasks'])} tasks "
        f"(min_confidence {cfg['min_confidence']}, min_match_score {cfg['min_match_score']}); "
        f"{report['procedures_per_split']:.1f} procedures per split "
        f"({report['recallable_per_split']:.1f} recallable)",
        f"successful held-out runs: {s['successful_runs']}; recalled on "
        f"{s['recalls_on_successful']} (coverage {pct(s['coverage'])}), correct "
        f"{s['correct_recalls']}, wrong {s['wrong_recalls']}",
        f"  precision {pct(s['precision'])} (target >= {100 * TARGETS['precision']:.0f}%), "
        f"wrong recalls {pct(s['wrong_recall_rate'])} of successful runs "
        f"(target <= {100 * TARGETS['wrong_recall_rate']:.0f}%)",
        f"  adherence: successful runs {pct(s['successful_adherence'])}, failed runs "
        f"{pct(s['failed_adherence'])} (failed runs recalled: {pct(s['failed_recall_rate'])} "
        f"of {s['failed_runs']})",
        f"  reachable: {s['reachable']} successful runs ({pct(s['reachable_rate'])}) are "
        "served correctly by some procedure mined from the other tasks, whatever its score",
    ]
    for half, h in report.get("halves", {}).items():
        lines.append(
            f"  {half} half: {h['successful_runs']} successful runs, recalled "
            f"{h['recalls_on_successful']}, correct {h['correct_recalls']}, wrong "
            f"{h['wrong_recalls']} ({pct(h['wrong_recall_rate'])}), precision "
            f"{pct(h['precision'])}, reachable {h['reachable']}"
        )
    for row in report["runs"]:
        if row["recalled"]:
            verdict = "correct" if row["correct"] else "WRONG"
            lines.append(
                f"  {row['session_id']} ({row['outcome']}): {row['recalled']} score "
                f"{row['score']:.2f} {verdict if row['outcome'] == SUCCESS else ''}".rstrip()
            )
    return "\n".join(lines)
