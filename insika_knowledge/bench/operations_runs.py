"""Operation procedures replayed run by run: read the runs, mine some, replay and score others.

The mechanics the held-out evaluation (`insika_knowledge.bench.operations_eval`) and the
deployed replay (`insika_knowledge.bench.operations_deployed`) share. A run is replayed as
the live path sees it: a recall on each user message before the run's first write, the
first hit kept. Its score (`score_run`, `summarise`) is described in
`insika_knowledge.bench.operations_eval`.
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from insika_knowledge.bench.holdout import half_of, ratio
from insika_knowledge.errors import UserError
from insika_knowledge.procedure import Procedure
from insika_knowledge.procedures.mining.mine import FAILURE, SUCCESS, Miner
from insika_knowledge.procedures.mining.operations import CONFIRM_SIGNATURE, operation_of
from insika_knowledge.procedures.recall.match import MatchSettings, recallable_operations
from insika_knowledge.procedures.recall.recall import RecallIndex
from insika_knowledge.procedures.trace.steps import PENDING, TraceBuilder, build, is_handoff_tool
from insika_knowledge.procedures.trace.terms import asked_terms, digests, message_terms
from insika_knowledge.sessions import Session, read_sessions

TARGETS: Final = {"precision": 0.85, "wrong_recall_rate": 0.03, "coverage": 0.20}


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


def read_runs(path: str, seen: dict[str, str] | None = None) -> list[Run]:
    """The sessions of `path` as runs, each read once.

    Args:
        path: a normalised JSONL file (gzip too, `insika_knowledge.sessions.read_sessions`).
        seen: session id -> where it was read (``FILE:LINE``), shared across the files of
            one evaluation; filled here.

    Raises:
        UserError: a session has no ``metadata.task_id``, or a label that is not text
            (``task_id`` and ``user_group`` may be integers too) or has spaces around it,
            an ``outcome`` other than success, failure or none, a tool call without a name
            (or with spaces around it; OpenAI, normalised and Anthropic forms), or the id
            of a session read before (in this file or in `seen`); the file and line are
            named.
    """
    out = []
    seen = {} if seen is None else seen
    for session in read_sessions(path):
        where = f"{path}:{session.line}"
        if session.session_id in seen:
            before = seen[session.session_id]
            raise UserError(f"{where}: session_id {session.session_id!r} was read before, at {before}; "
                            "each run appears once (a run counted twice weighs twice)")
        seen[session.session_id] = where
        task, group, intent = _labels(session.metadata, where)
        if session.outcome not in (SUCCESS, FAILURE, None):
            raise UserError(f"{where}: outcome must be {SUCCESS!r}, {FAILURE!r} or null (a run that is not "
                            f"scored), not {json.dumps(session.outcome)[:60]}")
        builder = build(session.messages)
        run = Run(session, str(path), f"{path}:{group}", f"{path}:{task}", half_of(group), intent,
                  session.outcome, builder)
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


def _labels(meta: Mapping[str, Any], where: str) -> tuple[str, str, str]:
    """The run's task id, user group (its task when it has none) and intent, checked."""
    task = meta.get("task_id")
    if task is None:
        raise UserError(f"{where}: the session has no metadata.task_id; the evaluation splits by user group or task")
    for key, value, kinds in (("task_id", task, (str, int)), ("user_group", meta.get("user_group"), (str, int)),
                              ("intent", meta.get("intent"), (str,))):
        if value is not None and (isinstance(value, bool) or not isinstance(value, kinds) or value == ""):
            wanted = "non-empty text or an integer" if int in kinds else "non-empty text"
            raise UserError(f"{where}: metadata.{key} must be {wanted}, not {json.dumps(value)[:60]}")
        if isinstance(value, str) and value != value.strip():  # " 0" would be a task of its own
            raise UserError(f"{where}: metadata.{key} {json.dumps(value)[:60]} has spaces around it")
    group = meta.get("user_group")
    return str(task), str(task if group is None else group), str(meta.get("intent") or "")


@dataclass
class Fold:
    """Procedures mined from some runs, and the replays of others."""

    index: RecallIndex
    procedures: dict[str, Procedure]  # operation -> its procedure (every one mined)
    # run id -> per asked message: (asking terms, analysed terms, ranked similarities)
    ranked: dict[str, list[tuple[frozenset[str], frozenset[str], list[tuple[float, str]]]]] = field(
        default_factory=dict)
    # per off-domain request asked of this fold: (asking terms, analysed terms, ranked similarities)
    off_domain: list[tuple[frozenset[str], frozenset[str], list[tuple[float, str]]]] = field(default_factory=list)


def learn(miner: Miner, run: Run, identity: str, recalled: Sequence[str] = ()) -> None:
    """Mine one finished run as the live path does, with the operations a recall gave it."""
    miner.add_trace(run.session.session_id, run.builder, run.outcome, recalled=recalled,
                    task_key=run.task if identity == "task" else None)


def fold_of(train: Sequence[Run], held: Sequence[Run], identity: str, off_domain: Sequence[str] = ()) -> Fold:
    """Procedures mined from `train`, with the similarities of every request of `held` and
    of each `off_domain` request (a new session's whole first message).
    """
    miner = Miner()
    for run in train:
        learn(miner, run, identity)
    fold = fold_from(miner, held)
    matcher = fold.index.matcher
    for text in off_domain:
        terms, asking = message_terms(text), asked_terms(text)
        fold.off_domain.append((asking, terms, matcher.similarities(digests(miner.key, terms))
                                if matcher.asks(asking) else []))
    return fold


def off_domain_recalls(fold: Fold, setting: Setting, allowed: Mapping[str, Procedure]) -> int:
    """How many of the fold's off-domain requests recall an operation (each one is wrong)."""
    check = recallable_operations(allowed, None)
    return sum(1 for terms, words, ranked in fold.off_domain
               if fold.index.matcher.decide(terms, (), check, settings=setting.match, ranked=ranked,
                                            words=words).operations)


def fold_from(miner: Miner, held: Sequence[Run]) -> Fold:
    """What `miner` has learned so far, with the similarities of every request of `held`."""
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


def recallable_of(fold: Fold, min_confidence: float) -> dict[str, Procedure]:
    """The fold's operation procedures a recall may give at `min_confidence` (0..1)."""
    return {op: p for op, p in fold.procedures.items()
            if p.confidence >= min_confidence and p.recurs and p.steps}


def replay_run(run: Run, fold: Fold, setting: Setting, allowed: Mapping[str, Procedure]) -> dict[str, Any]:
    """The first recall `run` gets: ``{"at": message index or -1, "operations", "score", "agreement"}``."""
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


def score_run(run: Run, replay: dict[str, Any], fold: Fold, allowed: Mapping[str, Procedure]) -> dict[str, Any]:
    """`run`'s row: what it wrote, what it was given, and whether that was right (see `summarise`).

    Right: every recalled write was made by the run; for a failed run, every recalled
    write is one its task's label (``metadata.intent``) names, since what a failed run
    wrote may be why it failed.
    """
    ops = replay["operations"]
    row: dict[str, Any] = {
        "session_id": run.session.session_id,
        "file": run.file,
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
        if run.outcome == FAILURE and run.intent:  # a failed run's own writes may be its failure: its label
            row["correct"] = row["slot_correct"] = all(op in intended(run.intent) for op in ops)
        else:
            row["correct"] = all(op in run.writes for op in ops)
            row["slot_correct"] = all(
                op in run.writes and p.steps[-1].signature in run.writes[op]
                for op, p in zip(ops, procedures, strict=True)
            )
        precision, coverage = _skeleton(run, procedures)
        row["skeleton_precision"], row["skeleton_coverage"] = round(precision, 4), round(coverage, 4)
    return row


#: The label of a task that makes no write (``metadata.intent``).
NO_WRITE: Final = "(no write)"


def intended(intent: str) -> frozenset[str]:
    """The writes a task's label names: ``"a+b"`` -> ``{"a", "b"}``; `NO_WRITE` -> none."""
    return frozenset() if intent == NO_WRITE else frozenset(op for op in intent.split("+") if op)


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
        "precision": ratio(len(correct), len(recalled)),
        "slot_precision": ratio(len(slot), len(recalled)),
        "wrong_recall_rate": ratio(len(recalled) - len(correct), len(ok)),
        "coverage": ratio(len(recalled), len(ok)),
        "correct_coverage": ratio(len(correct), len(ok)),
        "reachable": len(reachable),
        "coverage_of_reachable": ratio(len([r for r in correct if r["reachable"]]), len(reachable)),
        "skeleton_precision": statistics.fmean(r["skeleton_precision"] for r in skel) if skel else None,
        "skeleton_coverage": statistics.fmean(r["skeleton_coverage"] for r in skel) if skel else None,
        "unscored_runs": len(rows) - len(ok) - len(failed),
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


__all__ = ["NO_WRITE", "TARGETS", "Fold", "Run", "Setting", "fold_from", "fold_of", "intended", "learn", "meets",
           "read_runs", "recallable_of", "replay_run", "score_run", "summarise"]
