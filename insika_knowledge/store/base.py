"""Records the stores return, and the `Store` protocol every backend implements."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Any, NamedTuple, Protocol

from insika_knowledge.concept import Concept, serialize


@dataclass(frozen=True, slots=True)
class StoredConcept:
    """A concept as it is on record: the record plus its row id and version number."""

    concept: Concept
    version: int
    id: int

    @property
    def markdown(self) -> str:
        """The record's canonical markdown (what export writes)."""
        return serialize(self.concept)


class Version(NamedTuple):
    """One row of a concept's history.

    ``reason`` is extract | confirm | merge | conflict | edit | restore | delete;
    ``actor`` is ``engine`` or the operator; ``markdown`` is the record after the change
    (for ``delete``: the last record before it).
    """

    agent: str
    name: str
    version: int
    reason: str
    actor: str
    session_id: str | None
    markdown: str
    created_at: str


class ScanRow(NamedTuple):
    """What the read cache loads of one concept."""

    id: int
    version: int
    name: str
    description: str
    type: str
    provenance: str
    confidence: float
    updated_at: str
    body: str


@dataclass(frozen=True)
class ExtractionRecord:
    """The outcome of one turn's extraction.

    Attributes:
        outcome: ``ok``, ``no_model``, ``model_timeout``, ``model_rate_limited``,
            ``model_malformed``, ``model_empty``, ``model_error`` or ``error``.
        retryable: True when running the extraction again may succeed.
        candidates: candidates the model proposed.
        written: concepts learned, confirmed, merged or put in conflict.
        dropped: reason -> number of candidates dropped.
        detail: a short description of a failure (never a concept body).
    """

    agent: str
    session_id: str
    turn_id: str
    outcome: str
    retryable: bool
    candidates: int
    written: int
    dropped: dict[str, int] = field(default_factory=dict)
    detail: str | None = None
    attempted_at: str = ""

    def to_row(self) -> tuple[Any, ...]:
        """The ``extractions`` table row."""
        return (
            self.agent, self.session_id, self.turn_id, self.outcome, int(self.retryable),
            self.candidates, self.written, json.dumps(self.dropped, sort_keys=True),
            self.detail, self.attempted_at,
        )

    @classmethod
    def from_row(cls, row: tuple[Any, ...]) -> ExtractionRecord:
        """Build from an ``extractions`` table row."""
        (agent, session_id, turn_id, outcome, retryable, candidates, written, dropped,
         detail, attempted_at) = row
        return cls(agent, session_id, turn_id, outcome, bool(retryable), int(candidates),
                   int(written), json.loads(dropped), detail, attempted_at)


class Transaction(Protocol):
    """Reads and writes inside one serialised write transaction."""

    def get(self, agent: str, name: str) -> StoredConcept | None: ...
    def has_sighting(self, agent: str, name: str, session_id: str, turn_id: str) -> bool: ...
    def add_sighting(self, agent: str, name: str, session_id: str, turn_id: str, outcome: str) -> None: ...
    def supporting_sources(self, agent: str, name: str) -> list[str]: ...
    def recent_sources(self, agent: str, name: str, limit: int) -> list[str]: ...
    def source_count(self, agent: str, name: str, *, at_most: int) -> int: ...
    def put(self, agent: str, concept: Concept, *, reason: str, actor: str,
            session_id: str | None = None) -> StoredConcept: ...
    def take_merge_lease(self, agent: str, name: str, holder: str, *, lease_s: float,
                         wait_ttl_s: float, gone: Callable[[str], bool],
                         now_s: float) -> float | None: ...
    def release_merge_lease(self, agent: str, name: str, holder: str) -> None: ...


class Store(Protocol):
    """What the rest of the library needs of a backend (SQLite now; PostgreSQL later)."""

    clock: Any

    def transaction(self) -> AbstractContextManager[Transaction]: ...
    def get(self, agent: str, name: str) -> StoredConcept | None: ...
    def list_concepts(self, agent: str) -> list[StoredConcept]: ...
    def names(self, agent: str) -> list[str]: ...
    def generation(self, agent: str) -> int: ...
    def scan_versions(self, agent: str) -> dict[int, int]: ...
    def scan_rows(self, agent: str, ids: list[int] | None = None) -> Iterator[ScanRow]: ...
    def scan_rows_by_names(self, agent: str, names: list[str]) -> Iterator[ScanRow]: ...
    def version_cursor(self, agent: str) -> int: ...
    def changes_since(self, agent: str, cursor: int) -> tuple[int, set[str]]: ...
    def record_extraction(self, record: ExtractionRecord) -> None: ...
    def extraction(self, agent: str, session_id: str, turn_id: str) -> ExtractionRecord | None: ...
    def close(self) -> None: ...
