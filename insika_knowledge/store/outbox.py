"""The extraction outbox of one tenant (migration 008: ``sql/sqlite/``, ``sql/postgres/``).

Written once for both backends (`insika_knowledge.store.statements`): durable turns to learn.

`Outbox` speaks the SQL; the queue that feeds it and drains it is
`insika_knowledge.queue.ExtractionQueue`. A turn is one row from `enqueue` until its
worker calls `finish`. Claims are leases: a row claimed by a worker whose lease lapsed,
or whose process is gone, is handed to the next worker that asks.

A turn refused because the outbox is full is not lost silently: `enqueue` records it in
the ``extractions`` table (outcome `DROPPED_FULL`, retryable), so `dropped` counts them
and a backfill can find them.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from contextlib import AbstractContextManager
from typing import Any, ClassVar, Final, Protocol

from insika_knowledge.store.base import Enqueued, ExtractionRecord, QueuedTurn
from insika_knowledge.store.concepts import EXTRACTION_COLUMNS, RECORD_EXTRACTION
from insika_knowledge.store.statements import Dialect, Reads, Statements, insert_new, scalar

#: The ``extractions`` outcome of a turn refused because the outbox was full.
DROPPED_FULL: Final = "dropped_outbox_full"
#: The ``extractions`` outcome of a turn refused because it was too large to queue.
DROPPED_TOO_LARGE: Final = "dropped_too_large"
#: The ``extractions`` outcome of a turn given up after too many failed attempts.
GAVE_UP: Final = "error"
#: ``not_before`` of a held turn (unix seconds, beyond any real time): a turn whose model
#: cannot be used as configured waits here, unclaimed, until `Outbox.release_held`.
HELD_S: Final = 1e15


def due_before(held: bool) -> float:
    """The ``not_before`` below which a row counts as a turn to learn: every row with
    `held`, else only those not held (`HELD_S`); what "has pending turns" reads compare.
    """
    return float("inf") if held else HELD_S

_COLS: Final = "id, agent, session_id, turn_id, knowledge, messages, enqueued_at, attempts"
_RECORD_ONCE: Final = insert_new("extractions", EXTRACTION_COLUMNS, "agent, session_id, turn_id")
_RELEASED: Final = "UPDATE outbox SET claimed_by = NULL, claimed_until = NULL"


class OutboxDatabase(Reads, Protocol):
    """What the outbox needs of its tenant's store (`SQLiteStore` or `PostgresStore`)."""

    clock: Callable[[], str]
    dialect: ClassVar[Dialect]

    @property
    def location(self) -> str:
        """Where the data lives, for messages."""
        ...

    def write(self, busy_timeout_ms: int | None = None) -> AbstractContextManager[Statements]:
        """One write transaction (waiting at most `busy_timeout_ms` for a lock)."""
        ...

    def pseudonym_key(self) -> bytes:
        """The tenant's session pseudonym key (`ConceptReads.pseudonym_key`)."""
        ...


class Outbox:
    """The ``outbox`` table of a tenant's store, on either backend; an `OutboxStorage`.

    Enqueues take the tenant's ``outbox`` key lock (`Statements.lock`: an advisory lock on
    PostgreSQL, so the `max_pending` bound holds across replicas; SQLite's ``BEGIN
    IMMEDIATE`` serialises them already), and a claim takes the oldest free row with the
    dialect's row lock (``FOR UPDATE SKIP LOCKED`` on PostgreSQL: two workers never claim
    one row, and neither waits for the other).

    Args:
        db: the tenant's store (its reads and write transactions are used).
    """

    def __init__(self, db: OutboxDatabase):
        self.db = db

    @property
    def location(self) -> str:
        """Where the outbox lives, for messages (the database file, or URL and schema)."""
        return self.db.location

    def pseudonym_key(self) -> bytes:
        """The tenant's session pseudonym key (`ConceptReads.pseudonym_key`)."""
        return self.db.pseudonym_key()

    def enqueue(
        self,
        agent: str,
        session_id: str,
        turn_id: str,
        *,
        knowledge: str,
        messages: str,
        max_pending: int,
        busy_timeout_ms: int | None = None,
    ) -> Enqueued:
        """Add one turn, in one small transaction, unless `max_pending` turns are waiting.

        A refused turn is recorded in ``extractions`` (outcome `DROPPED_FULL`, retryable)
        in the same transaction, unless that turn already has an extraction on record.

        Args:
            agent: the agent id (checked by the caller).
            session_id: the session id (checked by the caller).
            turn_id: the turn id (checked by the caller).
            knowledge: the ``knowledge:`` block as JSON text.
            messages: the messages as JSON text (bounded by the caller).
            max_pending: the most turns the outbox may hold (>= 1).
            busy_timeout_ms: the longest wait for the write lock (None: the store's default).

        Raises:
            StorageBusy: the write lock was not free within `busy_timeout_ms`.
            StorageError: the disk is full, read-only or failing (SQLite).
            RunTimeFailure: the database failed (PostgreSQL).
        """
        with self.db.write(busy_timeout_ms) as w:
            w.lock("outbox")
            pending = int(scalar(w, "SELECT count(*) FROM (SELECT 1 FROM outbox LIMIT ?) AS o",
                                 (max_pending + 1,)))
            now = self.db.clock()
            if pending >= max_pending:
                detail = (f"the extraction outbox held {pending} pending turns (limit {max_pending}); "
                          "the turn was not queued")
                w.execute(_RECORD_ONCE, ExtractionRecord(
                    agent=agent, session_id=session_id, turn_id=turn_id, outcome=DROPPED_FULL,
                    retryable=True, candidates=0, written=0, detail=detail, attempted_at=now,
                ).to_row())
                return Enqueued(False, pending)
            w.execute(
                "INSERT INTO outbox (agent, session_id, turn_id, knowledge, messages, enqueued_at) "
                "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (agent, session_id, turn_id) DO NOTHING",
                (agent, session_id, turn_id, knowledge, messages, now),
            )
            row = w.row("SELECT id FROM outbox WHERE agent = ? AND session_id = ? AND turn_id = ?",
                        (agent, session_id, turn_id))
            return Enqueued(True, pending, None if row is None else int(row[0]))

    def record_refusal(self, agent: str, session_id: str, turn_id: str, outcome: str, detail: str) -> None:
        """Record a turn the queue refused (e.g. `DROPPED_TOO_LARGE`) in ``extractions``.

        Raises:
            StorageError: the write failed.
        """
        with self.db.write() as w:
            w.execute(_RECORD_ONCE, ExtractionRecord(
                agent=agent, session_id=session_id, turn_id=turn_id, outcome=outcome,
                retryable=True, candidates=0, written=0, detail=detail, attempted_at=self.db.clock(),
            ).to_row())

    def claim(
        self,
        worker: str,
        *,
        lease_s: float,
        gone: Callable[[str], bool],
        now_s: float | None = None,
    ) -> QueuedTurn | None:
        """Claim the oldest turn no other live worker holds, for `lease_s` seconds.

        A turn `worker` itself still holds counts as free: a worker claims one turn at a
        time, so it is one whose attempt ended without releasing it (the release failed
        while the database was down).

        Args:
            worker: the claiming worker's id (``host:pid:token``).
            lease_s: how long the claim lasts (the longest one extraction may take).
            gone: True for a worker id whose process is known to be dead; its claims
                are taken over at once instead of waiting for their lease to lapse.
            now_s: the current unix time (tests); None = `time.time`.

        Returns:
            The claimed turn (``attempts`` already counts this claim), or None.

        Raises:
            StorageError: the database failed (busy beyond 30 s, full, ...).
        """
        now = time.time() if now_s is None else now_s
        with self.db.write() as w:
            holders = [str(r[0]) for r in w.rows(
                "SELECT DISTINCT claimed_by FROM outbox WHERE claimed_by IS NOT NULL "
                "AND claimed_by <> ? AND claimed_until >= ?", (worker, now))]
            dead = [h for h in holders if gone(h)]
            if dead:
                among, listed = self.db.dialect.in_list("claimed_by", dead)
                w.execute(f"{_RELEASED} WHERE {among}", listed)
            row = w.row(  # its own claim too: a worker claims one turn at a time, so that one was left
                f"SELECT {_COLS} FROM outbox WHERE (claimed_by IS NULL OR claimed_by = ? OR claimed_until < ?) "
                f"AND not_before <= ? ORDER BY id LIMIT 1{self.db.dialect.skip_locked}", (worker, now, now))
            if row is None:
                return None
            w.execute("UPDATE outbox SET claimed_by = ?, claimed_until = ?, attempts = attempts + 1 "
                      "WHERE id = ?", (worker, now + lease_s, row[0]))
        turn = QueuedTurn(*row)
        return QueuedTurn(int(turn.id), turn.agent, turn.session_id, turn.turn_id, turn.knowledge,
                          turn.messages, turn.enqueued_at, int(turn.attempts) + 1)

    def finish(self, turn_id: int) -> None:
        """Remove a turn whose extraction is over (its outcome is in ``extractions``).

        Raises:
            StorageError: the write failed.
        """
        with self.db.write() as w:
            w.execute("DELETE FROM outbox WHERE id = ?", (turn_id,))

    def give_up(self, turn: QueuedTurn, detail: str) -> None:
        """Remove a turn that failed too often, recording outcome `GAVE_UP` (retryable).

        Raises:
            StorageError: the write failed.
        """
        record = ExtractionRecord(
            agent=turn.agent, session_id=turn.session_id, turn_id=turn.turn_id, outcome=GAVE_UP,
            retryable=True, candidates=0, written=0, detail=detail[:300], attempted_at=self.db.clock(),
        )
        with self.db.write() as w:
            w.execute(RECORD_EXTRACTION, record.to_row())
            w.execute("DELETE FROM outbox WHERE id = ?", (turn.id,))

    def retry_later(self, turn_id: int, not_before_s: float) -> None:
        """Release a claimed turn so any worker may take it again after `not_before_s` (unix s).

        Raises:
            StorageError: the write failed.
        """
        with self.db.write() as w:
            w.execute(f"{_RELEASED}, not_before = ? WHERE id = ?", (not_before_s, turn_id))

    def hold(self, turn_id: int) -> None:
        """Release a claimed turn and hold it: no worker takes it until `release_held`.

        For a turn whose configured model cannot be used (no key, a refused key, no such
        model): trying it again before someone fixes that would fail the same way, and
        dropping it would lose the turn (over the relay or the hooks it is stored nowhere
        else). A held turn still counts toward the outbox's bound.

        Raises:
            StorageError: the write failed.
        """
        with self.db.write() as w:
            w.execute(f"{_RELEASED}, not_before = ? WHERE id = ?", (HELD_S, turn_id))

    def release_held(self, now_s: float | None = None) -> int:
        """Make every held turn due at once (a process started, or the model answered
        again); returns how many.

        Raises:
            StorageError: the write failed.
        """
        now = time.time() if now_s is None else now_s
        with self.db.write() as w:
            return w.execute("UPDATE outbox SET not_before = ? WHERE not_before >= ?", (now, HELD_S))

    def held(self) -> int:
        """Turns held until the model can be used (`hold`)."""
        return int(scalar(self.db, "SELECT count(*) FROM outbox WHERE not_before >= ?", (HELD_S,)))

    def release(self, worker: str) -> int:
        """Release every claim `worker` holds (it is stopping); returns how many.

        Raises:
            StorageError: the write failed.
        """
        with self.db.write() as w:
            return w.execute(f"{_RELEASED} WHERE claimed_by = ?", (worker,))

    def scrub(self) -> bool:
        """Cut learned turns' bytes out of the database's write-ahead log, where it has one.

        SQLite: the log is checkpointed and truncated (``Database.scrub_wal``; deleted rows
        are already zeroed in the file by ``secure_delete``). PostgreSQL: nothing here; a
        deleted row's tuple stays until ``VACUUM`` (see docs/postgresql.md).

        Returns:
            False when readers or writers kept the log from being cut (try again later).
        """
        scrub = getattr(self.db, "scrub_wal", None)
        return True if scrub is None else bool(scrub())

    def pending(self) -> int:
        """Turns in the outbox waiting to be learned (claimed or not), held ones left out (`held`)."""
        return int(scalar(self.db, "SELECT count(*) FROM outbox WHERE not_before < ?", (HELD_S,)))

    def present(self, ids: Iterable[int]) -> set[int]:
        """Which of `ids` are still in the outbox."""
        listed = sorted(set(ids))
        if not listed:
            return set()
        among, params = self.db.dialect.in_list("id", listed)
        return {int(r[0]) for r in self.db.rows(f"SELECT id FROM outbox WHERE {among}", params)}

    def dropped(self, agent: str | None = None) -> int:
        """Turns refused by the queue (`DROPPED_FULL`, `DROPPED_TOO_LARGE`) still on record."""
        query = "SELECT count(*) FROM extractions WHERE outcome IN (?, ?)"
        params: tuple[Any, ...] = (DROPPED_FULL, DROPPED_TOO_LARGE)
        if agent is not None:
            query += " AND agent = ?"
            params += (agent,)
        return int(scalar(self.db, query, params))
