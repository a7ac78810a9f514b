"""A store in one language asked in the other: the no-answer floor is lower when none of the
message's nearest concepts is written in its language (`retrieve.CROSS_LINGUAL_DROPS`).

A newcomer's finding: a store of English rules gave no block to "Vocês embrulham para
presente?" (its gift-wrap rule at cosine 0.681, under the floor of 0.704), while "Do you gift
wrap?" found it at 0.811. The drop chosen on the set's dev half (0.02) does not reach that
message (0.681 < 0.684); "Dá para embrulhar para presente?" (0.701) it does.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from insika_knowledge import Memory
from insika_knowledge import retrieve as R
from insika_knowledge.bench.crosslingual import crosslingual_figures, crosslingual_lines
from insika_knowledge.index.embedders import resolve
from insika_knowledge.index.scan import Entry

offline = pytest.mark.skipif(resolve(None)[0] is None, reason="no offline embedding model installed")


@pytest.fixture(autouse=True)
def _with_embeddings(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("INSIKA_EMBEDDINGS", "auto")  # as a memory's defaults: the offline model


def _entry(description: str) -> Entry:
    return Entry(1, 1, "x", description, "fact", "observed", 0.6, "2026-01-01T00:00:00Z", False, (), None,
                 (0.0, 0, "x"))  # type: ignore[arg-type]


def test_a_message_is_foreign_when_no_nearest_concept_speaks_its_language() -> None:
    english = [_entry("Orders over $100 get free gift wrap."), _entry("Orders over $50 ship free.")]
    assert R._foreign("Vocês embrulham para presente?", english)
    assert not R._foreign("Do you gift wrap?", english)
    assert not R._foreign("Vocês embrulham para presente?", [*english, _entry("Frete grátis acima de R$ 199.")])
    assert not R._foreign("Pix", english)  # no language read: the floor as it is


@offline
def test_a_portuguese_question_finds_the_english_rule(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    memory = Memory(tmp_path)
    try:
        for name, rule in (("gift-wrap-over-100", "Orders over $100 get free gift wrap."),
                           ("free-shipping-over-50", "Orders over $50 ship free."),
                           ("loyalty-points", "Members earn 1 point per dollar spent; 100 points are worth $5.")):
            memory.put(f"---\nname: {name}\ndescription: {rule}\n---\n{rule}\n", agent="us")
        asked = "Dá para embrulhar para presente?"  # cosine 0.701: under 0.704, over 0.684
        assert [h.name for h in memory.search(asked, agent="us")][:1] == ["gift-wrap-over-100"]
        monkeypatch.setattr(R, "CROSS_LINGUAL_DROPS", {})  # the floor as before: nothing
        assert memory.search(asked + " ", agent="us") == []
    finally:
        memory.close()


@offline
def test_the_cross_lingual_set_meets_its_measured_figures(monkeypatch: pytest.MonkeyPatch) -> None:
    # measured with the drop chosen on dev (0.02): dev cross-lingual R@5 0.933 (0.800 without),
    # no-answer empty 0.067 (0.333 without); test 0.933 (0.900) and 0.467 (0.600): regression bounds
    figures = crosslingual_figures()
    assert figures["dev"]["cross_lingual"]["messages"] == figures["test"]["cross_lingual"]["messages"] == 30
    for half in ("dev", "test"):
        assert figures[half]["cross_lingual"]["recall@5"] >= 0.93, figures[half]
        assert figures[half]["same_lingual"]["recall@5"] == 1.0, figures[half]
    assert figures["test"]["cross_no_answer"]["empty"] >= 0.46, figures["test"]
    assert crosslingual_lines(figures)[1].startswith("  dev: cross_lingual R@5 0.933, empty 0.033;")
    monkeypatch.setattr(R, "CROSS_LINGUAL_DROPS", {})
    before = crosslingual_figures()
    assert before["dev"]["cross_lingual"]["recall@5"] < figures["dev"]["cross_lingual"]["recall@5"]
