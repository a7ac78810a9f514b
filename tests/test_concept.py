from __future__ import annotations

import string

import pytest
from conftest import make_concept
from hypothesis import given, settings
from hypothesis import strategies as st

from insika_knowledge.concept import (
    CONCEPT_TYPES,
    Concept,
    normalize_name,
    parse,
    parse_links,
    serialize,
)
from insika_knowledge.errors import ConceptFormatError, InvalidName

SEED_RECORD = """\
---
name: cep-sudeste-cd-campinas
description: CEPs 13xxx-13999 ship from the Campinas DC, 1-2 business days.
type: fact
provenance: observed
confidence: 0.6
sources: ["sess_8f3c"]
occurrences: 1
created_at: 2026-08-24T18:02:11Z
updated_at: 2026-08-24T18:02:11Z
---

Orders to CEP range 13000-13999 are fulfilled by the Campinas DC. Quoted
delivery is 1-2 business days. Related: [[frete-gratis-acima-199]].
"""


def test_seed_record_round_trips_byte_for_byte() -> None:
    concept = parse(SEED_RECORD)
    assert concept.name == "cep-sudeste-cd-campinas"
    assert concept.sources == ("sess_8f3c",)
    assert concept.confidence == 0.6
    assert concept.links == ("frete-gratis-acima-199",)
    assert serialize(concept) == SEED_RECORD


def test_serialize_writes_keys_in_the_seed_order() -> None:
    text = serialize(make_concept())
    keys = [line.split(":")[0] for line in text.split("---\n")[1].splitlines()]
    assert keys == ["name", "description", "type", "provenance", "confidence", "sources",
                    "occurrences", "created_at", "updated_at"]


_timestamps = st.builds(
    lambda y, mo, d, h, mi, s: f"{y:04d}-{mo:02d}-{d:02d}T{h:02d}:{mi:02d}:{s:02d}Z",
    st.integers(2000, 2099), st.integers(1, 12), st.integers(1, 28), st.integers(0, 23),
    st.integers(0, 59), st.integers(0, 59),
)
_line = st.text(
    alphabet=st.characters(blacklist_categories=("Cc", "Cs", "Zl", "Zp", "Co", "Cn")), min_size=1, max_size=120
).map(str.strip).filter(lambda s: bool(s) and s.isprintable())
_body = st.text(
    alphabet=st.characters(blacklist_categories=("Cs", "Co", "Cn"), blacklist_characters="\x00\r"),
    min_size=1, max_size=400,
).map(lambda s: s.rstrip("\n")).filter(lambda s: bool(s.strip()))
_names = st.from_regex(r"[a-z0-9][a-z0-9-]{0,40}", fullmatch=True)
_concepts = st.builds(
    Concept,
    name=_names,
    description=_line,
    type=st.sampled_from(CONCEPT_TYPES),
    provenance=st.sampled_from(["observed", "policy"]),
    confidence=st.integers(0, 100).map(lambda n: n / 100),
    sources=st.lists(st.text(alphabet=string.ascii_letters + string.digits + "_-/:. ", min_size=1,
                             max_size=30), unique=True, max_size=5).map(tuple),
    occurrences=st.integers(0, 10_000),
    created_at=_timestamps,
    updated_at=_timestamps,
    body=_body,
)


@settings(max_examples=400)
@given(_concepts)
def test_round_trip_for_every_canonical_record(concept: Concept) -> None:
    text = serialize(concept)
    parsed = parse(text)
    assert parsed == concept
    assert serialize(parsed) == text


@given(_concepts)
def test_crlf_input_reads_like_lf(concept: Concept) -> None:
    text = serialize(concept)
    assert parse(text.replace("\n", "\r\n")) == parse(text)


@pytest.mark.parametrize(
    ("mutate", "line", "field"),
    [
        (lambda t: t.replace("confidence: 0.6", "confidence: 1.7"), 6, "confidence"),
        (lambda t: t.replace("confidence: 0.6", "confidence: high"), 6, "confidence"),
        (lambda t: t.replace("type: fact", "type: rumour"), 4, "type"),
        (lambda t: t.replace("occurrences: 1\n", ""), 10, "occurrences"),
        (lambda t: t.replace("provenance: observed\n", "provenance: observed\nowner: bob\n"), 6, "owner"),
        (lambda t: t.replace('sources: ["sess_8f3c"]', "sources: [unclosed"), 7, "sources"),
        (lambda t: t.replace("created_at: 2026-08-24T18:02:11Z", "created_at: yesterday"), 9, "created_at"),
        (lambda t: t.replace("updated_at: 2026-08-24T18:02:11Z", "updated_at: 2026-02-30T10:00:00Z"), 10, "updated_at"),
        (lambda t: t.replace("name: cep-sudeste-cd-campinas", "name: Not A Slug"), 2, "name"),
        (lambda t: t.split("---\n\n")[0] + "---\n\n   \n", 13, "body"),
    ],
)
def test_bad_records_name_the_line_and_field(mutate, line: int, field: str) -> None:
    with pytest.raises(ConceptFormatError) as info:
        parse(mutate(SEED_RECORD))
    assert info.value.line == line
    assert info.value.field == field
    assert f"line {line}" in str(info.value)


def test_unclosed_frontmatter_and_missing_opening_are_errors() -> None:
    with pytest.raises(ConceptFormatError, match="not closed"):
        parse(SEED_RECORD.replace("---\n\nOrders", "\nOrders"))
    with pytest.raises(ConceptFormatError, match="start with"):
        parse("name: x\n")


def test_confidence_with_more_than_two_decimals_is_rejected() -> None:
    with pytest.raises(ConceptFormatError) as info:
        parse(SEED_RECORD.replace("confidence: 0.6", "confidence: 0.615"))
    assert info.value.field == "confidence"


@pytest.mark.parametrize(
    ("raw", "slug"),
    [
        ("Frete Grátis acima de R$199", "frete-gratis-acima-de-r-199"),
        ("  CEP_13xxx / Campinas  ", "cep-13xxx-campinas"),
        ("DEVOLUÇÃO em 7 dias", "devolucao-em-7-dias"),
        ("already-a-slug", "already-a-slug"),
    ],
)
def test_model_names_are_normalised(raw: str, slug: str) -> None:
    assert normalize_name(raw) == slug


@pytest.mark.parametrize("raw", ["", "---", "!!!", "配送ポリシー", "🙂🙂"])
def test_unusable_names_are_rejected(raw: str) -> None:
    with pytest.raises(InvalidName):
        normalize_name(raw)


@given(st.text(max_size=200))
def test_normalised_names_are_always_slugs_and_idempotent(raw: str) -> None:
    try:
        slug = normalize_name(raw)
    except InvalidName:
        return
    assert 1 <= len(slug) <= 80
    assert slug == normalize_name(slug)


def test_links_are_parsed_in_order_without_duplicates() -> None:
    body = "See [[b-two]] and [[A One]], again [[b-two]]; not [[ ]] or [[x\ny]]."
    assert parse_links(body) == ("b-two", "a-one")


def test_description_that_looks_like_yaml_is_quoted_and_survives() -> None:
    tricky = make_concept(description='key: value # not a comment, "quoted" & [x]')
    assert parse(serialize(tricky)).description == tricky.description
