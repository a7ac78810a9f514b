"""Tests for insika_knowledge.privacy.redact."""

from __future__ import annotations

import dataclasses
import re
import string

import phonenumbers
import pytest
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st
from stdnum import iban, luhn
from stdnum.br import cnpj, cpf

from insika_knowledge.privacy.redact import PLACEHOLDERS, Redaction, redact

ALNUM_CNPJ_SUPPORTED = cnpj.is_valid("12.ABC.345/01DE-35")


def cpf_check_digits(base: str) -> str:
    """The two CPF check digits for 9 digits, found through the public validator."""
    return next(f"{d:02d}" for d in range(100) if cpf.is_valid(base + f"{d:02d}"))


# --------------------------------------------------------------------------- API


def test_placeholders_are_exactly_the_fifteen_kinds() -> None:
    assert PLACEHOLDERS == {
        "email": "[email]",
        "phone": "[phone]",
        "cpf": "[cpf]",
        "cnpj": "[cnpj]",
        "card": "[card]",
        "iban": "[iban]",
        "pix": "[pix]",
        "boleto": "[boleto]",
        "rg": "[rg]",
        "address": "[address]",
        "name": "[name]",
        "ip": "[ip]",
        "birth_date": "[birth_date]",
        "voter_id": "[voter_id]",
        "ssn": "[ssn]",
    }


def test_redaction_is_frozen() -> None:
    result = redact("joana@exemplo.com")
    assert isinstance(result, Redaction)
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.text = "x"  # type: ignore[misc]


def test_empty_text() -> None:
    assert redact("") == Redaction(text="", counts={})


@pytest.mark.parametrize("value", [None, b"a@b.com", 12345678909, ["a@b.com"]])
def test_non_str_raises_type_error(value: object) -> None:
    with pytest.raises(TypeError):
        redact(value)  # type: ignore[arg-type]


def test_placeholders_are_never_matched_again() -> None:
    text = "Dados: " + ", ".join(PLACEHOLDERS.values()) + " e [email]@[phone].com"
    assert redact(text) == Redaction(text=text, counts={})


# --------------------------------------------------------------------------- positives

POSITIVE = [
    # email
    (
        "Cliente pediu retorno em joana.silva+promo@exemplo.com.br.",
        "Cliente pediu retorno em [email].",
        {"email": 1},
    ),
    (
        "Customer email is JOHN.DOE@Example.COM, confirmed.",
        "Customer email is [email], confirmed.",
        {"email": 1},
    ),
    (
        "Contato (maria_s@sub.dominio.io) e ana@x.org",
        "Contato ([email]) e [email]",
        {"email": 2},
    ),
    # phone, Brazilian
    ("Ligue para (11) 98765-4321 amanhã.", "Ligue para [phone] amanhã.", {"phone": 1}),
    # a name in the sentence of a person's phone is theirs (fail closed: `privacy.people`)
    ("Telefone 11 98765-4321, falar com Ana.", "Telefone [phone], falar com [name].", {"phone": 1, "name": 1}),
    ("WhatsApp: +55 11 98765-4321", "WhatsApp: [phone]", {"phone": 1}),
    ("Novo número +55 (21) 99876-5432!", "Novo número [phone]!", {"phone": 1}),
    ("telefone fixo (11) 3456-7890", "telefone fixo [phone]", {"phone": 1}),
    ("celular 11987654321 sem formatação", "celular [phone] sem formatação", {"phone": 1}),
    ("ligar no 011 98765-4321", "ligar no [phone]", {"phone": 1}),
    ("fone 55 11 98765-4321 (sem +)", "fone [phone] (sem +)", {"phone": 1}),
    # a number right before the phone must not hide it from the matcher
    ("Retornar às 15:00 11 98765-4321", "Retornar às 15:00 [phone]", {"phone": 1}),
    ("pedido 5829 11 98765-4321", "pedido 5829 [phone]", {"phone": 1}),
    # ... nor be swallowed by it ("90" is a BR collect-call prefix to phonenumbers)
    # A first name next to a phone is a person's (issue 26).
    ("Pagou R$ 199,90 11 98765-4321 (Ana)", "Pagou R$ 199,90 [phone] ([name])", {"phone": 1, "name": 1}),
    # phone, international
    ("Call +1 415-555-2671 after lunch.", "Call [phone] after lunch.", {"phone": 1}),
    ("UK office: +44 20 7946 0958.", "UK office: [phone].", {"phone": 1}),
    ("Her number is (415) 555-2671.", "Her number is [phone].", {"phone": 1}),
    ("or 415.555.2671 at home", "or [phone] at home", {"phone": 1}),
    ("Lisboa +351 912 345 678", "Lisboa [phone]", {"phone": 1}),
    ("desk +1 (415) 555-2671 x12 today", "desk [phone] today", {"phone": 1}),
    # an opening bracket the matcher swallows stays in the text
    ("Contato (+55 11 98765-4321) ok", "Contato ([phone]) ok", {"phone": 1}),
    # cpf
    ("CPF do titular: 123.456.789-09.", "CPF do titular: [cpf].", {"cpf": 1}),
    ("cpf 12345678909 confirmado", "cpf [cpf] confirmado", {"cpf": 1}),
    ("Her taxpayer id (CPF) is 390.533.447-05", "Her taxpayer id (CPF) is [cpf]", {"cpf": 1}),
    # cnpj
    ("CNPJ da loja: 12.345.678/0001-95", "CNPJ da loja: [cnpj]", {"cnpj": 1}),
    ("cnpj 12345678000195 ativo", "cnpj [cnpj] ativo", {"cnpj": 1}),
    ("Company CNPJ 16.727.230/0001-97.", "Company CNPJ [cnpj].", {"cnpj": 1}),
    # card
    (
        "Cartão 4111 1111 1111 1111, validade 12/28",
        "Cartão [card], validade 12/28",
        {"card": 1},
    ),
    ("card 5555-5555-5555-4444 was declined", "card [card] was declined", {"card": 1}),
    ("Amex 3782 822463 10005 ok", "Amex [card] ok", {"card": 1}),
    ("número do cartão 4111111111111111", "número do cartão [card]", {"card": 1}),
    ("card 4111 1111 1111 1111 12 parcelas", "card [card] 12 parcelas", {"card": 1}),
    # iban
    (
        "IBAN DE89 3704 0044 0532 0130 00 para reembolso",
        "IBAN [iban] para reembolso",
        {"iban": 1},
    ),
    ("refund to GB82WEST12345698765432 please", "refund to [iban] please", {"iban": 1}),
    ("conta BR15 0000 0000 0000 1093 2840 814 P2", "conta [iban]", {"iban": 1}),
    ("IBAN DE89 3704 0044 0532 0130 00 EUR", "IBAN [iban] EUR", {"iban": 1}),
]


@pytest.mark.parametrize(("text", "expected", "counts"), POSITIVE)
def test_positive(text: str, expected: str, counts: dict[str, int]) -> None:
    assert redact(text) == Redaction(text=expected, counts=counts)


@pytest.mark.skipif(not ALNUM_CNPJ_SUPPORTED, reason="python-stdnum predates the 2026 CNPJ")
def test_alphanumeric_cnpj() -> None:
    assert redact("novo CNPJ 12.ABC.345/01DE-35.") == Redaction(
        text="novo CNPJ [cnpj].", counts={"cnpj": 1}
    )


def test_valid_cpf_that_is_also_a_valid_phone_is_labelled_cpf() -> None:
    number = "119876543" + cpf_check_digits("119876543")
    # Non-vacuous: the phone detector alone would take this number.
    assert phonenumbers.is_valid_number(phonenumbers.parse(number, "BR"))
    assert redact(f"CPF {number}") == Redaction(text="CPF [cpf]", counts={"cpf": 1})


def test_iban_whose_digits_hold_a_card_number_is_labelled_iban() -> None:
    # Non-vacuous: "5979 1907 4833 78" inside it is a Luhn-valid, card-shaped number.
    assert iban.is_valid("DE46 3982 5979 1907 4833 78")
    assert luhn.is_valid("59791907483378")
    assert redact("IBAN DE46 3982 5979 1907 4833 78.") == Redaction(
        text="IBAN [iban].", counts={"iban": 1}
    )


def test_cnpj_that_also_passes_luhn_is_labelled_cnpj() -> None:
    assert cnpj.is_valid("40000000001935") and luhn.is_valid("40000000001935")
    assert redact("CNPJ 40000000001935") == Redaction(text="CNPJ [cnpj]", counts={"cnpj": 1})


def test_phone_that_passes_luhn_is_not_a_card() -> None:
    # 13 digits starting with 5 and Luhn-valid, but grouped like a phone, not a card.
    assert luhn.is_valid("5511987654309")
    assert redact("tel 55 11 98765 4309") == Redaction(text="tel [phone]", counts={"phone": 1})


def test_invalid_cpf_shaped_number_is_not_a_phone_either() -> None:
    # Non-vacuous: the digits are a valid Brazilian mobile, but the layout is a CPF's
    # and the check digits are wrong.
    assert not cpf.is_valid("119.876.543-21")
    assert phonenumbers.is_valid_number(phonenumbers.parse("11987654321", "BR"))
    assert redact("CPF 119.876.543-21") == Redaction(text="CPF 119.876.543-21", counts={})


def test_replacement_that_frees_an_earlier_kind_is_followed_up() -> None:
    # In one pass the card is glued to the phone ("," + digit) and is not taken; once
    # the phone is a placeholder the card stands alone. redact repeats until stable.
    assert redact("4111111111111111,11987654321") == Redaction(
        text="[card],[phone]", counts={"card": 1, "phone": 1}
    )


def test_a_raising_validator_fails_closed(monkeypatch: pytest.MonkeyPatch) -> None:
    # A validator bug must neither make redact raise nor let the value through: the
    # CPF-shaped number is redacted as if it were valid.
    def broken(number: str) -> bool:
        raise RuntimeError("validator bug")

    monkeypatch.setattr(cpf, "is_valid", broken)
    assert redact("CPF 123.456.789-09") == Redaction(text="CPF [cpf]", counts={"cpf": 1})


def test_counts_over_a_mixed_text() -> None:
    text = (
        "Cliente Ana (ana.souza@gmail.com, (11) 98765-4321 / +1 415-555-2671), "
        "CPF 123.456.789-09, empresa 12.345.678/0001-95, pagou com 4111 1111 1111 1111; "
        "reembolso no IBAN DE89 3704 0044 0532 0130 00. Outro e-mail: a@b.co."
    )
    result = redact(text)
    assert result.counts == {"email": 2, "phone": 2, "cpf": 1, "cnpj": 1, "card": 1, "iban": 1, "name": 1}
    assert result.text == (
        "Cliente [name] ([email], [phone] / [phone]), "
        "CPF [cpf], empresa [cnpj], pagou com [card]; "
        "reembolso no IBAN [iban]. Outro e-mail: [email]."
    )


# --------------------------------------------------------------------------- must survive

SURVIVE = [
    # CEPs and CEP ranges
    "CEP 13000-000",
    "Pedidos para o CEP 01310-100 saem hoje.",
    "CEPs 13000-13999 e 14000-14999 saem de Campinas.",
    "faixa 13xxx",
    "CEP 13000-000 a 13999-999",
    "faixa 13000000 a 13999999",
    # order numbers
    "#W4928371",
    "pedido 123456",
    "order 5829",
    "pedido 1234567890",
    "order #11987654321",
    "pedido nº 11987654321",
    "protocolo: 2134567890",
    # prices
    "R$ 199,90",
    "$1,250.00",
    "R$199",
    "R$ 1.234.567.890,00",
    "US$ 1,234,567,890",
    # dates and times
    "2026-08-24",
    "24/08/2026",
    "2026-08-24T18:02:11Z",
    "15:00",
    "2026-08-24 18:02:11",
    "24/08/2026 15:00",
    # percentages, quantities, durations
    "10% off, 12,5% de desconto",
    "50 units",
    "500 unidades",
    "1-2 business days",
    "2-3 dias úteis",
    # ids
    "reserva ZFA04Y",
    "user isabella_lopez_6490",
    "version 1.2.3 on 192.168.0.1",
    # check digits that fail
    "CPF 123.456.789-00",
    "CPF 12345678900",
    "CNPJ 12.345.678/0001-96",
    "card 4111 1111 1111 1112",
    "IBAN GB82 WEST 1234 5698 7654 33",
    # Luhn-valid, card-long, but no card issuer digit: an EAN-13 barcode
    "código de barras 7891000000021",
    # short nationwide service numbers (businesses, not people)
    "Central 4002-8922",
    # all of it at once
    "Orders to CEP range 13000-13999 ship from the Campinas DC in 1-2 business days; "
    "order #W4928371 (R$ 199,90, 50 units) on 2026-08-24T18:02:11Z by isabella_lopez_6490.",
]


@pytest.mark.parametrize("text", SURVIVE)
def test_survives(text: str) -> None:
    assert redact(text) == Redaction(text=text, counts={})


def test_invalid_numbers_in_the_survive_table_really_fail_their_checks() -> None:
    assert not cpf.is_valid("123.456.789-00")
    assert not cnpj.is_valid("12.345.678/0001-96")
    assert not luhn.is_valid("4111111111111112")
    assert not iban.is_valid("GB82 WEST 1234 5698 7654 33")
    assert luhn.is_valid("7891000000021")  # survives on its issuer digit, not on Luhn


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "CEP 13000-13999, tel (11) 98765-4321, pedido 1234567890",
            "CEP 13000-13999, tel [phone], pedido 1234567890",
        ),
        ("CEP 13000-000 (11) 98765-4321", "CEP 13000-000 [phone]"),
        ("faixa 13000-13999 11 98765-4321", "faixa 13000-13999 [phone]"),
        ("(11) 98765-4321 CEP 01310-100", "[phone] CEP 01310-100"),
        ("order 5829 +1 415-555-2671", "order 5829 [phone]"),
        ("pedido #W4928371 11 98765-4321", "pedido #W4928371 [phone]"),
        ("pedidos 1234567890 e 11987654321", "pedidos 1234567890 e [phone]"),
    ],
)
def test_phone_does_not_eat_cep_ranges_or_order_numbers(text: str, expected: str) -> None:
    assert redact(text) == Redaction(text=expected, counts={"phone": 1})


def test_order_guard_only_applies_after_an_order_word() -> None:
    # The guard is what keeps "pedido 1234567890" (a valid BR landline to phonenumbers).
    assert redact("ligue 1234567890").text == "ligue [phone]"
    assert redact("pedido 1234567890").text == "pedido 1234567890"
    assert redact("user ID 11987654321").text == "user ID 11987654321"


# --------------------------------------------------------------------------- properties

PII_FRAGMENTS = [
    "joana@exemplo.com.br",
    "(11) 98765-4321",
    "+55 11 98765-4321",
    "+1 415-555-2671",
    "123.456.789-09",
    "12345678909",
    "12.345.678/0001-95",
    "4111 1111 1111 1111",
    "DE89 3704 0044 0532 0130 00",
    "CEP 13000-000",
    "13000-13999",
    "R$ 199,90",
    "2026-08-24T18:02:11Z",
    "pedido",
    "#",
    "@",
    "[phone]",
    "[email]",
]
soup = st.lists(
    st.one_of(
        st.sampled_from(PII_FRAGMENTS),
        st.text(alphabet="0123456789 -./()+@,:#[]xabcDEGB\n", max_size=12),
    ),
    max_size=12,
).map("".join)


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(st.text(), soup))
@example("ab@cd.ef@gh.ij")
@example("11 98765-4321 98765-4321")
@example("4111 1111 1111 1111 1111 1111 1111 1111")
@example("4111111111111111,11987654321")
def test_idempotent_and_counts_match_placeholders(text: str) -> None:
    first = redact(text)
    second = redact(first.text)
    assert second == Redaction(text=first.text, counts={})
    assert all(n > 0 for n in first.counts.values())
    assert set(first.counts) <= set(PLACEHOLDERS)
    for kind, placeholder in PLACEHOLDERS.items():
        added = first.text.count(placeholder) - text.count(placeholder)
        assert added == first.counts.get(kind, 0)


LETTERS = string.ascii_letters + "áâãçéêíóôõúÁÇÉ"
words = st.lists(
    st.one_of(
        st.text(alphabet=LETTERS, min_size=1, max_size=10),
        st.sampled_from(["CPF", "CNPJ", "cartão", "card", "pedido", "order", "nº", "tel", "#"]),
    ),
    max_size=6,
).map(" ".join)
separators = st.sampled_from([" ", ", ", ": ", " (", "\n", " - ", " #"])
closers = st.sampled_from(["", ".", ",", ")", "!", ";"])


# Random words without the order words: after "pedido", "#", "nº"... a bare digit run is
# read as an order number, not a phone (by design, see
# test_order_guard_only_applies_after_an_order_word).
ORDER_WORDS = {
    *("pedido", "pedidos", "order", "orders", "ordem", "protocolo", "ticket", "chamado"),
    *("invoice", "fatura", "nota", "nf", "rastreio", "tracking", "reserva", "booking"),
    *("reservation", "id", "código", "codigo", "code", "número", "numero", "number", "nr"),
}
plain_words = st.lists(
    st.text(alphabet=LETTERS, min_size=1, max_size=10).filter(
        lambda w: w.lower() not in ORDER_WORDS
    ),
    max_size=6,
).map(" ".join)


def embedded(
    number: st.SearchStrategy[str],
    before: st.SearchStrategy[str] = words,
    separator: st.SearchStrategy[str] = separators,
) -> st.SearchStrategy[tuple[str, str]]:
    """(text, number) with the number somewhere in random words."""
    return st.tuples(before, separator, number, closers, words).map(
        lambda p: (f"{p[0]}{p[1]}{p[2]}{p[3]} {p[4]}", p[2])
    )


@st.composite
def valid_cpfs(draw: st.DrawFn) -> str:
    base = draw(st.text(alphabet=string.digits, min_size=9, max_size=9))
    assume(base != "000000000")
    number = base + cpf_check_digits(base)
    return cpf.format(number) if draw(st.booleans()) else number


@st.composite
def valid_cnpjs(draw: st.DrawFn) -> str:
    base = draw(st.text(alphabet=string.digits, min_size=12, max_size=12))
    assume(not base.startswith("000000000000"))
    number = base + cnpj.calc_check_digits(base)
    return cnpj.format(number) if draw(st.booleans()) else number


@st.composite
def valid_cards(draw: st.DrawFn) -> str:
    length = draw(st.integers(13, 19))
    first = draw(st.sampled_from("23456"))
    body = draw(st.text(alphabet=string.digits, min_size=length - 2, max_size=length - 2))
    number = first + body + luhn.calc_check_digit(first + body)
    sep = draw(st.sampled_from(["", " ", "-"]))
    if not sep:
        return number
    return sep.join(number[i : i + 4] for i in range(0, len(number), 4))


@settings(max_examples=200)
@given(embedded(valid_cpfs()))
def test_generated_valid_cpf_never_survives(case: tuple[str, str]) -> None:
    text, number = case
    assert cpf.is_valid(number)
    result = redact(text)
    assert number not in result.text
    assert not any(c.isdigit() for c in result.text)
    assert {k: v for k, v in result.counts.items() if k != "name"} == {"cpf": 1}  # capitalised words next to it: a name


@settings(max_examples=200)
@given(embedded(valid_cnpjs()))
def test_generated_valid_cnpj_never_survives(case: tuple[str, str]) -> None:
    text, number = case
    assert cnpj.is_valid(number)
    result = redact(text)
    assert number not in result.text
    assert not any(c.isdigit() for c in result.text)
    assert result.counts == {"cnpj": 1}


@settings(max_examples=300)
@given(embedded(valid_cards()))
def test_generated_valid_card_never_survives(case: tuple[str, str]) -> None:
    text, number = case
    assert luhn.is_valid(number.replace(" ", "").replace("-", ""))
    result = redact(text)
    assert number not in result.text
    assert not any(c.isdigit() for c in result.text)
    # A bare 14-digit number that also has valid CNPJ check digits is labelled CNPJ.
    kind = "cnpj" if number.isdigit() and cnpj.is_valid(number) else "card"
    assert {k: v for k, v in result.counts.items() if k != "name"} == {kind: 1}


BR_AREA_CODES = ["11", "21", "31", "41", "51", "61", "71", "81", "85", "91"]


@st.composite
def br_mobiles(draw: st.DrawFn) -> str:
    area = draw(st.sampled_from(BR_AREA_CODES))
    rest = draw(st.text(alphabet=string.digits, min_size=8, max_size=8))
    number = phonenumbers.parse(f"{area}9{rest}", "BR")
    assume(phonenumbers.is_valid_number(number))
    layout = draw(
        st.sampled_from(
            [
                f"({area}) 9{rest[:4]}-{rest[4:]}",
                f"{area} 9{rest[:4]}-{rest[4:]}",
                f"+55 {area} 9{rest[:4]}-{rest[4:]}",
                f"+55{area}9{rest}",
                f"{area}9{rest}",
            ]
        )
    )
    return layout


@settings(max_examples=200)
@given(embedded(br_mobiles(), plain_words, st.sampled_from([" ", ", ", ": ", " (", "\n"])))
def test_generated_brazilian_mobile_never_survives(case: tuple[str, str]) -> None:
    text, number = case
    result = redact(text)
    assert number not in result.text
    assert not any(c.isdigit() for c in result.text)
    # 11 bare digits with valid CPF check digits are a CPF first (by design); a first
    # name of the words around it is a person's name next to it (issue 26); a number right
    # after the word "RG" is taken as an RG (hypothesis found "RG 11 90000-0000").
    kinds = {k: v for k, v in result.counts.items() if k != "name"}
    assert kinds in ({"phone": 1}, {"cpf": 1}) or (kinds == {"rg": 1} and re.search(r"(?i)\brg\W*$",
                                                                                   text[:text.index(number)]))


# ----------------------------------------------------- long inputs (speed lives in `bench`)


def test_two_kilobytes_of_mixed_text_counts_every_item() -> None:
    sentence = (
        "Cliente isabella_lopez_6490 (joana@exemplo.com.br, (11) 98765-4321) pediu #W4928371 "
        "em 2026-08-24T18:02:11Z por R$ 199,90 para o CEP 13000-000; frete 1-2 dias úteis. "
    )
    text = (sentence * (2048 // len(sentence) + 1))[:2048]
    assert redact(text).counts == {"email": text.count("@"), "phone": text.count("98765-4321")}


def test_two_kilobytes_of_short_numbers_redacts_nothing() -> None:
    # One long stretch of small numbers: every window is skipped before the matcher.
    text = " ".join(str(n * 37 % 100) for n in range(1000))[:2048]
    assert redact(text).counts == {}


@pytest.mark.parametrize(("text", "redacted"), [
    ("Email maria@example.com. No refunds on sale items.", "Email [email]. No refunds on sale items."),
    ("Write to maria@example.com. Refunds take 5 days.", "Write to [email]. Refunds take 5 days."),
    ("ana @ gmail . com", "[email]"),  # a dot spaced out on both sides is still the address's
])
def test_a_sentence_end_after_an_address_is_not_part_of_it(text: str, redacted: str) -> None:
    assert redact(text).text == redacted


@pytest.mark.parametrize("text", [
    "Chave pix do cliente: 123e4567-e89b-12d3-a456-426614174000.",
    "Pix key of the customer: 123e4567-e89b-12d3-a456-426614174000",
    "A chave Pix da cliente é 123e4567-e89b-12d3-a456-426614174000.",
])
def test_a_pix_cue_that_says_whose_key_it_is_still_cues_the_key(text: str) -> None:
    """A newcomer's finding: a UUID of another version than 4 after "Chave pix do cliente:"
    was kept (only "chave pix:" itself cued a key of any kind)."""
    assert "123e4567" not in redact(text).text


@pytest.mark.parametrize(("text", "kind"), [
    # hypothesis found both: an RG cue before a card cut the card's digits ("06" survived)
    ("R G 2000 0000 0000 06 ", "card"), ("R G 2000000000008 ", "card"),
    # a cued number that runs on is taken whole, never in part
    ("RG 1234 5678 9012 3456 7890 12", "rg"), ("RG 12.345.678-9", "rg"),
])
def test_a_cued_rg_never_leaves_digits_of_its_number_behind(text: str, kind: str) -> None:
    result = redact(text)
    assert not any(c.isdigit() for c in result.text) and result.counts == {kind: 1}
