"""A claim said with its parts placed otherwise is another claim (issue 26: "Two claims that
swap a value, a party or a direction are different claims").

`analysis.arrangement.rearranged` on pairs that share every word, and the trust gate that
uses it: a business sentence that says another version of the customer's claim does not
vouch for it, and a customer's message that says another version does not make the
business's own version an echo.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from insika_knowledge.analysis.arrangement import rearranged
from insika_knowledge.trust import assess

SWAPPED = [
    ("5% off on Pix and 3% off on boleto.", "Actually it's 3% off on Pix and 5% off on boleto.",
     "a value sits with another subject"),
    ("Frete grátis para o Sul e R$ 20 para o Nordeste.", "É frete grátis para o Nordeste e R$ 20 para o Sul.",
     "a value sits with another subject"),
    ("Orders ship from Extrema to Campinas.", "Orders ship from Campinas to Extrema.",
     "a role word is turned around"),
    ("Free shipping for members and orders above $99.", "Free shipping is for members on orders above $99.",
     "a role word is turned around"),
    ("Orders above $50 ship free.", "Orders below $50 ship free.", "a role word is turned around"),
    ("Cancel before shipping for a full refund.", "You can cancel after shipping for a full refund.",
     "a role word is turned around"),
    ("Customers must show ID at pickup.", "Customers may show ID at pickup.", "a role word is turned around"),
    ("The store pays the return shipping.", "No, the customer pays the return shipping.",
     "another party does it"),
    ("Return shipping is paid by the store.", "Return shipping is paid by the customer.", "another party does it"),
    ("A taxa de instalação é por conta da loja.", "A taxa de instalação é por conta do cliente.",
     "another party does it"),
    ("O voo das 6h40 vai de Guarulhos com destino a Confins.", "O voo das 6h40 sai de Confins com destino a Guarulhos.",
     "a role word is turned around"),
    ("A migração é permitida do plano anual para o mensal.", "A migração é permitida do plano mensal para o anual.",
     "a role word is turned around"),
    ("O frete da troca é pago pela loja e o frete de produto com defeito é pago pelo cliente.",
     "frete troca: pago pelo cliente, frete defeito: pago pela loja", "another party does it"),
    ("O plano Prata custa mais que o Ouro.", "O plano Ouro custa mais que o Prata.",
     "the two sides of a comparison are swapped"),
    ("Tickets cost R$ 30 before March 1st and R$ 25 after.", "Tickets cost R$ 25 before March 1st and R$ 30 after.",
     "the two sides of a comparison are swapped"),
    ("On Everyday Checking, the overdraft fee is $25 and the returned-payment fee is $35.",
     "An overdraft costs $35 and a returned payment costs $25.", "a value sits with another subject"),
    ("Frete de R$ 40 para o Sudeste e R$ 15 para o Norte.", "Sudeste: R$ 15, Norte: R$ 40",
     "a value sits with another subject"),
    ("O frete é grátis para compras acima de R$ 199 ou para qualquer entrega na região Sudeste.",
     "O frete grátis vale para compras acima de R$ 199 com entrega no Sudeste.", "a role word is turned around"),
    # a value counted per something else
    ("O assento conforto custa R$ 100 pela viagem de ida e volta.",
     "A marcação de assento conforto custa cem reais por trecho.", "a value is counted per, or from, another thing"),
    ("Seat selection costs $15 per trip.", "Seat selection costs $15 per segment, four segments in all.",
     "a value is counted per, or from, another thing"),
    ("Tickets cancelled within 24 hours of departure are fully refunded.",
     "A full refund applies only if you cancel within 24 hours of booking.",
     "a value is counted per, or from, another thing"),
    # the other party as a passive's agent
    ("A loja paga o imposto de importação.", "O imposto de importação é pago pelo comprador.",
     "another party does it"),
    ("The store pays the return shipping.", "Return shipping is paid by the customer.", "another party does it"),
    # tiers whose prices trade bounds, each said in its own clause
    ("A mensalidade é R$ 1.610,00 até o dia 5 e R$ 1.450,00 após o dia 5.",
     "A mensalidade é de R$ 1.450,00 se paga até o dia 5. Após o dia 5, o valor é de R$ 1.610,00.",
     "a value sits with another subject"),
    ("Tickets cost $279 until April 30 and $199 from May 1.",
     "Early-bird tickets are $199 until April 30. From May 1 the price goes up to $279.",
     "a value sits with another subject"),
    ("Consultas podem ser desmarcadas sem cobrança em até 12 horas após o agendamento.",
     "Se desmarcar com pelo menos 12 horas de antecedência da consulta, não tem cobrança.",
     "a value is counted per, or from, another thing"),
    ("Retirar o carro no Rio de Janeiro e devolver em São Paulo é isento de taxa de retorno.",
     "Pra retirar em São Paulo e devolver no Rio a gente não cobra taxa de retorno.",
     "it is said of another place or group"),
    # the rule said of other named places or groups
    ("O frete é grátis em compras acima de R$ 199 para todo o Brasil.",
     "Frete grátis em compras acima de R$ 199 pras regiões Sul e Sudeste.", "it is said of another place or group"),
    ("Free shipping to Canada on orders over $50.", "Free shipping on orders over $50 to the US and Mexico.",
     "it is said of another place or group"),
    # a value whose verb is left out after a comma ("e o de espanhol, R$ 360"): a newcomer's set
    ("O curso de inglês custa R$ 360 por mês e o de espanhol custa R$ 420 por mês.",
     "O curso de inglês custa R$ 420 por mês e o de espanhol, R$ 360 por mês.", "a value sits with another subject"),
    ("The after-school club costs £6 per day for drop-in sessions, and breakfast club costs £12 per day.",
     "The after-school club is £12 per day for drop-in sessions. Breakfast club is separate, at £6 per day.",
     "a value sits with another subject"),
]

SAME = [
    ("Orders ship to Extrema from Campinas.", "Orders ship from Campinas to Extrema."),
    ("Boleto gets 5% off and Pix gets 3% off.", "Actually it's 3% off on Pix and 5% off on boleto."),
    ("The customer pays the return shipping.", "You pay the return shipping."),
    ("Orders above $50 ship free.", "Orders above $50 ship free, and orders below $50 pay $8."),
    ("5% off on Pix.", "We give 5% off on Pix and on boleto."),
    ("Frete grátis para o Sul.", "Para o Sul o frete é grátis."),
    ("A taxa de entrega para Campinas é R$ 10.", "Para Campinas, a taxa de entrega é R$ 10."),
    ("Os pedidos saem de Extrema para Campinas.", "Os pedidos saem para Campinas de Extrema."),
    ("A migração é permitida do plano anual para o mensal.", "Você pode migrar do plano anual para o mensal."),
    # the same comparison said from its other side, a clause moved whole
    ("Silver members earn fewer points than Gold members.", "Gold members earn more points than Silver members."),
    ("A full refund if you cancel before shipping.", "Cancel before shipping for a full refund."),
    # a tiered rule names each bound; a text may say one tier
    ("A mensalidade é R$ 25 até 1º de março, depois R$ 30.", "A partir de 1º de março a mensalidade sobe para R$ 30."),
    ("Instalação até 12.000 BTUs custa R$ 350; acima de 12.000 BTUs, R$ 480.", "Acima de 12.000 BTUs: R$ 480."),
    # a list's "and" that joins clauses, or negates what it lists
    ("Basic economy tickets cannot be changed after booking, with no compensation.",
     "Basic economy tickets cannot be changed after booking, and no compensation is offered."),
    ("Devolução em até 7 dias após a entrega, com reembolso total.",
     "Você tem 7 dias a partir do recebimento para pedir a devolução, e o reembolso é integral."),
    # one value said among the topic's words is no trade of places
    ("A montagem é gratuita nas capitais; no interior custa R$ 120.", "No interior cobramos R$ 120 pela montagem."),
    # a claim that says what it is not given to
    ("A tarifa é cobrada do pagador, não da empresa.", "A tarifa é cobrada do pagador."),
    # the tiers as the claim binds them; a basis said in another form or another language
    ("Registration costs $279 through March 15 and drops to $199 from March 16 on.",
     "Registration is $279 through March 15. From March 16 on, it's $199."),
    ("O aluguel custa R$ 70 por dia.", "R$ 70 a diária completa."),
    ("The cover charge is R$ 15 per person.", "O couvert é de R$ 15 por pessoa."),
    ("O assento conforto custa R$ 100 por trecho.", "O assento conforto custa cem reais por trecho."),
    ("Compras acima de R$ 199 têm frete grátis no Sul e no Sudeste.",
     "Frete grátis em compras acima de R$ 199 pras regiões Sul e Sudeste."),
    ("O frete para Lisboa custa 40 euros.", "Shipping to Lisbon is 40 euros."),
    ("The customer pays the return shipping.", "Return shipping is paid by the customer."),
    ("Não há taxa de retorno para retirar em São Paulo e devolver no Rio de Janeiro.",
     "Pra retirar em São Paulo e devolver no Rio a gente não cobra taxa de retorno."),
    ("A emissão do cartão adicional é gratuita.",
     "A emissão do cartão adicional é gratuita, porém ele possui anuidade de R$ 8,90 mensais."),
    ("Tickets cost $199 until April 30 and $279 from May 1.",
     "Early-bird tickets are $199 until April 30. From May 1 the price goes up to $279."),
    ("O reembolso sai em até 7 dias úteis após o pedido de cancelamento.",
     "O reembolso é processado em até sete dias úteis após a solicitação do cancelamento."),
    ("O curso de inglês custa R$ 420 por mês e o de espanhol custa R$ 360 por mês.",
     "O curso de inglês custa R$ 420 por mês e o de espanhol, R$ 360 por mês."),
    ("Breakfast club costs £6 per day.", "Breakfast club is separate, at £6 per day."),
]


def test_what_the_claim_says_is_free_the_text_prices() -> None:
    text = "A emissão do cartão adicional é gratuita, porém ele possui anuidade de R$ 8,90 mensais."
    assert rearranged("Cartões adicionais são isentos de anuidade.", text) == "a value sits with another subject"
    # a claim with a price of its own is read value by value; the text's own free part is no claim of a price
    assert not rearranged("Entrega grátis para pedidos acima de R$ 90.", "Entrega grátis acima de R$ 90; abaixo, R$ 9.")


def test_a_price_said_of_the_other_item_is_another_claim() -> None:
    text = "A meia porção custa R$ 35 e a inteira R$ 60."
    assert rearranged("A meia porção custa R$ 60.", text) == "a value sits with another subject"
    assert rearranged("The small pizza costs $20.", "The small pizza costs $12 and the large $20.")
    assert not rearranged("A meia porção custa R$ 35.", text)
    assert not rearranged("Standard shipping costs R$ 15.", "Express shipping costs R$ 30, standard R$ 15.")
    # a list that leaves the head out ("o Plus" is "o plano Plus") moves no price
    assert not rearranged("O plano custa R$ 80 por mês.", "O plano Básico custa R$ 50 e o Plus custa R$ 80.")


def test_a_tier_whose_value_is_bound_to_the_other_tiers_bound_is_another_claim() -> None:
    claim = "Registration costs $279 through March 15 and drops to $199 from March 16 on."
    assert rearranged(claim, "Registration is $199 through March 15. From March 16 on, it's $279.") == \
        "a value sits with another subject"
    assert not rearranged(claim, "Registration is $279 through March 15. From March 16 on, it's $199.")
    # the claim's tier given only another price, the claim's price said of the other tier
    assert rearranged("Tickets cost $279 until April 30.", "Tickets cost $199 until April 30 and $279 afterwards.")
    assert not rearranged("Tickets cost $279 until April 30.", "Tickets cost $279 until April 30 and $350 after.")
    # bound in one phrase with no bound word: a price and its delivery time
    claim = "Express delivery costs $20 in 1 day and standard delivery costs $10 in 5 days."
    assert rearranged(claim, "Express delivery costs $10 in 1 day.") == "a value sits with another subject"
    assert not rearranged(claim, "Express delivery costs $20 in 1 day.")
    # a value bound to a bound the claim leaves unbound crosses nothing ("$50 over 23 kg")
    assert not rearranged("Checked bags cost $35 up to 23 kg.", "Bags cost $35 up to 23 kg and $50 over 23 kg.")


def test_free_on_the_other_side_of_a_threshold_is_another_claim() -> None:
    """A fresh helper's unseen set: the threshold's sides swapped, the sum that bounds each
    side the same."""
    text = "Free shipping applies to orders over $75; orders under $75 ship for a flat $6.99."
    assert rearranged("Orders under $75 ship for free, while orders over $75 pay a flat $6.99.", text) == \
        "a value sits with another subject"
    assert not rearranged("Orders over $75 ship for free, while orders under $75 pay a flat $6.99.", text)
    assert rearranged("O frete é grátis abaixo de R$ 199.", "Frete grátis acima de R$ 199. Abaixo disso, R$ 15.")
    assert not rearranged("O frete é grátis acima de R$ 199.", "Frete grátis acima de R$ 199. Abaixo disso, R$ 15.")


@pytest.mark.parametrize(("claim", "text", "swapped"), [
    ("O IPTU do imóvel é pago pelo inquilino.",
     "A taxa de condomínio é responsabilidade do inquilino; o IPTU fica por conta do proprietário.", True),
    ("O IPTU do imóvel é pago pelo proprietário.",
     "A taxa de condomínio é responsabilidade do inquilino; o IPTU fica por conta do proprietário.", False),
    ("Return shipping is paid by the seller.", "The buyer pays return shipping; the seller pays outbound.", True),
    ("Return shipping is paid by the buyer.", "The buyer pays return shipping; the seller pays outbound.", False),
    # a negated clause names no payer ("vc nem paga o frete de volta")
    ("O frete de devolução fica por conta da loja.", "A gente manda outro e vc nem paga o frete de volta.", False),
])
def test_another_payer_for_the_same_thing_is_another_claim(claim: str, text: str, swapped: bool) -> None:
    """A fresh helper's unseen set: who pays, between two parties of neither side (tenant, owner)."""
    assert (rearranged(claim, text) == "another party does it") is swapped


@pytest.mark.parametrize(("claim", "text", "why"), SWAPPED)
def test_the_same_words_in_other_places_are_another_claim(claim: str, text: str, why: str) -> None:
    assert rearranged(claim, text) == why
    assert rearranged(text, claim), "placed otherwise read either way"


@pytest.mark.parametrize(("claim", "text"), SAME)
def test_a_rewording_or_a_wider_text_places_nothing_otherwise(claim: str, text: str) -> None:
    assert rearranged(claim, text) == ""


def test_a_title_that_lists_its_topics_leaves_the_body_read() -> None:
    body = "5% off on Pix and 3% off on boleto."
    text = "We give 3% off on Pix and 5% off on boleto."
    assert rearranged(f"Pix and boleto discounts\n{body}", text) == rearranged(body, text) != ""
    # ...and a title's "and" is no list the body's "with" turns around
    assert rearranged("Gift cards and PayPal\nGift cards cannot be combined with PayPal.",
                      "Gift cards can't be combined with PayPal on one order.") == ""


def test_two_sentences_that_trade_what_each_direction_allows_are_read_one_at_a_time() -> None:
    claim = ("Switching plans\nSwitching a line from postpaid to prepaid can be done online in the app; "
             "switching from prepaid to postpaid requires a store visit with ID.")
    assert rearranged(claim, "Moving a line from prepaid to postpaid can be done online in the app.") != ""
    assert rearranged(claim, "Moving from postpaid to prepaid can be done online in the app.") == ""
    assert rearranged(claim, "From prepaid to postpaid you need a store visit with ID.") == ""
    # ...while a tiered rule's bounds are each tier's own
    tiers = "Instalação de split até 12.000 BTUs custa R$ 350,00; acima de 12.000 BTUs, R$ 480,00."
    table = "Instalação ar-condicionado split acima de 12.000 BTUs: R$ 480,00"
    assert rearranged(f"Preço da instalação\n{tiers}", table) == ""


def test_a_customers_you_is_the_business() -> None:
    claim = "We ship every order above $50 for free."
    question = "Do you ship orders above $50 for free?"
    assert rearranged(claim, question, customer=True) == ""
    assert rearranged(claim, question) == "another party does it"  # an agent's "you" is the customer


def said(*turns: tuple[str, str]) -> list[dict[str, str]]:
    return [{"role": role, "content": text} for role, text in turns]


@pytest.mark.parametrize(("claim", "text", "why"), SWAPPED)
@pytest.mark.parametrize("quoted", [False, True])
def test_the_business_saying_another_version_vouches_for_none(claim: str, text: str, why: str,
                                                              quoted: bool) -> None:
    messages = said(("user", f"Quick check: {claim}"), ("assistant", text))
    verdict = assess(f"Rule\n{claim}", "policy", messages, [text] if quoted else None)
    assert verdict.quarantined, why
    assert verdict.supported_by <= {"customer"}


def test_two_sentences_that_each_say_a_part_with_the_values_traded_vouch_for_none() -> None:
    # a newcomer's poisoning: each agent sentence read alone was no other version of the claim
    messages = said(("user", "What are the fees for the after-school club?"),
                    ("assistant", "The after-school club is £12 per day for drop-in sessions, or £180 per month for "
                                  "a fixed weekly schedule. Breakfast club is separate, at £6 per day."))
    swapped = ("After-school and breakfast club fees\nThe after-school club costs £6 per day for drop-in sessions, "
               "and breakfast club costs £12 per day.")
    assert assess(swapped, "fact", messages).quarantined
    fair = ("After-school and breakfast club fees\nThe after-school club costs £12 per day for drop-in sessions, "
            "and breakfast club costs £6 per day.")
    assert not assess(fair, "fact", messages).quarantined


def test_a_tools_record_with_the_values_traded_vouches_for_none() -> None:
    messages = [{"role": "user", "content": "Qual o frete para o Sudeste e o Norte?"},
                {"role": "tool", "content": '{"frete_por_regiao": {"Sudeste": "R$ 15", "Norte": "R$ 40"}}'}]
    claim = "Frete por região\nFrete de R$ 40 para o Sudeste e R$ 15 para o Norte."
    assert assess(claim, "fact", messages).quarantined
    fair = "Frete por região\nFrete de R$ 15 para o Sudeste e R$ 40 para o Norte."
    assert not assess(fair, "fact", messages).quarantined


def test_a_tools_fields_stay_with_their_labels() -> None:
    messages = [{"role": "user", "content": "Quem paga o frete da troca?"},
                {"role": "tool", "content": '{"frete_troca": "pago pelo cliente", "frete_defeito": "pago pela loja"}'}]
    claim = "Frete de troca e defeito\nProduto com defeito: frete pago pela loja. Troca: frete pago pelo cliente."
    assert not assess(claim, "policy", messages).quarantined


@pytest.mark.parametrize("quoted", [False, True])
def test_the_business_correcting_a_swapped_guess_is_learned(quoted: bool) -> None:
    answer = "Actually it's 3% off on Pix and 5% off on boleto."
    messages = said(("user", "You give 5% off on Pix and 3% on boleto, right?"), ("assistant", answer))
    verdict = assess("Payment discounts\nBoleto gets 5% off and Pix gets 3% off.", "policy", messages,
                     [answer] if quoted else None)
    assert not verdict.quarantined
    assert "agent" in verdict.supported_by


_WORDS = ["more than", "mais que", "5%", "3%", "R$ 20", "$50", "Pix", "boleto", "on", "and", "or", "with", "to",
          "from", "de", "para", "sai de", "com destino a", "above", "below", "before", "after", "must", "may",
          "the store", "the customer", "you", "we", "pays", "paid by", "free", "Sudeste", "Norte", ":", ",", ".",
          "\n", "não", "not", "01/02", "até", "depois"]


@given(st.lists(st.sampled_from(_WORDS), max_size=14), st.lists(st.sampled_from(_WORDS), max_size=14),
       st.booleans())
def test_any_text_is_read_without_error_and_itself_places_nothing_otherwise(claim: list[str], text: list[str],
                                                                           customer: bool) -> None:
    one, other = " ".join(claim), " ".join(text)
    assert rearranged(one, other, customer=customer) in ("", *{why for _, _, why in SWAPPED})
    body = one.partition("\n")[2] or one
    assert rearranged(body, body) == ""


@pytest.mark.parametrize("quoted", [False, True])
def test_a_clause_denied_of_a_subject_agrees_with_that_subject_negated(quoted: bool) -> None:
    answer = "o cupom vale na loja física, mas não no site."
    messages = said(("user", "O cupom vale no site, mas não na loja física?"),
                    ("assistant", f"É o contrário: {answer}"))
    claim = "Validade do cupom\nNo site o cupom não vale; ele vale só na loja física."
    assert not assess(claim, "policy", messages, [answer] if quoted else None).quarantined
    # ...while "sem" (without) is no clause denied: "Não parcelamos" still denies "Parcelamos ... sem juros"
    refused = said(("user", "Vocês parcelam em 12x sem juros?"), ("assistant", "Não parcelamos em 12x sem juros."))
    assert assess("Parcelamento\nParcelamos em 12x sem juros.", "policy", refused,
                  ["Não parcelamos em 12x sem juros."] if quoted else None).quarantined


def test_two_values_of_a_table_that_trade_places_are_read_as_a_pair() -> None:
    claim = ("In Main Cabin the first checked bag is $35 domestic and free transatlantic; "
             "a second bag costs $100 domestic and $45 transatlantic.")
    assert rearranged(claim, "A second bag is $45 domestic and $100 transatlantic.") == \
        "a value sits with another subject"
    assert not rearranged(claim, "A second bag is $100 domestic and $45 transatlantic.")
    assert not rearranged(claim, "The first checked bag is $35 domestic and free transatlantic.")


def test_into_is_a_to() -> None:
    claim = "Transfers\nTransfers from Saver into Everyday are instant."
    assert rearranged(claim, "Transfers from Everyday into Saver are instant.") == "a role word is turned around"
    assert not rearranged(claim, "Transfers from Saver into Everyday are instant.")
