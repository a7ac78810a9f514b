"""Replay a file of raw model requests through `ProceduralMemory.handle_request` in prod.

The file holds the exact request bodies an agent sent, one JSON object a line (gzip
allowed): ``{"instance_id", "seq", "body", "resolved"?}`` like
``openhands_swebench/raw/requests.jsonl.gz``. Each instance is a session (``x-ace-session``
= its id); its last request carries ``x-ace-task-outcome`` from ``resolved`` (or from a
``reports`` file: instance id -> true/false), so the live capture and mining path runs too.

Procedures: with a sessions file (``normalized.jsonl`` whose ``metadata.task_id`` names the
instances), each instance is replayed against a fresh store mined from the *other*
instances' sessions (leave one task out); without one, instances are replayed in file
order against one store that learns online from the instances already finished.

Reported:

- **prefix kept**: over consecutive requests of a session whose *client* bodies agree up
  to the earlier one's last ``cache_control`` breakpoint (the markers themselves ignored,
  since clients move them), the share whose *upstream* bodies (what `handle_request`
  returned) agree up to the earlier upstream body's last breakpoint. Target 100 %;
- **block carried**: over the requests of a session after the one that first got a block,
  the share whose upstream body holds the identical block bytes at the identical place.
  Target >= 95 %;
- sessions that got a procedure (a recall hit) and that got a block;
- ``handle_request`` latency per request, p50 and p95 in ms (targets 2 and 5 ms).
"""

from __future__ import annotations

import dataclasses
import gzip
import json
import statistics
import tempfile
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Final

from insika_knowledge.errors import UserError
from insika_knowledge.procedures.config import ProceduresConfig
from insika_knowledge.procedures.recall.inject import BLOCK_RE
from insika_knowledge.procedures.skill import ProceduralMemory
from insika_knowledge.sessions import Session, read_sessions
from insika_knowledge.store.sqlite.procedures import ProcedureStore
from insika_knowledge.wire.placement import has_breakpoint, unmarked

TARGETS: Final = {"prefix_kept": 1.0, "block_carried": 0.95, "p50_ms": 2.0, "p95_ms": 5.0}


def read_requests(path: str | Path) -> list[dict[str, Any]]:
    """The request records of `path` (JSONL, ``.gz`` read through gzip), in file order.

    Raises:
        UserError: the file is missing or a line is not a JSON object with an
            ``instance_id`` and a ``body``.
    """
    path = Path(path)
    if not path.is_file():
        raise UserError(f"requests file {path} not found")
    opener = gzip.open if path.suffix == ".gz" else open
    out = []
    with opener(path, "rt", encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except ValueError as exc:
                raise UserError(f"{path}:{number}: not JSON: {exc}") from None
            if not isinstance(record, dict) or "instance_id" not in record:
                raise UserError(f"{path}:{number}: needs instance_id and body")
            if not isinstance(record.get("body"), dict):
                raise UserError(f"{path}:{number}: body must be a JSON object")
            out.append(record)
    return out


def prefix_units(body: Mapping[str, Any]) -> tuple[list[str], int]:
    """The body in cache order as comparable units, and the index of its last breakpoint.

    Units: the tools, each system part (Anthropic top-level ``system``), then each part of
    each message (a string content is one part) with its message's role and other keys;
    markers removed. The breakpoint index is the unit carrying the last ``cache_control``
    (-1 when there is none).
    """
    units: list[str] = []
    last = -1

    def add(value: Any, marked: bool) -> None:
        nonlocal last
        units.append(json.dumps(unmarked(value), sort_keys=True, ensure_ascii=False))
        if marked:
            last = len(units) - 1

    tools = body.get("tools")
    if tools:
        add(tools, any(has_breakpoint(t) for t in tools) if isinstance(tools, list) else False)
    system = body.get("system")
    if isinstance(system, list):
        for part in system:
            add(part, has_breakpoint(part))
    elif system is not None:
        add(system, False)
    for message in body.get("messages") or ():
        if not isinstance(message, Mapping):
            add(message, False)
            continue
        head = {k: v for k, v in message.items() if k not in ("content", "cache_control")}
        content = message.get("content")
        parts = content if isinstance(content, list) and content else [content]
        for j, part in enumerate(parts):
            whole = "cache_control" in message and j == len(parts) - 1
            add({"message": head, "part": part}, has_breakpoint(part) or whole)
    return units, last


def kept_prefix(before: Mapping[str, Any], after: Mapping[str, Any]) -> bool:
    """`after` repeats `before` up to `before`'s last breakpoint (markers ignored)."""
    units, last = prefix_units(before)
    if last < 0:
        return True
    later, _ = prefix_units(after)
    return later[: last + 1] == units[: last + 1]


def block_place(body: Mapping[str, Any]) -> tuple[int, int, str] | None:
    """``(message index, part index or -1, block text)`` of the block in `body`, or None."""
    for i, message in enumerate(body.get("messages") or ()):
        if not isinstance(message, Mapping) or message.get("role") != "user":
            continue
        content = message.get("content")
        if isinstance(content, str):
            found = BLOCK_RE.search(content)
            if found is not None and found.end() == len(content):
                return i, -1, found.group(0)
        elif isinstance(content, list):
            for j, part in enumerate(content):
                text = part.get("text") if isinstance(part, Mapping) else None
                if isinstance(text, str) and BLOCK_RE.fullmatch(text):
                    return i, j, text
    return None


def _grouped(records: Sequence[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    groups: dict[str, list[dict[str, Any]]] = {}
    for record in records:
        groups.setdefault(str(record["instance_id"]), []).append(record)
    return groups


def _outcome(record: Mapping[str, Any], reports: Mapping[str, bool]) -> str | None:
    resolved = reports.get(str(record["instance_id"]), record.get("resolved"))
    if resolved is None:
        return None
    return "success" if resolved else "failure"


def _percentile(samples: Sequence[float], q: float) -> float:
    ordered = sorted(samples)
    if not ordered:
        return 0.0
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


class _Session:
    """What the replay tracks of one session."""

    def __init__(self) -> None:
        self.client: dict[str, Any] | None = None
        self.upstream: dict[str, Any] | None = None
        self.block: tuple[int, int, str] | None = None
        self.hit = False


def replay(
    requests: str | Path,
    *,
    sessions: str | Path | None = None,
    reports: str | Path | None = None,
    config: ProceduresConfig | None = None,
    limit: int | None = None,
    folder: str | Path | None = None,
    on_progress: Callable[[str, int, int], None] | None = None,
) -> dict[str, Any]:
    """Send every request of `requests` through `handle_request` in prod (see the module).

    Args:
        requests: the raw requests file.
        sessions: normalised sessions of the same instances to mine leave-one-task-out
            (default: learn online, in file order).
        reports: a JSON object instance id -> resolved (default: each record's ``resolved``).
        config: thresholds and verify settings (the mode is forced to ``prod``).
        limit: replay only the first `limit` instances (file order).
        folder: where the temporary stores go (default: a fresh temporary folder).
        on_progress: called ``(instance, done, total)`` before each instance is replayed.

    Returns:
        ``{"requests", "sessions", "prefix_kept", "block_carried", "latency", "actions",
        "reasons", "targets", "meets_targets", ...}``.

    Raises:
        UserError: a file is missing or malformed.
    """
    config = dataclasses.replace(config or ProceduresConfig(), mode="prod")
    groups = _grouped(read_requests(requests))
    names = list(groups)[:limit] if limit is not None else list(groups)
    verdicts: dict[str, bool] = {}
    if reports is not None:
        try:
            loaded = json.loads(Path(reports).read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise UserError(f"reports file {reports}: {exc}") from None
        if not isinstance(loaded, dict):
            raise UserError(f"reports file {reports}: expected a JSON object of instance id -> resolved "
                            f"(true or false), got {type(loaded).__name__}")
        wrong = next(((k, v) for k, v in loaded.items() if not isinstance(v, bool)), None)
        if wrong is not None:  # "false" or 0 read as resolved would count a failure as a success
            raise UserError(f"reports file {reports}: {wrong[0]!r}: resolved is true or false, not {wrong[1]!r}")
        verdicts = {str(k): v for k, v in loaded.items()}
    mined = _by_task(read_sessions(sessions)) if sessions is not None else None
    tally = _Tally()
    with tempfile.TemporaryDirectory(prefix="insika-replay-") as tmp:
        work = Path(folder) if folder else Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        online: ProceduralMemory | None = None
        for n, name in enumerate(names):
            if on_progress is not None:
                on_progress(name, n, len(names))
            if mined is not None:
                memory = ProceduralMemory(ProcedureStore(work / f"loto-{n}.db"), config)
                memory.mine_sessions(s for task, ss in mined.items() if task != name for s in ss)
                memory.refresh()  # a live index is warm; the replay times requests, not loading
            else:
                if online is None:
                    online = ProceduralMemory(ProcedureStore(work / "online.db"), config)
                memory = online
            try:
                tally.session(memory, name, groups[name], verdicts)
            finally:
                if memory is not online:
                    memory.close()
        if online is not None:
            online.close()
    return tally.report(requests, sessions, config)


def _by_task(sessions: Iterable[Session]) -> dict[str, list[Session]]:
    out: dict[str, list[Session]] = {}
    for session in sessions:
        task = session.metadata.get("task_id")
        out.setdefault(str(task if task is not None else session.session_id), []).append(session)
    return out


class _Tally:
    """Accumulates the replay's figures."""

    def __init__(self) -> None:
        self.samples: list[float] = []
        self.positions: list[tuple[int, float]] = []
        self.actions: dict[str, int] = {}
        self.reasons: dict[str, int] = {}
        self.pairs = self.kept = 0
        self.later = self.carried = 0
        self.sessions = self.hit_sessions = self.block_sessions = 0

    def session(
        self,
        memory: ProceduralMemory,
        name: str,
        records: Sequence[dict[str, Any]],
        verdicts: Mapping[str, bool],
    ) -> None:
        state = _Session()
        self.sessions += 1
        for position, record in enumerate(records):
            headers = {"x-ace-session": name}
            if position == len(records) - 1:
                outcome = _outcome(record, verdicts)
                if outcome is not None:
                    headers["x-ace-task-outcome"] = outcome
            body = record["body"]
            started = time.perf_counter()
            upstream, stage = memory.handle_request(body, headers)
            elapsed = (time.perf_counter() - started) * 1000
            self.samples.append(elapsed)
            self.positions.append((position if position < len(records) - 1 else -1, elapsed))
            if stage is not None:
                self.actions[stage.action] = self.actions.get(stage.action, 0) + 1
                if stage.reason:
                    self.reasons[stage.reason] = self.reasons.get(stage.reason, 0) + 1
                state.hit = state.hit or stage.action in ("hit", "completed")
            self._pair(state, body, upstream)
        self.hit_sessions += state.hit

    def _pair(self, state: _Session, body: dict[str, Any], upstream: dict[str, Any]) -> None:
        if state.client is not None and state.upstream is not None:
            if kept_prefix(state.client, body):
                self.pairs += 1
                self.kept += kept_prefix(state.upstream, upstream)
        place = block_place(upstream)
        if state.block is not None:
            self.later += 1
            self.carried += place == state.block
        elif place is not None:
            state.block = place
            self.block_sessions += 1
        state.client, state.upstream = body, upstream

    def report(
        self, requests: str | Path, sessions: str | Path | None, config: ProceduresConfig
    ) -> dict[str, Any]:
        p50 = _percentile(self.samples, 0.5)
        p95 = _percentile(self.samples, 0.95)
        prefix = self.kept / self.pairs if self.pairs else None
        carried = self.carried / self.later if self.later else None
        return {
            "file": str(requests),
            "mined_from": str(sessions) if sessions is not None else "online",
            "config": {
                "min_confidence": config.min_confidence,
                "min_match_score": config.min_match_score,
                "max_injection_tokens": config.max_injection_tokens,
            },
            "requests": len(self.samples),
            "sessions": self.sessions,
            "sessions_with_procedure": self.hit_sessions,
            "sessions_with_block": self.block_sessions,
            "prefix_pairs": self.pairs,
            "prefix_kept": prefix,
            "later_requests": self.later,
            "block_carried": carried,
            "latency": {
                "p50_ms": p50,
                "p95_ms": p95,
                "mean_ms": statistics.fmean(self.samples) if self.samples else 0.0,
                "first_request_p50_ms": _percentile([t for p, t in self.positions if p == 0], 0.5),
                "closing_request_p50_ms": _percentile(
                    [t for p, t in self.positions if p == -1], 0.5
                ),
            },
            "actions": dict(sorted(self.actions.items())),
            "reasons": dict(sorted(self.reasons.items())),
            "targets": dict(TARGETS),
            "meets_targets": {
                "prefix_kept": None if prefix is None else prefix >= TARGETS["prefix_kept"],
                "block_carried": None if carried is None else carried >= TARGETS["block_carried"],
                "p50_ms": p50 <= TARGETS["p50_ms"],
                "p95_ms": p95 <= TARGETS["p95_ms"],
            },
        }


def format_replay(report: Mapping[str, Any]) -> str:
    """A plain-text rendering of `replay`'s report."""

    def pct(value: float | None) -> str:
        return "n/a" if value is None else f"{100 * value:.1f}%"

    lat = report["latency"]
    cfg = report["config"]
    return "\n".join(
        [
            f"{report['file']}: {report['requests']} requests, {report['sessions']} sessions, "
            f"procedures mined from {report['mined_from']} (min_confidence "
            f"{cfg['min_confidence']}, min_match_score {cfg['min_match_score']})",
            f"  sessions that got a procedure: {report['sessions_with_procedure']}, a block: "
            f"{report['sessions_with_block']}",
            f"  prefix kept: {pct(report['prefix_kept'])} of {report['prefix_pairs']} pairs "
            "(target 100%)",
            f"  block carried: {pct(report['block_carried'])} of {report['later_requests']} "
            "later requests (target >= 95%)",
            f"  handle_request: p50 {lat['p50_ms']:.3f} ms, p95 {lat['p95_ms']:.3f} ms "
            "(targets 2 and 5 ms)",
            f"  actions {report['actions']}; reasons {report['reasons']}",
        ]
    )
