"""Typo tolerance: a query term no concept has is replaced by a known term one edit away.

"retrun" finds "return", "reembolço" finds "reembolso", "dentst" finds "dentist". Only
terms of 5 to 40 characters that are absent from the index are corrected, with one
Damerau-Levenshtein edit (a deletion, insertion, substitution or swap of neighbours);
when several known terms are one edit away, the most common one wins (ties: the first
in alphabetical order). Terms holding a digit (a number, an order id, a numeric range
term) and synonym-group terms (they hold ``_``) are never corrected: another number is
another claim, not a typo. A longer term (a pasted token, a run of letters) is no word
mistyped, and its neighbours would cost memory quadratic in its length (a 4000-letter
term: 290,000 strings, over 1 GB).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence, Set
from typing import Final

_LETTERS: Final = "abcdefghijklmnopqrstuvwxyz0123456789"
_DIGIT: Final = re.compile(r"\d")
MIN_LENGTH: Final = 5
MAX_LENGTH: Final = 40


def one_edit(term: str) -> set[str]:
    """Every string one Damerau-Levenshtein edit away from `term`."""
    splits = [(term[:i], term[i:]) for i in range(len(term) + 1)]
    deletes = {a + b[1:] for a, b in splits if b}
    swaps = {a + b[1] + b[0] + b[2:] for a, b in splits if len(b) > 1}
    replaces = {a + c + b[1:] for a, b in splits if b for c in _LETTERS if c != b[0]}
    inserts = {a + c + b for a, b in splits for c in _LETTERS}
    return (deletes | swaps | replaces | inserts) - {term}


def correct(
    terms: Iterable[str], known: Callable[[str], int], vocabularies: Sequence[Set[str]] = ()
) -> frozenset[str]:
    """`terms` with each unknown, correctable term replaced by its best known neighbour.

    Args:
        terms: analysed query terms.
        known: document frequency of a term in the index (0 when absent).
        vocabularies: sets (or dict key views) that together hold every term `known`
            counts; when given, only the neighbours they hold are looked up (same result,
            a set intersection instead of ~400 calls of `known` per unknown term).

    Returns:
        The corrected term set (unknown terms without a neighbour are kept as they are).
    """
    out: set[str] = set()
    for term in terms:
        if not MIN_LENGTH <= len(term) <= MAX_LENGTH or "_" in term or known(term) or _DIGIT.search(term):
            out.add(term)
            continue
        edits = one_edit(term)
        if vocabularies:
            edits = set().union(*(edits & vocabulary for vocabulary in vocabularies))
        found = [(frequency, c) for c in edits if (frequency := known(c))]
        out.add(min(found, key=lambda f: (-f[0], f[1]))[1] if found else term)
    return frozenset(out)
