"""The learning queue tries a turn again when the model failed transiently, and only then.

The model is a local HTTP server speaking the OpenAI API (`fakellm.FakeLLM`), so the real
instructor + openai client path classifies each failure.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from fakellm import FakeLLM, Page, Status

from insika_knowledge.errors import UserError
from insika_knowledge.extract.model import InstructorModel
from insika_knowledge.hookspecs import AgentSpec, Turn
from insika_knowledge.memory import Memory
from insika_knowledge.queue import ExtractionQueue, OutboxSettings, backoff_s
from insika_knowledge.store.outbox import Outbox

TENANT = "loja"
AGENT = "store-support"
CANDIDATE = {"name": "prazo-de-troca", "type": "policy", "description": "Trocas em até 30 dias.",
             "body": "Trocas são aceitas em até 30 dias após a entrega."}
MESSAGES = [{"role": "user", "content": "Qual o prazo de troca?"},
            {"role": "assistant", "content": "Trocas são aceitas em até 30 dias após a entrega."}]
TURN = Turn(AgentSpec(AGENT, TENANT, {"model": "openai/fake-model"}), "s1", "t1", MESSAGES)
FAST = OutboxSettings(model_retry_base_s=0.2, poll_s=0.05, max_attempts=3)


def _learn_one(tmp_path: Path, fake: FakeLLM, settings: OutboxSettings = FAST,
               until: int = 10, timeout_s: float = 20.0) -> Memory:
    """Queue one turn and wait until the model was asked `until` times or the outbox is empty."""
    memory = Memory(tmp_path, base_url=fake.base_url, outbox=settings)
    memory.submit(TURN)
    outbox = Outbox(memory.store(TENANT))
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline and (outbox.pending() or len(fake.requests) < 1):
        if len(fake.requests) >= until:
            break
        time.sleep(0.02)
    memory.drain(timeout_s=10)
    return memory


@pytest.mark.parametrize("failure", [Status(503, "overloaded"), Status(429, "slow down"), Status(408, "timeout")])
def test_a_transient_model_failure_is_tried_again_and_the_turn_is_learned(tmp_path: Path, failure: Status) -> None:
    with FakeLLM([failure, json.dumps([CANDIDATE])]) as fake:
        memory = _learn_one(tmp_path, fake)
        assert len(fake.requests) == 2
    store = memory.store(TENANT)
    assert store.get(AGENT, "prazo-de-troca") is not None
    record = store.extraction(AGENT, "s1", "t1")
    assert record is not None and record.outcome == "ok"
    assert Outbox(store).pending() == 0
    memory.close()


def test_a_merge_model_down_for_now_is_asked_again_and_records_no_conflict(tmp_path: Path) -> None:
    changed = {**CANDIDATE, "body": "Trocas são aceitas em até 30 dias após a entrega, com a nota fiscal."}
    said = [MESSAGES[0], {"role": "assistant", "content": changed["body"]}]
    merged = json.dumps({"verdict": "related", "body": changed["body"]})
    memory = Memory(tmp_path, outbox=FAST)
    memory.propose(CANDIDATE, agent=AGENT, session_id="s0", tenant=TENANT, messages=MESSAGES)
    memory.close()
    with FakeLLM([json.dumps([changed]), Status(503, "overloaded"), json.dumps([changed]), merged]) as fake:
        memory = Memory(tmp_path, base_url=fake.base_url, outbox=FAST)
        memory.submit(Turn(TURN.agent, "s1", "t1", said))
        outbox = Outbox(memory.store(TENANT))
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and (outbox.pending() or len(fake.requests) < 4):
            time.sleep(0.02)
        memory.drain(timeout_s=10)
        assert len(fake.requests) == 4  # extract, merge (503); after the back-off: extract, merge
    store = memory.store(TENANT)
    stored = store.get(AGENT, "prazo-de-troca")
    assert stored is not None and not stored.concept.in_conflict and "nota fiscal" in stored.concept.body
    assert [v.reason for v in store.versions(AGENT, "prazo-de-troca")] == ["merge", "extract"]
    memory.close()


@pytest.mark.parametrize("failure", [Status(401, "invalid api key"), Status(403, "not allowed"),
                                     Status(404, "no such model"), "not json"])
def test_a_failure_that_needs_a_person_is_not_tried_again(tmp_path: Path, failure: Any) -> None:
    with FakeLLM([failure]) as fake:
        memory = _learn_one(tmp_path, fake, until=1)
        time.sleep(0.5)  # twice the longest first back-off: a retry would have come
        asked = len(fake.requests)
    store = memory.store(TENANT)
    record = store.extraction(AGENT, "s1", "t1")
    assert record is not None and record.outcome in ("model_error", "model_malformed")
    assert Outbox(store).pending() == 0
    # a refused key or a model that does not exist fails every turn alike: the turn is held
    # for the fixed configuration; an answer that was not JSON is this turn's, and is over
    assert Outbox(store).held() == (1 if isinstance(failure, Status) else 0)
    memory.close()
    # instructor re-asks a malformed answer itself (InstructorModel.max_retries, 1): one
    # queue attempt either way.
    assert asked == (1 if isinstance(failure, Status) else 1 + InstructorModel("openai/x").max_retries)


def _held_after(memory: Memory, turn: Turn = TURN) -> Outbox:
    """Submit `turn`, wait until its tenant's outbox holds it (at most 20 s); its outbox."""
    memory.submit(turn)
    outbox = Outbox(memory.store(TENANT))
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and not outbox.held():
        time.sleep(0.02)
    assert outbox.held() == 1 and outbox.pending() == 0
    return outbox


def _learned_once_fixed(tmp_path: Path) -> None:
    """A later process with a working model learns the held turn, and holds nothing more."""
    with FakeLLM([json.dumps([CANDIDATE])]) as fixed:
        again = Memory(tmp_path, base_url=fixed.base_url, outbox=FAST)
        queue = ExtractionQueue(again, FAST)
        queue.start()
        assert queue.wait_empty(timeout_s=20)
        queue.close(timeout_s=5)
        store = again.store(TENANT)
        assert store.get(AGENT, "prazo-de-troca") is not None
        assert (Outbox(store).held(), Outbox(store).pending()) == (0, 0)
        again.close()


def test_a_turn_whose_endpoint_is_no_chat_api_is_held_not_lost(tmp_path: Path) -> None:
    # a base URL at some web server answers 200 with a page: every turn would fail alike
    with FakeLLM([Page()]) as page:
        memory = Memory(tmp_path, base_url=page.base_url, outbox=FAST)
        _held_after(memory)
        record = memory.store(TENANT).extraction(AGENT, "s1", "t1")
        assert record is not None and record.outcome == "model_error"
        assert record.detail is not None and "chat-completions API" in record.detail
        memory.close()
    _learned_once_fixed(tmp_path)


@pytest.mark.parametrize("unusable", ["refused key", "no key"])
def test_a_turn_whose_model_cannot_be_used_is_held_and_learned_by_the_next_process(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, unusable: str) -> None:
    # over the relay or the hooks a turn is stored nowhere else: dropping it when the key is
    # wrong or missing loses it for good; held, it is learned once the configuration is fixed
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with FakeLLM([Status(401, "invalid api key")]) as fake:
        memory = Memory(tmp_path, base_url=fake.base_url if unusable == "refused key" else None, outbox=FAST)
        _held_after(memory)
        time.sleep(0.5)  # a retry would have come: none does in this process
        assert len(fake.requests) == (1 if unusable == "refused key" else 0)
        assert memory.drain(timeout_s=5)  # a held turn is not waited for
        status = memory.status([TENANT])[0]
        assert (status.held, status.queued) == (1, 0)
        record = memory.store(TENANT).extraction(AGENT, "s1", "t1")
        assert record is not None and record.outcome == "model_error"
        assert record.detail is not None and ("HTTP 401: invalid api key" if unusable == "refused key"
                                              else "needs an API key") in record.detail
        memory.close()
    _learned_once_fixed(tmp_path)


def test_with_no_model_configured_a_turn_is_recorded_and_not_kept(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("INSIKA_UTILITY_MODEL", raising=False)
    memory = Memory(tmp_path, outbox=FAST)
    memory.submit(Turn(AgentSpec(AGENT, TENANT, {}), "s1", "t1", MESSAGES))
    assert memory.drain(timeout_s=20)
    store = memory.store(TENANT)
    record = store.extraction(AGENT, "s1", "t1")
    assert record is not None and record.outcome == "no_model"
    assert (Outbox(store).held(), Outbox(store).pending()) == (0, 0)
    memory.close()


def test_held_turns_are_tried_again_when_the_model_answers_a_later_turn(tmp_path: Path) -> None:
    replies = [Status(401, "invalid api key"), json.dumps([]), json.dumps([CANDIDATE])]

    def reply(body: dict[str, Any]) -> Any:
        return replies.pop(0) if len(replies) > 1 else replies[0]

    with FakeLLM(reply) as fake:
        memory = Memory(tmp_path, base_url=fake.base_url, outbox=FAST)
        _held_after(memory)  # the key was refused ...
        memory.submit(Turn(TURN.agent, "s2", "t1", [{"role": "user", "content": "Oi"},
                                                    {"role": "assistant", "content": "Olá!"}]))
        store = memory.store(TENANT)  # ... and works again for the next turn: the held one is due
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and store.get(AGENT, "prazo-de-troca") is None:
            time.sleep(0.02)
        assert store.get(AGENT, "prazo-de-troca") is not None
        assert memory.drain(timeout_s=20)  # the turn's row goes after its concept is visible (a loaded CI saw 1)
        assert len(fake.requests) == 3
        assert (Outbox(store).held(), Outbox(store).pending()) == (0, 0)
        memory.close()


def test_the_queue_gives_up_after_max_attempts_keeping_the_last_failure(tmp_path: Path) -> None:
    with FakeLLM([Status(503, "overloaded")]) as fake:
        memory = _learn_one(tmp_path, fake, until=3)
        time.sleep(0.5)
        assert len(fake.requests) == FAST.max_attempts == 3
    store = memory.store(TENANT)
    record = store.extraction(AGENT, "s1", "t1")
    assert record is not None and record.outcome == "model_error" and record.retryable
    assert "503" in (record.detail or "")
    assert Outbox(store).pending() == 0
    memory.close()


@pytest.mark.parametrize("code", [429, 503])  # a 503's Retry-After too (found by a newcomer's attack)
def test_retry_after_is_honoured_between_attempts(tmp_path: Path, code: int) -> None:
    stamps: list[float] = []
    replies = [Status(code, "slow down", {"retry-after": "1"}), json.dumps([CANDIDATE])]

    def reply(body: dict[str, Any]) -> Any:
        stamps.append(time.monotonic())
        return replies.pop(0) if len(replies) > 1 else replies[0]

    with FakeLLM(reply) as fake:
        memory = _learn_one(tmp_path, fake, until=2)
        assert len(fake.requests) == 2
    assert stamps[1] - stamps[0] >= 1.0  # not the 0.1-0.2 s of the back-off alone
    assert memory.store(TENANT).get(AGENT, "prazo-de-troca") is not None
    memory.close()


def test_drain_does_not_wait_for_a_turn_that_waits_for_the_model(tmp_path: Path) -> None:
    slow = OutboxSettings(model_retry_base_s=60.0, poll_s=0.05)
    with FakeLLM([Status(503, "overloaded"), json.dumps([CANDIDATE])]) as fake:
        memory = Memory(tmp_path, base_url=fake.base_url, outbox=slow)
        memory.submit(TURN)
        started = time.monotonic()
        assert memory.drain(timeout_s=20)
        assert time.monotonic() - started < 10
        assert len(fake.requests) == 1
        store = memory.store(TENANT)
        assert Outbox(store).pending() == 1  # kept for its next attempt, 30-60 s from now
        memory.close()
    # The next process takes it up when its time comes (here: made due at once).
    with FakeLLM([json.dumps([CANDIDATE])]) as fake:
        again = Memory(tmp_path, base_url=fake.base_url, outbox=FAST)
        store = again.store(TENANT)
        with Outbox(store).db.write() as w:
            w.execute("UPDATE outbox SET not_before = 0")
        queue = ExtractionQueue(again, FAST)
        queue.start()
        assert queue.wait_empty(timeout_s=20)
        queue.close(timeout_s=5)
    assert store.get(AGENT, "prazo-de-troca") is not None
    again.close()


def test_equal_jitter_keeps_half_of_the_delay() -> None:
    delays = [backoff_s(3, 10.0, jitter=0.5) for _ in range(200)]
    assert min(delays) >= 20.0 and max(delays) <= 40.0
    assert max(delays) - min(delays) > 5.0  # jittered, not fixed
    assert all(backoff_s(9, 10.0, cap_s=60.0, jitter=0.5) <= 60.0 for _ in range(50))


@pytest.mark.parametrize("field", ["model_retry_base_s", "retry_base_s"])
def test_a_negative_or_nan_back_off_is_refused(field: str) -> None:
    for bad in (-1.0, float("nan")):
        with pytest.raises(UserError, match=field):
            OutboxSettings(**{field: bad})


def test_a_refusal_keeps_the_providers_words_without_the_key_it_quotes(tmp_path: Path) -> None:
    key = "sk-proj-" + "abcdefghijklmnopqrstuvwxyz123456"
    with FakeLLM([Status(401, f"Incorrect API key provided: {key}. Find your key in the dashboard.")]) as fake:
        memory = Memory(tmp_path, base_url=fake.base_url)
        report = memory.learn(MESSAGES, agent=AGENT, session_id="s1", tenant=TENANT, model="openai/fake-model")
    assert report.outcome == "model_error" and report.detail is not None
    assert report.detail.startswith("HTTP 401: Incorrect API key provided: ") and key not in report.detail
    stored = memory.status([TENANT])[0].failures[0].detail or ""
    assert "Find your key" in stored and key not in stored
    memory.close()
