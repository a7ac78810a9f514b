"""How the business corrects itself in words: the vocabulary, and readings of one text.

A business message may take back what it just said ("The fee is $25. Oops, $35."), and a
correction may instead be of another subject ("Correction: international shipping is $40").
This module holds what reading that needs and no transcript does: the words that correct
(`CORRECTING`, `RETRACTING`) and those that name nothing (`ASIDE`), the reason given after a
corrected value (`without_explanation`), how a correction accounts for a change ("since
January", "went up last month": `without_change_account`), the wrong value named after the
right one (`without_old_value`), and whether a correction speaks of a narrower subject
(`narrower_subject`). `insika_knowledge.trust.evidence` and `insika_knowledge.trust.grounding`
read transcripts with them. Every pattern here reads folded text (`analysis.text.fold`:
lower case, no accents) unless it says "as written".
"""

from __future__ import annotations

import re
from typing import Final

from insika_knowledge.analysis.structure import WEEKDAY_PREFIX, content_terms, names, plain_word, tokens
from insika_knowledge.analysis.text import fold, text_language

#: Words that open a restatement inside a sentence ("R$ 15, digo, R$ 18"), folded.
RESTATING: Final = re.compile(r"\b(?:digo|quer dizer|quis dizer|i mean|ou seja|that is)\b")


#: Words around a correction that name nothing (folded): an apology, "actually", "na verdade".
ASIDE: Final = re.compile(
    r"\b(?:desculp\w*|perdao|perdoe|sorry|apologies|my apologies|my bad|opa|ops|oops|whoops|actually|in fact|wait"
    r"|update|atualizacao"
    r"|na verdade|de fato|na real|alias|to be (?:more )?precise|para ser (?:mais )?precis[oa]"
    r"|foi mal|erro meu|erro de digitacao|typo|ah|er|uh|hmm"
    r"|(?:for|pela|pelo|sorry for) (?:the |a |o |my )?(?:confusion|confusao|erro|engano|mistake|typo))\b")


#: Words with which the business says that what it just said was wrong, whatever it says
#: next: its previous message is taken back whole ("Sorry, I was wrong: ...", "Me desculpe,
#: me confundi com outro curso: ..."), unlike a correction of one thing (`CORRECTING`).
_RETRACTING_WORDS: Final = (
    r"i misspoke|my mistake|i was wrong|that was wrong|that'?s wrong|that'?s not right|i stand corrected"
    r"|i got (?:that |it |this )?(?:wrong|confused|mixed up)|i mixed (?:that|it|them|this) up|i confused"
    r"|me enganei|errei (?:o |a |no |na )?(?:valor|preco|prazo|numero|horario|data|taxa)"
    r"|errei|falei errado|informei errado|me confundi|confundi|retiro o que disse"
    r"|desconsidere|esquece|esqueca|forget (?:that|it)"
    r"|scratch that|ignore that|disregard that|ignore what i (?:just )?said|disregard what i (?:just )?said"
    r"|ignor[ae] o que eu (?:disse|falei|acabei de dizer)|desconsidera|me equivoquei|equivoquei"
    r"|me expressei mal|digitei errado|escrevi errado|i mistyped"
    # what was just said, named as the old version: "that was our old minimum", "esse era o preço antigo"
    r"|that (?:was|is) (?:our |the |an? )?(?:old|previous|former|outdated)"
    r"|(?:esse|essa|isso) (?:era|e|ser) (?:o |a )?(?:\w+ ){0,2}(?:antig[oa]|anterior)"
    r"|i typed (?:it |that )?wrong"
    r"|that'?s (?:incorrect|not correct)|(?:that|this|it) (?:is|was) (?:incorrect|not correct)"
    r"|i mentioned (?:is|was) (?:wrong|incorrect)"
    r"|(?:isso|essa informacao|a informacao) (?:esta|estava) (?:errad|incorret)[ao]"
    r"|informacao errada|informei (?:incorretamente|de forma errada)")


RETRACTING: Final = re.compile(rf"\b(?:{_RETRACTING_WORDS})\b")


#: Words with which the business corrects what it said before: those that take it back whole,
#: and those that open a correction of one thing ("Correção: ...", "me corrigindo").
CORRECTING: Final = re.compile(
    r"\b(?:correction|correcting myself|let me correct|me corrigindo|corrigindo|retifico|retificando"
    r"|correcao|errata|brincadeira|mentira|so que nao|just kidding|never mind|nevermind|wait,? that'?s wrong"
    r"|ou melhor(?!\W+ainda)|melhor dizendo|or rather|i meant(?: to say)?|make that|let me rephrase"
    r"|let me correct (?:myself|that)|deixa eu (?:corrigir|reformular)|corrijo"
    r"|(?:need to|have to|must|should|let me|i'll|preciso|tenho que|devo|vou|deixa eu|deixe-me) (?:\w+ )?"
    r"(?:correct|corrigir|retificar)\b(?! (?:your|you|o seu|a sua|seu|sua)\b)"
    r"|(?:valor|preco|prazo|numero|horario|data|taxa) (?:certo|certa|correto|correta)"
    r"|(?:right|correct) (?:price|amount|fee|value|number|date|time)"
    rf"|{_RETRACTING_WORDS})\b"
    # a yes or a rule taken back in the next breath: "Sim... quer dizer, não", "Yes, actually no, we don't"
    # (not "Opa, não há de quê!": you're welcome)
    r"|\b(?:quer dizer|ou melhor|na verdade|digo|i mean|actually|or rather|wait|oops|ops|opa)\W+(?:nao|no)"
    r"(?!\s+ha\s+de\s+que)"
    r"(?:\s*[,.;:!\u2013\u2014]|\s+(?:nao|damos|temos|tem|ha|existe|we|it|they|there|that)\b)")


#: A month's name (folded, English and Portuguese).
MONTH: Final = (r"(?:january|february|march|april|may|june|july|august|september|october|november|december"
                 r"|jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec|janeiro|fevereiro|marco|abril|maio|junho"
                 r"|julho|agosto|setembro|outubro|novembro|dezembro)")


#: "not" and the value it denies, as written, to the value's first digit ("and not $25", "e
#: não R$ 150", "not the 1"): what `CONTRAST_TAIL` and `_OLD_VALUE` read on from.
_NOT_VALUE: Final = r"(?:(?:and|e)\s+)?\b(?:not|n[ãa]o)\s+(?:the\s+|o\s+|a\s+|os\s+|as\s+)?(?:R\$|US\$|\$|€|£)?\s*\d"
#: A sentence's contrast with another value, to its end ("..., not $70 like other carriers
#: charge", "..., e não R$ 80 como no site"), as written: what it says of others, not the rule.
CONTRAST_TAIL: Final = re.compile(rf",?\s*{_NOT_VALUE}[^.;!?]*", re.IGNORECASE)


#: How far into the next sentence a correction of this one opens ("Sorry, correction: ...").
OPENING_CHARS: Final = 40


def without_asides(folded: str) -> str:
    """Folded `folded` without its correction words and asides (`CORRECTING`, `ASIDE`):
    what is left names what a correction speaks of.
    """
    return ASIDE.sub(" ", CORRECTING.sub(" ", folded))


#: A verb that reports a change of value (folded): "went up", "was raised", "passou", "subiu",
#: "foi reajustada".
_CHANGE_VERB: Final = (
    r"went (?:up|down)|rose|dropped|(?:has |have |had |was |were |got |just )?(?:increased|decreased|changed"
    r"|raised|lowered|updated|adjusted|gone up|gone down)|passou(?: a ser)?|passaram|subiu|subiram|caiu|cairam"
    r"|baixou|mudou|mudaram|aumentou|aumentaram|diminuiu|(?:foi|foram) (?:reajustad|atualizad|alterad)\w*")


#: How a correction accounts for the change it reports (folded): since when or since what
#: ("since January", "desde o reajuste de março", "since the summer schedule started"; not
#: "since you're a member", "since this item was on sale" nor "desde que", which set a
#: condition), a verb of change with the rule it changed ("the policy changed", "a tabela foi
#: atualizada"), "last month", an update or a new price list. Not "this week": a while.
_CHANGE_ACCOUNT: Final = re.compile(
    r"\b(?:since|as of|starting(?: from| in| on)?|effective(?: from| on)?|desde(?! que\b)|a partir d[eoa]s?)"
    r"(?!\s+(?:you|your|voce|vc|seu|sua|teu|tua|that|these|those|it|isso|esse|essa)\b"
    r"|\s+(?:this|este|esta)\b(?!\s+(?:year|month|week|ano|mes|semana)\b))"
    r"(?:\s+[^\W\d_]+){1,5}?"
    r"(?=\s+(?:e|eh|is|it'?s|its|are|sao|custa|custam|costs?|fica|vale|we|it|the|o|a|os|as|our|nosso|nossa)\b"
    r"|\s*[,.;:!?)\u2013\u2014]|\s+-|\s*$|\s+\d)"
    rf"|\b(?:(?:the|our|a|o|nossa|nosso) )?(?:policy|politica|regra|rules?|tabela(?: de precos)?|price list|pricing"
    rf"|prices|precos|valores)? ?(?:{_CHANGE_VERB})\b"
    r"|\b(?:last|past) (?:month|week|year)\b|\b(?:no |na )?(?:mes|ano|semana) passad[oa]\b"
    r"|\brecent(?:ly|emente)\b"
    r"|\b(?:(?:the|our|a|o) )?(?:reajuste|atualizacao|update|mudanca|alteracao|aumento|increase"
    r"|new (?:pricing|price list|policy|rules?|schedule)|nova (?:tabela|politica|regra)(?: de precos)?)\b")


#: A report that a value changed, with when (folded): "that changed last week", "a regra mudou no
#: mês passado", "went up last month". Its past is the change's, not the rule's tense.
CHANGE_REPORT: Final = re.compile(
    rf"\b(?:(?:that|it|this|isso|the policy|the rule|a regra|a politica|a tabela|the price|o preco|o valor) )?"
    rf"(?:{_CHANGE_VERB})\b(?:\s+(?:last|past) (?:week|month|year)|\s+(?:no |na )?(?:mes|ano|semana) passad[oa]"
    rf"|\s+(?:in|em) {MONTH})?")


#: A month's name as the analyser reads it ("januar", "marc"): a month is when, not what.
_MONTH_TERMS: Final = content_terms(
    "january february march april may june july august september october november december janeiro fevereiro"
    " marco abril maio junho julho agosto setembro outubro novembro dezembro")


#: A month named in a text (folded, "in December", "em janeiro"): when it changed, in a text
#: that reports a change (`_CHANGE_ACCOUNT`); a season otherwise.
_IN_MONTH: Final = re.compile(rf"\b(?:in|em|no|na|de|during|durante)\s+{MONTH}\b"
                              r"|\b(?:this|n?est[ea]|n?ess[ea]) (?:year|month|week|ano|mes|semana)\b")


_EVERY: Final = r"(?:all|every|any|todos os|todas as|qualquer)"


#: A scope that is every case of a generic kind, said whole ("for all purchases", "em
#: qualquer compra", "para todos os pedidos."): it narrows nothing. Not one with a qualifier
#: after it ("for every order above $200", "todos os produtos importados").
_EVERY_CASE: Final = re.compile(
    rf"\b(?:for|on|in|to|para|em|de|com|na|no|nas|nos)\s+{_EVERY}\s+([^\W\d_]+)"
    r"(?=\s*(?:[,.;:!?)]|$)|\s+(?:is|are|e|sao|it|its|it's|the|o|a|os|as|and|too|also|tambem)\b)")


#: Generic kinds of case ("orders", "compras"), as the analyser reads them: every one of them
#: is every case.
_GENERIC_TERMS: Final = content_terms(
    "order orders purchase purchases item items product products customer customers client clients case cases booking"
    " bookings reservation reservations pedido pedidos compra compras produto produtos itens cliente clientes caso"
    " casos reserva reservas")


#: Any scope of every one of a kind, to the end of its clause (folded): group 1 the kind and
#: what qualifies it ("for all international orders", "para todos os produtos importados").
_EVERY_SCOPE: Final = re.compile(rf"\b(?:for|on|in|to|para|em|de|com|na|no|nas|nos)\s+{_EVERY}\s+([^,.;:!?]+)")


#: Words that say which version of a value, not which subject ("the new delivery fee", "o frete
#: agora", "our standard shipping"): never a qualifier of the claim's subject.
VERSION_WORDS: Final = content_terms(
    "new now current updated correct right actual real regular normal usual standard novo nova agora atual"
    " atualizado atualizada correto correta certo certa padrao mesmo semestre semester temporada season")


#: Words that name a value's dimension, not a subject ("o limite é de 30 dias", "the minimum age
#: is 25", "the late fee is $0.25"): a correction that names one speaks of the claim's value.
VALUE_NOUNS: Final = content_terms(
    "limit limite minimum minimo maximum maximo amount valor value quantia fee taxa cost custo rate tarifa price"
    " preco deadline prazo period periodo window janela length duracao duration age idade weight peso speed"
    " velocidade size tamanho")


#: A scope put before a correction's colon ("Correction for international cards:", "Correção
#: para o plano Plus:", "Correction on express orders -"), folded: group 1 the scope.
_SCOPE_LABEL: Final = re.compile(
    r"^\W*(?:\w+\W+){0,3}?(?:correction|correcao|errata|update|atualizacao)\s+"
    r"(?:for|on|about|regarding|to|para|sobre|d[aeo]s?|n[aeo]s?|em|no caso d[aeo]s?)\s+([^:\u2013\u2014]{1,60}?)"
    r"\s*(?::|\s[\u2013\u2014-]\s)")


#: The customer's own case ("since you're a member", "já que você é sócio", "for your order",
#: "no seu caso"), folded: what follows is the rule applied to the customer.
_YOUR_CASE: Final = re.compile(
    r"\b(?:since|as|because|if|ja que|como|se|porque|pois) (?:you|voce|vc|o senhor|a senhora)\b"
    r"|\b(?:for your|in your|para o seu|para a sua|pro seu|pra sua|no seu|no teu|na sua) (?:order|case|purchase"
    r"|booking|pedido|caso|compra|reserva)\b"
    # or one item ("since this item was on clearance", "neste pedido")
    r"|\b(?:since|as|because|for|para|como|ja que|porque) (?:this|that|este|esse|esta|essa) (?:item|product|order"
    r"|purchase|booking|one|produto|pedido|compra|reserva)\b|\b(?:neste|nesse|nesta|nessa) (?:item|produto|pedido"
    r"|caso|compra|reserva)\b")


#: What joins a Portuguese noun to the word that qualifies it ("consulta de retorno", "consulta
#: com cardiologista", "frete para o Norte"), as the analyser reads it.
_QUALIFIER_LINKS: Final = frozenset({"r:de", "r:com", "r:para"})


def _a_pole(token: str) -> bool:
    """True when `token` is a pole that qualifies a subject ("international", "same", "express")."""
    return token.startswith("p:")


def narrower_subject(claim: str, text: str, said: str = "") -> bool:
    """True when `text` speaks of another or a narrower subject than `claim`: it names a name
    that neither the claim nor what the business `said` before it in the message holds ("o
    plano Plus custa R$ 59,90" after "O plano Light custa R$ 39,90"; not the business's own
    brand, nor a word of the claim capitalised), a month the claim lacks when it reports no
    change ("Correção: em dezembro a academia abre às 8h": a season), puts a scope the claim
    lacks before its colon ("Correction for international cards:"), names a day of the week
    the claim does not ("Sunday hours start at 11 am"), sets a condition of the customer's
    own case or of one item (`_YOUR_CASE`), or qualifies a word of the claim with one the claim
    lacks: the word before it in English ("same-day delivery", "international shipping"),
    the word after it, or after its "de", in Portuguese ("consulta de retorno", "frete
    expresso"); words of which version ("new", "agora": `VERSION_WORDS`) qualify nothing.
    A correction of that kind states the narrower subject's rule; it takes nothing back from
    the claim.
    """
    folded = fold(text)
    if _YOUR_CASE.search(folded):
        return True
    own = set(tokens(claim))
    known = names(claim) | names(said) | own
    if any(name not in known and name not in _MONTH_TERMS for name in names(text)):
        return True
    accounted = without_change_account(folded, claim)
    for every in _EVERY_SCOPE.finditer(accounted):
        if any(t not in own and (plain_word(t) or _a_pole(t)) and t not in _GENERIC_TERMS
               for t in tokens(every.group(1))):
            return True  # "for all electronics", "for every order above $200": every one of a narrower kind
    reported = _CHANGE_ACCOUNT.search(folded) is not None
    if not reported and (content_terms(folded) & _MONTH_TERMS) - own:
        return True  # "em dezembro": a season (a month of a date is a date: "em 2 de dezembro")
    days = {t for t in tokens(accounted) if t.startswith(WEEKDAY_PREFIX)}
    if days and not any(t.startswith(WEEKDAY_PREFIX) for t in own):
        return True  # "Sunday hours start at 11 am" after "The store opens at 9 am" ("since Monday": when)
    scope = _SCOPE_LABEL.match(folded)
    if scope and content_terms(without_change_account(f" for {scope.group(1).strip()}.", claim)) - own:
        return True
    portuguese = text_language(text) == "pt"
    unqualified = _PT_COPULA.sub(" , ", folded) if portuguese else folded  # "a matrícula tá isenta": said of it
    seq = tokens(RESTATING.sub(" ", without_change_account(without_asides(unqualified), claim)))
    for at, token in enumerate(seq):
        if token not in own or not plain_word(token):
            continue
        if portuguese:
            nxt = at + 2 if at + 2 < len(seq) and seq[at + 1] in _QUALIFIER_LINKS else at + 1
            near = seq[nxt] if nxt < len(seq) else ""
        else:
            near = seq[at - 1] if at else ""
        if near and near not in known and near not in VERSION_WORDS and near not in _MONTH_TERMS \
                and (plain_word(near) or _a_pole(near)):
            return True
    return False


#: Portuguese verbs of being, folded: what follows one is said of the word before it, no
#: qualifier of it ("a matrícula tá isenta" is no "matrícula isenta").
_PT_COPULA: Final = re.compile(r"\b(?:ta|esta|estao|tao|fica|ficam|sera|serao|sao)\b")


def without_change_account(folded: str, claim: str = "") -> str:
    """Folded `folded` without how it accounts for a change (`_CHANGE_ACCOUNT`, with the month
    it happened in) and without a scope of every case (`_EVERY_CASE`) of a generic kind or of
    a word of `claim`: a correction saying "Errei: desde janeiro é R$ 35", "Retificando:
    passou para R$ 35 em janeiro", "it's 20 days for every order" or "for all appointments"
    (of appointments) names no other subject than the rule it corrects.
    """
    out = _CHANGE_ACCOUNT.sub(" ", folded)
    if out != folded:
        out = _IN_MONTH.sub(" ", out)
    own = content_terms(claim) if claim else frozenset()
    return _EVERY_CASE.sub(lambda m: " " if _every_case(m.group(1), own) else m.group(0), out)


def _every_case(kind: str, own: frozenset[str]) -> bool:
    """True when "every `kind`" is every case: a generic kind ("orders") or a word of the claim."""
    return bool(content_terms(kind) & (_GENERIC_TERMS | own))


def opens_explicit_correction(text: str) -> bool:
    """True when `text` opens with a word that corrects (`CORRECTING`: "Correction", "Scratch
    that", "errei", "my mistake", "wait, no"), not only an aside ("Sorry", "Actually").
    """
    return bool(CORRECTING.search(fold(text).lstrip(" \t\n")[:OPENING_CHARS]))


#: Where the reason given after a corrected value starts: a clause break, a dash, or a word
#: that gives a cause or a start ("because", "since", "porque", "desde").
_EXPLANATION: Final = re.compile(
    r",\s|;|\(|\s[\u2014\u2013-]\s|\u2014|\u2013"
    r"|\b(?:because|since|as of|due to|porque|pois|ja que|desde|devido)\b", re.IGNORECASE)


#: A number as written (its digits, and the points and commas inside it: "R$ 79,90").
_WRITTEN_NUMBER: Final = re.compile(r"\d(?:[\d.,]*\d)?")


def without_explanation(text: str) -> str:
    """`text` up to the end of the clause that holds its first number, when it opens with
    an explicit correction before that number (`opens_explicit_correction`): what follows
    is the reason given for it, not more of the claim ("Correction — it's 30 days, the
    policy changed last month"; "Scratch that, it's $35 since January"; "Corrigindo: R$ 18,
    porque houve reajuste"). Any other text is returned whole.
    """
    number = _WRITTEN_NUMBER.search(text)
    if number is None or not opens_explicit_correction(text[:number.start()]):  # not "R$ 15, ou melhor, R$ 18"
        return text
    reason = _EXPLANATION.search(text, number.end())
    return text[:reason.start()] if reason else text


#: The value a correction says was wrong, after the right one ("it's $35, not $25", "é R$ 200,
#: e não R$ 150", "14 days from delivery, not 30"), as written: a value with at most its unit
#: and one word, to the end of the clause (not "not the 1-year warranty that applies to ...").
_OLD_VALUE: Final = re.compile(
    rf"[,;]?\s*{_NOT_VALUE}(?:[\d.,]*\d)?\s*(?:%|[^\W\d_]+)?(?:\s+[^\W\d_]+)?(?=\s*(?:[,.;!?)]|$))",
    re.IGNORECASE)


def without_old_value(text: str) -> str:
    """`text` without the value it says was wrong after the right one (`_OLD_VALUE`): "it's
    $35, not $25" gives $35 and replaces $25.
    """
    return _OLD_VALUE.sub("", text)


def opens_correcting(text: str) -> bool:
    """True when `text` opens with a correction or an excuse ("Sorry, ...", "Actually, ...",
    an inline "digo", "I mean").
    """
    opening = fold(text).lstrip(" \t\n")[:OPENING_CHARS]
    return bool(CORRECTING.search(opening) or ASIDE.search(opening) or RESTATING.match(opening.lstrip(" ,;:-")))
