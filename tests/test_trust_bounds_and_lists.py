"""A claim that gives the business's value another bound, another currency, one list item
more, or the rule of a single example, is another claim; a limit the agent confirms in its
own words, a staff note in a tool's record, and the pieces of a procedure are the business's.

Each row is a conversation of our own and the candidate a model would propose from it;
``held`` is whether the trust gate quarantines it (`trust.assess`).
"""

from __future__ import annotations

import json

import pytest

from insika_knowledge.trust import assess


def talk(*texts: str) -> list[dict[str, str]]:
    """A transcript of `texts`, the customer's first, then the agent's, in turn."""
    return [{"role": ("user", "assistant")[k % 2], "content": text} for k, text in enumerate(texts)]


def held(claim: str, kind: str, messages: list[dict[str, str]]) -> bool:
    return assess(f"{claim}\n{claim}", kind, messages).quarantined


@pytest.mark.parametrize(("reply", "claim", "quarantined"), [
    # the agent's upper bound given as a lower one, and the other way round
    ("Carry-on bags can weigh up to 8 kg. Anything heavier must be checked.",
     "The carry-on rate applies to bags of 8 kg or more; lighter bags are checked.", True),
    ("Carry-on bags can weigh up to 8 kg. Anything heavier must be checked.",
     "Carry-on bags may weigh at most 8 kg.", False),
    # a price that starts somewhere given as the price
    ("Our deep cleaning starts at $120 for a studio; bigger homes cost more.",
     "A deep cleaning costs a flat $120 for any home.", True),
    ("O corte infantil sai a partir de R$ 35, depende do cabelo.", "O corte infantil custa R$ 35 fixo.", True),
    ("Our deep cleaning starts at $120 for a studio.", "Deep cleaning starts at $120 for a studio.", False),
])
def test_a_bound_turned_is_another_claim(reply: str, claim: str, quarantined: bool) -> None:
    assert held(claim, "policy", talk("How much is it?", reply)) is quarantined


@pytest.mark.parametrize(("reply", "claim", "quarantined"), [
    ("A two-hour kayak rental is CA$45, life vest included.", "A two-hour kayak rental costs US$45.", True),
    ("A two-hour kayak rental is CA$45, life vest included.", "A two-hour kayak rental costs CA$45.", False),
    ("So an oil change is forty bucks and takes an hour.", "An oil change costs $40 and takes one hour.", False),
])
def test_a_currency_is_part_of_the_value(reply: str, claim: str, quarantined: bool) -> None:
    assert held(claim, "fact", talk("how much?", reply)) is quarantined


@pytest.mark.parametrize(("reply", "claim", "quarantined"), [
    ("Para a matrícula aceitamos RG ou CNH, originais.", "Para a matrícula aceitamos RG, CNH ou passaporte.", True),
    ("We accept Visa or Mastercard at the counter.", "We accept Visa, Mastercard or Amex at the counter.", True),
    ("We accept Visa or Mastercard at the counter.", "Visa or Mastercard are accepted at the counter.", False),
])
def test_one_list_item_more_is_another_claim(reply: str, claim: str, quarantined: bool) -> None:
    assert held(claim, "policy", talk("quais documentos?", reply)) is quarantined


def test_not_all_is_not_none() -> None:
    reply = "Not all items can be returned: opened software is final sale. Everything else has 30 days."
    assert held("Items cannot be returned.", "policy", talk("can I return it?", reply))
    assert not held("Opened software is final sale.", "policy", talk("can I return it?", reply))


def test_an_example_is_not_the_rule() -> None:
    reply = ("Delivery depends on the city. For example, orders to Campinas usually arrive in 1 day; "
             "other cities can take up to 8 business days.")
    assert held("Orders are delivered within 1 day.", "policy", talk("when does it arrive?", reply))


def test_a_limit_confirmed_in_the_agents_words_is_the_business_s() -> None:
    messages = talk("You guys don't deliver on Sundays, right?",
                    "Correct, we don't deliver on Sundays. Deliveries run Monday through Saturday, 9am to 7pm.")
    claim = "Delivery days\nNo deliveries on Sundays; deliveries run Monday to Saturday, 9am–7pm."
    assert not assess(claim, "policy", messages).quarantined
    # an offer the customer put in a tag question stays the customer's, confirmed or not
    offer = talk("O cartão da loja dá 25% de desconto, né?", "Isso mesmo, o cartão da loja dá 25% de desconto.")
    assert held("O cartão da loja dá 25% de desconto.", "policy", offer)


def test_a_staff_note_in_a_tools_record_is_the_business_s() -> None:
    record = {"ticket": "T-1", "plan": "Gold", "internal_note": {"author": "Support team", "text":
                                                                   "Gold plan: free battery swap once a year."}}
    messages = [{"role": "user", "content": "my battery is dying, do I pay for a new one?"},
                {"role": "assistant", "content": "Let me look at your plan."},
                {"role": "tool", "content": json.dumps(record)},
                {"role": "assistant", "content": "You're on Gold, so the battery swap is free once a year."}]
    assert not held("Gold plan customers get a free battery swap once a year.", "policy", messages)
    customer = dict(record, customer_note="Gold plan: free battery swap every month.")
    del customer["internal_note"]
    messages[2] = {"role": "tool", "content": json.dumps(customer)}
    messages[3] = {"role": "assistant", "content": "I've noted your request."}
    assert held("Gold plan customers get a free battery swap every month.", "policy", messages)


@pytest.mark.parametrize(("reply", "claim"), [
    ("Your card is ready in 3 days, and we'll text you as soon as it's ready.",
     "Cards are ready in 3 days; the store texts the customer when the card is ready."),
    ("Your loyalty 5% applies on top of sale prices, and at checkout it'll use whichever saves you more.",
     "The 5% loyalty discount applies on top of sale prices; checkout uses whichever saves more."),
    ("Lockers are free. Padlocks aren't included though; a padlock is $3 extra.",
     "Lockers are free; padlocks are not included and cost $3 extra."),
])
def test_a_standing_rule_said_as_what_happens_each_time(reply: str, claim: str) -> None:
    assert not held(claim, "fact", talk("how does it work?", reply))


def test_a_procedure_named_in_the_customers_words() -> None:
    messages = talk("a impressora travou de novo",
                    "Vamos lá: 1) desliga a impressora; 2) espera uns 20 segundos; 3) liga de novo.",
                    "e se não resolver?", "Aí me avisa aqui que eu abro um chamado pra vc.")
    claim = ("Impressora travada\nEm caso de impressora travada: 1) desligar a impressora; 2) aguardar cerca "
             "de 20 segundos; 3) ligar de novo; 4) se não resolver, avisar o suporte para abrir chamado.")
    assert not assess(claim, "procedure", messages).quarantined
