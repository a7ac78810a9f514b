"""``bench --scale``'s learn_turn timing times turns that write, in the stated mix (issue 26)."""

from __future__ import annotations

from pathlib import Path

from insika_knowledge.bench.learnpath import MIX, learn_turns
from insika_knowledge.bench.synthetic import corpus
from insika_knowledge.index.postings import PostingsIndex
from insika_knowledge.index.tokenizer import TOKENIZER
from insika_knowledge.store import SQLiteStore


def test_every_timed_turn_writes_what_the_mix_says(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "t.db", tokenizer=TOKENIZER)
    with store.transaction() as tx:
        for concept in corpus(300):
            tx.put("bench", concept, reason="extract", actor="bench")
    index = PostingsIndex(store)
    p50, p95, outcomes = learn_turns(store, "bench", index, 150)
    store.close()
    assert p50 > 0 and p95 >= p50
    # 150 timed turns after 10 of warm-up: 15 cycles of the mix, each outcome what it should be
    # (enough new concepts that some descriptions name an entitlement: the agent states them too).
    assert outcomes == {"new:learned": 15 * MIX.count("new"), "confirm:confirmed": 15 * MIX.count("confirm"),
                        "conflict:conflict": 15 * MIX.count("conflict")}


def test_bench_scale_says_what_its_timed_turns_did() -> None:
    # `bench --scale` printed learn_turn's p50 alone: a run whose turns wrote nothing would have
    # printed a figure that measures nothing. It now carries and prints the outcomes.
    from insika_knowledge.bench.scale import run_scale

    lines: list[str] = []
    rows = run_scale(sizes=(300,), quick=True, echo=lines.append, embeddings="off")
    did = rows[0]["learn_turn_outcomes"]
    assert did == {"new:learned": 20 * MIX.count("new"), "confirm:confirmed": 20 * MIX.count("confirm"),
                   "conflict:conflict": 20 * MIX.count("conflict")}
    assert any("learn_turn at 300, the timed turns did: confirm:confirmed" in line for line in "\n".join(lines)
               .splitlines())
