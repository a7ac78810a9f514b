"""The two-session rule: a task term is kept in the clear only once two sessions had it.

A procedure's triggers and the population (`insika_knowledge.procedures.mining.scoring`)
count, per index term, the successful runs whose task had it. A term the tasks of one
session alone had (a customer's name, the code of their booking, a word of their own)
says nothing about other customers' tasks and is personal: it is never kept as a trigger,
a population term or a word of a stored task. Until a second session's task has it, a
term is only *noted*: its counter remembers a keyed digest of the term, a keyed digest
of the session and how many of that session's runs had it
(`insika_knowledge.store.procedure_records.ProcedureRows.note_terms`); when another session
brings it, the note is released and the term counts in the clear with every run it had.

- `session_of`: the session a run id belongs to (``s#2``, a later task of session ``s``,
  is still session ``s``).
- `shared_increments`: how one run changes a counter kept under the rule.
- `MemoryNotes`: the notes in memory (the in-process `Miner`).
- `mask_unshared`: a task text with every word whose terms are not shared replaced by
  ``…`` (stored sample tasks and the open-session capture buffer).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Container, Iterable, Mapping
from functools import lru_cache
from typing import Final

from insika_knowledge.analysis.text import STOP_WORDS, fold, terms, text_language

#: What a masked word (or a run of them) reads as: no letter, so it has no index term.
MASK: Final = "…"

_RUN_SUFFIX_RE: Final = re.compile(r"#\d+$")
_WORD_RE: Final = re.compile(r"<[A-Z][A-Z0-9_]*>|[^\W_]+")
_MASK_RUN_RE: Final = re.compile(MASK + r"(?:\s+" + MASK + ")+")

#: ``note(terms)`` -> term -> runs of the one other session that had it (the released ones).
Note = Callable[[Collection[str]], Mapping[str, int]]


def session_of(run_id: str) -> str:
    """The session of a run: `run_id` without its ``#n`` suffix (the n-th later task)."""
    return _RUN_SUFFIX_RE.sub("", run_id)


def shared_increments(known: Container[str], run_terms: Iterable[str], note: Note) -> dict[str, int]:
    """How one run's task terms change a counter kept under the two-session rule.

    Args:
        known: the terms the counter already holds in the clear (shared by two sessions).
        run_terms: the run's task terms.
        note: notes the other terms for the run's session (see `MemoryNotes.note`) and
            returns those another session had noted, with that session's runs.

    Returns:
        term -> how much its count grows: 1 for a known term; the other session's runs
        plus this one for a released term. Terms left noted are absent.
    """
    increments: dict[str, int] = {}
    fresh: list[str] = []
    for term in run_terms:
        if term in known:
            increments[term] = 1
        else:
            fresh.append(term)
    if fresh:
        for term, runs in note(fresh).items():
            increments[term] = runs + 1
    return increments


class MemoryNotes:
    """Terms not yet shared, per counter, in memory: the in-process twin of the store's notes."""

    def __init__(self) -> None:
        self._notes: dict[tuple[str, str], tuple[str, int]] = {}

    def note(self, scope: str, session: str, fresh: Iterable[str]) -> dict[str, int]:
        """Note `fresh` terms of `session` under the counter `scope`.

        A term no session noted is noted for this one (one run); a term this session
        noted gains a run; a term another session noted is released.

        Returns:
            term -> runs of the other session, for the released terms.
        """
        released: dict[str, int] = {}
        for term in fresh:
            key = (scope, term)
            noted = self._notes.get(key)
            if noted is None:
                self._notes[key] = (session, 1)
            elif noted[0] == session:
                self._notes[key] = (session, noted[1] + 1)
            else:
                del self._notes[key]
                released[term] = noted[1]
        return released


@lru_cache(maxsize=65536)
def _word_terms(word: str, language: str) -> frozenset[str]:
    """The index terms of one word of a `language` text; a stop word has none."""
    return frozenset() if fold(word) in STOP_WORDS else terms(word, language)


def mask_unshared(text: str, shared: Callable[[set[str]], Collection[str]]) -> str:
    """`text` with every word whose terms are not all shared replaced by `MASK`.

    A word is kept when it is a stop word, a placeholder (``<ID>``, ``<EMAIL>``) or
    when every index term it has (`insika_knowledge.analysis.text.terms`, in the
    text's language) is shared; any other word, a name or a code only one session's
    task had, becomes ``…`` (a run of them one ``…``). Punctuation and spacing stay.

    Args:
        text: a canonical task text.
        shared: given a set of terms, returns those shared by two sessions or more (one
            call per text: a store read, or a look-up in memory).

    Returns:
        The masked text ('' for '').
    """
    if not text:
        return text
    language = text_language(text)
    found: list[tuple[int, int, frozenset[str]]] = []
    wanted: set[str] = set()
    for match in _WORD_RE.finditer(text):
        word = match.group()
        if word[0] == "<":
            continue
        word_terms = _word_terms(word, language)
        if not word_terms and fold(word) in STOP_WORDS:
            continue
        found.append((match.start(), match.end(), word_terms))
        wanted |= word_terms
    if not found:
        return text
    known = set(shared(wanted)) if wanted else set()
    parts: list[str] = []
    last = 0
    for start, end, word_terms in found:
        if word_terms and word_terms <= known:
            continue
        parts.append(text[last:start])
        parts.append(MASK)
        last = end
    parts.append(text[last:])
    return _MASK_RUN_RE.sub(MASK, "".join(parts))
