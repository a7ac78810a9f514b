"""The procedure store, written once for both backends: procedures, runs, captures, stages.

`ProcedureMethods` is mixed into `insika_knowledge.store.sqlite.procedures.ProcedureStore`
(SQLite) and `insika_knowledge.store.postgres.procedures.PostgresProcedureStore`. It reads with
the store's `rows` and `row` and writes through its `write` transactions
(`insika_knowledge.store.statements.Statements`).

Write discipline: a write that reads and rewrites procedure counts (`record_runs`,
`finish_task`) first takes the tenant's ``procedures`` key lock (`Statements.lock`: an
advisory lock held until commit on PostgreSQL; SQLite's ``BEGIN IMMEDIATE`` serialises
every writer already), so two writers counting runs for one procedure never lose a count;
generation numbers are assigned under that lock, so they grow in commit order and
`procedures_since` misses nothing. A request's capture (`save_turn`) writes only its own
session's rows and a stage row, with upserts.

A task term only one session had is never written in the clear: the rows keep it as a
note (``procedure_term_notes``) of two blake2b digests (hex) keyed by the database's own
random key, the term's and the session's (`ProcedureRows.note_terms`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from contextlib import AbstractContextManager
from typing import Any, ClassVar, Final

from insika_knowledge.procedure import Procedure, TaskRecord
from insika_knowledge.store.procedure_records import (
    PROC_COLUMNS,
    RECURS,
    SESSION_COLUMNS,
    STAGE_COLUMNS,
    TASK_COLUMNS,
    CountedRun,
    SessionRow,
    digest,
    procedure_of,
    task_of,
)
from insika_knowledge.store.statements import Dialect, Params, Reads, Statements, insert_new, marks, scalar, upsert

_SESSION_UPSERT: Final = upsert("capture_sessions", SESSION_COLUMNS, "session_id")
_STEP_UPSERT: Final = upsert("capture_steps", "session_id, seq, step", "session_id, seq")
_PROCEDURE_UPSERT: Final = upsert(
    "procedures", "id, kind, steps, tools, triggers, trigger_runs, successes, failures, confidence, "
    "sample_task, generation, created_at, updated_at, scope", "id")
_POPULATION: Final = (("term", "text"), ("runs", "integer"))
_POPULATION_ADD: Final = ("ON CONFLICT (term) DO UPDATE SET runs = procedure_population.runs + excluded.runs, "
                          "generation = excluded.generation")
_NOTE: Final = (("term", "text"),)
_TASK_UPSERT: Final = upsert("procedure_tasks", "id, record, generation, created_at, updated_at", "id")
_TASK_OP: Final = insert_new("procedure_task_ops", "operation, task_id", "operation, task_id")
_CLAIM_RUN: Final = insert_new("procedure_runs", "procedure_id, run_id, verdict, recorded_at",
                               "procedure_id, run_id")
_STAGE_INSERT: Final = f"INSERT INTO procedure_stages ({', '.join(STAGE_COLUMNS)}) VALUES ({marks(len(STAGE_COLUMNS))})"


def _population_terms(reads: Reads, dialect: Dialect, terms: Collection[str]) -> set[str]:
    """Which of `terms` are in ``procedure_population``."""
    wanted = [t for t in set(terms) if t]
    if not wanted:
        return set()
    among, listed = dialect.in_list("term", wanted)
    return {str(r[0]) for r in reads.rows(f"SELECT term FROM procedure_population WHERE {among}", listed)}


class StatementRows:
    """`insika_knowledge.store.procedure_records.ProcedureRows` inside one write transaction."""

    def __init__(self, sql: Statements, dialect: Dialect, clock: Callable[[], str], key: bytes):
        self._sql = sql
        self._dialect = dialect
        self._clock = clock
        self._key = key
        self._digests: dict[str, str] = {}  # term -> its digest, for this transaction
        self._generation: int | None = None
        self._deferred: dict[str, Callable[[], None]] = {}

    def defer(self, key: str, action: Callable[[], None]) -> None:
        """Run `action` once before the transaction commits (the last one given for `key`)."""
        self._deferred.pop(key, None)
        self._deferred[key] = action

    def run_deferred(self) -> None:
        """Run the deferred actions, in the order they were first given (see `defer`)."""
        while self._deferred:
            key = next(iter(self._deferred))
            self._deferred.pop(key)()

    def now(self) -> str:
        """The current UTC time, ``YYYY-MM-DDTHH:MM:SSZ`` (the store's clock)."""
        return self._clock()

    def claim_run(self, procedure_id: str, run_id: str, verdict: str, at: str) -> bool:
        """Record that `run_id` counted for (or against) `procedure_id`, once; True when new."""
        return self._sql.execute(_CLAIM_RUN, (procedure_id, run_id, verdict, at)) > 0

    def failures_recorded(self, procedure_id: str) -> int:
        """How many failed runs were counted against `procedure_id`."""
        return int(scalar(self._sql, "SELECT count(*) FROM procedure_runs "
                                     "WHERE procedure_id = ? AND verdict = 'failure'", (procedure_id,)))

    def get(self, procedure_id: str) -> Procedure | None:
        """One procedure as the transaction sees it, or None."""
        row = self._sql.row(f"SELECT {PROC_COLUMNS} FROM procedures WHERE id = ?", (procedure_id,))
        return procedure_of(row) if row else None

    def _bump(self) -> int:
        """The generation this transaction's writes carry (bumped once per transaction)."""
        if self._generation is None:
            row = self._sql.row("UPDATE procedure_generation SET generation = generation + 1 "
                                "WHERE id = 1 RETURNING generation")
            self._generation = int(row[0]) if row else 0
        return self._generation

    def get_task(self, task_id: str) -> TaskRecord | None:
        """One task record as the transaction sees it, or None."""
        row = self._sql.row(f"SELECT {TASK_COLUMNS} FROM procedure_tasks WHERE id = ?", (task_id,))
        return task_of(row) if row else None

    def put_task(self, record: TaskRecord) -> None:
        """Insert or replace a task record (bumps the generation)."""
        now = self._clock()
        self._sql.execute(_TASK_UPSERT, (
            record.id, json.dumps(record.to_json(), sort_keys=True, separators=(",", ":")), self._bump(),
            record.created_at or now, record.updated_at or now))
        for operation in sorted({*record.ops, *record.failed, *record.contradicted}):
            self._sql.execute(_TASK_OP, (operation, record.id))

    def tasks_with(self, operation: str) -> list[TaskRecord]:
        """Every task record that made, failed or was given the write operation `operation`."""
        columns = ", ".join("t." + c for c in TASK_COLUMNS.split(", "))
        return [task_of(r) for r in self._sql.rows(
            f"SELECT {columns} FROM procedure_task_ops o JOIN procedure_tasks t ON t.id = o.task_id "
            "WHERE o.operation = ? ORDER BY t.id", (operation,))]

    def count_population(self, increments: Mapping[str, int]) -> None:
        """Add each term's increment to the population (bumps the generation)."""
        generation = self._bump()
        self._sql.insert_rows("procedure_population", _POPULATION, sorted(increments.items()), _POPULATION_ADD,
                              same=(("generation", "integer", generation),))

    def population_terms(self, terms: Collection[str]) -> set[str]:
        """Which of `terms` the population holds."""
        return _population_terms(self._sql, self._dialect, terms)

    def note_terms(self, scope: str, session: str, terms: Collection[str]) -> dict[str, int]:
        """Note the task terms `scope` does not hold in the clear, for `session` (see `ProcedureRows`)."""
        if not terms:
            return {}
        digests_of = self._digests
        unseen: dict[str, str] = {}
        for term in terms:
            found = digests_of.get(term)
            if found is None:
                found = digests_of[term] = digest(self._key, b"term", term)
            unseen[found] = term
        mine = digest(self._key, b"session", session)
        released: dict[str, int] = {}
        gone: list[str] = []
        again: list[str] = []
        for noted_term, noted, runs in self._sql.rows(*self._notes(
                "SELECT term, session, runs FROM procedure_term_notes", scope, list(unseen))):
            term = unseen.pop(noted_term)
            if noted == mine:
                again.append(noted_term)
            else:
                released[term] = int(runs)
                gone.append(noted_term)
        if gone:
            self._sql.execute(*self._notes("DELETE FROM procedure_term_notes", scope, gone))
        if again:
            self._sql.execute(*self._notes("UPDATE procedure_term_notes SET runs = runs + 1", scope, again))
        if unseen:
            self._sql.insert_rows("procedure_term_notes", _NOTE, [(noted,) for noted in sorted(unseen)],
                                  "ON CONFLICT (scope, term) DO NOTHING",
                                  same=(("scope", "text", scope), ("session", "text", mine), ("runs", "integer", 1)))
        return released

    def _notes(self, statement: str, scope: str, digests: list[str]) -> tuple[str, tuple[Any, ...]]:
        """`statement` over the notes of `scope` whose term is one of `digests`, and its parameters."""
        among, listed = self._dialect.in_list("term", digests)
        return f"{statement} WHERE scope = ? AND {among}", (scope, *listed)

    def put(self, procedure: Procedure) -> None:
        """Insert or replace `procedure` (bumps the generation)."""
        self._sql.execute(_PROCEDURE_UPSERT, (
            procedure.id, procedure.kind, json.dumps([s.to_json() for s in procedure.steps]),
            json.dumps(list(procedure.tools)), json.dumps(procedure.triggers, sort_keys=True),
            procedure.trigger_runs, procedure.successes, procedure.failures, procedure.confidence,
            procedure.sample_task, self._bump(), procedure.created_at, procedure.updated_at,
            procedure.scope))


class ProcedureMethods:
    """Procedures, runs, captured sessions and stages of one tenant (either backend)."""

    #: The backend's SQL words (`insika_knowledge.store.statements`).
    dialect: ClassVar[Dialect]
    #: Returns the current UTC time as ``YYYY-MM-DDTHH:MM:SSZ``.
    clock: Callable[[], str]
    #: The digest key, read once (`_term_key`).
    _term_key_bytes: bytes | None = None

    def rows(self, query: str, params: Params = ()) -> list[tuple[Any, ...]]:
        """Every row one read statement returns (the store's)."""
        raise NotImplementedError

    def row(self, query: str, params: Params = ()) -> tuple[Any, ...] | None:
        """The first row one read statement returns, or None (the store's)."""
        raise NotImplementedError

    def write(self, busy_timeout_ms: int | None = None) -> AbstractContextManager[Statements]:
        """One write transaction (the store's)."""
        raise NotImplementedError

    # ------------------------------------------------------------------ procedures

    def generation(self) -> int:
        """A number that changes whenever any procedure does (one indexed read)."""
        row = self.row("SELECT generation FROM procedure_generation WHERE id = 1")
        return int(row[0]) if row else 0

    def procedures_since(self, generation: int) -> tuple[int, list[Procedure]]:
        """Procedures written after `generation`, and the current generation (one snapshot).

        ``procedures_since(0)`` loads every procedure.
        """
        rows = self.rows(
            f"SELECT g.generation, {', '.join('p.' + c for c in PROC_COLUMNS.split(', '))} "
            "FROM procedure_generation g LEFT JOIN procedures p ON p.generation > ? WHERE g.id = 1",
            (generation,))
        current = int(rows[0][0]) if rows else 0
        return current, [procedure_of(r[1:]) for r in rows if r[1] is not None]

    def _term_key(self, sql: Statements) -> bytes:
        """The database's key for term and session digests (``procedure_term_key``).

        Called inside a write transaction: a missing key row (a hand-edited database) gets
        a new random key, which only makes the existing notes unreachable.
        """
        if self._term_key_bytes is None:
            sql.execute(f"INSERT INTO procedure_term_key (id, key) VALUES (1, {self.dialect.random_key}) "
                        "ON CONFLICT (id) DO NOTHING")
            row = sql.row("SELECT key FROM procedure_term_key WHERE id = 1")
            assert row is not None  # inserted just above when missing
            self._term_key_bytes = bytes.fromhex(str(row[0]))
        return self._term_key_bytes

    def population_terms(self, terms: Collection[str]) -> set[str]:
        """Which of `terms` the population holds: the terms two sessions' tasks had."""
        return _population_terms(self, self.dialect, terms)

    def digest_key(self) -> bytes:
        """The database's secret key of term digests (``procedure_term_key``; created when missing).

        Task records keep what users asked as digests under it
        (`insika_knowledge.procedures.trace.terms`), and recall digests a new message with it.
        """
        if self._term_key_bytes is None:
            row = self.row("SELECT key FROM procedure_term_key WHERE id = 1")
            if row is not None:
                self._term_key_bytes = bytes.fromhex(str(row[0]))
            else:
                with self.write() as sql:
                    self._term_key(sql)
        assert self._term_key_bytes is not None
        return self._term_key_bytes

    def tasks_since(self, generation: int) -> list[TaskRecord]:
        """Task records written after `generation` (``tasks_since(0)``: every one)."""
        return [task_of(r) for r in self.rows(
            f"SELECT {TASK_COLUMNS} FROM procedure_tasks WHERE generation > ?", (generation,))]

    def get_task(self, task_id: str) -> TaskRecord | None:
        """One task record, or None."""
        row = self.row(f"SELECT {TASK_COLUMNS} FROM procedure_tasks WHERE id = ?", (task_id,))
        return task_of(row) if row else None

    def population_since(self, generation: int) -> dict[str, int]:
        """Population counts changed after `generation`: term -> runs (``''``: all runs).

        ``population_since(0)`` loads the whole population.
        """
        return {str(term): int(runs) for term, runs in self.rows(
            "SELECT term, runs FROM procedure_population WHERE generation > ?", (generation,))}

    def get(self, procedure_id: str) -> Procedure | None:
        """One procedure, or None."""
        row = self.row(f"SELECT {PROC_COLUMNS} FROM procedures WHERE id = ?", (procedure_id,))
        return procedure_of(row) if row else None

    def list_procedures(self, *, min_confidence: float = 0.0, limit: int | None = None) -> list[Procedure]:
        """Procedures at or above `min_confidence`, most confident first (then support, id).

        Sub-procedures only one run has shown are not listed (`Procedure.recurs`).
        """
        query = (f"SELECT {PROC_COLUMNS} FROM procedures WHERE confidence >= ? AND {RECURS} "
                 "ORDER BY confidence DESC, successes + failures DESC, id")
        params: tuple[Any, ...] = (min_confidence,)
        if limit is not None:
            query += " LIMIT ?"
            params += (limit,)
        return [procedure_of(r) for r in self.rows(query, params)]

    def count(self) -> int:
        """How many procedures are listed (see `list_procedures`)."""
        return int(scalar(self, f"SELECT count(*) FROM procedures WHERE {RECURS}"))

    @staticmethod
    def _counted(rows: StatementRows, runs: Iterable[CountedRun]) -> int:
        new = sum(run.record(rows) for run in runs)
        rows.run_deferred()
        return new

    def _rows(self, sql: Statements) -> StatementRows:
        """The procedure rows of the write transaction `sql`, under the procedures lock."""
        sql.lock("procedures")
        return StatementRows(sql, self.dialect, self.clock, self._term_key(sql))

    def record_runs(self, runs: Iterable[CountedRun]) -> int:
        """Count judged runs for and against procedures, in one locked transaction.

        Each run applies its own counting rules to the rows (`CountedRun.record`; see
        `insika_knowledge.procedures.mining.scoring` for the rules).

        Returns:
            How many (procedure, run) pairs were new.
        """
        with self.write() as sql:
            return self._counted(self._rows(sql), runs)

    # ------------------------------------------------------------------ capture

    def load_session(self, session_id: str) -> SessionRow | None:
        """The capture state of `session_id`, or None."""
        row = self.row(f"SELECT {SESSION_COLUMNS} FROM capture_sessions WHERE session_id = ?", (session_id,))
        if row is None:
            return None
        values = list(row)
        values[5], values[6] = json.loads(values[5]), json.loads(values[6])
        return SessionRow(*values)

    def session_steps(self, session_id: str) -> list[list[Any]]:
        """The captured steps of `session_id`'s current task (JSON lists), in order."""
        return [json.loads(r[0]) for r in self.rows(
            "SELECT step FROM capture_steps WHERE session_id = ? ORDER BY seq", (session_id,))]

    def save_turn(self, session: SessionRow, steps: Iterable[tuple[int, list[Any]]],
                  stage: Mapping[str, Any] | None = None) -> None:
        """Write a request's capture (session row, new or completed steps) and its stage at once."""
        with self.write() as sql:
            sql.execute(_SESSION_UPSERT, session.values())
            for seq, step in steps:
                sql.execute(_STEP_UPSERT, (session.session_id, seq, json.dumps(step, separators=(",", ":"))))
            if stage is not None:
                sql.execute(_STAGE_INSERT, self._stage_values(stage))

    def finish_task(self, session: SessionRow, runs: Iterable[CountedRun], *, keep: bool,
                    if_unchanged: bool = False) -> int | None:
        """Count a finished task's runs and clear its captured steps, in one locked transaction.

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
        with self.write() as sql:
            sql.lock("procedures")
            if if_unchanged:
                now = sql.row("SELECT run, turns, last_turn_at FROM capture_sessions "
                              f"WHERE session_id = ?{self.dialect.for_update}", (session.session_id,))
                if now is None or tuple(now) != (session.run, session.turns, session.last_turn_at):
                    return None
            new = self._counted(self._rows(sql), runs)
            sql.execute("DELETE FROM capture_steps WHERE session_id = ?", (session.session_id,))
            if keep:
                fresh = SessionRow(session.session_id, run=session.run + 1,
                                   messages_seen=session.messages_seen, tools=session.tools,
                                   first_turn_at=session.last_turn_at, last_turn_at=session.last_turn_at,
                                   block=session.block, anchor=session.anchor)
                sql.execute(_SESSION_UPSERT, fresh.values())
            else:
                sql.execute("DELETE FROM capture_sessions WHERE session_id = ?", (session.session_id,))
            return new

    def idle_sessions(self, before: float) -> list[str]:
        """Sessions whose last request came before `before` (unix seconds), oldest first."""
        return [r[0] for r in self.rows(
            "SELECT session_id FROM capture_sessions WHERE last_turn_at < ? ORDER BY last_turn_at", (before,))]

    # ------------------------------------------------------------------ stages

    def _stage_values(self, stage: Mapping[str, Any]) -> list[Any]:
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
        return values

    def record_stage(self, stage: Mapping[str, Any]) -> None:
        """Store one stage row (keys as in ``STAGE_COLUMNS``; missing ones are NULL)."""
        with self.write() as sql:
            sql.execute(_STAGE_INSERT, self._stage_values(stage))

    def stages(self, *, session_id: str | None = None, limit: int = 100) -> list[dict[str, Any]]:
        """The latest stage rows, newest first (all sessions, or one)."""
        query = f"SELECT {', '.join(STAGE_COLUMNS)} FROM procedure_stages"
        params: tuple[Any, ...] = ()
        if session_id is not None:
            query += " WHERE session_id = ?"
            params = (session_id,)
        return list(_stage_items(self.rows(query + " ORDER BY id DESC LIMIT ?", (*params, limit))))

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
        by_action = {str(a): int(n) for a, n in self.rows(
            "SELECT action, count(*) FROM procedure_stages GROUP BY action ORDER BY action")}
        recalls = sum(by_action.get(a, 0) for a in ("hit", "miss", "skipped_budget", "completed"))
        hits = by_action.get("hit", 0) + by_action.get("completed", 0)
        aggregate = self.row(
            "SELECT coalesce(sum(matched_steps), 0), coalesce(sum(diverged_steps), 0), count(*), "
            "coalesce(sum(divergence), 0) FROM procedure_stages "
            "WHERE procedure_id IS NOT NULL AND action IN ('hit', 'completed')")
        matched, diverged, tracked, diverging = (int(v) for v in (aggregate or (0, 0, 0, 0)))
        tokens = [json.loads(a).get("kg_injected_tokens", 0) for (a,) in self.rows(
            "SELECT skill_attrs FROM procedure_stages WHERE action = 'hit'")]
        return {
            "requests": sum(by_action.values()),
            "recall_hit_rate": hits / recalls if recalls else None,
            "adherence_rate": matched / (matched + diverged) if matched + diverged else None,
            "avg_injected_tokens": sum(tokens) / len(tokens) if tokens else None,
            "divergence_rate": diverging / tracked if tracked else None,
            "by_action": by_action,
        }


def _stage_items(rows: Iterable[tuple[Any, ...]]) -> Iterator[dict[str, Any]]:
    """Stage rows as dicts, their JSON columns decoded."""
    for row in rows:
        item = dict(zip(STAGE_COLUMNS, row, strict=True))
        item["skill_attrs"] = json.loads(item["skill_attrs"])
        item["notes"] = json.loads(item["notes"])
        yield item
