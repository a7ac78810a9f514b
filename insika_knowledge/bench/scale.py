"""``insika-knowledge bench --scale``: Scan and FTS5 side by side at 1000..200000 concepts.

On the synthetic corpus of `insika_knowledge.bench.synthetic`: build time, memory,
search p50/p95 and the cost of one write, per size.
"""

from __future__ import annotations

import tempfile
import time
import tracemalloc
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path
from typing import Any, Final

from insika_knowledge.bench.report import print_results
from insika_knowledge.bench.synthetic import corpus, fill, queries
from insika_knowledge.bench.timing import OnStep, percentiles, run_steps, time_each
from insika_knowledge.concept import Concept
from insika_knowledge.index.fts5 import Fts5Index
from insika_knowledge.index.scan import ScanIndex
from insika_knowledge.index.tokenizer import TOKENIZER
from insika_knowledge.store import SQLiteStore

SCALE_SIZES: Final = (1000, 5000, 50_000, 200_000)


def bench_scale(folder: Path, n: int, repeats: int) -> dict[str, Any]:
    """Scan and FTS5 side by side at `n` concepts: build time, memory, search p50/p95, write cost.

    Build time: writing `n` concepts through the store in one transaction (FTS5 triggers
    included), then for Scan loading its cache and for FTS5 running ``optimize``.
    Memory: Scan's cache (tracemalloc); FTS5's index pages (``dbstat``-free estimate:
    database file growth over a store without the FTS5 table is not separated, so the
    file size is reported whole).
    """
    store = SQLiteStore(folder / f"scale-{n}.db", tokenizer=TOKENIZER)
    concepts = corpus(n)
    start = time.perf_counter()
    batch = 5000
    for i in range(0, n, batch):
        fill(store, "bench", concepts[i : i + batch])
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
        out[f"{label}_p50_ms"], out[f"{label}_p95_ms"] = _search_ms(index, msgs)
    # The write cost of one concept with its triggers (versions row, generation, FTS5).
    def write_one(item: tuple[int, Concept]) -> None:
        with store.transaction() as tx:
            tx.put("bench", item[1].replace(name=f"extra-{item[0]}"), reason="extract", actor="bench")

    samples = time_each(write_one, enumerate(corpus(200, seed=99)))
    out["write_one_p50_ms"], out["write_one_p95_ms"] = percentiles(samples)
    store.close()
    return out


def _search_ms(index: ScanIndex | Fts5Index, messages: list[str]) -> tuple[float, float]:
    """(p50, p95) ms of a top-5 search per message, after 20 unmeasured ones (warm up)."""
    def search(message: str) -> object:
        return index.search("bench", message, 5)

    time_each(search, messages[:20])
    return percentiles(time_each(search, messages))


def run_scale(*, sizes: tuple[int, ...] = SCALE_SIZES, as_json: bool = False, quick: bool = False,
              echo: Callable[[str], None] = print, on_step: OnStep | None = None) -> list[dict[str, Any]]:
    """Run `bench_scale` for each size and print a table (or JSON).

    `on_step` is called before each size with (what it measures, sizes done, sizes in
    all), and with ``("done", n, n)`` at the end; for a progress display.
    """
    repeats = 100 if quick else 500
    with tempfile.TemporaryDirectory(prefix="insika-scale-") as tmp:
        rows = run_steps([(f"Scan and FTS5 at {n} concepts", partial(bench_scale, Path(tmp), n, repeats))
                          for n in sizes], on_step)
    return print_results(rows, _table, as_json=as_json, echo=echo)


def _table(rows: list[dict[str, Any]]) -> Iterator[str]:
    yield "Scan vs FTS5, top_k=5, warm (p50/p95 per query; build = write all + index)"
    yield (f"{'concepts':>9}  {'scan p50':>9}  {'scan p95':>9}  {'fts5 p50':>9}  {'fts5 p95':>9}  "
           f"{'write all':>9}  {'optimize':>8}  {'scan cache':>10}  {'cache MiB':>9}  {'db MiB':>7}  {'write 1':>8}")
    for r in rows:
        yield (f"{r['concepts']:>9}  {r['scan_p50_ms']:>6.3f} ms  {r['scan_p95_ms']:>6.3f} ms  "
               f"{r['fts5_p50_ms']:>6.3f} ms  {r['fts5_p95_ms']:>6.3f} ms  {r['write_all_s']:>7.1f} s  "
               f"{r['fts5_optimize_s']:>6.2f} s  {r['scan_cache_build_s']:>8.2f} s  {r['scan_cache_mib']:>9.1f}  "
               f"{r['db_file_mib']:>7.1f}  {r['write_one_p50_ms']:>5.2f} ms")
