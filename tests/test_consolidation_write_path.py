"""Every consolidation rule through the real write path.

The same-claim rule by backfilling sessions with a replay file (no recorded merge, so a
sighting that is not the same claim ends as a conflict that keeps both texts); the
merge guard with the fake OpenAI server answering a merge that changes or drops a detail.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import looked_up
from fakellm import FakeLLM

from insika_knowledge.backfill import backfill
from insika_knowledge.config import load_config
from insika_knowledge.events import Recorder
from insika_knowledge.extract.model import InstructorModel
from insika_knowledge.learn import learn_turn
from insika_knowledge.memory import Memory
from insika_knowledge.store import SQLiteStore

AGENT = "loja"
NAME = "regra"


def _session(session_id: str, claim: str) -> dict[str, Any]:
    return {"session_id": session_id, "source": "test", "outcome": None, "messages": [
        {"role": "user", "content": "Uma pergunta."}, *looked_up(claim),
        {"role": "assistant", "content": "Uma resposta."}]}


def _backfill(tmp_path: Path, claims: list[str], merges: dict[str, Any] | None = None,
              ) -> tuple[Memory, list[str], Recorder]:
    """Backfill one session per claim (all proposed under `NAME`); the statuses, in order."""
    sessions = tmp_path / "sessions.jsonl"
    ids = [f"s{i}" for i in range(len(claims))]
    sessions.write_text("".join(json.dumps(_session(i, c)) + "\n" for i, c in zip(ids, claims, strict=True)),
                        encoding="utf-8")
    replay = tmp_path / "replay.json"
    replay.write_text(json.dumps({
        "extract": {i: [{"name": NAME, "description": c, "type": "policy", "body": c}]
                    for i, c in zip(ids, claims, strict=True)},
        "consolidate": merges or {},
    }), encoding="utf-8")
    memory = Memory(tmp_path / "data")
    recorder = Recorder()
    memory.events.subscribe(recorder)
    summary = backfill(memory, AGENT, load_config({"model": f"replay:{replay}"}), sessions)
    outcomes = []
    for status in summary.statuses:
        assert status.status == "done", status
        kinds = [k for k in ("learned", "confirmed", "merged", "conflicts") if getattr(status, k)]
        outcomes.append(kinds[0] if kinds else "none")
    return memory, outcomes, recorder


@pytest.mark.parametrize(
    ("kind", "first", "second"),
    [
        ("qualifier", "Delivery fee is R$ 20.", "Delivery fee is R$ 20 per address."),
        ("qualifier", "5% off for students.", "5% off for first-year students."),
        ("qualifier", "Free shipping on all products.", "Free shipping on all products except appliances."),
        ("unit_kind", "Refunds take 7 working days.", "Refunds take 7 days."),
        ("time_of_day", "The store opens at 9 am.", "The store opens at 9 pm."),
        ("change_verb", "Platinum includes lounge access.", "Lounge access was removed from Platinum."),
        ("change_verb", "Same-day delivery is offered.", "Same-day delivery was discontinued."),
        ("change_verb", "A loja aceita pagamento por PIX.", "A loja deixou de aceitar pagamento por PIX."),
        ("number_words", "The discount lasts one hour.", "The discount lasts five hours."),
        ("number_words", "A troca leva três dias.", "A troca leva seis dias."),
        ("antonym", "The price match uses the lowest price.", "The price match uses the highest price."),
        ("antonym", "Returns with receipt get cash back.", "Returns without receipt get cash back."),
        ("antonym", "Voos nacionais incluem refeição.", "Voos internacionais incluem refeição."),
        ("negation", "Basic economy flights can be modified.", "Basic economy flights cannot be modified."),
    ],
)
def test_a_changed_detail_is_kept_as_a_conflict_never_confirmed(
    tmp_path: Path, kind: str, first: str, second: str
) -> None:
    memory, outcomes, recorder = _backfill(tmp_path, [first, second])
    try:
        assert outcomes == ["learned", "conflicts"], kind
        concept = memory.store().get(AGENT, NAME).concept
        assert concept.in_conflict and concept.occurrences == 1
        assert concept.body.startswith(first) and second in concept.body  # the claim is stored
        assert recorder.named("knowledge_conflict") == [
            {"name": NAME, "agent": AGENT, "why": "the merge model failed (model_empty)"}]
    finally:
        memory.close()


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("Customers can cancel online or by e-mail.", "customers can cancel online or by email"),
        ("Silver members get 2 free checked bags.", "SILVER members get two free checked bags!"),
        ("A devolução é grátis no primeiro pedido.", "A devolução é gratuita no primeiro pedido"),
        ("Per passenger, travel insurance costs 30 dollars.", "Travel insurance costs 30 dollars per passenger."),
        ("O pedido pendente pode ser cancelado.", "Os pedidos pendentes podem ser cancelados."),
    ],
)
def test_a_reworded_restatement_is_confirmed_without_a_model(tmp_path: Path, first: str, second: str) -> None:
    memory, outcomes, _ = _backfill(tmp_path, [first, second])
    try:
        assert outcomes == ["learned", "confirmed"]
        concept = memory.store().get(AGENT, NAME).concept
        assert (concept.occurrences, concept.body, concept.in_conflict) == (2, first, False)
    finally:
        memory.close()


def test_a_recorded_merge_that_keeps_every_detail_is_merged(tmp_path: Path) -> None:
    merged = "Exchanges are free, and the new item ships within 2 days."
    memory, outcomes, _ = _backfill(
        tmp_path, ["Exchanges are free.", "Exchanges are free; the new item ships within 2 days."],
        {"s1": {NAME: {"verdict": "related", "body": merged}}})
    try:
        assert outcomes == ["learned", "merged"]
        assert memory.store().get(AGENT, NAME).concept.body == merged
    finally:
        memory.close()


# ----------------------------------------------------------------------------- the merge guard

FIRST = {"name": NAME, "description": "Refunds within 7 business days.", "type": "policy",
         "body": "Refunds reach the card within 7 business days."}
SECOND = {"name": NAME, "description": "Pix refunds are instant.", "type": "policy",
          "body": "Pix refunds are not delayed: they arrive within 2 hours."}
TURN = [{"role": "user", "content": "Quanto tempo leva o reembolso?"},
        *looked_up(FIRST["body"], SECOND["body"])]


def _run(store: SQLiteStore, fake: FakeLLM, session: str):  # noqa: ANN202
    model = InstructorModel("openai/fake-model", base_url=fake.base_url, api_key="k", timeout_s=5.0)
    return learn_turn(store, AGENT, load_config({}), model, session_id=session, turn_id="t",
                      messages=TURN)


@pytest.mark.parametrize(
    ("merged", "outcome"),
    [
        ("Refunds reach the card within 7 business days; Pix refunds are not delayed and arrive "
         "within 2 hours.", "merged"),
        ("Refunds reach the card within seven business days; Pix refunds are never delayed: "
         "within two hours.", "merged"),
        ("Refunds reach the card within 5 business days; Pix refunds are not delayed: within 2 hours.",
         "conflict"),  # a number changed
        ("Refunds reach the card within 7 days; Pix refunds are not delayed: within 2 hours.",
         "conflict"),  # a unit kind dropped
        ("Refunds reach the card within 7 business days; Pix refunds are not delayed.",
         "conflict"),  # a number dropped
        ("Refunds reach the card within 7 business days; Pix refunds arrive within 2 hours.",
         "conflict"),  # a negation dropped
    ],
)
def test_the_merge_guard_refuses_a_merge_that_changes_a_detail(
    store: SQLiteStore, merged: str, outcome: str
) -> None:
    answer = json.dumps({"verdict": "related", "body": merged})
    with FakeLLM([json.dumps([FIRST]), json.dumps([SECOND]), answer]) as fake:
        _run(store, fake, "s1")
        report = _run(store, fake, "s2")
        assert len(fake.requests) == 3  # two extractions and the merge call
    assert report.results == [(NAME, outcome)]
    concept = store.get(AGENT, NAME).concept
    if outcome == "merged":
        assert concept.body == merged and not concept.in_conflict
    else:
        assert concept.in_conflict and concept.body.startswith(FIRST["body"])
        assert SECOND["body"] in concept.body and merged not in concept.body
        assert store.versions(AGENT, NAME)[0].reason == "conflict"
