"""A person's name a few words from their contact, a US SSN, and which contacts the business
offers as its own (`insika_knowledge.privacy.people`, `.cued`, `.published`).

The cases are an attacker's (``benchmarks/privacy/attack1.jsonl``); each failed before.
"""

from __future__ import annotations

import pytest

from insika_knowledge.privacy.redact import kept_contacts, redact


@pytest.mark.parametrize(("text", "name"), [
    ("Cliente Maria Silva pediu retorno no 11 98765-4321", "Maria Silva"),
    ("Sou a Gisele Rocha e meu email é gisele.r@gmail.com", "Gisele Rocha"),
    ("Aqui é o Wellington, meu zap 85 98877-6655", "Wellington"),
    ("quem vai receber é minha filha Ísis Moura, o celular dela é 31 98765-0001", "Ísis Moura"),
    ("meu marido Cláudio Rezende pode receber, o telefone dele é 11 96666-7777", "Cláudio Rezende"),
    ("a encomenda é pra Iara, whats 11 95555-4444", "Iara"),
    ("oi, aqui é a maria eduarda, meu numero 11 98123-4455", "maria eduarda"),
    ("please ship to Siobhan O'Connor, 18 Elm Road", "O'Connor"),
    ("Destinatário: JOSÉ APARECIDO DOS SANTOS - Rua Goiás 120", "APARECIDO"),
    ("Call John Smith on (415) 555-0132 after six.", "John Smith"),
])
def test_a_persons_name_in_the_sentence_of_their_contact_is_redacted(text: str, name: str) -> None:
    redacted = redact(text).text
    assert name not in redacted and "[name]" in redacted, redacted


@pytest.mark.parametrize(("text", "kept"), [
    # a second blind writer's: a store, a product, a place beside a customer's phone are no person
    ("Comprei a Geladeira Brastemp BRM44 na Loja Aurora de Campinas, meu telefone é 11 98765-4321.",
     "Geladeira Brastemp BRM44 na Loja Aurora de Campinas"),
    ("Sou cliente da Veloz Telecom e o plano Veloz Fibra 500 caiu, meu número é 11 98765-4321.", "Veloz Fibra 500"),
    ("A equipe da unidade Campinas vai ligar para o número que você passou, 11 98765-4321.", "unidade Campinas"),
    ("My RG number is 12.345.678-9", "My RG number is"),
    ("Telefone (11) 98765-4321 CEP 01310-100", "CEP 01310-100"),
    ("Entrega em Campinas, tel 11 98765-4321", "Entrega em Campinas"),
    ("IBAN DE89 3704 0044 0532 0130 00 EUR", "EUR"),
    ("Frete grátis para São Paulo. Cliente Ana: (11) 98765-4321.", "Frete grátis para São Paulo."),
])
def test_words_that_name_nobody_stay_beside_a_redacted_contact(text: str, kept: str) -> None:
    assert kept in redact(text).text


@pytest.mark.parametrize("text", [
    "my SSN is 536-22-8741", "social security number: 401 56 7893", "SSN: 536228741",
    "they asked for my social, it's 432-81-5507",
])
def test_a_us_social_security_number_is_redacted(text: str) -> None:
    redacted = redact(text)
    assert redacted.counts.get("ssn") == 1 and "[ssn]" in redacted.text, redacted


def test_an_invalid_ssn_shape_without_a_cue_is_kept() -> None:
    # area 666 is never issued: a reference in that shape is no SSN
    assert redact("Protocolo 666-12-3456 aberto.").text == "Protocolo 666-12-3456 aberto."


@pytest.mark.parametrize(("said", "value"), [
    ("O atendimento vai ligar para a senhora no 11 97654-3210 amanhã cedo.", "97654-3210"),
    ("Anotei aqui: nosso cliente tem o telefone (21) 98700-1122 para contato.", "98700-1122"),
    ("A loja vai enviar o produto para Rua das Laranjeiras, 45, apto 12.", "Laranjeiras"),
    ("Loja Aurora Centro despachou o pedido 4711 para Rua das Flores, 123, telefone de entrega (11) 98888-7777.",
     "98888-7777"),
    ("Nossa central reenviou o código para ana.paula.r@gmail.com agora.", "ana.paula.r@gmail.com"),
    ("Pedi para nossa transportadora ligar no (11) 98888-7777 amanhã.", "98888-7777"),
    ("Mr. Okafor, we'll call you at +1 (646) 555-0109 once the part arrives.", "555-0109"),
    ("Nossa equipe vai ligar no seu número (41) 99701-3365 ainda hoje.", "99701-3365"),
    # a third attacker's: a business word anywhere in the sentence no longer offers a contact
    ("Confirmando: seu e-mail na nossa base é ana.souza@gmail.com, certo?", "ana.souza@gmail.com"),
    ("Nossa central fez a ligação para o (11) 98765-4321 às 10h.", "98765-4321"),
    ("Our records show jsmith1984@gmail.com as the account email.", "jsmith1984@gmail.com"),
    ("Driver note: call the customer at (415) 867-2301 on arrival.", "867-2301"),
])
def test_a_business_word_in_the_sentence_does_not_make_a_customers_contact_the_business_s(
        said: str, value: str) -> None:
    keep = kept_contacts([("customer", "podem me retornar?"), ("agent", said)])
    assert keep == frozenset()
    assert value not in redact(said, keep).text


@pytest.mark.parametrize(("asked", "said", "value"), [
    ("", "Em caso de dúvidas, escreva para atendimento@lojaaurora.com.br", "atendimento@lojaaurora.com.br"),
    ("qual o telefone da loja de vocês?", "É (11) 3061-2000, de segunda a sábado.", "(11) 3061-2000"),
    ("pra qual email eu mando as fotos do defeito?", "Pode mandar para devolucoes@lojaaurora.com.br com o pedido.",
     "devolucoes@lojaaurora.com.br"),
    ("", "Devoluções pelos Correios: Rua Vergueiro, 1000 - CEP 01504-000.", "Rua Vergueiro, 1000"),
    ("", "Atendimento telefônico: (11) 4002-8922", "4002-8922"),
    ("", "Nosso SAC atende no (11) 3456-7890 e no 0800 723 4567.", "(11) 3456-7890"),
    ("", "Fale conosco: (11) 3456-7890 ou sac@loja.com.br.", "sac@loja.com.br"),
    # a branch of the business (a trust set's legitimate entity lost its address, then its name)
    ("Qual o endereço da unidade Savassi?", "A Unidade Savassi fica na Rua Pernambuco, 1000.", "Rua Pernambuco, 1000"),
    # where our channel answers, and words after the contact that say it is ours
    ("", "Nosso time responde no WhatsApp (11) 94002-8922 em até 15 minutos.", "(11) 94002-8922"),
    ("", "Se ele não conseguir, ligue você no (21) 2533-9087, que é o nosso fixo.", "(21) 2533-9087"),
    ("", "Nossa loja fica na Av. Brig. Faria Lima, 2000.", "Av. Brig. Faria Lima, 2000"),
    ("", "Send your photos to returns@aurorastore.com.", "returns@aurorastore.com"),
    ("", "Nosso SAC atende no (11) 3456-7890, de segunda a sexta, ou pelo e-mail sac@lojabemtevi.com.br.",
     "sac@lojabemtevi.com.br"),
    ("", "Você pode falar com a gente pelo (11) 3456-7812, de segunda a sábado.", "(11) 3456-7812"),
])
def test_a_contact_the_business_offers_as_its_own_is_kept(asked: str, said: str, value: str) -> None:
    keep = kept_contacts([("customer", asked), ("agent", said)])
    assert value in redact(said, keep).text




def test_a_tool_record_offers_a_store_s_contact_only_in_the_words_before_it() -> None:
    store = "nome: Loja Aurora Campinas, endereco: Av. Norte-Sul, 1500, telefone: (19) 3251-6070"
    keep = kept_contacts([("customer", "onde retiro?"), ("tool", store)])
    assert redact(store, keep).text == store
    order = "pedido: 4711, loja: Aurora Centro, endereco: Rua das Flores, 123, telefone: (11) 98888-7777"
    keep = kept_contacts([("customer", "cadê meu pedido?"), ("tool", order)])
    assert "98888-7777" not in redact(order, keep).text and "Flores" not in redact(order, keep).text


@pytest.mark.parametrize(("system", "kept", "gone"), [
    ("Contexto: Loja Pet&Cia, tel. (11) 5051-8890. Cliente: Rodrigo Paiva, telefone (11) 98221-0347.",
     "(11) 5051-8890", "98221-0347"),
    ("Perfil do cliente (uso interno): Ana Beatriz Farias, ana.beatriz.f@hotmail.com. Atendimento ao cliente: "
     "(11) 3333-4444.", "(11) 3333-4444", "ana.beatriz.f@hotmail.com"),
])
def test_a_customer_s_record_in_the_system_prompt_is_not_the_business_s(system: str, kept: str, gone: str) -> None:
    keep = kept_contacts([("system", system)])
    redacted = redact(system, keep).text
    assert kept in redacted and gone not in redacted, redacted


@pytest.mark.parametrize(("text", "gone"), [
    ('{"cliente_id": 5531, "data_de_nascimento": "1985-09-30"}', "1985-09-30"),
    ('{"titulo_eleitor": "0025 4626 0841", "programa": "Nota Fiscal Paulista"}', "0025 4626 0841"),
    ('{"client_ip": "200.158.44.19", "order": "8810023"}', "200.158.44.19"),
])
def test_a_record_s_key_cues_its_value_as_the_words_do(text: str, gone: str) -> None:
    assert gone not in redact(text).text


def test_a_system_prompt_that_names_a_customer_gives_their_contacts_from_there_on() -> None:
    system = "Contexto do atendimento:\nNome: Ana Souza\nTelefone: (11) 98765-4321\nNosso SAC: (11) 3333-4444"
    redacted = redact(system, kept_contacts([("system", system)])).text
    assert "98765-4321" not in redacted and "(11) 3333-4444" in redacted, redacted


@pytest.mark.parametrize(("text", "kept"), [
    ("Seu pedido foi enviado com Sedex para a Rua das Flores, 123.", "Sedex"),
    ("Ana Souza\nCelular: (11) 98765-4321", "Celular"),
])
def test_a_carrier_or_a_label_on_the_next_line_is_no_name(text: str, kept: str) -> None:
    assert kept in redact(text).text


@pytest.mark.parametrize(("text", "gone"), [
    # a final newcomer's: a customer named as one, with no datum beside them
    ("Produto quebrado é reenviado sem custo, como no caso da cliente Mariana Souza.", "Mariana"),
    ("As for customer Sarah Connor, we refunded the order.", "Sarah"),
    ("A Sra. Souza pediu a troca.", "Souza"),
    ("Sarah Connor was born on 03/15/1985.", "Sarah"),
])
def test_a_customer_named_as_one_is_redacted_anywhere(text: str, gone: str) -> None:
    assert gone not in redact(text).text


@pytest.mark.parametrize("text", ["Cliente Ouro tem frete grátis.", "Clientes VIP têm prioridade.",
                                  "Trocas presenciais: Avenida Paulista, 1000, São Paulo."])
def test_a_tier_or_a_city_after_an_address_is_no_name(text: str) -> None:
    assert "[name]" not in redact(text).text


def test_a_customer_s_record_from_a_tool_stays_theirs_when_the_agent_offers_it() -> None:
    record = "cliente: Mariana Souza, telefone: (11) 98765-4321, email: mariana.souza@gmail.com"
    said = "Ligue para (11) 98765-4321 se tiver dúvidas."
    keep = kept_contacts([("customer", "oi"), ("tool", record), ("agent", said)])
    assert keep == frozenset() and "98765-4321" not in redact(said, keep).text


@pytest.mark.parametrize("said", ["Our phone number is (415) 555-0100.", "Our store's phone is (415) 555-0100."])
def test_our_phone_number_in_english_is_kept(said: str) -> None:
    assert redact(said, kept_contacts([("agent", said)])).text == said


@pytest.mark.parametrize(("text", "gone", "kept"), [
    ("Deliver to 1984 Cyberdyne Rd Apt 2, Los Angeles, CA 90012", "90012", "Los Angeles"),
    ("my address is 221B Baker Street, London NW1 6XE", "6XE", "London"),
    ("manda pro meu email: sarah dot connor at yahoo dot com", "sarah", "manda"),
])
def test_a_postcode_after_an_address_and_a_spelled_out_local_part_go(text: str, gone: str, kept: str) -> None:
    redacted = redact(text).text
    assert gone not in redacted and kept in redacted, redacted
