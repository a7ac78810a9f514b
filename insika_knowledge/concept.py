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
import unicodedata
from datetime import UTC, datetime
from typing import Any, Final, Literal

import yaml

from insika_knowledge.errors import ConceptFormatError, InvalidName

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
CONTRADICTION_HEADING: Final = "## Contradiction"
_CONTRADICTION_RE: Final = re.compile(r"^## Contradiction[ \t]*$", re.MULTILINE)


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
    """Turn a proposed name into a slug: fold case and accents, join words with ``-``.

    Args:
        raw: any text, e.g. ``"Frete Grátis acima de R$199"``.

    Returns:
        The slug, e.g. ``"frete-gratis-acima-de-r-199"``, at most 80 characters
        (cut at a word boundary when possible).

    Raises:
        InvalidName: nothing usable is left (empty, only punctuation, or a script
            without an ASCII transliteration such as CJK).
    """
    if not isinstance(raw, str):
        raise InvalidName(f"a concept name must be text, got {type(raw).__name__}")
    decomposed = unicodedata.normalize("NFKD", raw)
    ascii_only = "".join(c for c in decomposed if not unicodedata.combining(c))
    lowered = ascii_only.casefold()
    slug = re.sub(r"[^a-z0-9]+", "-", lowered).strip("-")
    if len(slug) > NAME_MAX:
        cut = slug[:NAME_MAX]
        slug = cut.rsplit("-", 1)[0] if "-" in cut[NAME_MAX // 2 :] else cut
        slug = slug.strip("-")
    if not slug or not NAME_RE.fullmatch(slug):
        raise InvalidName(f"cannot make a concept name out of {raw!r}: use letters or digits")
    # A name that was mostly non-ASCII loses its meaning in transliteration.
    letters = sum(1 for c in raw if c.isalnum())
    kept = sum(1 for c in slug if c.isalnum())
    if letters and kept < letters / 2:
        raise InvalidName(f"cannot make a concept name out of {raw!r}: too little is ASCII")
    return slug


def check_name(name: str) -> str:
    """Return `name` unchanged if it is already a valid slug.

    Raises:
        InvalidName: it is not ``[a-z0-9][a-z0-9-]{0,79}``.
    """
    if not isinstance(name, str) or not NAME_RE.fullmatch(name):
        raise InvalidName(
            f"{name!r} is not a concept name: use 1-80 lowercase letters, digits and '-', "
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


def has_contradiction(body: str) -> bool:
    """True when `body` has a ``## Contradiction`` heading line."""
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
    if not isinstance(c.name, str) or not NAME_RE.fullmatch(c.name):
        out.append(("name", f"{c.name!r} is not a slug ([a-z0-9][a-z0-9-]{{0,79}})"))
    if not isinstance(c.description, str) or not c.description.strip():
        out.append(("description", "must be non-empty text"))
    elif len(c.description) > DESCRIPTION_MAX:
        out.append(("description", f"is {len(c.description)} characters; at most {DESCRIPTION_MAX}"))
    elif not c.description.isprintable() or c.description != c.description.strip():
        out.append(("description", "must be one line of printable text without edge spaces"))
    if c.type not in CONCEPT_TYPES:
        out.append(("type", f"{c.type!r} is not one of {', '.join(CONCEPT_TYPES)}"))
    if c.provenance not in PROVENANCES:
        out.append(("provenance", f"{c.provenance!r} is not one of {', '.join(PROVENANCES)}"))
    if isinstance(c.confidence, bool) or not isinstance(c.confidence, (int, float)):
        out.append(("confidence", f"{c.confidence!r} is not a number"))
    elif not 0.0 <= c.confidence <= 1.0:
        out.append(("confidence", f"{c.confidence!r} is outside 0..1"))
    if not isinstance(c.sources, tuple) or not all(
        isinstance(s, str) and SOURCE_RE.fullmatch(s) for s in c.sources
    ):
        out.append(("sources", "must be a list of session ids (printable text, 1-200 characters)"))
    elif len(set(c.sources)) != len(c.sources):
        out.append(("sources", "lists a session id twice"))
    if isinstance(c.occurrences, bool) or not isinstance(c.occurrences, int) or c.occurrences < 0:
        out.append(("occurrences", f"{c.occurrences!r} is not a whole number >= 0"))
    for field in ("created_at", "updated_at"):
        value = getattr(c, field)
        if not _is_timestamp(value):
            out.append((field, f"{value!r} is not a UTC time like 2026-08-24T18:02:11Z"))
    if not isinstance(c.body, str) or not c.body.strip():
        out.append(("body", "the markdown body is empty"))
    elif len(c.body) > BODY_MAX:
        out.append(("body", f"is {len(c.body)} characters; at most {BODY_MAX}"))
    elif "\x00" in c.body:
        out.append(("body", "contains a NUL character"))
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


class _Loader(yaml.SafeLoader):
    """SafeLoader that keeps timestamps as text (we validate their exact format)."""


_Loader.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


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
    """A YAML scalar for `text`: plain when YAML reads it back unchanged, else double-quoted."""
    if _plain_is_safe(text):
        return text
    return json.dumps(text, ensure_ascii=False)


_PLAIN_OK = re.compile(r"[^\s\-?:,\[\]{}#&*!|>'\"%@`][^\n]*")


def _plain_is_safe(text: str) -> bool:
    if not _PLAIN_OK.fullmatch(text) or ": " in text or " #" in text or text.endswith(":"):
        return False
    try:
        return yaml.load(f"k: {text}", Loader=_Loader) == {"k": text}  # noqa: S506 - SafeLoader
    except yaml.YAMLError:
        return False


def parse(markdown: str) -> Concept:
    """Parse a markdown record into a `Concept`.

    CRLF line ends are accepted and read as LF. Keys may appear in any order, but
    every key must be present and no other key is allowed.

    Args:
        markdown: the whole record text.

    Returns:
        The concept; `serialize` of it reproduces `markdown` when it was canonical.

    Raises:
        ConceptFormatError: with the 1-based line and the field at fault, e.g.
            ``line 6, field 'confidence': 1.7 is outside 0..1``.
    """
    if not isinstance(markdown, str):
        raise ConceptFormatError(f"a record must be text, got {type(markdown).__name__}")
    text = markdown.replace("\r\n", "\n")
    lines = text.split("\n")
    if not lines or lines[0].rstrip() != "---":
        raise ConceptFormatError("the record must start with a '---' line", line=1)
    try:
        end = next(i for i in range(1, len(lines)) if lines[i].rstrip() == "---")
    except StopIteration:
        raise ConceptFormatError(
            "the frontmatter is not closed: add a '---' line after the last key", line=len(lines)
        ) from None
    front_lines = lines[1:end]
    data = _load_frontmatter(front_lines)
    key_lines = _key_lines(front_lines)
    for key in data:
        if key not in KEYS:
            raise ConceptFormatError(
                f"unknown key {key!r}; allowed: {', '.join(KEYS)}",
                line=key_lines.get(str(key)),
                field=str(key),
            )
    for key in KEYS:
        if key not in data:
            raise ConceptFormatError(f"missing key {key!r}", line=end + 1, field=key)
    rest = lines[end + 1 :]
    if rest and rest[0] == "":
        rest = rest[1:]
    body = "\n".join(rest).rstrip("\n")
    raw_sources = data["sources"]
    sources: Any = tuple(raw_sources) if isinstance(raw_sources, list) else raw_sources
    confidence = data["confidence"]
    if isinstance(confidence, int) and not isinstance(confidence, bool):
        confidence = float(confidence)
    concept = Concept(
        name=_as_text(data["name"]),
        description=_as_text(data["description"]),
        type=_as_text(data["type"]),
        provenance=_as_text(data["provenance"]),
        confidence=confidence,
        sources=sources,
        occurrences=data["occurrences"],
        created_at=_as_text(data["created_at"]),
        updated_at=_as_text(data["updated_at"]),
        body=body,
    )
    for field, problem in _problems(concept):
        line = end + 3 if field == "body" else key_lines.get(field)
        raise ConceptFormatError(problem, line=line, field=field)
    if isinstance(concept.confidence, float) and round(concept.confidence, 2) != concept.confidence:
        raise ConceptFormatError(
            f"{concept.confidence!r} has more than 2 decimals",
            line=key_lines.get("confidence"),
            field="confidence",
        )
    return concept


def _as_text(value: Any) -> Any:
    # YAML reads `name: 123` as an int and `type: null` as None; keep the text form
    # for the validator to judge, but leave containers alone so they fail clearly.
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    return value


def _load_frontmatter(front_lines: list[str]) -> dict[str, Any]:
    source = "\n".join(front_lines)
    try:
        data = yaml.load(source, Loader=_Loader)  # noqa: S506 - a SafeLoader subclass
    except yaml.MarkedYAMLError as exc:
        mark = exc.context_mark or exc.problem_mark
        line = mark.line + 2 if mark is not None else None
        field = _field_at(front_lines, mark.line if mark is not None else None)
        raise ConceptFormatError(
            f"invalid YAML: {exc.problem or exc.context}", line=line, field=field
        ) from None
    except yaml.YAMLError as exc:
        raise ConceptFormatError(f"invalid YAML: {exc}") from None
    if data is None:
        raise ConceptFormatError("the frontmatter is empty", line=2)
    if not isinstance(data, dict):
        raise ConceptFormatError("the frontmatter must be 'key: value' lines", line=2)
    return data


def _key_lines(front_lines: list[str]) -> dict[str, int]:
    out: dict[str, int] = {}
    for i, line in enumerate(front_lines):
        match = re.match(r"([A-Za-z_][\w-]*)\s*:", line)
        if match:
            out.setdefault(match.group(1), i + 2)
    return out


def _field_at(front_lines: list[str], index: int | None) -> str | None:
    if index is None:
        return None
    for i in range(min(index, len(front_lines) - 1), -1, -1):
        match = re.match(r"([A-Za-z_][\w-]*)\s*:", front_lines[i])
        if match:
            return match.group(1)
    return None
