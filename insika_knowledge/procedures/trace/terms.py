"""What a user asked, as keyed digests of its analysed terms (never the words).

A task's exemplars (`insika_knowledge.procedure.TaskRecord`) keep the user messages that
came before a run's first write, and recall compares a new session's messages with them.
Neither side keeps the words: every token with a digit (ids, codes, numbers, dates, zip
codes) and every e-mail address is dropped, the rest is analysed by the project's tokeniser
(`insika_knowledge.analysis.text.terms`: folding, stop words, stems, synonym groups,
`message_terms`), and each term becomes a 12-hex-digit blake2b digest keyed by a secret of
the database (or of the process, for an in-memory miner). Equal terms give equal digests
under one key, so similarity is computed on digests; a digest says nothing of its term
without the key.

`paths_in` reads the absolute directories a task names: the environment of a coding
agent's task (a repository checkout such as ``/workspace/django__django__3.0``).
"""

from __future__ import annotations

import hashlib
import re
from functools import lru_cache
from typing import Final

from insika_knowledge.analysis.text import NEGATIONS, terms

#: Characters of a user message that are analysed (the rest is left out).
MESSAGE_CHARS: Final = 2000
#: What marks a token that says which record, not what is asked: a digit, an ``@`` (e-mail).
_NOISE: Final = frozenset("0123456789@")
_NOISE_RE: Final = re.compile(r"[\d@]")


def _without_noise(text: str) -> str:
    """`text` without its whitespace-separated tokens that hold a digit or an ``@``."""
    if _NOISE_RE.search(text) is None:
        return text
    return " ".join(w for w in text.split() if w.isalpha() or _NOISE.isdisjoint(w))


#: Words that name a kind of change (folded): "downgrade all my bookings to economy" asks
#: for a change as "change my bookings to economy" does.
_CHANGE_KINDS: Final = frozenset({"upgrade", "downgrade", "reschedule", "rebook", "postpone", "remarcar", "adiar"})
_CHANGE: Final = "change"


def _with_change(found: frozenset[str], text: str) -> frozenset[str]:
    """`found` with the analysed term of "change" when a word of `text` names a kind of change."""
    lowered = text.lower()  # a word of the set is in it, lowered: a cheap test first
    if not any(kind in lowered for kind in _CHANGE_KINDS) or _CHANGE_KINDS.isdisjoint(
        w.lower() for w in _WORD_RE.findall(text)
    ):
        return found
    return found | terms(_CHANGE)


@lru_cache(maxsize=16384)
def message_terms(text: str) -> frozenset[str]:
    """The analysed terms of a user message, without its tokens that hold a digit or an
    ``@``; a word that names a kind of change (`_CHANGE_KINDS`) adds the term of "change".
    """
    kept = _without_noise(text[:MESSAGE_CHARS])
    return _with_change(terms(kept), kept)


#: Word endings of a form that does not ask for the action (past, gerund, noun): "booked",
#: "booking", "bookings", "cancellation", "replacement" name an action without asking for it.
_NOT_ASKING_RE: Final = re.compile(r"(?:ed|ing|ings|ion|ions|ment|ments)$")
_WORD_RE: Final = re.compile(r"[^\W\d_]+")


#: A negation: the analyser's words (`analysis.text.NEGATIONS`, "não" as written), "no
#: longer", "n't" and its apostrophe-less chat forms; the words after it in its clause are
#: refused, not asked. Not a bare "no": "No, please cancel it" asks.
_NEGATION_WORDS: Final = sorted((NEGATIONS - {"no"}) | {"não", "no longer", "dont", "doesnt", "didnt", "wont", "cant"},
                                key=len, reverse=True)
_NEGATION_RE: Final = re.compile(
    r"(?<![\w'’])(?:" + "|".join(re.escape(w).replace(r"\ ", r"\s+") for w in _NEGATION_WORDS) + r")(?![\w'’])"
    r"|n['’]t(?!\w)", re.IGNORECASE)
#: Where a negation's clause ends: a sentence or phrase mark, or a word that turns to another
#: clause ("but", "instead", "mas"...).
_CLAUSE_END_RE: Final = re.compile(
    r"[.,;:!?\n()]|(?<!\w)(?:but|instead|rather|however|mas|porem|porém|e\s+sim)(?!\w)", re.IGNORECASE)


def _unnegated(text: str) -> str:
    """`text` with the words a negation governs blanked: from each negation to the end of
    its clause (`_CLAUSE_END_RE`). "I don't want to cancel it, just change the date" keeps
    "just change the date"; "I never asked to cancel" keeps "I".
    """
    out: list[str] = []
    at = 0
    for negation in _NEGATION_RE.finditer(text):
        if negation.start() < at:
            continue
        out.append(text[at:negation.start()])
        end = _CLAUSE_END_RE.search(text, negation.end())
        at = end.start() if end else len(text)
        out.append(" ")
    out.append(text[at:])
    return "".join(out)


@lru_cache(maxsize=16384)
def asked_terms(text: str) -> frozenset[str]:
    """The analysed terms of the words of a message in a form that can ask for an action.

    A request names its action as a verb in its plain form (``book a flight``, ``please
    cancel``, ``I want to exchange``); a word ending like a past tense, a gerund or a noun
    (``booked``, ``my booking``, ``a cancellation``) names the action without asking for it,
    and is left out, and so is every word a negation governs (`_unnegated`: ``I don't want
    to exchange anything. Instead, I'd like to return it`` asks for a return only). Tokens
    with a digit or an ``@`` are left out as in `message_terms`.
    """
    words = _WORD_RE.findall(_unnegated(_without_noise(text[:MESSAGE_CHARS])))
    kept = [w for w in words if not _NOT_ASKING_RE.search(w.lower())]
    if not kept:
        return frozenset()
    joined = " ".join(kept)
    return _with_change(terms(joined), joined)


@lru_cache(maxsize=65536)
def term_digest(key: bytes, term: str) -> str:
    """The 12-hex-digit blake2b digest of `term` keyed by `key`."""
    return hashlib.blake2b(term.encode("utf-8", "surrogatepass"), digest_size=6, key=key,
                           person=b"term").hexdigest()


def digests(key: bytes, found: frozenset[str] | set[str]) -> tuple[str, ...]:
    """The sorted digests of the terms `found` under `key`."""
    return tuple(sorted({term_digest(key, t) for t in found}))


#: An absolute path (not part of a relative path, a URL or a word).
_PATH_RE: Final = re.compile(r"(?<![\w.~:/$<>-])/[\w.+@-]+(?:/[\w.+@-]+)*")
#: A path component that names a file: an extension of letters (``html.py``, not ``3.0``).
_FILE_RE: Final = re.compile(r"[^.]\.[A-Za-z]\w{0,7}$")
#: Directories every environment has: a path under them says nothing about the environment.
_SYSTEM_ROOTS: Final = frozenset(
    {"dev", "proc", "sys", "tmp", "usr", "bin", "sbin", "etc", "lib", "lib64", "opt", "var", "run"}
)


def paths_in(text: str) -> tuple[str, ...]:
    """The absolute directories `text` names, distinct, in order.

    A path's last component is dropped when it looks like a file (``html.py``; not
    ``django__3.0``) and the path is cut before any placeholder (``/workspace/<NEW_FILE>.py``
    -> ``/workspace``); paths under system roots (``/dev/null``, ``/tmp/x``) and ``/`` are left
    out.

    Args:
        text: a canonical task or step template.

    Returns:
        Paths such as ``/workspace/django__django__3.0``, without a trailing slash.
    """
    out: dict[str, None] = {}
    for match in _PATH_RE.finditer(text):
        parts = match.group(0).split("/")[1:]
        if text.startswith("<", match.end()) or (parts and _FILE_RE.search(parts[-1])):
            parts = parts[:-1]
        if parts and parts[0] not in _SYSTEM_ROOTS:
            out["/" + "/".join(parts)] = None
    return tuple(out)
