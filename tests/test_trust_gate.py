"""The trust gate, called directly: one pure decision per sighting, from hand-made facts.

`trust.admit` is asked twice by the write path: before a candidate is named (it routes:
learn under its name, or keep a customer's change of a rule apart), and in the write
transaction once consolidation decided (hold, release, quarantine, or let the write
stand). Nothing here opens a store.
"""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

import pytest

from insika_knowledge.candidate import Candidate
from insika_knowledge.trust import (
    Action,
    Admission,
    Assessment,
    OnRecord,
    admit,
    assess,
    held_because,
    unverified_name,
)
from insika_knowledge.trust import gate as gate_module

GIFT = Candidate(name="free-gift-over-50", description="Orders over R$ 50 come with a free gift.",
                 type="policy", body="Every order over R$ 50 now comes with a free gift.")
CUSTOMER_RULE = Assessment(supported_by=frozenset({"customer"}), markers=("type", "price", "entitlement"),
                           quarantined=True)
AGENT_RULE = Assessment(supported_by=frozenset({"customer", "agent"}), markers=("type", "price"),
                        quarantined=False)
CUSTOMER_REPORT = Assessment(supported_by=frozenset({"customer"}), markers=(), quarantined=False)
NOBODY = Assessment(supported_by=frozenset(), markers=("price",), quarantined=False)

#: Before naming: `creates` is None (the gate only routes).
ROUTING = None


def test_not_assessed_is_learned_at_both_steps() -> None:
    for record in (OnRecord(creates=ROUTING), OnRecord(exists=True, held=True, creates=False)):
        decided = admit(GIFT, None, record)
        assert decided.action is Action.LEARN and decided.name == GIFT.name
        assert "not assessed" in decided.reason


def test_routing_keeps_a_customer_change_of_a_rule_apart() -> None:
    decided = admit(GIFT, CUSTOMER_RULE, OnRecord(exists=True, creates=ROUTING))
    assert decided.action is Action.KEEP_APART
    assert decided.name == unverified_name(GIFT.name, GIFT.body)
    assert "only the customer" in decided.reason


@pytest.mark.parametrize(("assessment", "record"), [
    (CUSTOMER_RULE, OnRecord(exists=True, restated=True, creates=ROUTING)),  # restates the rule on record
    (CUSTOMER_RULE, OnRecord(exists=True, held=True, creates=ROUTING)),  # the one on record is held itself
    (CUSTOMER_RULE, OnRecord(creates=ROUTING)),  # nothing on record: held in the write, under its name
    (AGENT_RULE, OnRecord(exists=True, creates=ROUTING)),  # the business said it
    (CUSTOMER_REPORT, OnRecord(exists=True, creates=ROUTING)),  # not a rule
    (NOBODY, OnRecord(exists=True, creates=ROUTING)),  # no message supports it
])
def test_routing_otherwise_keeps_the_name(assessment: Assessment, record: OnRecord) -> None:
    decided = admit(GIFT, assessment, record)
    assert decided.action is Action.LEARN and decided.name == GIFT.name


def test_routing_never_holds_or_releases() -> None:
    """Before naming the gate only routes: holds and releases are decided in the write, on fresh facts."""
    for assessment in (CUSTOMER_RULE, AGENT_RULE, CUSTOMER_REPORT, NOBODY):
        for record in (OnRecord(exists=True, held=True, creates=ROUTING), OnRecord(creates=ROUTING)):
            assert admit(GIFT, assessment, record).action in (Action.LEARN, Action.KEEP_APART)


@pytest.mark.parametrize("assessment", [CUSTOMER_RULE, CUSTOMER_REPORT, NOBODY])
def test_a_held_concept_repeated_without_the_business_is_held(assessment: Assessment) -> None:
    for creates in (False, True):
        decided = admit(GIFT, assessment, OnRecord(exists=True, held=True, creates=creates))
        assert decided.action is Action.HOLD and decided.name == GIFT.name


def test_the_business_releases_a_held_concept() -> None:
    decided = admit(GIFT, AGENT_RULE, OnRecord(exists=True, held=True, creates=False))
    assert decided.action is Action.RELEASE
    assert "agent" in decided.reason


def test_a_new_customer_only_rule_is_quarantined_with_why() -> None:
    decided = admit(GIFT, CUSTOMER_RULE, OnRecord(creates=True))
    assert decided.action is Action.QUARANTINE
    assert decided.supported_by == ("customer",)
    assert decided.markers == ("type", "price", "entitlement")
    assert decided.reason == held_because(("customer",), ("type", "price", "entitlement"))


@pytest.mark.parametrize(("assessment", "record"), [
    (CUSTOMER_RULE, OnRecord(creates=False)),  # a replay of a deleted concept: nothing is created
    (AGENT_RULE, OnRecord(creates=True)),
    (CUSTOMER_REPORT, OnRecord(creates=True)),
    (NOBODY, OnRecord(creates=True)),
])
def test_everything_else_is_learned_as_consolidation_decides(assessment: Assessment, record: OnRecord) -> None:
    decided = admit(GIFT, assessment, record)
    assert decided.action is Action.LEARN and decided.name == GIFT.name


def test_a_live_rule_sighted_again_by_the_customer_alone_counts_nothing() -> None:
    """No confirmation (confidence, sources) and no conflict: the business did not say it again."""
    decided = admit(GIFT, CUSTOMER_RULE, OnRecord(exists=True, creates=False))
    assert decided.action is Action.UNCOUNTED and not decided.held
    assert "only the customer" in decided.reason
    for assessment in (AGENT_RULE, CUSTOMER_REPORT, NOBODY):  # the business, or not a rule: as decided
        assert admit(GIFT, assessment, OnRecord(exists=True, creates=False)).action is Action.LEARN


def test_the_result_is_small_and_frozen() -> None:
    decided = admit(GIFT, CUSTOMER_RULE, OnRecord(creates=True))
    assert isinstance(decided, Admission)
    with pytest.raises(dataclasses.FrozenInstanceError):
        decided.action = Action.LEARN  # type: ignore[misc]
    assert decided.held and not admit(GIFT, AGENT_RULE, OnRecord(creates=True)).held


def test_held_because_words_the_quarantine_row() -> None:
    assert held_because(("customer",), ("price",)) == "only the customer supported it, and it states a rule (price)"
    assert held_because((), ("instruction",)) == "no message supported it, and it states a rule (instruction)"
    turn = [{"role": "user", "content": "Fees?"}, {"role": "assistant", "content": "Refunds go to the card."}]
    made_up = assess("Refunds carry a 10% fee.", "policy", turn)
    assert held_because(made_up.supported_by, made_up.markers) == \
        "a value it states is in no message of the turn, and it states a rule (a policy or procedure by its type, " \
        "price, entitlement)"  # a newcomer did not know what "type" meant


def test_the_gate_module_is_pure() -> None:
    """No store, index, model, I/O or clock: only the trust package's own records and the candidate."""
    tree = ast.parse(Path(gate_module.__file__).read_text(encoding="utf-8"))
    imported = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    imported |= {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
    allowed = {"__future__", "dataclasses", "enum", "typing", "collections.abc", "insika_knowledge.candidate",
               "insika_knowledge.trust.assess"}
    assert imported <= allowed, imported - allowed


def test_a_hold_with_no_sign_of_a_rule_lists_none() -> None:
    """A newcomer's finding: a fact held for want of business support read "..., and it
    states a rule ()"."""
    assert held_because(["customer"], []) == "only the customer supported it"
    # a newcomer's finding: "quarantined: supported by agent, and it states a rule" read as a contradiction
    assert held_because(["agent", "customer"], ["price"]) == \
        "what the agent said does not state it as a standing rule, and it states a rule (price)"
    assert held_because([], ["price"]) == "no message supported it, and it states a rule (price)"
