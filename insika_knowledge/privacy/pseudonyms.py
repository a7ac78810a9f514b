"""Session ids that hold personal data, stored as pseudonyms.

An engine often names a conversation after its customer: a WhatsApp number
(``whatsapp:5511987654321``), an e-mail, a CPF. Such an id would become a concept's
source, a sighting's, the quarantine ledger's and the extraction record's, in every
version. `pseudonymous` keeps what the id says that is no one's (``whatsapp:``), replaces
each personal datum by its placeholder (`insika_knowledge.privacy.redact`) and adds a
keyed digest of the whole id, so one conversation keeps one id (a replayed turn still
counts once) and two customers never share one:
``whatsapp:[phone]~kqzmfbtrwhexaycd``. A UUID in an id is kept: it is random, and the
commonest session id there is.

The digest is HMAC-SHA256 (RFC 2104) under the tenant's own random key
(`ConceptReads.pseudonym_key`), written as 16 letters (about 75 bits): without the key,
the phone numbers cannot be tried one by one against it. An id with no personal datum is
kept as it is; an id is no sentence, so any long number or "@" in it counts as one
(`_shown`: it fails closed).
"""

from __future__ import annotations

import hashlib
import hmac
import re
import unicodedata
from functools import lru_cache
from typing import Final, Protocol

from insika_knowledge.privacy.credentials import scrub
from insika_knowledge.privacy.redact import redact

#: Letters of the digest (26 ** 16 is about 2 ** 75): no digit, so it never reads as a number.
DIGEST_LETTERS: Final = 16
_ALPHABET: Final = "abcdefghijklmnopqrstuvwxyz"
#: The longest id a pseudonym may be, in characters: `insika_knowledge.ids.SESSION_ID_MAX`
#: (privacy sits below the id rules; tests/test_session_pseudonyms.py holds them equal).
LONGEST: Final = 200
#: What joins the id's redacted text and its digest.
_JOIN: Final = "~"


def digest(session_id: str, key: bytes) -> str:
    """`DIGEST_LETTERS` lowercase letters of HMAC-SHA256(`key`, `session_id`)."""
    return letters(hmac.new(key, session_id.encode("utf-8", "surrogatepass"), hashlib.sha256).digest())


def letters(raw: bytes) -> str:
    """The first `DIGEST_LETTERS` bytes of `raw` (a hash) as lowercase letters: no digit, so
    an id made of them never reads as a number.
    """
    return "".join(_ALPHABET[b % 26] for b in raw[:DIGEST_LETTERS])


@lru_cache(maxsize=4096)
def pseudonymous(session_id: str, key: bytes) -> str:
    """`session_id` as it may be stored: itself, or its pseudonym when it holds personal data.

    Args:
        session_id: a checked session (or turn) id (`ids.check_session_id`).
        key: the tenant's pseudonym key (`ConceptReads.pseudonym_key`).

    Returns:
        `session_id` when it holds no personal datum (`_shown`; its UUIDs aside); else its
        text with each datum replaced (cut to fit `LONGEST`, never inside a placeholder) +
        ``~`` + its digest. A pseudonym is its own pseudonym.
    """
    pieces = _UUID_RE.split(session_id)  # odd positions: the UUIDs, kept
    shown = [piece if i % 2 else _shown(piece) for i, piece in enumerate(pieces)]
    if all(i % 2 or text is None for i, text in enumerate(shown)):
        return session_id
    text = "".join(piece if t is None else t for piece, t in zip(pieces, shown, strict=True))
    room = LONGEST - len(_JOIN) - DIGEST_LETTERS
    cut = text[:room]
    if "[" in cut[max(0, len(cut) - 8):] and "]" not in cut[cut.rindex("["):]:
        cut = cut[:cut.rindex("[")]  # never half a placeholder
    return f"{cut}{_JOIN}{digest(session_id, key)}"


def _shown(piece: str) -> str | None:
    """`piece` of an id with its personal data replaced, or None when it holds none.

    An id is no sentence: there is no context to tell a customer's number from anything
    else, so it fails closed. Besides what `redact` finds, any run of 8 or more digits
    (a phone of any country, a CPF glued to a word, "conv-5511987654321-1"; ISO dates and
    times aside) is ``[number]`` and anything around an "@" is ``[email]``; other scripts'
    digits and combining marks are read as the digits they hide.
    """
    plain = "".join(str(unicodedata.digit(c)) if c.isdigit() else c
                    for c in unicodedata.normalize("NFKC", piece) if not unicodedata.combining(c))
    secret_free = scrub(plain)  # a password said in an id ("minha senha é girassol123")
    found = redact(secret_free)
    text = found.text
    blanked = _ISO_TIME_RE.sub(lambda m: "_" * len(m.group()), text)
    spans = [m.span() for m in _LONG_NUMBER_RE.finditer(blanked)] + [m.span() for m in _EMAIL_RE.finditer(blanked)]
    if not found.counts and not spans and secret_free is plain:
        return None
    for start, end in sorted(spans, reverse=True):
        text = text[:start] + ("[email]" if "@" in text[start:end] else "[number]") + text[end:]
    return text


#: 8 or more digits, perhaps with a separator between them: too long to be anything but an
#: identifier, and in a session's id most likely a person's (a phone, a CPF).
_LONG_NUMBER_RE: Final = re.compile(r"\d(?:[\s().+/-]?\d){7,}")
#: Anything around an "@" (an e-mail glued to a suffix: "joana@gmail.com-2").
_EMAIL_RE: Final = re.compile(r"[^\s@~\[\]]*@[^\s@~\[\]]+")
#: An ISO date or time ("2024-05-15", "2024-05-15T10:00:00Z"): no one's.
_ISO_TIME_RE: Final = re.compile(r"\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2})?(?:\.\d+)?Z?)?")


#: A UUID: the commonest session id there is, random, no one's (in a conversation's text the
#: same shape is redacted as a random PIX key; in an id it names the conversation).
_UUID_RE: Final = re.compile(
    r"(\b(?=[0-9-]*[a-fA-F])[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}\b)")


class Keyed(Protocol):
    """What holds a tenant's pseudonym key (its concept store, or its outbox)."""

    def pseudonym_key(self) -> bytes:
        """The tenant's key (`ConceptReads.pseudonym_key`)."""
        ...


def stored_ids(keyed: Keyed, session_id: str, turn_id: str) -> tuple[str, str]:
    """``(session_id, turn_id)`` as the tenant's database keeps them (`pseudonymous` under
    the key `keyed` holds): what every path that stores a session's id calls.
    """
    key = keyed.pseudonym_key()
    return pseudonymous(session_id, key), pseudonymous(turn_id, key)
