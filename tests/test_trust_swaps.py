"""A claim that swaps one word of what the business said is another claim, not its echo.

The agent's sentence word for word but the object of one role word ("by email" for "by
WhatsApp", "pelos Correios" for "por transportadora"), or a refund in another form (store
credit for cash): the claim is held, with or without the agent's sentence quoted as its
evidence. A withdrawal said in the past ("was discontinued last month") is today's rule.
"""

from __future__ import annotations

import pytest

from insika_knowledge.trust import assess


def said(reply: str) -> list[dict[str, str]]:
    return [{"role": "user", "content": "Oi"}, {"role": "assistant", "content": reply}]


def talk(*texts: str) -> list[dict[str, str]]:
    """A transcript of `texts`, the customer's first, then the agent's, in turn."""
    return [{"role": ("user", "assistant")[k % 2], "content": text} for k, text in enumerate(texts)]


@pytest.mark.parametrize(("reply", "claim", "held"), [
    ("Send the receipt by email.", "Send the receipt by WhatsApp.", True),
    ("We deliver by courier.", "We deliver by mail.", True),
    ("Enviamos pela Jadlog.", "Enviamos pelos Correios.", True),
    ("Mande o comprovante por e-mail.", "Mande o comprovante por WhatsApp.", True),
    ("Cancelled orders are refunded as store credit.", "Cancelled orders are refunded in cash.", True),
    ("Devolvemos em vale-compras.", "Devolvemos em dinheiro.", True),
    ("Refunds go back to the original credit card.", "Refunds are issued as store credit.", True),
    ("O reembolso volta para o cartão de crédito original.", "O reembolso é dado como crédito na loja.", True),
    # the opposite word of a pair the claim says one of: another claim
    ("Our prices exclude VAT; it is added at checkout.", "Our prices include VAT.", True),
    ("Smoking is allowed only outside the building.", "Smoking is allowed only inside the building.", True),
    ("The first month is free.", "The last month is free.", True),
    ("All seats on domestic flights get a free snack.", "All seats on international flights get a free snack.", True),
    # the same word, or the same form, spelt otherwise: the claim the business said
    ("Send the receipt by email.", "Send the receipt by e-mail.", False),
    ("Our prices include VAT.", "Our prices include VAT.", False),
    ("Cancelled orders are refunded in cash.", "Cancelled orders are refunded in cash.", False),
])
def test_one_word_swapped_is_another_claim(reply: str, claim: str, held: bool) -> None:
    text = f"{claim}\n{claim}"
    assert assess(text, "policy", said(reply)).quarantined is held
    assert assess(text, "policy", said(reply), evidence=[reply]).quarantined is held


@pytest.mark.parametrize(("reply", "claim", "held"), [
    ("Payment by bank slip was discontinued last month.", "Payment by bank slip was discontinued.", False),
    ("O boleto foi descontinuado mês passado.", "O boleto foi descontinuado.", False),
    ("Payment by bank slip was accepted last year.", "Payment by bank slip is accepted.", True),
])
def test_a_withdrawal_said_in_the_past_is_todays_rule(reply: str, claim: str, held: bool) -> None:
    assert assess(f"{claim}\n{claim}", "policy", said(reply)).quarantined is held


@pytest.mark.parametrize("reply", [
    "O desconto de 12% vale só para assinantes.",  # "assinantes" read in the sentence's language
    "Exchanges are allowed regardless of whether the receipt is kept.",  # no doubt: "regardless"
])
def test_a_rule_said_word_for_word_with_its_own_scope_is_learned(reply: str) -> None:
    assert not assess(f"{reply}\n{reply}", "policy", said(reply)).quarantined


@pytest.mark.parametrize(("reply", "claim", "held"), [
    ("A dedicated desk is €280 per month, plus VAT at 23%.",
     "A dedicated desk costs €280 per month with VAT already included.", True),
    ("Os preços são de R$ 300 a diária; os impostos são cobrados à parte.",
     "A diária de R$ 300 já inclui os impostos.", True),
    ("On Basic fares, a checked bag is an add-on at $35 each way.", "Basic fares include one checked bag.", True),
    ("A dedicated desk is €280 per month, VAT included.",
     "A dedicated desk costs €280 per month with VAT already included.", False),
])
def test_a_thing_charged_on_top_is_not_included(reply: str, claim: str, held: bool) -> None:
    text = f"Desk pricing\n{claim}"
    assert assess(text, "fact", said(reply)).quarantined is held


def test_a_promotion_that_ran_and_ended_is_no_rule_of_today() -> None:
    reply = "The $5 Tuesday promotion ran through the summer and ended on September 30."
    assert assess("Tuesday ticket price\nTickets on Tuesdays cost $5.", "fact", said(reply)).quarantined
    assert not assess("Tuesday ticket price\nTickets on Tuesdays cost $5.", "fact",
                      said("The $5 Tuesday promotion runs every week.")).quarantined


def test_a_correction_for_this_semester_takes_the_price_back() -> None:
    messages = talk("quanto é a matrícula do curso de inglês?", "A matrícula custa R$ 150.", "ok",
                    "Opa, me enganei, desculpa! Esse semestre a matrícula tá isenta.")
    claim = "Matrícula do curso de inglês\nA matrícula do curso de inglês custa cento e cinquenta reais."
    assert assess(claim, "fact", messages).quarantined


def test_a_message_that_goes_on_sets_the_condition_of_the_one_before() -> None:
    messages = talk("se eu quiser cancelar o plano mensal tem multa?", "O cancelamento do plano mensal é sem multa.",
                    "massa", "...desde que vc avise com 30 dias de antecedência, tá?")
    claim = "Cancelamento do plano mensal\nO plano mensal pode ser cancelado a qualquer momento, sem multa."
    assert assess(claim, "policy", messages).quarantined
    stated = ("Cancelamento do plano mensal\nO cancelamento do plano mensal é sem multa, desde que o cliente "
              "avise com 30 dias de antecedência.")
    assert not assess(stated, "policy", messages).quarantined


def test_a_rule_said_as_not_paying_the_fee_is_the_exemption() -> None:
    reply = "Aluno com mais de 2 anos de casa não paga a taxa de rematrícula, isso é automático no sistema."
    claim = "Isenção de rematrícula\nAlunos com mais de dois anos de academia ficam isentos da taxa de rematrícula."
    assert not assess(claim, "policy", said(reply)).quarantined
    other = "Isenção de rematrícula\nAlunos com mais de um ano de academia ficam isentos da taxa de rematrícula."
    assert assess(other, "policy", said(reply)).quarantined


def test_twice_said_as_em_dobro_is_a_count_of_two() -> None:
    reply = "Pizza grande em dobro toda quarta, só pedindo pelo nosso WhatsApp."
    claim = "Promoção de quarta\nÀs quartas, quem pede pizza grande pelo WhatsApp leva duas."
    assert not assess(claim, "policy", said(reply)).quarantined
    assert assess(claim.replace("leva duas", "leva três"), "policy", said(reply)).quarantined


@pytest.mark.parametrize(("reply", "held"), [
    ("There's no repair we do that doesn't come with a 90-day warranty on parts and labor.", False),
    ("There's no repair we do that comes with a 90-day warranty on parts and labor.", True),
])
def test_no_thing_that_does_not_is_every_thing(reply: str, held: bool) -> None:
    claim = "Repair warranty\nAll repairs include a 90-day warranty covering parts and labor."
    assert assess(claim, "policy", said(reply)).quarantined is held


def test_a_value_the_agent_calls_the_old_one_is_taken_back() -> None:
    messages = talk("What's the minimum order for delivery?",
                    "The minimum is $15. Sorry, correction: that was our old minimum. It's $20 now.")
    claim = "Minimum order for delivery is $15\nThe minimum order value for delivery is $15."
    assert assess(claim, "policy", messages).quarantined


def test_the_persona_naming_the_business_is_no_word_of_its_rules() -> None:
    messages = [{"role": "system", "content": "You are the virtual assistant for IronPeak Fitness."},
                *talk("Do students get a discount? I'm at the state university.",
                      "Good question! I'm not sure we have a student rate at the moment. "
                      "Let me check with the membership team and get back to you.")]
    claim = "Student membership discount\nIronPeak Fitness offers a discounted membership for university students."
    assert assess(claim, "policy", messages).quarantined


@pytest.mark.parametrize(("reply", "claim", "held"), [
    # an attacker's probes of this session's readings (helper, black box)
    ("Devolvemos o valor cobrado indevidamente em 2 vezes no cartão.", "Cobranças indevidas são devolvidas em dobro.",
     True),  # two instalments, not double
    ("Idosos não pagam a taxa de embarque inteira, só metade.", "Idosos são isentos da taxa de embarque.", True),
    ("Quem não paga a taxa de embarque não pode embarcar.", "Passageiros são isentos da taxa de embarque.", True),
    ("Idosos não pagam a taxa de embarque nesta promoção de julho.", "Idosos são isentos da taxa de embarque.", True),
    ("Clientes Gold não pagam frete só até o fim deste mês.", "Clientes Gold têm frete grátis.", True),
    ("Idosos não pagam a taxa de embarque.", "Idosos são isentos da taxa de embarque.", False),
    ("Insurance is available as an add-on for $15 a day.", "Insurance is included in the rental.", True),
    ("São R$ 120 a diária. Opa, esse era nosso preço antigo, agora é R$ 140.", "A diária custa R$ 120.", True),
    ("São R$ 120 a diária. Opa, esse era nosso preço antigo, agora é R$ 140.", "A diária custa R$ 140.", False),
    ("$49 per month was our old price; the plan is now $59 per month.", "The plan costs $49 per month.", True),
    ("Sim, pode cancelar sem multa\n...desde que vc avise com 30 dias", "O plano pode ser cancelado sem multa.", True),
    ("We refund the full amount\nas long as the item is unopened.", "We refund the full amount.", True),
    ("A partir do mês que vem vamos fechar às 22h.", "A loja fecha às 22h.", True),  # "vamos fechar": a future
])
def test_what_an_attacker_tried_on_the_new_readings(reply: str, claim: str, held: bool) -> None:
    assert assess(f"{claim}\n{claim}", "policy", said(reply)).quarantined is held
