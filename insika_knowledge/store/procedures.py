"""The procedural-memory store: procedures, their runs, captured sessions and stages, in SQLite.

Same tenant database file as the concepts (`insika_knowledge.store.sqlite.SQLiteStore`),
opened through apsw the same way (one connection per thread, WAL, busy timeout) and
migrated by `insika_knowledge.store.migrations.migrate` (``sql/003_procedures.sql``).
Writes run in ``BEGIN IMMEDIATE`` transactions; a request's capture, cursor update and
stage row go in one.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

import apsw

from insika_knowledge.procedures.procedure import Procedure, ProcedureStep
from insika_knowledge.procedures.wilson import wilson_lower_bound
from insika_knowledge.store.database import Database

_PROC_COLS: Final = (
    "id, kind, steps, tools, triggers, trigger_runs, successes, failures, sample_task, "
    "created_at, updated_at"
)
_SESSION_COLS: Final = (
    "session_id, run, messages_seen, turns, task, given, tools, procedure_id, cursor_step, "
    "matched_steps, diverged_steps, tracked_upto, first_turn_at, last_turn_at"
)
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
    )


@dataclass(frozen=True)
class MinedRun:
    """One judged trace, ready to be counted (`insika_knowledge.procedures.mine.Verdict`).

    Attributes:
        run_id: the session id (``#n`` appended for the n-th later task of a session).
        verdict: ``success`` or ``failure``.
        keys: procedure ids of every prefix of the run's steps; the last is its own.
        kind: ``tool`` or ``shell``.
        steps: the canonical steps (stored when a success creates the procedure).
        tools: tool names the steps call.
        terms: index terms of the task (`insika_knowledge.index.text.terms`).
        task: the canonical task text.
    """

    run_id: str
    verdict: str
    keys: tuple[str, ...]
    kind: str = "tool"
    steps: tuple[ProcedureStep, ...] = ()
    tools: tuple[str, ...] = ()
    terms: frozenset[str] = frozenset()
    task: str = ""


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
        )


class ProcedureStore(Database):
    """Procedures, runs, captured sessions and stages of one tenant's database file.

    Args:
        path: the tenant's database file (created with its folder if missing).
        clock: returns the current UTC time as ``YYYY-MM-DDTHH:MM:SSZ``.

    Raises:
        UserError: the path is a folder or not a database.
    """

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

    def get(self, procedure_id: str) -> Procedure | None:
        """One procedure, or None."""
        row = (
            self._conn()
            .execute(f"SELECT {_PROC_COLS} FROM procedures WHERE id=?", (procedure_id,))
            .fetchone()
        )
        return _procedure(row) if row else None

    def list_procedures(self, *, min_confidence: float = 0.0, limit: int | None = None) -> list[Procedure]:
        """Procedures at or above `min_confidence`, most confident first (then support, id)."""
        sql = (
            f"SELECT {_PROC_COLS} FROM procedures WHERE confidence >= ? "
            "ORDER BY confidence DESC, successes + failures DESC, id"
        )
        params: tuple[Any, ...] = (min_confidence,)
        if limit is not None:
            sql += " LIMIT ?"
            params += (limit,)
        return [_procedure(r) for r in self._conn().execute(sql, params)]

    def count(self) -> int:
        """How many procedures there are."""
        return int(self._conn().execute("SELECT count(*) FROM procedures").fetchone()[0])

    def record_runs(self, runs: Iterable[MinedRun]) -> int:
        """Count judged runs for and against procedures, in one transaction.

        A success creates its procedure when new (taking the failures already recorded
        against that sequence), adds one success and merges the task's terms into the
        triggers. A failure counts against every procedure whose id is one of its prefix
        keys, now or when such a procedure appears later. A run counts once per id.

        Returns:
            How many (procedure, run) pairs were new.
        """
        with self._write() as conn:
            return sum(self._record(conn, run) for run in runs)

    def _bump(self, conn: apsw.Connection) -> int:
        conn.execute("UPDATE procedure_generation SET generation = generation + 1 WHERE id=1")
        return int(
            conn.execute("SELECT generation FROM procedure_generation WHERE id=1").fetchone()[0]
        )

    def _record(self, conn: apsw.Connection, run: MinedRun) -> int:
        now = self.clock()
        if run.verdict == "failure":
            new = 0
            for key in run.keys:
                if conn.execute(
                    "SELECT 1 FROM procedure_runs WHERE procedure_id=? AND run_id=?",
                    (key, run.run_id),
                ).fetchone():
                    continue
                conn.execute(
                    "INSERT INTO procedure_runs VALUES (?,?,?,?)", (key, run.run_id, "failure", now)
                )
                new += 1
                row = conn.execute(
                    "SELECT successes, failures FROM procedures WHERE id=?", (key,)
                ).fetchone()
                if row:
                    successes, failures = int(row[0]), int(row[1]) + 1
                    conn.execute(
                        "UPDATE procedures SET failures=?, confidence=?, generation=?, "
                        "updated_at=? WHERE id=?",
                        (
                            failures,
                            wilson_lower_bound(successes, successes + failures),
                            self._bump(conn),
                            now,
                            key,
                        ),
                    )
            return new
        if not run.keys:
            return 0
        key = run.keys[-1]
        if conn.execute(
            "SELECT 1 FROM procedure_runs WHERE procedure_id=? AND run_id=?", (key, run.run_id)
        ).fetchone():
            return 0
        conn.execute(
            "INSERT INTO procedure_runs VALUES (?,?,?,?)", (key, run.run_id, "success", now)
        )
        row = conn.execute(
            "SELECT successes, failures, triggers, trigger_runs FROM procedures WHERE id=?", (key,)
        ).fetchone()
        generation = self._bump(conn)
        if row is None:
            failures = int(
                conn.execute(
                    "SELECT count(*) FROM procedure_runs "
                    "WHERE procedure_id=? AND verdict='failure'",
                    (key,),
                ).fetchone()[0]
            )
            conn.execute(
                "INSERT INTO procedures (id, kind, steps, tools, triggers, trigger_runs, "
                "successes, failures, confidence, sample_task, generation, created_at, updated_at) "
                "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
                (
                    key,
                    run.kind,
                    json.dumps([s.to_json() for s in run.steps]),
                    json.dumps(list(run.tools)),
                    json.dumps({t: 1 for t in sorted(run.terms)}),
                    1,
                    1,
                    failures,
                    wilson_lower_bound(1, 1 + failures),
                    run.task,
                    generation,
                    now,
                    now,
                ),
            )
            return 1
        successes, failures = int(row[0]) + 1, int(row[1])
        triggers: dict[str, int] = json.loads(row[2])
        for term in run.terms:
            triggers[term] = triggers.get(term, 0) + 1
        conn.execute(
            "UPDATE procedures SET successes=?, triggers=?, trigger_runs=?, confidence=?, "
            "generation=?, updated_at=? WHERE id=?",
            (
                successes,
                json.dumps(triggers, sort_keys=True),
                int(row[3]) + 1,
                wilson_lower_bound(successes, successes + failures),
                generation,
                now,
                key,
            ),
        )
        return 1

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

    def session_steps(self, session_id: str) -> list[list[Any]]:
        """The captured steps of `session_id`'s current task (JSON lists), in order."""
        rows = self._conn().execute(
            "SELECT step FROM capture_steps WHERE session_id=? ORDER BY seq", (session_id,)
        )
        return [json.loads(r[0]) for r in rows]

    def save_turn(
        self,
        session: SessionRow,
        steps: Iterable[tuple[int, list[Any]]],
        stage: Mapping[str, Any] | None = None,
    ) -> None:
        """Write a request's capture (session row, new or completed steps) and its stage at once."""
        with self._write() as conn:
            conn.execute(
                f"INSERT OR REPLACE INTO capture_sessions ({_SESSION_COLS}) VALUES "
                "(?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                session.values(),
            )
            for seq, step in steps:
                conn.execute(
                    "INSERT OR REPLACE INTO capture_steps VALUES (?,?,?)",
                    (session.session_id, seq, json.dumps(step, separators=(",", ":"))),
                )
            if stage is not None:
                self._insert_stage(conn, stage)

    def finish_task(self, session: SessionRow, runs: Iterable[MinedRun], *, keep: bool) -> int:
        """Count a finished task's runs and clear its captured steps, in one transaction.

        Args:
            session: the session (its ``run`` is advanced and its task state reset when kept).
            runs: what the task contributes (none for an unverified trace).
            keep: keep the session row for a later task (an explicit outcome); False deletes
                it (an idle flush).

        Returns:
            How many (procedure, run) pairs were new.
        """
        with self._write() as conn:
            new = sum(self._record(conn, run) for run in runs)
            conn.execute("DELETE FROM capture_steps WHERE session_id=?", (session.session_id,))
            if keep:
                fresh = SessionRow(
                    session.session_id,
                    run=session.run + 1,
                    messages_seen=session.messages_seen,
                    tools=session.tools,
                    first_turn_at=session.last_turn_at,
                    last_turn_at=session.last_turn_at,
                )
                conn.execute(
                    f"INSERT OR REPLACE INTO capture_sessions ({_SESSION_COLS}) VALUES "
                    "(?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                    fresh.values(),
                )
            else:
                conn.execute(
                    "DELETE FROM capture_sessions WHERE session_id=?", (session.session_id,)
                )
            return new

    def idle_sessions(self, before: float) -> list[str]:
        """Sessions whose last request came before `before` (unix seconds), oldest first."""
        rows = self._conn().execute(
            "SELECT session_id FROM capture_sessions WHERE last_turn_at < ? ORDER BY last_turn_at",
            (before,),
        )
        return [r[0] for r in rows]

    # ------------------------------------------------------------------ stages

    def _insert_stage(self, conn: apsw.Connection, stage: Mapping[str, Any]) -> None:
        values = [stage.get(c) for c in STAGE_COLUMNS]
        values[0] = values[0] or self.clock()
        for i, name in enumerate(STAGE_COLUMNS):
            if name == "skill_attrs":
                values[i] = json.dumps(stage.get("skill_attrs") or {}, sort_keys=True)
            elif isinstance(values[i], bool):
                values[i] = int(values[i])
        conn.execute(
            f"INSERT INTO procedure_stages ({', '.join(STAGE_COLUMNS)}) "
            f"VALUES ({', '.join('?' * len(STAGE_COLUMNS))})",
            values,
        )

    def record_stage(self, stage: Mapping[str, Any]) -> None:
        """Store one stage row (keys as in ``STAGE_COLUMNS``; missing ones are NULL)."""
        with self._write() as conn:
            self._insert_stage(conn, stage)

    def stages(self, *, session_id: str | None = None, limit: int = 100) -> list[dict[str, Any]]:
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
        matched, diverged, tracked, diverging = conn.execute(
            "SELECT coalesce(sum(matched_steps),0), coalesce(sum(diverged_steps),0), "
            "count(*), coalesce(sum(divergence),0) FROM procedure_stages "
            "WHERE procedure_id IS NOT NULL AND action IN ('hit','completed')"
        ).fetchone()
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
