"""A long message is read in pieces: the question a paragraph of context surrounds is found."""

from __future__ import annotations

import pytest
from conftest import make_concept
from hypothesis import given, settings
from hypothesis import strategies as st

from insika_knowledge.analysis.pieces import PIECE_CHARS, READ_CHARS, pieces
from insika_knowledge.retrieve import Retriever

AGENT = "store-support"
STORY = ("Olá, tudo bem? Estou escrevendo porque comprei um presente para minha mãe e quero ter certeza de que "
         "tudo vai dar certo. Ela mora sozinha e gosta muito de plantas, então escolhi um vaso grande de cerâmica. ")
QUESTION = "Meu CEP é 13050-000, em Campinas. Quanto tempo demora a entrega?"


def test_a_short_message_is_one_piece() -> None:
    assert pieces(QUESTION) == [QUESTION]
    assert pieces("x" * PIECE_CHARS) == ["x" * PIECE_CHARS]


def test_a_long_message_is_read_from_its_end_and_its_start_within_the_budget() -> None:
    message = "".join(f"Parte {i}. {STORY}" for i in range(40)) + QUESTION  # about 8,000 characters
    read = pieces(message)
    assert read[-1].endswith(QUESTION)  # the end first: a question usually ends a message
    assert read[0].startswith("Parte 0. Olá, tudo bem?")  # then the start
    assert sum(map(len, read)) <= READ_CHARS
    assert all(len(p) <= PIECE_CHARS for p in read)
    assert all(p in message for p in read)  # whole sentences, in the message's order
    assert [message.index(p) for p in read] == sorted(message.index(p) for p in read)


def _cut_by_copies(sentence: str, size: int) -> list[str]:
    """How a sentence over `size` characters was cut before (each rest copied: quadratic)."""
    out = []
    while len(sentence) > size:
        at = sentence.rfind(" ", 0, size + 1)
        at = at if at > 0 else size
        out.append(sentence[:at].strip())
        sentence = sentence[at:].strip()
    return [*out, sentence]


@settings(max_examples=80, deadline=None)
@given(st.lists(st.sampled_from(["a", "bb", "ccc ", " ", "  ", "\u00a0", "é", "word "]), max_size=400),
       st.integers(5, 60))
def test_one_long_sentence_is_cut_as_before_without_copying_its_rest(parts: list[str], size: int) -> None:
    # a 4 MB sentence took the relay's retrieval seconds: the rest was copied at every cut
    sentence = "".join(parts).strip()
    if len(sentence) <= size or "\n" in sentence:
        return
    assert pieces(sentence, size, budget=10**9) == [p for p in _cut_by_copies(sentence, size) if p]


@settings(max_examples=60, deadline=None)
@given(st.text(min_size=0, max_size=5000), st.integers(20, 600), st.integers(1, 3000))
def test_pieces_are_bounded_and_never_empty(message: str, size: int, budget: int) -> None:
    read = pieces(message, size, budget)
    if len(message) <= size:
        assert read == [message]
        return
    assert all(0 < len(p) <= size for p in read) or read == []
    assert len(read) <= 1 or sum(map(len, read)) <= budget  # at least one piece is read
    if message.strip():
        assert read  # a message with any text gives a piece


def _store_with_rules(store) -> None:  # noqa: ANN001
    with store.transaction() as tx:
        for name, description, body in (
            ("cep-13-campinas", "CEPs 13xxx são atendidos pelo CD de Campinas, entrega em 1 a 2 dias úteis.",
             "Pedidos para CEPs 13000-000 a 13999-999 chegam em 1 a 2 dias úteis."),
            ("vasos-ceramica-fragil", "Vasos de cerâmica seguem com embalagem reforçada.",
             "Itens frágeis como vasos de cerâmica vão com plástico bolha e caixa dupla."),
            ("presente-embrulho", "Embrulho para presente custa R$ 5.", "Embrulho de presente: R$ 5 por item."),
        ):
            tx.put(AGENT, make_concept(name=name, description=description, body=body), reason="extract",
                   actor="engine")


@pytest.mark.parametrize("layout", ["before", "after"])
def test_the_question_inside_a_long_message_finds_its_concept(store, layout: str) -> None:  # noqa: ANN001
    """Read whole, the first 4,000 characters of a message were its terms: a question after
    them was never read, and the story's words ranked other concepts first."""
    _store_with_rules(store)
    story = STORY * 25  # about 5,000 characters
    message = f"{story}{QUESTION}" if layout == "before" else f"{QUESTION} {story}"
    hits = Retriever(store).search(AGENT, message, 5)
    assert hits and hits[0].entry.name == "cep-13-campinas", [h.entry.name for h in hits]
    assert Retriever(store).search(AGENT, QUESTION, 5)[0].entry.name == "cep-13-campinas"


@pytest.mark.parametrize("mode", ["scan", "fts5"])
def test_the_coverage_floor_reads_a_long_message_piece_by_piece(store, mode: str) -> None:  # noqa: ANN001
    """A second attacker's finding: with a lexical index and ``min_coverage`` 0.15 the floor
    weighed the whole message, the story's words included, and emptied the block."""
    _store_with_rules(store)
    message = STORY * 10 + QUESTION  # about 2,000 characters
    block = Retriever(store).block(AGENT, message, 5, mode, min_coverage=0.3)
    assert block is not None and 'name="cep-13-campinas"' in block
