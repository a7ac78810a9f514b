"""What a statement asserts, read so that two statements can be compared detail by detail.

Consolidation asks whether a new sighting restates what the record says, and whether a
merged text kept every detail of both claims. Both questions are answered on a
`Statement`, read here by the one analyser:

- **measures**: every number with its unit and the unit's kind (`analysis.numbers`):
  digits and number words alike (``three`` is 3, ``vinte e quatro`` is 24), currencies,
  ``day`` vs ``day:business`` vs ``day:calendar``, ``am`` vs ``pm``, ``km`` vs ``mile``;
- **negations**: negation words, ``n't`` and change verbs or phrases (removed,
  discontinued, no longer, foi retirado, deixou de; `analysis.text.negation_count`);
- **poles**: the side of each antonym or direction pair the statement takes
  (`POLE_PAIRS`: above/below, at least/at most, before/after, only/also, all/some,
  per/in total, may/must, first/last, domestic/international, open/close...). Many of these words are
  stop words for retrieval; here they carry meaning, so they are kept, and the two sides
  of a pair never read alike;
- **terms**: the remaining content words, folded, stop words out, each read as its
  synonym group's term when it has one (``modify`` and ``change`` read alike), else
  stemmed (plurals and inflections read alike). Words that became a measure, a negation
  or a pole are not terms.

Everything is folded first (case, accents), and a one-letter prefix joined to its word
(``e-mail`` is ``email``). Nothing here knows about concepts: `consolidate.claims`
compares statements.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal
from functools import lru_cache
from typing import Final

from insika_knowledge.analysis.numbers import measures, read_number_words
from insika_knowledge.analysis.synonyms import SYNONYMS, join_phrases
from insika_knowledge.analysis.text import (
    NEGATIONS,
    STOP_WORDS,
    fold,
    negation_count,
    stem,
    text_language,
)

#: Antonym and direction pairs, English and Portuguese, folded: each side is one pole,
#: named after its first entry. Entries of several words are phrases, read before single
#: words (``more than`` is *above*, ``more`` alone is *more*). One table for the same-claim
#: rule, the merge guard and the property tests that swap a pole for its opposite.
POLE_PAIRS: Final[tuple[tuple[tuple[str, ...], tuple[str, ...]], ...]] = (
    (("above", "over", "more than", "greater than", "exceeding", "beyond", "acima de", "acima",
      "mais de", "mais que", "superior a", "maior que", "older than", "maiores de", "maior de"),
     ("below", "under", "less than", "fewer than", "abaixo de", "abaixo", "menos de",
      "menos que", "inferior a", "menor que", "younger than", "menores de", "menor de")),
    (("at least", "minimum", "no less than", "pelo menos", "no minimo", "minimo", "a partir de"),
     ("at most", "maximum", "up to", "no more than", "no maximo", "maximo", "ate", "until",
      "till")),
    (("before", "prior to", "earlier", "antes", "mais cedo"),
     ("after", "once", "later", "following", "subsequent to", "depois", "apos", "posteriormente",
      "mais tarde")),
    (("more", "mais"), ("less", "fewer", "menos")),
    (("most",), ("least",)),
    (("many", "numerous", "muitos", "muitas"), ("few", "poucos", "poucas")),
    (("highest", "largest", "biggest", "maior"), ("lowest", "smallest", "menor")),
    (("up",), ("down",)),
    (("inside", "indoors", "dentro"), ("outside", "outdoors", "fora")),
    (("include", "includes", "included", "including", "inclui", "incluem", "incluido",
      "incluida", "incluidos", "incluidas", "incluindo", "incluso", "inclusa"),
     ("except", "excluding", "exclude", "excludes", "excluded", "exceto", "excluindo", "exclui",
      "excluem", "excluido", "excluida", "salvo", "a nao ser", "menos os", "menos as", "com excecao de",
      "a excecao de", "with the exception of")),
    (("all", "every", "each", "any", "todo", "toda", "todos", "todas", "cada", "qualquer"),
     ("some", "certain", "selected", "alguns", "algumas", "certos", "certas", "selecionados",
      "selecionadas")),
    (("only", "just", "exclusively", "apenas", "somente", "so", "exclusivamente"),
     ("also", "too", "as well", "tambem", "inclusive")),
    (("per", "por", "a cada", "apiece"), ("in total", "no total", "total", "altogether", "ao todo")),
    (("same", "mesmo", "mesma", "mesmos", "mesmas"),
     ("other", "another", "different", "outro", "outra", "outros", "outras", "diferente",
      "diferentes")),
    (("can", "may", "might", "could", "pode", "podem", "posso", "podemos", "poderia"),
     ("must", "have to", "has to", "need to", "needs to", "deve", "devem", "precisa",
      "precisam", "tem que", "tem de", "obrigatorio", "obrigatoria")),
    (("first", "primeiro", "primeira", "primeiros", "primeiras"),
     ("last", "ultimo", "ultima", "ultimos", "ultimas")),
    (("domestic", "national", "nacional", "nacionais"),
     ("international", "internacional", "internacionais")),
    (("online",), ("offline", "in store", "in-store", "loja fisica", "presencial")),
    (("gross", "bruto", "bruta"), ("net", "liquido", "liquida")),
    (("in-network", "in network", "within the network", "dentro da rede"),
     ("out-of-network", "out of network", "non-network", "outside the network", "fora da rede")),
    (("open", "opens", "opened", "abre", "abrem", "aberto", "aberta"),
     ("close", "closes", "closed", "fecha", "fecham", "fechado", "fechada")),
    (("increase", "increases", "increased", "raise", "raises", "raised", "aumenta", "aumentam",
      "aumentou", "sobe"),
     ("decrease", "decreases", "decreased", "reduce", "reduces", "reduced", "diminui",
      "diminuem", "diminuiu", "reduz", "reduzem")),
)


#: folded word or phrase -> its pole term (``p_above``, ``p_at_least``...).
POLES: Final[dict[str, str]] = {
    entry: f"p_{side[0].replace(' ', '_')}" for pair in POLE_PAIRS for side in pair for entry in side
}
_POLE_PHRASE_RE: Final = re.compile(r"\b(?:" + "|".join(
    re.escape(p) for p in sorted((e for e in POLES if " " in e or "-" in e), key=len, reverse=True)
) + r")\b")
#: stem -> synonym-group term, so an inflection the group does not list still reads as
#: the group (``cancelados`` as ``cancelado``); the first group listed wins a shared stem.
_STEM_GROUPS: Final[dict[str, str]] = {}
for _word, _group in SYNONYMS.items():
    _STEM_GROUPS.setdefault(stem(_word), _group)
_WORD_RE: Final = re.compile(r"[^\W_]+")
_LETTER_PREFIX_RE: Final = re.compile(r"\b([^\W\d_])-(?=[^\W\d_]{2})")
#: Folded compounds read as their parts (``anytime`` is ``any time``).
_COMPOUNDS: Final = re.compile(r"\banytime\b")


@dataclass(frozen=True, slots=True)
class Statement:
    """The details of one statement that a restatement must keep (see the module doc).

    Attributes:
        terms: its content terms (stems or synonym-group terms).
        measures: its numbers as ``(value, unit)`` pairs (``unit`` ``""`` for a bare number).
        negations: how many negations and change verbs it carries.
        poles: the pole terms it takes (``p_above``, ``p_only``, ``p_can``...).
    """

    terms: frozenset[str]
    measures: frozenset[tuple[Decimal, str]]
    negations: int
    poles: frozenset[str]

    @property
    def numbers(self) -> frozenset[Decimal]:
        """The values of its measures."""
        return frozenset(value for value, _ in self.measures)

    @property
    def units(self) -> frozenset[str]:
        """The units (currencies, units with their kinds) of its measures."""
        return frozenset(unit for _, unit in self.measures if unit)


def _term(word: str, english: bool) -> str:
    """The content term of one folded word: its synonym group's term, else its stem.

    In English text a plural in ``-ns`` loses its ``s`` first (``plans`` is ``plan``): the
    analyser's Portuguese plural rule (``viagens`` is ``viagem``) would make it ``plam``.
    """
    group = SYNONYMS.get(word)
    if group is not None:
        return group
    if english and word.endswith("ns") and len(word) > 4:
        word = word[:-1]
    stemmed = stem(word)
    return _STEM_GROUPS.get(stemmed, stemmed)


@lru_cache(maxsize=4096)
def statement(text: str) -> Statement:
    """Read `text` into its terms, measures, negations and poles (see the module doc).

    Args:
        text: any text (a claim body, a description), any case, with or without accents.

    Returns:
        The statement; two texts that differ only in order, punctuation, case, accents,
        plural, ``e-mail``/``email``, synonyms of one group or ``2``/``two`` give equal ones.
    """
    folded = _LETTER_PREFIX_RE.sub(r"\1", join_phrases(fold(text)))
    folded = _COMPOUNDS.sub("any time", folded)
    english = text_language(folded) == "en"
    read = read_number_words(folded)
    found = measures(read)
    rest = list(read)
    for measure in found:
        rest[measure.start:measure.end] = " " * (measure.end - measure.start)
    stripped = "".join(rest)
    poles: set[str] = set()

    def pole(match: re.Match[str]) -> str:
        poles.add(POLES[match.group(0)])
        return " "

    stripped = _POLE_PHRASE_RE.sub(pole, stripped)
    terms: set[str] = set()
    for word in _WORD_RE.findall(stripped):
        if word in POLES:
            poles.add(POLES[word])
        elif word in NEGATIONS or word in STOP_WORDS or word.isdigit():
            continue
        else:
            terms.add(_term(word, english))
    return Statement(
        terms=frozenset(terms),
        measures=frozenset((m.value, m.unit) for m in found),
        negations=negation_count(stripped),
        poles=frozenset(poles),
    )
