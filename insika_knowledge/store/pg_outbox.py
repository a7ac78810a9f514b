"""The extraction outbox of one tenant on PostgreSQL (``sql/postgres/004_outbox.sql``).

The PostgreSQL counterpart of `insika_knowledge.store.outbox.Outbox` (same rows, same
semantics); `insika_knowledge.outbox.ExtractionQueue` feeds and drains it. Where SQLite
serialises every write with ``BEGIN IMMEDIATE``, here enqueues of a tenant queue on one
advisory lock (so the ``max_pending`` bound holds across replicas) and a claim takes the
oldest free row with ``FOR UPDATE SKIP LOCKED`` (two workers never claim one row, and
neither waits for the other).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from contextlib import AbstractContextManager
from typing import Any, Final, Protocol

from insika_knowledge.store.base import Enqueued, ExtractionRecord, QueuedTurn
from insika_knowledge.store.outbox import DROPPED_FULL, DROPPED_TOO_LARGE, GAVE_UP

Params = Sequence[Any] | dict[str, Any]

_COLS: Final = "id, agent, session_id, turn_id, knowledge, messages, enqueued_at, attempts"
_EXTRACTION_COLS: Final = ("agent, session_id, turn_id, outcome, retryable, candidates, written, "
                           "dropped, detail, attempted_at")
_EXTRACTION_MARKS: Final = ", ".join(["%s"] * 10)


class Writer(Protocol):
    """Statements inside one write transaction (`insika_knowledge.store.postgres.PgWriter`)."""

    def rows(self, query: str, params: Params = ()) -> list[tuple[Any, ...]]:
        """Every row `query` returns."""
        ...

    def row(self, query: str, params: Params = ()) -> tuple[Any, ...] | None:
        """The first row `query` returns, or None."""
        ...

    def execute(self, query: str, params: Params = ()) -> int:
        """Run `query`; how many rows it changed."""
        ...

    def lock(self, *key: str) -> None:
        """Hold the advisory lock on (tenant, `key`...) until the transaction ends."""
        ...


class Database(Protocol):
    """What the outbox needs of its tenant's store (`insika_knowledge.store.postgres.PgDatabase`)."""

    clock: Callable[[], str]

    @property
    def location(self) -> str:
        """Where the data lives, for messages."""
        ...

    def rows(self, query: str, params: Params = ()) -> list[tuple[Any, ...]]:
        """Every row one read statement returns."""
        ...

    def scalar(self, query: str, params: Params = ()) -> Any:
        """The first column of the one row an aggregate query returns."""
        ...

    def write(self, busy_timeout_ms: int | None = None) -> AbstractContextManager[Writer]:
        """One write transaction (waiting at most `busy_timeout_ms` for a lock; None: no limit)."""
        ...


class PgOutbox:
    """The ``outbox`` table of one tenant's schema; an `OutboxStorage`.

    Args:
        db: the tenant's store (its pool and write transactions are used).
    """

    def __init__(self, db: Database):
        self.db = db

    @property
    def location(self) -> str:
        """Where the outbox lives, for messages (the URL without password, and the schema)."""
        return self.db.location

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

        Same contract as `insika_knowledge.store.outbox.Outbox.enqueue`; the enqueues of a
        tenant take one advisory lock, so the bound holds across replicas.

        Raises:
            StorageBusy: the lock was not free within `busy_timeout_ms`.
            RunTimeFailure: the database failed.
        """
        with self.db.write(busy_timeout_ms) as w:
            w.lock("outbox")
            pending = _int(w.row("SELECT count(*) FROM (SELECT 1 FROM outbox LIMIT %s) AS o",
                                 (max_pending + 1,)))
            now = self.db.clock()
            if pending >= max_pending:
                detail = (f"the extraction outbox held {pending} pending turns (limit {max_pending}); "
                          "the turn was not queued")
                _record_once(w, ExtractionRecord(
                    agent=agent, session_id=session_id, turn_id=turn_id, outcome=DROPPED_FULL,
                    retryable=True, candidates=0, written=0, detail=detail, attempted_at=now,
                ))
                return Enqueued(False, pending)
            w.execute(
                "INSERT INTO outbox (agent, session_id, turn_id, knowledge, messages, enqueued_at) "
                "VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT (agent, session_id, turn_id) DO NOTHING",
                (agent, session_id, turn_id, knowledge, messages, now),
            )
            row = w.row("SELECT id FROM outbox WHERE agent = %s AND session_id = %s AND turn_id = %s",
                        (agent, session_id, turn_id))
            return Enqueued(True, pending, None if row is None else int(row[0]))

    def record_refusal(self, agent: str, session_id: str, turn_id: str, outcome: str, detail: str) -> None:
        """Record a turn the queue refused (e.g. `DROPPED_TOO_LARGE`) in ``extractions``.

        Raises:
            RunTimeFailure: the write failed.
        """
        with self.db.write() as w:
            _record_once(w, ExtractionRecord(
                agent=agent, session_id=session_id, turn_id=turn_id, outcome=outcome,
                retryable=True, candidates=0, written=0, detail=detail, attempted_at=self.db.clock(),
            ))

    def claim(
        self,
        worker: str,
        *,
        lease_s: float,
        gone: Callable[[str], bool],
        now_s: float | None = None,
    ) -> QueuedTurn | None:
        """Claim the oldest turn no live worker holds, for `lease_s` seconds.

        Same contract as `insika_knowledge.store.outbox.Outbox.claim`.

        Returns:
            The claimed turn (``attempts`` already counts this claim), or None.

        Raises:
            RunTimeFailure: the database failed.
        """
        import time

        now = time.time() if now_s is None else now_s
        with self.db.write() as w:
            holders = [str(r[0]) for r in w.rows(
                "SELECT DISTINCT claimed_by FROM outbox WHERE claimed_by IS NOT NULL "
                "AND claimed_by <> %s AND claimed_until >= %s", (worker, now))]
            dead = [h for h in holders if gone(h)]
            if dead:
                w.execute("UPDATE outbox SET claimed_by = NULL, claimed_until = NULL "
                          "WHERE claimed_by = ANY(%s)", (dead,))
            row = w.row(
                f"SELECT {_COLS} FROM outbox WHERE (claimed_by IS NULL OR claimed_until < %s) "
                "AND not_before <= %s ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED", (now, now))
            if row is None:
                return None
            w.execute("UPDATE outbox SET claimed_by = %s, claimed_until = %s, attempts = attempts + 1 "
                      "WHERE id = %s", (worker, now + lease_s, row[0]))
        turn = QueuedTurn(*row)
        return QueuedTurn(int(turn.id), turn.agent, turn.session_id, turn.turn_id, turn.knowledge,
                          turn.messages, turn.enqueued_at, int(turn.attempts) + 1)

    def finish(self, turn_id: int) -> None:
        """Remove a turn whose extraction is over (its outcome is in ``extractions``)."""
        with self.db.write() as w:
            w.execute("DELETE FROM outbox WHERE id = %s", (turn_id,))

    def give_up(self, turn: QueuedTurn, detail: str) -> None:
        """Remove a turn that failed too often, recording outcome `GAVE_UP` (retryable)."""
        record = ExtractionRecord(
            agent=turn.agent, session_id=turn.session_id, turn_id=turn.turn_id, outcome=GAVE_UP,
            retryable=True, candidates=0, written=0, detail=detail[:300], attempted_at=self.db.clock(),
        )
        with self.db.write() as w:
            w.execute(
                f"INSERT INTO extractions ({_EXTRACTION_COLS}) VALUES ({_EXTRACTION_MARKS}) "
                "ON CONFLICT (agent, session_id, turn_id) DO UPDATE SET outcome = EXCLUDED.outcome, "
                "retryable = EXCLUDED.retryable, candidates = EXCLUDED.candidates, "
                "written = EXCLUDED.written, dropped = EXCLUDED.dropped, detail = EXCLUDED.detail, "
                "attempted_at = EXCLUDED.attempted_at", record.to_row())
            w.execute("DELETE FROM outbox WHERE id = %s", (turn.id,))

    def retry_later(self, turn_id: int, not_before_s: float) -> None:
        """Release a claimed turn so any worker may take it again after `not_before_s` (unix s)."""
        with self.db.write() as w:
            w.execute("UPDATE outbox SET claimed_by = NULL, claimed_until = NULL, not_before = %s "
                      "WHERE id = %s", (not_before_s, turn_id))

    def release(self, worker: str) -> int:
        """Release every claim `worker` holds (it is stopping); returns how many."""
        with self.db.write() as w:
            return w.execute("UPDATE outbox SET claimed_by = NULL, claimed_until = NULL "
                             "WHERE claimed_by = %s", (worker,))

    def pending(self) -> int:
        """Turns in the outbox (claimed or not)."""
        return int(self.db.scalar("SELECT count(*) FROM outbox"))

    def present(self, ids: Iterable[int]) -> set[int]:
        """Which of `ids` are still in the outbox."""
        listed = sorted(set(ids))
        if not listed:
            return set()
        return {int(r[0]) for r in self.db.rows("SELECT id FROM outbox WHERE id = ANY(%s)", (listed,))}

    def dropped(self, agent: str | None = None) -> int:
        """Turns refused by the queue (`DROPPED_FULL`, `DROPPED_TOO_LARGE`) still on record."""
        query = "SELECT count(*) FROM extractions WHERE outcome IN (%s, %s)"
        params: tuple[Any, ...] = (DROPPED_FULL, DROPPED_TOO_LARGE)
        if agent is not None:
            query += " AND agent = %s"
            params += (agent,)
        return int(self.db.scalar(query, params))


def _record_once(w: Writer, record: ExtractionRecord) -> None:
    """Insert `record` into ``extractions`` unless that turn already has one."""
    w.execute(f"INSERT INTO extractions ({_EXTRACTION_COLS}) VALUES ({_EXTRACTION_MARKS}) "
              "ON CONFLICT (agent, session_id, turn_id) DO NOTHING", record.to_row())


def _int(row: tuple[Any, ...] | None) -> int:
    return int(row[0]) if row is not None else 0
