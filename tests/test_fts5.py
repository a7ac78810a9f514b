"""Index::FTS5: sync by triggers, escaping, agreement with Scan, fallback."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import make_concept
from hypothesis import given, settings
from hypothesis import strategies as st

from insika_knowledge.events import EventBus, Recorder
from insika_knowledge.index.fts5 import Fts5Index
from insika_knowledge.index.scan import ScanIndex
from insika_knowledge.retrieve import Retriever
from insika_knowledge.store import SQLiteStore

AGENT = "store-support"
TEXTS = [
    ("frete-gratis", "Frete grátis acima de R$ 199", "Pedidos acima de R$ 199 não pagam frete."),
    ("cep-13-campinas", "CEPs 13000-13999 saem de Campinas", "Entrega em 1-2 dias úteis."),
    ("devolucao-7-dias", "Devoluções em até 7 dias", "O cliente pode devolver em 7 dias após a entrega."),
    ("baggage-gold", "Gold members get 3 free checked bags", "Each passenger of a gold member gets 3 bags."),
    ("refund-original-method", "Refunds go to the original payment method", "Gift cards are refunded as gift cards."),
]


@pytest.fixture
def filled(store: SQLiteStore) -> SQLiteStore:
    with store.transaction() as tx:
        for name, description, body in TEXTS:
            tx.put(AGENT, make_concept(name=name, description=description, body=body), reason="extract", actor="e")
        tx.put("other-agent", make_concept(name="frete-gratis", description="frete", body="frete"),
               reason="extract", actor="e")
    return store


def names(hits) -> list[str]:
    return [h.entry.name for h in hits]


def test_fts5_finds_stems_and_numbers_in_ranges(filled: SQLiteStore) -> None:
    index = Fts5Index(filled)
    assert names(index.search(AGENT, "fretes", 5))[0] == "frete-gratis"
    assert names(index.search(AGENT, "moro no 13050-000", 5)) == ["cep-13-campinas"]
    assert index.search(AGENT, "moro no 14050-000", 5) == []
    assert names(index.search(AGENT, "refunded?", 5)) == ["refund-original-method"]


def test_triggers_keep_the_index_in_sync_with_writes(filled: SQLiteStore) -> None:
    index = Fts5Index(filled)
    current = filled.get(AGENT, "baggage-gold")
    edited = current.markdown.replace("Gold members get 3 free checked bags", "Platinum lounge access")
    filled.edit(AGENT, "baggage-gold", edited, expected_version=current.version, actor="op")
    assert "baggage-gold" in names(index.search(AGENT, "platinum lounge", 5))
    filled.delete(AGENT, "frete-gratis", actor="op")
    assert "frete-gratis" not in names(index.search(AGENT, "frete grátis", 5))
    filled.restore(AGENT, "frete-gratis", 1, actor="op")
    assert names(index.search(AGENT, "frete grátis", 5))[0] == "frete-gratis"


def test_results_are_scoped_to_the_agent(filled: SQLiteStore) -> None:
    assert names(Fts5Index(filled).search("other-agent", "frete", 5)) == ["frete-gratis"]
    assert Fts5Index(filled).search("nobody", "frete", 5) == []


MESSAGES = st.text(max_size=60) | st.lists(
    st.sampled_from(['"', "'", "NEAR", "NEAR(", "*", "^", ":", "name:", "body:", "AND", "OR", "NOT",
                     "(", ")", "-", "+", "{", "}", "frete", "gold", "bags", "\x00", "é", "😀", " "]),
    max_size=12,
).map(" ".join)


@settings(max_examples=300, deadline=None)
@given(MESSAGES)
def test_no_message_is_ever_read_as_fts5_syntax(tmp_path_factory, message: str) -> None:
    db = SQLiteStore(tmp_path_factory.mktemp("fts") / "t.db")
    with db.transaction() as tx:
        for name, description, body in TEXTS:
            tx.put(AGENT, make_concept(name=name, description=description, body=body), reason="extract", actor="e")
    fts = {h.entry.name for h in Fts5Index(db).search(AGENT, message, 50)}
    scan = {h.entry.name for h in ScanIndex(db).search(AGENT, message, 50)}
    db.close()
    assert fts == scan  # both indexes agree on what matches, whatever the text


def test_operator_words_are_searched_as_words(filled: SQLiteStore) -> None:
    with filled.transaction() as tx:
        tx.put(AGENT, make_concept(name="near-store", description="Is there a store NEAR me", body="x"),
               reason="extract", actor="e")
    assert "near-store" in names(Fts5Index(filled).search(AGENT, 'NEAR("store" me)', 5))


def test_fts5_missing_falls_back_to_scan_and_says_so_once(tmp_path: Path, monkeypatch) -> None:
    from insika_knowledge.store import fts as fts_module

    monkeypatch.setattr(fts_module, "fts5_available", lambda conn: False)
    db = SQLiteStore(tmp_path / "t.db")
    with db.transaction() as tx:
        tx.put(AGENT, make_concept(), reason="extract", actor="e")
    bus, recorder = EventBus(), Recorder()
    bus.subscribe(recorder)
    retriever = Retriever(db, events=bus)
    for _ in range(3):
        assert retriever.retrieve(AGENT, "Campinas", 5, "fts5").matched[0].name == "cep-13-campinas"
    assert recorder.named("knowledge_degraded") == [
        {"agent": AGENT, "feature": "index", "reason": "SQLite lacks FTS5: using scan"}]
    db.close()


def test_auto_uses_scan_below_the_crossover_and_fts5_above(filled: SQLiteStore, monkeypatch) -> None:
    from insika_knowledge import retrieve

    retriever = Retriever(filled)
    assert retriever.index_for(AGENT, "auto").name == "scan"
    monkeypatch.setattr(retrieve, "AUTO_FTS5_FROM", 3)
    assert retriever.index_for(AGENT, "auto").name == "fts5"
    assert retriever.index_for(AGENT, "scan").name == "scan"
    assert retriever.index_for(AGENT, "fts5").name == "fts5"


def test_both_indexes_forgive_one_typo(filled: SQLiteStore) -> None:
    for index in (Fts5Index(filled), ScanIndex(filled)):
        assert names(index.search(AGENT, "how do I get a refnud?", 5))[0] == "refund-original-method"
        assert "devolucao-7-dias" in names(index.search(AGENT, "devoluçao", 5))


def test_a_term_new_since_the_vocabulary_was_read_is_not_corrected_away(filled: SQLiteStore) -> None:
    index = Fts5Index(filled)
    index.search(AGENT, "frete", 5)  # reads the vocabulary
    with filled.transaction() as tx:
        tx.put(AGENT, make_concept(name="refunda", description="refunda is a brand-new word", body="x"),
               reason="extract", actor="e")
    assert names(index.search(AGENT, "refunda", 5))[0] == "refunda"  # not turned into "refund"


def test_scan_and_fts5_agree_on_ranges_in_names_and_across_fields(store: SQLiteStore) -> None:
    with store.transaction() as tx:
        tx.put(AGENT, make_concept(name="prazo-1-9", description="Prazo de entrega", body="Consulte a tabela."),
               reason="extract", actor="e")
        tx.put(AGENT, make_concept(name="frete-faixa", description="Frete grátis para pedidos acima de",
                                   body="R$ 199 em todo o Brasil."), reason="extract", actor="e")
    for message in ("5", "300", "300 reais", "prazo 5 dias"):
        assert {h.entry.name for h in Fts5Index(store).search(AGENT, message, 50)} == \
            {h.entry.name for h in ScanIndex(store).search(AGENT, message, 50)}, message


def test_huge_numbers_and_huge_messages_are_handled(filled: SQLiteStore) -> None:
    """Numbers over 15 digits are not numbers; a message is read to its first 4000 characters."""
    import re

    from insika_knowledge.analysis.text import MAX_QUERY_CHARS
    from insika_knowledge.retrieve import Retriever

    def found(block: str | None) -> list[str]:
        return re.findall(r'<concept name="([^"]+)"', block or "")

    retriever = Retriever(filled)
    counting = " ".join(str(i) for i in range(20000))  # ~109,000 characters
    past_the_cut = counting[:MAX_QUERY_CHARS] + " refund gift cards"
    results = {}
    for mode in ("scan", "fts5"):
        results[mode] = (
            found(retriever.block(AGENT, "pedido " + "7" * 5000, 5, mode)),  # no error
            found(retriever.block(AGENT, counting, 5, mode)),  # no error
            found(retriever.block(AGENT, past_the_cut, 5, mode)),
        )
    huge_word, counted, cut = results["fts5"]
    assert [set(names) for names in results["scan"]] == [set(names) for names in results["fts5"]]
    assert huge_word == ["frete-gratis"]  # the word beside a 5000-digit number still counts
    assert "devolucao-7-dias" in counted  # "7" early in the message is read as a number
    assert "refund-original-method" not in cut  # words past the first 4000 characters are not read
    with filled.transaction() as tx:
        tx.put(AGENT, make_concept(name="big", body="entre 1" + "0" * 4400 + " e 2" + "0" * 4400),
               reason="extract", actor="e")
    stored = filled.get(AGENT, "big")
    assert stored is not None and stored.concept.body.count("0") == 8800  # stored as written
    for mode in ("scan", "fts5"):
        assert found(retriever.block(AGENT, "pedido " + "7" * 5000, 5, mode)) == ["frete-gratis"]
        assert "big" in found(retriever.block(AGENT, "Campinas DC", 5, mode))  # found by its words
