"""The conservative same-claim rule: one changed detail is never "the same claim".

A false "same" silently loses the new claim; a false "not same" only costs a merge call.
The property: for any claim and any single-detail change of the kinds the issues name
(number, unit kind, scope qualifier, negation or change verb, antonym/direction, and
issue 26's structure: two values swapped between their subjects, direction, who does
what, dates, conditions joined otherwise), the pair is never the same claim. And
rewordings (case, accents, punctuation, plural, contractions, money and date forms,
listed synonyms, e-mail/email, 2/two, a leading phrase moved to the end) still are; a
change of word order is no longer one of them (it may change who does what).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import pytest
from conftest import make_concept
from hypothesis import example, given
from hypothesis import strategies as st

from insika_knowledge.analysis.numbers import read_number_words
from insika_knowledge.analysis.statements import POLE_PAIRS, statement
from insika_knowledge.analysis.text import fold
from insika_knowledge.candidate import Candidate
from insika_knowledge.consolidate import same_claim


def same(a: str, b: str) -> bool:
    """`b` proposed again for a record that says `a` (description and body alike)."""
    return same_claim(make_concept(name="c", description=a, body=a), Candidate("c", b, "fact", b))


# ----------------------------------------------------------------------------- generated claims

#: Content words that are no pole, negation, unit, number word or stop word.
WORDS = ("delivery", "fee", "refund", "checked", "insurance", "gift", "card", "voucher",
         "store", "pharmacy", "ticket", "cabin", "pets", "breakfast", "shuttle", "lounge",
         "frete", "troca", "reembolso", "loja", "cartao", "garantia", "pedido", "desconto",
         "hotel", "farmacia", "entrega", "sala", "traslado", "caixa")
#: Unit words with their canonical unit (two words of one unit read alike).
UNIT_WORDS = (("days", "day"), ("dias", "day"), ("hours", "hour"), ("horas", "hour"),
              ("minutes", "minute"), ("weeks", "week"), ("months", "month"), ("meses", "month"),
              ("years", "year"), ("anos", "year"), ("dollars", "usd"), ("reais", "brl"),
              ("euros", "eur"), ("kg", "kg"), ("g", "g"), ("km", "km"), ("miles", "mile"),
              ("am", "am"), ("pm", "pm"), ("%", "%"), ("bags", "bag"), ("", ""))
KIND_WORDS = ("business", "calendar", "working")
#: Numbers a claim may state, with how they may be written in words (None: digits only).
NUMBER_WORDS: dict[float, str | None] = {
    1: "one", 2: "two", 3: "three", 5: "five", 7: "seven", 10: "ten", 12: "twelve",
    24: "twenty-four", 30: "thirty", 4: "quatro", 6: "seis", 20: "vinte", 21: "vinte e um",
    45: "forty-five", 8: "oito", 9: "nove", 2.5: None, 199: None, 18.9: None, 1250: None,
}
#: Single-word poles (each side of each pair); phrases are tested by `PHRASE_SWAPS`.
POLE_WORDS = [(word, pair[1 - i]) for pair in POLE_PAIRS for i, side in enumerate(pair)
              for word in side if " " not in word and "-" not in word]
QUALIFIERS = ("per item", "per address", "for students", "for first-year students",
              "except appliances", "only", "on Sundays", "in Campinas", "para estudantes",
              "exceto eletrodomesticos", "apenas", "por pedido", "aos domingos", "for members")
NEGATIONS = ("not", "never", "no longer", "nao", "nunca", "without", "sem", "was discontinued",
             "was removed", "has been suspended", "foi retirado", "deixou de", "was cancelled",
             "foi encerrado", "ended", "is no longer offered", "nao ... mais")


@dataclass(frozen=True)
class Parts:
    """A generated claim: content words, an optional pole word, a measure, an optional negation."""

    words: tuple[str, ...]
    pole: str
    number: float
    as_word: bool
    unit: str
    kind: str
    negation: str = ""
    qualifier: str = ""

    def render(self) -> str:
        number = NUMBER_WORDS.get(self.number) if self.as_word else None
        number = number or _digits(self.number)
        unit = f"{self.kind} {self.unit}" if self.kind and self.unit else self.unit
        text = " ".join(w for w in (*self.words[:1], self.pole, *self.words[1:]) if w)
        text = f"{text} {number} {unit}".strip()
        if self.negation == "nao ... mais":
            text = f"nao {text} mais"
        elif self.negation:
            text = f"{self.negation} {text}"
        return f"{text} {self.qualifier}".strip()


def _digits(value: float) -> str:
    return str(int(value)) if value == int(value) else str(value).replace(".", ",")


units_with_kinds = st.sampled_from([u for u, _ in UNIT_WORDS])
claims = st.builds(
    Parts,
    words=st.lists(st.sampled_from(WORDS), min_size=1, max_size=5, unique=True).map(tuple),
    pole=st.sampled_from(["", *(w for w, _ in POLE_WORDS)]),
    number=st.sampled_from(sorted(NUMBER_WORDS)),
    as_word=st.booleans(),
    unit=units_with_kinds,
    kind=st.just(""),
)


#: A time of day and a duration in hours share the token ``hour`` (`analysis.structure.CLOCK`):
#: in Portuguese told apart only by their roles ("às 1h", "em 1 hora"); without one they read alike
#: (`test_a_portuguese_hour_without_a_role_reads_as_either`, a known fault; in English words
#: `analysis.structure.hours_disagree` tells them apart).
_CLOCK_OR_HOURS = ({"horas", "am"}, {"horas", "pm"})  # "12 pm" is hour 12; "hours" is a duration


def _canonical(unit: str) -> str:
    return dict(UNIT_WORDS)[unit]


@st.composite
def changed(draw: st.DrawFn) -> tuple[Parts, Parts, str]:
    """A claim, the same claim with exactly one detail changed, and the kind of change."""
    claim = draw(claims)
    kind = draw(st.sampled_from(["number", "unit", "unit_kind", "qualifier", "negation", "antonym"]))
    if kind == "number":
        other = draw(st.sampled_from([n for n in NUMBER_WORDS if n != claim.number]))
        return claim, replace(claim, number=other, as_word=draw(st.booleans())), kind
    if kind == "unit":
        other = draw(st.sampled_from([u for u, c in UNIT_WORDS if c != _canonical(claim.unit)
                                      and {u, claim.unit} not in _CLOCK_OR_HOURS]))
        return claim, replace(claim, unit=other), kind
    if kind == "unit_kind":
        claim = replace(claim, unit=draw(st.sampled_from(["days", "hours"])))
        before = draw(st.sampled_from(["", *KIND_WORDS]))
        after = draw(st.sampled_from([k for k in ("", "business", "calendar") if k != before
                                      and {k, before} != {"working", "business"}]))
        return replace(claim, kind=before), replace(claim, kind=after), kind
    if kind == "qualifier":
        qualifier = draw(st.sampled_from(QUALIFIERS))
        if statement(qualifier).poles & statement(claim.pole).poles:  # "only" twice is no change
            claim = replace(claim, pole="")
        return claim, replace(claim, qualifier=qualifier), kind
    if kind == "negation":
        return claim, replace(claim, negation=draw(st.sampled_from(NEGATIONS))), kind
    word, opposite = draw(st.sampled_from(POLE_WORDS))
    return replace(claim, pole=word), replace(claim, pole=draw(st.sampled_from(opposite))), kind


@given(changed(), st.booleans())
def test_one_changed_detail_is_never_the_same_claim(case: tuple[Parts, Parts, str], flip: bool) -> None:
    first, second, kind = case
    a, b = first.render(), second.render()
    if flip:  # either side may be on record
        a, b = b, a
    assert not same(a, b), (kind, a, b)


@pytest.mark.parametrize(("a", "b"), [("delivery 1 hours", "delivery 1 am"), ("delivery 12 hours", "delivery 12 pm"),
                                      ("Check-in at 3 pm.", "Check-in 15 hours."),
                                      ("Delivery 9:30", "Delivery 9.5 hours"),  # a newcomer's: not whole hours
                                      ("Delivery as soon as 9 hours", "Delivery as soon as 9 am")])  # "as" is no "às"
def test_a_time_of_day_is_no_duration_of_as_many_hours(a: str, b: str) -> None:
    """Found by Hypothesis: the two share the token ``m:1:hour``; "1 am" is certainly a time
    of day and "1 hours" certainly a duration (`analysis.structure.hours_disagree`)."""
    assert not same(a, b) and not same(b, a)


@pytest.mark.parametrize(("a", "b"), [("Closing time is 10 pm.", "Closing time is 22h."),
                                      ("Delivery within 24 hours.", "Delivery within 24h."),
                                      ("Entrega dentro das 24 horas.", "Entrega dentro das 24h."),
                                      # one hour said both ways in each: a newcomer's conflict with a space
                                      ("Opens at 9 am, delivery in 9 hours.", "Opens at 9am, delivery in 9 hours."),
                                      ("Pickup from 12 pm, held 12 hours.", "Pickup from noon, held 12 hours.")])
def test_an_hour_in_h_is_either_a_time_of_day_or_a_duration(a: str, b: str) -> None:
    assert same(a, b) and same(b, a)


@pytest.mark.parametrize(("text", "read"), [
    ("economy allows two bags and business allows one.", "economy allows 2 bags and business allows 1."),
    ("a economica permite duas malas e a executiva permite uma.",
     "a economica permite 2 malas e a executiva permite 1."),
    ("gold members get two free bags; silver members get one.", "gold members get 2 free bags; silver members get 1."),
    ("business allows one.", "business allows one."),  # no clause counts beside it
    ("we have two stores and we will open one.", "we have 2 stores and we will open one."),
    ("you can bring two bags. i bought the one.", "you can bring 2 bags. i bought the one."),
])
def test_a_count_left_implied_by_a_parallel_clause_is_read(text: str, read: str) -> None:
    assert read_number_words(text) == read


def test_a_swap_of_counts_with_one_left_implied_is_two_versions_of_one_rule() -> None:
    from insika_knowledge.consolidate.merge import versions

    old, new = "Economy allows one carry-on bag and Business allows two.", \
        "Economy allows two carry-on bags and Business allows one."
    assert not same(old, new) and versions(old, new)


@pytest.mark.parametrize(("a", "b", "alike"), [
    ("O frete expresso custa R$ 25.", "O frete expresso sai por R$ 25.", True),
    ("O combo custa R$ 39,90.", "O combo sai a R$ 39,90.", True),
    ("A loja fica a 2 km do centro.", "A loja custa 2 km do centro.", False),  # a distance is no price
])
def test_a_price_said_as_where_it_comes_out_is_what_it_costs(a: str, b: str, alike: bool) -> None:
    assert same(a, b) is alike


@pytest.mark.xfail(strict=True, reason="known fault: Portuguese says a time of day in 'horas' too ('abre 9 "
                                       "horas'); without 'em' / 'às' the hour is read as either")
def test_a_portuguese_hour_without_a_role_reads_as_either() -> None:
    assert not same("Entrega 9 horas", "Entrega 9:00")


def test_a_time_of_day_and_a_duration_with_their_roles_are_told_apart() -> None:
    assert not same("Delivery takes 1 hour.", "Delivery at 1 am.")
    assert not same("A entrega leva 9 horas.", "A entrega é às 9:00.")


@given(claims, st.sampled_from(["upper", "capitalize", "title"]), st.sampled_from([".", "!", ";", ""]))
def test_a_reworded_claim_is_still_the_same_claim(claim: Parts, case: str, stop: str) -> None:
    reworded = getattr(claim.render(), case)() + stop
    assert same(claim.render(), reworded), (claim.render(), reworded)


# ----------------------------------------------------------------------------- the issue's examples


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("Delivery fee is R$ 20", "Delivery fee is R$ 20 per address"),
        ("5% off for students", "5% off for first-year students"),
        ("Free shipping on all products", "Free shipping on all products except appliances"),
        ("Delivery takes 7 working days", "Delivery takes 7 days"),
        ("The store opens at 9 am", "The store opens at 9 pm"),
        ("Platinum includes lounge access", "Lounge access was removed from Platinum"),
        ("Same-day delivery is offered", "Same-day delivery was discontinued"),
        ("The discount lasts one hour", "The discount lasts five hours"),
        ("O reembolso leva três dias", "O reembolso leva seis dias"),
        ("The price match uses the lowest price", "The price match uses the highest price"),
        ("Smoking is allowed inside the hotel", "Smoking is allowed outside the hotel"),
        ("The first checked bag is free", "The last checked bag is free"),
        ("Domestic flights include a meal", "International flights include a meal"),
        ("Returns with receipt get cash", "Returns without receipt get cash"),
        ("Earlier flights can be changed for free", "Later flights can be changed for free"),
        ("Bags above 23 kg are charged", "Bags below 23 kg are charged"),
        ("Customers can cancel online", "Customers must cancel online"),
        ("O plano inclui acesso à sala VIP", "O acesso à sala VIP foi retirado do plano"),
        ("A loja aceita PIX", "A loja deixou de aceitar PIX"),
        ("Refunds take 3 to 5 days", "Refunds take 5 to 3 hours"),
        ("Orders of more than R$ 199 ship free", "Orders of less than R$ 199 ship free"),
        ("Pedidos acima de R$ 199 têm frete grátis", "Pedidos abaixo de R$ 199 têm frete grátis"),
        ("Book at least 3 days ahead", "Book at most 3 days ahead"),
        ("Pague no mínimo 3 parcelas", "Pague no máximo 3 parcelas"),
        ("Gift wrapping costs R$ 10 per item", "Gift wrapping costs R$ 10 in total"),
        ("Embrulho custa R$ 10 no pedido", "Embrulho custa R$ 10 por pedido"),
        # issue 26: structure a bag of words cannot see
        ("5% on Pix, 3% on boleto", "3% on Pix, 5% on boleto"),
        ("Desconto de 5% no Pix e de 3% no boleto.", "Desconto de 3% no Pix e de 5% no boleto."),
        ("5% off for members, 3% off on Pix.", "5% off on Pix, 3% off for members."),
        ("The customer pays the return shipping.", "The store pays the return shipping."),
        ("O cliente paga o frete de devolução.", "A loja paga o frete de devolução."),
        ("We pay the customs duties.", "You pay the customs duties."),
        ("Items can be exchanged but not refunded.", "Items can be refunded but not exchanged."),
        ("Shipped to Campinas from Extrema.", "Shipped to Extrema from Campinas."),
        ("Enviado de Extrema para Campinas.", "Enviado de Campinas para Extrema."),
        ("Transfers from Saver into Everyday are instant.", "Transfers from Everyday into Saver are instant."),
        ("The sale starts on 02/01.", "The sale starts on 01/02."),
        # English writes a slashed date in either order (US month first): one both orders
        # read is no written date (the newcomers' second set; the repo's reader set had
        # "01/02" as February 1st in a Brazilian store's English)
        ("The fare sale ends 3/4.", "The fare sale ends April 3."),
        ("The fare sale ends 3/4.", "The fare sale ends March 4."),
        ("The sale ends on 01/02.", "The sale ends on February 1st."),
        ("A promoção começa em 1 de fevereiro.", "A promoção começa em 2 de janeiro."),
        ("Deliveries Monday to Friday.", "Deliveries Monday to Saturday."),
        ("Free shipping for members and orders above R$ 99.", "Free shipping for members on orders above R$ 99."),
        ("O desconto vale para clientes novos ou compras acima de R$ 200.",
         "O desconto vale para clientes novos em compras acima de R$ 200."),
        ("Free returns if the item is defective.", "Free returns unless the item is defective."),
        ("Pix is accepted.", "Pix is no longer accepted."),
        ("Trocamos produtos com defeito em até 30 dias.", "O cliente troca produtos com defeito em até 30 dias."),
        ("The store pays the return shipping.", "The customer pays the return shipping."),
        ("Nos últimos 30 dias, trocamos produtos com defeito.", "Trocamos produtos com defeito em 30 dias."),
        # a passive names its own agent, or its verb is not one the business alone does
        ("Import duties are paid by the buyer.", "We pay import duties."),
        ("Orders are shipped by the seller.", "We ship orders."),
        ("Returns are requested within 7 days.", "We request returns within 7 days."),
        ("Orders are cancelled within 24 hours.", "We cancel orders within 24 hours."),
        ("The customer is refunded by the bank.", "We refund the customer."),
        ("Customers are refunded within 5 days.", "Customers refund us within 5 days."),
        # Portuguese weekday abbreviations in a list are days (newcomers' test half, 6024/6025)
        ("Atendimento por telefone: seg, ter, qua e qui.", "Atendimento por telefone: seg, qua e qui."),
        ("Retirada na loja: seg, ter, qui e sex.", "Retirada na loja: seg, qui e sex."),
        ("Entregas de seg a sex.", "Entregas de ter a sex."),
        # "the following Monday" is one day, "after Monday" any later one (6029)
        ("Orders placed on Friday ship the following Monday.", "Orders placed on Friday ship after Monday."),
        # a month is no fixed number of days; 36 hours fill no day; older is not younger
        ("Returns within 30 days.", "Returns within 1 month."),
        ("Refunds in 36 hours.", "Refunds in 1 day."),
        ("Children younger than 2 fly free.", "Children older than 2 fly free."),
        ("Maiores de 18 anos.", "Menores de 18 anos."),
        # a sign on a percentage after a colon (6053)
        ("Pix: -5%, cartão: +3%.", "Pix: +5%, cartão: -3%."),
        ("Boleto: -10%.", "Boleto: +10%."),
        # a place said as "here" / "there" (6023)
        ("Marketplace returns are processed here.", "Marketplace returns are processed there."),
        ("As trocas são feitas aqui.", "As trocas são feitas lá."),
        # a party a passive names as its subject is what is done to it, not who does it (fresh3)
        ("The customer pays the return shipping.", "The customer is paid the return shipping."),
        ("Sellers pay buyers a R$ 10 fee.", "Sellers are paid a R$ 10 fee."),
        ("Os clientes pagam o frete de devolução.", "Os clientes são pagos o frete de devolução."),
        ("Orders are shipped within 2 days.", "We ship orders within 5 days."),
        # a past without a pronoun before it, an irregular past, a change in the past (a fresh reader's attack)
        ("Orders above $50 shipped free.", "Orders above $50 ship free."),
        ("Passengers paid $30 per checked bag.", "Passengers pay $30 per checked bag."),
        ("The airline waived the change fee.", "The airline waives the change fee."),
        ("Fees increased to $15.", "Fees increase to $15."),
        ("We sent the refund by Pix.", "We send the refund by Pix."),
        # two words of one synonym group a negation tells apart, swapped
        ("Reembolsamos a taxa, não a tarifa.", "Reembolsamos a tarifa, não a taxa."),
        ("We refund the fee, not the price.", "We refund the price, not the fee."),
        ("Despacho de bagagem é grátis, o frete da mala extraviada não.",
         "Frete de bagagem é grátis, o despacho da mala extraviada não."),
        # a capitalised name that folds to a stop word (the carrier Oi); "few" is a quantity
        ("Recarga Oi tem 10% de bônus.", "Recarga tem 10% de bônus."),
        ("Planos Vivo e Oi têm bônus.", "Planos Vivo têm bônus."),
        # a capital letter after a word in lower case names a thing ("loja D", "Plan A"), never an article
        ("A loja D abre às 9h.", "A loja A abre às 9h."),
        ("Store D opens at 9am.", "Store A opens at 9am."),
        ("Plan A costs $10 a month.", "Plan E costs $10 a month."),
        ("Frete grátis para a loja B.", "Frete grátis para a loja A."),
        ("Retirada na loja (unidade D) até as 18h.", "Retirada na loja (unidade A) até as 18h."),
        ("A loja D Shopping abre às 9h.", "A loja A Shopping abre às 9h."),
        ("LOJA D ABRE ÀS 9H.", "LOJA A ABRE ÀS 9H."),
        ("A loja D abre às 9h.", "A LOJA ABRE ÀS 9H."),  # a name the capitals do not have
        ("A loja \u24b9 abre às 9h.", "A loja A abre às 9h."),  # a letter in another form is that letter
        ("A loja \uff24 abre às 9h.", "A loja A abre às 9h."),
        ("Recarga Oi tem bônus de 10%.", "RECARGA TEM BÔNUS DE 10%."),
        ("Embarque pelo portão A.", "EMBARQUE PELO PORTÃO."),
        ("Few items are eligible for return.", "Items are eligible for return."),
        ("Poucos produtos têm troca grátis.", "Muitos produtos têm troca grátis."),
        # "US" in capitals is the country; "uma" before a word is one; "nós" is we
        ("We ship to US addresses only.", "We ship to our addresses only."),
        ("Direito a uma troca grátis.", "Direito a trocas grátis."),
        ("Um cupom por CPF.", "Cupons por CPF."),
        # a value stays with the noun it measures (a fresh reader's attack on a rewrite, dropped)
        ("R$ 20 de desconto em pedidos.", "Desconto em pedidos de R$ 20."),
        ("R$ 50 de cashback nas compras.", "Cashback nas compras de R$ 50."),
        # words joined inside a clause keep their order: a sequence
        ("We cancel and rebook the flight.", "We rebook and cancel the flight."),
        # a universal after a negation or a value is no generic noun: "not every" is some, "each" per unit
        ("Not every order ships free.", "Orders do not ship free."),
        ("Nem todo pedido tem frete grátis.", "Pedidos não têm frete grátis."),
        ("Two extra bags cost $50 each.", "Two extra bags cost $50."),
        ("Malas extras custam R$ 100 cada.", "Malas extras custam R$ 100."),
        # a passive that names its agent is that agent doing it, never another one
        ("Os CEPs 13000-13999 são atendidos pelo CD de Campinas.", "O CD de Extrema atende os CEPs 13000-13999."),
        ("Os CEPs 13000-13999 são atendidos pelo CD de Campinas.", "Os CEPs 13000-13999 atendem o CD de Campinas."),
        ("Import duties are paid by the seller.", "The buyer pays import duties."),
        ("Import duties are paid by the buyer.", "Import duties are not paid by the buyer."),
        ("Orders are collected by 6 pm.", "6 pm collects orders."),
        # tense and modality: a past, future or hedged rule is another claim (a fresh reader's attack)
        ("We ship orders above $50 for free.", "Orders above $50 were shipped for free."),
        ("We ship orders above $50 for free.", "Orders above $50 had been shipped for free."),
        ("We ship orders above $50 for free.", "Orders above $50 have been shipped for free."),
        ("We ship orders above $50 for free.", "Orders above $50 will be shipped for free."),
        ("We ship orders above $50 for free.", "Orders above $50 should be shipped for free."),
        ("We ship orders above $50 for free.", "Orders above $50 would be shipped for free."),
        ("We ship orders above $50 for free.", "We shipped orders above $50 for free."),
        ("We ship orders above $50 for free.", "We had shipped orders above $50 for free."),
        ("We ship orders above $50 for free.", "We should ship orders above $50 for free."),
        ("A loja aceita devolução em até 7 dias.", "A loja aceitava devolução em até 7 dias."),
        ("A loja aceita devolução em até 7 dias.", "A loja aceitou devolução em até 7 dias."),
        ("A devolução é aceita em até 7 dias.", "A devolução era aceita em até 7 dias."),
        ("Enviamos os pedidos pelos Correios.", "Os pedidos foram enviados pelos Correios."),
        ("Enviamos os pedidos pelos Correios.", "Os pedidos eram enviados pelos Correios."),
        ("Enviamos os pedidos pelos Correios.", "Os pedidos serão enviados pelos Correios."),
        ("Customers are refunded within 5 days.", "Customers were refunded within 5 days."),
        ("We ship orders above $50 for free.", "We'll ship orders above $50 for free."),
        ("We ship orders above $50 for free.", "We'd ship orders above $50 for free."),
        ("Customers can return items within 30 days.", "Customers could return items within 30 days."),
        ("Customers can return items within 30 days.", "Customers might return items within 30 days."),
        ("Você pode trocar o produto em 7 dias.", "Você poderia trocar o produto em 7 dias."),
        ("Members get 10% off.", "Members got 10% off."),
        ("A loja permite trocas em 30 dias.", "A loja permitiu trocas em 30 dias."),
        ("A loja devolve o dinheiro em 5 dias.", "A loja devolveu o dinheiro em 5 dias."),
        ("Enviamos pedidos acima de R$ 199 sem frete.", "Enviaremos pedidos acima de R$ 199 sem frete."),
        ("We ship for free.", "We used to ship for free."),
        ("We don't charge for returns.", "We charge for returns."),
        ("We do not refund all sale items.", "We do not refund any sale items."),
        ("Customers need a receipt for returns.", "Customers get a receipt for returns."),
        ("Não cobramos frete acima de R$ 199.", "Cobramos frete acima de R$ 199."),
        # values swapped between labelled parts of one sentence
        ("Pix: 5% off, boleto: 3% off.", "Pix: 3% off, boleto: 5% off."),
        ("Returns: 30 days, exchanges: 60 days.", "Returns: 60 days, exchanges: 30 days."),
        ("Devoluções: 7 dias, trocas: 30 dias.", "Devoluções: 30 dias, trocas: 7 dias."),
        # the same characters but for a number's separator: 1.50 and 150
        ("O embrulho custa R$ 1,50.", "O embrulho custa R$ 150."),
        # a negation bears on the phrase after it: which place is refused is the claim
        ("As trocas são feitas só na loja física, não pelo site.",
         "As trocas são feitas só pelo site, não na loja física."),
        ("Returns are accepted in store, not by mail.", "Returns are accepted by mail, not in store."),
        # times of day, in any notation, are read as times: another hour is another claim
        ("The store opens at 9 am.", "The store opens at 9 pm."),
        ("The store opens at 9:00.", "The store opens at 9 pm."),
        ("The store opens at 9:30.", "The store opens at 9:45."),
        ("A loja abre às 9h30.", "A loja abre às 9h."),
        ("O restaurante abre às 18:00.", "O restaurante abre às 08:00."),
        ("Pedidos feitos até as 14h saem no mesmo dia.", "Pedidos feitos até 12:00 saem no mesmo dia."),
        ("Open from 7 to 10 am.", "Open from 7 to 10 pm."),
        ("Orders placed before noon ship the same day.", "Orders placed before 2 pm ship the same day."),
        ("Entrega em 12h.", "Entrega ao meio-dia."),
        ("Pague as 3 parcelas no boleto.", "Pague às 3h no boleto."),  # a count after the article "as"
    ],
)
def test_the_issues_different_claims_are_not_the_same(a: str, b: str) -> None:
    assert not same(a, b)
    assert not same(b, a)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("Customers can cancel online or by e-mail.", "Customers can cancel online or by email"),
        ("Silver members get 2 free checked bags in economy.", "SILVER members get two free checked bags in Economy!"),
        ("A devolução é grátis no primeiro pedido.", "A devolução é gratuita no primeiro pedido"),
        ("O pedido pendente pode ser cancelado.", "Os pedidos pendentes podem ser cancelados."),
        ("Per passenger, travel insurance costs 30 dollars.", "Travel insurance costs 30 dollars per passenger."),
        ("A garantia é de um ano.", "A garantia é de 1 ano."),
        ("O prazo é de vinte e quatro meses.", "O prazo é de 24 meses."),
        ("Customers can modify a pending order's address.", "Customers can change a pending order's address."),
        # issue 26: restatements that differ in wording only confirm without a model
        ("Gift cards can't be refunded.", "Gift cards cannot be refunded."),
        ("Sale items can not be returned.", "Sale items can't be returned."),
        ("We won't ship to P.O. boxes.", "We will not ship to P.O. boxes."),
        ("Within 30 days, unused items can be returned.", "Unused items can be returned within 30 days."),
        ("Orders ship from Extrema to Campinas.", "Orders ship to Campinas from Extrema."),
        ("Customers get a first response within 4 hours on business days.",
         "On business days customers get a first response within 4 hours."),
        ("Parcelamento em 10x para compras acima de R$ 1.299,00.",
         "Parcelamento em 10x para compras acima de R$ 1299."),
        ("A taxa de cancelamento é de cem reais.", "A taxa de cancelamento é de R$ 100."),
        ("A promoção termina em 01/02.", "A promoção termina em 1 de fevereiro."),
        ("The sale ends on 1/15.", "The sale ends on January 15."),  # only one order is a date
        ("The sale ends on 3/4.", "The sale ends on 3/4."),
        ("Refunds are issued to the original card.", "Reimbursements are issued to the original card."),
        ("Exchanges are free. Returns cost R$ 15.", "Returns cost R$ 15. Exchanges are free."),
        # the business as "we", "the store" or a verb's person; an inflection the synonyms do not spell
        ("A loja troca produtos com defeito em até 30 dias.", "Trocamos produtos com defeito em até 30 dias."),
        ("The store refunds the delivery fee when an order is late.",
         "We refund the delivery fee when an order is late."),
        ("A loja entrega em Recife no mesmo dia.", "Entregamos em Recife no mesmo dia."),
        # "the store" opening a clause after a leading phrase is the business too
        ("A loja abre às 9h de segunda a sábado.", "De segunda a sábado, a loja abre às 9h."),
        # a passive of the business's own operations, with no other agent: the business does it
        ("We ship orders above $50 for free.", "Orders above $50 are shipped for free."),
        ("Enviamos os pedidos pelos Correios.", "Os pedidos são enviados pelos Correios."),
        ("We refund customers within 5 days.", "Customers are refunded within 5 days."),
        ("We do not ship orders on Sundays.", "Orders are not shipped on Sundays."),
        ("We can ship orders abroad.", "Orders can be shipped abroad."),
        ("Aceitamos a troca em até 30 dias.", "A troca é aceita em até 30 dias."),
        ("Processamos os pedidos em 24 horas.", "Os pedidos são processados em 24 horas."),
        # what word order does not change (a fresh reader's attack)
        ("We accept Visa and Mastercard.", "We accept Mastercard and Visa."),
        ("Frete grátis para o Sul e o Sudeste.", "Frete grátis para o Sudeste e o Sul."),
        ("Free returns for members.", "Returns are free for members."),
        ("Installments up to 12x interest-free.", "Installments up to 12x without interest."),
        ("O frete custa US$ 20.", "O frete custa 20 dólares."),
        ("Não aceitamos devolução de perfumes.", "Devoluções de perfumes não são aceitas."),
        ("Nós não trocamos perfumes.", "Não trocamos perfumes."),
        # title case is no name ("Para", "O" stay stop words)
        ("Frete Grátis Para Todo O Brasil.", "Frete grátis para todo o Brasil."),
        # a universal determiner only makes its noun generic (the shared airline sample's sessions)
        ("Every order above R$ 199 ships free.", "Orders above R$ 199 ship free."),
        ("Todos os pedidos acima de R$ 199 têm frete grátis.", "Pedidos acima de R$ 199 têm frete grátis."),
        ("The agent confirms which reservations to cancel, then cancels each whole trip.",
         "The agent confirms which reservation to cancel, then cancels the whole trip."),
        ("All orders above $50 are shipped for free.", "We ship orders above $50 for free."),
        # a passive that names its agent, as that agent doing it
        ("O CD de Campinas atende os CEPs 13000-13999.", "Os CEPs 13000-13999 são atendidos pelo CD de Campinas."),
        ("The buyer pays import duties.", "Import duties are paid by the buyer."),
        ("The manager does not approve refunds above $500.", "Refunds above $500 are not approved by the manager."),
        ("The carrier can collect heavy items.", "Heavy items can be collected by the carrier."),
        # the same tense said otherwise
        ("Orders above $50 were shipped for free.", "We shipped orders above $50 for free."),
        ("Orders above $50 will be shipped for free.", "We will ship orders above $50 for free."),
        ("Os pedidos foram enviados pelos Correios.", "Os pedidos foram enviados pelos correios"),
        ("We will refund within 10 days.", "We'll refund within 10 days."),
        # the same words with their accents dropped: "e" is "é" here, not "and"
        ("A devolução é gratuita no primeiro pedido.", "A devolucao e gratuita no primeiro pedido."),
        ("Não entregamos aos domingos.", "NAO ENTREGAMOS AOS DOMINGOS!"),
        # weekday abbreviations are the days they name; "there is" names no place
        ("Atendimento: seg, ter e qua.", "Atendimento: segunda, terça e quarta."),
        ("Entregas de seg a sex.", "Entregas de segunda a sexta."),
        ("Orders placed on Friday ship the following Monday.", "Orders placed on Friday ship next Monday."),
        ("There is no fee for returns.", "There's no fee for returns."),
        ("Pix: -5%.", "Pix: - 5%."),
        ("Atendimento das 9h às 18h.", "Atendimento de 9h a 18h."),
        # a duration in another unit it fills exactly; an age said as a comparison
        ("O contrato de fidelidade é de 12 meses.", "O contrato de fidelidade é de 1 ano."),
        ("Refunds reach the card in 48 hours.", "Refunds reach the card in 2 days."),
        ("Returns within 14 days.", "Returns within 2 weeks."),
        ("Entrega em 24 a 48 horas.", "Entrega em 1 a 2 dias."),
        ("Children under 2 fly free.", "Children younger than 2 fly free."),
        ("Menores de 12 anos pagam meia.", "Abaixo de 12 anos pagam meia."),
        # a time of day in any notation: "9:00", "9 am", "às 9h", "noon", "meio-dia"
        ("Our helpline is open from 9:00 to 17:00.", "Our helpline is open from 9 am to 5 pm."),
        ("Pedidos feitos até as 14h saem no mesmo dia.", "Pedidos feitos até 14:00 saem no mesmo dia."),
        ("Atendemos das 9 às 18 horas.", "Atendemos das 9h às 18h."),
        ("A loja abre às 9h30.", "A loja abre às 9:30."),
        ("Orders placed by 2 p.m. ship the same day.", "Orders placed by 2:00 PM ship the same day."),
        ("Breakfast is served from 7 to 10 am.", "Breakfast is served from 7:00 to 10:00."),
        ("Pedidos feitos até o meio-dia chegam hoje.", "Pedidos feitos até as 12h chegam hoje."),
        ("Pedidos até as 14, saem hoje.", "Pedidos até 14:00, saem hoje."),
        # the business said twice ("by us"), a listed synonym, a Portuguese light participle
        ("We ship all orders from our Ohio warehouse.", "All orders are shipped by us from our Ohio warehouse."),
        ("Customers can begin the free trial at any time.", "Customers can start the free trial at any time."),
        ("A entrega é feita na portaria.", "A entrega é na portaria."),
        # the Portuguese article "as" opening a sentence or a phrase is no "às"
        ("As lojas físicas abrem aos domingos.", "Aos domingos, as lojas físicas abrem."),
        ("As trocas são feitas na loja.", "Trocas são feitas na loja."),
        # a rate said per, a, every or -ly; "without" and "with no"; a "get" passive
        ("The membership fee is $39.99 per month.", "The membership fee is $39.99 a month."),
        ("The membership fee is $39.99 per month.", "The membership fee is $39.99 monthly."),
        ("Meter readings are taken once a month.", "Meter readings are taken monthly."),
        ("Customers can cancel at any time without a penalty.", "Customers can cancel at any time with no penalty."),
        ("Wire transfers are processed the next business day.", "Wire transfers get processed the next business day."),
        ("The pharmacy is open 24/7.", "The pharmacy is open 24 hours a day, seven days a week."),
        # the passive of "include", its agent after "in", "with" or "em"
        ("Breakfast is included in all room rates.", "All room rates include breakfast."),
        ("Roadside assistance is included with every policy.", "Every policy includes roadside assistance."),
        ("O café da manhã está incluído na diária.", "A diária inclui o café da manhã."),
        ("Taxes are not included in the fee.", "The fee does not include taxes."),
        # "X is free for Y" is "Y get free X", the "for Y" in front or not
        ("Shipping is free for members.", "Members get free shipping."),
        ("Late returns pay half the daily rate.", "Late returns pay 50% of the daily rate."),
        # Portuguese: "exige" and "precisa de" are one need; "seguinte" after its noun is "próximo"
        ("A clínica exige 48 horas de antecedência.", "A clínica precisa de 48 horas de antecedência."),
        ("As transferências são processadas no dia útil seguinte.",
         "As transferências são processadas no próximo dia útil."),
        ("For members, shipping is free.", "Members get free shipping."),
        ("O frete é grátis para pedidos acima de R$ 50.", "Pedidos acima de R$ 50 têm frete grátis."),
        ("Pedidos feitos depois das 16h são enviados amanhã.", "Pedidos feitos após as 16h são enviados amanhã."),
        # a rate in Portuguese; "24/7" in either language
        ("O estacionamento custa R$ 15 a hora.", "O estacionamento custa R$ 15 por hora."),
        ("A farmácia funciona 24 horas por dia, 7 dias por semana.", "A farmácia funciona 24/7."),
        ("A mensalidade custa R$ 50 por mês.", "A mensalidade custa R$ 50 ao mês."),
        ("A leitura do medidor é feita uma vez por mês.", "A leitura do medidor é feita mensalmente."),
        # a count of a thing "a month" is a rate; "N or more" is "at least N" (eighth newcomers' set)
        ("Students may take 2 trial classes a month.", "Students may take two trial classes per month."),
        ("Members can book 3 sauna sessions a week.", "Members can book 3 sauna sessions per week."),
        ("Bookings must be made 24 or more hours in advance.", "Bookings must be made at least 24 hours in advance."),
        ("Pedidos com 3 ou mais itens têm frete grátis.", "Pedidos com no mínimo 3 itens têm frete grátis."),
        # a part of the day after an hour is its half of the clock
        ("The bakery closes at 10 at night.", "The bakery closes at 10 pm."),
        ("A padaria abre às 6 da manhã.", "A padaria abre às 6h."),
        ("Retirada até as 4 da tarde.", "Retirada até as 16h."),
        ("The bar closes at 12 at night.", "The bar closes at midnight."),
        ("The gym opens at 1 at night.", "The gym opens at 1 am."),
        ("Para pedidos acima de R$ 80, a entrega é grátis.", "A entrega é grátis para pedidos acima de R$ 80."),
        # a letter naming a thing, one side in capitals or Title Case (where case tells no name)
        ("Store A opens at 9 am.", "STORE A OPENS AT 9AM."),
        ("Plan A costs $10 a month.", "Plan A Costs $10 Per Month."),
        ("O plano A custa R$ 10 por mês.", "O Plano A Custa R$ 10 Ao Mês."),
        ("LOJA D ABRE ÀS 9H.", "LOJA D ABRE ÀS 9 HORAS."),
        ("A loja B abre às 9h e fecha às 18h.", "A LOJA B ABRE ÀS 9H E FECHA ÀS 18 H."),
        ("Store A opens at 9 am.", "Store A Opens At 9:00 AM."),
        ("Recarga Oi tem bônus de 10%.", "RECARGA OI TEM BÔNUS DE 10%."),
        ("Plan A includes a free month.", "PLAN A INCLUDES A FREE MONTH."),  # the article "a" stays one
        # an accented capital, or a vowel before a capitalised word, is a word ("É", "A", "E")
        ("O frete é grátis acima de R$ 199.", "O frete É grátis acima de R$ 199."),
        ("Atendemos de segunda a sexta.", "Atendemos de Segunda A Sexta."),
        ("Entregamos no Sul e Sudeste.", "Entregamos no Sul E Sudeste."),
        # a letter in another form, a zero-width character inside a word: what a reader sees
        ("A loja \u24b9 abre às 9h.", "A loja D abre às 9h."),
        ("A loja \uff24 abre às 9h.", "A loja D abre às 9h."),
        ("O frete é grá\u200btis acima de R$ 199.", "O frete é grátis acima de R$ 199."),
        # a leading phrase of when with no comma, moved to the end: the store still does it
        ("On Saturdays the shop closes at 7 p.m.", "The shop closes at 7 p.m. on Saturdays."),
        ("Aos domingos a loja abre às 10h.", "A loja abre às 10h aos domingos."),
        # synonyms of every rule of a store: shoppers are customers, "comida" is "alimento"
        ("Shoppers can return gifts within 60 days.", "Customers can return gifts within 60 days."),
        ("Não é permitido levar comida para a piscina.", "Não é permitido levar alimentos para a piscina."),
    ],
)
def test_rewordings_are_the_same_claim(a: str, b: str) -> None:
    assert same(a, b)
    assert same(b, a)


# ----------------------------------------------------------------------------- structure swaps, generated

SUBJECTS = ("Pix", "boleto", "members", "students", "Campinas", "Extrema", "the store", "the customer",
            "gift cards", "clothing", "electronics", "Sul", "Nordeste")
VALUES = ("5%", "3%", "R$ 15", "R$ 30", "7 days", "30 days", "2 hours", "12 installments")


@given(st.lists(st.sampled_from(SUBJECTS), min_size=2, max_size=2, unique=True),
       st.lists(st.sampled_from(VALUES), min_size=2, max_size=2, unique=True),
       st.sampled_from(["{v0} on {s0}, {v1} on {s1}.", "{v0} for {s0} and {v1} for {s1}.",
                        "{s0} pays {v0} and {s1} pays {v1}.", "{v0} de desconto no {s0} e {v1} no {s1}."]))
def test_two_values_swapped_between_their_subjects_are_never_the_same_claim(
        subjects: list[str], values: list[str], template: str) -> None:
    a = template.format(s0=subjects[0], s1=subjects[1], v0=values[0], v1=values[1])
    b = template.format(s0=subjects[0], s1=subjects[1], v0=values[1], v1=values[0])
    assert not same(a, b), (a, b)
    assert not same(b, a), (a, b)


@given(st.lists(st.sampled_from(SUBJECTS), min_size=2, max_size=2, unique=True),
       st.sampled_from(["Orders ship to {0} from {1}.", "Os pedidos saem de {0} para {1}.",
                        "{0} pays {1}.", "{0} refunds {1} for lost parcels."]))
def test_direction_or_parties_swapped_are_never_the_same_claim(subjects: list[str], template: str) -> None:
    a, b = template.format(*subjects), template.format(*reversed(subjects))
    assert not same(a, b), (a, b)


@given(st.integers(1, 28), st.integers(1, 12), st.integers(1, 28), st.integers(1, 12))
def test_dates_are_read_as_dates_day_first(d1: int, m1: int, d2: int, m2: int) -> None:
    a, b = f"The sale starts on {d1:02d}/{m1:02d}.", f"The sale starts on {d2:02d}/{m2:02d}."
    assert same(a, b) is ((d1, m1) == (d2, m2))
    months = ("janeiro fevereiro março abril maio junho julho agosto setembro outubro novembro "
              "dezembro").split()
    assert same(f"A promoção começa em {d1:02d}/{m1:02d}.", f"A promoção começa em {d1} de {months[m1 - 1]}.")


def test_a_range_keeps_both_ends_and_the_unit_kind() -> None:
    two = statement("Delivery takes 1-2 business days")
    assert {(str(v), u) for v, u in two.measures} == {("1", ""), ("2", "day:business")}


def test_portuguese_articles_are_read_as_one_only_where_they_count() -> None:
    assert read_number_words(fold("A garantia é de um ano")) == "a garantia e de 1 ano"
    assert read_number_words(fold("O cliente altera um pedido")) == "o cliente altera um pedido"
    assert read_number_words(fold("No máximo uma troca")) == "no maximo 1 troca"
    assert read_number_words(fold("entre dois e três dias")) == "entre 2 e 3 dias"
    assert read_number_words(fold("twenty-four hours, one hundred and five")) == "24 hours, 105"


@pytest.mark.parametrize(("text", "read"), [
    ("Results are ready within a week.", "results are ready within 1 week."),
    ("Refunds arrive in an hour", "refunds arrive in 1 hour"),
    ("Free for a year, then less than a business day", "free for 1 year, then less than 1 business day"),
    ("The pass costs $10 a week", "the pass costs $10 a week"),  # a rate, not one week
    ("Cleaning twice a month; a day pass", "cleaning twice a month; a day pass"),
])
def test_a_span_of_a_unit_of_time_is_one_of_it(text: str, read: str) -> None:
    assert read_number_words(fold(text)) == read


@pytest.mark.parametrize(("text", "read"), [
    ("Returns within 30 or 14 days", "returns within 30 days or 14 days"),
    ("Entrega em 5 ou 7 dias úteis", "entrega em 5 dias uteis ou 7 dias uteis"),
    ("5 or 10% off", "5% or 10% off"),
    ("size 38 or 40 shoes", "size 38 or 40 shoes"),  # no unit after them
])
def test_two_numbers_joined_by_or_share_the_unit_after_them(text: str, read: str) -> None:
    """A newcomer's finding: "within 30 or 14 days" read 30 without its unit, so a conflict
    said the merged text "drops 30 days"."""
    assert read_number_words(fold(text)) == read


def test_within_a_week_is_seven_days() -> None:
    assert same("Test results are ready within a week.", "Test results are ready within 7 days.")
    assert not same("Test results are ready within a week.", "Test results are ready within 2 weeks.")


@pytest.mark.parametrize(("words", "digits"), [
    ("Delivery takes one to two business days.", "Delivery takes 1 to 2 business days."),
    ("Delivery takes one to two days.", "Delivery takes 1-2 days."),
    ("Entrega em um a dois dias úteis.", "Entrega em 1 a 2 dias úteis."),
    ("Limit of one or two items per order.", "Limit of 1 or 2 items per order."),
    ("Delivery takes between 3 and 5 days.", "Delivery takes 3 to 5 days."),
    ("A entrega leva entre 3 e 5 dias.", "A entrega leva de 3 a 5 dias."),
    ("Delivery takes from 1 to 2 days.", "Delivery takes 1-2 days."),
])
def test_a_range_whose_first_end_is_one_in_words_is_the_range_in_digits(words: str, digits: str) -> None:
    assert same(words, digits)


def test_one_before_to_and_a_word_stays_a_pronoun() -> None:
    assert read_number_words(fold("one to a card and another to the store")) == \
        "one to a card and another to the store"


# ----------------------------------------------------------------------------- descriptions


@given(st.lists(st.sampled_from(WORDS), min_size=2, max_size=4, unique=True),
       st.lists(st.sampled_from(WORDS), min_size=2, max_size=4, unique=True),
       st.sampled_from(["Ask staff.", "See the sign.", "Pergunte no balcao."]))
@example(["delivery", "fee"], ["entrega", "refund"], "Ask staff.")  # once judged one claim
def test_two_descriptions_of_different_things_over_one_short_body_are_two_claims(
        a: list[str], b: list[str], body: str) -> None:
    """The body alone is no claim: "Free wifi..." and "Toilets..." over "Ask staff." are two.

    Words of one synonym group are one term ("delivery" and "entrega"): a pair whose
    descriptions are, for more than half of each one's terms, translations of each other
    ("Delivery refund." and "Entrega reembolso.") is the same claim said in two languages.
    """
    if set(a) & set(b):
        return  # only descriptions that share no content word
    terms_a, terms_b = statement(" ".join(a)).terms, statement(" ".join(b)).terms
    if 2 * len(terms_a & terms_b) > max(len(terms_a), len(terms_b)):
        return  # translations of each other (see above)
    record = make_concept(name="c", description=" ".join(a).capitalize() + ".", body=body)
    assert not same_claim(record, Candidate("c", " ".join(b).capitalize() + ".", "fact", body))


@pytest.mark.parametrize(("old", "new", "expected"), [
    ("Free wifi in the store, password on the receipt.", "Toilets are on the second floor.", False),
    ("Parking is free for customers.", "Parking is in the basement, entrance on Rua Augusta.", False),
    ("Free wifi in the store, password on the receipt.",
     "Free wifi in the store; the password is on the receipt.", True),
    ("Gift cards cannot be refunded.", "Gift cards can't be refunded.", True),
    # a summary may reword its role and modal words, but a segment or region named only in
    # one description is a claim of its own (issue 26)
    ("Gift cards cannot be refunded.", "Gift cards are never refunded.", True),
    ("Delivery fee.", "Delivery refund.", False),  # one shared term of two: half is not enough
    ("Delivery fee.", "Entrega refund.", False),  # entrega: delivery's synonym group
    ("Delivery refund.", "Entrega reembolso.", True),  # the same words, translated
    ("Frete grátis para a região Sul.", "Frete grátis para a região Nordeste.", False),
    ("Desconto para clientes pessoa jurídica.", "Desconto para clientes pessoa física.", False),
    ("Same-day delivery in Curitiba.", "Same-day delivery in Londrina.", False),
])
def test_a_description_must_be_about_what_the_other_side_says(old: str, new: str, expected: bool) -> None:
    record = make_concept(name="c", description=old, body="Ask staff at the front desk.")
    assert same_claim(record, Candidate("c", new, "fact", "Ask staff at the front desk.")) is expected


_REWRITTEN = ("não no not taxa tarifa frete despacho envio we ship free grátis cobramos charge fee , . ; "
              "10% R$ 20 de desconto nós US uma um por pedido direito a every each todos cada shipped paid "
              "increased is are by pelo CD Campinas Visa and Mastercard e Sul Sudeste interest-free").split()


@given(st.lists(st.sampled_from(_REWRITTEN), max_size=25).map(" ".join),
       st.lists(st.sampled_from(_REWRITTEN), max_size=25).map(" ".join))
def test_the_rewritten_readings_never_fail_and_a_text_restates_itself(a: str, b: str) -> None:
    """Every rewrite of the canonical form (tense, synonyms told apart, articles, order)
    holds on any mix of the words that trigger them."""
    from insika_knowledge.analysis.structure import details, kept_together, structure
    from insika_knowledge.consolidate.claims import same_statement

    assert same_statement(a, a) and structure(a).same_as(structure(a))
    assert kept_together(details(f"{a}. {b}"), details(a)) in (True, False)
    same_statement(a, b)


@pytest.mark.parametrize(("a", "b"), [
    # a label keeps its value when labelled parts are read in any order
    ("Boleto: 3% de desconto, crédito: preço cheio.", "Crédito: 3% de desconto, boleto: preço cheio."),
    ("Phone: 8am-8pm, chat: around the clock.", "Chat: 8am-8pm, phone: around the clock."),
    ("Destino: Recife, origem: Salvador.", "Destino: Salvador, origem: Recife."),
    ("Pickup order: Gold members, families, everyone else.", "Pickup order: families, Gold members, everyone else."),
    # a Portuguese verb in another tense (read between the two texts)
    ("A loja aceitava devolução sem nota.", "A loja aceita devolução sem nota."),
    ("Os clientes pagaram o frete.", "Os clientes pagam o frete."),
    ("A entrega custará R$ 30.", "A entrega custa R$ 30."),
    ("A loja devolveria o frete.", "A loja devolve o frete."),
    # signs and comparison marks
    ("Free returns for orders > R$ 80.", "Free returns for orders < R$ 80."),
    ("Upgrade: +$25 per leg.", "Upgrade: -$25 per leg."),
    ("Orders >= $40 ship free.", "Orders <= $40 ship free."),
    # meaning in short words: off-, once a / after a, this / every, need not / must not
    ("Off-season fares are refundable.", "Season fares are refundable."),
    ("Vouchers are issued once a month.", "Vouchers are issued after a month."),
    ("A loja abre aos sábados.", "A loja abre neste sábado."),
    ("We restock every week.", "We restock this week."),
    ("You don't need to bring the receipt.", "You must not bring the receipt."),
    ("O cliente não precisa levar a nota.", "O cliente não deve levar a nota."),
    ("Guests need not show the voucher.", "Guests must not show the voucher."),
    ("Você não precisa pagar a taxa.", "Você precisa não pagar a taxa."),
    ("This bundle ships free.", "Every bundle ships free."),
    ("Esse modelo tem garantia de 1 ano.", "Todo modelo tem garantia de 1 ano."),
    # words a synonym list or a stemmer read as one
    ("Invoices are sent by mail.", "Invoices are sent by email."),
    ("The fare is refunded on cancellation.", "The fee is refunded on cancellation."),
    ("A tarifa é reembolsada.", "A taxa é reembolsada."),
    ("Customs fees are paid by the buyer.", "Customer fees are paid by the buyer."),
    ("Each passenger may bring one bag.", "Each passenger may bring one suitcase."),
    # a rate is no total, once is not twice, with is not without
    ("The membership fee is $39.99 a month.", "The membership fee is $39.99 a year."),
    ("The membership fee is $39.99 monthly.", "The membership fee is $39.99."),
    ("Meter readings are taken monthly.", "Meter readings are taken twice a month."),
    ("Orders ship without tracking.", "Orders ship with tracking."),
    ("The pharmacy is open 24/7.", "The pharmacy is open 24 hours a day, six days a week."),
    ("Taxes are included in the fee.", "The fee is included in the taxes."),
    ("Taxes are included in the fee.", "The fee does not include taxes."),
    ("Shipping is free for members.", "Members get free returns."),
    ("Shipping is free for members.", "Members are free."),
    ("Children eat free on Tuesdays.", "Tuesdays eat free children."),
    ("O estacionamento custa R$ 15 a hora.", "O estacionamento custa R$ 15 a noite."),
    ("Pedidos feitos depois das 16h são enviados amanhã.", "Pedidos feitos antes das 16h são enviados amanhã."),
    ("A clínica não exige comprovante.", "A clínica não deve aceitar comprovante."),
    ("A clínica exige 48 horas de antecedência.", "A clínica não exige 48 horas de antecedência."),
    # found by a newcomer's attack on this round's readings
    ("O parcelamento é em 12 vezes mensais.", "O parcelamento é em 12 vezes por mês."),
    ("The late fee is a quarter.", "The late fee is 25%."),
    ("Buy two shirts and get a third free.", "Buy two shirts and get one third free."),
    ("A half-day tour costs $50.", "A 50% day tour costs $50."),
    ("Guests get upgraded rooms.", "Guests are upgraded rooms."),
    ("Parking is free for 2 hours.", "2 hours get free parking."),
    ("For now, shipping is free.", "Now get free shipping."),
    ("A mensalidade custa R$ 50 ao mês.", "A mensalidade custa R$ 50 ao ano."),
])
def test_what_words_carry_beyond_their_terms_is_never_the_same_claim(a: str, b: str) -> None:
    assert not same(a, b) and not same(b, a)


@pytest.mark.parametrize(("a", "b"), [
    ("Boleto: 3% de desconto, crédito: preço cheio.", "Crédito: preço cheio, boleto: 3% de desconto."),
    ("Unfortunately, we don't ship to Chile.", "We don't ship to Chile."),
    ("Applied at checkout: orders above R$ 99 ship free.", "Orders above R$ 99 ship free, applied at checkout."),
    ("Each customer gets a free sample.", "Each customer get a free sample."),
    ("A gente entrega em até 5 dias.", "Nós entregamos em até 5 dias."),
    ("Refunds can be requested over the phone.", "Refunds can be requested by phone."),
    ("Vouchers are issued once a month.", "Vouchers are issued once per month."),
    ("You never pay shipping on orders above $60.", "Shipping is free on orders above $60."),
    ("We are unable to ship to PO boxes.", "We do not ship to PO boxes."),
    ("Express delivery is not available in rural areas.", "Express delivery is unavailable in rural areas."),
    ("We've offered free gift wrap since May.", "We have offered free gift wrap since May."),
    ("A loja está aberta aos domingos.", "A loja abre aos domingos."),
])
def test_those_readings_keep_their_restatements(a: str, b: str) -> None:
    assert same(a, b)


@pytest.mark.parametrize(("a", "b", "alike"), [
    # "10x" counts installments (the letter x once read as a withdrawal of the whole rule)
    ("Parcelamos em até 10x sem juros.", "Parcelamos em até 10 vezes sem juros.", True),
    ("Parcelamos em até 10x sem juros.", "Parcelamos em até 12x sem juros.", False),
    ("Parcelamos em até 10x sem juros.", "Não parcelamos em até 10x sem juros.", False),
    # "no fee is charged" and "free of charge" say free once
    ("ATM withdrawals in the network are free of charge.", "ATM withdrawals in the network are free.", True),
    ("ATM withdrawals in the network: no fee is charged.", "ATM withdrawals in the network: free of charge.", True),
    ("No fee is charged for ATM withdrawals in the network.", "A fee is charged for ATM withdrawals in the network.",
     False),
    # "billed" charges, and "by the minute" is per minute (no agent)
    ("International calls are billed per minute.", "International calls are charged by the minute.", True),
    ("International calls are billed per minute.", "International calls are charged in total.", False),
    # "dá" is the verb (it folds to "da", of the)
    ("O cupom BEMVINDO10 dá 10% de desconto na primeira compra.",
     "Na primeira compra, o cupom BEMVINDO10 dá 10% de desconto.", True),
    ("O cupom BEMVINDO10 dá 10% de desconto na primeira compra.",
     "O cupom BEMVINDO10 dá 15% de desconto na primeira compra.", False),
    # two sentences each: a phrase moved from one to the other is another claim
    ("Até 3x sem juros; de 4x a 10x com juros.", "Até 3x com juros; de 4x a 10x sem juros.", False),
    ("Até 3 vezes sem juros. De 4 a 10 vezes com juros.", "De 4 a 10 vezes com juros. Até 3 vezes sem juros.", True),
    # a price said in reais and centavos is the price in digits
    ("O frete expresso custa vinte e nove reais e noventa centavos.", "O frete expresso custa R$ 29,90.", True),
    ("O frete expresso custa vinte e nove e noventa.", "O frete expresso custa R$ 29,90.", True),
    ("O frete expresso custa vinte e nove e noventa.", "O frete expresso custa R$ 119,00.", False),
])
def test_installments_free_and_spoken_prices_are_read_as_they_mean(a: str, b: str, alike: bool) -> None:
    assert same(a, b) is alike and same(b, a) is alike


@pytest.mark.parametrize(("a", "b"), [
    # a role word that only attaches a phrase ("no"/"do", "com"/"de") moves no meaning
    ("O café da manhã no hotel vai até as 10h.", "O café da manhã do hotel vai até as 10h."),
    ("A loja não aceita grupos com mais de 10 pessoas.", "A loja não aceita grupos de mais de 10 pessoas."),
    # a time of day written as a word, a discount written "off", "é de" before a value
    ("The bar closes at midnight.", "The bar closes at 12 a.m."),
    ("A loja fecha à meia-noite.", "A loja fecha às 0h."),
    ("Members get 10% off on Mondays.", "Members get a 10% discount on Mondays."),
    ("A multa por atraso é de R$ 20.", "A multa por atraso é R$20,00."),
    ("A garantia é de dois anos.", "A garantia é 2 anos."),
    # an ordinal in words, a medicine by its other name
    ("Tuition is due by the 5th of each month.", "Tuition is due by the fifth of each month."),
    ("The third order ships free.", "The 3rd order ships free."),
    ("O terceiro pedido tem frete grátis.", "O 3º pedido tem frete grátis."),
    ("Sellers get their payout 3 days after delivery.", "Sellers receive their payout 3 days after delivery."),
    ("O aluguel vence todo dia 1º.", "O aluguel vence todo dia 1."),  # a day of the month
    ("Store below 25°F.", "Store below 25° F."),  # a degree is no ordinal
    # the ninth newcomers' set (dev): small rewordings read apart before
    ("Tuition is due on the first of each month.", "Tuition is due on the 1st of each month."),
    ("Prescriptions are ready for pickup in two hours.", "Prescriptions are ready for pick-up in 2 hours."),
    ("O pedido pode ser acompanhado pelo aplicativo.", "O pedido pode ser acompanhado pelo app."),
    ("A farmácia entrega em domicílio sem taxa.", "A farmácia faz entregas em domicílio sem taxa."),
    ("Não fazemos entrega internacional.", "Nós não fazemos entregas internacionais."),
    ("Descontos de até 50% na Black Friday.", "Até 50% de desconto na Black Friday."),
    ("Não trocamos medicamentos abertos.", "Não trocamos remédios abertos."),
    # "no cost" said with its own negation is "free"
    ("A primeira consulta não tem custo nenhum.", "A primeira consulta é gratuita."),
    ("The first visit does not cost anything.", "The first visit is free."),
    # the tenth newcomers' set (dev): words that say nothing more
    ("Each passenger may bring one personal item on board.", "Every passenger may bring one personal item onboard."),
    ("Kids under 3 get in free.", "Kids under three get in for free."),
    ("A taxa de cancelamento é de 20% do valor total.", "A taxa de cancelamento corresponde a 20% do valor total."),
    ("A vacina da gripe é aplicada sem agendamento.", "A vacina da gripe é aplicada sem necessidade de agendamento."),
    ("Walk-ins are welcome without an appointment.", "Walk-ins are welcome without the need for an appointment."),
    # the sixteenth set (dev), in other words: kids are children, "ahead of time" is "in
    # advance", what the business sends is received however it is got
    ("Kids under 6 ride free on weekends.", "Children under six ride free on weekends."),
    ("Tables must be booked 48 hours in advance.", "Tables must be booked 48 hours ahead of time."),
    ("You'll get an invoice by email after checkout.", "You will receive an invoice by email after checkout."),
])
def test_restatements_that_move_no_meaning_are_the_same_claim(a: str, b: str) -> None:
    assert same(a, b) and same(b, a)


@pytest.mark.parametrize(("a", "b"), [
    # a direction or a party is never an attaching word
    ("O reembolso é feito para o cliente.", "O reembolso é feito pelo cliente."),
    ("Transferências da conta corrente para a poupança são grátis.",
     "Transferências da poupança para a conta corrente são grátis."),
    ("The bar closes at midnight.", "The bar closes at noon."),
    ("Members get 10% off on Mondays.", "Members get 15% off on Mondays."),
    ("A multa por atraso é de R$ 20.", "A multa por atraso é de R$ 25."),
    ("Tuition is due by the 5th of each month.", "Tuition is due by the sixth of each month."),
    ("A primeira consulta não tem custo nenhum.", "A primeira consulta tem custo."),
    ("Customers received a 10% coupon.", "Customers receive a 10% coupon."),  # a past is no present
    ("The bakery closes at 10 at night.", "The bakery closes at 10 in the morning."),
    ("A padaria abre às 6 da manhã.", "A padaria abre às 6 da tarde."),
    # a newcomer's attack on this round's readings (each was read as one claim at first)
    ("The gym opens at 1 at night.", "The gym opens at 1 pm."),  # 1-5 at night is am
    ("A academia fecha às 2 da noite.", "A academia fecha às 14h."),
    ("Guests are limited to 2 in the evening.", "Guests are limited to 2 pm."),  # a count, not a time
    ("Members receive 2 vouchers a month before renewal.", "Members receive 2 vouchers per month before renewal."),
    ("Customers can cancel orders for free.", "Customers can cancel free orders."),
    ("The seller receives the payment.", "The seller pays."),
    ("Late returns cost $5.", "Late returns get $5."),
    ("Bookings need 24 or more hours of notice.", "Bookings need 24 or fewer hours of notice."),
    # an ordinal is a place in a sequence, not a count
    ("The third order ships free.", "3 orders ship free."),
    ("A 2ª via do boleto é grátis.", "2 vias do boleto são grátis."),
    ("The 5th installment is waived.", "5 installments are waived."),
    # who gets an action is not who does it
    ("The seller gets the payment.", "The seller pays."),
    ("Customers get a reply within a day.", "Customers reply within a day."),
    ("Sellers get payments within 3 days.", "Sellers pay within 3 days."),
    ("The seller got the payment.", "The seller gets the payment."),  # a past is no present
    ("Orders do not always ship free.", "Orders do not ship free."),  # "not always" is not "never"
    # a newcomer's attack on this round's readings (each was read as one claim at first)
    ("We receive payment within 2 days.", "We pay within 2 days."),
    ("Customers who always pay on time get a discount.", "Customers who pay on time always get a discount."),
    ("Fazemos entregas terceirizadas.", "Nossas entregas são terceirizadas."),
    ("Refunds are issued at once.", "Refunds are issued simultaneously."),
    ("Orders pick up in December.", "Order pickup is in December."),
    ("Members can borrow 2 books at a time.", "Members can borrow 2 books a month."),
    ("O seguro-fiança é de uma vez o valor do aluguel.", "O seguro-fiança é de duas vezes o valor do aluguel."),
    # who is referred is not who refers (the last session's named false same)
    ("Quem indica ganha R$ 20 de desconto.", "Quem é indicado ganha R$ 20 de desconto."),
    ("Who refers gets $20.", "Who is referred gets $20."),
    ("Quem paga à vista ganha 5%.", "Quem é pago à vista ganha 5%."),
    ("Quem é indicado ganha R$ 20.", "Quem indica um cliente ganha R$ 20."),  # an attack on the first reading
    ("Who is referred gets $20.", "Who refers a customer gets $20."),
    ("Quem foi indicado ganha R$ 20.", "Quem indicou ganha R$ 20."),  # "foi" too (the attack's OLD one)
    ("Who was referred gets $20.", "Who referred gets $20."),
    # ...and what those readings must not fold
    ("Kids under 3 get in free.", "Kids under 3 get in for a fee."),
    ("Sign up for free shipping.", "Sign up free."),
    ("Meals are free onboard.", "Meals are free on the board."),
    ("A taxa corresponde a 20% do valor total.", "A taxa corresponde a 30% do valor total."),
    ("A vacina é aplicada sem agendamento.", "A vacina é aplicada com agendamento."),
    ("Walk-ins are welcome without an appointment.", "Walk-ins are welcome with an appointment."),
    ("Kids under 6 ride free on weekends.", "Adults under 6 ride free on weekends."),
    ("Tables must be booked 48 hours in advance.", "Tables must be booked 24 hours ahead of time."),
    ("You'll get an invoice by email after checkout.", "You will send an invoice by email after checkout."),
])
def test_the_same_words_with_another_direction_or_value_are_not_the_same_claim(a: str, b: str) -> None:
    assert not same(a, b) and not same(b, a)


@pytest.mark.parametrize(("a", "b", "alike"), [
    # "once" closing its clause counts one time; before a clause it is "after"
    ("Coupons can be used once.", "Coupons can be used later.", False),
    ("Each coupon can be used once per customer.", "Each coupon can be used after purchase.", False),
    ("Loans can be renewed once.", "Loans can be renewed twice.", False),
    ("Loans can be renewed once, online.", "Loans can be renewed later, online.", False),
    ("O cupom pode ser usado uma vez.", "O cupom pode ser usado depois.", False),
    ("Loans can be renewed once.", "Loans can be renewed one time.", True),
    ("Refunds are issued once the item arrives.", "Refunds are issued after the item arrives.", True),
    ("Once the order is paid, it ships in 2 days.", "After the order is paid, it ships in 2 days.", True),
    ("Loans can be renewed twice.", "Loans can be renewed 2 times.", True),
])
def test_once_as_a_count_and_once_as_after(a: str, b: str, alike: bool) -> None:
    """An older false same: "used once" read as "used later" ("once" was only "after")."""
    assert same(a, b) is alike and same(b, a) is alike


@pytest.mark.parametrize(("a", "b", "alike"), [
    # eleventh newcomers' set (dev): wordings that move no meaning
    ("A academia funciona de segunda a sexta, das 6h às 22h.", "A academia abre de seg. a sex., das 06:00 às 22:00.",
     True),
    ("Orders placed after 3 pm ship the next business day.",
     "Orders placed after 3 p.m. ship on the next business day.",
     True),
    ("Check-out is at 11 am.", "Checkout is at 11 am.", True),
    ("Check-in starts at 3 pm.", "Checkin starts at 3 pm.", True),
    ("Customers get a full refund within 7 days.", "Customers receive a full refund within 7 days.", True),
    ("Refunds are made in the first 30 days.", "Refunds are made within the first 30 days.", True),
    ("A farmácia funciona de segunda a sábado.", "A farmácia abre de segunda a sábado.", True),
    ("A loja funciona das 9h às 18h.", "A loja abre das 9h às 18h.", True),
    ("The clinic operates Monday to Friday.", "The clinic is open Monday to Friday.", True),
    # ...and what they must not fold
    ("Customers get a full refund within 7 days.", "Customers get a partial refund within 7 days.", False),
    ("A farmácia funciona de segunda a sábado.", "A farmácia fecha de segunda a sábado.", False),
    ("Orders ship on Monday.", "Orders ship on Tuesday.", False),
    ("O app funciona de qualquer lugar.", "O app abre de qualquer lugar.", False),
    ("Refunds are made in the first 30 days.", "Refunds are made after the first 30 days.", False),
    ("Pague em 3 parcelas sem juros.", "Pague em 3 pacotes sem juros.", False),
    ("Check-out is at 11 am.", "Check-in is at 11 am.", False),
])
def test_days_check_out_and_opening_hours_read_alike(a: str, b: str, alike: bool) -> None:
    assert same(a, b) is alike and same(b, a) is alike


@pytest.mark.parametrize(("a", "b", "alike"), [
    ("O horário do check-out é às 11h.", "O check-out é às 11h.", True),
    ("O horário do check-in é 14h.", "O check-in é às 14h.", True),
    ("O horário do check-out é às 11h.", "O check-out é às 12h.", False),
    ("Closing time is 10 pm.", "Closing time is 22h.", True),
    ("Checkout time is 11 am.", "Checkout is at 12 pm.", False),
    ("Delivery time is 3 days.", "Delivery is at 3 pm.", False),
])
def test_the_time_of_something_at_a_clock_time_is_when_it_is(a: str, b: str, alike: bool) -> None:
    """Eleventh newcomers' set (dev): "o horário do check-out é às 11h" / "o check-out é às
    11h". English "Checkout time is 11 am" / "Check-out is at 11:00 a.m." stays apart: the
    rewrite of "time is" read "10 pm" and "22h" apart (an attack), and is left."""
    assert same(a, b) is alike and same(b, a) is alike


@pytest.mark.parametrize(("a", "b", "alike"), [
    # an attack on this session's readings: each was read the other way by their first versions
    ("Orders above R$ 300 can be split into 10 parcels.", "Orders above R$ 300 can be split into 10 packages.", False),
    ("Pharmacy delivery time is 24h.", "Pharmacy delivery is 24h.", False),
    ("Delivery time is 12h.", "Delivery is at 12h.", False),
    ("If the courier fails once again, the order is refunded.", "If the courier fails once, the order is refunded.",
     False),
    ("Guests can check-in from 2 pm.", "Guests can check in from 2 pm.", True),
    ("Please check-out by 11 am.", "Please check out by 11 am.", True),
    ("Response time is 24h.", "Response time is 24 hours.", True),
    ("Check-out time is 11 am.", "Check-out time is 11 a.m.", True),
    ("O horário do check-in é às 14h.", "O horário do check-in é 14h.", True),
    ("On the next business day, the refund is issued.", "The refund is issued on the next business day.", True),
    ("On the same day, the deposit is refunded.", "The deposit is refunded on the same day.", True),
    ("Once free shipping is applied, the coupon cannot be removed.",
     "After free shipping is applied, the coupon cannot be removed.", True),
    ("Once each item is scanned, the refund is issued.", "After each item is scanned, the refund is issued.", True),
    ("A loja funciona de segunda a sábado.", "A loja funciona segunda a sábado.", True),
    ("O suporte funciona das 8h às 18h.", "O suporte funciona entre 8h e 18h.", True),
    ("We operate from 9 am to 6 pm.", "We operate between 9 am and 6 pm.", True),
])
def test_what_this_sessions_readings_must_not_read(a: str, b: str, alike: bool) -> None:
    assert same(a, b) is alike and same(b, a) is alike


@pytest.mark.parametrize(("a", "b"), [
    # An attack on two readings tried this session and dropped ("Delivery within the city is
    # free" as "Delivery is free within the city"; "a devolução do valor é feita" as "o valor é
    # devolvido"): each pair here was read as one claim by them. Which noun is free, the scope
    # of "free", and who does an action named as a noun are not told by word order alone.
    ("Customers in the app get a free coffee with every sandwich.",
     "Customers in the app get a coffee with every free sandwich."),
    ("Orders to the capital get free delivery with assembly.",
     "Orders to the capital get delivery with free assembly."),
    ("Members on the free plan get 5 GB of storage.", "Members on the plan get 5 GB of storage free."),
    ("Calls to landlines in Portugal are free.", "Calls to landlines are free in Portugal."),
    ("Delivery for orders until Friday is free.", "Delivery for orders is free until Friday."),
    ("O reembolso da seguradora é feito em 30 dias.", "Reembolsamos a seguradora em 30 dias."),
    ("A troca dos produtos de São Paulo é feita na loja.", "A troca dos produtos é feita na loja de São Paulo."),
    ("The cancellation of the order is free and the refund is processed in 5 days.",
     "The order is free and the refund is cancelled in 5 days."),
])
def test_readings_dropped_after_an_attack_stay_apart(a: str, b: str) -> None:
    assert not same(a, b) and not same(b, a)


@pytest.mark.parametrize(("a", "b", "alike"), [
    # "a taxa de X é (de) V" says what "X custa V" says
    ("A matrícula custa R$ 99.", "A taxa de matrícula é de R$ 99,00.", True),
    ("A entrega custa R$ 10.", "A taxa de entrega é R$ 10.", True),
    ("A entrega custa R$ 10 por pedido.", "A taxa de entrega é de R$ 10 por pedido.", True),
    # ...with its value and its thing kept
    ("A matrícula custa R$ 99.", "A taxa de matrícula é de R$ 89.", False),
    ("A entrega custa R$ 10.", "A taxa de troca é de R$ 10.", False),
    ("O reembolso custa R$ 10.", "O valor do reembolso é de R$ 10.", False),  # a fee is not an amount refunded
])
def test_the_fee_of_a_thing_is_what_it_costs(a: str, b: str, alike: bool) -> None:
    """Eleventh newcomers' set (dev): "A matrícula custa R$ 99" / "A taxa de matrícula é de
    R$ 99,00"."""
    assert same(a, b) is alike and same(b, a) is alike


@pytest.mark.parametrize(("a", "b", "alike"), [
    # thousands said as "mil" or "k", cents said in words
    ("The wedding package costs $12.5k.", "The wedding package costs $12,500.", True),
    ("O aluguel do salão de festas custa R$ 2,5 mil.", "O aluguel do salão de festas custa R$ 2.500.", True),
    ("O pacote anual custa R$ 1.050,00.", "O pacote anual custa mil e cinquenta reais.", True),
    ("A multa é de R$ 0,50 por dia.", "A multa é de cinquenta centavos por dia.", True),
    ("A passagem custa R$ 4,50.", "A passagem custa R$ 4 e 50 centavos.", True),
    # ...with the value kept
    ("The wedding package costs $12.5k.", "The wedding package costs $1,250.", False),
    ("O aluguel do salão custa R$ 2,5 mil.", "O aluguel do salão custa R$ 2,50.", False),
    ("A multa é de R$ 0,50 por dia.", "A multa é de cinquenta reais por dia.", False),
    ("Runners get a 10k medal.", "Runners get a 10000 medal.", False),  # no currency: a "k" is no thousand
    # an attack on these readings: English "mil" (a million, a thousandth of an inch), a mark
    # before three digits, the low end of a range, a sum of reais and centavos, another
    # currency's cents
    ("Liability coverage goes up to $2 mil per event.", "Liability coverage goes up to $2,000 per event.", False),
    ("The trash bags are 2 mil thick.", "The trash bags are 2000 thick.", False),
    ("The deposit is $2.125k.", "The deposit is $2,125,000.", False),
    ("O limite do cartão é de R$ 1,250 mil.", "O limite do cartão é de R$ 1.250.000.", False),
    ("O aluguel do salão custa de 2 a 3 mil reais.", "O aluguel do salão custa de 2 a 3.000 reais.", False),
    ("O aluguel do salão custa de 2 a 3 mil reais.", "O aluguel do salão custa de 2.000 a 3.000 reais.", True),
    ("O prêmio é de R$ 2 mil e 500.", "O prêmio é de R$ 2.500.", True),
    ("A passagem custa R$ 4 e 50 centavos.", "A passagem custa R$ 4 e R$ 0,50.", False),
    ("O chiclete custa 50 centavos de dólar.", "O chiclete custa R$ 0,50 de dólar.", False),
    ("Preços em euros: o refil custa 50 centavos.", "Preços em euros: o refil custa R$ 0,50.", False),
    ("In our Lisbon shop, a paper bag costs 10 cents.", "In our Lisbon shop, a paper bag costs $0.10.", False),
])
def test_thousands_and_cents_in_words_are_their_values(a: str, b: str, alike: bool) -> None:
    """Twelfth newcomers' set (dev): "$12.5k" / "$12,500", "R$ 2,5 mil" / "R$ 2.500",
    "mil e cinquenta reais" / "R$ 1.050,00", "cinquenta centavos" / "R$ 0,50"."""
    assert same(a, b) is alike and same(b, a) is alike


@pytest.mark.parametrize(("a", "b", "alike"), [
    ("Each session lasts 90 minutes.", "Each session lasts an hour and a half.", True),
    ("Each session lasts 90 minutes.", "Each session lasts one and a half hours.", True),
    ("The class lasts 150 minutes.", "The class lasts two and a half hours.", True),
    ("A aula experimental dura meia hora.", "A aula experimental dura 30 minutos.", True),
    ("A consulta dura uma hora e meia.", "A consulta dura 90 minutos.", True),
    ("The check takes half an hour.", "The check takes 30 minutes.", True),
    # ...and stays its own value
    ("Each session lasts 90 minutes.", "Each session lasts an hour.", False),
    ("A aula dura meia hora.", "A aula dura uma hora.", False),
    ("Half the fee is refunded.", "30 minutes of the fee is refunded.", False),
    # an attack on these readings: a clock time, a rate per hour, a half that is the next noun's
    ("A loja abre às 9 horas e meia.", "A loja abre às 570 minutos.", False),
    ("Parking is free for 2 hours and a half-price car wash is included.",
     "Parking is free for 150 minutes-price car wash is included.", False),
    ("Estacionamento grátis por 2 horas e meia-entrada para estudantes.",
     "Estacionamento grátis por 150 minutos-entrada para estudantes.", False),
    ("Delivery takes 24 hours and a half day more for rural areas.",
     "Delivery takes 1470 minutes day more for rural areas.", False),
    ("It takes up to an hour and a half.", "It takes up to 90 minutes.", True),
])
def test_half_hours_in_words_are_minutes(a: str, b: str, alike: bool) -> None:
    """Twelfth newcomers' set (dev): "90 minutes" / "an hour and a half", "meia hora" /
    "30 minutos"."""
    assert same(a, b) is alike and same(b, a) is alike


@pytest.mark.parametrize(("a", "b", "alike"), [
    ("The airline refunds the checked-bag fee if the bag arrives more than 12 hours late.",
     "If a bag arrives more than 12 hours late, the checked-bag fee is refunded by the airline.", True),
    ("The restaurant charges a 12% service fee on parties of eight or more.",
     "A 12% service fee is charged by the restaurant on parties of eight or more.", True),
    ("O restaurante cobra taxa de rolha de R$ 50 por garrafa.",
     "Uma taxa de rolha de R$ 50 por garrafa é cobrada pelo restaurante.", True),
    # ...and the agent may be how the business does it, or the business itself
    ("Os pedidos são enviados pelos Correios.", "Enviamos os pedidos pelos Correios.", True),
    ("We ship all orders from our Ohio warehouse.", "All orders are shipped by us from our Ohio warehouse.", True),
    # the agent named is who does it: another party is another claim
    ("The airline refunds the checked-bag fee.", "The checked-bag fee is refunded by the travel agency.", False),
    ("We refund the checked-bag fee.", "The checked-bag fee is refunded by the airline.", False),
])
def test_a_passive_that_names_its_agent_is_that_agent_doing_it(a: str, b: str, alike: bool) -> None:
    """Twelfth newcomers' set (dev): "is refunded by the airline" read as "we refund ... by
    the airline", so "The airline refunds" was another claim."""
    assert same(a, b) is alike and same(b, a) is alike


@pytest.mark.parametrize(("a", "b", "alike"), [
    ("A taxa de entrega é de R$ 7,00.", "A taxa de entrega custa sete reais.", True),
    ("The delivery fee is $7.", "The delivery fee costs $7.", True),
    ("A taxa de entrega é de R$ 7,00.", "A taxa de entrega custa oito reais.", False),
])
def test_a_fee_that_costs_is_the_fee(a: str, b: str, alike: bool) -> None:
    """Twelfth newcomers' set (dev): "A taxa de entrega custa sete reais" read the price
    twice."""
    assert same(a, b) is alike and same(b, a) is alike


@pytest.mark.parametrize(("a", "b", "alike"), [
    ("We refund the fee if the bag arrives late.", "If the bag arrives late, we refund the fee.", True),
    ("Trocamos o produto em 7 dias se ele chegar com defeito.",
     "Se o produto chegar com defeito, trocamos em 7 dias.", False),  # "ele" is not "o produto"
    ("Trocamos o produto em 7 dias se o produto chegar com defeito.",
     "Se o produto chegar com defeito, trocamos o produto em 7 dias.", True),
    ("We refund shipping when the order is late.", "When the order is late, we refund shipping.", True),
    ("Returns cost $5 unless the item is damaged.", "Unless the item is damaged, returns cost $5.", True),
    # the condition stays with what it conditions
    ("We refund the fee if the bag arrives late.", "If we refund the fee, the bag arrives late.", False),
    ("Returns cost $5 unless the item is damaged.", "Unless returns cost $5, the item is damaged.", False),
    ("We refund the fee if the bag arrives late.", "If the bag arrives late, we refund the fee twice.", False),
])
def test_a_condition_said_first_is_the_same_condition(a: str, b: str, alike: bool) -> None:
    """Twelfth newcomers' set (dev): "The airline refunds ... if the bag arrives more than 12
    hours late" / "If a bag arrives more than 12 hours late, ... is refunded by the airline"."""
    assert same(a, b) is alike and same(b, a) is alike


@pytest.mark.parametrize(("a", "b", "alike"), [
    ("O rodízio custa R$ 89 por pessoa, e crianças de até 6 anos não pagam.",
     "O rodízio custa R$ 89 por pessoa. Crianças de até 6 anos não pagam.", True),
    ("A entrega expressa custa R$ 25 e só está disponível em São Paulo.",
     "A entrega expressa custa R$ 25. Ela só está disponível em São Paulo.", True),
    ("Dogs are welcome on the patio. They must be kept on a leash.",
     "Dogs are welcome on the patio but must be kept on a leash.", True),
    ("Aceitamos cães de pequeno porte. Eles precisam estar na caixa de transporte.",
     "Aceitamos cães de pequeno porte, mas eles precisam estar na caixa de transporte.", True),
    # a value stays in its part, "or" is no "and", and what is said of what stays
    ("Returns are free within 30 days. Exchanges cost $5.", "Returns cost $5 and exchanges are free within 30 days.",
     False),
    ("Dogs are welcome on the patio. They must be kept on a leash.",
     "Dogs are welcome on the patio or must be kept on a leash.", False),
    ("Returns are free. Exchanges cost $5.", "Returns are free, but exchanges cost $6.", False),
])
def test_two_sentences_say_what_one_joined_by_and_says(a: str, b: str, alike: bool) -> None:
    """Twelfth newcomers' set (dev): "..., e crianças de até 6 anos não pagam" / "...
    Crianças de até 6 anos não pagam", "... patio. They must..." / "... patio but must..."."""
    assert same(a, b) is alike and same(b, a) is alike


@pytest.mark.parametrize(("a", "b"), [
    # An attack on this session's readings: each pair was read as one claim by their first
    # versions. A condition said first may cover two clauses or hold a comma of its own;
    # two sentences do not share a condition or a phrase said in the first; "but" may mean
    # "except"; a step's number is a value, and steps keep their order; a compound of two
    # words of one synonym group is no price word said twice; "pela manhã" is no agent.
    ("If you pay by Pix, we ship for free, and we give 5% off.",
     "We ship for free, and we give 5% off if you pay by Pix."),
    ("If it rains, the tour is cancelled and we refund the ticket.",
     "The tour is cancelled and we refund the ticket if it rains."),
    ("If you buy a sofa, a table or a bed, assembly is free.", "A table or a bed, assembly is free if you buy a sofa."),
    ("If you are a member, shipping is free and returns are free.",
     "If you are a member, shipping is free. Returns are free."),
    ("On weekends, kids eat free and parking is free.", "On weekends, kids eat free. Parking is free."),
    ("We are open every day but Sunday.", "We are open every day. And Sunday."),
    ("All items ship free but furniture.", "All items ship free. And furniture."),
    ("Payment is due at step 2.", "Payment is due at step 3."),
    ("Step 1: sign the contract. Step 2: pay the deposit.", "Step 1: pay the deposit. Step 2: sign the contract."),
    ("1) Sign the contract. 2) Pay the deposit.", "1) Pay the deposit. 2) Sign the contract."),
    ("Minimum age:\n18. Valid ID required.", "Minimum age:\n21. Valid ID required."),
    ("Etapa 3 - o reembolso é liberado.", "Etapa 1 - o reembolso é liberado."),
    ("We accept purchase orders from schools.", "We accept orders from schools."),
    ("The cost price is $5 per ticket.", "The price is $5 per ticket."),
    ("Our clients' customers get free shipping.", "Our clients get free shipping."),
    ("Os pedidos são entregues pela manhã.", "A manhã entrega os pedidos."),
    ("O frete é cobrado pelo peso.", "O peso cobra o frete."),
    ("Returns are accepted by mail.", "Mail accepts returns."),
])
def test_this_sessions_readings_stay_apart_under_an_attack(a: str, b: str) -> None:
    assert not same(a, b) and not same(b, a)


@pytest.mark.parametrize(("a", "b"), [
    ("1) Submit the form. 2) Pay the fee.", "1. Submit the form.\n2. Pay the fee."),
    ("Step 1: submit the form. Step 2: pay the fee.", "1) Submit the form. 2) Pay the fee."),
    ("Kids under 12 eat free with an adult. They must order from the kids menu.",
     "Kids under 12 eat free with an adult but must order from the kids menu."),
])
def test_steps_and_joined_sentences_still_read_alike(a: str, b: str) -> None:
    assert same(a, b) and same(b, a)


@pytest.mark.parametrize(("a", "b", "alike"), [
    ("Às segundas-feiras, o restaurante não abre para o almoço.",
     "O restaurante não abre para o almoço às segundas-feiras.", True),
    ("On weekends, members park for free.", "Members park for free on weekends.", True),
    ("For members, shipping is free.", "Shipping is free for members.", True),
    # the phrase keeps its values, and the rest its own
    ("On weekends, members park for $5.", "Members park for $5 on weekdays.", False),
    ("From Campinas, we ship to Extrema.", "We ship to Campinas from Extrema.", False),
    ("Às segundas-feiras, o restaurante não abre para o almoço.",
     "O restaurante abre para o almoço às segundas-feiras.", False),
])
def test_an_opening_phrase_closed_by_a_comma_may_come_last(a: str, b: str, alike: bool) -> None:
    """Thirteenth newcomers' set (dev): "Às segundas-feiras, o restaurante não abre..." /
    "O restaurante não abre ... às segundas-feiras" went to a conflict."""
    assert same(a, b) is alike and same(b, a) is alike


@pytest.mark.parametrize(("a", "b"), [
    ("Boarding order: Gold, Silver and Bronze.", "Boarding order: Bronze, Silver and Gold."),
    ("We accept Visa, Mastercard and Amex, the latter with a 3% fee.",
     "We accept Amex, Mastercard and Visa, the latter with a 3% fee."),
    ("O frete leva 1, 2 e 3 dias para SP, RJ e MG, respectivamente.",
     "O frete leva 1, 2 e 3 dias para MG, RJ e SP, respectivamente."),
    ("Free delivery in downtown Boston, Cambridge and Somerville.",
     "Free delivery in downtown Cambridge, Boston and Somerville."),
    ("To return an item, unplug, pack and ship it.", "To return an item, ship, pack and unplug it."),
])
def test_a_lists_order_is_kept(a: str, b: str) -> None:
    """An attack on a reading tried this session (a list of one-word names in any order):
    a list's order may rank, sequence, pair with values or be named back ("the latter")."""
    assert not same(a, b) and not same(b, a)


@pytest.mark.parametrize(("a", "b", "alike"), [
    ("Smoking is prohibited in the rooms.", "Smoking is not allowed in the rooms.", True),
    ("Pets are forbidden on the terrace.", "Pets are not allowed on the terrace.", True),
    ("É proibido fumar nos quartos.", "Não é permitido fumar nos quartos.", True),
    ("Você não precisa levar o boleto.", "Cê não precisa levar o boleto.", True),
    # "vedado" is also "sealed"; "CE" is a state and a mark
    ("Os potes são vedados.", "Os potes não são permitidos.", False),
    ("O frete para o CE é grátis.", "O frete para você é grátis.", False),
    # a prohibition is a negation: it never reads as a permission
    ("Smoking is prohibited in the rooms.", "Smoking is allowed in the rooms.", False),
    ("É proibido fumar nos quartos.", "É permitido fumar nos quartos.", False),
    ("Smoking is prohibited in the rooms.", "Smoking is not prohibited in the rooms.", False),
])
def test_a_prohibition_is_not_allowed_and_ce_is_voce(a: str, b: str, alike: bool) -> None:
    """Thirteenth newcomers' set (dev): "not allowed" / "prohibited", "Você" / "Cê"."""
    assert same(a, b) is alike and same(b, a) is alike


@pytest.mark.parametrize(("a", "b", "alike"), [
    ("Nós não cobramos taxa de adesão.", "A empresa não cobra taxa de adesão.", True),
    ("The company does not charge a sign-up fee.", "We do not charge a sign-up fee.", True),
    ("A loja troca o produto em 7 dias.", "O produto é trocado pela loja em 7 dias.", True),
    ("A farmácia entrega os medicamentos em até 2 horas.",
     "Os medicamentos são entregues pela farmácia em até 2 horas.", True),
    ("A companhia aérea reembolsa a taxa de bagagem.", "A taxa de bagagem é reembolsada pela companhia aérea.", True),
    # another company, another doer
    ("A empresa parceira entrega os pedidos.", "Nós entregamos os pedidos.", False),
    # after an opening phrase, "the company" may be the customer's employer
    ("On the corporate plan, the company pays half the fee.", "On the corporate plan, we pay half the fee.", False),
    ("No convênio, a empresa desconta a mensalidade na folha.", "No convênio, descontamos a mensalidade na folha.",
     False),
    ("A companhia aérea reembolsa a taxa de bagagem.", "Nós reembolsamos a taxa de bagagem.", False),
    ("Os medicamentos são entregues pela farmácia.", "Os medicamentos são entregues pelo laboratório.", False),
])
def test_the_company_is_the_business_and_a_pharmacy_is_a_doer(a: str, b: str, alike: bool) -> None:
    """Thirteenth newcomers' set (dev): "Nós não cobramos" / "A empresa não cobra", and
    "entregues pela farmácia" / "A farmácia entrega" went to a conflict."""
    assert same(a, b) is alike and same(b, a) is alike


@pytest.mark.parametrize(("a", "b", "alike"), [
    ("If the flight is cancelled by the airline, passengers get a full refund.",
     "Passengers get a full refund if the airline cancels the flight.", True),
    ("Se o voo for cancelado pela companhia, o passageiro recebe reembolso integral.",
     "O passageiro recebe reembolso integral se a companhia cancelar o voo.", True),
    # who cancels stays apart, and a withdrawal with no one named is still one
    ("If the flight is cancelled by the airline, passengers get a full refund.",
     "Passengers get a full refund if the passenger cancels the flight.", False),
    ("The free shipping offer was cancelled.", "The free shipping offer is available.", False),
])
def test_a_cancellation_someone_makes_is_their_act_not_a_withdrawal(a: str, b: str, alike: bool) -> None:
    """Thirteenth newcomers' set (dev): "If the flight is cancelled by the airline" read as a
    withdrawn rule, so "if the airline cancels the flight" said something else."""
    assert same(a, b) is alike and same(b, a) is alike


@pytest.mark.parametrize(("a", "b", "alike"), [
    ("Refunds are not issued unless the item is returned in its original packaging.",
     "Refunds are issued only if the item is returned in its original packaging.", True),
    ("Não reembolsamos a menos que o produto seja devolvido.",
     "Reembolsamos somente se o produto for devolvido.", True),
    ("Reembolsamos desde que o produto seja devolvido.", "Reembolsamos se o produto for devolvido.", True),
    ("Enviamos um cupom sempre que o pedido atrasa.", "Enviamos um cupom quando o pedido atrasa.", True),
    # "unless" is not "if", and two negations are not one
    ("Refunds are not issued unless the item is returned.", "Refunds are issued if the item is returned.", False),
    ("Refunds are not issued unless the item is returned.", "Refunds are not issued if the item is returned.", False),
    ("We never refund and never exchange unless the item is returned.",
     "We refund and exchange only if the item is returned.", False),
    ("Reembolsamos desde que o produto seja devolvido.", "Reembolsamos desde o dia em que o produto foi devolvido.",
     False),
    # an attack: a negation of a noun or of "must"; "desde que" before a past is "since"; "salvo se" is "saved if"
    ("Orders not picked up within 7 days are cancelled unless the customer calls us.",
     "Orders picked up within 7 days are cancelled only if the customer calls us.", False),
    ("You must not open the box unless a technician is present.",
     "You must open the box only if a technician is present.", False),
    ("Não aceitamos cheques desde que a loja foi assaltada.", "Não aceitamos cheques se a loja foi assaltada.", False),
    ("O carrinho fica salvo se você fizer login.", "Se você fizer login, o carrinho fica salvo.", True),
])
def test_not_unless_is_only_if_and_portuguese_conditions_read_as_conditions(a: str, b: str, alike: bool) -> None:
    """Thirteenth newcomers' set (dev): "not issued unless" / "issued only if"; and "desde
    que", "sempre que", "a menos que" were read as "since", a word and "less" ("_ONE_WORD"
    never reached the reader: it split words at "_")."""
    assert same(a, b) is alike and same(b, a) is alike


@pytest.mark.parametrize(("a", "b", "alike"), [
    ("The museum is free on weekends.", "The museum is free on Saturdays and Sundays.", True),
    ("O museu é grátis nos fins de semana.", "O museu é grátis nos sábados e domingos.", True),
    ("Assignments must be submitted by Friday.", "Assignments must be submitted no later than Friday.", True),
    # another day, another sum
    ("The museum is free on weekends.", "The museum is free on Saturdays.", False),
    ("Assignments must be submitted by Friday.", "Assignments must be submitted after Friday.", False),
    ("Entregamos na sexta, no mais tardar.", "Entregamos na sexta.", False),  # at the latest is not on
])
def test_weekends_deadlines_and_prices_said_two_ways(a: str, b: str, alike: bool) -> None:
    """Thirteenth newcomers' set (dev): "weekends" / "Saturdays and Sundays", "by Friday" /
    "no later than Friday"."""
    assert same(a, b) is alike and same(b, a) is alike


@pytest.mark.parametrize(("a", "b"), [
    ("The refund is $50.", "The refund costs $50."),
    ("The refund is $50.", "The refund fee is $50."),
    ("O pedido mínimo é de R$ 50.", "O pedido mínimo custa R$ 50."),
    ("Your credit is $25.", "Your credit costs $25."),
])
def test_is_a_sum_is_not_what_it_costs(a: str, b: str) -> None:
    """An attack on a reading tried this session ("is $1,200" as "costs $1,200"): a refund,
    a credit, a minimum "is" a sum it does not cost."""
    assert not same(a, b) and not same(b, a)


@pytest.mark.parametrize(("a", "b", "alike"), [
    ("Hóspedes podem cancelar sem custo até 24 horas antes.", "Hóspedes podem cancelar sem nenhum custo até 24h antes.",
     True),
    ("A segunda via não tem taxa.", "A segunda via é isenta de taxa.", True),
    ("A taxa de matrícula é gratuita para alunos.", "A taxa de matrícula é isenta para alunos.", True),
    # a cost after all, or exempt of something else
    ("Hóspedes podem cancelar sem custo até 24 horas antes.", "Hóspedes podem cancelar com custo até 24h antes.",
     False),
    ("A segunda via não tem taxa.", "A segunda via não é isenta de taxa.", False),
    ("O pão de queijo é grátis.", "O pão de queijo é isento de glúten.", False),  # exempt of gluten
    ("O cartão não tem anuidade.", "O cartão é isento de IOF.", False),
])
def test_no_cost_at_all_and_exempt_say_free(a: str, b: str, alike: bool) -> None:
    """Fourteenth newcomers' set (dev): "sem nenhum custo" is "sem custo"; "Taxa: isenta"
    is no fee."""
    assert same(a, b) is alike and same(b, a) is alike


def test_installation_is_not_an_installment() -> None:
    """Snowball stems "installation" and "installment" alike ("instal"): the synonym by
    stem read installing as paying in parts, in both languages."""
    from insika_knowledge.analysis.structure import tokens

    assert tokens("Installation is free.")[0] == tokens("A instalação é grátis.")[0] == tokens("Instalamos.")[-2]
    assert tokens("Installation is free.")[0] != tokens("Installments are free.")[0]
    assert tokens("O parcelamento é grátis.")[0] == tokens("Installments are free.")[0]
    assert not same("Installation is free.", "Installments are free.")
    assert not same("A instalação é grátis.", "O parcelamento é grátis.")


@pytest.mark.parametrize(("a", "b"), [
    ("Prescriptions can be refilled online or by phone.", "Prescriptions can be refilled by phone or online."),
    ("Returns go to Campinas or to Extrema.", "Returns go to Extrema or to Campinas."),
    ("Você pode pagar o boleto pelo app ou no site.", "Você pode pagar o boleto no site ou pelo app."),
])
def test_two_ways_joined_by_or_read_in_any_order(a: str, b: str) -> None:
    assert same(a, b)


@pytest.mark.parametrize(("a", "b"), [
    ("5% off on Pix and 3% off on boleto.", "3% off on Pix and 5% off on boleto."),  # values stay with their way
    ("We ship to Campinas from Extrema.", "We ship to Extrema from Campinas."),
])
def test_ways_with_their_values_or_roles_keep_their_order(a: str, b: str) -> None:
    assert not same(a, b)



def test_where_a_thing_leaves_from_is_read_alike_in_either_order() -> None:
    """"sai de X" is read as an origin where it is compared (`analysis.arrangement`), not
    rewritten for every reader: "saem para Campinas de Extrema" restates "saem de Extrema
    para Campinas" (a rewrite of "saem de" alone told the two apart)."""
    assert same("Os pedidos saem de Extrema para Campinas.", "Os pedidos saem para Campinas de Extrema.")


@pytest.mark.parametrize(("a", "b", "alike"), [
    ("The plan includes 20 GB of data.", "The plan includes twenty gigabytes of data.", True),
    ("O plano inclui 20 GB de internet.", "O plano inclui 20 giga de internet.", True),
    ("The plan includes 20 GB of data.", "The plan includes 20 MB of data.", False),
    ("O limite de upload é de 500 MB.", "O limite de upload é de 500 KB.", False),
    ("The plan includes 20 GB monthly.", "The plan includes 20 GB a month.", True),  # per month, not once
])
def test_amounts_of_data_are_read_with_their_unit(a: str, b: str, alike: bool) -> None:
    assert same(a, b) is alike and same(b, a) is alike


def test_an_english_no_in_a_short_rule_is_a_negation() -> None:
    """A short rule whose only stop word is "no" is read by its spelling: English words make
    it a negation, Portuguese ones (or none) "em o"."""
    from insika_knowledge.analysis.structure import tokens

    assert "n" in tokens("New members pay no enrollment fee.")
    for portuguese in ("Montagem no interior custa R$ 130", "Frete no Pix", "Entrega no sábado"):
        assert "r:em" in tokens(portuguese) and "n" not in tokens(portuguese)


@pytest.mark.parametrize(("a", "b", "alike"), [
    # no limit is a quantity of its own: a claim of unlimited passes is not one of 2
    ("The Flex plan includes unlimited guest passes.", "The Flex plan includes 2 guest passes.", False),
    ("O plano Flex tem passes ilimitados.", "O plano Flex tem 2 passes.", False),
    ("O plano Flex tem passes ilimitados.", "O plano Flex tem passes sem limite.", True),
    # a plan named "Unlimited" is a name, whatever its price
    ("The Unlimited plan costs $60 a month.", "The Unlimited plan costs $60 per month.", True),
    ("O plano Ilimitado custa R$ 99 por mês.", "O plano ilimitado custa R$ 99 ao mês.", True),
    ("The Unlimited plan costs $60 a month.", "The Unlimited plan costs $80 a month.", False),
])
def test_no_limit_is_a_value_and_a_plan_named_unlimited_is_a_name(a: str, b: str, alike: bool) -> None:
    assert same(a, b) is alike and same(b, a) is alike


@pytest.mark.parametrize(("a", "b", "alike"), [
    # a list of plain words, alone in its sentence, says the same in any order
    ("The veterinary clinic accepts cash, credit cards and bank transfers.",
     "The veterinary clinic accepts bank transfers, cash and credit cards.", True),
    ("O kit de boas-vindas do coworking inclui caneca, camiseta e garrafa.",
     "O kit de boas-vindas do coworking inclui garrafa, caneca e camiseta.", True),
    ("The Premium plan includes the pool, the sauna and group classes.",
     "The Premium plan includes group classes, the pool and the sauna.", True),
    # ...but "and" is not "or", an item is not another, and a list bound to values by
    # position, or read in an order the sentence names, keeps its order
    ("We accept cash, cards and Pix.", "We accept cash, cards or Pix.", False),
    ("We accept cash, cards and Pix.", "We accept cash, cards and boleto.", False),
    ("Gold, Silver and Bronze members get 20%, 10% and 5% off.",
     "Bronze, Silver and Gold members get 20%, 10% and 5% off.", False),
    ("Adults, children and seniors pay the fee respectively.",
     "Seniors, children and adults pay the fee respectively.", False),
    ("Fill in the form, sign it and then mail it.", "Mail it, sign it and then fill in the form.", False),
])
def test_a_list_of_plain_words_is_read_in_any_order(a: str, b: str, alike: bool) -> None:
    assert same(a, b) is alike and same(b, a) is alike


@pytest.mark.parametrize(("a", "b", "alike"), [
    # "as" after a verb is the Portuguese article, not "às" (at)
    ("O professor corrige as redações em até uma semana.",
     "As redações são corrigidas pelo professor em até uma semana.", True),
    ("O professor corrige as redações em até uma semana.", "O professor corrige as redações em até duas semanas.",
     False),
    ("A loja abre às 9h.", "A loja abre às 10h.", False),
])
def test_the_portuguese_article_as_after_a_verb_is_no_role(a: str, b: str, alike: bool) -> None:
    assert same(a, b) is alike and same(b, a) is alike


@pytest.mark.parametrize(("a", "b", "alike"), [
    ("O cliente tá isento da taxa de adesão pra planos anuais.",
     "O cliente está isento da taxa de adesão para planos anuais.", True),
    ("Parking at the coworking building costs $5/hr.", "Parking at the coworking building costs $5 per hour.", True),
    ("Parking at the coworking building costs $5/hr.", "Parking at the coworking building costs $5 per day.", False),
    ("O estacionamento custa R$ 20/dia para hóspedes.", "O estacionamento custa R$ 20 por dia para hóspedes.", True),
    ("The breakfast box comes with a dozen bread rolls.", "The breakfast box comes with 12 bread rolls.", True),
    ("The breakfast box comes with a dozen bread rolls.", "The breakfast box comes with 10 bread rolls.", False),
    ("O seguro do carro não é obrigatório na locação.", "O seguro do carro é opcional na locação.", True),
    ("O seguro do carro é obrigatório na locação.", "O seguro do carro é opcional na locação.", False),
    ("A campanha de vacinação vai de 01/08 a 15/08.", "A campanha de vacinação vai de 1º a 15 de agosto.", True),
    ("A campanha de vacinação vai de 01/08 a 15/08.", "A campanha de vacinação vai de 1º a 16 de agosto.", False),
    ("The sale runs from August 1 to August 15.", "The sale runs from August 1 to 15.", True),
    ("A matrícula na escola exige um documento com foto.", "A matrícula na escola requer um documento com foto.",
     True),
    ("A photo ID is mandatory at check-in.", "A photo ID is required at check-in.", True),
    ("A photo ID is required at check-in.", "A photo ID is optional at check-in.", False),
])
def test_abbreviations_dozens_optional_and_day_ranges_of_one_month(a: str, b: str, alike: bool) -> None:
    """Restatements of an unseen set's dev half (benchmarks/consolidation/newcomers18.jsonl)."""
    assert same(a, b) is alike and same(b, a) is alike
