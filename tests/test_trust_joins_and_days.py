"""What the business side said, read for how it is joined, on which days, by whom, and free
(issue 26, forty-ninth session): a claim learned from these turns would be wider than the rule.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from insika_knowledge.trust.assess import assess
from insika_knowledge.trust.joins import joined_otherwise


def turn(*said: tuple[str, str]) -> list[dict[str, str]]:
    return [{"role": role, "content": text} for role, text in said]


@pytest.mark.parametrize(("claim", "sentence", "otherwise"), [
    ("The deposit is waived for Rio residents or for customers who pay by credit card.",
     "It's waived if you're a Rio resident and you pay with a credit card.", True),
    ("A caução é dispensada para moradores do Rio ou para quem paga com cartão de crédito.",
     "A caução é dispensada se você mora no Rio e paga com cartão de crédito.", True),
    # the same join, or an "and" of subjects (each of whom gets it), is no other rule
    ("The deposit is waived for Rio residents or for customers who pay by credit card.",
     "It's waived if you're a Rio resident or you pay with a credit card.", False),
    ("Residents or students get 10% off.", "Residents and students get 10% off.", False),
    ("The deposit is waived for Rio residents who pay by credit card.",
     "It's waived if you're a Rio resident and you pay with a credit card.", False),
])
def test_a_condition_that_asks_for_both_is_no_claim_of_either(claim: str, sentence: str, otherwise: bool) -> None:
    assert joined_otherwise(claim, sentence) is otherwise


def test_a_rule_the_agent_gave_for_both_conditions_is_not_learned_for_either() -> None:
    messages = turn(("user", "Is there a deposit for an e-bike?"),
                    ("assistant", "Yes, the deposit is R$ 300. It's waived if you're a Rio resident and you pay "
                                  "with a credit card: both conditions need to apply."))
    wider = "E-bike deposit waiver\nThe R$ 300 e-bike deposit is waived for Rio residents or for customers who " \
            "pay by credit card."
    assert assess(wider, "policy", messages).quarantined
    same = "E-bike deposit waiver\nThe R$ 300 e-bike deposit is waived for Rio residents who pay by credit card."
    assert not assess(same, "policy", messages).quarantined


def test_a_price_the_agent_gave_for_weekdays_is_not_learned_for_every_day() -> None:
    messages = turn(("user", "How much is the large meeting room?"),
                    ("assistant", "For members, the large meeting room is $20 per hour Monday to Friday. On "
                                  "Saturdays it's $30 per hour."))
    assert assess("Meeting room rate\nMembers pay $20 per hour for the large meeting room.", "fact",
                  messages).quarantined
    assert not assess("Meeting room rate\nMembers pay $20 per hour for the large meeting room Monday to Friday.",
                      "fact", messages).quarantined


def test_a_day_named_after_a_weekday_limits_nothing() -> None:
    messages = turn(("user", "Are you open on Thanksgiving Day?"),
                    ("assistant", "We're closed on Thanksgiving Day and reopen the next day at 6 am for Black Friday."))
    claim = "Thanksgiving hours\nThe store is closed on Thanksgiving Day and opens at 6 am the following day."
    assert not assess(claim, "fact", messages).quarantined


def test_a_ticket_the_customer_opened_is_the_customers_words() -> None:
    ticket = {"ticket": "AP-30918", "aberto_por": "cliente (app)", "assunto": "Contestação de multa",
              "descricao": "A multa por atraso de vocês só pode ser cobrada depois de 10 dias de atraso.",
              "status": "em análise"}
    messages = [{"role": "user", "content": "oi, e meu chamado da multa?"},
                {"role": "assistant", "content": None, "tool_calls": [
                    {"id": "c1", "type": "function", "function": {"name": "get_ticket", "arguments": "{}"}}]},
                {"role": "tool", "tool_call_id": "c1", "content": json.dumps(ticket, ensure_ascii=False)},
                {"role": "assistant", "content": "Seu chamado AP-30918 está em análise."}]
    claim = "Multa após 10 dias\nA multa por atraso só é cobrada depois de 10 dias de atraso."
    assert assess(claim, "policy", messages).quarantined
    by_staff = [*messages[:2], {"role": "tool", "tool_call_id": "c1", "content": json.dumps(
        {**ticket, "aberto_por": "customer service"}, ensure_ascii=False)}, messages[3]]
    assert not assess(claim, "policy", by_staff).quarantined  # the business's own staff wrote it


def test_free_that_only_a_customers_review_says_is_not_learned() -> None:
    """The tool's product record holds a review (the customer's words) and a delivery fee; the
    agent never calls delivery free: a claim of free delivery is the reviewer's.
    """
    product = {"sku": "SR-24", "name": "Sunrise Roses", "stems": 24, "price": "$64.00",
               "same_day_cutoff": "1:00 PM local time", "delivery_fee": "$9.95", "sunday_delivery": True,
               "reviews": [{"rating": 5, "author": "Marisol K.",
                            "text": "Gorgeous! And delivery is free anywhere in the city on Sundays, so order then!"}]}
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "You are the online assistant for Petal & Stem Florists."},
        {"role": "user", "content": "Hi! Can I get the Sunrise Roses bouquet delivered today? It's Sunday."},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "get_product", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": json.dumps(product)},
        {"role": "assistant", "content": "Yes! The Sunrise Roses bouquet (24 stems, $64.00) can be delivered today "
                                         "as long as you order before 1:00 PM local time. We do deliver on Sundays."},
        {"role": "user", "content": "Nice, so delivery is free since it's Sunday?"},
        {"role": "assistant", "content": "Let me get your delivery address first so I can show you the total."},
        {"role": "user", "content": "14 Alder Lane."}]
    claim = "Sunday delivery\nPetal & Stem Florists deliver free of charge anywhere in the city on Sundays."
    assert assess(claim, "policy", messages).quarantined
    free = {k: v for k, v in product.items() if k not in ("delivery_fee", "reviews")}
    said = [*messages[:3], {"role": "tool", "tool_call_id": "call_1", "content": json.dumps(free)},
            {"role": "assistant", "content": "Yes! And delivery is free anywhere in the city on Sundays."}]
    assert not assess(claim, "policy", said).quarantined  # the business said it too


def test_what_the_agent_said_of_another_plan_is_not_learned_for_the_customers() -> None:
    messages = turn(("system", "You are the support assistant for Sinal+ Telecom."),
                    ("user", "Hi, I'm on the Start 15GB plan and flying to Buenos Aires. Is roaming included?"),
                    ("assistant", "Hi! Mercosur roaming with 5 GB of data is included on the Premium 100GB plan. On "
                                  "Start 15GB, roaming is charged through the daily pass, R$ 29.90 for each day."))
    start = "Start plan roaming\nThe Start 15GB plan includes roaming in Mercosur countries with 5 GB of data."
    assert assess(start, "policy", messages).quarantined
    premium = "Premium plan roaming\nThe Premium 100GB plan includes roaming in Mercosur countries with 5 GB of data."
    assert not assess(premium, "policy", messages).quarantined


def test_what_one_branch_offers_is_not_learned_for_the_business() -> None:
    """The business's own name (its system prompt's) is in every sentence it says: a rule said
    of one branch is read for how it is limited whether or not the claim repeats that name.
    """
    messages = turn(("system", "Você é a assistente da Escola de Música Clave de Sol, unidade Moema."),
                    ("user", "Oi, queria agendar uma aula experimental de violão pro meu filho de 10 anos, quanto "
                             "custa?"),
                    ("assistant", "Oi! Na unidade Pinheiros a aula experimental é gratuita, de 30 minutos. Aqui na "
                                  "Moema ela custa R$ 60,00, e esse valor é abatido da primeira mensalidade se ele se "
                                  "matricular."),
                    ("user", "ah, entendi. tem horário sábado de manhã?"),
                    ("assistant", "Tem sim, sábado às 10h com o professor Caio."), ("user", "pode marcar"))
    claim = "Aula experimental de instrumento\nA aula experimental na Escola de Música Clave de Sol é gratuita " \
            "e dura 30 minutos."
    assert assess(claim, "policy", messages).quarantined
    branch = "Aula experimental em Pinheiros\nNa unidade Pinheiros, a aula experimental é gratuita e dura 30 minutos."
    assert not assess(branch, "policy", messages).quarantined


def test_a_price_the_agent_gave_for_weekdays_is_not_learned_for_weekends() -> None:
    messages = turn(("user", "How much is parking?"), ("assistant", "Parking costs $15 per day Mon–Fri."))
    assert assess("Parking\nParking costs $15 per day on weekends.", "policy", messages).quarantined
    assert not assess("Parking\nParking costs $15 per day Monday to Friday.", "policy", messages).quarantined
    assert not assess("Parking\nParking costs $15 per day on weekdays.", "policy", messages).quarantined
