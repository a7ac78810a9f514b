"""Other subjects: a rule about another region, plan, store or weekday is learned beside its
sibling; a changed rule named by what changed is still held for a person.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import make_concept

from insika_knowledge.candidate import Candidate
from insika_knowledge.consolidate import NameRule, name_sighting
from insika_knowledge.consolidate.subjects import other_subject
from insika_knowledge.memory import Memory


def _pair(a: tuple[str, str, str], b: tuple[str, str, str]) -> bool:
    existing = make_concept(a[0], description=a[1], body=a[2], type="policy")
    return other_subject(existing, Candidate(b[0], b[1], "policy", b[2]))


@pytest.mark.parametrize(("a", "b"), [
    # a region, a city, a product line, a tier: a content word of each name its own text says
    (("frete-sul", "Frete para a região Sul", "O frete para a região Sul custa R$ 15."),
     ("frete-nordeste", "Frete para a região Nordeste", "O frete para a região Nordeste custa R$ 30.")),
    (("garantia-eletronicos", "Garantia de eletrônicos", "Eletrônicos têm garantia de 12 meses."),
     ("garantia-moveis", "Garantia de móveis", "Móveis têm garantia de 3 meses.")),
    (("gold-member-discount", "Discount for Gold members", "Gold members get 10% off every order."),
     ("silver-member-discount", "Discount for Silver members", "Silver members get 5% off every order.")),
    # a letter, a bare number, a weekday
    (("horario-loja-d", "Horário da loja D", "A loja D abre às 9h e fecha às 18h."),
     ("horario-loja-a", "Horário da loja A", "A loja A abre às 10h e fecha às 22h.")),
    (("room-101-capacity", "Capacity of room 101", "Room 101 seats 20 people."),
     ("room-202-capacity", "Capacity of room 202", "Room 202 seats 40 people.")),
    (("saturday-hours", "Saturday opening hours", "On Saturdays the store is open from 9 am to 1 pm."),
     ("sunday-hours", "Sunday opening hours", "On Sundays the store is open from 10 am to 4 pm.")),
])
def test_another_subject_of_the_same_kind_with_its_own_values_is_a_sibling(
        a: tuple[str, str, str], b: tuple[str, str, str]) -> None:
    assert _pair(a, b)
    assert _pair(b, a)


@pytest.mark.parametrize(("a", "b"), [
    # named by the new value: a value with a unit names no subject
    (("returns-30-days", "Returns within 30 days", "Items can be returned within 30 days."),
     ("returns-14-days", "Returns within 14 days", "Items can be returned within 14 days.")),
    # named by the new means, nothing else changed: one rule's two versions
    (("carrier-fedex", "Orders ship with FedEx", "All orders ship with FedEx."),
     ("carrier-ups", "Orders ship with UPS", "All orders ship with UPS.")),
    # a word of the claim vocabulary (free / fee) names no subject
    (("store-pickup-free", "Free store pickup", "Store pickup is free."),
     ("store-pickup-fee", "Store pickup fee", "Store pickup costs $5.")),
    # a change announced, a restriction, a withdrawal, a negation more
    (("frete-correios", "Envio pelos Correios", "Pedidos para o Sul custam R$ 15 pelos Correios."),
     ("frete-jadlog", "Envio pela Jadlog", "Pedidos para o Sul agora custam R$ 20 pela Jadlog.")),
    (("support-phone", "Support by phone", "Customer support by phone answers in 2 hours."),
     ("support-chat", "Support by chat", "Customer support is by chat only, answering in 10 minutes.")),
    (("entrega-sabado", "Entrega aos sábados", "Entregamos aos sábados em até 2 dias."),
     ("entrega-domingo", "Entrega aos domingos", "Deixamos de entregar aos domingos em 5 dias.")),
    (("gold-returns", "Returns for Gold members", "Gold members can return items within 60 days."),
     ("silver-returns", "Returns for Silver members", "Silver members cannot return items after 30 days.")),
    # one name does not name its subject ("regional"): a drifting name
    (("south-free-shipping", "Free shipping to the South", "Free shipping to the South region over $50."),
     ("regional-free-shipping", "Regional free shipping", "Free shipping to the Northeast region over $80.")),
    # the same subject on both sides ("campinas" in both texts), another hub
    (("hub-campinas", "Campinas hub", "Orders to Campinas ship from Extrema in 2 days."),
     ("hub-jundiai", "Jundiaí hub", "Orders to Campinas ship from Jundiaí in 1 day.")),
])
def test_a_change_named_by_what_changed_is_no_sibling(a: tuple[str, str, str], b: tuple[str, str, str]) -> None:
    assert not _pair(a, b)


def test_a_sibling_is_no_close_match_for_the_naming_step() -> None:
    on_record = make_concept("horario-loja-d", description="Horário da loja D", type="policy",
                             body="A loja D abre às 9h e fecha às 18h.")
    sibling = Candidate("horario-loja-a", "Horário da loja A", "policy", "A loja A abre às 10h e fecha às 22h.")
    assert name_sighting(sibling, known=False, matches=[on_record]).rule is NameRule.NEW
    assert name_sighting(sibling, known=False, matches=[], meaning=[(on_record, 0.93)]).rule is NameRule.NEW
    drifted = Candidate("horario-da-loja", "Horário da loja D", "policy", "A loja D abre às 10h e fecha às 22h.")
    assert name_sighting(drifted, known=False, matches=[on_record]).rule is NameRule.POSSIBLE_DUPLICATE


def test_a_second_region_is_learned_and_a_changed_carrier_held_through_the_front_door(tmp_path: Path) -> None:
    memory = Memory(tmp_path / "k.db")

    def propose(name: str, description: str, body: str, session: str) -> str:
        said = [{"role": "user", "content": "?"}, {"role": "assistant", "content": f"{description} {body}"}]
        report = memory.propose({"name": name, "description": description, "type": "policy", "body": body},
                                agent="loja", session_id=session, messages=said)
        [(_, outcome)] = report.results
        return outcome

    try:
        assert propose("frete-sul", "Frete para a região Sul", "O frete para a região Sul custa R$ 15.", "s1") \
            == "learned"
        assert propose("frete-nordeste", "Frete para a região Nordeste",
                       "O frete para a região Nordeste custa R$ 30.", "s2") == "learned"
        assert propose("carrier-fedex", "Orders ship with FedEx", "All orders ship with FedEx.", "s3") == "learned"
        assert propose("carrier-ups", "Orders ship with UPS", "All orders ship with UPS.", "s4") \
            == "possible_duplicate"
        assert {c.name for c in memory.concepts(agent="loja")} == {"frete-sul", "frete-nordeste", "carrier-fedex"}
    finally:
        memory.close()
