"""Two versions of one rule that a merge model listing both must not fold into one (issue 26).

A price that includes a thing against one that charges it apart; a rule under a condition
against the same rule "regardless"; money back against store credit, a refund that names no
form being money. And the claims that add to each other, which stay mergeable.
"""

from __future__ import annotations

import pytest

from insika_knowledge.consolidate import interpret_merge
from insika_knowledge.consolidate.merge import LISTED, versions
from insika_knowledge.extract.model import MergeAnswer


@pytest.mark.parametrize(("old", "new"), [
    ("Every hotel rate includes the city tax.", "The city tax is added to every hotel rate."),
    ("As diárias já incluem a taxa de serviço.", "A taxa de serviço é cobrada à parte das diárias."),
    ("The monthly plan price includes VAT.", "VAT is charged on top of the monthly plan price."),
    ("Members may book two classes a day, provided they checked in once this week.",
     "Members may book two classes a day, regardless of check-ins."),
    ("A remarcação é gratuita se pedida com 24 horas de antecedência.",
     "A remarcação é gratuita, independentemente da antecedência."),
    ("Lost luggage is reimbursed in full.", "Lost luggage earns a voucher for the next booking."),
    ("Aulas canceladas pela escola são reembolsadas.",
     "Aulas canceladas pela escola geram crédito para a próxima compra."),
    # free against charged with no amount; "always" against "never"; a passive leaving the business unsaid
    ("Delivery is charged on every order.", "Delivery is never charged."),
    ("A troca é grátis.", "A troca é paga."),
    ("Sempre cobramos a taxa de entrega.", "Nunca cobramos a taxa de entrega."),
    ("We offer same-day delivery.", "Same-day delivery is no longer offered."),
    ("Consertamos celulares em até 5 dias.", "Celulares não são consertados."),
    # a restriction added ("only"), with or without a value of its own
    ("Parcelamos em até 12x sem juros.", "Parcelamos em até 12x sem juros apenas acima de R$ 800."),
    ("Late checkout is free.", "Late checkout is free only for loyalty members."),
    # a refund replaced by store credit, said in words
    ("We refund cancelled classes in cash.", "We give store credit for cancelled classes, not cash."),
    ("Devolvemos o valor em até 5 dias.", "Em vez de devolver o valor, damos crédito na loja em até 5 dias."),
])
def test_two_versions_of_one_rule_are_not_merged(old: str, new: str) -> None:
    assert versions(old, new) and versions(new, old)
    verdict = interpret_merge(MergeAnswer("related", f"{old}\n{new}"), old, new)
    assert verdict.body is None and verdict.why == LISTED, verdict


@pytest.mark.parametrize(("old", "new"), [
    ("O estacionamento não está incluso na mensalidade.", "O estacionamento é cobrado à parte da mensalidade."),
    ("Every hotel rate includes breakfast.", "Parking is charged apart."),
    ("Members may book two classes a day.", "Members may bring a guest, regardless of their plan."),
    ("Refunds are issued within 5 days.", "Exchanges are free within 30 days."),
    ("Our front desk is closed on holidays.", "The front desk doesn't open on holidays."),
    ("A 30% deposit is required to book a party.", "Parties are only booked after a thirty percent deposit is paid."),
])
def test_claims_that_agree_or_add_are_no_versions(old: str, new: str) -> None:
    assert not versions(old, new) and not versions(new, old)


@pytest.mark.parametrize("merged", [
    "Returns are accepted within 30 days, and items may be returned within 30 days with shipping paid by the store.",
    "Returns are accepted within 30 days, even used ones.",
    "Items can always be returned within 30 days.",
])
def test_a_merge_that_adds_a_party_or_widens_the_rule_invents(merged: str) -> None:
    old, new = "Returns are accepted within 30 days.", "Items may be returned within 30 days."
    verdict = interpret_merge(MergeAnswer("related", merged), old, new)
    assert verdict.body is None, verdict


def test_a_merge_that_calls_the_customer_otherwise_adds_nothing() -> None:
    old = "Passageiros da classe econômica despacham uma mala de 23 kg."
    new = "Passageiros da classe executiva despacham duas malas de 32 kg."
    merged = f"{old} Clientes da classe executiva despacham duas malas de 32 kg."
    assert interpret_merge(MergeAnswer("related", merged), old, new).body == merged


@pytest.mark.parametrize(("old", "new"), [
    ("The loyalty discount applies to grooming services.",
     "The loyalty discount applies to grooming and boarding services."),
    ("O pagamento da mensalidade pode ser feito por boleto, Pix ou cartão de crédito.",
     "O pagamento da mensalidade pode ser feito por boleto ou Pix."),
    ("A entrega é grátis para pedidos em Curitiba.",
     "A entrega é grátis para pedidos em Curitiba e região metropolitana."),
])
def test_a_list_with_an_item_more_or_less_is_another_version(old: str, new: str) -> None:
    assert versions(old, new) and versions(new, old)
    verdict = interpret_merge(MergeAnswer("related", f"{old}\n{new}"), old, new)
    assert verdict.body is None and verdict.why == LISTED, verdict


@pytest.mark.parametrize(("old", "new"), [
    ("A clínica aceita pagamento em Pix, dinheiro ou cartão de débito.",
     "Cartão de débito, dinheiro e Pix são as formas de pagamento aceitas na clínica."),
    ("We accept Pix.", "We also accept Pix and boleto."),  # "also": an alternative beside it
])
def test_the_same_list_reworded_is_no_version(old: str, new: str) -> None:
    assert not versions(old, new) and not versions(new, old)


@pytest.mark.parametrize(("old", "new"), [
    ("The rental price includes insurance and unlimited mileage.",
     "The rental price includes unlimited mileage; insurance is extra."),
    ("The grooming package includes a bath, nail trim and ear cleaning.",
     "The grooming package includes a bath and nail trim; ear cleaning costs extra."),
    # an exception made of the rule, or taken away
    ("Students may retake any exam once.", "Students may retake any exam once, except the final exam."),
    ("O seguro cobre danos elétricos em todos os aparelhos da casa.",
     "O seguro cobre danos elétricos em todos os aparelhos da casa, com exceção de computadores."),
    ("O estacionamento é gratuito para clientes.", "O estacionamento é gratuito para clientes, salvo em dias de jogo."),
    # a rule of "all" of a kind said of a narrower kind
    ("O desconto de 15% vale para todos os cursos da escola.",
     "O desconto de 15% vale para os cursos de inglês da escola."),
])
def test_a_thing_made_extra_or_an_exception_made_is_another_version(old: str, new: str) -> None:
    assert versions(old, new) and versions(new, old)
    verdict = interpret_merge(MergeAnswer("related", f"{old}\n{new}"), old, new)
    assert verdict.body is None and verdict.why == LISTED, verdict


def test_a_thing_that_is_part_of_a_package_is_not_charged_apart() -> None:
    from insika_knowledge.consolidate.merge import _made_extra

    included = "The first lesson lasts 90 minutes and includes a safety check."
    assert not _made_extra(included, "A safety check is part of the first lesson, which lasts 90 minutes.")
    assert _made_extra(included, "The first lesson lasts 90 minutes; a safety check is charged apart.")


def test_any_said_as_if_a_is_no_narrower_kind() -> None:
    assert not versions("We match any local competitor's advertised price.",
                        "If a local competitor advertises a lower price, we'll match it.")


@pytest.mark.parametrize(("old", "new", "other_version"), [
    # one subject, its predicate said two ways: a version, whatever the listing model answers
    ("If a class is cancelled by the studio, members receive a full refund.",
     "If a class is cancelled by the studio, members receive a refund minus a $5 booking fee.", True),
    ("A limpeza da piscina do clube é feita às segundas.", "A limpeza da piscina do clube é feita às sextas.", True),
    ("Late fees are 2% per month on the outstanding balance.",
     "Late fees are 2% per month on the original invoice amount.", True),
    ("The warranty repair is done at the customer's home.", "The warranty repair is done at our workshop only.",
     True),
    # a list of what is included, two subjects each with its value, two branches of a condition: added
    ("The family plan includes 40 GB of data.", "The family plan includes unlimited calls.", False),
    ("Os pedidos podem ser retirados na loja de Recife em 2 dias.",
     "Os pedidos podem ser retirados na loja de Manaus em 6 dias.", False),
    ("Transfers requested after 3 pm are paid the next business day.",
     "Transfers requested before 3 pm are paid the same day.", False),
])
def test_an_ending_said_otherwise_is_another_version(old: str, new: str, other_version: bool) -> None:
    assert versions(old, new) is other_version
    verdict = interpret_merge(MergeAnswer("related", f"{old}\n{new}"), old, new)
    assert (verdict.body is None) is other_version


@pytest.mark.parametrize(("old", "new", "other_version"), [
    # one ending denies what the other adds ("also"): a version, though one side adds
    ("Miles can be moved to the hotel program, and hotel points can also be moved back to miles.",
     "Miles can be moved to the hotel program, but hotel points cannot be moved back to miles.", True),
    ("Os pontos podem ser trocados por passagens, e também podem ser trocados por produtos.",
     "Os pontos podem ser trocados por passagens, mas não podem ser trocados por produtos.", True),
    # the same ending, both affirmed: one adds to the other
    ("Miles can be moved to the hotel program.",
     "Miles can be moved to the hotel program, and hotel points can also be moved back to miles.", False),
])
def test_an_ending_one_side_negates_is_another_version(old: str, new: str, other_version: bool) -> None:
    assert versions(old, new) is other_version
    verdict = interpret_merge(MergeAnswer("related", f"{old}\n{new}"), old, new)
    assert (verdict.body is None) is other_version
