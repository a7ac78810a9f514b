"""Where the relay's memory stages run: on the event loop, or in a worker thread."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from fakeupstream import FakeUpstream, Text
from relayhelp import IDENTITY, QUESTION, TENANT, Running, running_relay

from insika_knowledge.errors import StorageBusy
from insika_knowledge.procedures import ProceduralMemory
from insika_knowledge.relay import scheduling
from insika_knowledge.relay.runtime import RelaySettings
from insika_knowledge.retrieve import Retriever

WORKER = "insika-relay-memory"
#: No learning: its writes after each answer would hold the lock a stage on the loop never waits for.
QUIET = {"extract": False}


@pytest.fixture
def upstream() -> Iterator[FakeUpstream]:
    with FakeUpstream() as fake:
        yield fake


def ask(relay: Running, headers: dict[str, str] | None = None, question: str = QUESTION,
        stream: bool = False) -> httpx.Response:
    body = {"model": "m", "stream": stream, "messages": [{"role": "user", "content": question}]}
    return httpx.post(relay.url + "/v1/chat/completions", content=json.dumps(body).encode(), timeout=30,
                      headers={"content-type": "application/json", **IDENTITY, **(headers or {})})


def threads_of(monkeypatch: pytest.MonkeyPatch, cls: type, name: str) -> list[tuple[str, dict[str, Any]]]:
    """Record the thread (and keyword arguments) of every call of ``cls.name``."""
    original, seen = getattr(cls, name), []

    def recording(self: Any, *args: Any, **kw: Any) -> Any:
        seen.append((threading.current_thread().name, kw))
        return original(self, *args, **kw)

    monkeypatch.setattr(cls, name, recording)
    return seen


@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
def test_a_warm_agents_stages_run_on_the_event_loop(tmp_path: Path, upstream: FakeUpstream, database: str | None,
                                                    stream: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    searches = threads_of(monkeypatch, Retriever, "block")
    stages = threads_of(monkeypatch, ProceduralMemory, "handle_request")
    with running_relay(tmp_path / "data", upstream.url, knowledge=QUIET, database=database) as relay:
        for n in range(3):
            upstream.replies = [Text("Hello there.")]
            r = ask(relay, question=f"{QUESTION} ({n})", stream=stream)
            assert r.status_code == 200 and r.headers["x-insika-knowledge"] == "injected"
            assert r.headers["x-ace-skill-modes"] == "skill_knowledge_graph=shadow"
            assert "x-insika-degraded" not in r.headers
    search_threads = [t for t, _ in searches]
    stage_threads = [t for t, _ in stages]
    assert search_threads[0].startswith(WORKER) and stage_threads[0].startswith(WORKER)  # the first: cold
    if database is None:  # SQLite: the next ones on the event loop, the stage without waiting for a lock
        assert not any(t.startswith(WORKER) for t in search_threads[1:] + stage_threads[1:])
        assert [kw for _, kw in stages[1:]] == [{"lock_budget_ms": 0}] * 2
    else:  # PostgreSQL: every read is a round trip, never on the event loop
        assert all(t.startswith(WORKER) for t in search_threads + stage_threads)


def test_a_burst_of_requests_runs_its_stages_in_workers(tmp_path: Path, upstream: FakeUpstream,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    searches = threads_of(monkeypatch, Retriever, "block")
    stages = threads_of(monkeypatch, ProceduralMemory, "handle_request")
    monkeypatch.setattr(scheduling, "LOOP_MAX_IN_FLIGHT", 0)  # every request counts as one of a burst
    with running_relay(tmp_path / "data", upstream.url, knowledge=QUIET) as relay:
        for n in range(3):
            assert ask(relay, question=f"{QUESTION} ({n})").headers["x-insika-knowledge"] == "injected"
    assert [t.startswith(WORKER) for t, _ in searches + stages] == [True] * 6
    assert [kw for _, kw in stages] == [{}] * 3


def test_a_declared_outcome_runs_the_stage_in_a_worker(tmp_path: Path, upstream: FakeUpstream,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    stages = threads_of(monkeypatch, ProceduralMemory, "handle_request")
    with running_relay(tmp_path / "data", upstream.url, knowledge=QUIET) as relay:
        assert ask(relay).status_code == 200
        assert ask(relay, {"x-ace-task-outcome": "success"}).status_code == 200
    assert [t.startswith(WORKER) for t, _ in stages] == [True, True]


def test_a_busy_lock_sends_the_stage_to_a_worker_that_waits(tmp_path: Path, upstream: FakeUpstream,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    stages = threads_of(monkeypatch, ProceduralMemory, "handle_request")
    with running_relay(tmp_path / "data", upstream.url, knowledge=QUIET) as relay:
        assert ask(relay).status_code == 200  # warm: the tenant's procedural memory is open
        skill = relay.relay.opened_skill(TENANT)
        assert skill is not None
        with skill._lock:  # the sweeper's lock, held
            answered: list[httpx.Response] = []
            asking = threading.Thread(target=lambda: answered.append(ask(relay, question="cancel my trip")))
            asking.start()
            time.sleep(0.5)
            assert answered == [] and len(upstream.requests) == 2  # upstream has it; the answer waits
        asking.join(10)
        assert len(skill.store.stages(limit=10)) == 2  # the stage recorded once (nothing by the busy try)
    (r,) = answered
    assert r.status_code == 200 and "x-insika-degraded" not in r.headers
    assert r.headers["x-ace-skill-modes"] == "skill_knowledge_graph=shadow"
    second = stages[1:]
    assert [(t.startswith(WORKER), kw) for t, kw in second] == [(False, {"lock_budget_ms": 0}), (True, {})]


def test_a_lock_met_on_the_event_loop_prepares_the_request_again_in_a_worker(
        tmp_path: Path, upstream: FakeUpstream, monkeypatch: pytest.MonkeyPatch) -> None:
    original, seen = Retriever.block, []

    def busy_off_the_workers(self: Retriever, *args: Any, **kwargs: Any) -> str | None:
        seen.append(threading.current_thread().name)
        if not seen[-1].startswith(WORKER):
            raise StorageBusy("held elsewhere", path="test")
        return original(self, *args, **kwargs)

    monkeypatch.setattr(Retriever, "block", busy_off_the_workers)
    with running_relay(tmp_path / "data", upstream.url, knowledge=QUIET) as relay:
        assert ask(relay).status_code == 200
        r = ask(relay, question=QUESTION + "?")
    assert [t.startswith(WORKER) for t in seen] == [True, False, True]
    assert r.status_code == 200 and r.headers["x-insika-knowledge"] == "injected"
    assert "x-insika-degraded" not in r.headers and relay.recorder.named("knowledge_degraded") == []
    assert "<knowledge>" in upstream.requests[1].body["messages"][-1]["content"]


def test_an_unreachable_upstream_still_runs_the_deferred_stage(tmp_path: Path, upstream: FakeUpstream,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    stages = threads_of(monkeypatch, ProceduralMemory, "handle_request")
    with running_relay(tmp_path / "data", upstream.url, knowledge=QUIET) as relay:
        assert ask(relay).status_code == 200
        relay.relay.settings = RelaySettings("http://127.0.0.1:9")  # nothing listens there
        r = ask(relay, question="and now?")
    assert r.status_code == 502 and r.headers["x-ace-skill-modes"] == "skill_knowledge_graph=shadow"
    assert len(stages) == 2
