"""Every edge's events reach an installed ``track_event`` plugin, with no host wiring.

A plugin registered on the process's plugin manager (`insika_knowledge.plugins.default_manager`,
what an installed ``insika.plugins`` entry point is loaded into) stands in for an analytics
plugin. Each edge builds its own `Memory` the way a user starts it (the command line, the
Studio app, backfill, MCP, the engine plugin, Hermes), and each event kind the edge causes
must reach the plugin.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from studio_pages import csrf

from insika_knowledge.cli import cli
from insika_knowledge.events import Event
from insika_knowledge.hookspecs import AgentSpec, Turn, hookimpl
from insika_knowledge.memory import Memory
from insika_knowledge.plugin import KnowledgePlugin
from insika_knowledge.plugins import default_manager

TENANT = "acme"
AGENT = "shop"
CANDIDATE = {"name": "frete-gratis-acima-199", "description": "Orders over R$ 199 ship free.",
             "type": "policy", "body": "Every order over R$ 199 ships free, applied at checkout."}


class Tracker:
    """An analytics plugin: keeps the name of every event it is given."""

    def __init__(self) -> None:
        self.names: list[str] = []

    @hookimpl
    def track_event(self, event: Event) -> None:
        self.names.append(event.name)


@pytest.fixture
def tracker() -> Iterator[Tracker]:
    manager = default_manager()
    plugin = Tracker()
    manager.register(plugin)
    try:
        yield plugin
    finally:
        manager.unregister(plugin)


def _replay(tmp_path: Path, sessions: list[str]) -> Path:
    path = tmp_path / "replay.json"
    path.write_text(json.dumps({"extract": {s: [CANDIDATE] for s in sessions}, "consolidate": {}}))
    return path


def _seeded(data: Path) -> None:
    """One concept of AGENT in TENANT, written as a person would (``put``)."""
    with Memory(data) as memory:
        memory.put("---\nname: devolucao-7-dias\ndescription: Returns within 7 days.\n---\n\nSeven days.\n",
                   agent=AGENT, tenant=TENANT)


def test_the_command_line_delete_and_search_reach_track_event(tmp_path: Path, tracker: Tracker) -> None:
    data = tmp_path / "data"
    _seeded(data)
    base = ["--data-dir", str(data), "--tenant", TENANT, "--agent", AGENT]
    searched = CliRunner().invoke(cli, ["search", *base, "devolução em quantos dias?"])
    assert searched.exit_code == 0, searched.output
    deleted = CliRunner().invoke(cli, ["delete", *base, "devolucao-7-dias"])
    assert deleted.exit_code == 0, deleted.output
    assert "knowledge_deleted" in tracker.names


def test_backfill_reaches_track_event(tmp_path: Path, tracker: Tracker) -> None:
    sessions = tmp_path / "s.jsonl"
    sessions.write_text(json.dumps({"session_id": "s1", "messages": [
        {"role": "user", "content": "Frete grátis acima de quanto?"},
        {"role": "assistant", "content": "Acima de R$ 199 o frete é grátis."},
    ]}) + "\n")
    done = CliRunner().invoke(cli, ["backfill", "--data-dir", str(tmp_path / "data"), "--tenant", TENANT,
                                    "--agent", AGENT, "--sessions", str(sessions), "--quiet",
                                    "--model", f"replay:{_replay(tmp_path, ['s1'])}"])
    assert done.exit_code == 0, done.output
    assert {"knowledge_extracted", "knowledge_learned", "knowledge_backfilled"} <= set(tracker.names)


def test_the_studio_reaches_track_event(tmp_path: Path, tracker: Tracker) -> None:
    from starlette.testclient import TestClient

    from insika_knowledge.studio.app import create_app

    data = tmp_path / "data"
    _seeded(data)
    token = "test-token-0123456789"
    with Memory(data) as memory, TestClient(create_app(memory, token), base_url="http://127.0.0.1") as client:
        page = client.get("/studio/login")
        client.post("/studio/login", data={"token": token, "csrf": csrf(page.text)})
        scope = f"agent={AGENT}&tenant={TENANT}"
        confirm = client.get(f"/studio/knowledge/devolucao-7-dias/delete?{scope}")
        version = memory.store(TENANT).get(AGENT, "devolucao-7-dias")
        assert version is not None
        response = client.post(f"/studio/knowledge/devolucao-7-dias/delete?{scope}",
                               data={"csrf": csrf(confirm.text), "version": str(version.version)})
        assert response.status_code == 200
    assert tracker.names.count("knowledge_deleted") == 1


def test_the_mcp_server_reaches_track_event(tmp_path: Path, tracker: Tracker) -> None:
    import anyio
    from mcp import Client

    from insika_knowledge.mcp.server import KnowledgeServer

    data = tmp_path / "data"
    _seeded(data)

    async def session(server: KnowledgeServer) -> None:
        async with Client(server) as client:  # the SDK's client, in memory
            loaded = await client.call_tool("load_knowledge", {"name": "devolucao-7-dias"})
            assert not loaded.is_error, loaded.content

    with Memory(data) as memory:
        anyio.run(session, KnowledgeServer(memory, AGENT, tenant=TENANT))
    assert "knowledge_retrieved" in tracker.names


def test_the_engine_plugin_reaches_track_event_without_a_host_manager(tmp_path: Path, tracker: Tracker) -> None:
    replay = _replay(tmp_path, ["s1"])
    plugin = KnowledgePlugin(Memory(tmp_path / "data"))
    agent = AgentSpec(AGENT, TENANT, {"model": f"replay:{replay}"})
    try:
        plugin.after_turn(Turn(agent, "s1", "t1", [{"role": "user", "content": "Frete grátis acima de quanto?"},
                                                  {"role": "assistant", "content": "Acima de R$ 199."}]))
        assert plugin.drain(timeout_s=30)
        tool = plugin.tools(agent)[0]
        assert "markdown" in tool.handler(name="frete-gratis-acima-199")
    finally:
        plugin.close()
    assert {"knowledge_learned", "knowledge_retrieved"} <= set(tracker.names)


def test_the_hermes_provider_reaches_track_event(tmp_path: Path, tracker: Tracker,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    import yaml

    from insika_knowledge.hermes.provider import InsikaProvider

    home = tmp_path / "hermes"
    home.mkdir()
    replay = _replay(tmp_path, ["s-h"])
    (home / "config.yaml").write_text(yaml.safe_dump({"memory": {"provider": "insika", "insika": {
        "agent": AGENT, "tenant": TENANT, "data_dir": str(tmp_path / "kb"), "model": f"replay:{replay}"}}}))
    provider = InsikaProvider()
    provider.initialize("s-h", hermes_home=str(home), platform="cli", agent_context="primary")
    try:
        provider.sync_turn("Frete grátis acima de quanto?", "Acima de R$ 199.", session_id="s-h")
        assert provider.flush(30)
        result: dict[str, Any] = json.loads(provider.handle_tool_call("load_knowledge",
                                                                      {"name": "frete-gratis-acima-199"}))
        assert "markdown" in result
    finally:
        provider.shutdown()
    assert {"knowledge_learned", "knowledge_retrieved"} <= set(tracker.names)


def test_the_python_front_door_reaches_track_event(tmp_path: Path, tracker: Tracker) -> None:
    with Memory(tmp_path / "data") as memory:
        memory.put("---\nname: horario-loja\ndescription: Open 9 am to 6 pm.\n---\n\nOpen 9 to 6.\n",
                   agent=AGENT, tenant=TENANT)
        memory.delete(agent=AGENT, name="horario-loja", tenant=TENANT)
    assert tracker.names == ["knowledge_deleted"]
