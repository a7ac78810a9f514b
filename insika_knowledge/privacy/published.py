"""Whether a contact in a business's sentence is offered as the business's own.

`insika_knowledge.privacy.redact.kept_contacts` keeps a phone, e-mail or address the
business side gives as its own, and redacts the rest. A business word somewhere in the
sentence is not enough: "O atendimento vai ligar para a senhora no 11 97654-3210", "A loja
vai enviar o produto para Rua das Laranjeiras, 45" and "Nossa central reenviou o código para
ana@gmail.com" hold one, and each contact is the customer's (an attacker's cases, seven of
seven kept). The words right before the contact must offer it, with nothing between them
and it but words that qualify it:

- a business's label or its own noun (`BUSINESS_NOUNS`, `CONTACT_NOUNS`) with "nosso" /
  "our", or one alone before a colon ("Nosso SAC atende no ...", "Nosso WhatsApp é ...",
  "Nossa loja fica na ...", "Fale conosco: ...", "SAC: ...", "Telefone da Loja Aurora:",
  "The store's phone is ...", "Contact Support: ...", "Devoluções: ...");
- an imperative that sends the customer to it, or an infinitive after "pode" / "basta" /
  "can" ("Ligue (para) ...", "Escreva para ...", "Envie suas fotos para ...", "Pode mandar
  para ...", "Call us at ...", "Send your photos to ..."). "vai ligar", "reenviou",
  "despachou" are what the business does towards the customer's contact: no offer;
- another contact the sentence offers, and a list word ("..., bia@loja.com", "... ou
  sac@...", "... e no 0800 ...");
- the business's answer to the customer asking for its contact ("qual o telefone de
  vocês?" / "what's your e-mail?": the first sentence of the reply offers what it holds).

A business word elsewhere in the sentence offers nothing: a sentence with "nosso", "loja"
or "atendimento" and no offering words right before the contact was read as offering it
in an earlier version, and of an attacker's 94 agent, tool and system messages that carry a
customer's contact (`benchmarks/privacy/attack2.jsonl`) it kept 90 (fail closed now: 36; a
store's own contact said otherwise is redacted: two blind sets lose 3 and 6 more of theirs).
Words right after a contact offer it too ("..., que é o nosso fixo", "..., que é da
matriz": `ours_after`). A reply to a
customer who asked for a contact offers the first one it gives, unless the words before it
send it the customer's way (`towards`: "vai ligar para a senhora no", "reenviou o código
para", "Anotei", "we'll call you at").

Between the offering words and the contact only qualifiers may stand: capitalised words
(a store's or a city's name), "de", "da", "em", "of", "in", "comercial", "24h" and the
like (`_QUALIFIER`). A verb, a person ("a senhora") or an object ("o código") breaks the
offer. Fail closed: a contact not offered so is redacted.
"""

from __future__ import annotations

import re
from typing import Final

#: Nouns a business names itself or a part of itself by (folded or not).
BUSINESS_NOUNS: Final = (
    r"(?:sac|central(?:\s+de\s+(?:atendimento|relacionamento|vendas))?(?:\s+ao\s+(?:cliente|consumidor))?"
    r"|servi[çc]o\s+de\s+atendimento(?:\s+ao\s+(?:cliente|consumidor))?|atendimento(?:\s+ao\s+(?:cliente|consumidor))?"
    r"|ouvidoria|suporte|loja|lojas"
    r"|empresa|escrit[óo]rio|matriz|filial|sede|showroom|dep[óo]sito|cd|centro\s+de\s+distribui[çc][ãa]o"
    r"|galp[ãa]o|armaz[ée]m|unidade|unidades|ag[êe]ncia|quiosque|equipe|time|apoio(?:\s+ao\s+cliente)?"
    r"|setor(?:\s+de\s+\w+)?"
    r"|devolu[çc][ãa]o|devolu[çc][õo]es|trocas|financeiro|comercial|vendas|canal|canais|site"
    r"|support|store|shop|office|team|helpline|hotline|customer\s+(?:service|care|support)|returns|sales"
    r"|headquarters|warehouse|branch|location|help\s*desk|service\s+desk)")
#: Nouns of a contact (folded or not).
CONTACT_NOUNS: Final = (
    r"(?:telefone|telefones|fone|tel|celular|cel|whats(?:app|zap)?|zap|e-?mail|e-?mails|endere[çc]o|n[uú]mero"
    r"|contato|contatos|linha|ramal|phone|number|mail|address|line|contact|whatsapp|chave(?:\s+pix)?|pix(?:\s+key)?)")
#: Words that may qualify a business's noun before its contact ("Central de Atendimento
#: Aurora", "SAC 24h", "loja de Campinas", "telefone comercial"): capitalised words (a name
#: of the store or of a city) and these.
_QUALIFIER: Final = (
    r"(?:[A-ZÀ-Ý][\w&'’.-]*|(?i:de|da|do|das|dos|em|pelo|pela|pelos|pelas|of|for|in|the|by|oficial|comercial"
    r"|principal|geral|fixo|telef[ôo]nico|online|virtual|digital|f[íi]sica|f[íi]sico|24h|24\s*horas|exclusivo"
    r"|direto|\d{1,2}h))")
#: A business's noun and what qualifies it.
_NOUN_PHRASE: Final = (rf"(?i:{BUSINESS_NOUNS}(?:['’]s)?|{CONTACT_NOUNS})\b"
                       rf"(?:\s+(?:(?i:de|do|da)\s+)?(?i:{CONTACT_NOUNS})\b)?(?:\s+{_QUALIFIER})*")
#: What joins the offering words to the contact ("é", ":", "at", "fica na", "atende no").
_LINK: Final = (
    r"(?:\s*[:=–-]|\s*\(|\s+(?i:é|eh|is|are|at|on|via|em|no|na|nos|nas|pelo|pela|para|pra|pro|ao|à|to"
    r"|fica(?:m)?(?:\s+(?:na|no|em))?|atende(?:m)?(?:\s+(?:no|na|pelo|pela|em))?|est[áa]\s+(?:na|no|em)"
    r"|located\s+at|can\s+be\s+reached\s+at)"
    # "é o e-mail", "is the number": the link names the contact's kind
    rf"|\s+(?i:o|a|the)\s+(?i:{CONTACT_NOUNS})\b)*")
#: A verb of where a business's channel answers, and what joins it to the contact
#: ("responde no WhatsApp", "atende pelo", "é o", "fica na", "is at").
_ANSWERS: Final = (
    r"(?i:atende|atendem|responde|respondem|funciona|funcionam|fica|ficam|est[áa]|est[ãa]o|[ée]|s[ãa]o|is|are"
    r"|answers?|works?)(?:\s+(?i:no|na|pelo|pela|em|via|at|on|by))?(?:\s+(?i:o|a|the))?"
    rf"(?:\s+(?i:{CONTACT_NOUNS}))?\s*[:]?\s*")
#: An imperative that sends the customer to a contact, or an infinitive after a modal
#: ("pode mandar"). Forms that are also a statement about someone ("a loja envia", "manda",
#: "liga") or a noun ("telefone", "e-mail") are left out, or need "us" / a preposition after.
_SEND: Final = (
    r"(?:ligue|ligue-nos|escreva|mande|envie|chame|contate|entre\s+em\s+contato(?:\s+conosco)?|procure|acesse"
    r"|fale\s+conosco|fale\s+com\s+(?:a\s+gente|o\s+sac|a\s+central|o\s+atendimento|a\s+loja|(?:nosso|nossa)\s+\w+)"
    r"|(?:pode|podem|poder[áa]|basta|[ée]\s+s[óo]|favor|por\s+favor|can|may|please)\s+"
    r"(?:nos\s+)?(?:ligar|escrever|mandar|enviar|chamar|contatar|procurar|call|write|send|mail|email|text|contact|reach)"
    r"|falar\s+com\s+a\s+gente|fala\s+com\s+a\s+gente|chama\s+a\s+gente|chame\s+a\s+gente"
    r"|call(?!\s+(?:you|him|her|them)\b)|ring|write|send|visit"
    r"|(?:e-?mail|text|message|contact|reach|mail)(?=\s+(?:us|at|to|on|via)\b)"
    r"|(?:call|write\s+to|email|e-mail|text|reach|contact|message)\s+us)")
#: The object of a sending verb ("suas fotos", "the form", "o produto"): a few words.
_OBJECT: Final = (r"(?:\s+(?!(?i:para|pra|to|you|te|lhe|voc[êe]|vc|ele|ela|him|her|them|customer|cliente|morador"
                  r"|moradora|recipient|destinat[áa]ri[oa])\b)[\w-]+){0,3}?")

_OFFERED_RE: Final = re.compile(
    r"(?:"
    # our noun: "Nosso SAC atende no", "Nossa loja fica na", "The store's phone is", "Nosso
    # endereço de retorno é"
    r"\b(?i:nosso|nossa|nossos|nossas|our|the\s+store['’]s|the\s+company['’]s)\s+"
    rf"{_NOUN_PHRASE}(?:\s+(?i:de|da|do|para|for|of)\s+[\w-]+){{0,2}}{_LINK}"
    # a contact of ours: "O e-mail do nosso jurídico é", "O telefone da nossa central de montagem é"
    rf"|\b(?i:{CONTACT_NOUNS})\s+(?i:d[aoe]s?|of)\s+(?i:nosso|nossa|nossos|nossas|our)(?:\s+[\w-]+){{1,4}}?{_LINK}"
    r"|\b(?i:just|please|simply|apenas|basta)\s+(?i:e-?mail|text|call|write\s+to|ligar(?:\s+(?:no|para|pro))?"
    r"|escrever\s+para|mandar\s+(?:um\s+)?e-?mail\s+para)\s*"
    # a contact noun of the business: "Telefone da Loja Aurora:", "e-mail de vocês é"
    rf"|\b(?i:{CONTACT_NOUNS})\b(?:\s+{_QUALIFIER})*?\s+(?i:d[aoe]s?|of)\s+"
    rf"(?:(?i:{BUSINESS_NOUNS})\b(?:\s+{_QUALIFIER})*|(?i:voc[êe]s|vcs))(?:\s+{_QUALIFIER})*{_LINK}"
    # a business's label: "SAC:", "Central de Atendimento 24h:", "Contact Support:", "Devoluções:"
    rf"|\b(?i:{BUSINESS_NOUNS})\b(?:\s+{_QUALIFIER})*(?:\s*[:=–,(-]|\s+(?i:é|is|at|on|em|no|na|pelo|pela|via"
    r"|fica(?:m)?\s+(?:na|no|em)|est[áa]\s+(?:na|no|em)|is\s+(?:located\s+)?(?:at|on)))\s*"
    rf"|\b(?i:{BUSINESS_NOUNS}\s+{CONTACT_NOUNS})\b(?:\s+{_QUALIFIER})*{_LINK}"
    # a record of the business's: "Loja Aurora Campinas, endereco:", "Unidade Moema - telefone:"
    rf"|\b(?i:{BUSINESS_NOUNS})(?:\s+{_QUALIFIER})+\s*[,;–-]\s*(?i:{CONTACT_NOUNS})\s*[:=]\s*"
    # ours, and where it answers: "Nosso time responde no WhatsApp", "o nosso apoio ao cliente atende
    # pelo", "Nosso atendimento por telefone é o", "Estamos na", "We're located at"
    rf"|\b(?i:nosso|nossa|our)\s+{_NOUN_PHRASE}(?:\s+(?i:por|by|via)\s+(?i:{CONTACT_NOUNS}))?\s+{_ANSWERS}"
    rf"|\b(?i:estamos|ficamos|funcionamos|atendemos|respondemos|we['’]re|we\s+are)(?:\s+(?i:agora|now|also|tamb[ée]m"
    r"|located|localizad[oa]s))*\s+(?i:na|no|em|at|on|in|pelo|pela|via)(?:\s+(?i:o|a|the))?"
    rf"(?:\s+(?i:{CONTACT_NOUNS}))?\s*"
    # sent there: "Ligue para", "Envie suas fotos para", "Pode mandar para", "Call us at"
    rf"|\b(?i:{_SEND})(?:{_OBJECT}\s+(?i:para|pra|pro|ao|à|to|at|on|no|na|pelo|pela|em|via))?"
    r"(?:\s+(?i:a|o|the))?(?:\s+(?i:nosso|nossa|our))?"
    rf"(?:\s+(?i:{BUSINESS_NOUNS}|{CONTACT_NOUNS})\b(?:\s+{_QUALIFIER})*)?{_LINK}"
    r")\s*$")

#: Another contact the sentence offers, then a list word: the next one is offered too.
_LISTED_RE: Final = re.compile(
    rf"\x00[\s,;/]*(?:\b(?i:ou|or|e|and)\b)?(?:\s+(?i:ligue|call|escreva|email|e-mail|write\s+to|text))?"
    rf"(?:\s+(?i:no|na|pelo|pela|at|on|em|o|a|the|para|pra|to))*(?:\s*(?i:{CONTACT_NOUNS})\s*[:=]?)?"
    r"(?:\s+(?i:[ée]|is)(?:\s+(?i:o|a|the))?)?\s*$")

#: The customer asking for the business's contact ("qual o telefone de vocês?", "what's
#: your e-mail?", "vcs tem whats?", "onde fica a loja?").
_ASKS_RE: Final = re.compile(
    rf"(?i)\b(?:{CONTACT_NOUNS})\b[^.!?\n]{{0,30}}?\b(?:de\s+voc[êe]s|d[eo]\s+vcs"
    rf"|d[aeo]s?\s+{BUSINESS_NOUNS}|your)\b"
    rf"|\b(?:your|vcs|voc[êe]s)\s+(?:tem\s+|t[êe]m\s+|have\s+(?:an?\s+)?)?{CONTACT_NOUNS}\b"
    r"|\bonde\s+fica\s+a\s+loja\b|\bwhere\s+is\s+(?:the|your)\s+store\b"
    r"|\b(?:como|how)\s+(?:falo\s+com\s+voc[êe]s|fa[çc]o\s+(?:pra\s+)?(?:falar|contato)|entro\s+em\s+contato"
    r"|do\s+i\s+(?:reach|contact)\s+(?:you|the\s+store))")


#: What says, before a contact in its sentence, that it is the customer's or where the
#: business sends or calls: "vai ligar para a senhora no", "reenviou o código para",
#: "despachou o pedido para", "Anotei", "Cliente:", "we'll call you at".
_TOWARDS_RE: Final = re.compile(
    r"(?i)\b(?:(?:vai|vamos|v[ãa]o|ir[áa]|iremos|ir[ãa]o|pode(?:mos)?|vou|posso)\s+(?:te\s+|lhe\s+|o\s+|a\s+)?"
    r"(?:ligar|retornar|enviar|mandar|reenviar|despachar|entregar|levar|chamar|contatar|escrever|avisar|notificar)"
    r"|ligou|ligamos|ligaremos|ligar[áa]|retorn(?:ou|amos|aremos|ar[áa])|envi(?:ou|amos|aremos|ar[áa]|a)"
    r"|reenvi\w*|mand(?:ou|amos|aremos|ar[áa])|despach\w*|entreg(?:ou|amos|aremos|ar[áa]|a)|lev(?:ou|aremos|ar[áa])"
    r"|ligar\s+(?:no|na|para|pra|pro)|will\s+(?:call|text|email|send|ship|deliver|reach|contact)"
    r"|we['’]ll|(?:called|texted|emailed|sent|shipped|delivered|ships|goes|going)\b|vai\s+para|segue\s+para"
    r"|anot(?:ei|ado|amos)|confirm(?:ei|ado|amos|ed)|cadastr\w*|atualiz(?:ei|ado|amos)|registr(?:ei|ado|amos)"
    r"|noted|updated|on\s+file|cliente|customer|client|destinat[áa]ri[oa]|recipient|comprador|buyer|titular"
    r"|perfil|profile|you|te|lhe|senhora|senhor|voc[êe]|vc|tent(?:ou|amos|ativa)|agend\w*|emiti\w*|emitid\w*"
    r"|encaminh\w*|dispar\w*|recado|attempt\w*|scheduled|visit(?:ou|aremos|ed)|vai\s+at[ée]|t[ée]cnico"
    r"|motoboy|entregador|courier|driver|transportadora|carrier)\b")
def towards(before: str) -> bool:
    """Whether the words before a contact send it the customer's way (`_TOWARDS_RE`)."""
    return _TOWARDS_RE.search(before) is not None


#: Words right after a contact that say it is ours ("..., que é o nosso fixo", "..., que é
#: da matriz", "..., which is our main line").
_OURS_AFTER_RE: Final = re.compile(
    rf"^\s*[,(—–-]?\s*(?i:que\s+[ée]|which\s+is|that['’]s|it['’]s)?\s*(?:(?i:o|a|the)\s+)?"
    rf"(?:(?i:nosso|nossa|our)\b|(?i:d[aoe]s?)\s+(?i:{BUSINESS_NOUNS})\b)")


def ours_after(after: str) -> bool:
    """Whether the words right after a contact give it as the business's (`_OURS_AFTER_RE`)."""
    return _OURS_AFTER_RE.match(after) is not None


#: A list the sentence goes on with after some words ("Nosso SAC atende no X, de segunda a
#: sexta, ou pelo e-mail Y"): offered when those words send nothing the customer's way.
_LISTED_LATER_RE: Final = re.compile(
    rf"\x00(?P<gap>[^\x00]{{1,60}}?)\b(?i:ou|or)\b(?:\s+(?i:no|na|pelo|pela|at|on|em|o|a|the|para|pra|to|via))*"
    rf"(?:\s*(?i:{CONTACT_NOUNS})\s*[:=]?)?(?:\s+(?i:[ée]|is)(?:\s+(?i:o|a|the))?)?\s*$")


def offered(before: str) -> bool:
    """Whether the sentence's words right before a contact offer it as the business's own
    (see the module doc). `before` is the sentence up to the contact, each earlier contact
    of the sentence the business offers replaced by a NUL character (``"\\x00"``), each
    other contact by a space.
    """
    if _OFFERED_RE.search(before) is not None or _LISTED_RE.search(before) is not None:
        return True
    later = _LISTED_LATER_RE.search(before)
    return later is not None and _TOWARDS_RE.search(later.group("gap")) is None


def asks_for_contact(text: str) -> bool:
    """Whether the customer's `text` asks for the business's phone, e-mail or address."""
    return _ASKS_RE.search(text) is not None
