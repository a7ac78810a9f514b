"""The durable extraction queue: turns survive crashes, the queue is bounded, close is bounded."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import apsw
import pytest
from fakellm import FakeLLM, Hang

from insika_knowledge.events import Recorder
from insika_knowledge.extract.model import ExtractionRequest, MergeAnswer, MergeRequest
from insika_knowledge.hookspecs import AgentSpec, Turn
from insika_knowledge.memory import Memory
from insika_knowledge.plugin import KnowledgePlugin
from insika_knowledge.queue import ExtractionQueue, OutboxSettings, backoff_s, bounded_messages
from insika_knowledge.store.outbox import DROPPED_FULL, Outbox

TENANT = "loja"
AGENT = "store-support"
MESSAGES = [{"role": "user", "content": "frete grátis?"}, {"role": "assistant", "content": "Sim."}]


class Gate:
    """An in-process model that waits on an event before proposing nothing."""

    def __init__(self) -> None:
        self.open = threading.Event()
        self.calls = 0

    def propose(self, request: ExtractionRequest) -> list[Any]:
        self.calls += 1
        self.open.wait(30)
        return []

    def merge(self, request: MergeRequest) -> MergeAnswer:
        raise NotImplementedError


def _memory(path: Path, model: Any) -> Memory:
    memory = Memory(path)
    memory._models["gate"] = model
    return memory


def _submit(queue: ExtractionQueue, i: int, session: str = "s") -> str:
    return queue.submit(tenant=TENANT, agent=AGENT, knowledge={"model": "gate"},
                        session_id=f"{session}{i}", turn_id="t1", messages=MESSAGES)


def test_a_full_outbox_drops_records_and_reports_once_per_window(tmp_path: Path) -> None:
    gate = Gate()
    memory = _memory(tmp_path, gate)
    recorder = Recorder()
    memory.events.subscribe(recorder)
    queue = ExtractionQueue(memory, OutboxSettings(max_pending=5, drop_window_s=0.3))
    results = [_submit(queue, i) for i in range(5)]
    assert results == ["queued"] * 5
    results += [_submit(queue, i) for i in range(5, 12)]  # 7 beyond the bound, one window
    time.sleep(0.4)
    results += [_submit(queue, i) for i in range(12, 15)]  # 3 more, the next window
    assert results.count("dropped") == 10
    outbox = Outbox(memory.store(TENANT))
    assert outbox.pending() == 5
    assert outbox.dropped(AGENT) == 10
    record = memory.store(TENANT).extraction(AGENT, "s7", "t1")
    assert record is not None and record.outcome == DROPPED_FULL and record.retryable
    gate.open.set()
    assert queue.drain(timeout_s=20)
    assert queue.close(timeout_s=5)
    events = recorder.named("knowledge_dropped")
    assert sum(e["dropped"] for e in events) == 10
    assert 2 <= len(events) <= 4  # one per window, not one per process nor one per turn
    assert {e["limit"] for e in events} == {5} and all(e["agent"] == AGENT for e in events)
    memory.close()


def test_close_is_bounded_and_leaves_undone_turns_for_the_next_start(tmp_path: Path) -> None:
    gate = Gate()
    memory = _memory(tmp_path, gate)
    queue = ExtractionQueue(memory)
    for i in range(4):
        _submit(queue, i)
    deadline = time.monotonic() + 10
    while gate.calls == 0 and time.monotonic() < deadline:
        time.sleep(0.01)
    started = time.monotonic()
    assert queue.close(timeout_s=0.3) is False  # the turn in progress is still at the model
    assert time.monotonic() - started < 2
    assert Outbox(memory.store(TENANT)).pending() == 4  # nothing lost, nothing done
    # The next start (here: a new queue) takes the three unclaimed turns at once.
    gate_2 = Gate()
    gate_2.open.set()
    again = _memory(tmp_path, gate_2)
    resumed = ExtractionQueue(again)
    resumed.start()
    deadline = time.monotonic() + 20
    while Outbox(again.store(TENANT)).pending() > 1 and time.monotonic() < deadline:
        time.sleep(0.02)
    assert Outbox(again.store(TENANT)).pending() == 1  # the one claimed by the live worker
    gate.open.set()  # the first worker finishes its turn in the background
    assert resumed.wait_empty(timeout_s=20)
    for i in range(4):
        assert again.store(TENANT).extraction(AGENT, f"s{i}", "t1") is not None
    resumed.close(timeout_s=5)
    memory.close()
    again.close()


def test_a_busy_lock_defers_the_turn_instead_of_blocking_the_hook(tmp_path: Path) -> None:
    gate = Gate()
    gate.open.set()
    memory = _memory(tmp_path, gate)
    queue = ExtractionQueue(memory, OutboxSettings(lock_budget_ms=30))
    _submit(queue, 0)
    assert queue.drain(timeout_s=20)
    holder = apsw.Connection(str(memory.store(TENANT).path))
    holder.set_busy_timeout(5000)
    holder.execute("BEGIN IMMEDIATE")  # another process holds the write lock
    try:
        started = time.monotonic()
        assert _submit(queue, 1) == "deferred"
        assert _submit(queue, 2) == "deferred"
        assert time.monotonic() - started < 1.0  # two budgets of 30 ms, not the 30 s timeout
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert queue.drain(timeout_s=20)
    for i in range(3):
        assert memory.store(TENANT).extraction(AGENT, f"s{i}", "t1") is not None
    queue.close(timeout_s=5)
    memory.close()


def test_a_turn_is_bounded_in_size_oldest_messages_cut_first() -> None:
    messages = [{"role": "user", "content": f"{i}:" + "x" * 1000} for i in range(100)]
    text = bounded_messages(messages, 10_000)
    assert text is not None and len(text.encode()) <= 10_000
    assert text.endswith('"99:' + "x" * 1000 + '"}]')
    assert bounded_messages([{"role": "user", "content": "x" * 20_000}], 10_000) is None
    assert bounded_messages([], 10_000) == "[]"


def test_only_what_the_bound_keeps_is_masked_on_the_engines_thread(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    # a helper's finding: a 1 MB message was masked (1.4 s in the engine's hook), then cut
    from insika_knowledge import queue as queue_module

    masked: list[int] = []
    real = queue_module.for_queue
    monkeypatch.setattr(queue_module, "for_queue", lambda ms: masked.append(len(ms)) or real(ms))
    memory = _memory(tmp_path, Gate())
    queue = ExtractionQueue(memory, OutboxSettings(turn_bytes_max=4096), autostart=False)
    old = [{"role": "user", "content": "cartão 4111 1111 1111 1111 " + "x" * 20_000}]
    assert queue.submit(tenant=TENANT, agent=AGENT, knowledge={"model": "gate"}, session_id="s1", turn_id="t1",
                        messages=[*old, *MESSAGES]) == "queued"
    assert masked == [2]  # the two messages kept, not the one cut
    assert queue.submit(tenant=TENANT, agent=AGENT, knowledge={"model": "gate"}, session_id="s2", turn_id="t1",
                        messages=old) == "dropped"
    assert masked == [2]  # a turn over the bound is dropped unmasked
    queue.close(timeout_s=5)
    memory.close()


def test_backoff_is_exponential_with_jitter_and_capped() -> None:
    delays = [backoff_s(n, 1.0, cap_s=8.0) for n in (1, 2, 3, 4, 5, 6) for _ in range(50)]
    assert all(0.0 <= d <= 8.0 for d in delays)
    firsts = [backoff_s(1, 1.0) for _ in range(200)]
    assert max(firsts) <= 1.0 and len(set(firsts)) > 100  # jittered, not a fixed delay
    assert max(backoff_s(6, 1.0) for _ in range(200)) > 4.0  # grows with the attempt


# ----------------------------------------------------------------------------- crashes

CHILD = """
import sys, time
from insika_knowledge.hookspecs import AgentSpec, Turn
from insika_knowledge.memory import Memory
from insika_knowledge.plugin import KnowledgePlugin

plugin = KnowledgePlugin(Memory(sys.argv[1]))
agent = AgentSpec("store-support", "loja", {"model": "openai/fake-model"})
for i in range(int(sys.argv[2])):
    plugin.after_turn(Turn(agent, f"s{i}", "t1", [{"role": "user", "content": f"turn {i}"}]))
    print(i, flush=True)
time.sleep(60)
"""


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM])
def test_a_killed_process_loses_no_acknowledged_turn(
    tmp_path: Path, sig: signal.Signals, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = tmp_path / "data"
    script = tmp_path / "child.py"
    script.write_text(CHILD, encoding="utf-8")
    burst, kill_after = 300, 120
    with FakeLLM([Hang(5.0, "[]")]) as slow:  # the child's extractions hang at the model
        env = {**os.environ, "OPENAI_BASE_URL": slow.base_url,
               "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
        child = subprocess.Popen([sys.executable, str(script), str(data), str(burst)],
                                 stdout=subprocess.PIPE, text=True, env=env)
        assert child.stdout is not None
        acknowledged: list[int] = []
        deadline = time.monotonic() + 60
        while len(acknowledged) < kill_after and time.monotonic() < deadline:
            line = child.stdout.readline()
            if not line:
                break
            acknowledged.append(int(line))
        child.send_signal(sig)  # in the middle of the burst
        rest, _ = child.communicate(timeout=30)
        acknowledged += [int(n) for n in rest.split()]
    assert child.returncode == -sig
    assert len(acknowledged) >= kill_after
    with FakeLLM(["[]"]) as fast:
        monkeypatch.setenv("OPENAI_BASE_URL", fast.base_url)
        memory = Memory(data)
        plugin = KnowledgePlugin(memory)
        assert plugin.queue.wait_empty(timeout_s=120)  # resumed, including the child's claim
        store = memory.store(TENANT)
        missing = [i for i in acknowledged if store.extraction(AGENT, f"s{i}", "t1") is None]
        assert missing == []
        assert all(store.extraction(AGENT, f"s{i}", "t1").outcome == "ok"  # type: ignore[union-attr]
                   for i in acknowledged)
        plugin.close(timeout_s=10)


def test_the_plugin_resumes_on_its_first_hook_call(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    gate = Gate()
    memory = _memory(tmp_path / "d", gate)
    queue = ExtractionQueue(memory, autostart=False)  # queued durably, never extracted here
    for i in range(3):
        _submit(queue, i)
    memory.close()
    gate.open.set()
    again = _memory(tmp_path / "d", gate)
    plugin = KnowledgePlugin(again)
    spec = AgentSpec(AGENT, TENANT, {"model": "gate"})
    plugin.after_turn(Turn(spec, "fresh", "t1", MESSAGES))
    assert plugin.queue.wait_empty(timeout_s=20)
    store = again.store(TENANT)
    assert [store.extraction(AGENT, f"s{i}", "t1") is not None for i in range(3)] == [True] * 3
    assert store.extraction(AGENT, "fresh", "t1") is not None
    assert plugin.close(timeout_s=5)


def test_a_busy_tenant_file_is_looked_at_again_not_forgotten(tmp_path: Path) -> None:
    from insika_knowledge.store.sqlite.outbox import has_pending

    memory = Memory(tmp_path)
    path = memory.store(TENANT).path
    memory.close()
    holder = apsw.Connection(str(path))
    holder.execute("PRAGMA locking_mode=EXCLUSIVE")
    holder.execute("BEGIN EXCLUSIVE")  # e.g. another connection recovering the file
    try:
        assert has_pending(path, busy_timeout_ms=50) is True
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert has_pending(path) is False  # readable again: an empty outbox
    assert has_pending(tmp_path / "missing.db") is False


def test_a_running_worker_finds_turns_another_process_queued(tmp_path: Path) -> None:
    gate = Gate()
    gate.open.set()
    memory = _memory(tmp_path, gate)
    worker = ExtractionQueue(memory, OutboxSettings(rescan_s=0.2, poll_s=0.05))
    worker.start()
    other = _memory(tmp_path, gate)  # another process that queues and ends without a worker
    _submit(ExtractionQueue(other, autostart=False), 0)
    other.close()
    deadline = time.monotonic() + 10
    while memory.store(TENANT).extraction(AGENT, "s0", "t1") is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert memory.store(TENANT).extraction(AGENT, "s0", "t1") is not None
    assert worker.close(timeout_s=5)
    memory.close()


def _circular() -> dict[str, Any]:
    message: dict[str, Any] = {"role": "user", "content": "oi"}
    message["self"] = message
    return message


@pytest.mark.parametrize("messages, where", [
    (["hello"], "messages[0]"),
    ([{"role": "user", "content": "oi"}, 7], "messages[1]"),
    ([{("a", "b"): 1, "role": "user", "content": "hi"}], "messages[0]"),
    ([{"role": "user", "content": "oi"}, _circular()], "messages[1]"),
    ([{"role": "user", "content": 10 ** 5000}], "messages[0]"),
])
def test_a_turn_whose_messages_are_not_dicts_is_refused_at_submit_not_queued(
        tmp_path: Path, messages: list[Any], where: str) -> None:
    from insika_knowledge.errors import UserError

    memory = _memory(tmp_path, Gate())
    turn = Turn(agent=AgentSpec(tenant=TENANT, id=AGENT, knowledge={"model": "gate"}),
                session_id="s1", turn_id="t1", messages=messages)
    with pytest.raises(UserError, match=re.escape(where)):
        memory.submit(turn)
    queue = memory.learning_queue()
    with pytest.raises(UserError, match=re.escape(where)):
        queue.hold(tenant=TENANT, agent=AGENT, knowledge={"model": "gate"}, session_id="s1", turn_id="t1",
                   messages=messages, reason="test")
    assert Outbox(memory.store(TENANT)).pending() == 0
    memory.close()


def test_a_held_turn_is_not_claimed_counts_toward_the_bound_and_is_released(store: Any, backend: str) -> None:
    outbox = store.outbox()
    for i in range(2):
        outbox.enqueue(AGENT, f"s{i}", "t1", knowledge="{}", messages="[]", max_pending=2)
    first = outbox.claim("w:1:a", lease_s=60, gone=lambda _: False)
    assert first is not None
    outbox.hold(first.id)
    assert (outbox.pending(), outbox.held()) == (1, 1)
    second = outbox.claim("w:1:a", lease_s=60, gone=lambda _: False)
    assert second is not None and second.session_id == "s1"
    outbox.finish(second.id)
    assert outbox.claim("w:1:a", lease_s=60, gone=lambda _: False) is None  # held: nobody takes it
    # still a turn in the outbox: the bound counts it
    assert outbox.enqueue(AGENT, "s2", "t1", knowledge="{}", messages="[]", max_pending=1).queued is False
    assert outbox.release_held() == 1
    assert (outbox.pending(), outbox.held()) == (1, 0)
    again = outbox.claim("w:1:a", lease_s=60, gone=lambda _: False)
    assert again is not None and (again.session_id, again.attempts) == ("s0", 2)


def test_only_turns_to_learn_make_a_tenant_pending_held_ones_only_when_asked(
        tmp_path: Path, backend: str, request: pytest.FixtureRequest) -> None:
    url = str(request.getfixturevalue("pg_url")) if backend == "postgresql" else None
    memory = Memory(tmp_path, database=url)
    outbox = Outbox(memory.store(TENANT))
    outbox.enqueue(AGENT, "s0", "t1", knowledge="{}", messages="[]", max_pending=5)
    assert memory.tenants_with_pending() == [TENANT]
    turn = outbox.claim("w:1:a", lease_s=60, gone=lambda _: False)
    assert turn is not None
    outbox.hold(turn.id)
    assert memory.tenants_with_pending() == []  # `wait_empty` would wait for ever otherwise
    assert memory.tenants_with_pending(held=True) == [TENANT]
    memory.close()
