"""The concept record: its model, name rules, ``[[links]]``, and the markdown codec.

A concept is one markdown document with a YAML frontmatter block, keys in this order::

    ---
    name: cep-13-campinas
    description: CEPs 13000-13999 ship from the Campinas DC in 1-2 business days.
    type: fact
    provenance: observed
    confidence: 0.6
    sources: ["sess_8f3c"]
    occurrences: 1
    created_at: 2026-08-24T18:02:11Z
    updated_at: 2026-08-24T18:02:11Z
    ---

    Orders to CEP range 13000-13999 ... Related: [[frete-gratis-acima-199]].

`serialize` writes exactly that shape and `parse` reads it back:
``serialize(parse(md)) == md`` for every canonical record. This module is the only
user of PyYAML in the library.
"""

from __future__ import annotations

import dataclasses
import json
import re
import reprlib
import unicodedata
from collections.abc import Collection
from datetime import UTC, datetime
from typing import Any, Final, Literal, Protocol

import yaml
from anyascii import anyascii

from insika_knowledge.analysis.text import ascii_words
from insika_knowledge.errors import ConceptFormatError, InvalidName
from insika_knowledge.readers import MERGE_TAG

ConceptType = Literal["fact", "entity", "procedure", "policy", "objection"]
Provenance = Literal["observed", "policy"]

CONCEPT_TYPES: Final[tuple[str, ...]] = ("fact", "entity", "procedure", "policy", "objection")
PROVENANCES: Final[tuple[str, ...]] = ("observed", "policy")
KEYS: Final[tuple[str, ...]] = (
    "name",
    "description",
    "type",
    "provenance",
    "confidence",
    "sources",
    "occurrences",
    "created_at",
    "updated_at",
)
#: Keys only the engine may write; a model answer carrying one is dropped.
ENGINE_KEYS: Final[frozenset[str]] = frozenset(
    {"provenance", "confidence", "sources", "occurrences", "created_at", "updated_at"}
)
#: Keys a model may write.
MODEL_KEYS: Final[tuple[str, ...]] = ("name", "description", "type", "body")

NAME_RE: Final = re.compile(r"[a-z0-9][a-z0-9-]{0,79}")
NAME_MAX: Final = 80
DESCRIPTION_MAX: Final = 300
BODY_MAX: Final = 20_000
SOURCE_RE: Final = re.compile(r"[^\x00-\x1f\x7f]{1,200}")
TIMESTAMP_RE: Final = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z")
LINK_RE: Final = re.compile(r"\[\[([^\[\]\n]{1,120})\]\]")
OCCURRENCES_MAX: Final = 2**53
CONTRADICTION_HEADING: Final = "## Contradiction"
#: Any line a markdown renderer shows as a "Contradiction" level-2 heading: up to 3
#: leading spaces, ``##``, spaces or tabs, the word in any case, trailing blanks. A lone
#: CR counts as a line end too (markdown renderers treat it as one).
_CONTRADICTION_RE: Final = re.compile(
    r"(?:^|(?<=\r))[ ]{0,3}##[ \t]+contradiction[ \t]*(?=\r|$)", re.MULTILINE | re.IGNORECASE
)
_SURROGATE_RE: Final = re.compile("[\ud800-\udfff]")
_REPR: Final = reprlib.Repr()
_REPR.maxstring = 70
_REPR.maxother = 70
_REPR.maxlist = _REPR.maxtuple = _REPR.maxdict = _REPR.maxset = 4
_REPR.maxlevel = 2
REPR_MAX: Final = 80


def short_repr(value: object) -> str:
    """``repr(value)`` for an error message, at most `REPR_MAX` characters.

    Never builds the full repr of a large value (a huge string or a deep list).
    """
    text = _REPR.repr(value)
    return text if len(text) <= REPR_MAX else text[: REPR_MAX - 1] + "…"


def surrogate_in(text: str) -> str | None:
    """The first lone surrogate in `text` (it cannot be encoded as UTF-8), or None."""
    match = _SURROGATE_RE.search(text)
    return None if match is None else match.group()


def encodable(value: object) -> bool:
    """True when `value` (text, or a list/dict of them) can be written as UTF-8."""
    if isinstance(value, str):
        return _SURROGATE_RE.search(value) is None
    if isinstance(value, dict):
        return all(encodable(k) and encodable(v) for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return all(encodable(v) for v in value)
    return True


def _surrogate_problem(text: str) -> str:
    bad = surrogate_in(text) or "?"
    return f"contains U+{ord(bad):04X}, a lone surrogate that cannot be written as UTF-8"


#: What a body a person writes may not hold: control characters but tab and line ends
#: (C0, DEL, C1), the bidirectional overrides and isolates, and the tag characters (a
#: terminal, an editor or a model reads them as something else than what is shown). Not
#: `escaping`'s sets: a body keeps its line ends (CR too) and the invisible direction marks
#: of right-to-left text (U+200E, U+200F, U+061C), which prompts and `show` escape instead.
UNSAFE_IN_BODY: Final = re.compile(
    "[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\U000e0000-\U000e007f]")


def unsafe_in_text(text: str) -> tuple[int, str] | None:
    """The 1-based line of `text` and its first character of `UNSAFE_IN_BODY` (a NUL too),
    or None.
    """
    found = UNSAFE_IN_BODY.search(text)
    return None if found is None else (text.count("\n", 0, found.start()) + 1, found.group())


def unsafe_in_body(markdown: str) -> tuple[int, str] | None:
    """`unsafe_in_text` of the body of record `markdown`, its line counted in the record (as
    `parse` counts: CRLF read as LF), or None (none, or not a record).
    """
    try:
        front, rest = split_record(markdown)
    except ConceptFormatError:
        return None
    found = unsafe_in_text("\n".join(rest))
    return None if found is None else (len(front) + 2 + found[0], found[1])


def unsafe_body_error(char: str, *, line: int | None, where: str = "") -> ConceptFormatError:
    """The error for `char`, a character of `UNSAFE_IN_BODY` in a body a person wrote."""
    code = ord(char)
    named = unicodedata.name(char, "a tag character" if 0xE0000 <= code <= 0xE007F else "a control character")
    return ConceptFormatError(
        f"{where}contains U+{code:04X} ({named}): a body holds no control characters (tab and line ends "
        "aside), bidirectional overrides or tag characters", line=line, field=None if where else "body")


def check_written_body(markdown: str, body: str) -> None:
    """Refuse a body a person wrote (`body`, inside the record `markdown`) that holds a
    character of `UNSAFE_IN_BODY`. The model's bodies are cleaned instead (the candidate
    screen); a body stored before this rule is not refused unless it is written anew.

    Raises:
        ConceptFormatError: field ``body``, the record's line, and the character named.
    """
    found = UNSAFE_IN_BODY.search(body)
    if found is None:
        return
    located = unsafe_in_body(markdown)
    raise unsafe_body_error(found.group(), line=located[0] if located else None)


def _printable_line(text: str) -> bool:
    """True when every character of `text` is printable, but for the invisible marks of
    writing (`_writes`: an emoji sequence's joiners, "👨\u200d👩\u200d👧"; a Persian word's
    non-joiner; a right-to-left text's direction marks), which the body accepts too.
    """
    return text.isprintable() or all(char.isprintable() or _writes(text, at) for at, char in enumerate(text))


#: The direction marks of right-to-left text (LRM, RLM, ALM): invisible, and a part of how
#: Arabic and Hebrew are written; a prompt and `show` leave them out (`escaping`).
DIRECTION_MARKS: Final = frozenset("\u200e\u200f\u061c")


def _writes(text: str, at: int) -> bool:
    """True when `text[at]`, not printable, is a mark of writing: a direction mark
    (`DIRECTION_MARKS`), a zero-width non-joiner or joiner between two letters ("می\u200cخواهم",
    the Persian for "I want"; a combining mark counts as a letter), or a joiner inside an
    emoji sequence (`_joins_emoji`). Not a joiner or non-joiner beside a space or an edge.
    """
    char = text[at]
    if char in DIRECTION_MARKS:
        return True
    if char in "\u200c\u200d" and 0 < at < len(text) - 1 and \
            unicodedata.category(text[at - 1])[0] in "LM" and unicodedata.category(text[at + 1])[0] in "LM":
        return True
    return _joins_emoji(text, at)


def _joins_emoji(text: str, at: int) -> bool:
    """True when `text[at]` is a zero-width joiner between two symbols (a variation selector
    after the first one aside; the first may end with a skin tone).
    """
    before = text[at - 1] if at else ""
    if before == "\ufe0f" and at > 1:
        before = text[at - 2]
    after = text[at + 1] if at + 1 < len(text) else ""
    return (text[at] == "\u200d" and bool(before) and bool(after)  # a skin tone ("Sk") may end the first
            and unicodedata.category(before) in ("So", "Sk") and unicodedata.category(after) == "So")


#: The space separators (Unicode ``Zs``) other than the ASCII space: a no-break space, the
#: ideographic space, the thin spaces. A description that holds one reads it as a space.
SPACE_SEPARATORS: Final = re.compile("[\u00a0\u1680\u2000-\u200a\u202f\u205f\u3000]")


def printable_only(text: str) -> str:
    """`text` without the characters that are not printable, but for the marks of writing
    (`_writes`: an emoji sequence keeps its joiners, "👩🏽‍💻"; a Persian word its non-joiner).
    """
    return "".join(char for at, char in enumerate(text) if char.isprintable() or _writes(text, at))


def one_line(text: str, limit: int) -> str:
    """`text` as one line of printable text: white space runs made one space, what is not
    printable dropped, at most `limit` characters (cut with "…").
    """
    line = " ".join(printable_only(" ".join(text.split())).split())
    return line if len(line) <= limit else line[: limit - 1].rstrip() + "…"


def _line_problem(text: str) -> str:
    """Why `text` is not one line of printable text without edge spaces, naming the first
    character that is not printable (by code point, Unicode name and position, 1-based).
    """
    for position, char in enumerate(text, 1):
        if not char.isprintable() and not _writes(text, position - 1):
            named = unicodedata.name(char, "a control character")
            return (f"contains U+{ord(char):04X} ({named}) at character {position}: it must be one line "
                    "of printable text")
    return "must not start or end with a space"


@dataclasses.dataclass(frozen=True, slots=True)
class Concept:
    """One concept record, as stored and exported.

    Attributes:
        name: kebab-case slug, unique per agent (``[a-z0-9][a-z0-9-]{0,79}``).
        description: one printable line, at most 300 characters.
        type: fact | entity | procedure | policy | objection.
        provenance: ``observed`` (learned by the engine) or ``policy`` (set by a human).
        confidence: 0..1, two decimals.
        sources: session ids that support the concept, first sighting first.
        occurrences: supporting sightings counted so far (>= 0).
        created_at: UTC ISO-8601 with ``Z``, second precision.
        updated_at: same format.
        body: markdown without the trailing newline; never empty.
    """

    name: str
    description: str
    type: str
    provenance: str
    confidence: float
    sources: tuple[str, ...]
    occurrences: int
    created_at: str
    updated_at: str
    body: str

    @property
    def in_conflict(self) -> bool:
        """True when the body carries a ``## Contradiction`` section awaiting a human."""
        return has_contradiction(self.body)

    @property
    def status(self) -> str:
        """``conflict`` or ``ok``, derived from the body."""
        return "conflict" if self.in_conflict else "ok"

    @property
    def links(self) -> tuple[str, ...]:
        """Names referenced as ``[[name]]`` in the body, in order, without duplicates."""
        return parse_links(self.body)

    def replace(self, **changes: Any) -> Concept:
        """Return a copy with `changes` applied (no validation; call `validate`)."""
        return dataclasses.replace(self, **changes)


# ----------------------------------------------------------------------------- names


def normalize_name(raw: str) -> str:
    """Turn a proposed name into a slug: its ASCII words (`analysis.text.ascii_words`:
    case and accents folded) joined with ``-``.

    Args:
        raw: any text, e.g. ``"Frete Grátis acima de R$199"``.

    Returns:
        The slug, e.g. ``"frete-gratis-acima-de-r-199"``, at most 80 characters
        (cut at a word boundary when possible).

    A name mostly in another script than the Latin one is transliterated first, letter by
    letter (`anyascii`): ``"Доставка Москва"`` -> ``"dostavka-moskva"``, ``"配送時間"`` ->
    ``"peisongshijian"`` (it was refused, and the concept with it).

    Raises:
        InvalidName: nothing usable is left (empty, only punctuation or symbols).
    """
    if not isinstance(raw, str):
        raise InvalidName(f"a concept name must be text, got {type(raw).__name__}")
    slug = "-".join(ascii_words(raw))
    # A name that was mostly in another script keeps its meaning only transliterated;
    # judge that on the whole slug, before it is cut to length (a long ASCII name is only cut).
    letters = sum(1 for c in raw if c.isalnum())
    kept = sum(1 for c in slug if c.isalnum())
    if letters and kept < letters / 2:
        slug = "-".join(ascii_words(_transliterated(raw[:_TRANSLITERATED])))
    if len(slug) > NAME_MAX:
        cut = slug[:NAME_MAX]
        slug = cut.rsplit("-", 1)[0] if "-" in cut[NAME_MAX // 2 :] else cut
        slug = slug.strip("-")
    if not slug or not NAME_RE.fullmatch(slug):
        raise InvalidName(
            f"cannot make a concept name out of {short_repr(raw)}: use letters or digits"
        )
    return slug


#: The most characters of a name transliterated (a name is cut to `NAME_MAX` after).
_TRANSLITERATED: Final = 4 * NAME_MAX


def _transliterated(text: str) -> str:
    """`text` with each letter and digit written in ASCII (`anyascii`); symbols (an emoji
    would become its name) and punctuation as they are, for `ascii_words` to drop.
    """
    return "".join(anyascii(c) if c.isalnum() else c for c in text)


def check_name(name: str) -> str:
    """Return `name` unchanged if it is already a valid slug.

    Raises:
        InvalidName: it is not ``[a-z0-9][a-z0-9-]{0,79}``.
    """
    if not isinstance(name, str) or not NAME_RE.fullmatch(name):
        raise InvalidName(
            f"{short_repr(name)} is not a concept name: use 1-80 lowercase letters, digits and '-', "
            "starting with a letter or digit"
        )
    return name


def parse_links(body: str) -> tuple[str, ...]:
    """Names referenced as ``[[name]]`` in `body`, normalised, in order, deduplicated.

    A link whose text cannot be made into a name is ignored.
    """
    seen: dict[str, None] = {}
    for match in LINK_RE.finditer(body):
        try:
            seen.setdefault(normalize_name(match.group(1)), None)
        except InvalidName:
            continue
    return tuple(seen)


class _Statused(Protocol):
    @property
    def name(self) -> str: ...
    @property
    def in_conflict(self) -> bool: ...


def status_of(item: _Statused, challenged: Collection[str]) -> str:
    """``conflict`` when `item` (a `Concept` or an index entry) awaits a person: its body holds
    contradicting reports, or its name is among `challenged` (claims are held against it for
    review: a policy's contradicting sightings, possible duplicates; `Store.challenged_names`);
    else ``ok``.
    """
    return "conflict" if item.in_conflict or item.name in challenged else "ok"


#: A ``## Contradiction`` entry's first line and the ``Why:`` line under it
#: (`insika_knowledge.consolidate.entries`): the reason is the engine's words, not a claim's.
_ENTRY_WHY_RE: Final = re.compile(r"^(- session `[^`\n]*` at [^\n]*)\n  Why: [^\n]*$", re.MULTILINE)
#: The text before the reason on a ``Why:`` line.
WHY_PREFIX: Final = "  Why: "
#: The most characters a stored reason keeps (a ``Why:`` line's, a held claim's `why`).
WHY_MAX: Final = 500


def searchable_text(text: str) -> str:
    """`text` without the ``Why:`` lines of its contradiction entries: what the lexical
    indexes read of a body (the claims, on record and contradicting; the engine's reasons
    would make a conflicted concept match "can a person help me?").
    """
    return _ENTRY_WHY_RE.sub(r"\1", text) if f"\n{WHY_PREFIX}" in text else text


def has_contradiction(body: str) -> bool:
    """True when `body` has a ``## Contradiction`` heading line.

    Recognised as a markdown renderer would show it: up to 3 leading spaces, one or
    more spaces or tabs after ``##``, any letter case, trailing blanks.
    """
    return _CONTRADICTION_RE.search(body) is not None


def claim_text(body: str) -> str:
    """The body without its ``## Contradiction`` section (what the concept asserts)."""
    match = _CONTRADICTION_RE.search(body)
    return body if match is None else body[: match.start()].rstrip()


# ----------------------------------------------------------------------------- time


def utc_now() -> str:
    """The current UTC time as ``YYYY-MM-DDTHH:MM:SSZ``."""
    return format_time(datetime.now(UTC))


def format_time(moment: datetime) -> str:
    """Format an aware datetime as UTC ``YYYY-MM-DDTHH:MM:SSZ`` (seconds precision)."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


# ----------------------------------------------------------------------------- validation


def validate(concept: Concept) -> Concept:
    """Check every field of `concept` against the record rules.

    Returns:
        The same concept, for chaining.

    Raises:
        ConceptFormatError: naming the field and what is wrong with it.
    """
    for field, problem in _problems(concept):
        raise ConceptFormatError(problem, field=field)
    return concept


def _problems(c: Concept) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    if isinstance(c.name, str) and len(c.name) > NAME_MAX and NAME_RE.fullmatch(c.name[:NAME_MAX]):
        out.append(("name", f"is {len(c.name)} characters; at most {NAME_MAX}"))  # a slug, too long
    elif not isinstance(c.name, str) or not NAME_RE.fullmatch(c.name):
        out.append(("name", f"{short_repr(c.name)} is not a slug ([a-z0-9][a-z0-9-]{{0,79}})"))
    if not isinstance(c.description, str) or not c.description.strip():
        out.append(("description", "must be non-empty text"))
    elif len(c.description) > DESCRIPTION_MAX:
        out.append(("description", f"is {len(c.description)} characters; at most {DESCRIPTION_MAX}"))
    elif surrogate_in(c.description):
        out.append(("description", _surrogate_problem(c.description)))
    elif not _printable_line(c.description) or c.description != c.description.strip():
        out.append(("description", _line_problem(c.description)))
    if c.type not in CONCEPT_TYPES:
        out.append(("type", f"{short_repr(c.type)} is not one of {', '.join(CONCEPT_TYPES)}"))
    if c.provenance not in PROVENANCES:
        out.append(("provenance", f"{short_repr(c.provenance)} is not one of {', '.join(PROVENANCES)}"))
    if isinstance(c.confidence, bool) or not isinstance(c.confidence, (int, float)):
        out.append(("confidence", f"{short_repr(c.confidence)} is not a number"))
    elif not 0.0 <= c.confidence <= 1.0:
        out.append(("confidence", f"{short_repr(c.confidence)} is outside 0..1"))
    if not isinstance(c.sources, tuple) or not all(
        isinstance(s, str) and SOURCE_RE.fullmatch(s) for s in c.sources
    ):
        out.append(("sources", "must be a list of session ids (printable text, 1-200 characters)"))
    elif any(surrogate_in(s) for s in c.sources):
        out.append(("sources", "a session id " + _surrogate_problem("".join(c.sources))))
    elif len(set(c.sources)) != len(c.sources):
        out.append(("sources", "lists a session id twice"))
    if isinstance(c.occurrences, bool) or not isinstance(c.occurrences, int) or c.occurrences < 0:
        out.append(("occurrences", f"{short_repr(c.occurrences)} is not a whole number >= 0"))
    elif c.occurrences > OCCURRENCES_MAX:
        out.append(("occurrences", f"{c.occurrences} is more than 2**53"))
    for field in ("created_at", "updated_at"):
        value = getattr(c, field)
        if not _is_timestamp(value):
            out.append((field, f"{short_repr(value)} is not a UTC time like 2026-08-24T18:02:11Z"))
    if not isinstance(c.body, str) or not c.body.strip():
        out.append(("body", "the markdown body is empty"))
    elif len(c.body) > BODY_MAX:
        out.append(("body", f"is {len(c.body)} characters; at most {BODY_MAX}"))
    elif "\x00" in c.body:
        out.append(("body", "contains a NUL character"))
    elif surrogate_in(c.body):
        out.append(("body", _surrogate_problem(c.body)))
    return out


def _is_timestamp(value: object) -> bool:
    if not isinstance(value, str) or not TIMESTAMP_RE.fullmatch(value):
        return False
    try:
        datetime.strptime(value, "%Y-%m-%dT%H:%M:%SZ")
    except ValueError:
        return False
    return True


# ----------------------------------------------------------------------------- codec

#: Frontmatter keys read as the literal text of their scalar (YAML 1.1 never turns
#: ``010`` into 8 or ``1:20`` into 80 here).
TEXT_KEYS: Final[tuple[str, ...]] = (
    "name", "description", "type", "provenance", "created_at", "updated_at",
)
#: The longest record `parse` reads, in characters (a body is at most `BODY_MAX`).
RECORD_MAX: Final = 1024 * 1024
#: The longest frontmatter `parse` hands to YAML, in characters.
FRONTMATTER_MAX: Final = 64 * 1024
#: The deepest ``[...]``/``{...}`` nesting accepted in the frontmatter (a record needs 1).
NESTING_MAX: Final = 8
#: The longest value accepted for confidence or occurrences, in characters.
NUMBER_MAX: Final = 32
#: Characters YAML reads as line breaks besides LF; a frontmatter value never holds one.
_YAML_BREAKS_RE: Final = re.compile("[\r\x85\u2028\u2029]")
_NUMBER_LINE_RE: Final = re.compile(r"(confidence|occurrences)[ \t]*:[ \t]*(.*?)[ \t]*")
#: Where a block-context value starts: after any ``- `` and a ``key:`` (plain or quoted).
_VALUE_START_RE: Final = re.compile(
    r"[ \t]*(?:-[ \t]+)*"
    r"(?:(?:\"(?:[^\"\\]|\\.)*\"|'(?:[^']|'')*'|[^\s\"'\[\]{}#][^#]*?)[ \t]*:(?:[ \t]+|$))?"
    r"(?:-[ \t]+)*"
)
_FLOW_SPECIAL_RE: Final = re.compile(r"[\[\]{}\"'#]")
_WHOLE_RE: Final = re.compile(r"0|[1-9][0-9]*")
_DECIMAL_RE: Final = re.compile(r"-?[0-9]+(?:\.[0-9]+)?")


class _Loader(yaml.SafeLoader):
    """The YAML reader of the frontmatter: composes nodes only (no implicit typing).

    Values are taken from the node tree by `_load_frontmatter`: text keys as the
    scalar's literal text, numbers by a strict decimal pattern, sources as a list of
    scalar texts. Anchors, aliases and merge keys are refused before composing.
    """


def serialize(concept: Concept) -> str:
    """Render `concept` as its canonical markdown record (LF line ends, trailing newline).

    Raises:
        ConceptFormatError: the concept breaks a record rule (see `validate`).
    """
    validate(concept)
    lines = [
        "---",
        f"name: {_scalar(concept.name)}",
        f"description: {_scalar(concept.description)}",
        f"type: {concept.type}",
        f"provenance: {concept.provenance}",
        f"confidence: {format_confidence(concept.confidence)}",
        f"sources: {json.dumps(list(concept.sources), ensure_ascii=False)}",
        f"occurrences: {concept.occurrences}",
        f"created_at: {concept.created_at}",
        f"updated_at: {concept.updated_at}",
        "---",
        "",
        concept.body,
    ]
    return "\n".join(lines) + "\n"


def format_confidence(value: float) -> str:
    """Confidence as written in the frontmatter: rounded to 2 decimals, e.g. ``0.6``."""
    return repr(round(float(value), 2))


def _scalar(text: str) -> str:
    """A YAML scalar for `text`: plain when any YAML reader reads it back as that same
    text, else double-quoted (so ``010``, ``1:20``, ``yes``, ``null`` or a date stay text
    for other tools too).
    """
    if _plain_is_safe(text):
        return text
    return json.dumps(text, ensure_ascii=False)


_PLAIN_OK = re.compile(r"[^\s\-?:,\[\]{}#&*!|>'\"%@`][^\n]*")


#: Texts a plain YAML scalar on one line reads back unchanged, whatever the resolvers say:
#: letters (ASCII and Latin), digits, inner spaces and punctuation that is no indicator
#: after the first character. No tab, '#', line break or trailing space.
_ORDINARY_RE: Final = re.compile(r"[A-Za-z0-9\u00c0-\u024f][A-Za-z0-9\u00c0-\u024f .,;:()/%+=_'\"!?&$@*-]*(?<! )")


#: Plain scalars the YAML 1.2 core schema reads as a number, a bool or null where PyYAML's
#: YAML 1.1 resolvers read text (``1e3``, ``0o17``, ``.5E2``): quoted too, for 1.2 readers
#: (YAML 1.2.2, section 10.3.2, the core schema's tag resolution).
_CORE_SCHEMA_RE: Final = re.compile(
    r"[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+|[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?"
    r"|[-+]?\.(inf|Inf|INF)|\.(nan|NaN|NAN)|true|True|TRUE|false|False|FALSE|null|Null|NULL|~"
)


def _plain_is_safe(text: str) -> bool:
    if not _PLAIN_OK.fullmatch(text) or ": " in text or " #" in text or text.endswith(":"):
        return False
    if _CORE_SCHEMA_RE.fullmatch(text):
        return False
    if _ORDINARY_RE.fullmatch(text):
        # What `yaml.load` would decide, without loading: the scalar is read whole, and it
        # stays text unless one of the loader's implicit resolvers (the same table, the
        # same `match`) types it.
        return not any(regexp.match(text) for _, regexp in _RESOLVERS.get(text[0], ()))
    return _plain_is_safe_by_yaml(text)


_RESOLVERS: Final = yaml.SafeLoader.yaml_implicit_resolvers


def _plain_is_safe_by_yaml(text: str) -> bool:
    """`_plain_is_safe` by loading ``k: <text>`` with PyYAML (the reference; slow, pure Python),
    and what a YAML 1.2 reader types too (`_CORE_SCHEMA_RE`: ``09`` is the integer 9 there,
    text for PyYAML's YAML 1.1).
    """
    if not _PLAIN_OK.fullmatch(text) or ": " in text or " #" in text or text.endswith(":"):
        return False
    if _CORE_SCHEMA_RE.fullmatch(text):
        return False
    try:
        # The full YAML 1.1 resolvers (ints, floats, bools, null, timestamps): anything
        # they would read as non-text is quoted.
        loaded: object = yaml.load(f"k: {text}", Loader=yaml.SafeLoader)  # noqa: S506
        return loaded == {"k": text}
    except yaml.YAMLError:
        return False


def parse(markdown: str) -> Concept:
    """Parse a markdown record into a `Concept`.

    CRLF and CR-only line ends are read as LF, and a leading byte-order mark is
    skipped. Before YAML reads the frontmatter, its size (`FRONTMATTER_MAX`), nesting
    (`NESTING_MAX`) and number lengths (`NUMBER_MAX`) are checked, so any input is
    refused in time linear in its length. Keys may appear in any order, but
    every key must be present once, and no other key is allowed. Text keys (name,
    description, type, provenance, created_at, updated_at) are read as the literal
    text of their scalar; confidence and occurrences are decimal numbers; sources is
    a list of texts. YAML anchors, aliases and merge keys are refused.

    Args:
        markdown: the whole record text.

    Returns:
        The concept; `serialize` of it reproduces `markdown` when it was canonical.

    Raises:
        ConceptFormatError: with the 1-based line and the field at fault, e.g.
            ``line 6, field 'confidence': 1.7 is outside 0..1``.
    """
    front_lines, rest = split_record(markdown)
    end = len(front_lines) + 1  # 0-based: the closing '---'
    data, key_lines = read_frontmatter(front_lines)
    for key in KEYS:
        if key not in data:
            raise ConceptFormatError(f"missing key {key!r}", line=end + 1, field=key)
    body_line = end + 2  # 1-based: the line after the closing '---'
    if rest and rest[0] == "":
        rest = rest[1:]
        body_line += 1
    body = "\n".join(rest).rstrip("\n")
    confidence = data["confidence"]
    if isinstance(confidence, int) and not isinstance(confidence, bool):
        confidence = float(confidence)
    description = data["description"]
    if isinstance(description, str):  # "Prix\u00a0: 10 €": a space a person typed, as the model path reads it
        description = SPACE_SEPARATORS.sub(" ", description)
    concept = Concept(
        name=data["name"],
        description=description,
        type=data["type"],
        provenance=data["provenance"],
        confidence=confidence,
        sources=data["sources"],
        occurrences=data["occurrences"],
        created_at=data["created_at"],
        updated_at=data["updated_at"],
        body=body,
    )
    for field, problem in _problems(concept):
        line = body_line if field == "body" else key_lines.get(field)
        if field == "body" and not concept.body:  # at the closing '---': the file may end there
            line, problem = end + 1, f"{problem} (write it below the closing '---')"
        raise ConceptFormatError(problem, line=line, field=field)
    if isinstance(concept.confidence, float) and round(concept.confidence, 2) != concept.confidence:
        raise ConceptFormatError(
            f"{short_repr(concept.confidence)} has more than 2 decimals",
            line=key_lines.get("confidence"),
            field="confidence",
        )
    return concept


def split_record(markdown: str) -> tuple[list[str], list[str]]:
    """A record's ``(frontmatter lines, lines after the closing ---)``, read as `parse` reads
    it: a leading byte-order mark skipped, CRLF and CR-only line ends read as LF.

    Raises:
        ConceptFormatError: `markdown` is not text, is over `RECORD_MAX` characters, does not
            start with a ``---`` line, leaves the frontmatter open, or holds a lone surrogate.
    """
    if not isinstance(markdown, str):
        raise ConceptFormatError(f"a record must be text, got {type(markdown).__name__}")
    if len(markdown) > RECORD_MAX:
        raise ConceptFormatError(f"the record is {len(markdown)} characters; at most {RECORD_MAX}", line=1)
    lines = _normalise_line_ends(markdown.removeprefix("\ufeff")).split("\n")
    if lines[0].rstrip() != "---":
        raise ConceptFormatError(
            "the record must start with a '---' line, then 'key: value' lines, then '---' and the body",
            line=1,
        )
    try:
        end = next(i for i in range(1, len(lines)) if lines[i].rstrip() == "---")
    except StopIteration:
        raise ConceptFormatError(
            "the frontmatter is not closed: add a '---' line after the last key", line=len(lines)
        ) from None
    _refuse_surrogates(lines, lines[1:end], end)
    return lines[1:end], lines[end + 1:]


#: YAML's complaints about a value that needed quotes ("description: Horário: 9h às 18h",
#: "description: [link] text").
_NEEDS_QUOTES: Final = ("mapping values are not allowed", "expected <block end>",
                        "found character that cannot start any token")


def read_frontmatter(front_lines: list[str]) -> tuple[dict[str, Any], dict[str, int]]:
    """The frontmatter's values and each key's 1-based record line (the record's line 1 is
    the opening ``---``), checked as `parse` checks them; a key may be missing.

    Raises:
        ConceptFormatError: the frontmatter is too large, nested too deep, not a mapping of
            known keys, invalid YAML (a tab that indents a line included), or a value is of
            the wrong kind; the line and field are named.
    """
    _check_before_yaml(front_lines)
    return _load_frontmatter(front_lines)


def _normalise_line_ends(text: str) -> str:
    """`text` with CRLF line ends as LF; a record whose first line ends in a lone CR
    (CR-only line ends) has every CR read as LF. A lone CR elsewhere is kept.
    """
    if text.startswith("---\r") and not text.startswith("---\r\n"):
        return text.replace("\r\n", "\n").replace("\r", "\n")
    return text.replace("\r\n", "\n")


def _check_before_yaml(front_lines: list[str]) -> None:
    """Refuse a frontmatter YAML must not see: too large, extra line breaks, long numbers,
    deep nesting. Linear in its length.

    Raises:
        ConceptFormatError: naming the line and field.
    """
    size = sum(len(line) + 1 for line in front_lines)
    if size > FRONTMATTER_MAX:
        longest = max(range(len(front_lines)), key=lambda i: len(front_lines[i]))
        raise ConceptFormatError(
            f"the frontmatter is {size} characters, at most {FRONTMATTER_MAX}; this line "
            f"alone is {len(front_lines[longest])}",
            line=longest + 2, field=_field_at(front_lines, longest),
        )
    for index, line in enumerate(front_lines):
        found = _YAML_BREAKS_RE.search(line)
        if found is not None:
            raise ConceptFormatError(
                f"contains U+{ord(found.group()):04X}, a line break inside a value; "
                "write the value on one line", line=index + 2, field=_field_at(front_lines, index),
            )
        if line.rstrip() == "..." or line.startswith("... "):
            raise ConceptFormatError("'...' ends a YAML document inside the frontmatter; a record's "
                                     "frontmatter is one document closed by '---'", line=index + 2)
        number = _NUMBER_LINE_RE.fullmatch(line)
        if number is not None and len(number.group(2)) > NUMBER_MAX:
            raise ConceptFormatError(
                f"is {len(number.group(2))} characters long; a number has at most {NUMBER_MAX}",
                line=index + 2, field=number.group(1),
            )
    deep = _too_deep(front_lines, NESTING_MAX)
    if deep is not None:
        raise ConceptFormatError(
            f"brackets nested more than {NESTING_MAX} deep; a record needs one level (sources)",
            line=deep + 2, field=_field_at(front_lines, deep),
        )


def _too_deep(front_lines: list[str], limit: int) -> int | None:
    """The 0-based index of the first line where ``[``/``{`` nesting passes `limit`, or None.

    Follows YAML closely enough for a bound: in block context only a value that starts
    with ``[`` or ``{`` opens a flow collection (a plain scalar may hold brackets);
    quoted scalars are skipped (also across lines); ``#`` after a blank starts a comment.
    Stops at the first line past the limit, so it is linear in the text read.
    """
    depth = 0
    quote: str | None = None
    for index, line in enumerate(front_lines):
        position = 0
        if depth == 0 and quote is None:
            start = _VALUE_START_RE.match(line)  # always matches (every part is optional)
            position = start.end() if start is not None else 0
            if position >= len(line) or line[position] not in "[{\"'":
                continue  # a plain scalar, a comment or nothing: no nesting on this line
        while position < len(line):
            if quote is not None:
                position = _quote_end(line, position, quote)
                if position < 0:
                    break  # the quoted scalar goes on on the next line
                quote = None
                if depth == 0:
                    break  # a quoted block value ends the line's value
                continue
            found = _FLOW_SPECIAL_RE.search(line, position)
            if found is None:
                break
            char, position = found.group(), found.end()
            if char in "[{":
                depth += 1
                if depth > limit:
                    return index
            elif char in "]}":
                depth -= 1
                if depth <= 0:
                    depth = 0
                    break  # back in block context: the rest of the line is not a value start
            elif char == "#":
                if found.start() == 0 or line[found.start() - 1] in " \t":
                    break
            elif found.start() == 0 or line[found.start() - 1] in " \t[{,:":
                quote = char  # a quote that starts a token opens a quoted scalar
    return None


def _quote_end(line: str, start: int, quote: str) -> int:
    """The index just past the `quote` closing a quoted scalar in `line` from `start`, or -1."""
    position = start
    while True:
        found = line.find(quote, position)
        if found < 0:
            return -1
        if quote == '"':
            backslashes = len(line[position:found]) - len(line[position:found].rstrip("\\"))
            if backslashes % 2:
                position = found + 1
                continue
            return found + 1
        if line.startswith("''", found):  # an escaped single quote
            position = found + 2
            continue
        return found + 1


def _refuse_surrogates(lines: list[str], front_lines: list[str], end: int) -> None:
    """Reject a record holding text that cannot be written as UTF-8, naming line and field."""
    for i, line in enumerate(lines):
        if surrogate_in(line) is None:
            continue
        field = "body" if i > end else _field_at(front_lines, i - 1)
        raise ConceptFormatError(_surrogate_problem(line), line=i + 1, field=field)


#: A plain (unquoted) value with a YAML comment after it: "description: Ticket #123 ...".
_CUT_VALUE: Final = re.compile(r"^([A-Za-z_][\w-]*):[ \t]+[^\s'\"#\[{|>&*!][^#]*?[ \t]#")


def _refuse_cut_values(front_lines: list[str]) -> None:
    """Reject a plain value that YAML would cut at " #" (the rest read as a comment, lost).

    Raises:
        ConceptFormatError: naming the line and field, and how to keep the text (quote it).
    """
    for i, line in enumerate(front_lines):
        cut = _CUT_VALUE.match(line)
        if cut is not None:
            raise ConceptFormatError(
                "' #' starts a YAML comment, so the rest of the line would be lost; put the value in "
                "quotes to keep it", line=i + 2, field=cut.group(1))


_KEY_LINE_RE: Final = re.compile(r"^( *)([a-z_]+)[ \t]*:(?:[ \t]|$)")  # (a tab has YAML's own message)


def _indented_key(front_lines: list[str]) -> tuple[int, str] | None:
    """The first line that indents a frontmatter key (`KEYS`), as ``(0-based index, key)``;
    None when none does. Read only once YAML has failed: a source's own keys may be
    indented under it.
    """
    for index, line in enumerate(front_lines):
        found = _KEY_LINE_RE.match(line)
        if found is not None and found.group(1) and found.group(2) in KEYS:
            return index, found.group(2)
    return None


def _load_frontmatter(front_lines: list[str]) -> tuple[dict[str, Any], dict[str, int]]:
    """The frontmatter's values (see `parse`) and each key's 1-based record line."""
    source = "\n".join(front_lines)
    loader: _Loader | None = None
    _refuse_cut_values(front_lines)
    try:
        _refuse_anchors(source, front_lines)
        loader = _Loader(source)
        root = loader.get_single_node()
    except RecursionError:  # belt and braces: the nesting check comes first
        raise ConceptFormatError(f"brackets nested more than {NESTING_MAX} deep", line=2) from None
    except yaml.MarkedYAMLError as exc:
        # where a quote or a bracket left open was opened; else where the parser stopped (a
        # block mapping's context is its first key, not the line at fault)
        opened = exc.context is not None and ("flow" in exc.context or "quoted" in exc.context)
        mark = (exc.context_mark if opened else exc.problem_mark) or exc.context_mark or exc.problem_mark
        line = mark.line + 2 if mark is not None else None
        field = _field_at(front_lines, mark.line if mark is not None else None)
        indented = _indented_key(front_lines)
        if indented is not None:
            index, key = indented
            raise ConceptFormatError(
                f"key '{key}' is indented; every key of the frontmatter starts at the beginning of its line",
                line=index + 2, field=key) from None
        problem = exc.problem or exc.context or ""
        if "'\\t'" in problem:
            spot = exc.problem_mark
            text = front_lines[spot.line] if spot is not None and spot.line < len(front_lines) else ""
            problem += " (YAML indents with spaces, never tabs)" if not text[:spot.column if spot else 0].strip() \
                else " (a tab inside a value: a field holds no tab, write a space in its place)"
        elif problem.startswith(_NEEDS_QUOTES):
            problem += " (a value with ': ', or that starts with [ { \" % @ ` * & | > -, goes in quotes)"
        raise ConceptFormatError(f"invalid YAML: {problem}", line=line, field=field) from None
    except yaml.reader.ReaderError as exc:
        index = source[: exc.position].count("\n")
        raise ConceptFormatError(
            f"invalid YAML: unacceptable character #x{exc.character:04x} ({exc.reason})",
            line=index + 2, field=_field_at(front_lines, index),
        ) from None
    except yaml.YAMLError as exc:
        raise ConceptFormatError(f"invalid YAML: {str(exc)[:200]}", line=2) from None
    finally:
        if loader is not None:
            loader.dispose()
    if root is None:
        raise ConceptFormatError("the frontmatter is empty", line=2)
    if not isinstance(root, yaml.MappingNode):
        raise ConceptFormatError("the frontmatter must be 'key: value' lines", line=2)
    data: dict[str, Any] = {}
    key_lines: dict[str, int] = {}
    for key_node, value_node in root.value:
        line = key_node.start_mark.line + 2
        if not isinstance(key_node, yaml.ScalarNode) or key_node.tag == MERGE_TAG:
            what = (
                "merge keys (<<) are" if key_node.tag == MERGE_TAG
                else "a key must be a name; lists and mappings are"
            )
            raise ConceptFormatError(f"{what} not allowed", line=line)
        key = key_node.value
        if key in key_lines:
            raise ConceptFormatError(
                f"duplicate key {short_repr(key)} (first on line {key_lines[key]})",
                line=line, field=key,
            )
        key_lines[key] = line
        if key not in KEYS:
            raise ConceptFormatError(
                f"unknown key {short_repr(key)}; allowed: {', '.join(KEYS)}", line=line, field=key
            )
        data[key] = _value(key, value_node, line)
    return data, key_lines


def _refuse_anchors(source: str, front_lines: list[str]) -> None:
    """Refuse YAML anchors (``&a``), aliases (``*a``) and tags (``!!x``) before anything
    is built.

    An alias can expand a few lines into gigabytes (an "alias bomb"); a record never
    needs one, nor a tag (its values' kinds are fixed by their keys).
    """
    for token in yaml.scan(source, Loader=_Loader):
        if isinstance(token, (yaml.AnchorToken, yaml.AliasToken, yaml.TagToken)):
            what = (
                "YAML tags (!name) are" if isinstance(token, yaml.TagToken)
                else "YAML anchors and aliases (&name, *name) are"
            )
            index = token.start_mark.line
            raise ConceptFormatError(
                f"{what} not allowed", line=index + 2, field=_field_at(front_lines, index)
            )


def _value(key: str, node: yaml.Node, line: int) -> Any:
    kind = "a list" if isinstance(node, yaml.SequenceNode) else "a mapping"
    if key == "sources":
        if isinstance(node, yaml.ScalarNode):
            return node.value  # the validator says it must be a list
        if not isinstance(node, yaml.SequenceNode) or not all(
            isinstance(item, yaml.ScalarNode) for item in node.value
        ):
            raise ConceptFormatError(
                "must be a list of session ids (printable text, 1-200 characters)",
                line=line, field=key,
            )
        return tuple(item.value for item in node.value)
    if not isinstance(node, yaml.ScalarNode):
        expected = "a number" if key in ("confidence", "occurrences") else "text"
        raise ConceptFormatError(f"must be {expected}, not {kind}", line=line, field=key)
    if key in TEXT_KEYS:
        if node.style == ">" and node.value.endswith("\n") and "\n" not in node.value[:-1]:
            return node.value[:-1]  # a folded scalar is one line; YAML keeps its last line end
        return node.value
    if len(node.value) > NUMBER_MAX:  # before int() or float() see it
        raise ConceptFormatError(
            f"is {len(node.value)} characters long; a number has at most {NUMBER_MAX}",
            line=line, field=key,
        )
    plain = node.style is None
    if key == "occurrences" and plain and _WHOLE_RE.fullmatch(node.value):
        return int(node.value)
    if key == "confidence" and plain and _DECIMAL_RE.fullmatch(node.value):
        return float(node.value) if "." in node.value else int(node.value)
    return node.value  # quoted or not a plain decimal: the validator names it


def _field_at(front_lines: list[str], index: int | None) -> str | None:
    if index is None or not front_lines:
        return None
    at = min(index, len(front_lines) - 1)
    indented = re.match(r"\t+([A-Za-z_][\w-]*)\s*:", front_lines[at])  # a key a tab indents is its own line's
    if indented:
        return indented.group(1)
    for i in range(at, -1, -1):
        match = re.match(r"([A-Za-z_][\w-]*)\s*:", front_lines[i])
        if match:
            return match.group(1)
    return None
