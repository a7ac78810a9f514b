"""Hot paths never wait on another process's write lock beyond a small budget."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import apsw
import pytest

from insika_knowledge.events import Recorder
from insika_knowledge.hookspecs import AgentSpec, Turn
from insika_knowledge.memory import Memory
from insika_knowledge.plugin import KnowledgePlugin
from insika_knowledge.procedures import ProceduresConfig
from insika_knowledge.procedures.skill import BUSY_DEFERRED
from insika_knowledge.queue import OutboxSettings
from insika_knowledge.store.sqlite.procedures import ProcedureStore

TENANT = "loja"
BUDGET_MS = 50


@pytest.fixture
def plugin(tmp_path: Path) -> Iterator[tuple[KnowledgePlugin, Recorder]]:
    memory = Memory(tmp_path / "data")
    recorder = Recorder()
    memory.events.subscribe(recorder)
    knowledge = KnowledgePlugin(memory, outbox=OutboxSettings(lock_budget_ms=BUDGET_MS))
    knowledge.procedures_config = ProceduresConfig(mode="shadow")
    yield knowledge, recorder
    knowledge.close(timeout_s=5)


def _hold_write_lock(path: Path) -> apsw.Connection:
    holder = apsw.Connection(str(path))
    holder.set_busy_timeout(5000)
    holder.execute("BEGIN IMMEDIATE")  # another process writing, for as long as it likes
    return holder


def _request(messages: list[dict[str, Any]]) -> tuple[dict[str, Any], dict[str, str]]:
    return {"model": "m", "messages": messages}, {"x-ace-session": "s-1", "x-insika-tenant": TENANT}


CONVERSATION = [
    {"role": "user", "content": "Please cancel my reservation ABC123"},
    {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "type": "function", "function": {
        "name": "lookup", "arguments": '{"code": "ABC123"}'}}]},
    {"role": "tool", "tool_call_id": "c1", "content": '{"status": "active"}'},
    {"role": "assistant", "content": None, "tool_calls": [{"id": "c2", "type": "function", "function": {
        "name": "cancel", "arguments": '{"code": "ABC123"}'}}]},
    {"role": "tool", "tool_call_id": "c2", "content": '{"status": "cancelled"}'},
]


def test_the_request_hook_goes_on_within_the_budget_and_capture_catches_up(
    plugin: tuple[KnowledgePlugin, Recorder], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    knowledge, _ = plugin
    body, headers = _request(CONVERSATION[:1])
    deadline = time.monotonic() + 30
    # opens the tenant's database, off the hook's thread: until it is open the hook goes on
    # with memory off (no stage), which a loaded machine showed; wait for it
    while knowledge.request(body, headers)[1] is None and time.monotonic() < deadline:
        time.sleep(0.05)
    holder = _hold_write_lock(tmp_path / "data" / f"{TENANT}.db")
    recorded: list[object] = []
    real_record = ProcedureStore.record_stage
    monkeypatch.setattr(ProcedureStore, "record_stage",
                        lambda self, row: (recorded.append(row), real_record(self, row)))
    try:
        body, headers = _request(CONVERSATION[:3])
        started = time.monotonic()
        returned, stage = knowledge.request(body, headers)
        assert recorded == []  # a busy database is not written again for the failed stage
        assert time.monotonic() - started < 1.0  # not 2 x 30 s
        assert returned is body
        assert stage.action == "failed" and stage.reason == BUSY_DEFERRED
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    body, headers = _request(CONVERSATION)
    _, stage = knowledge.request(body, headers)
    assert stage.action != "failed"
    # The deferred request's messages were captured by the next one: same steps as a session
    # that was never interrupted.
    store = ProcedureStore(tmp_path / "data" / f"{TENANT}.db")
    row = store.load_session("s-1")
    assert row is not None and row.messages_seen == len(CONVERSATION)
    steps = list(store.session_steps("s-1"))
    assert steps
    store.close()
    control = KnowledgePlugin(Memory(tmp_path / "control"))
    control.procedures_config = ProceduresConfig(mode="shadow")
    for upto in (1, 3, len(CONVERSATION)):
        control.request(*_request(CONVERSATION[:upto]))
    control_store = ProcedureStore(tmp_path / "control" / f"{TENANT}.db")
    assert list(control_store.session_steps("s-1")) == steps
    control_store.close()
    control.close(timeout_s=5)


def test_context_fragments_never_wait_for_a_migration_behind_a_busy_lock(
    plugin: tuple[KnowledgePlugin, Recorder], tmp_path: Path
) -> None:
    knowledge, recorder = plugin
    path = tmp_path / "data" / f"{TENANT}.db"
    setup = Memory(tmp_path / "data")
    store = setup.store(TENANT)
    with store.transaction() as tx:  # a database an older version left: 008 not applied
        tx.conn.execute("DROP TABLE outbox")
        tx.conn.execute("DROP TABLE merge_leases")
        tx.conn.execute("DELETE FROM _insika_migrations WHERE name = '008_outbox'")
    setup.close()
    spec = AgentSpec("store-support", TENANT, {"model": "openai/fake-model"})
    turn = Turn(spec, "s1", "t1", [{"role": "user", "content": "frete grátis?"}])
    holder = _hold_write_lock(path)
    try:
        started = time.monotonic()
        assert knowledge.context_fragments(turn) == []
        assert time.monotonic() - started < 1.0  # not the store's 30 s
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    degraded = recorder.named("knowledge_degraded")
    assert degraded and "still being opened" in degraded[0]["reason"]  # opening off the hook's thread
    assert knowledge.context_fragments(turn) == []  # opens and migrates now: no concept yet
    assert len(recorder.named("knowledge_degraded")) == 1
