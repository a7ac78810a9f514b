"""``bench --backend postgresql``: the shared PostgreSQL backend beside SQLite, same corpus.

Measured on the synthetic corpus of `insika_knowledge.bench.synthetic` (seeded), on this
machine, the two backends side by side:

- full-text search (FTS5 on SQLite, tsvector + GIN + BM25 on PostgreSQL, both through
  `insika_knowledge.index.fts5.Fts5Index`): p50/p95 per query at 5,000 and 50,000
  concepts, the two backends timed query by query in turn (so load on the machine
  weighs on both alike), and the ratio of the p50s;
- one same-claim write (a confirming sighting: decide, ledger row, concept row, version
  row, one transaction): p50/p95;
- sightings per second with 4 writer processes confirming one concept (every write
  contends for the same row) and 4 writing distinct concepts.

PostgreSQL is the database ``--database`` (or ``$INSIKA_DATABASE_URL``) names, else a
throwaway cluster started here (`insika_knowledge.bench.pgcluster`, fsync on; commits
do not wait for the disk, as SQLite's WAL with ``synchronous=NORMAL``).
"""

from __future__ import annotations

import json
import multiprocessing as mp
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Final

from insika_knowledge.bench.synthetic import corpus, queries
from insika_knowledge.bench.timing import percentiles, time_each
from insika_knowledge.candidate import Candidate
from insika_knowledge.concept import Concept
from insika_knowledge.errors import UserError
from insika_knowledge.index.fts5 import Fts5Index
from insika_knowledge.index.tokenizer import TOKENIZER
from insika_knowledge.learn import sight
from insika_knowledge.location import database_url
from insika_knowledge.store import SQLiteStore, Store, open_store

SIZES: Final = (5000, 50000)
WRITERS: Final = 4
AGENT: Final = "bench"
CANDIDATE: Final = Candidate("frete-gratis", "Free shipping above R$ 199.", "policy",
                             "Orders above R$ 199 ship for free.")
_BATCH: Final = 500


@contextmanager
def postgres(database: str | None) -> Iterator[str]:
    """The PostgreSQL URL to measure: `database`, ``$INSIKA_DATABASE_URL``, or a throwaway cluster.

    Raises:
        UserError: no URL is given and PostgreSQL is not installed here.
    """
    url = database_url(database)
    if url is not None:
        yield url
        return
    from insika_knowledge.bench.pgcluster import Cluster, find_bindir

    bindir = find_bindir()
    if bindir is None:
        raise UserError("bench --backend postgresql needs --database URL, $INSIKA_DATABASE_URL, "
                        "or PostgreSQL installed here (initdb) to start a throwaway cluster")
    cluster = Cluster(bindir, durable=True)
    cluster.start()
    try:
        yield cluster.url(cluster.create_database())
    finally:
        cluster.stop()


Where = tuple[str, str, str]


def _open(where: Where) -> Store:
    """``("sqlite", path, _)`` or ``("postgresql", url, tenant)``: that store."""
    kind, location, tenant = where
    if kind == "sqlite":
        return SQLiteStore(location, tokenizer=TOKENIZER)
    return open_store(tenant=tenant, tokenizer=TOKENIZER, database=location)


def _fill(store: Store, concepts: list[Concept]) -> None:
    """Write `concepts` in transactions of `_BATCH`, then let the backend tidy its index."""
    for start in range(0, len(concepts), _BATCH):
        with store.transaction() as tx:
            for concept in concepts[start:start + _BATCH]:
                tx.put(AGENT, concept, reason="extract", actor="bench")
    store.fts_optimize()


def _searcher(index: Fts5Index) -> Callable[[str], object]:
    return lambda message: index.search(AGENT, message, 5)


def bench_search(folder: Path, url: str, n: int, repeats: int) -> dict[str, Any]:
    """Full-text search p50/p95 at `n` concepts on both backends, timed query by query in turn."""
    concepts = corpus(n)
    stores = {"sqlite": _open(("sqlite", str(folder / f"search-{n}.db"), "")),
              "postgresql": _open(("postgresql", url, f"search-{n}"))}
    fill_s: dict[str, float] = {}
    for name, store in stores.items():
        started = time.perf_counter()
        _fill(store, concepts)
        fill_s[name] = time.perf_counter() - started
    indexes = {name: Fts5Index(store) for name, store in stores.items()}
    messages = queries(repeats + 50)
    searches = {name: _searcher(index) for name, index in indexes.items()}
    for search in searches.values():
        time_each(search, messages[:50])  # warm up
    samples: dict[str, list[float]] = {name: [] for name in searches}
    for message in messages[50:]:
        for name, search in searches.items():
            samples[name] += time_each(search, [message])
    for store in stores.values():
        store.close()
    out: dict[str, Any] = {"concepts": n}
    for name, values in samples.items():
        p50, p95 = percentiles(values)
        out[name] = {"p50_ms": p50, "p95_ms": p95, "fill_s": fill_s[name]}
    out["ratio_p50"] = out["postgresql"]["p50_ms"] / out["sqlite"]["p50_ms"]
    return out


def bench_same_claim(where: Where, repeats: int) -> dict[str, Any]:
    """One same-claim sighting (decide + write + version row) on a store of 1,000 concepts."""
    store = _open(where)
    _fill(store, corpus(1000))
    sight(store, AGENT, CANDIDATE, session_id="s-first", turn_id="t")
    samples = time_each(lambda i: sight(store, AGENT, CANDIDATE, session_id=f"s{i}", turn_id="t"),
                        range(repeats))
    store.close()
    p50, p95 = percentiles(samples)
    return {"p50_ms": p50, "p95_ms": p95}


def _writer(where: Where, index: int, count: int, same: bool, start: Any) -> tuple[float, float]:
    """One writer process: `count` sightings; returns its (start, end) wall-clock times."""
    store = _open(where)
    start.wait()
    began = time.time()
    for i in range(count):
        candidate = CANDIDATE if same else Candidate(
            f"w{index}-c{i}", f"Writer {index} fact {i}.", "fact", f"Fact number {i} of writer {index}.")
        sight(store, AGENT, candidate, session_id=f"w{index}-s{i}", turn_id="t")
    ended = time.time()
    store.close()
    return began, ended


def bench_writers(where: Where, count: int) -> dict[str, float]:
    """Sightings per second of `WRITERS` processes: all on one concept, then each on its own."""
    out: dict[str, float] = {}
    _open(where).close()  # migrate before the clock starts
    ctx = mp.get_context("spawn")
    for label, same in (("one_concept", True), ("distinct_concepts", False)):
        with ctx.Manager() as manager:
            start = manager.Barrier(WRITERS)
            with ctx.Pool(WRITERS) as pool:
                spans = pool.starmap(_writer, [(where, i, count, same, start) for i in range(WRITERS)])
        wall = max(e for _, e in spans) - min(b for b, _ in spans)
        out[f"{label}_per_s"] = WRITERS * count / wall
    return out


def run_backend_bench(*, backend: str, database: str | None = None, quick: bool = False,
                      as_json: bool = False, echo: Callable[[str], None] = print) -> dict[str, Any]:
    """Measure PostgreSQL beside SQLite (see the module doc); print a table or JSON.

    Args:
        backend: ``postgresql`` (``sqlite`` alone is what ``bench`` measures).
        database: the PostgreSQL URL (None: ``$INSIKA_DATABASE_URL``, else a throwaway cluster).
        quick: 1,000 concepts and fewer repetitions (a smoke run, not a measurement).
        as_json: print JSON.
        echo: where the lines go.

    Returns:
        ``search`` (one entry per size), ``same_claim`` and ``writers`` per backend.

    Raises:
        UserError: `backend` is not ``postgresql``, or no PostgreSQL can be had.
    """
    if backend != "postgresql":
        raise UserError(f"--backend {backend}: `bench` alone measures SQLite; compare with --backend postgresql")
    sizes, repeats, writes = ((1000,), 100, 50) if quick else (SIZES, 1000, 500)
    results: dict[str, Any] = {"search": [], "same_claim": {}, "writers": {}}
    with tempfile.TemporaryDirectory(prefix="insika-backend-") as tmp, postgres(database) as url:
        folder = Path(tmp)
        for n in sizes:
            results["search"].append(bench_search(folder, url, n, repeats))
        for name, where in (("sqlite", ("sqlite", str(folder / "claim.db"), "")),
                            ("postgresql", ("postgresql", url, "claim"))):
            results["same_claim"][name] = bench_same_claim(where, repeats)
        for name, where in (("sqlite", ("sqlite", str(folder / "writers.db"), "")),
                            ("postgresql", ("postgresql", url, "writers"))):
            results["writers"][name] = bench_writers(where, writes)
    if as_json:
        echo(json.dumps(results, indent=2))
        return results
    echo("Full-text search (FTS5 vs PostgreSQL tsvector + GIN + BM25), ms per query")
    echo(f"{'concepts':>9} {'sqlite p50':>11} {'p95':>7} {'postgres p50':>13} {'p95':>7} {'ratio':>6}")
    for row in results["search"]:
        s, p = row["sqlite"], row["postgresql"]
        echo(f"{row['concepts']:>9} {s['p50_ms']:>11.2f} {s['p95_ms']:>7.2f} {p['p50_ms']:>13.2f} "
             f"{p['p95_ms']:>7.2f} {row['ratio_p50']:>5.1f}x")
    echo("\nSame-claim write, ms: " + ", ".join(
        f"{k} p50 {v['p50_ms']:.2f} p95 {v['p95_ms']:.2f}" for k, v in results["same_claim"].items()))
    echo(f"Sightings/s with {WRITERS} writer processes: " + "; ".join(
        f"{k} one concept {v['one_concept_per_s']:.0f}, distinct concepts {v['distinct_concepts_per_s']:.0f}"
        for k, v in results["writers"].items()))
    return results
