"""Procedural memory: procedures mined from verified agent traces, recalled into later runs.

The entry point is `ProceduralMemory` (``handle_request(body, headers) -> (body, stage)``);
`ProceduresConfig` holds its settings. The procedure model itself is
`insika_knowledge.procedure` (below the store, which reads and writes it). Subpackages, by
concern, each importing only the ones before it:

``trace`` (reading agent traces: wire formats, shell parsing, verify detection, credentials,
canonical templates, steps), ``mining`` (verdicts, pruning, grouping, and how judged runs
change a procedure's counts and triggers), ``recall`` (the trigger index, token counters,
the rendered block, cache-safe injection, the adherence cursor). The runtime sits at the
top: ``modes`` (off / shadow / prod / canary), ``config``, ``telemetry`` (the stage and
kg_* fields), ``capture`` (session buffers), ``skill`` (the orchestration); ``evaluate``,
``bench`` and ``cli`` are tooling on top of it.
"""

from __future__ import annotations

from insika_knowledge.procedures.config import ProceduresConfig
from insika_knowledge.procedures.skill import ProceduralMemory
from insika_knowledge.procedures.telemetry import Stage

__all__ = ["ProceduralMemory", "ProceduresConfig", "Stage"]
