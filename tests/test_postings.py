from __future__ import annotations

import math
import random
import tempfile
from pathlib import Path

import numpy as np
import pytest
from conftest import make_concept
from hypothesis import given, settings
from hypothesis import strategies as st

from insika_knowledge.analysis.text import query_terms
from insika_knowledge.index import bm25, postings, snapshot, topk
from insika_knowledge.index.fts5 import Fts5Index
from insika_knowledge.index.postings import PostingsIndex, analyse_row
from insika_knowledge.index.tokenizer import TOKENIZER
from insika_knowledge.store import SQLiteStore

AGENT = "store-support"
WORDS = "frete gratis campinas prazo devolucao troca pix boleto cartao entrega sedex loja".split()


# ----------------------------------------------------------------------------- the pruned ranking


def _doc(rnd: random.Random, vocabulary: list[str]) -> bm25.Doc:
    codes: dict[str, int] = {}
    for _ in range(rnd.randint(1, 12)):
        term = rnd.choice(vocabulary)
        codes[term] = (codes.get(term, 0) + (rnd.choice(bm25.WEIGHTS) << 1)) | rnd.randint(0, 1)
    return bm25.Doc(codes, rnd.randint(sum(c >> 1 for c in codes.values()) // 8 + 1, 40))


def _vary_accumulation(rnd: random.Random, patch: pytest.MonkeyPatch, n: int) -> None:
    """How shares are added: lists joined in one call or not; common terms spread over every slot
    (none, every term, as set) within a budget of none, a few or all of them."""
    patch.setattr(topk, "_JOINED_UP_TO", rnd.choice([0, topk._JOINED_UP_TO]))
    patch.setattr(topk, "_PARTITION_UP_TO", rnd.choice([0, topk._PARTITION_UP_TO]))
    patch.setattr(topk, "_DENSE_FROM", rnd.choice([0, 10**9, topk._DENSE_FROM]))
    patch.setattr(topk, "DENSE_BUDGET", rnd.choice([0, 8 * n * rnd.randint(1, 3), topk.DENSE_BUDGET]))


def _with_dead(docs: list[bm25.Doc], rnd: random.Random,
               dead_share: float) -> tuple[bm25.Postings, np.ndarray, bm25.Stats, list[bm25.Doc]]:
    """(base of `docs`, which slots are alive, the live documents' statistics, `docs` with the dead emptied)."""
    base = bm25.from_docs(docs)
    alive = np.array([rnd.random() >= dead_share for _ in docs], dtype=bool)
    live = [d for d, a in zip(docs, alive, strict=True) if a]
    stats = bm25.Stats(max(1, len(live)), sum(d.length for d in live) or 1,
                       lambda t: sum(1 for d in live if t in d.fcodes))
    return base, alive, stats, [d if a else bm25.Doc({}, d.length) for d, a in zip(docs, alive, strict=True)]


def _vary_cold(rnd: random.Random, patch: pytest.MonkeyPatch) -> None:
    """The cold path (shares still to compute): always, as set or never tried; which terms count as
    common; the frequencies kept or not; seeds from fewer or more postings."""
    patch.setattr(topk, "COLD_PRUNE_FROM", rnd.choice([-1, -1, topk.COLD_PRUNE_FROM, 10**18]))
    patch.setattr(topk, "_COMMON_FROM", rnd.choice([2, topk._COMMON_FROM, 16]))
    patch.setattr(topk, "FREQUENCIES_BUDGET", rnd.choice([0, topk.FREQUENCIES_BUDGET, topk.FREQUENCIES_BUDGET]))
    patch.setattr(topk, "_SEEDS_FROM", rnd.choice([1, 16, topk._SEEDS_FROM]))
    patch.setattr(topk, "_SEEDS", rnd.choice([1, 4, topk._SEEDS]))


@settings(max_examples=300, deadline=None)
@given(st.integers(1, 300), st.integers(1, 40), st.integers(1, 10), st.integers(0, 2**32 - 1),
       st.floats(0.0, 0.5), st.integers(0, 6))
def test_pruned_top_k_equals_brute_force_bm25(n, vocabulary_size, k, seed, dead_share, extras) -> None:
    """MaxScore pruning, dead slots and outside competitors never change the exact ranking."""
    rnd = random.Random(seed)
    vocabulary = [f"t{i}" for i in range(vocabulary_size)]
    # Zipf-like: a few very common terms (a small idf) and many rare ones.
    weighted = [t for i, t in enumerate(vocabulary) for _ in range(max(1, vocabulary_size // (i + 1)))]
    docs = [_doc(rnd, weighted) for _ in range(n)]
    base = bm25.from_docs(docs)
    alive = np.array([rnd.random() >= dead_share for _ in range(n)], dtype=bool)
    live = [d for d, a in zip(docs, alive, strict=True) if a]
    stats = bm25.Stats(max(1, len(live)), sum(d.length for d in live) or 1,
                       lambda t: sum(1 for d in live if t in d.fcodes))
    wanted = frozenset(rnd.sample(vocabulary + ["absent"], rnd.randint(1, min(8, vocabulary_size + 1))))
    plan = bm25.query_plan(wanted, stats)
    extra = [rnd.uniform(0, 3) for _ in range(extras)]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(topk, "PRUNE_FROM", rnd.choice([0, 0, topk.PRUNE_FROM]))  # mostly: always prune
        # Bound from more or fewer of the rarest lists; binary-search the rest always, never, or as costed.
        patch.setattr(topk, "_PROBE_SHARE", rnd.choice([2, 4, topk._PROBE_SHARE]))
        patch.setattr(topk, "_SEARCH_COST", rnd.choice([0, topk._SEARCH_COST, 10**9]))
        patch.setattr(topk, "_MARK_COST", rnd.choice([0, topk._MARK_COST, 10**9]))
        patch.setattr(topk, "_MAPPED_FROM", rnd.choice([10**9, topk._MAPPED_FROM]))  # every list mapped, or as set
        patch.setattr(topk, "MAPS_BUDGET", rnd.choice([0, topk.MAPS_BUDGET]))  # 0: no map is ever built
        _vary_accumulation(rnd, patch, n)
        _vary_cold(rnd, patch)
        saturation = topk.Saturation(base, stats.avgdl, budget=rnd.choice([0, 10**9]))
        given_alive = None if alive.all() and rnd.random() < 0.5 else alive  # None: no slot is dead
        fast = topk.top_k(base, given_alive, saturation, plan, k, extra)
    masked = [d if a else bm25.Doc({}, d.length) for d, a in zip(docs, alive, strict=True)]
    outside = [(n + i, s) for i, s in enumerate(extra)]  # changed concepts: they sort after ties

    def merged(hits: list[tuple[int, float]]) -> list[tuple[int, float]]:
        return sorted(hits + outside, key=lambda p: (-p[1], p[0]))[:k]

    assert merged(fast) == merged(bm25.reference_top_k(masked, plan, stats.avgdl, k))
    assert len(fast) <= k


@settings(max_examples=150, deadline=None)
@given(st.integers(20, 400), st.integers(1, 6), st.integers(0, 2**32 - 1), st.floats(0.0, 0.3))
def test_rare_and_common_terms_are_ranked_exactly(n, k, seed, dead_share) -> None:
    """A few rare terms and terms most concepts hold (a small idf): pruned by MaxScore, still exact."""
    rnd = random.Random(seed)
    rare, common = [f"r{i}" for i in range(12)], [f"c{i}" for i in range(6)]
    docs = []
    for _ in range(n):
        codes = {t: (rnd.randint(1, 3) << 1) | rnd.randint(0, 1) for t in common if rnd.random() < 0.8}
        codes.update({t: (rnd.randint(1, 9) << 1) | 1 for t in rnd.sample(rare, rnd.randint(0, 2))})
        docs.append(bm25.Doc(codes or {"c0": 2}, rnd.randint(3, 30)))
    base, alive, stats, masked = _with_dead(docs, rnd, dead_share)
    plan = bm25.query_plan(frozenset(rnd.sample(rare, rnd.randint(1, 4)) + common), stats)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(topk, "PRUNE_FROM", 0)
        patch.setattr(topk, "_SEARCH_COST", rnd.choice([0, topk._SEARCH_COST, 10**9]))
        patch.setattr(topk, "_MARK_COST", rnd.choice([0, topk._MARK_COST, 10**9]))
        patch.setattr(topk, "_MAPPED_FROM", rnd.choice([10**9, topk._MAPPED_FROM]))  # every list mapped, or as set
        _vary_accumulation(rnd, patch, n)
        _vary_cold(rnd, patch)
        fast = topk.top_k(base, alive, topk.Saturation(base, stats.avgdl), plan, k)
    assert fast == bm25.reference_top_k(masked, plan, stats.avgdl, k)


@settings(max_examples=200, deadline=None)
@given(st.integers(20, 400), st.integers(1, 25), st.integers(0, 2**32 - 1), st.floats(0.0, 0.3), st.integers(0, 6))
def test_the_cold_path_ranks_exactly(n, k, seed, dead_share, extras) -> None:
    """Shares still to compute (after a write): rare lists in full, common terms only where a
    concept may still win, bounded by a few concepts scored exactly; the ranking and the
    floats are the brute force's, and every kept share is the one `Saturation.of` computes."""
    rnd = random.Random(seed)
    rare, common = [f"r{i}" for i in range(30)], [f"c{i}" for i in range(8)]
    docs = []
    for _ in range(n):
        codes = {t: (rnd.choice([1, 1, 1, 2, 5, 9]) << 1) | rnd.randint(0, 1) for t in common
                 if rnd.random() < rnd.choice([0.3, 0.6, 0.9])}
        codes.update({t: (rnd.randint(1, 9) << 1) | 1 for t in rnd.sample(rare, rnd.randint(0, 4))})
        docs.append(bm25.Doc(codes or {"c0": 2}, rnd.randint(3, 40)))
    base, alive, stats, masked = _with_dead(docs, rnd, dead_share)
    plan = bm25.query_plan(frozenset(rnd.sample(rare, rnd.randint(1, 12)) + rnd.sample(common, rnd.randint(1, 8))),
                           stats)
    extra = [rnd.uniform(0, 20) for _ in range(extras)]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(topk, "COLD_PRUNE_FROM", -1)
        patch.setattr(topk, "_SEEDS_FROM", rnd.choice([1, 16, topk._SEEDS_FROM]))
        patch.setattr(topk, "_SEEDS", rnd.choice([1, 4, topk._SEEDS]))
        patch.setattr(topk, "_COMMON_FROM", rnd.choice([2, topk._COMMON_FROM]))
        saturation = topk.Saturation(base, stats.avgdl)
        fast = topk.top_k(base, alive, saturation, plan, k, extra)
    outside = [(n + i, s) for i, s in enumerate(extra)]

    def merged(hits: list[tuple[int, float]]) -> list[tuple[int, float]]:
        return sorted(hits + outside, key=lambda p: (-p[1], p[0]))[:k]

    assert merged(fast) == merged(bm25.reference_top_k(masked, plan, stats.avgdl, k))
    fresh = topk.Saturation(base, stats.avgdl)
    for term, weight in plan:
        tid = base.term_id[term]
        if saturation.holds(tid, weight):
            assert np.array_equal(saturation.of(tid, weight), fresh.of(tid, weight))


@pytest.mark.parametrize("prune", [0, topk.PRUNE_FROM])
def test_k_beyond_the_matching_concepts_returns_them_all(prune, monkeypatch) -> None:
    """More than 64 matches and k above their count (k up to 10x): every match, ranked, no error."""
    monkeypatch.setattr(topk, "PRUNE_FROM", prune)
    rnd = random.Random(3)
    docs = [_doc(rnd, ["a", "b", "c", "d", "e"]) for _ in range(120)]
    base = bm25.from_docs(docs)
    alive = np.array([rnd.random() >= 0.2 for _ in docs], dtype=bool)
    live = [d for d, a in zip(docs, alive, strict=True) if a]
    stats = bm25.Stats(len(live), sum(d.length for d in live), lambda t: sum(1 for d in live if t in d.fcodes))
    masked = [d if a else bm25.Doc({}, d.length) for d, a in zip(docs, alive, strict=True)]
    saturation = topk.Saturation(base, stats.avgdl)
    for wanted in ({"a"}, {"a", "b"}, {"a", "b", "c", "d", "e"}):
        plan = bm25.query_plan(frozenset(wanted), stats)
        for k in (65, 80, 100, 101, 150, 199, 250, 1000):
            assert topk.top_k(base, alive, saturation, plan, k) == bm25.reference_top_k(masked, plan, stats.avgdl, k)


def test_one_saturation_serves_plans_whose_idf_moved() -> None:
    """A kept weighted share is weighted again when the same term comes with another idf."""
    rnd = random.Random(7)
    docs = [_doc(rnd, ["a", "b", "c", "d"]) for _ in range(60)]
    base = bm25.from_docs(docs)
    avgdl = sum(d.length for d in docs) / len(docs)
    saturation = topk.Saturation(base, avgdl)
    alive = np.ones(len(docs), dtype=bool)
    for documents in (60, 61, 400, 60):
        stats = bm25.Stats(documents, int(avgdl * documents), lambda t: sum(1 for d in docs if t in d.fcodes))
        plan = bm25.query_plan(frozenset({"a", "b", "c"}), stats)
        for prune in (0, topk.PRUNE_FROM):
            with pytest.MonkeyPatch.context() as patch:
                patch.setattr(topk, "PRUNE_FROM", prune)
                assert topk.top_k(base, alive, saturation, plan, 4) == bm25.reference_top_k(docs, plan, avgdl, 4)


def test_idf_is_positive_for_a_term_most_concepts_hold_and_a_common_term_still_breaks_ties() -> None:
    # Lucene's idf (issue 25): FTS5's ln((N - df + 0.5) / (df + 0.5)) was clamped to 1e-6 here.
    assert bm25.idf(10, 9) == pytest.approx(math.log(1 + 1.5 / 9.5))
    assert bm25.idf(10, 10) > 0 and bm25.idf(10, 1) > bm25.idf(10, 5) > bm25.idf(10, 9)
    docs = [bm25.Doc({"rare": 2, "common": 2}, 4), bm25.Doc({"rare": 2}, 4), bm25.Doc({"common": 2}, 4)]
    base = bm25.from_docs(docs)
    stats = bm25.Stats(3, 12, lambda t: {"rare": 2, "common": 2}[t])
    plan = bm25.query_plan(frozenset({"rare", "common"}), stats)
    ranked = topk.top_k(base, np.ones(3, dtype=bool), topk.Saturation(base, 4.0), plan, 2)
    assert [slot for slot, _ in ranked] == [0, 1]  # the common term lifts slot 0 above slot 1


# ----------------------------------------------------------------------------- the index over a store


def _put(db: SQLiteStore, name: str, words: list[str], confidence: float, body: str = "x") -> None:
    with db.transaction() as tx:
        tx.put(AGENT, make_concept(name=name, description=" ".join(words), body=body, confidence=confidence),
               reason="extract", actor="e")


def _reference(db: SQLiteStore, wanted: frozenset[str], k: int) -> list[tuple[str, float]]:
    """Exact BM25 over the store's rows as they are now, analysed afresh, ties by tie-break."""
    from insika_knowledge.index.scan import entry_from_row

    rows = list(db.scan_rows(AGENT))
    docs = [analyse_row(r) for r in rows]
    stats = bm25.Stats(len(rows), sum(d.length for d in docs) or 1,
                       lambda t: sum(1 for d in docs if t in d.fcodes))
    plan = bm25.query_plan(wanted, stats)
    entries = [entry_from_row(r) for r in rows]
    scored = [(e, bm25.score_doc(d, plan, bm25.length_norm(d.length, stats.avgdl)))
              for e, d in zip(entries, docs, strict=True)]
    scored = [p for p in scored if p[1] > 0]
    scored.sort(key=lambda p: (-p[1], p[0].tiebreak))
    return [(e.name, s) for e, s in scored[:k]]


@settings(max_examples=25, deadline=None)
@given(st.lists(st.lists(st.sampled_from(WORDS), min_size=1, max_size=6), min_size=1, max_size=30),
       st.lists(st.tuples(st.integers(0, 40), st.lists(st.sampled_from(WORDS), max_size=4)), max_size=25),
       st.lists(st.sampled_from(WORDS), min_size=1, max_size=5), st.integers(1, 8))
def test_index_over_a_changing_store_equals_exact_bm25(docs, changes, query, k) -> None:
    """Writes, deletes, delta rebuilds and a reopened snapshot all rank as exact BM25 does."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(postings, "DELTA_MIN", 3)  # rebuild (and re-snapshot) often
        patch.setattr(topk, "PRUNE_FROM", topk.PRUNE_FROM)
        patch.setattr(topk, "COLD_PRUNE_FROM", (-1, topk.COLD_PRUNE_FROM)[len(docs) % 2])  # the cold path: every write
        _changing_store(docs, changes, query, k)


def _changing_store(docs, changes, query, k) -> None:
    topk.PRUNE_FROM = 0  # (restored by the caller's MonkeyPatch context)
    rnd = random.Random(len(docs) * 31 + len(changes))
    with tempfile.TemporaryDirectory() as tmp:
        db = SQLiteStore(Path(tmp) / "t.db", tokenizer=TOKENIZER)
        for i, words in enumerate(docs):
            _put(db, f"c{i}", words, rnd.choice([0.4, 0.6, 0.8]),
                 body=rnd.choice(["x", f"see [[c{i + 1}]]", "## Contradiction\n\n- other"]))
        index = PostingsIndex(db)
        wanted = query_terms(" ".join(query))
        expected = _reference(db, wanted, k)
        assert [(h.entry.name, h.score) for h in index.search_terms(AGENT, wanted, k)] == expected
        for target, words in changes:
            name = f"c{target}"
            if words:
                _put(db, name, words, rnd.choice([0.4, 0.6, 0.8]), body=rnd.choice(["x", "pix pix loja"]))
            elif db.get(AGENT, name) is not None:
                with db.transaction() as tx:
                    tx.remove(AGENT, name, actor="e")
            expected = _reference(db, wanted, k)
            hits = index.search_terms(AGENT, wanted, k)
            assert [(h.entry.name, h.score) for h in hits] == expected
            _same_entries(db, [h.entry for h in hits])
        reopened = PostingsIndex(db)  # from the snapshot plus the change feed
        hits = reopened.search_terms(AGENT, wanted, k)
        assert [(h.entry.name, h.score) for h in hits] == expected
        _same_entries(db, [h.entry for h in hits])
        names = [f"c{i}" for i in range(len(docs))]
        _same_entries(db, list(reopened.lookup(AGENT, names).values()))
        db.close()


def _same_entries(db: SQLiteStore, entries: list) -> None:
    """What a hit shows (and its terms) equals the stored row analysed afresh."""
    from insika_knowledge.index.scan import entry_from_row

    rows = {r.name: r for r in db.scan_rows_by_names(AGENT, [e.name for e in entries])}
    assert entries == [entry_from_row(rows[e.name]) for e in entries]


@settings(max_examples=40, deadline=None)
@given(st.lists(st.lists(st.sampled_from(WORDS), min_size=1, max_size=6), max_size=20),
       st.lists(st.tuples(st.integers(0, 30), st.lists(st.sampled_from(WORDS + ["raro"]), max_size=4)),
                max_size=30),
       st.integers(0, 2**32 - 1))
def test_a_rebuilt_base_holds_what_a_fresh_build_holds(docs, changes, seed) -> None:
    """The delta merged into the base (nothing analysed again) equals the rows analysed afresh, slot by slot."""
    rnd = random.Random(seed)
    with pytest.MonkeyPatch.context() as patch, tempfile.TemporaryDirectory() as tmp:
        patch.setattr(postings, "DELTA_MIN", 10**9)  # the changes stay in the delta until `rebuild`
        db = SQLiteStore(Path(tmp) / "t.db", tokenizer=TOKENIZER)
        bodies = ["x", "see [[c1]]", "## Contradiction\n\n- other", "pix pix loja"]
        for i, words in enumerate(docs):
            _put(db, f"c{i}", words, rnd.choice([0.4, 0.6, 0.8]), body=rnd.choice(bodies))
        PostingsIndex(db).search_terms(AGENT, frozenset({"frete"}), 1)  # the base: the rows so far (maybe none)
        index = PostingsIndex(db, persist=False)
        index.search_terms(AGENT, frozenset({"frete"}), 1)  # opened from its snapshot (read-only arrays)
        for target, words in changes:
            if words:
                _put(db, f"c{target}", words, rnd.choice([0.4, 0.6, 0.8]), body=rnd.choice(bodies))
            elif db.get(AGENT, f"c{target}") is not None:
                with db.transaction() as tx:
                    tx.remove(AGENT, f"c{target}", actor="e")
        rebuilt = postings.rebuild(index._state(AGENT))
        assert _contents(rebuilt) == _contents(postings.build(db.scan_rows(AGENT), 0, 0))
        db.close()


def test_the_delta_is_merged_past_root_n_and_the_snapshot_rewritten_past_a_share(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(postings, "DELTA_MIN", 2)
    monkeypatch.setattr(postings, "DELTA_ROOT", 1.0)
    monkeypatch.setattr(postings, "DELTA_SHARE", 0.5)
    db = SQLiteStore(tmp_path / "t.db", tokenizer=TOKENIZER)
    for i in range(16):
        _put(db, f"c{i}", ["frete", f"w{i}"], 0.6)
    index = PostingsIndex(db)
    index.search(AGENT, "frete", 3)  # built and saved: 16 concepts, so a delta of 4 at most
    saved: list[int] = []
    monkeypatch.setattr(db, "save_index_snapshot", lambda agent, kind, data: saved.append(len(data)))
    sizes = []
    for i in range(12):
        _put(db, f"c{i}", ["frete", "prazo", f"v{i}"], 0.6)
        wanted = query_terms("prazo frete")
        assert [(h.entry.name, h.score) for h in index.search_terms(AGENT, wanted, 3)] == _reference(db, wanted, 3)
        sizes.append(len(index._state(AGENT).delta))
    assert sizes == [1, 2, 3, 4, 0, 1, 2, 3, 4, 0, 1, 2]
    assert len(saved) == 1  # at the second rebuild: 10 changes > half of the 16 concepts
    db.close()


def _contents(state: postings._State) -> tuple:
    """Per slot its entry and analysed document; per term its statistics (term ids aside)."""
    base = state.base
    slots = [(postings.entry_of(state, s), base.doc(s)) for s in range(base.size)]
    terms = {t: (int(base.df[i]), int(base.max_f[i]), int(base.min_length[i])) for i, t in enumerate(base.vocab)}
    return slots, terms, state.documents, state.tokens


def _read_while_stopped(terms, stop: int) -> tuple[list, int]:
    """`terms.pair()` in a thread stopped at its `stop`-th line while this thread reads them whole.

    Returns what the thread read (or raised) and how many lines it ran.
    """
    import sys
    import threading

    from insika_knowledge.index.scan import Terms

    stopped, go_on = threading.Event(), threading.Event()
    lines, read = [0], []

    def line(frame, event, arg):
        if event == "line":
            if lines[0] == stop:
                stopped.set()
                go_on.wait()
            lines[0] += 1
        return line

    def reader() -> None:
        sys.settrace(lambda frame, event, arg: line if frame.f_code is Terms.pair.__code__ else None)
        try:
            read.append(terms.pair())
        except Exception as error:  # what the test reports
            read.append(error)
        finally:
            sys.settrace(None)
            stopped.set()

    thread = threading.Thread(target=reader)
    thread.start()
    stopped.wait()
    assert terms.pair() == terms.pair()  # worked out and kept while the other reader stands still
    go_on.set()
    thread.join()
    return read, lines[0]


def test_terms_worked_out_by_one_reader_while_another_reads_them_are_read_by_both() -> None:
    """`Terms` (a hit entry's terms, worked out on first read, no lock): one reader stopped at each
    line in turn while another works them out and keeps them, both read the same terms."""
    from insika_knowledge.index.scan import Terms

    pair = (frozenset({"fret", "praz"}), frozenset({"fret"}))
    stop = 0
    while True:
        read, lines = _read_while_stopped(Terms(lambda: pair), stop)
        assert read == [pair], f"stopped at line {stop} of Terms.pair"
        if lines <= stop:  # it ran to the end before that line: every line was tried
            break
        stop += 1


def test_a_new_process_opens_the_snapshot_instead_of_analysing(store, monkeypatch) -> None:
    for i, words in enumerate(["frete campinas", "prazo pix", "frete prazo"]):
        with store.transaction() as tx:
            tx.put(AGENT, make_concept(name=f"c{i}", description=words, body="x"), reason="extract", actor="e")
    first = [(h.entry.name, h.score) for h in PostingsIndex(store).search(AGENT, "frete prazo", 5)]
    assert store.load_index_snapshot(AGENT, postings.KIND) is not None
    monkeypatch.setattr(postings, "analyse_row", lambda row: pytest.fail("re-analysed a stored concept"))
    assert [(h.entry.name, h.score) for h in PostingsIndex(store).search(AGENT, "frete prazo", 5)] == first


def test_a_snapshot_of_another_format_or_analysis_is_rebuilt(store) -> None:
    with store.transaction() as tx:
        tx.put(AGENT, make_concept(name="c0", description="frete campinas", body="x"), reason="extract", actor="e")
    PostingsIndex(store).search(AGENT, "frete", 5)
    store.save_index_snapshot(AGENT, postings.KIND, b"IKS1garbage")
    assert snapshot.loads(b"IKS1garbage") is None
    assert [h.entry.name for h in PostingsIndex(store).search(AGENT, "frete", 5)] == ["c0"]
    assert snapshot.loads(store.load_index_snapshot(AGENT, postings.KIND) or b"") is not None


def test_scores_equal_sqlite_fts5_bm25_when_fts5_ranks_every_candidate(tmp_path) -> None:
    """The formula is FTS5's bm25() with the same column weights (one agent: same statistics)."""
    from insika_knowledge.bench.synthetic import corpus, fill, queries

    db = SQLiteStore(tmp_path / "t.db", tokenizer=TOKENIZER)
    fill(db, AGENT, corpus(300))
    ours, fts = PostingsIndex(db), Fts5Index(db, budget=10**9)
    for message in queries(40):
        wanted = ours.analyse(AGENT, message)
        mine = [h.score for h in ours.search_terms(AGENT, wanted, 5)]
        theirs = [h.score for h in fts.search(AGENT, message, 5)]
        assert mine == pytest.approx(theirs, rel=1e-9)
    db.close()


def test_a_damaged_snapshot_is_rebuilt_never_read(store) -> None:
    """Truncated or altered snapshot bytes: the index is rebuilt and ranks as before."""
    for i, words in enumerate(["frete campinas", "prazo pix", "frete prazo", "loja sedex"]):
        with store.transaction() as tx:
            tx.put(AGENT, make_concept(name=f"c{i}", description=words, body="x"), reason="extract", actor="e")
    good = [(h.entry.name, h.score) for h in PostingsIndex(store).search(AGENT, "frete prazo", 5)]
    blob = bytes(store.load_index_snapshot(AGENT, postings.KIND) or b"")
    rnd = random.Random(7)
    damaged = [blob[:cut] for cut in range(0, len(blob), 13)]
    for _ in range(120):
        flipped = bytearray(blob)
        flipped[rnd.randrange(len(blob))] ^= 1 << rnd.randrange(8)
        damaged.append(bytes(flipped))
    for data in damaged:
        assert snapshot.loads(data) is None
        store.save_index_snapshot(AGENT, postings.KIND, data)
        assert [(h.entry.name, h.score) for h in PostingsIndex(store).search(AGENT, "frete prazo", 5)] == good


def test_a_snapshot_written_in_the_other_byte_order_is_read(tmp_path) -> None:
    """Each section keeps its dtype, byte order included: a snapshot from a machine of the other
    byte order opens and ranks as the native one, what its hits show included."""
    import sys

    def swapped(a):
        return a.astype(a.dtype.newbyteorder(">" if sys.byteorder == "little" else "<"))

    def column(c):
        return snapshot.Column(c.data, swapped(c.offsets))

    db = SQLiteStore(tmp_path / "t.db", tokenizer=TOKENIZER)
    for i, words in enumerate(["frete campinas", "prazo pix", "frete prazo", "loja sedex"]):
        _put(db, f"c{i}", words, [0.4, 0.6, 0.8, 0.7][i])
    good = [(h.entry, h.score) for h in PostingsIndex(db).search(AGENT, "frete prazo", 5)]
    snap = snapshot.loads(db.load_index_snapshot(AGENT, postings.KIND) or b"")
    assert snap is not None
    b = snap.base
    base = bm25.Postings(list(b.vocab), *(swapped(a) for a in (b.inv_ptr, b.inv_docs, b.inv_codes, b.fwd_ptr,
                                                                b.fwd_codes, b.lengths, b.max_f, b.min_length)))
    other = snapshot.Snapshot(base, swapped(snap.ids), swapped(snap.versions), swapped(snap.confidence),
                              swapped(snap.conflict), *(column(c) for c in (snap.names, snap.descriptions,
                                                                            snap.types, snap.provenances,
                                                                            snap.updated, snap.links)),
                              snap.cursor, snap.generation, snap.analysis)
    data = snapshot.dumps(other)
    assert not (snapshot.loads(data) or pytest.fail("unreadable")).ids.dtype.isnative
    db.save_index_snapshot(AGENT, postings.KIND, data)
    index = PostingsIndex(db, persist=False)
    assert [(h.entry, h.score) for h in index.search(AGENT, "frete prazo", 5)] == good
    assert index.lookup(AGENT, ["c3"])["c3"].confidence == 0.7
    db.close()


def test_a_snapshot_read_into_a_buffer_off_the_word_boundary_is_read(tmp_path, monkeypatch) -> None:
    """Sections come back unaligned when the bytes handed to `snapshot.loads` start off an 8-byte
    boundary (a bytearray whose front was cut): the index opens and ranks as from aligned bytes."""
    db = SQLiteStore(tmp_path / "t.db", tokenizer=TOKENIZER)
    for i, words in enumerate(["frete campinas", "prazo pix", "frete prazo", "loja sedex"]):
        _put(db, f"c{i}", words, [0.4, 0.6, 0.8, 0.7][i])
    good = [(h.entry, h.score) for h in PostingsIndex(db).search(AGENT, "frete prazo", 5)]
    blob = bytes(db.load_index_snapshot(AGENT, postings.KIND) or b"")

    def shifted(agent: str, kind: str) -> bytearray:
        data = bytearray(b"\0" + blob)
        del data[:1]  # (the buffer now starts one byte into its allocation)
        assert np.frombuffer(data, dtype=np.uint8, count=8).ctypes.data % 8 != 0
        return data

    monkeypatch.setattr(db, "load_index_snapshot", shifted)
    index = PostingsIndex(db, persist=False)
    assert [(h.entry, h.score) for h in index.search(AGENT, "frete prazo", 5)] == good
    assert index.lookup(AGENT, ["c3"])["c3"].confidence == 0.7
    db.close()


def _three_concepts_searched(store) -> PostingsIndex:
    for i, words in enumerate(["frete campinas", "prazo pix", "frete prazo"]):
        with store.transaction() as tx:
            tx.put(AGENT, make_concept(name=f"c{i}", description=words, body="x"), reason="extract", actor="e")
    index = PostingsIndex(store)
    assert [h.entry.name for h in index.search(AGENT, "frete", 5)] == ["c0", "c2"]
    return index


def _rename_c0(store) -> None:
    from insika_knowledge.concept import serialize

    current = store.get(AGENT, "c0")
    assert current is not None
    store.edit(AGENT, "c0", serialize(current.concept.replace(name="renamed")), expected_version=current.version,
               actor="operator:x")


def test_a_concept_renamed_after_it_changed_is_found_by_its_new_name_only(store) -> None:
    index = _three_concepts_searched(store)
    with store.transaction() as tx:  # c0 changes: held in the index's delta
        tx.put(AGENT, make_concept(name="c0", description="frete campinas loja", body="x"), reason="extract",
               actor="e")
    index.search(AGENT, "frete", 5)
    _rename_c0(store)
    assert sorted(h.entry.name for h in index.search(AGENT, "frete", 5)) == ["c2", "renamed"]
    assert index.lookup(AGENT, ["c0"]) == {}


def test_a_concept_renamed_then_deleted_between_two_searches_is_gone(store) -> None:
    """The rename moves its history to the new name: the feed never names the one the index holds."""
    index = _three_concepts_searched(store)
    _rename_c0(store)
    with store.transaction() as tx:
        tx.remove(AGENT, "renamed", actor="e")
    assert [h.entry.name for h in index.search(AGENT, "frete", 5)] == ["c2"]
    assert index.lookup(AGENT, ["c0", "renamed"]) == {}
    assert [h.entry.name for h in PostingsIndex(store).search(AGENT, "frete", 5)] == ["c2"]  # from the snapshot


def test_scan_drops_a_concept_renamed_then_deleted_between_two_searches(store) -> None:
    """Index::Scan's cache meets the same feed: the deleted name it never held sends it to count."""
    from insika_knowledge.index.scan import ScanIndex

    _three_concepts_searched(store)
    scan = ScanIndex(store)
    assert [h.entry.name for h in scan.search(AGENT, "frete", 5)] == ["c0", "c2"]
    _rename_c0(store)
    with store.transaction() as tx:
        tx.remove(AGENT, "renamed", actor="e")
    assert [h.entry.name for h in scan.search(AGENT, "frete", 5)] == ["c2"]
    assert scan.lookup(AGENT, ["c0", "renamed"]) == {}


def test_a_process_opening_a_snapshot_drops_a_concept_whose_name_was_reused_and_renamed(store) -> None:
    """c0 deleted, a new c0 written and renamed: the feed names only "renamed", a new name."""
    _three_concepts_searched(store)  # the snapshot holds the first c0
    with store.transaction() as tx:
        tx.remove(AGENT, "c0", actor="e")
    with store.transaction() as tx:
        tx.put(AGENT, make_concept(name="c0", description="loja sedex", body="x"), reason="extract", actor="e")
    _rename_c0(store)
    index = PostingsIndex(store)
    assert [h.entry.name for h in index.search(AGENT, "frete", 5)] == ["c2"]
    assert [h.entry.name for h in index.search(AGENT, "sedex", 5)] == ["renamed"]


def test_a_concept_written_and_deleted_between_two_searches_costs_no_read_of_every_version(store, monkeypatch) -> None:
    index = _three_concepts_searched(store)
    with store.transaction() as tx:
        tx.put(AGENT, make_concept(name="brief", description="frete", body="x"), reason="extract", actor="e")
    with store.transaction() as tx:
        tx.remove(AGENT, "brief", actor="e")
    monkeypatch.setattr(store, "scan_versions", lambda agent: pytest.fail("every version read"))
    assert [h.entry.name for h in index.search(AGENT, "frete", 5)] == ["c0", "c2"]


def test_concurrent_searches_of_two_agents_never_show_the_other_agents_concepts(tmp_path) -> None:
    import sys
    import threading

    db = SQLiteStore(tmp_path / "t.db", tokenizer=TOKENIZER)
    for agent in ("a", "b"):
        with db.transaction() as tx:
            for i in range(20):
                tx.put(agent, make_concept(name=f"{agent}-c{i}", description=f"frete prazo {i}", body="x"),
                       reason="extract", actor="e")
    index = PostingsIndex(db)
    foreign: list[tuple[str, str]] = []

    def search(agent: str) -> None:
        for _ in range(1500):
            foreign.extend((agent, h.entry.name) for h in index.search(agent, "frete prazo", 10)
                           if not h.entry.name.startswith(f"{agent}-"))

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads often: inside the hit-entry cache too
    try:
        threads = [threading.Thread(target=search, args=(agent,)) for agent in "abab"]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        sys.setswitchinterval(interval)
    db.close()
    assert foreign == []


def test_a_snapshot_too_big_to_save_does_not_fail_the_search(tmp_path) -> None:
    import apsw

    db = SQLiteStore(tmp_path / "t.db", tokenizer=TOKENIZER)
    for i in range(30):
        _put(db, f"c{i}", ["frete", "prazo", f"w{i}"], 0.6)
    db._conn().limit(apsw.SQLITE_LIMIT_LENGTH, 3000)  # the snapshot is longer than a value may be
    assert len([h.entry.name for h in PostingsIndex(db).search(AGENT, "frete", 3)]) == 3
    assert db.load_index_snapshot(AGENT, postings.KIND) is None
    db.close()


def test_a_snapshot_replaced_while_it_is_being_read_is_read_whole(tmp_path) -> None:
    """Another process rewrites the snapshot between the length read and the blob read."""
    import apsw

    db = SQLiteStore(tmp_path / "t.db", tokenizer=TOKENIZER)
    for i in range(5):
        _put(db, f"c{i}", ["frete", f"w{i}"], 0.6)
    PostingsIndex(db).search(AGENT, "frete", 3)
    written = bytes(db.load_index_snapshot(AGENT, postings.KIND) or b"")
    other = apsw.Connection(str(tmp_path / "t.db"))
    conn = db._conn()

    def replace(cursor: object, row: tuple) -> tuple:
        conn.set_row_trace(None)
        other.execute("UPDATE index_snapshots SET data = ? WHERE agent = ?", (b"short", AGENT))
        return row

    conn.set_row_trace(replace)
    assert bytes(db.load_index_snapshot(AGENT, postings.KIND) or b"") == written  # the one it began reading
    assert bytes(db.load_index_snapshot(AGENT, postings.KIND) or b"") == b"short"
    other.close()
    db.close()
