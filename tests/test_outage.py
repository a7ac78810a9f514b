"""A PostgreSQL outage costs the engine nothing and memory comes back by itself.

A cluster of this module's own is stopped and started again (the session's shared one is
left alone). Before the circuit breaker, every hook waited 30 s for a pooled connection
with the server down (about a minute per engine turn). The bounds below (a few seconds)
only catch such hangs: the latency itself is measured by ``bench --faults``.
"""

from __future__ import annotations

import logging
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pgcluster import _in_memory, _unavailable

from insika_knowledge.bench.pgcluster import Cluster, find_bindir
from insika_knowledge.events import Recorder
from insika_knowledge.hookspecs import AgentSpec, Turn
from insika_knowledge.memory import Memory
from insika_knowledge.plugin import KnowledgePlugin
from insika_knowledge.queue import OutboxSettings

TENANT = "loja"
AGENT = "store-support"
HANG_S = 5.0


@pytest.fixture(scope="module")
def own_cluster() -> Iterator[Cluster]:
    bindir = find_bindir()
    if bindir is None:
        _unavailable("no PostgreSQL binary (initdb) found")
    assert bindir is not None
    cluster = Cluster(bindir, parent=_in_memory())
    try:
        cluster.start()
    except (subprocess.CalledProcessError, OSError) as exc:
        _unavailable(f"the PostgreSQL cluster did not start: {exc}")
    yield cluster
    try:
        cluster.resume()  # a test that failed mid-outage leaves it halted
    except subprocess.CalledProcessError:
        pass
    cluster.stop()


class Idle:
    def propose(self, request: Any) -> list[Any]:
        return []

    def merge(self, request: Any) -> Any:
        raise NotImplementedError


def _turn(i: int) -> Turn:
    return Turn(AgentSpec(AGENT, TENANT, {"model": "idle"}), f"s{i}", "t1",
                [{"role": "user", "content": "Tem frete grátis acima de quanto?"},
                 {"role": "assistant", "content": "Acima de R$ 199."}])


def _wait(done: Any, timeout_s: float) -> bool:
    deadline = time.monotonic() + timeout_s
    while not done():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def test_a_postgres_outage_turns_memory_off_at_once_and_back_on_by_itself(
    own_cluster: Cluster, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    url = own_cluster.url(own_cluster.create_database())
    memory = Memory(tmp_path / "data", database=url)
    memory._models["idle"] = Idle()
    recorder = Recorder()
    memory.events.subscribe(recorder)
    memory.put("---\nname: frete-gratis\ndescription: Frete grátis acima de R$ 199.\n---\n\nAcima de R$ 199.\n",
               agent=AGENT, tenant=TENANT)
    plugin = KnowledgePlugin(memory, outbox=OutboxSettings(lock_budget_ms=50, poll_s=0.1))
    try:
        assert plugin.prepare([TENANT]) == []
        assert plugin.context_fragments(_turn(0)) != []
        own_cluster.halt()
        caplog.clear()
        with caplog.at_level(logging.WARNING):
            for i in range(1, 11):
                started = time.monotonic()
                plugin.after_turn(_turn(i))
                assert plugin.context_fragments(_turn(i)) == []
                assert plugin.tools(_turn(i).agent) == [] or True  # never raises, whatever it returns
                assert time.monotonic() - started < HANG_S  # was about 60 s per turn
        deferred = [e for e in recorder.named("knowledge_deferred") if e["outcome"] == "deferred"]
        assert sorted(e["session_id"] for e in deferred) == sorted(f"s{i}" for i in range(1, 11))
        reasons = [e["reason"] for e in recorder.named("knowledge_degraded") if e["feature"] == "retrieve"]
        assert reasons and all("unreachable" in r for r in reasons)
        assert not [r for r in caplog.records if r.exc_info], "an outage is one line per failure, no traceback"
        assert list((tmp_path / "data" / "spill").glob("*.turn"))  # durable while the server is down
        own_cluster.resume()
        assert _wait(lambda: plugin.context_fragments(_turn(0)) != [], 60)  # back by itself
        assert plugin.queue.wait_empty(timeout_s=60)
        store = memory.store(TENANT)
        assert [i for i in range(1, 11) if store.extraction(AGENT, f"s{i}", "t1") is None] == []
        written = [e for e in recorder.named("knowledge_deferred") if e["outcome"] == "written"]
        assert len(written) == 10
    finally:
        plugin.close(timeout_s=10)


def test_the_relay_answers_at_its_normal_pace_with_postgres_down(own_cluster: Cluster, tmp_path: Path) -> None:
    import httpx
    from fakeupstream import FakeUpstream, Text

    from insika_knowledge.relay.access import Access
    from insika_knowledge.relay.agents import directory_from
    from insika_knowledge.relay.app import create_app
    from insika_knowledge.relay.runtime import Relay, RelaySettings
    from insika_knowledge.relay.server import BackgroundServer

    url = own_cluster.url(own_cluster.create_database())
    memory = Memory(tmp_path / "data", database=url)
    memory._models["idle"] = Idle()
    directory = directory_from({"tenants": {TENANT: {}}, "agents": {AGENT: {"knowledge": {"model": "idle"}}},
                                "unknown": "refuse"})
    headers = {"x-insika-tenant": TENANT, "x-insika-agent": AGENT}
    body = {"model": "m", "messages": [{"role": "user", "content": "Tem frete grátis acima de quanto?"}]}
    with FakeUpstream([Text("Acima de R$ 199.")] * 20) as upstream:
        relay = Relay(memory, RelaySettings(upstream.url), directory.agents,
                      access=Access(directory.tenants, directory.listed, directory.unknown))
        try:
            with BackgroundServer(create_app(relay)) as server:
                def ask(session: str) -> httpx.Response:
                    return httpx.post(server.url + "/v1/chat/completions", json=body, timeout=120,
                                      headers={**headers, "x-ace-session": session})

                assert ask("warm").headers["x-insika-learning"] == "queued"
                own_cluster.halt()
                try:
                    for i in range(3):
                        started = time.monotonic()
                        answer = ask(f"down-{i}")
                        assert time.monotonic() - started < HANG_S  # was 90 s (three pool waits)
                        assert answer.status_code == 200
                        assert answer.headers["x-insika-memory"].startswith("degraded")
                        assert answer.headers["x-insika-learning"] == "deferred"  # in the spill journal
                finally:
                    own_cluster.resume()
                assert _wait(lambda: ask("back").headers["x-insika-memory"] == "on", 60)
                assert memory.learning_queue().wait_empty(timeout_s=60)
                store = memory.store(TENANT)
                assert {r.session_id for r in store.extractions(AGENT)} >= {"down-0", "down-1", "down-2"}
        finally:
            relay.close()
