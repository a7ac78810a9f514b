"""A concept written by a person: fill in the frontmatter keys the author left out.

A record on disk carries every key (see `insika_knowledge.concept`); a person writing
one by hand should only need the ones that say something::

    ---
    name: frete-gratis-acima-199
    description: Orders above R$ 199 ship for free.
    ---

    Every order whose products add up to more than R$ 199 ships for free.

`complete` appends each missing key, with the value the caller chooses, at the end of
the frontmatter (so the line numbers of the author's own lines stay as written in any
error) and returns the completed text for `insika_knowledge.concept.parse`, which
stays the only reader of the format.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Final

from insika_knowledge.concept import KEYS, Concept, read_frontmatter, split_record
from insika_knowledge.errors import ConceptFormatError

#: The keys an author must write: everything else has a default.
REQUIRED: Final[tuple[str, ...]] = ("name", "description")


def complete(markdown: str, defaults: Mapping[str, object]) -> tuple[str, frozenset[str]]:
    """`markdown` with each key of `defaults` the author left out appended to the frontmatter.

    Args:
        markdown: the author's record: ``---``, some ``key: value`` lines, ``---``, the body.
        defaults: key -> value for the keys that may be left out (text, number or a list
            of text; written as JSON, which YAML reads back as the same value).

    Returns:
        ``(completed markdown, the keys that were filled in)``.

    Raises:
        ConceptFormatError: as `insika_knowledge.concept.parse` for the author's own lines
            (no frontmatter, invalid YAML, a key not a record's), or a required key (name,
            description) is missing; the line and field are named.
    """
    front, rest = split_record(markdown)
    first = next((i for i, line in enumerate(front) if line.strip() and not line.lstrip().startswith("#")), None)
    if first is not None and front[first].lstrip()[:1] in "{[":
        raise ConceptFormatError("write the frontmatter as 'key: value' lines, one a line (not a {...} or "
                                 "[...] block): the keys left out are added as lines", line=first + 2)
    have = read_frontmatter(front)[0].keys()
    for key in REQUIRED:
        if key not in have:
            raise ConceptFormatError(f"missing key {key!r}", line=len(front) + 2, field=key)
    filled = [k for k in KEYS if k not in have and k in defaults]
    added = [f"{key}: {json.dumps(defaults[key], ensure_ascii=False)}" for key in filled]
    lines = ["---", *front, *added, "---", *rest]
    return "\n".join(lines), frozenset(filled)


def authors_error(exc: ConceptFormatError, markdown: str, filled: int) -> ConceptFormatError:
    """`exc`, raised on `complete`'s output, with its line counted in the author's `markdown`.

    `complete` adds `filled` lines at the end of the frontmatter: a line after them is that
    many lines earlier in the author's text; a problem in an added line (a default the
    author left out) is placed on the author's closing ``---``.
    """
    if exc.line is None:
        return exc
    front, _ = split_record(markdown)
    closing = len(front) + 2  # the author's closing '---' line
    if exc.line < closing:
        return exc
    line = exc.line - filled if exc.line >= closing + filled else closing
    return ConceptFormatError(exc.problem, line=line, field=exc.field)


def check_times(concept: Concept) -> Concept:
    """`concept`, when it was not updated before it was created (both UTC ISO-8601, so
    their text order is their time order).

    Raises:
        ConceptFormatError: ``updated_at`` is earlier than ``created_at`` (field named).
    """
    if concept.updated_at < concept.created_at:
        raise ConceptFormatError(
            f"{concept.updated_at} is earlier than created_at {concept.created_at}: a record is never "
            "updated before it was created (an updated_at the record leaves out is the time of the put; "
            "check created_at too)", field="updated_at")
    return concept
