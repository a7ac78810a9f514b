"""The write path through the real instructor + OpenAI client, against a local fake server."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest
from conftest import Clock
from fakellm import FakeLLM, Hang, Status
from hypothesis import given, settings
from hypothesis import strategies as st

from insika_knowledge.config import load_config
from insika_knowledge.events import EventBus, Recorder
from insika_knowledge.extract.candidates import Candidate
from insika_knowledge.extract.model import InstructorModel
from insika_knowledge.learn import learn_turn, sight
from insika_knowledge.store import SQLiteStore

AGENT = "store-support"
CONFIG = load_config({"types": ["fact", "policy", "procedure", "objection"], "prompt": "Shipping by CEP."})
TURN = [
    {"role": "user", "content": "Vocês entregam em Campinas? Meu e-mail é ana@gmail.com"},
    {"role": "assistant", "content": "Sim, CEPs 13000-13999 saem do CD de Campinas em 1-2 dias úteis."},
]
GOOD = {"name": "CEP 13 Campinas", "description": "CEPs 13000-13999 ship from Campinas in 1-2 days.",
        "type": "fact", "body": "CEP range 13000-13999 ships from the Campinas DC in 1-2 business days."}


def answer(*items: object) -> str:
    return json.dumps(list(items))


@pytest.fixture
def bus() -> tuple[EventBus, Recorder]:
    events, recorder = EventBus(), Recorder()
    events.subscribe(recorder)
    return events, recorder


def model_for(fake: FakeLLM, timeout_s: float = 5.0) -> InstructorModel:
    return InstructorModel("openai/fake-model", base_url=fake.base_url, api_key="k", timeout_s=timeout_s)


def run(store: SQLiteStore, fake: FakeLLM, session: str = "sess_1", turn: str = "t1", events=None, **kw):
    return learn_turn(store, AGENT, CONFIG, model_for(fake, **kw), session_id=session, turn_id=turn,
                      messages=TURN, events=events)


def test_good_candidates_survive_bad_ones_and_drops_are_counted(store, bus) -> None:
    events, recorder = bus
    items = [
        GOOD,
        {**GOOD, "name": "x1", "confidence": 0.99},
        {**GOOD, "name": "x2", "provenance": "policy"},
        {**GOOD, "name": "x3", "priority": "high"},
        {**GOOD, "name": "x4", "type": "entity"},
        {**GOOD, "name": "x5", "type": "rumour"},
        {**GOOD, "name": "x6", "body": "   "},
        {"name": "x7", "description": "no body"},
        "not an object",
        {**GOOD, "name": "policy frete", "type": "policy",
         "body": "Frete grátis acima de R$ 199. Contato: ana@gmail.com, (11) 98765-4321."},
    ]
    with FakeLLM([answer(*items)]) as fake:
        report = run(store, fake, events=events)
    assert report.outcome == "ok"
    assert report.proposed == 10
    assert dict(report.dropped) == {"stamped_key": 2, "unknown_key": 1, "type_not_allowed": 1,
                                    "invalid": 2, "empty": 1, "not_object": 1}
    assert [n for n, _ in report.results] == ["cep-13-campinas", "policy-frete"]
    stored = store.get(AGENT, "cep-13-campinas").concept
    assert (stored.provenance, stored.confidence, stored.sources, stored.occurrences) == \
        ("observed", 0.6, ("sess_1",), 1)
    assert stored.created_at == stored.updated_at
    body = store.get(AGENT, "policy-frete").concept.body
    assert "ana@gmail.com" not in body and "98765" not in body
    assert "[email]" in body and "[phone]" in body and "R$ 199" in body
    record = store.extraction(AGENT, "sess_1", "t1")
    assert record.outcome == "ok" and record.dropped == dict(report.dropped)
    extracted = recorder.named("knowledge_extracted")
    assert extracted[0]["dropped"] == dict(report.dropped)
    learned = recorder.named("knowledge_learned")
    assert learned == [{"name": "cep-13-campinas", "type": "fact", "agent": AGENT},
                       {"name": "policy-frete", "type": "policy", "agent": AGENT}]


def test_the_prompt_carries_the_types_the_pack_prompt_and_the_transcript(store) -> None:
    with FakeLLM([answer()]) as fake:
        run(store, fake)
        sent = " ".join(m["content"] for m in fake.requests[0]["messages"])
    assert '"fact", "policy", "procedure", "objection"' in sent
    assert "Shipping by CEP." in sent
    assert "Vocês entregam em Campinas?" in sent


@pytest.mark.parametrize(
    ("reply", "outcome"),
    [
        (Status(429, "slow down"), "model_rate_limited"),
        (Status(500, "boom"), "model_error"),
        ("this is not json", "model_malformed"),
        ('[{"name": ', "model_malformed"),
        ("", "model_empty"),
        (Hang(3.0), "model_timeout"),
    ],
)
def test_model_failures_are_recorded_retryable_and_lose_nothing(store, bus, reply, outcome) -> None:
    events, recorder = bus
    with FakeLLM([answer(GOOD)]) as fake:
        run(store, fake, session="sess_0")
    before = store.get(AGENT, "cep-13-campinas")
    with FakeLLM([reply]) as fake:
        report = run(store, fake, session="sess_1", events=events, timeout_s=1.0)
    assert report.outcome == outcome
    assert report.retryable
    assert store.extraction(AGENT, "sess_1", "t1").outcome == outcome
    assert store.get(AGENT, "cep-13-campinas") == before
    assert recorder.named("knowledge_extracted")[0]["outcome"] == outcome


def test_same_claim_from_another_session_confirms_without_a_model_call(store) -> None:
    with FakeLLM([answer(GOOD)]) as fake:
        run(store, fake, session="sess_1")
        run(store, fake, session="sess_2")
        calls = len(fake.requests)
    concept = store.get(AGENT, "cep-13-campinas").concept
    assert calls == 2  # two extractions, no merge call
    assert concept.occurrences == 2 and concept.sources == ("sess_1", "sess_2")
    assert concept.confidence == 0.7
    assert [v.reason for v in store.versions(AGENT, "cep-13-campinas")] == ["confirm", "extract"]


def test_replaying_a_turn_changes_nothing(store) -> None:
    with FakeLLM([answer(GOOD)]) as fake:
        run(store, fake)
        before = store.get(AGENT, "cep-13-campinas")
        report = run(store, fake)
    assert report.results == [("cep-13-campinas", "replayed")]
    assert store.get(AGENT, "cep-13-campinas") == before


RELATED = {**GOOD, "description": "Campinas DC ships same day before 14h.",
           "body": "Orders paid before 14h leave the Campinas DC the same day."}


def test_related_sighting_is_merged_by_a_second_model_call(store, bus) -> None:
    events, recorder = bus
    merged = "CEP range 13000-13999 ships from the Campinas DC in 1-2 business days; paid before 14h, same day."
    with FakeLLM([answer(GOOD), answer(RELATED), json.dumps({"verdict": "related", "body": merged})]) as fake:
        run(store, fake, session="sess_1", events=events)
        report = run(store, fake, session="sess_2", events=events)
        merge_prompt = fake.requests[-1]["messages"][-1]["content"]
    assert report.results == [("cep-13-campinas", "merged")]
    assert "Orders paid before 14h" in merge_prompt
    concept = store.get(AGENT, "cep-13-campinas").concept
    assert concept.body == merged and concept.occurrences == 2 and concept.confidence == 0.7
    assert store.versions(AGENT, "cep-13-campinas")[0].reason == "merge"
    assert len(recorder.named("knowledge_learned")) == 2


@pytest.mark.parametrize(
    "merge_reply",
    [json.dumps({"verdict": "contradicting"}),
     json.dumps({"verdict": "related", "body": "x" * 5000}),
     json.dumps({"verdict": "related", "body": ""}),
     "garbage",
     Status(503)],
)
def test_contradicting_or_unusable_merge_becomes_a_conflict(store, bus, merge_reply) -> None:
    events, recorder = bus
    with FakeLLM([answer(GOOD), answer(RELATED), merge_reply, answer(RELATED)]) as fake:
        run(store, fake, session="sess_1", events=events)
        original = store.get(AGENT, "cep-13-campinas").concept.body
        report = run(store, fake, session="sess_2", events=events)
        replay = run(store, fake, session="sess_2", events=events)
    assert report.results == [("cep-13-campinas", "conflict")]
    assert replay.results == [("cep-13-campinas", "replayed")]
    concept = store.get(AGENT, "cep-13-campinas").concept
    assert concept.body.startswith(original + "\n\n## Contradiction\n\n- session `sess_2` at ")
    assert "Orders paid before 14h" in concept.body
    assert concept.confidence == 0.4 and concept.status == "conflict"
    assert recorder.named("knowledge_conflict") == [{"name": "cep-13-campinas", "agent": AGENT}]


def test_without_a_model_a_different_claim_is_a_conflict(store) -> None:
    first = Candidate("cep-13-campinas", GOOD["description"], "fact", GOOD["body"])
    other = Candidate("cep-13-campinas", RELATED["description"], "fact", RELATED["body"])
    assert sight(store, AGENT, first, session_id="s1", turn_id="t") == "learned"
    assert sight(store, AGENT, other, session_id="s2", turn_id="t") == "conflict"


def test_a_policy_body_is_never_changed_by_the_engine(store, bus) -> None:
    events, recorder = bus
    with FakeLLM([answer(GOOD)]) as fake:
        run(store, fake, session="sess_1")
    current = store.get(AGENT, "cep-13-campinas")
    promoted = current.markdown.replace("provenance: observed", "provenance: policy")
    store.edit(AGENT, "cep-13-campinas", promoted, expected_version=current.version, actor="op")
    policy_body = store.get(AGENT, "cep-13-campinas").concept.body
    merged = json.dumps({"verdict": "related", "body": "Totally new merged body."})
    with FakeLLM([answer(RELATED), merged]) as fake:
        report = run(store, fake, session="sess_2", events=events)
    with FakeLLM([answer(GOOD)]) as fake:
        confirm = run(store, fake, session="sess_3", events=events)
    after = store.get(AGENT, "cep-13-campinas").concept
    assert report.results == [("cep-13-campinas", "conflict")]
    assert confirm.results == [("cep-13-campinas", "confirmed")]
    assert after.body == policy_body and after.provenance == "policy"
    assert after.confidence == 0.6  # the author's value, not the evidence rule's
    assert recorder.named("knowledge_conflict") == [{"name": "cep-13-campinas", "agent": AGENT}]


def test_event_payloads_never_carry_a_body(store, bus) -> None:
    events, recorder = bus
    with FakeLLM([answer(GOOD), answer(RELATED), json.dumps({"verdict": "contradicting"})]) as fake:
        run(store, fake, session="sess_1", events=events)
        run(store, fake, session="sess_2", events=events)
    text = json.dumps(recorder.events)
    assert GOOD["body"] not in text and RELATED["body"] not in text
    assert {n for n, _ in recorder.events} == {"knowledge_learned", "knowledge_conflict", "knowledge_extracted"}


SAME = Candidate("frete-gratis", "Free shipping above R$ 199.", "policy",
                 "Orders above R$ 199 ship for free.")


@settings(max_examples=25, deadline=None)
@given(
    st.lists(st.tuples(st.sampled_from(["s1", "s2", "s3", "s4", "s5", "s6", "s7"]),
                       st.sampled_from(["t1", "t2"])), min_size=1, max_size=12),
    st.randoms(use_true_random=False),
)
def test_confidence_depends_on_distinct_sessions_only(sightings, rnd) -> None:
    shuffled = list(sightings)
    rnd.shuffle(shuffled)
    results = []
    for order in (sightings, shuffled):
        with tempfile.TemporaryDirectory() as tmp:
            db = SQLiteStore(Path(tmp) / "t.db", clock=Clock())
            for session, turn in order:
                sight(db, AGENT, SAME, session_id=session, turn_id=turn)
            before = db.get(AGENT, SAME.name).concept
            for session, turn in order:  # replaying everything is a no-op
                assert sight(db, AGENT, SAME, session_id=session, turn_id=turn) == "replayed"
            after = db.get(AGENT, SAME.name).concept
            db.close()
        assert after == before
        results.append(after)
    distinct = {s for s, _ in sightings}
    for concept in results:
        assert concept.confidence == min(0.95, round(0.5 + 0.1 * len(distinct), 2))
        assert set(concept.sources) == distinct
        assert concept.occurrences == len(set(sightings))
    assert results[0].confidence == results[1].confidence
