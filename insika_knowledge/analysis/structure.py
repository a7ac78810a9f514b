"""Statements read as ordered structures: who does what, to whom, with which value.

A bag of words cannot tell "5% on Pix, 3% on boleto" from "3% on Pix, 5% on boleto",
"shipped to Campinas from Extrema" from "to Extrema from Campinas", or "for members
**and** orders above R$ 99" from "for members **on** orders above R$ 99" ("to", "from",
"and", "on" are stop words for retrieval). This module reads a text into a sequence of
typed tokens, in order, by the one analyser:

- ``m:`` a **measure** (`analysis.numbers.measures`): value and unit, money normalised
  (``R$ 1.299,00`` is ``R$ 1299``, ``cem reais`` is ``R$ 100``), a range one token
  (``5 to 7 business days``, ``1-2 dias``);
- ``d:`` a **date**, read as a date: ``02/01`` is the 2nd of January (day first, as the
  stores this is for write it), ``1 de fevereiro``, ``February 1st``, ``2026-02-01``;
  a weekday is one too (``d:wd5`` for Friday, ``sexta-feira``);
- ``r:`` a **role** word that opens a phrase (to, from, for, on, per, within, para, de,
  em, por, above, until...), ``c:`` a **clause** word (and, or, but, if, unless, e, ou,
  mas, se), ``p:`` a **pole** (`analysis.statements.POLES`: only, all, can/must...),
  ``n`` a **negation** (not, never, no, cannot, nao, nunca, no longer), ``x`` a
  **withdrawal** (a change verb or phrase: discontinued, removed, deixou de, foi
  retirado), ``w:`` a **party** pronoun (we, you, they, nosso, voce);
- a **content term**: folded, contractions expanded (``can't`` is ``can not``), stemmed,
  read through `CLAIM_SYNONYMS` (a strict list of true synonyms, smaller than retrieval's
  groups: "shipped" is not "delivered" here).

Punctuation splits sentences (``. ! ? ;`` and line ends) and phrases (``, :``).

`structure` gives the canonical form of a text: two texts have equal forms only when they
say the same thing in the same structure. The only reorderings it forgives are the ones
that never change what is said: sentences in another order; a leading phrase moved to
the end of a one-clause sentence ("Per passenger, insurance costs 30 dollars" and
"Insurance costs 30 dollars per passenger"); adjacent phrases with distinct role words
swapped ("to Campinas from Extrema" and "from Extrema to Campinas"); the comma-separated
parts of a one-clause sentence in another order (each part keeps its own values). It reads
the passive of one of the business's own operations whose subject names no party as the
business doing it ("orders above $50 are shipped free" as "we ship orders above $50
free", `BUSINESS_PASSIVES`); such a passive that names its agent keeps that phrase ("by
the carrier"), so it restates no sentence where the business does it. Any other passive
that names its agent reads as that agent doing it ("the CEPs are served by the Campinas
DC" as "the Campinas DC serves the CEPs"; an agent that opens with a value, "by 6 pm", is
a deadline and is left as it stands).

`details` gives what a merge must keep of a text (the merge guard): every measure, date,
name (places, brands, regions), party, negation with the term it negates, role word with
what it introduces, and each measure with the names and role objects around it.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from functools import lru_cache, partial
from typing import Final

from insika_knowledge.analysis.numbers import CURRENCIES, Measure, measures, parse_decimal, read_number_words
from insika_knowledge.analysis.statements import POLES
from insika_knowledge.analysis.synonyms import SYNONYMS
from insika_knowledge.analysis.text import (
    CHANGE_PHRASES,
    CHANGE_VERBS,
    NEGATIONS,
    STOP_WORDS,
    as_seen,
    fold,
    negation_count,
    stem,
    stem_portuguese,
    text_language,
    words,
)

# ----------------------------------------------------------------------------- vocabulary

#: Role words that open a phrase, folded, -> their role. Portuguese contractions of a
#: preposition and an article read as the preposition (``do`` is ``de``, ``na`` is ``em``).
ROLES: Final[dict[str, str]] = {
    **{w: w for w in ("to", "from", "for", "on", "in", "at", "by", "with", "within", "into", "onto",
                      "via", "through", "of", "between", "during", "towards", "toward", "without")},
    **dict.fromkeys(("para", "pra", "pras", "pro", "pros"), "para"),
    **dict.fromkeys(("de", "do", "da", "dos", "das", "dum", "duma"), "de"),
    **dict.fromkeys(("em", "na", "nas", "nos", "num", "numa"), "em"),
    **dict.fromkeys(("por", "pelo", "pela", "pelos", "pelas"), "por"),
    **dict.fromkeys(("ao", "aos"), "a"),
    "com": "com", "sem": "without", "entre": "between", "durante": "during", "desde": "since",
    "since": "since", "as": "as", "como": "as", "contra": "against", "against": "against",
    "sobre": "about", "about": "about",
}
#: Clause words, folded -> their kind: a clause starts at each (and is never moved).
CLAUSES: Final[dict[str, str]] = {
    **dict.fromkeys(("and", "e"), "and"), **dict.fromkeys(("or", "ou"), "or"),
    **dict.fromkeys(("but", "mas", "porem", "contudo", "however", "yet"), "but"),
    "nor": "nor", **dict.fromkeys(("if", "se", "caso", "provided", "desde que"), "if"),
    **dict.fromkeys(("unless",), "unless"),
    **dict.fromkeys(("when", "whenever", "quando", "sempre que"), "when"),
    **dict.fromkeys(("while", "whereas", "enquanto"), "while"), **dict.fromkeys(("then", "entao"), "then"),
}
#: Poles that open a phrase like a role word ("above R$ 199", "per passenger", "until 2 pm").
PHRASE_POLES: Final = frozenset(
    "p_above p_below p_at_least p_at_most p_before p_after p_per p_except p_in_total".split()
)
#: Pronouns naming a party, folded -> the party (the business, the customer, the writer;
#: "they", "it" and "ele" point back at a noun and are read as stop words).
PARTIES: Final[dict[str, str]] = {
    **dict.fromkeys("we us our ours ourselves nosso nossa nossos nossas".split(), "we"),
    **dict.fromkeys("you your yours yourself yourselves voce voces vc seu sua seus suas teu tua".split(),
                    "you"),
    **dict.fromkeys("i me my mine myself eu meu minha meus minhas".split(), "i"),
}
#: Nouns that name a party to a rule: a merge keeps each, and what it does.
PARTY_NOUNS: Final = frozenset(
    "customer customers client clients buyer buyers store stores shop seller sellers merchant "
    "carrier carriers courier company passenger passengers guest guests member members "
    "cliente clientes consumidor consumidores comprador compradores loja lojas vendedor vendedores "
    "lojista transportadora transportadoras empresa passageiro passageiros hospede hospedes membro "
    "membros associado associados "
    # people a rule pays, charges or serves ("drivers are paid", "students are refunded")
    "driver drivers rider riders student students employee employees resident residents patient patients "
    "tenant tenants subscriber subscribers motorista motoristas aluno alunos funcionario funcionarios "
    "morador moradores paciente pacientes inquilino inquilinos assinante assinantes".split()
)
#: Words that are names wherever they are written (regions, payment methods): a merge keeps them.
_PORTUGUESE_NAMES: Final = frozenset("pix boleto norte nordeste sul sudeste centro-oeste".split())
_ENGLISH_NAMES: Final = frozenset("north south east west northeast southeast northwest southwest midwest".split())
KNOWN_NAMES: Final = _PORTUGUESE_NAMES | _ENGLISH_NAMES

#: Each known name's one token, whatever the language its text reads as (Portuguese names
#: by the Portuguese stemmer, English ones by the English).
_KNOWN_NAME_TOKENS: Final = {n: stem(n) if n in _ENGLISH_NAMES else stem_portuguese(n) for n in KNOWN_NAMES}

#: Words that state a value ("free" is a price of nothing): a merge keeps them like numbers.
VALUE_WORDS: Final = frozenset({"s_free"})
#: How a token names a day of the week ("d:wd7": Sunday); any other ``d:`` token is a calendar date.
WEEKDAY_PREFIX: Final = "d:wd"


def is_calendar_date(token: str) -> bool:
    """True when `token` is a calendar date (``d:11-30``), not a day of the week."""
    return token.startswith("d:") and not token.startswith(WEEKDAY_PREFIX)

#: Capitalised abbreviations that are common nouns, not names (folded).
COMMON_ACRONYMS: Final = frozenset(
    "cep ceps cpf cnpj rg sac cd dc sku faq pdf app url id ok sms vip pix nf nfe".split())

#: The strict synonym list of the same-claim rule: folded words in one group read alike.
#: Only words that mean the same in every rule of a store are listed (retrieval's groups,
#: `analysis.synonyms`, are looser on purpose: "shipped" and "delivered" find each other
#: there, but they are two claims here).
CLAIM_SYNONYMS: Final[dict[str, str]] = {
    word: f"s_{group}" for group, words in {
        "refund": "refund refunds refunded refunding reimburse reimbursed reimbursement reimbursements "
                  "reembolso reembolsos reembolsar reembolsado reembolsada reembolsados reembolsadas "
                  "estorno estornos estornar estornado estornada",
        "bag": "bag bags baggage luggage bagagem bagagens",  # not "suitcase", "mala": one kind of bag
        "modify": "modify modified modifies modifying modification modifications change changed "
                  "changes changing alter altered alters amend amended alterar alterado alterada "
                  "alterados alteradas alteracao alteracoes modificar modificado modificada "
                  "modificados modificadas modificacao mudar mudado mudada mudanca mudancas",
        "cancel": "cancel cancels cancelled canceled cancelling canceling cancellation cancellations "
                  "cancelation cancelar cancelado cancelada cancelados canceladas cancelamento "
                  "cancelamentos",
        "exchange": "exchange exchanges exchanged exchanging swap swaps swapped troca trocas trocar "
                    "trocado trocada trocados trocadas",
        "price": "price prices cost costs fee fees charge charges bill bills billed preco precos custo custos custa "
                 "custam taxa taxas",  # not "tarifa": a fare, not a fee
        "free": "free gratis gratuito gratuita gratuitos gratuitas complimentary",
        "customer": "customer customers client clients cliente clientes consumidor consumidores shopper shoppers",
        "store": "store stores shop shops loja lojas",
        "food": "food foods comida comidas alimento alimentos",
        "order": "order orders purchase purchases pedido pedidos compra compras",
        "product": "product products item items produto produtos",
        "return": "return returns returned returning devolucao devolucoes devolver devolvido "
                  "devolvida devolvidos devolvidas",
        "warranty": "warranty warranties guarantee guarantees garantia garantias",
        "discount": "discount discounts desconto descontos abatimento",
        "coupon": "coupon coupons cupom cupons",
        "child": "child children kid kids crianca criancas",
        "medicine": "medicine medicines medication medications medicamento medicamentos remedio remedios",
        "installment": "installment installments parcela parcelas",
        "install": "install installs installed installing installation installations instalacao instalacoes "
                   "instalar instalado instalada instalados instaladas instalamos",
        "payment": "pay pays paid paying payment payments pagar paga pagam pago pagos pagamento "
                   "pagamentos",
        "allow": "allow allows allowed permit permits permitted permitido permitida permitidos "
                 "permitidas permite permitem",
        "email": "email emails",  # not "mail": the post
        "app": "app apps aplicativo aplicativos",
        "deliver": "deliver delivers delivered delivery deliveries entrega entregas entregar "
                   "entregue entregues entregamos",
        "start": "start starts started starting begin begins began begun beginning",
        "passenger": "passenger passengers traveler travelers traveller travellers passageiro passageiros "
                     "viajante viajantes",
        # an order placed: "pedidos feitos até as 14h" / "compras realizadas até as 14h"
        "placed": "placed feito feitos feita feitas realizado realizados realizada realizadas",
        # an expiry or a due date, one verb in Portuguese: "vence em 12 meses", "expira", "validade
        # de 12 meses", "a mensalidade vence todo dia 10" (its "vencimento")
        "expire": "expire expires expired expiring expiry expiration expira expiram expirar expirado expirada "
                  "vence vencem vencer vencido vencida validade vencimento vencimentos",
        "ship": "ship ships shipped shipping shipment shipments dispatch dispatched envio envios enviar enviado "
                "enviada "
                "enviados enviadas enviamos despacho despachar despachado despachada frete fretes",
    }.items() for word in words.split()
}


def _stem_synonyms() -> dict[str, str]:
    """The stems of `CLAIM_SYNONYMS`' words (4 letters or more; a stem two groups share is
    left out) -> their group: an inflection the list does not spell ("trocamos",
    "entregam") reads as the group.
    """
    found: dict[str, set[str]] = {}
    for word, group in CLAIM_SYNONYMS.items():
        for stemmed in {stem_portuguese(word), stem(word)}:
            if len(stemmed) >= 4 and stemmed not in CLAIM_SYNONYMS:
                found.setdefault(stemmed, set()).add(group)
    return {stemmed: next(iter(groups)) for stemmed, groups in found.items()
            if len(groups) == 1 and stemmed not in _SHARED_STEMS}


#: Stems that words outside a group share with it ("customs", "customization" and
#: "customer" all stem to "custom"; "installation", "install" and "instalar" stem as
#: "installment" does: "instal"; "travel" is no "traveler", "take place" no "placed").
_SHARED_STEMS: Final = frozenset({"custom", "instal", "travel", "plac"})


#: Stems of the strict synonyms -> their group (`_stem_synonyms`).
STEM_SYNONYMS: Final = _stem_synonyms()
#: What makes "não paga a taxa" no exemption: paid in part ("não paga a taxa inteira, só
#: metade"), later in the clause (folded text).
_NOT_IN_FULL: Final = r"(?![^.,;!?]*\b(?:inteir[oa]s?|integral|integralmente|cheia|complet[oa]|metade|parte)\b)"
#: Phrases read as one word before anything else (folded text).
_PHRASES: Final[tuple[tuple[re.Pattern[str], str], ...]] = tuple(
    (re.compile(pattern), word) for pattern, word in (
        (r"\bfree of (?:charge|cost)\b|\bat no (?:extra |additional )?(?:cost|charge)\b|\bno charge\b",
         "free"),
        (r"\bsem (?:nenhum(?:a)? )?(?:custo|cobranca)(?: adicional| extra| algum| alguma| nenhum| nenhuma)?\b"
         r"|\bde graca\b|\bnao custa nada\b"
         r"|\bnao (?:tem|ha) (?:nenhum )?custo(?: nenhum| algum| adicional| extra)?\b", "gratis"),
        # exempt of a fee is free ("isenta de taxa", "Taxa: isenta"); "isento de glúten" is not
        (r"\bisent[oa]s? d[eao]s? (?:taxas?|tarifas?|cobrancas?|custos?|pagamentos?)\b"
         r"|\b(?:taxas?|tarifas?|custos?|cobrancas?)\s*:\s*isent[oa]s?\b", "gratis"),
        # exempt of a named charge is that charge free ("isentos de anuidade": "gratis de anuidade")
        (r"\bisent[oa]s? (?=d[eao]s? (?:anuidades?|mensalidades?|matriculas?|fretes?|juros|multas?)\b)", "gratis "),
        (r"\b((?:taxas?|tarifas?|custos?|cobrancas?)(?:\s+[a-z]+){0,3}?\s+(?:ser|sao|fica|ficam|esta|estao)\s+)"
         r"isent[oa]s?\b",
         r"\1gratis"),  # "a taxa de matrícula é isenta"
        (r"\b(?:does|do|will) not cost (?:you )?anything\b", "is free"),
        # paying nothing is free: "você marca sem pagar nada", "não paga nada", "you pay nothing"
        (r"\bsem pagar nada\b|\bnao (?:se )?(?:paga|pagam|pagamos|cobra|cobram|cobramos) nada\b|\bgratuitamente\b",
         "gratis"),
        (r"\bwithout paying anything\b|\bpay nothing\b|\b(?:do|does|will) not (?:have to )?pay anything\b", "free"),
        # not paying the fee is being exempt from it ("não paga a taxa de rematrícula", as
        # "isento da taxa de rematrícula" reads above)
        # (not who does not pay, "quem não paga a taxa não embarca", nor not paying it in full)
        (r"(?<!\bquem )(?<!\bse )(?<!\bcaso )\bnao (?:paga|pagam|pagamos|pagara|pagarao|vai pagar|vao pagar"
         r"|precisa pagar|precisam pagar) (?:a |o |as |os )?(?:taxas?|tarifas?|multas?)\b" + _NOT_IN_FULL, "gratis"),
        # ... and not paying the shipping is free shipping ("compras acima de R$ 199 não pagam frete")
        # ("você não paga o frete" is read as the customer's free shipping already: `_free_for_active`)
        (r"(?<!\bquem )(?<!\bse )(?<!\bcaso )(?<!\bvoce )(?<!\bvc )\bnao (?:paga|pagam|pagamos|pagara|pagarao"
         r"|vai pagar|vao pagar|precisa pagar|precisam pagar) (?:o )?frete\b" + _NOT_IN_FULL, "tem frete gratis"),
        (r"\b(?:do|does|will) not (?:have to )?pay (?:for )?(?:the )?shipping\b|\bpay no shipping\b",
         "get free shipping"),
        # the first day of each month is its 1st ("resets on the 1st of every month")
        (r"\b(?:the )?first day of (each|every|the) month\b", r"the 1st of \1 month"),
        (r"\bprimeiro dia (de cada|do) mes\b", r"dia 1 \1 mes"),
        (r"\b(?:e|ser|fica|sai)\s+por\s+nossa\s+conta\b", "gratis"), (r"\b(?:is|are) on (?:us|the house)\b", "is free"),
        (r"\bmoney back\b", "refund"),
        (r"\bcarry[- ]?ons?\b(?: bags?)?|\bcabin bags?\b", "cabin bag"),  # one bag, two names
        # a condition's verb in either subjunctive ("se o produto esteja / estiver com defeito")
        (r"\b(?:esteja|estejam|estiver|estiverem|estivesse|estivessem)\b", "estar"),
        (r"\b(?:em|o) dobro\b", "duas"),  # "pizza em dobro", "ganha o dobro": twice, a count of 2
        # (not "2 vezes": "em 2 vezes" is two instalments)
        # no X that does not Y is every X Ys ("there is no repair we do that does not come
        # with a warranty", "não tem nenhum conserto que não tenha garantia")
        (r"\bthere (?:is|are) no ((?:[a-z]+ ){1,4}?)(?:that|which|who) (?:does|do|will|would|can) not\b", r"every \1"),
        (r"\bnao (?:tem|ha|existe) nenhum(?:a)? ((?:[a-z]+ ){1,4}?)que nao\b", r"todo \1"),
        # a price said as where it comes out: "sai por R$ 35", "tá saindo por R$ 1.299", "fica por US$ 20"
        (r"\b(?:sai|saem|saindo|sair|fica|ficam|ficando)\s+(?:por|a)\s+(?=(?:r\$|us\$|\$|€)\s?\d)", "custa "),
        # seen without an appointment: "sem agendamento", "without an appointment", "walk-ins"
        (r"\bsem (?:(?:a )?necessidade de |precisar (?:de )?)?(?:agendamento|agendar|hora marcada|marcar horario)\b"
         r"|\bwithout (?:the need for |needing |having )?(?:an? |to make an? )?(?:appointment|booking|reservation)\b"
         r"|\bwalk[- ]ins?\b", "walkin"),
        # "12 horas de antecedência da consulta" is "12 horas antes da consulta"
        (r"\bde antecedencia (?=d[aeo]s? )", "antes "),
        (r"(?<=[\d%])\s*off\b", " discount"),  # "15% off", "$10 off"
        (r"\binterest[- ]free\b", "without interest"),  # "10x interest-free", as "sem juros" reads
        (r"\bno longer\b|\bnot anymore\b|\bnot any longer\b", "not"),
        # "prohibited" / "proibido" say "not allowed" / "não permitido" (a negation said as a word)
        (r"\b(?:prohibited|forbidden)\b", "not allowed"),
        (r"\bproibid(?=[oa]s?\b)", "nao permitid"),  # not "vedado": also "sealed"
        # "desde que" is "provided that", but "since" before a past ("desde que a loja mudou")
        (r"\bdesde que\b(?!(?:\s+[a-z]+){0,4}?\s+(?:[a-z]{2,}(?:ou|eu|iu|aram|eram|iram)|foi|foram|fomos)\b)",
         "desde_que"),
        (r"\bsempre que\b", "sempre_que"),
        # "as soon as it is ready", "assim que ficar pronto": when it is (not "as soon as possible")
        (r"\bas soon as\b(?! (?:possible|we can|i can)\b)|\b(?:assim|logo) que\b(?! (?:possivel|der)\b)", "sempre_que"),
        (r"\bas long as\b|\bcontanto que\b", "provided"),  # a condition: "no fee as long as you..." is "if"
        # a price of the whole: "$480 for the whole boat", "R$ 480 o barco inteiro" (not per head)
        (r"(?<=\d) for the (?:whole|entire) ([a-z]+)\b", r" in total for the \1"),
        (r"(?<=\d) (?:(?:pel)?[oa]s? )?([a-z]+) (?:inteiro|inteira)s?\b", r" no total \1"),
        # a condition said otherwise: "In the event that a guest loses ...", "Should your package arrive
        # damaged, ..." (a sentence that opens with "should" asks or sets a condition; never a rule's "must")
        (r"\bin the event (?:that|of)\b", "if"), (r"(?:^|(?<=[.!;]\s))should\b(?=[^?]*(?:,|$))(?![^?]*\?)", "if"),
        # a Portuguese object pronoun on its verb: "bloqueá-lo pelo app" is "bloquear pelo app"
        (r"(?<=[a-z])-(?:lo|la|los|las)\b", ""),
        # and its impersonal "se" ("cobra-se uma taxa", "aceita-se cartão"), which is no "if"
        (r"(?<=[a-z]{2})-se\b", ""),
        # "não importa quanto tempo", "no matter how long": no negation, "regardless of how long"
        (r"\bnao importa\b|\btanto faz\b", "independentemente de"), (r"\bno matter\b", "regardless of"),
        (r"\bahead of time\b|\bbeforehand\b", "in advance"),  # "24 hours ahead of time" is "in advance"
        # "unless" (not "salvo se": also "saved if")
        (r"\ba menos que\b|\bexceto se\b|\ba nao ser que\b", "a_menos_que"),
        (r"\b(?:no|not) later than\b", "by"),  # "by Friday"
        # "is going to charge" is "will charge"
        (r"\b(?:is|are|am) going to\b(?= [a-z])", "will"),
        # an announcement's frame says nothing of the rule: "We would like to inform all guests that
        # the pool closes at 9 p.m.", "Informamos que ..."
        (r"^\W*(?:we would like to|we'd like to|we wish to|we want to) (?:inform|remind|let)\b[^.;:!?]{0,40}?"
         r" (?:that|know that)\b|^\W*(?:gostariamos de |queremos )?(?:informa(?:mos|r)|lembra(?:mos|r))"
         r"(?: a[o]?s? [^.;:!?]{0,30}?)? que\b", ""),
        # "absolutamente todos os quartos, sem exceção, têm": all of them; "taxa alguma" after a
        # negation is "nenhuma taxa"
        (r"\b(?:absolutamente|absolutely)\b(?= (?:todos|todas|all|every)\b)|,? (?:sem (?:nenhuma )?excecao"
         r"|without (?:any )?exception)\b,?", ""),
        (r"(?<=\bnao )(\w+ )(\w+) (?:algum|alguma)\b", r"\1nenhum \2"),
        # "covers not only lounge access but also insurance" is "covers lounge access and insurance"
        (r"\bnot only\b(?=[^.;!?]{1,80}\bbut (?:also|as well)\b)|\bnao (?:so|apenas|somente)\b"
         r"(?=[^.;!?]{1,80}\b(?:mas|como) tambem\b)", ""),
        (r",? but (?:also|as well)\b", " and"), (r",? (?:mas|como) tambem\b", " e"),  # (additive, as "and")
        # "os produtos que foram comprados na liquidação" are "os produtos comprados na liquidação",
        # "customers who are enrolled in the program" "customers enrolled in the program"
        (r"\bque (?:foram|foi|sao|estao|esta) (?=\w+(?:ad|id)[oa]s?\b)"
         r"|(?<=[a-z] )(?:(?:that|which) (?:were|was)|who (?:are|is)) "
         r"(?=\w+ed\b|bought\b|sold\b|made\b|paid\b|sent\b|given\b|taken\b)", ""),
        # "one adult for every 10 children" is "per 10 children", "para cada 10 crianças" "a cada"
        # (after a price `_FOR_EACH` reads it, once number words are read: "R$ 15 para cada peça" is "por peça")
        (r"(?<![\d%] )(?<!reais )(?<!dollars )(?<!dollar )(?<!euros )\bfor (?:each|every)\b", "per"),
        (r"(?<![\d%] )(?<!reais )(?<!dollars )(?<!dollar )(?<!euros )\bpara cada\b", "a cada"),
        # ", which is deducted" after a clause says "and is deducted" (a clause added, not a restriction)
        (r", which (?=(?:is|are|was|were|will|can|must)\b)", " and "),
        # "on Saturdays and Sundays" is "on weekends" (one time, not two clauses)
        (r"\b(?:saturdays? and sundays?|sundays? and saturdays?)\b", "weekends"),
        (r"\b(?:sabados? e domingos?|domingos? e sabados?|fins? de semana)\b", "weekend"),
        (r"\be-?mail\b", "email"),
        # where something goes: "com destino a Guarulhos" (where it leaves from, "sai de
        # Confins", is `analysis.arrangement`'s to read: "saem para Campinas de Extrema")
        (r"\bcom destino (?:a|ao|aos|as|para|pra)\b", "para"),
    )
)
_CONTRACTIONS: Final[tuple[tuple[re.Pattern[str], str], ...]] = tuple(
    (re.compile(pattern), replacement) for pattern, replacement in (
        (r"\bcan(?:'|\u2019)?t\b|\bcannot\b", "can not"),
        (r"\bwon(?:'|\u2019)t\b", "will not"),
        (r"\bshan(?:'|\u2019)t\b", "shall not"),
        (r"\b([a-z]+)n(?:'|\u2019)t\b", r"\1 not"),
        (r"(?<=[a-z])(?:'|\u2019)ll\b", " will"),  # "we'll ship": a future, as "we will ship"
        (r"(?<=[a-z])(?:'|\u2019)d\b", " would"),  # "we'd ship" (would; "had" reads as a past alike)
        (r"\bused to\b", "usedto"),  # "we used to ship": a past
        (r"(?<=[a-z])(?:'|\u2019)ve\b", " have"),  # "we've offered": a present perfect (`_PERFECT`)
        (r"\b(there|here|it|that|what)(?:'|\u2019)s\b", r"\1 is"),  # "there's no fee": "there is no fee"
        (r"(?<=[a-z])(?:'|\u2019)re\b", " are"),  # "they're made in a kitchen": a passive, not a past
        (r"(?<=[a-z])(?:'|\u2019)(?:s|m)\b", ""),
        # "billed by the minute": per minute (a unit after "by the" names no agent)
        (r"\bby the (minute|hour|day|week|month|year|night|kilo|pound|item|unit|piece|page|mile|gallon)\b",
         r"per \1"),
    )
)
_ONE_WORD: Final = {"desde_que": "if", "sempre_que": "when", "a_menos_que": "unless"}

# ----------------------------------------------------------------------------- dates

#: The months' names, folded, English then Portuguese, January first in each.
MONTH_NAMES: Final = tuple(
    "january february march april may june july august september october november december "
    "janeiro fevereiro marco abril maio junho julho agosto setembro outubro novembro dezembro".split())
_MONTHS: Final[dict[str, int]] = {
    **{m: i % 12 + 1 for i, m in enumerate(MONTH_NAMES)},
    **{m: i for i, m in enumerate("jan feb mar apr may jun jul aug sep oct nov dec".split(), 1)},
    "sept": 9, "fev": 2, "abr": 4, "mai": 5, "ago": 8, "set": 9, "out": 10, "dez": 12,
}
#: Abbreviations that are also words: read as a month only in "D de MMM" (Portuguese).
_AMBIGUOUS_MONTHS: Final = frozenset({"mar", "may", "mai", "ago", "set", "out", "dez", "jun", "jul"})
_MONTH_ALT: Final = "|".join(sorted(_MONTHS, key=len, reverse=True))
_PLAIN_MONTH_ALT: Final = "|".join(sorted((m for m in _MONTHS if m not in _AMBIGUOUS_MONTHS
                                           or len(m) > 3), key=len, reverse=True))
_DATE_PATTERNS: Final = (
    # ISO 2026-02-01
    (re.compile(r"(?<![\d/.-])(?P<y>\d{4})-(?P<m>\d{1,2})-(?P<d>\d{1,2})(?![\d/-])"), "ymd"),
    # 01/02, 01/02/2026: day first, but month first in English (`_dates`)
    (re.compile(r"(?<![\d/.,-])(?P<d>\d{1,2})/(?P<m>\d{1,2})(?:/(?P<y>\d{4}|\d{2}))?(?![\d/])"), "slash"),
    # 1.2.2026, 01-02-2026 (day first)
    (re.compile(r"(?<![\d/.,-])(?P<d>\d{1,2})[.-](?P<m>\d{1,2})[.-](?P<y>\d{4})(?![\d.-])"), "dmy"),
    # 1 de fevereiro (de 2026), 1o de fev
    (re.compile(rf"(?<![\d])(?P<d>\d{{1,2}})(?:o|º|°)?\s+de\s+(?P<mn>{_MONTH_ALT})\b\.?"
                r"(?:\s+de\s+(?P<y>\d{4}))?"), "dmy"),
    # February 1st (, 2026); the number words' reading writes an ordinal "1st" as "1o"
    (re.compile(rf"\b(?P<mn>{_PLAIN_MONTH_ALT})\.?\s+(?P<d>\d{{1,2}})(?:st|nd|rd|th|o)?\b"
                r"(?:,?\s+(?P<y>\d{4}))?"), "mdy"),
    # May 1st, where "may" is no verb (`_MAY_DATE_BEFORE`)
    (re.compile(r"\b(?P<mn>may)\s+(?P<d>\d{1,2})(?:st|nd|rd|th|o)?\b(?:,?\s+(?P<y>\d{4}))?"), "mdy"),
    # 1st (of) February (2026)
    (re.compile(rf"(?<![\d])(?P<d>\d{{1,2}})(?:st|nd|rd|th|o)?\s+(?:of\s+)?(?P<mn>{_PLAIN_MONTH_ALT})\b"
                r"(?:,?\s+(?P<y>\d{4}))?"), "dmy"),
)


#: The words right before "may" that make "may D" a date ("from May 1", "until May 31",
#: "on May 5"; the start of a text or a clause too). Elsewhere "may" followed by a number
#: is read as the verb unless a year follows ("May 5, 2024").
_MAY_DATE_BEFORE: Final = re.compile(
    r"(?:^|[,.;:(\n-]|\b(?:from|until|till|through|thru|on|by|before|after|since|starting|to|of|and|or|between))"
    r"\s*$")


#: The names of the days of the week, folded: English, then Portuguese, each Monday first.
WEEKDAY_NAMES: Final = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday",
                        "segunda", "terca", "quarta", "quinta", "sexta", "sabado", "domingo")
_WEEKDAYS: Final[dict[str, int]] = {
    **{d: i % 7 + 1 for i, d in enumerate(WEEKDAY_NAMES)},
    **{d: i for i, d in enumerate("mon tue wed thu fri sat sun".split(), 1)},
}
#: Nouns a "segunda" ... "sexta" before them counts (an ordinal, not a day): "a segunda aula",
#: "a segunda via do boleto", "a quinta parcela", "artigos de segunda mão".
_ORDINAL_NOUNS: Final = (r"via|aula|parcela|vez|compra|unidade|peca|opcao|tentativa|troca|entrega|semana"
                         r"|quinzena|mensalidade|fatura|cobranca|etapa|fase|chance|pessoa|diaria|visita"
                         r"|consulta|sessao|revisao|mala|bagagem|taxa|classe|dose|mao|turma|prova|matricula"
                         r"|assinatura|linha|conta|chamada|ligacao|solicitacao|reclamacao|rodada|edicao")
_WEEKDAY_RE: Final = re.compile(
    r"\b(?P<wd>monday|tuesday|wednesday|thursday|friday|saturday|sunday|sabado|domingo"
    r"|(?:segunda|terca|quarta|quinta|sexta)(?:[- ]feira|(?!s?\s+(?:" + _ORDINAL_NOUNS + r")s?\b))"
    r"|(?:mon|tue|wed|thu|fri|sat|sun)(?=\.|\b))s?\b"
    r"(?:(?<=mon|tue|wed|thu|fri|sat|sun)\.)?"  # an abbreviation's dot; a name's is the sentence's end
)


_DIGIT_RE: Final = re.compile(r"\d")


@dataclass(frozen=True, slots=True)
class _Span:
    start: int
    end: int
    token: str


def _dates(text: str, lang: str = "pt") -> list[_Span]:
    """The dates of folded, number-word-read text, as ``d:MM-DD`` (``:YYYY`` when given).

    A slashed date is read day first in Portuguese ("02/01" is 2 January). In English both
    orders are in use (US "3/4" is March 4, a Brazilian store's English "01/02" is 1
    February), so a slashed date that both orders read, as two different dates, stays as
    written (``d:3/4``): it restates only the same numbers, never a written date, and a
    model or a person decides. Where only one order is a date ("1/15") it is that date.
    """
    found: list[_Span] = []
    for pattern, order in _DATE_PATTERNS if _DIGIT_RE.search(text) else ():  # every such date has a digit
        for match in pattern.finditer(text):
            if any(s.start < match.end() and match.start() < s.end for s in found):
                continue
            groups = match.groupdict()
            if groups.get("mn") == "may" and not groups.get("y") \
                    and not _MAY_DATE_BEFORE.search(text, 0, match.start()):
                continue  # "you may 2 ..." (a verb), not "from May 2"
            month = _MONTHS[groups["mn"]] if groups.get("mn") else int(groups["m"])
            day = int(groups["d"])
            if order == "slash":
                first, second = day, month
                readings = [(d, m) for d, m in ((first, second), (second, first)) if 1 <= d <= 31 and 1 <= m <= 12]
                if len(readings) == 2 and lang != "pt" and first != second:
                    found.append(_Span(match.start(), match.end(), f"d:{first}/{second}"))
                    continue
                if not readings:
                    continue
                day, month = readings[0]
            if not (1 <= day <= 31 and 1 <= month <= 12):
                continue
            year = groups.get("y")
            if year is not None and len(year) == 2:
                year = f"20{year}"
            found.append(_Span(match.start(), match.end(),
                               f"d:{month:02d}-{day:02d}" + (f":{year}" if year else "")))
    for match in _WEEKDAY_RE.finditer(text):
        if not any(s.start < match.end() and match.start() < s.end for s in found):
            day_name = re.split(r"[- ]", match.group("wd"))[0]
            found.append(_Span(match.start(), match.end(), f"{WEEKDAY_PREFIX}{_WEEKDAYS[day_name]}"))
    if _SHORT_DAY_RE.search(text):
        for run in _DAY_LIST_RE.finditer(text):
            for match in _SHORT_DAY_RE.finditer(text, run.start(), run.end()):
                if not any(s.start < match.end() and match.start() < s.end for s in found):
                    found.append(_Span(match.start(), match.end(), f"{WEEKDAY_PREFIX}{_SHORT_DAYS[match.group(1)]}"))
    return found


#: Portuguese weekdays by their three letters ("seg, ter, qua e qui"): days only in a list of
#: days (alone, "ter" is "to have", "sex" and "dom" other words).
_SHORT_DAYS: Final[dict[str, int]] = {d: i for i, d in enumerate("seg ter qua qui sex sab dom".split(), 1)}
_SHORT_DAY: Final = r"\b(" + "|".join(_SHORT_DAYS) + r")\b\.?"
_SHORT_DAY_RE: Final = re.compile(_SHORT_DAY)
#: A Portuguese day in a list: its three letters or its name (`_WEEKDAY_RE`'s).
_ANY_DAY: Final = (r"(?:" + _SHORT_DAY + r"|\b(?:segunda|terca|quarta|quinta|sexta)(?:[- ]feira)?\b"
                   r"|\b(?:sabado|domingo)\b)")
#: Two or more days joined by commas, "e", "a", "ou", "até", a hyphen or dash ("seg–sex") or "/".
_DAY_LIST_RE: Final = re.compile(_ANY_DAY + r"(?:\s*(?:,|/|-|\u2013|\u2014|\b(?:e|a|ou|ate)\b)\s*" + _ANY_DAY + ")+")


# ----------------------------------------------------------------------------- tokens

_RANGE_JOIN_RE: Final = re.compile(r"\s*(?:-|\u2013|\u2014|to|a|ate|through|thru)\s*")
_BETWEEN_JOIN_RE: Final = re.compile(r"\s*(?:and|e)\s*")
_BETWEEN_BEFORE_RE: Final = re.compile(r"(?:between|entre)\s*$")
#: "das 20h às 6h", "dos dias 5 aos 10": a range in Portuguese ("às" folds to "as").
_FROM_TO_JOIN_RE: Final = re.compile(r"\s*(?:as|aos)\s*")
_FROM_BEFORE_RE: Final = re.compile(r"\b(?:das|dos)\s*$")
#: A word (the phrases `_PHRASES` joins into one, `_ONE_WORD`, first), a sentence end, a
#: phrase mark or a dash.
_PIECE_RE: Final = re.compile("|".join(sorted(_ONE_WORD, key=len, reverse=True))
                              + r"|[^\W_]+|[.!?;\n]+|[,:()\[\]]|\s-\s|\u2014|\u2013")
_POLE_PHRASES: Final = sorted((p for p in POLES if " " in p or "-" in p), key=len, reverse=True)
_POLE_PHRASE_RE: Final = re.compile(r"\b(?:" + "|".join(re.escape(p) for p in _POLE_PHRASES) + r")\b")
#: Sentence and phrase boundary tokens.
SENTENCE: Final = "."
PHRASE: Final = ","
#: The token of a change verb or phrase that withdraws what its clause asserts.
WITHDRAWAL: Final = "x:withdrawn"  # no word reads as it (the word "x" once did: "10x sem juros")


def _number(value: object) -> str:
    text = format(value, "f")
    return text.rstrip("0").rstrip(".") if "." in text else text


_CEP_RE: Final = re.compile(r"(?<![\d.,])\d{5}-\d{3}(?![\d])")


def _measures(text: str) -> list[_Span]:
    """Measures as ``m:VALUE:UNIT`` (a range ``m:LOW-HIGH:UNIT``), in order; a CEP
    (``13050-000``) is one value.
    """
    found = _clocks(text, measures(text))
    for cep in _CEP_RE.finditer(text):  # "13050-000" is one postal code, not 13050 to 0
        inside = [m for m in found if cep.start() - 1 <= m.start and m.end <= cep.end()]
        if len(inside) == 2:
            first, second = inside
            found = [m for m in found if m not in inside]
            found.append(type(first)(parse_decimal(cep.group().replace("-", "")) or first.value, "cep",
                                     cep.start(), cep.end()))
    found.sort(key=lambda m: m.start)
    out: list[_Span] = []
    i = 0
    while i < len(found):
        first = found[i]
        if i + 1 < len(found):
            second = found[i + 1]
            gap = text[first.end:second.start]
            joined = _RANGE_JOIN_RE.fullmatch(gap) or (
                _BETWEEN_JOIN_RE.fullmatch(gap) and _BETWEEN_BEFORE_RE.search(text, 0, first.start)) or (
                _FROM_TO_JOIN_RE.fullmatch(gap) and (_FROM_BEFORE_RE.search(text, 0, first.start) or (
                    first.unit in _HOURS and second.unit in _HOURS)))  # "(20h às 6h)": two hours written as such
            if joined and (not first.unit or not second.unit or first.unit == second.unit
                           or {first.unit, second.unit} == {CLOCK, "hour"}):  # "das 9 às 18 horas"
                unit = CLOCK if CLOCK in (first.unit, second.unit) else second.unit or first.unit
                out.append(_Span(first.start, second.end,
                                 f"m:{_hours(first, unit)}-{_hours(second, unit)}:{_unit(unit)}"))
                i += 2
                continue
        unit = first.unit
        if not unit and _ORDINAL_MARK_RE.match(text, first.end) and not _DAY_BEFORE_RE.search(text, 0, first.start):
            # "the 3rd order" is not "3 orders"
            unit = ORDINAL
        out.append(_Span(first.start, first.end, f"m:{_hours(first, unit)}:{_unit(unit)}"))
        i += 1
    for match in _UNLIMITED_RE.finditer(text):  # a value too: "unlimited guest passes" is no "2 guest passes"
        if not any(span.start < match.end() and match.start() < span.end for span in out):
            out.append(_Span(match.start(), match.end(), UNLIMITED))
    out.sort(key=lambda span: span.start)
    return out


#: "Unlimited" naming a plan, or capitalised after a word: a product's name ("the 5G
#: Unlimited plan", "Unlimited Plan", "o plano ilimitado"), not a quantity.
_UNLIMITED_NAME_RE: Final = re.compile(
    r"(?i:\b(?P<plan>unlimit|ilimit)(?:ed|ad[oa]s?)(?=\s+(?:plans?|tiers?|packages?|bundles?|pacotes?)\b)"
    r"|(?<=\bplano )(?P<pt>ilimit)ad[oa]s?\b)"
    r"|(?<=[\w$%] )(?P<word>Unlimit|Ilimit)(?:ed|ad[oa]s?)\b")


def _unlimited_named(blind: bool, match: re.Match[str]) -> str:
    """A match of `_UNLIMITED_NAME_RE` as a name term; a capital alone names nothing in a
    text whose case is `blind` (`case_blind`).
    """
    plan = match["plan"] or match["pt"]
    return match[0] if blind and not plan else f"{_NAME_MARK}{(match['word'] or plan).lower()}"


#: No limit, read as a value of its own (``m:unlimited:``, no unit): "unlimited guest
#: passes", "passes ilimitados", "sem limite de devoluções" state a quantity, and a claim
#: that says it is not stated by a text that gives a number ("2 guest passes per month").
UNLIMITED: Final = "m:unlimited:"
_UNLIMITED_RE: Final = re.compile(
    r"\b(?:unlimited|limitless|ilimitad[oa]s?|sem limites?|no limit|without (?:any |a )?limits?)\b")


#: The unit of an ordinal ("3rd", "third", "terceiro", "3º" all read "3o"): a place in a
#: sequence, not a count ("the third order ships free" is not "3 orders ship free").
ORDINAL: Final = "ord"
#: An ordinal's mark right after its digits (the number words' reading writes "third" as "3o").
_ORDINAL_MARK_RE: Final = re.compile(r"[oºªa](?![a-z])")
#: A day of the month before its number: "todo dia 1º" is "todo dia 1" (a date, not a place).
_DAY_BEFORE_RE: Final = re.compile(r"\bdias?\s*$")


def _hours(measure: Measure, unit: str) -> str:
    """A measure's value as its token writes it: a time of day (`CLOCK`, minutes) in hours
    ("9:30" is 9.5), as "às 9h" has always read.
    """
    if unit != CLOCK:
        return _number(measure.value)
    return _number((measure.value / 60).quantize(Decimal("0.0001")) if measure.unit == CLOCK else measure.value)


def _unit(unit: str) -> str:
    return "hour" if unit == CLOCK else unit


#: A time of day written with its minutes ("9:00", "17:30", "2:00 pm", "9h30"), as folded text has it.
_CLOCK_RE: Final = re.compile(
    r"(?<![\d:.,/])([01]?\d|2[0-4])(?::|h(?=\d))([0-5]\d)(?![\d:])(?:\s?(a\.?m\.?|p\.?m\.?)(?![a-z]))?")
#: A word before an hour that makes it a time of day ("às 9h", "das 9 às 18 horas", "até as 14h").
_CLOCK_BEFORE_RE: Final = re.compile(r"(?<!dentro )\b(?:as|das)\s*$")  # not "dentro das 24 horas"
#: What may follow a bare hour after "às" / "das": the clause's end or the range's other end.
_CLOCK_AFTER_RE: Final = re.compile(r"\s*(?:[,.;:!?)]|$|(?:as|a|ate|e)\s+\d)")
#: Noon, written as a word.
_NOON_RE: Final = re.compile(r"\b(?:noon|midday|meio-dia|meio dia)\b")
#: Midnight, written as a word (a time of day: 0 minutes).
_MIDNIGHT_RE: Final = re.compile(r"\b(?:midnight|meia-noite|meia noite)\b")
#: The roles that only say a time of day is one ("às 14h", "at 2 pm").
_CLOCK_ROLES: Final = frozenset({"r:as", "r:at"})
#: The unit of a time of day while it is read: minutes after midnight. Its token is the
#: hour of the day ("9 am", "9:00" and "às 9h" are ``m:9:hour``; "5 pm", "17:00" and "às
#: 17h" ``m:17:hour``; "9:30" ``m:9.5:hour``), as "das 9h às 18h" has always read.
CLOCK: Final = "clock"
#: The units of an hour written with its unit ("20h", "6 horas") or as a time of day: two of them
#: joined by "às" are a span without a "das" before ("(20h às 6h)").
_HOURS: Final = frozenset({CLOCK, "hour"})


def _clocks(text: str, found: list[Measure]) -> list[Measure]:
    """`found` with the times of day read as times (`CLOCK`, minutes after midnight), whatever
    their notation: "9:00" (not the numbers 9 and 0), "9 am" / "9 a.m.", "12 pm", a bare
    hour after "às" / "das" ("das 9 às 18 horas"), "noon" / "meio-dia", "midnight" /
    "meia-noite"; a bare number before
    a range's "am" / "pm" takes it ("from 7 to 10 am"). An hour in "h" ("às 9h", "em 48h")
    keeps its unit, which the token of a time of day shares.
    """
    spans = [(m.start(), m.end(), _minutes(int(m[1]), int(m[2]), m[3])) for m in _CLOCK_RE.finditer(text)]
    spans += [(m.start(), m.end(), 720) for m in _NOON_RE.finditer(text)]
    spans += [(m.start(), m.end(), 0) for m in _MIDNIGHT_RE.finditer(text)]
    if not spans and not any(f.unit in ("am", "pm", "") for f in found):
        return found
    out = [f for f in found if not any(f.start < end and start < f.end for start, end, _ in spans)]
    out += [Measure(Decimal(minutes), CLOCK, start, end) for start, end, minutes in spans]
    out.sort(key=lambda f: f.start)
    for i, f in enumerate(out):
        whole = f.value == f.value.to_integral_value() and 0 <= f.value <= 24
        if f.unit in ("am", "pm") and whole and 1 <= f.value <= 12:
            out[i] = Measure(Decimal(_minutes(int(f.value), 0, f.unit)), CLOCK, f.start, f.end)
        elif f.unit == "" and whole and _CLOCK_BEFORE_RE.search(text, 0, f.start) \
                and _CLOCK_AFTER_RE.match(text, f.end):  # "até as 14.", "das 9 às 18h"; not "as 3 parcelas"
            out[i] = Measure(Decimal(_minutes(int(f.value), 0, None)), CLOCK, f.start, f.end)
        elif f.unit == "" and whole and i + 1 < len(out) and out[i + 1].unit in ("am", "pm") \
                and _RANGE_JOIN_RE.fullmatch(text[f.end:out[i + 1].start]) and 1 <= f.value <= 12:
            out[i] = Measure(Decimal(_minutes(int(f.value), 0, out[i + 1].unit)), CLOCK, f.start, f.end)
    return out


#: An hour said in English words ("1 hours", "24 hrs"): a duration. "h" and "horas" are not:
#: Portuguese says a time of day so too ("o check-in é 14h", "abre 9 horas").
_DURATION_WORD_RE: Final = re.compile(r"\b(?:hours?|hrs?)\b")


@lru_cache(maxsize=8192)
def hour_kinds(text: str) -> Mapping[str, frozenset[str]]:
    """The hours `text` certainly states, each with how: as a time of day (``clock``: "9:00",
    "9 am", "às 9h", noon) or as a duration (``span``: "9 hours", "within 9.5 hrs", "as soon
    as 9 hours"); a text may state one hour both ways ("opens at 9 am, delivery within 9
    hours"). An hour in "h" or "horas" with no "às" / "das" before it is either ("check-in é
    14h", "entrega em 48h", "dentro das 24 horas") and is left out. Their tokens are alike
    (``m:9:hour``): `hours_disagree` tells them apart.
    """
    prepared = _prepare(text)
    out: dict[str, set[str]] = {}
    for found in _clocks(prepared, measures(prepared)):
        hour = _hours(found, found.unit)
        if found.unit == CLOCK:
            out.setdefault(hour, set()).add("clock")
        elif found.unit != "hour":
            continue
        elif _DURATION_WORD_RE.search(prepared, found.start, found.end):  # English words: a duration
            out.setdefault(hour, set()).add("span")
        elif found.value == found.value.to_integral_value() and _CLOCK_BEFORE_RE.search(prepared, 0, found.start):
            out.setdefault(hour, set()).add("clock")
    return {hour: frozenset(kinds) for hour, kinds in out.items()}


def hours_disagree(a: str, b: str) -> bool:
    """Whether an hour one text states only as a time of day the other states only as a
    duration, or the reverse ("delivery 1 am" / "delivery 1 hours"; `hour_kinds`): two
    claims, though their tokens match.
    """
    mine, theirs = hour_kinds(a), hour_kinds(b)
    return any(hour in theirs and not kinds & theirs[hour] for hour, kinds in mine.items())


def _minutes(hour: int, minute: int, meridiem: str | None) -> int:
    """Minutes after midnight of `hour`:`minute`, on a 12-hour clock when `meridiem` is given."""
    if meridiem:
        hour = hour % 12 + (12 if meridiem.replace(".", "").startswith("p") else 0)
    return (hour % 24) * 60 + minute


#: Whatever `_CONTRACTIONS` or `_PHRASES` could change holds one of these (a cheap test first).
_REWRITE_HINT: Final = re.compile(
    r"'|cannot|free of|at no|no charge|sem c|sem nenhum|isent|de graca|money back|no longer|not any|desde que"
    r"|sempre que|as soon as|assim que|logo que|as long as|contanto que|ahead of time|beforehand"
    r"|nao importa|tanto faz|no matter|in the event|should|-l|-se\b|whole|entire|inteir"
    r"|e-mail|email|used to|interest|by the| off\b|[\d%]off\b|custo|custa nada|cost anything|cost you anything"
    r"|pagar nada|pagam? nada|pagamos nada|cobram? nada|cobramos nada|gratuitamente|paying anything|pay nothing"
    r"|pay anything|antecedencia|sem agend|sem hora|sem marcar|sem nec|sem a nec|sem precisar|without|walk"
    r"|nossa conta| on us| on the house|prohibited|forbidden|proibid|menos que|exceto se|nao ser que"
    r"|later than|saturday|sabado|de semana|com destino|dobro|nao pag|nao vai pag|nao vao pag|nao precisa"
    r"|there is no|there are no|nenhum|carry|cabin bag|pay no|not have to pay|not pay|first day|primeiro dia"
    r"|estej|estiv|not only|nao so|nao apenas|nao somente|but also|but as well|mas tambem|como tambem"
    r"|que foram|que foi|que sao|que esta|that were|that was|which were|which was|who are|who is"
    r"|going to|inform|lembra|remind|excecao|for each|for every|para cada|, which"
    r"|exception|absolut|algum"
    r"|sai por|saem por|saindo por|sair por|fica por|ficam por|ficando por|sai a |saem a |fica a |ficam a ")


_CE_RE: Final = re.compile(r"(?<![^\W\d_])(?:[oO])?[cC]ês?(?![^\W\d_])")
_WE_RE: Final = re.compile(r"(?<![^\W\d_])[nN]ós(?![^\W\d_])")
_IS_RE: Final = re.compile(r"(?<![^\W\d_])[éÉ](?![^\W\d_])")
#: "dá" / "dão" (gives): the verb, which folds to "da" / "dao" (of the) without its accent.
_GIVES_RE: Final = re.compile(r"(?<![^\W\d_])([dD])(?:á|ão)(?![^\W\d_])")


#: "May" after a word that names a time ("in May", "until May", "next May") and with no day after it.
_MAY_MONTH_RE: Final = re.compile(
    r"\b((?i:in|until|since|from|by|through|during|of|this|next|last|early|late|mid|before|after|em|de|até|ate))"
    r" May\b(?! \d)")


@lru_cache(maxsize=8192)
def _prepare(text: str) -> str:
    """Folded text with contractions expanded, phrases joined, number words read, a list's
    enumerators read as order words (`_enumerated`).
    """
    if not text.isascii():  # "Ⓓ", "Ｄ" are the letter D to a reader (and to the name readers below)
        text = unicodedata.normalize("NFKC", as_seen(text))
    # "é" (is) and "e" (and) fold alike; written with its accent, "é" is the verb.
    if ")" in text or "." in text or ":" in text or "-" in text:
        text = _enumerated(text)
    if "May" in text:  # "Starting in May", "through May": the month, not "may" (a day after it makes a date)
        text = _MAY_MONTH_RE.sub(r"\1 Maymonth", text)
    if "U" in text and not text.isupper():  # "US addresses": a country, not "us" (unless all is capitals)
        text = _US_RE.sub("usa", text)
    if "limit" in text or "LIMIT" in text:  # "the 5G Unlimited plan": a name, not a quantity (`UNLIMITED`)
        text = _UNLIMITED_NAME_RE.sub(partial(_unlimited_named, case_blind(text)), text)
    if _NAMED_STOP_RE.search(text):  # "Recarga Oi tem bônus": a name (the carrier), not "oi" (hi)
        blind = case_blind(text)  # once per text: a letter in Title Case is no name
        text = _NAMED_STOP_RE.sub(lambda m: _named(m, blind), text)
    elif text.isupper() and _CAPS_LETTER_RE.search(text):  # "LOJA D ABRE": D names it ("LOJA A": an article?)
        text = _CAPS_LETTER_RE.sub(lambda m: f"{_NAME_MARK}{m[0].lower()}", text)
    if "ê" in text:  # colloquial "cê" / "ocê" is "você"; "CE" (Ceará, the CE mark) is not
        text = _CE_RE.sub("você", text)
    if "ós" in text:  # "nós" (we) folds to "nos" (in the): read it before folding
        text = _WE_RE.sub("nosso", text)
    if "dá" in text or "dão" in text or "Dá" in text:  # the verb, not "da" (of the)
        text = _GIVES_RE.sub(r"\1ar", text)
    folded = fold(_IS_RE.sub(" ser ", text) if "é" in text or "É" in text else text).replace("\u2019", "'")
    if "cost" in folded or "custa" in folded:  # "the delivery fee costs $7": the fee is $7
        folded = _FEE_COSTS_RE.sub(lambda m: f"{m[1]}{m[2]} {'ser' if m[3].startswith('custa') else 'is'}", folded)
    if _REWRITE_HINT.search(folded):
        for pattern, replacement in _CONTRACTIONS:
            folded = pattern.sub(replacement, folded)
        for pattern, word in _PHRASES:
            folded = pattern.sub(word, folded)
    if "um" in folded:
        folded = _ONE_RE.sub(r"\1 1 ", _ONE_PER_RE.sub("1 ", folded))
    return _rewritten(read_number_words(_rewritten(folded, _MARKS)), _AFTER_NUMBER_WORDS)


#: A rewrite of folded text: the literals one of which it needs (a cheap test first), the
#: pattern, and what replaces each match.
_Rewrite = tuple[tuple[str, ...], re.Pattern[str], str | Callable[[re.Match[str]], str]]


def _rewritten(text: str, rules: tuple[_Rewrite, ...]) -> str:
    """`text` with each of `rules` applied in turn, when its literals are in the text."""
    for triggers, pattern, replacement in rules:
        if any(t in text for t in triggers):
            text = pattern.sub(replacement, text)
    return text


#: After a number (and its unit), how a rate is said: "$39.99 a month", "every month",
#: "monthly" ending its phrase (not "1/3 daily rate"), "R$ 50 ao mês", "mensais", are all
#: "per month"; "taken monthly" is "1 per month" ("once a month"); "24/7" and "24 hours a
#: day, 7 days a week" (in either language) are one word. (Folded text, number words read.)
_PT_RATE: Final[dict[str, str]] = {"mensais": "mes", "anuais": "ano", "semanais": "semana", "mensalmente": "mes",
                   "anualmente": "ano", "semanalmente": "semana", "diariamente": "dia"}
#: Units of an amount of data, as the rate rules read them after a number ("20 GB a month").
_DATA_UNITS: Final = r"|[gmkt]b|(?:giga|mega|kilo|tera)bytes?|gigas?"
_UNIT_AFTER: Final = r"(\s?(?:%|reais|dollars?|euros?|times|vezes|hours?|horas?|days?|dias?" + _DATA_UNITS + ")?)"
#: ...or the thing counted, in one or two words ("1 guest a month", "3 sauna sessions a week";
#: not "2 days before a week ends").
_COUNTED_AFTER: Final = (r"(\s?(?:%|reais|dollars?|euros?|times|vezes|hours?|horas?|days?|dias?" + _DATA_UNITS +
                         r"|(?:\s(?!(?:before|after|within|from|into|over|under|than|more|less|once|twice|about"
                         r"|around|during|until|since|and|the|for|per|with|without|are|was|were|has|have)\b)"
                         r"[a-z]{3,}){1,2})?)")
#: ...the same, but no count of times: "12 vezes mensais" are 12 monthly instalments, not
#: 12 times a month.
_AMOUNT_AFTER: Final = r"(\s?(?:%|reais|dollars?|euros?|hours?|horas?|days?|dias?" + _DATA_UNITS + ")?)"
_RATE_RULES: Final[tuple[_Rewrite, ...]] = tuple(
    (triggers, re.compile(pattern), replacement) for triggers, pattern, replacement in (
        (("24",), r"\b24\s?(?:/|x)\s?7\b|\b24 ?(?:hours?|horas?|h)\s+(?:a|per|por|ao)\s+(?:day|dia),?\s+7\s+"
               r"(?:days?|dias?)\s+(?:a|per|por|na)\s+(?:week|semana)\b", "aroundtheclock"),
        ((" a ", " an ", " every ", " each "),
         r"(?<=\d)" + _COUNTED_AFTER + r"\s+(?:a|an|every|each)\s+(?=(?:hour|day|night|week|month|year)\b"
         r"(?!\s+(?:before|after|later|earlier|ahead|in advance|from|prior|early|late|ago|into|of)\b))",
         r"\1 per "),
        ((" ao ", " a cada "),
         r"(?<=\d)" + _UNIT_AFTER + r"\s+(?:ao|a cada)\s+(?=(?:hora|dia|noite|semana|mes|ano)\b)", r"\1 por "),
        ((" a hora", " a noite", " a semana", " a diaria"),
         r"(?<=\d)" + _UNIT_AFTER + r"\s+a\s+(?=(?:hora|noite|semana|diaria)\b)", r"\1 por "),
        (("ly",), r"(?<=\d)" + _AMOUNT_AFTER + r"\s+(hour|dai|night|week|month|year)ly(?=\s*(?:[.,;!?]|$))",
         lambda m: f"{m[1]} per {'day' if m[2] == 'dai' else m[2]}"),
        (("ly",), r"\b(hour|dai|night|week|month|year)ly(?=\s*(?:[.,;!?]|$))",
         lambda m: f"1 per {'day' if m[1] == 'dai' else m[1]}"),
        (("mensais", "anuais", "semanais"), r"(?<=\d)" + _AMOUNT_AFTER + r"\s+(mensais|anuais|semanais)\b",
         lambda m: f"{m[1]} por {_PT_RATE[m[2]]}"),
        (("mente",), r"\b(mensalmente|anualmente|semanalmente|diariamente)(?=\s*(?:[.,;!?]|$))",
         lambda m: f"1 por {_PT_RATE[m[1]]}"),
        # a period named by one word: "quarterly" is "every 3 months", "bimestral" "a cada 2 meses"
        # ("bimonthly" and "biannual" say two things; left as they are)
        (("quarterly", "semiannual", "semi-annual"), r"\b(?:quarterly|semi-?annual(?:ly)?)\b",
         lambda m: "every 3 months" if m[0] == "quarterly" else "every 6 months"),
        (("mestra", "quinzena"), r"\b(bi|tri|se)mestra(?:l|is|lmente)\b|\bquinzena(?:l|is|lmente)\b",
         lambda m: f"a cada {_PT_PERIODS[m[1]]} meses" if m[1] else "a cada 15 dias"),
    ))
#: The months of a period named by one word ("bimestral", "trimestral", "semestral").
_PT_PERIODS: Final[dict[str, int]] = {"bi": 2, "tri": 3, "se": 6}


#: Nouns of actions done to someone: "get" before one is "receive" ("the seller gets the
#: payment" is not "the seller pays"; the noun and the verb share their term).
_ACTION_NOUNS: Final = (
    "payments?|payouts?|refunds?|reimbursements?|repl(?:y|ies)|responses?|answers?|calls?|callbacks?"
    "|transfers?|deposits?|charges?|credits?|visits?"
    # and what the business sends ("you'll get a confirmation email" is "you'll receive" it)
    "|confirmations?|notifications?|e-?mails?|messages?|receipts?|invoices?|vouchers?|links?|codes?")


#: "every day except Monday", "daily but Sundays", "todos os dias, exceto segunda" (folded).
_ALL_BUT_ONE_DAY_RE: Final = re.compile(
    r"\b(?:every day|daily|todos os dias|todo dia)\s*,?\s*(except(?: for)?|but|exceto|menos|salvo|com excecao d[eao]s?)"
    r"\s+(?:on\s+|as\s+|aos\s+|os\s+|a\s+|o\s+)?(" + "|".join(WEEKDAY_NAMES) + r")(?:s|[- ]feiras?)?\b"
    r"(?!\s*(?:,|/|&|\band\b|\bor\b|\be\b|\bou\b)\s*(?:on\s+|as\s+|aos\s+|os\s+|a\s+|o\s+)?(?:"
    + "|".join(WEEKDAY_NAMES) + r"))")  # one day only: "except Monday and Tuesday" is not six days
#: A number after a field named for its unit: a key in quotes or in snake case (``"window_days":
#: 14``, ``"days": 30``, ``"delivery_hours": 48``; folded text); not "a day: 5".
_UNIT_IN_KEY_RE: Final = re.compile(
    r"(?:\b[a-z][a-z_]*_|[\"'])(day|hour|minute|week|month|year|dia|hora)s?(?:_[a-z_]+)?[\"']?\s*[:=]\s*(\d+(?:\.\d+)?)\b")


#: What a key named for its unit starts or ends with (`_UNIT_IN_KEY_RE`'s cheap test).
_UNIT_KEYS: Final = tuple(f"{mark}{unit}" for unit in ("day", "hour", "minute", "week", "month", "year", "dia", "hora")
                          for mark in ("_", '"', "'"))


def _all_but_one_day(match: re.Match[str]) -> str:
    """"every day except monday" as "tuesday to sunday except monday" (the six other days,
    named in the excepted day's language).
    """
    at = WEEKDAY_NAMES.index(match[2])
    week, i = WEEKDAY_NAMES[at - at % 7:at - at % 7 + 7], at % 7
    return f"{week[(i + 1) % 7]} {'to' if at < 7 else 'a'} {week[(i + 6) % 7]} {match[1]} {match[2]}"


def _day_half(hour: str, part: str) -> str:
    """An hour with a part of the day as a clock time: "10" "at night" is "10 pm", "1" "at
    night" "1 am", "12" "at night" "midnight", "4" "da tarde" "4 pm", "8" "da manhã" "8 am";
    an hour the part cannot hold ("12 in the morning", "3 in the evening") stays as written.
    """
    whole = int(hour.split(":")[0])
    if part.endswith(("night", "noite")):
        return "midnight" if whole == 12 and ":" not in hour else (
            f"{hour} pm" if 6 <= whole <= 11 else f"{hour} am" if whole <= 5 else f"{hour} {part}")
    if part.endswith(("morning", "manha")):
        return f"{hour} am" if whole <= 11 else f"{hour} {part}"
    if part.endswith("evening"):
        return f"{hour} pm" if 5 <= whole <= 11 else f"{hour} {part}"
    return f"{hour} pm" if whole <= 6 else f"{hour} {part}"  # the afternoon, "da tarde"


#: A range's "to" after its start as a time ("from noon to 10 at night", "from 9 am to 6 in the
#: evening"): the hour after it is a time too ("limited to 2 in the evening" is a count).
#: A number before "or more" / "or less": grouped thousands with their cents ("$1,800.00", "R$
#: 1.299,00") whole, or a plain number.
_BOUND_NUMBER: Final = r"\d{1,3}(?:[.,]\d{3})+(?:[.,]\d{1,2})?|\d+(?:[.,]\d+)?"
_FROM_TIME_TO: Final = r"from\s+(?:noon|midday|midnight|(?:1[0-2]|0?[1-9])(?::[0-5]\d)?\s?(?:am|pm|a\.m\.|p\.m\.))\s+to"


#: A day's name, whole or short, in English or Portuguese (folded), and the start of the next one.
_DAY_WORD: Final = (r"\b((?:mon|tue|wed|thu|fri|sat|sun)(?:[a-z]*day)?s?|seg|ter|qua|qui|sex|sab|dom|segunda|terca"
                    r"|quarta|quinta|sexta|sabado|domingo)\.?\s*")
_NEXT_DAY: Final = r"(?=(?:mon|tue|wed|thu|fri|sat|sun|seg|ter|qua|qui|sex|sab|dom)[a-z]*\b)"
#: Two day names joined by a slash: `_MARKS` writes it as a comma (a list).
_DAY_SLASH_RE: Final = re.compile(_DAY_WORD + r"/\s*" + _NEXT_DAY)
#: Two day names joined by a dash: `_MARKS` writes it as a hyphen.
_DAY_DASH_RE: Final = re.compile(_DAY_WORD + r"[\u2013\u2014]\s*" + _NEXT_DAY)


#: Meaning carried by a sign or a short word the stop list would drop, written as words
#: the reading keeps (folded text): "orders > $50" as "above", "-$10" as "minus" (a sign
#: after a colon or at the start), "off-peak" as one word, "once a year" as "1 per year"
#: (not "after a year"), and "this order" / "este domingo" / "next weekend" as `THIS` (not
#: "every order", "domingos"; "esta" only before a time, since "está" folds to it). Each is
#: tried only when its cheap literal is in the text.
#: What may follow "here" / "there" when they name no place ("there is", "there'll be", "here's").
_BE_AFTER: Final = "is|are|was|were|will|would|may|might|can|could|should|must|has|have|had|seems?|'s|'ll|'d|s"
#: A part of the day after an hour said as a time ("at 10 at night", "às 8 da manhã", "até as 4
#: da tarde", "das oito da manhã": run again once number words are read) is its half of the
#: clock (`_day_half`); "limited to 2 in the evening" is a count.
_DAY_HALF: Final[_Rewrite] = (
    (" at night", " da noite", " de noite", " in the morning", " da manha", " de manha", " in the afternoon",
     " in the evening", " da tarde", " de tarde"),
    re.compile(r"\b(at|as|das|until|till|by|before|after|from|ate|desde|" + _FROM_TIME_TO
               + r")\s+((?:1[0-2]|0?[1-9])(?::[0-5]\d)?)\s+(at night|da noite|de noite|in the morning|da manha"
               r"|de manha|in the afternoon|in the evening|da tarde|de tarde)\b"),
    lambda m: f"{m[1]} {_day_half(m[2], m[3])}")
_MARKS: Final[tuple[_Rewrite, ...]] = tuple(
    rule if isinstance(rule[1], re.Pattern) else (rule[0], re.compile(rule[1]), rule[2]) for rule in (
        # a dash between two days is a hyphen ("Mon–Fri", "seg—sex" as "Mon-Fri": a range, not a phrase break);
        # a slash lists them ("Mon/Fri", "seg/sex": Monday and Friday)
        (("\u2013", "\u2014"), _DAY_DASH_RE, r"\1-"),
        # and between any two words or numbers it stands between with no space ("Jan–Mar", "1–5
        # March"): a range, as the hyphen is
        (("\u2013", "\u2014"), r"(?<=[a-z0-9])[\u2013\u2014](?=[a-z0-9])", "-"),
        (("/",), _DAY_SLASH_RE, r"\1, "),
        ((">=", "\u2265"), r">=|\u2265", " at least "), (("<=", "\u2264"), r"<=|\u2264", " at most "),
        # "24+ hours", "18+": at least the number (not "+55 11 ...", nor "1+1")
        (("+",), r"(?<![\d+])(\d+(?:[.,]\d+)?)\+(?![\d+])", r"at least \1"),
        _DAY_HALF,
        # every day but one is the week's other days, as a range ("every day except Monday" is
        # "tuesday to sunday except monday"; "todos os dias, exceto domingo")
        (("every day", "daily", "todos os dias", "todo dia"), _ALL_BUT_ONE_DAY_RE, _all_but_one_day),
        # a fortnight is two weeks, "uma quinzena" fifteen days
        (("fortnight",), r"\b(?:a|one|1)\s+fortnight\b", "2 weeks"),
        (("quinzena",), r"\b(?:uma|1)\s+quinzena\b", "15 dias"),
        # a value whose unit is its field's name (a tool's data: ``"window_days": 14`` is 14 days)
        (_UNIT_KEYS, _UNIT_IN_KEY_RE, lambda m: f"{m[0]} {m[1]}s"),
        # "12 or more hours", "60 years or more", "3 ou mais itens": a lower bound; "or fewer" an upper one
        # (a currency sign before the number stays with it: "R$ 150 ou mais" is "at least R$ 150")
        ((" or more", " ou mais"),
         r"(?:(r\$|us\$|\$|\u20ac)\s?)?(?<![\d.,])\b(" + _BOUND_NUMBER
         + r")((?:\s+[a-z]+){0,2})\s+(?:or more|ou mais)\b",
         lambda m: f"at least {m[1] or ''}{m[2]}{m[3]}"),
        # "starts at $65", "prices start from R$ 39": the least it costs ("a partir de R$ 39";
        # "check-in starts at 3 pm" is when it begins)
        (("start",), r"\bstart(?:s|ing)? (?:at|from)\s+(?=(?:r\$|us\$|\$|\u20ac)\s?\d)", "at least "),
        ((" or fewer", " or less", " ou menos"),
         r"(?:(r\$|us\$|\$|\u20ac)\s?)?(?<![\d.,])\b(" + _BOUND_NUMBER
         + r")((?:\s+[a-z]+){0,2})\s+(?:or fewer|or less|ou menos)\b",
         lambda m: f"at most {m[1] or ''}{m[2]}{m[3]}"),
        # "by 7 p.m. at the latest" is "by 7 p.m." ("na sexta, no mais tardar" is no "na sexta")
        (("at the latest", "no mais tardar"),
         r"\b(by|ate) ([^,;!?]{1,30}?)\s*,?\s*\b(?:at the latest|no mais tardar)\b", r"\1 \2"),
        ((">",), r">(?=\s*(?:r\$|us\$|\$|\u20ac)?\s*\d)", " above "),
        (("<",), r"<(?=\s*(?:r\$|us\$|\$|\u20ac)?\s*\d)", " below "),
        (("-$", "- $", "-r$", "- r$", "-us$", "-\u20ac"), r"(?:^|(?<=[:(]))\s*-(?=\s?(?:r\$|us\$|\$|\u20ac)\s?\d)",
         " minus "),
        (("+",), r"(?:^|(?<=[:(]))\s*\+(?=\s?(?:r\$|us\$|\$|\u20ac)\s?\d|\s?\d[\d.,]*\s?%)", " plus "),
        (("-",), r"(?:^|(?<=[:(]))\s*-(?=\s?\d[\d.,]*\s?%)", " minus "),  # "Pix: -5%"
        # "processed here" / "there": a place ("there is", "is there", "here are": none)
        (("here",), r"(?<!is )(?<!are )(?<!was )(?<!were )\bhere\b(?!\s*(?:" + _BE_AFTER + r")\b)", " atthisplace "),
        (("there",), r"(?<!is )(?<!are )(?<!was )(?<!were )\bthere\b(?!\s*(?:" + _BE_AFTER + r")\b)", " atthatplace "),
        (("off-",), r"\boff-(?=[a-z])", "off"),
        (("-up",), r"(?<=[a-z])-up\b", "up"),  # "a tune-up", "the pick-up point": one noun, no "up"
        (("phone",), r"\bover the phone\b", "by phone"), (("gente",), r"\ba gente\b", "nosso"),
        (("available",), r"\b(?:is |are )?not available\b", "unavailable"), (("unable",), r"\bunable to\b", "unable"),
        (("disponive",), r"\bnao (?:esta |estao |e |sao |fica |ficam )?disponive(?:l|is)\b", "indisponivel"),
        (("once",), r"\bonce (?:a|an|per|every)\b", "1 per"), (("twice",), r"\btwice (?:a|an|per|every)\b", "2 per"),
        # "once again" / "once more" is "again"; "once" or "twice" closing its clause after a verb is a
        # count ("can be renewed once", "used twice, online"); "once" before a clause is "after"
        # ("once the item arrives", "Once in transit, ..."); "twice the rate" is a multiple
        (("once again", "once more"), r"\bonce (?:again|more)\b(?! than)", "again"),
        (("once", "twice"), r"(?<=[a-z] )(once|twice)(?=\s*(?:[.,;:!?)]|$)|\s+(?:and|or|but|only)\b)",
         lambda m: "1 time" if m[1] == "once" else "2 times"),
        # the "de" of "depois de", "antes das", "precisa de" is no role ("depois das 16h" is "após
        # as 16h", "precisa de 48 horas" "needs 48 hours"); its article stays ("as 16h" is a
        # time of day); "o dia útil seguinte" is "o próximo dia útil"
        (("depois d", "antes d", "precis"), r"\b(depois|antes|precis[a-z]*) d(e|a|as|o|os)\b",
         lambda m: f"{m[1]} {m[2][1:]}" if len(m[2]) > 1 else m[1]),
        (("seguinte",), r"\b(dia util|dia|semana|mes|ano) seguinte\b", r"proximo \1"),
        # "without the need for an appointment" is "without an appointment"; "sem necessidade
        # de agendamento", "sem precisar de agendar" are "sem agendamento", "sem agendar"
        (("need",), r"\bwithout (?:the |any |a )?need (?:for|of|to)\b", "without"),
        (("necessidade", "precisar"), r"\bsem (?:(?:a |nenhuma )?necessidade|precisar) d[eoa]s?\b|\bsem precisar\b",
         "sem"),
        # "without a penalty" is "with no penalty" ("with no fee" reads as free)
        (("without",), r"\bwithout (?:a |an |any )?(?=[a-z])", "with no "),
        # "non-refundable" is "not refundable" (only before "-able" / "-ible": "non-members",
        # "nonstop" name a thing)
        (("non",), r"\bnon-?(?=[a-z]+(?:able|ible)\b)", "not "),
        (("on board",), r"\bon board\b", "onboard"),  # one word: "on the board" is another place
        # "ship the next business day" is "ship on the next business day" (a phrase of days keeps
        # its "on" wherever it stands: "On the next business day, ..." / "... on the next ...")
        (("the next", "the same", "the following"),
         r"(?<=[a-z] )(?<!\bon )(?<!\bby )(?<!\buntil )(?<!\btill )(?<!\bbefore )(?<!\bafter )(?<!\bfrom )(?<!\bto )"
         r"(?<!\bof )(?<!\bwithin )(?<!\bin )(?<!\bfor )(?<!\bas )"
         r"(?=the (?:next|same|following) (?:business |working )?day\b)", "on "),
        # "check-out", "check out" and "checkout" are one word
        (("check",), r"\bcheck[- ](in|out)\b", r"check\1"),
        # "o horário do check-out é (às) 11h" is "o check-out é (às) 11h": "horário" is a clock time
        # (English "time is" is not rewritten: "checkout time is 11 am" / "22h" would read apart,
        # and "delivery time is 24h" is a duration)
        (("horario d",), r"\bhorario d[oae]s? (?=[a-z-]+ +(?:e|sao|ser) +(?:(?:as|a partir das) )?\d)", ""),
        # "in the first 30 days" is "within the first 30 days"
        (("in the first",), r"\bin the first (?=\d|(?:two|three|five|seven|ten|fifteen|thirty|sixty|ninety)\b"
                            r"|(?:hour|day|week|month|year)s?\b)", "within the first "),
        # "funciona" / "operates" before its days or hours is "abre" / "is open": opening hours
        (("funciona", "opera"),
         r"\b(?:funciona|funcionam|funcionamos|opera|operam|operamos|operates|operate)\b(?=\s+(?:"
         r"(?:de )?(?:segunda|terca|quarta|quinta|sexta|sabado|domingo|seg|ter|qua|qui|sex|sab|dom)\b"
         r"|das? \d|entre \d|a partir das?|aos (?:sabados|domingos|feriados)|todos os dias|diariamente"
         r"|24 ?h|(?:from )?(?:mon|tues|wednes|thurs|fri|satur|sun)(?:days?)?\b|(?:tue|wed|thu|sat)\b"
         r"|daily|every day|around the clock|24/7"
         r"|(?:from|between) \d{1,2}(?::\d\d)?\s*(?:am|pm|a\.m|p\.m|h\b)))", "open"),
        # "a taxa corresponde a 20%" is "a taxa é de 20%" (a value, as "é de" gives it)
        (("corresponde", "equivale"), r"\b(?:corresponde|correspondem|equivale|equivalem) (?:a|ao|a um|a uma)\b"
         r"(?=\s*(?:r\$|us\$|\$|\u20ac)?\s*\d)", "ser de"),
        # "get" + a participle is a passive: "transfers get processed" as "are processed"
        (("get",), r"\bgets? (?=[a-z]{3,}ed(?:\s*(?:[.,;!?]|$)|\s+(?:by|on|in|at|within|after|before|for|to|from"
                   r"|the|a|an|next|once|when|if|automatically|immediately|back)\b))", "are "),
        # "fazer" / "realizar" + an action's noun is the action: "a farmácia faz entregas" is
        # "a farmácia entrega" (not "faz 30 dias", ago; "fazemos" is left: "we" has to stay)
        (("faz", "realiz"), r"\b(?:faz|fazem|realiza|realizam) (?:(?:a|as|o|os) )?"
                            r"(?=(?:entregas?|trocas?|devolucao|devolucoes|reembolsos?|estornos?|envios?|"
                            r"cancelamentos?)\b)", ""),
        (("pick-up",), r"\bpick-up\b", "pickup"),  # "ready for pick-up" is "ready for pickup"
        # a day of the month
        (("first of",), r"\bthe first of (?=(?:each|every|the|this|next) month\b)", "the 1st of "),
        # "get" + an action's noun is "receive" it ("got" is left: "have got" is "have")
        (("get",), r"\b(?:get|gets|getting) (?=(?:(?:a|an|the|their|your|his|her|its|our|my) )?"
                   r"(?:(?:full|partial|complete|total|free|fast|quick|prompt|immediate|instant|proportional"
                   r"|prorated) )?(?:" + _ACTION_NOUNS + r")\b)", "receive "),
        (("vez",), r"\b(?:uma vez|1 vez) (?:por|ao|a cada)\b", "1 por"),
        (("vezes",), r"\bduas vezes (?:por|ao|a cada)\b", "2 por"),
        (("this", "these", "este", "esse", "essa", "aquel"),  # "this order" is one order, not "every order"
         r"\b(?:this|these|este|estes|esse|esses|essa|essas|neste|nesse|nessa|aquele|aquela)\s+(?=[a-z])", "thistime "),
        (("next", "following", "esta", "nesta", "proxim"),
         r"\b(?:next|following|esta|nesta|proximo|proxima)\s+(?=(?:fim de semana|weekend"
         r"|week|month|year|season|semana|mes|ano|temporada|feriado|holiday|monday|tuesday|wednesday|thursday|friday"
         r"|saturday|sunday|segunda|terca|quarta|quinta|sexta|sabado|domingo)\b)", "thistime "),
    ))
#: A time of day said as a part of the hour, number words read (folded): "half past 5" is
#: "5:30", "quarter past 5" "5:15", "quarter to 6" "5:45", "cinco e meia" "5:30" (not "uma
#: hora e meia", a duration).
_PAST_THE_HOUR: Final[_Rewrite] = (
    ("half past", "quarter past", "quarter to", " e meia"),
    re.compile(r"\b(?:(half|quarter) (past|to) (1[0-2]|0?[1-9])|(1[0-2]|0?[1-9]) e meia)\b(?!:)"),
    lambda m: f"{m[4]}:30" if m[4] else f"{m[3]}:{30 if m[1] == 'half' else 15}" if m[2] == "past"
    else f"{int(m[3]) - 1 or 12}:{30 if m[1] == 'half' else 45}")
#: A price "for each" thing is a price per thing: "R$ 15 para cada peça" is "R$ 15 por peça",
#: "$5 for each guest" "$5 per guest" (folded, number words read).
_FOR_EACH: Final[_Rewrite] = (
    ("cada", "each"),
    re.compile(r"(?<=\d)((?:\s?(?:%|reais|dollars?|euros?))?)\s+(para|pra|for)\s+(?:cada|each)\b"),
    lambda m: f"{m[1]} {'per' if m[2] == 'for' else 'por'}")
#: Weeks of business days are five of them each: "two business weeks" is "10 business days".
_BUSINESS_WEEKS: Final[_Rewrite] = (
    ("week",),
    re.compile(r"\b(\d{1,3}) (business|working) weeks?\b"),
    lambda m: f"{int(m[1]) * 5} {m[2]} days")
#: The rewrites run once number words are read ("oito da manhã" is "8 da manha" only then).
_AFTER_NUMBER_WORDS: Final = (_PAST_THE_HOUR, _DAY_HALF, _DAY_HALF, *_RATE_RULES, _FOR_EACH,  # (twice: a range's end)
                              _BUSINESS_WEEKS)
#: The word `_MARKS` writes for "this" / "este" before a time: read as the pole ``p:p_this``.
THIS: Final = "thistime"


#: Portuguese "um" / "uma" where it counts, not where it is an article: before a word and
#: "por" ("uma troca grátis por pedido", "um cupom por CPF"), or after "direito a" or a
#: restriction ("direito a uma troca", "só uma troca", "apenas um cupom"). Elsewhere it is
#: as often the article ("compara com uma loja", "um item complementar").
_ONE_PER_RE: Final = re.compile(r"\b(?:um|uma)\s+(?=[a-z]+(?:\s+[a-z]+)?\s+por\b)")
_ONE_RE: Final = re.compile(r"\b(direito a|direito de|apenas|somente|so|limite de|maximo de) (?:um|uma)\s+(?=[a-z])")


#: A capitalised word mid-sentence, between two words in lower case ("Recarga Oi tem"):
#: a name even when its folded form is a stop word (the carriers Oi and Vivo are "hi" and
#: "alive"); one capital letter after a word in lower case, before a word in lower case or
#: at a clause's end ("a loja D abre", "(unidade D)", "Plan A.", not the pronoun "I"), or a
#: consonant before a capitalised word ("loja D Shopping"; "Segunda A Sexta", "Sul E
#: Sudeste" are an article and "and"), names a thing, never an article or a unit (an
#: accented letter is a word: "O frete É grátis").
#: Title-cased text ("Frete Grátis Para Todo O Brasil") is not matched.
_NAMED_STOP_RE: Final = re.compile(
    r"(?<=[a-zà-ÿ] )(?:[A-ZÀ-Ý][a-zà-ÿ]+(?= [a-zà-ÿ])"
    r"|(?!I\b)(?:[A-Z](?=(?: [a-zà-ÿ0-9]|[.,;:!?)]|\s*$))|[B-DF-HJ-NP-TV-Z](?= [A-ZÀ-Ý])))")


def _named(match: re.Match[str], blind: bool) -> str:
    """A capitalised stop word or one capital letter as a name term ("Oi" -> "nomeqoi", "D"
    -> "nomeqd"); any other word as it is, and a letter in a `blind` text (`case_blind`:
    "Delivery One G").
    """
    word = match.group(0)
    if len(word) == 1:
        return word if blind else f"{_NAME_MARK}{fold(word).lower()}"
    return f"{_NAME_MARK}{fold(word).lower()}" if fold(word) in STOP_WORDS else word


#: In text all in capitals, a consonant standing alone after a word ("LOJA D ABRE", "PLANO
#: B."): a name; a vowel may be an article or "and" ("A", "E", "O"), a letter before "$" a
#: currency ("R$"), one after a number a unit ("9 H").
_CAPS_LETTER_RE: Final = re.compile(r"(?<=[A-ZÀ-Ý] )[B-DF-HJ-NP-TV-Z](?=[\s.,;:!?)]|$)")


def case_blind(text: str) -> bool:
    """True when `text`'s case cannot tell a name from a word: all in capitals, or every
    word capitalised ("Store A Opens At 9:00 AM").
    """
    starts = _WORD_START_RE.findall(text)
    return text.isupper() or (bool(starts) and all(w.isupper() for w in starts))


#: Each word's first letter (`case_blind`).
_WORD_START_RE: Final = re.compile(r"(?<![^\W\d_])[^\W\d_]")


def names_read(text: str) -> tuple[str, ...]:
    """The words `text` reads as names that a text in capitals or Title Case cannot tell
    from a word, in order, as often as they stand: one capital letter, a capitalised stop
    word ("A loja D abre" -> ("D",), "Recarga Oi tem" -> ("Oi",); `_NAMED_STOP_RE`,
    `_CAPS_LETTER_RE`; none in Title Case).
    """
    if text.isupper():
        return tuple(_CAPS_LETTER_RE.findall(text))
    if case_blind(text):
        return ()
    return tuple(m for m in _NAMED_STOP_RE.findall(text) if len(m) == 1 or fold(m) in STOP_WORDS)


def with_names(text: str, names: Sequence[str]) -> str:
    """`text` with `names` (`names_read` of another text) written as the names they are
    there, each where it first stands alone after a word, as often as the other text has
    it: how text in capitals or Title Case, where case cannot tell a name from an article
    ("STORE A OPENS", "RECARGA OI TEM"), is read beside one where it can ("PLAN A INCLUDES
    A FREE MONTH": the first "A" only).
    """
    for name, times in Counter(names).items():
        text = re.sub(rf"(?<=\w )(?i:{re.escape(name)})(?=[\s.,;:!?)]|$)",
                      f"{_NAME_MARK}{fold(name).lower()}", text, count=times)
    return text


#: The start of a name term `_named` writes: no word starts so, and no stemmer touches it
#: ("nomed" would read as a past tense).
_NAME_MARK: Final = "nomeq"


#: A fee that costs (folded): "the delivery fee costs $7", "a taxa de entrega custa R$ 7"
#: say the fee is that sum (the price word twice). Only fee words: "a full charge costs $12"
#: (an EV's) and "the cost price" are other things.
_FEE_COSTS_RE: Final = re.compile(
    r"\b(fees?|taxas?|tarifas?)((?:\s+(?:de|do|da|of|for|on)\s+[a-z]+|\s+[a-z]+(?=\s+costs?\b)){0,2})"
    r"\s+(costs?|custam?)\b")


#: A list's enumerator: "1)" or "2." opening a line, "3)" after a sentence's end, "Step 4:" /
#: "Passo 4 -" opening a line or a sentence; group 1 its number.
_ENUMERATOR_RE: Final = re.compile(
    r"(?:^|(?<=\n))[ \t]*(\d{1,2})[).][ \t]+(?=[^\W\d_])"
    r"|(?<=[.;:!?] )(\d{1,2})\)[ \t]+(?=[^\W\d_])"
    r"|(?:^|(?<=\n)|(?<=[.;!?] ))(?i:step|passo|etapa)[ \t]+(\d{1,2})[ \t]*[:.)-][ \t]*", re.MULTILINE)


def _enumerated(text: str) -> str:
    """`text` with a list's enumerators (`_ENUMERATOR_RE`) written as order words when they
    count 1, 2, 3... in order ("1) Submit the form. 2) Pay the $150 fee" claims $150, not
    1 and 2; the steps keep their order: "passoa", "passob"). A lone "18." after "Minimum
    age:", or "Step 2" in a sentence, is a value and stays.
    """
    found = list(_ENUMERATOR_RE.finditer(text))
    numbers = [int(next(g for g in m.groups() if g is not None)) for m in found]
    if len(numbers) < 2 or numbers != list(range(1, len(numbers) + 1)) or len(numbers) > 26:
        return text
    out, at = [], 0
    for k, match in enumerate(found):
        out += [text[at:match.start()], f"passo{chr(ord('a') + k)} "]
        at = match.end()
    return "".join([*out, text[at:]])


#: "US" and "U.S." written in capitals: the country (folded, it would read as "us", the business).
_US_RE: Final = re.compile(r"\bU\.?S\.?(?=\W|$)(?![\w$])")  # not "US$" (dollars)
_PORTUGUESE_MARKS: Final = re.compile("[\u00e3\u00f5\u00e7\u00c3\u00d5\u00c7]")


def _language(text: str, prepared: str) -> str:
    """``en``, ``pt`` or ``mixed`` (`analysis.text.text_language`); a short text whose stop
    words do not tell is Portuguese when it is written with ã, õ or ç ("Não, não aceitamos")
    or has a verb of the first person plural ("Aceitamos boleto": `_WE_VERB_ENDING`).
    A text whose only stop word is "no" is Portuguese ("Frete no Pix") unless its words are
    spelled as English only ("New members pay no enrollment fee": `_ENGLISH_SPELLING`,
    `_PORTUGUESE_SPELLING`).
    """
    lang = text_language(prepared)
    if lang == "mixed" and (_PORTUGUESE_MARKS.search(text) or _WE_VERB_ENDING.search(prepared)):
        return "pt"
    if lang == "pt" and _NO_RE.search(prepared) and text_language(_NO_RE.sub(" ", prepared)) == "mixed":
        # "no" alone: Portuguese ("Frete no Pix") unless the spelling is English ("New members pay no fee")
        english = _ENGLISH_SPELLING.search(prepared) and not _PORTUGUESE_SPELLING.search(prepared)
        return "en" if english and not _PORTUGUESE_MARKS.search(text) else "pt"
    return lang


#: A verb in the first person plural ("aceitamos", "trocamos", "devolvemos", folded): Portuguese.
_WE_VERB_ENDING: Final = re.compile(r"\b[a-z]{2,}(?:amos|emos|imos)\b")
#: The word "no", Portuguese "em o" or English "no" (`_language` reads the rest to tell).
_NO_RE: Final = re.compile(r"\bno\b")
#: Spellings only Portuguese words have (folded): "nh", "lh", "-dade(s)", "-cao"/"-coes", "-mente", "-agem".
_PORTUGUESE_SPELLING: Final = re.compile(r"[a-z]*(?:nh|lh)[a-z]*|\b[a-z]+(?:dades?|coes|cao|mente|agem|agens)\b")
#: Spellings only English words have (folded): "th", "wh", "w", "k", "y" inside a word, "-ing", "-tion", "-ness".
_ENGLISH_SPELLING: Final = re.compile(r"\b[a-z]*(?:th|wh|w|k|y)[a-z]*\b|\b[a-z]+(?:ing|tion|ness)s?\b")


#: Informal or abbreviated words read as the word they stand for (folded): "tá" is
#: "está", "hr" / "hrs" "hour".
_SPELLED_OUT: Final = {"ta": "esta", "hr": "hour", "hrs": "hours"}
#: Words that say a thing may be left out: "optional" is "not required" (`p_optional`, as
#: "you don't need to" reads).
_OPTIONAL_WORDS: Final = frozenset({"optional", "opcional", "opcionais", "facultativo", "facultativa",
                                    "facultativos", "facultativas"})
#: A value's "/" before a unit of what it is counted by ("$5/hr", "R$ 50/mês"): "per".
_PER_SLASH: Final = re.compile(
    r"(?<=[\w$%])\s*/\s*(?=(?:hr|hrs|h|hours?|horas?|days?|dias?|nights?|noites?|weeks?|semanas?|months?|mes|meses"
    r"|years?|anos?|persons?|person|people|pessoas?|kg|km|units?|unidades?|items?|itens|guests?|hospedes?)\b)")
#: A day range of one month ("de 1o a 15 de agosto", "from August 1 to 15"): each end a date.
_PT_DAY_RANGE: Final = re.compile(
    rf"\b(\d{{1,2}})o?\s+(a|ate|e)\s+(\d{{1,2}})\s+de\s+({'|'.join(MONTH_NAMES[12:])})\b")
_EN_DAY_RANGE: Final = re.compile(
    rf"\b({'|'.join(MONTH_NAMES[:12])})\s+(\d{{1,2}})(?:st|nd|rd|th)?\s+(to|through|until|and|-)\s+"
    r"(\d{1,2})(?:st|nd|rd|th)?\b(?!\s*(?:[:h]|am|pm|a\.m|p\.m|%|days?|hours?|nights?))")


#: "is required" / "are not required" with no agent after it: a requirement, read as
#: "mandatory" ("is required by the clinic" stays a passive with its agent); "é exigido" likewise.
_REQUIRED: Final = re.compile(r"\b(is|are|be|being|been)\s+(not\s+)?required\b(?!\s+by\b)")
#: Portuguese "é exigido" / "são exigidas" with no agent after it: "obrigatório".
_EXIGIDO: Final = re.compile(
    r"\b(ser|sao|sera|serao|esta|estao|e)\s+(nao\s+)?exigid([oa]s?)\b(?!\s+(?:por|pel[oa]s?)\b)")


def _spelled(prepared: str, portuguese: bool) -> str:
    """`prepared` with a value's "/" before a unit read as "per" / "por", a requirement said
    in the passive as "mandatory" / "obrigatório" (`_REQUIRED`, `_EXIGIDO`), and a day range
    of one month written as two dates ("de 1 de agosto a 15 de agosto").
    """
    if "/" in prepared:
        prepared = _PER_SLASH.sub(" por " if portuguese else " per ", prepared)
    if "required" in prepared:
        prepared = _REQUIRED.sub(r"\1 \2mandatory", prepared)
    if "exigid" in prepared:
        prepared = _EXIGIDO.sub(r"\1 \2obrigatori\3", prepared)
    if not any(c.isdigit() for c in prepared):
        return prepared  # no day range without a day's number
    if portuguese:
        return _PT_DAY_RANGE.sub(r"\1 de \4 \2 \3 de \4", prepared)
    return _EN_DAY_RANGE.sub(r"\1 \2 \3 \1 \4", prepared)


@lru_cache(maxsize=65536)
def _word_token(word: str, portuguese: bool, english: bool) -> str | None:
    """The token of one folded word (None: a stop word that carries nothing here)."""
    if word.startswith(_NAME_MARK):
        return word
    word = _ONE_WORD.get(word, word)
    word = _SPELLED_OUT.get(word, word)
    if word in _OPTIONAL_WORDS:
        return "p:p_optional"  # "é opcional" says "não é obrigatório"
    if english and (word in _DO_AUXILIARIES or word == "so"):
        return None  # "we do not ship": an auxiliary, not Portuguese "do" (de + o); "so" is no "só"
    if word in _UNSAID:
        return None  # "Unfortunately, we don't ship to Portugal" says what "We don't..." says
    if word == THIS:
        return "p:p_this"
    if word in CLAUSES:
        return f"c:{CLAUSES[word]}"
    if word == "no" and portuguese:
        return "r:em"
    if portuguese and word in _PT_BE:
        return None  # "se o voo for cancelado": "be", not English "for"
    if word in ROLES:
        return f"r:{ROLES[word]}"
    if word in POLES:
        return f"p:{POLES[word]}"
    if word in NEGATIONS:
        return "n"
    if word in CHANGE_VERBS:
        return WITHDRAWAL
    if word in PARTIES:
        return f"w:{PARTIES[word]}"
    if word in STOP_WORDS:
        return None
    if word in CLAIM_SYNONYMS:
        return CLAIM_SYNONYMS[word]
    if word in _KNOWN_NAME_TOKENS:  # "Sudeste: R$ 15" alone reads as no language: one token anyway
        return _KNOWN_NAME_TOKENS[word]
    if english and word.endswith("ns") and len(word) > 4:
        word = word[:-1]
    stemmed = stem_portuguese(word) if portuguese else stem(word)
    return CLAIM_SYNONYMS.get(stemmed) or STEM_SYNONYMS.get(stemmed, stemmed)


@lru_cache(maxsize=8192)
def tokens(text: str, *, active: bool = False, by_agent: bool = False) -> tuple[str, ...]:
    """`text` as its ordered tokens (see the module doc), with ``.`` and ``,`` boundaries.

    ``"5% on Pix, 3% on boleto"`` -> ``("m:5:%", "r:on", "pix", ",", "m:3:%", "r:on", "boleto")``.
    With `active`, a passive of the business's own operations that names no party in its
    subject reads as the business doing it (`BUSINESS_PASSIVES`: "orders are shipped free"
    as "we ship orders free"), and any other passive that names its agent reads as that
    agent doing it ("import duties are paid by the buyer" as "the buyer pays import
    duties"): the canonical form's reading, not the words as they stand (where a negation
    stands, for `polarity`). With `by_agent` too, a business passive that names its agent
    reads as that agent doing it ("the fee is refunded by the airline" as "the airline
    refunds the fee"), where without it the agent is how the business does it ("orders
    are shipped by FedEx", "enviados pelos Correios"): `structure` keeps both readings.
    """
    seq, passives, _ = _read(text)
    if not active:
        return seq
    out = _generic(_in_order(seq))
    shift = 0  # a rewrite adds the party, or drops the agent's "by": the positions after it move
    for at, agent in passives:
        at -= sum(1 for dropped in out.dropped if dropped < at)
        if at + shift >= len(out):
            continue
        if out[at + shift] in BUSINESS_PASSIVES and not (by_agent and agent):
            changed = _active(out, at + shift)
            shift += changed
            if not changed:
                _done_to_pronoun(out, at + shift)  # "we are charged a fee": someone charges us
        elif agent:
            shift += _agent_active(out, at + shift)
        else:
            _undone(out, at + shift)
    read: list[str] = _said_once(out)
    for step in (_price_of, _included_active, _free_for_active, _free_adverb, _only_if, _required_of, _plainly_said,
                 _prohibited, _day_ranges, _charged_once):  # each canonical reading, in this order
        read = step(read)
    return tuple(read)


#: A verb of charging that the price noun of its clause already says ("cobra uma taxa").
_CHARGE_VERBS: Final = frozenset({"cobr"})


def _charged_once(out: list[str]) -> list[str]:
    """`out` with a charge said once per clause: "a $12 fee is charged", "we charge a $12
    fee", "cobra-se uma taxa de R$ 12" and "há uma taxa de R$ 12" all read as the fee
    (``s_price``), not a fee and a charging of it.
    """
    if out.count("s_price") < 2 and not _CHARGE_VERBS & set(out):
        return out
    result: list[str] = []
    start = 0
    for end in [*(i for i, t in enumerate(out) if t in (SENTENCE, PHRASE) or t.startswith("c:")), len(out)]:
        clause = out[start:end]
        if "s_price" in clause:  # (two side by side are one compound noun: "the cost price")
            first = clause.index("s_price")
            clause = [t for i, t in enumerate(clause) if t not in _CHARGE_VERBS
                      and (t != "s_price" or i == first or clause[i - 1] == "s_price")]
        result += clause
        if end < len(out):
            result.append(out[end])
        start = end + 1
    return result


#: Words that join two days into a range ("Monday to / through / until Friday", "de segunda a /
#: até sexta"); two days side by side are one too ("Mon-Fri", "de segunda a sexta": "a" is no word).
_DAY_RANGE_JOINS: Final = frozenset({"r:to", "r:through", "r:thru", "r:until", "r:till", "r:ate"})


def _day_ranges(out: list[str]) -> list[str]:
    """`out` with each range of days said one way: "from Monday to Friday", "Monday through
    Friday", "Mon-Fri", "de segunda a sexta" as ``r:from d:wd1 r:to d:wd5``. Days joined by
    "and" / "e" or commas are a list and stay.
    """
    result: list[str] = []
    at = 0
    while at < len(out):
        token = out[at]
        if token.startswith(WEEKDAY_PREFIX):
            joined = at + 2 < len(out) and out[at + 1] in _DAY_RANGE_JOINS and out[at + 2].startswith(WEEKDAY_PREFIX)
            beside = at + 1 < len(out) and out[at + 1].startswith(WEEKDAY_PREFIX)
            if joined or beside:
                if result and result[-1] in ("r:from", "r:de"):
                    result.pop()
                result += ["r:from", token, "r:to", out[at + (2 if joined else 1)]]
                at += 3 if joined else 2
                continue
        result.append(token)
        at += 1
    return result


def _prohibited(out: list[str]) -> list[str]:
    """`out` with a prohibition said three ways read as one: "must not X" and "are not allowed
    to X" as "cannot X" (``p:p_can n``). "Do not have to" (a negation before "must") is no
    prohibition and stays.
    """
    result: list[str] = []
    at = 0
    while at < len(out):
        token = out[at]
        if token == "p:p_must" and at + 1 < len(out) and out[at + 1] == "n":
            result += ["p:p_can", "n"]
            at += 2
        elif token == "n" and out[at + 1:at + 3] == ["s_allow", "r:to"] and at + 3 < len(out) \
                and plain_word(out[at + 3]):
            result += ["p:p_can", "n"]
            at += 3
        else:
            result.append(token)
            at += 1
    return result


#: Opening and closing, each the other negated.
_OPEN_SHUT: Final = {"p:p_open": "p:p_close", "p:p_close": "p:p_open"}
#: Verbs of staying in a state ("fica", "stays", "remains", "permanece") before open or closed.
_STAYS: Final = frozenset({"fic", "stay", "remaim", "remain", "permanec"})


def _timed(token: str) -> bool:
    """True when `token` places an opening or a closing in time: an hour or a bound before
    one ("does not open before 7 am" is no "closes before 7 am").
    """
    return token.endswith(":hour") or token in _BOUND_POLES or token in ("p:p_before", "p:p_after")


#: The tokens of a condition: "if", "se", "provided", "when", "quando", "unless" (not "and" / "or").
CONDITION_TOKENS: Final = frozenset({"c:if", "c:when", "c:unless"})
#: What makes a future habitual: a condition's or an event's time ("will refund the ticket if
#: the flight is cancelled", "vai enviar um lembrete um dia antes da consulta"), every time,
#: every weekday ("will close at 10 p.m. on weekdays"). "We will ship on Monday" stays a future.
_HABITUAL: Final = frozenset({"p:p_before", "p:p_after", "p:p_all", "weekday", "weekend"})
#: The bounds a "with" may open ("gatos com mais de 8 kg": "gatos acima de 8 kg").
_BOUND_POLES: Final = frozenset({"p:p_above", "p:p_below", "p:p_at_least", "p:p_at_most"})
#: The roles that may stand before a bound and say nothing there ("com" / "de menos de 8
#: pessoas"; "de" / "of" not before a price).
_BOUND_ROLES: Final = frozenset({"r:com", "r:with", "r:de", "r:of"})


def _plainly_said(out: list[str]) -> list[str]:
    """`out` with four ways of saying one thing read as one: "with" or "of" before a bound
    ("cats with more than 8 kg", "gatos com / de mais de 8 kg") as the bound alone; "open until 6 pm"
    ("aberto até as 18h") as "closes at 6 pm"; a state of opening stayed in or negated at no
    time ("fica fechada", "não abre aos domingos") as its pole ("fecha aos domingos"); and a
    future in a sentence that names its calendar date ("will be closed on 24 December 2025")
    as the present the date already places ("On Dec. 24, 2025, the library is closed"), or
    that says when it recurs
    (`_HABITUAL`: a condition, an event's time, every time) as the present of a standing rule.
    """
    result: list[str] = []
    flipped = -1  # where a negated opening or closing was read as its other pole
    for at, token in enumerate(out):
        following = out[at + 1] if at + 1 < len(out) else ""
        if at == flipped:
            result.append(_OPEN_SHUT[token])
            continue
        if token in _BOUND_ROLES and following in _BOUND_POLES and (
                token in ("r:com", "r:with") or not (at + 2 < len(out) and priced(out[at + 2]))):
            continue  # (a price's "de" stays: "Descontos de até 50%" is "Até 50% de desconto")
        if token == "p:p_at_most" and result and result[-1] == "p:p_open" and following.endswith(":hour"):
            result[-1] = "p:p_close"
            continue
        if token in _STAYS and following in _OPEN_SHUT:
            continue  # "fica fechada", "stays open": the state itself
        if following in _OPEN_SHUT and token == "n" and (at + 2 >= len(out) or not _timed(out[at + 2])):
            flipped = at + 1  # "não abre aos domingos" is "fecha aos domingos"
            continue
        result.append(token)
    if FUTURE in result:
        sentences, start = [], 0
        for at, token in enumerate([*result, SENTENCE]):
            if token == SENTENCE:
                sentence = result[start:at]
                if any((t.startswith("d:") and is_calendar_date(t)) or t in CONDITION_TOKENS or t in _HABITUAL
                       for t in sentence):
                    sentence = [t for t in sentence if t != FUTURE]
                sentences.append(sentence)
                start = at + 1
        last = len(sentences) - 1
        result = [t for i, sentence in enumerate(sentences) for t in (*sentence, *([SENTENCE] if i < last else []))]
    return result


#: A requirement's poles: "must" and "need not" (`p_optional`).
_REQUIREMENTS: Final = frozenset({"p:p_must", "p:p_optional"})


def _required_of(out: list[str]) -> list[str]:
    """`out` with each clause "X is mandatory / optional (for Y)" read as "(Y) must / need
    not X" ("Two-factor authentication is mandatory for all holders" as "All holders must
    two-factor authentication"; "O seguro é opcional na contratação" as "não precisa o seguro
    na contratação"), and the light verb right after a requirement left out ("must use
    two-factor authentication", "tem que fazer o teste", "não é obrigatório fazer seguro",
    "o uso de capacete"): what is required is the thing, whichever verb carries it.
    """
    if not _REQUIREMENTS & set(out):
        return out
    return _by_clause(_fronted_for(out, _REQUIREMENTS), _requirement_first)


def _requirement_first(clause: list[str]) -> list[str]:
    """One clause of `_required_of`."""
    at = next((i for i, t in enumerate(clause) if t in _REQUIREMENTS), None)
    if at is None or sum(1 for t in clause if t in _REQUIREMENTS) != 1:
        return clause
    pole = clause[at]
    if at and (at + 1 == len(clause) or clause[at + 1].startswith("r:")) \
            and not any((t.startswith(("w:", "p:")) and t != "p:p_all") or t == "n" for t in clause[:at]):
        subject, rest = clause[:at], clause[at + 1:]
        if len(rest) > 1 and rest[0] in _FREE_FOR and _names_who(rest[1]) \
                and not any(t.startswith("r:") for t in rest[1:]):
            clause = [*rest[1:], pole, *subject]  # "... é obrigatório para novos alunos"
        else:
            clause = [pole, *subject, *rest]  # "... is optional on the guided tour"
        at = clause.index(pole)
    after = clause[at + 1:]
    if len(after) > 2 and after[0] in _light_verbs() and after[1] in _OF_ROLES:
        return [*clause[:at + 1], *after[2:]]  # "o uso de capacete", "the use of"
    if len(after) > 1 and after[0] in _light_verbs() and (plain_word(after[1]) or after[1].startswith("m:")):
        return [*clause[:at + 1], *after[1:]]
    return clause


@lru_cache(maxsize=1)
def _light_verbs() -> frozenset[str]:
    """The verbs that carry what a requirement requires without saying more (as `tokens` reads them)."""
    return frozenset(
        t for w in "use using usar uso wear wearing make fazer faz have ter".split()
        for pt in (False, True) if (t := _word_token(w, pt, not pt)) is not None)


#: The price word of a thing ("a taxa de matrícula", "the price of", "custa").
_PRICE: Final = "s_price"


def _price_of(out: list[str]) -> list[str]:
    """`out` with each clause "the fee of X is (of) V" read as "X costs V" ("A taxa de
    matrícula é de R$ 99" as "A matrícula custa R$ 99"): the price word, "of", the words of
    the thing, an optional "of", then a sum of money.
    """
    if _PRICE not in out:
        return out
    return _by_clause(out, _price_swapped)


def _price_swapped(clause: list[str]) -> list[str]:
    if len(clause) < 4 or clause[0] != _PRICE or clause[1] not in _OF_ROLES:
        return clause
    end = 2
    while end < len(clause) and plain_word(clause[end]):
        end += 1
    value = end + 1 if end < len(clause) and clause[end] in _OF_ROLES else end
    if end == 2 or value >= len(clause) or not _is_money(clause[value]):
        return clause
    return [*clause[2:end], _PRICE, *clause[value:]]


def _only_if(out: list[str]) -> list[str]:
    """`out` with "not X unless Y" read as "X only if Y" (the same condition: X needs Y),
    after "we only X if Y" is read as "we X only if Y" (`_only_before_if`):
    a clause with one negation near its start (`_NEGATION_OPENS`) and no modal, then "unless"
    ("We do not issue refunds unless...", "No refunds are given unless...", "Não
    reembolsamos a menos que...", "O cartão não será desbloqueado a não ser que...") loses
    the negation and says "only if".
    """
    out = _only_before_if(out)
    if _UNLESS not in out:
        return out
    at = out.index(_UNLESS)
    end = at - 1 if at and out[at - 1] == PHRASE else at  # "não trocamos, a menos que"
    start = end
    while start and out[start - 1] not in (SENTENCE, PHRASE, LABEL) and not out[start - 1].startswith("c:"):
        start -= 1
    clause = out[start:end]
    # the negation is the clause's own ("we do not issue", "não reembolsamos"), not a noun's
    # ("orders not picked up") nor a modal's ("must not": "may only if", not "must only if")
    if len(clause) < 2 or clause.count("n") != 1 or clause.index("n") > _NEGATION_OPENS \
            or any(t.startswith("p:") for t in clause):
        return out
    negation = start + clause.index("n")
    return [*out[:negation], *out[negation + 1:end], "p:p_only", "c:if", *out[at + 1:]]


#: How far into its clause the negation "unless" turns may stand: first ("No refunds are
#: given unless"), after the party ("We do not issue"), or after a subject and its tense ("O
#: cartão não será desbloqueado a não ser que"), or after a condition said first ("Sem
#: etiqueta não trocamos, a menos que").
_NEGATION_OPENS: Final = 3


def _only_before_if(out: list[str]) -> list[str]:
    """`out` with an "only" said beside "we" before the verb moved to the condition it
    restricts: "We only refund if ..." / "Só fazemos troca se ..." is "we refund / fazemos
    troca only if ..." ("Only members can return items if ..." keeps its "only": members).
    """
    if "p:p_only" not in out or "c:if" not in out:
        return out
    at = out.index("p:p_only")
    beside_we = (at + 1 < len(out) and out[at + 1] == WE) or (at and out[at - 1] == WE)
    condition = out.index("c:if", at) if "c:if" in out[at:] else -1
    between = out[at + 1:condition]
    if not beside_we or condition < 0 or any(t.startswith(("p:", "c:")) or t in (SENTENCE, PHRASE) for t in between):
        return out
    return [*out[:at], *between, "p:p_only", *out[condition:]]


#: "unless" as a token.
_UNLESS: Final = "c:unless"


def _is_money(token: str) -> bool:
    """True for a sum of money as a token ("m:99:brl", "m:10:usd": `numbers.CURRENCIES`)."""
    return token.startswith("m:") and token.rsplit(":", 1)[-1] in _MONEY_UNITS


_MONEY_UNITS: Final = frozenset(CURRENCIES.values())
#: The units of a price: a sum of money or a share ("R$ 60", "20%").
PRICE_UNITS: Final = _MONEY_UNITS | {"%"}


def priced(token: str) -> bool:
    """True for a price as a token: a sum of money or a share ("m:60:brl", "m:20:%")."""
    return token.startswith("m:") and token.split(":")[2] in PRICE_UNITS


#: The words after "included" that name what includes it ("in the rate", "with every
#: policy", "na diária").
_INCLUDED_IN: Final = frozenset({"r:in", "r:with", "r:em"})


def _included_active(out: list[str]) -> list[str]:
    """`out` with each clause "X is included in Y" read as "Y includes X" ("Breakfast is
    included in all room rates" as "All room rates include breakfast"; "O café está
    incluído na diária" as "A diária inclui o café"): the passive of "include", whose
    agent follows "in", "with" or "em" instead of "by". A negation stays before the verb.
    """
    if "p:p_include" not in out:
        return out
    return _by_clause(out, _include_swapped)


def _include_swapped(clause: list[str]) -> list[str]:
    """One clause of `_included_active`: swapped when it is ``X [n] p_include in Y``."""
    if clause.count("p:p_include") != 1:
        return clause
    at = clause.index("p:p_include")
    if at + 1 >= len(clause) or clause[at + 1] not in _INCLUDED_IN:
        return clause
    negated = at > 0 and clause[at - 1] == "n"
    subject = clause[:at - 1] if negated else clause[:at]
    agent = clause[at + 2:]
    if not subject or not agent:
        return clause
    return [*agent, *(["n"] if negated else []), "p:p_include", *subject]


#: The roles after "free" that name who or what gets it ("free for members", "grátis para
#: pedidos acima de R$ 50"; not "on" / "em", as often a time: "free on Tuesdays").
_FREE_FOR: Final = frozenset({"r:for", "r:para"})


def _free_for_active(out: list[str]) -> list[str]:
    """`out` with each clause "X is free for Y" read as "Y get free X" ("Shipping is free for
    members" as "Members get free shipping"; "O frete é grátis para pedidos acima de R$ 50"
    as "Pedidos acima de R$ 50 têm frete grátis").
    """
    if "s_free" not in out:
        return out
    return _by_clause(_fronted_for(out), _free_swapped)


def _free_adverb(out: list[str]) -> list[str]:
    """`out` without the "for" of "for free" right after a verb's particle ("Kids under 3 get
    in for free" as "... get in free"): it says nothing there. Elsewhere it stays ("For free:
    orders ship" is read with "Orders ship for free" by the phrases' order).
    """
    if FREE not in out:
        return out
    return [t for i, t in enumerate(out) if not (
        t == "r:for" and 0 < i < len(out) - 1 and out[i + 1] == FREE and out[i - 1].startswith("r:"))]


def _fronted_for(out: list[str], poles: frozenset[str] = frozenset({"s_free"})) -> list[str]:
    """`out` with a fronted "For Y, X is free" read as "X is free for Y" (`_free_swapped`
    then reads it as "Y get free X", as it reads the phrase in its place); with `poles`,
    any of them in place of "free" ("Para os pacotes internacionais, o seguro é obrigatório").
    """
    i = 0
    while i < len(out):
        start = i == 0 or out[i - 1] in (SENTENCE, PHRASE, LABEL)
        if start and out[i] in _FREE_FOR:
            end = next((j for j in range(i, len(out)) if out[j] in (SENTENCE, PHRASE, LABEL)), len(out))
            after = next((j for j in range(end + 1, len(out)) if out[j] in (SENTENCE, PHRASE, LABEL)), len(out))
            rest = out[end + 1:after]
            if end < len(out) and out[end] == PHRASE and rest and rest[-1] in poles \
                    and sum(1 for t in rest if t in poles) == 1 \
                    and i + 1 < end and _names_who(out[i + 1]):
                out = [*out[:i], *rest, *out[i:end], *out[after:]]
        i += 1
    return out


def _free_swapped(clause: list[str]) -> list[str]:
    """One clause of `_free_for_active`: swapped when it is ``X s_free for Y``."""
    if clause.count("s_free") != 1:
        return clause
    at = clause.index("s_free")
    if at == 0 or at + 2 > len(clause) - 1 or clause[at + 1] not in _FREE_FOR:
        return clause
    if not _names_who(clause[at + 2]):
        return clause
    return [*clause[at + 2:], *clause[:at], "s_free"]


def _names_who(token: str) -> bool:
    """True when `token`, right after "free for", can name who gets it: not a value, a
    date, a pole, a tense, nor a word of time ("free for 2 hours", "for now").
    """
    return not token.startswith(("m:", "d:", "p:", "t:")) and token not in _not_who()


@lru_cache(maxsize=1)
def _not_who() -> frozenset[str]:
    """Words after "free for" that name a time, not who gets it (as `tokens` reads them)."""
    return frozenset(
        t for w in "now agora today hoje while enquanto life vida ever sempre limited limitado".split()
        for pt in (False, True) if (t := _word_token(w, pt, not pt)) is not None)


def _by_clause(out: list[str], rewrite: Callable[[list[str]], list[str]]) -> list[str]:
    """`out` with `rewrite` applied to each clause (the tokens between two phrase breaks,
    labels or connectives), the breaks kept.
    """
    result: list[str] = []
    clause: list[str] = []
    for token in [*out, None]:
        if token is None or token in (SENTENCE, PHRASE, LABEL) or token.startswith("c:"):
            result += rewrite(clause)
            clause = []
            if token is not None:
                result.append(token)
        else:
            clause.append(token)
    return result


def _said_once(out: list[str]) -> list[str]:
    """`out` without a "by us" after a clause the business already does ("All orders are
    shipped by us from..." reads "we ship all orders from..."): the agent said twice.
    """
    i = 1
    while i + 1 < len(out):
        if out[i] == "r:by" and out[i + 1] == WE:
            start = i
            while start and out[start - 1] not in (SENTENCE, PHRASE) and not out[start - 1].startswith("c:"):
                start -= 1
            if WE in out[start:i]:
                del out[i:i + 2]
                continue
        i += 1
    return out


def _in_order(seq: tuple[str, ...]) -> tuple[str, ...]:
    """`seq` with what word order does not change put in one order (same length, so the
    passive positions hold): "free" after the word it qualifies ("free shipping" as
    "shipping (is) free"), and two single words joined by "and" / "or" that close their
    clause sorted ("we accept Visa and Mastercard", "para o Sul e o Sudeste"). Words joined
    inside a clause keep their order ("we cancel and rebook the flight": a sequence).
    """
    out = list(seq)
    for i in range(len(out) - 1):
        if out[i] == FREE and _is_content(out[i + 1]) and out[i + 1][:2] not in ("m:", "d:") \
                and out[i + 1] != FREE:
            out[i], out[i + 1] = out[i + 1], out[i]
    for i in range(1, len(out) - 1):
        if out[i] in JOINS and _single(out, i - 1) and _single(out, i + 1) \
                and (i + 2 == len(out) or out[i + 2] in (SENTENCE, PHRASE)) and out[i - 1] > out[i + 1]:
            out[i - 1], out[i + 1] = out[i + 1], out[i - 1]
        elif out[i] in JOINS:
            _sort_ways(out, i)
    return tuple(out)


def _sort_ways(out: list[str], at: int) -> None:
    """Two ways joined by "and" / "or" at `at` that close their clause, each a role word and
    its word or a pole ("online or by phone", "by email or by phone", "pelo app ou no
    site"), put in one order, in place. A way with a value or a third conjunct keeps its
    place ("5% on Pix and 3% on boleto" is two claims, not a list).
    """
    right = _way(out, at + 1, forward=True)
    left = _way(out, at - 1, forward=False)
    if right is None or left is None:
        return
    end = at + 1 + len(right)
    start = at - len(left)
    if not (end == len(out) or out[end] in (SENTENCE, PHRASE)):
        return
    if start and (out[start - 1] in JOINS or out[start - 1][:2] in ("m:", "d:")):
        return
    if left > right:
        out[start:end] = [*right, out[at], *left]


def _way(out: list[str], at: int, *, forward: bool) -> list[str] | None:
    """The way that starts (`forward`) or ends at `at`: a role word and a plain word, or a
    pole alone ("p:p_online"); None when there is none.
    """
    if not 0 <= at < len(out):
        return None
    if forward:
        if out[at].startswith("r:") and at + 1 < len(out) and plain_word(out[at + 1]):
            return out[at:at + 2]
        return [out[at]] if out[at].startswith("p:") else None
    if plain_word(out[at]) and at >= 1 and out[at - 1].startswith("r:"):
        return out[at - 1:at + 1]
    return [out[at]] if out[at].startswith("p:") else None


#: The words that join a list ("and", "or", "e", "ou").
JOINS: Final = frozenset({"c:and", "c:or"})


def _single(out: list[str], at: int) -> bool:
    """True when `out[at]` is a content word (no value) that stands alone in its conjunct."""
    return plain_word(out[at])


def plain_word(token: str) -> bool:
    """True when `token` is a content word: no value, no date, not "free" ("orders" in
    "orders placed before 2 pm", not "2" in "2 checked bags").
    """
    return _is_content(token) and token[:2] not in ("m:", "d:") and token != FREE


class _Tokens(list[str]):
    """Tokens being rewritten, with the positions (in the text's reading) dropped so far."""

    dropped: tuple[int, ...] = ()


def _generic(seq: tuple[str, ...]) -> _Tokens:
    """`seq` without the universal determiners that only make a noun generic: "every order
    above R$ 199 ships free" and "each passenger checks two bags" say what "orders above R$
    199 ship free" and "a passenger checks two bags" say. One is kept after a negation
    ("not every order": some) or a value ("R$ 10 each", "$50 cada": per unit), and where no
    content word follows it.
    """
    out = _Tokens()
    dropped = []
    for i, token in enumerate(seq):
        if token == _UNIVERSAL and i + 1 < len(seq) and _is_content(seq[i + 1]) \
                and seq[i + 1][:2] not in ("m:", "d:") \
                and not (i and (seq[i - 1] == "n" or seq[i - 1][:2] in ("m:", "d:"))):
            dropped.append(i)
            continue
        out.append(token)
    out.dropped = tuple(dropped)
    return out


_UNIVERSAL: Final = "p:p_all"


@lru_cache(maxsize=8192)
def _read(text: str) -> tuple[tuple[str, ...], tuple[tuple[int, bool], ...], frozenset[int]]:
    """`text`'s tokens as they stand, the passives in them (the position of each content
    word right after "be", a participle, and whether an agent's "by" / "pelo" follows it),
    and which of its phrase breaks are colons, counted among the phrase breaks (read once
    for both of `tokens`' readings; `structure` binds a label to its value).
    """
    prepared = _prepare(text)
    lang = _language(text, prepared)
    portuguese, english = lang == "pt", lang == "en"
    prepared = _spelled(prepared, portuguese)
    spans = _dates(prepared, lang)
    blanked = list(prepared)
    for span in spans:
        blanked[span.start:span.end] = " " * (span.end - span.start)
    rest = "".join(blanked)
    spans += _measures(rest)
    blanked = list(rest)
    for span in spans:
        blanked[span.start:span.end] = " " * (span.end - span.start)
    rest = "".join(blanked)
    for match in CHANGE_PHRASES.finditer(rest):
        spans.append(_Span(match.start(), match.end(), WITHDRAWAL))
    taken = list(rest)
    for span in spans:
        taken[span.start:span.end] = " " * (span.end - span.start)
    rest = "".join(taken)
    for match in _POLE_PHRASE_RE.finditer(rest):
        spans.append(_Span(match.start(), match.end(), f"p:{POLES[match.group(0)]}"))
    spans.sort(key=lambda s: s.start)
    out: list[str] = []
    passives: list[tuple[int, bool]] = []
    members: list[str] = []  # the word stem of each synonym-group token, in order
    colons: list[int] = []  # the phrase breaks that are colons, by their count
    phrase_breaks = 0
    at = 0
    auxiliary = False  # the last word read was "be" ("are", "são", "é"), perhaps with "not" after it
    done_to_person = False  # that "be" follows "who" / "quem": the passive's subject is a person
    person_after = False  # the token being read is such a passive's participle
    who_opens = False  # the last "who" / "quem" read opened its clause (no noun before it)
    previous = ""  # the last word read
    for span in [*spans, _Span(len(prepared), len(prepared), "")]:
        for piece in _PIECE_RE.findall(rest, at, span.start) if at < span.start else ():
            if piece[0].isalnum():
                token = _word_token(piece, portuguese, english)
                if previous in _GOING and _INFINITIVE_RE.match(piece):
                    out.append(FUTURE)  # "vai enviar": a future ("não vai na mala" goes, now)
                if piece in _GOING or piece in _HAPPENS or (auxiliary and piece in _LIGHT_PARTICIPLES):
                    token = None  # "a entrega é feita na portaria": "a entrega é na portaria"
                elif piece in _TENSE_WORDS and not (piece == "got" and previous in _PERFECT):  # "we've got": have
                    token = _TENSE_WORDS[piece]  # "were", "will", "should", "foram": when, or how sure
                elif piece in _NEEDS:
                    token = "p:p_must"  # "customers need a receipt", as "precisa" reads
                if token == "p:p_must" and piece in _NEED_WORDS and out and out[-1] == "n":
                    out.pop()
                    token = "p:p_optional"  # "you don't need to", "não precisa": may, not "must not"
                elif token == "n" and out and out[-1] == "p:p_must" and previous in _NEEDS:
                    out.pop()
                    token = "p:p_optional"  # "passengers need not print" (not "precisa não pagar": must not)
                if token is not None:
                    if portuguese and _is_content(token) and _WE_VERB_RE.match(piece) \
                            and piece not in _NOT_WE_VERBS and WE not in out[-2:]:
                        # "trocamos": we (the business) exchange; "não trocamos": the party
                        # before the negation, as "we do not exchange" reads
                        at = len(out)
                        while at and (out[at - 1] == "n" or out[at - 1].startswith("t:")):
                            at -= 1
                        out.insert(at, WE)
                    if (_is_content(token) or token in _CHANGE_POLES) and previous not in _PERFECT \
                            and _past_form(piece, portuguese, english, auxiliary):
                        out.append(PAST)  # "we shipped", "a loja aceitava", "enviou"
                    elif not english and _is_content(token) and _PT_FUTURE_RE.match(piece):
                        out.append(FUTURE)  # "enviaremos"
                    elif piece in _HEDGES:
                        out.append(CONDITIONAL)  # "could", "poderia": "can", hedged
                    elif (token == STORE and (not out or out[-1] in (SENTENCE, PHRASE) or _after_when(out))) or (
                            piece in _OWN_NOUNS and (not out or out[-1] == SENTENCE)):
                        # ("On the corporate plan, the company pays half": the customer's employer)
                        token = WE  # "A loja troca ...", "De segunda a sábado, a loja abre": the business
                    if done_to_person and _is_content(token):  # "who is referred": a person is referred
                        person_after = token not in PARTY_TERMS  # "quem é cliente" says what they are
                    if auxiliary and _is_content(token):
                        passives.append((len(out), False))
                    elif piece in _AGENT_BY and passives and passives[-1][0] == len(out) - 1:
                        passives[-1] = (passives[-1][0], True)  # "are served by the Campinas DC"
                    if piece in _CHARGE_WORDS and out and out[-1] == FREE:
                        token = ""  # "no fee is charged", "free of charge": free, said once
                    elif piece in _CHARGE_WORDS and _uncharged(out, previous == "no"):
                        token = FREE  # "we don't charge for returns", "não cobramos frete": free
                    elif piece in _PAY_WORDS and len(out) > 1 and out[-1] == "n" and out[-2] in _PAYERS:
                        del out[-2:]
                        token = FREE  # "you never pay shipping", "o cliente não paga frete": shipping is free
                    elif piece == "any" and token == "p:p_all":
                        token = "p:p_any"  # "not any" is none, "not all" some: never read alike
                    if token.startswith("s_"):
                        members.append((stem_portuguese if portuguese else stem)(piece))
                    if token:
                        out.append(token)
                    if person_after:
                        out.append(_PERSON)  # "who is referred": a person it is done to
                        person_after = False
                if piece in _WHO:  # "who" opening its clause; after a noun ("customers who
                    # are referred") the noun is the subject, which `_undone` reads
                    who_opens = not out or not _is_content(out[-1])
                done_to_person = (piece in _WHO_BE and previous in _WHO and who_opens) or (
                    done_to_person and (token in (None, "n") or str(token).startswith("t:")))
                auxiliary = piece in _BE or (portuguese and piece in _PT_BE) or (
                    auxiliary and token in (None, "n") and piece not in _DO_AUXILIARIES)
                previous = piece
            elif piece[0] in ".!?;\n":
                out.append(SENTENCE)
                auxiliary = False
            else:
                if piece == ":":
                    colons.append(phrase_breaks)
                phrase_breaks += 1
                out.append(PHRASE)
                auxiliary = False
        if span.token:
            if out and out[-1] in _RANGE_OPENERS and _RANGE_RE.match(span.token):
                out.pop()  # "between 3 and 5 days", "de 3 a 5 dias": the range's own words
            elif out and out[-1] in _CLOCK_ROLES and span.token.endswith(":hour"):
                out.pop()  # "às 14h", "at 2 pm": the time's own word ("14:00", "2 pm" say it alike)
            token = span.token
            if token == "p:p_must" and out and out[-1] == "n" \
                    and prepared[span.start:span.end].split()[0] in _NEED_WORDS:
                out.pop()
                token = "p:p_optional"  # "you don't need to": may, not "must not"
            out.append(token)
        at = max(at, span.end)
    if portuguese:
        _drop_articles(out, passives)
    return tuple(_told_apart(out, members)), tuple(passives), frozenset(colons)


def _drop_articles(out: list[str], passives: list[tuple[int, bool]]) -> None:
    """Drop the Portuguese article "as" read as the role "às" where a sentence or a phrase
    opens with it, or a content word (a verb) comes before it, and a noun after it ("As
    trocas são feitas só na loja física": the exchanges, not "at the exchanges"; "O
    professor corrige as redações"); "Às 9h", "Às segundas" keep their role. The passives'
    positions follow.
    """
    at = 0
    while at + 1 < len(out):
        if out[at] == "r:as" and (at == 0 or out[at - 1] in (SENTENCE, PHRASE) or plain_word(out[at - 1])) \
                and plain_word(out[at + 1]):
            del out[at]
            passives[:] = [(p - 1 if p > at else p, agent) for p, agent in passives]
            continue
        at += 1


def _told_apart(out: list[str], members: list[str]) -> list[str]:
    """`out` with the synonym-group tokens of a sentence that negates one of two words of
    one group told apart by their words: "Reembolsamos a taxa, não a tarifa" holds a fee
    and a fare, which `CLAIM_SYNONYMS` would read as one price, and its swap would restate
    it. `members` holds each ``s_`` token's word stem, in order.
    """
    if len(set(members)) < 2:
        return out
    found = iter(members)
    stems = [next(found) if t.startswith("s_") else "" for t in out]
    start = 0
    for end in [*(i for i, t in enumerate(out) if t == SENTENCE), len(out)]:
        sentence = range(start, end)
        if any(out[i] == "n" for i in sentence):
            words: dict[str, set[str]] = {}
            for i in sentence:
                if stems[i] and out[i] != FREE:
                    words.setdefault(out[i], set()).add(stems[i])
            for i in sentence:
                if len(words.get(out[i], ())) > 1:
                    out[i] = f"{out[i]}~{stems[i]}"
        start = end + 1
    return out


#: The words that name a passive's agent right after its participle ("served by", "atendidos
#: pelo"); bare "por" is as often "per" ("cobrados por item") and is not one.
_AGENT_BY: Final = frozenset("by pelo pela pelos pelas".split())


#: Words that charge for something: after a negation ("we don't charge", "não cobramos",
#: "there is no fee") they say it is free (`FREE`, the negation dropped).
_CHARGE_WORDS: Final = frozenset(
    "charge charges charged charging cost costs fee fees cobra cobram cobramos cobrar cobrado cobrada "
    "cobrados cobradas custa custam taxa taxas tarifa tarifas".split())
FREE: Final = "s_free"
#: Paying words, and the party whose not paying makes a thing free: the customer
#: addressed ("you never pay shipping"; not "we": the store not paying return shipping
#: means the customer does). "O cliente não paga o frete" is left as it reads: read as
#: free, the demo's return policy became a rule of the damaged-product procedure's kind
#: and the semantic index held that procedure as its possible duplicate (cosine 0.8185).
_PAY_WORDS: Final = frozenset("pay pays paying paga pagam pagar".split())
_PAYERS: Final = frozenset({"w:you"})
#: English "need", "mandatory" (and "is required", `_REQUIRED`), Portuguese "exige", "requer"
#: (a requirement, as "must" and "precisa" are); "get" is a filler.
_NEEDS: Final = frozenset("need needs needed exige exigem exigimos mandatory compulsory requer requerem".split())
#: Words of need whose negation leaves a choice ("não precisa", "not required"), unlike a
#: negated "must" / "deve" (forbidden).
_NEED_WORDS: Final = frozenset(
    "need needs needed required mandatory necessary precisa precisam precisar precisamos necessario necessaria "
    "necessarios necessarias obrigatorio obrigatoria obrigatorios obrigatorias exige exigem exigimos compulsory "
    "requer requerem".split())


def _uncharged(out: list[str], determiner: bool = False) -> bool:
    """True when `out` ends with a negation, perhaps followed by a party ("não" + "we"), and
    drops that negation: the charging word after it reads as free. A negation right after
    a comma contrasts ("we refund the fee, not the fare") unless it is the `determiner`
    "no" ("1-3 months, no fee").
    """
    at = len(out) - 1
    while at >= 0 and out[at].startswith("w:"):
        at -= 1
    if at < 0 or out[at] != "n" or (at and out[at - 1] == PHRASE and not determiner):
        return False  # a negation right after a comma contrasts: "we refund the fee, not the fare"
    del out[at]
    return True


#: Tense and modality, when a rule holds or how sure it is: a past, future or hedged
#: rule is another claim than the rule as it stands ("orders were shipped free", "will
#: be", "should be" are not "we ship orders free").
PAST: Final = "t:past"
FUTURE: Final = "t:future"
CONDITIONAL: Final = "t:conditional"
_TENSE_WORDS: Final[dict[str, str]] = {
    **dict.fromkeys("was were had did been usedto got gave took foi foram era eram tinha tinham tinhamos "
                    "costumava costumavam dava davam tava tavam".split(), PAST),
    **dict.fromkeys("will shall ira irao sera serao".split(), FUTURE),
    **dict.fromkeys("would deveria deveriam seria seriam".split(), CONDITIONAL),
    **dict.fromkeys("should ought".split(), "t:should"),
}
#: Portuguese "vai" / "vão" / "vamos": a future before an infinitive ("vai enviar",
#: "vamos fechar às 22h"), else "goes".
_GOING: Final = frozenset({"vai", "vao", "vamos"})
_INFINITIVE_RE: Final = re.compile(r"^[a-z]+(?:ar|er|ir)$")
#: Portuguese verb endings of the past that no present has (the imperfect of -ar verbs, the
#: preterite's third person singular; "-aram", "-eram" and "-iram" are also presents:
#: "declaram", "esperam", "expiram"), and words with them that are no verbs' past ("estou").
_PT_PAST_RE: Final = re.compile(r"^[a-z]{3,}(?:ava|avam|avamos|ou|iu|eu)$")
#: Portuguese future endings no present has ("enviaremos", "aceitarao").
_PT_FUTURE_RE: Final = re.compile(r"^[a-z]{3,}(?:aremos|eremos|iremos|arao|erao|irao)$")
#: Modals the pole reading merges with "can" that hedge it ("could", "might", "poderia"):
#: read as a conditional beside the pole.
_HEDGES: Final = frozenset("could might poderia poderiam".split())
_NOT_PT_PAST: Final = frozenset("estou europeu chapeu museu trofeu".split())


def _past_form(word: str, portuguese: bool, english: bool, after_be: bool = False) -> bool:
    """True when folded `word`, about to be read as a content token, is a verb in
    the past: in English an "-ed" form or an irregular past ("paid", "sent") that does not
    follow "be" ("orders above $50 shipped free", "we paid"; "orders are shipped" is a
    passive). A participle used as an adjective ("orders placed before 2 pm", "checked
    bags") reads as past too: both sides of a restatement usually say it alike, and a
    "past" too many costs a merge call, where one too few confirms a rule that changed
    tense. In Portuguese an imperfect or preterite form ("aceitava", "enviou").
    """
    if not portuguese and not after_be and ((word.endswith("ed") and len(word) > 4 and word not in _EN_ED_ADJECTIVES)
                                            or word in _EN_IRREGULAR_PAST):
        return True  # English, or too short to tell
    return not english and word not in _NOT_PT_PAST and _PT_PAST_RE.match(word) is not None


def tense_shift(a: str, b: str) -> bool:
    """True when a Portuguese verb of `a` stands in `b` in another tense: the same stem
    with a present ending on one side ("ganham", "oferece", "custa") and a past, future or
    conditional one on the other ("ganharam", "oferecia", "custará", "parcelaria"). Read
    between the two texts, since an ending alone does not tell a verb from a noun
    ("garantia"), and only over words one text has and the other does not. A future beside
    a condition both texts set is the standing rule's present, as `tokens` reads a future
    that recurs ("A companhia reembolsará a passagem se o voo for cancelado").
    """
    words_a, words_b = set(words(a)), set(words(b))
    only_a, only_b = words_a - words_b, words_b - words_a
    others: tuple[str, ...] = _PT_OTHER_ENDINGS
    if CONDITION_TOKENS & set(tokens(a)) and CONDITION_TOKENS & set(tokens(b)):
        others = tuple(e for e in others if e not in _PT_FUTURE_ENDINGS)
    return bool((_stems(only_a, _PT_PRESENT_ENDINGS) & _stems(only_b, others))
                or (_stems(only_a, others) & _stems(only_b, _PT_PRESENT_ENDINGS)))


#: Portuguese future endings (third person), a subset of `_PT_OTHER_ENDINGS`.
_PT_FUTURE_ENDINGS: Final = frozenset({"ara", "era", "ira", "arao", "erao", "irao"})


def _stems(found: set[str], endings: tuple[str, ...]) -> set[str]:
    return {w[:-len(e)] for w in found for e in endings if w.endswith(e) and len(w) - len(e) >= 3}


#: Portuguese present endings (third person) and the endings of the other tenses.
_PT_PRESENT_ENDINGS: Final = ("a", "am", "e", "em")
_PT_OTHER_ENDINGS: Final = ("ia", "iam", "ava", "avam", "aram", "eram", "iram", "ou", "eu", "iu", "ara", "era",
                            "ira", "arao", "erao", "irao", "aria", "eria", "iria", "ariam", "eriam", "iriam")


#: The poles of a change ("increased", "aumentou"): a change in the past is another claim too.
_CHANGE_POLES: Final = frozenset({"p:p_increase", "p:p_decrease"})
#: English adjectives in "un-...-ed" that no verb has as its past ("includes unlimited
#: seats", "unused items"): "unlocked", "unpacked" are left, they are verbs too.
_EN_ED_ADJECTIVES: Final = frozenset(
    "unlimited unused unopened undamaged unworn unwashed unsealed unaltered unexpired unredeemed unclaimed "
    "unmodified untouched unscheduled unattended unaccompanied unrestricted unspecified unsupervised "
    "unverified unsigned unpaid unauthorized unauthorised unlabeled unlabelled unassembled unmarked".split())
#: English irregular past forms (most are participles too; after "be" they read as a passive).
_EN_IRREGULAR_PAST: Final = frozenset(
    "paid sent made bought sold kept left lost brought held told went came became began found spent "
    "lent built caught taught meant felt met ran won wrote drove flew knew grew threw fell chose rose "
    "gave took".split())
#: English pasts no participle shares ("The promotion ran through the summer": after a noun,
#: still a finite verb, `trust.evidence`'s tense reading), beside the irregular pasts above.
EN_PAST_ONLY: Final = frozenset(
    "ran went came became began wrote drove flew knew grew threw fell chose rose gave took ate saw did forgot "
    "spoke broke stole woke wore tore froze rode sang swam drank".split())


def _active(out: list[str], at: int) -> bool:
    """Rewrite the clause that ends with the participle at `out[at]` ("orders above $50" +
    "are shipped") as the business doing it ("we ship orders above $50"): its modals and
    "not" go before the verb, as an active sentence places them. False (nothing changed)
    when the clause has no content word, or a pronoun or "the store" is its subject ("the
    store is closed", "we are charged").
    """
    return _doing(out, at, [WE], at + 1)


def _doing(out: list[str], at: int, doer: list[str], end: int) -> bool:
    """Rewrite `out[..:end]`, the clause whose participle is `out[at]`, as `doer` doing it:
    ``doer + modals and "not" + verb + the clause's subject`` (the one rewrite of both
    passives). False (nothing changed) when the subject has no content word or names a party.
    """
    start = at
    while start and out[start - 1] not in (SENTENCE, PHRASE) and not out[start - 1].startswith("c:"):
        start -= 1
    subject = out[start:at]
    if any(t.startswith("w:") for t in subject) or not any(map(_is_content, subject)):
        return False
    markers: list[str] = []
    while subject and (subject[-1] == "n" or subject[-1].startswith(("p:", "t:"))) \
            and subject[-1][2:] not in PHRASE_POLES:
        markers.insert(0, subject.pop())
    out[start:end] = [*doer, *markers, out[at], *subject]
    return True


def _done_to_pronoun(out: list[str], at: int) -> None:
    """Rewrite a passive whose subject is a pronoun of a party ("we are charged a $12 fee",
    "you are refunded") as its verb done to that pronoun: ``verb + pronoun``, its modals and
    "not" before them, so that it no longer reads as "we charge a $12 fee".
    """
    start = at
    while start and out[start - 1] not in (SENTENCE, PHRASE) and not out[start - 1].startswith("c:"):
        start -= 1
    subject = out[start:at]
    pronouns = [t for t in subject if t.startswith("w:")]
    if out[at] not in _DONE_TO_A_PARTY or len(pronouns) != 1 or any(map(_is_content, subject)):
        return  # ("we are unable to ship": no passive of a charge)
    markers = [t for t in subject if not t.startswith("w:")]
    out[start:at + 1] = [*markers, out[at], pronouns[0]]


#: Verbs whose passive names who receives ("we are charged", "you are refunded", "are paid").
_DONE_TO_A_PARTY: Final = frozenset({"s_price", "s_refund", "s_payment"})


def _undone(out: list[str], at: int) -> None:
    """Rewrite a passive that names no agent and whose subject names a party ("the customer
    is paid the return shipping", "members are charged"... the latter a business passive,
    rewritten before) as someone unnamed doing it to that party ("pays the customer the
    return shipping"): the party is what the verb is done to, never its doer, so it no
    longer reads as "the customer pays the return shipping". A subject with no party is left
    as it reads.
    """
    start = at
    while start and out[start - 1] not in (SENTENCE, PHRASE) and not out[start - 1].startswith("c:"):
        start -= 1
    if PARTY_TERMS.isdisjoint(out[start:at]):
        return
    _doing(out, at, [], at + 1)


def _agent_active(out: list[str], at: int) -> int:
    """Rewrite a passive that names its agent, the participle at `out[at]` and ``by`` /
    ``pelo`` after it ("the CEPs 13000-13999 are served by the Campinas DC"), as the agent
    doing it ("the Campinas DC serves the CEPs 13000-13999"); its modals and "not" go
    before the verb. The agent is the content words after "by", with "of" / "de" phrases
    ("o CD de Campinas"), up to the next phrase. Returns the change in length: -1 (the "by"
    dropped), or 0 when nothing changed (no content subject, a party in it, or an agent
    that opens with a value: "delivered by 6 pm" is a deadline).
    """
    end = at + 2
    while end < len(out) and (_is_content(out[end]) or (out[end] in _OF_ROLES and end > at + 2)):
        end += 1
    agent = out[at + 2:end]
    while agent and agent[-1] in _OF_ROLES:
        agent.pop()
        end -= 1
    if not agent or not _is_content(agent[0]) or agent[0][:2] in ("m:", "d:"):
        return 0
    if agent == [STORE]:
        agent = [WE]  # "trocado pela loja": the business, as "a loja troca" reads
    return -1 if _doing(out, at, agent, end) else 0


#: Roles that join a noun to the noun it qualifies inside a passive's agent ("o CD de Campinas").
_OF_ROLES: Final = frozenset({"r:de", "r:of"})


#: The business as a party: "we", a clause that opens with "the store" / "a loja", the
#: subject of a Portuguese verb in the first person plural ("trocamos", "enviamos"), and
#: the one who does its own operations in a passive that names no one else ("orders are
#: shipped", "os pedidos são enviados pelos Correios": `BUSINESS_PASSIVES`).
WE: Final = "w:we"
STORE: Final = "s_store"
#: Nouns that, opening a clause, name the business itself as "the store" does ("A empresa
#: não cobra adesão" is "Não cobramos adesão"), folded.
_OWN_NOUNS: Final = frozenset({"company", "empresa"})  # not "companhia": "a companhia aérea" is an airline
_WE_VERB_RE: Final = re.compile(r"^[a-z]{3,}(?:amos|emos|imos)$")
#: Words with those endings that are no verbs.
_NOT_WE_VERBS: Final = frozenset(
    "ultimos proximos minimos maximos otimos primos legitimos intimos ramos temas".split())
#: Words that add nothing to what a claim says (folded): the speaker's attitude to it
#: ("unfortunately", "infelizmente"), and the inflections of "get" the stop list leaves.
_UNSAID: Final = frozenset(
    "unfortunately sadly regrettably infelizmente lamentavelmente felizmente fortunately gets getting".split())
#: "have" before a participle: a present perfect ("Since January we've offered free
#: returns"), what holds up to now, not a past.
_PERFECT: Final = frozenset({"have", "has"})
#: Portuguese participles that add nothing after "ser" ("a entrega é feita na portaria", "o
#: pagamento é realizado no app"): the sentence says what "a entrega é na portaria" says.
_LIGHT_PARTICIPLES: Final = frozenset("feito feita feitos feitas realizado realizada realizados realizadas".split())
#: Verbs that say only that something takes place ("a manutenção acontece a cada dois meses",
#: "renewal occurs every year"): the sentence says what "a manutenção é a cada dois meses" says.
_HAPPENS: Final = frozenset("acontece acontecem ocorre ocorrem happens happen occurs occur".split())
#: English "do", "does" and "did": an auxiliary in English text ("we do not ship").
_DO_AUXILIARIES: Final = frozenset({"do", "does", "did"})
#: The forms of "be" that make a passive, folded ("é" is read as "ser").
_BE: Final = frozenset("is are was were be been being ser sao foram sera serao sido sendo era eram seja sejam".split())
#: Portuguese forms of "be" that are English words too ("se o voo for cancelado"): "be"
#: only in a Portuguese text.
_PT_BE: Final = frozenset("for forem fosse fossem".split())
#: Participles of the operations only the business does to an order, a return or a payment
#: (shipping, delivering, refunding, exchanging, accepting, processing, issuing, charging,
#: splitting into installments), read as tokens: after "be" with no party in its subject, the
#: business does them ("returns are accepted" is "we accept returns"). Requests, payments and
#: cancellations are not here: a customer does them as well.
BUSINESS_PASSIVES: Final = frozenset(
    t for w in ("shipped delivered refunded reimbursed exchanged accepted processed issued charged dispatched "
                "enviado enviados enviada enviadas entregue entregues reembolsado reembolsados reembolsada "
                "reembolsadas trocado trocados trocada trocadas aceito aceitos aceita aceitas processado "
                "processados processada processadas emitido emitidos emitida emitidas cobrado cobrados "
                "cobrada cobradas despachado despachados despachada despachadas parcelado parcelados "
                "parcelada parceladas").split()
    for pt in (False, True) if (t := _word_token(w, pt, not pt)) is not None)
#: Role words that only open a range ("between 3 and 5", "from 1 to 2", "de 3 a 5").
_RANGE_OPENERS: Final = frozenset({"r:between", "r:from", "r:de", "r:entre"})
_RANGE_RE: Final = re.compile(r"m:[^:]*\d-\d")


def _after_when(out: list[str]) -> bool:
    """True when the sentence so far (`out`) is only a phrase of when, with no comma: a role
    word and days, dates or times ("On Sundays the store opens", "Aos sábados a loja abre"):
    what follows opens the clause, as after a comma.
    """
    start = max((i for i, t in enumerate(out) if t in (SENTENCE, PHRASE)), default=-1) + 1
    said = out[start:]
    return len(said) >= 2 and said[0].startswith("r:") and any(t.startswith(("d:", "m:")) for t in said) \
        and all(t.startswith(("d:", "m:", "r:")) or t == "c:and" for t in said[1:])


_KNOWN_NAME_TERMS: Final = frozenset(
    t for n in KNOWN_NAMES for pt in (False, True) if (t := _word_token(n, pt, False)) is not None)
#: The relative pronouns that make a person the subject of what follows ("who is referred",
#: "quem é indicado"; "who" and "quem" themselves are stop words).
_WHO: Final = frozenset({"who", "whoever", "quem"})
#: The forms of "be" after "who" / "quem" that make what follows done to them ("quem foi
#: indicado", "quem for indicado" too, which `_BE` leaves to the tense words).
_WHO_BE: Final = _BE | frozenset({"foi", "for", "fosse", "fossem", "forem"})
#: The terms of `PARTY_NOUNS` ("customers" -> ``s_customer``; "store" reads as ``w:we``).
PARTY_TERMS: Final = frozenset(
    t for n in PARTY_NOUNS for pt in (False, True) if (t := _word_token(n, pt, False)) is not None)
_OWN_NOUN_TERMS: Final = frozenset(
    t for n in _OWN_NOUNS for pt in (False, True) if (t := _word_token(n, pt, False)) is not None)
#: Terms a restatement may say or leave unsaid: the nouns that may name the business
#: itself ("trocado pela loja" / "trocamos"). A comparison of terms that must not tell the
#: two apart leaves them out.
ELIDABLE_TERMS: Final = _OWN_NOUN_TERMS | {STORE}


#: The party a passive whose subject is "who" / "quem" is done to ("who is referred"):
#: its own token, so neither "who refers" nor "who refers a customer" reads as it.
_PERSON: Final = "w:person"


def _is_leader(token: str) -> bool:
    return token.startswith("r:") or (token.startswith("p:") and token[2:] in PHRASE_POLES)


def _is_content(token: str) -> bool:
    return (token not in (SENTENCE, PHRASE, LABEL, WITHDRAWAL, "n") and token not in _STEP_MARKS
            and token[:2] not in ("r:", "c:", "p:", "w:", "t:"))


#: The tokens of a list's enumerators as `_enumerated` writes them ("passoa" reads as "passo"):
#: the order of steps, no content of theirs.
_STEP_MARKS: Final = frozenset({"passo", *(f"passo{chr(ord('a') + k)}" for k in range(26))})


# ----------------------------------------------------------------------------- canonical form

Chunk = tuple[str, ...]
#: A clause's canonical form: its head chunks and phrase runs, in order.
Clause = tuple[tuple[str, tuple[Chunk, ...]], ...]


def _sentences(seq: tuple[str, ...]) -> list[list[str]]:
    out: list[list[str]] = [[]]
    for token in seq:
        if token == SENTENCE:
            if out[-1]:
                out.append([])
        else:
            out[-1].append(token)
    return [s for s in out if s]


def _clauses(sentence: list[str]) -> list[list[str]]:
    out: list[list[str]] = [[]]
    for token in sentence:
        if token.startswith("c:") and out[-1]:
            out.append([])
        out[-1].append(token)
    return out


def _chunks(clause: list[str]) -> list[tuple[bool, Chunk]]:
    """A clause cut into (is_phrase, tokens) chunks: a phrase runs from a role word to the
    next role word, clause word or phrase boundary, or ends with its first value (and the
    values right after it: the two ends of "de segunda a sábado"); the rest is head.
    """
    chunks: list[tuple[bool, list[str]]] = []
    open_chunk = False
    valued = False  # the last phrase was just closed by its value
    for token in clause:
        if token in (PHRASE, LABEL):
            open_chunk = False
        elif _is_leader(token) and chunks and chunks[-1][1] == ["n"] and not chunks[-1][0]:
            chunks[-1] = (True, ["n", token])  # "não pelo site": the phrase negated, not a head
            open_chunk = True
        elif _is_leader(token):
            chunks.append((True, [token]))
            open_chunk = True
        elif valued and token.startswith(("m:", "d:")):
            chunks[-1][1].append(token)  # a second value right after it: "de segunda a sábado" is one span
        elif open_chunk:
            chunks[-1][1].append(token)
            if chunks[-1][0] and token.startswith(("m:", "d:")):
                open_chunk = False  # a value is its phrase's object: "within 7 days" ends there
        else:
            chunks.append((False, [token]))
            open_chunk = True
        valued = token not in (PHRASE, LABEL) and not open_chunk and bool(chunks) and chunks[-1][0] \
            and chunks[-1][1][-1].startswith(("m:", "d:"))
    return [(phrase, tuple(body)) for phrase, body in chunks if body]


def _canonical_clause(clause: list[str], alone: bool) -> Clause:
    chunks = _chunks(clause)
    if alone:  # a one-clause sentence: leading phrases read as trailing ones
        lead = 0
        while lead < len(chunks) and chunks[lead][0]:
            lead += 1
        if 0 < lead < len(chunks):
            chunks = chunks[lead:] + chunks[:lead]
    out: list[tuple[str, tuple[Chunk, ...]]] = []
    run: list[Chunk] = []

    def close() -> None:
        if run:
            leaders = [c[0] for c in run]
            ordered = tuple(sorted(run)) if len(set(leaders)) == len(leaders) else tuple(run)
            out.append(("phrases", ordered))
            run.clear()

    for phrase, body in chunks:
        if phrase:
            run.append(body)
        else:
            close()
            if out and out[-1][0] == "head":
                out[-1] = ("head", (*out[-1][1], body))
            else:
                out.append(("head", (body,)))
    close()
    return tuple(out)


def _canonical_sentence(sentence: list[str]) -> tuple[Clause, ...]:
    clauses = _clauses(sentence)
    return tuple(_canonical_clause(c, len(clauses) == 1) for c in clauses)


@dataclass(frozen=True, slots=True)
class Structure:
    """The canonical form of a text (see the module doc).

    Attributes:
        sentences: for each sentence, the forms it may be read in: its canonical form;
            for a one-clause sentence that opens with a phrase not closed by a comma
            ("On business days customers get..."), the forms with that phrase's first 2,
            3... tokens moved to the end (where such a phrase ends is not written); and for
            a one-clause sentence, its comma-separated parts in any order ("Applied at
            checkout: orders above R$ 199 ship free" and "Orders above R$ 199 ship free,
            applied at checkout": each part keeps its own values and subjects); a
            condition said first, after the rest ("If X, Y" as "Y if X"); and where a
            business passive names its agent, the forms of both readings (`tokens`'
            `by_agent`: "refunded by the airline", "enviados pelos Correios").
        flat: the whole text read as one sentence (`_joined`: sentence ends and "but"
            read as "and").
    """

    sentences: tuple[frozenset[tuple[Clause, ...]], ...]
    flat: tuple[Clause, ...]

    def same_as(self, other: Structure) -> bool:
        """True when the two texts say the same thing in the same structure: each sentence
        matches one sentence of the other (in any order), or, when one says in more
        sentences what the other says in fewer, the flat forms are equal (two texts of as
        many sentences whose sentences differ moved something from one to another: "Até
        3x sem juros; de 4x a 10x com juros" is not its swap).
        """
        if len(self.sentences) != len(other.sentences):
            return self.flat == other.flat
        left = list(other.sentences)
        for forms in self.sentences:
            match = next((i for i, theirs in enumerate(left) if forms & theirs), None)
            if match is None:
                return False
            left.pop(match)
        return True


@lru_cache(maxsize=8192)
def structure(text: str) -> Structure:
    """The canonical form of `text` (see the module doc)."""
    _, passives, colons = _read(text)
    seq = _labelled(tuple(map(whole_duration, tokens(text, active=True))), colons)
    flat = _joined(seq)
    forms = [_forms(s) for s in _sentences(seq)]
    if any(agent for _, agent in passives) and _PARTY_AGENT.search(text):  # a party's passive read both ways
        other = _labelled(tuple(map(whole_duration, tokens(text, active=True, by_agent=True))), colons)
        if other != seq:
            others = [_forms(s) for s in _sentences(other)]
            if len(others) == len(forms):
                forms = [mine | theirs for mine, theirs in zip(forms, others, strict=True)]
    sentences = sorted(forms, key=lambda f: sorted(map(repr, f)))
    return Structure(tuple(sentences), _canonical_sentence(flat))


#: A passive's agent that is a party ("by the airline", "by our billing team", "pelo
#: restaurante"): one that may do the business's operation itself. "By mail", "pela manhã",
#: "pelo peso", "by WhatsApp" say how or when, never who.
_PARTY_AGENT: Final = re.compile(
    r"\b(?i:by|pel[oa]s?)\s+(?i:(?:the|our|your|its|their|this|that|each|every|nosso|nossa|seu|sua|este|esta)\s+)?"
    r"(?i:[\w-]+\s+){0,2}?(?i:airlines?|carriers?|restaurants?|hotels?|stores?|shops?|sellers?|vendors?|merchants?"
    r"|marketplaces?|buyers?|customers?|clients?|guests?|banks?|insurers?|teams?|staff|managers?|agents?|agency"
    r"|agencies|company|companies|brands?|manufacturers?|suppliers?|couriers?|schools?|clinics?|hospitals?"
    r"|landlords?|tenants?|owners?|operators?|partners?|drivers?|restaurantes?|lojas?|vendedor(?:es)?|lojistas?"
    r"|compradore?s?|clientes?|h[oó]spedes?|bancos?|seguradoras?|equipes?|gerentes?|atendentes?|ag[eê]ncias?"
    r"|empresas?|marcas?|fabricantes?|fornecedor(?:es)?|transportadoras?|escolas?|cl[ií]nicas?|hospitais"
    r"|locador(?:es)?|donos?|operadoras?|parceiros?|motoristas?|companhias?|correios|post office|postal service"
    r"|pharmac(?:y|ies)|farm[aá]cias?|laborator(?:y|ies)|laborat[oó]rios?|academias?|gyms?|padarias?|baker(?:y|ies)"
    r"|mercados?|supermercados?|supermarkets?|technicians?|t[eé]cnicos?|doctors?|m[eé]dicos?|dentistas?|dentists?"
    r"|instructors?|instrutor(?:es)?|teachers?|professor(?:es)?|organizers?|organizador(?:es)?|imobili[aá]rias?"
    r"|oficinas?|concession[aá]rias?|universit(?:y|ies)|universidades?|faculdades?)\b")


def _joined(seq: tuple[str, ...]) -> list[str]:
    """`seq` read as one sentence. Sentence ends are read as "and" when no sentence but the
    last has a phrase break or opens with a role, pole or clause word ("Dogs are welcome.
    They must be leashed." says "Dogs are welcome and must be leashed"; "If you are a
    member, shipping is free. Returns are free." does not say the condition of both), else
    as phrase breaks; ", and" is "and", and "but" before "must" / "can" is "and" ("...
    welcome but must be leashed"; "every day but Sunday" is an exception).
    """
    sentences = _sentences(seq)
    joinable = all(PHRASE not in s and not (s and (s[0].startswith(("c:", "r:", "p:")) or _is_leader(s[0])))
                   for s in sentences[:-1])
    flat: list[str] = []
    for i, token in enumerate(seq):
        if token == SENTENCE:
            token = _AND if joinable else PHRASE
        elif token == "c:but" and i + 1 < len(seq) and seq[i + 1] in _MODALS:
            token = _AND
        if token == _AND:
            while flat and flat[-1] in (PHRASE, _AND):
                flat.pop()
            if not flat:
                continue
        flat.append(token)
    while flat and flat[-1] in (PHRASE, _AND):
        flat.pop()
    return flat


#: What "but" may join as "and" before: a second predicate of the same subject.
_MODALS: Final = frozenset({"p:p_must", "p:p_can"})
_AND: Final = "c:and"

#: Durations one unit holds exactly: (unit, how many make one of the next, the next).
_WHOLE: Final = (("minute", 60, "hour"), ("hour", 24, "day"), ("day", 7, "week"), ("month", 12, "year"))
_DURATION_RE: Final = re.compile(r"m:(\d+)(?:-(\d+))?:(minute|hour|day|month)")
#: Part of an hour ("1h30" is ``m:1.5:hour``): in minutes, the unit it fills ("90 minutos").
_PART_HOUR_RE: Final = re.compile(r"m:(\d+\.\d+):hour")


def whole_duration(token: str) -> str:
    """A duration token in the largest unit it fills exactly: "12 meses" is "1 ano", "48h"
    "2 days", "14 days" "2 weeks", "120 minutos" "2 horas" and "1h30" "90 minutos"
    (``m:12:month`` -> ``m:1:year``); "30 days", "36h" and
    business days stay as written; a metric mass or length likewise ("8.000 g" is "8 kg":
    `_whole_metric`). For the canonical form only: the values a text states (`tokens`)
    keep their units.
    """
    part = _PART_HOUR_RE.fullmatch(token)
    if part is not None and (Decimal(part[1]) * 60) == (Decimal(part[1]) * 60).to_integral_value():
        token = f"m:{int(Decimal(part[1]) * 60)}:minute"  # "1h30" is "90 minutos"
    match = _DURATION_RE.fullmatch(token)
    if match is None:
        return _whole_metric(token)
    low, high, unit = int(match[1]), int(match[2]) if match[2] else None, match[3]
    for name, size, bigger in _WHOLE:
        if unit == name and low and low % size == 0 and (high is None or high % size == 0):
            low, high, unit = low // size, high // size if high is not None else None, bigger
    return f"m:{low}-{high}:{unit}" if high is not None else f"m:{low}:{unit}"


#: Metric units of mass and length -> (base unit, how many of it one is), largest first per base.
METRIC_UNITS: Final = {"t": ("g", Decimal(1_000_000)),
                       "kg": ("g", Decimal(1000)), "g": ("g", Decimal(1)), "mg": ("g", Decimal("0.001")),
                       "km": ("m", Decimal(1000)), "m": ("m", Decimal(1)), "cm": ("m", Decimal("0.01")),
                       "mm": ("m", Decimal("0.001"))}
_METRIC_RE: Final = re.compile(r"m:(\d+(?:\.\d+)?)(?:-(\d+(?:\.\d+)?))?:(t|kg|g|mg|km|m|cm|mm)")


def _whole_metric(token: str) -> str:
    """A metric mass or length token (``m:8000:g``, a range too) in the largest unit of its
    kind that writes it in whole numbers: "8.000 g" is "8 kg", "1,2 m" "120 cm", "25 kg"
    stays; any other token as it is.
    """
    match = _METRIC_RE.fullmatch(token)
    if match is None:
        return token
    base, factor = METRIC_UNITS[match[3]]
    amounts = [Decimal(v) * factor for v in (match[1], match[2]) if v is not None]
    for name, (kind, size) in METRIC_UNITS.items():
        if kind == base and all((a / size) == (a / size).to_integral_value() for a in amounts):
            return f"m:{'-'.join(_number((a / size).normalize()) for a in amounts)}:{name}"
    return token


def base_duration(token: str) -> str:
    """A duration token in days for weeks and whole days of hours, in months for years
    ("2 weeks" is "14 days", "48h" "2 days", ``m:1:year`` -> ``m:12:month``): one unit for
    the durations a text may write either way, so "within 30 days" and "within 7 days" stay
    of one unit (as `whole_duration` would not keep them: 7 days is 1 week).
    """
    match = _BASE_RE.fullmatch(token)
    if match is None:
        return token
    low, high, unit = int(match[1]), int(match[2]) if match[2] else None, match[3]
    if unit == "hour":
        if low % 24 or (high is not None and high % 24):
            return token
        low, high, unit = low // 24, high // 24 if high is not None else None, "day"
    else:
        size, unit = _BASE[unit]
        low, high = low * size, high * size if high is not None else None
    return f"m:{low}-{high}:{unit}" if high is not None else f"m:{low}:{unit}"


_BASE: Final = {"week": (7, "day"), "year": (12, "month")}
_BASE_RE: Final = re.compile(r"m:(\d+)(?:-(\d+))?:(hour|week|year)")


def same_duration(value: str) -> str:
    """`value` as one duration whatever its unit (`whole_duration`), calendar days as days:
    "7 dias corridos", "7 days" and "1 week" read alike ("7 business days" does not). What
    the trust checks compare a claim's value and a message's by.
    """
    return whole_duration(value.removesuffix(":calendar"))


def _labelled(seq: tuple[str, ...], colons: frozenset[int]) -> tuple[str, ...]:
    """`seq` with the colons (their counts among the phrase breaks in `colons`) that open
    a list as `LABEL`: "Pix: 5% off, card: full price" and "Boarding order: premium, Gold,
    general" keep each label with its value, and the list's head with its first item,
    when the parts are read in any order. A colon with no phrase break after it in its
    sentence leads in ("Applied at checkout: orders above R$ 199 ship free", which "...,
    applied at checkout" restates) and stays a phrase break.
    """
    if not colons:
        return seq
    out = list(seq)
    breaks: list[tuple[int, bool, int]] = []  # (position, is a colon, sentence) of each phrase break
    sentence = 0
    for at, token in enumerate(out):
        if token == SENTENCE:
            sentence += 1
        elif token == PHRASE:
            breaks.append((at, len(breaks) in colons, sentence))
    per_sentence = Counter(n for _, colon, n in breaks if colon)
    for i, (at, colon, n) in enumerate(breaks):
        followed = i + 1 < len(breaks) and breaks[i + 1][2] == n  # a break after it in its sentence
        if colon and (followed or per_sentence[n] > 1):
            out[at] = LABEL
    return tuple(out)


#: A colon in `structure`'s reading: a phrase break that keeps a label with its value.
LABEL: Final = ":"


#: Conjunctions of a condition that may open its sentence ("If ..., ...", "Unless ..., ...").
_FRONTED_CONDITIONS: Final = CONDITION_TOKENS


def _forms(sentence: list[str]) -> frozenset[tuple[Clause, ...]]:
    """A sentence's canonical form; for one that opens with a condition closed by a comma
    (`_FRONTED_CONDITIONS`), the form with the condition after the rest; for a one-clause sentence opening with a phrase
    not closed by a comma, the forms with 2, 3... of its first tokens moved to the end;
    and, when it has a role word that only attaches (`WEAK_ROLES`), the form with every
    such word read as one ("check-in no hotel" / "do hotel", "grupos com menos de 8" /
    "de menos de 8") and no "de" right before a value ("é de R$ 50" / "é R$ 50"), which only
    another sentence's such form can equal. A list of plain words in a sentence with no
    other list and no word of order is read in any order (`_listed`: "accepts cash, cards
    and Pix"); any other list keeps its order: "Gold, Silver and Bronze members get 20%,
    10% and 5%" binds each to its value by position, and "the latter" names the last item.
    """
    forms = {_canonical_sentence(sentence)}
    forms.update(_canonical_sentence(listed) for listed in _listed(sentence))
    if any(t in WEAK_ROLES for t in sentence):
        # "de"/"of" right before a value says nothing ("a taxa é de R$ 50" is "a taxa é R$ 50";
        # "em 12h" is "within 12 hours"), and the other attaching words are read as one
        attached = [_ATTACHING if t in WEAK_ROLES else t for i, t in enumerate(sentence) if not (
            t in _OF_ROLES and i + 1 < len(sentence) and sentence[i + 1].startswith(("m:", "d:")))]
        # (with none left it is what the sentence says without them: a form of any sentence)
        forms.add((_ATTACHED, *_canonical_sentence(attached)) if _ATTACHING in attached
                  else _canonical_sentence(attached))
    if sentence and sentence[0] in _FRONTED_CONDITIONS and sentence.count(PHRASE) == 1:
        # "If the bag arrives late, we refund the fee" says "we refund the fee if the bag
        # arrives late": the condition, to its comma, read after what it conditions, when
        # that is one clause ("If X, A and B" conditions both; "A and B if X" the last)
        comma = sentence.index(PHRASE)
        rest = sentence[comma + 1:]
        if rest and not any(t.startswith("c:") for t in rest):
            forms.add(_canonical_sentence(rest + sentence[:comma]))
    if sentence and len(_clauses(sentence)) == 1:
        if _is_leader(sentence[0]) and sentence.count(PHRASE) == 1:
            # "Às segundas, o restaurante não abre" says "o restaurante não abre às segundas":
            # an opening phrase, to its comma, read after the rest of its one clause
            comma = sentence.index(PHRASE)
            if comma + 1 < len(sentence):
                forms.add(_canonical_sentence(sentence[comma + 1:] + sentence[:comma]))
        if _is_leader(sentence[0]):
            stop = next((i for i, t in enumerate(sentence) if t in (PHRASE, LABEL)), len(sentence))
            forms.update(_canonical_sentence(sentence[k:] + sentence[:k]) for k in range(2, stop))
        if PHRASE in sentence:  # its comma-separated parts in any order
            parts: list[list[str]] = [[]]
            for token in sentence:
                if token == PHRASE:
                    parts.append([])
                else:
                    parts[-1].append(token)
            # ...unless two parts hold values: "Pix: 5% off, boleto: 3% off" would then read as
            # "Pix: 3% off, boleto: 5% off" (a value never leaves its part)
            if sum(any(t.startswith(("m:", "d:")) for t in p) for p in parts) <= 1:
                forms.add((_CHUNKS, *sorted(_canonical_clause(p, True) for p in parts if p)))
    return frozenset(forms)


def _listed(sentence: list[str]) -> list[list[str]]:
    """`sentence` with the items of its one list sorted, once for each place the last item
    may end (where it ends is not written: "accepts cash, cards and Pix here"); [] when it
    has no such list.

    Such a list: what a verb of listing (`_LISTING`: accepts, includes, offers, covers,
    sells, aceita, inclui, oferece...) takes, three or more items of plain words
    (`plain_word`, at most `_LIST_ITEM` each), separated by commas but the last two by the
    sentence's one "and" / "or". A sentence with a comma after the list, another "and" / "or",
    or a word of order (`_ORDER_TOKENS`: respectively, in that order, the latter, first,
    then...) has none, nor has a list of steps ("unplug, pack and ship it"): its order
    may say something.
    """
    joins = [i for i, t in enumerate(sentence) if t in _LIST_JOINS]
    if len(joins) != 1 or PHRASE not in sentence or _ORDER_TOKENS.intersection(sentence):
        return []
    join = joins[0]
    if PHRASE in sentence[join:]:
        return []  # a comma after the list
    verb = join - 1
    while verb >= 0 and sentence[verb] not in _LISTING:
        verb -= 1
    commas = [i for i in range(verb + 1, join) if sentence[i] == PHRASE]  # (a phrase before the verb
    if not commas:  # may close with its own comma: "To open a claim, you must provide X, Y and Z")
        return []
    bounds = list(zip([verb, *commas], [*commas, join], strict=True))
    if verb < 0 or any(not 0 < b - a - 1 <= _LIST_ITEM or not all(map(plain_word, sentence[a + 1:b]))
                       for a, b in bounds):
        return []  # no verb of listing before it, or a long, empty or not plain item
    tail = join + 1
    while tail < len(sentence) and plain_word(sentence[tail]) and tail - join <= _LIST_ITEM:
        tail += 1
    out = []
    for end in range(join + 2, tail + 1):
        items = sorted([*(sentence[a + 1:b] for a, b in bounds), sentence[join + 1:end]])
        listed = sentence[:verb + 1]
        for k, item in enumerate(items):
            if k:
                listed.append(sentence[join] if k == len(items) - 1 else PHRASE)
            listed.extend(item)
        out.append([*listed, *sentence[end:]])
    return out


#: The most words (tokens) of one item of a list `_listed` reads in any order.
_LIST_ITEM: Final = 3
_LIST_JOINS: Final = frozenset({"c:and", "c:or"})
#: Tokens of the verbs whose object a list may be in any order (what a rule accepts,
#: includes, offers, covers, sells, provides, supports).
_LISTING: Final = frozenset({
    "accept", "p:p_include", "offer", "cover", "sell", "provid", "support", "contaim",
    "aceit", "aceitam", "oferec", "cobr", "vend", "fornec", "suport", "cont"})
#: Tokens of the words that give a list's order a meaning: "respectively", "respectivamente",
#: "in that order" / "nessa ordem", "the latter" / "the former", "rank", "next", "finally" /
#: "por fim", "em seguida", "then", first / last / before / after / highest / lowest.
_ORDER_TOKENS: Final = frozenset({
    "respect", "respectivament", "s_order", "ordem", "latt", "form", "rank", "next", "final", "fim", "segu",
    "c:then", "p:p_first", "p:p_last", "p:p_before", "p:p_after", "p:p_highest", "p:p_lowest"})


#: Role words that attach a phrase without giving it a direction, a time, a source or a
#: party: "of"/"de", "in"/"on"/"em", "with"/"com" (not "at"/"as": a clock time's; not
#: "to", "from", "for", "by", "para", "por", "a": directions and parties).
WEAK_ROLES: Final = frozenset({"r:de", "r:of", "r:em", "r:in", "r:on", "r:com", "r:with"})
_ATTACHING: Final = "r:~"
#: Marks the form of a sentence whose attaching role words are read as one.
_ATTACHED: Final[Clause] = (("attached", ()),)

#: Marks the form of a sentence read as its comma-separated parts in any order.
_CHUNKS: Final[Clause] = (("chunks", ()),)


# ----------------------------------------------------------------------------- details

_NAME_RE: Final = re.compile(r"[^\W\d_][^\W_]*")
_SENTENCE_START_RE: Final = re.compile(r"(?:^|[.!?;:\n]\s*|[\"'(\[]\s*)$")


def names(text: str) -> frozenset[str]:
    """The content terms of `text` that are names: capitalised where a sentence does not
    start, written in capitals (``DC``, ``SAC``), or known names (`KNOWN_NAMES`); not the
    days of the week ("Monday", "Sat": dates).
    """
    found: set[str] = set()
    lang = _language(text, _prepare(text))
    portuguese, english = lang == "pt", lang == "en"
    for match in _NAME_RE.finditer(text):
        word = match.group(0)
        if not word[0].isupper():
            continue
        if word.lower() in COMMON_ACRONYMS or fold(word) in _WEEKDAYS or text.startswith("$", match.end()):
            continue  # an acronym anyone uses; a day ("Monday", "Sat"): a date, not a name; "R$": money
        upper = len(word) >= 2 and word.isupper()
        if not upper and _SENTENCE_START_RE.search(text, 0, match.start()):
            continue
        token = _word_token(fold(word), portuguese, english)
        if token is not None and _is_content(token):
            found.add(token)
    found.update(t for t in tokens(text) if t in _KNOWN_NAME_TERMS)
    return frozenset(found)


Detail = tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Details:
    """What a merge must keep of one text (see `details`).

    Attributes:
        items: measures, dates, names, parties, negations and role words with what they
            bear on, as tuples (``("m", "m:5:%")``, ``("r", "r:to", "campinas")``...).
        bindings: each measure or date with the anchors of its phrase (names, parties,
            role objects), as ``(token, frozenset of anchors)``.
        negations: how many negations (`analysis.text.negation_count`) it carries.
        polarity: each content term with whether it is negated (a term after a negation
            in its phrase, or any term of a clause a change verb withdraws).
        language: ``en``, ``pt`` or ``mixed``: a merge written in the other language can
            keep only the values and dates of a claim checkably.
        terms: its content terms.
        scope: each content term with whether a restriction bears on it (a term after
            "only", "just", "apenas", "só"... in its phrase): "only sealed electronics can
            be returned" restricts what "electronics can be returned" asserts of all.
        near: each measure or date with the content terms and anchors of its phrase.
        sentences: each measure or date with the content terms and anchors of its whole
            sentence (what a merge may move it around in).
        worded: each value word (`VALUE_WORDS`: "free") with the content terms and
            anchors of its phrase, as `near` holds them for measures and dates.
        parties: each party (`PARTY_TERMS`, "we", "you") with the content terms and
            anchors of its phrase, as `near` holds them for measures and dates.
    """

    items: frozenset[Detail]
    bindings: frozenset[tuple[str, frozenset[str]]]
    negations: int
    polarity: frozenset[tuple[str, bool]] = frozenset()
    language: str = "mixed"
    terms: frozenset[str] = frozenset()
    scope: frozenset[tuple[str, bool]] = frozenset()
    near: frozenset[tuple[str, frozenset[str]]] = frozenset()
    sentences: frozenset[tuple[str, frozenset[str]]] = frozenset()
    worded: frozenset[tuple[str, frozenset[str]]] = frozenset()
    parties: frozenset[tuple[str, frozenset[str]]] = frozenset()

    def kept_in(self, other: Details) -> bool:
        """True when `other` keeps every detail of this text (and as many negations)."""
        if not self.items <= other.items or self.negations > other.negations:
            return False
        return all(any(token == t and anchors <= a for t, a in other.bindings)
                   for token, anchors in self.bindings)


def _new_values(merged: Details, claims: tuple[Details, ...]) -> frozenset[str]:
    """The amounts and dates of `merged` that no claim states (a merge invents nothing).

    An amount without a unit is held by the same number with any unit ("199" in a link
    name, "R$ 199" in a claim); one with a unit needs that number with that unit or none.
    """
    stated = {i[1] for c in claims for i in c.items if i[0] == "v"}
    numbers = {_number_of(v): v for v in stated if v.startswith("m:")}
    unitless = {_number_of(v) for v in stated if v.startswith("m:") and v.endswith(":")}
    return frozenset(
        v for kind, v, *_ in merged.items
        if kind == "v" and v.startswith(("m:", "d:")) and v not in stated
        and not (v.startswith("m:") and (v.endswith(":") and _number_of(v) in numbers or _number_of(v) in unitless)))


def _number_of(value: str) -> str:
    """The number of an amount token (``m:199:brl`` -> ``199``)."""
    return value.split(":", 2)[1]


def _side_by_side(merged: Details, claims: tuple[Details, ...]) -> bool:
    """True when `merged` states two values of one unit, each from another claim, with the
    same words in their phrases and in their sentences: two contradicting claims written
    side by side ("Trocas em até 30 dias. Trocas em até 7 dias."), not a merge. A claim
    that states both itself keeps them; a value whose phrase has no word of its own
    ("PAC R$ 15 (5 a 8 dias)") is not compared.
    """
    sentence_of = dict(merged.sentences)
    values = [(v, phrase - {v}, sentence_of.get(v, frozenset()) - {v}) for v, phrase in merged.near
              if v.startswith("m:")]
    for i, (one, around_one, said_one) in enumerate(values):
        for other, around_other, said_other in values[i + 1:]:
            if one == other or one.split(":")[2:] != other.split(":")[2:]:
                continue
            if not around_one or around_one != around_other or said_one - {other} != said_other - {one}:
                continue  # its phrase, or its sentence, tells one from the other (or says nothing to tell)
            held = [{v for v, _ in c.near} for c in claims]
            if not any({one, other} <= h for h in held) and any(one in h for h in held) \
                    and any(other in h for h in held):
                return True
    return False


#: A requirement ("must", "obrigatório") and what permits instead ("may", "can", "não é
#: obrigatório"): one rule said required and said optional (`CONTRARY_ROLES`).
MODAL_CONTRARIES: Final = (frozenset({"p:p_must"}), frozenset({"p:p_can", "p:p_optional"}))
#: Roles that say opposite things of the same object: a merge that puts an object of one
#: under another of its group changed the claim ("to Campinas" / "from Campinas", "from
#: Saver into Everyday" / "from Everyday into Saver",
#: "members and orders" / "members on orders" / "members or orders", "if" / "unless",
#: "before shipping" / "after shipping", "above R$ 199" / "below R$ 199", "must" / "may").
CONTRARY_ROLES: Final = (
    (frozenset({"r:to", "r:into", "r:para", "r:a"}), frozenset({"r:from", "r:since"})),
    (frozenset({"c:and"}), frozenset({"c:or"})),
    (frozenset({"c:and"}), frozenset({"r:on", "r:em"})),
    (frozenset({"c:if", "c:when"}), frozenset({"c:unless"})),
    (frozenset({"p:p_before"}), frozenset({"p:p_after"})),
    (frozenset({"p:p_above", "p:p_at_least"}), frozenset({"p:p_below", "p:p_at_most"})),
    MODAL_CONTRARIES,
)


#: Clause words that state a condition, -> their kind: a merge keeps each kind (and never
#: loses an "or"); "if" and "when" state one condition alike.
CONDITIONS: Final = {"c:or": "or", "c:if": "if", "c:when": "if", "c:unless": "unless", "p:p_except": "except"}
#: The poles that restrict what their phrase says to what follows ("only members").
RESTRICTIONS: Final = frozenset({"p:p_only"})

#: Roles whose object a merge must keep (a destination, an origin, a condition).
DIRECTION_ROLES: Final = frozenset({"r:to", "r:para", "r:a", "r:from", "r:since", "c:if", "c:unless",
                                    "p:p_except"})
_PLACEHOLDER_TERMS: Final = frozenset(
    {"phon", "phone", "email", "s_email", "cpf", "cnpj", "card", "iban", "pix", "bolet", "boleto", "rg",
     "address", "addres", "name"})


def contrasted(role: str, others: set[str]) -> bool:
    """True when one of `others` is a role contrary to `role` (`CONTRARY_ROLES`)."""
    if role in others:
        return False
    for group in CONTRARY_ROLES:
        mine = next((side for side in group if role in side), None)
        if mine is not None and any(o in side for o in others for side in group if side is not mine):
            return True
    return False


def kept_together(merged: Details, *claims: Details) -> bool:
    """True when `merged` keeps every detail of each of `claims` (the merge guard).

    A merge may reword; it may not drop or change. So every value, date, name, party and
    negation (with the term it negates) of each claim must be in `merged`, with at least
    as many negations; a role or clause word's object (and what a party does) may be
    reworded, but not put under a contrary role (`CONTRARY_ROLES`: "must" written "may", "to Campinas" written
    "from Campinas", "and orders" written "on orders"); a value may lose the words around it, but not be
    bound to another subject of the claims ("7 days for clothing" written "7 days for
    electronics"); and a term one claim negates and another asserts must be there both
    ways (one text saying both), as must a term one claim restricts ("only sealed
    electronics") and another states of all ("electronics can be returned"); a term the
    claims state plainly may not come out negated or restricted, and a term no claim has
    may not come out negated or restricted either ("paid by card" merged as "only paid by
    pix"), no name that no claim has ("... or by Pix"), and no condition
    kind (if, unless, except) comes in that no claim states. Each party
    of a claim (the store, the customer, we, you) and each condition word (or, if,
    unless) is kept, and a role word's object is not replaced by the other claim's object
    under the same role ("returns by email" merged as "returns by WhatsApp"). A claim in another
    language than `merged` is held to its values and dates only.
    """
    strict = ("v", "name", "w", "n")
    merged_conditions = {CONDITIONS[item[1]] for item in merged.items if item[0] == "r" and item[1] in CONDITIONS}
    roles: dict[tuple[str, str], set[str]] = {}
    for item in merged.items:
        if item[0] in ("r", "a"):
            roles.setdefault((item[0], item[2]), set()).add(item[1])
    doers = {item[1] for item in merged.items if item[0] == "a"}
    # Each role's objects per claim: a claim's object replaced by another claim's under the
    # same role is a change ("by email" / "by WhatsApp"), not a rewording.
    by_claim = [{(i[1], i[2]) for i in c.items if i[0] == "r" and i[1].startswith("r:") and i[2]}
                for c in claims]
    for n, claim in enumerate(claims):
        others_objects: dict[str, set[str]] = {}
        for k, other in enumerate(by_claim):
            if k != n:
                for role, obj in other:
                    others_objects.setdefault(role, set()).add(obj)
        if claim.negations > merged.negations:
            return False
        if claim.language != merged.language and "mixed" not in (claim.language, merged.language):
            # Words do not survive translation; values and dates do (checked as written).
            if not {i for i in claim.items if i[0] == "v"} <= merged.items:
                return False
            continue
        for item in claim.items:
            if item in merged.items:
                continue
            if item[0] in strict:
                return False
            if item[0] == "a" and item[1] not in doers:
                return False  # a party of the rule is gone ("paid by the store" merged as "by the customer")
            if item[0] == "r" and item[1] in CONDITIONS and CONDITIONS[item[1]] not in merged_conditions:
                return False  # "for members or defective items" is not "members with defective items"
            if item[0] == "r" and item[2]:
                if contrasted(item[1], roles.get(("r", item[2]), set())):
                    return False  # the same object under a contrary role: changed, not reworded
                if item[2] not in merged.terms and not item[2].startswith(("m:", "d:", "w:")) and (
                        (item[1] in DIRECTION_ROLES and item[2] not in _PLACEHOLDER_TERMS)
                        or any(("r", item[1], other) in merged.items for other in others_objects.get(item[1], ()))):
                    return False  # where it goes, or on what condition, is gone ("to the original card"),
                    # or the other claim's object took its place ("by email" merged as "by WhatsApp")
            if item[0] == "a" and item[2] and (roles.get(("a", item[2]), set()) - {item[1]}
                                               or item[1] not in doers):
                return False  # another party does it now ("the customer pays" for "the store")
        # A value never comes to sit in a phrase with words only another claim has
        # ("Silver members pay $30" merged as "Gold members pay $30"; "trocas em até 30
        # dias" as "eletrônicos em até 30 dias").
        others = set().union(*(c.terms for k, c in enumerate(claims) if k != n)) - claim.terms
        for value, _ in claim.near:
            if not any(v == value and not (phrase & others) for v, phrase in merged.near):
                return False
        for value, anchors in claim.bindings:
            around = [a for v, a in merged.bindings if v == value]
            if any(anchors <= a for a in around):
                continue
            # The subjects the claims bind to other values only ("7 days for clothing,
            # 30 days for electronics": electronics, for 7 days).
            rivals = {x for c in claims for v, a in c.bindings if v != value for x in a
                      if x not in PARTY_TERMS and not x.startswith("w:")} - anchors
            if any(a & rivals for a in around):
                return False  # the value now sits with another subject of the claims
    if _side_by_side(merged, claims) or _new_values(merged, claims):
        return False
    claimed_conditions = {CONDITIONS[i[1]] for c in claims for i in c.items if i[0] == "r" and i[1] in CONDITIONS}
    if merged_conditions - claimed_conditions - {"or"}:
        return False  # a condition no claim states ("..., exceto por boleto", "unless ...")
    for field in ("polarity", "scope"):
        said = {pair for claim in claims for pair in getattr(claim, field)}
        disputed = {term for term, marked in said if marked and (term, False) in said}
        theirs = getattr(merged, field)
        if not all((term, False) in theirs and (term, True) in theirs for term in disputed):
            return False
        # ...and a term every claim states plainly is not negated or restricted by the merge
        # ("Orders ship from Campinas" merged as "Orders do not ship from Campinas").
        if any(marked and (term, False) in said and (term, True) not in said for term, marked in theirs):
            return False
        # ...nor negates or restricts a term no claim has ("only orders paid by card" merged
        # as "only orders paid by pix"): what it excludes is new (words in one language).
        if all(c.language in (merged.language, "mixed") for c in claims) and merged.language != "mixed":
            known = set().union(*(c.terms for c in claims))
            if any(marked and term not in known for term, marked in theirs):
                return False
            # ...nor brings in a name no claim has ("to the card or by Pix"). A new plain word
            # may be a rewording ("upgrade or downgrade" for "business down to economy").
            named = {i for c in claims for i in c.items if i[0] == "name"}
            if any(i[0] == "name" and i not in named for i in merged.items):
                return False
    return True


#: The role words that name a passive's agent ("paid by", "pago pelo").
_PASSIVE_BY: Final = frozenset({"r:by", "r:por"})


def _gapped_breaks(seq: Sequence[str]) -> frozenset[int]:
    """The phrase breaks of `seq` that stand for a left-out verb: the phrase after the break
    opens with its value (after role words: "at £6"), and the phrase before it opens its
    sentence or a list's "and", names something and gives no value ("e o de espanhol, R$ 360
    por mês"; "Breakfast club is separate, at £6 per day"). `details` reads the two as one
    phrase, so the value binds to what it is said of, as it would with the verb written. A
    phrase after another break ("R$ 15, ou melhor, R$ 18"; "$5, sorry, $7") is an aside.
    """
    out: set[int] = set()
    start, opens = 0, True  # where the current phrase began; whether it opens its sentence or an "and"
    for at, token in enumerate(seq):
        if token == SENTENCE or token.startswith("c:"):
            start, opens = (at + 1, True) if token == SENTENCE else (at, token == _AND)
            continue
        if token != PHRASE:
            continue
        before = seq[start:at]
        after = next((t for t in seq[at + 1:] if not t.startswith(("r:", "p:"))), None)
        if opens and after is not None and after.startswith(("m:", "d:")) and any(map(_is_content, before)) \
                and not any(t.startswith(("m:", "d:")) or t in VALUE_WORDS for t in before):
            out.add(at)
        start, opens = at + 1, False
    return frozenset(out)


@lru_cache(maxsize=8192)
def details(text: str, *, summary: bool = False, whole: bool = False) -> Details:
    """What a merge of `text` with another claim must keep (see `Details`).

    With `summary`, only what a one-line summary must not add or change: values and dates
    with the names and parties of their phrase, names, parties and negations (a summary
    rewords its role words freely: "SLA for first response", "first response SLA"). With
    `whole`, weeks and whole days of hours as days, years as months (`base_duration`: "2
    weeks" is "14 days"), as the merge guard compares a merged text with its claims.
    """
    seq = _labelled(tokens(text), _read(text)[2])  # "overdraft: 35.00" keeps the label with its value
    if whole:
        seq = tuple(map(base_duration, seq))
    named = names(text)
    items: set[Detail] = set()
    bindings: set[tuple[str, frozenset[str]]] = set()
    worded: set[tuple[str, frozenset[str]]] = set()
    parties: set[tuple[str, frozenset[str]]] = set()
    near: set[tuple[str, frozenset[str]]] = set()
    sentences: set[tuple[str, frozenset[str]]] = set()
    segment: list[int] = []
    sentence: list[tuple[str, frozenset[str]]] = []  # its values, each with its phrase's words
    said: set[str] = set()  # the sentence's content terms and anchors

    def close_segment() -> None:
        anchors: set[str] = set()
        for i in segment:
            token = seq[i]
            if token in named or token in PARTY_TERMS or token.startswith("w:"):
                anchors.add(token)
            if not summary and (_is_leader(token) or token.startswith("c:")):
                following = next_content(seq, i)
                if following is not None and not following.startswith(("m:", "d:")):
                    anchors.add(following)
        words = frozenset(anchors | {seq[i] for i in segment if _is_content(seq[i])})
        said.update(words)
        for i in segment:
            if seq[i].startswith(("m:", "d:")):
                bindings.add((seq[i], frozenset(anchors)))
                sentence.append((seq[i], words))
            elif seq[i] in VALUE_WORDS:
                worded.add((seq[i], words))
            elif seq[i] in PARTY_TERMS or seq[i].startswith("w:"):
                parties.add((seq[i], words))
        segment.clear()

    def close_sentence() -> None:
        close_segment()
        near.update(sentence)
        sentences.update((value, frozenset(said)) for value, _ in sentence)
        sentence.clear()
        said.clear()

    gapped = _gapped_breaks(seq)
    for i, token in enumerate(seq):
        if i in gapped:
            continue  # "o de espanhol, R$ 360": the value's phrase is the one before the comma
        if token in (SENTENCE, PHRASE) or token.startswith("c:"):
            if token == SENTENCE:
                close_sentence()
                continue
            close_segment()
            if token == PHRASE:
                continue
        segment.append(i)
        if token.startswith(("m:", "d:")) or token in VALUE_WORDS:
            items.add(("v", token))
        elif token.startswith("w:"):
            items.add(("w", token))
        elif token == "n":
            items.add(("n", next_content(seq, i) or previous_content(seq, i) or ""))
        elif token.startswith(("r:", "c:", "p:")):
            if not summary:
                items.add(("r", token, next_content(seq, i) or ""))
        elif token in named:
            items.add(("name", token))
        if (token in PARTY_TERMS or token.startswith("w:")) and not summary:
            items.add(("a", token, next_content(seq, i, skip=_MANNER) or ""))
        elif token in PARTY_TERMS:
            items.add(("name", token))
    close_sentence()
    if not summary:  # "é pago pelo comprador", "is paid by the customer": the agent does the act
        read, passives, _ = _read(text)
        for at, agent in passives:
            if agent and at + 2 < len(read) and read[at + 1] in _PASSIVE_BY and (
                    read[at + 2] in PARTY_TERMS or read[at + 2].startswith("w:")):
                items.add(("a", read[at + 2], read[at]))
    return Details(frozenset(items), frozenset(bindings), negation_count(text), _polarity(seq),
                   _language(text, _prepare(text)), frozenset(t for t in seq if _is_content(t)),
                   _polarity(seq, markers=RESTRICTIONS, clause_wide=False), frozenset(near),
                   frozenset(sentences), frozenset(worded), frozenset(parties))


@lru_cache(maxsize=8192)
def polarity(text: str) -> frozenset[tuple[str, bool]]:
    """Each content term of `text` with whether a negation, a "without" / "sem" or a
    withdrawal bears on it; a clause that is only a negation ("Troca de produtos da
    Liquida Verão, infelizmente não", "Free returns? No.") negates the clause before it.
    """
    seq, passives, _ = _read(text)
    return _polarity(seq, _NEGATING, answers=True, passives=frozenset(at for at, _ in passives))


#: Clauses that state when a rule applies: what they withdraw is the rule's event.
_CONDITIONAL: Final = frozenset({"c:if", "c:when"})
#: What negates the rest of its phrase for `polarity` ("come without the warranty"); a
#: "without" / "sem" only up to its object's end (`_OBJECT_ENDS`).
_WITHOUT: Final = "r:without"
_NEGATING: Final = frozenset({"n", _WITHOUT})
#: Tokens that end a "without"'s object: another role ("para", "with") or a particle ("só",
#: "apenas"): "Troca sem nota fiscal só com crédito na loja" does not negate the credit.
_OBJECT_ENDS: Final = ("r:", "p:")


@lru_cache(maxsize=8192)
def negated_subjects(text: str, *, clause: bool = False) -> frozenset[str]:
    """The content terms of `text` that stand before a negation in their phrase: what a
    negated clause is said of ("drones" in "drones can't go in checked bags" and in "drones
    are not allowed in checked bags"), whose own polarity depends on the verb's voice, not
    on what the clause denies. With `clause`, only a clause's negation ("não", "not"), not
    "without" / "sem", makes one.
    """
    seq, passives, _ = _read(text)
    found: set[str] = set()
    _polarity(seq, frozenset({"n"}) if clause else _NEGATING, answers=True,
              passives=frozenset(at for at, _ in passives), subjects=found)
    return frozenset(found)


def _polarity(seq: tuple[str, ...], markers: frozenset[str] = frozenset({"n"}),
              clause_wide: bool = True, answers: bool = False,
              passives: frozenset[int] = frozenset(),
              subjects: set[str] | None = None) -> frozenset[tuple[str, bool]]:
    """Each content term of `seq` with whether a negation or a withdrawal bears on it: a
    negation bears on the rest of its phrase ("we do not offer a discount": offer and
    discount), a "without" on its object ("sem juros", not the rest of "sem juros vale
    para cartão"), a withdrawal on its whole clause ("Pix was discontinued"). With other
    `markers` (and no `clause_wide` withdrawal), whether one of those bears on it. With
    `answers`, a clause of negations only negates the clause before it. A negated passive
    (a participle at one of `passives`, the positions `_read` gives) bears on its phrase's
    subject too, the verb's object as an active sentence says it ("batteries are not
    allowed" as "we do not allow batteries").
    """
    out: set[tuple[str, bool]] = set()
    clause: list[str] = []
    last: list[str] = []  # the content terms of the last clause that had any
    start = 0  # the position in `seq` of the clause's first token

    def negate(terms: list[str]) -> None:
        for term in terms:
            out.discard((term, False))
            out.add((term, True))

    def close() -> None:
        # a withdrawal in a condition ("even when a partner's leg is cancelled") is the
        # event the rule is about, not the rule withdrawn
        withdrawn = clause_wide and WITHDRAWAL in clause and not (clause and clause[0] in _CONDITIONAL)
        negated = scoped = False  # scoped: a "without" that bears on its object only
        terms: list[str] = []
        phrase: list[str] = []  # the tokens of the phrase being read
        subject: list[str] = []  # the phrase's content terms before its negation
        for at, token in enumerate([*clause, PHRASE], start):
            if token == PHRASE:
                if answers and "n" in phrase and not any(_is_content(t) for t in phrase):
                    negate(terms or last)  # "..., infelizmente não": a no to what came before
                negated = scoped = False
                phrase.clear()
                subject.clear()
                continue
            phrase.append(token)
            if token in markers:
                if subjects is not None and not negated:
                    subjects.update(subject)
                negated = True
                scoped = token == _WITHOUT
            elif scoped and token.startswith(_OBJECT_ENDS):
                negated = scoped = False  # "sem juros vale apenas para cartão": not the card
            elif _is_content(token):
                out.add((token, withdrawn or negated))
                terms.append(token)
                if negated and at in passives:
                    negate(subject)
                elif not negated:
                    subject.append(token)
        if terms:
            last[:] = terms
        clause.clear()

    for at, token in enumerate(seq):
        if token == SENTENCE or token.startswith("c:"):
            close()
            start = at
        clause.append(token)
    close()
    return frozenset(out)


def next_content(seq: tuple[str, ...], at: int, skip: frozenset[str] = frozenset()) -> str | None:
    """The first content word or party after ``seq[at]`` in its clause, but those of `skip`
    (None: none).
    """
    for token in seq[at + 1:]:
        if token == SENTENCE or token.startswith("c:"):
            return None
        if (_is_content(token) or token.startswith("w:")) and token not in skip:
            return token
    return None


#: Adverbs of manner between a party and its act, whose act is the verb after them ("members
#: automatically receive", "we immediately refund", "o cliente normalmente recebe"), as stemmed.
_MANNER: Final = frozenset({
    "automat", "immed", "usual", "normal", "typic", "general", "instant", "quick", "prompt",
    "automaticament", "imediatament", "normalment", "geralment", "rapidament", "diretament", "instantaneament"})


def previous_content(seq: tuple[str, ...], at: int) -> str | None:
    """The last content word before ``seq[at]`` in its clause (None: none)."""
    for token in reversed(seq[:at]):
        if token == SENTENCE or token.startswith("c:"):
            return None
        if _is_content(token):
            return token
    return None


_LINK_RE: Final = re.compile(r"\[\[[^\[\]\n]{1,120}\]\]")
#: Poles read alike for a topic: a lower bound is a lower bound ("above R$ 199",
#: "from R$ 249 on"), an upper one an upper one.
_TOPIC_POLES: Final = {"p:p_at_least": "p:p_above", "p:p_at_most": "p:p_below"}


@lru_cache(maxsize=1)
def _loose_terms() -> dict[str, str]:
    """Content token -> its retrieval synonym group (`analysis.synonyms`), for `topic`:
    looser than `CLAIM_SYNONYMS` on purpose ("shipping" and "delivery" are one topic,
    two claims).
    """
    loose: dict[str, str] = {}
    for word, group in SYNONYMS.items():
        for portuguese, english in ((True, False), (False, True)):
            token = _word_token(word, portuguese, english)
            if token is not None and _is_content(token):
                loose.setdefault(token, group)
    return loose


@lru_cache(maxsize=8192)
def topic(text: str) -> frozenset[str]:
    """What `text` is about, whatever it says of it: its content terms (read through the
    looser retrieval synonyms), poles (bounds of one side alike) and withdrawals, and the
    unit of each value (``u:brl``, ``u:day``; ``u:date`` for a date), without the values
    themselves; ``[[links]]`` and the units of bare numbers are left out. Two versions
    of one rule ("Returns cost R$ 15", "Returns cost R$ 20"; "Orders above R$ 199 ship
    free", "From R$ 249 on, delivery is free") have the same topic.
    """
    loose = _loose_terms()
    out: set[str] = set()
    for token in tokens(_LINK_RE.sub(" ", text)):  # a [[link]] names another concept
        if token.startswith("m:"):
            unit = token.split(":", 2)[2]
            if unit:  # a bare number's unit says nothing of the topic
                out.add("u:" + unit)
        elif token.startswith("d:"):
            out.add("u:date")
        elif token.startswith("p:"):
            out.add(_TOPIC_POLES.get(token, token))
        elif _is_content(token):
            out.add(loose.get(token, token))
        elif token == WITHDRAWAL:
            out.add(token)
    return frozenset(out)


@lru_cache(maxsize=8192)
def content_terms(text: str) -> frozenset[str]:
    """The content terms of `text` as `tokens` reads them (no roles, poles, values)."""
    return frozenset(t for t in tokens(text) if _is_content(t))


def claim_terms(text: str) -> frozenset[str]:
    """`content_terms` with each duration in the largest unit it fills (`whole_duration`): what
    the same-claim check compares ("12 meses" is "1 ano"; a tool's bare numbers, which the
    trust checks read, keep theirs).
    """
    return frozenset(map(whole_duration, content_terms(text)))


def canonical_terms(text: str) -> frozenset[str]:
    """`claim_terms` of the canonical reading (`tokens` with `active`, as `structure` reads
    it: "must use two-factor authentication" has no "use"): two texts whose canonical terms
    differ have no equal structure.
    """
    return frozenset(whole_duration(t) for t in tokens(text, active=True) if _is_content(t))
