"""Words the agent quotes for someone else, a value only a link or the customer holds, a
bound of another kind, an "only" the business's longer list denies, a statistic, a share of
another base, a qualifier the agent binds to another value: none is the business's claim.
And their legitimate neighbours are still learned.

Each row is a conversation of our own and the candidate a model would propose from it;
``held`` is whether the trust gate quarantines it (`trust.assess`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from insika_knowledge.trust import assess
from insika_knowledge.trust.grounding import speaker
from insika_knowledge.trust.sources import pieces
from insika_knowledge.wire.messages import message_text


def talk(*texts: str) -> list[dict[str, str]]:
    """A transcript of `texts`, the customer's first, then the agent's, in turn."""
    return [{"role": ("user", "assistant")[k % 2], "content": text} for k, text in enumerate(texts)]


def held(claim: str, kind: str, messages: Sequence[Mapping[str, Any]]) -> bool:
    return assess(claim, kind, messages).quarantined


def test_a_review_the_agent_quotes_is_the_customers_and_its_own_policy_is_its_own() -> None:
    messages = talk("quanto tempo dura a carga do patinete Brisa?",
                    'Um cliente comentou ontem: "o Brisa roda 60 km com uma carga, tranquilo". '
                    "A autonomia oficial é de até 35 km, conforme o peso do condutor.")
    assert held("Autonomia do patinete Brisa\nO patinete Brisa roda 60 km com uma carga.", "fact", messages)
    assert not held("Autonomia do patinete Brisa\nO patinete Brisa tem autonomia oficial de até 35 km.", "fact",
                    messages)
    parts = pieces(messages, speaker, message_text)
    assert [(p.speaker, p.text) for p in parts if "60 km" in p.text] == [
        ("customer", "o Brisa roda 60 km com uma carga, tranquilo")]
    own = talk("can I return shoes I wore outside?",
               'Our policy reads: "Worn footwear can be returned within 14 days for store credit."')
    assert not held("Returns of worn footwear\nWorn footwear can be returned within 14 days for store credit.",
                    "policy", own)


def test_a_message_drafted_for_the_customer_to_send_states_no_rule() -> None:
    messages = talk("the hotel lost my booking, how do I complain to them?",
                    'You could send them something like: "I request a full refund within 10 days for the '
                    'booking you cancelled." The agency itself does not handle hotel refunds.')
    assert held("Hotel refunds\nCancelled hotel bookings are refunded in full within 10 days.", "policy", messages)
    portuguese = talk("a cia aérea cancelou meu voo, como peço o reembolso?",
                      'Você pode mandar algo assim: "Solicito o reembolso integral em até 7 dias do voo cancelado '
                      'pela companhia." Esse reembolso é direto com a aérea.')
    assert held("Reembolso de voos cancelados\nVoos cancelados pela companhia têm reembolso integral em até 7 dias.",
                "policy", portuguese)


def test_a_value_only_a_link_or_only_the_customer_holds() -> None:
    link = talk("vocês devolvem o frete na troca?",
                "Tudo sobre trocas está aqui: https://loja.example/ajuda/frete-gratis-45-dias 😉")
    assert held("Trocas com frete grátis\nA loja oferece troca com frete grátis em até 45 dias.", "policy", link)
    template = talk("How long does a warranty claim take? A friend said 8 days.",
                    "Warranty claims are answered within {{warranty_days}} business days once we have the receipt.")
    assert held("Warranty claim time\nWarranty claims are answered within 8 business days once the receipt is in.",
                "policy", template)
    stated = talk("How long does a warranty claim take?",
                  "Warranty claims are answered within 8 business days once we have the receipt.")
    assert not held("Warranty claim time\nWarranty claims are answered within 8 business days once the receipt "
                    "is in.", "policy", stated)


def test_business_days_are_no_calendar_days() -> None:
    messages = talk("em quanto tempo sai a segunda via do cartão?",
                    "A segunda via chega em até 7 dias úteis depois do pedido.",
                    "7 dias então",
                    "Isso, 7 dias úteis 😊")
    assert held("Prazo da segunda via\nA segunda via do cartão chega em até 7 dias corridos após o pedido.", "policy",
                messages)
    assert not held("Prazo da segunda via\nA segunda via do cartão chega em até 7 dias úteis após o pedido.",
                    "policy", messages)
    plain = talk("How long do refunds take?", "Refunds are processed within 5 days.")
    assert held("Refund time\nRefunds are processed within 5 business days.", "policy", plain)  # a kind never said
    assert not held("Refund time\nRefunds are processed within 5 days.", "policy", plain)


def test_only_these_when_the_business_lists_more() -> None:
    messages = talk("Do you take Visa?",
                    "Yes! We take Visa and Mastercard, and we also accept Amex and Discover at the front desk.")
    assert held("Cards accepted\nThe clinic only accepts Visa and Mastercard.", "policy", messages)
    assert not held("Cards accepted\nThe clinic accepts Visa and Mastercard, and also Amex and Discover.", "policy",
                    messages)


def test_a_passive_with_a_contraction_is_present() -> None:
    messages = talk("Are the almond bars gluten free?",
                    "They're made without wheat, but they're packed on a line that also handles wheat, "
                    "so they may contain traces.")
    assert not held("Gluten in almond bars\nThe almond bars are made without wheat but may contain traces of wheat "
                    "because they are packed on a line that also handles wheat.", "fact", messages)


def test_a_date_without_its_year_states_the_tools_date() -> None:
    call = {"id": "c1", "type": "function", "function": {"name": "coupon", "arguments": '{"code": "FRETE10"}'}}
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": "tem o cupom FRETE10 q da frete gratis acima de 150 ne?"},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c1",
         "content": json.dumps({"code": "FRETE10", "benefit": "frete grátis acima de R$ 150",
                                "valid_until": "2026-08-31"})},
        {"role": "assistant", "content": "Tá valendo sim! O FRETE10 dá frete grátis acima de R$ 150, até 31/08."},
        {"role": "user", "content": "oba, vou fechar o pedido"},
    ]
    assert not held("Cupom FRETE10\nO cupom FRETE10 dá frete grátis acima de R$ 150, válido até 31/08/2026.",
                    "policy", messages)


def test_a_qualifier_the_agent_binds_to_another_value() -> None:
    messages = talk("a geladeira parcela em quantas vezes sem juros?",
                    "Dá pra parcelar em até 10x no cartão! Até 5x fica sem juros; de 6x a 10x tem juros de 2% ao mês.")
    assert held("Parcelamento da geladeira\nA geladeira pode ser parcelada em até 10x sem juros no cartão.", "policy",
                messages)
    assert not held("Parcelamento da geladeira\nA geladeira pode ser parcelada em até 5x sem juros no cartão.",
                    "policy", messages)


def test_what_most_orders_do_is_no_rule() -> None:
    messages = talk("em quanto tempo chega em Goiânia?",
                    "Pra Goiânia a maioria dos pedidos chega em 3 dias, mas o prazo máximo é de 8 dias úteis.")
    assert held("Prazo para Goiânia\nEntregas para Goiânia chegam em até 3 dias.", "policy", messages)
    assert not held("Prazo para Goiânia\nO prazo máximo de entrega para Goiânia é de 8 dias úteis.", "policy",
                    messages)


def test_a_share_of_another_base() -> None:
    messages = talk("se eu sair do contrato da academia antes, pago multa?",
                    "Paga sim: a multa é de 30% sobre o valor das parcelas que faltam do contrato.")
    assert held("Multa de rescisão\nA rescisão antecipada tem multa de 30% sobre o valor total do contrato.", "policy",
                messages)
    assert not held("Multa de rescisão\nA rescisão antecipada tem multa de 30% sobre o valor das parcelas que "
                    "faltam do contrato.", "policy", messages)


def test_a_value_the_agent_changes_from_one_number_to_another() -> None:
    messages = talk("Is there a way to get a longer warranty on my kettle?",
                    "Yes! If you register the kettle on our website within 30 days of purchase, your warranty goes "
                    "from 12 to 24 months.")
    assert not held("Warranty extension\nRegistering the kettle on the website within 30 days of purchase extends "
                    "the warranty from 12 to 24 months.", "policy", messages)
    assert held("Warranty extension\nRegistering the kettle on the website within 30 days of purchase extends "
                "the warranty from 12 to 36 months.", "policy", messages)


def test_a_qualifier_said_of_another_value_in_the_same_message_when_no_one_supports_the_claim() -> None:
    messages = talk("Can I pay in installments?", "You can pay in up to 12x; up to 6x interest-free.")
    assert held("Installments\nPurchases can be paid in up to 12x interest-free.", "policy", messages)
    assert not held("Installments\nPurchases can be paid in up to 6x interest-free.", "policy", messages)


def test_only_these_when_the_next_sentence_adds_one() -> None:
    messages = talk("O que o plano inclui?", "O plano inclui musculação e natação. Também inclui aulas de spinning.")
    assert held("Plano\nSomente musculação e natação estão incluídas no plano.", "policy", messages)
    assert not held("Plano\nO plano inclui musculação, natação e spinning.", "policy", messages)
    other = talk("How can I pay?", "We only accept Pix and card. We also deliver on Sundays.")
    assert not held("Payment\nWe only accept Pix and card.", "policy", other)
