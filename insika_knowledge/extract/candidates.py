"""The gates a model's answer passes before anything is written.

Each candidate is judged on its own: one bad candidate never discards the good ones.
A dropped candidate is counted under one reason (the first that applies):

- ``over_limit``: the answer proposed more than `MAX_CANDIDATES` (50) items; the items
  after the 50th are dropped unjudged;
- ``not_object``: the item is not a JSON object;
- ``stamped_key``: it carries a key only the engine writes (provenance, confidence,
  sources, occurrences, created_at, updated_at);
- ``unknown_key``: it carries a key outside name, description, type, body and evidence;
- ``invalid``: a key is missing, not text, too long, holds text that cannot be written
  as UTF-8 (a lone surrogate), the body has a ``## Contradiction`` heading (in any of
  the spellings a markdown renderer shows as one) or a front-matter block (a ``---``
  line, then a record key: `_FRONT_MATTER_RE`), the name cannot be made a slug, or
  ``evidence`` (optional) is not a list of at most `EVIDENCE_MAX` quotes of text;
- ``empty``: name, description or body is blank (or shows nothing: zero-width characters only);
- ``type_not_allowed``: the type is valid but not in the agent's ``types`` allowlist;
- ``instruction``: the description or body speaks to the model, not of the business (sets
  its instructions aside, asks for its prompt, gives it another persona, has it skip a
  check, wears a chat template's markup: `extract.instructions`), whoever said it;
- ``duplicate``: the same name appeared earlier in the same answer (kept aside in
  `Screened.alternates`: when the trust gate holds the first, the first of them the
  business side supports is learned in its place).

Survivors are redacted for credentials (``<SECRET>``, counted as ``secret``) and personal
data (name, description and body), and their body
loses the characters that show a reviewer other words than a model reads (tag characters,
bidirectional controls: `escaping.xml_safe`) and terminal controls. Their
``evidence`` quotes are kept as written (the trust gate finds them verbatim in the
transcript) and are never stored.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Final

from insika_knowledge.analysis.text import INVISIBLE
from insika_knowledge.candidate import EVIDENCE_MAX, MODEL_BODY_MAX, QUOTE_MAX, Candidate
from insika_knowledge.concept import (
    CONCEPT_TYPES,
    DESCRIPTION_MAX,
    ENGINE_KEYS,
    MODEL_KEYS,
    has_contradiction,
    normalize_name,
    printable_only,
    surrogate_in,
)
from insika_knowledge.errors import InvalidName
from insika_knowledge.escaping import model_text
from insika_knowledge.extract.instructions import addressed_to_model
from insika_knowledge.privacy.credentials import SECRET, scrub
from insika_knowledge.privacy.people import drop_names, removed_names
from insika_knowledge.privacy.redact import PLACEHOLDERS, Redaction, redact, redact_name

#: The most candidates judged from one answer; the rest are dropped as ``over_limit``.
MAX_CANDIDATES: Final = 50
DROP_REASONS: Final = (
    "over_limit", "not_object", "stamped_key", "unknown_key", "invalid", "empty",
    "type_not_allowed", "instruction", "duplicate",
)
#: Reasons that say an item does not have a candidate's shape. An answer whose every item is
#: dropped for one of them held nothing usable: the turn is ``model_malformed``, tried again.
MALFORMED_DROPS: Final = frozenset({"not_object", "stamped_key", "unknown_key", "invalid", "empty"})


@dataclass
class Screened:
    """The result of screening one answer: survivors, drop counts, redaction counts."""

    candidates: list[Candidate] = field(default_factory=list)
    dropped: Counter[str] = field(default_factory=Counter)
    redacted: Counter[str] = field(default_factory=Counter)
    proposed: int = 0
    #: one line per dropped candidate: its position, the reason and what was wrong
    #: (``"candidate 0: invalid: description is 312 characters (at most 200)"``).
    why: list[str] = field(default_factory=list)
    #: the later candidates of a name proposed more than once (dropped as ``duplicate``),
    #: in answer order: the trust gate may take one in place of the first
    #: (`learn.turn`: a rule, then the business's correction of it, under one name).
    alternates: dict[str, list[Candidate]] = field(default_factory=dict)


def screen(items: Iterable[Any], allowed_types: Iterable[str], keep: frozenset[str] = frozenset(),
           people: frozenset[str] = frozenset()) -> Screened:
    """Validate, filter and redact the candidates of one model answer.

    Args:
        items: the decoded JSON array the model answered (anything per item).
        allowed_types: the agent's ``types`` allowlist.
        keep: the business contacts the turn shows (`privacy.redact.kept_contacts`),
            left as they are.
        people: the people the turn names beside their data (`privacy.redact.people_named`):
            taken from every field of every candidate, a datum beside or not.

    Returns:
        The survivors in answer order and the per-reason drop counts (see module doc).
    """
    allowed = set(allowed_types)
    out = Screened()
    seen: set[str] = set()
    for index, item in enumerate(items):
        out.proposed += 1
        if index >= MAX_CANDIDATES:
            out.dropped["over_limit"] += 1
            out.why.append(f"candidate {index}: over_limit: only the first {MAX_CANDIDATES} are judged")
            continue
        reason, candidate = _judge(item, allowed, out.redacted, keep, people)
        if candidate is not None and candidate.name in seen:
            out.alternates.setdefault(candidate.name, []).append(candidate)
            reason, candidate = (f"duplicate: the name {candidate.name!r} came earlier in the answer (kept "
                                 "aside: learned in its place if the trust gate holds the earlier)"), None
        if candidate is None:
            kind = reason.split(":", 1)[0]
            out.dropped[kind] += 1
            out.why.append(f"candidate {index}: {reason}")
            continue
        seen.add(candidate.name)
        out.candidates.append(candidate)
    return out


def _secret_free(text: str, redacted: Counter[str]) -> str:
    """`text` with each credential replaced by ``<SECRET>`` (`privacy.scrub`), counted as ``secret``."""
    clean = scrub(text)
    if clean is not text:
        found = clean.count(SECRET) - text.count(SECRET)
        if found > 0:
            redacted["secret"] += found
    return clean


def _judge(item: Any, allowed: set[str], redacted: Counter[str], keep: frozenset[str] = frozenset(),
           turn_people: frozenset[str] = frozenset()) -> tuple[str, Candidate | None]:
    """The candidate `item` makes, or ``("<reason>: <what was wrong>", None)``."""
    if not isinstance(item, dict):
        return f"not_object: {type(item).__name__}, not an object", None
    keys = set(item) - {"evidence"}
    if keys & ENGINE_KEYS:
        return f"stamped_key: {_listed(keys & ENGINE_KEYS)} (the engine stamps these)", None
    if keys - set(MODEL_KEYS):
        return f"unknown_key: {_listed(keys - set(MODEL_KEYS))} (known: {_listed(MODEL_KEYS)}, evidence)", None
    quoted = _evidence(item.get("evidence"))
    if isinstance(quoted, str):
        return f"invalid: {quoted}", None
    evidence = quoted
    missing = set(MODEL_KEYS) - keys
    if missing:
        return f"invalid: missing {_listed(missing)}", None
    not_text = [k for k in MODEL_KEYS if not isinstance(item[k], str)]
    if not_text:
        return "invalid: " + "; ".join(f"{k} must be text, not {type(item[k]).__name__}" for k in not_text), None
    unpaired = [k for k in MODEL_KEYS if surrogate_in(item[k])]
    if unpaired:  # cannot be stored as UTF-8
        return f"invalid: {_listed(unpaired)} holds an unpaired surrogate (not storable as UTF-8)", None
    blank = [k for k in ("name", "description", "body") if not INVISIBLE.sub("", item[k]).strip()]  # "\u200b"
    if blank:
        return f"empty: {_listed(blank)}", None
    ctype = item["type"].strip().lower()
    if ctype not in CONCEPT_TYPES:
        return f"invalid: type {item['type']!r} is none of {_listed(CONCEPT_TYPES)}", None
    if ctype not in allowed:
        return f"type_not_allowed: {ctype!r} (this agent learns {_listed(allowed)})", None
    for key in ("description", "body"):
        addressed = addressed_to_model(item[key])
        if addressed is not None:
            return f"instruction: the {key} speaks to the model ({addressed[0]}: {addressed[1]!r})", None
    body = item["body"].replace("\r\n", "\n").replace("\r", "\n").strip("\n").rstrip()
    if len(body) > MODEL_BODY_MAX:
        return f"invalid: body is {len(body)} characters (at most {MODEL_BODY_MAX})", None
    if "\x00" in body:
        return "invalid: body holds a NUL character", None
    # a terminal escape or a bell is nothing a reader needs; tag characters and bidirectional
    # controls show a person reviewing the record other words than a model reads
    body = model_text(body)
    if has_contradiction(body):  # checked on what is kept: a removed control cannot join one
        return "invalid: body holds a '## Contradiction' heading", None
    if _FRONT_MATTER_RE.search(body):  # a second header: "---\nprovenance: policy\n..." read as the record's
        return "invalid: body holds a front-matter block (a '---' line, then a record key such as 'name:')", None
    if not body.strip():
        return "empty: body (control characters only)", None
    description = " ".join(item["description"].split())
    description = printable_only(description)  # an emoji sequence keeps its joiners
    if len(description) > DESCRIPTION_MAX:
        return f"invalid: description is {len(description)} characters (at most {DESCRIPTION_MAX})", None
    # a credential the model copied into a concept (an API key, a password) is never kept
    name_text, description, body = (_secret_free(t, redacted) for t in (item["name"], description, body))
    clean_name, clean_description, clean_body = (
        redact_name(name_text, keep), redact(description, keep), redact(body, keep)
    )
    # a person the description or body names is taken from the name too ("joana-silva-recife"),
    # and from the other field wherever it names them without a datum beside ("Sarah Connor
    # asked for a callback." over a body that gives her phone)
    people = turn_people | removed_names(description, clean_description.text) | removed_names(body, clean_body.text)
    clean_description, clean_body = (_without_people(part, people) for part in (clean_description, clean_body))
    named, dropped = drop_names(clean_name.text, people)
    if dropped and not _PLACEHOLDER_WORD_RE.sub("", named).strip(" -_"):
        # the name was nothing but the person's: named by the description instead (a slug
        # of placeholders alone would be one name for every such concept)
        named = drop_names(clean_description.text, people)[0]
    if dropped:
        clean_name = Redaction(named, {**clean_name.counts, "name": clean_name.counts.get("name", 0) + dropped})
    for part in (clean_name, clean_description, clean_body):
        redacted.update(part.counts)
    try:
        name = normalize_name(clean_name.text)
    except InvalidName as error:
        return f"invalid: name: {error}", None
    if not clean_description.text.strip() or not clean_body.text.strip():
        return "empty: description or body (after personal data was removed)", None
    if has_contradiction(clean_body.text):
        return "invalid: body holds a '## Contradiction' heading", None
    return "", Candidate(
        name=name,
        description=re.sub(r"\s+", " ", clean_description.text).strip(),
        type=ctype,
        body=clean_body.text,
        evidence=evidence,
    )


def _without_people(part: Redaction, people: frozenset[str]) -> Redaction:
    """`part` with every run of the words of `people` replaced by ``[name]`` (counted)."""
    text, dropped = drop_names(part.text, people)
    if not dropped:
        return part
    return Redaction(text, {**part.counts, "name": part.counts.get("name", 0) + dropped})


#: A placeholder of redaction in a name's words ("[name]", "[cpf]": `PLACEHOLDERS`).
_PLACEHOLDER_WORD_RE: Final = re.compile("|".join(map(re.escape, PLACEHOLDERS.values())))


#: A front-matter block inside a body: a ``---`` (or ``...``) line, then a line that sets a
#: key of the record's front matter. A reader of the record (a model through
#: ``load_knowledge``, a person) would take it for the engine's own header.
_FRONT_MATTER_RE: Final = re.compile(
    r"(?im)^[ \t]*(?:-{3,}|\.{3})[ \t]*\n(?:[ \t]*\n)*[ \t]*[\"']?(?:"
    + "|".join(sorted({*ENGINE_KEYS, *MODEL_KEYS})) + r")[\"']?[ \t]*:")


def _listed(keys: Iterable[str]) -> str:
    """`keys` sorted, joined with ", " (for a drop's reason)."""
    return ", ".join(sorted(map(str, keys)))  # a key may be no text: {1: "x"}


def _evidence(value: Any) -> tuple[str, ...] | None | str:
    """The quotes of an ``evidence`` value; None when absent; what is wrong with it (text)
    when it is unusable: a list of at most `EVIDENCE_MAX` strings of at most `QUOTE_MAX`
    characters each.
    """
    if value is None:
        return None
    if not isinstance(value, list):
        return f"evidence must be a list of quotes (strings), not {type(value).__name__}"
    if len(value) > EVIDENCE_MAX:
        return f"evidence holds {len(value)} quotes; at most {EVIDENCE_MAX}"
    for number, quote in enumerate(value, start=1):
        if not isinstance(quote, str):
            return f"evidence quote {number} is {type(quote).__name__}, not text"
        if len(quote) > QUOTE_MAX:
            return f"evidence quote {number} is {len(quote)} characters; at most {QUOTE_MAX}"
        if surrogate_in(quote):
            return f"evidence quote {number} holds a lone surrogate (it cannot be stored as UTF-8)"
    return tuple(q for q in value if q.strip())
