"""Rows to records, and the checks every backend's operator writes share.

Both backends (`insika_knowledge.store.sqlite`, `insika_knowledge.store.postgres`) read
concepts in the same column order (`CONCEPT_COLUMNS`) and turn rows into the records of
`insika_knowledge.store.base` here, so they cannot drift apart.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Sequence
from typing import Any, Final

from insika_knowledge.concept import Concept
from insika_knowledge.errors import UserError
from insika_knowledge.store.base import ScanRow, StoredConcept

#: The columns `row_to_stored` reads, in order (of ``concepts``, unaliased): the last one
#: says whether the concept is held in quarantine (the ``quarantine`` table's primary key).
CONCEPT_COLUMNS: Final = (
    "id, version, name, description, type, provenance, confidence, sources, occurrences, "
    "created_at, updated_at, body, "
    "EXISTS (SELECT 1 FROM quarantine q WHERE q.agent = concepts.agent AND q.name = concepts.name)"
)
#: The columns `scan_row` reads, in order.
SCAN_COLUMNS: Final = (
    "id, version, name, description, type, provenance, confidence, updated_at, body"
)


def scan_row(row: Sequence[Any]) -> ScanRow:
    """A `ScanRow` from the `SCAN_COLUMNS` of one concept."""
    (cid, version, name, description, ctype, provenance, confidence, updated_at, body) = row
    return ScanRow(int(cid), int(version), str(name), str(description), str(ctype),
                   str(provenance), float(confidence), str(updated_at), str(body))


def row_to_stored(row: Sequence[Any]) -> StoredConcept:
    """A `StoredConcept` from the `CONCEPT_COLUMNS` of one concept (``sources`` is JSON text)."""
    (cid, version, name, description, ctype, provenance, confidence, sources, occurrences,
     created_at, updated_at, body, held) = row
    concept = Concept(
        name=name,
        description=description,
        type=ctype,
        provenance=provenance,
        confidence=float(confidence),
        sources=tuple(json.loads(sources)),
        occurrences=int(occurrences),
        created_at=created_at,
        updated_at=updated_at,
        body=body,
    )
    return StoredConcept(concept=concept, version=int(version), id=int(cid), quarantined=bool(held))


def check_operator(actor: object, version: object = None) -> None:
    """Refuse an operator write whose actor or version number is not usable.

    Raises:
        UserError: `actor` is not 1-100 printable characters, or `version` is not a
            whole number from 1 (versions count from 1; None allowed where a version is
            optional).
    """
    if not isinstance(actor, str) or not 0 < len(actor) <= 100 or not actor.isprintable():
        raise UserError(f"actor must be 1-100 printable characters, got {str(actor)[:40]!r}")
    if version is not None and (isinstance(version, bool) or not isinstance(version, int)):
        raise UserError(f"a version number must be a whole number, got {str(version)[:20]!r}")
    if version is not None and version < 1:
        raise UserError(f"a version number counts from 1, got {version}")


def not_text(exc: UnicodeEncodeError) -> UserError:
    """The error of a value that is not text a database stores (a lone surrogate: bytes
    that were not UTF-8, e.g. a command-line argument).
    """
    return UserError(f"{exc.object[exc.start:exc.end]!r} is not valid text (not UTF-8)")


_DIGITS: Final = re.compile(r"(\d+)")


@functools.lru_cache(maxsize=65536)
def natural_key(name: str) -> tuple[str | int, ...]:
    """`name` as a natural sort key: digit runs compare as numbers (``c2`` < ``c10``).

    The key alternates text and number (text first, possibly empty), so any two keys
    compare without mixing types.
    """
    parts = _DIGITS.split(name)
    return tuple(int(p) if i % 2 else p for i, p in enumerate(parts))


#: `concept_page`'s sort rows: (concept id, name, the sort column's value).
Keyed = list[tuple[int, str, Any]]


def natural_of_row(row: tuple[int, str, Any]) -> tuple[str | int, ...]:
    """The natural key of a `Keyed` row's name."""
    return natural_key(row[1])


def key_of_row(row: tuple[int, str, Any]) -> Any:
    """A `Keyed` row's sort value."""
    return row[2]


def sort_keyed(keyed: Keyed, sort: str, desc: bool, ranked: Sequence[str] | None) -> None:
    """Sort `concept_page`'s rows in place: by `sort` (names naturally, as every tie-break).

    Args:
        keyed: ``(id, name, value of the sort column)`` rows.
        sort: a column name, ``name``, or ``rank`` (the order of `ranked`).
        desc: descending (ties still by name, ascending).
        ranked: the names in rank order (for ``rank``).
    """
    keyed.sort(key=natural_of_row)  # names ascending: every sort's tie-break
    if sort == "rank":
        position = {hit: i for i, hit in enumerate(ranked or [])}
        keyed.sort(key=lambda r: position[r[1]], reverse=desc)
    elif sort != "name":
        keyed.sort(key=key_of_row, reverse=desc)
    elif desc:
        keyed.reverse()
