"""``insika-knowledge bench --scale``: auto, Scan, FTS5, bm25s and tantivy side by side, 1000..200000 concepts.

On the synthetic corpus of `insika_knowledge.bench.synthetic`, one process per size:
the engines are interleaved per query (top 5), in an order shuffled for each query
(seeded), so the machine's load and the cache misses of following another engine fall
on all of them alike; only the same-run ratios are meant to be compared. Ours get the message
(analysis and typo correction timed); the peers (`bench.peers`) get its analysed terms.

Also per size: the time to write every concept, Index::Postings' one-time build (and its
snapshot's size), a cold ``search`` in a fresh process (open the snapshot, answer one
message; its import time and peak RSS apart), top-5 agreement of auto and FTS5 with
exact BM25 computed without pruning, and the cost of one write.

With an embedding provider (``--embeddings``, else ``$INSIKA_EMBEDDINGS``, else ``auto``) a
``hybrid`` row is timed beside them: the whole ``<knowledge>`` block of the default ranking
(``Retriever.block``, index ``auto``), the message's embedding included (a new message
each time; the second pass asks the same messages again, whose vectors are remembered).
The concepts' vectors are random unit vectors under the provider's model id (embedding
200,000 concepts would take hours; a matrix product costs the same whatever the numbers),
and the no-answer floor is off for the row, so every message goes the whole way. A cold
``hybrid`` search in a fresh process gives the resident set of a searching process with
the models and the vectors loaded; the provider's passages per second (batches of 32
concepts of the corpus) estimate the write path and a ``reindex``.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any, Final

import numpy as np

from insika_knowledge.analysis.text import query_terms
from insika_knowledge.bench.learnpath import learn_turns
from insika_knowledge.bench.peers import bm25s_peer, tantivy_peer
from insika_knowledge.bench.report import print_results
from insika_knowledge.bench.synthetic import corpus, fill, queries
from insika_knowledge.bench.timing import OnStep, percentiles, run_steps, time_each
from insika_knowledge.concept import Concept
from insika_knowledge.index import bm25
from insika_knowledge.index.fts5 import Fts5Index
from insika_knowledge.index.postings import PostingsIndex
from insika_knowledge.index.scan import ScanIndex
from insika_knowledge.index.tokenizer import TOKENIZER
from insika_knowledge.store import SQLiteStore

SCALE_SIZES: Final = (1000, 5000, 50_000, 200_000)
AGENT: Final = "bench"
#: Scan's cache is built in-process only up to this size (about 17 s at 50k; minutes above).
SCAN_UP_TO: Final = 50_000
ENGINES: Final = ("hybrid", "auto", "auto_terms", "scan", "fts5", "bm25s", "tantivy")
#: The size issue 25's speed and memory targets are read at.
TARGET_SIZE: Final = 50_000
#: Messages every engine answers before the timing starts (others than the timed ones).
WARM_UP: Final = 20

_COLD: Final = """
import json, sys, time
start = time.perf_counter()
from insika_knowledge.index.tokenizer import TOKENIZER
from insika_knowledge.retrieve import Retriever
from insika_knowledge.store import SQLiteStore
imported = time.perf_counter()
store = SQLiteStore(sys.argv[1], tokenizer=TOKENIZER)
names = [e.name for e in Retriever(store, embeddings=sys.argv[3]).retrieve("bench", sys.argv[2], 5, "auto").matched]
done = time.perf_counter()
# VmHWM: this process's own peak (ru_maxrss can report the forking parent's).
peak = next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmHWM:"))
print(json.dumps({"import_s": imported - start, "search_s": done - imported, "names": names,
                  "rss_mib": peak / 1024}))
"""


def cold_search(path: Path, message: str, embeddings: str = "off") -> dict[str, Any]:
    """A fresh interpreter opens `path` and answers `message` with ``auto``: seconds and peak RSS.

    `embeddings` is the provider spec of that process (``off``: lexical only).

    Returns:
        ``import_s`` (the modules a ``search`` imports), ``search_s`` (open the store and
        the agent's index, answer), ``rss_mib`` (peak resident set, ``VmHWM``; Linux),
        ``names``.
    """
    out = subprocess.run([sys.executable, "-c", _COLD, str(path), message, embeddings], capture_output=True,
                         text=True, check=True)
    result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def exact_dense(index: PostingsIndex, wanted: frozenset[str], k: int) -> list[int]:
    """Exact BM25 top-k concept ids by scoring every posting (no pruning): the agreement reference."""
    state = index._state(AGENT)
    plan = bm25.query_plan(wanted, state.stats())
    base, norms = state.base, bm25.length_norms(state.base.lengths, state.stats().avgdl)
    acc = np.zeros(base.size)
    for term, weight in plan:
        tid = base.term_id.get(term)
        if tid is None:
            continue
        lo, hi = int(base.inv_ptr[tid]), int(base.inv_ptr[tid + 1])
        slots = base.inv_docs[lo:hi]
        f = (base.inv_codes[lo:hi] >> 1).astype(np.float64)
        acc[slots] += weight * ((f * (bm25.K1 + 1.0)) / (f + norms[slots]))
    hit = np.flatnonzero(acc)
    order = np.lexsort((hit, -acc[hit]))[:k]
    return [int(state.snap.ids[hit[i]]) for i in order]


def _random_vectors(store: SQLiteStore, model: str, dim: int, seed: int) -> None:
    """A random unit vector of `dim` numbers under `model` for each of the agent's concepts."""
    from insika_knowledge.index.semantic import as_bytes
    from insika_knowledge.store.base import VectorWrite

    rnd = np.random.default_rng(seed)
    versions = sorted(store.scan_versions(AGENT).items())
    for start in range(0, len(versions), 5000):
        chunk = versions[start:start + 5000]
        vectors = rnd.standard_normal((len(chunk), dim)).astype(np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        store.save_vectors(AGENT, model, [VectorWrite(cid, version, "random", as_bytes(v))
                                          for (cid, version), v in zip(chunk, vectors, strict=True)])


def _hybrid(store: SQLiteStore, concepts: list[Concept], embeddings: str | None, n: int,
            out: dict[str, Any]) -> Callable[[str], object] | None:
    """The ``hybrid`` row's search (the block), once random vectors are stored; None without a provider."""
    from insika_knowledge.retrieve import Retriever

    retriever = Retriever(store, embeddings=embeddings)
    semantic = retriever.semantic()
    if semantic is None:
        return None
    # The provider's speed on real texts: the labelled set's concepts and messages (the
    # synthetic corpus's made-up words cut into many more word pieces than real ones).
    from insika_knowledge.bench.quality import load_set
    from insika_knowledge.index.semantic import embed_text

    labelled, messages = load_set()
    texts = [embed_text(c["name"], c["description"], c["body"]) for c in labelled[:64]]
    semantic.embedder.passages(texts[:4])  # load the models
    start = time.perf_counter()
    for i in range(0, len(texts), 32):
        semantic.embedder.passages(texts[i:i + 32])
    out["embed_per_s"] = len(texts) / (time.perf_counter() - start)
    query_ms = sorted(time_each(lambda m: semantic.embedder.queries([m]), [q.text for q in messages[:200]]))
    out["embed_query_p50_ms"], out["embed_query_p95_ms"] = percentiles(query_ms)
    out["hybrid_model"] = semantic.model
    start = time.perf_counter()
    _random_vectors(store, semantic.model, semantic.embedder.dim, n)
    out["vectors_write_s"] = time.perf_counter() - start
    start = time.perf_counter()
    semantic.similarities(AGENT, semantic.query_vector("frete"))
    out["vectors_load_s"] = time.perf_counter() - start
    return lambda m: retriever.block(AGENT, m, 5, "auto")


def bench_scale(folder: Path, n: int, repeats: int, embeddings: str | None = None) -> dict[str, Any]:
    """Every engine at `n` concepts: build, cold open, warm p50/p95/p99 interleaved, agreement."""
    store = SQLiteStore(folder / f"scale-{n}.db", tokenizer=TOKENIZER)
    concepts = corpus(n)
    out: dict[str, Any] = {"concepts": n}
    start = time.perf_counter()
    for i in range(0, n, 5000):
        fill(store, AGENT, concepts[i : i + 5000])
    out["write_all_s"] = time.perf_counter() - start
    start = time.perf_counter()
    store.fts_optimize()
    out["fts5_optimize_s"] = time.perf_counter() - start
    start = time.perf_counter()
    auto = PostingsIndex(store)
    auto.search(AGENT, "frete", 5)
    out["postings_build_s"] = time.perf_counter() - start
    out["postings_mib"] = auto.memory_bytes(AGENT) / 2**20
    out["snapshot_mib"] = len(store.load_index_snapshot(AGENT, "bm25") or b"") / 2**20
    every = queries(repeats + WARM_UP)
    msgs, warm = every[:repeats], every[repeats:]  # the warm-up's messages are not timed
    cold = cold_search(store.path, msgs[0])
    out.update({f"cold_{k}": v for k, v in cold.items() if k != "names"})
    searches: dict[str, Callable[[str], object]] = {"auto": lambda m: auto.search(AGENT, m, 5)}
    hybrid = _hybrid(store, concepts, embeddings, n, out)
    if hybrid is not None:
        searches["hybrid"] = hybrid
        from insika_knowledge.index.embedders import spec_from_env

        cold_hybrid = cold_search(store.path, msgs[1], spec_from_env(embeddings))
        out.update({f"cold_hybrid_{k}": v for k, v in cold_hybrid.items() if k != "names"})
    if n <= SCAN_UP_TO:
        start = time.perf_counter()
        scan = ScanIndex(store)
        scan.entries(AGENT)
        out["scan_cache_build_s"] = time.perf_counter() - start
        searches["scan"] = lambda m: scan.search(AGENT, m, 5)
    fts = Fts5Index(store)
    searches["fts5"] = lambda m: fts.search(AGENT, m, 5)
    documents = [[*TOKENIZER(c.name), *TOKENIZER(c.description), *TOKENIZER(c.body)] for c in concepts]
    analysed = {m: sorted(query_terms(m)) for m in every}
    frozen = {m: frozenset(terms) for m, terms in analysed.items()}
    # auto fed the peers' input (analysed terms, no typo correction), as a like-for-like row.
    # Its own index: sharing auto's would hand one of the two the per-term work (shares,
    # entries) the other just did for the same message (measured: auto 0.134 -> 0.090 ms).
    auto_terms = PostingsIndex(store)
    searches["auto_terms"] = lambda m: auto_terms.search_terms(AGENT, frozen[m], 5)
    for label, make in (("bm25s", bm25s_peer), ("tantivy", tantivy_peer)):
        start = time.perf_counter()
        peer = make(documents)
        if peer is not None:
            out[f"{label}_build_s"] = time.perf_counter() - start
            searches[label] = (lambda p: lambda m: p(analysed[m]))(peer)
    del documents
    from unittest import mock

    from insika_knowledge import retrieve

    floorless = mock.patch.dict(retrieve.FLOORS, clear=True)  # every message goes the whole way
    floorless.start()
    for m in warm:
        for call in searches.values():
            call(m)
    shuffle = random.Random(n).shuffle
    # Twice over the same messages: first as new ones, then seen again (auto keeps per-term
    # work, e.g. each term's shares, until a write moves the average length; the peers
    # computed every score when they indexed).
    for suffix in ("", "_again"):
        samples: dict[str, list[float]] = {label: [] for label in searches}
        order = list(searches)
        for m in msgs:
            # The engine run just after another one finds the CPU caches full of that one's
            # data (after FTS5's 1 ms of SQLite, a 1000-concept search takes twice as long):
            # the order is shuffled per query, so each engine follows each other one alike.
            # (Rotating a fixed order, as before, kept each engine's predecessor: bm25s
            # always followed FTS5.)
            shuffle(order)
            for label in order:
                samples[label] += time_each(searches[label], [m])
        for label, values in samples.items():
            ordered = sorted(values)
            out[f"{label}_p50{suffix}_ms"], out[f"{label}_p95{suffix}_ms"] = percentiles(ordered)
            out[f"{label}_p99{suffix}_ms"] = ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))]
    floorless.stop()
    agree = {"auto": 0.0, "fts5": 0.0}
    sample = msgs[:100]
    for m in sample:
        exact = set(exact_dense(auto, auto.analyse(AGENT, m), 5))
        if not exact:
            agree = {k: v + 1.0 for k, v in agree.items()}
            continue
        agree["auto"] += len(exact & {h.entry.id for h in auto.search(AGENT, m, 5)}) / len(exact)
        agree["fts5"] += len(exact & {h.entry.id for h in fts.search(AGENT, m, 5)}) / len(exact)
    out.update({f"{k}_agreement": v / len(sample) for k, v in agree.items()})

    def write_one(item: tuple[int, Concept]) -> None:
        with store.transaction() as tx:
            tx.put(AGENT, item[1].replace(name=f"extra-{item[0]}"), reason="extract", actor="bench")

    samples_w = time_each(write_one, enumerate(corpus(200, seed=99)))
    out["write_one_p50_ms"], out["write_one_p95_ms"] = percentiles(samples_w)
    # what the timed turns did, beside their times: a figure over turns that wrote nothing measures nothing
    p50, p95, did = learn_turns(store, AGENT, auto, 200)
    out.update(learn_turn_p50_ms=p50, learn_turn_p95_ms=p95, learn_turn_outcomes=did)
    store.close()
    return out


def run_scale(*, sizes: tuple[int, ...] = SCALE_SIZES, as_json: bool = False, quick: bool = False,
              echo: Callable[[str], None] = print, on_step: OnStep | None = None,
              embeddings: str | None = None) -> list[dict[str, Any]]:
    """Run `bench_scale` for each size and print the tables (or JSON).

    `on_step` is called before each size with (what it measures, sizes done, sizes in
    all), and with ``("done", n, n)`` at the end; for a progress display. `embeddings` is
    the provider of the ``hybrid`` row (None: ``$INSIKA_EMBEDDINGS``, else ``auto``; ``off``:
    no such row).
    """
    repeats = 100 if quick else 500
    with tempfile.TemporaryDirectory(prefix="insika-scale-") as tmp:
        rows = run_steps([(f"auto, Scan, FTS5, bm25s and tantivy at {n} concepts",
                           partial(bench_scale, Path(tmp), n, repeats, embeddings)) for n in sizes], on_step)
    for row in rows:
        row.update(messages=repeats, quick=quick)
    print_results(rows, table, as_json=as_json, echo=echo)
    if quick and not as_json:
        echo(f"(--quick: a smoke run with {repeats} messages, not a measurement)")
    return rows


def table(rows: list[dict[str, Any]]) -> list[str]:
    """The printed report of `run_scale`: warm latencies, same-run ratios, cold start, the rest."""

    def ms(r: dict[str, Any], key: str) -> str:
        return f"{r[key]:>8.3f}" if key in r else f"{'-':>8}"

    def ratio(r: dict[str, Any], a: str, b: str) -> str:
        return f"{r[a] / r[b]:>8.2f}" if a in r and b in r and r[b] > 0 else f"{'-':>8}"

    lines = ["Search, top_k=5, warm, engines interleaved per query (ms); new messages, then the same seen again"]
    for stat in ("p50", "p95", "p99", "p50_again"):
        lines.append(f"{stat:<9} {'concepts':>9}  " + "  ".join(f"{e:>10}" for e in ENGINES))
        for r in rows:
            lines.append(f"{'':<9} {r['concepts']:>9}  "
                         + "  ".join(f"{ms(r, f'{e}_{stat}_ms'):>10}" for e in ENGINES))
    lines.append("\nSame-run ratios (auto p50 / peer p50; auto p99 / auto p50) and top-5 agreement with exact BM25")
    lines.append(f"{'concepts':>9}  {'/bm25s':>8}  {'/tantivy':>8}  {'/scan':>8}  {'/fts5':>8}  {'p99/p50':>8}  "
                 f"{'terms/bm25s':>11}  {'terms/tantivy':>13}  {'again/bm25s':>11}  {'auto agr':>8}  {'fts5 agr':>8}")
    for r in rows:
        lines.append(f"{r['concepts']:>9}  {ratio(r, 'auto_p50_ms', 'bm25s_p50_ms')}  "
                     f"{ratio(r, 'auto_p50_ms', 'tantivy_p50_ms')}  {ratio(r, 'auto_p50_ms', 'scan_p50_ms')}  "
                     f"{ratio(r, 'auto_p50_ms', 'fts5_p50_ms')}  {ratio(r, 'auto_p99_ms', 'auto_p50_ms')}  "
                     f"{ratio(r, 'auto_terms_p50_ms', 'bm25s_p50_ms'):>11}  "
                     f"{ratio(r, 'auto_terms_p50_ms', 'tantivy_p50_ms'):>13}  "
                     f"{ratio(r, 'auto_p50_again_ms', 'bm25s_p50_again_ms'):>11}  "
                     f"{r['auto_agreement']:>8.3f}  {r['fts5_agreement']:>8.3f}")
    hybrid = [r for r in rows if "hybrid_model" in r]
    if hybrid:
        lines.append(f"\nhybrid ({hybrid[0]['hybrid_model']}): the whole block, the message embedded; "
                     "random vectors, floor off")
        lines.append(f"{'concepts':>9}  {'p50 ms':>8}  {'p95 ms':>8}  {'again p50':>9}  {'again p95':>9}  "
                     f"{'cold s':>8}  {'cold RSS MiB':>12}  {'load s':>8}  {'embed/s':>8}  {'reindex est.':>12}  "
                     f"{'query emb p50/p95':>17}")
        for r in hybrid:
            lines.append(f"{r['concepts']:>9}  {r['hybrid_p50_ms']:>8.2f}  {r['hybrid_p95_ms']:>8.2f}  "
                         f"{r['hybrid_p50_again_ms']:>9.2f}  {r['hybrid_p95_again_ms']:>9.2f}  "
                         f"{r['cold_hybrid_search_s']:>8.3f}  {r['cold_hybrid_rss_mib']:>12.1f}  "
                         f"{r['vectors_load_s']:>8.3f}  {r['embed_per_s']:>8.1f}  "
                         f"{r['concepts'] / r['embed_per_s'] / 60:>8.1f} min  "
                         f"{r['embed_query_p50_ms']:>8.1f}/{r['embed_query_p95_ms']:.1f} ms")
        lines.append("(embed/s: passages per second on the labelled set's concepts, batches of 32; query emb: "
                     "one labelled message at a time; reindex est.: concepts / embed/s)")
        for r in hybrid:
            if r["concepts"] != TARGET_SIZE:
                continue
            checks = ((f"block p50 <= 15 ms at {TARGET_SIZE}", r["hybrid_p50_ms"], 15.0, True),
                      (f"block p95 <= 50 ms at {TARGET_SIZE}", r["hybrid_p95_ms"], 50.0, True),
                      (f"searching process RSS <= 400 MiB at {TARGET_SIZE}", r["cold_hybrid_rss_mib"], 400.0, True),
                      ("embedding on the write path >= 50 concepts/s", r["embed_per_s"], 50.0, False),
                      (f"reindex of {TARGET_SIZE} <= 20 min", r["concepts"] / r["embed_per_s"] / 60, 20.0, True))
            lines.append("issue 25's targets:")
            for label, value, target, at_most in checks:
                met = value <= target if at_most else value >= target
                lines.append(f"  {label:<52} {value:>9.1f}  {'met' if met else 'NOT MET'}")
    lines.append("\nCold search in a fresh process (auto: open the snapshot, answer one message) and builds")
    lines.append(f"{'concepts':>9}  {'import s':>8}  {'search s':>8}  {'RSS MiB':>8}  {'snap MiB':>8}  "
                 f"{'build s':>8}  {'scan s':>8}  {'write all':>9}  {'write 1':>8}  {'learn p50':>9}  {'learn p95':>9}")
    for r in rows:
        scan_s = f"{r['scan_cache_build_s']:>8.2f}" if "scan_cache_build_s" in r else f"{'-':>8}"
        lines.append(f"{r['concepts']:>9}  {r['cold_import_s']:>8.3f}  {r['cold_search_s']:>8.3f}  "
                     f"{r['cold_rss_mib']:>8.1f}  {r['snapshot_mib']:>8.1f}  {r['postings_build_s']:>8.2f}  "
                     f"{scan_s}  {r['write_all_s']:>7.1f} s  {r['write_one_p50_ms']:>5.2f} ms  "
                     f"{r['learn_turn_p50_ms']:>6.2f} ms  {r['learn_turn_p95_ms']:>6.2f} ms")
    for r in rows:
        if r.get("learn_turn_outcomes"):
            did = ", ".join(f"{k} {n}" for k, n in sorted(r["learn_turn_outcomes"].items()))
            lines.append(f"  learn_turn at {r['concepts']}, the timed turns did: {did}")
    return lines
