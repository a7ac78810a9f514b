"""A claim that drops the season, the "only with" or the later message that scopes what the
agent said, that says delivered for shipped or per head for the whole, is another claim;
"não importa quanto tempo" is no negation.

Each row is a conversation of our own and the candidate a model would propose from it;
``held`` is whether the trust gate quarantines it (`trust.assess`).
"""

from __future__ import annotations

import pytest

from insika_knowledge.trust import assess


def talk(*texts: str) -> list[dict[str, str]]:
    """A transcript of `texts`, the customer's first, then the agent's, in turn."""
    return [{"role": ("user", "assistant")[k % 2], "content": text} for k, text in enumerate(texts)]


def held(claim: str, kind: str, messages: list[dict[str, str]]) -> bool:
    return assess(claim, kind, messages).quarantined


def test_a_season_the_claim_drops() -> None:
    messages = [{"role": "system", "content": "Você é o atendente do aluguel de bikes Pedal Lagoa."},
                *talk("vcs abrem 7h? queria pedalar cedo",
                      "De novembro a fevereiro a gente abre às 7h! No resto do ano, às 9h.")]
    assert held("Horário do aluguel de bikes\nO aluguel de bikes abre todos os dias às 7h.", "fact", messages)
    assert not held("Horário do aluguel de bikes\nDe novembro a fevereiro, o aluguel de bikes abre às 7h.", "fact",
                    messages)


def test_a_yes_bound_to_an_only_with_the_claim_drops() -> None:
    messages = talk("oi, posso colocar um ar-condicionado na sala do ap que eu alugo?",
                    "Pode sim, mas só com autorização por escrito do proprietário antes da instalação. É só mandar "
                    "o pedido pelo portal do inquilino informando o modelo do aparelho.")
    assert held("Instalação de ar-condicionado pelo inquilino\nInquilinos podem instalar ar-condicionado no imóvel "
                "alugado, do modelo que quiserem.", "policy", messages)


def test_a_later_message_that_adds_to_the_first_scopes_it() -> None:
    messages = talk("dá pra fazer late checkout?", "Dá sim, o late checkout vai até as 15h!", "oba",
                    "Só complementando: sem custo é só pra hóspedes do programa Ouro. Pros demais custa R$ 90.")
    assert held("Late checkout\nO late checkout até as 15h é gratuito para todos os hóspedes.", "policy", messages)


def test_shipped_is_not_delivered_and_the_whole_is_not_per_head() -> None:
    shipping = talk("If I order today, will it arrive today?",
                    "Orders placed before noon ship out the same day! Delivery then takes 1-3 business days.")
    assert held("Same-day orders\nOrders placed before noon are delivered the same day.", "policy", shipping)
    assert not held("Same-day dispatch\nOrders placed before noon ship out the same day.", "policy", shipping)
    boat = talk("How much is the fishing charter? We're 6.",
                "The half-day fishing charter is $600 for the whole boat, for up to 8 people, bait included.")
    assert held("Fishing charter price\nThe half-day fishing charter costs $600 per person.", "fact", boat)


@pytest.mark.parametrize(("reply", "claim"), [
    ("É valor fixo: R$ 30 pelo dia, não importa quanto tempo a moto fique.",
     "Estacionamento de motos\nO estacionamento de motos cobra R$ 30 fixos por dia, independentemente do tempo."),
    ("It's a flat $18 a day, no matter how long the bike stays.",
     "Bike parking\nBike parking is a flat $18 per day, regardless of how long the bike stays."),
])
def test_no_matter_how_long_is_no_negation(reply: str, claim: str) -> None:
    assert not held(claim, "fact", talk("is it hourly or a flat fee?", reply))


@pytest.mark.parametrize(("reply", "claim", "quarantined"), [
    # the answer's "No" and the "not" are no double negation: the pole is denied
    ("No, breakfast is not included; it's $15 extra per person.", "Breakfast\nBreakfast is included in the rate.",
     True),
    ("Não, o estacionamento não está incluso, é cobrado à parte (R$ 30).",
     "Estacionamento\nO estacionamento está incluso na diária.", True),
    ("No, breakfast is not included; it's $15 extra per person.",
     "Breakfast\nBreakfast is not included in the rate; it costs $15 extra per person.", False),
])
def test_an_answers_no_does_not_cancel_the_not(reply: str, claim: str, quarantined: bool) -> None:
    assert held(claim, "policy", talk("Is it included?", reply)) is quarantined


@pytest.mark.parametrize(("reply", "claim", "quarantined"), [
    # a next sentence that points back to scope the one before ("Isso vale só para ...")
    ("Free shipping on orders over $50. That only applies to members, though.",
     "Free shipping\nFree shipping on orders over $50.", True),
    ("Free shipping on orders over $50. That only applies to members, though.",
     "Free shipping for members\nMembers get free shipping on orders over $50.", False),
    ("Frete grátis acima de R$ 200. Isso vale só para o Sudeste.",
     "Frete grátis\nFrete grátis acima de R$ 200 para todo o Brasil.", True),
])
def test_a_scope_said_in_the_next_sentence(reply: str, claim: str, quarantined: bool) -> None:
    assert held(claim, "policy", talk("Tell me about it?", reply)) is quarantined
