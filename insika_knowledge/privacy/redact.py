"""Redaction of personal data from model-written text before it is stored.

`redact` replaces every personal datum it recognises with a typed placeholder::

    >>> redact("Fale com joana@exemplo.com.br ou (11) 98765-4321, CPF 123.456.789-09.").text
    'Fale com [email] ou [phone], CPF [cpf].'

Detectors run in this order, each one on the output of the one before:

1. ``email``: a practical RFC-ish address regex, plus the obfuscated spellings
   (``ana at gmail dot com``, ``ana [at] gmail [dot] com``, ``ana(at)gmail(dot)com``,
   ``ana @ gmail . com``, ``ana arroba gmail ponto com``).
2. ``iban``: regex candidates in any case (with or without spaces) kept only when
   `stdnum.iban.is_valid` accepts them.
3. ``cnpj``: 14 digits, bare or grouped as printed (``12.345.678/0001-95``) with any
   common separator (space, ``.``, ``-``, ``/``), and the formatted alphanumeric CNPJ
   that starts in July 2026, kept only when `stdnum.br.cnpj.is_valid` accepts them.
4. ``cpf``: 11 digits, bare or grouped as printed (``123.456.789-09``) with any common
   separator, kept only when `stdnum.br.cpf.is_valid` accepts them.
5. ``card``: 13-19 digits, bare or grouped by spaces, dashes, dots or slashes in a
   card-like layout, starting with an issuer digit 2-6, kept only when
   `stdnum.luhn.is_valid` accepts them.
6. ``phone``: `phonenumbers.PhoneNumberMatcher` at leniency ``VALID``, region ``BR``, then
   ``+``-prefixed numbers of any region, then region ``US``. The matcher alone is too
   greedy, so a match is kept only if it has a ``+`` or 10+ digits (area code included),
   is not a bare digit run after an order word (``pedido 1234567890``), is not shaped like
   a CPF/CNPJ or a thousands-grouped amount, carries no stray leading digits (``90`` of
   ``R$ 199,90``), and, for region ``US``, has the printed US layout. Each guard is
   explained where it is defined.

Then the kinds of issue 26 (`insika_knowledge.privacy.more`, each explained there):
``pix`` (random keys, and a key of any PIX kind after a PIX cue; before the digit detectors), ``boleto``
(digitable lines and bar codes; before the Brazilian numbers, whose digit groups they
contain), ``rg`` (after an RG cue, or the São Paulo layout when its digit checks),
``address`` (a street and a number, Brazilian and English forms) and ``name`` (a person's
capitalised name right next to any contact placeholder; last, since it needs them).

A number dictated digit by digit, eight digit words or more in a row in Portuguese or
English ("CPF um dois três quatro ...", an area code as one word: "onze nove oito ..."), or
written one digit at a time after a word that names a datum ("cel 1 1 9 8 7 ...", "CPF
1.2.3.4..."; without one, single digits are as often a list of ratings or steps), is read
as its digits first (a run that holds none whole, window by window); when the detectors
find a datum in them, the words are replaced by its placeholder.

A business's published contacts are kept: toll-free numbers (0800, 0300, 0500, 0900)
always, and the emails, phones and addresses in `keep` (`kept_contacts` finds those a
conversation shows to be the business's: said by the business side with a business
cue, "our", "SAC", "central", "fale conosco"..., and never by the customer).

Emails go first because an address may contain digits. IBAN goes before the Brazilian
numbers and cards because an IBAN's digit groups can look like either. The checksum
detectors go before phones so that a valid 11-digit CPF is labelled ``[cpf]``, not
``[phone]``. CNPJ goes before card so that a valid 14-digit CNPJ is labelled ``[cnpj]``.

Everything that is not personal data (CEPs and CEP ranges, order numbers, prices, dates
and times, percentages, quantities, reservation and user ids, numbers that only look
like a CPF but fail its check digits) is left untouched.

Every validator fails closed: if a `stdnum` check raises instead of answering, the value
is redacted, never stored.

The pipeline is repeated until it changes nothing, so ``redact`` is idempotent by
construction: ``redact(redact(x).text).text == redact(x).text``. It terminates because a
placeholder can never be matched again and every match covers characters outside the
placeholders, so each changing pass shrinks the text outside placeholders.
"""

from __future__ import annotations

import functools
import re
import string
import unicodedata
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Final, NamedTuple

from phonenumbers import (
    Leniency,
    PhoneNumberMatch,
    PhoneNumberMatcher,
    national_significant_number,
)
from stdnum import iban as _iban
from stdnum import luhn as _luhn
from stdnum.br import cnpj as _cnpj
from stdnum.br import cpf as _cpf

from insika_knowledge.privacy.credentials import SECRET, scrub
from insika_knowledge.privacy.cued import find_birth_dates, find_ips, find_ssns, find_voter_ids
from insika_knowledge.privacy.more import (
    cue_at_end,
    find_addresses,
    find_boletos,
    find_br_codes,
    find_local_phones,
    find_names,
    find_pix,
    find_postcodes,
    find_rgs,
    words_next_to_marks,
)
from insika_knowledge.privacy.people import find_people, removed_names
from insika_knowledge.privacy.published import asks_for_contact, offered, ours_after, towards

__all__ = ["PLACEHOLDERS", "UNNEEDED_KINDS", "Redaction", "contact_key", "kept_contacts", "redact", "redact_kinds",
           "redact_name"]

#: Placeholder written in place of each kind of personal datum.
PLACEHOLDERS: dict[str, str] = {
    "email": "[email]",
    "phone": "[phone]",
    "cpf": "[cpf]",
    "cnpj": "[cnpj]",
    "card": "[card]",
    "iban": "[iban]",
    "pix": "[pix]",
    "boleto": "[boleto]",
    "rg": "[rg]",
    "address": "[address]",
    "name": "[name]",
    "ip": "[ip]",
    "birth_date": "[birth_date]",
    "voter_id": "[voter_id]",
    "ssn": "[ssn]",
}


@dataclass(frozen=True)
class Redaction:
    """The result of `redact`.

    Attributes:
        text: The input text with every detected personal datum replaced by its
            placeholder from `PLACEHOLDERS`.
        counts: Placeholder kind -> how many data of that kind were replaced, for example
            ``{"email": 1, "phone": 2}``. Only kinds with at least one replacement appear;
            an empty dict means nothing was redacted.
    """

    text: str
    counts: dict[str, int]


Span = tuple[int, int]

# --------------------------------------------------------------------------- helpers


def _is_word(ch: str) -> bool:
    return ch.isalnum() or ch == "_"


def _bounded(text: str, start: int, end: int, *, left: bool = True, right: bool = True) -> bool:
    """Whether ``text[start:end]`` stands alone as a number, not as part of a bigger token.

    The left neighbour must not be a word character or ``+`` (a ``+`` makes it an
    international phone number); neither neighbour may be a word character; and a
    ``.``, ``,``, ``/`` or ``-`` neighbour followed by another digit joins the two into
    one larger number (``1.250.000``, ``24/08/2026``), so it is not a boundary either.
    """
    if left and start > 0:
        before = text[start - 1]
        if _is_word(before) or before == "+":
            return False
        if before in ".,/-" and start >= 2 and text[start - 2].isdigit():
            return False
    if right and end < len(text):
        after = text[end]
        if _is_word(after):
            return False
        if after in ".,/-" and end + 1 < len(text) and text[end + 1].isdigit():
            return False
    return True


def _drop_overlaps(spans: Iterable[Span]) -> list[Span]:
    """Sort spans and keep the first of any overlapping ones (earliest start, then longest)."""
    kept: list[Span] = []
    for start, end in sorted(set(spans), key=lambda s: (s[0], -s[1])):
        if not kept or start >= kept[-1][1]:
            kept.append((start, end))
    return kept


def _replace(text: str, spans: list[Span], placeholder: str) -> str:
    parts: list[str] = []
    last = 0
    for start, end in spans:
        parts.append(text[last:start])
        parts.append(placeholder)
        last = end
    parts.append(text[last:])
    return "".join(parts)


# --------------------------------------------------------------------------- email

# Local part, then one or more dot-terminated domain labels, then an ASCII TLD. The
# lookbehind makes a match start only at the beginning of a run of local-part characters,
# which keeps the scan linear on long runs of word characters without an "@".
_EMAIL_RE: Final = re.compile(
    r"(?<![\w.%+'-])[\w.%+'-]+@(?:[^\W_](?:[\w-]*[^\W_])?\.)+[A-Za-z]{2,63}(?![\w-])"
)

# Addresses written to dodge a scraper: "ana at gmail dot com", "ana [at] gmail [dot] com",
# "ana(at)gmail(dot)com", "ana @ gmail . com", "ana arroba gmail ponto com". A bracketed
# or symbolic "@" is unambiguous, so any TLD goes; the bare words "at"/"arroba" and
# "dot"/"ponto" also occur in prose, so then the address must end in a common TLD that is
# not also a word ("in", "it", "me", "us", "de", "es" are left out).
_OPEN, _CLOSE = r"[\[({<]", r"[\])}>]"
_OBF_AT_MARKED: Final = rf"(?:\s*@\s*|\s*{_OPEN}\s*(?:at|arroba|@)\s*{_CLOSE}\s*)"
_OBF_AT_WORD: Final = r"(?:\s+(?:at|arroba)\s+)"
# A plain dot spaced out counts only with a space before it ("gmail . com"): a sentence's
# end right after an address ("maria@example.com. No refunds") is no dot of it.
_OBF_DOT: Final = rf"(?:\.|\s+\.\s*|\s*{_OPEN}\s*(?:dot|ponto|\.)\s*{_CLOSE}\s*|\s+(?:dot|ponto)\s+)"
_LABEL: Final = r"[^\W_](?:[\w-]*[^\W_])?"
_COMMON_TLDS: Final = (
    r"(?:com|net|org|edu|gov|info|biz|io|co|br|pt|uk|fr|mx|cl|ca|au|jp)"
)
_EMAIL_OBFUSCATED_RE: Final = re.compile(  # a local part spelled out too: "sarah dot connor at yahoo dot com"
    rf"(?<![\w.%+'-])(?:[\w%+'-]+(?:\s+(?:dot|ponto)\s+|\.))*[\w%+'-]+"
    rf"(?:{_OBF_AT_MARKED}(?:{_LABEL}{_OBF_DOT})+[A-Za-z]{{2,63}}"
    rf"|{_OBF_AT_WORD}(?:{_LABEL}{_OBF_DOT})+{_COMMON_TLDS}(?:{_OBF_DOT}{_COMMON_TLDS})?)"
    r"(?![\w-])",
    re.IGNORECASE,
)
#: The webmail providers a customer names an address by, without its TLD ("kleber arroba
#: hotmail", "kleber @gmail") or after "no" / "na" / "em" ("kleber.tavares no gmail.com").
_PROVIDERS: Final = r"(?:gmail|googlemail|hotmail|outlook|yahoo|ymail|icloud|uol|bol|terra|globo|protonmail)"
_EMAIL_AT_PROVIDER_RE: Final = re.compile(
    # "arroba" or "@" then a provider: the TLD may be left out
    rf"(?<![\w.%+'-])[\w.%+'-]+(?:\s+arroba\s+|\s*@\s*){_PROVIDERS}(?:{_OBF_DOT}{_COMMON_TLDS}){{0,2}}(?![\w-])"
    # "no" / "na" / "em" then a provider's domain: the local part must look like one
    rf"|(?<![\w.%+'-])[\w%+'-]*[._\d][\w.%+'-]*\s+(?:no|na|em|on|at)\s+{_PROVIDERS}{_OBF_DOT}{_COMMON_TLDS}"
    rf"(?:{_OBF_DOT}{_COMMON_TLDS})?(?![\w-])",
    re.IGNORECASE,
)
_OBF_HINT_RE: Final = re.compile(rf"@|\b(?:at|arroba)\b|{_PROVIDERS}", re.IGNORECASE)


def _find_emails(text: str) -> list[Span]:
    if not _OBF_HINT_RE.search(text):
        return []
    spans = [m.span() for m in _EMAIL_RE.finditer(text)]
    spans += [m.span() for m in _EMAIL_OBFUSCATED_RE.finditer(text)]
    spans += [m.span() for m in _EMAIL_AT_PROVIDER_RE.finditer(text)]
    return _drop_overlaps(spans)


# --------------------------------------------------------------------------- iban

# Where an IBAN may start: two letters (any case) and two check digits, not inside a word.
_IBAN_START_RE: Final = re.compile(r"(?<!\w)[A-Za-z]{2}[0-9]{2}")
# Its body from that start: alphanumeric chunks separated by single spaces.
_IBAN_BODY_RE: Final = re.compile(r"[A-Za-z]{2}[0-9]{2}[A-Za-z0-9]*(?:[ -]{1,2}[A-Za-z0-9]+)*")
_IBAN_CHUNK_RE: Final = re.compile(r"[A-Za-z0-9]+")
_IBAN_MIN, _IBAN_MAX = 15, 34  # shortest (Norway) and longest legal IBAN lengths
_IBAN_SCAN = 2 * _IBAN_MAX + 8  # characters worth scanning: spaces and a trailing word
_IBAN_LETTER_VALUES: Final = {ord(c): str(ord(c) - ord("A") + 10) for c in string.ascii_uppercase}


def _iban_checksum_ok(candidate: str) -> bool:
    """ISO 7064 mod 97-10, the check `stdnum.iban.is_valid` also makes; a cheap pre-filter."""
    compact = candidate.replace(" ", "").replace("-", "").upper()
    return int((compact[4:] + compact[:4]).translate(_IBAN_LETTER_VALUES)) % 97 == 1


def _find_ibans(text: str) -> list[Span]:
    spans: list[Span] = []
    covered = 0
    for start_match in _IBAN_START_RE.finditer(text):
        start = start_match.start()
        if start < covered:
            continue
        body = _IBAN_BODY_RE.match(text, start, start + _IBAN_SCAN)
        if body is None:  # pragma: no cover - the start regex guarantees a body
            continue
        # Candidate ends are chunk ends, so a trailing word ("... 0130 00 EUR") can be
        # dropped; try the longest candidate first.
        ends: list[int] = []
        length = 0
        for chunk in _IBAN_CHUNK_RE.finditer(text, start, body.end()):
            length += len(chunk.group())
            if length > _IBAN_MAX:
                break
            if length >= _IBAN_MIN:
                ends.append(chunk.end())
        for end in reversed(ends):
            if (
                _bounded(text, start, end)
                and _iban_checksum_ok(text[start:end])
                and _safe(_iban.is_valid, text[start:end])
            ):
                spans.append((start, end))
                covered = end
                break
    return spans


# --------------------------------------------------------------------------- cnpj, cpf

# A maximal run of digit groups joined by one common separator each (space, no-break
# space, ".", ",", "-", "_" or "/"): "123.456.789-09", "123 456 789 09", "123,456,789-09".
_SEPARATED_NUMBER_RE: Final = re.compile(r"[0-9]+(?:(?: {1,2}|\u00a0| ?[.,/_-] ?)[0-9]+)*")
_DIGIT_GROUP_RE: Final = re.compile(r"[0-9]+")
# Where the separators of a printed CPF and CNPJ fall (digit offsets): a number is read as
# one only if each of its separators sits at one of these offsets ("123 456 789 09",
# "123456789-09" and "12345678909" are CPFs; "11 98765-4321", a phone, is not).
_CPF_CUTS: Final = frozenset({3, 6, 9})
_CNPJ_CUTS: Final = frozenset({2, 5, 8, 12})
# The alphanumeric CNPJ issued from July 2026 ("12.ABC.345/01DE-35"); only its fully
# formatted form is looked for, since 14 bare capitals and digits are too often an id.
_CNPJ_ALNUM_RE: Final = re.compile(
    r"(?<!\w)[0-9A-Z]{2}\.[0-9A-Z]{3}\.[0-9A-Z]{3}/[0-9A-Z]{4}-[0-9]{2}(?!\w)"
)


def _safe(check: Callable[[str], bool], value: str) -> bool:
    """Run a stdnum validator, failing closed.

    ``is_valid`` answers False for a value it rejects; anything it *raises* is a bug in the
    validator, and then the value counts as valid, so it is redacted rather than stored.
    """
    try:
        return bool(check(value))
    except Exception:  # a validator bug must neither make redact raise nor let data through
        return True


def _find_documents(
    text: str, length: int, cuts: frozenset[int], check: Callable[[str], bool]
) -> list[Span]:
    """Numbers of `length` digits whose separators fall only at `cuts` and pass `check`.

    Inside a run of groups a candidate starts and ends only at a space (or at the run's
    ends), so "123.456.789-09/2026" is one 15-digit number, not a CPF, while the CPF in
    "pedido 12 123 456 789 09" is found.
    """
    spans: list[Span] = []
    for run in _SEPARATED_NUMBER_RE.finditer(text):
        if sum(ch.isdigit() for ch in run.group()) >= length:
            spans += _documents_in_run(text, run, length, cuts, check)
    return spans


def _documents_in_run(
    text: str, run: re.Match[str], length: int, cuts: frozenset[int], check: Callable[[str], bool]
) -> list[Span]:
    """`_find_documents` inside one run of separated digit groups."""
    groups = list(_DIGIT_GROUP_RE.finditer(text, run.start(), run.end()))
    soft = [i == 0 or text[groups[i].start() - 1] in " \u00a0" for i in range(len(groups))]
    left_ok = _bounded(text, run.start(), run.end(), right=False)
    right_ok = _bounded(text, run.start(), run.end(), left=False)

    def document_end(i: int) -> int:
        if not soft[i] or (i == 0 and not left_ok):
            return 0
        digits, offsets = 0, []
        for j in range(i, len(groups)):
            if digits:
                offsets.append(digits)
            digits += groups[j].end() - groups[j].start()
            if digits > length:
                return 0
            closes = j + 1 == len(groups) or soft[j + 1]
            edge_ok = j + 1 < len(groups) or right_ok
            if digits == length and closes and edge_ok and cuts.issuperset(offsets):
                value = "".join(g.group() for g in groups[i : j + 1])
                return j + 1 if _safe(check, value) else 0
        return 0

    return _leftmost_windows(groups, document_end)


def _leftmost_windows(groups: list[re.Match[str]], end_at: Callable[[int], int]) -> list[Span]:
    """Spans of non-overlapping windows of whole digit groups, found left to right.

    Args:
        groups: the digit groups of one run, in text order.
        end_at: for a start index ``i``, the index just past the last group of the
            window that starts there, or 0 when none does.

    Returns:
        ``[(start, end), ...]`` character offsets; the search resumes after each window.
    """
    spans: list[Span] = []
    i = 0
    while i < len(groups):
        found = end_at(i)
        if found:
            spans.append((groups[i].start(), groups[found - 1].end()))
            i = found
        else:
            i += 1
    return spans


def _find_cnpjs(text: str) -> list[Span]:
    spans = _find_documents(text, 14, _CNPJ_CUTS, _cnpj.is_valid)
    spans += [
        m.span()
        for m in _CNPJ_ALNUM_RE.finditer(text)
        if _bounded(text, m.start(), m.end()) and _safe(_cnpj.is_valid, m.group())
    ]
    return _drop_overlaps(spans)


def _find_cpfs(text: str) -> list[Span]:
    return [(a, b) for a, b in _find_documents(text, 11, _CPF_CUTS, _cpf.is_valid)
            if not ("," in text[a:b] and text[:a].rstrip().endswith(_CURRENCY_SIGNS))]


#: Signs before a price: "R$ 139.507.035,00" is a price whose digits happen to check as a
#: CPF's (a comma is a CPF separator only where no currency sign stands before it).
_CURRENCY_SIGNS: Final = ("R$", "r$", "$", "\u20ac", "\u00a3")


# --------------------------------------------------------------------------- card

# A maximal run of digit groups joined by single spaces, dashes, dots or slashes.
_GROUPED_NUMBER_RE: Final = re.compile(r"[0-9]+(?:(?: {1,2}|\u00a0| ?[./_-] ?)[0-9]+)*")
_CARD_MIN, _CARD_MAX = 13, 19
# Major industry identifiers of payment cards: 2 and 5 Mastercard, 3 Amex/Diners/JCB,
# 4 Visa (and Elo), 6 Discover/Elo/Hipercard/UnionPay/Maestro.
_CARD_ISSUER_DIGITS: Final = frozenset("23456")


def _card_layout_ok(lengths: list[int]) -> bool:
    """Whether digit groups of these lengths are laid out as a card number is printed.

    Accepted: one bare run; groups of four with a shorter last group (4-4-4-4,
    4-4-4-4-3, 4-4-4-1); Amex 4-6-5; Diners 4-6-4. This is what keeps a phone number
    such as ``55 11 98765 4321`` (13 digits, 10% chance of passing Luhn) out.
    """
    if not _CARD_MIN <= sum(lengths) <= _CARD_MAX:
        return False
    if len(lengths) == 1 or lengths in ([4, 6, 5], [4, 6, 4]):
        return True
    return all(n == 4 for n in lengths[:-1]) and 1 <= lengths[-1] <= 4


def _card_at(groups: list[re.Match[str]], lengths: list[int], i: int, j: int) -> bool:
    """Whether groups ``i..j-1`` of a grouped number form a valid card number."""
    if not _card_layout_ok(lengths[i:j]):
        return False
    digits = "".join(g.group() for g in groups[i:j])
    return digits[0] in _CARD_ISSUER_DIGITS and _safe(_luhn.is_valid, digits)


def _find_cards(text: str) -> list[Span]:
    spans: list[Span] = []
    for run in _GROUPED_NUMBER_RE.finditer(text):
        spans += _cards_in_run(text, run)
    return spans


def _cards_in_run(text: str, run: re.Match[str]) -> list[Span]:
    """The card numbers in one run of grouped digits: the whole run, or windows inside it."""
    groups = list(_DIGIT_GROUP_RE.finditer(text, run.start(), run.end()))
    if run.end() - run.start() - len(groups) + 1 < _CARD_MIN:  # digits in the run
        return []
    lengths = [g.end() - g.start() for g in groups]
    left_ok = _bounded(text, run.start(), run.end(), right=False)
    right_ok = _bounded(text, run.start(), run.end(), left=False)
    if left_ok and right_ok and _card_at(groups, lengths, 0, len(groups)):
        return [run.span()]
    # Otherwise look for a card inside the run ("4111 1111 1111 1111 12 parcelas"):
    # windows of whole groups, left to right, longest first at each start. A card
    # has at most five groups (4-4-4-4-3).

    def card_end(i: int) -> int:
        if i == 0 and not left_ok:
            return 0
        for j in range(min(len(groups), i + 5), i, -1):
            if (
                (j < len(groups) or right_ok)
                and _CARD_MIN <= sum(lengths[i:j]) <= _CARD_MAX
                and _card_at(groups, lengths, i, j)
            ):
                return j
        return 0

    return _leftmost_windows(groups, card_end)


# --------------------------------------------------------------------------- phone

# Cheap pre-filter: maximal stretches of phone characters. A match of the matcher never
# extends beyond one stretch (but for an extension, see below), and a match can only pass
# the guards below if it holds a "+" and 7+ digits or holds 10+ digits, so every other
# stretch (dates, prices, CEPs, short ids) is skipped without running the matcher. This is
# what keeps a 2 KB text well under 5 ms.
# (The possessive "*+" keeps a long run of "(" or "+" from being rescanned.)
_PHONE_STRETCH_RE: Final = re.compile(
    r"[+(\[]*+\d(?:[\d \t\u00a0()\[\].\-/\u2010-\u2015]*\d)?"
)
_PHONE_TOKEN_RE: Final = re.compile(r"\S+")
_DIGIT_RE: Final = re.compile(r"\d")
_BARE_DIGITS_RE: Final = re.compile(r"\d+")
# A Brazilian number without "+" needs its 2-digit area code: 10 (landline) or 11
# (mobile) digits. Shorter matches are 8-digit nationwide service numbers such as
# "4002-8922" or "3003-1234", which are businesses, not people, and an 8-digit run is far
# more often a CEP or an order number than a phone.
_PHONE_MIN_NATIONAL_DIGITS = 10
_PHONE_MIN_INTERNATIONAL_DIGITS = 7
# The matcher is given at most this many digits at once: E.164 allows 15, plus a trunk
# prefix and carrier code ("0 21 11 98765-4321").
_PHONE_MAX_WINDOW_DIGITS = 20
# ... and at most this many whitespace-separated groups ("+55 11 9 8765 4321" has five).
_PHONE_MAX_WINDOW_TOKENS = 6
# An extension after a number ("x12", "ext. 123", "ramal 45") belongs to its match.
_PHONE_EXTENSION_RE: Final = re.compile(
    r"[ \t]*[,;]?[ \t]*(?:ext\.?|extens[ãa]o|ramal|x|#)[ \t]*\.?[ \t]*\d{1,7}", re.IGNORECASE
)
# Context handed to the matcher around a window: it looks at one character before a
# match (a letter or currency sign rejects it) and at the ":mm" after one (a time stamp).
_PHONE_CONTEXT_BEFORE, _PHONE_CONTEXT_AFTER = 1, 3
# Words that make a bare digit run an order/ticket/reservation number. The BR matcher
# accepts "pedido 1234567890" (area code 12 + a valid landline) as a phone.
_ORDER_CONTEXT_RE: Final = re.compile(
    r"(?:#|n[º°]|\bno\.|\b(?:pedidos?|orders?|ordem|protocolo|ticket|chamado|invoice|fatura"
    r"|nota|nf|rastreio|tracking|reserva|booking|reservation|id|c[óo]digo|code|n[úu]mero"
    r"|number|nr)\b\.?)[\s:#º°.]*$",
    re.IGNORECASE,
)
_ORDER_CONTEXT_CHARS = 32
# A formatted CPF or CNPJ that failed its check digits is not a phone either: region US
# reads "123.456.789-00" as +1 234-567-8900.
_ID_SHAPE_RE: Final = re.compile(r"\d{3}\.\d{3}\.\d{3}-\d{2}|\d{2}\.\d{3}\.\d{3}/\d{4}-\d{2}")
# Thousands-grouped amounts ("1.234.567.890", "1,234,567,890.00") are money, not phones.
_AMOUNT_RE: Final = re.compile(r"\d{1,3}([.,])\d{3}(?:\1\d{3})*(?:[.,]\d{1,2})?")
# Region US accepts any 10 bare digits with a valid area code, which includes most
# 10-11 digit ids; without "+" a US number is only taken in its printed layout,
# "(415) 555-2671", "415-555-2671", "415.555.2671", "1 415 555 2671".
_NANP_RE: Final = re.compile(r"(?:1[ .\-]?)?(?:\(\d{3}\)[ .\-]?|\d{3}[ .\-])\d{3}[ .\-]\d{4}")
# Digits a national (no "+") match may carry before its national number: for BR the trunk
# "0" and an optional 2-digit carrier code ("011 ...", "021 11 ...") or the country code
# without its "+" ("55 11 ..."), for US a "1". The BR metadata also strips "90" (collect
# call), which would let the matcher read the cents of "R$ 199,90 11 98765-4321" as part
# of the phone number.
_NATIONAL_PREFIX_RE: Final = {"BR": re.compile(r"(?:0(?:\d{2})?|55)?"), "US": re.compile(r"1?")}
_UNCLOSED: Final = {"(": ")", "[": "]"}
# (matcher region, match must start with "+", match must have the US layout)
_PHONE_PASSES: Final = (("BR", False, False), ("ZZ", True, False), ("US", False, True))


class _Token(NamedTuple):
    """A whitespace-separated group of a phone stretch."""

    start: int
    end: int
    digits: int
    plus: bool


def _could_hold_phone(digits: int, plus: bool) -> bool:
    return digits >= _PHONE_MIN_NATIONAL_DIGITS or (
        plus and digits >= _PHONE_MIN_INTERNATIONAL_DIGITS
    )


def _worth_matching(window: list[_Token], digits: int) -> bool:
    """Cheap test that a window of tokens may hold a phone that passes the guards.

    A national number ends in a group of at least four digits ("4321", "2671"), so a
    window of short numbers ("12 5 77 3 45 ...", quantities, list items) is skipped
    without running the matcher.
    """
    plus = any(t.plus for t in window)
    if not _could_hold_phone(digits, plus):
        return False
    return plus or any(t.digits >= 4 for t in window)


def _looks_like_phone(
    text: str, start: int, raw: str, match: PhoneNumberMatch, region: str
) -> bool:
    """Guards applied to every match the phonenumbers matcher returns."""
    if _ID_SHAPE_RE.fullmatch(raw) or _AMOUNT_RE.fullmatch(raw):
        return False
    if raw.startswith("+"):
        return True
    if region == "ZZ":  # that pass is only there for "+" numbers
        return False
    digits = "".join(_DIGIT_RE.findall(raw))
    if match.number.extension:  # "x12", "ext. 123": not part of the number proper
        digits = digits[: -len(match.number.extension)]
    if len(digits) < _PHONE_MIN_NATIONAL_DIGITS:
        return False
    if region == "US" and not _NANP_RE.match(raw):
        return False
    national = national_significant_number(match.number)
    if not digits.endswith(national):
        # The matcher normalised something unusual (letters, other digit scripts): the
        # number is still valid, so keep it rather than let it through unredacted.
        return True
    if not _NATIONAL_PREFIX_RE[region].fullmatch(digits[: len(digits) - len(national)]):
        return False
    if _BARE_DIGITS_RE.fullmatch(raw) and _ORDER_CONTEXT_RE.search(
        text, max(0, start - _ORDER_CONTEXT_CHARS), start
    ):
        return False
    return True


def _match_window(text: str, start: int, end: int) -> list[Span]:
    """Accepted phone matches in ``text[start:end]`` (plus a little context)."""
    extension = _PHONE_EXTENSION_RE.match(text, end)
    if extension:
        end = extension.end()
    w_start = max(0, start - _PHONE_CONTEXT_BEFORE)
    window = text[w_start : min(len(text), end + _PHONE_CONTEXT_AFTER)]
    spans: list[Span] = []
    for region, plus_only, nanp in _PHONE_PASSES:
        if (plus_only and "+" not in window) or (nanp and not _NANP_RE.search(window)):
            continue
        for match in PhoneNumberMatcher(window, region, leniency=Leniency.VALID):
            m_start, m_end = w_start + match.start, w_start + match.end
            raw = match.raw_string
            # The matcher keeps an opening bracket it does not close ("(+55 11 ...)" gives
            # "(+55 11 ..."): leave it in the text, so the guards see the "+" and the
            # output stays balanced, "([phone])".
            while raw[:1] in _UNCLOSED and _UNCLOSED[raw[0]] not in raw:
                raw = raw[1:].lstrip()
                m_start = m_end - len(raw)
            if m_start >= start and m_end <= end and _looks_like_phone(
                text, m_start, raw, match, region
            ):
                spans.append((m_start, m_end))
    return spans


def _find_phones(text: str) -> list[Span]:
    spans: list[Span] = []
    for stretch in _PHONE_STRETCH_RE.finditer(text):
        fragment = stretch.group()
        if not _could_hold_phone(len(_DIGIT_RE.findall(fragment)), "+" in fragment):
            continue
        # The matcher reads a whole stretch as one candidate, so a number in front of a
        # phone ("pedido 5829 11 98765-4321", "15:00 11 98765-4321") hides it. Feed it
        # windows of whitespace-separated tokens, and when nothing is accepted in a
        # window, drop its first token and try again.
        base = stretch.start()
        tokens = [
            _Token(
                base + t.start(),
                base + t.end(),
                len(_DIGIT_RE.findall(t.group())),
                "+" in t.group(),
            )
            for t in _PHONE_TOKEN_RE.finditer(fragment)
        ]
        n = len(tokens)
        tail_digits = [0] * (n + 1)
        tail_plus = [False] * (n + 1)
        next_strong = [n] * (n + 1)  # next token that has 4+ digits or a "+"
        for k in range(n - 1, -1, -1):
            tail_digits[k] = tail_digits[k + 1] + tokens[k].digits
            tail_plus[k] = tail_plus[k + 1] or tokens[k].plus
            strong = tokens[k].digits >= 4 or tokens[k].plus
            next_strong[k] = k if strong else next_strong[k + 1]
        i = 0
        while i < n and _could_hold_phone(tail_digits[i], tail_plus[i]):
            if next_strong[i] - i >= _PHONE_MAX_WINDOW_TOKENS:
                # No window starting here can pass _worth_matching: skip ahead.
                i = next_strong[i] - _PHONE_MAX_WINDOW_TOKENS + 1
                continue
            j, digits = i + 1, tokens[i].digits
            while (
                j < n
                and j - i < _PHONE_MAX_WINDOW_TOKENS
                and digits + tokens[j].digits <= _PHONE_MAX_WINDOW_DIGITS
            ):
                digits += tokens[j].digits
                j += 1
            window = tokens[i:j]
            found: list[Span] = []
            if _worth_matching(window, digits):
                found = _match_window(text, window[0].start, window[-1].end)
            if found:
                spans += found
                last = max(end for _, end in found)
                while i < n and tokens[i].start < last:
                    i += 1
            else:
                i += 1
    return _drop_overlaps(spans)


def _find_all_phones(text: str) -> list[Span]:
    """Phones with their area code (`_find_phones`) and without it (`find_local_phones`)."""
    return _drop_overlaps(_find_phones(text) + find_local_phones(text))


# --------------------------------------------------------------------------- pipeline

#: What a record's keys are written with, read as spaces by `_keys_read`.
_KEY_MARKS: Final = str.maketrans({"_": " ", '"': " "})


def _keys_read(find: Callable[[str], list[Span]]) -> Callable[[str], list[Span]]:
    """`find` reading a record's keys as words: a tool's ``"data_de_nascimento":``,
    ``"titulo_eleitor":`` and ``"client_ip":`` cue their values as the words do (the
    underscores and double quotes read as spaces: the spans stay the text's).
    """
    def found(text: str) -> list[Span]:
        return find(text.translate(_KEY_MARKS) if "_" in text or '"' in text else text)
    return found


_DETECTORS: Final[tuple[tuple[str, Callable[[str], list[Span]]], ...]] = (
    ("pix", find_br_codes),  # first: a PIX "copia e cola" code holds an e-mail, a phone or a CPF as its key
    ("email", _find_emails),
    ("ip", _keys_read(find_ips)),
    ("birth_date", _keys_read(find_birth_dates)),
    ("voter_id", _keys_read(find_voter_ids)),
    ("ssn", _keys_read(find_ssns)),
    ("pix", find_pix),
    ("iban", _find_ibans),
    ("boleto", find_boletos),
    ("cnpj", _find_cnpjs),
    ("cpf", _find_cpfs),
    ("rg", find_rgs),
    ("card", _find_cards),
    ("phone", _find_all_phones),
    ("address", find_addresses),
    ("address", find_postcodes),  # the ZIP or postcode after an address (a later pass reads its placeholder)
    ("name", find_names),
    ("name", find_people),  # last: a name anywhere in a sentence that holds a person's datum
)
#: The kinds a business may publish (kept when `redact` is told they are the business's).
CONTACT_KINDS: Final = ("email", "phone", "address")
#: Toll-free and shared-cost prefixes, and Brazil's nationwide single numbers (3003, 4003,
#: 4004 and eight digits in all): only businesses have such numbers.
_TOLL_FREE_RE: Final = re.compile(r"^(?:(?:55)?0?(?:800|300|500|900)\d{6,8}|(?:3003|4003|4004)\d{4})$")


def contact_key(kind: str, value: str) -> str:
    """How a published contact is compared: an email in lower case, a phone by its national
    digits (Brazil's country code 55 and a trunk 0 aside: "+55 (11) 98765-4321" is
    11987654321), an address by its letters and digits.
    """
    if kind == "phone":
        digits = re.sub(r"\D", "", value)
        if len(digits) > 11 and digits.startswith("55"):
            digits = digits[2:]
        return digits.lstrip("0") or digits
    if kind == "email":
        return value.strip().lower()
    return re.sub(r"[^0-9a-z]", "", value.lower())


def _kept(kind: str, value: str, keep: frozenset[str]) -> bool:
    if kind == "phone" and _TOLL_FREE_RE.match(re.sub(r"\D", "", value)):
        return True
    if kind == "pix" and "@" in value:  # a PIX key that is an e-mail: the business's when its e-mail is
        kind = "email"
    if kind not in CONTACT_KINDS or not keep:
        return False
    key = contact_key(kind, value)
    if kind == "phone":  # the business's number with or without its area code, never another area's
        return any(key == k or (len(min(key, k, key=len)) >= _LOCAL_DIGITS and
                                max(key, k, key=len).endswith(min(key, k, key=len))
                                and len(max(key, k, key=len)) - len(min(key, k, key=len)) == 2) for k in keep)
    return key in keep


#: The fewest digits of a phone without its area code.
_LOCAL_DIGITS: Final = 8


#: A contact's noun (folded or not), English and Portuguese.
_CONTACT_NOUN: Final = (r"(?:(?:cell\s+|mobile\s+|home\s+|work\s+)?phone(?:\s+number)?|cell|mobile|number|e-?mail"
                        r"(?:\s+address)?|whats(?:app|zap)?|contact|celular|telefone|fone|cel|n[uú]mero"
                        r"(?:\s+de\s+(?:celular|telefone|whats(?:app)?))?|contato|endere[çc]o\s+de\s+e-?mail)")
#: Words a business names itself by, never a person ("Loja Aurora", "Central", "Support").
_NOT_A_PERSON: Final = (r"(?!(?:Loja|Lojas|Central|SAC|Sac|Atendimento|Empresa|Matriz|Filial|Suporte|Support|Store"
                        r"|Shop|Us|Our|Customer|Service|Help|Sales|Vendas|Equipe|Team|Ouvidoria)\b)")
#: A person's name: one or two capitalised words.
_NAME: Final = _NOT_A_PERSON + r"[A-ZÀ-Ý][^\W\d_]*(?:\s+[A-ZÀ-Ý][^\W\d_]*)?"
#: What says, right before a contact, that it is a person's, not the business's, whoever
#: published it: "Bia's phone is", "her e-mail:", "my cell", "meu celular é", "seu e-mail",
#: "o celular da Bia é", "WhatsApp do João:", "telefone pessoal da cliente", "o celular dela",
#: "the phone of the customer is", "Call Bia at". Not "your photos to", "Tire suas dúvidas:",
#: "Here's the number:", "McDonald's support line:" (no contact noun right after the owner).
_A_PERSONS_RE: Final = re.compile(
    r"(?:(?:\b(?!(?i:store|shop|company|business|team|office|brand|support|center|centre|hotel|clinic"
    r"|restaurant|bank|airline|agency|firm|pharmacy|bakery|gym|school)['’´]s)[^\W\d_]+['’´]s|\b(?i:her|his|my|your|meu|minha|seu|sua|teu|tua))\s+"
    r"(?i:(?:personal|private|own|pessoal|particular)\s+)?(?i:" + _CONTACT_NOUN + r")"
    r"|(?i:" + _CONTACT_NOUN + r")(?i:\s+(?:pessoal|particular|privado))?\s+"
    r"(?:(?i:dela|dele|delas|deles)|(?i:d[oa]s?)\s+(?:(?i:cliente|clientes|comprador[a]?|h[oó]spede)\b|" + _NAME + r"))"
    r"|(?i:" + _CONTACT_NOUN + r")\s+(?i:of)\s+(?:(?i:the\s+)?(?i:customer|client|guest|buyer)\b|" + _NAME + r")"
    r"|\b(?i:call|text|reach|contact|message|ligue\s+para|fale\s+com|chame|mande\s+mensagem\s+para)\s+" + _NAME +
    r"(?:\s+(?i:at|on|via|no|pelo|pela))?"
    r")\s*(?:[:=-]|\b(?i:is|[ée]|was|era))?\s*$")


def _one_pass(text: str, counts: dict[str, int], keep: frozenset[str] = frozenset()) -> str:
    for kind, find in _DETECTORS:
        found = find(text)
        # a contact of the business's is kept, unless the text gives it as a person's
        kept = [span for span in found if _kept(kind, text[span[0]:span[1]], keep)
                and not (keep and _A_PERSONS_RE.search(text, max(0, span[0] - 60), span[0]))]
        # a part of a kept contact is kept with it ("(11) 98765-4321" holds a mobile's shape)
        spans = _drop_overlaps(span for span in found if span not in kept
                               and not any(s < span[1] and span[0] < e for s, e in kept))
        if spans:
            text = _replace(text, spans, PLACEHOLDERS[kind])
            counts[kind] = counts.get(kind, 0) + len(spans)
    return text


#: Who writes records that may hold a customer's profile: a tool's (a CRM lookup), and the
#: system prompt (a customer's context put there). A tool's record that names a customer
#: gives the customer's contacts from there on: never the business's, whoever repeats them.
_RECORDS: Final = frozenset({"tool", "system"})
#: A preposition right before a contact: "your photos to", "suas dúvidas no", "seu pedido
#: pelo" send the customer's thing to the contact, which is then not theirs.
_SENT_TO_RE: Final = re.compile(r"(?i)\b(?:para|pra|pro|to|at|no|na|pelo|pela|em|on|via)\s*[:]?\s*$")
#: A customer's record in the business's instructions ("Cliente: Rodrigo Paiva, telefone
#: ...", "Perfil do cliente: ...", "Nome: Ana Souza"): the contacts after it in the system
#: prompt are the customer's, unless words right before one offer it ("Nosso SAC: ...").
_CUSTOMERS_RE: Final = re.compile(
    r"(?i)(?<!atendimento\sao\s)(?<!servi[çc]o\sao\s)(?<!central\sdo\s)(?<!relacionamento\scom\so\s)"
    r"\b(?:cliente|customer(?!\s+(?:service|care|support|success))|client|destinat[áa]ri[oa]|recipient|comprador"
    r"|buyer|titular|perfil|profile|usu[áa]rio|user|paciente|patient|h[óo]spede|guest|assinante|subscriber|lead"
    r"|caller|account\s+holder|contexto\s+do\s+atendimento)(?![\w])")
#: A person's name as a system prompt labels it ("Nome: Ana Souza"): a customer's context
#: there (in a tool's record, "nome:" names a store or a product as often).
_NAMED_RE: Final = re.compile(r"(?i)\b(?:nome|name)\s*:")


def _names_a_customer(speaker: str, text: str) -> bool:
    """Whether `text`, a tool's record or the system prompt, names a customer (`_CUSTOMERS_RE`;
    "Nome:" in the system prompt): the contacts after it are the customer's.
    """
    return (speaker in _RECORDS and _CUSTOMERS_RE.search(text) is not None) or (
        speaker == "system" and _NAMED_RE.search(text) is not None)


def _before(sentence: str, start: int, found: list[Span], offers: list[Span]) -> str:
    """The words of `sentence` before `start`, as `published.offered` reads them: each
    earlier contact it offers a NUL (a list goes on: "X ou Y"), each other one a space.
    """
    out, at = [], 0
    for s, e in found:
        if e > start:
            break
        out += [sentence[at:s], "\x00" if (s, e) in offers else " "]
        at = e
    return "".join(out) + sentence[at:start]


def kept_contacts(pieces: Iterable[tuple[str, str]]) -> frozenset[str]:
    """The contacts a conversation shows to be the business's, as `contact_key`s.

    Args:
        pieces: ``(speaker, text)`` of the transcript in order (``customer`` for what the
            customer wrote, including a tool result's customer-written fields).

    Returns:
        The keys of the emails, phones and addresses the business side offers as its own
        (`insika_knowledge.privacy.published.offered`: the words right before the contact
        offer it, "Nosso SAC atende no", "Ligue para", "Fale conosco:", or the words right
        after, "..., que é o nosso fixo"; the first sentence with a contact of a reply to
        the customer asking for one; anything in the system prompt before it names a
        customer, "Cliente:", "Nome:", "Perfil do cliente", `_CUSTOMERS_RE`), minus any the
        customer wrote anywhere in the conversation and any the business gives as the
        customer's ("seu e-mail ...", "your phone: ...").
    """
    business: set[str] = set()
    customer: set[str] = set()
    finders = {"email": _find_emails, "phone": _find_all_phones, "address": find_addresses}
    asked = False  # the customer asked for the business's contact: the reply's first one offers it
    for speaker, text in pieces:
        if speaker == "customer":  # a number the customer said one digit at a time is theirs too
            customer |= _spelled_phones(unmask(text))
            asked = asks_for_contact(text)
        replying = asked and speaker in ("agent", "human")
        profile = False  # a system prompt that has named a customer: its contacts are theirs from there on
        for sentence in _SENTENCE_END_RE.split(text):
            kinds: dict[Span, str] = {}
            for kind, find in finders.items():
                for span in find(sentence):
                    kinds.setdefault(span, kind)
            found = sorted(_drop_overlaps(kinds))
            offers: list[Span] = []
            for start, end in found:
                key = contact_key(kinds[(start, end)], sentence[start:end])
                if speaker == "customer":
                    customer.add(key)
                    continue
                before = _before(sentence, start, found, offers)
                profile = profile or _names_a_customer(speaker, before)
                if profile and speaker == "tool":  # a customer's record a tool returned: theirs wherever said
                    customer.add(key)
                    continue
                system = speaker == "system" and not profile
                answers = replying and not towards(before)
                yours = _YOURS_RE.search(sentence, 0, start) is not None and not _SENT_TO_RE.search(sentence, 0, start)
                if (system or answers or offered(before) or ours_after(sentence[end:])) and not yours:
                    business.add(key)
                    offers.append((start, end))
            replying = replying and not found  # only the reply's first sentence with a contact
            profile = profile or _names_a_customer(speaker, sentence)
        asked = asked and speaker not in ("agent", "human")
    return frozenset(business - customer)


def people_named(pieces: Iterable[tuple[str, str]], keep: frozenset[str] = frozenset()) -> frozenset[str]:
    """The people a conversation names beside their data, as folded words (two letters or
    more): what `redact` takes as ``[name]`` in its messages, the system prompt's aside
    (it names the business's own people).

    What a concept written from the conversation must not keep anywhere, with or without
    a datum beside it ("Kleber Tavares pediu troca" in a description, ``troca-kleber-tavares``
    as its name, "Obrigado, Kleber!" in its body): `insika_knowledge.extract.candidates`.

    Args:
        pieces: ``(speaker, text)`` of the transcript (`kept_contacts`'s).
        keep: the business's contacts (`kept_contacts`): never a person's datum.
    """
    words: set[str] = set()
    for speaker, text in pieces:
        if speaker == "system":
            continue
        found = redact(text, keep)
        if found.counts.get("name"):
            words |= removed_names(text, found.text)
    return frozenset(words)


def _spelled_phones(text: str) -> set[str]:
    """The `contact_key`s of the phones in `text` said or written one digit at a time after a
    word naming a datum ("meu cel 1 1 9 8 7 ...": `_spelled_out`'s reading).
    """
    keys: set[str] = set()
    for m in _SPELLED_RE.finditer(text) if _SPELLED_RE.search(text) else ():
        if _cued(text, m.start()):
            digits = "".join(_DIGIT_WORDS.get(w.lower(), w) for w in re.findall(r"[^\W_]+", m.group()))
            keys |= {contact_key("phone", digits[a:b]) for a, b in _find_all_phones(digits)}
    return keys


#: A sentence's end for `kept_contacts`: not the dot of a short abbreviation ("Av. Paulista",
#: "R. Augusta", "Dr. Silva"), which would cut the cue ("Nossa loja fica na Av. ...") away.
#: A title a street's name is abbreviated with ("Av. Brig. Faria Lima", "R. Eng. Prestes
#: Maia"): its period ends no sentence.
_TITLES: Final = ("Brig", "Eng", "Pres", "Gen", "Cel", "Prof", "Des", "Mal", "Com", "Sta", "Sto", "Cons", "Dep",
                  "Gov", "Sen", "Maj", "Cap", "Ten", "Alm", "Pça", "Rod", "Est", "Trav", "Jd", "Vl", "Pq")
_SENTENCE_END_RE: Final = re.compile(r"(?<=[.!?])(?<!\b[A-Z][a-z]\.)(?<!\b[A-Z]\.)"
                                     + "".join(rf"(?<!\b{t}\.)" for t in _TITLES) + r"\s+|\n+")
#: What says, right before a contact, that it is the customer's ("seu e-mail", "your phone:",
#: "o celular do cliente"): the business repeating it is no business contact.
_YOURS_RE: Final = re.compile(
    r"(?i)\b(?:seus?|suas?|teus?|tuas?|your|yours|vossa|d[oa]s? client[ea]s?|of the customer)"
    r"(?:\s+[\w-]+){0,2}\s*(?:[:=-]|\b[ée]|\bis)?\s*$")


# Characters that hide a datum from the detectors without changing what a reader sees:
# zero-width spaces and joiners, the word joiner, the BOM, the soft hyphen, the combining
# grapheme joiner, the Mongolian vowel separator, the invisible operators and the tag
# characters (U+E0000-U+E007F) are dropped; a digit in a circle, in parentheses or with a
# full stop or comma ("\u2460", "\u24f5", "\u2474", "\u2488", "\U0001f102") is its digit, and so
# is an emoji keycap ("1\ufe0f\u20e3", `_KEYCAP_RE`); full-width ASCII ("４１１１", "＠", "．")
# becomes ASCII, and so does the one-dot leader ("gmail․com"); a percent-encoded "@" between
# word characters ("joana%40gmail.com") becomes "@"; a digit of any script ("٥٢٩") is its
# ASCII digit.
_INVISIBLE: Final = {
    **dict.fromkeys(map(ord, "\u200b\u200c\u200d\u2060\ufeff\u00ad\u034f\u180e\u2061\u2062\u2063\u2064"), None),
    # marks and controls of direction, fillers that show as nothing or a blank (an attacker put
    # them between a CPF's digits: "1\u200e2\u200e3...")
    **dict.fromkeys(map(ord, "\u200e\u200f\u061c\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
                             "\u115f\u1160\u3164\uffa0\u2800\u17b4\u17b5\u180b\u180c\u180d\u180f"), None),
    # superscript and subscript digits are their digits ("¹²³.⁴⁵⁶.⁷⁸⁹-⁰⁹")
    **{code: str(unicodedata.digit(chr(code))) for code in (0xB9, 0xB2, 0xB3, *range(0x2070, 0x208A))
       if unicodedata.digit(chr(code), None) is not None},
    **dict.fromkeys(range(0xE0000, 0xE0080), None),
    # 1-9 circled, negative circled (two sets), double circled, in parentheses, with a full stop
    **{start + i: str(i + 1) for start in (0x2460, 0x2776, 0x2780, 0x278A, 0x24F5, 0x2474, 0x2488) for i in range(9)},
    0x24EA: "0", 0x24FF: "0", 0x1F100: "0",  # circled, negative circled, with a full stop
    **{0x1F101 + i: str(i) for i in range(10)},  # with a comma
}
#: An emoji keycap ("1\ufe0f\u20e3"; text or emoji style or none) or a digit in a combining
#: circle or square: the digit alone. Elsewhere a variation selector stays ("❤\ufe0f").
_KEYCAP_RE: Final = re.compile("([0-9#*])[\ufe0e\ufe0f]?[\u20e3\u20dd\u20de]")
_FULL_WIDTH: Final = {**{code: code - 0xFEE0 for code in range(0xFF01, 0xFF5F)}, 0x2024: ord(".")}
#: What a URL's query, a web page or a JSON string writes for a datum's punctuation: a
#: percent-encoded "@", ".", "-", "+" or "_" (``cpf=529%2E982%2E247%2D25``, ``tel=%2B5511...``),
#: an HTML character reference or a JSON escape of "@" (``joana&#64;gmail.com``, ``&#x40;``,
#: ``&commat;``, ``joana\u0040gmail.com``), before a letter or digit: the character itself.
_ENCODED_RE: Final = re.compile(
    r"(?:(?<=[\w.=+-])%(?:40|2[BbDdEe]|5[Ff])|&#0*64;|&#[xX]0*40;|&commat;|\\u0040)(?=[A-Za-z0-9])")
_DECODED: Final = {"%40": "@", "%2b": "+", "%2d": "-", "%2e": ".", "%5f": "_"}
#: A dash of another kind between two digits ("529.982.247–25", "536−22"): the
#: detectors' "-"; runs of blanks or tabs between two digits are one blank.
_DIGIT_DASH_RE: Final = re.compile("(?<=[0-9])[\u2010-\u2015\u2212\ufe58\ufe63](?=[0-9])")
_DIGIT_GAP_RE: Final = re.compile(r"(?<=[0-9])(?:\t|[ \t]{2,})(?=[0-9])")
#: A decimal digit of another script than ASCII.
_OTHER_DIGIT_RE: Final = re.compile(r"(?![0-9])\d")


#: A variation selector or a combining mark after a digit or a character of an address
#: ("4\u03011\u0301...", "1\ufe0f1\ufe0f..."): a digit carries no accent, so it hides the
#: datum and shows nothing; after a letter an accent stays ("e\u0301"), after an emoji its
#: selector ("❤\ufe0f").
_MARK_AFTER_DATUM_RE: Final = re.compile(
    "(?<=[0-9@.+\\-])[\ufe00-\ufe0f\U000e0100-\U000e01ef\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff"
    "\u20d0-\u20ff\ufe20-\ufe2f]+")


def unmask(text: str) -> str:
    """`text` with invisible characters dropped, full-width ASCII made ASCII, every
    decimal digit written as an ASCII one, another dash between digits a "-", a datum's
    encoded punctuation decoded (`_ENCODED_RE`) and a wide gap between digits one blank.

    What the detectors read: a shortcut that decides `redact` would find nothing must
    look at this text, not the raw one (``joana＠gmail.com`` has no "@").
    """
    if not text.isascii():
        text = _OTHER_DIGIT_RE.sub(lambda m: str(unicodedata.decimal(m.group())), text.translate(_INVISIBLE))
        text = _KEYCAP_RE.sub(r"\1", text.translate(_FULL_WIDTH))
        text = _DIGIT_DASH_RE.sub("-", _MARK_AFTER_DATUM_RE.sub("", text))
    if "%" in text or "&" in text or "\\u" in text:
        text = _ENCODED_RE.sub(lambda m: _DECODED.get(m.group().lower(), "@"), text)
    if "  " in text or "\t" in text:
        text = _DIGIT_GAP_RE.sub(" ", text)
    return text


#: Digit words, Portuguese and English (folded): a number dictated digit by digit.
_DIGIT_WORDS: Final = {
    "zero": "0", "um": "1", "uma": "1", "dois": "2", "duas": "2", "tres": "3", "três": "3", "quatro": "4",
    "cinco": "5", "seis": "6", "meia": "6", "sete": "7", "oito": "8", "nove": "9",
    "oh": "0", "one": "1", "two": "2", "three": "3", "four": "4", "five": "5", "six": "6", "seven": "7",
    "eight": "8", "nine": "9",
    # an area code or a pair said as one number ("onze nove oito sete ...")
    "dez": "10", "onze": "11", "doze": "12", "treze": "13", "catorze": "14", "quatorze": "14", "quinze": "15",
    "dezesseis": "16", "dezessete": "17", "dezoito": "18", "dezenove": "19", "vinte": "20", "trinta": "30",
    "quarenta": "40", "cinquenta": "50", "sessenta": "60", "setenta": "70", "oitenta": "80", "noventa": "90",
    "ten": "10", "eleven": "11", "twelve": "12", "thirteen": "13", "fourteen": "14", "fifteen": "15",
    "sixteen": "16", "seventeen": "17", "eighteen": "18", "nineteen": "19", "twenty": "20", "thirty": "30",
    "forty": "40", "fifty": "50", "sixty": "60", "seventy": "70", "eighty": "80", "ninety": "90",
}


def _alternation(words: Iterable[str]) -> str:
    """A regular expression matching any of `words`, as a trie: one branch per first letter,
    and so on ("c(?:atorze|in(?:co|quenta))"), so a position that starts none is left after a
    character, not after trying each word (about 3 times faster than a flat list of 70).
    """
    tree: dict[str, Any] = {}
    for word in words:
        node = tree
        for char in word:
            node = node.setdefault(char, {})
        node[""] = {}

    def branch(node: dict[str, Any]) -> str:
        alternatives = [re.escape(char) + branch(rest) for char, rest in sorted(node.items()) if char]
        if not alternatives:
            return ""
        if "" in node:  # a word ends here: what follows is optional
            return f"(?:{'|'.join(alternatives)})?"
        return alternatives[0] if len(alternatives) == 1 else f"(?:{'|'.join(alternatives)})"

    return f"(?:{branch(tree)})"


_DIGIT_WORD: Final = _alternation(_DIGIT_WORDS)
#: Between two digits said one at a time: spaces (no line break: two rows of a table are two
#: rows), or one comma, semicolon, hyphen, slash or dot with spaces around it or not.
_ONE_AT_A_TIME_GAP: Final = r"(?:[^\S\n]+|[^\S\n]*[,;/.\-][^\S\n]*)"
#: Eight digit words or single digits or more in a row ("um dois três ...", "1 1 9 8 7 ...",
#: "1.2.3.4..."), the first of them maybe an area code ("(11) 9 8 7 ...").
_SPELLED_RE: Final = re.compile(
    rf"(?i)(?:\(\d\d\)|\b(?:{_DIGIT_WORD}|\d\d?)\b)(?:{_ONE_AT_A_TIME_GAP}\b(?:{_DIGIT_WORD}|\d)\b){{7,}}")
#: The words that name a datum right before its digits said or written one at a time (which,
#: without such a word, are as often a list of ratings, steps or sizes, "five, four, five,
#: three..."): a phone's, a document's, a card's, singular or plural.
_CUE_WORDS: Final = (
    r"(?:cel(?:ular)?(?:es)?|whats(?:app)?|zap|wpp|telefones?|tel|fones?|fixo|contatos?|ligar|ligue|liga"
    r"|n[úu]meros?|phones?|cell(?:phone)?s?|mobiles?|numbers?|call(?:\s+me)?|text\s+me|cpfs?|cnpjs?|rgs?"
    r"|documentos?|documents?|doc|cart(?:[ãa]o|[õo]es)|cards?|cr[ée]dito|credit|d[ée]bito|debit|pix|chave)")
#: A cue word, then only the words that join a cue to its datum ("o meu número é", "my number
#: is", "número do cartão:"), at the end of what precedes the digits (`more.cue_at_end`).
_ONE_AT_A_TIME_CUE_RE: Final = cue_at_end(_CUE_WORDS)
#: The words before a cue word that make it a channel or a topic, not the name of the digits
#: that follow ("Notas do atendimento por telefone: 4 4 3 ...", "Parcelas no cartão: 7 7 4 ...").
_CHANNEL_BEFORE_RE: Final = re.compile(r"(?i)\b(?:por|pelo|pela|via|by|over|no|na|nos|nas|do|da|dos|das|of)\s+$")


def _cued(text: str, at: int) -> bool:
    """True when a word naming a datum ends right before position `at` (`_ONE_AT_A_TIME_CUE_RE`)
    and names it, not a channel or topic (`_CHANNEL_BEFORE_RE`).
    """
    cue = _ONE_AT_A_TIME_CUE_RE.search(text, max(0, at - 48), at)
    return cue is not None and not _CHANNEL_BEFORE_RE.search(text, max(0, cue.start() - 8), cue.start())


#: A run of digits that holds no datum whole is read window by window (a CPF and a phone
#: said in one breath, a digit more after one) up to this many digits; the lengths tried,
#: longest first: a card's, a CNPJ's, a CPF's or mobile's, a landline's.
_WINDOWED_MAX: Final = 40
_WINDOWS: Final = (19, 18, 17, 16, 15, 14, 13, 11, 10)

Read = Callable[[str, dict[str, int], frozenset[str]], str]


def _spelled_out(text: str, counts: dict[str, int], keep: frozenset[str], read: Read | None = None) -> str:
    """``text`` with each number dictated or written digit by digit after a word that names a
    datum ("CPF um dois três ...", "cel 1 1 9 8 ...": `_cued`) replaced by the
    placeholders its digits get (`read`, default `_one_pass`: every detector), when they
    hold a datum; other runs stay as written.
    """
    if not _SPELLED_RE.search(text):
        return text
    read = read or _one_pass
    parts, last = [], 0
    for m in _SPELLED_RE.finditer(text):
        if not _cued(text, m.start()):
            continue
        said = re.findall(r"[^\W_]+", m.group())
        found: dict[str, int] = {}
        as_digits = _read_digits("".join(_DIGIT_WORDS.get(w.lower(), w) for w in said), found, keep, read)
        if not found:
            continue
        parts += [text[last:m.start()], as_digits]
        last = m.end()
        for kind, n in found.items():
            counts[kind] = counts.get(kind, 0) + n
    return "".join(parts) + text[last:]


def _read_digits(digits: str, found: dict[str, int], keep: frozenset[str], read: Read) -> str:
    """`read` of `digits`; when that finds nothing and they are at most `_WINDOWED_MAX`, each
    datum of a window (`_WINDOWS`, leftmost first) in its place, the digits between as they are.
    """
    whole = read(digits, found, keep)
    if found or len(digits) > _WINDOWED_MAX:
        return whole
    pieces, at = [], 0
    while at < len(digits):
        for size in _WINDOWS:
            seen: dict[str, int] = {}
            window = digits[at:at + size]
            if len(window) == size and _may_hold(window) and (done := read(window, seen, keep)) and seen:
                pieces.append(done)
                for kind, n in seen.items():
                    found[kind] = found.get(kind, 0) + n
                at += size
                break
        else:
            pieces.append(digits[at])
            at += 1
    return " ".join(pieces) if found else digits


def _may_hold(window: str) -> bool:
    """Whether the detectors may find a datum in `window` (digits only): a card's length,
    issuer digit and Luhn check, a CNPJ's or CPF's check digits, or a Brazilian phone's shape
    (an area code 11-99, then a mobile's 9 or a landline's 2-5). What no detector would take is
    not read at all (a run of forty zeros was read 360 times).
    """
    size = len(window)
    if size >= 13:
        card = window[0] in "23456" and _safe(_luhn.is_valid, window)
        return card or (size == 14 and _safe(_cnpj.is_valid, window))
    phone = window[0] != "0" and window[1] != "0" and (
        window[2] == "9" if size == 11 else window[2] in "2345")
    return phone or (size == 11 and _safe(_cpf.is_valid, window))


def redact(text: str, keep: frozenset[str] = frozenset()) -> Redaction:
    """Replace the personal data in ``text`` with typed placeholders.

    Emails, phone numbers, CPFs, CNPJs, payment card numbers, IBANs, PIX keys, boleto
    lines, RG numbers, street addresses, IP addresses, dates of birth, voter ids, US
    Social Security numbers and a person's name next to a contact become ``[email]``,
    ``[phone]``, ``[cpf]``, ``[cnpj]``, ``[card]``, ``[iban]``, ``[pix]``, ``[boleto]``,
    ``[rg]``, ``[address]``, ``[ip]``, ``[birth_date]``, ``[voter_id]``, ``[ssn]`` and
    ``[name]`` (see `PLACEHOLDERS`; dates of birth, voter ids, an IPv4 address and an
    SSN not written ``ddd-dd-dddd`` only after the words that name them:
    `insika_knowledge.privacy.cued`). CPFs, CNPJs,
    cards and IBANs are only replaced when their check digits are valid (the others fail
    closed, see `insika_knowledge.privacy.more`). CEPs, order numbers, prices, dates,
    times, quantities and ids are kept, and so are toll-free numbers and the business
    contacts in `keep`.

    Args:
        text: Any string, typically a model-written summary about to be stored.
        keep: `contact_key`s of contacts the conversation shows to be the business's
            (`kept_contacts`): left as they are.

    Returns:
        A `Redaction` with the redacted text and the number of replacements per kind.
        The result is stable: redacting its text again changes nothing. A text with
        nothing to redact comes back as it was given (the characters that can hide a
        datum, see `unmask`, are dropped only from a text that held one).

    Raises:
        TypeError: If ``text`` is not a ``str``. Nothing is raised for any ``str`` input.
    """
    if not isinstance(text, str):
        raise TypeError(f"redact() takes a str, not {type(text).__name__}")
    given, text = text, unmask(text)
    counts: dict[str, int] = {}
    text = _spelled_out(text, counts, keep)
    while True:  # terminates: each changing pass replaces text outside placeholders
        redacted = _one_pass(text, counts, keep)
        if redacted == text:
            return Redaction(text=text if counts else given, counts=counts)
        text = redacted



#: The kinds no learned concept ever needs, found by their check digits alone (no context):
#: what the learning queue removes before a turn is written (`redact_kinds`).
UNNEEDED_KINDS: Final = ("iban", "cnpj", "cpf", "card")


def redact_kinds(text: str, kinds: tuple[str, ...] = UNNEEDED_KINDS) -> str:
    """``text`` with the personal data of `kinds` replaced by their placeholders (one pass
    of those detectors, in `redact`'s order; about 1 ms per KiB of number-dense text).

    Unlike `redact`, which needs the whole conversation to tell a business's published
    contacts from a customer's, these kinds are a customer's whatever the context.
    """
    if not any(ch.isdigit() for ch in text) and not _SPELLED_RE.search(text):
        return text
    counts: dict[str, int] = {}
    masked = _spelled_out(unmask(text), counts, frozenset(), _kinds_pass(kinds))
    redacted = _kinds_pass(kinds)(masked, counts, frozenset())
    return redacted if counts else text


@functools.cache
def _kinds_pass(kinds: tuple[str, ...]) -> Read:
    """One pass of the detectors of `kinds`, in `redact`'s order, counting what it replaces."""
    def one_pass(text: str, counts: dict[str, int], keep: frozenset[str]) -> str:
        for kind, find in _DETECTORS:
            if kind in kinds and (spans := _drop_overlaps(find(text))):
                text = _replace(text, spans, PLACEHOLDERS[kind])
                counts[kind] = counts.get(kind, 0) + len(spans)
        return text
    return one_pass


def redact_name(name: str, keep: frozenset[str] = frozenset()) -> Redaction:
    """Redact a proposed concept name (a slug or words): its separators read as spaces (a
    credential in that form is ``<SECRET>``: "minha-senha-girassol123", counted as
    ``secret``), and in it the words right before a contact placeholder taken too (no
    capitals tell a person's name in a slug: fail closed).
    """
    as_written = redact(name, keep)  # hyphens intact first: a PIX key or a CPF keeps its shape
    spaced = re.sub(r"[-_]+", " ", as_written.text)
    secret_free = scrub(spaced)
    found = redact(secret_free, keep)
    counts = dict(as_written.counts)
    if secret_free is not spaced:
        counts["secret"] = secret_free.count(SECRET) - spaced.count(SECRET)
    for kind, n in found.counts.items():
        counts[kind] = counts.get(kind, 0) + n
    spans = words_next_to_marks(found.text)
    if not spans:
        return Redaction(found.text, counts)
    counts["name"] = counts.get("name", 0) + len(spans)
    return Redaction(_replace(found.text, _drop_overlaps(spans), PLACEHOLDERS["name"]), counts)
