"""Issue 26: personal data of the new kinds reaches no stored byte; business contacts survive.

Each example proposes a concept carrying one value (in its name, description and body)
through the real write path (screening, redaction, trust, consolidation, SQLite in WAL
mode), a second sighting of it (a version), a conflict, then exports the agent. No byte
of the database file, its WAL, or the exports holds the value, in any of its spellings.
"""

from __future__ import annotations

import datetime
import re
import uuid
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from stdnum import luhn
from stdnum.us import ssn as us_ssn

from insika_knowledge.config import load_config
from insika_knowledge.export import export
from insika_knowledge.learn import learn_turn
from insika_knowledge.privacy.more import boleto_valid, rg_sp_valid
from insika_knowledge.privacy.redact import Redaction, kept_contacts, redact, redact_name
from insika_knowledge.store import SQLiteStore

AGENT = "loja"
CONFIG = load_config({"types": ["fact", "policy", "procedure", "objection"]})
FIRST = ("Maria", "João", "Ana", "Pedro", "Juliana", "Carlos", "Fernanda", "Lucas", "Mary", "John")
LAST = ("Souza", "Silva", "Oliveira", "Pereira", "Costa", "Almeida", "Smith", "Johnson", "Carvalho")
STREETS = ("Rua", "R.", "Avenida", "Av.", "Alameda", "Travessa", "Estrada", "Praça")
STREET_NAMES = ("das Flores", "Augusta", "Paulista", "XV de Novembro", "Dom Pedro II", "Santos Dumont",
                "Barão de Itapetininga", "do Ouvidor")
EN_NAMES = ("Oak", "Maple", "Pennsylvania", "Sunset", "Elm", "Main", "Park")
EN_SUFFIXES = ("Street", "St.", "Avenue", "Ave", "Road", "Blvd", "Lane", "Drive")


def _rg_sp(digits: str) -> str:
    check = next(c for c in "0123456789X" if rg_sp_valid(digits, c))
    return f"{digits[:2]}.{digits[2:5]}.{digits[5:8]}-{check}"


def _mod11(digits: str, low: int) -> int:
    total = sum(int(d) * (2 + i % 8) for i, d in enumerate(reversed(digits)))
    rest = 11 - total % 11
    return low if rest in (0, 10, 11) else rest


def _boleto(bank: str, free: str, factor_value: str) -> str:
    """A bank boleto's digitable line whose field and general digits check."""
    general = _mod11(bank + "9" + factor_value + free, 1)
    f1 = bank + "9" + free[:5]
    f2, f3 = free[5:15], free[15:25]
    fields = [f + luhn.calc_check_digit(f) for f in (f1, f2, f3)]
    line = "".join(fields) + str(general) + factor_value
    assert boleto_valid(line)
    return f"{fields[0][:5]}.{fields[0][5:]} {fields[1][:5]}.{fields[1][5:]} {fields[2][:5]}.{fields[2][5:]} " \
           f"{general} {factor_value}"


digits = st.text("0123456789", min_size=1, max_size=1)
rgs = st.one_of(
    st.text("0123456789", min_size=8, max_size=8).map(_rg_sp),
    st.tuples(st.sampled_from(["RG", "RG nº", "identidade", "R.G.:"]),
              st.text("0123456789", min_size=7, max_size=10)).map(lambda t: (t[0], t[1])),
)
pix_keys = st.one_of(st.uuids(version=4).map(str), st.uuids(version=4).map(lambda u: str(u).upper()),
                     st.uuids(version=4).map(lambda u: u.hex))
boletos = st.builds(_boleto, st.text("0123456789", min_size=3, max_size=3),
                    st.text("0123456789", min_size=25, max_size=25),
                    st.text("0123456789", min_size=14, max_size=14))
br_addresses = st.builds(lambda t, n, num, comp: f"{t} {n}, {num}{comp}", st.sampled_from(STREETS),
                         st.sampled_from(STREET_NAMES), st.integers(1, 9999),
                         st.sampled_from(["", ", apto 42", " - casa 2", ", bloco B"]))
en_addresses = st.builds(lambda num, n, s, apt: f"{num} {n} {s}{apt}", st.integers(1, 99999),
                         st.sampled_from(EN_NAMES), st.sampled_from(EN_SUFFIXES),
                         st.sampled_from(["", ", Apt 4B", " Suite 210"]))
names_with_contacts = st.builds(lambda f, s, how: (f"{f} {s}", how.format(name=f"{f} {s}")),
                                st.sampled_from(FIRST), st.sampled_from(LAST),
                                st.sampled_from(["{name}, tel. (11) 98765-4321", "{name} mora na Rua Augusta, 1500",
                                                 "{name} (ana.lima@gmail.com)", "{name}: 42 Oak Street",
                                                 "Contato: {name} - (21) 99876-5432"]))


def _spellings(value: str) -> list[str]:
    """The value as written, and its digits alone when it has enough of them to identify."""
    found = [value]
    only = "".join(c for c in value if c.isdigit())
    if len(only) >= 7:
        found.append(only)
    return found


def _stored_bytes(folder: Path) -> bytes:
    return b"".join(p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file())


class _Model:
    def __init__(self, items: list[dict[str, Any]]) -> None:
        self.items = items

    def propose(self, request: Any) -> list[dict[str, Any]]:
        return [dict(i) for i in self.items]

    def merge(self, request: Any) -> Any:
        raise RuntimeError("no merge model")


def _learn_and_export(tmp: Path, text: str, slug: str) -> bytes:
    store = SQLiteStore(tmp / "tenant.db")
    try:
        said = [{"role": "user", "content": f"Meus dados: {text}"},
                {"role": "assistant", "content": f"Anotado para o pedido: {text}"}]
        first = {"name": f"entrega-{slug}", "type": "fact", "description": f"Entrega para {text}.",
                 "body": f"O pedido vai para {text}. Dados: {text}."}
        again = {**first, "body": f"O pedido agora vai para {text} amanhã."}
        for session, item in (("s1", first), ("s2", first), ("s3", again)):
            learn_turn(store, AGENT, CONFIG, _Model([item]), session_id=session, turn_id="t", messages=said)
        for fmt in ("md", "json", "jsonl", "graphml"):
            export(store, AGENT, tmp / f"out-{fmt}", fmt)  # type: ignore[arg-type]
    finally:
        store.close()
    return _stored_bytes(tmp)


SETTINGS = settings(max_examples=20, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


@pytest.mark.parametrize("kind", ["rg", "pix", "boleto", "br_address", "en_address", "name"])
@SETTINGS
@given(data=st.data())
def test_no_value_of_the_new_kinds_reaches_any_stored_byte(tmp_path_factory: pytest.TempPathFactory,
                                                           kind: str, data: st.DataObject) -> None:
    strategy = {"rg": rgs, "pix": pix_keys, "boleto": boletos, "br_address": br_addresses,
                "en_address": en_addresses, "name": names_with_contacts}[kind]
    drawn = data.draw(strategy)
    if kind == "rg" and isinstance(drawn, tuple):
        secret, text = drawn[1], f"{drawn[0]} {drawn[1]}"
    elif kind == "name":
        secret, text = drawn
    else:
        secret = text = str(drawn)
    slug = "".join(c if c.isalnum() else "-" for c in text.lower())[:40]
    stored = _learn_and_export(tmp_path_factory.mktemp(kind), text, slug)
    assert stored, "nothing was written"
    for spelling in _spellings(secret):
        assert spelling.encode("utf-8") not in stored, (kind, spelling)
        assert spelling.lower().encode("utf-8") not in stored.lower(), (kind, spelling)


ips = st.one_of(
    st.tuples(st.sampled_from(["Meu IP é", "IP address:", "endereço de IP", "my IP is"]),
              st.ip_addresses(v=4).filter(lambda a: a.is_global).map(str)),
    st.tuples(st.sampled_from(["", "acesso de "]), st.ip_addresses(v=6).filter(lambda a: a.is_global).map(str)),
)
_MONTHS_EN = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
              "November", "December")
birth_dates = st.tuples(
    st.sampled_from(["Data de nascimento:", "nasci em", "DOB:", "date of birth", "born on", "nascida em"]),
    st.dates(min_value=datetime.date(1930, 1, 1), max_value=datetime.date(2010, 12, 31)),
    st.sampled_from(["{d:%d/%m/%Y}", "{d:%Y-%m-%d}", "{month} {d.day}, {d.year}"]),
).map(lambda t: (t[0], t[2].format(d=t[1], month=_MONTHS_EN[t[1].month - 1])))
voter_ids = st.tuples(st.sampled_from(["título de eleitor", "Título eleitoral nº", "voter id:"]),
                      st.text("0123456789", min_size=12, max_size=12),
                      st.booleans()).map(lambda t: (t[0], f"{t[1][:4]} {t[1][4:8]} {t[1][8:]}" if t[2] else t[1]))
passwords = st.tuples(st.sampled_from(["minha senha é", "my password is", "a senha do app é", "my PIN is"]),
                      st.from_regex(r"[a-z]{3,8}[0-9]{2,4}", fullmatch=True))
#: US SSNs: any issued area (001-665, 667-899), group and serial, after a cue in any
#: grouping, or dashed without one (then one python-stdnum accepts: not a published example).
ssns = st.tuples(st.integers(1, 899).filter(lambda a: a != 666), st.integers(1, 99), st.integers(1, 9999),
                 st.sampled_from(["", "SSN", "social security number:", "my SSN is"]),
                 st.sampled_from(["-", " ", ""])).map(
    lambda t: (t[3], f"{t[0]:03d}{t[4]}{t[1]:02d}{t[4]}{t[2]:04d}" if t[3] else f"{t[0]:03d}-{t[1]:02d}-{t[2]:04d}")
).filter(lambda t: bool(t[0]) or us_ssn.is_valid(t[1]))


@pytest.mark.parametrize("kind", ["ip", "birth_date", "voter_id", "password", "ssn"])
@SETTINGS
@given(data=st.data())
def test_no_value_known_by_its_cue_reaches_any_stored_byte(tmp_path_factory: pytest.TempPathFactory,
                                                             kind: str, data: st.DataObject) -> None:
    """An IP address, a date of birth, a voter id and a password said in prose (the last
    note's findings) reach no stored byte: the name is proposed as a model writes it."""
    cue, secret = data.draw({"ip": ips, "birth_date": birth_dates, "voter_id": voter_ids,
                             "password": passwords, "ssn": ssns}[kind])
    text = f"{cue} {secret}".strip()
    stored = _learn_and_export(tmp_path_factory.mktemp(kind), text, f"Dados {text}")
    assert stored, "nothing was written"
    for spelling in _spellings(secret):
        assert spelling.encode("utf-8") not in stored, (kind, spelling)
        assert spelling.lower().encode("utf-8") not in stored.lower(), (kind, spelling)


@pytest.mark.parametrize("kept", [
    "A promoção vai até 12/03/2025.", "O aniversário da loja é 12 de março.", "Use a versão 2.4.1.0 do app.",
    "A reunião é às 10:30:00.", "A senha é enviada por SMS.", "Password is required.", "O pedido 12.345.678-9 saiu.",
    "Pix: 5% de desconto.", "Order 123e4567-e89b-12d3-a456-426614174000 shipped.",
    "The password is case-sensitive.", "Linha Nascimento 2025 chega dia 12/03/2025", "Birthday sale: March 12, 2025",
    "Nota fiscal nº 1234 5678 9012", "Kit Nascimento do Bebê R$ 199", "a senha deve ter 8 caracteres",
    "Password: must contain at least one symbol.", "Senha: mínimo de oito caracteres.",
])
def test_what_only_looks_like_a_cued_datum_is_kept(kept: str) -> None:
    from insika_knowledge.privacy import scrub

    assert redact(scrub(kept)).text == kept


@pytest.mark.parametrize(("said", "placeholder"), [
    ("Minha chave pix aleatória é 123e4567-e89b-12d3-a456-426614174000.", "[pix]"),  # a version-1 UUID
    ("Segue a chave 123e4567-e89b-12d3-a456-426614174000 para o pix.", "[pix]"),
    ("Manda o doc 12.345.678-0, por favor.", "[rg]"),  # its digit does not check
    ("Meu IP é 187.45.23.101.", "[ip]"),  # was read as a phone
    # an attack's spellings: informal cues, whose it is, ordinals, dotted voter ids
    ("dt nasc 05/11/1979", "[birth_date]"), ("a data de nascimento dela é 30/06/1995", "[birth_date]"),
    ("DOB: 12th March 1985", "[birth_date]"), ("D.O.B. 07/04/1990", "[birth_date]"),
    ("born on the 3rd of January, 2001", "[birth_date]"), ("nasci 12/03/1985 e quero atualizar", "[birth_date]"),
    ("meu titulo eh 876543210221", "[voter_id]"), ("Título: 2145.3697.0116", "[voter_id]"),
    ("minha senha eh abc123", "<SECRET>"), ("a senha nova é Brasil2024!", "<SECRET>"),
    ("senha atual: qwerty789, senha nova: Qwerty!790", "senha nova: <SECRET>"), ("pin code is 0492", "<SECRET>"),
])
def test_the_last_notes_spellings_are_redacted(said: str, placeholder: str) -> None:
    from insika_knowledge.privacy import scrub

    assert placeholder in redact(scrub(said)).text


def test_a_business_published_number_survives_and_a_customers_does_not(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "tenant.db")
    said = [{"role": "user", "content": "Qual o telefone de vocês? O meu é (11) 98765-4321."},
            {"role": "assistant", "content": "Nosso SAC atende no (11) 3456-7890 e no 0800 723 4567."}]
    item = {"name": "telefones-sac", "type": "fact", "description": "Telefones do SAC.",
            "body": "O SAC atende no (11) 3456-7890 e no 0800 723 4567. Cliente: (11) 98765-4321."}
    learn_turn(store, AGENT, CONFIG, _Model([item]), session_id="s1", turn_id="t", messages=said)
    body = store.get(AGENT, "telefones-sac").concept.body  # type: ignore[union-attr]
    store.close()
    assert "(11) 3456-7890" in body and "0800 723 4567" in body
    assert "98765-4321" not in body and "[phone]" in body


def test_a_number_the_customer_wrote_is_never_the_business_s_even_if_the_agent_repeats_it() -> None:
    keep = kept_contacts([("customer", "me liga no (11) 98765-4321"),
                          ("agent", "Nosso atendimento vai te ligar no (11) 98765-4321.")])
    assert redact("Ligar no (11) 98765-4321.", keep).text == "Ligar no [phone]."


@pytest.mark.parametrize("said", [
    # the business repeats the customer's own contacts: a cue word inside the address, or a
    # generic one elsewhere in the sentence, does not make them the business's
    "Anotei seu e-mail maria.loja@gmail.com e seu celular (11) 98765-4321 para o reembolso.",
    "Para o atendimento, confirmei seu celular (11) 98765-4321 e seu e-mail maria.souza@gmail.com.",
    "For support, we have your phone: (415) 555-0132 and your email mary.store@gmail.com.",
])
def test_the_customers_contacts_repeated_by_the_business_are_not_kept(said: str) -> None:
    keep = kept_contacts([("customer", "Quero meu reembolso."), ("agent", said)])
    assert keep == frozenset()
    assert "@" not in redact(said, keep).text and "98765" not in redact(said, keep).text


_PUBLISHED = "(11) 91234-5678"


@pytest.mark.parametrize("text", [
    f"Bia's phone is {_PUBLISHED}.", "Bia's phone is +55 11 91234-5678 and her email is bia@gmail.com.",
    f"O celular dela é {_PUBLISHED}.", "Contato da Bia: seu e-mail bia@gmail.com.",
    # a second attacker's phrasings
    f"O celular da Bia é {_PUBLISHED}.", f"O WhatsApp do João: {_PUBLISHED}.", f"Celular da Bia Souza: {_PUBLISHED}.",
    f"Meu celular é {_PUBLISHED}.", f"My phone is {_PUBLISHED}.", f"O telefone pessoal da cliente é {_PUBLISHED}.",
    f"Call Bia at {_PUBLISHED}.", f"Reach John on {_PUBLISHED}.", f"Contact Ana: {_PUBLISHED}.",
    f"Bia\u00b4s phone is {_PUBLISHED}.", f"Bia's cell phone number is {_PUBLISHED}.",
    f"The phone of the customer is {_PUBLISHED}.", "Ana's personal e-mail address is bia@gmail.com.",
    "E-mail pessoal da Bia: bia@gmail.com.",
])
def test_a_published_contact_the_claim_gives_as_a_persons_is_redacted(text: str) -> None:
    """An attacker's finding: over MCP the caller quoted itself publishing a contact ("Fale
    conosco: ..."), then proposed it as a person's ("Bia's phone is ..."): it was stored."""
    keep = kept_contacts([("agent", f"Fale conosco: {_PUBLISHED}, bia@gmail.com")])
    assert keep == frozenset({"11912345678", "bia@gmail.com"})
    redacted = redact(text, keep).text
    assert "91234" not in redacted and "bia@" not in redacted, redacted


@pytest.mark.parametrize("text", [
    f"Fale conosco: {_PUBLISHED} ou bia@gmail.com.", f"The store's phone is {_PUBLISHED}.",
    # a second attacker's: the first rule took these business contacts for a person's
    "Envie suas fotos para bia@gmail.com.", f"Tire suas dúvidas: {_PUBLISHED}.", f"Faça seu pedido: {_PUBLISHED}.",
    f"Para rastrear seu pedido: {_PUBLISHED}.", "Send your photos to bia@gmail.com.",
    f"McDonald's support line: {_PUBLISHED}.", f"Here's the number: {_PUBLISHED}.", f"Need help? It's {_PUBLISHED}.",
    f"Call us at {_PUBLISHED}.", f"WhatsApp da Central: {_PUBLISHED}.", f"Telefone da Loja Aurora: {_PUBLISHED}.",
    f"Contact Support: {_PUBLISHED}.", f"Ligue para a loja: {_PUBLISHED}.",
])
def test_a_published_contact_offered_as_the_business_s_is_kept(text: str) -> None:
    keep = kept_contacts([("agent", f"Fale conosco: {_PUBLISHED}, bia@gmail.com")])
    assert redact(text, keep).text == text


def test_a_business_contact_offered_as_its_own_is_still_kept() -> None:
    said = "Nosso atendimento: (11) 3456-7890 ou sac@lojaexemplo.com.br."
    keep = kept_contacts([("customer", "Como falo com vocês?"), ("agent", said)])
    assert redact(said, keep).text == said


@pytest.mark.parametrize("text", [
    "Fernanda Lima <fernanda.lima@gmail.com>",
    "Fernanda Lima / (11) 98765-4321",
    "FERNANDA LIMA, (11) 98765-4321",
])
def test_a_persons_name_in_capitals_or_before_a_bracket_or_slash_is_redacted(text: str) -> None:
    assert "Fernanda" not in redact(text).text and "FERNANDA" not in redact(text).text


def test_a_business_address_after_an_abbreviated_avenue_is_still_the_business(tmp_path: Path) -> None:
    said = "Nossa loja fica na Av. Paulista, 1000, loja 12."
    keep = kept_contacts([("customer", "Onde fica a loja?"), ("agent", said)])
    assert redact(said, keep).text == said


@pytest.mark.parametrize(("text", "kept", "gone"), [
    ("Entrega em São Paulo, Rua Augusta, 1500.", "São Paulo", "1500"),
    ("Our store in New York, 350 Fifth Avenue, opens at 9.", "New York", "350 Fifth"),
    ("Maria Souza, Rua Augusta, 1500.", None, "Maria Souza"),
    ("O endereço de Maria Souza: Rua Augusta, 1500.", None, "Maria Souza"),
])
def test_a_place_named_before_an_address_is_kept_and_a_persons_name_is_not(text: str, kept: str | None,
                                                                             gone: str) -> None:
    out = redact(text).text
    assert gone not in out, out
    assert kept is None or kept in out, out


@pytest.mark.parametrize("text", [
    "Parking entrance on Rua Augusta.",  # a street, no number: a place
    "Lisboa +351 912 345 678",  # a city next to a phone keeps its name
    "Orders to CEPs 13000-13999 ship in 1-2 business days.",
    "Pix payments get 5% off.",
    "The boleto is due in 3 business days.",
])
def test_business_values_and_places_are_kept(text: str) -> None:
    kept = redact(text).text
    for word in ("Augusta", "Lisboa", "13000-13999", "Pix", "boleto"):
        if word in text:
            assert word in kept


@pytest.mark.parametrize("cue", ["chave aleatória", "minha chave aleatoria é", "random key:", "chave pix"])
def test_a_uuid_of_any_version_after_a_pix_cue_is_a_pix_key(cue: str) -> None:
    version_one = "123e4567-e89b-12d3-a456-426614174000"  # an id elsewhere ("pedido 123e4567-...")
    assert redact(f"{cue} {version_one}").text == f"{cue} [pix]"
    assert redact(f"pedido {version_one}").text == f"pedido {version_one}"


def test_uuid_pix_keys_of_any_spelling() -> None:
    key = uuid.uuid4()
    for spelling in (str(key), str(key).upper(), key.hex):
        assert redact(f"minha chave {spelling}").text == "minha chave [pix]"


@pytest.mark.parametrize("text", [
    "chave pix 123e4567-e89b-12d3-a456-426614174000",  # a UUID of another version, after the cue
    "minha chave do pix maria@pix.com.br",
    "pix 11987654321",
])
def test_a_key_right_after_a_pix_cue_without_a_separator_is_a_pix_key(text: str) -> None:
    key = text.split()[-1]
    result = redact(text)
    assert key not in result.text and result.text.endswith("]")  # an e-mail key is found as [email] first


@pytest.mark.parametrize("text", [
    "Pix 5% off on orders above R$ 100.",
    "pix 10 minutos depois do pedido",
])
def test_a_pix_cue_before_a_small_number_keeps_the_number(text: str) -> None:
    assert redact(text).text == text


@pytest.mark.parametrize("rg", ["MG-12.345.678", "SP 12.345.678-9", "RJ-1234567", "mg-12.345.678"])
def test_an_rg_with_a_state_prefix_and_no_cue(rg: str) -> None:
    assert redact(f"o documento é {rg}, confere").text == "o documento é [rg], confere"


@pytest.mark.parametrize("text", ["Produto SKU MG-12.345.678 em estoque.", "Código: SP-1234567 na etiqueta."])
def test_a_product_code_shaped_like_an_rg_is_kept(text: str) -> None:
    assert redact(text).text == text


def test_a_cep_after_a_state_is_no_rg() -> None:
    assert redact("Entregamos em SP 01415-000 em 2 dias.").text == "Entregamos em SP 01415-000 em 2 dias."


@pytest.mark.parametrize(("text", "kind"), [
    ("CPF um dois três quatro cinco seis sete oito nove zero nove", "cpf"),
    ("meu cpf é um, dois, tres, quatro, cinco, seis, sete, oito, nove, zero, nove.", "cpf"),
    ("call me at four one five, five five five, two six seven one", "phone"),
    ("Telefone: onze nove oito sete seis cinco quatro três dois um", "phone"),
])
def test_a_number_spelled_digit_by_digit_is_read_as_its_digits(text: str, kind: str) -> None:
    result = redact(text)
    assert result.counts == {kind: 1}
    assert not re.search(r"\b(?:nove|zero|seven|one)\b", result.text)


def test_eight_spelled_words_that_hold_no_datum_are_left_as_written() -> None:
    text = "conte um dois três quatro cinco seis sete oito antes de abrir"
    assert redact(text).text == text


@pytest.mark.parametrize(("text", "kind"), [
    ("Meu celular: 1 1 9 8 7 6 5 - 4 3 2 1, pode ligar", "phone"),
    ("meu número é (11) 9 8 7 6 5 4 3 2 1", "phone"),
    ("CPF 1 2 3 4 5 6 7 8 9 0 9 ok", "cpf"),
    ("call me: 4, 1, 5, 5, 5, 5, 2, 6, 7, 1", "phone"),
    ("liga no 1 1 nove oito sete seis cinco quatro três dois um", "phone"),
    ("Meu zap: 1\ufe0f\u20e31\ufe0f\u20e39\ufe0f\u20e38\ufe0f\u20e37\ufe0f\u20e36\ufe0f\u20e35\ufe0f\u20e3"
     "4\ufe0f\u20e33\ufe0f\u20e32\ufe0f\u20e31\ufe0f\u20e3", "phone"),
    ("CPF \u2460\u2461\u2462.\u2463\u2464\u2465.\u2466\u2467\u2468-\u24ea\u2468", "cpf"),
])
def test_a_number_written_digit_by_digit_is_read_as_its_digits(text: str, kind: str) -> None:
    """An attacker's finding: a phone spaced digit by digit ("1 1 9 8 7 ...") or written in
    emoji keycaps ("1️⃣1️⃣9️⃣...") or circled digits was stored as written."""
    result = redact(text)
    assert result.counts == {kind: 1}, result
    assert not re.search(r"\d\s*[,-]?\s*\d\s*[,-]?\s*\d|\u20e3|[\u2460-\u2468]", result.text), result.text


@pytest.mark.parametrize(("text", "counts"), [
    ("cpf e cel: 1 2 3 4 5 6 7 8 9 0 9, 1 1 9 8 7 6 5 4 3 2 1", {"cpf": 1, "phone": 1}),
    ("cpf 1 2 3 4 5 6 7 8 9 0 9 2 vias", {"cpf": 1}),
    ("cpf 1.2.3.4.5.6.7.8.9.0.9", {"cpf": 1}),
    ("CPFs: 1 2 3 4 5 6 7 8 9 0 9", {"cpf": 1}),  # a plural cue
    ("telefones: 1 1 9 8 7 6 5 4 3 2 1", {"phone": 1}),
    ("número do cartão: 4 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1", {"card": 1}),
    ("cartao 4 1 1 1 / 1 1 1 1 / 1 1 1 1 / 1 1 1 1", {"card": 1}),
    ("CPF \u24f5\u24f6\u24f7\u2463\u2464\u2465\u2466\u2467\u2468\u24ff\u2468", {"cpf": 1}),
])
def test_a_run_written_one_digit_at_a_time_after_a_cue_gives_up_each_datum(text: str, counts: dict[str, int]) -> None:
    """A second attacker's finding: two data in one run, a digit more after one, dots or
    slashes between the digits, and more digit symbols all leaked."""
    result = redact(text)
    assert result.counts == counts, result
    assert not re.search(r"\d\D{0,3}\d\D{0,3}\d\D{0,3}\d", result.text), result.text


@pytest.mark.parametrize("text", [
    "Passos: 1, 2, 3, 4, 5, 6, 7, 8, 9 e pronto.",
    "Notas 5 4 3 5 4 3 5 4 dos clientes.",
    "Escolha de 1\ufe0f\u20e3 a 5\ufe0f\u20e3 estrelas.",
    # a second attacker's: each was replaced by a placeholder (ratings, steps, sizes, a CSV row)
    "Avaliações: 4 5 3 5 4 2 5 5 3 4",
    "Escolha a nota de 1 a 5 para cada item: 5, 5, 4, 5, 3, 5, 4, 4, 5, 5",
    "Passos: 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 9",
    "Tamanhos de calçado infantil: 1 2 3 4 5 6 7 8 9 0 9",
    "Votos: 4 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1",
    "Quantidade,1,1,9,8,7,6,5,4,3,2,1",
    "Estoque por tamanho (P;M;G;GG;XG): 2;1;9;8;7;6;5;4;3;2;1",
    "Tabela de entregas por dia:\nseg ter qua qui sex\n3 5 2 4 1\n2 4 3 5 1",
    "Dupla sena: 3 7 9 2 5 1 8 4 6 0 2",
    "Número de itens: 4 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1",  # a cue word, but naming no datum
    # a second attacker's: digit words need a cue too; a cue after "por", "no", "do"... is a channel
    "Ratings: five, four, five, three, five, four, four, five, five, four.",
    "Notas: cinco, quatro, cinco, três, cinco, quatro, quatro, cinco, cinco, quatro.",
    "Contamos: dez, onze, doze, treze, catorze, quinze, dezesseis, dezessete, dezoito, dezenove, vinte.",
    "Notas do atendimento por telefone: 4 4 3 2 3 4 5 5 5 3",
    "Parcelas no cartão: 7 7 4 9 3 7 8 4 6 1 6",
    "Etapas do pix: 2, 6, 6, 5, 0, 3, 6, 2, 0, 7, 7",
    "Tamanhos do número 3 4 5 6 7 8 9 0 1 2",
])
def test_single_digits_that_hold_no_datum_are_left_as_written(text: str) -> None:
    assert redact(text).text == text


def test_a_variation_selector_outside_a_keycap_stays() -> None:
    # a second attacker's finding: a text with a datum lost every emoji's variation selector
    assert redact("Obrigado \u2764\ufe0f \u260e\ufe0f 1\ufe0f\u20e3 passo: ligue 11 98765-4321").text == (
        "Obrigado \u2764\ufe0f \u260e\ufe0f 1 passo: ligue [phone]")


@pytest.mark.parametrize(("text", "expected"), [
    ("cpf 1 2 3 4 5 6 7 8 9 0 9", "cpf [cpf]"),
    ("cartao 4 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1", "cartao [card]"),
    ("cpf um dois três quatro cinco seis sete oito nove zero nove", "cpf [cpf]"),
    ("Avaliações: 4 5 3 5 4 2 5 5 3 4", "Avaliações: 4 5 3 5 4 2 5 5 3 4"),
])
def test_the_learning_queue_reads_numbers_written_one_digit_at_a_time(text: str, expected: str) -> None:
    """A second attacker's finding: `redact_kinds` (what a queued turn keeps) missed them."""
    from insika_knowledge.privacy.redact import redact_kinds

    assert redact_kinds(text) == expected


@pytest.mark.parametrize("text", ["Pix: 5% de desconto.", "Pix - 10% off on orders above R$ 100."])
def test_a_value_after_a_pix_cue_is_no_key(text: str) -> None:
    assert redact(text).text == text


def test_concept_names_about_pix_keep_their_numbers() -> None:
    assert redact_name("desconto-pix-5").text == "desconto pix 5"
    assert redact_name("chave-pix-11987654321").counts["pix"] == 1


@pytest.mark.parametrize(("name", "secret"), [
    ("minha-senha-girassol123", "girassol123"),
    ("cliente-ip-189-45-12-200", "189-45-12-200"),
    ("my_pin_is_4821", "4821"),
])
def test_a_credential_or_an_ip_in_a_slug_name_is_stored_nowhere(tmp_path: Path, name: str, secret: str) -> None:
    """A newcomer's finding: a slug name kept a password and an IP (its hyphens hid them from
    the detectors), in the record, its versions, the index and the export's file name."""
    store = SQLiteStore(tmp_path / "tenant.db")
    said = [{"role": "user", "content": "Oi"}, {"role": "assistant", "content": "A entrega leva 3 dias úteis."}]
    item = {"name": name, "type": "fact", "description": "Prazo de entrega.", "body": "A entrega leva 3 dias úteis."}
    learn_turn(store, AGENT, CONFIG, _Model([item]), session_id="s1", turn_id="t", messages=said)
    export(store, AGENT, tmp_path / "out-md", "md")  # type: ignore[arg-type]
    store.close()
    stored = _stored_bytes(tmp_path) + "".join(p.name for p in (tmp_path / "out-md").rglob("*")).encode()
    assert secret.encode() not in stored
    assert b"entrega" in stored  # the concept was learned


def test_a_password_in_a_session_id_is_stored_as_its_pseudonym() -> None:
    from insika_knowledge.privacy.pseudonyms import pseudonymous

    key = b"k" * 32
    stored = pseudonymous("minha senha é girassol123", key)
    assert "girassol123" not in stored and stored.startswith("minha senha é <SECRET>~")
    assert pseudonymous("conv-42", key) == "conv-42"


@pytest.mark.parametrize(("name", "kept"), [
    ("cpf-529-982-247-25", "cpf [cpf]"),
    ("pix-123e4567-e89b-42d3-a456-426614174000", "pix [pix]"),
    ("entrega-maria-souza-tel-11-98765-4321", "entrega [name] tel [phone]"),
])
def test_a_word_that_labels_a_datum_in_a_slug_is_no_name(name: str, kept: str) -> None:
    """A newcomer's finding: "cpf-529-982-247-25" was stored as "name-cpf" (the label before
    the placeholder taken as a person's name)."""
    assert redact_name(name).text == kept


@pytest.mark.parametrize("text", [
    "meu RG é o 33.444.555-2", "documento de identidade (RG) 33.444.555-2", "o RG dele é 12.345.678-9",
    "RG do cliente: 9876543", "My RG number is 12.345.678-9", "RG n° 1234567",
])
def test_an_rg_after_its_cue_and_a_few_words_is_found(text: str) -> None:
    number = text.split()[-1]
    result = redact(text)
    assert number not in result.text and result.counts == {"rg": 1}, result


def _tlv(field: str, value: str) -> str:
    return f"{field}{len(value):02d}{value}"


@pytest.mark.parametrize("key", ["maria@exemplo.com.br", "+5511987654321", "123e4567-e89b-12d3-a456-426614174000"])
def test_a_pix_copia_e_cola_code_is_replaced_whole(key: str) -> None:
    account = _tlv("00", "br.gov.bcb.pix") + _tlv("01", key)
    code = (_tlv("00", "01") + _tlv("26", account) + _tlv("52", "0000") + _tlv("53", "986") + _tlv("58", "BR")
            + _tlv("59", "Fulano de Tal") + _tlv("60", "BRASILIA") + "63041D3D")
    assert redact(f"Pix copia e cola: {code} obrigado").text == "Pix copia e cola: [pix] obrigado"
    assert redact(f"sem o CRC: {code[:-8]}").text == "sem o CRC: [pix]"  # copied short, its fields still read


def test_digits_shaped_like_a_code_start_without_the_pix_scheme_are_kept() -> None:
    text = "pedido 000201 enviado; 0002010102 é o protocolo, valor 6304"
    assert redact(text).text == text


def test_a_phone_the_customer_spelled_out_is_theirs_when_the_agent_repeats_it() -> None:
    """A newcomer's attack: "meu cel 1 1 9 8 ..." from the customer, then the agent's "ligue
    meu cel ... ou (11) 98765-4321": the number was kept as the business's contact."""
    from insika_knowledge.privacy.redact import kept_contacts

    said = [("customer", "Frete grátis? meu cel 1 1 9 8 7 6 5 4 3 2 1"),
            ("agent", "Para falar conosco ligue (11) 98765-4321.")]
    assert kept_contacts(said) == frozenset()
    assert "98765" not in redact("Contato: (11) 98765-4321.", kept_contacts(said)).text
    assert kept_contacts(said[1:]) == frozenset({"11987654321"})  # said by the business alone: kept


@pytest.mark.parametrize(("name", "description", "gone"), [
    ("joana-silva-recife-0", "Joana Silva, CPF 529.982.247-25, pediu entrega em Recife.", "joana"),
    ("pedido-do-wellington", "Aqui é o Wellington, meu zap 85 98877-6655.", "wellington"),
])
def test_a_person_the_description_names_is_taken_from_the_concept_name_too(
        tmp_path: Path, name: str, description: str, gone: str) -> None:
    """A newcomer's finding: the description said "[name], CPF [cpf]" while the concept was
    stored as `joana-silva-recife-0`: the customer's name in every export and event."""
    store = SQLiteStore(tmp_path / "tenant.db")
    said = [{"role": "user", "content": description},
            {"role": "assistant", "content": "Entregamos em Recife em 5 dias úteis."}]
    item = {"name": name, "type": "fact", "description": description, "body": "Entregamos em Recife em 5 dias úteis."}
    report = learn_turn(store, AGENT, CONFIG, _Model([item]), session_id="s1", turn_id="t", messages=said)
    names = [n for n, _ in report.results]
    store.close()
    assert names and gone not in names[0] and "name" in names[0], names
    assert gone.encode() not in _stored_bytes(tmp_path).lower()


def test_a_concept_named_only_by_a_person_is_named_by_its_description(tmp_path: Path) -> None:
    """Taken from the name, a person's name alone left `name`: one name for every such concept."""
    store = SQLiteStore(tmp_path / "tenant.db")
    said = [{"role": "user", "content": "Aqui é a Maria Souza, meu zap 11 98765-4321. Vocês entregam sábado?"},
            {"role": "assistant", "content": "Entregamos aos sábados até as 14h."}]
    item = {"name": "maria-souza", "type": "fact",
            "description": "Entregas aos sábados para Maria Souza, tel 11 98765-4321.",
            "body": "Entregamos aos sábados até as 14h."}
    report = learn_turn(store, AGENT, CONFIG, _Model([item]), session_id="s1", turn_id="t", messages=said)
    store.close()
    assert [n for n, _ in report.results] == ["entregas-aos-sabados-para-name-tel-phone"]


@pytest.mark.parametrize(("description", "body"), [
    # the body gives her phone, the description names her with no datum beside
    ("Sarah Connor asked for a callback.",
     "Sarah Connor asked for a callback at (11) 98765-4321 tomorrow morning. Sarah prefers mornings."),
    # the other way round: the description gives the datum, the body names her alone
    ("Sarah Connor, tel (11) 98765-4321, asked for a callback.", "Call Sarah Connor back tomorrow morning."),
])
def test_a_person_one_field_names_with_a_datum_is_taken_from_every_field(
        tmp_path: Path, description: str, body: str) -> None:
    """Found this session: a person redacted from the body stayed in the description (and
    the other way round), in every version and export."""
    store = SQLiteStore(tmp_path / "tenant.db")
    said = [{"role": "user", "content": "I'm Sarah Connor, call me back at (11) 98765-4321 tomorrow morning."},
            {"role": "assistant", "content": "Sure, we will call you back at (11) 98765-4321 tomorrow morning."}]
    item = {"name": "sarah-connor-callback", "type": "fact", "description": description, "body": body}
    report = learn_turn(store, AGENT, CONFIG, _Model([item]), session_id="s1", turn_id="t", messages=said)
    store.close()
    assert report.results and report.redacted["name"] >= 3, report
    stored = _stored_bytes(tmp_path).lower()
    assert b"sarah" not in stored and b"connor" not in stored


@pytest.mark.parametrize("item", [
    {"name": "troca-kleber-tavares", "type": "policy", "description": "Troca em até 30 dias após o recebimento.",
     "body": "Troca em até 30 dias após o recebimento."},
    {"name": "troca-30-dias", "type": "policy", "description": "Kleber Tavares pediu troca em até 30 dias.",
     "body": "Troca em até 30 dias após o recebimento."},
    {"name": "troca-30-dias", "type": "policy", "description": "Troca em até 30 dias após o recebimento.",
     "body": "Obrigado, Kleber! Troca em até 30 dias após o recebimento; pedido da kleber tavares."},
])
def test_a_person_the_conversation_names_beside_a_datum_is_taken_from_every_field(
        tmp_path: Path, item: dict[str, str]) -> None:
    """An attacker's finding (2026-12-06): the customer gave name, CPF and phone in one
    message; a concept naming them with no datum beside (its name, its description, a
    greeting in its body, in lower case) kept the name."""
    from insika_knowledge import Memory
    from insika_knowledge.extract.given import GivenModel

    said = [{"role": "user",
             "content": "Oi, sou Kleber Tavares, CPF 529.982.247-25, cel (11) 98765-4321. Quero trocar."},
            {"role": "assistant",
             "content": "Obrigado, Kleber! A troca pode ser feita em até 30 dias após o recebimento."}]
    with Memory(tmp_path, embeddings="off") as memory:
        report = memory.learn(said, agent=AGENT, session_id="s1", model=GivenModel([item]))
    assert report.results and report.redacted["name"] >= 1, report
    stored = _stored_bytes(tmp_path).lower()
    assert b"kleber" not in stored and b"tavares" not in stored
    assert "30 dias" in _stored_bytes(tmp_path).decode("utf-8", "replace")  # the rule itself is kept


def test_a_label_before_a_datum_in_a_concept_name_is_no_person() -> None:
    # the same newcomer: "cliente-52998224725" was stored as "name-cpf"
    assert redact_name("cliente-52998224725").text == "cliente [cpf]"


@pytest.mark.parametrize("mark", ["\u200e", "\u200f", "\u061c", "\u0301", "\ufe0f", "\u3164", "\uffa0", "\u2800"])
def test_a_datum_with_an_unseen_character_between_its_digits_reaches_no_stored_byte(
        tmp_path: Path, mark: str) -> None:
    """A last newcomer's attack: a direction mark, a variation selector, a combining accent or
    a blank filler between a CPF's digits hid it from every detector; the block then served
    the bare number (and the queue kept it)."""
    from insika_knowledge import Memory
    from insika_knowledge.extract.given import GivenModel

    cpf = mark.join("52998224725")
    item = {"name": "caso", "type": "fact", "description": f"Cliente informou {cpf}.", "body": f"CPF {cpf}."}
    with Memory(tmp_path, embeddings="off") as memory:
        memory.learn([{"role": "user", "content": f"meu cpf {cpf}"}, {"role": "assistant", "content": "ok"}],
                     agent=AGENT, session_id="s1", model=GivenModel([item]))
    assert b"52998224725" not in _stored_bytes(tmp_path).replace(mark.encode("utf-8"), b"")


@pytest.mark.parametrize(("text", "kinds"), [
    # another dash between the digits (hyphen, en dash, minus): a phone's was read, a document's not
    ("CPF 529.982.247\u201325, CNPJ 11.222.333/0001\u201381.", {"cpf", "cnpj"}),
    ("cartão 4111\u20131111\u20131111\u20131111, SSN 536\u221222\u22128741.", {"card", "ssn"}),
    # a URL's query, percent-encoded
    ("https://loja.com/t?cpf=529%2E982%2E247%2D25&tel=%2B5511987654321&email=kleber%40gmail%2Ecom",
     {"cpf", "phone", "email"}),
    # "@" as an HTML character reference or a JSON escape
    ("kleber.tavares&#64;gmail.com, k&#x40;gmail.com, k&commat;gmail.com", {"email"}),
    ('{"email": "kleber\\u0040gmail.com"}', {"email"}),
    # tabs or wide gaps between the groups
    ("| CPF | 529\t982\t247\t25 |", {"cpf"}),
    ("CPF 529   982   247   25", {"cpf"}),
])
def test_a_datum_written_with_other_punctuation_is_read(text: str, kinds: set[str]) -> None:
    """An attacker's finding (2026-12-06): each of these reached the stored body as written."""
    found = redact(text)
    assert set(found.counts) == kinds, found
    assert not any(ch.isdigit() for ch in found.text) and "kleber" not in found.text


@pytest.mark.parametrize("text", ["Loja \u2014 aberta das 9h\u201318h, em 2\u20133 dias.", "R&D team, 100% off",
                                  "a%2Eb", "Tabela:\t10\t20"])
def test_prose_with_such_punctuation_is_kept_as_written(text: str) -> None:
    assert redact(text) == Redaction(text, {})


@pytest.mark.parametrize(("text", "expected"), [
    ("Cliente: Kleber Tavares. Telefone: (11) 98765-4321. CPF: 529.982.247-25.",
     "Cliente: [name]. Telefone: [phone]. CPF: [cpf]."),
    ("Customer: Sarah Connor. Phone: (415) 555-2671.", "Customer: [name]. Phone: [phone]."),
    ("Cliente: Ouro. Frete grátis.", "Cliente: Ouro. Frete grátis."),  # a tier, not a person
])
def test_a_name_after_a_customer_label_with_a_colon_is_a_persons(text: str, expected: str) -> None:
    """An attacker's finding: "Cliente:" / "Customer:" then a full stop kept the name (the
    cue needed a blank right after the word)."""
    assert redact(text).text == expected


def test_the_stores_pix_key_offered_by_the_agent_is_kept() -> None:
    """An attacker's finding: "Nossa chave pix é o e-mail pix@..." was redacted from the
    concept "Chave PIX da loja: ..."; a customer's key stays theirs whoever repeats it."""
    ours = kept_contacts([("customer", "Qual a chave pix?"),
                          ("agent", "Nossa chave pix é o e-mail pix@lojaaurora.com.br.")])
    assert redact("Chave PIX da loja: pix@lojaaurora.com.br.", ours).text == "Chave PIX da loja: pix@lojaaurora.com.br."
    theirs = kept_contacts([("customer", "minha chave pix é joao@gmail.com"),
                            ("agent", "Nossa chave pix é o e-mail joao@gmail.com.")])
    assert theirs == frozenset()
    assert kept_contacts([("agent", "Nosso telefone é o número (11) 3456-7890.")]) == frozenset({"1134567890"})


@pytest.mark.parametrize(("text", "expected"), [
    ("Cliente nasceu em 12/03/1985.", "Cliente nasceu em [birth_date]."),
    ("birthday: March 12, 1985", "birthday: [birth_date]"),
    ("Aniversário da loja: 12/03 com 10% off", "Aniversário da loja: 12/03 com 10% off"),  # the store's
])
def test_a_date_after_nasceu_or_birthday_is_a_birth_date(text: str, expected: str) -> None:
    """An attacker's finding: "nasceu em" and a bare "birthday:" were no words of birth."""
    assert redact(text).text == expected


@pytest.mark.parametrize(("text", "expected"), [
    ("meu email é kleber.tavares no gmail.com", "meu email é [email]"),
    ("kleber_tavares arroba hotmail", "[email]"),
    ("kleber @gmail", "[email]"),
    ("joao99 no hotmail.com.br", "[email]"),
    ("te mandei no gmail, viu?", "te mandei no gmail, viu?"),  # prose naming a provider
    ("mandei no gmail.com ontem", "mandei no gmail.com ontem"),  # no local part
])
def test_an_address_named_by_its_webmail_provider_is_an_email(text: str, expected: str) -> None:
    """An attacker's finding: an address without its "@" or its TLD was stored."""
    assert redact(text).text == expected


@pytest.mark.parametrize(("text", "expected"), [
    ("Pedido de [Kleber Tavares](mailto:kleber.tavares@gmail.com).", "Pedido de [[name]](mailto:[email])."),
    ("[Sarah Connor](tel:+14155552671)", "[[name]](tel:[phone])"),
    ("Kleber Tavares &lt;kleber@gmail.com&gt;", "[name] &lt;[email]&gt;"),
])
def test_a_name_in_a_link_or_an_escaped_address_line_is_a_persons(text: str, expected: str) -> None:
    """An attacker's finding: markdown link text and an HTML-escaped "Name <e-mail>" kept the name."""
    assert redact(text).text == expected


def test_superscript_digits_are_read_as_digits() -> None:
    assert redact("CPF ⁵²⁹.⁹⁸².²⁴⁷-²⁵").text == "CPF [cpf]"
    assert redact("café é ótimo ❤\ufe0f").text == "café é ótimo ❤\ufe0f"  # an accent or an emoji's selector stays
