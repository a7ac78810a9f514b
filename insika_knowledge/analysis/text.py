"""The one tokeniser: every index, the consolidator, the concept codec and the benchmark
analyse text here.

Analysis is: Unicode case folding, accent folding (NFKD without combining marks),
split on anything that is not a letter or digit, English and Portuguese stop words
removed, then Snowball stemming (PyStemmer) in the text's language, told by which
language's stop words it uses (English, Portuguese, or both stemmers in turn when it
cannot tell). Portuguese plural endings are first brought to the singular
(``-coes``/``-oes``/``-aes`` -> ``-ao``, ``-ns`` -> ``-m``), so text typed without
accents stems like accented text. ``"entregas"`` and ``"entrega"`` share a term;
words of a synonym group (`analysis.synonyms`) also get the group's term.

`document_terms` and `query_terms` add the numeric terms of `analysis.numbers`, so a
message carrying a number inside a range a concept states shares a term with it.

An index that stores terms records `ANALYSIS_VERSION` and rebuilds itself when it changes.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache
from typing import Final

import Stemmer

from insika_knowledge.analysis import numbers
from insika_knowledge.analysis.synonyms import SYNONYMS, join_phrases

#: The version of the term output. Bump it whenever any function here (or in
#: `analysis.numbers` / `analysis.synonyms`) would give a stored text different terms:
#: an index built under another version must be rebuilt.
ANALYSIS_VERSION: Final[int] = 5  # 2: `fold` folds capitals out of NFKD; 3: it reads text `as_seen`;
# 4: Portuguese plurals in -ais, -eis, -uis come to the singular ("adicionais" is "adicional");
# 5: chat Portuguese's "pra", "pras", "vc", "vcs", "tb", "tbm", "q" are stop words

_WORD_RE: Final = re.compile(r"[^\W_]+")
_ASCII_WORD_RE: Final = re.compile(r"[a-z0-9]+")

STOP_WORDS_EN: Final[frozenset[str]] = frozenset(
    """a about above after again against all am an and any are as at be because been before
    being below between both but by can could did do does doing down during each few for from
    further had has have having he her here hers herself him himself his how i if in into is it
    its itself just me more most my myself nor of off on once only or other our ours ourselves
    out over own same she should so some such than that the their theirs them themselves then
    there these they this those through to too under until up very was we were what when where
    which while who whom why will with would you your yours yourself yourselves s t d ll m re ve
    y hi hello hey please thanks thank ok okay yes also get got can could may might must shall
    let us want need like""".split()
)
STOP_WORDS_PT: Final[frozenset[str]] = frozenset(
    """a ao aos aquela aquelas aquele aqueles aquilo as ate com como da das de dela delas dele
    deles depois do dos e ela elas ele eles em entre era eram essa essas esse esses esta estas
    este estes eu foi fomos for foram ha isso isto ja la lhe lhes mais mas me mesmo meu meus
    minha minhas muito na nas nem no nos nossa nossas nosso nossos num numa o os ou para pela
    pelas pelo pelos por qual quando que quem se seja sem ser seu seus so sua suas tambem te tem
    ter teu teus tu tua tuas um uma umas uns voce voces vos ola oi obrigado obrigada favor sim
    pois entao esta estou estamos sao sou vai vou quero queria gostaria pode posso poderia
    pra pras vc vcs tb tbm q""".split()  # (chat spellings of para, para as, voce(s), tambem, que)
)
STOP_WORDS: Final[frozenset[str]] = STOP_WORDS_EN | STOP_WORDS_PT
#: Folded words that negate a statement, English and Portuguese (``n't`` is counted apart).
NEGATIONS: Final[frozenset[str]] = frozenset(
    "not no never none nobody nothing neither nor cannot unable without nao nunca nem nenhum "
    "nenhuma jamais sem tampouco".split()
)


#: The combining diacritical-mark blocks (accents of Latin, Greek, Cyrillic...). Marks of
#: other scripts (e.g. Devanagari vowel signs) are letters' parts there, and are kept.
_COMBINING: Final = re.compile("[\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f]")


@lru_cache(maxsize=65536)
def fold(text: str) -> str:
    """Case- and accent-fold `text`: ``"São PAULO"`` -> ``"sao paulo"``.

    Characters that show nothing inside a word removed (zero-width space and joiners, soft
    hyphen: `INVISIBLE`), NFKD, case folding, NFKD again (so a compatibility character
    that decomposes to a capital, such as ``"ᴬ"`` or ``"🄰"``, is folded too), then the
    combining diacritical marks removed (one regex pass).
    """
    if text.isascii():
        return text.lower()
    decomposed = unicodedata.normalize("NFKD", as_seen(text))
    return _COMBINING.sub("", unicodedata.normalize("NFKD", decomposed.casefold()))


def as_seen(text: str) -> str:
    """`text` as a reader sees it: without the characters that show nothing (`INVISIBLE`),
    with fractions and footnote marks read (`plain_figures`). What `fold` and the claim
    reader start from.
    """
    return plain_figures(INVISIBLE.sub("", text))


def plain_figures(text: str) -> str:
    """`text` with a vulgar fraction written as its decimal ("1½" -> "1.5", "¾" -> "0.75")
    and a superscript figure glued to a number dropped (a footnote mark: "R$ 199¹" ->
    "R$ 199"): compatibility decomposition would glue their digits to the number ("11⁄2",
    "1991"). A superscript that follows a letter stays ("m²").
    """
    if not _FIGURE_HINT.search(text):
        return text
    text = _FOOTNOTE_RE.sub("", text)
    return _VULGAR_RE.sub(lambda m: f"{m[1] or '0'}{_FRACTIONS[m[2]]}", text)


_FRACTIONS: Final = {"\u00bd": ".5", "\u00bc": ".25", "\u00be": ".75"}
_FIGURE_HINT: Final = re.compile("[\u00b9\u00b2\u00b3\u2070\u2074-\u2079\u00bd\u00bc\u00be]")
_FOOTNOTE_RE: Final = re.compile("(?<=\\d)[\u00b9\u00b2\u00b3\u2070\u2074-\u2079]+")
_VULGAR_RE: Final = re.compile("(\\d?)([\u00bd\u00bc\u00be])")


#: Characters that show nothing inside a word (zero-width space and joiners, word joiner,
#: invisible operators, soft hyphen, byte-order mark): "corre\u200bção" is "correção" to a reader.
INVISIBLE: Final = re.compile("[\u00ad\u034f\u180e\u200b-\u200d\u2060-\u2064\ufeff]")


_EN: Final = Stemmer.Stemmer("english")
_PT: Final = Stemmer.Stemmer("portuguese")
_PLURALS: Final = (("coes", "cao"), ("soes", "sao"), ("oes", "ao"), ("aes", "ao"), ("ns", "m"),
                   ("ais", "al"), ("eis", "el"), ("uis", "ul"))  # adicionais -> adicional


_ONLY_EN: Final = STOP_WORDS_EN - STOP_WORDS_PT
_ONLY_PT: Final = STOP_WORDS_PT - STOP_WORDS_EN


def language(folded_words: list[str]) -> str:
    """``en``, ``pt`` or ``mixed``: which language's stop words the text uses more."""
    en = sum(1 for w in folded_words if w in _ONLY_EN)
    pt = sum(1 for w in folded_words if w in _ONLY_PT)
    return "en" if en > pt else "pt" if pt > en else "mixed"


@lru_cache(maxsize=262144)
def stem(word: str, lang: str = "mixed") -> str:
    """The index term of one folded word: ``"devolucoes"`` -> ``"devoluca"``.

    Portuguese plurals are brought to the singular, then the English and the
    Portuguese Snowball stemmers run in turn, so a word gets the same term whatever
    the language around it (``"fretes"`` and ``"frete"`` -> ``"fret"``). When the
    Portuguese stemmer would cut a word to under 4 letters, the English stem is kept
    (``"business"`` stays ``"busi"``, apart from ``"bus"``). Digits, and words of 3
    letters or fewer, are kept as they are. `lang` is accepted for callers that know
    it and currently changes nothing: one analysis for every text keeps Scan, FTS5
    and mixed-language stores in agreement.
    """
    if len(word) <= 3 or word.isdigit():
        return word
    english: str = _EN.stemWord(_singular(word))
    both: str = _PT.stemWord(english)
    return both if len(both) >= 4 else english


def _singular(word: str) -> str:
    """A Portuguese plural ending brought to the singular (``-coes`` -> ``-cao``, ``-ns`` -> ``-m``,
    ``-ais`` -> ``-al``).
    """
    for plural, singular in _PLURALS:
        if word.endswith(plural) and len(word) > len(plural) + 2:
            return word[: -len(plural)] + singular
    return word


@lru_cache(maxsize=65536)
def stem_portuguese(word: str) -> str:
    """The Portuguese Snowball stem of one folded word of Portuguese text (plurals first
    brought to the singular): ``"aceitamos"`` and ``"aceita"`` -> ``"aceit"``. `stem`
    runs the English stemmer first, which keeps some Portuguese verb endings apart;
    statement comparison (`analysis.structure`) reads Portuguese text with this one.
    Digits and words of 3 letters or fewer are kept as they are.
    """
    if len(word) <= 3 or word.isdigit():
        return word
    word = _singular(word)
    stemmed: str = _PT.stemWord(word)
    return stemmed if len(stemmed) >= 3 else word


def words(text: str) -> list[str]:
    """All folded words of `text`, in order, stop words included, not stemmed."""
    return _WORD_RE.findall(fold(text))


def ascii_words(text: str) -> list[str]:
    """The runs of ASCII letters and digits of folded `text`, in order.

    What is left of a text once it is written with ``[a-z0-9]`` only:
    ``"Frete Grátis acima de R$199"`` -> ``["frete", "gratis", "acima", "de", "r", "199"]``;
    letters of scripts without an ASCII transliteration (CJK, emoji) separate runs.
    """
    return _ASCII_WORD_RE.findall(fold(text))


#: Folded change verbs that withdraw what a statement asserts, English and Portuguese:
#: "Lounge access was **removed** from Platinum" negates "Platinum includes lounge access"
#: without a negation word. Each counts as one negation.
CHANGE_VERBS: Final[frozenset[str]] = frozenset(
    "removed discontinued discontinue discontinues suspended withdrawn withdrew revoked "
    "abolished eliminated scrapped ceased cease ceases terminated ended stopped dropped "
    "descontinuado descontinuada descontinuados descontinuadas suspenso suspensa suspensos "
    "suspensas abolido abolida abolidos abolidas extinto extinta extintos extintas revogado "
    "revogada revogados revogadas removido removida removidos removidas eliminado eliminada "
    "eliminados eliminadas "
    # what is not to be had now reads as what was withdrawn ("Cash refunds are unavailable")
    "unavailable indisponivel indisponiveis".split()
)
#: Words that announce a change of what was so before (folded): "we now pay cash",
#: "o cliente agora precisa", "no longer", "a partir de hoje", "passou a", "new policy".
ANNOUNCED_CHANGE: Final = re.compile(
    r"\b(?:now|no\s+longer|any\s*more|from\s+now\s+on|starting\s+(?:today|now|on)|as\s+of|effective"
    r"|new\s+(?:rule|policy)|changed|agora|nao\s+\w+\s+mais|a\s+partir\s+de\s+(?:hoje|agora)"
    r"|passou\s+a|passaram\s+a|passa\s+a|passam\s+a|nova\s+(?:regra|politica)|mudou|mudaram)\b"
)


def announces_change(text: str) -> bool:
    """True when `text` says that something changed (`ANNOUNCED_CHANGE`, read folded)."""
    return ANNOUNCED_CHANGE.search(fold(text)) is not None


#: Change phrases whose words alone are ambiguous ("cancelled flights" is no withdrawal,
#: "deixou de aceitar" is; "retirada" is also a pickup): a be-verb and a participle, or
#: a stop-verb and "de". Folded; each match counts as one negation.
CHANGE_PHRASES: Final = re.compile(
    r"\b(?:(?:was|were|been|is|are|(?<!can )(?<!may )(?<!could )(?<!might )be|got|gets)\s+"
    r"(?:cancell?ed|retired|pulled|phased\s+out|"
    r"taken\s+away|done\s+away\s+with)"
    r"|(?:foi|foram|sera|serao|esta|estao|ficou|ficaram|tem\s+sido)\s+"
    r"(?:retirad|cancelad|encerrad)[oa]s?"
    r"|(?:deixou|deixa|deixaram|deixam|deixamos|deixara|parou|pararam|paramos|para|param)\s+de"
    r"|acabou|acabaram)\b"
    r"(?!\s+(?:by|pel[oa]s?)\b)"  # "is cancelled by the airline": someone's act, not a withdrawal
)


def negation_count(text: str) -> int:
    """How many negations `text` carries.

    `NEGATIONS` words, each ``n't``, and each change verb or phrase (`CHANGE_VERBS`,
    `CHANGE_PHRASES`: removed, discontinued, deixou de...).

    ``"Customers do not get a reply"`` -> 1; ``"we don't, nunca"`` -> 2;
    ``"Lounge access was removed"`` -> 1; ``"A loja deixou de aceitar PIX"`` -> 1.
    In Portuguese text (`language`), ``no`` is the contraction "em o" and is not counted
    (``"no máximo"``, ``"no cartão"``).
    """
    folded = fold(text)
    found = _WORD_RE.findall(folded)
    skip = "no" if language(found) == "pt" else ""
    return (
        sum(1 for w in found if (w in NEGATIONS and w != skip) or w in CHANGE_VERBS)
        + folded.count("n't")
        + len(CHANGE_PHRASES.findall(folded))
    )


def tokenize(text: str, lang: str | None = None) -> list[str]:
    """Index terms of `text` in order (duplicates kept).

    Folded, known phrases joined, stop words out, each word stemmed (`stem`: one
    analysis whatever the language, so `lang` changes nothing), plus the synonym-group
    term (``s_bag``...) of words that have one.
    """
    out: list[str] = []
    for word in _WORD_RE.findall(join_phrases(fold(text))):
        out += _word_terms(word)
    return out


@lru_cache(maxsize=262144)
def _word_terms(word: str) -> tuple[str, ...]:
    """The index terms of one folded word: none for a stop word, its stem, its synonym group."""
    if word in STOP_WORDS:
        return ()
    group = SYNONYMS.get(word)
    return (stem(word),) if group is None else (stem(word), group)


def terms(text: str, lang: str | None = None) -> frozenset[str]:
    """The distinct index terms of `text` (`tokenize` as a set)."""
    return frozenset(tokenize(text, lang))


def text_language(text: str) -> str:
    """`language` of a whole text (``en``, ``pt`` or ``mixed``)."""
    return language(_WORD_RE.findall(fold(text)))


def document_terms(text: str) -> frozenset[str]:
    """What a concept is indexed under: its terms plus block terms of the ranges it states."""
    return terms(text) | frozenset(numbers.range_terms(fold(text)))


#: A message is searched with at most its first this-many characters (a pasted log or
#: document should not make a search slow; the question is rarely past this point).
MAX_QUERY_CHARS: Final = 4000


def query_terms(text: str) -> frozenset[str]:
    """What a message is searched with: its terms plus prefix terms of its numbers.

    Only the first `MAX_QUERY_CHARS` characters are read.
    """
    text = text[:MAX_QUERY_CHARS]
    return terms(text) | frozenset(numbers.query_terms(fold(text)))
