"""A reproducible held-out evaluation of mining and recall on stored sessions.

For a file of traces with task ids (the tau-bench airline sample: ``metadata.task_id``,
4 trials per task), the tasks are shuffled with a seed and split in two (all trials of a
task on one side, ``train_fraction`` of the tasks for mining). Procedures are mined from
the training traces. Every held-out trace is then replayed: its first user message (and
nothing else) is recalled against the procedures; on a hit, its actual steps are fed
through the cursor tracker, which reports how many followed the recalled procedure
(adherence) and whether the trace got to its end (completion).

With several seeds the figures are also averaged over the splits. Nothing is written:
mining and recall run in memory with the same code the live path uses.

``python -m insika_knowledge.bench.evaluate FILE.jsonl --seeds N`` (or
``insika-knowledge procedures evaluate --sessions FILE.jsonl --seeds N``) prints the report.
Without ``--seeds`` the command runs the leave-one-task-out evaluation
(`insika_knowledge.bench.holdout`); with ``--requests`` it replays a raw request file
through the live path (`insika_knowledge.bench.replay_eval`).
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from insika_knowledge.bench.holdout import task_of
from insika_knowledge.bench.traces import add_trace
from insika_knowledge.errors import UserError
from insika_knowledge.procedure import Procedure, TaskRecord
from insika_knowledge.procedures.config import ProceduresConfig
from insika_knowledge.procedures.mining.mine import FAILURE, SUCCESS, Miner
from insika_knowledge.procedures.recall.cursor import Cursor
from insika_knowledge.procedures.recall.match import MatchSettings
from insika_knowledge.procedures.recall.recall import RecallIndex
from insika_knowledge.procedures.trace.steps import TraceBuilder, build
from insika_knowledge.sessions import Session, read_sessions, rereadable


def split_tasks(
    task_ids: Sequence[str], seed: int, train_fraction: float = 0.5
) -> tuple[set[str], set[str]]:
    """Shuffle the distinct task ids with `seed` and cut them: ``(train, held_out)``."""
    distinct = sorted(set(task_ids), key=lambda t: (len(t), t))
    random.Random(seed).shuffle(distinct)
    cut = max(1, min(len(distinct) - 1, round(len(distinct) * train_fraction)))
    return set(distinct[:cut]), set(distinct[cut:])


def evaluate_split(
    traces: Sequence[tuple[Session, TraceBuilder]],
    train: set[str],
    held_out: set[str],
    config: ProceduresConfig,
) -> dict[str, Any]:
    """Mine the `train` tasks' traces and replay the `held_out` ones.

    Returns:
        A dict: ``procedures`` (id, kind, steps, support, successes, failures,
        wilson_lower_bound, recallable), ``verdicts``, and for the held-out traces
        ``held_out_traces``, ``hits``, ``hit_rate``, ``adherence_rate`` (followed steps /
        followed + diverging steps, over hits), ``completion_rate`` (hits whose steps
        reached the procedure's end), and the same by outcome under ``by_outcome``.
    """
    miner = Miner()
    for session, builder in traces:
        if task_of(session) in train:
            add_trace(miner, session, builder)
    held = [(s, b) for s, b in traces if task_of(s) in held_out]
    return {
        "train_tasks": sorted(train, key=lambda t: (len(t), t)),
        "held_out_tasks": sorted(held_out, key=lambda t: (len(t), t)),
        "verdicts": dict(miner.verdicts),
        "reasons": dict(miner.reasons),
        **replay(held, miner.procedures(), config, population=miner.population),
    }


def replay(
    traces: Sequence[tuple[Session, TraceBuilder]],
    procedures: Sequence[Procedure],
    config: ProceduresConfig,
    population: Mapping[str, int] | None = None,
    tasks: Sequence[TaskRecord] = (),
    key: bytes = b"",
) -> dict[str, Any]:
    """Recall on every trace against `procedures` and follow its steps.

    An operation is recalled as live: on each user message before the trace's first write,
    against the past `tasks` (their digests keyed by `key`), the first hit kept; otherwise
    a shell procedure for the trace's first user message.

    Returns:
        ``procedures`` (id, kind, steps, support, successes, failures,
        wilson_lower_bound, recallable), ``held_out_traces`` (the traces replayed),
        ``hits``, ``hit_rate``, ``adherence_rate``, ``completion_rate`` (see
        `evaluate_split`), ``by_outcome`` and the per-trace ``replays``.
    """
    index = RecallIndex(
        config.min_confidence, config.min_match_score, key=key, environment_runs=config.environment_runs,
        match=MatchSettings(config.neighbours, config.min_similarity, config.min_agreement, config.margin),
    )
    if population is not None:  # the mined split's population: recall weighs triggers against it
        index.update_population(population)
    index.update(procedures)
    index.update_tasks(tasks)
    rows = []
    for session, builder in traces:
        recall = next(
            (found for found in (
                index.recall_operation(message, before=builder.asked[i - 1] if i else "")[0]
                for i, message in enumerate(builder.asked)
            ) if found.hit),
            None,
        ) or index.recall(builder.task)
        task = session.metadata.get("task_id")
        row = {
            "session_id": session.session_id,
            "task_id": None if task is None else str(task),
            "outcome": session.outcome,
            "hit": recall.hit,
            "score": round(recall.score, 4),
            "procedure_id": recall.procedure.id if recall.procedure else None,
            "matched": 0,
            "diverged": 0,
            "completed": False,
        }
        if recall.procedure is not None:
            cursor = Cursor()
            cursor.advance(recall.procedure, builder.steps)
            row.update(
                matched=cursor.matched,
                diverged=cursor.diverged,
                completed=cursor.remaining(recall.procedure) == 0,
            )
        rows.append(row)

    def summary(selected: list[dict[str, Any]]) -> dict[str, Any]:
        hits = [r for r in selected if r["hit"]]
        matched = sum(r["matched"] for r in hits)
        counted = matched + sum(r["diverged"] for r in hits)
        return {
            "traces": len(selected),
            "hits": len(hits),
            "hit_rate": len(hits) / len(selected) if selected else None,
            "adherence_rate": matched / counted if counted else None,
            "completion_rate": sum(r["completed"] for r in hits) / len(hits) if hits else None,
        }

    overall = summary(rows)
    return {
        "procedures": [
            {
                "id": p.id,
                "kind": p.kind,
                "steps": [s.key for s in p.steps],
                "support": p.support,
                "successes": p.successes,
                "failures": p.failures,
                "wilson_lower_bound": round(p.confidence, 4),
                "recallable": index.is_recallable(p.id),
            }
            for p in procedures
        ],
        "held_out_traces": overall["traces"],
        "hits": overall["hits"],
        "hit_rate": overall["hit_rate"],
        "adherence_rate": overall["adherence_rate"],
        "completion_rate": overall["completion_rate"],
        "by_outcome": {
            o: summary([r for r in rows if r["outcome"] == o]) for o in (SUCCESS, FAILURE)
        },
        "replays": rows,
    }


def evaluate_stored(
    path: str | Path,
    procedures: Sequence[Procedure],
    *,
    source: str,
    config: ProceduresConfig | None = None,
    population: Mapping[str, int] | None = None,
    tasks: Sequence[TaskRecord] = (),
    key: bytes = b"",
) -> dict[str, Any]:
    """Replay every session of `path` against procedures mined earlier (no split, no mining).

    For procedures a tenant already holds (``procedures mine``), measured on sessions
    that need not carry task ids: typically other sessions than the ones mined.

    Args:
        path: normalised JSONL of sessions.
        procedures: the procedures to recall from.
        source: where they come from, for the report (e.g. ``tenant acme in /data``).
        config: thresholds and verify patterns (default `ProceduresConfig()`).
        population: the tenant's stored population (term -> successful runs), which
            recall weighs triggers against, as it does live.
        tasks: the tenant's task records, which operations are recalled by.
        key: the tenant's key of term digests.

    Returns:
        The shape of `evaluate`'s report, with one split whose ``seed`` is None and no
        train or held-out tasks, and ``procedures_from`` = `source`.

    Raises:
        UserError: the file is unreadable.
    """
    config = config or ProceduresConfig()
    sessions = list(read_sessions(path))
    traces = [(s, build(s.messages, config.verify_regexes)) for s in sessions]
    split = {"seed": None, "train_tasks": [], "held_out_tasks": [], "verdicts": {}, "reasons": {},
             **replay(traces, procedures, config, population=population, tasks=tasks, key=key)}
    return _report(path, [split], config, train_fraction=None, source=source)


def evaluate(
    path: str | Path,
    *,
    seeds: Sequence[int] = (0,),
    train_fraction: float = 0.5,
    config: ProceduresConfig | None = None,
) -> dict[str, Any]:
    """Run `evaluate_split` for each seed on the sessions of `path`.

    Args:
        path: normalised JSONL whose sessions carry ``metadata.task_id``.
        seeds: one split per seed.
        train_fraction: the share of tasks mined (the rest are held out).
        config: thresholds and verify patterns (default `ProceduresConfig()`).

    Returns:
        ``{"file", "config", "splits": [...], "mean": {...}}``; the mean averages hit,
        adherence and completion rates over the splits that have them, and the number of
        procedures and recallable procedures.

    Raises:
        UserError: the file is unreadable or a session has no task id.
    """
    config = config or ProceduresConfig()
    sessions = list(read_sessions(path))
    traces = [
        (s, build(s.messages, config.verify_regexes, verify_scripts=config.verify_scripts))
        for s in sessions
    ]
    task_ids = [task_of(s) for s in sessions]
    splits = []
    for seed in seeds:
        train, held_out = split_tasks(task_ids, seed, train_fraction)
        result = evaluate_split(traces, train, held_out, config)
        result["seed"] = seed
        splits.append(result)

    return _report(path, splits, config, train_fraction=train_fraction, source=None)


def _report(path: str | Path, splits: list[dict[str, Any]], config: ProceduresConfig, *,
            train_fraction: float | None, source: str | None) -> dict[str, Any]:
    def mean(key: str) -> float | None:
        values = [s[key] for s in splits if s[key] is not None]
        return statistics.fmean(values) if values else None

    report: dict[str, Any] = {
        "file": str(path),
        "config": {
            "min_confidence": config.min_confidence,
            "min_match_score": config.min_match_score,
            "train_fraction": train_fraction,
        },
        "splits": splits,
        "mean": {
            "procedures": statistics.fmean(len(s["procedures"]) for s in splits),
            "recallable": statistics.fmean(
                sum(p["recallable"] for p in s["procedures"]) for s in splits
            ),
            "hit_rate": mean("hit_rate"),
            "adherence_rate": mean("adherence_rate"),
            "completion_rate": mean("completion_rate"),
            "splits": len(splits),
        },
    }
    if source is not None:
        report["procedures_from"] = source
    return report


def format_report(report: dict[str, Any], *, detail: bool = True) -> str:
    """A plain-text rendering of `evaluate`'s report."""

    def pct(value: float | None) -> str:
        return "n/a" if value is None else f"{100 * value:.1f}%"

    stored = report.get("procedures_from")
    config = report["config"]
    lines = [
        f"{report['file']}: min_confidence {config['min_confidence']}, "
        f"min_match_score {config['min_match_score']}, "
        + (f"procedures from {stored}" if stored else f"train share {config['train_fraction']}")
    ]
    for split in report["splits"] if detail else report["splits"][:1]:
        if stored:
            lines.append(f"  stored: {len(split['procedures'])} procedures; every session replayed")
        else:
            lines.append(
                f"seed {split['seed']}: train tasks {', '.join(split['train_tasks'])}; "
                f"held out {', '.join(split['held_out_tasks'])}"
            )
            lines.append(f"  mined: {split['verdicts']}; {len(split['procedures'])} procedures")
        for p in split["procedures"]:
            lines.append(
                f"  {p['id']} {p['kind']} support {p['support']} ({p['successes']} ok, "
                f"{p['failures']} failed) wilson {p['wilson_lower_bound']:.3f}"
                f"{' recallable' if p['recallable'] else ''}: {' -> '.join(p['steps'])[:140]}"
            )
        lines.append(
            f"  {'replayed' if stored else 'held out'}: {split['held_out_traces']} traces, "
            f"{split['hits']} hits "
            f"(hit rate {pct(split['hit_rate'])}), adherence {pct(split['adherence_rate'])}, "
            f"completion {pct(split['completion_rate'])}"
        )
        for outcome, s in split["by_outcome"].items():
            lines.append(
                f"    {outcome}: {s['traces']} traces, hit rate {pct(s['hit_rate'])}, "
                f"adherence {pct(s['adherence_rate'])}, completion {pct(s['completion_rate'])}"
            )
    m = report["mean"]
    lines.append(
        f"mean over {m['splits']} split(s): {m['procedures']:.1f} procedures "
        f"({m['recallable']:.1f} recallable), hit rate {pct(m['hit_rate'])}, "
        f"adherence {pct(m['adherence_rate'])}, completion {pct(m['completion_rate'])}"
    )
    return "\n".join(lines)


def run(
    *,
    sessions: str | None,
    requests: str | None = None,
    reports: str | None = None,
    seeds: int | None = None,
    train_fraction: float = 0.5,
    tasks: Sequence[str] | None = None,
    config: ProceduresConfig | None = None,
    on_progress: Callable[[str, int, int], None] | None = None,
    more_sessions: Sequence[str] = (),
    identity: str = "task",
    fixed: bool = False,
    progress: Callable[[str], None] | None = None,
) -> tuple[dict[str, Any], str]:
    """Run the evaluation the options ask for: ``(report, its plain-text rendering)``.

    `on_progress` is called ``(instance, done, total)`` as a ``requests`` replay goes.

    ``requests`` replays a raw request file (mined leave-one-task-out from ``sessions``
    when given, else online); ``seeds`` runs the seeded half splits; tool-calling
    ``sessions`` (and ``more_sessions``) get the dev/test evaluation of operation
    procedures (`insika_knowledge.bench.operations_eval`; ``identity`` and ``fixed`` as
    there); otherwise the leave-one-task-out evaluation of ``sessions`` (restricted to
    ``tasks`` when given).

    Raises:
        UserError: no input, or an unreadable or malformed file.
    """
    from insika_knowledge.bench.replay_eval import format_replay, replay

    config = config or ProceduresConfig()
    if requests is not None:
        replayed = replay(requests, sessions=sessions, reports=reports, config=config, on_progress=on_progress)
        return replayed, format_replay(replayed)
    if sessions is None:
        raise UserError("give --sessions FILE (and/or --requests FILE)")
    if seeds is not None and seeds < 1:
        raise UserError("--seeds: must be at least 1")
    given = [sessions, *more_sessions]
    with rereadable(given) as paths:  # each file is read more than once
        copies = {copy: path for copy, path in zip(paths, given, strict=True) if copy != path}
        shown = progress if progress is None or not copies else lambda line: progress(_as_given(line, copies))
        try:
            report, text = _run_sessions(paths, more_sessions, seeds, train_fraction, tasks, config, identity, fixed,
                                         shown)
        except UserError as exc:  # named as given, not as the copy (gone when this returns)
            raise UserError(_as_given(str(exc), copies)) from None
        return _as_given(report, copies), _as_given(text, copies)


def _run_sessions(
    paths: list[str], more_sessions: Sequence[str], seeds: int | None, train_fraction: float,
    tasks: Sequence[str] | None, config: ProceduresConfig, identity: str, fixed: bool,
    progress: Callable[[str], None] | None,
) -> tuple[Any, str]:
    from insika_knowledge.bench.holdout import format_holdout, leave_one_task_out
    from insika_knowledge.bench.operations_eval import (
        configured,
        evaluate_operations,
        format_operations,
        tool_calling,
    )

    for path in paths:
        if next(iter(read_sessions(path)), None) is None:
            raise UserError(f"sessions file {path} holds no session: nothing to evaluate")
    if seeds is None and tasks is None and tool_calling(paths):
        report = evaluate_operations(paths, config=config, identity=identity,
                                     fixed=configured(config) if fixed else None, progress=progress)
        return report, format_operations(report)
    if more_sessions:
        raise UserError("several --sessions files: only for tool-calling sessions (operation procedures)")
    if seeds is not None:
        report = evaluate(paths[0], seeds=range(seeds), train_fraction=train_fraction, config=config)
        return report, format_report(report, detail=seeds <= 3)
    held = leave_one_task_out(paths[0], config=config, tasks=tasks)
    return held, format_holdout(held)


def _as_given(value: Any, copies: Mapping[str, str]) -> Any:
    """`value` (a report, its text) naming each file as given, not its temporary copy."""
    if not copies:
        return value
    if isinstance(value, str):
        for copy, path in copies.items():
            value = value.replace(copy, path)
        return value
    if isinstance(value, dict):
        return {_as_given(k, copies): _as_given(v, copies) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_as_given(v, copies) for v in value)
    return value


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m insika_knowledge.bench.evaluate [FILE] [--requests F] [--seeds N] ...``."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("sessions", nargs="?")
    parser.add_argument("--requests", help="raw request file to replay through the live path")
    parser.add_argument("--reports", help="JSON instance id -> resolved, for --requests")
    parser.add_argument("--seeds", type=int, default=None, help="seeded half splits 0..N-1")
    parser.add_argument("--train-fraction", type=float, default=0.5)
    parser.add_argument("--tasks", default=None, help="comma-separated tasks to hold out")
    parser.add_argument("--min-confidence", type=float, default=ProceduresConfig.min_confidence)
    parser.add_argument("--min-match-score", type=float, default=ProceduresConfig.min_match_score)
    parser.add_argument("--verify-pattern", action="append", default=[])
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    try:
        config = ProceduresConfig(
            min_confidence=args.min_confidence,
            min_match_score=args.min_match_score,
            verify_patterns=tuple(args.verify_pattern),
        )
        report, text = run(
            sessions=args.sessions,
            requests=args.requests,
            reports=args.reports,
            seeds=args.seeds,
            train_fraction=args.train_fraction,
            tasks=args.tasks.split(",") if args.tasks else None,
            config=config,
        )
    except UserError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(json.dumps(report, indent=2) if args.json else text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
