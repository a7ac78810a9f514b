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
kept as it is.
"""

from __future__ import annotations

import hashlib
import hmac
import re
from functools import lru_cache
from typing import Final

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
    mac = hmac.new(key, session_id.encode("utf-8", "surrogatepass"), hashlib.sha256).digest()
    return "".join(_ALPHABET[b % 26] for b in mac[:DIGEST_LETTERS])


@lru_cache(maxsize=4096)
def pseudonymous(session_id: str, key: bytes) -> str:
    """`session_id` as it may be stored: itself, or its pseudonym when it holds personal data.

    Args:
        session_id: a checked session (or turn) id (`ids.check_session_id`).
        key: the tenant's pseudonym key (`ConceptReads.pseudonym_key`).

    Returns:
        `session_id` when `redact` finds nothing in it (its UUIDs aside); else its redacted text (cut to
        fit `LONGEST`) + ``~`` + its digest. A pseudonym is its own pseudonym.
    """
    pieces = _UUID_RE.split(session_id)  # odd positions: the UUIDs, kept
    found = [redact(piece) if i % 2 == 0 else None for i, piece in enumerate(pieces)]
    if not any(f is not None and f.counts for f in found):
        return session_id
    text = "".join(piece if f is None else f.text for piece, f in zip(pieces, found, strict=True))
    room = LONGEST - len(_JOIN) - DIGEST_LETTERS
    return f"{text[:room]}{_JOIN}{digest(session_id, key)}"


#: A UUID: the commonest session id there is, random, no one's (in a conversation's text the
#: same shape is redacted as a random PIX key; in an id it names the conversation).
_UUID_RE: Final = re.compile(r"(\b[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}\b)")
