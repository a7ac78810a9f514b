"""Who wrote each piece of a transcript: the customer, or the business side.

A turn's messages are split into `Piece`s by author (`pieces`). A tool result is the
business's, but for the parts someone else wrote: a JSON field whose key names what the
customer wrote (`CUSTOMER_FIELDS`: ``customer_note``, ``observacao_cliente``, reviews,
a marketplace's questions and answers, an address complement; a bare ``message`` only when
it is not in the business's voice; not a policy's ``return_instructions``), a web page a
search tool returned (a link with its title or text: a third party's words, read as the
customer's are), and in plain text a line whose label names the customer ("Customer
note:", "Observação do cliente:"; not "Customer support hours:") or that is a web search's
result or a forum's post, with its unlabelled continuation lines. In an agent's (or a
person's, or the system's) message, a quotation given as someone else's words is the
customer's ("Olha o que uma cliente escreveu: "..."", "You could send something like:
"...""), and a link is read as its host (its path names a page: ".../troca-gratis-30-dias"
states no rule). `trust.evidence` and `trust.grounding` read the same pieces.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from insika_knowledge.analysis.text import fold

#: Tool-result keys whose values the customer wrote (folded, matched anywhere in the key).
CUSTOMER_FIELDS: Final = re.compile(
    r"note|comment|remark|message|review|feedback|request|instruction|customer|client|buyer"
    r"|observa|obs(?:\b|_)|mensagem|comentario|avaliac|depoiment|pedido_do_cliente|solicitacao|recado|nota"
    # what third parties wrote, returned by a search tool ("snippet" of a forum post)
    r"|snippet|forum|post\b|tweet|trecho"
    # a marketplace's questions and answers, written by its customers
    r"|pergunta|question|\bq_?a\b|qna"
    # an address's free-text line, typed by the customer
    r"|complement"
)
#: Keys that name a message whoever wrote it: the business's when it speaks of the customer
#: (`_BUSINESS_VOICE`) and nowhere in the first person singular.
_EITHER_FIELDS: Final = re.compile(r"^(?:message|mensagem|msg)$")
#: Keys the business writes although a customer-field word is in them: what a return,
#: an exchange or a policy asks of the customer ("return_instructions").
_BUSINESS_FIELDS: Final = re.compile(
    r"^(?:return|exchange|refund|policy|store|seller|shipping|devolucao|troca|reembolso|politica|loja|vendedor)"
    r"_?(?:instructions?|instrucoes|notes?|message|mensagem)$"
    # a note its staff wrote ("internal_note", "agent_notes", "nota_interna", "observacao_interna")
    r"|^(?:internal|staff|agent|employee|team)_?(?:notes?|comments?|remarks?)$"
    r"|^(?:notas?|observac\w*|comentarios?)_?internas?$")
#: The notes of what the business sells ("warranty_notes", "care_instructions", "plan_notes";
#: in Portuguese the other way round, "observacoes_garantia", "instrucoes_de_uso"): the
#: business's in a catalogue record (`_CATALOGUE_KEYS`) that no customer wrote (no author
#: who is the customer above it, no first person singular); a customer's note elsewhere (an
#: order line's "product_notes", a ticket's "warranty_notes", a booking's "installation_notes").
_PRODUCT_NOTES: Final = re.compile(
    r"^(?:warranty|garantia|product|produto|care|cuidados?|usage|uso|installation|instalacao|assembly|montagem"
    r"|plan|plano|fare|tarifa|service|servico)_?(?:instructions?|instrucoes|notes?)$"
    r"|^(?:observac\w*|notas?|instrucoes)_?(?:d[aeo]s?_?)?(?:garantia|produto|uso|instalacao|montagem"
    r"|cuidados?|plano|tarifa|servico)$")
#: Keys of a catalogue record: what the business sells, looked up by its code.
_CATALOGUE_KEYS: Final = re.compile(
    r"^(?:sku|product_?id|id_?produto|codigo(?:_do)?_produto|plan_?id|id_?plano|catalog\w*|catalogo\w*|model_?number"
    r"|modelo|ean|gtin|fare_?code|codigo_tarifa)$")
#: Words of a text that speak of or to the customer, as the business does (folded).
_BUSINESS_VOICE: Final = re.compile(
    r"\b(?:the customer|o cliente|a cliente|your|you|seu|sua|voce|we|our|nos|nossa|nosso)\b")
_FIRST_PERSON: Final = re.compile(r"\b(?:i|i'm|i've|me|my|mine|eu|meu|minha|comprei|quero|recebi)\b")
#: The label of a line of a plain-text tool result ("Customer note: ...", "Observação do
#: cliente: ...", "Obs (digitada pela cliente no site): ..."): up to five words, an aside
#: in parentheses among them, before a colon.
_LINE_LABEL: Final = re.compile(r"^\s*([^\W\d_][\w ()]{0,40}?)\s*:")
#: A label's words that name the customer, and that name what someone wrote (folded).
_PARTY: Final = re.compile(r"\b(?:customer|client|buyer|guest|passenger|cliente|comprador|consumidor|hospede"
                           r"|passageir[oa])\b")
#: Where a one-line record divides its fields ("Room: Deluxe King | Guest request: '...'"):
#: a bar before a label. A table's bars, with no label after them, divide nothing.
_FIELD_BAR: Final = re.compile(r"\s+\|\s+(?=[^\W\d_][\w ()]{0,40}?\s*:)")
_WRITTEN: Final = re.compile(
    r"\b(?:notes?|comments?|remarks?|messages?|says|said|requests?|instructions?|nota|comentarios?"
    r"|observac\w*|obs|mensage\w*|diz|disse|recado|solicitac\w*|pedido especial)\b")


@dataclass(frozen=True, slots=True)
class Piece:
    """One piece of a transcript and who wrote it.

    Attributes:
        index: the message's position in the transcript.
        speaker: ``customer``, ``agent``, ``human``, ``tool`` or ``system``; a tool
            result's customer-written field is ``customer``.
        text: the text.
    """

    index: int
    speaker: str
    text: str

    @property
    def business(self) -> bool:
        """True when the business side wrote it."""
        return self.speaker != "customer"


def pieces(messages: Sequence[Mapping[str, Any]], speaker_of: Any, text_of: Any) -> list[Piece]:
    """The transcript as pieces with their authors (a tool's customer fields apart).

    Args:
        messages: the transcript, oldest first.
        speaker_of: `trust.grounding.speaker` (the one reading of a message's role).
        text_of: the one reading of a message's text.
    """
    out: list[Piece] = []
    for index, message in enumerate(messages):
        who = speaker_of(message)
        if who is None:
            continue
        text = text_of(message)
        if who != "tool":
            if who != "customer" and "\n" in text:
                text = _lines_going_on(text)  # "Sim, pode cancelar sem multa\n...desde que vc avise"
            quotes: list[str] = []
            if who != "customer":  # a customer's review it quotes, a message it drafts for them
                text, quotes = _others_quoted(_LINK_PATH.sub(r"\1", text))
            earlier = _continued(out, who, text)
            if earlier is not None:  # "...desde que vc avise com 30 dias": the last message's sentence, going on
                out[earlier] = Piece(out[earlier].index, who, _joined(out[earlier].text, text))
            else:
                out.append(Piece(index, who, text))
            out += [Piece(index, "customer", quote) for quote in quotes]
            continue
        out += [Piece(index, author, part) for author, part in _tool_parts(text)]
    return out


#: A link's path: the name of a page (".../ajuda/troca-gratis-30-dias"), not words the business
#: said; a business message's links are read as their hosts.
_LINK_PATH: Final = re.compile(r"\b((?:https?://|www\.)[^\s/]+)/\S*", re.IGNORECASE)
#: A quotation in a business message: straight or curly double quotes, or guillemets.
_QUOTED: Final = re.compile(r'"([^"\n]{8,600})"|\u201c([^\u201d\n]{8,600})\u201d|\u00ab([^\u00bb\n]{8,600})\u00bb')
#: What introduces a quotation as someone else's words (folded, the clause before it): what a
#: customer or a reviewer wrote ("Olha o que uma cliente escreveu: ..."), or a message drafted
#: for the customer to send ("Você pode mandar algo assim: ...", "You could write something like: ...").
_OTHERS_WORDS: Final = re.compile(
    r"\b(?:(?:customer|client|guest|buyer|user|reviewer|review|someone|people|cliente|comprador|hospede|usuari[oa]"
    r"|avaliacao|alguem|pessoas?)\b[^.!?]{0,40}\b(?:wrote|writes|said|says|posted|left|commented|escreveu|escreve"
    r"|disse|diz|postou|deixou|comentou|avaliou)"
    r"|algo (?:assim|como)|something like|(?:you|voce) (?:could|can|may|pode|podera|poderia) (?:send|write|say|use"
    r"|mandar|enviar|escrever|dizer|usar)\b[^.!?]{0,40}|(?:a |um )?(?:modelo|template|rascunho|draft)\b[^.!?]{0,30})"
    r"[^.!?]{0,30}[:,]?\s*$")


def _others_quoted(text: str) -> tuple[str, list[str]]:
    """`text` without the quotations it gives as someone else's words (`_OTHERS_WORDS`), and
    those quotations: a review the agent cites, a message it drafts for the customer to send.
    A quotation of the business's own words ("Our policy says: "...") stays the business's.
    """
    quotes: list[str] = []
    kept: list[str] = []
    at = 0
    for match in _QUOTED.finditer(text):
        before = text[max(0, match.start() - 160):match.start()]
        clause = re.split(r"(?<=[.!?])\s|\n", before)[-1]
        if not _OTHERS_WORDS.search(fold(clause)):
            continue
        kept.append(text[at:match.start()])
        quotes.append(next(group for group in match.groups() if group is not None))
        at = match.end()
    if not quotes:
        return text, []
    kept.append(text[at:])
    return "".join(kept), quotes


#: A message that goes on with the sentence before it: an ellipsis, or a lower-case joining
#: word that sets a condition or an exception ("...desde que vc avise", "unless it's a sale item").
_CONTINUING: Final = re.compile(
    r"^\s*(?:(?:\.{2,}|\u2026)\s*)?(?:desde que|contanto que|a menos que|a nao ser que|exceto|so se|mas so"
    r"|as long as|provided|unless|except|only if|but only"
    # what adds to the message before ("Só complementando: ...", "Just to add: ...")
    r"|(?:so |apenas )?complementando|(?:just )?to add(?: to that)?|one more thing|adding to that)\b")
#: An ellipsis before a lower-case word, as written ("...e só no débito").
_TRAILING_ON: Final = re.compile(r"^\s*(?:\.{2,}|\u2026)\s*(?=[a-zà-ú])")


def _continued(out: list[Piece], who: str, text: str) -> int | None:
    """Where in `out` the piece `text` (by `who`, not a tool) goes on with: the last piece
    of the same author when `text` opens as a continuation (`_CONTINUING`: "...desde que vc
    avise com 30 dias") and only the customer spoke since; else None.
    """
    if who == "customer" or not _goes_on(text):
        return None
    for at in range(len(out) - 1, -1, -1):
        if out[at].speaker == who:
            return at
        if out[at].speaker != "customer":
            return None
    return None


def _lines_going_on(text: str) -> str:
    """`text` with each line that goes on with the one before it (`_CONTINUING`,
    `_TRAILING_ON`) joined to it, as a message going on with the last one is.
    """
    lines = text.split("\n")
    out = [lines[0]]
    for line in lines[1:]:
        if out[-1].strip() and _goes_on(line):
            out[-1] = _joined(out[-1], line)
        else:
            out.append(line)
    return "\n".join(out)


def _goes_on(text: str) -> bool:
    """True when `text` opens as the rest of a sentence before it (`_CONTINUING`, `_TRAILING_ON`)."""
    return bool(_CONTINUING.search(fold(text)) or _TRAILING_ON.search(text))


def _joined(before: str, text: str) -> str:
    """`before` going on with `text`, the ellipsis `text` opens with left out."""
    return f"{before.rstrip(' .!')}, {_ELLIPSIS.sub('', text)}"


#: An ellipsis opening a text, with the spaces around it.
_ELLIPSIS: Final = re.compile(r"^\s*(?:\.{2,}|\u2026)\s*")


def _tool_parts(text: str) -> list[tuple[str, str]]:
    """A tool result's parts: (``tool`` or ``customer``, text)."""
    try:
        data = json.loads(text)
    except (ValueError, TypeError, RecursionError):  # nested past the parser's depth: read as text
        data = None
    if isinstance(data, (dict, list)):
        parts: list[tuple[str, str]] = []
        _walk(data, False, parts)
        business = ", ".join(part for author, part in parts if author == "tool")
        return [p for p in parts if p[0] == "customer"] + [("tool", business)] * bool(business)
    lines = [field for line in text.split("\n") for field in _FIELD_BAR.split(line)]
    theirs: list[bool] = []  # each line is the customer's: a customer line, or its continuation
    section = False  # under a heading of what customers wrote ("Customer Q&A:"), to a blank line
    searched = False  # after a search of the web's label: its results, to the end, blank lines and all
    for line in lines:
        section = section and bool(line.strip())
        searched = searched or bool(_WEB_SEARCH.match(fold(line)))
        theirs.append(searched or section or _customer_line(line) or _third_party_line(line) or (
            bool(theirs) and theirs[-1] and bool(line.strip()) and _LINE_LABEL.match(line) is None))
        section = section or _their_heading(line)
    business = "\n".join(line for line, own in zip(lines, theirs, strict=True) if not own)
    return [("customer", line) for line, own in zip(lines, theirs, strict=True) if own and line.strip()] \
        + [("tool", business)] * bool(business.strip())


def _third_party_line(line: str) -> bool:
    """True when a line of a plain-text tool result is a third party's words: a result of a
    search of the web ("Resultado de busca web — ...", "Web search results: ...") or a post a
    named user wrote on a forum or a review site ("Fórum ViajaBem, usuário 'mochileiro88'
    (2019): '...'"), read as the customer's are. A search of the business's own base
    ("Resultados da busca na base de conhecimento"), "Google Pay" or a forum named without
    its user ("our community forum", "Marca: Forum") are the business's.
    """
    folded = fold(line)
    return bool(_WEB_SEARCH.match(folded) or _USERS_POST.search(folded[:_SITE_CHARS]))


#: A line labelled as a search of the web's results (folded): "Resultado de busca web — ...",
#: "Web search results:"; not "Web search: available on Plus", "Google Search Console: ...".
_WEB_SEARCH: Final = re.compile(
    r"^\W*(?:(?:resultados?|results?) (?:da |de |of (?:a |the )?)?(?:busca|pesquisa|search) "
    r"(?:na |da |on the |of the )?(?:web|internet)|(?:web|internet) search results?|top web results?"
    r"|(?:busca|pesquisa) (?:na|da) (?:web|internet))\s*(?:\(\w+\)\s*)?[:\u2013\u2014-]")
#: A forum or a review site and, after it, the handle of the user who wrote there (folded):
#: "Fórum ViajaBem, usuário 'mochileiro88'", "Reddit r/travel, posted by u/abc"; not "user
#: reviews", "todo usuário do plano", "posted by the Acme Support Team".
_USERS_POST: Final = re.compile(
    r"\b(?:forum|reddit|tripadvisor|reclame aqui|quora|yelp|trustpilot)\b.{0,60}?"
    r"(?:\b(?:usuari[oa]|user(?:name)?|posted by|post by|postado por|post de|autor|author|reviewer)\s*:?\s*"
    r"['\"\u201c@]|\bu/\w)")
_SITE_CHARS: Final = 160


def _someone_elses(record: dict[Any, Any]) -> bool:
    """True when a tool result's record is someone else's text: a page of the web (a link
    and its title or text: a search tool's result), a message with its sender (an
    inbox's e-mail), a review (a rating beside its text) or a record a value of which
    names it a competitor's, read as the customer's words are.
    """
    keys = {fold(str(k)) for k in record}
    if keys & {"from", "sender", "remetente"} and keys & {"body", "text", "content", "corpo", "texto", "mensagem"}:
        return True  # a message someone sent (an inbox's e-mail): its sender's words
    if keys & _RATING_KEYS and keys & _REVIEW_TEXT and keys <= _RATING_KEYS | _REVIEW_TEXT | _REVIEW_META:
        return True  # a review: a rating beside its text ("nota": 5, "texto": "..."): the reviewer's words
    if any(_COMPETITOR.search(fold(str(v))) for v in record.values() if isinstance(v, str)):
        return True  # a competitor's record ("operadora": "MegaFone (concorrente)"): its prices are theirs
    return bool(keys & {"url", "link", "href"}) and bool(keys & {"title", "content", "snippet", "text", "titulo",
                                                              "conteudo", "texto"})


#: A record's keys that rate something (folded), and the free text beside them: a review.
_RATING_KEYS: Final = frozenset({"rating", "stars", "star_rating", "nota", "estrelas", "avaliacao"})
_REVIEW_TEXT: Final = frozenset({"text", "texto", "body", "corpo", "content", "conteudo", "comment", "comentario",
                                 "title", "titulo", "review", "opiniao"})
#: What else a review holds: who wrote it and when. A record with other keys (a product's
#: "sku", a hotel's name, a search hit's "score") is the business's, rating and all.
_REVIEW_META: Final = frozenset({"author", "autor", "autora", "user", "usuario", "reviewer", "name", "nome", "date",
                                 "data", "created_at", "id", "verified", "verificado", "helpful", "likes"})
#: A value that names a record as a competitor's.
_COMPETITOR: Final = re.compile(r"\b(?:concorrentes?|competitors?|competidor(?:es)?|rival)\b")
#: A record's keys that name who wrote it ("opened_by", "aberto_por"), and the values that
#: name the customer (folded).
_AUTHOR_KEYS: Final = re.compile(
    r"^(?:opened|created|submitted|reported|written|filed|raised|sent|placed|ordered|requested|booked|aberto|aberta"
    r"|criado|criada|enviado|enviada|registrado|registrada|relatado|relatada|feito|feita|solicitado|solicitada)"
    r"_?(?:by|por)$|^(?:author|autor|autora|origem|source)$")
_CUSTOMER_AUTHOR: Final = re.compile(  # "cliente (app)", "customer via web"; not "customer service"
    r"^(?:the )?(?:customer|client|buyer|user|cliente|comprador|consumidor|usuario)"
    r"(?:$|(?=[\s(,-])(?!\s*(?:service|support|care|success|team|desk|experience)\b))")
#: A record's free-text keys, which its author wrote (folded).
_FREE_TEXT: Final = re.compile(
    r"^(?:description|descricao|details|detalhes|text|texto|body|corpo|subject|assunto|title|titulo|content"
    r"|conteudo|relato|problem|problema|summary|resumo|complaint|reclamacao)$")


#: A record that is a lookup of the business's own rules ("consulta": "politica_estorno",
#: "source": "returns policy"): its excerpt is the business's text, not a third party's.
_LOOKUP_KEYS: Final = re.compile(r"^(?:consulta|query|lookup|topic|topico|tema|source|fonte|documento|document|doc)$")
_OWN_RULES: Final = re.compile(r"^(?:polic|politica|regulamento|terms|termos|faq)|[_ ](?:policy|politica)$")
_EXCERPT: Final = re.compile(r"^(?:snippet|trecho|excerpt)$")


def _keyed(record: dict[Any, Any], keys: re.Pattern[str], values: re.Pattern[str]) -> bool:
    """True when a key of `record` matching `keys` holds text matching `values` (both folded):
    a lookup of the business's rules (`_LOOKUP_KEYS`, `_OWN_RULES`), a record the customer
    wrote (`_AUTHOR_KEYS`, `_CUSTOMER_AUTHOR`: its free text, `_FREE_TEXT`, is theirs).
    """
    return any(keys.match(fold(str(k))) and isinstance(v, str) and values.search(fold(v).strip())
               for k, v in record.items())


def _customer_line(line: str) -> bool:
    """True when a line of a plain-text tool result is the customer's: its label names the
    customer alone ("Customer: ...") or with what they wrote ("Customer note:", "Observação
    do cliente:"); not "Customer support hours:".
    """
    label = _LINE_LABEL.match(line)
    if label is None:
        return False
    words = fold(label.group(1)).strip()
    return bool(_PARTY.search(words)) and (_PARTY.fullmatch(words) is not None or bool(_WRITTEN.search(words)))


#: A heading of a plain-text tool result over what customers wrote, alone on its line
#: ("Customer Q&A:", "Perguntas e respostas:", "Reviews:"; folded).
_THEIR_HEADING: Final = re.compile(
    r"^\s*(?:customer |client |clientes? )?(?:q ?& ?a|questions?(?: (?:and|&) answers?)?|perguntas(?: e respostas)?"
    r"|reviews?|avaliacoes(?: de clientes)?|comentarios(?: de clientes)?|opinioes)"
    r"(?: (?:from|by|de|dos) (?:customers|clientes|shoppers|compradores))?\s*:\s*$")


def _their_heading(line: str) -> bool:
    """True when `line` heads what customers wrote, up to the next blank line: their
    questions and answers or reviews on a product page, a customer's note with nothing after
    its label ("Customer note:").
    """
    return bool(_THEIR_HEADING.match(fold(line))) or (_customer_line(line) and not line.split(":", 1)[1].strip())


def _customer_field(key: str, value: Any, catalogue: bool = False) -> bool:
    """True when a tool result's `key` holds what the customer wrote (`CUSTOMER_FIELDS`); a
    bare "message" is the business's when its text speaks of or to the customer and never
    in the first person singular ("Exchange approved. Exchanges are free...; a label was
    emailed to the customer"); the notes of a product are the business's in a `catalogue`
    record, unless written in the first person singular (`_PRODUCT_NOTES`).
    """
    folded = fold(key)
    if CUSTOMER_FIELDS.search(folded) is None or _BUSINESS_FIELDS.match(folded):
        return False
    if _PRODUCT_NOTES.match(folded):
        return not catalogue or (isinstance(value, str) and _FIRST_PERSON.search(fold(value)) is not None)
    if _EITHER_FIELDS.match(folded) and isinstance(value, str):
        text = fold(value)
        return not _BUSINESS_VOICE.search(text) or _FIRST_PERSON.search(text) is not None
    return True


#: How deep into a tool's record `_walk` reads: what is nested deeper is no one's words
#: (a record nested hundreds of levels deep would exhaust Python's stack).
MAX_DEPTH: Final = 32


def _walk(value: Any, customer: bool, parts: list[tuple[str, str]], key: str = "", authored: bool = False,
          depth: int = 0) -> None:
    """Append `value`'s pieces to `parts`; `authored`: a record above it names the customer
    as its author ("placed_by": "customer"), so no product note below it is the business's.
    Nothing below `MAX_DEPTH` levels is read.
    """
    if depth > MAX_DEPTH:
        return
    if isinstance(value, dict):
        customer = customer or _someone_elses(value)
        theirs = _keyed(value, _AUTHOR_KEYS, _CUSTOMER_AUTHOR)
        authored = authored or theirs
        ours = not customer and _keyed(value, _LOOKUP_KEYS, _OWN_RULES)
        catalogue = not authored and any(_CATALOGUE_KEYS.match(fold(str(k))) for k in value)
        for k, v in value.items():
            folded = fold(str(k))
            field = _customer_field(str(k), v, catalogue) and not (ours and _EXCERPT.match(folded))
            _walk(v, customer or field or (theirs and bool(_FREE_TEXT.match(folded))), parts, str(k), authored,
                  depth + 1)
    elif isinstance(value, list):
        for v in value:
            _walk(v, customer, parts, key, authored, depth + 1)
    elif value is not None and value != "":
        text = str(value)
        parts.append(("customer" if customer else "tool",
                      f"{key.replace('_', ' ')}: {text}" if key and not customer else text))
