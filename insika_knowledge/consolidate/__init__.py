"""Consolidation: what a sighting of a concept does to the record. The one owner.

Three kinds of repeat sighting:

- **same claim** (deterministic, no model; `claims`): the wording matches closely
  (term-set Jaccard >= `SAME_CLAIM_JACCARD` over description and claim body, after the
  one analyser) and the numbers, units and negations are identical. Counts go up; the
  body is untouched.
- **related** (`merge`): a model merges the two bodies into one statement
  (length-bounded); counts go up as for a same claim.
- **contradicting** (`records.contradict`): the new claim is appended under
  ``## Contradiction`` with its session and time; confidence drops to a flat 0.4; a human
  resolves it by editing. No model, or an unusable model answer, means contradicting.

`decision.decide` holds the whole decision tree (replayed, new, same claim, policy
challenged, open conflict, merged, contradicting, no model, ask the model) and
`decision.apply` the resulting record; `records` holds the record changes and the
confidence rule. Everything here is pure: the write path (`insika_knowledge.learn`)
keeps the transactions, the model calls and the events.
"""

from __future__ import annotations

from insika_knowledge.consolidate.claims import SAME_CLAIM_JACCARD, Claim, analyse, jaccard, same_claim
from insika_knowledge.consolidate.decision import (
    EFFECTS,
    Change,
    Decision,
    Effect,
    Outcome,
    Rule,
    SightingKind,
    apply,
    decide,
)
from insika_knowledge.consolidate.merge import (
    MergeVerdict,
    interpret_merge,
    merge_failed,
    merge_limit,
    usable_merge,
)
from insika_knowledge.consolidate.records import (
    CONFIDENCE_CAP,
    CONFLICT_CONFIDENCE,
    FIRST_SIGHTING_CONFIDENCE,
    SOURCES_KEPT,
    TOO_LONG_NOTE,
    confidence,
    confirm,
    contradict,
    first_sighting,
    merged_sources,
    safe_session_id,
)

__all__ = [
    "CONFIDENCE_CAP",
    "CONFLICT_CONFIDENCE",
    "EFFECTS",
    "FIRST_SIGHTING_CONFIDENCE",
    "SAME_CLAIM_JACCARD",
    "SOURCES_KEPT",
    "TOO_LONG_NOTE",
    "Change",
    "Claim",
    "Decision",
    "Effect",
    "MergeVerdict",
    "Outcome",
    "Rule",
    "SightingKind",
    "analyse",
    "apply",
    "confidence",
    "confirm",
    "contradict",
    "decide",
    "first_sighting",
    "interpret_merge",
    "jaccard",
    "merge_failed",
    "merge_limit",
    "merged_sources",
    "safe_session_id",
    "same_claim",
    "usable_merge",
]
