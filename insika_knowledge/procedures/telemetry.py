"""Telemetry: the ``skill_knowledge_graph`` trace stage, the row's ``kg_*`` fields, the headers.

Every request the skill looked at (mode not ``off``) yields one `Stage`. Its dictionary
(`Stage.to_dict`) is the trace stage; `Stage.skill_attrs` is what goes into the request
row's ``skill_attrs``; `Stage.rewrite_headers` are the body-rewrite headers a provider
relay adds when the block went in. The store keeps every stage (``procedure_stages``) and
computes the scorecard from them.

Shadow mode reports the would-be block size in two places on purpose: the row's
``kg_injected_tokens`` (dashboards size the skill on it) and the stage's
``would_inject_tokens``; the stage's ``injected_tokens`` stays 0 because nothing went
upstream.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Final

from insika_knowledge.procedures.modes import SHADOW
from insika_knowledge.store.procedure_records import STAGE_COLUMNS
from insika_knowledge.wire.headers import BODY_REWRITTEN_HEADER, REWRITE_TOKENS_HEADER, REWRITTEN_BY_HEADER

STAGE_NAME: Final = "skill_knowledge_graph"
#: Recall results (``action`` values that come from a recall; ``kg_recall_result``).
HIT: Final = "hit"
MISS: Final = "miss"
SKIPPED_BUDGET: Final = "skipped_budget"
COMPLETED: Final = "completed"
#: Non-recall actions.
SKIPPED: Final = "skipped"
FAILED: Final = "failed"
RECALL_ACTIONS: Final = frozenset({HIT, MISS, SKIPPED_BUDGET, COMPLETED})

_RECALL_KEYS: Final = (
    "matcher",
    "match_score",
    "procedure_id",
    "path_confidence",
    "composed_hops",
    "cursor_step",
    "steps_remaining",
    "adherence_delta",
    "divergence",
)


@dataclass
class Stage:
    """The skill's report on one request (field names are the stage's keys).

    Attributes:
        action: ``hit``, ``miss``, ``skipped_budget``, ``completed``, ``skipped`` or ``failed``.
        mode: ``shadow``, ``prod``, ``canary_treatment`` or ``canary_control``.
        reason: why skipped or failed (``canary_control``, ``no_session``, the exception's
            class name, with what was wrong for a refused request: `skill.failure_reason`),
            or why a hit was not injected; else None.
        injected: the body that went upstream got the block from this request.
        injected_tokens: tokens injected (0 unless `injected`).
        would_inject_tokens: shadow: tokens of the block that would have gone in.
        block_tokens: tokens of the rendered block (0 without a recalled procedure).
        max_injection_tokens: the budget in force.
        matcher: the recall matcher (``terms``).
        match_score: best match score, 0..1.
        procedure_id: the recalled procedure.
        path_confidence: its Wilson lower bound, 0..1; for a composed chain, the product of
            its procedures' (the chain's confidence).
        composed_hops: procedures composed after the first (0 for a single procedure).
        cursor_step: procedure steps the session has done.
        steps_remaining: procedure steps ahead.
        adherence_delta: this request's new steps that followed minus those that left.
        divergence: a new step of this request left the procedure.
        canary_bucket: ``treatment`` or ``control`` under canary.
        canary_percent: N of ``canary:N``.
        canary_keyed_by: ``session`` or ``request``.
        session_scoped: the request carried a session id.
        captured_turns: requests buffered for the session's current task.
        duration_ms: time the skill took on this request, milliseconds.
        recall_ms: time the recall itself took, milliseconds (``kg_recall_ms``).
        session_id: the session (stored with the row, not part of the stage).
        matched_steps: new steps that followed (stored for the scorecard).
        diverged_steps: new steps that left (stored for the scorecard).
        carried: the block went upstream because the session carries it from an earlier
            request (the same bytes at the same place), not because this request placed it.
        notes: what the skill read around on this request (an outcome header that is no
            outcome, an ``x-ace-skills`` value it ignored).
    """

    action: str
    mode: str
    reason: str | None = None
    injected: bool = False
    injected_tokens: int = 0
    would_inject_tokens: int = 0
    block_tokens: int = 0
    max_injection_tokens: int = 0
    matcher: str | None = None
    match_score: float | None = None
    procedure_id: str | None = None
    path_confidence: float | None = None
    composed_hops: int | None = None
    cursor_step: int | None = None
    steps_remaining: int | None = None
    adherence_delta: int | None = None
    divergence: bool | None = None
    canary_bucket: str | None = None
    canary_percent: int | None = None
    canary_keyed_by: str | None = None
    session_scoped: bool = False
    captured_turns: int = 0
    duration_ms: float = 0.0
    recall_ms: float = 0.0
    session_id: str | None = None
    matched_steps: int = 0
    diverged_steps: int = 0
    carried: bool = False
    notes: list[str] = field(default_factory=list)

    @property
    def is_recall(self) -> bool:
        """The action is a recall result (hit, miss, skipped_budget, completed)."""
        return self.action in RECALL_ACTIONS

    def to_dict(self) -> dict[str, Any]:
        """The trace stage: ``{"name": "skill_knowledge_graph", "action": ..., ...}``.

        Recall keys appear only on recall actions; canary keys only under canary;
        ``carried`` only when true, ``notes`` only when there are some.
        """
        out: dict[str, Any] = {"name": STAGE_NAME, "action": self.action, "mode": self.mode}
        if self.reason is not None:
            out["reason"] = self.reason
        out.update(
            injected=self.injected,
            injected_tokens=self.injected_tokens if self.injected else 0,
            would_inject_tokens=self.would_inject_tokens,
            block_tokens=self.block_tokens,
            max_injection_tokens=self.max_injection_tokens,
        )
        if self.is_recall:
            for key in _RECALL_KEYS:
                out[key] = getattr(self, key)
        if self.canary_bucket is not None:
            out.update(
                canary_bucket=self.canary_bucket,
                canary_percent=self.canary_percent,
                canary_keyed_by=self.canary_keyed_by,
            )
        if self.carried:
            out["carried"] = True
        out.update(
            session_scoped=self.session_scoped,
            captured_turns=self.captured_turns,
            duration_ms=round(self.duration_ms, 3),
        )
        if self.notes:
            out["notes"] = list(self.notes)
        return out

    def skill_attrs(self) -> dict[str, Any]:
        """The row's ``kg_*`` fields (empty unless the action is a recall result)."""
        if not self.is_recall:
            return {}
        injected_tokens = (
            self.would_inject_tokens
            if self.mode == SHADOW
            else (self.injected_tokens if self.injected else 0)
        )
        return {
            "kg_recall_result": self.action,
            "kg_matcher": self.matcher,
            "kg_match_score": self.match_score,
            "kg_procedure_id": self.procedure_id,
            "kg_path_confidence": self.path_confidence,
            "kg_composed_hops": self.composed_hops,
            "kg_injected_tokens": injected_tokens,
            "kg_cursor_step": self.cursor_step,
            "kg_steps_remaining": self.steps_remaining,
            "kg_adherence_delta": self.adherence_delta,
            "kg_divergence": self.divergence,
            "kg_recall_ms": round(self.recall_ms, 3),
        }

    def rewrite_headers(self) -> dict[str, str]:
        """The body-rewrite headers a provider relay adds (empty unless `injected`)."""
        if not self.injected:
            return {}
        return {
            BODY_REWRITTEN_HEADER: "tail",
            REWRITE_TOKENS_HEADER: f"+{self.injected_tokens}",
            REWRITTEN_BY_HEADER: STAGE_NAME,
        }

    def mode_entry(self) -> str:
        """The skill's entry for ``x-ace-skill-modes`` (``skill_knowledge_graph=prod``)."""
        return f"{STAGE_NAME}={self.mode}"

    def row(self) -> dict[str, Any]:
        """The ``procedure_stages`` row (see `insika_knowledge.store.procedure_records.STAGE_COLUMNS`)."""
        derived = {"recorded_at", "injected_tokens", "skill_attrs", "notes"}
        row = {key: getattr(self, key) for key in STAGE_COLUMNS if key not in derived}
        row["injected_tokens"] = self.injected_tokens if self.injected else 0
        row["skill_attrs"] = self.skill_attrs()
        row["notes"] = list(self.notes)
        return row
