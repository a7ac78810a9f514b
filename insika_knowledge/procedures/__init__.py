"""Procedural memory: procedures mined from verified agent traces, recalled into later runs.

The entry point is `ProceduralMemory` (``handle_request(body, headers) -> (body, stage)``);
`ProceduresConfig` holds its settings. The procedure model itself is
`insika_knowledge.procedure` (below the store, which reads and writes it). Subpackages, by
concern, each importing only the ones before it:

``trace`` (reading agent traces: messages as events, shell parsing, verify detection,
canonical templates, steps), ``mining`` (verdicts, pruning, grouping, and how judged runs
change a procedure's counts and triggers), ``recall`` (the trigger index, token counters,
the rendered block and its shape, the adherence cursor). Reading request bodies and
headers, and placing a block without breaking the prompt cache, are
`insika_knowledge.wire`'s. The runtime sits at the
top: ``modes`` (off / shadow / prod / canary), ``config``, ``telemetry`` (the stage and
kg_* fields), ``capture`` (session buffers), ``skill`` (the orchestration); ``evaluate``,
``bench`` and ``cli`` are tooling on top of it.

What an edge may need besides the entry point is exported here, and an edge imports
nothing else of the package: the modes that never change a body (`OFF`, `SHADOW`), a
stage's ``failed`` action (`FAILED`) and its reason when a lock stayed busy
(`BUSY_DEFERRED`), the procedure block's shape (`PROCEDURE_BLOCK`, for
`insika_knowledge.wire.placement`), and the skill's name (`SKILL_NAME`).
"""

from __future__ import annotations

from insika_knowledge.procedures.config import ProceduresConfig
from insika_knowledge.procedures.modes import OFF, SHADOW
from insika_knowledge.procedures.recall.inject import BLOCK as PROCEDURE_BLOCK
from insika_knowledge.procedures.skill import BUSY_DEFERRED, ProceduralMemory
from insika_knowledge.procedures.telemetry import FAILED, Stage
from insika_knowledge.procedures.telemetry import STAGE_NAME as SKILL_NAME

__all__ = [
    "BUSY_DEFERRED", "FAILED", "OFF", "PROCEDURE_BLOCK", "SHADOW", "SKILL_NAME",
    "ProceduralMemory", "ProceduresConfig", "Stage",
]
