"""Queued turns are learned without waiting for a new turn, on both backends: every process
that owns a queue starts its worker at start-up, replicas share the work through leases,
and `wait_empty` tells the truth about turns other processes queued.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

from insika_knowledge.memory import Memory
from insika_knowledge.plugin import KnowledgePlugin
from insika_knowledge.queue import ExtractionQueue, OutboxSettings

AGENT = "store-support"
MESSAGES = [{"role": "user", "content": "frete grátis?"}, {"role": "assistant", "content": "Sim."}]


class Counting:
    """A model that proposes nothing, slowly, and counts its calls (per `Memory`)."""

    def __init__(self, delay_s: float = 0.0) -> None:
        self.calls: list[str] = []
        self.delay_s = delay_s
        self._lock = threading.Lock()

    def propose(self, request: Any) -> list[Any]:
        time.sleep(self.delay_s)
        with self._lock:
            self.calls.append(str(getattr(request, "session_id", "")))
        return []

    def merge(self, request: Any) -> Any:
        raise NotImplementedError


def _memory(tmp_path: Path, database: str | None, model: Counting) -> Memory:
    memory = Memory(tmp_path / "data", database=database)
    memory._models["counting"] = model
    return memory


def _queue_without_learning(tmp_path: Path, database: str | None, tenant: str, n: int) -> None:
    """What a process that queued `n` turns and ended (without a worker) leaves behind."""
    memory = _memory(tmp_path, database, Counting())
    queue = ExtractionQueue(memory, autostart=False)
    for i in range(n):
        assert queue.submit(tenant=tenant, agent=AGENT, knowledge={"model": "counting"}, session_id=f"s{i}",
                            turn_id="t1", messages=MESSAGES) == "queued"
    memory.close()


def _learned(memory: Memory, tenant: str, n: int) -> int:
    store = memory.store(tenant)
    return sum(store.extraction(AGENT, f"s{i}", "t1") is not None for i in range(n))


def test_the_engine_plugin_resumes_at_start_up_without_a_new_turn(tmp_path: Path, database: str | None) -> None:
    _queue_without_learning(tmp_path, database, "loja", 3)
    model = Counting()
    memory = _memory(tmp_path, database, model)
    plugin = KnowledgePlugin(memory)  # configured, no hook called: the worker starts now
    try:
        deadline = time.monotonic() + 10  # the target: every pending turn within 10 s
        while _learned(memory, "loja", 3) < 3 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _learned(memory, "loja", 3) == 3
    finally:
        plugin.close(timeout_s=5)


def test_wait_empty_counts_turns_another_process_queues_later(tmp_path: Path, database: str | None) -> None:
    # It returned True at once with 411 turns pending in another process's outbox.
    model = Counting(delay_s=0.05)
    memory = _memory(tmp_path, database, model)
    queue = ExtractionQueue(memory, OutboxSettings(poll_s=0.05))
    queue.start()
    try:
        assert queue.wait_empty(timeout_s=10)  # nothing anywhere yet
        _queue_without_learning(tmp_path, database, "fresh", 8)  # a tenant made after the worker started
        assert queue.wait_empty(timeout_s=60)
        assert memory.store("fresh").outbox().pending() == 0
        assert _learned(memory, "fresh", 8) == 8
    finally:
        queue.close(timeout_s=5)
        memory.close()


def test_replicas_share_the_queued_turns_through_leases(tmp_path: Path, database: str | None) -> None:
    turns = 24
    _queue_without_learning(tmp_path, database, "loja", turns)
    models = [Counting(delay_s=0.05), Counting(delay_s=0.05)]
    memories = [_memory(tmp_path, database, m) for m in models]
    queues = [ExtractionQueue(m, OutboxSettings(poll_s=0.05)) for m in memories]
    for queue in queues:
        queue.start()
    try:
        assert all(q.wait_empty(timeout_s=60) for q in queues)
        calls = [c for m in models for c in m.calls]
        assert sorted(calls) == sorted(f"s{i}" for i in range(turns))  # each turn learned once
        assert all(len(m.calls) >= 3 for m in models)  # both replicas took a share
        assert _learned(memories[0], "loja", turns) == turns
    finally:
        for queue in queues:
            queue.close(timeout_s=5)
        for memory in memories:
            memory.close()
