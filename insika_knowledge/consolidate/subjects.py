"""Other subjects: a sighting about another thing of the same kind is no duplicate.

A store states one rule per region, plan, store, product line or weekday: "O frete para
a região Sul custa R$ 15" and "O frete para a região Nordeste custa R$ 30" share all but
their subject and their values, so a close match (`claims.close_match`) or the semantic
index takes the second for a changed version of the first, and holding it as a possible
duplicate (`naming`) keeps every store's second region, plan or store away from the agent
until a person approves it. The concepts' names tell them apart: the model that proposed
``frete-nordeste`` beside ``frete-sul`` named another subject.

`other_subject(existing, candidate)` is True only when all of these hold:

1. **Each name names its own subject**: each concept's name has a part that its own text
   (description and body) says and the other's text does not: a content word ("sul",
   "moveis", "gold"), a letter ("loja-d": "a loja D", `analysis.structure` reads it as a
   name), a bare number ("room-101": "Room 101") or a weekday ("saturday-hours"). A part
   that is a value with a unit ("returns-30-days"), a word of the claim vocabulary
   (price, free, shipping...) or a role word is no subject: a model that names a changed
   rule by its new value ("store-pickup-fee" after "store-pickup-free") names no subject.
2. **The rest is one frame**: besides their subjects, the two texts say the same content
   words ("O frete para a região ... custa"), or differ in at most `REWORDED` of them when
   the two names also share a part both texts say (the kind: "frete-regiao-sul" /
   "frete-regiao-nordeste"). A paraphrase under another name ("multa-atraso-aluguel" /
   "cobranca-por-atraso": "devolvidas com atraso pagam" / "cada dia de atraso gera
   cobrança") is one rule reworded, and stays a possible duplicate.
3. **The two state other values besides**: values (amounts, durations, times, dates, free)
   that the subjects do not account for differ ("R$ 15" / "R$ 30"). A changed means with
   nothing else changed ("All orders ship with FedEx" / "... with UPS", named
   ``carrier-fedex`` / ``carrier-ups``) is a version of one rule, not two subjects.
4. **Neither side speaks of a change or a restriction**: no announced change ("now",
   "agora": `analysis.text.announces_change`), no withdrawal ("no longer", "deixamos de"),
   no "only" / "só", and as many negations on each side.

Anything else stays a possible duplicate for a person (the conservative direction).
Measured on `benchmarks/consolidation/subjects.jsonl` (siblings learned, changes named by
what differs still held): see ``benchmarks/README.md``.
"""

from __future__ import annotations

import re
from typing import Final

from insika_knowledge.analysis.structure import VALUE_WORDS, WITHDRAWAL, tokens, word_tokens
from insika_knowledge.analysis.text import announces_change
from insika_knowledge.candidate import Candidate
from insika_knowledge.concept import Concept, claim_text

#: How many content words two siblings' texts may differ in besides their subjects, when
#: their names share the kind (`_kind`); chosen on the dev halves (module doc).
REWORDED: Final = 3
#: The token of "only" / "só" / "apenas" (a restriction: a changed rule's mark).
_ONLY: Final = "p:p_only"
#: The token of a negation.
_NEGATION: Final = "n"
#: A bare number's token ("101" in "Room 101"): a number with no unit.
_BARE_NUMBER_RE: Final = re.compile(r"^m:[\d.]+:$")


def other_subject(existing: Concept, candidate: Candidate) -> bool:
    """True when `candidate` is about another subject than `existing` (the module's rules).

    Args:
        existing: the stored concept a search matched (its ``## Contradiction`` section is
            left out).
        candidate: the screened candidate, under the name the model proposed.

    Returns:
        True: a sibling, learned as a new concept; False: the naming step's other rules
        decide (a close match is held as a possible duplicate).
    """
    old_text = f"{existing.description}\n{claim_text(existing.body)}"
    new_text = f"{candidate.description}\n{candidate.body}"
    if announces_change(old_text) or announces_change(new_text):
        return False
    old, new = tokens(old_text), tokens(new_text)
    if _ONLY in old or _ONLY in new or WITHDRAWAL in old or WITHDRAWAL in new:
        return False
    if old.count(_NEGATION) != new.count(_NEGATION):
        return False
    old_set, new_set = frozenset(old), frozenset(new)
    old_subject = _subject(existing.name, old_set, new_set)
    new_subject = _subject(candidate.name, new_set, old_set)
    if not old_subject or not new_subject:
        return False
    reworded = len(_frame(old_set - old_subject) ^ _frame(new_set - new_subject))
    if reworded and (reworded > REWORDED or not _kind(existing.name, candidate.name, old_set & new_set)):
        return False
    return _values(old_set) - old_subject != _values(new_set) - new_subject



def _kind(old_name: str, new_name: str, shared: frozenset[str]) -> bool:
    """True when the two names share a part both texts say (the kind of thing: "frete" of
    ``frete-regiao-sul`` and ``frete-regiao-nordeste``).
    """
    return bool(_parts(old_name) & _parts(new_name) & shared)


def _parts(name: str) -> set[str]:
    """The tokens of `name`'s parts that can name a thing (`_subject_token`)."""
    return {t for part in name.split("-") for t in word_tokens(part) if _subject_token(t)}


def _frame(found: frozenset[str]) -> frozenset[str]:
    """The content words among `found` (no values, roles, poles or parties)."""
    return frozenset(t for t in found if ":" not in t and t not in (_NEGATION, ".", ","))


def _subject(name: str, own: frozenset[str], other: frozenset[str]) -> frozenset[str]:
    """The tokens of `name`'s parts that its own text says and the other text does not."""
    return frozenset(t for t in _parts(name) if t in own and t not in other)


def _subject_token(token: str) -> bool:
    """True for a token that can name a subject: a content word, a letter name, a bare
    number or a weekday; not a value with a unit, a word of the claim vocabulary (``s_``)
    or a role, pole, party or clause word.
    """
    if token.startswith("m:"):
        return _BARE_NUMBER_RE.match(token) is not None
    if token.startswith("d:wd"):
        return True
    return ":" not in token and not token.startswith("s_") and token not in (_NEGATION, ".", ",")


def _values(found: frozenset[str]) -> frozenset[str]:
    """The values among `found`: amounts, durations, times, dates and the value words."""
    return frozenset(t for t in found if t.startswith(("m:", "d:")) or t in VALUE_WORDS)
