"""Values read whole, in the units they fill (issue 26, forty-ninth session).

"$1,800.00 or more" is one amount, not 1 and 800; "(20h às 6h)" a span as "das 20h às 6h"
is; "120 minutos" two hours and "1h30" ninety minutes; "2 toneladas" "2.000 kg". And a
later message offering times ("Tem às 9h e às 10h30") takes no opening hours back.
"""

from __future__ import annotations

import pytest

from insika_knowledge.analysis.structure import content_terms, whole_duration
from insika_knowledge.consolidate.claims import assertion, same_claims
from insika_knowledge.trust.assess import assess


def same(a: str, b: str) -> bool:
    return same_claims(assertion(a, a), assertion(b, b)) and same_claims(assertion(b, b), assertion(a, a))


def values(text: str) -> set[str]:
    return {t for t in content_terms(text) if t.startswith("m:")}


@pytest.mark.parametrize(("text", "expected"), [
    ("Freight is free on orders of $1,800.00 or more.", {"m:1800:usd"}),
    ("Pedidos de R$ 1.299,00 ou mais têm frete grátis.", {"m:1299:brl"}),
    ("Refunds of $2,500.50 or less are automatic.", {"m:2500.5:usd"}),
    ("Orders of 12 or more boxes ship free.", {"m:12:"}),
    ("O limite noturno (20h às 6h) é de R$ 1.000,00.", {"m:20-6:hour", "m:1000:brl"}),
    ("A unidade atende 8h às 12h.", {"m:8-12:hour"}),
])
def test_a_value_is_read_whole(text: str, expected: set[str]) -> None:
    assert values(text) == expected


@pytest.mark.parametrize(("token", "whole"), [
    ("m:120:minute", "m:2:hour"), ("m:1.5:hour", "m:90:minute"), ("m:90:minute", "m:90:minute"),
    ("m:1440:minute", "m:1:day"), ("m:2:t", "m:2:t"), ("m:2000:kg", "m:2:t"), ("m:2500:kg", "m:2500:kg"),
])
def test_a_duration_or_mass_reads_in_the_largest_unit_it_fills(token: str, whole: str) -> None:
    assert whole_duration(token) == whole


@pytest.mark.parametrize(("a", "b", "alike"), [
    ("A vistoria do veículo dura 90 minutos.", "A vistoria do veículo dura 1h30.", True),
    ("A vistoria do veículo dura 90 minutos.", "A vistoria do veículo dura 1h.", False),
    ("Games can be refunded with less than 2 hours played.", "Games can be refunded with less than 120 minutes played.",
     True),
    ("Games can be refunded with less than 2 hours played.", "Games can be refunded with less than 100 minutes played.",
     False),
    ("Pedidos acima de 2 toneladas têm frete grátis.", "Pedidos acima de 2.000 kg têm frete grátis.", True),
    ("Pedidos acima de 2 toneladas têm frete grátis.", "Pedidos acima de 200 kg têm frete grátis.", False),
])
def test_one_duration_or_mass_in_two_units(a: str, b: str, alike: bool) -> None:
    assert same(a, b) is alike


def test_times_offered_later_take_no_opening_hours_back() -> None:
    messages = [{"role": "user", "content": "vcs atendem sabado?"},
                {"role": "assistant", "content": "Oi! A unidade Savassi atende aos sábados das 8h às 12h."},
                {"role": "user", "content": "tem horario dia 21?"},
                {"role": "assistant", "content": "Tem às 9h e às 10h30. Qual prefere?"}]
    claim = "Sábados na Savassi\nA unidade Savassi atende aos sábados das 8h às 12h."
    assert not assess(claim, "policy", messages).quarantined
    # (a later sentence that names the claim's words, or opens by correcting, still takes it
    # back: tests/test_trust_evidence.py::test_a_later_value_for_the_same_subject_takes_the_rule_back)


@pytest.mark.parametrize(("said", "claim"), [
    ("Freight is free once the order reaches $1,800.00 before tax.",
     "Free freight\nFreight is free on orders of $1,800.00 or more before tax."),
    ("No período noturno, das 20h às 6h, o limite de PIX é de R$ 1.000,00 por transação.",
     "Limite noturno\nNo período noturno (20h às 6h), o limite de PIX é de R$ 1.000,00 por transação."),
    ("Você pode pedir reembolso em até 7 dias, desde que tenha jogado menos de duas horas.",
     "Reembolso\nJogos podem ser reembolsados em até 7 dias, com menos de 120 minutos de jogo."),
])
def test_a_rule_the_agent_said_in_other_units_is_learned(said: str, claim: str) -> None:
    messages = [{"role": "user", "content": "como funciona?"}, {"role": "assistant", "content": said}]
    assert not assess(claim, "policy", messages).quarantined


@pytest.mark.parametrize(("text", "expected"), [
    ("A decision within two business weeks.", {"m:10:day:business"}),
    ("A decision within 3 working weeks.", {"m:15:day:business"}),
    ("A decision within 2 weeks.", {"m:2:week"}),
])
def test_a_business_week_is_five_business_days(text: str, expected: set[str]) -> None:
    assert values(text) == expected


def test_a_credit_members_receive_is_the_credit_the_business_adds() -> None:
    """"Members automatically receive a credit" and "we automatically add a credit to your
    account" name one act from its two sides: the adverb is no act of either party.
    """
    messages = [{"role": "user", "content": "My order came 20 minutes late. Do I get anything?"},
                {"role": "assistant", "content": "Sorry! As a Plus member, if an order arrives more than 15 minutes "
                                                 "after the latest time shown at checkout, we automatically add a "
                                                 "$5.00 credit to your account within 24 hours."}]
    claim = "On-time promise credit\nPlus members automatically receive a $5.00 account credit within 24 hours " \
            "when an order arrives more than 15 minutes after the latest checkout estimate."
    assert not assess(claim, "policy", messages).quarantined
