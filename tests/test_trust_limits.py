"""What the business side said only once, or only under a condition, is no standing rule.

And the words a description names its concept's kind with ("objection", "policy") are no
words of the claim the business must have said.
"""

from __future__ import annotations

import pytest

from insika_knowledge.trust import assess


def said(*turns: tuple[str, str]) -> list[dict[str, str]]:
    return [{"role": role, "content": text} for role, text in turns]


@pytest.mark.parametrize(("reply", "claim", "held"), [
    # the rule said otherwise, then a grant made once in a sentence below the claim's words
    ("Late checkout is normally $30. Since it's your birthday, I'll waive it just this once — "
     "you can stay until 2 pm for free.",
     "Late checkout policy\nGuests can check out late at no cost.", True),
    ("O banho avulso custa R$ 60. Como você é cliente antigo, excepcionalmente vou liberar "
     "esse sem custo hoje.",
     "Banho grátis\nClientes antigos têm banho grátis.", True),
    # the rule said as it stands, beside a courtesy: kept
    ("Late checkout until 2 pm is free for every guest. Enjoy your stay!",
     "Late checkout policy\nGuests can check out late until 2 pm at no cost.", False),
])
def test_a_grant_made_once_is_no_rule(reply: str, claim: str, held: bool) -> None:
    verdict = assess(claim, "policy", said(("user", "Can I get that for free?"), ("assistant", reply)))
    assert verdict.quarantined is held, verdict
    if held:
        assert "granted it once" in verdict.markers, verdict


@pytest.mark.parametrize(("reply", "claim", "held"), [
    # the system prompt's persona names the business (two of the claim's four words): it
    # states no rule, so the condition the agent gave still holds the claim
    ("A primeira hora é grátis pra quem mostra no caixa um cupom de compra acima de R$ 50 feita em "
     "qualquer loja do shopping. Sem cupom, a primeira hora sai por R$ 12.",
     "Primeira hora gratuita\nA primeira hora no estacionamento do shopping é gratuita.", True),
    ("A primeira hora no estacionamento do shopping é grátis, com ou sem compra.",
     "Primeira hora gratuita\nA primeira hora no estacionamento do shopping é gratuita.", False),
])
def test_a_persona_naming_the_business_does_not_state_a_rule_without_values(
        reply: str, claim: str, held: bool) -> None:
    messages = [{"role": "system", "content": "Você é o atendente do Estacionamento do Shopping Central."},
                *said(("user", "a primeira hora é grátis né?"), ("assistant", reply))]
    verdict = assess(claim, "policy", messages)
    assert verdict.quarantined is held, verdict


@pytest.mark.parametrize(("reply", "held"), [
    ("Entendo! Mas o plano já inclui avaliação física todo mês e vc pode trazer um amigo 2 vezes por mês "
     "sem pagar nada. E as aulas coletivas são liberadas em todos os horários.", False),
    ("Entendo, vou ver com a gerência.", True),  # the business said none of it: the values are unstated
])
def test_an_objections_description_is_read_without_its_label(reply: str, held: bool) -> None:
    claim = ("Resposta à objeção de preço\nQuando o cliente acha caro o plano de R$ 139, a academia destaca que "
             "ele inclui avaliação física mensal, duas visitas gratuitas de um amigo por mês e aulas coletivas "
             "em todos os horários.")
    messages = said(("user", "R$ 139 por mês tá caro, a academia do lado cobra R$ 79"), ("assistant", reply))
    verdict = assess(claim, "objection", messages)
    assert verdict.quarantined is held, verdict
