"""Procedural memory: procedures mined from verified agent traces, recalled into later runs.

The entry point is `ProceduralMemory` (``handle_request(body, headers) -> (body, stage)``);
`ProceduresConfig` holds its settings. Modules, one concern each:

``wire`` (OpenAI / Anthropic bodies as events), ``steps`` (canonical steps), ``shell``
(command parsing), ``verify`` (verify commands and results), ``credentials`` (secrets),
``canonical`` (templates), ``prune`` (exploration collapse, hoisting, superseded steps),
``mine`` (verdicts and grouping), ``wilson`` (confidence), ``procedure`` (the model),
``recall`` (the trigger index), ``tokens`` (token counters), ``render`` (the block),
``inject`` (cache-safe injection), ``modes`` (off / shadow / prod / canary), ``cursor``
(adherence), ``telemetry`` (the stage and kg_* fields), ``capture`` (session buffers),
``skill`` (the orchestration), ``evaluate`` and ``bench`` (reproducible figures), ``cli``.
"""

from __future__ import annotations

from typing import Any

__all__ = ["ProceduralMemory", "ProceduresConfig", "Stage"]


def __getattr__(name: str) -> Any:
    # Lazy: the store imports procedures.procedure, and skill imports the store.
    if name == "ProceduralMemory":
        from insika_knowledge.procedures.skill import ProceduralMemory

        return ProceduralMemory
    if name == "ProceduresConfig":
        from insika_knowledge.procedures.config import ProceduresConfig

        return ProceduresConfig
    if name == "Stage":
        from insika_knowledge.procedures.telemetry import Stage

        return Stage
    raise AttributeError(name)
