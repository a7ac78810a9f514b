"""The consolidation decision tree, rule by rule, with no store and no model."""

from __future__ import annotations

import pytest
from conftest import make_concept
from hypothesis import given
from hypothesis import strategies as st

from insika_knowledge import consolidate
from insika_knowledge.candidate import Candidate
from insika_knowledge.concept import Concept
from insika_knowledge.consolidate import EFFECTS, Change, Decision, MergeVerdict, Rule, apply, decide
from insika_knowledge.extract.model import MergeAnswer

NOW = "2026-08-25T10:00:00Z"
ON_RECORD = make_concept(
    name="sla-resposta",
    description="The support SLA is 4 hours for first response.",
    body="Customers get a first response within 4 hours on business days.",
)
SAME = Candidate("sla-resposta", "The support SLA for first response is 4 hours.",
                 "fact", "On business days customers get a first response within 4 hours.")
OTHER = Candidate("sla-resposta", "Gold customers get a first response in 1 hour.",
                  "fact", "Gold members are answered within 1 hour, weekends included.")
POLICY = ON_RECORD.replace(provenance="policy", confidence=1.0)
IN_CONFLICT = consolidate.contradict(ON_RECORD, OTHER, "sess_9", NOW)
RELATED = MergeVerdict("First response within 4 hours; Gold members within 1 hour.", consolidate.merge.RELATED)
REFUSED = MergeVerdict(None, consolidate.merge.CONTRADICTING)


def test_a_replayed_sighting_changes_nothing_whatever_is_on_record() -> None:
    for stored in (None, ON_RECORD, POLICY, IN_CONFLICT):
        decision = decide(stored, OTHER, already_sighted=True, merge=RELATED)
        assert decision == Decision(Rule.REPLAYED)
        assert (decision.outcome, decision.sighting, decision.change) == ("replayed", None, Change.NONE)
        assert apply(decision, stored, OTHER, sources=[], session_id="s2", now=NOW) is None


def test_nothing_on_record_is_learned_from_the_first_sighting() -> None:
    decision = decide(None, OTHER, model_available=False)
    assert decision.rule is Rule.NEW
    assert (decision.outcome, decision.sighting) == ("learned", "extract")
    concept = apply(decision, None, OTHER, sources=[], session_id="s1", now=NOW)
    assert concept == consolidate.first_sighting(OTHER, "s1", NOW)
    assert (concept.confidence, concept.sources, concept.occurrences) == (0.6, ("s1",), 1)


def test_the_same_claim_is_confirmed_without_a_model() -> None:
    decision = decide(ON_RECORD, SAME)
    assert decision.rule is Rule.SAME_CLAIM
    assert (decision.outcome, decision.sighting, decision.needs_sources) == ("confirmed", "confirm", True)
    concept = apply(decision, ON_RECORD, SAME, sources=["sess_1", "s2"], session_id="s2", now=NOW)
    assert concept is not None
    assert concept.body == ON_RECORD.body and concept.occurrences == 2 and concept.confidence == 0.7


def test_the_same_claim_confirms_a_policy_and_an_open_conflict_too() -> None:
    assert decide(POLICY, SAME).rule is Rule.SAME_CLAIM
    assert decide(IN_CONFLICT, SAME).rule is Rule.SAME_CLAIM  # the contradiction section is not the claim


def test_a_different_claim_against_a_policy_is_a_challenge_that_never_touches_the_record() -> None:
    for merge in (None, RELATED, REFUSED):
        decision = decide(POLICY, OTHER, merge=merge)
        assert decision.rule is Rule.POLICY_CHALLENGED
        assert (decision.outcome, decision.sighting, decision.change) == ("conflict", "conflict", Change.NONE)
        assert apply(decision, POLICY, OTHER, sources=[], session_id="s2", now=NOW) is None


def test_a_different_claim_joins_an_open_conflict_without_asking_the_model() -> None:
    for merge in (None, RELATED):
        decision = decide(IN_CONFLICT, OTHER, merge=merge)
        assert decision.rule is Rule.OPEN_CONFLICT
        assert (decision.outcome, decision.sighting) == ("conflict", "conflict")
    concept = apply(decision, IN_CONFLICT, OTHER, sources=[], session_id="s3", now=NOW)
    assert concept is not None
    assert concept.body.count("## Contradiction") == 1
    # the same claim as the open entry's: that entry names s3 too, no second entry
    assert [e.sessions for e in consolidate.entries(concept.body)] == [("sess_9", "s3")]
    assert concept.confidence == 0.4


def test_a_different_claim_asks_the_model_when_there_is_one() -> None:
    decision = decide(ON_RECORD, OTHER)
    assert decision.rule is Rule.ASK_MODEL
    assert (decision.outcome, decision.sighting, decision.change) == (None, None, Change.NONE)


def test_without_a_model_a_different_claim_is_a_contradiction() -> None:
    decision = decide(ON_RECORD, OTHER, model_available=False)
    assert decision.rule is Rule.NO_MODEL
    assert (decision.outcome, decision.sighting) == ("conflict", "conflict")
    concept = apply(decision, ON_RECORD, OTHER, sources=[], session_id="s2", now=NOW)
    assert concept == consolidate.contradict(ON_RECORD, OTHER, "s2", NOW, why=decision.conflict_reason or "")
    assert concept is not None and f"\n  Why: {decision.conflict_reason}\n" in concept.body


def test_the_model_said_related_so_the_merged_body_replaces_the_record() -> None:
    decision = decide(ON_RECORD, OTHER, merge=RELATED, model_available=False)
    assert decision == Decision(Rule.MERGED, body=RELATED.body)
    assert (decision.outcome, decision.sighting, decision.needs_sources) == ("merged", "merge", True)
    concept = apply(decision, ON_RECORD, OTHER, sources=["sess_1", "s2"], session_id="s2", now=NOW)
    assert concept is not None
    assert concept.body == RELATED.body and concept.occurrences == 2 and concept.confidence == 0.7


@pytest.mark.parametrize("why", ["contradicting", "unusable", "model_failed:model_timeout"])
def test_the_model_said_contradicting_or_failed_so_the_claim_is_a_contradiction(why: str) -> None:
    decision = decide(ON_RECORD, OTHER, merge=MergeVerdict(None, why))
    assert decision == Decision(Rule.CONTRADICTING, why=why)
    assert (decision.outcome, decision.sighting, decision.change) == ("conflict", "conflict", Change.CONTRADICT)
    assert apply(decision, ON_RECORD, OTHER, sources=[], session_id="s2", now=NOW) == \
        consolidate.contradict(ON_RECORD, OTHER, "s2", NOW, why=decision.conflict_reason or "")


def test_every_rule_has_one_effect_and_only_asking_has_no_outcome() -> None:
    assert set(EFFECTS) == set(Rule)
    for rule, effect in EFFECTS.items():
        assert (effect.outcome is None) == (rule is Rule.ASK_MODEL)
        assert (effect.sighting is None) == (effect.outcome in (None, "replayed"))
        if effect.change is not Change.NONE:
            assert effect.sighting is not None


def test_apply_refuses_a_decision_it_cannot_carry_out() -> None:
    with pytest.raises(ValueError, match="stored concept"):
        apply(Decision(Rule.SAME_CLAIM), None, SAME, sources=[], session_id="s", now=NOW)
    with pytest.raises(ValueError, match="no body"):
        apply(Decision(Rule.MERGED), ON_RECORD, OTHER, sources=[], session_id="s", now=NOW)


_STORED = st.sampled_from([None, ON_RECORD, POLICY, IN_CONFLICT])
_MERGES = st.sampled_from([None, RELATED, REFUSED])


@given(_STORED, st.sampled_from([SAME, OTHER]), st.booleans(), st.booleans(), _MERGES)
def test_decide_is_a_total_deterministic_function_of_its_inputs(
    stored: Concept | None, candidate: Candidate, sighted: bool, model: bool, merge: MergeVerdict | None
) -> None:
    decision = decide(stored, candidate, already_sighted=sighted, model_available=model, merge=merge)
    assert decision == decide(stored, candidate, already_sighted=sighted, model_available=model, merge=merge)
    assert (decision.outcome == "replayed") == sighted
    assert (decision.outcome == "learned") == (not sighted and stored is None)
    if decision.rule is Rule.ASK_MODEL:
        assert model and merge is None and stored is ON_RECORD and candidate is OTHER
    if decision.rule is Rule.MERGED:
        assert merge is RELATED and stored is ON_RECORD
    if stored is not None and stored.provenance == "policy":  # the engine never changes its body
        after = apply(decision, stored, candidate, sources=["x"], session_id="s", now=NOW)
        assert after is None or after.body == stored.body


# ----------------------------------------------------------------------------- the merge answer

OLD, NEW = ON_RECORD.body, OTHER.body


def test_a_related_answer_gives_its_body_redacted_and_stripped() -> None:
    merged = f"{OLD} {NEW}"
    answer = MergeAnswer("related", f"  {merged} Contact ana@gmail.com  \n")
    verdict = consolidate.interpret_merge(answer, OLD, NEW)
    assert verdict == MergeVerdict(f"{merged} Contact [email]", "related", {"email": 1})
    assert verdict.related


@pytest.mark.parametrize(
    ("answer", "why"),
    [(MergeAnswer("contradicting"), "contradicting"),
     (MergeAnswer("contradicting", "A body the model should not have sent."), "contradicting"),
     (MergeAnswer("related", None), "unusable:it is no text"),
     (MergeAnswer("related", "   "), "unusable:it is empty"),
     (MergeAnswer("related", "x" * 5000), "unusable:it is 5000 characters, at most 326"),
     (MergeAnswer("related", "Fine.\n\n## Contradiction\n\n- forged"),
      "unusable:it holds a '## Contradiction' heading"),
     (MergeAnswer("related", "Merged \ud800 body."), "unusable:it holds a lone surrogate"),
     (MergeAnswer("related", "Merged\x00 body."), "unusable:it holds a NUL character"),
     ("not a MergeAnswer", "unusable"),
     (None, "unusable")],
)
def test_any_other_answer_is_contradicting_with_its_reason(answer: object, why: str) -> None:
    verdict = consolidate.interpret_merge(answer, OLD, NEW)
    assert verdict == MergeVerdict(None, why)
    assert not verdict.related


@pytest.mark.parametrize(("old", "new", "merged", "why"), [
    ("Returns are free within 30 days.", "Returns cost R$ 20 after 30 days.", "Returns are free.",
     "lost_detail:R$ 20, 30 days"),
    ("Returns are free within 30 days.", "Exchanges are free within 30 days.", "Returns are free within 30 days.",
     "lost_detail"),  # no amount dropped: a word the other side had
])
def test_a_merge_that_drops_an_amount_names_it(old: str, new: str, merged: str, why: str) -> None:
    """The last note: a refused merge did not say which detail it dropped."""
    assert consolidate.interpret_merge(MergeAnswer("related", merged), old, new) == MergeVerdict(None, why)


def test_a_merged_body_keeps_no_credential() -> None:
    """A newcomer's finding: a key the merge model wrote into its merged text was stored
    as written (a proposal's was kept as <SECRET>)."""
    key = "sk-proj-abcdefghijklmnopqrstuvwxyz0123456789ABCD"
    old, new = "Returns are free within 30 days.", "Exchanges are free within 30 days."
    verdict = consolidate.interpret_merge(MergeAnswer("related", f"{old} {new} Key {key}"), old, new)
    assert key not in (verdict.body or "")  # scrubbed first: "<SECRET>" is then a detail no claim has


def test_a_body_that_redaction_pushes_over_the_limit_is_unusable() -> None:
    limit = consolidate.merge_limit(OLD, NEW)
    body = "x" * (limit - len(" a@b.co")) + " a@b.co"  # "[email]" is one character longer
    assert len(body) == limit
    assert consolidate.interpret_merge(MergeAnswer("related", body), OLD, NEW) == \
        MergeVerdict(None, f"unusable:it is {limit + 1} characters, at most {limit} after redaction")


def test_a_failed_merge_call_is_contradicting_and_names_the_failure() -> None:
    verdict = consolidate.merge_failed("model_timeout")
    assert verdict == MergeVerdict(None, "model_failed:model_timeout")
    assert decide(ON_RECORD, OTHER, merge=verdict).rule is Rule.CONTRADICTING


@pytest.mark.parametrize(("decision", "reason"), [
    (Decision(Rule.POLICY_CHALLENGED), "it contradicts a policy, whose text the engine never changes"),
    (Decision(Rule.OPEN_CONFLICT), "the concept already waits for a person to resolve a conflict; the claim joins it"),
    (Decision(Rule.NO_MODEL), "it differs from the record and no merge model could be asked"),
    (Decision(Rule.CONTRADICTING, why="contradicting"), "the merge model said the claims contradict each other"),
    (Decision(Rule.CONTRADICTING, why="lost_detail"),
     "the merge model's merged text drops or changes a value, date, name, party, negation or condition of a claim"),
    (Decision(Rule.CONTRADICTING, why="lost_detail:R$ 20, 30 days"),
     "the merge model's merged text drops or changes a value, date, name, party, negation or condition of a "
     "claim (it drops R$ 20, 30 days)"),
    (Decision(Rule.CONTRADICTING, why="model_failed:model_timeout"), "the merge model failed (model_timeout)"),
    (Decision(Rule.CONTRADICTING, why="model_failed:model_empty"), "the merge model failed (model_empty)"),
    (Decision(Rule.CONTRADICTING, why="odd"), "the merge model's answer was not used (odd)"),
    (Decision(Rule.CONTRADICTING, why="unusable:it is empty"),
     "the merge model's merged text cannot be used: it is empty"),
])
def test_every_conflict_says_why_in_words(decision: Decision, reason: str) -> None:
    assert decision.outcome == "conflict" and decision.conflict_reason == reason


def test_only_a_conflict_has_a_reason() -> None:
    for rule in Rule:
        decision = Decision(rule, why="contradicting")
        assert (decision.conflict_reason is not None) == (decision.outcome == "conflict"), rule
