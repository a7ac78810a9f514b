"""Speed figures of procedural memory, against the targets.

`bench_procedures` measures:

- mining: traces per second through the whole pipeline (wire events, canonical steps,
  verification, pruning, shell parts, operations and their task records) on the shared
  tau-bench airline and SWE-agent samples (72 traces, the figure earlier releases
  reported), and on the tau2 airline and retail samples (266 runs, mined as operations),
  files already read; ``cold`` clears the in-process caches before every pass, ``warm``
  keeps them (the same traces mined again). Also with the store write
  (`ProceduralMemory.mine_sessions`: one transaction). Target: >= 2000 traces/s.
- recall: p50/p95 of one operation recall (analysing the message, digesting its terms,
  the vote) with 10000 synthetic operation procedures folded from 25007 synthetic past
  tasks (`synthetic_operations`: requests of Zipf-distributed words around the
  operation's verb and object), and the ``terms`` matcher's p50 at 10000 synthetic shell
  procedures. Target: p50 <= 1 ms.
- request: p50/p95 of `ProceduralMemory.handle_request` in prod mode (capture, recall,
  cursor, render, inject, one transaction) while replaying the tau2 airline traces turn
  by turn (three times, as new sessions; one request per assistant turn, with the history
  the agent had) against a tenant holding the operations mined from them plus 10000
  synthetic ones. Target: p50 <= 2 ms.

``python -m insika_knowledge.bench.procedures [--quick] [--json]``.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final

from insika_knowledge.analysis.text import terms
from insika_knowledge.bench.datasets import ENV as SHARED_DATA_ENV
from insika_knowledge.bench.datasets import shared_data as find_shared_data
from insika_knowledge.bench.timing import percentiles
from insika_knowledge.bench.traces import add_trace
from insika_knowledge.errors import UserError
from insika_knowledge.procedure import OperationUse, Procedure, ProcedureStep, TaskRecord
from insika_knowledge.procedures.config import ProceduresConfig
from insika_knowledge.procedures.mining.mine import Miner
from insika_knowledge.procedures.mining.operations import operation_procedure, slotted
from insika_knowledge.procedures.mining.scoring import fold_operation
from insika_knowledge.procedures.recall.match import MatchSettings
from insika_knowledge.procedures.recall.recall import RecallIndex
from insika_knowledge.procedures.skill import ProceduralMemory
from insika_knowledge.procedures.trace import canonical
from insika_knowledge.procedures.trace import steps as steps_module
from insika_knowledge.procedures.trace import terms as terms_module
from insika_knowledge.procedures.trace.steps import build
from insika_knowledge.procedures.trace.terms import digests, message_terms
from insika_knowledge.sessions import Session, read_sessions
from insika_knowledge.store.procedure_records import ProcedureRows
from insika_knowledge.store.sqlite.procedures import ProcedureStore

TARGETS: Final = {
    "mining_traces_per_s": 2000.0,
    "recall_p50_ms": 1.0,
    "request_p50_ms": 2.0,
    "request_p95_ms": 5.0,
}
_WORDS: Final = (
    "cancel reservation flight book change upgrade downgrade baggage refund insurance seat "
    "passenger economy business cabin payment certificate gift card credit travel trip delay "
    "test build failing error fix bug import module type check lint deploy release migrate "
    "database schema query index cache timeout retry config install package dependency version "
    "branch merge commit rebase review docs readme api endpoint request response auth token"
).split()


def shared_data() -> Path:
    """``shared/data`` (see `insika_knowledge.bench.datasets.shared_data`).

    Raises:
        FileNotFoundError: it is not found (set ``$INSIKA_SHARED_DATA``).
    """
    found = find_shared_data()
    if found is not None:
        return found
    given = os.environ.get(SHARED_DATA_ENV)
    if given:
        raise FileNotFoundError(f"shared/data not found: ${SHARED_DATA_ENV} is {given!r}, which is no folder")
    raise FileNotFoundError(f"shared/data not found beside {Path.cwd()} or the checkout: set ${SHARED_DATA_ENV} "
                            "to its folder")


def _clear_caches() -> None:
    steps_module.target_hash.cache_clear()
    steps_module._path_hashes.cache_clear()
    steps_module._read_result.cache_clear()
    canonical.canonical_text.cache_clear()
    canonical.personal.cache_clear()
    canonical._tool_name.cache_clear()
    canonical._key_kinds.cache_clear()
    steps_module.call_key.cache_clear()
    terms_module.message_terms.cache_clear()
    terms_module.asked_terms.cache_clear()
    terms_module.term_digest.cache_clear()
    slotted.cache_clear()
    steps_module._tool_reading.cache_clear()
    canonical._cached_command.cache_clear()


def _mine_pass(sessions: list[Session]) -> tuple[float, Miner]:
    start = time.perf_counter()
    miner = Miner()
    for session in sessions:
        add_trace(miner, session, build(session.messages))
    return time.perf_counter() - start, miner


def bench_mining(sessions: list[Session], folder: Path, passes: int) -> dict[str, Any]:
    """Traces per second through the mining pipeline (see the module docstring)."""
    cold, warm = [], []
    for _ in range(passes):
        _clear_caches()
        cold.append(_mine_pass(sessions)[0])
        warm.append(_mine_pass(sessions)[0])
    with_store = []
    for i in range(max(1, passes // 2)):
        memory = ProceduralMemory(ProcedureStore(folder / f"mine-{len(sessions)}-{i}.db"))
        _clear_caches()
        start = time.perf_counter()
        memory.mine_sessions(sessions)  # shell parts, operations and their task records, one transaction
        with_store.append(time.perf_counter() - start)
        memory.close()
    n = len(sessions)
    return {
        "traces": n,
        "cold_traces_per_s": n / statistics.median(cold),
        "warm_traces_per_s": n / statistics.median(warm),
        "with_store_traces_per_s": n / statistics.median(with_store),
        "target_traces_per_s": TARGETS["mining_traces_per_s"],
    }


#: Verbs of the synthetic write operations (each operation's tool is ``<verb>_item_<i>``).
VERBS: Final = (
    "book cancel change return exchange refund add remove upgrade reset send close open renew pay "
    "schedule activate suspend order delete create apply extend report replace subscribe rename "
    "verify unlock block merge approve submit"
).split()


def synthetic_procedures(n: int, seed: int = 5) -> list[Procedure]:
    """`n` recallable shell procedures with Zipf-distributed trigger terms (deterministic)."""
    rnd = random.Random(seed)
    vocabulary = _WORDS + [f"term{i}" for i in range(5000)]
    weights = [1.0 / (rank + 1) ** 1.05 for rank in range(len(vocabulary))]
    out = []
    for i in range(n):
        runs = rnd.randint(3, 12)
        words = set(rnd.choices(vocabulary, weights, k=rnd.randint(8, 20)))
        steps = tuple(
            ProcedureStep(f"tool_{i % 97}_{k} --id <ID>", f"tool_{i % 97}_{k}", verify=k == 0)
            for k in range(rnd.randint(1, 5))
        )
        out.append(
            Procedure(
                id=f"proc-syn{i:08d}",
                kind="shell",
                steps=steps,
                triggers={t: rnd.randint(1, runs) for t in terms(" ".join(sorted(words)))},
                trigger_runs=runs,
                successes=runs,
                failures=rnd.randint(0, 1),
                sample_task=" ".join(sorted(words)),
                scope="part",
            )
        )
    return out


def _chatter() -> tuple[list[str], list[float]]:
    """The Zipf vocabulary of the synthetic messages' other words: no operation's verb among them."""
    verbs = {t for v in VERBS for t in message_terms(v)}
    vocabulary = [w for w in _WORDS if not message_terms(w) & verbs] + [f"term{_object(i)}" for i in range(5000)]
    return vocabulary, [1.0 / (rank + 1) ** 1.05 for rank in range(len(vocabulary))]


def _object(i: int) -> str:
    """A made-up object word for synthetic operation `i` (letters only: digits are never terms)."""
    letters = "bcdfghjklmnpqrstvwxz"
    word = ""
    while True:
        i, r = divmod(i, len(letters))
        word += letters[r]
        if not i:
            return "obj" + word + "o"


def _request_text(rnd: random.Random, verb: str, obj: str, vocabulary: list[str], weights: list[float]) -> str:
    words = rnd.choices(vocabulary, weights, k=rnd.randint(6, 14))
    return f"Hi, I need to {verb} my {obj} " + " ".join(words)


def synthetic_operations(
    n: int, key: bytes, seed: int = 5
) -> tuple[list[Procedure], list[TaskRecord]]:
    """`n` recallable operation procedures, each folded from 2 or 3 synthetic past tasks.

    Each task has 3 to 6 messages before its first write, one of them a request naming the
    operation's verb and object (``cancel my obj42``) among Zipf-distributed words, the
    others without a verb. Term digests are keyed by `key`.
    """
    rnd = random.Random(seed)
    vocabulary, weights = _chatter()
    procedures: list[Procedure] = []
    tasks: list[TaskRecord] = []
    for i in range(n):
        verb = VERBS[i % len(VERBS)]
        op = f"{verb}_item_{i}"
        supporting: list[TaskRecord] = []
        for t in range(rnd.randint(2, 3)):
            runs = rnd.randint(1, 4)
            request = _request_text(rnd, verb, _object(i), vocabulary, weights)
            chatter = [
                " ".join(rnd.choices(vocabulary, weights, k=rnd.randint(4, 10))) for _ in range(rnd.randint(2, 5))
            ]
            messages = tuple(digests(key, message_terms(m)) for m in [request, *chatter])
            use = OperationUse(
                (("get_item(item_id)", "get_item(item_id=<ITEM_ID>)", ()),),
                f"{op}(item_id=<ITEM_ID>, reason=<REASON>)",
                f"{op}(item_id,reason)",
                runs,
                (("reason", ("no longer needed",)),),
                runs,
            )
            record = TaskRecord(f"task-syn{i:07d}{t}", (messages[0],), messages, "", runs, 0, {op: runs},
                                uses={op: use})
            supporting.append(record)
        tasks.extend(supporting)
        procedure = operation_procedure(op, supporting)
        assert procedure is not None
        procedures.append(procedure)
    return procedures, tasks


def operation_queries(n: int, k: int, seed: int = 9) -> list[str]:
    """`k` requests for the synthetic operations of `synthetic_operations(n)`."""
    rnd = random.Random(seed)
    vocabulary, weights = _chatter()
    out = []
    for _ in range(k):
        i = rnd.randrange(n)
        out.append(_request_text(rnd, VERBS[i % len(VERBS)], _object(i), vocabulary, weights))
    return out


def queries(k: int, seed: int = 9) -> list[str]:
    """`k` task texts of 6-14 words from the same vocabulary."""
    rnd = random.Random(seed)
    vocabulary = _WORDS + [f"term{i}" for i in range(5000)]
    weights = [1.0 / (rank + 1) ** 1.05 for rank in range(len(vocabulary))]
    return [
        "Hi, I need to " + " ".join(rnd.choices(vocabulary, weights, k=rnd.randint(6, 14)))
        for _ in range(k)
    ]


def synthetic_population(procedures: list[Procedure]) -> dict[str, int]:
    """The population the synthetic procedures' runs make (each run behind one procedure)."""
    population: dict[str, int] = {"": sum(p.trigger_runs for p in procedures)}
    for p in procedures:
        for term, runs in p.triggers.items():
            population[term] = population.get(term, 0) + runs
    return population


def bench_recall(n: int, repeats: int) -> dict[str, Any]:
    """Recall latency at `n` operation procedures (and their tasks), p50/p95 in ms, and the hit share.

    Also the ``terms`` matcher's latency at `n` shell procedures (``shell_p50_ms``).
    """
    config = ProceduresConfig()
    key = b"bench-key"
    index = RecallIndex(config.min_confidence, config.min_match_score, key=key, match=_match(config))
    procedures, tasks = synthetic_operations(n, key)
    index.update(procedures)
    index.update_tasks(tasks)
    texts = operation_queries(n, repeats)
    for text in texts[:50]:
        index.recall_operation(text)
    samples: list[float] = []
    hits = right = 0
    for text in texts:
        start = time.perf_counter_ns()
        found, _ = index.recall_operation(text)
        samples.append((time.perf_counter_ns() - start) / 1e6)
        hits += found.hit
        if found.hit:
            recalled = int(found.chain[0].steps[-1].signature.split("_item_")[1].split("(")[0])
            right += f" {_object(recalled)} " in text
    p50, p95 = percentiles(samples)
    shell = RecallIndex(config.min_confidence, config.min_match_score)
    shell_procedures = synthetic_procedures(n)
    shell.update_population(synthetic_population(shell_procedures))
    shell.update(shell_procedures)
    shell_samples = []
    for task in queries(repeats):
        start = time.perf_counter_ns()
        shell.recall(task)
        shell_samples.append((time.perf_counter_ns() - start) / 1e6)
    return {
        "procedures": n,
        "tasks": len(tasks),
        "indexed": len(index.matcher),
        "p50_ms": p50,
        "p95_ms": p95,
        "hit_share": hits / len(texts),
        "right_share_of_hits": right / hits if hits else None,
        "shell_p50_ms": percentiles(shell_samples)[0],
        "target_p50_ms": TARGETS["recall_p50_ms"],
    }


def _match(config: ProceduresConfig) -> MatchSettings:
    return MatchSettings(config.neighbours, config.min_similarity, config.min_agreement, config.margin)


class _SeedTask:
    """A synthetic task record written as it is, its operation folded at the end of the batch."""

    def __init__(self, record: TaskRecord) -> None:
        self.task = record

    def record(self, rows: ProcedureRows) -> int:
        rows.put_task(self.task)
        for op in self.task.ops:
            rows.defer("operation\x1e" + op, functools.partial(fold_operation, rows, op))
        return 1


def _requests(session: Session) -> list[list[dict[str, Any]]]:
    """The request histories of a stored session: one per assistant turn (what it was sent)."""
    out = []
    for i, message in enumerate(session.messages):
        if message.get("role") == "assistant" and i > 0:
            out.append(session.messages[:i])
    return out


def bench_request(sessions: list[Session], folder: Path, n: int, limit: int) -> dict[str, Any]:
    """`handle_request` latency in prod mode, p50/p95 in ms (see the module docstring)."""
    store = ProcedureStore(folder / "request.db")
    memory = ProceduralMemory(store, ProceduresConfig(mode="prod"))
    memory.mine_sessions(sessions)
    _, tasks = synthetic_operations(n, store.digest_key())
    store.record_runs(_SeedTask(t) for t in tasks)
    memory.refresh()
    names = sorted({c["name"] for s in sessions for m in s.messages for c in m.get("tool_calls") or ()})
    tools = [{"type": "function", "function": {"name": name}} for name in names]
    calls = [
        (
            {"model": "gpt-4o", "tools": tools, "messages": history},
            {"x-ace-session": f"{session.session_id}#{replay}"},
        )
        for replay in range(3)
        for session in sessions
        for history in _requests(session)
    ][:limit]
    samples: list[float] = []
    actions: dict[str, int] = {}
    for body, headers in calls:
        start = time.perf_counter_ns()
        _, stage = memory.handle_request(body, headers)
        samples.append((time.perf_counter_ns() - start) / 1e6)
        if stage is not None:
            actions[stage.action] = actions.get(stage.action, 0) + 1
    memory.close()
    p50, p95 = percentiles(samples)
    return {
        "requests": len(samples),
        "procedures": store_count(folder / "request.db"),
        "p50_ms": p50,
        "p95_ms": p95,
        "actions": actions,
        "target_p50_ms": TARGETS["request_p50_ms"],
    }


def bench_openhands(source: Path, folder: Path, passes: int) -> dict[str, Any]:
    """Mining throughput and the request replay on the OpenHands sample (see the module)."""
    from insika_knowledge.bench.replay_eval import replay

    sessions_file = source / "openhands_swebench" / "normalized.jsonl"
    requests_file = source / "openhands_swebench" / "raw" / "requests.jsonl.gz"
    sessions = list(read_sessions(sessions_file))
    times = []
    for _ in range(passes):
        _clear_caches()
        times.append(_mine_pass(sessions)[0])
    defaults = replay(requests_file, sessions=sessions_file, folder=folder / "replay-defaults")
    forced = replay(
        requests_file,
        sessions=sessions_file,
        config=ProceduresConfig(min_confidence=0.0, min_match_score=0.0, environment_runs=0),
        folder=folder / "replay-forced",
    )
    keys = ("requests", "sessions_with_procedure", "sessions_with_block", "prefix_kept")
    return {
        "traces": len(sessions),
        "mining_traces_per_s": len(sessions) / statistics.median(times),
        "replay": {k: defaults[k] for k in (*keys, "block_carried", "latency", "actions")},
        "replay_every_procedure_recallable": {
            k: forced[k] for k in (*keys, "block_carried", "latency", "actions")
        },
    }


def store_count(path: Path) -> int:
    """Procedures in the database at `path`."""
    store = ProcedureStore(path)
    try:
        return store.count()
    finally:
        store.close()


def bench_procedures(
    folder: str | Path | None = None, *, quick: bool = False, data: str | Path | None = None
) -> dict[str, Any]:
    """Every procedural-memory figure, with the targets beside them.

    Args:
        folder: where the temporary databases go (default: a fresh temporary folder).
        quick: fewer repetitions (a smoke run, not a measurement).
        data: the shared data folder (default: ``shared/data`` beside the checkout).

    Returns:
        ``{"mining": {...}, "recall": {...}, "request": {...}, "meets_targets": {...}}``.
    """
    source = Path(data) if data else shared_data()
    sessions = [
        *read_sessions(source / "tau_bench_airline" / "normalized.jsonl"),
        *read_sessions(source / "swe_agent" / "normalized.jsonl"),
    ]
    tau2 = [
        *read_sessions(source / "tau2_bench_airline" / "normalized.jsonl"),
        *read_sessions(source / "tau2_bench_retail" / "normalized.jsonl"),
    ]
    airline = [s for s in tau2 if s.session_id.startswith("tau2-bench/airline/")]
    with tempfile.TemporaryDirectory(prefix="insika-procedures-bench-") as tmp:
        work = Path(folder) if folder else Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        mining = bench_mining(sessions, work, 3 if quick else 15)
        mining["tau2"] = bench_mining(tau2, work, 3 if quick else 9)
        recall = bench_recall(10_000, 300 if quick else 3000)
        request = bench_request(airline, work, 10_000, 200 if quick else 5000)
        openhands = (
            bench_openhands(source, work, 3 if quick else 9)
            if (source / "openhands_swebench" / "raw" / "requests.jsonl.gz").is_file()
            else None
        )
    meets = {
        "mining": mining["cold_traces_per_s"] >= TARGETS["mining_traces_per_s"],
        "recall": recall["p50_ms"] <= TARGETS["recall_p50_ms"],
        "request": request["p50_ms"] <= TARGETS["request_p50_ms"],
    }
    if openhands is not None:
        for name in ("replay", "replay_every_procedure_recallable"):
            latency = openhands[name]["latency"]
            meets[f"openhands_{name}"] = (
                latency["p50_ms"] <= TARGETS["request_p50_ms"]
                and latency["p95_ms"] <= TARGETS["request_p95_ms"]
            )
    return {
        "mining": mining,
        "recall": recall,
        "request": request,
        "openhands": openhands,
        "quick": quick,
        "meets_targets": meets,
    }


def format_figures(results: dict[str, Any]) -> str:
    """A plain-text rendering of `bench_procedures`' results."""
    m, r, q = results["mining"], results["recall"], results["request"]
    t2 = m.get("tau2")
    lines = [
        f"mining ({m['traces']} shared traces): {m['cold_traces_per_s']:.0f} traces/s cold "
        f"caches, {m['warm_traces_per_s']:.0f} warm, {m['with_store_traces_per_s']:.0f} "
        "with the store write "
        f"(target >= {m['target_traces_per_s']:.0f})",
        *([f"mining ({t2['traces']} tau2 runs, operations): {t2['cold_traces_per_s']:.0f} runs/s cold, "
           f"{t2['warm_traces_per_s']:.0f} warm, {t2['with_store_traces_per_s']:.0f} with the store write"]
          if t2 else []),
        f"recall ({r['procedures']} procedures): p50 {r['p50_ms']:.3f} ms, "
        f"p95 {r['p95_ms']:.3f} ms "
        f"(target p50 <= {r['target_p50_ms']} ms)",
        f"handle_request, prod ({q['requests']} requests, {q['procedures']} procedures): "
        f"p50 {q['p50_ms']:.3f} ms, p95 {q['p95_ms']:.3f} ms "
        f"(target p50 <= {q['target_p50_ms']} ms); "
        f"actions {q['actions']}",
    ]
    oh = results.get("openhands")
    if oh is not None:
        lines.append(
            f"openhands mining ({oh['traces']} traces): {oh['mining_traces_per_s']:.0f} traces/s"
        )
        for name, label in (
            ("replay", "defaults"),
            ("replay_every_procedure_recallable", "every procedure recallable"),
        ):
            r = oh[name]
            lat = r["latency"]
            carried = "n/a" if r["block_carried"] is None else f"{100 * r['block_carried']:.1f}%"
            lines.append(
                f"openhands replay, {label} ({r['requests']} requests): p50 "
                f"{lat['p50_ms']:.3f} ms, p95 {lat['p95_ms']:.3f} ms (targets 2 / 5 ms); "
                f"prefix kept {100 * (r['prefix_kept'] or 0):.1f}%, block carried {carried}, "
                f"sessions with a procedure {r['sessions_with_procedure']}"
            )
    lines.append(
        "meets targets: "
        + ", ".join(f"{k} {'yes' if v else 'NO'}" for k, v in results["meets_targets"].items())
    )
    if results.get("quick"):
        lines.append("(--quick: a smoke run with few repetitions, not a measurement)")
    return "\n".join(lines)


def main(argv: list[str] | None = None, echo: Callable[[str], None] = print) -> int:
    """``python -m insika_knowledge.bench.procedures [--quick] [--json]``."""
    parser = argparse.ArgumentParser(description="Procedural-memory speed figures.")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    try:
        results = bench_procedures(quick=args.quick)
    except (FileNotFoundError, UserError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    echo(json.dumps(results, indent=2) if args.json else format_figures(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
