"""The correction readings of one text (`insika_knowledge.trust.corrections`)."""

from __future__ import annotations

import pytest

from insika_knowledge.analysis.structure import content_terms
from insika_knowledge.analysis.text import fold
from insika_knowledge.trust.corrections import (
    narrower_subject,
    without_change_account,
    without_explanation,
    without_old_value,
)


@pytest.mark.parametrize(("text", "left"), [
    ("Errei: desde janeiro é R$ 35.", {"erre", "m:35:brl"}),
    ("Retificando: passou para R$ 35 em janeiro.", {"retific", "m:35:brl"}),
    ("Na verdade é R$ 140, desde o reajuste de março.", {"verdad", "m:140:brl"}),
    ("Sorry, that changed last week: shipping is now $10.", {"sorr", "s_ship", "now", "m:10:usd"}),
    ("Correction: it's 20 days for every order.", {"correct", "m:20:day"}),
])
def test_how_a_correction_accounts_for_a_change_is_read_out(text: str, left: set[str]) -> None:
    assert content_terms(without_change_account(fold(text))) == left


@pytest.mark.parametrize("text", [
    "Since you're a member, shipping is $0.",  # the customer's case
    "Frete grátis desde que o pedido passe de R$ 200.",  # a condition
    "This week delivery is free.",  # a while, not when a value changed
    "For every order above $200 the discount is 15%.",  # every one of a kind with a qualifier
])
def test_a_condition_or_a_while_is_no_account_of_a_change(text: str) -> None:
    assert without_change_account(fold(text)) == fold(text)


def test_every_case_of_the_claims_own_kind_is_every_case() -> None:
    claim = "Moving\nAppointments can be moved up to 24 hours before."
    text = fold("Correction: for all appointments, it's 48 hours before.")
    assert "appoint" not in content_terms(without_change_account(text, claim))
    assert "appoint" in content_terms(without_change_account(text))


@pytest.mark.parametrize(("text", "kept"), [
    ("Apologies, it's $35, not $25.", "Apologies, it's $35."),
    ("Desculpe, é R$ 200,00, e não R$ 150,00.", "Desculpe, é R$ 200,00."),
    ("To be precise, it's 14 days from delivery, not 30.", "To be precise, it's 14 days from delivery."),
    # a contrast with more words than a value and its unit is not a wrong value named
    ("The Pro has a 2-year warranty, not the 1-year warranty of the Lite.",
     "The Pro has a 2-year warranty, not the 1-year warranty of the Lite."),
])
def test_the_wrong_value_named_after_the_right_one_is_read_out(text: str, kept: str) -> None:
    assert without_old_value(text) == kept


@pytest.mark.parametrize(("text", "kept"), [
    ("Correction — it's 30 days, the policy changed last month.", "Correction — it's 30 days"),
    ("Scratch that, it's $35 since January.", "Scratch that, it's $35 "),
    # no explicit correction before the value: nothing is set aside
    ("R$ 15, ou melhor, R$ 18, porque houve reajuste.", "R$ 15, ou melhor, R$ 18, porque houve reajuste."),
])
def test_the_reason_after_a_corrected_value_is_set_aside(text: str, kept: str) -> None:
    assert without_explanation(text) == kept


@pytest.mark.parametrize(("claim", "text", "said", "narrower"), [
    ("Delivery\nDelivery is $5.", "Correction: same-day delivery is $12.", "", True),
    ("Shipping\nShipping is $10.", "Actually, international shipping is $40.", "", True),
    ("Consulta\nA consulta custa R$ 200.", "Correção: a consulta de retorno custa R$ 100.", "", True),
    ("Plano\nO plano Light custa R$ 39,90.", "Correção: o plano Plus custa R$ 59,90.", "", True),
    ("Refunds\nRefunds take 5 days.", "Correction for international cards: refunds take 10 days.", "", True),
    ("Piscina\nA piscina abre às 7h.", "Correção: em fevereiro a piscina abre às 9h.", "", True),
    ("Store\nThe store opens at 9 am.", "Correction: Sunday hours start at 11 am.", "", True),
    ("Returns\nReturns are accepted within 30 days.",
     "Correction: since this item was on clearance, returns are accepted within 7 days.", "", True),
    ("Gym\nThe gym opens at 6 am.", "Sorry, since Monday the gym opens at 5 am.", "", False),
    # the same subject: words of which version, the business's own brand, a month of a change
    ("Delivery\nDelivery is $5.", "Correction: the new delivery fee is $7.", "", False),
    ("Frete\nO frete é R$ 10.", "Correção: o frete agora é R$ 12.", "", False),
    ("Day pass\nA day pass costs $15.", "Correction: a Brightgym day pass costs $18.",
     "Welcome to Brightgym! A day pass costs $15.", False),
    ("Parking\nParking is $10 a day.", "Correction: in January the price went up to $12 a day.", "", False),
    ("Refunds\nRefunds take 5 days.", "Correction for all orders: refunds take 7 days.", "", False),
])
def test_a_correction_of_a_narrower_subject_is_told_from_one_of_the_claim(
        claim: str, text: str, said: str, narrower: bool) -> None:
    assert narrower_subject(claim, text, said) is narrower
