"""The procedural-memory store: procedures, their runs, captured sessions and stages, in SQLite.

Same tenant database file as the concepts (`insika_knowledge.store.sqlite.SQLiteStore`),
opened through apsw the same way (one connection per thread, WAL, busy timeout) and
migrated by `insika_knowledge.store.migrations.migrate` (``sql/003_procedures.sql``).
Writes run in ``BEGIN IMMEDIATE`` transactions; a request's capture, cursor update and
stage row go in one.

The store only reads and writes rows. How a judged run changes a procedure (which ids it
counts for, successes, failures, triggers) is the caller's: a `CountedRun` applies its
rules to the `ProcedureRows` of an open transaction
(`insika_knowledge.procedures.mining.scoring`). Methods named ``list`` shadow the builtin
inside the class body, hence ``builtins.list`` in the annotations below it.

A task term only one session had is never written in the clear: the rows keep it as a
note (``procedure_term_notes``, ``sql/010_procedure_term_notes.sql``) of two blake2b
digests (hex) keyed by the database's own random key, the term's and the session's
(`ProcedureRows.note_terms`).
"""

from __future__ import annotations

import builtins
import hashlib
import json
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final, Protocol

import apsw

from insika_knowledge.procedure import Procedure, ProcedureStep
from insika_knowledge.store.database import Database
from insika_knowledge.store.faults import mapped_errors

_PROC_COLS: Final = (
    "id, kind, steps, tools, triggers, trigger_runs, successes, failures, sample_task, "
    "created_at, updated_at, scope"
)
#: Rows that are listed: whole-task procedures, and sub-procedures two runs share.
_RECURS: Final = "(scope = 'task' OR successes >= 2)"
_SESSION_COLS: Final = (
    "session_id, run, messages_seen, turns, task, given, tools, procedure_id, cursor_step, "
    "matched_steps, diverged_steps, tracked_upto, first_turn_at, last_turn_at, block, anchor"
)
_SESSION_MARKS: Final = ",".join("?" * len(_SESSION_COLS.split(",")))
STAGE_COLUMNS: Final = (
    "recorded_at",
    "session_id",
    "mode",
    "action",
    "reason",
    "injected",
    "injected_tokens",
    "would_inject_tokens",
    "block_tokens",
    "max_injection_tokens",
    "matcher",
    "match_score",
    "procedure_id",
    "path_confidence",
    "composed_hops",
    "cursor_step",
    "steps_remaining",
    "adherence_delta",
    "divergence",
    "matched_steps",
    "diverged_steps",
    "canary_bucket",
    "canary_percent",
    "canary_keyed_by",
    "session_scoped",
    "captured_turns",
    "duration_ms",
    "skill_attrs",
    "notes",
)


def _procedure(row: tuple[Any, ...]) -> Procedure:
    (
        pid,
        kind,
        steps,
        tools,
        triggers,
        trigger_runs,
        successes,
        failures,
        sample_task,
        created_at,
        updated_at,
        scope,
    ) = row
    return Procedure(
        id=pid,
        kind=kind,
        steps=tuple(ProcedureStep.from_json(s) for s in json.loads(steps)),
        tools=tuple(json.loads(tools)),
        triggers=json.loads(triggers),
        trigger_runs=int(trigger_runs),
        successes=int(successes),
        failures=int(failures),
        sample_task=sample_task,
        created_at=created_at,
        updated_at=updated_at,
        scope=scope,
    )


class ProcedureRows(Protocol):
    """Procedure rows inside one write transaction (what a `CountedRun` reads and writes).

    The counting rules (which procedures a run counts for, how counts, triggers and
    confidence change) belong to the caller (`insika_knowledge.procedures.mining.scoring`);
    a backend only stores rows.
    """

    def now(self) -> str:
        """The current UTC time, ``YYYY-MM-DDTHH:MM:SSZ`` (the store's clock)."""
        ...

    def claim_run(self, procedure_id: str, run_id: str, verdict: str, at: str) -> bool:
        """Record that `run_id` counted for (or against) `procedure_id`, once.

        Args:
            procedure_id: a procedure id, or the id of a failed run's prefix.
            run_id: the run.
            verdict: ``success`` or ``failure``.
            at: the UTC ISO-8601 stamp.

        Returns:
            True when the pair is new; False when the run was already counted for that id
            (nothing is written).
        """
        ...

    def failures_recorded(self, procedure_id: str) -> int:
        """How many failed runs were counted against `procedure_id` (it may not exist yet)."""
        ...

    def get(self, procedure_id: str) -> Procedure | None:
        """One procedure as the transaction sees it, or None."""
        ...

    def put(self, procedure: Procedure) -> None:
        """Insert or replace `procedure` (its ``confidence`` is stored for ranking).

        Bumps the procedure generation, once per transaction (see `ProcedureStore.generation`).
        """
        ...

    def count_population(self, increments: Mapping[str, int]) -> None:
        """Add to the population: each term (``''``: the runs themselves) gains its increment.

        Bumps the procedure generation, once per transaction (`ProcedureStore.population_since`).
        """
        ...

    def population_terms(self, terms: Collection[str]) -> set[str]:
        """Which of `terms` the population holds (the shared ones)."""
        ...

    def note_terms(self, scope: str, session: str, terms: Collection[str]) -> dict[str, int]:
        """Note task terms that `scope` does not hold in the clear, for `session`.

        Neither a term nor the session is written: a note is their keyed digests and a
        run count. A term nobody noted under `scope` is noted for `session` (one run); a
        term `session` noted gains a run; a term another session noted is released (its
        note deleted).

        Args:
            scope: the counter: a procedure id, or the population's id.
            session: the session of the run (`insika_knowledge.procedures.mining.shared.session_of`).
            terms: distinct task terms.

        Returns:
            term -> runs of the other session, for each released term.
        """
        ...


class CountedRun(Protocol):
    """A judged run that knows how it changes the procedure rows.

    `insika_knowledge.procedures.mining.scoring.MinedRun` is the implementation.
    """

    def record(self, rows: ProcedureRows) -> int:
        """Count the run in `rows`; returns how many (procedure, run) pairs were new."""
        ...


def _digest(key: bytes, person: bytes, value: str) -> str:
    """A 16-byte blake2b of `value` keyed by `key`, in hex (`person` tells terms from sessions)."""
    return hashlib.blake2b(
        value.encode("utf-8", "surrogatepass"), digest_size=16, key=key, person=person
    ).hexdigest()


class _SQLiteRows:
    """`ProcedureRows` over one connection inside a ``BEGIN IMMEDIATE`` transaction."""

    def __init__(self, conn: apsw.Connection, clock: Callable[[], str], key: bytes):
        self._conn = conn
        self._clock = clock
        self._key = key
        self._digests: dict[str, str] = {}  # term -> its digest, for this transaction
        self._generation: int | None = None

    def now(self) -> str:
        return self._clock()

    def claim_run(self, procedure_id: str, run_id: str, verdict: str, at: str) -> bool:
        self._conn.execute(
            "INSERT OR IGNORE INTO procedure_runs VALUES (?,?,?,?)",
            (procedure_id, run_id, verdict, at),
        )
        return bool(self._conn.changes())

    def failures_recorded(self, procedure_id: str) -> int:
        return _int(
            self._conn.execute(
                "SELECT count(*) FROM procedure_runs WHERE procedure_id=? AND verdict='failure'",
                (procedure_id,),
            ).fetchone()
        )

    def get(self, procedure_id: str) -> Procedure | None:
        row = self._conn.execute(
            f"SELECT {_PROC_COLS} FROM procedures WHERE id=?", (procedure_id,)
        ).fetchone()
        return _procedure(row) if row else None

    def _bump(self) -> int:
        """The generation this transaction's writes carry (bumped once per transaction)."""
        if self._generation is None:
            conn = self._conn
            conn.execute("UPDATE procedure_generation SET generation = generation + 1 WHERE id=1")
            self._generation = _int(
                conn.execute("SELECT generation FROM procedure_generation WHERE id=1").fetchone()
            )
        return self._generation

    def count_population(self, increments: Mapping[str, int]) -> None:
        generation = self._bump()
        self._conn.executemany(
            "INSERT INTO procedure_population (term, runs, generation) VALUES (?, ?, ?) "
            "ON CONFLICT (term) DO UPDATE SET runs = runs + excluded.runs, "
            "generation = excluded.generation",
            [(term, runs, generation) for term, runs in sorted(increments.items())],
        )

    def population_terms(self, terms: Collection[str]) -> set[str]:
        return _population_terms(self._conn, terms)

    def note_terms(self, scope: str, session: str, terms: Collection[str]) -> dict[str, int]:
        if not terms:
            return {}
        conn = self._conn
        digests_of = self._digests
        unseen: dict[str, str] = {}
        for term in terms:
            digest = digests_of.get(term)
            if digest is None:
                digest = digests_of[term] = _digest(self._key, b"term", term)
            unseen[digest] = term
        mine = _digest(self._key, b"session", session)
        released: dict[str, int] = {}
        gone: list[tuple[str, str]] = []
        again: list[tuple[str, str]] = []
        digests = list(unseen)
        for chunk in range(0, len(digests), _CHUNK):
            part = digests[chunk : chunk + _CHUNK]
            rows = conn.execute(
                "SELECT term, session, runs FROM procedure_term_notes WHERE scope = ? AND term "
                f"IN ({','.join('?' * len(part))})",
                (scope, *part),
            )
            for digest, noted, runs in rows:
                term = unseen.pop(digest)
                if noted == mine:
                    again.append((scope, digest))
                else:
                    released[term] = int(runs)
                    gone.append((scope, digest))
        if gone:
            conn.executemany("DELETE FROM procedure_term_notes WHERE scope = ? AND term = ?", gone)
        if again:
            conn.executemany(
                "UPDATE procedure_term_notes SET runs = runs + 1 WHERE scope = ? AND term = ?",
                again,
            )
        if unseen:
            conn.executemany(
                "INSERT INTO procedure_term_notes (scope, term, session, runs) VALUES (?, ?, ?, 1)",
                [(scope, digest, mine) for digest in unseen],
            )
        return released

    def put(self, procedure: Procedure) -> None:
        conn = self._conn
        generation = self._bump()
        conn.execute(
            "INSERT INTO procedures (id, kind, steps, tools, triggers, trigger_runs, "
            "successes, failures, confidence, sample_task, generation, created_at, updated_at, "
            "scope) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?) ON CONFLICT (id) DO UPDATE SET "
            "kind=excluded.kind, steps=excluded.steps, tools=excluded.tools, "
            "triggers=excluded.triggers, trigger_runs=excluded.trigger_runs, "
            "successes=excluded.successes, failures=excluded.failures, "
            "confidence=excluded.confidence, sample_task=excluded.sample_task, "
            "generation=excluded.generation, created_at=excluded.created_at, "
            "updated_at=excluded.updated_at, scope=excluded.scope",
            (
                procedure.id,
                procedure.kind,
                json.dumps([s.to_json() for s in procedure.steps]),
                json.dumps(list(procedure.tools)),
                json.dumps(procedure.triggers, sort_keys=True),
                procedure.trigger_runs,
                procedure.successes,
                procedure.failures,
                procedure.confidence,
                procedure.sample_task,
                generation,
                procedure.created_at,
                procedure.updated_at,
                procedure.scope,
            ),
        )


#: Terms looked up per statement (SQLite allows 32766 parameters).
_CHUNK: Final = 500


def _population_terms(conn: apsw.Connection, terms: Collection[str]) -> set[str]:
    """Which of `terms` are in ``procedure_population``."""
    found: set[str] = set()
    wanted = [t for t in terms if t]
    for chunk in range(0, len(wanted), _CHUNK):
        part = wanted[chunk : chunk + _CHUNK]
        rows = conn.execute(
            f"SELECT term FROM procedure_population WHERE term IN ({','.join('?' * len(part))})",
            part,
        )
        found.update(str(r[0]) for r in rows)
    return found


def _int(row: tuple[Any, ...] | None) -> int:
    """The first column of a one-row aggregate (0 when there is no row)."""
    return int(row[0]) if row else 0


@dataclass
class SessionRow:
    """The capture state of one open session (``capture_sessions``; see the migration)."""

    session_id: str
    run: int = 0
    messages_seen: int = 0
    turns: int = 0
    task: str = ""
    given: list[str] = field(default_factory=list)
    tools: list[str] = field(default_factory=list)
    procedure_id: str | None = None
    cursor_step: int = 0
    matched_steps: int = 0
    diverged_steps: int = 0
    tracked_upto: int = 0
    first_turn_at: float = 0.0
    last_turn_at: float = 0.0
    block: str = ""
    anchor: str = ""

    def values(self) -> tuple[Any, ...]:
        """The row's values in ``_SESSION_COLS`` order."""
        return (
            self.session_id,
            self.run,
            self.messages_seen,
            self.turns,
            self.task,
            json.dumps(self.given),
            json.dumps(self.tools),
            self.procedure_id,
            self.cursor_step,
            self.matched_steps,
            self.diverged_steps,
            self.tracked_upto,
            self.first_turn_at,
            self.last_turn_at,
            self.block,
            self.anchor,
        )


@mapped_errors  # no raw apsw error leaves a public method (see store.faults)
class ProcedureStore(Database):
    """Procedures, runs, captured sessions and stages of one tenant's database file.

    Args:
        path: the tenant's database file (created with its folder if missing).
        clock: returns the current UTC time as ``YYYY-MM-DDTHH:MM:SSZ``.

    Raises:
        UserError: the path is a folder or not a database.
    """

    #: The digest key, read once (`_term_key`).
    _term_key_bytes: bytes | None = None

    # ------------------------------------------------------------------ procedures

    def generation(self) -> int:
        """A number that changes whenever any procedure does (one indexed read)."""
        row = (
            self._conn()
            .execute("SELECT generation FROM procedure_generation WHERE id=1")
            .fetchone()
        )
        return int(row[0]) if row else 0

    def procedures_since(self, generation: int) -> tuple[int, list[Procedure]]:
        """Procedures written after `generation`, and the current generation.

        ``procedures_since(0)`` loads every procedure.
        """
        conn = self._conn()
        current = self.generation()
        rows = conn.execute(
            f"SELECT {_PROC_COLS} FROM procedures WHERE generation > ?", (generation,)
        ).fetchall()
        return current, [_procedure(r) for r in rows]

    def _term_key(self, conn: apsw.Connection) -> bytes:
        """The database's key for term and session digests (``procedure_term_key``).

        Called inside a write transaction: a missing key row (a hand-edited file) gets a
        new random key, which only makes the existing notes unreachable.
        """
        if self._term_key_bytes is None:
            conn.execute(
                "INSERT OR IGNORE INTO procedure_term_key (id, key) "
                "VALUES (1, lower(hex(randomblob(32))))"
            )
            row = conn.execute("SELECT key FROM procedure_term_key WHERE id=1").fetchone()
            assert row is not None  # inserted just above when missing
            self._term_key_bytes = bytes.fromhex(str(row[0]))
        return self._term_key_bytes

    def population_terms(self, terms: Collection[str]) -> set[str]:
        """Which of `terms` the population holds: the terms two sessions' tasks had."""
        return _population_terms(self._conn(), terms)

    def population_since(self, generation: int) -> dict[str, int]:
        """Population counts changed after `generation`: term -> runs (``''``: all runs).

        ``population_since(0)`` loads the whole population.
        """
        rows = self._conn().execute(
            "SELECT term, runs FROM procedure_population WHERE generation > ?", (generation,)
        )
        return {str(term): int(runs) for term, runs in rows}

    def get(self, procedure_id: str) -> Procedure | None:
        """One procedure, or None."""
        row = (
            self._conn()
            .execute(f"SELECT {_PROC_COLS} FROM procedures WHERE id=?", (procedure_id,))
            .fetchone()
        )
        return _procedure(row) if row else None

    def list_procedures(self, *, min_confidence: float = 0.0, limit: int | None = None) -> list[Procedure]:
        """Procedures at or above `min_confidence`, most confident first (then support, id).

        Sub-procedures only one run has shown are not listed (`Procedure.recurs`).
        """
        sql = (
            f"SELECT {_PROC_COLS} FROM procedures WHERE confidence >= ? AND {_RECURS} "
            "ORDER BY confidence DESC, successes + failures DESC, id"
        )
        params: tuple[Any, ...] = (min_confidence,)
        if limit is not None:
            sql += " LIMIT ?"
            params += (limit,)
        return [_procedure(r) for r in self._conn().execute(sql, params)]

    def count(self) -> int:
        """How many procedures are listed (see `list`)."""
        return _int(
            self._conn().execute(f"SELECT count(*) FROM procedures WHERE {_RECURS}").fetchone()
        )

    def record_runs(self, runs: Iterable[CountedRun]) -> int:
        """Count judged runs for and against procedures, in one transaction.

        Each run applies its own counting rules to the rows (`CountedRun.record`; see
        `insika_knowledge.procedures.mining.scoring` for the rules).

        Returns:
            How many (procedure, run) pairs were new.
        """
        with self._write() as conn:
            rows = _SQLiteRows(conn, self.clock, self._term_key(conn))
            return sum(run.record(rows) for run in runs)

    # ------------------------------------------------------------------ capture

    def load_session(self, session_id: str) -> SessionRow | None:
        """The capture state of `session_id`, or None."""
        row = (
            self._conn()
            .execute(
                f"SELECT {_SESSION_COLS} FROM capture_sessions WHERE session_id=?", (session_id,)
            )
            .fetchone()
        )
        if row is None:
            return None
        values = list(row)
        values[5], values[6] = json.loads(values[5]), json.loads(values[6])
        return SessionRow(*values)

    def session_steps(self, session_id: str) -> builtins.list[builtins.list[Any]]:
        """The captured steps of `session_id`'s current task (JSON lists), in order."""
        rows = self._conn().execute(
            "SELECT step FROM capture_steps WHERE session_id=? ORDER BY seq", (session_id,)
        )
        return [json.loads(r[0]) for r in rows]

    def save_turn(
        self,
        session: SessionRow,
        steps: Iterable[tuple[int, builtins.list[Any]]],
        stage: Mapping[str, Any] | None = None,
    ) -> None:
        """Write a request's capture (session row, new or completed steps) and its stage at once."""
        with self._write() as conn:
            conn.execute(
                f"INSERT OR REPLACE INTO capture_sessions ({_SESSION_COLS}) VALUES "
                f"({_SESSION_MARKS})",
                session.values(),
            )
            for seq, step in steps:
                conn.execute(
                    "INSERT OR REPLACE INTO capture_steps VALUES (?,?,?)",
                    (session.session_id, seq, json.dumps(step, separators=(",", ":"))),
                )
            if stage is not None:
                self._insert_stage(conn, stage)

    def finish_task(
        self, session: SessionRow, runs: Iterable[CountedRun], *, keep: bool,
        if_unchanged: bool = False,
    ) -> int | None:
        """Count a finished task's runs and clear its captured steps, in one transaction.

        Args:
            session: the session (its ``run`` is advanced and its task state reset when kept).
            runs: what the task contributes (none for an unverified trace).
            keep: keep the session row for a later task (an explicit outcome); False deletes
                it (an idle flush).
            if_unchanged: do it only if the session on record is still the one `session`
                was read as (same run, turns and last request time); an idle sweep passes
                True, so a request that arrived (from any process) after the sweep read
                the session is never deleted with it.

        Returns:
            How many (procedure, run) pairs were new; None when `if_unchanged` found the
            session changed (or gone) and nothing was written.
        """
        with self._write() as conn:
            if if_unchanged:
                now = conn.execute(
                    "SELECT run, turns, last_turn_at FROM capture_sessions WHERE session_id=?",
                    (session.session_id,),
                ).fetchone()
                if now is None or tuple(now) != (session.run, session.turns, session.last_turn_at):
                    return None
            rows = _SQLiteRows(conn, self.clock, self._term_key(conn))
            new = sum(run.record(rows) for run in runs)
            conn.execute("DELETE FROM capture_steps WHERE session_id=?", (session.session_id,))
            if keep:
                fresh = SessionRow(
                    session.session_id,
                    run=session.run + 1,
                    messages_seen=session.messages_seen,
                    tools=session.tools,
                    first_turn_at=session.last_turn_at,
                    last_turn_at=session.last_turn_at,
                    block=session.block,
                    anchor=session.anchor,
                )
                conn.execute(
                    f"INSERT OR REPLACE INTO capture_sessions ({_SESSION_COLS}) VALUES "
                    f"({_SESSION_MARKS})",
                    fresh.values(),
                )
            else:
                conn.execute(
                    "DELETE FROM capture_sessions WHERE session_id=?", (session.session_id,)
                )
            return new

    def idle_sessions(self, before: float) -> builtins.list[str]:
        """Sessions whose last request came before `before` (unix seconds), oldest first."""
        rows = self._conn().execute(
            "SELECT session_id FROM capture_sessions WHERE last_turn_at < ? ORDER BY last_turn_at",
            (before,),
        )
        return [r[0] for r in rows]

    # ------------------------------------------------------------------ stages

    def _insert_stage(self, conn: apsw.Connection, stage: Mapping[str, Any]) -> None:
        values: list[Any] = []
        for name in STAGE_COLUMNS:
            value = stage.get(name)
            if name == "skill_attrs":
                value = json.dumps(value or {}, sort_keys=True)
            elif name == "notes":
                value = json.dumps(list(value or ()))
            elif isinstance(value, bool):
                value = int(value)
            values.append(value)
        values[0] = values[0] or self.clock()
        conn.execute(
            f"INSERT INTO procedure_stages ({', '.join(STAGE_COLUMNS)}) "
            f"VALUES ({', '.join('?' * len(STAGE_COLUMNS))})",
            values,
        )

    def record_stage(self, stage: Mapping[str, Any]) -> None:
        """Store one stage row (keys as in ``STAGE_COLUMNS``; missing ones are NULL)."""
        with self._write() as conn:
            self._insert_stage(conn, stage)

    def stages(
        self, *, session_id: str | None = None, limit: int = 100
    ) -> builtins.list[dict[str, Any]]:
        """The latest stage rows, newest first (all sessions, or one)."""
        sql = f"SELECT {', '.join(STAGE_COLUMNS)} FROM procedure_stages"
        params: tuple[Any, ...] = ()
        if session_id is not None:
            sql += " WHERE session_id=?"
            params = (session_id,)
        sql += " ORDER BY id DESC LIMIT ?"
        out = []
        for row in self._conn().execute(sql, params + (limit,)):
            item = dict(zip(STAGE_COLUMNS, row, strict=True))
            item["skill_attrs"] = json.loads(item["skill_attrs"])
            item["notes"] = json.loads(item["notes"])
            out.append(item)
        return out

    def scorecard(self) -> dict[str, Any]:
        """The skill's scorecard over every stored stage row.

        Returns:
            ``requests`` (rows), ``recall_hit_rate`` (hit or completed / rows that ran a
            recall), ``adherence_rate`` (steps that followed / steps that followed or left,
            over tracked requests), ``avg_injected_tokens`` (mean ``kg_injected_tokens`` over
            hits, shadow's would-be size included), ``divergence_rate`` (tracked requests
            with a divergence / tracked requests), and ``by_action`` counts. A rate with no
            denominator is None.
        """
        conn = self._conn()
        by_action = {
            a: int(n)
            for a, n in conn.execute(
                "SELECT action, count(*) FROM procedure_stages GROUP BY action ORDER BY action"
            )
        }
        recalls = sum(by_action.get(a, 0) for a in ("hit", "miss", "skipped_budget", "completed"))
        hits = by_action.get("hit", 0) + by_action.get("completed", 0)
        aggregate = conn.execute(
            "SELECT coalesce(sum(matched_steps),0), coalesce(sum(diverged_steps),0), "
            "count(*), coalesce(sum(divergence),0) FROM procedure_stages "
            "WHERE procedure_id IS NOT NULL AND action IN ('hit','completed')"
        ).fetchone()
        matched, diverged, tracked, diverging = aggregate or (0, 0, 0, 0)
        tokens = [
            json.loads(a).get("kg_injected_tokens", 0)
            for (a,) in conn.execute("SELECT skill_attrs FROM procedure_stages WHERE action='hit'")
        ]
        return {
            "requests": sum(by_action.values()),
            "recall_hit_rate": hits / recalls if recalls else None,
            "adherence_rate": matched / (matched + diverged) if matched + diverged else None,
            "avg_injected_tokens": sum(tokens) / len(tokens) if tokens else None,
            "divergence_rate": diverging / tracked if tracked else None,
            "by_action": by_action,
        }
