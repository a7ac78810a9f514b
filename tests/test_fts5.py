"""Index::FTS5: sync by triggers, escaping, agreement with Scan, fallback."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import apsw
import pytest
from conftest import make_concept
from hypothesis import given, settings
from hypothesis import strategies as st

from insika_knowledge.analysis.text import query_terms
from insika_knowledge.errors import UserError
from insika_knowledge.events import EventBus, Recorder
from insika_knowledge.index.fts5 import Fts5Index
from insika_knowledge.index.scan import ScanIndex
from insika_knowledge.index.tokenizer import TOKENIZER, attach
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


@pytest.fixture(scope="module")
def texts(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SQLiteStore]:
    """`TEXTS` in one store, written once for every example of the property below (it only reads)."""
    db = SQLiteStore(tmp_path_factory.mktemp("fts") / "t.db")
    with db.transaction() as tx:
        for name, description, body in TEXTS:
            tx.put(AGENT, make_concept(name=name, description=description, body=body), reason="extract", actor="e")
    yield db
    db.close()


@settings(max_examples=300, deadline=None)
@given(MESSAGES)
def test_no_message_is_ever_read_as_fts5_syntax(texts: SQLiteStore, message: str) -> None:
    fts = {h.entry.name for h in Fts5Index(texts).search(AGENT, message, 50)}
    scan = {h.entry.name for h in ScanIndex(texts).search(AGENT, message, 50)}
    assert fts == scan  # both indexes agree on what matches, whatever the text


def test_operator_words_are_searched_as_words(filled: SQLiteStore) -> None:
    with filled.transaction() as tx:
        tx.put(AGENT, make_concept(name="near-store", description="Is there a store NEAR me", body="x"),
               reason="extract", actor="e")
    assert "near-store" in names(Fts5Index(filled).search(AGENT, 'NEAR("store" me)', 5))


def test_fts5_missing_falls_back_to_scan_and_says_so_once(tmp_path: Path, monkeypatch) -> None:
    from insika_knowledge.store.sqlite import fts as fts_module

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


def test_auto_uses_the_exact_postings_index_at_every_size(filled: SQLiteStore) -> None:
    # Issue 17: `auto` no longer switches to FTS5 at 5,000 concepts (it was 11-15x slower
    # there and changed the top-5 above 50k); the explicit modes keep their engines.
    retriever = Retriever(filled)
    assert retriever.index_for(AGENT, "auto").name == "postings"
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
    """Numbers over 15 digits are not numbers; a long message is read in pieces, its end and
    its start first, at most `READ_CHARS` of it (`analysis.pieces`)."""
    import re

    from insika_knowledge.analysis.text import MAX_QUERY_CHARS
    from insika_knowledge.retrieve import Retriever

    def found(block: str | None) -> list[str]:
        return re.findall(r'<concept name="([^"]+)"', block or "")

    retriever = Retriever(filled)
    counting = " ".join(str(i) for i in range(20000))  # ~109,000 characters
    at_the_end = counting[:MAX_QUERY_CHARS] + " refund gift cards"
    in_the_middle = counting[:MAX_QUERY_CHARS] + " refund gift cards " + counting[:MAX_QUERY_CHARS]
    results = {}
    for mode in ("scan", "fts5"):
        results[mode] = (
            found(retriever.block(AGENT, "pedido " + "7" * 5000, 5, mode)),  # no error
            found(retriever.block(AGENT, counting, 5, mode)),  # no error
            found(retriever.block(AGENT, at_the_end, 5, mode)),
            found(retriever.block(AGENT, in_the_middle, 5, mode)),
        )
    huge_word, counted, end, middle = results["fts5"]
    assert [set(names) for names in results["scan"]] == [set(names) for names in results["fts5"]]
    assert huge_word == ["frete-gratis"]  # the word beside a 5000-digit number still counts
    assert "devolucao-7-dias" in counted  # "7" early in the message is read as a number
    assert "refund-original-method" in end  # the end of a long message is read first
    assert "refund-original-method" not in middle  # past what is read of it (READ_CHARS), nothing
    with filled.transaction() as tx:
        tx.put(AGENT, make_concept(name="big", body="entre 1" + "0" * 4400 + " e 2" + "0" * 4400),
               reason="extract", actor="e")
    stored = filled.get(AGENT, "big")
    assert stored is not None and stored.concept.body.count("0") == 8800  # stored as written
    for mode in ("scan", "fts5"):
        assert found(retriever.block(AGENT, "pedido " + "7" * 5000, 5, mode)) == ["frete-gratis"]
        assert "big" in found(retriever.block(AGENT, "Campinas DC", 5, mode))  # found by its words


# ---------------------------------------------------------------- per-agent statistics

FILLERS = ["pix", "boleto", "cartao", "troca", "garantia", "sedex", "cupom", "estoque", "nota", "parcela"]
REGIONS = ["norte", "sul", "leste", "oeste", "centro"]


def _two_agents(store: SQLiteStore) -> None:
    """Agent AGENT: one concept about frete, two about Campinas, fillers. Another agent of
    the same tenant: 200 concepts about frete (so "frete" is common tenant-wide, rare here)."""
    with store.transaction() as tx:
        for name, description in (("frete-gratis", "Frete grátis em todo o Brasil"),
                                  ("cep-campinas", "Entregas para Campinas saem cedo"),
                                  ("loja-campinas", "Loja física em Campinas aberta")):
            tx.put(AGENT, make_concept(name=name, description=description, body="Vale para qualquer pedido."),
                   reason="extract", actor="e")
        for word in FILLERS:
            tx.put(AGENT, make_concept(name=f"{word}-regra", description=f"Regra sobre {word} na loja",
                                       body="Vale para qualquer pedido."), reason="extract", actor="e")
        for i in range(200):
            region = REGIONS[i % 5]
            tx.put("other-agent", make_concept(name=f"frete-{region}-{i}", description=f"Frete para a região {region}",
                                               body="Tabela de frete da região."), reason="extract", actor="e")


def test_with_two_agents_in_a_tenant_fts5_and_scan_agree_on_the_top_hit(store: SQLiteStore) -> None:
    # Divided by the tenant's frequencies, "frete" looked common and FTS5 put frete-gratis third.
    _two_agents(store)
    message = "qual o frete para campinas?"
    scan = names(ScanIndex(store).search(AGENT, message, 3))
    fts = names(Fts5Index(store).search(AGENT, message, 3))
    assert scan[0] == fts[0] == "frete-gratis"
    assert set(fts) == set(scan)


def test_document_frequencies_and_vocabulary_are_the_agents_own(store: SQLiteStore) -> None:
    _two_agents(store)
    index = Fts5Index(store)
    (frete,), (campinas,), (norte,) = (sorted(query_terms(w)) for w in ("frete", "campinas", "norte"))
    assert store.fts_doc_freqs(AGENT, [frete, campinas]) == {frete: 1, campinas: 2}
    assert store.fts_doc_freqs("other-agent", [frete, campinas]) == {frete: 200}
    assert norte not in store.fts_vocabulary(AGENT)
    assert store.fts_vocabulary("other-agent")[norte] == 40
    assert index.weight(AGENT)(frete) == ScanIndex(store).weight(AGENT)(frete)  # Scan's weight, FTS5's counts
    # Typo correction only knows the agent's own words: "tabwla" is one edit from the other
    # agent's "tabela", and from nothing of this agent's.
    (tabela,) = query_terms("tabela")
    assert index.analyse(AGENT, "tabwla") == query_terms("tabwla")
    assert index.analyse("other-agent", "tabwla") == {tabela}


# ---------------------------------------------------------------- the analyser and the index


class _Tagging:
    """A tokenizer of another analysis version: the real terms plus a marker term."""

    def __init__(self, version: int) -> None:
        self.version = version
        self.calls = 0

    def __call__(self, text: str) -> list[str]:
        self.calls += 1
        return [*TOKENIZER(text), "zzmarker"]


def _meta(path: Path) -> dict[str, str]:
    conn = apsw.Connection(str(path))
    try:
        return dict(conn.execute("SELECT key, value FROM meta").fetchall())
    finally:
        conn.close()


def test_the_index_is_rebuilt_at_open_when_the_analysis_version_changes(tmp_path: Path) -> None:
    path = tmp_path / "t.db"
    db = SQLiteStore(path, tokenizer=TOKENIZER)
    with db.transaction() as tx:
        tx.put(AGENT, make_concept(), reason="extract", actor="e")
    db.close()
    assert _meta(path)["analysis_version"] == str(TOKENIZER.version)

    newer = _Tagging(TOKENIZER.version + 1)
    db = SQLiteStore(path, tokenizer=newer)  # another analysis: re-indexed before open returns
    assert newer.calls > 0
    assert _meta(path)["analysis_version"] == str(newer.version)
    assert [r.name for r, _ in db.fts_search(AGENT, ["zzmarker"], 5, (1.0, 1.0, 1.0))] == ["cep-13-campinas"]
    db.close()

    same = _Tagging(newer.version)
    SQLiteStore(path, tokenizer=same).close()  # the recorded version: nothing re-indexed
    assert same.calls == 0

    db = SQLiteStore(path, tokenizer=TOKENIZER)  # back to the real analysis
    assert db.fts_search(AGENT, ["zzmarker"], 5, (1.0, 1.0, 1.0)) == []
    assert names(Fts5Index(db).search(AGENT, "Campinas", 5)) == ["cep-13-campinas"]
    db.close()


def test_a_store_opened_without_the_analyser_gets_it_from_the_index_layer(tmp_path: Path) -> None:
    path = tmp_path / "t.db"
    plain = SQLiteStore(path)  # no tokenizer: no full-text index yet, writes work
    assert not plain.fts_ready
    with plain.transaction() as tx:
        tx.put(AGENT, make_concept(), reason="extract", actor="e")
    assert attach(plain) and plain.fts_ready  # the index layer gives it: rows written so far indexed
    assert names(Fts5Index(plain).search(AGENT, "Campinas", 5)) == ["cep-13-campinas"]
    plain.close()

    other = SQLiteStore(path)  # the file has an index now; this store cannot keep it in step
    with pytest.raises(UserError, match="tokenizer=insika_knowledge.index.tokenizer.TOKENIZER"):
        with other.transaction() as tx:
            tx.put(AGENT, make_concept(name="frete-gratis"), reason="extract", actor="e")
    assert other.get(AGENT, "frete-gratis") is None  # rolled back
    other.close()
