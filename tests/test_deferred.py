"""Turns deferred by a hook (write lock held, store opening, database down) survive a kill
and are reported: ``knowledge_deferred`` says ``deferred``, then ``written`` or ``failed``.
"""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import apsw
import pytest
from fakellm import FakeLLM

from insika_knowledge.errors import UserError
from insika_knowledge.events import Recorder
from insika_knowledge.hookspecs import AgentSpec, Turn
from insika_knowledge.memory import Memory
from insika_knowledge.plugin import KnowledgePlugin
from insika_knowledge.queue import OutboxSettings
from insika_knowledge.store.outbox import Outbox

ROOT = Path(__file__).resolve().parents[1]
TENANT = "loja"
AGENT = "store-support"

CHILD = """
import sys, time
from insika_knowledge.hookspecs import AgentSpec, Turn
from insika_knowledge.memory import Memory
from insika_knowledge.plugin import KnowledgePlugin
from insika_knowledge.queue import OutboxSettings

plugin = KnowledgePlugin(Memory(sys.argv[1]), outbox=OutboxSettings(lock_budget_ms=20))
assert plugin.prepare(["loja"]) == []
print("ready", flush=True)
sys.stdin.readline()  # the parent holds the write lock now
agent = AgentSpec("store-support", "loja", {"model": "openai/fake-model"})
for i in range(int(sys.argv[2])):
    plugin.after_turn(Turn(agent, f"s{i}", "t1", [{"role": "user", "content": f"turn {i}"}]))
    print(i, flush=True)
time.sleep(60)
"""


def test_turns_deferred_under_a_held_lock_survive_a_kill(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Before the spill journal, 20 of 20 such turns lived only in memory and were lost.
    data, turns = tmp_path / "data", 20
    script = tmp_path / "child.py"
    script.write_text(CHILD, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    child = subprocess.Popen([sys.executable, str(script), str(data), str(turns)], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, text=True, env=env)
    assert child.stdin is not None and child.stdout is not None
    holder: apsw.Connection | None = None
    try:
        assert child.stdout.readline().strip() == "ready"
        holder = apsw.Connection(str(data / f"{TENANT}.db"))
        holder.set_busy_timeout(5000)
        holder.execute("BEGIN IMMEDIATE")  # another process writes, for as long as it likes
        child.stdin.write("go\n")
        child.stdin.flush()
        acknowledged = [int(child.stdout.readline()) for _ in range(turns)]
        child.send_signal(signal.SIGKILL)  # every turn deferred, none written yet
        child.wait(30)
    finally:
        child.kill()
        if holder is not None:
            holder.execute("ROLLBACK")
            holder.close()
    assert len(acknowledged) == turns
    assert list((data / "spill").glob("*.turn"))  # the deferred turns, kept on disk
    with FakeLLM(["[]"] * 50) as fake:
        monkeypatch.setenv("OPENAI_BASE_URL", fake.base_url)
        plugin = KnowledgePlugin(Memory(data))  # starts its worker: takes the journal over
        try:
            assert plugin.queue.wait_empty(timeout_s=60)
            store = plugin.memory.store(TENANT)
            assert [i for i in acknowledged if store.extraction(AGENT, f"s{i}", "t1") is None] == []
        finally:
            plugin.close(timeout_s=10)
    assert list((data / "spill").glob("*")) == []  # zeroed and removed once written


def _turn(i: int) -> Turn:
    return Turn(AgentSpec(AGENT, TENANT, {"model": "idle"}), f"s{i}", "t1",
                [{"role": "user", "content": f"turn {i}"}])


class Idle:
    def propose(self, request: Any) -> list[Any]:
        return []

    def merge(self, request: Any) -> Any:
        raise NotImplementedError


def test_a_deferred_turn_is_reported_then_written_or_failed(tmp_path: Path, caplog: pytest.LogCaptureFixture,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    memory = Memory(tmp_path / "data")
    memory._models["idle"] = Idle()
    recorder = Recorder()
    memory.events.subscribe(recorder)
    plugin = KnowledgePlugin(memory, outbox=OutboxSettings(lock_budget_ms=20, poll_s=0.05))
    assert plugin.prepare([TENANT]) == []
    holder = apsw.Connection(str(memory.store(TENANT).path))
    holder.set_busy_timeout(5000)
    holder.execute("BEGIN IMMEDIATE")
    try:
        with caplog.at_level(logging.INFO, logger="insika_knowledge.queue"):
            plugin.after_turn(_turn(1))
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert plugin.drain(timeout_s=20)
    outcomes = [(e["turn_id"], e["session_id"], e["outcome"]) for e in recorder.named("knowledge_deferred")]
    assert outcomes == [("t1", "s1", "deferred"), ("t1", "s1", "written")]
    assert "write lock was busy" in recorder.named("knowledge_deferred")[0]["reason"]
    assert any("turn s1/t1 of loja/store-support deferred" in r.getMessage() for r in caplog.records)
    # A deferred turn that can never be written: the caller learns it (event and one log line).
    real = Outbox.enqueue

    def refusing(self: Outbox, *args: Any, **kwargs: Any) -> Any:
        if kwargs.get("busy_timeout_ms") is None:  # the spill thread's write
            raise UserError("cannot write the database: a test's refusal")
        return real(self, *args, **kwargs)

    monkeypatch.setattr(Outbox, "enqueue", refusing)
    holder = apsw.Connection(str(memory.store(TENANT).path))
    holder.set_busy_timeout(5000)
    holder.execute("BEGIN IMMEDIATE")
    caplog.clear()
    try:
        plugin.after_turn(_turn(2))
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    deadline = time.monotonic() + 20
    while not any(e["outcome"] == "failed" for e in recorder.named("knowledge_deferred")):
        assert time.monotonic() < deadline
        time.sleep(0.02)
    failed = [e for e in recorder.named("knowledge_deferred") if e["outcome"] == "failed"]
    assert failed[0]["session_id"] == "s2" and "a test's refusal" in failed[0]["reason"]
    lines = [r for r in caplog.records if "s2/t1" in r.getMessage() and r.levelno >= logging.WARNING]
    assert len(lines) == 1 and lines[0].exc_info is None
    plugin.close(timeout_s=5)


def test_an_unexpected_error_writing_a_deferred_turn_never_loses_it(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    # Seen under bench --faults on PostgreSQL: the spill writer met an import race
    # (_DeadlockError, a RuntimeError), took it for a refusal and removed the turn's journal
    # file: an acknowledged turn lost. Only a refusal (a UserError) may drop a turn.
    memory = Memory(tmp_path / "data")
    memory._models["idle"] = Idle()
    recorder = Recorder()
    memory.events.subscribe(recorder)
    plugin = KnowledgePlugin(memory, outbox=OutboxSettings(lock_budget_ms=20, poll_s=0.05, max_attempts=2))
    assert plugin.prepare([TENANT]) == []
    real = Outbox.enqueue
    broken = {"left": 3}  # more than max_attempts: the file must outlive this process's tries

    def flaky(self: Outbox, *args: Any, **kwargs: Any) -> Any:
        if kwargs.get("busy_timeout_ms") is None and broken["left"] > 0:  # the spill thread's write
            broken["left"] -= 1
            raise RuntimeError("deadlock detected by _ModuleLock('a test')")
        return real(self, *args, **kwargs)

    monkeypatch.setattr(Outbox, "enqueue", flaky)
    holder = apsw.Connection(str(memory.store(TENANT).path))
    holder.set_busy_timeout(5000)
    holder.execute("BEGIN IMMEDIATE")
    try:
        plugin.after_turn(_turn(3))
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    deadline = time.monotonic() + 20
    while broken["left"] > 1:  # tried max_attempts times in this process
        assert time.monotonic() < deadline
        time.sleep(0.02)
    plugin.close(timeout_s=5)
    journal = list((tmp_path / "data" / "spill").glob("*.turn"))
    assert len(journal) == 1  # kept for the next start
    # the next process takes it over and writes it
    again = Memory(tmp_path / "data")
    assert again.store(TENANT).extraction(AGENT, "s3", "t1") is None
    again._models["idle"] = Idle()
    broken["left"] = 0
    again.start_learning()
    deadline = time.monotonic() + 20
    while again.store(TENANT).extraction(AGENT, "s3", "t1") is None:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    assert not list((tmp_path / "data" / "spill").glob("*.turn"))
    again.close(timeout_s=5)
    assert not [e for e in recorder.named("knowledge_deferred") if e["outcome"] == "failed"]


def test_the_first_hook_of_a_new_tenant_never_waits_for_its_store_to_open(tmp_path: Path) -> None:
    memory = Memory(tmp_path / "data")
    memory._models["idle"] = Idle()
    recorder = Recorder()
    memory.events.subscribe(recorder)
    plugin = KnowledgePlugin(memory, outbox=OutboxSettings(lock_budget_ms=0))  # nothing may wait
    try:
        plugin.after_turn(_turn(1))  # the store opens on a thread of its own
        assert recorder.named("knowledge_deferred")[0]["reason"] == "the store is still opening"
        assert plugin.queue.wait_empty(timeout_s=30)
        assert memory.store(TENANT).extraction(AGENT, "s1", "t1") is not None
    finally:
        plugin.close(timeout_s=5)


def test_a_cut_journal_file_is_never_taken_for_the_turn(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Found by an attack: a short write (a file-size limit, a disk filling up) left a cut
    # .turn file, the turn was told "deferred" (journalled), and after a kill the next start
    # removed the unreadable file: the turn was lost. A cut write is now an OSError.
    from insika_knowledge.store import spill

    journal = spill.SpillJournal(tmp_path / "spill", "host:1:abcd")
    real = os.write

    def short(fd: int, data: Any) -> int:
        if len(data) > 100:
            return real(fd, bytes(data[:100]))  # the first call writes part of it
        raise OSError(27, "File too large")

    monkeypatch.setattr(spill.os, "write", short)
    with pytest.raises(OSError):
        journal.write({"tenant": "loja", "messages": "x" * 10_000})
    assert list((tmp_path / "spill").iterdir()) == []  # no .turn, no .tmp left behind
    monkeypatch.setattr(spill.os, "write", real)
    path = journal.write({"tenant": "loja", "messages": "x" * 10_000})
    assert path.read_bytes().endswith(b'"}') and path.suffix == ".turn"


def test_close_with_a_deadline_while_deferred_turns_wait_for_a_held_lock(tmp_path: Path) -> None:
    # Found by an attack: close(timeout) raised ThreadingViolationError (the spill thread
    # was still waiting for the lock on the store's connection when the store was closed).
    memory = Memory(tmp_path / "data")
    memory._models["idle"] = Idle()
    plugin = KnowledgePlugin(memory, outbox=OutboxSettings(lock_budget_ms=20, poll_s=0.05))
    assert plugin.prepare([TENANT]) == []
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sqlite3, sys; db = sqlite3.connect(sys.argv[1], isolation_level=None); "
         "db.execute('BEGIN IMMEDIATE'); print('held', flush=True); sys.stdin.read()",
         str(memory.store(TENANT).path)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert holder.stdout is not None and holder.stdin is not None
    try:
        assert holder.stdout.readline().strip() == "held"
        for i in range(2):
            plugin.after_turn(_turn(10 + i))
        started = time.monotonic()
        memory.close(timeout_s=1)  # no exception (False when the spill thread was in its lock wait)
        assert time.monotonic() - started < 10
        assert len(list((tmp_path / "data" / "spill").glob("*.turn"))) == 2  # kept for the next start
    finally:
        holder.stdin.close()
        holder.wait(30)
    again = Memory(tmp_path / "data")
    again._models["idle"] = Idle()
    again.start_learning()
    assert again.learning_queue().wait_empty(timeout_s=60)
    assert all(again.store(TENANT).extraction(AGENT, f"s{10 + i}", "t1") is not None for i in range(2))
    again.close(timeout_s=10)
