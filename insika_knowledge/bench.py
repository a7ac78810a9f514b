"""``insika-knowledge bench``: the speed figures of the concept loop, medians and ratios.

Measured on a synthetic corpus (seeded, so every run sees the same concepts and
queries): concept text is drawn from a Zipf-distributed vocabulary of Portuguese
and English support words plus generated terms, so frequent words have long
posting lists as in real stores.

- search: Index::Scan, warm cache, p50/p95 per query at 50/200/1000/5000 concepts,
  beside the seed's Ruby figures and the ratio (seed p50 / ours);
- after_turn: how long the hook blocks the engine (scheduling only), p50;
- same-claim write: one confirming sighting, transaction included, p50;
- cache memory: bytes per cached concept (tracemalloc) at 5000 concepts.
"""

from __future__ import annotations

import json
import random
import statistics
import tempfile
import time
import tracemalloc
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, Final, TypeVar

from insika_knowledge.concept import Concept
from insika_knowledge.config import load_config
from insika_knowledge.extract.candidates import Candidate
from insika_knowledge.index.scan import ScanIndex, scan_reference
from insika_knowledge.index.text import query_terms
from insika_knowledge.index.tokenizer import TOKENIZER
from insika_knowledge.learn import sight
from insika_knowledge.store import SQLiteStore

T = TypeVar("T")

#: The seed's Index::Scan figures (Ruby, same shape of test): concepts -> (p50 ms, p95 ms).
SEED_SCAN_MS: Final[dict[int, tuple[float, float]]] = {
    50: (0.28, 0.47), 200: (1.17, 1.56), 1000: (6.4, 8.0), 5000: (35.6, 41.3),
}
SIZES: Final = (50, 200, 1000, 5000)
_WORDS: Final = (
    "frete entrega prazo cep campinas sao paulo devolucao troca reembolso pedido produto "
    "pagamento pix boleto cartao parcelamento desconto cupom estoque loja atendimento garantia "
    "defeito nota fiscal endereco transportadora rastreio correios sedex retirada horario "
    "shipping delivery return refund exchange order payment card discount coupon stock store "
    "warranty invoice address carrier tracking pickup hours days business free threshold "
    "flight booking reservation cancel cabin baggage insurance upgrade membership gold silver"
).split()


def _generated(i: int) -> str:
    """A letters-only made-up word per number: ``0`` -> ``"xa"``, ``27`` -> ``"xbb"``."""
    letters = ""
    i += 26
    while i:
        i, r = divmod(i, 26)
        letters = chr(97 + r) + letters
    return "x" + letters


VOCABULARY: Final = _WORDS + [_generated(i) for i in range(4000)]


def corpus(n: int, seed: int = 7) -> list[Concept]:
    """`n` synthetic concepts (deterministic for a seed)."""
    rnd = random.Random(seed)
    vocabulary = VOCABULARY
    weights = [1.0 / (rank + 1) ** 1.05 for rank in range(len(vocabulary))]

    def text(k: int) -> str:
        return " ".join(rnd.choices(vocabulary, weights, k=k))

    out = []
    for i in range(n):
        body = text(45) + (f" Related: [[c{rnd.randrange(n)}]]." if i % 3 == 0 else "")
        if i % 10 == 0:  # some concepts state numbers and ranges, as real ones do
            body += f" Prazo de {rnd.randint(1, 5)}-{rnd.randint(6, 10)} dias acima de R$ {rnd.randint(50, 500)}."
        out.append(Concept(
            name=f"c{i}", description=text(12), type="fact", provenance="observed",
            confidence=rnd.choice([0.4, 0.6, 0.7, 0.8, 0.9]), sources=(f"s{i}",), occurrences=1,
            created_at="2026-08-24T18:00:00Z",
            updated_at=f"2026-08-{1 + i % 28:02d}T{i % 24:02d}:00:00Z", body=body,
        ))
    return out


def queries(k: int, seed: int = 11) -> list[str]:
    """`k` customer-like messages of 6-14 words."""
    rnd = random.Random(seed)
    vocabulary = VOCABULARY
    weights = [1.0 / (rank + 1) ** 1.05 for rank in range(len(vocabulary))]
    return [
        "Oi, " + " ".join(rnd.choices(vocabulary, weights, k=rnd.randint(6, 14))) + "?"
        for _ in range(k)
    ]


def _fill(store: SQLiteStore, agent: str, concepts: list[Concept]) -> None:
    with store.transaction() as tx:
        for concept in concepts:
            tx.put(agent, concept, reason="extract", actor="bench")


def percentiles(samples_ms: list[float]) -> tuple[float, float]:
    """(p50, p95) of `samples_ms`; every benchmark of the project reports these two."""
    ordered = sorted(samples_ms)
    return statistics.median(ordered), ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]


def time_each(call: Callable[[T], object], items: Iterable[T]) -> list[float]:
    """Milliseconds each `call(item)` took, in item order (monotonic nanosecond clock)."""
    samples = []
    for item in items:
        start = time.perf_counter_ns()
        call(item)
        samples.append((time.perf_counter_ns() - start) / 1e6)
    return samples


def bench_scan(folder: Path, n: int, repeats: int) -> dict[str, Any]:
    """Warm-cache search latency at `n` concepts, plus cache memory per concept."""
    store = SQLiteStore(folder / f"scan-{n}.db", tokenizer=TOKENIZER)
    _fill(store, "bench", corpus(n))
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
    _fill(store, "bench", corpus(1000))
    candidate = Candidate("frete-gratis", "Free shipping above R$ 199.", "policy",
                          "Orders above R$ 199 ship for free.")
    sight(store, "bench", candidate, session_id="s-first", turn_id="t")
    samples = time_each(
        lambda i: sight(store, "bench", candidate, session_id=f"s{i}", turn_id="t"), range(repeats)
    )
    store.close()
    p50, p95 = percentiles(samples)
    return {"p50_ms": p50, "p95_ms": p95}


def _pairs(values: dict[str, Any]) -> str:
    def one(key: str, value: Any) -> str:
        if isinstance(value, dict):
            return f"{key} ({_pairs(value)})"
        return f"{key} {value:.3f}" if isinstance(value, float) else f"{key} {value}"

    return ", ".join(one(k, v) for k, v in values.items())


def run_bench(*, as_json: bool = False, quick: bool = False, echo: Callable[[str], None] = print) -> dict[str, Any]:
    """Run every benchmark and print a table (or JSON). Returns the results."""
    repeats = 200 if quick else 2000
    load_config({})  # import cost outside the timings
    with tempfile.TemporaryDirectory(prefix="insika-bench-") as tmp:
        folder = Path(tmp)
        results: dict[str, Any] = {
            "scan": [bench_scan(folder, n, repeats) for n in SIZES],
            "after_turn": bench_after_turn(folder, 300 if quick else 2000),
            "same_claim_write": bench_same_claim(folder, 100 if quick else 1000),
            "quick": quick,
        }
        try:
            from insika_knowledge.studio.bench import bench_studio
        except ImportError:  # the studio extra is not installed
            bench_studio = None
        if bench_studio is not None:
            results["studio"] = bench_studio(folder)
        from insika_knowledge.procedures.bench import bench_procedures

        try:
            results["procedures"] = bench_procedures(folder, quick=quick)
        except FileNotFoundError as exc:  # the traces it mines live in shared/data
            results["procedures"] = {"skipped": str(exc)}
    if as_json:
        echo(json.dumps(results, indent=2))
        return results
    echo("Index::Scan, warm cache, top_k=5 (seed = the Ruby figures; ratio = seed p50 / ours)")
    echo(f"{'concepts/agent':>14}  {'p50':>9}  {'p95':>9}  {'seed p50':>9}  {'seed p95':>9}  "
         f"{'ratio':>6}  {'cache/concept':>13}")
    for row in results["scan"]:
        echo(f"{row['concepts']:>14}  {row['p50_ms']:>6.3f} ms  {row['p95_ms']:>6.3f} ms  "
             f"{row['seed_p50_ms']:>6.2f} ms  {row['seed_p95_ms']:>6.2f} ms  {row['speedup_p50']:>5.0f}x  "
             f"{row['cache_bytes_per_concept'] / 1024:>10.1f} KiB")
    echo("naive per-concept set intersection, same results (p50): " + ", ".join(
        f"{r['concepts']}: {r['naive_scan_p50_ms']:.3f} ms ({r['naive_scan_p50_ms'] / r['p50_ms']:.0f}x ours)"
        for r in results["scan"]))
    echo("first search after a write (cache refresh): " + ", ".join(
        f"{r['concepts']}: {r['search_after_write_p50_ms']:.2f} ms" for r in results["scan"]))
    hook, write = results["after_turn"], results["same_claim_write"]
    echo(f"after_turn (blocks the engine): p50 {hook['p50_ms']:.3f} ms, p95 {hook['p95_ms']:.3f} ms")
    echo(f"same-claim consolidation write: p50 {write['p50_ms']:.3f} ms, p95 {write['p95_ms']:.3f} ms")
    if "studio" in results:
        echo("studio at 5000 concepts (server-side): " + _pairs(results["studio"]))
    echo("procedures: " + _pairs(results["procedures"]))
    if quick:
        echo("(--quick: a smoke run with few repetitions, not a measurement)")
    return results


# ----------------------------------------------------------------------------- --scale

SCALE_SIZES: Final = (1000, 5000, 50_000, 200_000)


def _rss_mib() -> float:
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def bench_scale(folder: Path, n: int, repeats: int) -> dict[str, Any]:
    """Scan and FTS5 side by side at `n` concepts: build time, memory, search p50/p95, write cost.

    Build time: writing `n` concepts through the store in one transaction (FTS5 triggers
    included), then for Scan loading its cache and for FTS5 running ``optimize``.
    Memory: Scan's cache (tracemalloc); FTS5's index pages (``dbstat``-free estimate:
    database file growth over a store without the FTS5 table is not separated, so the
    file size is reported whole).
    """
    from insika_knowledge.index.fts5 import Fts5Index

    store = SQLiteStore(folder / f"scale-{n}.db", tokenizer=TOKENIZER)
    concepts = corpus(n)
    start = time.perf_counter()
    batch = 5000
    for i in range(0, n, batch):
        _fill(store, "bench", concepts[i : i + batch])
    write_s = time.perf_counter() - start
    start = time.perf_counter()
    store.fts_optimize()
    optimize_s = time.perf_counter() - start
    tracemalloc.start()
    start = time.perf_counter()
    scan = ScanIndex(store)
    scan.entries("bench")
    scan_build_s = time.perf_counter() - start
    scan_bytes = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    fts = Fts5Index(store)
    msgs = queries(repeats)
    out: dict[str, Any] = {"concepts": n, "write_all_s": write_s, "fts5_optimize_s": optimize_s,
                           "scan_cache_build_s": scan_build_s, "scan_cache_mib": scan_bytes / 2**20,
                           "db_file_mib": sum(
                               p.stat().st_size for p in store.path.parent.glob(store.path.name + "*")
                           ) / 2**20}
    for label, index in (("scan", scan), ("fts5", fts)):
        time_each(lambda m, index=index: index.search("bench", m, 5), msgs[:20])  # warm up
        p50, p95 = percentiles(time_each(lambda m, index=index: index.search("bench", m, 5), msgs))
        out[f"{label}_p50_ms"], out[f"{label}_p95_ms"] = p50, p95
    # The write cost of one concept with its triggers (versions row, generation, FTS5).
    def write_one(item: tuple[int, Concept]) -> None:
        with store.transaction() as tx:
            tx.put("bench", item[1].replace(name=f"extra-{item[0]}"), reason="extract", actor="bench")

    samples = time_each(write_one, enumerate(corpus(200, seed=99)))
    out["write_one_p50_ms"], out["write_one_p95_ms"] = percentiles(samples)
    store.close()
    return out


def run_scale(*, sizes: tuple[int, ...] = SCALE_SIZES, as_json: bool = False, quick: bool = False,
              echo: Callable[[str], None] = print) -> list[dict[str, Any]]:
    """Run `bench_scale` for each size and print a table (or JSON)."""
    repeats = 100 if quick else 500
    rows = []
    with tempfile.TemporaryDirectory(prefix="insika-scale-") as tmp:
        for n in sizes:
            rows.append(bench_scale(Path(tmp), n, repeats))
    if as_json:
        echo(json.dumps(rows, indent=2))
        return rows
    echo("Scan vs FTS5, top_k=5, warm (p50/p95 per query; build = write all + index)")
    echo(f"{'concepts':>9}  {'scan p50':>9}  {'scan p95':>9}  {'fts5 p50':>9}  {'fts5 p95':>9}  "
         f"{'write all':>9}  {'optimize':>8}  {'scan cache':>10}  {'cache MiB':>9}  {'db MiB':>7}  {'write 1':>8}")
    for r in rows:
        echo(f"{r['concepts']:>9}  {r['scan_p50_ms']:>6.3f} ms  {r['scan_p95_ms']:>6.3f} ms  "
             f"{r['fts5_p50_ms']:>6.3f} ms  {r['fts5_p95_ms']:>6.3f} ms  {r['write_all_s']:>7.1f} s  "
             f"{r['fts5_optimize_s']:>6.2f} s  {r['scan_cache_build_s']:>8.2f} s  {r['scan_cache_mib']:>9.1f}  "
             f"{r['db_file_mib']:>7.1f}  {r['write_one_p50_ms']:>5.2f} ms")
    return rows
