"""The personal data kinds beyond the six checksummed ones (issue 26), found in text.

Each finder returns the spans of one kind in a text; `insika_knowledge.privacy.redact`
runs them in its pipeline and replaces each span with the kind's placeholder.

- ``pix``: a PIX key. A random key (EVP) is a version-4 UUID (any case, with or without
  hyphens; other UUID versions are ids, left to their owners, unless their sentence
  speaks of PIX or of a key: "Segue a chave ... para o pix"); right after "chave pix",
  "pix key", "pix:" or "chave aleatória" / "random key" (with whose it is, "chave pix do
  cliente:", "pix key of the customer:"), a key of any PIX kind (a UUID of
  any version, an e-mail, a phone, a CPF or CNPJ: 10 digits or more), so "Pix: 5% de
  desconto" and "desconto-pix-5" keep their number and a made-up key ("chave pix:
  joao.silva.loja") its words.
- ``boleto``: a boleto's digitable line or bar code: 47 digits (bank boleto, five fields
  with mod-10 field digits and a mod-11 general digit) or 48 digits (collection slips,
  four blocks with mod-10 or mod-11 block digits), or the 44-digit bar code. The field
  digits are Luhn check digits, computed with `stdnum.luhn` (python-stdnum has no boleto
  module); the mod-11 digits here. Fail closed: a boleto-shaped number is redacted
  whether or not its digits check (no order or ticket number is 44-48 digits).
- ``rg``: an identity card number (RG): any number right after "RG", "R.G.",
  "identidade" or "registro geral" (with a state prefix or not); a state's initials
  joined to the dotted layout or by a hyphen to 7-10 digits (``MG-12.345.678``,
  ``RJ-1234567``; "SP 01415-000" is a CEP); elsewhere the São Paulo
  layout ``12.345.678-9`` / ``12.345.678-X`` when its mod-11 digit checks, or after
  "doc" / "documento" whether it checks or not (python-stdnum has no RG module: each
  state has its own rules, most without a check digit).
- ``address``: a street address. Brazilian: a street word (Rua, R., Avenida, Av.,
  Alameda, Travessa, Estrada, Rodovia, Praça, Largo...), its name and a number
  (``Rua das Flores, 123``, ``Av. Paulista 1000, apto 42``) or "s/n" (no number), with an
  optional complement; Brasília's sector addresses (``SQS 308 Bloco C``, ``SHIN QI 5``);
  English: a number, a name and a street suffix (``42 Oak Street``, ``1600 Pennsylvania
  Ave NW, Apt 4B``). A street named without a number ("entrance on Rua Augusta") is a
  place, not an address.
- ``name``: a person's name next to contact or address data: the capitalised words
  right before or after a contact placeholder (``Maria Souza, [phone]``,
  ``[address] (João)``), joined by "tel", "e-mail", "mora na", ":", "," and the like:
  two or more such words, or one common first name (`FIRST_NAMES`), so that "Lisboa
  [phone]" and "Amex [card]" keep their place and brand; capitalised words after a place
  preposition before an address are its place ("Entrega em São Paulo, [address]"; after
  "de" they are still taken: "o endereço de Maria Souza: [address]").

Business contacts a conversation shows to be the business's are kept by the caller
(`insika_knowledge.privacy.redact`'s `keep`); toll-free numbers (0800, 0300, 0500,
0900) are always the business's.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Final

from stdnum import luhn as _luhn

Span = tuple[int, int]

# --------------------------------------------------------------------------- pix

#: A random PIX key (EVP) is a version-4 UUID (version digit 4, variant 8, 9, a or b).
_UUID_RE: Final = re.compile(
    r"(?<![0-9A-Za-z])[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?4[0-9a-fA-F]{3}-?[89abAB][0-9a-fA-F]{3}-?[0-9a-fA-F]{12}"
    r"(?![0-9A-Za-z])")
_PIX_KEY_RE: Final = re.compile(
    r"(?i)\b(?:(?:chave\s+(?:do\s+)?pix|pix\s+key)(?:\s+(?:aleat[óo]ria|random|evp))?|chave\s+aleat[óo]ria"
    r"|random\s+(?:pix\s+)?key|pix)"
    r"(?:\s+(?:d[oa]s?|of(?:\s+the)?)\s+[^\W\d_]+)?"  # whose key: "chave pix do cliente:", "pix key of the customer:"
    r"(?P<sep>\s*(?:(?:e|é|is|:|=|-)\s*)+|\s+)"
    r"(?P<key>\+?[\w.@+\-()\[\]/]*\w[\w.@+\-()/]*)")
#: What a PIX key is, whatever its kind: a random key (a UUID, of any version after a cue),
#: an e-mail, a phone or a CPF/CNPJ (10 digits or more); "Pix: 5% off" and "desconto-pix-5"
#: keep their number.
_KEY_SHAPE_RE: Final = re.compile(
    r"(?i)^(?:[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}|[^@\s]+@[^@\s]+"
    r"|\+?(?:\d[\s.\-()/]?){10,})$")


#: Any UUID: a PIX key when its sentence speaks of PIX or of a key ("Segue a chave ... para o pix").
_ANY_UUID_RE: Final = re.compile(
    r"(?<![0-9A-Za-z])[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}(?![0-9A-Za-z])")
_PIX_SENTENCE_RE: Final = re.compile(r"(?i)\bpix\b|\bchave\b")
_SENTENCE_MARK_RE: Final = re.compile(r"[.!?\n]\s")


#: Where a PIX "copia e cola" code (an EMV BR Code) starts: its payload format field.
_BR_CODE_START_RE: Final = re.compile(r"000201")
#: The payment scheme a PIX BR Code names in its merchant account field.
_PIX_GUI: Final = "br.gov.bcb.pix"


def _br_code_end(text: str, start: int) -> int | None:
    """Where the EMV BR Code that starts at `start` ends, read field by field (two digits of
    id, two of length, the value) through its CRC field (id 63), or as far as its fields go
    (a code cut short, or copied without its CRC); None when no field names the PIX scheme.
    """
    at, pix = start, False
    while at + 4 <= len(text) and text[at:at + 4].isdigit():
        field_id, size = text[at:at + 2], int(text[at + 2:at + 4])
        value = text[at + 4:at + 4 + size]
        pix = pix or _PIX_GUI in value.lower()
        at += 4 + len(value)
        if field_id == "63" or len(value) < size:
            break
    return at if pix else None


def find_br_codes(text: str) -> list[Span]:
    """PIX "copia e cola" codes (EMV BR Codes: "00020126...br.gov.bcb.pix...6304ABCD"),
    whole: they hold the receiver's key, name and city.
    """
    spans: list[Span] = []
    for m in _BR_CODE_START_RE.finditer(text):
        if spans and m.start() < spans[-1][1]:
            continue
        end = _br_code_end(text, m.start())
        if end is not None:
            spans.append((m.start(), end))
    return spans


def find_pix(text: str) -> list[Span]:
    """PIX random keys (version-4 UUIDs) anywhere, a UUID of any version in a sentence that
    speaks of PIX or of a key, and a key after a PIX cue ("chave pix", "pix:", "pix key is",
    "chave pix aleatória"...) when it has the shape of a PIX key kind (`_KEY_SHAPE_RE`).
    A whole "copia e cola" code is `find_br_codes`' (read before any other detector cuts it).
    """
    spans = [m.span() for m in _UUID_RE.finditer(text)]
    for m in _ANY_UUID_RE.finditer(text):
        starts = [s.end() for s in _SENTENCE_MARK_RE.finditer(text, 0, m.start())]
        end = _SENTENCE_MARK_RE.search(text, m.end())
        if _PIX_SENTENCE_RE.search(text[starts[-1] if starts else 0:end.start() if end else len(text)]):
            spans.append(m.span())
    for m in _PIX_KEY_RE.finditer(text):
        key = m.group("key")
        if "[" in key or not _KEY_SHAPE_RE.match(key.rstrip(".,;:)")):
            continue  # a placeholder, a word ("pix is accepted") or a value ("Pix: 5% off")
        at, stop = m.span("key")
        spans.append((at, stop - (len(key) - len(key.rstrip(".,;:")))))  # a sentence's end is no part of it
    return spans


# --------------------------------------------------------------------------- boleto

_BOLETO_RE: Final = re.compile(r"(?<![\d.])\d(?:[\d]|[ .\-](?=\d)){43,60}(?![\d])")
_BOLETO_CONTEXT_RE: Final = re.compile(r"(?i)boleto|linha\s+digit|c[óo]digo\s+de\s+barras|barcode|bar\s+code")


def _mod10(digits: str) -> int:
    return int(_luhn.calc_check_digit(digits))


def _mod11(digits: str, *, low: int) -> int:
    total = sum(int(d) * (2 + i % 8) for i, d in enumerate(reversed(digits)))
    rest = 11 - total % 11
    return low if rest in (0, 10, 11) else rest


def boleto_valid(digits: str) -> bool:
    """True when 47, 48 or 44 `digits` are a boleto line or bar code whose digits check."""
    if len(digits) == 47:
        fields = (digits[0:10], digits[10:21], digits[21:32])
        if any(_mod10(f[:-1]) != int(f[-1]) for f in fields):
            return False
        barcode = digits[0:4] + digits[32] + digits[33:47] + digits[4:9] + digits[10:20] + digits[21:31]
        return _mod11(barcode[:4] + barcode[5:], low=1) == int(barcode[4])
    if len(digits) == 48 and digits[0] == "8":
        mod = _mod10 if digits[2] in "67" else (lambda d: _mod11(d, low=0))
        return all(mod(digits[i:i + 11]) == int(digits[i + 11]) for i in range(0, 48, 12))
    if len(digits) == 44:
        if digits[0] == "8":
            mod = _mod10 if digits[2] in "67" else (lambda d: _mod11(d, low=0))
            return mod(digits[:3] + digits[4:]) == int(digits[3])
        return _mod11(digits[:4] + digits[5:], low=1) == int(digits[4])
    return False


def find_boletos(text: str) -> list[Span]:
    """Boleto lines and bar codes (fail closed: every boleto-shaped number, see the module doc)."""
    spans = []
    for m in _BOLETO_RE.finditer(text):
        digits = re.sub(r"\D", "", m.group())
        if len(digits) in (44, 47, 48) or (44 <= len(digits) <= 48 and _BOLETO_CONTEXT_RE.search(text)):
            spans.append(m.span())
    return spans


# --------------------------------------------------------------------------- rg

_RG_CONTEXT_RE: Final = re.compile(
    r"(?i)\b(?:r\.?\s?g\.?|identidade|registro\s+geral|carteira\s+de\s+identidade|doc(?:umento)?\s+de\s+identidade)"
    # between the cue and the number: "nº", "é", "é o", "dele", "do cliente", ")" ("(RG) 33...")
    r"(?:[\s):=\-]|n[º°.]|\b(?:no|numero|número|number|e|é|eh|is|o|a|dele|dela|do|da|cliente)\b\.?)*"
    r"(?P<number>(?:[A-Z]{2}[- ]?)?\d[\d.\-/ ]{3,14}[\dxX])(?![\w])")
#: More digit groups right after a cued RG's match: the number runs on.
_RUN_ON_RE: Final = re.compile(r"(?:[\s.\-/]?\d)+")
_RG_SP_RE: Final = re.compile(r"(?<![\w.,/-])(\d{1,2})\.(\d{3})\.(\d{3})-([\dxX])(?![\w-])")
#: The 27 units of the federation: an RG is often written after its issuing state.
_STATES: Final = "AC AL AP AM BA CE DF ES GO MA MT MS MG PA PB PR PE PI RJ RN RS RO RR SC SP SE TO".split()
#: Words before a code that make it a product's or an order's, not an RG ("SKU MG-12.345.678").
_PRODUCT_CODE_RE: Final = re.compile(
    r"(?i)\b(?:sku|ref(?:er[eê]ncia)?|c[óo]d(?:igo)?|code|modelo?|model|part|pe[çc]a|item|lote|lot|pedido|order)"
    r"\.?\s*(?:n[º°o.]?\s*)?[:#-]?\s*$")
_RG_STATE_RE: Final = re.compile(
    rf"(?i)(?<![\w.,/-])(?:{'|'.join(_STATES)})"
    r"(?:[- ]\d{1,2}\.\d{3}\.\d{3}(?:-[\dxX])?|-\d{7,10}(?:-[\dxX])?)(?![\w-])")


def rg_sp_valid(digits: str, check: str) -> bool:
    """True when the 8 `digits` of a São Paulo RG give the check digit `check` (mod 11)."""
    total = sum(int(d) * w for d, w in zip(digits.zfill(8), range(2, 10), strict=True))
    rest = 11 - total % 11
    expected = "X" if rest == 10 else "0" if rest == 11 else str(rest)
    return check.upper() == expected


def find_rgs(text: str) -> list[Span]:
    """RG numbers after an RG cue (any layout), and São Paulo RGs whose digit checks.

    A cued number is taken whole, with digits that run on past what an RG's layout holds
    ("R G 2000 0000 0000 06"): never a part that leaves digits behind; one of 13 to 19 digits
    whose Luhn digit checks, longer than any RG, is a payment card's (left to the card finder).
    """
    spans: list[Span] = []
    for m in _RG_CONTEXT_RE.finditer(text):
        if sum(c.isdigit() for c in m.group("number")) < 5:
            continue
        start, end = m.span("number")
        more = _RUN_ON_RE.match(text, end)
        end = more.end() if more is not None else end
        digits = re.sub(r"\D", "", text[start:end])
        if 13 <= len(digits) <= 19 and _luhn.is_valid(digits):
            continue  # longer than any RG, and a card's check digit: the card finder's
        spans.append((start, end))
    spans += [m.span() for m in _RG_STATE_RE.finditer(text)
              if not _PRODUCT_CODE_RE.search(text, max(0, m.start() - 16), m.start())]
    for m in _RG_SP_RE.finditer(text):
        if rg_sp_valid(m.group(1) + m.group(2) + m.group(3), m.group(4)) \
                or _DOCUMENT_BEFORE_RE.search(text, max(0, m.start() - 24), m.start()):
            spans.append(m.span())
    return spans


#: "doc" or "documento" right before an RG's dotted layout ("doc 12.345.678-9"): an RG
#: whether its digit checks or not.
_DOCUMENT_BEFORE_RE: Final = re.compile(r"(?i)\bdoc(?:umento)?\.?(?:\s+n[º°o.]?)?\s*(?:(?:é|e|is|:|=|-)\s*)*$")


# --------------------------------------------------------------------------- local phone

#: A dash of any kind between a phone's digit groups.
_DASH: Final = r"[-\u2010\u2011\u2012\u2013\u2014\u2212]"
#: A mobile written without its area code, as Brazilians write one: 9 and eight digits,
#: grouped 5-4 ("98765-4321", "99123 4567") or 1-4-4 with a dash ("9 8765-4321", "9-8765-4321").
_LOCAL_MOBILE_RE: Final = re.compile(
    rf"(?<![\w.,/\u2010-\u2014-])(?:9\d{{4}}(?:\s?{_DASH}\s?|[.\s])\d{{4}}|9[\s.]?{_DASH}?\s?\d{{4}}{_DASH}\d{{4}}"
    r"|9\.\d{4}\.\d{4})"
    r"(?![\w\u2010-\u2014-])")
#: Eight or nine digits ("3456-7890", "987654321"): a phone only right after a word that names
#: one, opening with 2-9 (a local number never opens with 0 or 1: "0900-1800" is hours).
_LOCAL_NUMBER_RE: Final = re.compile(
    rf"(?<![\w.,/\u2010-\u2014-])(?:9[\s.]?{_DASH}?\s?)?[2-9]\d{{3,4}}(?:\s?{_DASH}\s?|[.\s])?\d{{4}}"
    r"(?![\w\u2010-\u2014-])")
#: The words that join a word naming a datum to the datum ("o meu número é", "my number is",
#: "o celular da minha mãe:", "número do cartão:"), as `cue_at_end` reads them.
CUE_JOINERS: Final = (
    r"(?:[ée]|eh|is|are|o|a|os|as|the|no|na|pelo|pro|pra|mim|at|on|meu|minha|meus|minhas|my|your|seu|sua"
    r"|do|da|de|dele|dela|residencial|comercial|marido|esposa|mulher|m[ãa]e|pai|filho|filha)")


def cue_at_end(words: str) -> re.Pattern[str]:
    """A pattern for one of `words` (an alternation naming a datum), then at most four
    `CUE_JOINERS` or more such words, at the end of what it searches (the text before a number).
    """
    return re.compile(rf"(?i)\b{words}\b[\s.:,-]*(?:(?:{CUE_JOINERS}|{words})[\s.:,-]+){{0,4}}$")


#: A word naming a phone, then a few joining words, at the end of what precedes a number.
_PHONE_CUE_RE: Final = cue_at_end(
    r"(?:cel(?:ular)?|whats(?:app)?|zap|wpp|telefone|tel|fone|fixo|ramal|contato|ligar|ligue|liga"
    r"|n[úu]mero|phone|cell(?:phone)?|mobile|landline|number|call\s+me|text\s+me|reach\s+me)")
#: What a code, a period or a quantity says before or after its digits ("SKU 90210-1234",
#: "ZIP 94105-1234", "celular 5000-6000 minutos"): no phone.
_CODE_BEFORE_RE: Final = re.compile(
    r"(?i)\b(?:sku|zip|cep|c[óo]digo|code|cupom|coupon|lote|lot|pedido|order|protocolo|nf|nota|ticket"
    r"|serial|s[ée]rie|modelo|model|ref|refer[êe]ncia|boleto|conta|account|ag[êe]ncia|rastreio|rastreamento"
    r"|tracking|objeto)\b(?:\s+[^\W\d]+){0,2}"
    r"[\s.:#º°nN-]*$")
_QUANTITY_AFTER_RE: Final = re.compile(
    r"(?i)\s*(?:%|minutos?|minutes?|reais|dollars?|pixels?|px|gb|mb|mah|km|kg|horas?|hours?|dias?|days?"
    r"|unidades?|units?|pontos?|points?|lineup|models?|modelos?)\b")
#: Two years joined ("2023-2024"): a period.
_YEARS_RE: Final = re.compile(rf"^(?:19|20)\d\d\s?{_DASH}\s?(?:19|20)\d\d$")


def find_local_phones(text: str) -> list[Span]:
    """Phones written without an area code: a mobile's shape anywhere (fail closed), any 8-9
    digits opening with 2-9 right after a word that names a phone ("whats 987654321", "meu
    fixo é o 3456-7890"); never a code, a period or a quantity ("SKU 90210-1234", "ZIP
    94105-1234", "2023-2024", "celular 5000-6000 minutos").
    """
    def a_phone(m: re.Match[str]) -> bool:
        return not (_CODE_BEFORE_RE.search(text, max(0, m.start() - 24), m.start())
                    or _QUANTITY_AFTER_RE.match(text, m.end()) or _YEARS_RE.match(m.group()))

    spans = [m.span() for m in _LOCAL_MOBILE_RE.finditer(text) if a_phone(m)]
    spans += [m.span() for m in _LOCAL_NUMBER_RE.finditer(text)
              if a_phone(m) and _PHONE_CUE_RE.search(text, max(0, m.start() - 48), m.start())]
    return spans


# --------------------------------------------------------------------------- address

_BR_STREET: Final = (
    r"(?:rua|r\.|avenida|av\.?|alameda|al\.|travessa|tv\.|trav\.|estrada|estr\.|rodovia|rod\.|pra[çc]a|p[çc]a\.?"
    r"|largo|lgo\.|viela|beco|servid[ãa]o|vila|ladeira|parque|quadra|qd\.?|conjunto|cj\.?|s[íi]tio|fazenda"
    r"|ch[áa]cara)"
)
_NAME_WORD: Final = r"(?:[^\W\d_][\w'.\-]*|\d{1,2}\s+de\s+[^\W\d_]+)"
_BR_ADDRESS_RE: Final = re.compile(
    rf"(?i)(?<![\w])\b{_BR_STREET}\s+(?:{_NAME_WORD}\s+){{0,6}}?{_NAME_WORD}\s*,?\s*"
    r"(?:(?:n[º°o.]?\s*|n[úu]mero\s*)?(?<!\b[àa]s )(?<!\bdas )(?<!\bde )(?<!\bat[ée] )"
    r"(?!\d{1,2}\s?(?:h\b|h\d|:\d|hs\b|hrs?\b|horas?\b))\d{1,5}[a-z]?\b"
    r"|s/\s?n(?:[º°o]|\b)|sem\s+n[úu]mero\b|s\.\s?n\.)"
    r"(?:\s*[,\-–]?\s*(?:apto?\.?|apartamento|ap\.|bloco|bl\.?|casa|sala|cj\.?|conjunto|andar|fundos|lote|lt\.?)"
    r"\s*[\w-]{1,6})*"
)
_EN_SUFFIX: Final = (
    r"(?:street|st\.?|avenue|ave\.?|road|rd\.?|boulevard|blvd\.?|lane|ln\.?|drive|dr\.?|court|ct\.?|way"
    r"|place|pl\.?|terrace|parkway|pkwy\.?|circle|cir\.?|highway|hwy\.?)"
)
_EN_ADDRESS_RE: Final = re.compile(
    rf"(?<![\w$.,])\d{{1,6}}[a-zA-Z]?\s+(?:[A-Z][\w'.\-]*\s+){{1,4}}(?i:{_EN_SUFFIX})(?![\w])"
    r"(?:\s+(?:N|S|E|W|NE|NW|SE|SW)\b)?"
    r"(?:\s*,?\s*(?i:apt\.?|apartment|suite|ste\.?|unit|#)\s*[\w-]{1,6})?"
)


#: Brasília's addresses: a sector's initials and its number (no street, no street number),
#: with the block, house or lot after it ("SQS 308 Bloco C apto 402", "SHIN QI 5 conjunto 3
#: casa 12", "QNM 34 conjunto F casa 10"), or after a word that says an address follows.
_DF_SECTOR: Final = (r"(?:SQ[NS]W?|SH[IC][NS]|SHCG[NS]|SCL[NS]|SG[AC][NS]|SHDB|SMPW|SMDB|SMLN|CL[NS]|Q[IL]|QN[A-PR]"
                     r"|QS|QR|QE|EQ[NS]|SHVP|SHA)")
_DF_COMPLEMENT: Final = r"(?:bloco|bl\.?|apto?\.?|ap\.?|apartamento|casa|conjunto|conj\.?|cj\.?|lote|lt\.?|ml)"
_DF_ADDRESS_RE: Final = re.compile(
    rf"(?i)\b{_DF_SECTOR}(?:\s+(?:Q[IL]|SQ|CL|ML|conjunto|conj\.?|cj\.?|quadra|qd\.?))?\s*\d{{1,4}}(?![\d%])"
    rf"(?P<complement>(?:\s*[,\-–]?\s*{_DF_COMPLEMENT}\s*[\w-]{{1,6}})*)")
_ADDRESS_CUE_RE: Final = re.compile(
    r"(?i)\b(?:moro|mora|morando|resido|endere[çc]o|fico|entrega|entregar|address|live|lives)\b[^.!?\n]{0,24}$")


def find_addresses(text: str) -> list[Span]:
    """Street addresses with a number (or "s/n", no number), Brazilian and English forms, and
    Brasília's sector addresses (see the module doc).
    """
    return [m.span() for m in _BR_ADDRESS_RE.finditer(text)] + \
        [m.span() for m in _EN_ADDRESS_RE.finditer(text)] + \
        [m.span() for m in _DF_ADDRESS_RE.finditer(text)
         if m.group("complement") or _ADDRESS_CUE_RE.search(text, max(0, m.start() - 40), m.start())]


#: A US ZIP after its state ("CA 90012", "NY 10036-1234") or a UK postcode ("NW1 6XE", "SW1A
#: 1AA"), after an address's placeholder on its line ("[address], Los Angeles, CA 90012"):
#: the rest of the customer's address.
_POSTCODE_AFTER_RE: Final = re.compile(
    r"\[address\][^\n\[]{0,40}?(?<![\w-])(?P<code>[A-Z]{2}\s+\d{5}(?:-\d{4})?|[A-Z]{1,2}\d[A-Z\d]?\s*\d[A-Z]{2})"
    r"(?![\w-])")


def find_postcodes(text: str) -> list[Span]:
    """The ZIP or postcode that ends an address already replaced (see `_POSTCODE_AFTER_RE`)."""
    if "[address]" not in text:
        return []
    return [m.span("code") for m in _POSTCODE_AFTER_RE.finditer(text)]


# --------------------------------------------------------------------------- name

#: Placeholders a person's name next to which is personal data too.
CONTACT_MARKS: Final = ("phone", "email", "address", "cpf", "rg", "pix", "card", "iban", "ssn", "birth_date",
                        "voter_id")
#: One capitalised word: "Maria", "O'Connor", "Ana-Luísa", "JOSÉ" (`people` reads the same).
CAP_WORD: Final = (r"(?:(?:[OD]['’])?[A-ZÀ-ÖØ-Ý][a-zà-öø-ÿ]+(?:['’-][A-ZÀ-ÖØ-Ý]?[a-zà-öø-ÿ]+)?"
                   r"|[A-ZÀ-ÖØ-Ý]{2,}(?:['’-][A-ZÀ-ÖØ-Ý]{2,})?)")
_PERSON: Final = rf"{CAP_WORD}(?:[ \t]+(?:(?:d[aeo]s?|e|van|von|del|di)[ \t]+)?{CAP_WORD}){{0,3}}"  # on one line
_JOIN: Final = (
    r"\s*(?:(?:[,:;(<|/\-–]|&lt;|\]\((?:mailto|tel|https?://wa\.me/?):?)\s*)?(?i:(?:tel(?:efone)?|cel(?:ular)?|fone|whats(?:app)?|zap|e-?mail|phone|mobile"
    r"|mora(?:\s+(?:na|no|em))?|lives\s+at|reside\s+(?:na|no|em)|endere[çc]o|address|cpf|rg|pix|at|em|na|no)"
    r"\.?\s*[:=]?\s*)?"
)
_MARK: Final = r"\[(?:" + "|".join(CONTACT_MARKS) + r")\]"
_BEFORE_RE: Final = re.compile(rf"(?P<name>{_PERSON}){_JOIN}(?={_MARK})")
_AFTER_RE: Final = re.compile(rf"(?<=\])\s*[,(\-–:]?\s*(?:de\s+|do\s+|da\s+|of\s+)?(?P<name>{_PERSON})")
#: Capitalised words that are no person's name (folded first letter kept).
NOT_NAMES: Final = frozenset(
    "loja store shop sac central atendimento contato contact customer cliente clientes service servico "
    "ligue call whatsapp telefone phone email e-mail endereco endereço address pix cpf rg rua avenida "
    "fale nosso nossa our the a o os as de do da para for to at em na no suporte support vendas sales "
    "escritorio escritório office matriz filial financeiro comercial ouvidoria reclamacoes reclamações "
    "entrega delivery retirada pickup boleto cartao cartão card tel fone celular mobile site app chave key "
    "linha numero número number documento document identidade id codigo código code".split()
)


#: Common first names (Brazilian and English), folded: one capitalised word next to a
#: contact is a person's name when it is one of these ("Ana, [phone]"; not "Amex [card]").
FIRST_NAMES: Final = frozenset("""
ana maria jose joao antonio francisco carlos paulo pedro lucas luiz luis marcos gabriel rafael daniel
marcelo bruno eduardo felipe raimundo rodrigo manoel mateus matheus andre fernando fabio leonardo gustavo
guilherme leandro tiago thiago anderson ricardo jorge alexandre roberto sergio vinicius diego julio
renato claudio adriana juliana marcia fernanda patricia aline sandra camila amanda bruna jessica leticia
julia luciana vanessa mariana gabriela vera vitoria larissa claudia beatriz luana rita sonia renata
eliane josefa simone natalia cristina carla debora rosa raquel helena lucia priscila tatiana silvia
bianca alice laura sofia isabela isabella manuela valentina heloisa lorena livia giovanna yasmin
miguel arthur heitor bernardo davi samuel enzo theo lorenzo benjamin joaquim nicolas henrique murilo
caio otavio cesar igor vitor victor hugo wesley william wagner washington edson nelson mario
john james robert michael david richard joseph thomas charles christopher mark donald steven paul
andrew joshua kenneth kevin brian george edward ronald timothy jason jeffrey ryan jacob gary nicholas
eric jonathan stephen larry justin scott brandon frank benjamin gregory samuel raymond patrick alexander
jack dennis jerry tyler aaron henry douglas peter adam nathan zachary walter kyle harold carl jeremy
mary jennifer linda elizabeth barbara susan jessica sarah karen nancy lisa betty margaret sandra ashley
kimberly emily donna michelle dorothy carol amanda melissa deborah stephanie rebecca sharon laura cynthia
kathleen amy shirley angela helen anna brenda pamela nicole emma samantha katherine christine debra
rachel catherine carolyn janet ruth maria heather diane virginia julie joyce victoria olivia kelly
christina lauren joan evelyn judith megan cheryl andrea hannah martha jacqueline frances gloria ann
iara gisele thais raissa joana cida tatiane cristiane daniela denise elaine fabiana flavia ingrid jaqueline
josiane karina katia lais marcela michele monica paula poliana rafaela regina rosana roberta sabrina silvana
sueli tania tereza valeria viviane alessandra andreia cintia edna elisa fatima graziela ivone joice lilian
marta neide rosangela solange zuleide gislaine luciene rosemeire aparecida conceicao francisca antonia
adriano alan alex cicero cleber cristiano denis diogo elias emerson everton fabricio gilberto gilson helio
jefferson jonas josue juliano kleber luciano marcio mauricio milton nilson osvaldo reinaldo robson rogerio
ronaldo sandro sebastiao sidney valdir vagner wellington wilson ailton ademir valter walter geraldo benedito
""".split())


def fold_word(word: str) -> str:
    """`word` without accents, in lower case ("Ísis" -> "isis"): how the name lists are read."""
    return unicodedata.normalize("NFKD", word).encode("ascii", "ignore").decode("ascii").lower()


def _is_person(name: str) -> bool:
    words = [w for w in re.split(r"\s+", name) if w.lower() not in ("da", "de", "do", "das", "dos", "e")]
    if not words or all(w.lower() in NOT_NAMES for w in words):
        return False
    first = fold_word(words[0])
    return len(words) >= 2 or first in FIRST_NAMES


def find_names(text: str) -> list[Span]:
    """A person's capitalised name right before or after a contact placeholder."""
    if "[" not in text:
        return []
    found = [m.span("name") for m in _BEFORE_RE.finditer(text)
             if not (text.startswith("[address]", m.end()) and (_LOCATIVE_RE.search(text, 0, m.start("name"))
                                                                or _AFTER_ADDRESS_RE.search(text, 0, m.start("name"))))]
    found += [m.span("name") for m in _AFTER_RE.finditer(text)
              if text[m.start() - 1:m.start()] == "]" and _MARK_END_RE.search(text, 0, m.start())
              and not text.endswith("[address]", 0, m.start())]  # after an address: its city
    spans = []
    for start, end in found:
        while True:  # "Cliente Ana": the label word is no part of the name
            word = re.match(r"[^\W\d_][\w-]*", text[start:end])
            if word is None or word.group().lower() not in NOT_NAMES or word.end() == end - start:
                break
            start += word.end()
            start += len(text[start:end]) - len(text[start:end].lstrip())
        if _is_person(text[start:end]):
            spans.append((start, end))
    return spans


_MARK_END_RE: Final = re.compile(rf"{_MARK}$")
#: An address's placeholder right before capitalised words: they are its city, before its
#: postcode ("[address], Los Angeles, [address]").
_AFTER_ADDRESS_RE: Final = re.compile(r"\[address\][,\s]*$")
#: A place preposition right before capitalised words next to an address: they name the
#: place ("Entrega em São Paulo, [address]"), not a person.
_LOCATIVE_RE: Final = re.compile(r"(?i)\b(?:em|no|na|nos|nas|in|at)\s+$")


def words_next_to_marks(text: str) -> list[Span]:
    """In a name slug (words only, no capitals): up to three words right before a contact
    placeholder (``entrega maria souza [address]``): a name there cannot be told from other
    words, so they are taken (fail closed). Words that only label the datum ("cpf [cpf]",
    "chave pix [pix]", "tel [phone]") are no name: those at the end of the run are left.
    """
    spans = []
    for m in re.finditer(rf"((?:[^\W\d_]+\s+){{1,3}})(?={_MARK})", text):
        words = m.group(1).split()
        while words and words[-1].lower() in _LABEL_WORDS:
            words.pop()
        while words and fold_word(words[0]) in NOT_NAMES:  # "cliente [cpf]": a label, no name
            words.pop(0)
        if words:
            start = m.start(1) + m.group(1).index(words[0])
            spans.append((start, start + len(" ".join(words))))
    return spans


#: Words that name a datum's kind before it in a slug ("cpf", "pix", "tel"): no person's name.
_LABEL_WORDS: Final = frozenset(
    "cpf cnpj pix chave key ip tel telefone phone celular cel whatsapp zap email mail endereco endereço address "
    "rg doc documento cep card cartao cartão iban boleto nascimento birth dob titulo título voter".split())
