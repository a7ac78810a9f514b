"""The write path's two searches (issue 26) rank exactly as brute-force BM25 over the store does.

`learn_turn` searches the agent's index twice per turn: the turn's text for the extraction
prompt's known concepts, and a new candidate's description and body for its name. After
every write the index's statistics move, so those searches take the cold path
(`index.topk`, common terms completed only where a concept can still win) and score the
concepts changed since the base from arrays. Here every search of the bench's writing
turns (new concepts, confirmations, conflicts) is checked against exact BM25 computed from
the store's rows at that moment: the same names, the same scores, so the same known
concepts and the same naming decisions as a search that scores every concept.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from insika_knowledge.bench.learnpath import MIX, learn_turns
from insika_knowledge.bench.synthetic import corpus
from insika_knowledge.index import bm25, postings, topk
from insika_knowledge.index.postings import PostingsIndex, analyse_row
from insika_knowledge.index.scan import Hit, entry_from_row
from insika_knowledge.index.tokenizer import TOKENIZER
from insika_knowledge.store import SQLiteStore

AGENT = "bench"


class _Checked:
    """The agent's index, each search compared with exact BM25 over the store's rows."""

    def __init__(self, store: SQLiteStore, index: PostingsIndex):
        self.store = store
        self.index = index
        self.searches = 0

    def search(self, agent: str, query: str, top_k: int) -> list[Hit]:
        hits = self.index.search(agent, query, top_k)
        assert [(h.entry.name, h.score) for h in hits] == self._exact(agent, query, top_k)
        self.searches += 1
        return hits

    def _exact(self, agent: str, query: str, top_k: int) -> list[tuple[str, float]]:
        rows = list(self.store.scan_rows(agent))
        docs = [analyse_row(r) for r in rows]
        stats = bm25.Stats(len(rows), sum(d.length for d in docs),
                           lambda t: sum(1 for d in docs if t in d.fcodes))
        plan = bm25.query_plan(self.index.analyse(agent, query), stats)
        scored = [(entry_from_row(r), bm25.score_doc(d, plan, bm25.length_norm(d.length, stats.avgdl)))
                  for r, d in zip(rows, docs, strict=True)]
        scored = sorted((p for p in scored if p[1] > 0.0), key=lambda p: (-p[1], p[0].tiebreak))
        return [(e.name, s) for e, s in scored[:top_k]]


@pytest.mark.parametrize("cold", [True, False])
def test_the_write_paths_searches_equal_exact_bm25_on_the_benchs_turns(tmp_path: Path, monkeypatch, cold) -> None:
    if cold:  # every search right after a write takes the cold path, whatever its size
        monkeypatch.setattr(topk, "COLD_PRUNE_FROM", -1)
    monkeypatch.setattr(postings, "DELTA_MIN", 8)  # the delta is scored, and merged into the base, often
    monkeypatch.setattr(postings, "DELTA_ROOT", 0.5)
    store = SQLiteStore(tmp_path / "t.db", tokenizer=TOKENIZER)
    with store.transaction() as tx:
        for concept in corpus(150):
            tx.put(AGENT, concept, reason="extract", actor="bench")
    checked = _Checked(store, PostingsIndex(store))
    _, _, outcomes = learn_turns(store, AGENT, checked, 20)
    store.close()
    # 30 turns: two searches for each new concept (its name is new), one for the others.
    assert checked.searches == 30 + sum(1 for i in range(30) if MIX[i % len(MIX)] == "new")
    assert outcomes == {"new:learned": 2 * MIX.count("new"), "confirm:confirmed": 2 * MIX.count("confirm"),
                        "conflict:conflict": 2 * MIX.count("conflict")}
