"""Personal data known by the words before it: an IP address, a date of birth, a voter id,
a US Social Security number.

Each finder returns the spans of one kind in a text; `insika_knowledge.privacy.redact`
runs them in its pipeline and replaces each span with the kind's placeholder.

- ``ip``: an IPv4 address (four numbers, each 0-255, read by the standard library's
  `ipaddress`; dotted, or with spaces or hyphens as a slug writes it) after "IP" ("meu IP
  é ...", "IP address: ...", "endereço de IP ...", "cliente-ip-189-45-12-200"), and an
  IPv6 address anywhere (two colons or more and a hexadecimal group, so a time such as
  "10:30:00" is no address). A version number ("versão 2.4.1.0") has no cue.
- ``birth_date``: a date (``12/03/1985``, ``1985-03-12``, ``12 de março de 1985``,
  ``March 12, 1985``, ``12th March 1985``) right after a word of birth ("nasci (em)",
  "nascido(a) em", "data de nascimento (dela)", "dt nasc", "nasc.", "DN", "meu aniversário",
  "DOB", "D.O.B.", "date of birth", "born (on)", "my birthday"). Any other date (a
  sale's, a delivery's, the store's anniversary) is kept.
- ``voter_id``: a Brazilian voter id (título de eleitor, 12 digits, spaces or dots allowed)
  after "título (de eleitor)", "título eleitoral", "inscrição eleitoral", "voter id" or
  "voter registration (number)"; fail closed (its two check digits
  are not required: python-stdnum has no module for it).
- ``ssn``: a US Social Security number: ``536-22-8741`` anywhere when `stdnum.us.ssn`
  accepts it (no area 000, 666 or 900-999, no group 00, no serial 0000, none of the
  numbers published as examples) and no code's word ("código", "SKU", "part", "peça")
  stands up to four words before it; after "SSN", "SS#" or "social security (number)" / "my
  social", nine digits in any grouping, whether they check or not (fail closed).
"""

from __future__ import annotations

import ipaddress
import re
from typing import Final

from stdnum.us import ssn as _ssn

Span = tuple[int, int]

#: The characters other than ASCII letters that a case-blind pattern reads as ASCII letters
#: (Python's `re` with IGNORECASE: "İ" and "ı" are "i", "ſ" is "s", the Kelvin sign "k").
_CASE_BLIND: Final = {0x130: "i", 0x131: "i", 0x17F: "s", 0x212A: "k"}


def _cues(text: str) -> str:
    """`text` as a case-blind pattern reads its letters, in lower case: where a finder looks
    for the words it cannot match without (a cheap test before its full pattern).
    """
    return text.translate(_CASE_BLIND).lower()


def _has_digit(text: str) -> bool:
    return _DIGIT_RE.search(text) is not None


_DIGIT_RE: Final = re.compile(r"\d")

# --------------------------------------------------------------------------- ip

_IP_CUE: Final = r"(?:\bIP\b|\bIPv[46]\b|endere[çc]o\s+(?:de\s+)?IP|IP\s+address)"
_IPV4_AFTER_CUE_RE: Final = re.compile(
    rf"(?i){_IP_CUE}[^\n\d]{{0,30}}?(?P<ip>(?<![\d.])\d{{1,3}}(?P<sep>[.\- ])\d{{1,3}}(?P=sep)\d{{1,3}}"
    r"(?P=sep)\d{1,3}(?![\d]|\.\d))")
_IPV6_RE: Final = re.compile(
    r"(?<![\w:])(?=[0-9A-Fa-f:]*[A-Fa-f0-9]{3})[0-9A-Fa-f]{0,4}(?::[0-9A-Fa-f]{0,4}){2,7}(?![\w:])")


def find_ips(text: str) -> list[Span]:
    """IPv4 addresses after an IP cue, and IPv6 addresses anywhere (see the module doc).

    Each pattern runs only on a text that holds what it cannot match without: the cue's
    "ip" and a digit, two colons.
    """
    spans = [m.span("ip") for m in _IPV4_AFTER_CUE_RE.finditer(text)
             if _address(re.sub(r"[\- ]", ".", m.group("ip")))] if "ip" in _cues(text) and _has_digit(text) else []
    if text.count(":") >= 2:
        spans += [m.span() for m in _IPV6_RE.finditer(text) if m.group().count(":") >= 2 and _address(m.group())]
    return spans


def _address(value: str) -> bool:
    """True when `value` is an IP address the standard library reads."""
    try:
        ipaddress.ip_address(value)
    except ValueError:
        return False
    return True


# --------------------------------------------------------------------------- birth date

_MONTHS: Final = (
    r"(?:janeiro|fevereiro|mar[çc]o|abril|maio|junho|julho|agosto|setembro|outubro|novembro|dezembro"
    r"|jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?"
    r"|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?")
_DATE: Final = (
    r"(?:\d{1,2}[/.\-]\d{1,2}[/.\-]\d{2,4}"  # 12/03/1985, 12-03-85, 12/3/90
    r"|\d{4}-\d{1,2}-\d{1,2}"  # 1985-03-12
    rf"|(?:the\s+)?\d{{1,2}}(?:º|o|st|nd|rd|th)?\s+(?:de\s+|of\s+)?{_MONTHS},?(?:\s+(?:de\s+)?\d{{4}})?"
    # 12 de março de 1985, 12th March 1985, the 3rd of January, 2001
    rf"|{_MONTHS}\s+\d{{1,2}}(?:st|nd|rd|th)?,?\s+\d{{4}})")  # March 12, 1985
_BIRTH_CUE: Final = (
    r"(?:\bnasci(?:do|da)?\b|\bnasceu\b|\bbirthday\b|\banivers[áa]rio\b|d(?:ata|t)\.?\s+(?:de\s+)?nasc(?:imento|\.)?|\bnasc(?:imento)?\b\.?|\bDN\b"
    r"|\bD\.?O\.?B\b\.?|(?:meu|minha|seu|sua|my|your|his|her)\s+(?:anivers[áa]rio|birthday)"
    r"|date\s+of\s+birth|birth\s*date|\bborn\b)")
#: Between a word of birth and its date: whose it is ("dela", "do cliente") and a verb or mark.
_BIRTH_GAP: Final = (
    r"(?:\s+(?:dele|dela|do\s+cliente|da\s+cliente|of\s+the\s+customer))?"
    r"(?:\s*(?:é|eh|e|is|was|foi|:|=|-|\u2014|\u2013|em|on|dia|no\s+dia|in)\s*)*\s*")
_BIRTH_DATE_RE: Final = re.compile(rf"(?i){_BIRTH_CUE}{_BIRTH_GAP}(?P<date>{_DATE})(?![\d])")


#: What every word of birth holds (`_BIRTH_CUE`, case-blind): "nasc", "dn", the "ob" or
#: "o.b" of "DOB" / "D.O.B.", "anivers", "birth" ("birthday", "date of birth"), "born".
_BIRTH_NEEDS: Final = ("nasc", "dn", "ob", "o.b", "anivers", "birth", "born")


def find_birth_dates(text: str) -> list[Span]:
    """Dates right after a word of birth (see the module doc); only on a text with a digit
    and what a word of birth holds (`_BIRTH_NEEDS`).
    """
    if not _has_digit(text):
        return []
    folded = _cues(text)
    if not any(need in folded for need in _BIRTH_NEEDS):
        return []
    return [m.span("date") for m in _BIRTH_DATE_RE.finditer(text)]


# --------------------------------------------------------------------------- voter id

_VOTER_ID_RE: Final = re.compile(
    r"(?i)(?:t[íi]tulo(?:\s+(?:de\s+)?eleitor(?:al)?)?|inscri[çc][ãa]o\s+eleitoral"
    r"|voter\s+(?:id|registration)(?:\s+(?:number|no\.?|#))?)"
    r"\s*(?:n[º°o.]?\s*)?(?:(?:é|eh|e|is|:|=|-)\s*)*(?P<number>\d(?:[ .]?\d){11})(?!\d)")


#: What every voter-id cue holds (case-blind): the "tulo" of "título", "eleitoral", "voter".
_VOTER_NEEDS: Final = ("tulo", "eleitoral", "voter")


def find_voter_ids(text: str) -> list[Span]:
    """Voter ids (12 digits) after a voter-id cue (see the module doc); only on a text with
    a digit and what a cue holds (`_VOTER_NEEDS`).
    """
    if not _has_digit(text) or not any(need in _cues(text) for need in _VOTER_NEEDS):
        return []
    return [m.span("number") for m in _VOTER_ID_RE.finditer(text)]


# --------------------------------------------------------------------------- ssn

_SSN_DASHED_RE: Final = re.compile(r"(?<!\d)(?<!\d-)\d{3}-\d{2}-\d{4}(?!\d)(?!-\d)")  # a slug's hyphens too
_SSN_CUED_RE: Final = re.compile(
    r"(?i)(?:\bSSN\b|\bSS\s*#|\bsocial\s+security(?:\s+(?:number|no\.?|#))?|\b(?:my|his|her|your)\s+social\b)"
    r"[^\n\d]{0,30}?(?P<number>(?<!\d)\d{3}[ .-]?\d{2}[ .-]?\d{4}(?![\d]))")


#: A code's word shortly before a number in the SSN's shape ("Código da peça de reposição:
#: 310-22-4518", "part no. 219-09-9999"): a code, unless a cue names an SSN.
_SSN_CODE_BEFORE_RE: Final = re.compile(
    r"(?i)\b(?:sku|c[óo]d(?:igo)?|code|pe[çc]a|part|item|ref(?:er[êe]ncia)?|protocolo|ticket|serial"
    r"|s[ée]rie|modelo|model|lote|lot|nf|nota|rastreio|tracking|cupom|coupon)\b(?:[\s.]+[^\W\d]+){0,4}"
    r"[\s.:#º°nN-]*$")


def _ssn_valid(digits: str) -> bool:
    try:
        return bool(_ssn.is_valid(digits))
    except Exception:  # noqa: BLE001 - a validator that fails answers "redact" (fail closed)
        return True


def find_ssns(text: str) -> list[Span]:
    """US Social Security numbers (see the module doc); only on a text with a digit."""
    if not _has_digit(text):
        return []
    spans = {m.span("number") for m in _SSN_CUED_RE.finditer(text)}
    spans |= {m.span() for m in _SSN_DASHED_RE.finditer(text)
              if _ssn_valid(m.group()) and not _SSN_CODE_BEFORE_RE.search(text, max(0, m.start() - 40), m.start())}
    return sorted(spans)
