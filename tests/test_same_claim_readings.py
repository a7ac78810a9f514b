"""Restatements read as one claim without a model (issue 26), and their changed versions not.

A requirement said as "X is mandatory / optional (for Y)" or as "(Y) must / need not (use) X";
a metric mass or length in another unit; "with more than" as "more than"; "open until" as
"closes at"; a future on a named calendar date as the present.
"""

from __future__ import annotations

import pytest

from insika_knowledge.analysis.structure import whole_duration
from insika_knowledge.consolidate.claims import assertion, same_claims


def same(a: str, b: str) -> bool:
    return same_claims(assertion(a, a), assertion(b, b)) and same_claims(assertion(b, b), assertion(a, a))


@pytest.mark.parametrize(("a", "b"), [
    ("Life jackets are mandatory for all kayak renters.", "Every kayak renter must wear a life jacket."),
    ("Reservations are optional on weekdays.", "Reservations are not required on weekdays."),
    ("O uso de touca é obrigatório na piscina.", "Na piscina, é obrigatório usar touca."),
    ("O seguro é opcional na locação.", "Na locação, não é obrigatório fazer seguro."),
    ("Para as viagens internacionais, o seguro é obrigatório.",
     "O seguro é obrigatório para as viagens internacionais."),
    ("Na recepção, é exigido documento com foto.", "Documento com foto é obrigatório na recepção."),
])
def test_a_requirement_said_either_way_is_one_claim(a: str, b: str) -> None:
    assert same(a, b)


@pytest.mark.parametrize(("a", "b"), [
    ("Life jackets are mandatory for all kayak renters.", "Life jackets are optional for all kayak renters."),
    ("Life jackets are mandatory for all kayak renters.", "Every kayak renter may wear a life jacket."),
    ("Life jackets are mandatory for all kayak renters.", "Life jackets are mandatory for children only."),
    ("O seguro é opcional na locação.", "Na locação, é obrigatório fazer seguro."),
    ("A caixa é exigida pela clínica.", "A caixa é obrigatória na clínica."),  # an agent: who asks, not a rule
])
def test_a_requirement_turned_or_rescoped_is_not(a: str, b: str) -> None:
    assert not same(a, b)


@pytest.mark.parametrize(("token", "whole"), [
    ("m:8000:g", "m:8:kg"), ("m:8:kg", "m:8:kg"), ("m:1.2:m", "m:120:cm"), ("m:120:cm", "m:120:cm"),
    ("m:0.5:kg", "m:500:g"), ("m:2000-3000:m", "m:2-3:km"), ("m:1500:m", "m:1500:m"), ("m:48:hour", "m:2:day"),
])
def test_a_metric_measure_reads_in_the_largest_unit_it_fills(token: str, whole: str) -> None:
    assert whole_duration(token) == whole


@pytest.mark.parametrize(("a", "b", "alike"), [
    ("Cães com mais de 20 kg pagam taxa extra.", "Cães acima de 20.000 g pagam taxa extra.", True),
    ("Cães com mais de 20 kg pagam taxa extra.", "Cães acima de 2.000 g pagam taxa extra.", False),
    ("Bags over 1.5 m long ship as freight.", "Bags over 150 cm long ship as freight.", True),
    ("Grupos com menos de 6 pessoas não reservam.", "Grupos de menos de 6 pessoas não reservam.", True),
    ("The pharmacy closes at 10 pm on Sundays.", "On Sundays, the pharmacy is open until 10 pm.", True),
    ("The pharmacy closes at 10 pm on Sundays.", "On Sundays, the pharmacy is open until 9 pm.", False),
    ("The gym will be closed on 1 January 2027.", "On Jan. 1, 2027, the gym is closed.", True),
    ("The gym will be closed on 1 January 2027.", "On Jan. 2, 2027, the gym is closed.", False),
])
def test_one_thing_said_in_other_words(a: str, b: str, alike: bool) -> None:
    assert same(a, b) is alike


@pytest.mark.parametrize(("a", "b", "alike"), [
    # a future that recurs is the standing rule's present: a condition, an event's time, every weekday
    ("The airline will refund the ticket if the flight is cancelled.",
     "The airline refunds the ticket if the flight is cancelled.", True),
    ("A clínica vai enviar um lembrete por SMS um dia antes da consulta.",
     "A clínica envia um lembrete por SMS um dia antes da consulta.", True),
    ("The gym will close at 10 p.m. on weekdays.", "The gym closes at 10 p.m. on weekdays.", True),
    ("We will ship on Monday.", "We ship on Monday.", False),  # one Monday ahead: a future
    ("Vamos fechar às 22h.", "Fechamos às 22h.", False),  # "vamos" before an infinitive: a future
    ("We will ship on Monday and Tuesday.", "We ship on Monday and Tuesday.", False),  # "and" is no condition
    ("A companhia reembolsará a passagem se o voo for cancelado.",
     "A companhia reembolsa a passagem se o voo for cancelado.", True),
    ("A companhia reembolsará a passagem.", "A companhia reembolsa a passagem.", False),
    ("A companhia reembolsava a passagem se o voo fosse cancelado.",
     "A companhia reembolsa a passagem se o voo for cancelado.", False),  # a past
    ("The airline will refund the ticket if the flight is cancelled.",
     "The airline refunds the ticket if the flight is delayed.", False),
])
def test_a_future_that_recurs_is_the_rule(a: str, b: str, alike: bool) -> None:
    assert same(a, b) is alike


@pytest.mark.parametrize(("a", "b", "alike"), [
    ("No refunds are given unless the class is cancelled by the school.",
     "Refunds are given only if the class is cancelled by the school.", True),
    ("The rental deposit is not returned unless the car comes back undamaged.",
     "The rental deposit is returned only if the car comes back undamaged.", True),
    ("O cartão não será desbloqueado a não ser que o titular confirme a identidade.",
     "O cartão não será desbloqueado a menos que o titular confirme a identidade.", True),
    ("No refunds are given unless the class is cancelled by the school.",
     "Refunds are given if the class is cancelled by the school.", False),  # "only" is the rule
    ("No refunds are given unless the class is cancelled by the school.",
     "Refunds are not given only if the class is cancelled by the school.", False),
])
def test_not_unless_is_only_if(a: str, b: str, alike: bool) -> None:
    assert same(a, b) is alike


@pytest.mark.parametrize(("a", "b", "alike"), [
    ("A academia fica fechada nos feriados nacionais.", "A academia não abre nos feriados nacionais.", True),
    ("The store is not closed on Sundays.", "The store opens on Sundays.", True),
    ("The office remains closed on holidays.", "The office is closed on holidays.", True),
    ("A academia fica fechada nos feriados nacionais.", "A academia abre nos feriados nacionais.", False),
    ("The pool does not open before 7 am.", "The pool closes before 7 am.", False),  # a time: no other pole
])
def test_a_state_of_opening_negated_is_its_other_pole(a: str, b: str, alike: bool) -> None:
    assert same(a, b) is alike


@pytest.mark.parametrize(("a", "b", "alike"), [
    ("Na joalheria, a gravação custa R$ 15 por peça.", "Na joalheria, a gravação custa R$ 15 para cada peça.", True),
    ("Engraving costs $15 per piece.", "Engraving costs $15 for each piece.", True),
    ("Na joalheria, a gravação custa R$ 15 por peça.", "Na joalheria, a gravação custa R$ 15 por pedido.", False),
])
def test_a_price_for_each_is_a_price_per(a: str, b: str, alike: bool) -> None:
    assert same(a, b) is alike


@pytest.mark.parametrize(("a", "b", "alike"), [
    ("Rescheduling is free with at least 24 hours' notice.", "Rescheduling is free with 24+ hours' notice.", True),
    ("Spa access: 18+ only.", "Spa access: at least 18 only.", True),
    ("Rescheduling is free with 24+ hours' notice.", "Rescheduling is free with 12+ hours' notice.", False),
])
def test_a_number_and_a_plus_is_at_least_the_number(a: str, b: str, alike: bool) -> None:
    assert same(a, b) is alike


@pytest.mark.parametrize(("a", "b", "alike"), [
    ("Não tem nenhum conserto que não tem garantia de 90 dias.", "Todo conserto tem garantia de 90 dias.", True),
    ("There is no order that does not ship for free.", "Every order ships for free.", True),
    ("There is no order that ships for free.", "Every order ships for free.", False),
])
def test_no_thing_that_does_not_is_every_thing(a: str, b: str, alike: bool) -> None:
    assert same(a, b) is alike


@pytest.mark.parametrize(("a", "b", "alike"), [
    ("Passengers may bring one carry-on bag free of charge.", "Travelers may bring one cabin bag at no cost.", True),
    ("Pedidos feitos até as 14h saem no mesmo dia.", "Pedidos realizados até as 14h saem no mesmo dia.", True),
    ("Passengers may bring one carry-on bag free of charge.", "Travelers may bring one checked bag at no cost.", False),
])
def test_one_thing_under_its_two_names(a: str, b: str, alike: bool) -> None:
    assert same(a, b) is alike


def test_travel_is_no_traveler() -> None:
    assert not same("Travel insurance costs 30 dollars.", "Passenger insurance costs 30 dollars.")


@pytest.mark.parametrize(("a", "b", "alike"), [
    ("Dogs must be picked up from daycare by 7 p.m. at the latest.",
     "Dogs must be picked up from daycare no later than 7 p.m.", True),
    ("Orders of $150 or more ship free.", "Orders of at least $150 ship free.", True),
    ("Orders of $150 or more ship free.", "Orders of at least R$ 150 ship free.", False),  # another currency
    ("Orders placed by 2 pm ship the same day.", "Orders in place by 2 pm ship the same day.", False),
])
def test_bounds_said_after_the_value(a: str, b: str, alike: bool) -> None:
    assert same(a, b) is alike


@pytest.mark.parametrize(("a", "b", "alike"), [
    ("Compras acima de R$ 199 não pagam frete.", "O frete é grátis para compras acima de R$ 199.", True),
    ("Compras acima de R$ 199 não pagam frete.", "O frete é grátis para compras acima de R$ 99.", False),
    ("The data allowance resets on the first day of each month.",
     "The data allowance resets on the 1st of every month.", True),
    ("The data allowance resets on the first day of each month.",
     "The data allowance resets on the 15th of every month.", False),
])
def test_free_shipping_and_the_first_of_the_month_said_otherwise(a: str, b: str, alike: bool) -> None:
    assert same(a, b) is alike


@pytest.mark.parametrize(("a", "b", "alike"), [
    ("No refunds unless the item is defective.", "Refunds only if the item is defective.", True),
    ("Não fazemos troca a não ser que o produto esteja com defeito.",
     "Só fazemos troca se o produto estiver com defeito.", True),
    ("We only refund if the item is defective.", "We refund only if the item is defective.", True),
    ("Only members can return items if they have the receipt.",
     "Members can return items only if they have the receipt.", False),
    ("Devolvemos o valor cobrado em dobro.", "Devolvemos o valor cobrado em 2 vezes.", False),  # instalments
])
def test_only_if_said_around_the_verb(a: str, b: str, alike: bool) -> None:
    assert same(a, b) is alike


@pytest.mark.parametrize(("a", "b", "alike"), [
    # a period named by one word is the period ("quarterly" is every three months)
    ("Water bills are issued quarterly.", "Water bills are issued every three months.", True),
    ("A vistoria do extintor é semestral.", "A vistoria do extintor é feita a cada seis meses.", True),
    ("A troca do filtro é bimestral.", "A troca do filtro acontece a cada dois meses.", True),
    ("A troca do filtro é bimestral.", "A troca do filtro é bimensal.", False),  # twice a month
    ("Water bills are issued quarterly.", "Water bills are issued every six months.", False),
    # a verb that only says it takes place
    ("A coleta seletiva ocorre às quintas.", "A coleta seletiva é às quintas.", True),
    # a pole pair read as one: in / out of the network, gross / net
    ("Dental cleanings are covered at in-network dentists.",
     "Dental cleanings are covered at out-of-network dentists.", False),
    ("The agency fee is 8% of the gross rent.", "The agency fee is 8% of the net rent.", False),
    # a currency sign of its own, and money in slang
    ("A day pass costs CA$30.", "A day pass costs US$30.", False),
    ("A day pass costs C$30.", "A day pass costs CA$30.", True),
    ("A car wash is twenty bucks.", "A car wash is $20.", True),
])
def test_periods_poles_and_currencies_read_as_said(a: str, b: str, alike: bool) -> None:
    assert same(a, b) is alike


@pytest.mark.parametrize(("a", "b", "alike"), [
    # a condition said as "should ..." or "in the event that ...", a Portuguese pronoun on its verb
    ("Should your order arrive broken, we will send a new one at no cost.",
     "If your order arrives broken, we send a new one free of charge.", True),
    ("In the event that a member loses the locker key, the gym charges $15.",
     "If a member loses the locker key, the gym charges $15.", True),
    ("Se perder o crachá, o funcionário deve bloqueá-lo pelo portal.",
     "Se perder o crachá, o funcionário deve bloquear pelo portal.", True),
    ("Customers should bring their receipt.", "If customers bring their receipt.", False),
])
def test_a_condition_said_otherwise(a: str, b: str, alike: bool) -> None:
    assert same(a, b) is alike


@pytest.mark.parametrize(("a", "b"), [
    ("The gold card covers not only rental car insurance but also purchase protection.",
     "The gold card covers rental car insurance and purchase protection."),
    ("O plano cobre não só consultas, mas também exames de rotina.", "O plano cobre consultas e exames de rotina."),
    ("Na Loja Alfa, os itens que foram comprados no outlet não podem ser devolvidos.",
     "Na Loja Alfa, os itens comprados no outlet não podem ser devolvidos."),
    ("Tickets that were bought at the box office cannot be refunded online.",
     "Tickets bought at the box office cannot be refunded online."),
])
def test_an_additive_pair_and_a_reduced_relative_are_one_claim(a: str, b: str) -> None:
    assert same(a, b)


@pytest.mark.parametrize(("a", "b"), [
    ("The gold card covers not only rental car insurance but also purchase protection.",
     "The gold card covers rental car insurance but not purchase protection."),
    ("O plano cobre não só consultas, mas também exames de rotina.", "O plano cobre só consultas."),
    ("Na Loja Alfa, os itens que foram comprados no outlet não podem ser devolvidos.",
     "Na Loja Alfa, os itens comprados no outlet podem ser devolvidos."),
])
def test_an_additive_pair_denied_or_narrowed_is_not(a: str, b: str) -> None:
    assert not same(a, b)


@pytest.mark.parametrize(("a", "b"), [
    ("Fibra Telecom will charge a $3 fee for paper invoices.",
     "Fibra Telecom is going to charge a $3 fee for paper invoices."),
    ("We would like to inform all members that the sauna closes at 8 p.m.", "The sauna closes at 8 p.m."),
    ("Informamos que a academia fecha às 22h aos sábados.", "A academia fecha às 22h aos sábados."),
    ("Absolutamente todos os quartos do Hotel Mar Azul, sem exceção, têm frigobar.",
     "Todos os quartos do Hotel Mar Azul têm frigobar."),
    ("A Escola de Inglês Ponte não cobra taxa alguma pela matrícula.",
     "A Escola de Inglês Ponte não cobra nenhuma taxa pela matrícula."),
])
def test_a_frame_an_intensifier_and_a_periphrastic_future_are_one_claim(a: str, b: str) -> None:
    assert same(a, b)


@pytest.mark.parametrize(("a", "b"), [
    ("Fibra Telecom will charge a $3 fee for paper invoices.", "Fibra Telecom charged a $3 fee for paper invoices."),
    ("We would like to inform all members that the sauna closes at 8 p.m.", "The sauna closes at 9 p.m."),
    ("Absolutamente todos os quartos do Hotel Mar Azul, sem exceção, têm frigobar.",
     "Alguns quartos do Hotel Mar Azul têm frigobar."),
    ("A Escola de Inglês Ponte não cobra taxa alguma pela matrícula.",
     "A Escola de Inglês Ponte cobra taxa pela matrícula."),
])
def test_a_frame_or_an_intensifier_does_not_hide_a_change(a: str, b: str) -> None:
    assert not same(a, b)


def test_may_after_a_word_of_time_is_the_month() -> None:
    from insika_knowledge.analysis.structure import tokens

    assert "p:p_can" not in tokens("The rooftop bar reopens in May.")
    assert "p:p_can" not in tokens("Prices stay the same through May.")
    assert "p:p_can" in tokens("Members may bring a guest in May.")
    assert not same("The rooftop bar reopens in May.", "The rooftop bar may reopen.")
    assert "p:p_can" not in tokens("In May, the gym opens at 5 am.")  # a sentence's first word too
    assert same("In May, the gym opens at 5 am.", "The gym opens at 5 am in May.")


@pytest.mark.parametrize(("a", "b"), [
    ("O estacionamento do Shopping Norte é gratuito nas 3 primeiras horas.",
     "O estacionamento do Shopping Norte é gratuito nas primeiras três horas."),
    ("Os pontos do Clube Vantagem valem por um ano e meio.", "Os pontos do Clube Vantagem valem por 18 meses."),
    ("Late arrivals get a tolerance of a quarter of an hour.", "Late arrivals get a tolerance of 15 minutes."),
])
def test_spans_in_words_are_one_claim(a: str, b: str) -> None:
    assert same(a, b)


@pytest.mark.parametrize(("a", "b"), [
    ("Os pontos do Clube Vantagem valem por um ano e meio.", "Os pontos do Clube Vantagem valem por 1 ano."),
    ("O estacionamento do Shopping Norte é gratuito nas 3 primeiras horas.",
     "O estacionamento do Shopping Norte é gratuito nas primeiras duas horas."),
])
def test_spans_changed_are_not(a: str, b: str) -> None:
    assert not same(a, b)


def test_a_value_changed_from_one_number_to_another_is_the_new_one() -> None:
    from insika_knowledge.trust.values import features

    assert "m:24:month" in features("If you register it, the warranty goes from 12 to 24 months.")
    assert not any(t.startswith("m:12") for t in features("A garantia passa de 12 para 24 meses."))
    assert "m:9-17:hour" in features("Open from 9 to 17h.")  # a span, no change
    assert "terceiropart" in features("Um terceiro pode retirar o pedido.")
    assert "m:3:ord" in features("A terceira parcela vence no dia 10.")


@pytest.mark.parametrize(("a", "b", "alike"), [
    # a prohibition said three ways (forty-ninth session); "do not have to" is no prohibition
    ("Notaries must not certify a signature on a blank document.",
     "Notaries are not allowed to certify a signature on a blank document.", True),
    ("Notaries must not certify a signature on a blank document.",
     "Notaries cannot certify a signature on a blank document.", True),
    ("Notaries must not certify a signature on a blank document.",
     "Notaries do not have to certify a signature on a blank document.", False),
    ("Notaries must not certify a signature on a blank document.",
     "Notaries are allowed to certify a signature on a blank document.", False),
    # a range of days said four ways; a list of two days is no range
    ("The clubhouse gym is open Mon–Fri from 5:30 a.m. to 10 p.m.",
     "The clubhouse gym is open Monday through Friday from 5:30 a.m. to 10 p.m.", True),
    ("The gym is open from Monday to Friday.", "The gym is open Mon-Fri.", True),
    ("A loja abre seg–sex, das 9h às 18h.", "A loja abre de segunda a sexta, das 9h às 18h.", True),
    ("The gym is open Monday through Friday.", "The gym is open Monday and Friday.", False),
    ("The gym is open Monday through Friday.", "The gym is open Monday through Saturday.", False),
    # a relative clause of persons in the passive, and its participle alone
    ("Customers who are enrolled in the loyalty program get 10% off generic drugs.",
     "Customers enrolled in the loyalty program get 10% off generic drugs.", True),
    ("Customers who are enrolled in the loyalty program get 10% off.",
     "Customers who are not enrolled in the loyalty program get 10% off.", False),
    ("Who was referred gets $20.", "Who referred gets $20.", False),
    # a fee and its charging said once; "cobra-se" is no "if"
    ("Há uma taxa de R$ 12,00 para reentrega após a segunda tentativa.",
     "Cobra-se uma taxa de R$ 12,00 para reentrega após a segunda tentativa.", True),
    ("There is a $12 fee for redelivery.", "A $12 fee is charged for redelivery.", True),
    ("There is a $12 fee for redelivery.", "A $15 fee is charged for redelivery.", False),
    ("The cost price is $5 per ticket.", "The price is $5 per ticket.", False),
])
def test_a_prohibition_a_range_of_days_a_relative_and_a_fee_said_otherwise(a: str, b: str, alike: bool) -> None:
    assert same(a, b) is alike


@pytest.mark.parametrize(("a", "b", "alike"), [
    # a list after a fronted phrase, in any order; "for every" as "per"; ", which is" as "and is"
    ("To open a theft claim, you must provide the police report, driver's license and vehicle registration.",
     "To open a theft claim, you must provide the vehicle registration, police report and driver's license.", True),
    ("To open a theft claim, you must provide the police report, driver's license and vehicle registration.",
     "To open a theft claim, you must provide the police report, driver's license or vehicle registration.", False),
    ("O salão exige pelo menos um adulto responsável para cada 10 crianças.",
     "O salão exige pelo menos um adulto responsável a cada 10 crianças.", True),
    ("The venue requires one adult for every 10 children.", "The venue requires one adult per 10 children.", True),
    ("The venue requires one adult for every 10 children.", "The venue requires one adult per 12 children.", False),
    ("The solar site survey costs $1,500.00 and is deducted from the project price.",
     "The solar site survey costs $1,500.00, which is deducted from the project price.", True),
    ("The solar site survey costs $1,500.00 and is deducted from the project price.",
     "The solar site survey costs $1,500.00, which is not deducted from the project price.", False),
])
def test_a_list_after_a_phrase_a_ratio_and_a_clause_added(a: str, b: str, alike: bool) -> None:
    assert same(a, b) is alike


@pytest.mark.parametrize(("a", "b", "alike"), [
    # an attacker's probes of this round (forty-ninth session): who is paid is not who pays
    ("We are charged a $12 fee.", "We charge a $12 fee.", False),
    ("We are refunded $12.", "We refund $12.", False),
    ("Drivers are paid $12 per trip.", "Drivers pay $12 per trip.", False),
    ("Customers are charged a $12 fee.", "We charge customers a $12 fee.", True),
    # a range of days is no list of its ends; a slash lists them
    ("The store is open Mon–Fri.", "The store is open Mon, Fri.", False),
    ("The store is open Monday–Friday.", "The store is open Monday, Friday.", False),
    ("The store is open Mon–Fri.", "The store is open Mon/Fri.", False),
    ("Deliveries happen Mon-Wed and Fri.", "Deliveries happen Mon, Wed and Fri.", False),
    ("Open Jan–Mar.", "Open Jan, Mar.", False),
    ("The promotion runs 1–5 March.", "The promotion runs 1, 5 March.", False),
    ("The promotion runs 1–5 March.", "The promotion runs 1-5 March.", True),
    # a tense kept: who were enrolled is not who are
    ("Customers who are enrolled get 10% off.", "Customers who were enrolled get 10% off.", False),
])
def test_a_passive_to_a_party_a_range_against_a_list_and_a_tense(a: str, b: str, alike: bool) -> None:
    assert same(a, b) is alike
