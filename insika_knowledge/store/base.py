"""The storage seam: the records stores return, and the protocols every backend implements.

Callers (learning, the indexes, retrieval, export, backfill, the Studio) type their store
with these protocols, never with a backend class, so a second backend (PostgreSQL) is a
new class that implements them, with no caller touched:

- `ConceptStore`: concept storage (reads, write transactions, extraction records), with
  `ScanSource`, what Index::Scan's read cache loads;
- `OperatorStore`: what operators' tools add (history, paging, edits, restores);
- `FullTextIndex`: what full-text search needs (FTS5 on SQLite): the index is built with a
  `Tokenizer` the index layer gives the store (`register_tokenizer`), so the store never
  imports the analyser;
- `Store`: all three, what `Memory.store` hands out;
- `ProcedureStorage`: procedures, their runs, captured sessions and stages.

`insika_knowledge.store.sqlite.SQLiteStore` and `insika_knowledge.store.postgres.PostgresStore`
implement `Store`; `insika_knowledge.store.sqlite.procedures.ProcedureStore` and
`insika_knowledge.store.postgres.procedures.PostgresProcedureStore` implement `ProcedureStorage`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol, runtime_checkable

from insika_knowledge.concept import Concept, serialize
from insika_knowledge.store.naming import Alias, PossibleDuplicate

if TYPE_CHECKING:  # record types of the procedure store, for `ProcedureStorage` only
    from insika_knowledge.procedure import Procedure, TaskRecord
    from insika_knowledge.store.procedure_records import CountedRun, SessionRow


@dataclass(frozen=True, slots=True)
class StoredConcept:
    """A concept as it is on record: the record plus its row id and version number.

    ``quarantined`` is True while the concept is held in quarantine (a row of the
    ``quarantine`` table, see `insika_knowledge.trust`): stored and shown to operators,
    never handed to a model (`insika_knowledge.retrieve` filters it).
    """

    concept: Concept
    version: int
    id: int
    quarantined: bool = False

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


class StoredVector(NamedTuple):
    """One concept's vector under one model, with the concept's current name and id."""

    concept_id: int
    name: str
    seq: int
    vector: bytes


class VectorWrite(NamedTuple):
    """A vector to store: the concept it was made of (id, version), the text's digest, the bytes."""

    concept_id: int
    version: int
    digest: str
    vector: bytes


class Sighting(NamedTuple):
    """One row of a concept's sightings ledger (``seen_at`` is UTC ISO-8601 'Z')."""

    session_id: str
    turn_id: str
    outcome: str
    seen_at: str


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
    def from_row(cls, row: Sequence[Any]) -> ExtractionRecord:
        """Build from an ``extractions`` table row."""
        (agent, session_id, turn_id, outcome, retryable, candidates, written, dropped,
         detail, attempted_at) = row
        return cls(agent, session_id, turn_id, outcome, bool(retryable), int(candidates),
                   int(written), json.loads(dropped), detail, attempted_at)


@dataclass(frozen=True)
class Quarantine:
    """Why a concept is held in quarantine (see `insika_knowledge.trust`).

    Attributes:
        session_id: the sighting that put it there.
        supported_by: the speakers whose messages supported it (``customer``, ...).
        markers: why it is a rule of the business (``price``, ``instruction``, ...).
        since: when, UTC ISO-8601 ``Z``.
    """

    agent: str
    name: str
    session_id: str
    supported_by: tuple[str, ...]
    markers: tuple[str, ...]
    since: str


# ---------------------------------------------------------------------- concept storage


class Activity(NamedTuple):
    """One change of a concept (a ``concept_versions`` row without its markdown)."""

    id: int
    name: str
    version: int
    reason: str
    actor: str
    session_id: str | None
    created_at: str


@dataclass
class PageCounts:
    """How many concepts there are per type, status and provenance, in quarantine, and in all."""

    all: int = 0
    type: dict[str, int] = field(default_factory=dict)
    status: dict[str, int] = field(default_factory=dict)
    provenance: dict[str, int] = field(default_factory=dict)
    quarantined: int = 0

    def add(self, ctype: str, status: str, provenance: str, number: int) -> None:
        """Count `number` concepts of this type, status and provenance."""
        self.all += number
        for counts, key in ((self.type, ctype), (self.status, status),
                            (self.provenance, provenance)):
            counts[key] = counts.get(key, 0) + number


@dataclass(frozen=True)
class ConceptPage:
    """One page of concepts: its rows, how many match every filter, and the counts."""

    rows: list[StoredConcept]
    total: int
    counts: PageCounts


class Transaction(Protocol):
    """Reads and writes inside one serialised write transaction (`ConceptStore.transaction`)."""

    def get(self, agent: str, name: str) -> StoredConcept | None: ...
    def has_sighting(self, agent: str, name: str, session_id: str, turn_id: str) -> bool: ...
    def add_sighting(self, agent: str, name: str, session_id: str, turn_id: str, outcome: str) -> None: ...
    def supporting_sources(self, agent: str, name: str) -> list[str]: ...
    def recent_sources(self, agent: str, name: str, limit: int) -> list[str]: ...
    def source_count(self, agent: str, name: str, *, at_most: int) -> int: ...
    def put(self, agent: str, concept: Concept, *, reason: str, actor: str,
            session_id: str | None = None) -> StoredConcept: ...
    def is_quarantined(self, agent: str, name: str) -> bool: ...
    def held_session(self, agent: str, name: str) -> str | None: ...
    def quarantine(self, agent: str, name: str, *, session_id: str, supported_by: list[str],
                   markers: list[str]) -> None: ...
    def release(self, agent: str, name: str) -> bool: ...
    def ledger(self, agent: str, name: str) -> Sequence[Sighting]: ...
    def align_ledger(self, agent: str, name: str, supporting: frozenset[str]) -> None: ...
    def alias_of(self, agent: str, alias: str) -> str | None: ...
    def add_alias(self, agent: str, alias: str, name: str, session_id: str, turn_id: str) -> None: ...
    def has_possible_duplicate(self, agent: str, name: str, session_id: str, turn_id: str) -> bool: ...
    def held_texts(self, agent: str, duplicate_of: str) -> list[tuple[str, str]]: ...
    def settled_texts(self, agent: str, duplicate_of: str) -> list[tuple[str, str]]: ...
    def add_possible_duplicate(self, agent: str, held: PossibleDuplicate) -> None: ...
    def take_merge_lease(self, agent: str, name: str, holder: str, *, lease_s: float,
                         wait_ttl_s: float, gone: Callable[[str], bool],
                         now_s: float) -> float | None: ...
    def release_merge_lease(self, agent: str, name: str, holder: str) -> None: ...
    def created_since(self, agent: str, cursor: int) -> list[StoredConcept]: ...


class ScanSource(Protocol):
    """What Index::Scan's per-process read cache reads of one agent's concepts.

    ``generation`` moves on every change of the agent's concepts (one cheap read before
    each search); ``changes_since`` names what changed after a change-feed cursor.
    """

    def generation(self, agent: str) -> int: ...
    def version_cursor(self, agent: str) -> int: ...
    def changes_since(self, agent: str, cursor: int) -> tuple[int, set[str]]: ...
    def scan_versions(self, agent: str) -> dict[int, int]: ...
    def scan_rows(self, agent: str, ids: list[int] | None = None) -> Iterator[ScanRow]: ...
    def scan_rows_by_names(self, agent: str, names: list[str]) -> Iterator[ScanRow]: ...


@runtime_checkable
class SnapshotStore(Protocol):
    """Derived search-index snapshots kept as opaque blobs per (agent, kind).

    Both backends provide it (`insika_knowledge.store.snapshots`); the index layer owns the
    format (`insika_knowledge.index.snapshot`). A test double may lack it: the index is
    then built in each process.
    """

    def load_index_snapshot(self, agent: str, kind: str) -> bytes | bytearray | None: ...
    def save_index_snapshot(self, agent: str, kind: str, data: bytes) -> None: ...


@runtime_checkable
class VectorStore(Protocol):
    """The semantic index's vectors, one per (concept, embedding model), as bytes.

    Both backends provide it (`insika_knowledge.store.vectors`, migration 014); the index layer
    owns what is embedded and how the bytes are read (`insika_knowledge.index.semantic`). A
    test double may lack it: the memory then ranks lexically only.
    """

    def vector_seq(self, agent: str, model: str) -> int: ...
    def vectors_since(self, agent: str, model: str, seq: int, limit: int | None = None) -> list[StoredVector]: ...
    def vectors_of(self, agent: str, model: str, names: Sequence[str]) -> list[StoredVector]: ...
    def vector_pending(self, agent: str, model: str, limit: int) -> list[tuple[ScanRow, str | None]]: ...
    def vector_counts(self, agent: str, model: str) -> tuple[int, int]: ...
    def save_vectors(self, agent: str, model: str, vectors: Sequence[VectorWrite]) -> int: ...
    def touch_vectors(self, agent: str, model: str, current: Sequence[tuple[int, int]]) -> None: ...
    def drop_vectors(self, agent: str, *, keep_model: str | None = None) -> int: ...


class ConceptStore(ScanSource, Protocol):
    """Concept storage: what learning, retrieval, export and backfill need of a backend."""

    @property
    def clock(self) -> Callable[[], str]: ...
    def transaction(self) -> AbstractContextManager[Transaction]: ...
    def get(self, agent: str, name: str) -> StoredConcept | None: ...
    def list_concepts(self, agent: str) -> list[StoredConcept]: ...
    def salvage(self, agent: str) -> tuple[list[StoredConcept], str, tuple[str, ...]]: ...
    def names(self, agent: str) -> list[str]: ...
    def agents(self) -> list[str]: ...
    def count(self, agent: str) -> int: ...
    def record_extraction(self, record: ExtractionRecord) -> None: ...
    def alias_of(self, agent: str, alias: str) -> str | None: ...
    def extraction(self, agent: str, session_id: str, turn_id: str) -> ExtractionRecord | None: ...
    def pseudonym_key(self) -> bytes: ...
    def quarantined_names(self, agent: str) -> frozenset[str]: ...
    def quarantine_of(self, agent: str, name: str) -> Quarantine | None: ...
    def challenged_names(self, agent: str) -> list[str]: ...
    def busy_budget(self, budget_ms: int) -> AbstractContextManager[None]: ...
    def close(self) -> None: ...


class OperatorStore(Protocol):
    """What operators' tools (the Studio, the CLI) need beyond `ConceptStore`.

    Each write here checks its actor and writes a version row naming it.
    """

    def versions(self, agent: str, name: str) -> list[Version]: ...
    def version(self, agent: str, name: str, number: int) -> Version: ...
    def deleted(self, agent: str) -> list[Version]: ...
    def sightings(self, agent: str, name: str) -> list[Sighting]: ...
    def extractions(self, agent: str) -> list[ExtractionRecord]: ...
    def extraction_counts(self) -> dict[str, dict[str, int]]: ...
    def failed_extractions(self, limit: int) -> list[ExtractionRecord]: ...
    def edit(self, agent: str, name: str, markdown: str, *, expected_version: int,
             actor: str, release: bool = False) -> StoredConcept: ...
    def create(self, agent: str, markdown: str, *, actor: str) -> StoredConcept: ...
    def purge(self, agent: str, name: str, *, actor: str) -> int: ...
    def delete(self, agent: str, name: str, *, actor: str,
               expected_version: int | None = None) -> Version: ...
    def restore(self, agent: str, name: str, number: int, *, actor: str,
                stamp: bool = False) -> StoredConcept: ...
    def concept_page(
        self, agent: str, *, status: str | None = None, type: str | None = None,
        provenance: str | None = None, quarantined: bool | None = None,
        ranked: Sequence[str] | None = None, sort: str = "name",
        desc: bool = False, offset: int = 0, limit: int = 50,
    ) -> ConceptPage: ...
    def extractions_of(self, agent: str,
                       turns: Sequence[tuple[str, str]]) -> dict[tuple[str, str], ExtractionRecord]: ...
    def aliases(self, agent: str, name: str) -> list[Alias]: ...
    def possible_duplicates(self, agent: str, name: str | None = None,
                            status: str | None = "open") -> list[PossibleDuplicate]: ...
    def activity(self, agent: str, *, before: int | None = None, limit: int = 50,
                 actor: str | None = None, reason: str | None = None) -> Sequence[Activity]: ...
    def resolve(self, agent: str, name: str, choose: Callable[[Concept, Sequence[Sighting]], Concept], *,
                expected_version: int, actor: str) -> StoredConcept: ...
    def approve(self, agent: str, name: str, *, actor: str, expected_version: int | None) -> StoredConcept: ...
    def dismiss_held(self, agent: str, name: str, *, actor: str, expected_version: int | None = None) -> int: ...
    def learn_held(self, agent: str, concept: Concept, *, actor: str) -> StoredConcept: ...
    def file_problem(self) -> str | None: ...


# ---------------------------------------------------------------------- full text


class Tokenizer(Protocol):
    """Turns a document's text into its index terms, in order, duplicates kept.

    The index layer provides it (`insika_knowledge.index.tokenizer.TOKENIZER`, the one
    analyser's document analysis) and gives it to the store; ``version`` is the analysis
    version (`ANALYSIS_VERSION`): a full-text index built under another version is rebuilt.
    """

    @property
    def version(self) -> int: ...
    def __call__(self, text: str) -> Iterable[str]: ...


class FullTextIndex(Protocol):
    """What full-text search (Index::FTS5) needs of a backend.

    Terms are always analysed terms (the tokenizer's output, or `query_terms` of a
    message), never raw user text; each backend builds its own query syntax from them.
    Document frequencies and ranking statistics are the agent's, never the tenant's.
    """

    @property
    def fts_ready(self) -> bool: ...
    def register_tokenizer(self, tokenizer: Tokenizer) -> bool: ...
    def count(self, agent: str) -> int: ...
    def fts_search(self, agent: str, terms: Sequence[str], limit: int,
                   weights: tuple[float, float, float]) -> list[tuple[ScanRow, float]]: ...
    def fts_doc_freqs(self, agent: str, terms: Sequence[str]) -> dict[str, int]: ...
    def fts_vocabulary(self, agent: str) -> dict[str, int]: ...
    def fts_optimize(self) -> None: ...
    def scan_rows_by_names(self, agent: str, names: list[str]) -> Iterator[ScanRow]: ...


# ---------------------------------------------------------------------- the extraction outbox


@dataclass(frozen=True, slots=True)
class QueuedTurn:
    """One outbox row, as a worker claims it.

    Attributes:
        id: the row id (arrival order).
        knowledge: the agent's ``knowledge:`` block as JSON text (``null`` when absent).
        messages: the turn's messages as JSON text.
        enqueued_at: UTC ``YYYY-MM-DDTHH:MM:SSZ``.
        attempts: claims so far, this one included.
    """

    id: int
    agent: str
    session_id: str
    turn_id: str
    knowledge: str
    messages: str
    enqueued_at: str
    attempts: int


@dataclass(frozen=True, slots=True)
class Enqueued:
    """What `Outbox.enqueue` did.

    Attributes:
        queued: True when the turn is in the outbox now (or already was).
        pending: turns in the outbox before this one (counted up to the limit + 1).
        id: the turn's outbox row id when queued (the earlier row's for a duplicate).
    """

    queued: bool
    pending: int
    id: int | None = None


class OutboxStorage(Protocol):
    """A tenant's extraction outbox: durable turns waiting to be learned from.

    Derived from `insika_knowledge.store.outbox.Outbox`, whose method names it keeps;
    `insika_knowledge.queue.ExtractionQueue` feeds and drains it.
    """

    @property
    def location(self) -> str: ...
    def enqueue(self, agent: str, session_id: str, turn_id: str, *, knowledge: str, messages: str,
                max_pending: int, busy_timeout_ms: int | None = None) -> Enqueued: ...
    def record_refusal(self, agent: str, session_id: str, turn_id: str, outcome: str,
                       detail: str) -> None: ...
    def pseudonym_key(self) -> bytes: ...
    def claim(self, worker: str, *, lease_s: float, gone: Callable[[str], bool],
              now_s: float | None = None) -> QueuedTurn | None: ...
    def finish(self, turn_id: int) -> None: ...
    def give_up(self, turn: QueuedTurn, detail: str) -> None: ...
    def retry_later(self, turn_id: int, not_before_s: float) -> None: ...
    def hold(self, turn_id: int) -> None: ...
    def release_held(self, now_s: float | None = None) -> int: ...
    def held(self) -> int: ...
    def release(self, worker: str) -> int: ...
    def pending(self) -> int: ...
    def present(self, ids: Iterable[int]) -> set[int]: ...
    def dropped(self, agent: str | None = None) -> int: ...
    def scrub(self) -> bool: ...


class Store(ConceptStore, OperatorStore, FullTextIndex, Protocol):
    """A tenant's whole concept store (SQLite or PostgreSQL): what `Memory` hands out."""

    def outbox(self) -> OutboxStorage: ...


# ---------------------------------------------------------------------- procedures


class ProcedureStorage(Protocol):
    """Procedures, their counted runs, captured sessions and stage rows of one tenant.

    Derived from `insika_knowledge.store.sqlite.procedures.ProcedureStore`, whose method names
    it keeps.
    """

    @property
    def clock(self) -> Callable[[], str]: ...
    @property
    def location(self) -> str: ...
    def busy_budget(self, budget_ms: int) -> AbstractContextManager[None]: ...
    def generation(self) -> int: ...
    def procedures_since(self, generation: int) -> tuple[int, list[Procedure]]: ...
    def population_since(self, generation: int) -> dict[str, int]: ...
    def population_terms(self, terms: Collection[str]) -> set[str]: ...
    def digest_key(self) -> bytes: ...
    def tasks_since(self, generation: int) -> list[TaskRecord]: ...
    def get_task(self, task_id: str) -> TaskRecord | None: ...
    def get(self, procedure_id: str) -> Procedure | None: ...
    def count(self) -> int: ...
    def record_runs(self, runs: Iterable[CountedRun]) -> int: ...
    def load_session(self, session_id: str) -> SessionRow | None: ...
    def session_steps(self, session_id: str) -> list[list[Any]]: ...
    def save_turn(self, session: SessionRow, steps: Iterable[tuple[int, list[Any]]],
                  stage: Mapping[str, Any] | None = None) -> None: ...
    def finish_task(self, session: SessionRow, runs: Iterable[CountedRun], *, keep: bool,
                    if_unchanged: bool = False) -> int | None: ...
    def idle_sessions(self, before: float) -> list[str]: ...
    def record_stage(self, stage: Mapping[str, Any]) -> None: ...
    def stages(self, *, session_id: str | None = None, limit: int = 100) -> list[dict[str, Any]]: ...
    def scorecard(self) -> dict[str, Any]: ...
    def close(self) -> None: ...
    def list_procedures(self, *, min_confidence: float = 0.0, limit: int | None = None) -> list[Procedure]: ...
