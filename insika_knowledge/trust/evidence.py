"""Grounding by evidence: the business side's own words that state a claim, verified.

The extraction asks the model, per candidate, for ``evidence``: the words of the business
side (agent messages, tool results the business controls, the system prompt) that state
it, quoted verbatim. `check` verifies them against the transcript:

1. each quote must be found verbatim (case, spacing and typographic quotes aside) in one
   message; a quote found only in a customer message, or only in a customer-written field
   of a tool result (``customer_note``, ``observacao_cliente``, ``comments``...), is the
   customer's, whatever the model says;
2. the sentence around a business quote must state the claim, not turn it down or merely
   take note of it: its polarity must agree with the claim's on every term they share
   ("we do **not** have a 40% discount" is no support for "a 40% discount"), it must not
   be an acknowledgement or a hedge ("noted", "got it", "let me check", "anotado",
   "vou verificar"), a question ("Did someone tell you we ship for free?") or a report of
   what someone else said ("You said we ship for free, but..."), and it must not only
   echo what the customer asserted before it ("Got it, R$ 100 then" after "it's cem reais
   now");
3. together the verified sentences must carry every value and date of the claim (with
   its unit: "R$ 40" is no support for "40%"), and what the claim is about: at least one
   shared name or term when the claim has values, half of its content terms otherwise,
   and in either case a word of what its price or "free" is of ("A entrega é grátis"
   says nothing of "A instalação é grátis").

`trust.sources` splits a transcript into who wrote each piece (a tool result's customer-written
fields are the customer's); the heuristic grounding (`trust.grounding`, used when the
model gave no evidence) reads the same pieces and the same sentence checks.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import os
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Final

from insika_knowledge.analysis.arrangement import charged_on_top, rearranged
from insika_knowledge.analysis.numbers import CURRENCIES
from insika_knowledge.analysis.remedies import other_form
from insika_knowledge.analysis.structure import (
    CONDITIONAL,
    EN_PAST_ONLY,
    FREE,
    FUTURE,
    JOINS,
    MONTH_NAMES,
    PAST,
    VALUE_WORDS,
    WEEKDAY_NAMES,
    WITHDRAWAL,
    content_terms,
    is_calendar_date,
    names,
    negated_subjects,
    plain_word,
    polarity,
    same_duration,
    tokens,
)
from insika_knowledge.analysis.text import STOP_WORDS, fold, negation_count, text_language
from insika_knowledge.trust.corrections import (
    CHANGE_REPORT,
    CONTRAST_TAIL,
    CORRECTING,
    MONTH,
    OPENING_CHARS,
    RESTATING,
    RETRACTING,
    VALUE_NOUNS,
    VERSION_WORDS,
    narrower_subject,
    opens_correcting,
    without_asides,
    without_change_account,
    without_explanation,
    without_old_value,
)
from insika_knowledge.trust.sources import Piece

#: Sentences that take note of something or put it off, not state it (folded). A plain
#: "ok", "sure" or "certo" is not one: an agent may open a rule with it (the echo check
#: catches an agreeable repeat of the customer).
ACKNOWLEDGED: Final = re.compile(
    r"\b(?:noted|got it|understood|i see|thanks? (?:you )?for (?:letting me know|the info|the tip|telling)"
    r"|i(?:'ll| will) (?:pass (?:it|this|that) on|note|check|look into|verify|forward)|let me (?:check|verify|see|look)"
    r"|i(?:'m| am) not sure|if that(?:'s| is) (?:the case|true)|good to know"
    r"|i (?:think|believe|guess|suppose)|if i(?:'m| am) not mistaken|acho que|creio que|se nao me engano"
    r"|i(?:'ll| will) ask|i (?:don'?t|do not) know (?:if|whether)"
    r"|anotado|anotei|entendido|entendi|registrado|registrei|vou (?:verificar|checar|anotar|registrar|confirmar"
    r"|encaminhar|repassar|perguntar|consultar|ver)|deixa eu (?:ver|verificar|checar)|nao tenho certeza"
    r"|nao sei (?:se|dizer)|se for assim"
    r"|obrigad[oa] (?:por avisar|pela informacao)|bom saber)\b"
)
#: Sentences that report what someone else said, not what the business states (folded):
#: "you said we ship for free, but...", "disseram que a troca é grátis?".
REPORTED: Final = re.compile(
    r"\b(?:you (?:said|say|mentioned|heard|were told)|(?:someone|somebody|they|who|\w+ friend) told you"
    r"|according to you|(?<!our )(?<!nosso )(?<!nossa )(?:the )?(?:website|site|ad|advert|flyer|post|page)"
    r" (?:says|said|claims|claimed)"
    r"|other (?:stores|shops|companies) |voce (?:disse|falou|mencionou|ouviu)|vc (?:disse|falou)"
    r"|(?:te|lhe) (?:disseram|falaram|informaram)|quem (?:te|lhe) (?:disse|falou)|outras lojas"
    r"|o site (?:diz|dizia|falava)"
    # a person's words reported ("your phone agent said ...", "o vendedor me garantiu ..."): a
    # promise someone made, not the business's rule
    r"|(?:your|my|the|a|an|one|another|seu|sua|o|a|um|uma|outro|outra) (?:phone |other |previous |last |store "
    r"|outro |outra )?(?:agent|rep|representative|attendant|employee|salesperson|seller|colleague|manager|friend"
    r"|atendente|vendedora?|funcionari[oa]|gerente|colega|amig[oa])s? (?:me |us |nos |lhe |te )?"
    r"(?:said|says|told|claimed|claims|promised|mentioned|assured|disse|falou|prometeu|afirmou|garantiu|informou)\b"
    # a warning against someone else's offer ("cuidado com golpes que prometem...", "se
    # alguém oferecer..., é golpe", "there's a rumor that...")
    r"|cuidado com|beware of|golpes? que|e golpe|(?:is|it'?s) a scam|scams? (?:that|promising|offering)"
    r"|rumou?rs?|boatos?|se alguem|if (?:someone|anyone|somebody) (?:offers|tells|promises|says)"
    # another business doing something ("a loja concorrente oferece...", "other airlines charge")
    r"|concorrentes? (?:oferecem?|da|dao|tem|cobram?|aceitam?)|competitors? (?:offer|give|charge|have|accept)s?"
    r"|other (?:airlines|carriers|stores|shops) (?:offer|give|charge|have|include|accept)"
    r"|outras? (?:companhias?|cias?|empresas?) (?:oferecem?|dao|da|cobram?|tem)"
    r"|(?:banner|anuncio|propaganda|ad) (?:says|said|dizia|diz|falava)"
    r"|(?:forum|blog|post|article|review|thread|materia|reportagem) (?:says|said|saying|claims|diz|dizendo|dizia)"
    # what holds only somewhere else ("a promoção de 30% é só lá", "that's only there")
    r"|(?:so|somente|apenas) la|only (?:there|over there)"
    # other businesses of any kind ("Other marketplaces give 30 days")
    r"|other \w+s (?:offer|give|charge|have|include|accept|allow|let)s?"
    r"|outr[ao]s \w+ (?:oferecem|dao|cobram|tem|aceitam|permitem|deixam)"
    # the customer's own message read back ("Na sua mensagem consta que...")
    r"|(?:na|em) sua (?:mensagem|msg|e-?mail)|in your (?:message|e-?mail)|your (?:message|e-?mail) (?:says|said)"
    # what some people say ("Alguns clientes comentam que...", "people say", "dizem por aí")
    r"|(?:some|many|alguns|algumas|muitos|muitas) (?:customers|clients|people|clientes|pessoas|consumidores)"
    r" (?:say|said|comment|think|believe|claim|comentam|dizem|acham|falam|pensam|afirmam)"
    r"|people say|rumou?r has it|dizem por ai|dizem que|falam que"
    # a message going around ("uma mensagem circulando no WhatsApp prometendo...")
    r"|circulando|circulating|going around"
    r"|(?:message|mensagem|post|e-?mail|corrente|chain|ad|anuncio)s? (?:\w+ ){0,4}(?:prometendo|promising"
    r"|claiming|alegando|dizendo|saying))\b")
#: A lead-in that sets others aside before the business's own rule ("Unlike other stores,
#: we refund...", "Diferente de outras lojas, nós devolvemos..."), read without it.
CONTRAST: Final = re.compile(
    r"^\W*(?:unlike|different from|differently from|diferente d[aeo]s?|diferentemente d[aeo]s?"
    r"|ao contrario d[aeo]s?)\b[^,]*,\s*")
#: Words that place what a sentence says in the past ("Last year's Black Friday: 40% off").
PAST_TIME: Final = re.compile(
    r"\b(?:last (?:year|month|week|season|time|summer|winter|christmas|black friday)(?:'s)?"
    r"|(?:ano|mes) passado|semana passada|(?:n|d)?[oa] ultim[oa] (?:ano|mes|black friday|natal|temporada)"
    r"|previously|formerly|in the past|anteriormente|antigamente|no passado|yesterday|ontem)\b")
#: A lead-in clause that sets a condition ("Se você comprou até as 14h, ...") or gives the
#: customer's case as its reason ("Since you booked a through ticket with us, ...", "Como
#: você comprou pelo app, ..."): its tense is the condition's, not the rule's.
CONDITION: Final = re.compile(
    r"^\W*(?:if|when|once|since|because|se|quando|caso|quem|como|porque|ja que|uma vez que)\b[^,]*,\s*")
#: A condition after the main clause ("..., as long as you attend 80%", "... desde que o
#: produto esteja lacrado"): a future before it is the rule's consequence, as after `CONDITION`.
TRAILING_CONDITION: Final = re.compile(
    r"\b(?:as long as|so long as|as soon as|provided(?: that)?|only if|if|unless|whenever|once|desde que|contanto que|"
    r"sempre que|caso|se|assim que|a menos que)\s")
#: Where a condition after the main clause opens (folded): a past from there is the
#: event the rule answers ("We refund shipping only when we sent the wrong item"), not when
#: the rule held.
_CONDITION_AFTER: Final = re.compile(
    r"\b(?:only if|only when|if|when|whenever|unless|as long as|provided(?: that)?|se|quando|sempre que|caso"
    r"|desde que|a menos que)\b")


def _main_clause(text: str) -> str:
    """`text` up to a condition after its main clause (`_CONDITION_AFTER`); all of it when
    the condition opens it ("When we launched shipping was free" is a past).
    """
    after = _CONDITION_AFTER.search(text)
    return text[:after.start()] if after is not None and text[:after.start()].strip() else text


#: A recurrence in time that makes a future a standing rule ("You won't be charged for the
#: first four withdrawals each month", "Você sempre vai ganhar frete grátis"), folded; a
#: quantifier over things is none ("We will offer free shipping on every order": an announcement).
_HABITUAL: Final = re.compile(
    r"\b(?:each|every|per|cada|todo|toda|todos|todas|por)\s+(?:time|month|week|year|day|mes|semana|ano|dia|vez)"
    r"(?:s|es)?\b|\b(?:always|sempre)\b"
    # the moment of every order ("at checkout it'll use whichever saves you more")
    r"|\b(?:at checkout|no checkout|na finalizacao d[ao] (?:compra|pedido))\b")
#: What makes a future this customer's alone ("Para você, a taxa será isenta todo mês", "since
#: I've applied a one-time courtesy credit to your account"), folded.
_FOR_THIS_ONE: Final = re.compile(
    r"\b(?:para voce|pra voce|pra vc|for you|i've|i have|i applied|i've applied|apliquei|one-time|one time"
    r"|courtesy|cortesia|exception|excecao|this time|desta vez|dessa vez|your account|sua conta|seu caso"
    r"|your case|no seu|in your)\b")
#: A yes word, alone or with the question's verb (folded): what a grant for a while or once
#: is adjoined to ("Claro, por enquanto", "Dá sim, excepcionalmente", "Of course, as a
#: one-time courtesy").
_YES_WORD: Final = (r"(?:yes|yep|yeah|sure|of course|certainly|absolutely|sim|claro|com certeza|pode sim|da sim"
                    r"|tem sim)")
#: What makes a grant a one-off, not a rule, said of this time or this order ("I've added a
#: complimentary late check-out this time", "Dessa vez passa", "only for this order"), folded.
ONE_OFF: Final = re.compile(
    r"(?<!\bat )\bthis time\b(?! of| and)|\bjust this once\b|\b(?:just )?this one time\b|\bone-time exception\b"
    r"|\bone[- ]off\b"
    # a yes granted once: "Yes, as a one-time courtesy", "Dá sim, excepcionalmente"
    rf"|\b{_YES_WORD}\W+(?:as a one[- ]time|as an exception|exceptionally|excepcionalmente|como excecao)\b"
    r"|\b(?:so )?(?:desta|dessa|nesta|nessa) vez\b"
    r"|\bonly for this (?:order|booking|reservation|stay|purchase|visit|trip)\b"
    r"|\b(?:so|apenas|somente) (?:(?:para|pra) (?:este|esse|esta|essa)|neste|nesse|nesta|nessa) "
    r"(?:pedido|compra|reserva|estadia|vez)\b")  # "só para compra acima de R$ 200" is a rule
#: An exception the agent makes in its own person ("As a one-time exception, I'll waive it",
#: "Excepcionalmente, vou liberar a troca"): a grant, where "As an exception to our 30-day
#: policy, defective items can be returned within 90 days" is a rule. Folded.
EXCEPTION_GRANTED: Final = re.compile(
    r"\b(?:as an exception|as a one-time exception|exceptionally|make an exception|made an exception"
    r"|excepcionalmente|(?:uma|como) excecao|em carater excepcional)\b")
#: A gesture or a courtesy granted at once in the agent's own person ("As a one-time
#: gesture, I've refunded your main course", "Como gesto de boa vontade, estornei a
#: sobremesa"): the grant's verb right after it. "As a courtesy, we offer every guest free
#: parking", "As a courtesy reminder, I'm letting you know...", "Como cortesia, abrimos às
#: 5h" are rules. Folded.
GESTURE_GRANTED: Final = re.compile(
    r"\bas a (?:(?:one-time|one time|small|goodwill|little) )*(?:gesture|courtesy)(?: of goodwill)?,?\s+"
    r"(?:i've|i have|i'll|i will|i'm going to|i am going to|i went ahead and|let me)\s+(?:\w+\s+)?"
    r"(?:refund|credit|add|waiv|appl|comp|upgrad|includ|send|sent|cover|extend|issu|remov|reduc|drop)"
    r"|\b(?:como|a titulo de) (?:(?:um|uma|pequen[oa]) )*(?:gesto(?: de boa vontade)?|cortesia)(?! d[aeo]s? )"
    r",?\s+(?:eu )?(?:ja )?(?:vou (?:te |lhe )?(?:estornar|liberar|isentar|creditar|dar|incluir|adicionar|cobrir"
    r"|reembolsar|devolver|enviar|mandar|aplicar|abonar|conceder|oferecer|retirar|tirar|zerar|descontar)"
    r"|(?:te |lhe )?(?:estornei|liberei|isentei|creditei|dei|adicionei|cobri|reembolsei|devolvi|enviei"
    r"|mandei|apliquei|abonei|concedi|ofereci|retirei|tirei|zerei|descontei))\b")
#: A gesture or a courtesy named after the grant it qualifies ("I've applied a $15 credit to
#: your account, as a goodwill gesture", "liberei a troca, como cortesia"), folded: with the
#: agent's own person (`_GRANTED`) a one-off.
_GESTURE_AFTER: Final = re.compile(
    r"\b(?:as|como) (?:an? |um |uma )?(?:(?:one-time|one time|small|little|goodwill|pequen[oa]) )*"
    r"(?:gesture|courtesy|gesto|cortesia)\b")
def _gesture_after(folded: str) -> bool:
    """True when a gesture or a courtesy is named after a grant in the agent's own person
    (`_GESTURE_AFTER` after `_GRANTED`): "I've applied a $15 credit, as a goodwill gesture";
    not "As a courtesy reminder, I'm letting you know that ...".
    """
    granted = _GRANTED.search(folded)
    return granted is not None and _GESTURE_AFTER.search(folded, granted.end()) is not None


#: The agent's own person in a grant already made or offered ("I've", "I can", "liberei"),
#: beside a promise's (`_PROMISE`: "I'll", "vou"), folded.
_GRANTED: Final = re.compile(r"\b(?:i've|i have|i can|i'm|let me|liberei|abri|fiz|fizemos|abrimos|liberamos)\b")


def one_off(folded: str) -> bool:
    """True when a folded business sentence grants something this once (`ONE_OFF`), or
    makes an exception in the agent's own person or for today (`EXCEPTION_GRANTED`, with
    `_PROMISE`, `_GRANTED` or `_TODAY`), or grants a gesture or a courtesy in it
    (`GESTURE_GRANTED`, or `_GESTURE_AFTER` the grant), or follows from today's circumstance
    (`_BECAUSE_OF_TODAY`).
    """
    return ONE_OFF.search(folded) is not None or GESTURE_GRANTED.search(folded) is not None \
        or _gesture_after(folded) \
        or _BECAUSE_OF_TODAY.search(folded) is not None or (
        EXCEPTION_GRANTED.search(folded) is not None
        and (_PROMISE.search(folded) is not None or _GRANTED.search(folded) is not None
             or _TODAY.search(folded) is not None))


#: This day, folded: an exception made for it is made once ("Excepcionalmente hoje podemos
#: aceitar a troca sem nota").
_TODAY_WORDS: Final = r"\b(?:today|tonight|hoje|hj|right now)\b"
_TODAY: Final = re.compile(_TODAY_WORDS)
#: The words that open what follows from what was said before them ("..., so we'll add it",
#: "..., então vou incluir"); a folded text's "entao" too.
_SO: Final = r",\s+(?:so|therefore|which\s+is\s+why|ent[ãa]o|por\s+isso|portanto|logo)\b"
#: A consequence of this day's circumstance ("Your flight is full today, so we can't accept
#: pets in the cabin", "Hoje o sistema está fora do ar, então ..."), folded.
_BECAUSE_OF_TODAY: Final = re.compile(rf"{_TODAY_WORDS}[^,.;]*{_SO}")


#: For the time being (folded).
_FOR_NOW: Final = (r"(?:for now|for the time being|for the moment|at the moment|right now|temporarily|por enquanto"
                   r"|por ora|por agora|no momento|por hora|temporariamente)\b")
#: What limits an offer to a while ("This week only, large popcorn comes with free
#: refills", "só hoje", "for a limited time", "enquanto durarem os estoques"), folded: a
#: promotion, not a standing rule. "only this model" and "de segunda até domingo" are none.
TEMPORARY: Final = re.compile(
    r"\b(?:today|tonight|this (?:week|weekend|month))\s+only\b"
    r"|\bonly (?:today|tonight|this (?:week|weekend))\b(?!')"
    r"|\bfor a limited time\b|\blimited[- ]time\b|\bwhile (?:supplies|stocks?) lasts?\b"
    r"|\b(?:so|somente|apenas) (?:hoje|(?:nest|ness|est|ess)[ea] (?:semana|fim de semana)|ate amanha)\b"
    r"|\bpor tempo limitado\b|\benquanto durarem os estoques\b"
    # "só até o fim deste mês", "only until the end of the month"; "nesta promoção de julho"
    r"|\b(?:so|somente|apenas|only) (?:ate|until) (?:o |the )?(?:fim|final|end) (?:(?:do|deste|desse|of the|of this) )?"
    r"(?:mes|semana|ano|month|week|year)\b"
    r"|(?<!mesmo )(?<!even )\b(?:nesta|nessa|in this|for this) (?:promocao|promotion|campanha|campaign)\b"
    r"|\bfor the next (?:\d+|\w+) (?:hours?|days?)\b|\b(?:nas|pelas) proximas (?:\d+|\w+) (?:horas|dias)\b"
    # a yes for the time being ("For now, yes", "Sim, por enquanto"; not the rule's own "for
    # now": "não chegamos a Manaus por enquanto" states where the store delivers)
    rf"|\b{_FOR_NOW}\W+{_YES_WORD}\b|\b{_YES_WORD}\W+{_FOR_NOW}")
#: A sentence that says its offer ends ("..., but the promo ends Friday", "a promoção
#: acaba sexta"), folded: what it offers holds for a while.
OFFER_ENDS: Final = re.compile(
    r"\b(?:promo|promotion|sale|offer|deal|promocao|oferta|liquidacao|campanha)s?\s+"
    r"(?:ends|expires|runs out|is over|acaba|termina|encerra|vai ate|vale ate|expira)\b")
#: A sentence that says the offer is no longer one of a while, or holds all year (folded):
#: "no longer for a limited time: it's now permanent", "o ano todo, não só durante a promoção".
_STANDING_NOW: Final = re.compile(
    r"\b(?:no longer|not just|not only|all year|year[- ]round|permanent(?:ly)?|nao (?:e )?mais|nao so|nao apenas"
    r"|o ano (?:todo|inteiro)|permanente(?:mente)?)\b")
_HOLIDAY: Final = (r"(?:christmas|new year'?s?(?: day| eve)?|thanksgiving|labor day|memorial day|black friday"
                   r"|cyber monday|easter|(?:o )?natal|(?:o )?ano novo|(?:a )?pascoa|(?:o )?carnaval"
                   r"|(?:o )?dia das maes|(?:o )?dia dos pais|(?:o )?dia das criancas)")
#: A day's name ("segunda-feira" too).
_WEEKDAY: Final = rf"(?:{'|'.join(WEEKDAY_NAMES)})(?:-feira| feira)?"
#: Not just after a day's name: "Monday until Sunday", "segunda-feira até sábado" are ranges.
_AFTER_NO_DAY: Final = "".join(f"(?<!{day} )" for day in (
    "day", "feira", *(d for d in WEEKDAY_NAMES if not d.endswith("day"))))
#: The window of an offer: until a named day or the end of a while ("Shipping is free until
#: Sunday", "até o fim do mês"), or while a sale lasts ("During our summer sale, shipping is
#: free", "na nossa promoção de aniversário"). Read only in a clause that offers something
#: (`_OFFERING`), and not in one that says the rule holds then too or recurs (`_STILL`):
#: "Classes can be booked until Thursday", "Items bought during our annual sale can be
#: exchanged", "Free shipping applies to all orders, including those placed during our sale"
#: and "Each week's prices are valid until Tuesday" are standing rules.
OFFER_WINDOW: Final = re.compile(
    rf"{_AFTER_NO_DAY}\b(?:until|till|through|ate) (?:(?:this|next|o|a|este|esta|o proximo|a proxima) )?"
    rf"(?:{_WEEKDAY}|tomorrow|amanha"
    r"|the end of (?:the |this )?(?:week|weekend|month)|(?:o )?(?:fim|final) (?:do mes|da semana|de semana)"
    rf"|(?:the )?(?:{MONTH} \d{{1,2}}(?:st|nd|rd|th)?|\d{{1,2}}(?:st|nd|rd|th)? (?:of |de )?{MONTH}|{_HOLIDAY}"
    r"|(?:o )?dia \d{1,2}|\d{1,2}/\d{1,2}))\b"
    r"(?! of| for| d[aoe]\b| para)"
    r"|\b(?:this (?:weekend|holiday season|season)|(?:neste|nesse|este) fim de semana|nesta temporada)\b"
    r"|\b(?:during|for) (?:our|the|this) (?:[a-z-]+ ){0,2}(?:sale|promotion|promo|campaign)\b"
    r"(?! items?| products?| prices?| merchandise)"
    r"|\b(?:durante|na|nesta|nessa) (?:a )?(?:nossa )?(?:liquidacao|promocao|campanha|black friday|queima)\b"
    # a month's campaign: "Durante o mês de janeiro ...", "during March", "estamos com uma campanha"
    rf"|\b(?:durante|during|throughout) (?:o mes de |todo o mes de |the month of |all of )?{MONTH}\b"
    r"|\b(?:estamos com|temos|we(?:'re| are) running|we have) (?:uma |a |an )(?:[a-z-]+ ){0,2}"
    r"(?:campanha|promocao|promo|promotion|campaign|sale)\b")
#: What an offer gives ("free", "20% off", "grátis", "desconto", "cashback", "double").
_OFFERING: Final = re.compile(
    r"\b(?:free|complimentary|discount(?:ed)?|off|save|cashback|double|bonus|gift|gratis|gratuit[oa]s?|desconto"
    r"|brinde|dobro|de graca|sem custo|isencao|isent[oa]s?|waived?)\b|%")
#: A clause that says its rule holds during the window too, or every time ("including those
#: placed during the sale", "mesmo durante a liquidação", "each week", "todo mês").
_STILL: Final = re.compile(
    r"\b(?:even|also|including|as well|too|except|excluding|mesmo|tambem|inclusive|exceto|menos|salvo|ate durante"
    r"|(?:each|every|cada|tod[oa]s? (?:as |os )?)(?:week|month|semana|mes)|weekly|monthly|semanal|mensal)\b"
    r"|\b(?:week|month)'s\b")


def temporary(folded: str) -> bool:
    """True when folded business text limits what it says to a while: `TEMPORARY`, or an
    `OFFER_WINDOW` in a clause that offers something and does not say it holds anyway.
    """
    if _STANDING_NOW.search(folded) is not None:
        return False  # "no longer for a limited time: now permanent", "all year, not just during our sale"
    if TEMPORARY.search(folded) is not None:
        return True
    return (OFFER_WINDOW.search(folded) is not None and _OFFERING.search(folded) is not None
            and _STILL.search(folded) is None)


#: Where a sentence's clauses part ("Normally it costs $40, but I've waived it this time";
#: "always ..., and this week only ...").
_CLAUSE_BREAK: Final = re.compile(
    r",?\s+(?:but|mas|porem|however|though|although|embora)\s+|;\s*|,\s+(?:and|e|plus)\s+")
#: A clause opening that marks it the standing rule beside an exception or an offer
#: ("Normally late checkout costs $40, but...", "Large popcorn always comes with...", "...
#: are free anyway").
_STANDING: Final = re.compile(
    r"^\W*(?:normally|usually|generally|ordinarily|as a rule|by default|our standard|the standard|the regular"
    r"|per (?:our |the )?(?:policy|rules?)|by (?:the )?(?:policy|rules?)|officially"
    r"|normalmente|geralmente|usualmente|em geral|de costume|por padrao|via de regra|pela regra|por regra"
    r"|(?:segundo|conforme|de acordo com) a (?:regra|politica)|pela politica|oficialmente)\b"
    r"|\b(?:always|sempre)\b"
    # a rule that holds whatever was granted ("..., and changes within 24 hours are free anyway")
    r"|\b(?:anyway|in any case|regardless|de qualquer (?:forma|jeito|maneira)|de todo jeito|em todo caso)\W*$")


def limited(claim: str, folded: str) -> str:
    """Why folded business `folded` states no standing rule of `claim` though it may say
    it: ``"grants it once"`` (`one_off`), read in the whole sentence ("Late checkout is
    free, but only this time"), or only in the clause that says most of the claim when that
    clause marks itself the standing rule ("Normally late checkout costs $40, but I've
    waived it this time" states the fee); or ``"says it for a limited time"`` (`TEMPORARY`),
    read in the clause that says most of the claim ("Shipping is free over $50, plus for a
    limited time a free tote" states the shipping rule). ``""`` when neither, or when the
    claim says so itself.
    """
    if not one_off(folded) and not temporary(folded):
        if OFFER_ENDS.search(folded) and _OFFERING.search(folded) and not _STANDING_NOW.search(folded) \
                and not OFFER_ENDS.search(fold(claim)):
            return "says it for a limited time"  # "Shipping is free, but the promo ends Friday"
        return ""  # the common case: no clause to weigh
    wanted = content_terms(claim)
    clauses = [c for c in _CLAUSE_BREAK.split(folded) if c.strip()] or [folded]
    shared = [len(content_terms(c) & wanted) for c in clauses]
    closest = [c for c, n in zip(clauses, shared, strict=True) if n == max(shared)]
    read = closest if len(clauses) > 1 and all(_STANDING.search(c) for c in closest) else [folded]
    folded_claim = fold(claim)
    if any(one_off(c) for c in read) and not one_off(folded_claim):
        return "grants it once"  # a grant to this customer this time states no rule
    if any(temporary(c) for c in closest) and not temporary(folded_claim):
        return "says it for a limited time"  # in the claim's own clause: "..., and só hoje também..."
    return ""


#: A future the agent gives in its own person ("I'll waive it if...", "vou liberar se..."):
#: a promise to this customer, not a rule's consequence.
_PROMISE: Final = re.compile(r"\b(?:i'll|i\u2019ll|i will|i'm going to|i am going to|vou|irei|eu vou|posso)\b")
#: A sentence that opens by placing itself with a named someone ("Na Azul, ...", "On Delta,
#: ...", as written): what it says is about there when the next one says "here".
ELSEWHERE: Final = re.compile(r"^\W*(?:Na|No|Em|On|At|In|With)\s+[A-Z][\w-]*(?:\s+[A-Z][\w-]*)*\b")
#: A sentence that opens by placing what it says here, with the business ("Aqui cobramos
#: R$ 300", "With us it's $125"): the sentence before it spoke of somewhere else ("Na Azul,
#: pet até 10 kg viaja grátis na cabine.").
HERE_INSTEAD: Final = re.compile(
    r"^\W*(?:(?:mas|ja|but|while) )?(?:aqui|here|with us|conosco|com a gente|no nosso caso|na nossa loja"
    r"|in our store|at our store|em nossa loja|on our side|on our end|do nosso lado|da nossa parte|our|ours"
    r"|o nosso|a nossa|os nossos|as nossas)\b")
#: A question that announces rather than asks ("Did you know we ship for free?", "...,
#: isn't that great?"): the sentence states what it holds.
ANNOUNCING: Final = re.compile(
    r"^\W*(?:did you know|you know what|sabia que|voce sabia|sabia)\b"
    r"|(?:,|-|\u2013|\u2014)\s*(?:isn'?t (?:that|it) (?:great|nice|good|amazing|awesome|cool)|did you know(?: that)?"
    r"|nao e (?:otimo|demais|legal)|legal,? ne)\W*$")
#: A question that asks the customer for something ("Could you please provide your
#: reservation id...?", "Pode me informar o CPF?"): the agent doing what a procedure says,
#: not a question about the rule.
REQUESTING: Final = re.compile(
    r"^\W*(?:(?:could|can|would|will) you(?: please)?|please|may i (?:have|ask)|may we|"
    r"(?:voce )?(?:poderia|pode|podes)(?: me)?(?: por favor)?|por favor|me (?:passa|informa|envia|manda))\b")
#: Words of a sentence that, before the rule, make it a wish, a doubt, a supposition or a
#: plan ("We wish we could...", "I wonder whether...", "If ... we would go broke",
#: "Estamos avaliando oferecer..."); not "whether you pay by card or Pix", nor "regardless of
#: whether ..." (regardless).
HYPOTHETICAL: Final = re.compile(
    # "I wish pets flew free" wishes; "... if they wish", "as you wish" permit (a rule)
    r"\b(?:(?<!\bif you )(?<!\bif they )(?<!\bas you )(?<!\bif we )wish(?!\s*(?:[.,;:!?)]|$))"
    r"|wonder|(?<!regardless of )(?<!no matter )whether(?![^,.;]*\bor\b)|imagine|suppose|hypothetically"
    r"|se ao menos|quem dera"
    r"|gostariamos de (?:oferecer|dar|ter|poder)|(?:we|i)(?:'d| would) love to|adorariamos"
    r"|seria (?:otimo|bom|legal|incrivel) se"
    # a Portuguese counterfactual: "se" with the imperfect subjunctive ("Se houvesse frete
    # grátis, apareceria no carrinho")
    r"|se \w+(?:asse|esse|isse)(?:m|mos)?"
    # a some-day supposition in the conditional ("Se um dia a gente lançar um pacote, aí
    # daria pra...", "if we ever launch one, it would..."); "if you ever need to cancel, you
    # can..." is a rule's condition
    r"|(?:se (?:um|algum) dia|if (?:we|you) ever|if one day|some ?day)\b[^.!?;]*\b(?:daria|seria|poderia"
    r"|poderiamos|would|could)"
    # a plan, not a rule ("Estamos avaliando oferecer...", "we're considering...")
    r"|avaliando|estudando|considerando|planejando|pretendemos|pensando em|em breve|teremos|discutindo|testando"
    r"|considering|evaluating|planning|plan to|thinking (?:about|of)|exploring|coming soon|discussing|testing)\b")
#: A question that asserts and asks for agreement ("..., right?", "..., né?"): the
#: customer said it; an agent's yes to it is an echo, not the business's statement.
TAG_QUESTION: Final = re.compile(
    r"(?:[,\s])(?:ne|nao e|nao|certo|correto|right|correct|isn'?t (?:it|that)|aren'?t (?:they|you)|don'?t you"
    r"|do(?:n'?t| not) they|ok|okay|yes|sim|verdade|confere|no|ta|beleza|blz|combinado|fechado|viu|alright)"
    r"\s*\?+\s*$")
#: Words that negate a term for the polarity check beyond the analyser's own ("non-refundable").
_EXTRA_NEGATIONS: Final = re.compile(r"\bnon(?!e\b|etheless\b|sense\b)[- ]?(?=[a-z])")  # not "none"
#: A sentence ends after ``. ! ? ;`` and at a line end, and after an emoji, which closes a
#: clause in chat ("Nope, drones can't go in checked bags 😕 bring it in your carry-on").
_SENTENCE_END: Final = re.compile(
    r"(?<=[.!?;])\s+|\n+|\s*[\u2600-\u27bf\U0001f000-\U0001faff][\u2600-\u27bf\U0001f000-\U0001faff\ufe0f\u200d]*\s*")
#: The punctuation that ends a sentence by itself: an emoji after it is no part of it.
_ENDED: Final = (".", "!", "?", ";")
_SPACES: Final = re.compile(r"\s+")
_WORD: Final = re.compile(r"\w")
_TYPOGRAPHIC: Final = str.maketrans({"\u2019": "'", "\u2018": "'", "\u201c": '"', "\u201d": '"',
                                     "\u2013": "-", "\u2014": "-", "\u00a0": " "})
#: The shortest quote that can vouch for anything (characters, after normalising).
MIN_QUOTE_CHARS: Final = 8
#: The share of a value-less claim's content terms the verified sentences must hold.
MIN_COVERAGE: Final = 0.5


def normalised(text: str) -> str:
    """`text` compared as a quote is: folded, typographic marks plain, spaces collapsed."""
    return _SPACES.sub(" ", fold(text.translate(_TYPOGRAPHIC))).strip()


def sentences(text: str) -> list[str]:
    """The sentences of `text` (split after ``. ! ? ;`` and at line ends), each also split
    where it turns to what the business says: after a colon that follows two words or more
    since the last comma, and that a word rather than a price follows ("Cuidado com golpes:
    nunca pedimos sua senha"; not "Sudeste: R$ 15, Norte: R$ 40", nor in a list of fields:
    `_fields`, nor after a plan or branch, the scope of what follows: "Gold members: returns
    within 30 days") and before ", but we" / ", mas hoje"
    (`_TURN`: "Gostaríamos de oferecer mais, mas hoje o Pix dá 5% de cashback").
    """
    out: list[str] = []
    for sentence in (piece for whole in _split(text) for piece in _at_corrections(whole)):
        for part in _TURN.split(sentence):
            fields = _fields(part)
            if fields is not None:
                out += fields
                continue
            start = 0
            for colon in _COLON.finditer(part):  # "Cuidado com golpes: ...", not "Pix: 5%"
                lead = part[start:colon.start()]
                if len(lead.rsplit(",", 1)[-1].split()) >= 2 and not PAST_TIME.search(fold(lead)) \
                        and not _SHORT_ANSWER.match(fold(part[colon.end():])) \
                        and not _NAMED_PLAN.search(lead) and not _NAMED_BRANCH.search(lead):
                    # ("Last year's sale: ..."; "Gold members: ..." is the scope of what follows)
                    out.append(part[start:colon.start() + 1])
                    start = colon.end()
            out.append(part[start:])
    return [s for s in out if _WORD.search(s)]  # "." after an emoji is no sentence


def _fields(part: str) -> list[str] | None:
    """`part` read as a list of fields ("frete troca: pago pelo cliente, frete defeito: pago
    pela loja", a tool's record as `trust.sources` renders it: two colons or more, each after
    a label of at most four words since the last comma), or None when it is no such list.

    A list of short values is one sentence, each label kept with its value (two fields may
    trade values: "Sudeste: R$ 15, Norte: R$ 40"); a list with a value of prose in it is
    one sentence per field ("payout rule: Seller payouts are released 2 business days
    after ..., expected payout date: 2025-03-14").
    """
    colons = [m.start() for m in re.finditer(":", part)]
    leads = [part[:at].rsplit(",", 1)[-1] for at in colons]
    if len(leads) < 2 or any(len(lead.split()) > _FIELD_WORDS for lead in leads):
        return None
    starts = [at - len(lead) for at, lead in zip(colons, leads, strict=True)]
    fields = [part[a:b].strip(" ,") for a, b in zip(starts, [*starts[1:], len(part)], strict=True)]
    if part[:starts[0]].strip(" ,"):
        fields.insert(0, part[:starts[0]].strip(" ,"))
    if all(len(f.split(":", 1)[-1].split()) <= _FIELD_WORDS for f in fields):
        return [part]
    return fields


#: The most words a field's label has, and a short value (`_fields`).
_FIELD_WORDS: Final = 4


def _split(text: str) -> list[str]:
    """`text` split at `_SENTENCE_END`; an emoji that ends a sentence with no mark of its
    own stays in it ("... no mesmo dia 🙄"), one after a mark is dropped ("Brasil?🤔").
    """
    out: list[str] = []
    start = 0
    for end in _SENTENCE_END.finditer(text):
        kept = end.group().rstrip()
        closes = kept.strip() and not text[start:end.start()].rstrip().endswith(_ENDED)
        out.append(text[start:end.start() + len(kept)] if closes else text[start:end.start()])
        start = end.end()
    out.append(text[start:])
    return out


def _at_corrections(sentence: str) -> list[str]:
    """`sentence` split at each dash after which it corrects itself ("You have 30 days —
    sorry, I misspoke: ... within 14 days"): the correction is a sentence of its own, as
    after a full stop, so it takes back the value before it (`CORRECTING`).
    """
    parts, start = [], 0
    for dash in _DASH.finditer(sentence):
        if CORRECTING.search(fold(sentence[dash.end():])[:OPENING_CHARS]):
            parts.append(sentence[start:dash.start()])
            start = dash.end()
    return [p for p in (*parts, sentence[start:]) if p.strip()] or [sentence]


#: A dash between two parts of a sentence (an em or en dash, or a hyphen with spaces).
_DASH: Final = re.compile(r"\s*[\u2013\u2014]\s*|\s+-\s+")
#: Where a sentence turns from what it sets aside to what the business says.
_TURN: Final = re.compile(
    r",\s+(?=(?:mas|but|while|ja|já)\s+(?:hoje|aqui|here|we|nós|nos|with us|conosco|today|atualmente"
    r"|currently|now|agora|no site|online|on our side|on our end|do nosso lado|our)\b)", re.IGNORECASE)
#: A colon a word follows, not a currency sign written with letters ("Norte: R$ 40" is a value).
_COLON: Final = re.compile(r":\s+(?=[^\W\d_])(?!(?i:" + "|".join(
    re.escape(sign) for sign in CURRENCIES if sign[0].isalpha()) + r"))")
#: What after a colon answers its lead-in with a no ("Free shipping to Puerto Rico: not
#: available, sorry"): the two are one sentence (folded; four words at most).
_SHORT_ANSWER: Final = re.compile(
    r"^\W*(?:(?:not|no|nao)(?:\s+\w+)?|unavailable|indisponivel)"
    r"\W*(?:sorry|desculpe|lamento|infelizmente|unfortunately)?\W*$")


@dataclass(frozen=True, slots=True)
class Reading:
    """How a business sentence bears on a claim.

    Attributes:
        states: True when it states the claim's side of things (see the module doc).
        why: when it does not, why: ``acknowledged``, ``asks``, ``reported``, ``tense``,
            ``corrected``, ``contradicts``, ``echo``, ``grants it once``, ``says it for a
            limited time``, ``narrower`` (said of one branch or of something else).
    """

    states: bool
    why: str = ""


def _non(text: str) -> str:
    """`text` with "non-" read as a negation ("non-refundable"); as it is without one."""
    return _EXTRA_NEGATIONS.sub("not ", fold(text)) if "non" in text.lower() else text


def polarity_agrees(claim: str, sentence: str) -> bool:
    """True when no term the two share is negated in one and asserted in the other (a
    term a text both asserts and negates, "ships only to Brazil; no international
    shipping", takes no side; nor does what a negated clause of each is said of,
    `negated_subjects`: "drones can't go in checked bags" states "drones are not allowed in
    checked bags", though the passive's negation bears on its subject); and a term the claim
    negates that the sentence's negated clause is said of is negated by both ("not for
    travel-agency bookings" and "bookings through travel agencies don't include it"; not the
    other way: "Parcelamos em 12x sem juros" asserts what "Não parcelamos ..." denies, though
    its "sem juros" is said of the installments); and a term the sentence negates that
    the claim's negated clause ("não", "not": not "sem", "without") is said of is denied by
    both ("No site o cupom não vale" and "o cupom vale na loja física, mas não no site").
    """
    theirs, ours = _sides(sentence), _sides(claim)
    said_of, claimed_of = negated_subjects(_non(sentence)), negated_subjects(_non(claim))
    denied_of = negated_subjects(_non(claim), clause=True)
    opposed = {term for term, negated in ours.items() if term in theirs and theirs[term] != negated
               and not (negated and term in said_of) and not (not negated and term in denied_of)}
    return not opposed or opposed <= said_of & claimed_of


def pole_denied(claim: str, sentence: str) -> bool:
    """True when `sentence` negates a pole `claim` asserts (the negation right before it), in a
    clause of the claim's own words, and says it no other way: "No, breakfast is not included"
    for "Breakfast is included in the rate" (a count of negations cancels the answer's "No" and
    the "not", and the terms' polarity reads "breakfast", not the pole said of it); not "a
    tarifa Light não inclui marcação de assento" for "A tarifa Light inclui uma mala", nor a
    sentence that sets two cases against each other with a "but".
    """
    mine, theirs = tokens(claim), tokens(sentence)
    if "c:but" in theirs:
        return False  # two cases set against each other ("aren't included in standard bookings, but all suites ...")
    asserted, denied = _poles_said(mine)
    said, negated = _poles_said(theirs)
    words = {t for t in mine if plain_word(t)}
    return any(pole in asserted - denied and pole not in said and _clause_words(theirs, at) <= words
               for at, pole in enumerate(theirs) if pole in negated)


def _clause_words(seq: Sequence[str], at: int) -> set[str]:
    """The words of the clause of `seq` that holds ``seq[at]`` (between commas, clause words
    and sentence ends): what a pole there is said of.
    """
    start = next((k + 1 for k in range(at - 1, -1, -1) if seq[k] in _CLAUSE_STOPS or seq[k].startswith("c:")), 0)
    end = next((k for k in range(at + 1, len(seq)) if seq[k] in _CLAUSE_STOPS or seq[k].startswith("c:")), len(seq))
    return {t for t in seq[start:end] if plain_word(t)}


#: The marks that end a clause in a reading (`tokens`), besides clause words.
_CLAUSE_STOPS: Final = frozenset({",", ".", ";", ":"})


def _poles_said(seq: Sequence[str]) -> tuple[set[str], set[str]]:
    """The poles of `seq` said plainly, and those right after a negation."""
    plain = {t for at, t in enumerate(seq) if t.startswith("p:") and not (at and seq[at - 1] == "n")}
    negated = {t for at, t in enumerate(seq) if t.startswith("p:") and at and seq[at - 1] == "n"}
    return plain, negated


def turns_down(claim: str, sentence: str) -> bool:
    """True when business `sentence`, which says at least half of the words of `claim`'s
    description (its first line), turns the claim down rather than says something else
    about it: it asks about it, reports what someone else said, says it in another tense or
    mood, or negates at least as
    many of the terms the two share as it asserts ("We don't ship every order above $50 for
    free anymore"; not "we only deliver in Brazil, so we can't ship to Portugal" for "ships
    only to Brazilian addresses; requests to ship to Portugal are declined").
    """
    summary = content_terms(claim.split("\n", 1)[0])
    if 2 * len(summary & content_terms(sentence)) < len(summary):
        return False  # about something else: it says less than half of the claim's description
    folded = fold(sentence)
    if REQUESTING.search(folded):
        return False  # the agent asks the customer for something: it turns nothing down
    if _off_statement(claim, folded) or denies(claim, folded):
        return True
    theirs, ours = _sides(sentence), _sides(claim)
    shared = [term for term in ours if term in theirs]
    opposite = sum(theirs[term] != ours[term] for term in shared)
    return opposite > 0 and 2 * opposite >= len(shared)


def denies(claim: str, folded: str) -> bool:
    """True when folded business sentence `folded` says what it speaks of does not exist
    or is not true ("Esse desconto de 20% no Pix não existe", "That discount doesn't
    exist", "isn't real", "no such discount"), or that whoever said it was wrong ("Quem
    disse que a loja dá 20% no Pix se enganou", "Whoever told you ... was wrong"), and the
    claim says no such thing itself.
    """
    found = _DENIES.search(folded) or (_SAID_WRONG.search(folded) and _WHO_SAID.search(folded))
    return bool(found) and not (_DENIES.search(fold(claim)) or _SAID_WRONG.search(fold(claim)))


#: Words saying a thing does not exist or is not true (folded).
_DENIES: Final = re.compile(
    r"\b(?:nao|nunca) (?:existe|existem|existiu|e real|e verdade|procede)\b"
    r"|\b(?:doesn'?t|does not|don'?t|do not|never|no longer) exists?\b|\bnever existed\b"
    r"|\b(?:is|are)(?:n'?t| not) (?:real|true|a thing)\b|\bno such\b")
#: Someone was wrong, and who said it (folded): "quem disse ... se enganou".
_SAID_WRONG: Final = re.compile(r"\b(?:se enganou|se enganaram|estava errad[oa]|(?:was|were) (?:wrong|mistaken))\b")
_WHO_SAID: Final = re.compile(r"\b(?:quem|who|whoever|whatever) (?:\w+ ){0,2}(?:disse|falou|informou|told|said)\b")


#: Where a sentence goes on to work its rule out for the customer (", so for three weeks
#: you'd pay ...", ", então no seu caso fica ...", ", which means ..."): what follows says
#: it again in a case, in its own tense.
_WORKED_OUT: Final = re.compile(
    r",\s+(?:so|which means|meaning|ent[aã]o|o que d[aá]|ou seja|logo)\s+(?=.*\b(?:you'd|you would|you'll|you will"
    r"|voc[eê] (?:pagaria|paga|vai pagar|pagar[aá]|teria|ter[aá])|fica(?:ria)?|sairia|daria)\b)", re.IGNORECASE)


def _off_statement(claim: str, folded: str) -> str:
    """Why folded business sentence states no rule whatever its words: ``asks``,
    ``reported`` (someone else's words, a wish, a doubt) or ``tense``; ``""`` when none.
    """
    if _asks(folded):
        return "asks"
    folded = CONTRAST.sub("", folded)
    if _reports(folded, fold(claim)):
        return "reported"
    # "did you know" is no past, nor is the correction of what was said ("I meant ...", "me enganei: ..."),
    # nor how it says a value changed ("that changed last week: shipping is now $10")
    folded = CHANGE_REPORT.sub(" ", folded)
    # a withdrawal said in the past is today's rule ("Payment by bank slip was discontinued
    # last month", "O boleto foi descontinuado mês passado") for a claim that withdraws it too
    withdrawn = WITHDRAWAL in tokens(claim) and WITHDRAWAL in tokens(folded)
    if (PAST_TIME.search(folded) and not withdrawn) \
            or not tense_agrees(claim, ANNOUNCING.sub(" ", CORRECTING.sub(" ", folded))):
        return "tense"
    return ""


def _reports(folded: str, claim: str) -> bool:
    """True when folded business sentence reports someone else's words, a wish or a doubt
    (`REPORTED`, `HYPOTHETICAL`) that folded `claim` does not say itself: a rule about such
    words ("report e-mails claiming to be from the CEO") states them as its subject.
    """
    return any(found.group(0) not in claim for pattern in (REPORTED, HYPOTHETICAL)
               for found in pattern.finditer(folded))


#: Where a report turns to what the business says ("..., but ...", "..., though ...", "... —
#: actually, ...", "..., mas, na verdade, ...", "..., só que ..."), as written.
_BUT: Final = re.compile(
    r"(?:,?\s+(?:but|however|though|although|yet|mas|por[eé]m|contudo|entretanto|todavia|s[oó] que)|\s*[\u2013\u2014])"
    r",?\s+(?:(?:to be precise|actually|in fact|na verdade|de fato)\s*,?\s+)?", re.IGNORECASE)


def _after_report(sentence: str) -> str:
    """The rest of `sentence` after a report of what someone else said (`REPORTED`) and a
    "but" ("I understand you were told the deposit is refundable, but <rest>"), or ``""``.
    `read_sentence` reads the rest alone when it says the claim (`covers`): "Other retailers
    give 60 days, but ours is 30 days" still reports the 60 days.
    """
    for turn in _BUT.finditer(sentence):
        if turn.end() < len(sentence) and REPORTED.search(fold(sentence[:turn.start()])):
            rest = sentence[turn.end():]
            return "" if _REPORTING_VERB.search(fold(rest)) else rest  # "but a colleague told you ..."
    return ""


#: A verb of saying in the rest after the "but": another report ("but a different colleague
#: told you ...", "mas o folheto antigo diz que ..."), not the business's rule.
_REPORTING_VERB: Final = re.compile(
    r"\b(?:told|tells|tell|says|said|claims?|claimed|mentioned|promised|disse|diz|dizia|falou|fala|informou"
    r"|contou|prometeu|afirmou|garantiu|mencionou)\b")


def _asks(folded: str) -> bool:
    """True when a folded business sentence asks ("Did someone tell you...?", "We ship for
    free? Not anymore."), not when its question announces ("Did you know we ship for free?")
    or asks the customer for something ("Could you provide the reservation id?").
    """
    return (folded.rstrip(" \t\"')").endswith("?") and ANNOUNCING.search(folded) is None
            and REQUESTING.search(folded) is None
            and TAG_QUESTION.search(folded) is None)  # "..., tá?" asks only for a nod: it states


def tense_agrees(claim: str, sentence: str) -> bool:
    """True when `sentence` says the claim in the claim's own tense and mood: a past, future
    or hedged sentence ("We used to ship...", "Orders were shipped free until June", "We
    could ship...") states no rule the claim gives as it stands (`analysis.structure`'s
    ``t:`` tokens). The future after a condition is the rule's consequence ("If the price
    drops within 14 days, we'll refund the difference"), what the agent does because of it
    after ", so" / ", então" is the action's tense ("..., so we'll add it to the booking"),
    and a record's field labels ("delivered: 2025-04-02") are no verbs.
    """
    sentence = _VERB_YES.sub("", sentence, count=1)  # "Pagaria, sim: remarcações ... têm taxa de R$ 50"
    unlabelled = _FIELD_LABEL.sub(" ", _LEAD_LABEL.sub("", sentence))
    unlabelled = _without_consequence(claim, unlabelled)  # "..., so we'll add it to the booking"
    unlabelled = _TELLING.sub("", unlabelled, count=1)  # "I'll give you a heads-up that the pool closes..."
    unlabelled = _LOOKED_UP.sub("", unlabelled, count=1)  # "I just checked, and checkout is 11am"
    consequence = CONDITION.sub("", unlabelled)
    said = _tenses(_main_clause(consequence))  # "only when we sent the wrong item": the event
    if consequence != unlabelled:
        said -= {FUTURE}  # "If we lower the price, we'll refund the difference": the rule's consequence
    if FUTURE in said and TRAILING_CONDITION.search(unlabelled) and not _PROMISE.search(unlabelled):
        said -= {FUTURE}  # "You'll get the certificate as long as you attend 80%": the rule's consequence
    if FUTURE in said and _HABITUAL.search(unlabelled) and not _PROMISE.search(unlabelled) \
            and not _FOR_THIS_ONE.search(unlabelled):
        said -= {FUTURE}  # "You won't be charged for the first four withdrawals each month": a standing rule
    folded = fold(unlabelled)
    if FUTURE in said and _standing(unlabelled, folded) and (
            (YES_RE.match(folded.lstrip(" \"'")) and _WE_WILL.search(unlabelled))
            or (_YOU_WILL_HAVE.search(unlabelled) and any(t.startswith("m:") for t in tokens(unlabelled)))):
        # "Yes, that's correct — we'll match Best Buy's price on identical items", "You'll have a
        # fortnight from the day it's delivered": the rule, and the window it gives
        said -= {FUTURE}
    if _IF_IT_WERE.search(folded) and _PT_CONDITIONAL.search(fold(consequence)):
        said = said | {CONDITIONAL}  # "Se ela tivesse cobertura de vidros, a troca sairia sem custo": a hypothetical
    if FUTURE in said and _calendar_dates(consequence) & _calendar_dates(claim):
        said -= {FUTURE}  # "Starting June 1, Basic fares will include...": the claim's rule from its date
    return said <= _tenses(claim)


def _standing(sentence: str, folded: str) -> bool:
    """True when a future `sentence` (`folded` too) is said of no one's own thing and from no
    time to come: no agent's promise (`_PROMISE`), nothing for this customer alone
    (`_FOR_THIS_ONE`, `_THIS_CUSTOMERS`), no plan (`_PLANNED`), no start ahead (`_FROM_A_TIME`).
    """
    return not (_PROMISE.search(sentence) or _FOR_THIS_ONE.search(folded) or _THIS_CUSTOMERS.search(folded)
                or _PLANNED.search(folded) or _FROM_A_TIME.search(folded))


#: This customer's own thing ("your cart", "sua TV", "seu pedido") or a grant the agent just made
#: ("liberei", "released"), folded (what `_FOR_THIS_ONE` does not already name): a future about
#: it is no standing rule.
_THIS_CUSTOMERS: Final = re.compile(r"\b(?:your|seu|sua|seus|suas|teu|tua|liberei|released)\b")
#: A time a future starts from ("starting in March", "a partir de março", "from next month"),
#: folded: a change to come.
_FROM_A_TIME: Final = re.compile(
    r"\b(?:starting|beginning|from|as of|a partir d[eoa]s?|desde|apos)\s+(?:in\s+|on\s+|o\s+|a\s+)?"
    r"(?:next|o proximo|a proxima|proximo|proxima|" + "|".join(MONTH_NAMES) + r")\b")
#: Portuguese conditionals of the verbs rules are said with ("sairia", "custaria"; a list: not
#: every "-aria" word is one, "padaria" is a noun), folded.
_PT_CONDITIONAL: Final = re.compile(
    r"\b(?:sairia|teria|daria|faria|ficaria|haveria|incluiria|cobraria|entregaria|aceitaria|valeria|pagaria"
    r"|devolveria|trocaria|ganharia|receberia|estaria|custaria|cobriria|seria)m?\b")
#: An "if" of the past subjunctive ("se ela tivesse", "se fosse", "caso houvesse"), folded: with a
#: conditional, a hypothetical; a conditional alone is often a polite present ("custaria R$ 890").
_IF_IT_WERE: Final = re.compile(r"\b(?:se|caso)\s+(?:\w+\s+){0,3}?\w+(?:asse|esse|isse)\b")
#: What the customer will have under a rule ("you'll have 14 days", "você terá 7 dias"): with a
#: value, the window or amount the rule gives, not a change to come.
_YOU_WILL_HAVE: Final = re.compile(
    r"(?i)\b(?:you(?:'ll|\u2019ll| will) (?:have|get|receive)|voc[eê] (?:ter[aá]|vai ter|recebe|receber[aá]))\b")
#: The business's own future ("we'll match", "we will refund", "a gente vai trocar"), not an
#: agent's promise ("I'll", `_PROMISE`): after a yes to the customer's question, how the
#: rule the yes confirms is often said ("We will offer free shipping" alone is a change to come).
_WE_WILL: Final = re.compile(r"(?i)\b(?:we(?:'ll|\u2019ll| will)|a gente vai|nós vamos|vamos)\s+\w+")


#: What the agent does because of the rule, after it ("X is mandatory, so we'll add it to your
#: booking"; "..., então vou incluir"): its tense is the action's, not the rule's
#: (`_without_consequence`).
_SO_CLAUSE: Final = re.compile(rf"(?is){_SO}.*$")


#: The agent saying it looked the answer up before giving it ("I just checked, and ...",
#: "Acabei de verificar: ..."): the past is the looking up, not the rule's.
_LOOKED_UP: Final = re.compile(
    r"(?i)^.{0,60}?\b(?:(?:i(?: just| have| 've|'ve)? |just )(?:double-)?"
    r"(?:checked|confirmed|verified|looked (?:it )?up)"
    r"|acabei de (?:verificar|checar|confirmar|consultar)|verifiquei|chequei|confirmei|consultei)\b"
    r"\s*(?:[,:\u2014\u2013-]\s*)?(?:(?:and|e)\s+)?(?:(?:that|que)\s+)?")


#: A Portuguese yes said with the question's verb, in the question's mood ("E se eu remarcar,
#: pago alguma coisa?" / "Pagaria, sim: ..."): its tense is the question's, not the rule's.
_VERB_YES: Final = re.compile(r"(?i)^\W*[^\W\d_]+,?\s+sim\b\W*")


#: The agent telling what follows ("I'll give you a heads-up that ...", "I'll let you know
#: that ...", "I should add that ...", "vou te avisar que ..."): the telling's future or
#: mood is no tense of what it tells.
_TELLING: Final = re.compile(
    r"(?i)^.{0,40}?\b(?:i'll|i will|let me|i should|i must|vou|deixa eu|devo)\s+(?:\w+\s+){0,2}?"
    r"(?:give you a heads[- ]up|let you know|remind you|tell you|inform you|point out|mention|add|clarify"
    r"|acrescentar|esclarecer"
    r"|(?:te |lhe )?(?:avisar|lembrar|informar|dizer|falar|refor[çc]ar))\s+(?:that|que)\s+")


def _without_consequence(claim: str, sentence: str) -> str:
    """`sentence` without what the agent does because of the rule (`_SO_CLAUSE`), when that
    part says none of `claim`'s words ("..., so we'll add it to the booking"); as it is when
    it does ("..., so your room will be held at no extra charge" may be the claim itself).
    """
    found = _SO_CLAUSE.search(sentence)
    if found is None or not found.start() or {t for t in content_terms(found.group()) & content_terms(claim)
                                               if not t.startswith("d:")}:
        return sentence  # (a day alone is the customer's own case: "..., so you could bring her Friday")
    return sentence[:found.start()]


def _calendar_dates(text: str) -> frozenset[str]:
    """The dates (``d:`` tokens) `text` states but weekdays: a day a rule starts on, not the
    day of the week it is about ("Starting next month, deliveries will also run on
    Saturdays" is no rule of today's).
    """
    return frozenset(t for t in tokens(text) if is_calendar_date(t))


#: A one-word label that opens a sentence before a colon ("Checked: Gold members get..."):
#: the agent's report of what it did, not the tense of the rule after it.
_LEAD_LABEL: Final = re.compile(r"^\W*[^\W\d_]+:\s+")
#: A field's label inside a record ("..., delivered: 2025-04-02, return eligible until: ...",
#: as `trust.sources` writes a structured tool result): a key, not a verb in a tense.
_FIELD_LABEL: Final = re.compile(r"(?:^|(?<=[,;]))\s*[^\W\d_]+(?: [^\W\d_]+){0,3}:\s")


def _tenses(text: str) -> frozenset[str]:
    """The ``t:`` tokens of `text`, but an English past right after a noun or an article: a
    participle that qualifies a noun ("Orders placed before 2 pm ship...", "even when the
    cancelled leg is...") says nothing of when the rule holds; a past no participle has
    (`analysis.structure.EN_PAST_ONLY`: "The $5 promotion ran through the summer") is the
    verb's. A Portuguese past the analyser
    reads ("dava", "foi", "enviou") is never a participle ("o programa dava 10%").
    """
    seq = tokens(_QUALIFYING_PARTICIPLE.sub(r"\1", text))
    said: set[str] = set()
    qualifying = False  # the last past was a participle: "appointments cancelled or rescheduled ..." is one too
    english = text_language(text) != "pt"  # a Portuguese past read as one is a finite verb ("o programa dava")
    for i, t in enumerate(seq):
        if t == "t:past" and i and english and (plain_word(seq[i - 1]) or (qualifying and seq[i - 1] in _JOINING)) \
                and (i + 1 == len(seq) or seq[i + 1] not in EN_PAST_ONLY):
            qualifying = True
        elif t.startswith("t:"):
            said.add(t)
            qualifying = False
    folded = fold(text)
    if _PLANNED.search(folded):
        said.add(FUTURE)  # "We're looking into adding Apple Pay later this year": not yet the rule
    if _USED_TO.search(folded):
        said.add(PAST)  # "Returns used to be free": no participle of "returns"
    return frozenset(said | {PAST} if _PAST_STATE.search(folded) else said)


#: "used to" of a habit that ended ("Returns used to be free", "we used to ship"), not the
#: passive of "use" ("Pix is used to pay"), folded.
_USED_TO: Final = re.compile(r"(?<!\bis )(?<!\bare )(?<!\bbe )(?<!\bwas )(?<!\bwere )(?<!\bbeen )\bused to\b")


#: What the business plans, studies or hopes to do: a future, not yet the rule it names
#: (folded text).
_PLANNED: Final = re.compile(
    r"\b(?:(?:we|we're|we are|i'm|i am)\s+(?:(?:currently|still|also)\s+)?"
    r"(?:looking into|planning (?:on|to)|considering|thinking (?:about|of)|hoping to"
    r"|working on (?:adding|offering|launching|bringing))"
    r"|we (?:plan|hope) to|coming soon|will soon|(?:estamos|to|tou) (?:estudando|avaliando|planejando"
    r"|pensando em|vendo (?:de|a possibilidade))|pretendemos|planejamos|queremos (?:passar a|comecar a))\b")


#: The clause words that join a participle to the one before it ("cancelled or rescheduled").
_JOINING: Final = frozenset({"c:and", "c:or"})


#: "To be" in the past before a price ("the first bag was free", "a entrega era grátis",
#: "the fee was $20"; not "the fee was reduced to $10", "the change was ours"): a finite past
#: however a noun comes before it, so never the participle `_tenses` sets aside.
_PAST_STATE: Final = re.compile(
    r"\b(?:was|were|era|eram|foi|foram)\s+(?:(?:only|just|still|always|so|apenas|sempre|de)\s+)?"
    r"(?:free|gratis|gratuit[oa]s?|r?\$\s?\d|\d)"
    # a value said to be the old one ("$49 was our old price", "R$ 120 era o preço antigo")
    r"|\b(?:was|were) (?:our|the|an?) (?:old|previous|former)\b"
    r"|\b(?:era|eram) (?:o |a |os |as )?(?:\w+ ){0,2}(?:antig[oa]s?|anterior(?:es)?)\b")


#: An English participle right after an article or a determiner ("the cancelled leg", "a
#: delayed flight"), a measure or an ordinal between them too ("a 23 kg checked bag", "the
#: first checked bag"): an adjective, not a verb in the past.
_QUALIFYING_PARTICIPLE: Final = re.compile(
    r"\b((?:(?:the|a|an|this|that|these|those|each|every|any|no|its|our|your|their)\s+"
    r"(?:\d+(?:[.,]\d+)?\s?[A-Za-z]{0,3}\s+)?|(?:first|second|third|last|next|extra|additional)\s+))"
    r"[A-Za-z]{3,}ed\b",
    re.IGNORECASE)


def _sides(text: str) -> dict[str, bool]:
    """Term -> negated, for the terms `text` reads one way only ("non-" a negation)."""
    sides: dict[str, set[bool]] = {}
    for term, negated in polarity(_non(text)):
        sides.setdefault(term, set()).add(negated)
    return {term: next(iter(both)) for term, both in sides.items() if len(both) == 1}


def read_sentence(claim: str, sentence: str, said_before: Sequence[Piece], after: str = "") -> Reading:
    """Does business `sentence` state `claim`, or turn it down, take note of it, echo it?

    Args:
        claim: the candidate's description and body.
        sentence: one sentence of a business piece.
        said_before: the pieces before it in the transcript.
        after: the sentence after it in the same piece ("" for none): one that opens by
            placing what it says here ("Aqui cobramos R$ 300") makes this one, when it opens
            with a named someone ("Na Azul, ..."), about there (`ELSEWHERE`, `HERE_INSTEAD`);
            one that opens by correcting itself (`CORRECTING`) takes this one back.
    """
    head = CONTRAST_TAIL.sub("", sentence)
    if head != sentence and _values(claim) and _values(claim) <= _values(head):
        sentence = head  # "Our plan is $45, not $70 like other carriers charge": the rule, before its contrast
    head, *worked = _WORKED_OUT.split(sentence, maxsplit=1)
    if worked and _values(head) & _values(claim) and not _values(worked[0]) & _values(claim) - _values(head):
        sentence = head  # "... capped at $84 per rental, so for three weeks you'd pay $84": the rule, worked out
    folded = fold(sentence)
    if ACKNOWLEDGED.search(folded):
        return Reading(False, "acknowledged")
    if after and CORRECTING.search(fold(after)[:OPENING_CHARS]):
        return Reading(False, "corrected")  # "Yes, we deliver until 1 am. Sorry, correction: ..."
    aside = _JOKE_ASIDE.match(fold(after)) if after else None
    if aside is not None and content_terms(after[aside.end():]) & content_terms(claim):
        return Reading(False, "jokes")  # "... de helicóptero, no mesmo dia. Brincadeiras à parte, o prazo é ..."
    if after and HERE_INSTEAD.search(fold(after)) and _about_someone_else(sentence, said_before):
        return Reading(False, "reported")
    if after and _OURS_INSTEAD.search(fold(after)) and _opening_elsewhere(claim, sentence):
        return Reading(False, "reported")  # "Delta waives change fees, but we charge $75"
    if _agreed_about_another(claim, sentence, said_before):
        return Reading(False, "reported")  # "You're right that SmileCo includes a free kit"
    rule = _after_report(sentence) if REPORTED.search(folded) else ""
    if rule and covers(claim, [rule]):  # "I understand you were told X, but <the rule>": read alone
        return read_sentence(claim, rule, said_before, after)
    off = _off_statement(claim, folded)
    if off:
        return Reading(False, off)
    if denies(claim, folded):
        return Reading(False, "contradicts")  # "Esse desconto de 20% no Pix não existe"
    why = limited(claim, folded)
    if why:
        return Reading(False, why)
    if not polarity_agrees(claim, sentence):
        return Reading(False, "contradicts")
    if other_form(claim, sentence):
        return Reading(False, "rearranged")  # a refund in another form: store credit / to the card, in cash
    if _only_for_others(claim, folded) or only_one_of_a_pair(claim, sentence) or (
            after and _THAT_APPLIES.match(fold(after)) and _only_for_others(claim, fold(after))):
        return Reading(False, "narrower")  # "A garantia estendida de 2 anos é só para notebooks"; "...
        # Isso vale só para o Sudeste" after it
    if _at_one_branch(claim, sentence, said_before) or _for_this_customer(claim, folded) \
            or _of_one_plan(claim, sentence, said_before) or _branch_named(claim, sentence, said_before):
        return Reading(False, "narrower")  # "Na unidade Pinheiros, ..." is not every unit
    if _echo(claim, sentence, said_before):
        return Reading(False, "echo")
    if rearranged(claim, sentence) or opposed(claim, sentence) or charged_apart(claim, sentence) \
            or _least_as_fixed(claim, sentence):
        return Reading(False, "rearranged")  # "3% on Pix, 5% on boleto" for "5% on Pix, 3% on boleto"
    if lists_more(claim, sentence):
        return Reading(False, LISTS_MORE)  # "RG, CNH ou passaporte" for "aceitamos RG ou CNH"
    if only_lists_fewer(claim, sentence) or (after and _also_after(claim, sentence, after)):
        return Reading(False, "rearranged")  # "Delta and Cigna, and we also accept MetLife" for "only Delta and Cigna"
    if _EXAMPLE.match(folded) and not _EXAMPLE.search(fold(claim)):
        return Reading(False, "narrower")  # "For example, orders to Austin arrive in 2 days": one case
    if _not_all(claim, sentence) or _mostly(claim, folded):
        return Reading(False, "narrower")  # "Not all items are returnable" for "Items are not returnable";
        # "A maioria dos pedidos chega em 2 dias" for "Entregas em até 2 dias"
    if _share_of_another_base(claim, sentence):
        return Reading(False, "rearranged")  # "20% sobre as mensalidades restantes" for "20% sobre o total"
    if pole_denied(claim, sentence):
        return Reading(False, "contradicts")  # "No, breakfast is not included" for "Breakfast is included"
    return Reading(True)


#: Pairs of words that say opposite things of one event: "refunded before the item is
#: inspected" / "after". Not "if" / "unless": "não trocamos, a menos que seja defeito" says
#: "só trocamos se tiver defeito" (an attack on the first version, which had the pair); nor
#: "online" / "in store": "Online orders can be picked up in store" says both of one order.
OPPOSED: Final = tuple((frozenset({f"p:p_{one}"}), frozenset({f"p:p_{other}"})) for one, other in (
    ("before", "after"), ("include", "except"), ("inside", "outside"),
    ("domestic", "international"), ("increase", "decrease"), ("first", "last"), ("highest", "lowest"),
    ("per", "in_total"))) + (
    # two stages of one order: shipped (sent out) is not delivered ("Orders paid before 2pm ship out the
    # same day" does not say they arrive that day)
    (frozenset({"s_ship"}), frozenset({"s_deliver"})),)


def opposed(claim: str, sentence: str) -> bool:
    """True when `sentence` says the opposite word of a pair of `OPPOSED` where `claim` says
    one and not the other, and says none of the claim's own ("Refunds are released after our
    warehouse inspects the item" for "Refunds are issued before the item is inspected").
    """
    mine, theirs = set(tokens(claim)), set(tokens(sentence))
    return any((one & mine and not one & theirs and other & theirs and not other & mine)
               or (other & mine and not other & theirs and one & theirs and not one & mine) for one, other in OPPOSED)


def lists_more(claim: str, sentence: str) -> bool:
    """True when `claim` lists an item more than `sentence`'s list of the same things: two or
    more items of the claim's list stand in the sentence's, and one does not stand in the
    sentence at all ("Documentos aceitos: RG, CNH ou passaporte" for "Pro cadastro aceitamos
    RG ou CNH"). An item is a word beside a list's separator (a comma, "and", "or"); the
    sentence's list has an "or", and the one item more stands beside an "or" and an item the
    sentence lists ("religar e esperar" for "liga de novo e espera" is no item more, nor is
    "..., além de antipulgas" for "... e a antirrábica").
    """
    own, seq = tokens(claim), tokens(sentence)
    theirs = {item for pair in _list_pairs(seq, JOINS | {","}) for item in pair}
    if "c:or" not in seq or len({item for pair in _list_pairs(own, JOINS | {","}) for item in pair} & theirs) < 2:
        return False
    said = set(seq)
    return any((one in theirs and other not in said) or (other in theirs and one not in said)
               for one, other in _list_pairs(own, _ALTERNATIVES))


def only_lists_fewer(claim: str, sentence: str) -> bool:
    """True when `claim` says "only" of a list (two or more items beside "and", "or" or a
    comma) that `sentence` lists, and `sentence` lists an item more (beside "and" or "or")
    that the claim does not name at all: "We're in-network with Delta Dental and Cigna, and we also accept MetLife and
    Aetna" is no "Maple only accepts Delta Dental and Cigna".
    """
    own, seq = tokens(claim), tokens(sentence)
    if "p:p_only" not in own:
        return False
    separators = JOINS | {","}
    mine = {item for pair in _list_pairs(own, separators) for item in pair}
    theirs = {item for pair in _list_pairs(seq, separators) for item in pair}
    joined = {item for pair in _list_pairs(seq, JOINS) for item in pair}  # not "Confirmei: perfumes ..."
    return len(mine & theirs) >= 2 and any(item not in own for item in joined)


def _also_after(claim: str, sentence: str, after: str) -> bool:
    """True when `claim` says "only" and the sentence after `sentence` adds, with "also", a
    thing the claim does not name to what both say: "O plano inclui musculação e natação.
    Também inclui spinning" is no "Somente musculação e natação estão incluídas".
    """
    own = tokens(claim)
    if "p:p_only" not in own or "p:p_also" not in tokens(after):
        return False
    mine, theirs, then = _said(own), _said(tokens(sentence)), _said(tokens(after))
    return bool(mine & theirs & then) and bool(then - mine - theirs)


def _said(seq: Sequence[str]) -> set[str]:
    """The words, synonym groups and poles of a reading (not "only" / "also", roles, joins)."""
    return {t for t in seq if (plain_word(t) or t.startswith(("s_", "p:"))) and t not in ("p:p_only", "p:p_also")}


def _list_pairs(seq: Sequence[str], separators: frozenset[str]) -> list[tuple[str, str]]:
    """The two words beside each of `separators` in `seq` (words only)."""
    return [(seq[at - 1], seq[at + 1]) for at in range(1, len(seq) - 1)
            if seq[at] in separators and plain_word(seq[at - 1]) and plain_word(seq[at + 1])]


#: What separates a list's alternatives ("RG, CNH ou passaporte"): "or" (a comma or an "and"
#: also goes on to another clause: "..., além de antipulgas").
_ALTERNATIVES: Final = frozenset({"c:or"})


#: Why a business sentence does not state a claim that lists an item it does not (`lists_more`).
LISTS_MORE: Final = "lists more"


def _not_all(claim: str, sentence: str) -> bool:
    """True when `sentence` negates "all" ("Not all items are returnable", "Nem todos os
    produtos podem ser trocados") and `claim` negates its rule of no "some" and no "not all":
    "Items are not returnable" says it of every item.
    """
    seq, own = tokens(sentence), tokens(claim)
    return _NOT_ALL in zip(seq, seq[1:], strict=False) and _NOT_ALL not in zip(own, own[1:], strict=False) \
        and "n" in own and "p:p_some" not in own


#: A sentence that opens by pointing back at the one before to scope it (folded): "Isso vale só
#: para o Sudeste", "That only applies to members".
_THAT_APPLIES: Final = re.compile(r"\W*(?:isso|isto|esse|essa|this|that|it)\s+(?:so\s+|only\s+)?"
                                  r"(?:vale|valem|se aplica|applies|apply|is valid|holds)\b")
#: A sentence that opens with an example (folded): one case of the rule, not the rule.
_EXAMPLE: Final = re.compile(r"\W*(?:for (?:example|instance)|e\.?g\.?|por exemplo|exemplo|tipo assim)\b")
#: What most cases, or the average case, do (folded): a statistic, not the rule ("A maioria
#: dos pedidos chega em 2 dias", "On average, refunds take 3 days").
_MOSTLY: Final = re.compile(r"\b(?:a maioria|(?:a )?maior parte|na maioria|em media|most (?:of )?(?:our |the )?"
                            r"(?:orders|packages|deliveries|customers|cases|requests|items|claims|refunds|shipments)"
                            r"|the majority|in most cases|on average|average)\b")


def _mostly(claim: str, folded: str) -> bool:
    """True when a clause of folded sentence `folded` says what most cases do (`_MOSTLY`) and
    holds `claim`'s values (all its words, when it has none), and the claim says no such
    thing: "a maioria dos pedidos chega em 3 dias" is no "entregas em até 3 dias", while
    "..., mas o prazo máximo é de 8 dias úteis" after it is the rule.
    """
    if _MOSTLY.search(fold(claim)):
        return False
    values = {t for t in content_terms(claim) if t.startswith(("m:", "d:"))}
    return any(_MOSTLY.search(clause) and (not values or values & content_terms(clause))
               for clause in _CLAUSES.split(folded))


#: Where a sentence turns to another clause: "mas", "but", "porém", "however", a semicolon.
_CLAUSES: Final = re.compile(r",?\s+(?:mas|but|porem|however|contudo|though)\b|;")


def _share_of_another_base(claim: str, sentence: str) -> bool:
    """True when `claim` and `sentence`, in one language, give the same share of two bases,
    each with a word the other lacks: "a multa é de 20% sobre o valor das mensalidades restantes" is no
    "multa de 20% sobre o valor total do contrato" (the words every base has, "valor",
    "value", "amount", left out).
    """
    if text_language(claim) != text_language(sentence):
        return False
    mine, theirs = _share_bases(claim), _share_bases(sentence)
    return any(share in theirs and base - theirs[share] and theirs[share] - base for share, base in mine.items())


def _share_bases(text: str) -> dict[str, frozenset[str]]:
    """Each share `text` gives of a named base ("20% sobre o valor total do contrato") ->
    the base's words, stemmed where they are content terms (``{"total", "contrat"}``), the
    generic ones and the stop words left out.
    """
    out: dict[str, frozenset[str]] = {}
    for match in _SHARE_OF.finditer(fold(text)):
        base = frozenset(t for word in match[2].split() if word not in STOP_WORDS
                         for t in (content_terms(word) or {word})) - _ANY_BASE
        if base:
            out[match[1].replace(",", ".")] = base
    return out


#: A share and the base it is of (folded): "20% sobre o valor ...", "10% of the order total".
_SHARE_OF: Final = re.compile(
    r"(\d+(?:[.,]\d+)?)\s?%\s+(?:sobre|do|da|dos|das|of|on)\s+(?:o |a |os |as |the |your |seu |sua )?"
    r"([^.,;:!?()]{3,60})")
#: Words any base of a share has: they tell no two bases apart.
_ANY_BASE: Final = content_terms("valor value amount price preço")


#: "Not all", "nem todos" as `tokens` reads them.
_NOT_ALL: Final = ("n", "p:p_all")


def _least_as_fixed(claim: str, sentence: str) -> bool:
    """True when `sentence` gives a value of `claim` as the least it is ("starts at $65", "a
    partir de R$ 39") and the claim, with no bound of its own, gives it as the price ("A full
    groom costs a flat $65").
    """
    own, seq = tokens(claim), tokens(sentence)
    if _VALUE_BOUNDS & set(own):
        return False
    return any(token == "p:p_at_least" and seq[at + 1].startswith("m:") and seq[at + 1] in own
               for at, token in enumerate(seq[:-1]))


#: The poles that bound a value.
_VALUE_BOUNDS: Final = frozenset({"p:p_at_least", "p:p_at_most", "p:p_above", "p:p_below"})


def charged_apart(claim: str, sentence: str) -> bool:
    """True when `claim` says a thing is included (not "not included") and `sentence`, which says no "include",
    charges a thing the claim names apart or on top (`analysis.arrangement.charged_on_top`:
    "plus VAT", "mais impostos", "VAT extra", "o frete é cobrado à parte", "an add-on"): "A
    desk costs €280 per month with VAT included" is not stated by "A desk is €280 per month,
    plus VAT at 23%".
    """
    own = tokens(claim)
    mine, seq = set(own), tokens(sentence)
    included = any(t == "p:p_include" and not (at and own[at - 1] == "n") for at, t in enumerate(own))
    return included and "p:p_include" not in seq and bool(charged_on_top(seq) & mine)  # ("not included" is apart)


#: The next sentence setting a joke aside ("Brincadeiras à parte, o prazo é de 7 dias úteis",
#: "Jokes aside, ..."), folded: the sentence before it was one, when what follows the
#: opener speaks of the claim's subject (not "Jokes aside, let me know if you need
#: anything"). "Falando sério" and "Seriously though" may only stress what was said, and an
#: eye roll may be at red tape: neither is read.
_JOKE_ASIDE: Final = re.compile(
    r"^\W*(?:(?:mas|agora|bom),?\s+)?(?:brincadeiras? a parte|brincadeiras? de lado|fora a brincadeira"
    r"|zoeira a parte|zoeiras? de lado|(?:all )?(?:jokes?|joking|kidding) aside)\s*[,:\u2013\u2014-]")


#: What restricts a rule to what follows it ("só para notebooks", "only for members").
_ONLY_FOR: Final = re.compile(
    r"\b(?:so|somente|apenas|exclusivamente|only|exclusively|just)\s+"
    r"(?:(?:available|offered|valid|sold|done|applies|apply|disponivel|disponiveis|valido|valida|oferecid[oa]s?"
    r"|feit[oa]s?)\s+)?"
    r"(?:para|pra|para os|para as|for|to|on|in|at|within|inside|em|no|na|nos|nas|dentro d[aeo]s?)\s+([^,.;:!?]{1,60})")


#: Words that bound a place or a group more narrowly than its name ("only within the São
#: Paulo city limits" is not "throughout São Paulo state").
_SCOPE_WORDS: Final = frozenset(content_terms("city limits capital metropolitan downtown cidade centro"))


def _only_for_others(claim: str, folded: str) -> bool:
    """True when folded `sentence` restricts what it says to things the claim never names
    ("A garantia estendida de 2 anos que oferecemos é só para notebooks" for "Geladeiras
    contam com garantia estendida de 2 anos"), or to a narrower bound of what it names
    (`_SCOPE_WORDS`: "only within the São Paulo city limits" for "throughout São Paulo
    state"): it states a narrower rule of something else.
    """
    wanted = content_terms(claim)
    portuguese = text_language(folded) == "pt"
    for match in _ONLY_FOR.finditer(folded):  # what follows "só para" read in the sentence's language
        named = content_terms(f"os {match.group(1)} são" if portuguese else match.group(1))
        narrower = not named & wanted or _SCOPE_WORDS & named - wanted
        if named and narrower and "n" not in tokens(folded[:match.start()]):
            return True  # (after a negation it says where the thing goes instead: "não vai na
            # mala despachada, só na bagagem de mão" states the claim's "not in checked bags")
    return False


#: "Only" and a name right after it, up to two lowercase words between ("só atendemos Amil",
#: "we only take Visa"): the one name the sentence allows.
_ONLY_NAME: Final = re.compile(r"\b(?i:s[oó]|somente|apenas|only|just)\s+(?:[a-zà-ú]+\s+){0,2}([A-Z][\w-]+)")
#: Two names a claim joins ("Amil e SulAmérica", "Visa or Mastercard").
_NAME_PAIR: Final = re.compile(r"\b([A-Z][\w-]+)\s+(?:e|and|ou|or|&)\s+([A-Z][\w-]+)")


def only_one_of_a_pair(claim: str, sentence: str) -> bool:
    """True when `sentence` allows only one name (`_ONLY_NAME`) of two the claim joins and
    never says the other ("Tratamento de canal pelo convênio só atendemos Amil" for "A
    clínica aceita Amil e SulAmérica para limpeza e canal"): a narrower rule. Not when it
    speaks of nothing else of the claim ("Interest-free installments are only available on
    Visa" for "We accept Visa and Mastercard"), nor when the claim says the "only" itself
    ("...; para canal, apenas Amil").
    """
    found = _ONLY_NAME.search(sentence)
    if found is None:
        return False
    name = found.group(1)
    body = claim.partition("\n")[2] or claim
    if any(m.group(1) == name for m in _ONLY_NAME.finditer(body)) \
            or not content_terms(sentence) - names(sentence) & content_terms(body) - names(body):
        return False
    others = [pair[1] if name == pair[0] else pair[0] for pair in _NAME_PAIR.findall(body) if name in pair]
    return any(re.search(rf"\b{re.escape(other)}\b", sentence) is None for other in others)


#: An opening that ties what follows to the customer's own plan, card or status (folded):
#: "Since you're on the Family plan, ...", "With your Platinum card, ...", "As a Gold
#: member, ...", "Como você é do plano Ouro, ...", "No seu plano Família, ..."; group
#: `yours` holds what it names.
_YOURS: Final = re.compile(
    r"^\W*(?:(?:since|because|as|now that) you(?:'re|\u2019re| are|'ve|\u2019ve| have| own)(?P<yours>[^,]{1,60}),"
    r"|as an? (?P<member>[^,]{1,40}) (?:member|customer|subscriber|holder),"
    r"|with your (?P<card>[^,]{1,40}) (?:plan|membership|card|subscription|package|pass|status),"
    r"|(?:como|ja que|porque|pois|por) (?:voce|vc|o senhor|a senhora)? ?(?:e|esta|tem|possui|ser)(?P<voce>[^,]{1,60}),"
    r"|(?:no|pelo|com o) seu (?P<seu>[^,]{1,40}),)")
#: What makes such an opening a plan, card or status of the customer's (folded): without
#: one, "As you're probably aware, ...", "Since you're asking, ...", "Como você está vendo
#: no site, ..." and "As a valued customer, ..." tie nothing.
_PLAN_WORD: Final = re.compile(
    r"\b(?:plans?|membership|member|cards?|tier|status|subscription|package|pass|level|account|gold|silver"
    r"|platinum|premium|vip|black|diamond|planos?|cartao|categoria|assinatura|pacote|nivel|conta|ouro|prata"
    r"|platina|diamante|socio|socia)\b")


def _for_this_customer(claim: str, folded: str) -> bool:
    """True when folded `sentence` opens by tying what it says to the customer's own plan,
    card or status (`_YOURS`) and names something the claim does not: "Since you're on the
    Family plan, your kids swim free" states no rule of every customer.
    """
    opening = _YOURS.match(folded)
    if opening is None or _PLAN_WORD.search(opening.group(0)) is None:
        return False
    named = content_terms(next(g for g in opening.groups() if g is not None))
    return bool(named - content_terms(claim) - names(claim))


#: A sentence's opening that places it at one named branch ("Na unidade Pinheiros, ...",
#: "At the Downtown location, ..."; not "No Hotel Fasano": a business's own name): group 1 the name.
_AT_BRANCH: Final = re.compile(
    r"^\W*(?i:(?:n[ao]s?|em|at|in|for)\s+(?:(?:a|o|the|our|nossa|nosso)\s+)?"
    r"(?:unidade|filial|agencia|agência|branch|location)"
    r"\s+(?:(?:d[aeo]s?|of|in)\s+)?)([A-Z][\w-]+)")


#: A sentence that opens with one store named around the word ("Our downtown store on 5th
#: Street is open 24 hours", "Nossa loja do Centro abre aos domingos", "The Paulista store"):
#: a place word or a capitalised name before the word, a capitalised place after it.
_BRANCH_STORE: Final = re.compile(
    r"^\W*(?i:(?:n[ao]s?|em|at|in|for)\s+)?(?i:a|o|the|our|nossa|nosso)\s+"
    r"(?:((?i:downtown|uptown|midtown|flagship|airport|mall|central|north|south|east|west|main)"
    r"|[A-Z][\w-]+(?:\s+[A-Z][\w-]+){0,2})\s+)?"
    r"(?i:store|shop|branch|location|outlet|loja|unidade|filial|agencia|agência)\b"
    r"(?:\s+(?:(?i:on|in|at|of|d[aeo]s?|n[ao]s?)\s+)?([A-Z][\w-]+(?:\s+[A-Z0-9][\w-]*)*))?")
#: A claim about every store of the business ("Stores are open 24 hours", "todas as lojas"),
#: folded: a store named in the quote is one of them, not all (a business with one store
#: names its store's street too: "Our store on Main Street accepts Pix").
_EVERY_STORE: Final = re.compile(
    r"\b(?:stores|shops|branches|locations|outlets|restaurants|clinics|gyms|hotels|salons|pharmacies|offices"
    r"|studios|lojas|unidades|filiais|agencias|restaurantes|clinicas|academias|hoteis|saloes|farmacias"
    r"|escritorios|estudios)\b"
    r"|\b(?:every|each|all|any|cada|qualquer|toda|todas as|todo|todos os)\s+(?:of (?:our|the) |other |outra )?"
    r"(?:store|shop|branch|location|outlet|restaurant|clinic|gym|hotel|salon|pharmacy|office|studio|loja|unidade"
    r"|filial|agencia|restaurante|clinica|academia|farmacia|escritorio|estudio)")


#: A plan, card or tier named by a capitalised name ("Family plan", "Platinum card", "plano
#: Ouro", "cliente Ouro"), anywhere in a sentence: group 1 or 2 the name.
_NAMED_PLAN: Final = re.compile(
    r"\b([A-Z][\w-]+)\s+(?i:plans?|membership|memberships|members?|cards?|tier|status|package|subscription"
    r"|segment)\b"
    r"|\b(?i:planos?|cart[aã]o|cartões|clientes?|categoria|n[ií]vel|pacote|assinatura|s[oó]cios?|segmento)"
    r"\s+([A-Z][\w-]+)")
#: A sentence that speaks of every plan or branch ("Every plan, the Family plan included",
#: "at all our restaurants, Harbor Street included"), folded.
_EVERY_ONE: Final = re.compile(
    r"\b(?:every|each|all|any|todos os|todas as|qualquer|cada)\s+(?:of (?:our|the) |our |os nossos |as nossas "
    r"|nossos |nossas )?(?:plans?|cards?|tiers?|members?|planos?|cartoes|categorias|socios|clientes)\b")
#: A branch named anywhere in a sentence: a capitalised place before the branch word ("our
#: Harbor Street location"), or after it ("na unidade Vila Mariana", "A academia do Itaim");
#: group 1 or 2 the name.
_NAMED_BRANCH: Final = re.compile(
    r"\b([A-Z0-9][\w.-]*(?:\s+[A-Z][\w.-]*){0,3})\s+(?i:locations?|stores?|shops?|branch(?:es)?|restaurants?"
    r"|clinics?|gyms?|hotels?|outlets?)\b"
    r"|\b(?i:unidades?|lojas?|filial|filiais|cl[ií]nicas?|academias?|restaurantes?|ag[eê]ncias?|locations?|stores?"
    r"|branch(?:es)?)\s+(?:(?:d[aeo]s?|de|in|on|at|of)\s+)?([A-Z][\w.-]*(?:\s+[A-Z][\w.-]*){0,3})")


def _own_names(said_before: Sequence[Piece]) -> frozenset[str]:
    """The names the business's own texts (its system prompt) hold: its name is no one else's."""
    return frozenset().union(*(names(p.text) for p in said_before if p.speaker == "system"))


def _said_of(claim: str, said_before: Sequence[Piece]) -> frozenset[str]:
    """What `claim` names, and the business's own names: neither is someone or somewhere else."""
    return content_terms(claim) | names(claim) | _own_names(said_before)


def _names_another(claim: str, sentence: str, said_before: Sequence[Piece], named_by: re.Pattern[str],
                   every: re.Pattern[str], *, plural_names: bool = False) -> bool:
    """True when `sentence` names (`named_by`, its first group that matched) something the
    claim does not, names nothing the claim names, and does not speak of every one (`every`,
    on the folded sentence; less what it names when `plural_names`: "nas lojas de Curitiba
    e Joinville" speaks of two stores, not of every one).
    """
    found = [next(g for g in m.groups() if g) for m in named_by.finditer(sentence)]
    if not found or every.search(fold(named_by.sub(" ", sentence) if plural_names else sentence)):
        return False  # the common case (nothing named) before any name is read
    said = _said_of(claim, said_before)
    return not names(sentence) & said and any(not content_terms(n) <= said for n in found) \
        and not _stated_apart(claim, sentence, named_by)


def _stated_apart(claim: str, sentence: str, named_by: re.Pattern[str]) -> bool:
    """True when a clause of `sentence` that names nothing `named_by` reads states every
    value of `claim` (the others an exception beside it): "Returns are accepted within 30
    days of delivery (45 days for Gold members)" states the 30 days of every customer.
    """
    wanted = _values(claim)
    return bool(wanted) and any(not named_by.search(clause) and wanted <= _values(clause)
                                for clause in _EXCEPTION_APART.split(sentence))


#: Where a sentence sets an exception apart: a parenthesis, a semicolon, a dash, or a
#: comma before "or", "but", "while", "except" (and their Portuguese).
_EXCEPTION_APART: Final = re.compile(
    r"\s*[();\u2013\u2014]\s*|\s+-\s+|,\s*(?=(?:or|but|while|whereas|except|exceto|mas|enquanto|ou|e para|and for)\b)")


def _of_one_plan(claim: str, sentence: str, said_before: Sequence[Piece]) -> bool:
    """True when `sentence` names a plan, card or tier (`_NAMED_PLAN`) the claim does not,
    names nothing the claim names, and does not speak of every plan: "Your Family plan
    includes swimming classes at no extra cost" states no rule of every customer ("the
    Family plan ..., while the Basic plan ..." is about the claim's Family plan).
    """
    return _names_another(claim, sentence, said_before, _NAMED_PLAN, _EVERY_ONE)


def _branch_named(claim: str, sentence: str, said_before: Sequence[Piece]) -> bool:
    """True when a claim about every store, restaurant, clinic... (`_EVERY_STORE`) is said
    by a sentence that names one of them anywhere (`_NAMED_BRANCH`: "Valet parking is
    available at our Harbor Street location", "A academia do Itaim abre 24 horas") and
    speaks of no other.
    """
    return _EVERY_STORE.search(fold(claim.split("\n", 1)[-1])) is not None \
        and _names_another(claim, sentence, said_before, _NAMED_BRANCH, _EVERY_STORE, plural_names=True)


def _at_one_branch(claim: str, sentence: str, said_before: Sequence[Piece] = ()) -> bool:
    """True when `sentence` opens by placing itself at one named branch the claim does not
    name ("Na unidade Pinheiros, adolescentes podem treinar" for a rule of every unit; "Our
    downtown store on 5th Street is open 24 hours" for "Stores are open 24 hours": a store
    named around the word counts only against a claim about every store, `_EVERY_STORE`).
    """
    found = _AT_BRANCH.match(sentence)
    named = [found.group(1)] if found is not None else []
    store = _BRANCH_STORE.match(sentence)
    if store is not None and _EVERY_STORE.search(fold(claim.split("\n", 1)[-1])) \
            and not _EVERY_STORE.search(fold(sentence[store.end():])):  # "..., like all our restaurants, ..."
        named += [g for g in store.groups() if g]
    if not named:
        return False
    said = _said_of(claim, said_before)  # the business's own name is no branch
    return any(not content_terms(n) <= said for n in named)


def _named_by_customer(sentence: str, said_before: Sequence[Piece]) -> bool:
    """True when `sentence` opens with a name the customer wrote before.

    "Delta lets Gold members..." / "Delta does offer ...": about that someone, when the
    next sentence turns to the business (`HERE_INSTEAD`).
    """
    opening = _OPENING_NAME.match(sentence)
    if opening is None or fold(opening.group(1)) in STOP_WORDS:
        return False
    name = re.compile(rf"\b{re.escape(opening.group(1))}\b")
    return any(p.speaker == "customer" and name.search(p.text) for p in said_before)


_OPENING_NAME: Final = re.compile(r"^\W*([A-Z][\w-]+)")
#: An agreement with what the customer said, opening a sentence ("You're right that ...",
#: "That's true, ...", "Yes, ...", "De fato, ...", "É verdade que ...").
_AGREEING: Final = re.compile(
    r"^\W*(?i:you(?:'|\u2019)?re (?:absolutely |quite |totally )?(?:right|correct)"
    r"|you are (?:absolutely )?(?:right|correct)|that(?:'|\u2019)?s (?:right|true|correct)"
    r"|that is (?:right|true|correct)|it(?:'|\u2019)?s true|true|indeed|right"
    r"|correct|absolutely|i agree|good point|yes|de fato|[eé] verdade|verdade|realmente|voc[eê] tem raz[aã]o"
    r"|tem raz[aã]o|voc[eê] est[aá] cert[oa]|com certeza|isso mesmo|exato|exatamente|certo|pois [eé]|sim)"
    r"(?:\s*[,:\u2013\u2014-]\s*|\s+(?i:that|que)\s+)")
#: An acknowledgement of what someone else does ("I know that SmileCo ...", "Sei que a
#: AeroSul ..."): the name after it is another's, whether or not the customer wrote it.
_ACKNOWLEDGING: Final = re.compile(
    r"^\W*(?i:i know|i(?:'|\u2019)?m aware|i am aware|i understand|(?:eu )?sei(?: bem)?|entendo|estou ciente)"
    r"\s+(?:(?i:that|que|de que)\s+)?")
#: A customer's words about another business ("A outra companhia deixa...", "a competitor").
_ANOTHER_BUSINESS: Final = re.compile(
    r"\b(?:other|another|competitors?|competition|outr[oa]s?|concorrentes?|concorrencia)\b")
#: What turns an acknowledgement to something else ("Sei que o Natal está chegando, mas o
#: prazo de troca continua de 30 dias"): a comma, a semicolon, a dash or a contrast.
_TURNS: Final = re.compile(r"[,;:\u2013\u2014]|\s-\s|\b(?i:but|however|though|mas|porem|por[eé]m|contudo)\b")
#: What after a name shows it is not the sentence's whole subject: a comma (the person
#: spoken to: "That's right, Maria, ..."), or "and" / "e" / "or" / "ou" (one of several).
_NOT_ALONE: Final = re.compile(r"\s*(?:,|(?:and|e|or|ou)\b)")
#: A sentence's subject named as it opens, with its article in any case ("a ViajaBem", "SmileCo").
_SUBJECT_OPENING: Final = re.compile(r"\W*(?:(?i:a|o|as|os|the)\s+)?([A-Z][\w-]+)")  # matched where it opens


def _agreed_about_another(claim: str, sentence: str, said_before: Sequence[Piece]) -> bool:
    """True when `sentence` agrees with the customer (`_AGREEING`) about someone the
    customer named before and the claim leaves out: "You're right that SmileCo includes a
    free touch-up kit", "De fato, a ViajaBem não cobra marcação de assento" are the
    competitor's rules, whatever the business says of its own; so is what the business
    acknowledges of someone it names itself after the customer spoke of another business
    (`_ACKNOWLEDGING`: "A outra companhia..." / "Sei que a AeroSul inclui ...").
    """
    agreeing = _AGREEING.match(sentence)
    knowing = None if agreeing is not None else _ACKNOWLEDGING.match(sentence)
    lead = agreeing or knowing
    subject = _SUBJECT_OPENING.match(sentence, lead.end()) if lead is not None else None
    if subject is None or fold(subject.group(1)) in STOP_WORDS or _NOT_ALONE.match(sentence, subject.end()):
        return False  # "That's right, Maria, ..." names whom it speaks to; "o Essencial e todos os planos"
    name = subject.group(1)
    if content_terms(name) <= _said_of(claim, said_before):
        return False
    if knowing is not None:  # "Sei que a AeroSul inclui ...": another's, named by the business itself,
        # after the customer spoke of another business, when the sentence says nothing more
        return _TURNS.search(sentence, subject.end()) is None and any(
            p.speaker == "customer" and _ANOTHER_BUSINESS.search(fold(p.text)) for p in said_before)
    written = re.compile(rf"\b{re.escape(name)}\b")
    return any(p.speaker == "customer" and written.search(p.text) for p in said_before)
#: A part that turns to what the business itself does ("but we charge...", "mas nós...").
_OURS_INSTEAD: Final = re.compile(r"^\W*(?:but|while|whereas|mas|ja|porem) (?:we|nos|nosso|nossa|our|here|aqui)\b")


def _about_someone_else(sentence: str, said_before: Sequence[Piece]) -> bool:
    """True when `sentence` opens by placing itself with someone else, after a yes to the
    customer or not: "Na Azul, ...", "Right, at SkyJet changes are free", a name the
    customer wrote ("Delta lets ..."). What makes it so is the next sentence turning to
    the business (`HERE_INSTEAD`: "With us, ..."). "Their ..." is not read so: "Their
    admission is free, since kids under 5 get in free" speaks of the customer's kids.
    """
    agreed = _AGREEING.match(sentence)
    rest = sentence[agreed.end():] if agreed else sentence
    rest = rest[:1].upper() + rest[1:]
    return bool(ELSEWHERE.search(rest) or _named_by_customer(rest, said_before))


def _opening_elsewhere(claim: str, sentence: str) -> bool:
    """True when `sentence` opens with a capitalised word (no stop word) the claim does
    not hold: its subject, someone the business contrasts itself with.
    """
    opening = _OPENING_NAME.match(sentence)
    if opening is None or fold(opening.group(1)) in STOP_WORDS:
        return False
    return not content_terms(opening.group(1)) <= content_terms(claim) | names(claim)


def _echo(claim: str, sentence: str, said_before: Sequence[Piece]) -> bool:
    """True when everything of `claim` that `sentence` says, the customer asserted before."""
    wanted = content_terms(claim)
    has = content_terms(sentence) & wanted
    if not has:
        return False
    customer = [p for p in said_before if p.speaker == "customer"]
    if not customer:
        return False
    if TAG_QUESTION.search(fold(customer[-1].text).rstrip()) and _CONFIRMS.match(fold(sentence).lstrip(" \"'")) \
            and negation_count(sentence):
        return False  # "You don't deliver on Sundays, right?" / "Correct, we don't deliver on Sundays." (a
        # limit confirmed; "O Pix tem 30% de desconto, né?" / "Isso mesmo, ..." stays the customer's offer)
    said = frozenset().union(*(terms for p in customer if asserted(p.text) and (terms := content_terms(p.text)) & has
                               and not rearranged(claim, p.text, customer=True)))
    return has <= said


#: A business sentence that confirms what it goes on to say in its own words ("Correct, ...",
#: "Exatamente, ..."): not a bare "yes", which may be the agent agreeing along.
_CONFIRMS: Final = re.compile(r"(?:correct|that'?s (?:right|correct)|exatamente|exato|isso mesmo|correto|certo)\W+\w")
#: A business message that opens with a yes ("Sim, acima de R$ 199.", "Yes, over $50."), a
#: yes of the present included ("For now, yes.", "Por enquanto, sim").
YES_RE: Final = re.compile(
    r"(?:(?:for now|right now|currently|at the moment|as of now|still|por enquanto|por ora|no momento"
    r"|atualmente|ainda)\W+)?"
    r"(?:sim|yes|yep|yeah|claro|com certeza|temos sim|tem sim|pode sim|of course|sure|certainly|"
    r"we do|they do|it does|it is|correct|exatamente|exato|isso mesmo|isso ai|confirmo|that'?s (?:right|correct)"
    r"|that is (?:right|correct)|you'?re (?:right|correct)|you are (?:right|correct)"
    r")\b")
#: Portuguese says yes with the question's own verb ("Vocês entregam em Campinas?" /
#: "Entregamos sim"); a word the question lacks is no yes ("Talvez sim", "Antes sim").
_ECHO_YES: Final = re.compile(r"([a-z]+) sim\b")
#: A business message that opens with a no and a mark ("Não, só em 3 dias úteis.", "No,
#: it's $35."; not the Portuguese "no" of "No sábado abrimos às 8h").
NO_RE: Final = re.compile(r"(?:nao|no|nope|negativo|not quite|not exactly|nao exatamente)\s*[,.!;:\u2014-]")
#: A greeting a reply opens with before its yes or no ("Olá! Isso mesmo", "Hi, yes"): a
#: greeting word and a mark (a name after it is not skipped: "Oi, infelizmente não!" keeps
#: its no).
_GREETING: Final = re.compile(
    r"(?:(?:oi|ola|opa|hi|hello|hey|bom dia|boa tarde|boa noite|good (?:morning|afternoon|evening)|morning"
    r"|evening|prezad[oa]s?(?: cliente)?|car[oa] cliente)(?:\s+there)?\s*[.!,]+\s*)+")
#: What narrows a yes to a case ("Yes, for premium members", "Sim, mas só na capital",
#: "Sim, exceto para eletrônicos", "Yes, if ..."); not a bare "but", which may correct a
#: value ("Entregamos sim, mas o prazo é de 2 dias").
_NARROWING: Final = frozenset({"c:if", "c:unless", "p:p_only", "p:p_except", "r:for", "r:para"})
_ALL_OR_ANY: Final = frozenset({"p:p_all", "p:p_any", "p:p_same"})
#: What opens a yes's scope of place, time or kind ("Yes, in most states", "Sim, na capital",
#: "Yes, on weekdays", "Sim, enquanto durar a promoção", "Sim, fora/tirando eletrônicos" ("tir"),
#: "Yes, apart from bulky items"), read as narrowing when the phrase gives no value and no
#: subject ("Sim, em até 3 dias", "Yes, in fact we do" add to the yes, they do not narrow it).
_SCOPE: Final = frozenset({"r:in", "r:em", "r:on", "r:at", "r:from", "r:within", "p:p_inside", "r:during",
                           "p:p_this", "p:p_most", "p:p_outside", "p:p_less", "c:while", "apart", "tir", "tirando",
                           "exceca", *"usual general typic normal sometim often normalment geralment veze".split()})
# (the last: a yes only as a rule of thumb, "Yes, usually.", "Sim, normalmente.", "às vezes")


def answered_question(parts: Sequence[Piece], at: int) -> str | None:
    """The customer's question a business piece answers yes to, or None.

    When ``parts[at]`` opens with a yes (`YES_RE`) and the customer message before it
    asked a real question, the business states what that question asked: its last
    question ("Vocês dão 50% na primeira compra. Pode me ajudar com um pedido?" /
    "Claro!" answers the request, not the claim before it). None for a tag question
    ("..., né?", "..., right?": it asserts the customer's claim, and a yes to it is an
    agreement, `asserted`), a yes that only takes note ("Sure, let me look":
    `ACKNOWLEDGED`) or is taken back ("Sim... quer dizer, não": `CORRECTING`), and a
    "no" ("We do not...", "Claro que não"; a yes whose sentence keeps the question's own
    "without" stands: "...without a fee?" / "Yes, ...you won't be charged").
    """
    opening, first = _opening(parts[at].text)
    if parts[at].speaker == "customer" or ACKNOWLEDGED.search(first) or CORRECTING.search(opening):
        return None
    earlier = asked_before(parts, at)
    if earlier is None:
        return None
    asked = questions_in(earlier.text)
    if not asked or asserted(asked[-1]) or _yes_of(opening, asked[-1]) is None:
        return None
    said_no = negation_count(first)
    if said_no and said_no % 2 != negation_count(fold(asked[-1])) % 2:
        return None
    return asked[-1]


def bare_yes(text: str) -> bool:
    """True when business `text` opens with a sentence that is only a yes ("For now, yes.",
    "Sim!", "Yes, that's correct.", "Isso mesmo, infelizmente."): it answers the whole
    question, not a part it names. The sentence's phrases (between commas) are each a yes
    or a word of how the speaker feels about it (`_ATTITUDE`), and one at least is a yes.
    """
    first = _opening(text)[1].strip(" \t\n.!¡,;")
    if YES_RE.fullmatch(first):  # "for now, yes"
        return True
    phrases = [p for p in re.split(r"\s*[,;]\s*", first) if p]
    return any(YES_RE.fullmatch(p) for p in phrases) and all(
        YES_RE.fullmatch(p) or _ATTITUDE.fullmatch(p) for p in phrases)


#: A phrase of a reply that says how the speaker takes its yes, and nothing of the rule
#: (folded): "isso mesmo, infelizmente", "yes, sadly", "yes, absolutely".
_ATTITUDE: Final = re.compile(
    r"infelizmente|felizmente|unfortunately|fortunately|sadly|happily|indeed|absolutely|definitely|totally"
    r"|de fato|pois e|certamente|exactly|perfeito|perfect")  # (a yes word of `YES_RE` is one already)


@lru_cache(maxsize=4096)
def _opening(text: str) -> tuple[str, str]:
    """`text` folded from its first word after a greeting (`_GREETING`), and its first
    sentence ("" for none).
    """
    opening = fold(text).lstrip(" \t\n!¡")
    greeting = _GREETING.match(opening)
    if greeting is not None and greeting.end() < len(opening):
        opening = opening[greeting.end():]
    return opening, next(iter(sentences(opening)), "")  # "👍", "...": no sentence


def _yes_of(opening: str, asked: str) -> re.Match[str] | None:
    """The yes `opening` (a folded reply) starts with, as an answer to `asked`: `YES_RE`, or
    the question's own verb and "sim" (`_ECHO_YES`); None for none.
    """
    yes = YES_RE.match(opening)
    if yes is not None:
        return yes
    echo = _ECHO_YES.match(opening)
    if echo is None:
        return None
    verb = echo[1]  # the question's verb in another person: "atendem" / "Atendemos sim", "abre" / "Abre sim"
    return echo if any(w == verb or len(os.path.commonprefix([w, verb])) >= 4
                       for w in re.findall(r"[a-z]+", fold(asked))) else None


def narrowed_to(text: str, asked: str) -> frozenset[str]:
    """The words and values a reply's yes is narrowed to that the question `asked` lacks:
    those after a narrowing word of its first sentence (`_NARROWING`: "for", "only",
    "except", "if") up to the next mark ("Yes, for premium members." -> premium,
    member), and the words of a phrase of place, time or kind (`_SCOPE`: "Yes, in most
    states." -> state; "Sim, tirando eletrônicos." -> tirando, eletron; "Yes, Monday to
    Friday.") unless it adds to the yes (`_adds_to_the_yes`); none for a phrase that says
    "all", "any" or "the same" ("Yes, for all orders"). A claim that says none of them is
    not what the yes affirms.
    """
    said = after_yes(text, asked)
    if _US.search(text):  # "Yes, in the US.": folded, the country reads as "us"
        said = _US_FOLDED.sub("usa", said)
    seq = tokens(said)
    # "on that route", "nesse trecho": the first part after the yes points back at what was asked
    pointing = _POINTING.search(_MARK.split(said.lstrip(" ,;:!\u2014\u2013-"), 1)[0]) is not None
    out: set[str] = set()
    phrase: list[str] | None = None
    scope = False  # the phrase opened with a `_SCOPE` word, which it keeps
    segment: list[str] = []  # the tokens since the last mark
    marks = 0  # the marks read: a scope opens the first part after the yes ("Yes, in most states"), not
    # a clause that restates it ("Yes: every order ... comes with a gift this month" says it as it is)
    for token in (*seq, "."):
        if token in (",", ".", ";"):
            marks += 1
        if token in _NARROWING:
            phrase, scope = phrase or [], False
        elif phrase is None and marks <= 1 and not any(map(_said_in_words, segment)) \
                and (token in _SCOPE or token.startswith("d:wd")):
            phrase, scope = [token] if plain_word(token) or token.startswith("d:") else [], True
        elif phrase is not None and (token in (",", ".", ";") or token.startswith("c:")
                                     or (scope and token.startswith("w:") and any(map(plain_word, phrase)))):
            if not phrase and segment[-1:] == ["p:p_only"]:  # "Yes, small dogs and cats only."
                phrase = [t for t in segment if plain_word(t)]
            if not _ALL_OR_ANY & set(phrase) and not (scope and _adds_to_the_yes(phrase, segment, token, pointing)):
                out.update(phrase)
            phrase = None
        elif phrase is not None and (plain_word(token) or token.startswith(("m:", "d:", "s_")) or token in _ALL_OR_ANY):
            phrase.append(token)
        segment = [] if token in (",", ".", ";") else [*segment, token]
    opening = _opening(text)[0]
    following = next(iter(sentences(opening)[1:2]), "")  # "Yes. Only on Tuesdays, though."
    if _ONLY_NEXT.match(following) and not first_sentence(text).strip(" .!").count(" "):
        out.update(t for t in tokens(following) if plain_word(t) or t.startswith(("m:", "d:")))
    return frozenset(out - _ALL_OR_ANY) - content_terms(asked)


#: A sentence after a bare yes that opens by narrowing it (folded): "Only on Tuesdays,
#: though.", "Mas só na capital.", "Apenas para assinantes.".
_ONLY_NEXT: Final = re.compile(r"(?:but |mas |porem )?(?:only|just|so|somente|apenas|except|exceto|menos)\b")


def _said_in_words(token: str) -> bool:
    """True for a token that says something itself: a content word, a value, a party, a
    synonym group (not a preposition or a pole word: "aos domingos", "com exceção de").
    """
    return plain_word(token) or token.startswith(("m:", "d:", "w:", "s_"))


def _adds_to_the_yes(phrase: Sequence[str], segment: Sequence[str], end: str, pointing: bool) -> bool:
    """True when a `_SCOPE` phrase of a yes (in `segment`, the words since the last mark;
    ended by `end`) adds to it rather than narrows it: it gives a value ("Sim, em até 3
    dias"), it is a clause ("Yes, in fact we do"), it says "also" ("Sim, inclusive nos
    feriados", "Yes, even on holidays", "domingo também"), it points back at what was asked
    (`pointing`, or a "this" in it, of no time: "Sim, nesse trecho tem", "Yes, on that
    route"; `_THIS_TIMES`: "this month" narrows), or it names nothing ("Sim, por favor").
    """
    if end.startswith("w:") or any(t.startswith("m:") for t in phrase) or _ALSO & set(segment) \
            or any(a == "p:p_at_most" and b.startswith("r:") for a, b in itertools.pairwise(segment)):
        return True  # ("até nos feriados": "até" before a place or a time is "even")
    if (pointing or "p:p_this" in segment) and not _THIS_TIMES & set(segment):
        return True
    return not any(plain_word(t) or t.startswith("d:") for t in phrase)


#: The country in capitals, and as folded text has it.
_US: Final = re.compile(r"\bU\.?S\.?(?:A\b)?(?![\w.])")
_US_FOLDED: Final = re.compile(r"\bu\.?s\.?(?:a\b)?(?![\w.])")
#: A demonstrative (folded): what it names was named before ("that route", "nessa categoria").
_POINTING: Final = re.compile(
    r"\b(?:that|this|those|these|esse|essa|esses|essas|nesse|nessa|nesses|nessas|neste|nesta|este|esta"
    r"|desse|dessa|deste|desta|naquele|naquela)\b")
#: A mark that ends a part of a sentence.
_MARK: Final = re.compile(r"[,.;!?]")


#: What says a yes holds in one more case too (tokens): "também", "inclusive", "too", "even".
_ALSO: Final = frozenset({"p:p_also", "even"})
#: Times a "this" narrows a yes to ("this month", "nesta semana", "neste fim de semana").
_THIS_TIMES: Final = frozenset({"week", "weekend", "month", "year", "season", "summ", "wint", "seman", "mes", "ano",
                                "tempor", "vera", "invern", "campanh", "promoca", "promot"})


def first_sentence(text: str) -> str:
    """The first sentence of a reply after its greeting (folded; "" for none): "Bom dia!
    Sim, entregamos." -> "sim, entregamos.".
    """
    return _opening(text)[1]


def corrected_question(parts: Sequence[Piece], at: int) -> str | None:
    """The customer's question a business piece answers no to, or None: ``parts[at]``
    opens with a no (`NO_RE`) and the customer message before it asked a real question
    (not a tag question, which asserts). What the no corrects is for `trust.grounding` to
    read ("... em 1 dia?" / "Não, só em 3 dias úteis": the value).
    """
    opening, first = _opening(parts[at].text)
    said_no = NO_RE.match(opening)
    if parts[at].speaker == "customer" or said_no is None or negation_count(first[said_no.end():]):
        return None  # "No, we don't ship to Hawaii": a no, not a value corrected
    earlier = asked_before(parts, at)
    if earlier is None:
        return None
    asked = questions_in(earlier.text)
    return asked[-1] if asked and not asserted(asked[-1]) else None


def after_yes(text: str, asked: str) -> str:
    """A reply's first sentence after its yes to `asked` (`_yes_of`; folded): "Yes, the
    express fee is $30." -> ", the express fee is $30."; the first sentence when it opens
    with none.
    """
    opening = first_sentence(text)
    yes = _yes_of(opening, asked)
    return opening[yes.end():] if yes is not None else opening


def after_no(text: str) -> str:
    """A reply's first sentence after its opening no (`NO_RE`; folded): "Não, só em 3 dias
    úteis." -> "só em 3 dias úteis."; the first sentence when it opens with none.
    """
    first = first_sentence(text)
    said_no = NO_RE.match(first)
    return first[said_no.end():] if said_no is not None else first


def questions_in(text: str) -> list[str]:
    """The sentences of a customer's `text` that ask: those ending in "?" (a closing quote
    or bracket after it allowed), in order.
    """
    return [s for s in sentences(text) if s.rstrip(" \t\"')").endswith("?")]


def asked_before(parts: Sequence[Piece], at: int) -> Piece | None:
    """The last customer piece before ``parts[at]`` (None when there is none)."""
    return next((p for p in reversed(parts[:at]) if p.speaker == "customer"), None)


def asserted(text: str) -> bool:
    """True when customer `text` asserts rather than asks (a tag question asserts); a chat
    question may leave out its mark ("yo can my drone go in my checked bag").
    """
    folded = fold(text).rstrip()
    if folded.endswith("?"):
        return TAG_QUESTION.search(folded) is not None
    return _UNMARKED_QUESTION.match(folded) is None


#: A message that opens as a question (after a greeting), with no question mark: chat.
_UNMARKED_QUESTION: Final = re.compile(
    r"^\W*(?:(?:yo|hi|hey|hello|oi|ola|opa|e ai|bom dia|boa tarde|boa noite)\W+)?"
    r"(?:can|could|does|did|is|are|will|would|may|should|how|what|where|which|why"
    r"|posso|pode|podem|da pra|tem como|quanto|onde|qual|quais|por que) ")


def _values(text: str) -> set[str]:
    return {t for t in tokens(text) if t.startswith(("m:", "d:"))}


def values_found(claim: str, found: Iterable[tuple[str, str]]) -> bool:
    """True when every value and date of `claim` is among `found` (speaker, text) pieces;
    a bare number of a tool result matches a value of any unit (data has no units) unless
    its key names one ("return window days: 15" is 15 days), and a bare number of the
    claim any value of that number ("7-day returns", "7 days"); a range is found when its
    two ends are; a duration in any unit it fills ("1 week" is "7 calendar days"). A count
    of times is found by its number in any unit ("rescheduled twice": "2 reschedules"), and
    once is no value to find ("exchanged only once": "allows one exchange", "a single time").
    """
    wanted = _values(claim) - {_ONCE}
    if not wanted:
        return True
    found = list(found)  # read twice
    have: set[str] = set()
    bare: set[str] = set()
    for speaker, text in found:
        for value in _values(_KEY_UNIT.sub(_with_unit, text) if speaker == "tool" else text):
            have.add(value)
            if speaker == "tool" and value.startswith("m:") and value.endswith(":"):
                bare.add(value.split(":")[1])
    numbers = {v.split(":")[1] for v in have if v.startswith("m:")}
    have |= {same_duration(v) for v in have if v.startswith("m:")}
    terms = _naming_one(claim, found, wanted, have) if any(v.startswith("m:1:") for v in wanted) else frozenset()
    return all(v in have or same_duration(v) in have or _ends_found(v, have) or _one_named(v, have, terms) or (
        v.startswith("m:") and (v.split(":")[1] in bare or (v.endswith((":", _TIMES)) and v.split(":")[1] in numbers)))
        for v in wanted)


#: A count of times, as the analyser writes "twice" ("m:2:times"), and once.
_TIMES: Final = ":times"
_ONCE: Final = "m:1:times"


def _naming_one(claim: str, found: Sequence[tuple[str, str]], wanted: frozenset[str] | set[str],
                have: set[str]) -> frozenset[str]:
    """The content terms of the `found` texts in which a claim's count of one may be found
    (`_one_named`), or none: Portuguese writes one of a thing with its article ("uma mala",
    "um dia"), English does not ("a bag"), so a Portuguese claim's count of one is found in
    English texts naming it, unless they give a value the claim leaves out ("a checked bag
    costs $45" does not vouch for "a tarifa inclui uma mala").
    """
    if text_language(claim) != "pt" or text_language(" ".join(t for _, t in found)) != "en":
        return frozenset()
    if any(v.startswith("m:") and not v.endswith(":") and v not in wanted for v in have):
        return frozenset()
    return frozenset().union(*(content_terms(text) for _, text in found))


def _one_named(value: str, have: set[str], terms: frozenset[str]) -> bool:
    """True when `value` is one of a thing (``m:1:bag``: "uma mala", "um dia", which
    Portuguese writes with the article) and `terms` (the English texts' content terms;
    empty otherwise) name that thing, with no other count of it in `have`: "a 23 kg checked
    bag", "within a business day" (English's article is no number).
    """
    if not terms or not value.startswith("m:1:") or value == "m:1:":
        return False
    unit = value[4:]
    if any(v.startswith("m:") and v.split(":", 2)[2] == unit for v in have):
        return False  # the texts count it: "2 bags" is no "uma mala"
    return unit in terms or bool(content_terms(unit) & terms)


def _ends_found(value: str, have: set[str]) -> bool:
    """True when `value` is a range whose two ends are among `have`, each on its own ("open
    5 a.m. – 11 p.m." said as "opens at 5 a.m. ... until 11 p.m.").
    """
    match = RANGE_VALUE.fullmatch(value)
    return match is not None and {f"m:{match[1]}:{match[3]}", f"m:{match[2]}:{match[3]}"} <= have


#: A range value (``m:5-23:hour``): its two ends and its unit.
RANGE_VALUE: Final = re.compile(r"m:([^:-]+)-([^:-]+):(.*)")


#: A tool result's field whose key ends in a unit ("return window days: 15", "fee pct: 20"):
#: its number has that unit (`_tool_parts` writes a field as "key words: value").
_KEY_UNIT: Final = re.compile(
    r"\b(days?|dias?|hours?|horas?|minutes?|minutos?|months?|meses|years?|anos|pct|percent|percentual)"
    r":\s*(\d+(?:[.,]\d+)?)(?![\d.,]*\d|\s*(?:[^\W\d_]|%))", re.IGNORECASE)


def _with_unit(match: re.Match[str]) -> str:
    unit = match.group(1)
    return f"{unit}: {match.group(2)}{'%' if unit.lower().startswith(('pct', 'percent')) else ' ' + unit}"


#: Opening and closing, which the analyser reads as poles rather than terms ("We are open
#: Monday to Friday" has no content term).
_OPEN_CLOSE: Final = frozenset({"p:p_open", "p:p_close"})
#: Terms that name the business itself ("our store", "nossa loja"), as "we" does.
_THE_BUSINESS: Final = frozenset({"s_store"})


def _only_opening(text: str) -> frozenset[str]:
    """The open/close poles of `text` when nothing but the business names what it is about
    ("We are open Monday to Friday, 9 to 5", "Our store opens at 9"), else none ("The pool
    is open from 7 am").
    """
    if any(not t.startswith(("m:", "d:")) and t not in _THE_BUSINESS for t in content_terms(text)):
        return frozenset()
    return frozenset(t for t in tokens(text) if t in _OPEN_CLOSE)


def covers(claim: str, texts: Sequence[str]) -> bool:
    """True when `texts` are about what `claim` is about (see the module doc, step 3): a
    claim with values shares a word with them, or they are in the other language. A claim
    whose body names nothing but opening or closing ("Hours" / "We are open Monday to
    Friday, 9 to 5") is about what a text that names nothing else but opening says.
    """
    body = claim.split("\n", 1)[-1]
    opening = _only_opening(body)
    if opening and any(opening & _only_opening(t) for t in texts):
        return True
    wanted = {t for t in content_terms(claim) if not t.startswith(("m:", "d:"))}
    if not wanted:
        return True
    have = frozenset().union(*(content_terms(t) for t in texts)) if texts else frozenset()
    have |= frozenset().union(*(names(t) for t in texts)) if texts else frozenset()
    shared = wanted & have
    subject = wanted - _PRICE_WORDS  # what the claim's price or "free" is of
    if _values(claim):  # values survive translation where words do not ("30 days' notice" for "aviso de 30 dias")
        return bool(shared & subject if subject else shared) or (
            bool(texts) and text_language(" ".join(texts)) not in ("mixed", text_language(claim)))
    if subject and not shared & subject:  # "A entrega é grátis" says nothing of "A instalação é grátis"
        return False
    return len(shared) >= MIN_COVERAGE * len(wanted)


#: Words that say a price (or none) of the claim's subject, not what the subject is.
_PRICE_WORDS: Final = VALUE_WORDS | {"s_price"}


@dataclass(frozen=True, slots=True)
class EvidenceCheck:
    """What the quoted evidence of one candidate shows.

    Attributes:
        business: True when verified business sentences state the claim.
        customer: True when a quote was found only in what the customer wrote.
        why: one line: what was verified, or why nothing was.
        speakers: the business speakers whose sentences state it (empty unless `business`).
        located: True when a quote was found in some message (whoever wrote it); False
            when none was (a model that paraphrased what it was asked to quote).
    """

    business: bool
    customer: bool
    why: str
    speakers: frozenset[str] = frozenset()
    located: bool = True


def own_names(parts: Sequence[Piece], own: Iterable[str] = ()) -> frozenset[str]:
    """The names the business uses for itself: those of its system prompt among `parts` and of
    `own` (texts it wrote for itself, shown or withheld).
    """
    return frozenset().union(*(names(t) for t in [*own, *(p.text for p in parts if p.speaker == "system")]))


def check(claim: str, evidence: Sequence[str], parts: Sequence[Piece], own: Iterable[str] = ()) -> EvidenceCheck:
    """Verify a candidate's quoted `evidence` against the transcript's `parts`.

    Args:
        claim: the candidate's description and body (after redaction).
        evidence: the quotes the model gave (unredacted, as the model copied them).
        parts: the transcript's `pieces`.
        own: texts the business wrote for itself (its system prompt, shown or withheld):
            the names they hold are the business's own (`someone_else`).

    Returns:
        The `EvidenceCheck` (see the module doc for the rules).
    """
    found: list[tuple[str, str]] = []
    customer = False
    reasons: list[str] = []
    vouching: list[Piece] = []  # the business pieces a quote was verified in
    located = False
    ours = own_names(parts, own)
    for quote in _as_written(evidence, parts):
        wanted = normalised(str(quote))
        if len(wanted) < MIN_QUOTE_CHARS:
            # a whole reply that is a bare yes to the customer's question is a quote of it ("Yes.")
            answers = [p for k, p in enumerate(parts) if p.business and normalised(p.text) == wanted
                       and bare_yes(p.text) and answered_question(parts, k) is not None]
            located = located or bool(answers)
            vouching += answers
            if not answers:
                reasons.append("a quote too short to vouch")
            continue
        where = [p for p in parts if wanted in normalised(p.text)]
        located = located or bool(where)
        business = [p for p in where if p.business]
        if not business:
            customer = customer or bool(where)
            reasons.append("a quote of what the customer or a third party wrote" if where else "a quote found nowhere")
            continue
        for piece in business:
            for span, after in _around(piece.text, wanted):
                sentence = _without_asides(claim, span)
                before = [p for p in parts if p.index < piece.index]
                reading = read_sentence(claim, sentence, before, after)
                if reading.states and someone_else(claim, sentence, ours):
                    reading = Reading(False, "reported")
                if reading.states:
                    found.append((piece.speaker, sentence))
                    vouching.append(piece)
                else:
                    reasons.append(f"the {piece.speaker} {_SAID_AS.get(reading.why, reading.why)}")
    at = {id(piece): k for k, piece in enumerate(parts)}  # (a piece's place among the pieces, not its message's)
    for piece in dict.fromkeys(vouching):  # a bare yes states the question: "Is it still $3?" / "For now, yes."
        question = answered_question(parts, at[id(piece)]) if bare_yes(piece.text) else None
        if question is not None:
            found.append((piece.speaker, question))
    if found and any(declines(claim, piece, parts) for piece in dict.fromkeys(vouching)):
        reasons.append("the business declines it in the same message")
        found = []
    if found and not values_found(claim, found):
        other = _other_values(claim, found)
        if other:
            reasons.append(f"the quotes give it another value ({', '.join(sorted(other))})")
            found = []
        else:
            found += _rest_of(claim, vouching, parts, {text for _, text in found})
    elif found and not (covers(claim, [text for _, text in found]) and _value_words_said(claim, found)):
        found += _rest_of(claim, vouching, parts, {text for _, text in found})  # a claim of two sentences, one quoted
    texts = [text for _, text in found]
    if found and values_found(claim, found) and covers(claim, texts) and _value_words_said(claim, found):
        if not universal_said(claim, texts):  # "A tune-up is $89" quoted, "We service e-bikes at all our shops" beside
            texts += [text for _, text in _rest_of(claim, vouching, parts, set(texts))
                      if _says_all_of(claim, text, texts)]
        if not universal_said(claim, texts):
            reasons.append("the quotes say it of something narrower")
        elif bound_elsewhere(claim, texts, [p.text for p in vouching]):
            reasons.append("the business gives its subject another value")
        elif any(charges_for(claim, said) for piece in vouching for said in sentences(piece.text)):
            reasons.append("the business charges for what the claim calls free")
        elif drops_condition(claim, texts):
            reasons.append("the quotes bind it to a condition the claim leaves out")
        elif said_of_others(claim, texts, [p.text for p in parts if p.business], [p.text for p in parts]):
            reasons.append("the quotes say it of other names")
        elif taken_back(claim, max(p.index for p in vouching), parts):
            reasons.append("the business takes it back later")
        elif any(own_value_after(claim, piece.text, texts) for piece in vouching):
            reasons.append("the business gives its own value after it")
        else:
            speakers = frozenset(speaker for speaker, _ in found)
            return EvidenceCheck(True, customer, f"quoted from {', '.join(sorted(speakers))}", speakers)
    elif found:
        reasons.append("the quotes do not carry the claim's values or subject")
    return EvidenceCheck(False, customer, "; ".join(dict.fromkeys(reasons)) or "no evidence", located=located)


#: Readings that decline nothing: a question may come before its answer.
_NOT_DECLINING: Final = frozenset({"asks"})


def declines(claim: str, piece: Piece, parts: Sequence[Piece]) -> bool:
    """True when a sentence of business `piece` that says at least half of `claim`'s content
    terms is read as not stating it (someone else's rule, a refusal, another version,
    something narrower, another time: `read_sentence`): the message spoke of the claim and
    declined it, so none of its other sentences vouches for a part of it ("Delta does offer
    free same-day changes for its Gold Medallions, but on our side same-day changes cost
    $75" for "Same-day changes are free for Gold members").
    """
    wanted = content_terms(claim)
    said = sentences(piece.text)
    before = [p for p in parts if p.index < piece.index]
    shares = [len(content_terms(sentence) & wanted) for sentence in said]
    readings = [read_sentence(claim, sentence, before, said[at + 1] if at + 1 < len(said) else "")
                if 2 * share >= len(wanted) else None
                for at, (sentence, share) in enumerate(zip(said, shares, strict=True))]
    return declined_by(claim, readings, shares)


def declined_by(claim: str, readings: Sequence[Reading | None], shares: Sequence[int]) -> bool:
    """True when a sentence's reading (None: not read) declines `claim` (not `states`, and
    not a question) and says as much of it (`shares`: its count of the claim's terms) as any
    sentence of the message that states it: "gift cards can't be combined with PayPal. You can
    combine a gift card with a credit card, though." states the claim in its first sentence.
    A claim of several sentences is not contradicted by a sentence that says one of them
    ("annual plans are refunded" for "... annual plans are refunded; monthly plans are not").
    A message that corrects itself declines nothing: its correction says what stands
    ("The late fee is $25. Correction: the fee went up to $35 last month").
    """
    if any(r is not None and r.why == "corrected" for r in readings):
        return False
    stating = max((share for r, share in zip(readings, shares, strict=True) if r is not None and r.states), default=0)
    passing = _NOT_DECLINING | ({"contradicts"} if len(sentences(claim.split("\n", 1)[-1])) > 1 else set())
    return any(r is not None and not r.states and r.why not in passing and share >= stating
               for r, share in zip(readings, shares, strict=True))


def check_unquoted(claim: str, parts: Sequence[Piece], own: Iterable[str] = ()) -> EvidenceCheck:
    """`check` with every sentence the business side wrote as a quote: what vouches for a
    claim whose proposer quoted nothing found in the transcript (a model asked to copy words
    verbatim often paraphrases them). The same rules hold: a sentence must state the claim
    (polarity, no acknowledgement, hedge, question or report) and the sentences together
    carry its values and subject; a customer's words never vouch.
    """
    wanted = content_terms(claim)
    for sentence in (s for piece in parts if piece.business for s in sentences(piece.text)):
        if not content_terms(sentence) & wanted:
            continue  # shares no word of the claim: `check` would find nothing in it
        checked = check(claim, [sentence], parts, own)
        if checked.business:
            who = " and ".join(sorted(checked.speakers))
            return dataclasses.replace(checked, why=f"no quote found as written; the {who} said it in other words")
    return EvidenceCheck(False, False, "a quote found nowhere, and no business sentence states it", located=False)


#: How a business sentence's reading (`Reading.why`) is said in a line for a person ("the
#: agent contradicts it").
_SAID_AS: Final = {
    "acknowledged": "only acknowledges it", "contradicts": "contradicts it", "corrected": "takes it back",
    "echo": "only echoes the customer", "rearranged": "says another version of it",
    "jokes": "jokes", "narrower": "says it of something narrower",
    "reported": "reports what someone else says, wishes or doubts", "asks": "asks rather than states it",
    "tense": "says it of another time", LISTS_MORE: "lists fewer of its items",
}


def universal_said(claim: str, texts: Sequence[str]) -> bool:
    """True unless `claim`'s body says its rule of every thing of a kind ("Todo eletrodoméstico
    comprado no site tem instalação grátis", "every", "any", "qualquer") and the vouching
    `texts` never name that kind: they state it of something narrower ("A instalação grátis
    vale para ar-condicionado split").
    """
    seq = tokens(claim.split("\n", 1)[-1])
    for at, token in enumerate(seq):
        if token == _UNIVERSAL and at and seq[at - 1].startswith("m:") and (
                at + 1 == len(seq) or seq[at + 1] in (".", ",", "r:as")):
            continue  # "R$ 90 each.", "$30 each as private pay": a price per thing, of no kind
        if token == _UNIVERSAL:  # "each subsequent transfer" is of transfers: `_ONE_MORE` skipped
            kind = next((t for t in seq[at + 1:] if plain_word(t) and t not in _ONE_MORE), None)
            if kind is not None and kind not in _RECURRING and not any(kind in content_terms(t) for t in texts):
                return False
    return True


#: Times a rule recurs on ("todo dia 10 de cada mês", "every week", "toda manhã"), as
#: `tokens` reads them: a frequency, no kind of thing the rule is said of.
_RECURRING: Final = frozenset({"mes", "month", "week", "seman", "dia", "day", "year", "ano", "hour", "hora",
                               "quinzen", "weekend", "morn", "manh", "tard", "noit", "night", "evening", "afternoon"})


def _says_all_of(claim: str, text: str, quoted: Sequence[str]) -> bool:
    """True when `text` says, of all or every thing of a kind, with no exception, all that a
    clause of `claim`'s body says of all of that kind, by itself ("e-bikes are serviced at
    all shops": "We service e-bikes at all our shops") or pointing back to the `quoted`
    sentences that say the rest ("Isso vale para todas as nossas lojas", "Every location of
    ours offers them"); not "All our locations have free wifi" beside "Valet is free
    downtown", nor "... at all our shops except Harbor", "all our stores in São Paulo", "todos
    os planos empresariais" (a kind the claim does not narrow so).
    """
    folded = fold(text)
    seq = tokens(text)
    if _EXCEPT.search(folded) or _UNIVERSAL not in seq or names(text) - names(claim):
        return False
    said = content_terms(text)
    if _POINTING_BACK.search(folded):
        said = said.union(*map(content_terms, quoted))
    for clause in re.split(r"[.;,\n]", claim.split("\n", 1)[-1]):
        wanted = content_terms(clause)
        if _UNIVERSAL in tokens(clause) and wanted <= said and _kind_after_all(seq) <= wanted:
            return True
    return False


def _kind_after_all(seq: tuple[str, ...]) -> frozenset[str]:
    """The content terms right after each "all" / "todos" of `seq`, to its phrase's end: the
    kind it speaks of ("planos empresariais").
    """
    kind: set[str] = set()
    for at, token in enumerate(seq):
        if token == _UNIVERSAL:
            for following in seq[at + 1:]:
                if following.startswith(("r:", "c:", "p:")) or following in (".", ","):
                    break
                if plain_word(following):
                    kind.add(following)
    return frozenset(kind)


#: Words that point back to what was just said, as a sentence's subject or a verb's object
#: ("This applies at all our stores", "Isso vale para todas", "Every location offers them"),
#: folded; not "That said, ...".
_POINTING_BACK: Final = re.compile(
    r"^\W*(?:this|that|it|isso|isto|o mesmo|a mesma)\s+(?:applies|apply|holds|is valid|is true|goes|vale|valem"
    r"|se aplica|funciona)\b|\b(?:offers?|has|have|do|does|provide|provides|fazem|faz|oferecem|oferece|tem|temos)"
    r"\s+(?:it|them|this|that|isso|o mesmo|a mesma)\b")
_UNIVERSAL: Final = "p:p_all"
#: What takes some out of "all" ("except", "menos", "other than"), folded.
_EXCEPT: Final = re.compile(r"\b(?:except|excepting|excluding|other than|apart from|but not|not including|exceto"
                            r"|with the exception|but (?:the |our )?\w+\b|menos|salvo|com excecao|a excecao"
                            r"|fora (?:a|o|as|os)\b|fica(?:m)? de fora|so nao|excluindo|tirando)\b")


#: Words after "each"/"cada" that say "one more of the kind", not which kind ("each
#: subsequent transfer", "cada hora adicional"), as `tokens` reads them.
_ONE_MORE: Final = frozenset(t for w in (
    "subsequent additional extra further following next other new later remaining "
    "subsequente adicional seguinte outro outra proximo proxima novo nova posterior excedente"
).split() for t in content_terms(w))


def said_of_others(claim: str, texts: Sequence[str], business: Sequence[str], seen: Sequence[str] = ()) -> bool:
    """True when the vouching `texts` name other names in place of one of `claim`'s, which
    the business speaks of in a sentence of its own: "Same-day delivery is available in San
    Jose and Oakland. In Sacramento we deliver next day." does not vouch for "same-day
    delivery in Sacramento". A word any of the `seen` texts (the whole conversation)
    writes as a name is one wherever it stands ("Silver members..." opening a sentence,
    after the customer asked "with Silver status?").
    """
    known = frozenset().union(*map(names, seen))

    def named(text: str) -> frozenset[str]:
        return names(text) | (content_terms(text) & known)

    claimed = named(claim)
    said = frozenset().union(*(names(t) | content_terms(t) for t in texts))
    missing = claimed - said
    if not missing or not frozenset().union(*(names(t) for t in texts)) - claimed - content_terms(claim):
        return False
    return any(named(sentence) & missing for text in business for sentence in sentences(text)
               if sentence not in texts)


def taken_back(claim: str, last: int, parts: Sequence[Piece]) -> bool:
    """True when a business piece after piece `last` corrects itself (`CORRECTING`: "me
    corrigindo", "I misspoke") in a sentence about the claim that contradicts it or
    otherwise declines it (narrows it, says another version: `read_sentence`): the
    business's last word on it is the other way ("Na tarifa Light você pode despachar uma
    mala de até 23 kg." ... "Desculpa, me corrigindo: a tarifa Light não inclui mala
    despachada"; "Corrigindo o que falei: a quilometragem livre vale só para os grupos B e
    C"); or the business's very next piece opens with a correction ("Sorry, correction: we
    don't offer that.").
    """
    if superseded(parts, last, claim):
        return True  # "Sorry, correction: we don't offer that." right after it; "A garantia é de 1 ano."
    return corrected_later(claim, last, parts)


def corrected_later(claim: str, last: int, parts: Sequence[Piece]) -> bool:
    """True when one of the next `LATER_PIECES` business pieces after piece `last` (a
    transcript of thousands of messages is read in linear time) corrects itself (`CORRECTING`) in a
    sentence about the claim (its words, or half of its description) that contradicts it or
    declines it otherwise (`read_sentence`: "Corrigindo o que falei: a quilometragem livre
    vale só para os grupos B e C" for "... livre em todas as categorias").
    """
    summary = content_terms(claim.split("\n", 1)[0])
    later = itertools.islice((p for p in parts if p.index > last and p.business), LATER_PIECES)
    for piece in later:  # the next `LATER_PIECES` business pieces, as `replaced_later` reads them
        if not CORRECTING.search(fold(piece.text)):
            continue
        before = [p for p in parts if p.index < piece.index]
        for sentence in sentences(piece.text):
            if not covers(claim, [sentence]) and 2 * len(summary & content_terms(sentence)) < len(summary):
                continue  # about something else: neither the claim's words nor half of its description
            if not polarity_agrees(claim, sentence):
                return True
            reading = read_sentence(claim, sentence, before)  # "... vale só para os grupos B e C"
            if not reading.states and reading.why not in _NOT_DECLINING:
                return True
    return False


def own_value_after(claim: str, text: str, quoted: Sequence[str]) -> bool:
    """True when a sentence of `text` after the last of the `quoted` sentences it holds
    gives one of the claim's units another value and none of the claim's, and names
    nothing the claim does not: the business's own value after someone else's ("Amazon
    gives a 30-day return window; ours is 7 days from delivery" does not vouch for "Returns
    within 30 days").
    """
    if not _values(claim):
        return False
    parts = sentences(text)
    last = max((i for i, sentence in enumerate(parts) if sentence in quoted), default=None)
    if last is None:
        return False
    return any(_another_value(claim, "agent", sentence, others=0) for sentence in parts[last + 1:])


def _another_value(claim: str, speaker: str, sentence: str, *, others: int) -> bool:
    """True when `sentence` gives one of `claim`'s units another value and none of its
    values, naming at most `others` content terms the claim does not (correction words
    aside): it gives the claim's subject another value.
    """
    if not _other_values(claim, [(speaker, sentence)]) or _values(sentence) & _values(claim):
        return False
    said = content_terms(without_asides(fold(sentence)))
    return len({t for t in said - content_terms(claim) if not t.startswith(("m:", "d:"))}) <= others


def replaced_in_message(claim: str, speaker: str, later: Sequence[str], said: str = "") -> bool:
    """True when one of `later` (what follows a sentence in the same business message)
    opens by correcting or excusing itself (`opens_correcting`) and gives the claim
    another value for exactly one of its own (`_one_value_replaced`): the message corrects
    itself ("Shipping is $5 on all orders. Actually, shipping is $7 on all orders."; "R$
    15, ou melhor, R$ 18"). A row of another subject names it in words ("Express shipping
    is $15") or in values and days the claim lacks ("Actually, on Fridays we're open until
    9 pm", "Opa, o kit com 3 unidades custa R$ 70", "Sorry, the 2-year plan is $179"); a
    value worked out for the customer is no correction ("Para você, R$ 30": `_APPLIED`).
    """
    return bool(_values(claim)) and next(_replacing(claim, speaker, later, said), None) is not None


def _replacing(subject: str, speaker: str, later: Sequence[str], said: str = "") -> Iterator[str]:
    """Each of `later` that opens by correcting itself and gives `subject` another value for
    exactly one of its own (`_one_value_replaced`; not a value worked out for the customer,
    `_APPLIED`), without the reason it gives (`without_explanation`).
    """
    for text in later:
        if opens_correcting(text) and not _APPLIED.search(fold(text)):
            clipped = without_old_value(without_explanation(text))
            if _one_value_replaced(subject, speaker, clipped, said):
                yield clipped


def corrected_to(claim: str, sentence: str, speaker: str,
                 later: Sequence[str]) -> tuple[frozenset[str], frozenset[str]]:
    """``(replaced, new)``: the values of `sentence` that a later part of its message
    corrects to values of `claim`, and those values (`replaced_in_message`'s reading, with
    `sentence` as what is corrected); two empty sets when there is none. "Orders between
    $50 and $100 get 10% off. Correction: they get 12% off." states "Orders between $50
    and $100 get 12% off" in its first sentence's words and the correction's value. Only a
    correction to the claim's own values counts, and never one that replaces a value the
    claim keeps.
    """
    ours = _values(claim)
    for clipped in _replacing(sentence, speaker, later):
        before, after = _values(sentence), _values(clipped)
        new = after - before
        units = {v.rsplit(":", 1)[1] for v in new if v.startswith("m:")}
        dated = any(is_calendar_date(v) for v in new)  # "termina em 2 de dezembro" for "em 30 de novembro"
        replaced = {v for v in before - after
                    if (v.startswith("m:") and v.rsplit(":", 1)[1] in units) or (dated and is_calendar_date(v))}
        if replaced and new <= ours and not replaced & ours:
            return frozenset(replaced), frozenset(new)
    return frozenset(), frozenset()


def _one_value_replaced(claim: str, speaker: str, text: str, said: str = "") -> bool:
    """True when `text` holds exactly one value the claim does not, of the unit of a claim
    value it leaves out, no other value or day the claim lacks, and no content word the
    claim lacks (correction words and asides aside).
    """
    ours, theirs = _values(claim), _values(text)
    new, gone = theirs - ours, ours - theirs
    if len(new) != 1 or not gone or not _other_values(claim, [(speaker, text)]):
        return False
    found = content_terms(RESTATING.sub(" ", without_change_account(without_asides(fold(text)), claim)))
    return not {t for t in found - content_terms(claim) - VERSION_WORDS - VALUE_NOUNS
                if not t.startswith(("m:", "d:"))} \
        and not narrower_subject(claim, text, said)


def superseded(parts: Sequence[Piece], index: int, claim: str) -> bool:
    """True when a business piece after the piece at `index` takes it back: its first next
    piece opens with a correction (`corrected_next`), or a later sentence gives one of the
    claim's units another value and none of the claim's, naming nothing else ("Sim." ... "A
    garantia é de 1 ano." for "A garantia é de 2 anos"; not "Na linha premium, 3 anos", nor
    the rule worked out for the customer in the conditional, `_APPLIED`).
    """
    return corrected_next(parts, index, claim) or replaced_later(parts, index, claim)


def replaced_later(parts: Sequence[Piece], index: int, claim: str) -> bool:
    """True when a business sentence after the piece at `index` (in the next `LATER_PIECES`
    business pieces: a transcript of thousands of messages is read in linear time) gives one
    of the claim's units another value and none of the claim's, naming nothing else and at
    least one of its words or opening by correcting itself (`superseded`'s second way: "A
    garantia é de 1 ano." or "Desculpe, é 1 ano." for "A garantia é de 2 anos"; not the
    slots "Tem às 9h e às 10h30" after "das 8h às 12h").
    """
    if not _values(claim):
        return False
    later = itertools.islice((p for p in parts if p.index > index and p.business), LATER_PIECES)
    words = {t for t in content_terms(claim) if not t.startswith(("m:", "d:"))}
    return any(_another_value(claim, piece.speaker, sentence, others=1) and not _APPLIED.search(fold(sentence))
               and (not words.isdisjoint(content_terms(sentence)) or opens_correcting(sentence))
               for piece in later for sentence in sentences(piece.text))  # (bare times offer slots)


#: How many later business pieces may take a piece's value back (`replaced_later`).
LATER_PIECES: Final = 24


#: The rule applied to the customer's case, in the conditional ("since you've completed 4
#: months, your fee would be $80", "no seu caso, a taxa ficaria em R$ 80"), folded: a value
#: worked out from the rule, which takes nothing back.
_APPLIED: Final = re.compile(r"\b(?:would|ficaria|seria|sairia|daria|for you|in your case|para voce|pra voce"
                             r"|no seu caso|no teu caso|total|your order|seu pedido|sua compra|entao)\b")


def corrected_next(parts: Sequence[Piece], index: int, claim: str = "") -> bool:
    """True when the business's first piece after the piece at `index` opens by correcting
    itself and names nothing else ("Sorry, correction: we don't offer that.", "Correção: não
    oferecemos esse desconto"): it takes back what that piece said. One that names other
    things than `claim` does ("Me corrigindo: a tarifa Light não inclui marcação de assento")
    corrects those (`taken_back` reads it sentence by sentence).
    """
    following = next((p for p in parts if p.index > index and p.business), None)
    if following is None:
        return False
    folded = fold(following.text).lstrip(" \t\n")
    if RETRACTING.search(folded[:OPENING_CHARS]):
        return True  # "Ah, me desculpe, me confundi com outro curso: no seu, ..." takes all of it back
    opening = CORRECTING.search(folded[:OPENING_CHARS])
    return opening is not None and len(content_terms(folded[opening.end():]) - content_terms(claim)) <= 1


def bound_elsewhere(claim: str, texts: Sequence[str], vouching: Sequence[str]) -> bool:
    """True when a name of `claim` that the vouching `texts` leave out is, in another
    sentence of the same business messages, given another value of a unit the claim's
    values have: "A troca a cada 12 meses é benefício do plano Infinity. No Essencial, a
    cada 24 meses" gives Essencial 24 months, so it does not vouch for "Essencial: 12 meses".
    """
    wanted = _values(claim)
    units = {v.rsplit(":", 1)[1] for v in wanted if v.startswith("m:")}
    said = frozenset().union(*(names(t) | content_terms(t) for t in texts)) if texts else frozenset()
    missing = names(claim.split("\n", 1)[-1]) - said
    if not missing or not units:
        return False
    for text in vouching:
        for sentence in sentences(text):
            if names(sentence) & missing or content_terms(sentence) & missing:
                other = {v for v in _values(sentence) if v.startswith("m:") and v.rsplit(":", 1)[1] in units}
                if other - wanted:
                    return True
    return False


#: A field of a structured tool result as a model quotes it: ``"key": value`` (JSON).
_QUOTED_FIELD: Final = re.compile(r'"([^"\\]{1,80})"\s*:\s*("(?:[^"\\]|\\.)*"|[^,{}\[\]"]+)')


def _as_written(evidence: Sequence[str], parts: Sequence[Piece]) -> list[str]:
    """The quotes, each one that no piece holds and that quotes fields of a structured
    tool result (``"return_window_days": 45``, JSON syntax and all) as those fields read in
    the tool's piece (`trust.sources`: "return window days: 45"), one quote per field: the
    model copied the record as the tool returned it.
    """
    out: list[str] = []
    texts: list[str] = []
    for quote in map(str, evidence):
        fields = _QUOTED_FIELD.findall(quote)
        texts = texts or ([normalised(p.text) for p in parts] if fields else [])
        if not fields or any(normalised(quote) in t for t in texts):
            out.append(quote)
            continue
        for key, raw in fields:
            try:
                value = json.loads(raw.strip())
            except ValueError:
                value = raw.strip()
            if isinstance(value, (dict, list)) or value is None:
                continue
            out.append(f"{key.replace('_', ' ')}: {value}")
    return out


def someone_else(claim: str, sentence: str, ours: frozenset[str] = frozenset()) -> bool:
    """True when the subject of `sentence` is a name (`_SUBJECT_NAME`; acronyms aside)
    that `claim` leaves out and the business does not use for itself (`ours`): "A Amazon
    oferece frete grátis para assinantes Prime" is Amazon's rule, not "Assinantes têm
    frete grátis".
    """
    subject = _SUBJECT_NAME.match(sentence)
    if subject is None or subject.group(1).isupper():  # no name, or an acronym ("O SAC"): a business's unit
        return False
    return bool(names(subject.group(0)) - content_terms(claim) - names(claim) - ours)


#: A sentence whose subject is a name: an article and a capitalised word ("A Amazon
#: oferece...", "The Delta app lets..."), where the word is no sentence start.
_SUBJECT_NAME: Final = re.compile(r"^\W*(?:A|O|As|Os|The)\s+([A-Z][\w-]+)")


def _other_values(claim: str, found: Sequence[tuple[str, str]]) -> set[str]:
    """The values the quoted (speaker, text) pieces give in a unit of `claim`'s values that
    are none of `claim`'s ("the daily ATM withdrawal limit is $500" for "...a limit of
    $1,000"; a tool's ``return window days: 15`` for "20 days"): the quote states the
    claim's subject with another value, so no other sentence may supply it.
    """
    wanted = _values(claim)
    units = {v.rsplit(":", 1)[1] for v in wanted if v.startswith("m:")} - {""}
    ends = {f"m:{m[k]}:{m[3]}" for v in wanted if (m := RANGE_VALUE.fullmatch(v)) for k in (1, 2)}
    dated = any(is_calendar_date(v) for v in wanted)  # "ends on June 30": a calendar date is a value too
    said = {v for speaker, text in found
            for v in _values(_KEY_UNIT.sub(_with_unit, text) if speaker == "tool" else text)
            if v.startswith("m:") or (dated and is_calendar_date(v))}
    days = {_day(v) for v in wanted if is_calendar_date(v)}
    return {v for v in said if (is_calendar_date(v) or v.rsplit(":", 1)[1] in units) and v not in wanted | ends
            and not _ends_found(v, wanted | ends) and not (is_calendar_date(v) and _day(v) in days)}


def _day(date: str) -> str:
    """A calendar date without its year: "até 30/06" is the day of "válido até 30/06/2025"."""
    return ":".join(date.split(":")[:2])


def _rest_of(claim: str, vouching: Sequence[Piece], parts: Sequence[Piece],
             taken: set[str]) -> list[tuple[str, str]]:
    """The other sentences of the messages a quote was verified in that state something
    of `claim` too (`read_sentence`, and a content term of the claim) and give none of its
    units another value: a quote may leave out a value its message states beside it ("Your
    fare includes one carry-on. The first checked bag is $35": the quote only the second),
    but "Free shipping is only for orders over $300" completes no quote of "free over $100".
    """
    wanted = content_terms(claim)
    out: list[tuple[str, str]] = []
    read = [p for p in parts if p.speaker == "tool" and any(p.index < v.index for v in vouching)]
    for piece in dict.fromkeys([*vouching, *read]):
        said = sentences(piece.text)
        before = [p for p in parts if p.index < piece.index]
        for at, sentence in enumerate(said):
            after = said[at + 1] if at + 1 < len(said) else ""
            if sentence not in taken and content_terms(sentence) & wanted \
                    and not _other_values(claim, [(piece.speaker, sentence)]) \
                    and not _value_of_another(claim, sentence) \
                    and read_sentence(claim, sentence, before, after).states:
                out.append((piece.speaker, sentence))
    return out


def _value_of_another(claim: str, sentence: str) -> bool:
    """True when `sentence` gives one of `claim`'s values and names a name the claim leaves
    out: the value is that one's ("Four simultaneous screens is a Premium feature" completes
    no quote of "Basic allows four screens").
    """
    return bool(names(sentence) - names(claim) - content_terms(claim)) and bool(_values(sentence) & _values(claim))


#: Terms of a sentence that charges for something ("cobrada", "we charge", "costs", "fee").
_CHARGING: Final = frozenset({"s_price", "cobr"})
#: Terms of paying apart from the rest ("quoted separately", "costs extra").
_APART: Final = frozenset({"separ", "extra"})
_APART_RE: Final = re.compile(r"\ba parte\b")  # "cobrada à parte", folded
#: An amount of money's term ("m:75:usd").
_MONEY_TERM: Final = re.compile(r"m:[^:]+:(?:brl|usd|eur|gbp)$")


#: Poles that bound a value into a condition ("over R$ 200", "at least 3 items", "before 2 pm").
_BOUNDS: Final = frozenset({"p:p_above", "p:p_below", "p:p_at_least", "p:p_at_most", "p:p_before", "p:p_after"})
#: Clause words that attach a condition to what comes before them.
_CONDITIONS: Final = frozenset({"c:if", "c:unless", "c:when"})


#: A statement closed by a tag that asks nothing ("..., tá?", "..., ok?", "..., right?"), folded.
_TAG_QUESTION: Final = re.compile(r"[,\s](?:ta|ok|okay|ne|certo|beleza|blz|right|alright)\s*\?\s*$")


def drops_condition(claim: str, texts: Sequence[str]) -> bool:
    """True when a vouching sentence says the claim for a window of time the claim leaves
    out (`_windowed`: "Até domingo, o rodízio sai por R$ 49,90", "During our January
    campaign, new members pay no enrollment fee"), or `claim` states no value nor condition
    and a vouching sentence binds what it shares with the claim to one: a bounded value in
    that clause ("Return shipping is free for orders over R$ 200" for "Return shipping is
    free") or an "if" / "unless" /
    "when" clause right after it ("... free unless the item was opened") none of whose
    words the claim says ("whenever you return an item" is "on all returns"). The question
    a bare yes answers is the asker's case; a bound in another clause ("..., and refunds
    take up to 10 days") is another fact, not a condition.
    """
    mine = tokens(claim)
    if _windowed(mine, content_terms(claim), texts) or _of_a_month(claim, texts) or _required(mine, texts) \
            or _in_season(claim, texts) or _on_some_days(mine, texts):
        return True
    if any(t in _CONDITIONS for t in mine):
        return False  # a claim with conditions of its own is checked value by value
    valued = any(t.startswith(("m:", "d:")) or t in _BOUNDS for t in mine)  # its bounds are its values'
    wanted = content_terms(claim)
    for text in texts:
        if text.rstrip().endswith("?") and not _TAG_QUESTION.search(fold(text)):
            continue  # the question a bare yes answers: its "if I break down near ..." is the asker's case
        if _for_whoever(text, wanted) or _if_first(text, wanted):
            return True  # "A instalação é grátis pra quem assina o plano de 500 mega"
        seq = tokens(text)
        start = 0
        for end in [*(i for i, t in enumerate(seq) if t.startswith("c:")), len(seq)]:
            clause = seq[start:end]
            if start and seq[start] in _CONDITIONS:
                start = end
                continue  # a condition clause is read with the clause before it
            if not set(clause) & wanted:
                start = end
                continue
            bound = not valued and any(t in _BOUNDS and at + 1 < len(clause) and clause[at + 1].startswith(("m:", "d:"))
                                       for at, t in enumerate(clause))
            after = seq[end] if end < len(seq) else ""
            said = _condition_words(seq, end) if after in _CONDITIONS else frozenset()
            if valued and said and _condition_words(seq, end, values=True) & wanted:
                said = frozenset()  # the claim's own value or sense is in it ("quando você desiste em até 7
                # dias"; "Crianças até 6 anos se hospedam de graça", where "se" is no "if", for "stay free")
            but = seq[end + 1:next((k for k in range(end + 1, len(seq)) if seq[k].startswith("c:")), len(seq))] \
                if after == "c:but" else ()
            if bound or (said and (not said & wanted or (not valued and _bounded(seq, end)))) \
                    or _only_with(clause, wanted) or _only_with(but, wanted):
                return True  # "unless the item was opened", "desde que pese no máximo 8 kg"; not "whenever you
                # return"; "Pode sim, mas só com autorização por escrito"
            start = end
    return False


#: A weekday said of one month ("todo domingo de dezembro", "Sundays in December"), folded.
_WEEKDAY_OF_MONTH: Final = re.compile(
    rf"\b(?:{'|'.join(WEEKDAY_NAMES)})s?(?:-feiras?)?\s+(?:de|do|in|em|during|durante)\s+"
    rf"({'|'.join(MONTH_NAMES)})\b")


def _of_a_month(claim: str, texts: Sequence[str]) -> bool:
    """True when a vouching sentence says a weekday of one month the claim never names
    ("Todo domingo de dezembro a gente abre das 10h às 18h" for "A loja abre aos domingos").
    """
    said = fold(claim)
    return any(m.group(1) not in said for text in texts for m in _WEEKDAY_OF_MONTH.finditer(fold(text)))


def _required(mine: tuple[str, ...], texts: Sequence[str]) -> bool:
    """True when a vouching sentence adds, after a "but", a requirement with words the claim
    (its tokens `mine`) does not say ("Our return window is 30 days, but items have to be
    unworn, unwashed and with the original tags" for "returns of any item within 30 days";
    "..., mas o produto precisa estar com etiqueta").
    """
    for text in texts:
        seq = tokens(text)
        for at, token in enumerate(seq):
            if token != "c:but":
                continue
            clause = seq[at + 1:next((k for k in range(at + 1, len(seq)) if seq[k].startswith("c:") and
                                      seq[k] != "c:and"), len(seq))]
            if "p:p_must" in clause and "p:p_must" not in mine \
                    and any(plain_word(t) and t not in mine for t in clause):
                return True
    return False


#: "Only with" ("somente com a nota fiscal", "only with the original receipt"): what follows
#: is a condition of what comes before.
_ONLY_WITH: Final = frozenset({"r:with", "r:com"})


#: Who a rule is for, as a clause ("pra quem assina", "for those who", "for anyone who",
#: "para clientes que"): a condition on the customer (folded text).
_WHOEVER: Final = (r"(?:quem|aqueles? que|(?:os |as )?(?:clientes?|membros?|alunos?|assinantes?) que"
                   r"|(?:those|anyone|everyone|customers|members|people|guests|students) (?:who|that))\b([^.;!?]*)")
_FOR_WHOEVER: Final = re.compile(r"\b(?:pra|para|for)\s+(?:" + _WHOEVER + r"|((?:[\w-]+ ){1,3})(?:customers|members"
                                 r"|subscribers|clients|guests|students|clientes|assinantes|membros|alunos)\b)")


def _if_first(text: str, wanted: frozenset[str]) -> bool:
    """True when `text` opens with a condition closed by a comma ("If you're on the Fiber
    500 plan or higher, yes, we'll swap your router at no charge", "Se o pedido passar de
    R$ 300, o frete sai grátis") none of whose words the claim (content terms `wanted`)
    says, and the rest says some of the claim: the claim without the condition is another
    rule. A courtesy ("if you like", "se quiser") conditions nothing.
    """
    found = _IF_FIRST.match(fold(text))
    if found is None:
        return False
    phrase = content_terms(found[1])
    if phrase & _ASIDES:
        return False  # "For security reasons, ...", "For future reference, ...": why, or an aside
    said = phrase - _COURTESY
    return bool(said) and not said & wanted and bool(content_terms(found[2]) & wanted)


#: A condition said first, to its comma, and the rest (folded text): "if ...", and a scope
#: ("On the Fiber 500 plan or higher, ...", "For Fiber 500 customers and above, ...").
_IF_FIRST: Final = re.compile(r"\W*(?:if|unless|only if|as long as|se|caso|desde que|somente se|so se"
                              r"|on|for|para)\b([^,.;!?]+),([^.;!?]+)")  # (not "na": "Na real, é 5%")
#: The terms of the words of a courtesy's "if" ("if you like", "se quiser").
_COURTESY: Final = frozenset(t for w in ("like", "want", "wish", "prefer", "need", "quiser", "preferir",
                                         "desejar", "precisar", "gostar", "please") for t in content_terms(w))
#: The terms of the words of a phrase said first that gives a reason or an aside, no scope
#: ("For security reasons", "For future reference", "For your information", "Para sua
#: informação", "For example").
_ASIDES: Final = frozenset(t for w in ("reason", "reasons", "reference", "information", "informacao", "record",
                                       "example", "exemplo", "motivo", "motivos", "razao", "safety", "seguranca",
                                       "clarity", "clareza") for t in content_terms(w))


#: Where a phrase starts (folded text): a comma, a bracket, a dash, "or" / "ou".
_PHRASE_START: Final = re.compile(r"[,;(\u2014\u2013]|\s-\s|\b(?:or|ou)\b")


def _for_whoever(text: str, wanted: frozenset[str]) -> bool:
    """True when `text` says what it shares with the claim (content terms `wanted`) for
    whoever does something none of whose words the claim says ("A instalação é grátis pra
    quem assina o plano de 500 mega" for "A instalação é gratuita"; "for Fiber 500
    customers"), or only for whoever
    does something the claim does not say ("Só quem fecha o plano anual ganha o livro" for
    "Todo aluno ganha o livro").
    """
    folded = fold(text)
    for found in _FOR_WHOEVER.finditer(folded):
        said = content_terms(found[1] or found[2] or "")  # "pra quem assina ...", "for Fiber 500 customers"
        before = folded[:found.start()]
        if found[2]:  # "for Gold members" bears on its own phrase only ("..., or 45 days for Gold members")
            before = _PHRASE_START.split(before)[-1]
        if said and not said & wanted and content_terms(before) & wanted:
            return True
    for found in _ONLY_WHOEVER.finditer(folded):
        said = content_terms(found[1])
        if said - wanted and said & wanted:  # the condition's words and the rule's, after it
            return True
    return False


#: Only whoever does something gets the rule ("só quem fecha o plano anual ganha o livro",
#: "only customers who sign up get ..."), folded: the clause's words hold the condition's.
_ONLY_WHOEVER: Final = re.compile(r"\b(?:so|somente|apenas|only)\s+" + _WHOEVER)


def _only_with(clause: Sequence[str], wanted: frozenset[str]) -> bool:
    """True when `clause` (tokens) binds what it says to an "only with" none of whose words
    the claim (its content terms `wanted`) says ("... cobre quebra da armação somente com a
    nota fiscal" for "A garantia cobre a quebra da armação"); what it is with is the words
    right after it.
    """
    for at in range(len(clause) - 2):
        if clause[at] == "p:p_only" and clause[at + 1] in _ONLY_WITH:
            # what it is with: "autorização" (not "... antes da instalação", the event it is for)
            said = set(itertools.takewhile(plain_word, clause[at + 2:]))
            return bool(said) and not said & wanted
    return False


#: What "during" is followed by when it scopes a rule rather than an offer's while ("during
#: your stay", "durante toda a estadia", "during the whole trip").
_WHOLE_OF: Final = frozenset({"w:you", "p:p_all", "p:p_any", "whol", "entir"})
#: Words of a day that bound an offer like a date ("só até amanhã", "today only").
_DAY_WORDS: Final = frozenset({"amanh", "hoje", "tomorrow", "today", "tonight"})


#: What opens a range of dates ("from March 1 to 15", "de 1 a 15 de março", "between ...").
_RANGE_OPENS: Final = frozenset({"r:from", "r:de", "r:between", "r:entre"})


def _windowed(mine: tuple[str, ...], wanted: frozenset[str], texts: Sequence[str]) -> bool:
    """True when `mine` (a claim's tokens) names no date, day or "during" of its own and a
    sentence of `texts` that shares a word with it (`wanted`, its content terms) says it
    for a while: a bound on a date or a day ("até domingo", "until Friday", "só até
    amanhã"; not a range of days: "Monday until Saturday"), a range of dates ("From March 1
    to 15", "de 1 a 15 de março"), "only" beside a day ("today only", "só hoje"), or
    "during" something the claim does not name ("during our January campaign", "durante a
    Black Friday").
    """
    if any(t.startswith("d:") or t == "r:during" or t in _DAY_WORDS for t in mine):
        return False
    values = {t for t in mine if t.startswith("m:")}
    for text in texts:
        if text.rstrip().endswith("?"):
            continue
        seq = tokens(text)
        folded = fold(text)
        if not content_terms(text) & wanted or not values <= set(seq) or _STILL.search(folded) \
                or _STANDING_NOW.search(folded):
            continue  # another value's sentence; "..., even during our summer sale": the rule holds then too
        for at, token in enumerate(seq):
            after = seq[at + 1] if at + 1 < len(seq) else ""
            before = seq[at - 1] if at else ""
            if token in _BOUNDS and (after.startswith("d:") or after in _DAY_WORDS) and not before.startswith("d:"):
                return True
            if token == "p:p_only" and (after in _DAY_WORDS or before in _DAY_WORDS):
                return True
            ahead = seq[at + 1:at + 5]
            if token in _RANGE_OPENS and any(t.startswith("d:") for t in ahead) \
                    and sum(t.startswith(("d:", "m:")) for t in ahead) >= 2:
                return True  # "From March 1 to 15 we're covering shipping", "de 1 a 15 de março"
            if token == "r:during" and after not in _WHOLE_OF and any(
                    plain_word(t) and t not in wanted for t in seq[at + 1:at + 4]):
                return True  # (not "during your stay", "durante toda a estadia": the rule's scope)
    return False


def _on_some_days(mine: tuple[str, ...], texts: Sequence[str]) -> bool:
    """True when `mine` (a claim's tokens) has a value and names no day of the week, and a
    sentence of `texts` that holds every value of it says it of some days, a range or a list
    of them or the weekdays ("the large meeting room is $20 per hour Monday to Friday" for
    "members pay $20 per hour": on Saturdays it may cost another; one named day may be a
    day's name, "Black Friday"), or a claim that names days has a sentence holding its values
    say them of other days only ("$15 per day Mon–Fri" for "$15 per day on weekends").
    """
    values = {t for t in mine if t.startswith("m:")}
    days = _days(mine)
    if days:  # the claim's own days: a sentence that holds its values says them of none of them
        return bool(values) and any(
            not text.rstrip().endswith("?") and values <= set(seq) and _days(seq) and not _days(seq) & days
            for text in texts for seq in (tokens(sentence) for sentence in sentences(text)))
    return bool(values) and any(
        not text.rstrip().endswith("?") and values <= set(seq)
        and (sum(t.startswith("d:wd") for t in seq) >= 2 or not _WEEK_PARTS.isdisjoint(seq))
        for text in texts for seq in (tokens(sentence) for sentence in sentences(text)))


def _days(seq: Sequence[str]) -> frozenset[int]:
    """The days of the week `seq` (a text's tokens, `analysis.structure.tokens`) names, 1
    (Monday) to 7: each named day, a range of two (which `tokens` writes one way, "r:from
    d:wd1 r:to d:wd5", however it was said), "weekdays" and "weekends".
    """
    found: set[int] = set()
    for at, token in enumerate(seq):
        if token == "weekday":
            found |= {1, 2, 3, 4, 5}
        elif token == "weekend":
            found |= {6, 7}
        elif token.startswith("d:wd") and token[4:].isdigit():
            day = int(token[4:])
            found.add(day)
            nxt = seq[at + 2] if at + 2 < len(seq) and seq[at + 1] == "r:to" else ""
            if nxt.startswith("d:wd") and nxt[4:].isdigit():
                last = int(nxt[4:])
                found |= set(range(day, last + 1)) if day <= last else set(range(day, 8)) | set(range(1, last + 1))
    return frozenset(found)


#: Tokens that name days of the week together ("weekdays", "fins de semana").
_WEEK_PARTS: Final = frozenset({"weekday", "weekend"})


def _in_season(claim: str, texts: Sequence[str]) -> bool:
    """True when `claim` names no month and a sentence of `texts` that holds its values and
    shares a word with it says it for a range of months ("De dezembro a março a gente abre
    às 6h" for "O aluguel abre todos os dias às 6h").
    """
    folded_claim = fold(claim)
    if any(re.search(rf"\b{month}\b", folded_claim) for month in MONTH_NAMES):
        return False
    values = {t for t in tokens(claim) if t.startswith("m:")}
    wanted = content_terms(claim)
    return any(_MONTH_RANGE.search(fold(text)) and content_terms(text) & wanted and values <= set(tokens(text))
               for text in texts if not text.rstrip().endswith("?"))


#: A range of months (folded): "de dezembro a março", "from June to August", "between May and July".
_MONTH_RANGE: Final = re.compile(
    r"\b(?:de|from|between|entre)\s+(?:" + "|".join(MONTH_NAMES) + r")\s+(?:a|to|ate|and|e|through|until)\s+(?:"
    + "|".join(MONTH_NAMES) + r")\b")


def _bounded(seq: tuple[str, ...], at: int) -> bool:
    """True when the condition that starts at `at` in `seq` bounds a value before its
    sentence ends ("desde que o gato e a caixa pesem no máximo 8 kg"): a condition, whatever
    words of the claim it repeats.
    """
    end = next((i for i in range(at + 1, len(seq)) if seq[i] == "."), len(seq))  # its "e"/"and" included
    return any(seq[i] in _BOUNDS and seq[i + 1].startswith(("m:", "d:")) for i in range(at + 1, end - 1))


def _condition_words(seq: tuple[str, ...], at: int, *, values: bool = False) -> frozenset[str]:
    """The content words of the condition clause that starts at `at` in `seq` (its values
    and the senses either language says alike, ``s_free``, too, when `values`).
    """
    following = next((i for i in range(at + 1, len(seq)) if seq[i].startswith("c:")), len(seq))
    return frozenset(t for t in seq[at + 1:following]
                     if plain_word(t) or values and t.startswith(("m:", "d:", "s_")))


def _prices_something(claim: str) -> bool:
    """True when `claim` names an amount of money that is no threshold ("within 7 days $75";
    not "free over $400", "at least R$ 50": a bound on something else).
    """
    seq = tokens(claim)
    return any(_MONEY_TERM.match(token) and not (at and seq[at - 1].startswith("p:"))
               for at, token in enumerate(seq))


def charges_for(claim: str, sentence: str) -> bool:
    """True when `claim` says its subject is free, charges for nothing itself, and business
    `sentence` charges for that subject without calling it free: "A montagem é cobrada à
    parte", "Installation is quoted separately" turn down "A montagem é grátis" /
    "Installation is free" (a sentence beside them that is free of another thing, "A
    entrega é grátis", vouches for nothing then); "free within 30 days, charged after" and
    "free over 7 days, $75 within" are claims that charge too.
    """
    claimed = content_terms(claim)
    said = content_terms(sentence)
    if FREE not in claimed or FREE in said or claimed & (_CHARGING | _APART) or _APART_RE.search(fold(claim)) \
            or _prices_something(claim):
        return False
    subject = (claimed & said) - VALUE_WORDS - _CHARGING - _APART
    return bool(subject) and bool(said & (_CHARGING | _APART) or _APART_RE.search(fold(sentence)))


def _value_words_said(claim: str, found: Sequence[tuple[str, str]]) -> bool:
    """True when the found sentences say every value word of `claim` (`VALUE_WORDS`: "free"
    is a price of nothing): "orders over $100 pay half" does not vouch for "shipping is free
    over $100".
    """
    wanted = content_terms(claim) & VALUE_WORDS
    return not wanted or wanted <= frozenset().union(*(content_terms(text) for _, text in found))


def _without_asides(claim: str, span: str) -> str:
    """`span` without the questions at its ends that say nothing of `claim` (a quote that
    runs on into "How is your day?" vouches for what it says before it).
    """
    if "?" not in span:  # the common case: nothing to leave out
        return span
    said = sentences(span)
    wanted = content_terms(claim)

    def aside(sentence: str) -> bool:
        return sentence.rstrip().endswith("?") and not content_terms(sentence) & wanted

    while len(said) > 1 and aside(said[-1]):
        said.pop()
    while len(said) > 1 and aside(said[0]):
        said.pop(0)
    return " ".join(said)


def _around(text: str, quote: str) -> list[tuple[str, str]]:
    """The sentence(s) of `text` that hold normalised `quote` (the whole span they cover),
    with the sentence after them ("" for none).
    """
    parts = sentences(text)
    joined = [normalised(s) for s in parts]
    for end in range(len(parts)):  # the first sentence the quote ends in...
        if quote in " ".join(joined[:end + 1]):
            start = max(s for s in range(end + 1) if quote in " ".join(joined[s:end + 1]))  # ...from its start
            return [(" ".join(parts[start:end + 1]), parts[end + 1] if end + 1 < len(parts) else "")]
    return [(text, "")]
