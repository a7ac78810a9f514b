"""A person's name anywhere in a sentence that holds their contact or document.

`insika_knowledge.privacy.more.find_names` takes the name right next to a placeholder
("Maria Souza, [phone]"). A customer also writes it a few words away, or in lower case:
"Cliente Maria Silva pediu retorno no [phone]", "Aqui é o Wellington, meu zap [phone]",
"meu marido Cláudio Rezende pode receber, o telefone dele é [phone]", "aqui é a maria
eduarda, meu numero [phone]" (an attacker's cases: 9 of 18 names kept). In a sentence
(up to ".", "!", "?", ";", "|" or a line end)
that holds a placeholder of a person's datum (`more.CONTACT_MARKS`):

- a run of capitalised words (``O'Connor``, ``JOSÉ APARECIDO DOS SANTOS`` included), its
  label words aside (`more.NOT_NAMES`: "Cliente"; "My", "Oi", "Sr."), when a word that
  introduces a person stands right before it ("Cliente", "minha filha", "meu marido",
  "Sr.", "falar com"; not "com" alone: "enviado com Sedex": `_PERSON_BEFORE_RE`) or it opens with a common first name
  (`more.FIRST_NAMES`); never a run after a business's noun ("Loja Aurora", "unidade
  Moema", "plano Veloz"), before a model number ("Atmos 65"), after a place preposition
  ("Entrega em Campinas"), nor an acronym ("CEP", "EUR");
- in lower case, up to three words after the words that introduce a person ("me chamo",
  "meu nome é", "my name is", "nome:"; and "sou", "aqui é", "é da", "this is", "I'm" when
  the first word is a common first name).

And anywhere in a text that holds such a placeholder, the name its writer introduces or a
form of address names ("aqui é a Patricia Gomes Farias", "Sr. Marcelo Tavares", "sou o dr.
henrique bastos"), in capitals or not.

Chosen on two sets (`benchmarks/privacy/attack1.jsonl`, `blind1.jsonl`) and a third
that put the store's own names beside customers' data (`blind2.jsonl`): taking every
capitalised run of such a sentence (fail closed) lost a store, a product or a city in 15 of
its 36 business-only messages; taking only these loses its employees' first names ("O
Pedro, nosso montador, vai ligar no seu celular ...": one first name alone is a person).
"""

from __future__ import annotations

import difflib
import re
from typing import Final

from insika_knowledge.privacy.more import CAP_WORD, CONTACT_MARKS, FIRST_NAMES, NOT_NAMES, fold_word

Span = tuple[int, int]

_MARK_RE: Final = re.compile(r"\[(?:" + "|".join(CONTACT_MARKS) + r")\]")
_SENTENCE_RE: Final = re.compile(r"[^.!?;|\n]+")
_LOWER: Final = "a-zà-öø-ÿ"
_CAPITALISED_RE: Final = re.compile(
    rf"(?<![\w\[])(?:{CAP_WORD})(?:[ \t]+(?:(?i:d[aeo]s?|e|van|von|del|di)[ \t]+)?{CAP_WORD})*(?![\w\]])")
_PLACE_BEFORE_RE: Final = re.compile(r"(?i)\b(?:em|no|na|nos|nas|in|at)\s+$")
#: Words that introduce a person whatever the word after them.
_NAMED_RE: Final = re.compile(r"(?i)\b(?:me\s+chamo|meu\s+nome\s+[ée]|my\s+name\s+is|nome\s*:|name\s*:)\s+$")
#: Words that introduce a person when a common first name follows.
_INTRODUCED_RE: Final = re.compile(
    r"(?i)\b(?:sou|aqui\s+[ée]|aqui\s+eh|[ée]\s+d[ao]|eh\s+d[ao]|this\s+is|i['’]m|i\s+am|falo\s+com|fala\s+com)"
    r"(?:\s+(?:o|a|the))?\s+$")
_LOWER_WORDS_RE: Final = re.compile(rf"[{_LOWER}]+(?:\s+(?:d[aeo]s?\s+)?[{_LOWER}]+){{0,2}}")
#: Short words that end a name written in lower case ("maria eduarda, meu ...": "meu").
_STOP: Final = frozenset(
    "meu minha meus minhas seu sua o a os as e é eh de do da que com para pra por no na em um uma "
    "my your the and is at to on of in".split())


#: Capitalised words that open a sentence or a greeting and name nobody (folded).
_NOT_PEOPLE: Final = NOT_NAMES | frozenset(
    "my meu minha meus minhas eu i your seu sua seus suas oi ola hi hello hey bom boa dia tarde noite obrigado "
    "obrigada thanks thank please por favor sim yes no nao ok okay segue aqui here this is it its sou quero "
    "preciso pode podem pedido order number numero name nome dear caro cara prezado prezada sr sra mr mrs ms "
    "dr dra dona senhor senhora".split())


def _capitalised(sentence: str, offset: int) -> list[Span]:
    spans = []
    opening = len(sentence) - len(sentence.lstrip())
    for m in _CAPITALISED_RE.finditer(sentence):
        # the run split at the words that name nobody ("My RG", "Cliente Maria", "Sr. Hélio")
        run: list[re.Match[str]] = []
        for word in [*re.finditer(r"\S+", m.group()), None]:
            if word is not None and fold_word(word.group()) not in _NOT_PEOPLE:
                run.append(word)
                continue
            if run and _person(sentence, m.start() + run[0].start(), m.start() + run[-1].end(), opening):
                spans.append((offset + m.start() + run[0].start(), offset + m.start() + run[-1].end()))
            run = []
    return spans


def _person(sentence: str, start: int, end: int, opening: int) -> bool:
    """Whether the capitalised words `sentence[start:end]` name a person: a word that
    introduces one stands right before them (`_PERSON_BEFORE_RE`: "Cliente", "minha filha",
    "Sr.", "falar com"), or they open with a common first name (`more.FIRST_NAMES`); never
    after a business's noun ("Loja Aurora", "unidade Moema"), before a model number
    ("Fibra 500"), after a place preposition, nor an acronym.
    """
    words = sentence[start:end].split()
    if all(w.lower() in ("da", "de", "do", "das", "dos", "e") for w in words):
        return False
    if all(w.isupper() for w in words) and sum(len(w) >= 3 for w in words) < 2:
        return False  # an acronym ("CEP", "EUR", "CRC"), not "JOSÉ APARECIDO"
    if _PLACE_BEFORE_RE.search(sentence, 0, start) or _BUSINESS_BEFORE_RE.search(sentence, 0, start) \
            or _MODEL_AFTER_RE.match(sentence, end):
        return False  # "Entrega em Campinas", "Loja Aurora", "Veloz Fibra 500"
    if fold_word(words[0]) in _PLACE_STARTS and len(words) > 1:
        return False  # a place's name: "Santa Maria", "São Paulo", "Los Angeles"
    if _PERSON_BEFORE_RE.search(sentence, 0, start):
        return True
    return fold_word(words[0]) in FIRST_NAMES


#: Words a place's name opens with ("Santa Maria", "Vila Madalena", "Porto Alegre").
_PLACE_STARTS: Final = frozenset(
    "sao santa santo porto rio vila nova novo jardim campo praia lagoa serra monte san saint st los las new "
    "fort mount lake port".split())
#: Words right before a person's name: a label, a form of address, a relation, "com".
_PERSON_BEFORE_RE: Final = re.compile(
    r"(?i)\b(?:cliente|customer|client|destinat[áa]ri[oa]|recipient|contato|contact|nome|name|titular"
    r"|sr|sra|srta|dr|dra|mr|mrs|ms|dona|senhor|senhora|miss"
    r"|filh[oa]|marido|esposa|esposo|mulher|m[ãa]e|pai|irm[ãa]o?|av[óô]|sogr[oa]|ti[oa]|prim[oa]|namorad[oa]"
    r"|vizinh[oa]|amig[oa]|colega|wife|husband|daughter|son|mother|father|sister|brother|friend|neighbou?r"
    r"|partner|boss|chefe|fal(?:ar|e|a)\s+com|talk\s+to|speak\s+(?:to|with)|ask\s+for|attn|aos\s+cuidados\s+de|a/c)"
    r"\.?[:,]?\s+(?:(?:o|a|the)\s+)?$")
#: A business's noun right before capitalised words: they name it, or its branch ("Loja
#: Aurora", "unidade Moema", "Shopping Eldorado", "plano Veloz").
_BUSINESS_BEFORE_RE: Final = re.compile(
    r"(?i)\b(?:loja|lojas|shopping|unidade|filial|farm[áa]cia|[óo]tica|restaurante|mercado|supermercado|padaria"
    r"|academia|cl[íi]nica|hotel|banco|store|shop|mall|plano|marca|brand|produto|modelo|model|cole[çc][ãa]o"
    r"|linha|empresa|transportadora|parceira|parceiro|app|site)\s+(?:(?:d[aoe]s?|of)\s+)?$")
#: A model number after capitalised words ("Atmos 65", "BRM44"): a product.
_MODEL_AFTER_RE: Final = re.compile(r"\s+[A-Z]*\d")


def _lower_case(sentence: str, offset: int) -> list[Span]:
    spans = []
    for m in _LOWER_WORDS_RE.finditer(sentence):
        words = m.group().split()
        kept = []
        for word in words:
            if word in _STOP or fold_word(word) in NOT_NAMES:
                break
            kept.append(word)
        if not kept:
            continue
        named = _NAMED_RE.search(sentence, 0, m.start()) is not None
        if named or (_INTRODUCED_RE.search(sentence, 0, m.start()) and fold_word(kept[0]) in FIRST_NAMES):
            start = offset + m.start()
            spans.append((start, start + len(" ".join(kept))))
    return spans


#: Words that introduce the writer or address a person, anywhere in a text: what follows
#: is a name, in capitals or not ("aqui é a Patricia Gomes Farias", "Sr. Marcelo Tavares",
#: "sou o dr. henrique bastos").
_INTRODUCES_RE: Final = re.compile(
    r"(?i)\b(?:me\s+chamo|meu\s+nome\s+(?:[ée]|eh)|my\s+name\s+is|(?:aqui|quem\s+fala)\s+(?:[ée]|eh)(?:\s+[oa])?"
    r"|this\s+is|sou\s+[oa]|(?:sr|sra|srta|dr|dra|mr|mrs|ms)\.?|dona|senhor|senhora|miss)\s+"
    r"(?:(?:sr|sra|srta|dr|dra|mr|mrs|ms)\.?\s+)?")
#: A name after `_INTRODUCES_RE`: capitalised words, or up to three in lower case.
_INTRODUCED_NAME_RE: Final = re.compile(
    rf"(?:{CAP_WORD})(?:\s+(?:(?i:d[aeo]s?|e)\s+)?{CAP_WORD})*|[{_LOWER}]+(?:\s+(?:d[aeo]s?\s+)?[{_LOWER}]+){{0,2}}")


def _introduced(text: str) -> list[Span]:
    """The names `_INTRODUCES_RE` introduces anywhere in `text` (its words that name
    nobody, `_STOP` and `_NOT_PEOPLE`, end a name written in lower case).
    """
    spans = []
    for cue in _INTRODUCES_RE.finditer(text):
        m = _INTRODUCED_NAME_RE.match(text, cue.end())
        if m is None:
            continue
        words = m.group().split()
        kept = []
        for word in words:
            if word in _STOP or fold_word(word) in _NOT_PEOPLE:
                break
            kept.append(word)
        if kept:
            spans.append((m.start(), m.start() + len(" ".join(kept))))
    return spans


#: A customer named as one, anywhere: "a cliente Mariana Souza", "customer Sarah Connor",
#: "Cliente: Kleber Tavares." (a record's label), "Sr. Almeida", "Mrs. Okafor" (their datum
#: or not: a concept has no use for them).
_CUSTOMER_CUE_RE: Final = re.compile(
    r"(?i:\b(?:cliente|customer|client|comprador[a]?|buyer)(?:\s*:\s*|\s+)(?:(?:o|a|the)\s+)?"
    r"|\b(?:sr|sra|srta|mr|mrs|ms)\.?\s+)"
    rf"(?P<name>{CAP_WORD}(?:[ \t]+(?:(?i:d[aeo]s?|e)[ \t]+)?{CAP_WORD})*)")
#: Words after "cliente" that name a tier, not a person ("Cliente Ouro", "customer Gold Plus").
_TIERS: Final = frozenset("ouro prata bronze gold silver platinum platina diamante diamond vip prime plus premium "
                          "black master elite novo nova new".split())


_NOT_A_CUSTOMER: Final = _TIERS | _NOT_PEOPLE


def _customers(text: str) -> list[Span]:
    """The names `_CUSTOMER_CUE_RE` gives as a customer's: after "Sr." / "Mr." any, after
    "cliente" / "customer" one that opens with a common first name or has two words, no
    tier among them.
    """
    spans = []
    for m in _CUSTOMER_CUE_RE.finditer(text):
        words = m.group("name").split()
        if any(fold_word(w) in _NOT_A_CUSTOMER for w in words):
            continue
        honorific = m.group().lower().lstrip().startswith(("sr", "mr", "ms"))
        if honorific or fold_word(words[0]) in FIRST_NAMES or len(words) >= 2:
            spans.append(m.span("name"))
    return spans


def find_people(text: str) -> list[Span]:
    """The names of people in the sentences of `text` that hold a placeholder of a person's
    datum (see the module doc), as spans of `text`.
    """
    spans = _customers(text)
    if "[" not in text or _MARK_RE.search(text) is None:
        return spans
    spans += _introduced(text)
    for sentence in _SENTENCE_RE.finditer(text):
        if _MARK_RE.search(sentence.group()) is None:
            continue
        spans += _capitalised(sentence.group(), sentence.start())
        spans += _lower_case(sentence.group(), sentence.start())
    return sorted(set(spans))


#: A text's tokens for `removed_names`: a placeholder, a word, or one other character.
_TOKEN_RE: Final = re.compile(r"\[[a-z_]+\]|\w+|[^\w\s]")


def removed_names(original: str, redacted: str) -> frozenset[str]:
    """The words (folded, two letters or more) of `original` that `redacted` holds as
    ``[name]``: the people a text's redaction found, to take from its concept's name too.
    """
    words: set[str] = set()
    before, after = _TOKEN_RE.findall(original), _TOKEN_RE.findall(redacted)
    matcher = difflib.SequenceMatcher(None, before, after, autojunk=False)
    for op, a, b, c, d in matcher.get_opcodes():
        if op == "replace" and "[name]" in after[c:d]:
            words |= {fold_word(w) for w in before[a:b] if len(w) >= 2 and not w[0].isdigit() and w[0] != "["}
    return frozenset(words - _NOT_PEOPLE)


def drop_names(text: str, names: frozenset[str]) -> tuple[str, int]:
    """`text` (a concept's name as words) with each run of the words in `names` replaced by
    ``[name]``, and how many runs were.
    """
    if not names:
        return text, 0
    found = [m.span() for m in re.finditer(r"[^\W\d_]+", text) if fold_word(m.group()) in names]
    runs: list[Span] = []
    for start, end in found:
        if runs and not text[runs[-1][1]:start].strip(" -_"):
            runs[-1] = (runs[-1][0], end)
        else:
            runs.append((start, end))
    for start, end in reversed(runs):
        text = text[:start] + "[name]" + text[end:]
    return text, len(runs)
