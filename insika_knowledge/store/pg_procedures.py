"""The procedural-memory store on PostgreSQL: the procedure store every replica shares.

Same tables and rows as the SQLite `insika_knowledge.store.procedures.ProcedureStore`
(``sql/postgres/002_procedures.sql``), in the tenant's schema, through the same pool and
migrations as the concept store (`insika_knowledge.store.postgres.PgDatabase`).

Write discipline: a write that reads and rewrites procedure counts (`record_runs`,
`finish_task`) first takes the tenant's procedures advisory lock, held until commit, so
two replicas counting runs for one procedure never lose a count (their transactions run
one after the other, as ``BEGIN IMMEDIATE`` makes them on SQLite); generation numbers are
assigned under that lock, so they grow in commit order and `procedures_since` misses
nothing. A request's capture (`save_turn`) writes only its own session's rows and a stage
row, with upserts: it takes no lock.
"""

from __future__ import annotations

import builtins
import json
from collections.abc import Callable, Collection, Iterable, Mapping
from typing import Any

from insika_knowledge.concept import utc_now
from insika_knowledge.procedure import Procedure
from insika_knowledge.store.postgres import POOL_SIZE, PgDatabase, PgWriter
from insika_knowledge.store.procedures import (
    _PROC_COLS,
    _RECURS,
    _SESSION_COLS,
    STAGE_COLUMNS,
    CountedRun,
    SessionRow,
    _digest,
    _procedure,
)

_SESSION_UPSERT = (
    f"INSERT INTO capture_sessions ({_SESSION_COLS}) "
    f"VALUES ({', '.join(['%s'] * len(_SESSION_COLS.split(', ')))}) "
    "ON CONFLICT (session_id) DO UPDATE SET "
    + ", ".join(f"{c} = EXCLUDED.{c}" for c in _SESSION_COLS.split(", ")[1:])
)


def _population_terms(rows: Callable[[str, tuple[Any, ...]], builtins.list[tuple[Any, ...]]],
                      terms: Collection[str]) -> set[str]:
    """Which of `terms` are in ``procedure_population`` (`rows`: a query runner)."""
    wanted = sorted({t for t in terms if t})
    if not wanted:
        return set()
    return {str(r[0]) for r in rows(
        "SELECT term FROM procedure_population WHERE term = ANY(%s::text[])", (wanted,))}


class _PgRows:
    """`insika_knowledge.store.procedures.ProcedureRows` inside one locked write transaction."""

    def __init__(self, writer: PgWriter, clock: Callable[[], str], key: bytes):
        self._writer = writer
        self._clock = clock
        self._key = key
        self._digests: dict[str, str] = {}  # term -> its digest, for this transaction
        self._generation: int | None = None

    def now(self) -> str:
        return self._clock()

    def claim_run(self, procedure_id: str, run_id: str, verdict: str, at: str) -> bool:
        return self._writer.execute(
            "INSERT INTO procedure_runs (procedure_id, run_id, verdict, recorded_at) "
            "VALUES (%s, %s, %s, %s) ON CONFLICT (procedure_id, run_id) DO NOTHING",
            (procedure_id, run_id, verdict, at)) > 0

    def failures_recorded(self, procedure_id: str) -> int:
        row = self._writer.row("SELECT count(*) FROM procedure_runs "
                               "WHERE procedure_id = %s AND verdict = 'failure'", (procedure_id,))
        return int(row[0]) if row else 0

    def get(self, procedure_id: str) -> Procedure | None:
        row = self._writer.row(f"SELECT {_PROC_COLS} FROM procedures WHERE id = %s", (procedure_id,))
        return _procedure(row) if row else None

    def _bump(self) -> int:
        """The generation this transaction's writes carry (bumped once per transaction)."""
        if self._generation is None:
            row = self._writer.row("UPDATE procedure_generation SET generation = generation + 1 "
                                   "WHERE id = 1 RETURNING generation")
            self._generation = int(row[0]) if row else 0
        return self._generation

    def count_population(self, increments: Mapping[str, int]) -> None:
        generation = self._bump()
        ordered = sorted(increments.items())
        self._writer.execute(
            "INSERT INTO procedure_population AS p (term, runs, generation) "
            "SELECT t, r, %s FROM unnest(%s::text[], %s::integer[]) AS u (t, r) "
            "ON CONFLICT (term) DO UPDATE SET runs = p.runs + EXCLUDED.runs, "
            "generation = EXCLUDED.generation",
            (generation, [t for t, _ in ordered], [r for _, r in ordered]))

    def population_terms(self, terms: Collection[str]) -> set[str]:
        return _population_terms(self._writer.rows, terms)

    def note_terms(self, scope: str, session: str, terms: Collection[str]) -> dict[str, int]:
        if not terms:
            return {}
        digests_of = self._digests
        unseen: dict[str, str] = {}
        for term in terms:
            digest = digests_of.get(term)
            if digest is None:
                digest = digests_of[term] = _digest(self._key, b"term", term)
            unseen[digest] = term
        mine = _digest(self._key, b"session", session)
        released: dict[str, int] = {}
        gone: list[str] = []
        again: list[str] = []
        for digest, noted, runs in self._writer.rows(
                "SELECT term, session, runs FROM procedure_term_notes "
                "WHERE scope = %s AND term = ANY(%s::text[])", (scope, list(unseen))):
            term = unseen.pop(digest)
            if noted == mine:
                again.append(digest)
            else:
                released[term] = int(runs)
                gone.append(digest)
        if gone:
            self._writer.execute("DELETE FROM procedure_term_notes "
                                 "WHERE scope = %s AND term = ANY(%s::text[])", (scope, gone))
        if again:
            self._writer.execute("UPDATE procedure_term_notes SET runs = runs + 1 "
                                 "WHERE scope = %s AND term = ANY(%s::text[])", (scope, again))
        if unseen:
            self._writer.execute(
                "INSERT INTO procedure_term_notes (scope, term, session, runs) "
                "SELECT %s, t, %s, 1 FROM unnest(%s::text[]) AS t "
                "ON CONFLICT (scope, term) DO NOTHING",
                (scope, mine, sorted(unseen)))
        return released

    def put(self, procedure: Procedure) -> None:
        generation = self._bump()
        self._writer.execute(
            "INSERT INTO procedures (id, kind, steps, tools, triggers, trigger_runs, successes, "
            "failures, confidence, sample_task, generation, created_at, updated_at, scope) "
            "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s) ON CONFLICT (id) DO UPDATE SET "
            "kind = EXCLUDED.kind, steps = EXCLUDED.steps, tools = EXCLUDED.tools, "
            "triggers = EXCLUDED.triggers, trigger_runs = EXCLUDED.trigger_runs, "
            "successes = EXCLUDED.successes, failures = EXCLUDED.failures, "
            "confidence = EXCLUDED.confidence, sample_task = EXCLUDED.sample_task, "
            "generation = EXCLUDED.generation, created_at = EXCLUDED.created_at, "
            "updated_at = EXCLUDED.updated_at, scope = EXCLUDED.scope",
            (procedure.id, procedure.kind, json.dumps([s.to_json() for s in procedure.steps]),
             json.dumps(list(procedure.tools)), json.dumps(procedure.triggers, sort_keys=True),
             procedure.trigger_runs, procedure.successes, procedure.failures, procedure.confidence,
             procedure.sample_task, generation, procedure.created_at, procedure.updated_at,
             procedure.scope),
        )


class PostgresProcedureStore(PgDatabase):
    """Procedures, runs, captured sessions and stages of one tenant's schema.

    Args:
        url: a ``postgresql://`` URL.
        tenant: the tenant (its schema: `insika_knowledge.store.postgres.schema_for`).
        clock: returns the current UTC time as ``YYYY-MM-DDTHH:MM:SSZ``.
        pool_size: connections kept at most.

    Raises:
        InvalidName: the tenant name is invalid.
        UserError: the database cannot be reached or written.
    """

    def __init__(self, url: str, tenant: str = "default", *, clock: Callable[[], str] = utc_now,
                 pool_size: int = POOL_SIZE):
        super().__init__(url, tenant, clock=clock, pool_size=pool_size)
        self._term_key_bytes: bytes | None = None

    # ------------------------------------------------------------------ procedures

    def generation(self) -> int:
        """A number that changes whenever any procedure does (one indexed read)."""
        row = self.row("SELECT generation FROM procedure_generation WHERE id = 1")
        return int(row[0]) if row else 0

    def procedures_since(self, generation: int) -> tuple[int, builtins.list[Procedure]]:
        """Procedures written after `generation`, and the current generation (one snapshot)."""
        rows = self.rows(
            f"SELECT g.generation, {', '.join('p.' + c for c in _PROC_COLS.split(', '))} "
            "FROM procedure_generation g LEFT JOIN procedures p ON p.generation > %s WHERE g.id = 1",
            (generation,))
        current = int(rows[0][0]) if rows else 0
        return current, [_procedure(r[1:]) for r in rows if r[1] is not None]

    def _term_key(self, writer: PgWriter) -> bytes:
        """The schema's key for term and session digests (``procedure_term_key``).

        Called inside a write transaction: a missing key row (a hand-edited schema) gets a
        new random key, which only makes the existing notes unreachable.
        """
        if self._term_key_bytes is None:
            writer.execute(
                "INSERT INTO procedure_term_key (id, key) VALUES (1, "
                "md5(random()::text || clock_timestamp()::text) || md5(random()::text)) "
                "ON CONFLICT (id) DO NOTHING")
            row = writer.row("SELECT key FROM procedure_term_key WHERE id = 1")
            assert row is not None  # inserted just above when missing
            self._term_key_bytes = bytes.fromhex(str(row[0]))
        return self._term_key_bytes

    def population_terms(self, terms: Collection[str]) -> set[str]:
        """Which of `terms` the population holds: the terms two sessions' tasks had."""
        return _population_terms(self.rows, terms)

    def population_since(self, generation: int) -> dict[str, int]:
        """Population counts changed after `generation`: term -> runs (``''``: all runs).

        ``population_since(0)`` loads the whole population.
        """
        return {str(term): int(runs) for term, runs in self.rows(
            "SELECT term, runs FROM procedure_population WHERE generation > %s", (generation,))}

    def get(self, procedure_id: str) -> Procedure | None:
        """One procedure, or None."""
        row = self.row(f"SELECT {_PROC_COLS} FROM procedures WHERE id = %s", (procedure_id,))
        return _procedure(row) if row else None

    def list_procedures(self, *, min_confidence: float = 0.0, limit: int | None = None) -> builtins.list[Procedure]:
        """Procedures at or above `min_confidence`, most confident first (then support, id).

        Sub-procedures only one run has shown are not listed (`Procedure.recurs`).
        """
        query = (f"SELECT {_PROC_COLS} FROM procedures WHERE confidence >= %s AND {_RECURS} "
                 "ORDER BY confidence DESC, successes + failures DESC, id")
        params: tuple[Any, ...] = (min_confidence,)
        if limit is not None:
            query += " LIMIT %s"
            params += (limit,)
        return [_procedure(r) for r in self.rows(query, params)]

    def count(self) -> int:
        """How many procedures are listed (see `list_procedures`)."""
        return int(self.scalar(f"SELECT count(*) FROM procedures WHERE {_RECURS}"))

    def record_runs(self, runs: Iterable[CountedRun]) -> int:
        """Count judged runs for and against procedures, in one locked transaction.

        Returns:
            How many (procedure, run) pairs were new.
        """
        with self.write() as w:
            w.lock("procedures")
            rows = _PgRows(w, self.clock, self._term_key(w))
            return sum(run.record(rows) for run in runs)

    # ------------------------------------------------------------------ capture

    def load_session(self, session_id: str) -> SessionRow | None:
        """The capture state of `session_id`, or None."""
        row = self.row(f"SELECT {_SESSION_COLS} FROM capture_sessions WHERE session_id = %s",
                       (session_id,))
        if row is None:
            return None
        values = list(row)
        values[5], values[6] = json.loads(values[5]), json.loads(values[6])
        return SessionRow(*values)

    def session_steps(self, session_id: str) -> builtins.list[builtins.list[Any]]:
        """The captured steps of `session_id`'s current task (JSON lists), in order."""
        return [json.loads(r[0]) for r in self.rows(
            "SELECT step FROM capture_steps WHERE session_id = %s ORDER BY seq", (session_id,))]

    def save_turn(self, session: SessionRow, steps: Iterable[tuple[int, builtins.list[Any]]],
                  stage: Mapping[str, Any] | None = None) -> None:
        """Write a request's capture (session row, new or completed steps) and its stage at once."""
        with self.write() as w:
            w.execute(_SESSION_UPSERT, session.values())
            for seq, step in steps:
                w.execute(
                    "INSERT INTO capture_steps (session_id, seq, step) VALUES (%s, %s, %s) "
                    "ON CONFLICT (session_id, seq) DO UPDATE SET step = EXCLUDED.step",
                    (session.session_id, seq, json.dumps(step, separators=(",", ":"))))
            if stage is not None:
                self._insert_stage(w, stage)

    def finish_task(self, session: SessionRow, runs: Iterable[CountedRun], *, keep: bool,
                    if_unchanged: bool = False) -> int | None:
        """Count a finished task's runs and clear its captured steps, in one locked transaction.

        Same contract as `insika_knowledge.store.procedures.ProcedureStore.finish_task`.

        Returns:
            How many (procedure, run) pairs were new; None when `if_unchanged` found the
            session changed (or gone) and nothing was written.
        """
        with self.write() as w:
            w.lock("procedures")
            if if_unchanged:
                now = w.row("SELECT run, turns, last_turn_at FROM capture_sessions "
                            "WHERE session_id = %s FOR UPDATE", (session.session_id,))
                if now is None or tuple(now) != (session.run, session.turns, session.last_turn_at):
                    return None
            rows = _PgRows(w, self.clock, self._term_key(w))
            new = sum(run.record(rows) for run in runs)
            w.execute("DELETE FROM capture_steps WHERE session_id = %s", (session.session_id,))
            if keep:
                fresh = SessionRow(session.session_id, run=session.run + 1,
                                   messages_seen=session.messages_seen, tools=session.tools,
                                   first_turn_at=session.last_turn_at, last_turn_at=session.last_turn_at,
                                   block=session.block, anchor=session.anchor)
                w.execute(_SESSION_UPSERT, fresh.values())
            else:
                w.execute("DELETE FROM capture_sessions WHERE session_id = %s", (session.session_id,))
            return new

    def idle_sessions(self, before: float) -> builtins.list[str]:
        """Sessions whose last request came before `before` (unix seconds), oldest first."""
        return [r[0] for r in self.rows(
            "SELECT session_id FROM capture_sessions WHERE last_turn_at < %s ORDER BY last_turn_at",
            (before,))]

    # ------------------------------------------------------------------ stages

    def _insert_stage(self, writer: PgWriter, stage: Mapping[str, Any]) -> None:
        values: builtins.list[Any] = []
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
        writer.execute(f"INSERT INTO procedure_stages ({', '.join(STAGE_COLUMNS)}) "
                       f"VALUES ({', '.join(['%s'] * len(STAGE_COLUMNS))})", values)

    def record_stage(self, stage: Mapping[str, Any]) -> None:
        """Store one stage row (keys as in ``STAGE_COLUMNS``; missing ones are NULL)."""
        with self.write() as w:
            self._insert_stage(w, stage)

    def stages(self, *, session_id: str | None = None, limit: int = 100) -> builtins.list[dict[str, Any]]:
        """The latest stage rows, newest first (all sessions, or one)."""
        query = f"SELECT {', '.join(STAGE_COLUMNS)} FROM procedure_stages"
        params: tuple[Any, ...] = ()
        if session_id is not None:
            query += " WHERE session_id = %s"
            params = (session_id,)
        out = []
        for row in self.rows(query + " ORDER BY id DESC LIMIT %s", (*params, limit)):
            item = dict(zip(STAGE_COLUMNS, row, strict=True))
            item["skill_attrs"] = json.loads(item["skill_attrs"])
            item["notes"] = json.loads(item["notes"])
            out.append(item)
        return out

    def scorecard(self) -> dict[str, Any]:
        """The skill's scorecard over every stored stage row (see `ProcedureStore.scorecard`)."""
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
