"""``insika-knowledge bench``: the speed figures of the concept loop, medians and ratios.

Measured on the synthetic corpus of `insika_knowledge.bench.synthetic` (seeded, so
every run sees the same concepts and queries).

- search: Index::Scan, warm cache, p50/p95 per query at 50/200/1000/5000 concepts,
  beside the seed's Ruby figures and the ratio (seed p50 / ours);
- after_turn: how long the hook blocks the engine (scheduling only), p50;
- same-claim write: one confirming sighting, transaction included, p50;
- cache memory: bytes per cached concept (tracemalloc) at 5000 concepts;
- the Studio's pages (`insika_knowledge.bench.studio`, with the studio extra) and
  procedural memory (`insika_knowledge.bench.procedures`, with the shared data).
"""

from __future__ import annotations

import statistics
import tempfile
import tracemalloc
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path
from typing import Any, Final

from insika_knowledge.analysis.text import query_terms
from insika_knowledge.bench.procedures import bench_procedures
from insika_knowledge.bench.report import print_results
from insika_knowledge.bench.synthetic import corpus, fill, queries
from insika_knowledge.bench.timing import OnStep, percentiles, run_steps, time_each
from insika_knowledge.candidate import Candidate
from insika_knowledge.config import load_config
from insika_knowledge.index.scan import ScanIndex, scan_reference
from insika_knowledge.index.tokenizer import TOKENIZER
from insika_knowledge.learn import sight
from insika_knowledge.store import SQLiteStore

#: The seed's Index::Scan figures (Ruby, same shape of test): concepts -> (p50 ms, p95 ms).
SEED_SCAN_MS: Final[dict[int, tuple[float, float]]] = {
    50: (0.28, 0.47), 200: (1.17, 1.56), 1000: (6.4, 8.0), 5000: (35.6, 41.3),
}
SIZES: Final = (50, 200, 1000, 5000)


def bench_scan(folder: Path, n: int, repeats: int) -> dict[str, Any]:
    """Warm-cache search latency at `n` concepts, plus cache memory per concept."""
    store = SQLiteStore(folder / f"scan-{n}.db", tokenizer=TOKENIZER)
    fill(store, "bench", corpus(n))
    tracemalloc.start()
    index = ScanIndex(store)
    index.entries("bench")  # load the cache
    cache_bytes = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    msgs = queries(repeats)
    time_each(lambda m: index.search("bench", m, 5), msgs[:50])  # warm up
    samples = time_each(lambda m: index.search("bench", m, 5), msgs)
    entries = list(index.entries("bench").values())
    weight = index.weight("bench")
    # the same ranking by a plain per-concept set intersection
    naive = time_each(lambda m: scan_reference(entries, query_terms(m), 5, weight), msgs[:200])
    edited = corpus(n)[0]

    def write_then_search(i: int) -> None:
        with store.transaction() as tx:
            tx.put("bench", edited.replace(occurrences=i + 2), reason="confirm", actor="bench")

    refresh = []
    for i in range(20):  # a write moves the generation: the next search refreshes the cache
        write_then_search(i)
        refresh += time_each(lambda m: index.search("bench", m, 5), [msgs[i]])
    store.close()
    p50, p95 = percentiles(samples)
    seed50, seed95 = SEED_SCAN_MS[n]
    return {"concepts": n, "p50_ms": p50, "p95_ms": p95, "seed_p50_ms": seed50, "seed_p95_ms": seed95,
            "speedup_p50": seed50 / p50, "cache_bytes_per_concept": cache_bytes / n,
            "search_after_write_p50_ms": statistics.median(refresh),
            "naive_scan_p50_ms": statistics.median(naive)}


def bench_after_turn(folder: Path, repeats: int) -> dict[str, Any]:
    """How long ``after_turn`` blocks the engine (scheduling only), p50 and p95 in ms."""
    from insika_knowledge.memory import Memory
    from insika_knowledge.plugin import KnowledgePlugin
    from insika_knowledge.sessions import AgentSpec, Turn

    class Idle:
        def propose(self, request: Any) -> list[Any]:
            return []

        def merge(self, request: Any) -> Any:  # pragma: no cover - never reached
            raise NotImplementedError

    memory = Memory(folder / "hook")
    memory._models["bench-idle"] = Idle()  # an in-process model: measure the hook, not a model
    plugin = KnowledgePlugin(memory)
    agent = AgentSpec("bench", "bench", {"model": "bench-idle"})
    turns = [Turn(agent, f"s{i}", "t1", [{"role": "user", "content": "frete?"}]) for i in range(repeats)]
    samples: list[float] = []
    for start in range(0, len(turns), 50):  # drain between batches: measure the hook, not a queue
        samples += time_each(plugin.after_turn, turns[start : start + 50])
        plugin.drain()
    plugin.close()
    p50, p95 = percentiles(samples)
    return {"p50_ms": p50, "p95_ms": p95}


def bench_same_claim(folder: Path, repeats: int) -> dict[str, Any]:
    """One same-claim sighting (decide + write + version row), p50 and p95 in ms."""
    store = SQLiteStore(folder / "confirm.db", tokenizer=TOKENIZER)
    fill(store, "bench", corpus(1000))
    candidate = Candidate("frete-gratis", "Free shipping above R$ 199.", "policy",
                          "Orders above R$ 199 ship for free.")
    sight(store, "bench", candidate, session_id="s-first", turn_id="t")
    samples = time_each(
        lambda i: sight(store, "bench", candidate, session_id=f"s{i}", turn_id="t"), range(repeats)
    )
    store.close()
    p50, p95 = percentiles(samples)
    return {"p50_ms": p50, "p95_ms": p95}


def _studio_bench() -> Callable[[Path], dict[str, Any]] | None:
    """`insika_knowledge.bench.studio.bench_studio`, or None without the studio extra."""
    try:
        from insika_knowledge.bench.studio import bench_studio
    except ImportError:  # Starlette and the rest of the studio extra are not installed
        return None
    return bench_studio


def _procedures(folder: Path, quick: bool) -> dict[str, Any]:
    try:
        return bench_procedures(folder, quick=quick)
    except FileNotFoundError as exc:  # the traces it mines live in shared/data
        return {"skipped": str(exc)}


def _pairs(values: dict[str, Any]) -> str:
    def one(key: str, value: Any) -> str:
        if isinstance(value, dict):
            return f"{key} ({_pairs(value)})"
        return f"{key} {value:.3f}" if isinstance(value, float) else f"{key} {value}"

    return ", ".join(one(k, v) for k, v in values.items())


def run_bench(*, as_json: bool = False, quick: bool = False, echo: Callable[[str], None] = print,
              on_step: OnStep | None = None) -> dict[str, Any]:
    """Run every benchmark and print a table (or JSON). Returns the results.

    Args:
        as_json: print JSON instead of the table.
        quick: fewer repetitions (a smoke run, not a measurement).
        echo: where the results go.
        on_step: called before each step with (what it measures, steps done, steps in all),
            and once more with ``("done", n, n)`` at the end; for a progress display.
    """
    repeats = 200 if quick else 2000
    load_config({})  # import cost outside the timings
    with tempfile.TemporaryDirectory(prefix="insika-bench-") as tmp:
        folder = Path(tmp)
        steps: list[tuple[str, str, Callable[[], Any]]] = [
            ("scan", f"Index::Scan search at {n} concepts", partial(bench_scan, folder, n, repeats))
            for n in SIZES
        ]
        steps += [
            ("after_turn", "after_turn", partial(bench_after_turn, folder, 300 if quick else 2000)),
            ("same_claim_write", "same-claim write", partial(bench_same_claim, folder, 100 if quick else 1000)),
        ]
        studio = _studio_bench()
        if studio is not None:
            steps.append(("studio", "Studio pages at 5000 concepts", partial(studio, folder)))
        steps.append(("procedures", "procedure mining and recall", partial(_procedures, folder, quick)))
        values = run_steps([(label, step) for _, label, step in steps], on_step)
        results: dict[str, Any] = {"scan": []}
        for (key, _, _), value in zip(steps, values, strict=True):
            if key == "scan":
                results["scan"].append(value)
            else:
                results[key] = value
        results["quick"] = quick
    return print_results(results, _table, as_json=as_json, echo=echo)


def _table(results: dict[str, Any]) -> Iterator[str]:
    yield "Index::Scan, warm cache, top_k=5 (seed = the Ruby figures; ratio = seed p50 / ours)"
    yield (f"{'concepts/agent':>14}  {'p50':>9}  {'p95':>9}  {'seed p50':>9}  {'seed p95':>9}  "
           f"{'ratio':>6}  {'cache/concept':>13}")
    for row in results["scan"]:
        yield (f"{row['concepts']:>14}  {row['p50_ms']:>6.3f} ms  {row['p95_ms']:>6.3f} ms  "
               f"{row['seed_p50_ms']:>6.2f} ms  {row['seed_p95_ms']:>6.2f} ms  {row['speedup_p50']:>5.0f}x  "
               f"{row['cache_bytes_per_concept'] / 1024:>10.1f} KiB")
    yield "naive per-concept set intersection, same results (p50): " + ", ".join(
        f"{r['concepts']}: {r['naive_scan_p50_ms']:.3f} ms ({r['naive_scan_p50_ms'] / r['p50_ms']:.0f}x ours)"
        for r in results["scan"])
    yield "first search after a write (cache refresh): " + ", ".join(
        f"{r['concepts']}: {r['search_after_write_p50_ms']:.2f} ms" for r in results["scan"])
    hook, write = results["after_turn"], results["same_claim_write"]
    yield f"after_turn (blocks the engine): p50 {hook['p50_ms']:.3f} ms, p95 {hook['p95_ms']:.3f} ms"
    yield f"same-claim consolidation write: p50 {write['p50_ms']:.3f} ms, p95 {write['p95_ms']:.3f} ms"
    if "studio" in results:
        yield "studio at 5000 concepts (server-side): " + _pairs(results["studio"])
    yield "procedures: " + _pairs(results["procedures"])
    if results["quick"]:
        yield "(--quick: a smoke run with few repetitions, not a measurement)"
