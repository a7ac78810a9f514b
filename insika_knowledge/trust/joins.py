"""How a claim's conditions are joined, against the business sentence that states them.

"The deposit is waived for Rio residents or for customers who pay by credit card" says
either condition is enough; "It's waived if you're a Rio resident and you pay with a credit
card" asks for both. A business sentence whose condition joins with "and" two things the
claim joins with "or" states another, wider rule, whatever words the two share. ("Residents
and students get 10% off" joins subjects, each of whom gets it: only an "and" inside a
condition clause, after "if" / "when" / "unless", asks for both.)
"""

from __future__ import annotations

from collections.abc import Sequence

from insika_knowledge.analysis.structure import CONDITION_TOKENS, SENTENCE, tokens

__all__ = ["joined_otherwise"]


def _content(token: str) -> bool:
    """True for a token that says what is meant: not a conjunction, role, pronoun or mark."""
    return not token.startswith(("c:", "r:", "w:")) and token not in (SENTENCE, ",", ":")


def _sides(seq: Sequence[str], at: int) -> tuple[set[str], set[str]]:
    """The content tokens of `seq` before and after the conjunction at `at`, each up to the
    nearest other conjunction or sentence end.
    """
    before: set[str] = set()
    for t in reversed(seq[:at]):
        if t.startswith("c:") or t == SENTENCE:
            break
        if _content(t):
            before.add(t)
    after: set[str] = set()
    for t in seq[at + 1:]:
        if t.startswith("c:") or t == SENTENCE:
            break
        if _content(t):
            after.add(t)
    return before, after


def joined_otherwise(claim: str, sentence: str) -> bool:
    """True when `sentence` joins with "and", inside a condition, two things `claim` joins with
    "or": "waived if you're a Rio resident and you pay with a credit card" for "waived for
    Rio residents or for customers who pay by credit card".

    Args:
        claim: the candidate's text.
        sentence: one business sentence.
    """
    mine = tokens(claim)
    ors = [i for i, t in enumerate(mine) if t == "c:or"]
    if not ors:
        return False
    seq = tokens(sentence)
    if "c:or" in seq:
        return False
    for j, t in enumerate(seq):
        if t != "c:and":
            continue
        opened = next((k for k in range(j - 1, -1, -1) if seq[k] in CONDITION_TOKENS or seq[k] == SENTENCE), None)
        if opened is None or seq[opened] == SENTENCE:
            continue  # not inside a condition
        first = {u for u in seq[opened + 1:j] if _content(u)}
        _, second = _sides(seq, j)
        for i in ors:
            before, after = _sides(mine, i)
            if first & before and second & after:
                return True
    return False
