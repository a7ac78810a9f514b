"""``bench --outbox``: what ``after_turn`` costs the engine, and the outbox's throughput.

The model is an in-process stub that proposes nothing, so the figures are the queue's
own cost: the outbox insert, the claim, the extraction record and the removal.

- ``after_turn``: p50/p95 in ms of the hook, with the worker extracting at the same time
  (the insert competes with the worker's transactions for the write lock);
- ``enqueue_per_s``: turns the hook accepts per second, back to back;
- ``extract_per_s``: turns per second the worker takes out of the outbox (claim, learn
  with a model that proposes nothing, record, remove).
"""

from __future__ import annotations

import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from insika_knowledge.events import Recorder
from insika_knowledge.extract.model import ExtractionRequest, MergeAnswer, MergeRequest
from insika_knowledge.hookspecs import AgentSpec, Turn
from insika_knowledge.memory import Memory
from insika_knowledge.plugin import KnowledgePlugin
from insika_knowledge.queue import ExtractionQueue, OutboxSettings

#: The spec under which the stub model is registered in the benchmark's `Memory`.
IDLE_MODEL = "bench-idle"


class _Idle:
    """A model that proposes nothing and never merges (the queue's cost alone)."""

    def propose(self, request: ExtractionRequest) -> list[Any]:
        return []

    def merge(self, request: MergeRequest) -> MergeAnswer:
        raise NotImplementedError("the idle model proposes nothing to merge")


def _percentile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def bench_outbox(folder: Path, turns: int = 2000) -> dict[str, Any]:
    """Measure the queue in `folder` with `turns` turns (see the module doc).

    Returns:
        ``{"turns", "after_turn_p50_ms", "after_turn_p95_ms", "enqueue_per_s",
        "extract_per_s", "dropped"}``.
    """
    memory = Memory(folder / "outbox")
    memory._models[IDLE_MODEL] = _Idle()
    recorder = Recorder()
    memory.events.subscribe(recorder)
    plugin = KnowledgePlugin(memory, outbox=OutboxSettings(max_pending=max(turns, 1) * 2))
    agent = AgentSpec("bench", "bench", {"model": IDLE_MODEL})
    messages = [{"role": "user", "content": "Tem frete grátis acima de quanto?"},
                {"role": "assistant", "content": "Acima de R$ 199 o frete é grátis."}]
    batch = [Turn(agent, f"s{i}", "t1", messages) for i in range(turns)]
    plugin.after_turn(Turn(agent, "warm-up", "t1", messages))  # open the store, start the worker
    plugin.drain()
    samples: list[float] = []
    started = time.perf_counter()
    for turn in batch:
        before = time.perf_counter()
        plugin.after_turn(turn)
        samples.append((time.perf_counter() - before) * 1000)
    enqueue_s = time.perf_counter() - started
    plugin.drain()
    drained_s = time.perf_counter() - started
    dropped = memory.store("bench").outbox().dropped()
    plugin.close()
    # Extraction alone: fill the outbox first with the worker not yet started, then time it.
    fill = Memory(folder / "fill")
    fill._models[IDLE_MODEL] = _Idle()
    queue = ExtractionQueue(fill, OutboxSettings(max_pending=max(turns, 1) * 2), autostart=False)
    for turn in batch:
        queue.submit(tenant="bench", agent="bench", knowledge={"model": IDLE_MODEL},
                     session_id=turn.session_id, turn_id=turn.turn_id, messages=messages)
    queue.close(timeout_s=60)  # writes any turn a busy lock left waiting in memory
    fill.close()
    resumed = Memory(folder / "fill")
    resumed._models[IDLE_MODEL] = _Idle()
    worker = ExtractionQueue(resumed, OutboxSettings(max_pending=max(turns, 1) * 2))
    started = time.perf_counter()
    worker.start()
    finished = _wait(lambda: _outbox_empty(resumed), timeout_s=600)
    extract_s = time.perf_counter() - started
    worker.close()
    learned = sum(1 for r in resumed.store("bench").extractions("bench") if r.outcome == "ok")
    resumed.close()
    return {
        "turns": turns,
        "after_turn_p50_ms": statistics.median(samples),
        "after_turn_p95_ms": _percentile(samples, 0.95),
        "enqueue_per_s": turns / enqueue_s,
        "enqueue_and_extract_per_s": turns / drained_s,
        "extract_per_s": turns / extract_s,
        "dropped": dropped,
        # Anything but 0 / turns / True means the figures above measured failures, not work.
        "degraded_events": len(recorder.named("knowledge_degraded")),
        "extracted_ok": learned,
        "finished": finished,
    }


def _outbox_empty(memory: Memory) -> bool:
    return memory.store("bench").outbox().pending() == 0


def _wait(done: Callable[[], bool], *, timeout_s: float) -> bool:
    deadline = time.monotonic() + timeout_s
    while not done():
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.01)
    return True


def run_outbox_bench(*, quick: bool = False, echo: Callable[[str], Any] = print,
                     as_json: bool = False) -> dict[str, Any]:
    """Run `bench_outbox` in a temporary folder and print its figures.

    Args:
        quick: 300 turns instead of 3000 (a smoke run, not a measurement).
        echo: where lines go.
        as_json: print one JSON object instead of lines.

    Returns:
        The figures (see `bench_outbox`).
    """
    import json

    with tempfile.TemporaryDirectory(prefix="insika-outbox-bench-") as tmp:
        result = bench_outbox(Path(tmp), turns=300 if quick else 3000)
    if as_json:
        echo(json.dumps({"outbox": result}))
    else:
        echo(f"after_turn (outbox insert): p50 {result['after_turn_p50_ms']:.3f} ms, "
             f"p95 {result['after_turn_p95_ms']:.3f} ms over {result['turns']} turns")
        echo(f"outbox: accepts {result['enqueue_per_s']:.0f} turns/s; the worker extracts "
             f"{result['extract_per_s']:.0f} turns/s with a model that proposes nothing")
        if result["degraded_events"] or result["extracted_ok"] != result["turns"] or not result["finished"]:
            echo(f"warning: {result['degraded_events']} degraded event(s), {result['extracted_ok']} of "
                 f"{result['turns']} turns extracted: the figures measured failures")
    return result
