"""Personal data in everyday formats: obfuscated e-mails, any separator, any case."""

from __future__ import annotations

import string

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from stdnum import iban, luhn
from stdnum.br import cnpj, cpf

from insika_knowledge.privacy.redact import redact

SEPARATORS = [" ", ".", "-", "/", "\u00a0"]


@pytest.mark.parametrize(
    "text",
    [
        "ana at gmail dot com",
        "ana [at] gmail [dot] com",
        "ana (at) gmail (dot) com",
        "ana(at)gmail(dot)com",
        "ana {at} gmail {dot} com {dot} br",
        "ana @ gmail . com",
        "ana @gmail.com",
        "ana arroba gmail ponto com ponto br",
        "ana.souza AT empresa DOT com DOT br",
        "ana [@] gmail [.] com",
    ],
)
def test_obfuscated_emails_are_redacted(text: str) -> None:
    result = redact(f"Escreva para {text} hoje.")
    assert result.counts == {"email": 1}, result
    assert result.text == "Escreva para [email] hoje."


@pytest.mark.parametrize(
    "text",
    [
        "We meet at noon.",
        "Open at 9 am, close at 6 pm.",
        "Chegamos às 10, saímos às 12.",
        "Look at the dot in the logo.",
        "the price is 5 dot 5 percent",
    ],
)
def test_prose_with_at_and_dot_survives(text: str) -> None:
    assert redact(text).text == text


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("CPF 123 456 789 09", "cpf"),
        ("CPF 123.456.789 09", "cpf"),
        ("CPF 123/456/789-09", "cpf"),
        ("CPF 123-456-789-09", "cpf"),
        ("CNPJ 12 345 678 0001 95", "cnpj"),
        ("CNPJ 12-345-678/0001.95", "cnpj"),
        ("cartão 4111.1111.1111.1111", "card"),
        ("cartão 4111/1111/1111/1111", "card"),
        ("IBAN de89 3704 0044 0532 0130 00", "iban"),
        ("IBAN de89370400440532013000", "iban"),
    ],
)
def test_documents_with_any_separator(text: str, kind: str) -> None:
    result = redact(text)
    assert result.counts == {kind: 1}
    assert not any(c.isdigit() for c in result.text)


def test_document_inside_a_longer_number_is_not_cut_out() -> None:
    # Joined by hard separators into one 15-digit number: not a CPF, left alone.
    assert redact("ref 123.456.789-09/2026").counts == {}


def _spaced(digits: str, layout: list[int], sep: str) -> str:
    parts, at = [], 0
    for n in layout:
        parts.append(digits[at : at + n])
        at += n
    return sep.join(parts)


@st.composite
def formatted_cpfs(draw: st.DrawFn) -> str:
    base = draw(st.text(alphabet=string.digits, min_size=9, max_size=9))
    assume(len(set(base)) > 1)
    number = cpf.compact(base + cpf._calc_check_digits(base))  # noqa: SLF001
    assume(cpf.is_valid(number))
    layout = draw(st.sampled_from([[3, 3, 3, 2], [9, 2], [11], [3, 3, 5], [6, 3, 2]]))
    return _spaced(number, layout, draw(st.sampled_from(SEPARATORS)))


@st.composite
def formatted_cnpjs(draw: st.DrawFn) -> str:
    base = draw(st.text(alphabet=string.digits, min_size=12, max_size=12))
    assume(len(set(base)) > 1)
    number = base + cnpj.calc_check_digits(base)
    layout = draw(st.sampled_from([[2, 3, 3, 4, 2], [8, 4, 2], [14], [12, 2]]))
    return _spaced(number, layout, draw(st.sampled_from(SEPARATORS)))


@st.composite
def formatted_cards(draw: st.DrawFn) -> str:
    length = draw(st.sampled_from([15, 16]))
    first = draw(st.sampled_from("2345"))
    body = draw(st.text(alphabet=string.digits, min_size=length - 2, max_size=length - 2))
    number = first + body + luhn.calc_check_digit(first + body)
    layout = [4, 6, 5] if length == 15 else [4, 4, 4, 4]
    return _spaced(number, layout, draw(st.sampled_from(SEPARATORS)))


GOOD_IBANS = ["DE89370400440532013000", "GB82WEST12345698765432", "NL91ABNA0417164300", "BR1800360305000010009795493C1"]


@st.composite
def formatted_ibans(draw: st.DrawFn) -> str:
    number = draw(st.sampled_from(GOOD_IBANS))
    assert iban.is_valid(number)
    grouped = " ".join(number[i : i + 4] for i in range(0, len(number), 4)) if draw(st.booleans()) else number
    return grouped.lower() if draw(st.booleans()) else grouped


@settings(max_examples=150)
@given(
    st.one_of(formatted_cpfs(), formatted_cnpjs(), formatted_cards(), formatted_ibans()),
    st.sampled_from(["", ".", ",", ";"]),
)
def test_generated_documents_in_any_format_never_survive(value: str, closer: str) -> None:
    result = redact(f"O cliente informou {value}{closer} e pediu reembolso.")
    compact = "".join(ch for ch in value if ch.isalnum())
    stored = "".join(ch for ch in result.text if ch.isalnum())
    assert compact.lower() not in stored.lower()
    assert value not in result.text


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("joana＠gmail．com", "email"),  # full-width @ and dot
        ("joana\u200b@gmail.com", "email"),  # a zero-width space inside
        ("joana%40gmail.com", "email"),  # percent-encoded @
        ("CPF 123.456.789 - 09", "cpf"),
        ("cartão ４１１１ １１１１ １１１１ １１１１", "card"),  # full-width digits
        ("cartão 4111  1111  1111  1111", "card"),  # double spaces
        ("cartão 4111_1111_1111_1111", "card"),
        ("IBAN DE89-3704-0044-0532-0130-00", "iban"),
        ("IBAN DE89  3704  0044  0532  0130  00", "iban"),
        ("CPF 529.982.\u00ad247-25", "cpf"),  # a soft hyphen inside
        ("CPF 529.982.247\U000e0020-25", "cpf"),  # an invisible tag character inside
        ("CPF \u0665\u0662\u0669.\u0669\u0668\u0662.\u0662\u0664\u0667-\u0662\u0665", "cpf"),  # Arabic-Indic digits
        ("CPF 529,982,247-25", "cpf"),  # commas between the groups
        ("joana@gmail\u2024com", "email"),  # a one-dot leader for the dot
    ],
)
def test_masked_and_oddly_spaced_data_is_redacted(text: str, kind: str) -> None:
    result = redact(text)
    assert result.counts == {kind: 1}, result


@pytest.mark.parametrize(("text", "secret"), [
    # a mobile without its area code: 9 digits opening with 9, as Brazilians write it
    ("meu celular é 98765-4321, pode ligar", "98765-4321"),
    ("me chama no 9 8765-4321", "8765-4321"),
    ("Call me at 99123 4567 after six", "99123 4567"),
    # any local number right after a word that names a phone
    ("whats 987654321", "987654321"),
    ("meu fixo é 3456-7890", "3456-7890"),
    ("tel.: 2345 6789", "2345 6789"),
    # found by a newcomer's attack: other dashes and groupings, more ways to name one
    ("meu celular é 98765\u20134321", "4321"),
    ("whats 3456\u20137890", "7890"),
    ("9-8765-4321", "8765"),
    ("meu fixo é o 3456-7890", "3456"),
    ("celular do meu marido 3456-7890", "3456"),
    ("you can reach me at 3456-7890", "3456"),
])
def test_a_phone_without_its_area_code_is_redacted(text: str, secret: str) -> None:
    redacted = redact(text)
    assert secret not in redacted.text and "[phone]" in redacted.text, redacted.text


@pytest.mark.parametrize("text", [
    "Pedido 12345678 chegou?",  # an order number: no phone word, not a mobile's shape
    "O frete para o CEP 13083-970 é grátis",
    "Protocolo 2024-0001 aberto",
    "Parcelamos em até 10x de R$ 1234,56",
    # found by a newcomer's attack: hours, periods, quantities and codes after a phone word or
    # in a mobile's shape
    "Atendimento por telefone 0900-1800",
    "Capinha para celular 2023-2024",
    "Plano celular 5000-6000 minutos",
    "Preço fixo 1200-1500 reais",
    "SKU 90210-1234",
    "Ship to ZIP 94105-1234",
    "Código do produto: 95432-1001",
    "Cupom 91234-5678 vale 10%",
    "Mercedes CLS 450 available",
    "Prazos: QI 5 dias",
    # a second attack: a tracking code, and Brazil's nationwide business numbers
    "Código de rastreio 98765-4321",
    "Central de atendimento: 4004-0001",
])
def test_numbers_that_are_no_phone_are_kept(text: str) -> None:
    assert redact(text).text == text


@pytest.mark.parametrize(("text", "secret"), [
    ("Moro na Rua das Flores, s/n, Centro", "Flores"),
    ("Entrega na Avenida Brasil s/nº", "Brasil"),
    ("Meu endereço é SQS 308 Bloco C apto 402", "308"),
    ("fico na SHIN QI 5 conjunto 3 casa 12", "QI 5"),
    ("Rua das Flores, sem número", "Flores"),
    ("qnm 34 conjunto f casa 10", "34"),
    ("SQS308 BL C AP 402", "402"),
    ("Sítio Boa Vista, sem número, zona rural", "Boa Vista"),
])
def test_an_address_without_a_street_number_is_redacted(text: str, secret: str) -> None:
    redacted = redact(text)
    assert secret not in redacted.text and "[address]" in redacted.text, redacted.text


@pytest.mark.parametrize("text", [
    "A loja de rua da Paulista fecha às 20h de segunda a sábado.",  # a fresh helper's set: the hours were lost
    "A unidade da Avenida Paulista abre às 9h30.",
    "Na Rua Augusta a loja fica aberta até 22:00.",
    "A feira da Praça da Sé acontece das 8 horas ao meio-dia.",
    # an attack: hours said without an "h"
    "A unidade da Rua Teodoro Sampaio fecha às 20 de segunda a sábado.",
    "A loja da Rua Augusta fecha às 22 hrs.",
    "Na Rua Oscar Freire abrimos de 9 às 18.",
    "A loja da Rua Harmonia fecha às 8 da noite.",
])
def test_a_time_of_day_after_a_street_name_is_no_street_number(text: str) -> None:
    assert redact(text).text == text


@pytest.mark.parametrize(("text", "secret"), [
    ("Moro na Rua Augusta 20, apto 3", "Augusta 20"),
    ("Entrega na Rua das Flores, 2000", "2000"),
    ("fica na Avenida Paulista 1578", "1578"),
])
def test_a_street_number_is_still_redacted_beside_the_time_rule(text: str, secret: str) -> None:
    redacted = redact(text)
    assert secret not in redacted.text and "[address]" in redacted.text, redacted.text


@pytest.mark.parametrize("said", ["Nosso SAC: (11) 98765-4321.", "Nosso WhatsApp é 98765-4321."])
def test_a_business_mobile_is_kept_whole_with_or_without_its_area_code(said: str) -> None:
    # found by a newcomer's attack: the whole number was kept and its last nine digits redacted
    from insika_knowledge.privacy.redact import kept_contacts

    assert redact(said, kept_contacts([("agent", said)])).text == said


def test_a_business_number_keeps_only_itself() -> None:
    # found by a second attack: the key was the last ten digits, so a customer's number in
    # another area code ending in the same digit was kept as the business's
    from insika_knowledge.privacy.redact import kept_contacts

    ours = kept_contacts([("agent", "Nosso WhatsApp é (11) 98765-4321.")])
    assert redact("Chame no 98765-4321", ours).text == "Chame no 98765-4321"  # ours, without the area code
    assert redact("Meu celular é (21) 98765-4321", ours).text == "Meu celular é [phone]"


@pytest.mark.parametrize(("text", "name"), [
    ("Cliente Ana Souza, CPF 123.456.789-09", "Ana Souza"),  # a newcomer's attack: the label in capitals
    ("Cliente Ana Souza, Tel: (11) 98765-4321", "Ana Souza"),
    ("Customer John Smith, Phone 555-123-4567", "John Smith"),
])
def test_a_name_before_a_capitalised_contact_label_is_redacted(text: str, name: str) -> None:
    redacted = redact(text)
    assert name not in redacted.text and "[name]" in redacted.text, redacted.text
