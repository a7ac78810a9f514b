"""The one tokeniser: folding, stop words, stemming, and numbers inside ranges."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from insika_knowledge.analysis import numbers
from insika_knowledge.analysis.text import document_terms, fold, query_terms, stem, terms, tokenize


@pytest.mark.parametrize(
    ("a", "b"),
    [("fretes", "frete"), ("Frete", "frete"), ("entregas", "entrega"), ("devoluções", "devolucao"),
     ("devolucoes", "devolução"), ("bagagens", "bagagem"), ("refunds", "refund"),
     ("cancellation", "cancelled"), ("policies", "policy"), ("SHIPPING", "shipped")],
)
def test_inflections_share_a_term(a: str, b: str) -> None:
    assert terms(a) == terms(b) != frozenset()


@pytest.mark.parametrize(("a", "b"), [("frete", "frente"), ("gold", "silver"), ("refund", "return")])
def test_different_words_stay_different(a: str, b: str) -> None:
    assert terms(a) != terms(b)


def test_stop_words_in_both_languages_are_dropped() -> None:
    assert tokenize("the of and a o de para com") == []


@given(st.text(max_size=80))
def test_analysis_is_deterministic_and_case_insensitive(text: str) -> None:
    assert tokenize(text) == tokenize(text)
    assert terms(text.upper()) == terms(text.lower()) or fold(text.upper()) != fold(text.lower())


@given(st.from_regex(r"[a-z]{1,12}", fullmatch=True))
def test_stems_are_ascii_words(word: str) -> None:
    assert stem(word).isascii()


@pytest.mark.parametrize(
    ("concept", "inside", "outside"),
    [
        ("CEPs 13000-13999 saem do CD de Campinas", "meu CEP é 13050-000", "meu CEP é 14050-000"),
        ("CEPs 13000-000 a 13999-999 saem de Campinas", "cep 13999-123", "cep 12999-999"),
        ("CEPs 13xxx saem de Campinas", "CEP 13420-120", "CEP 31420-120"),
        ("Frete grátis acima de R$ 199", "comprei R$ 250,00", "comprei R$ 150,00"),
        ("Orders over $50 ship free", "my order is $80", "my order is $40"),
        ("Parcelamento a partir de R$ 300", "compra de R$ 300", "compra de R$ 299"),
        ("Frete fixo abaixo de R$ 199", "pedido de R$ 120", "pedido de R$ 250"),
        ("Entrega em 3-5 dias", "já se passaram 4 dias", "já se passaram 9 dias"),
    ],
)
def test_a_number_matches_through_a_range_only_when_inside_it(concept: str, inside: str, outside: str) -> None:
    ranges = {t for t in document_terms(concept) if numbers.is_numeric_term(t)}
    assert ranges, "the concept's range produced no block terms"
    assert ranges & query_terms(inside)
    assert not (ranges & query_terms(outside))


@given(st.integers(0, 99_999), st.integers(0, 99_999), st.integers(0, 99_999))
def test_block_cover_is_exact(lo: int, hi: int, value: int) -> None:
    lo, hi = sorted((lo, hi))
    for kind in ("cep", "num"):
        blocks = set(numbers.blocks(lo, hi, kind))
        hit = bool(blocks & set(numbers.prefixes(value, kind)))
        assert hit == (lo <= value <= hi)


@pytest.mark.parametrize(("raw", "value"), [("1.250,00", 1250), ("1,250.00", 1250), ("199,90", 199), ("80", 80)])
def test_amounts_parse_in_both_conventions(raw: str, value: int) -> None:
    assert numbers.to_int(raw) == value


def test_one_edit_covers_the_four_kinds_of_typo() -> None:
    from insika_knowledge.index.typos import one_edit

    edits = one_edit("return")
    assert {"retrun", "retun", "returnn", "retorn"} <= edits
    assert "return" not in edits


def test_unknown_terms_are_corrected_to_the_most_common_known_neighbour() -> None:
    from insika_knowledge.index.typos import correct

    frequencies = {"return": 5, "retune": 1, "refund": 3}
    assert correct({"retrun", "refund", "zmoney3_2", "xyzzyq"}, lambda t: frequencies.get(t, 0)) == {
        "return", "refund", "zmoney3_2", "xyzzyq"}
    assert correct({"retun"}, lambda t: frequencies.get(t, 0)) == {"return"}  # 5 beats 1
    assert correct({"ret"}, lambda t: frequencies.get(t, 0)) == {"ret"}  # too short to guess


def test_a_term_too_long_to_be_a_word_is_kept_without_listing_its_neighbours(monkeypatch) -> None:
    """A 4000-letter query term listed 290,000 neighbours (over 1 GB) before it was kept."""
    from insika_knowledge.index import typos

    long_term, known = "x" * 4000, {"x" * 3999: 1, "retorno": 1}
    monkeypatch.setattr(typos, "one_edit", lambda term: pytest.fail(f"neighbours of a {len(term)}-letter term"))
    assert typos.correct({long_term, "x" * 41}, lambda t: known.get(t, 0)) == {long_term, "x" * 41}
    monkeypatch.undo()
    assert typos.correct({"retorrno"}, lambda t: known.get(t, 0), ({"retorno"},)) == {"retorno"}


def test_a_term_holding_a_digit_is_never_corrected() -> None:
    """Another number is another claim: "13999" must not become the known "c13999" or "13990"."""
    from insika_knowledge.index.typos import correct

    frequencies = {"13990": 5, "c13999": 3, "order12346": 2, "pedido": 4}
    assert correct({"13999", "order12345", "pedid0"}, lambda t: frequencies.get(t, 0)) == {
        "13999", "order12345", "pedid0"}


@given(st.lists(st.from_regex(r"[a-z]{3,8}", fullmatch=True), max_size=30),
       st.from_regex(r"[a-z]{5,8}", fullmatch=True))
def test_correcting_within_the_vocabularies_gives_the_same_terms(known_terms: list[str], term: str) -> None:
    from insika_knowledge.index.typos import correct, one_edit

    vocabulary = {t: i + 1 for i, t in enumerate(known_terms + sorted(one_edit(term))[:3])}
    first, second = dict(list(vocabulary.items())[::2]), dict(list(vocabulary.items())[1::2])
    assert correct({term}, lambda t: vocabulary.get(t, 0), (first.keys(), second.keys())) == correct(
        {term}, lambda t: vocabulary.get(t, 0))


@given(st.from_regex(r"[a-z]{5,10}", fullmatch=True))
def test_a_known_term_is_never_changed(term: str) -> None:
    from insika_knowledge.index.typos import correct

    assert correct({term}, lambda t: 1 if t == term else 0) == {term}
