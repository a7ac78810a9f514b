"""Trust: who supports a proposed concept, and whether a customer alone may teach it.

`assess(candidate_text, concept_type, messages)` returns an `Assessment`: the speakers
whose messages support the claim (`grounding`), whether the claim states or changes a
rule of the business (`rules`), and the verdict: a claim that only the customer supports
and that is rule-shaped is quarantined. `admit` (`gate`) is the one decision the write
path asks of it: learn the sighting, keep it apart, hold it, quarantine it or release it.
"""

from __future__ import annotations

from insika_knowledge.trust.assess import Assessment, assess, unverified_name
from insika_knowledge.trust.gate import Action, Admission, OnRecord, admit, held_because
from insika_knowledge.trust.grounding import Speaker, supporters
from insika_knowledge.trust.rules import rule_markers

__all__ = ["Action", "Admission", "Assessment", "OnRecord", "Speaker", "admit", "assess", "held_because",
           "rule_markers", "supporters", "unverified_name"]
