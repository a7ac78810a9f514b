"""Consolidation: what a sighting of a concept does to the record. The one owner.

Three kinds of repeat sighting:

- **same claim** (deterministic, no model, conservative; `claims`): after the one
  analyser, the restatement adds, drops or changes nothing that carries meaning: the same
  content terms, numbers with their units and unit kinds, negations (change verbs
  included) and direction/scope words. Counts go up; the body is untouched.
- **related** (`merge`): a model merges the two bodies into one statement
  (length-bounded, and keeping every number, unit and negation of both: the merge
  guard); counts go up as for a same claim.
- **contradicting** (`records.contradict`): the new claim is recorded under
  ``## Contradiction``, one entry per distinct claim naming its sessions and time
  (`entries`); confidence drops to a flat 0.4; a human resolves it by editing. A claim the
  record has no room for is held for review instead (`records.keeps`). No model, or an
  unusable model answer, means contradicting.

One idea, one name (`naming`): a candidate proposed under a name no concept has is
recorded under the concept that states the same claim (its name kept as an alias), held
as a possible duplicate when a concept only closely matches it, or learned as new.

`decision.decide` holds the whole decision tree (replayed, new, same claim, policy
challenged, open conflict, merged, contradicting, no model, ask the model) and
`decision.apply` the resulting record; `records` holds the record changes and the
confidence rule. Everything here is pure: the write path (`insika_knowledge.learn`)
keeps the transactions, the model calls and the events.
"""

from __future__ import annotations

from insika_knowledge.consolidate.claims import (
    CLOSE_MATCH,
    CLOSE_MATCH_SHARED,
    Assertion,
    Claim,
    analyse,
    assertion,
    close_match,
    jaccard,
    same_claim,
    same_claims,
    similarity,
)
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
from insika_knowledge.consolidate.entries import (
    NO_ROOM_NOTE,
    SESSIONS_PER_ENTRY,
    Entry,
    entries,
)
from insika_knowledge.consolidate.merge import (
    MergeVerdict,
    interpret_merge,
    keeps_details,
    merge_failed,
    merge_limit,
    usable_merge,
)
from insika_knowledge.consolidate.naming import (
    MATCHES_SEARCHED,
    SAME_CLAIM_MATCHES,
    NameRule,
    Naming,
    disputes,
    name_sighting,
)
from insika_knowledge.consolidate.records import (
    CONFIDENCE_CAP,
    CONFLICT_CONFIDENCE,
    FIRST_SIGHTING_CONFIDENCE,
    SOURCES_KEPT,
    confidence,
    confirm,
    contradict,
    first_sighting,
    keeps,
    merged_sources,
    safe_session_id,
)

__all__ = [
    "CLOSE_MATCH",
    "CLOSE_MATCH_SHARED",
    "CONFIDENCE_CAP",
    "CONFLICT_CONFIDENCE",
    "EFFECTS",
    "FIRST_SIGHTING_CONFIDENCE",
    "MATCHES_SEARCHED",
    "NO_ROOM_NOTE",
    "SESSIONS_PER_ENTRY",
    "SOURCES_KEPT",
    "Assertion",
    "Change",
    "Claim",
    "Decision",
    "Effect",
    "Entry",
    "MergeVerdict",
    "NameRule",
    "Naming",
    "Outcome",
    "Rule",
    "SAME_CLAIM_MATCHES",
    "SightingKind",
    "analyse",
    "apply",
    "assertion",
    "close_match",
    "confidence",
    "confirm",
    "contradict",
    "decide",
    "disputes",
    "entries",
    "first_sighting",
    "interpret_merge",
    "jaccard",
    "keeps",
    "keeps_details",
    "merge_failed",
    "merge_limit",
    "merged_sources",
    "name_sighting",
    "safe_session_id",
    "same_claim",
    "same_claims",
    "similarity",
    "usable_merge",
]
