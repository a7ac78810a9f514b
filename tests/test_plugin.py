"""The plugin loaded through its real entry point by a reference host."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fakellm import FakeLLM, Hang
from host import Host

from insika_knowledge.events import Recorder
from insika_knowledge.memory import Memory
from insika_knowledge.plugin import KNOWLEDGE_PRIORITY, plugin
from insika_knowledge.sessions import AgentSpec, Turn

CANDIDATE = {"name": "frete-gratis-acima-199", "description": "Free shipping on orders above R$ 199.",
             "type": "policy", "body": "Orders above R$ 199 ship for free. See [[cep-13-campinas]]."}
LINKED = {"name": "cep-13-campinas", "description": "CEPs 13000-13999 ship from Campinas.",
          "type": "fact", "body": "Campinas DC serves CEPs 13000-13999 in 1-2 business days."}


@pytest.fixture
def host(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    memory = Memory(tmp_path / "data")
    recorder = Recorder()
    memory.events.subscribe(recorder)
    plugin.configure(memory)
    h = Host()
    h.recorder = recorder  # type: ignore[attr-defined]
    yield h
    h.close()
    plugin.close()


def agent(**knowledge) -> AgentSpec:
    block = {"model": "openai/fake-model", **knowledge}
    return AgentSpec("store-support", "loja-a", block)


def turn(spec: AgentSpec, text: str, session: str = "sess_1", turn_id: str = "t1") -> Turn:
    return Turn(spec, session, turn_id, [{"role": "user", "content": text},
                                         {"role": "assistant", "content": "Sim."}])


def test_the_entry_point_loads_the_plugin(host: Host) -> None:
    assert host.loaded == 1
    assert host.pm.get_plugin("knowledge") is plugin


def test_after_turn_returns_before_extraction_runs_then_learns(host: Host, monkeypatch) -> None:
    with FakeLLM([Hang(0.5, json.dumps([CANDIDATE, LINKED]))]) as fake:
        monkeypatch.setenv("OPENAI_BASE_URL", fake.base_url)
        spec = agent()
        host.finish_turn(turn(spec, "frete grátis?"))
        store = plugin.memory.store("loja-a")
        assert store.extraction("store-support", "sess_1", "t1") is None  # still running
        assert plugin.drain(timeout_s=10)
    assert store.get("store-support", "frete-gratis-acima-199") is not None
    assert [p["name"] for p in host.recorder.named("knowledge_learned")] == [  # type: ignore[attr-defined]
        "frete-gratis-acima-199", "cep-13-campinas"]


def test_context_fragment_is_the_block_at_priority_77_with_one_hop(host: Host, monkeypatch) -> None:
    with FakeLLM([json.dumps([CANDIDATE, LINKED])]) as fake:
        monkeypatch.setenv("OPENAI_BASE_URL", fake.base_url)
        host.finish_turn(turn(agent(), "x"))
        plugin.drain()
    fragments = host.prompt_context(turn(agent(top_k=1), "Tem frete grátis acima de quanto?"))
    assert len(fragments) == 1
    fragment = fragments[0]
    assert fragment.priority == KNOWLEDGE_PRIORITY == 77 and not fragment.pinned
    assert '<concept name="frete-gratis-acima-199"' in fragment.text
    assert '<concept name="cep-13-campinas"' in fragment.text  # linked, one hop


def test_load_knowledge_tool_only_when_retrieve_is_on(host: Host, monkeypatch) -> None:
    with FakeLLM([json.dumps([CANDIDATE])]) as fake:
        monkeypatch.setenv("OPENAI_BASE_URL", fake.base_url)
        host.finish_turn(turn(agent(), "x"))
        plugin.drain()
    tools = host.tools(agent())
    assert tools["load_knowledge"].schema["function"]["name"] == "load_knowledge"
    result = host.call_tool(agent(), "load_knowledge", {"name": "frete-gratis-acima-199"})
    assert result["markdown"].startswith("---\nname: frete-gratis-acima-199\n")
    assert host.recorder.named("knowledge_retrieved") == [  # type: ignore[attr-defined]
        {"name": "frete-gratis-acima-199", "agent": "store-support"}]
    assert host.tools(agent(retrieve=False)) == {}
    assert host.prompt_context(turn(agent(retrieve=False), "frete grátis")) == []


def test_absent_block_means_the_feature_is_off(host: Host) -> None:
    off = AgentSpec("store-support", "loja-a", None)
    host.finish_turn(turn(off, "frete"))
    assert plugin.drain(timeout_s=5)
    assert host.prompt_context(turn(off, "frete")) == []
    assert host.tools(off) == {}
    assert not (plugin.memory.directory / "loja-a.db").exists()


def test_extract_off_makes_no_model_call(host: Host, monkeypatch) -> None:
    with FakeLLM([json.dumps([CANDIDATE])]) as fake:
        monkeypatch.setenv("OPENAI_BASE_URL", fake.base_url)
        host.finish_turn(turn(agent(extract=False), "frete"))
        plugin.drain()
        assert fake.requests == []


def test_hooks_never_raise_into_the_engine(host: Host, tmp_path: Path) -> None:
    bad = AgentSpec("store-support", "loja-a", {"top_k": 0, "colour": "red"})
    host.finish_turn(turn(bad, "frete"))
    assert host.prompt_context(turn(bad, "frete")) == []
    degraded = host.recorder.named("knowledge_degraded")  # type: ignore[attr-defined]
    assert degraded and "knowledge.colour: unknown key" in degraded[0]["reason"]
    broken = AgentSpec("../escape", "../../etc", {"model": "openai/fake-model"})
    host.finish_turn(turn(broken, "frete"))  # invalid names: recorded, not raised
    assert plugin.drain(timeout_s=5)


def test_a_failing_model_is_recorded_not_raised(host: Host, monkeypatch) -> None:
    with FakeLLM(["not json at all"]) as fake:
        monkeypatch.setenv("OPENAI_BASE_URL", fake.base_url)
        host.finish_turn(turn(agent(), "frete"))
        assert plugin.drain(timeout_s=10)
    record = plugin.memory.store("loja-a").extraction("store-support", "sess_1", "t1")
    assert record.outcome == "model_malformed" and record.retryable


# ----------------------------------------------------------------------------- attacks


def _degraded(host: Host) -> list[dict]:
    return host.recorder.named("knowledge_degraded")  # type: ignore[attr-defined]


def test_an_unusable_data_directory_degrades_every_hook(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("x", encoding="utf-8")
    memory = Memory(blocker / "data")  # a data directory under a regular file
    recorder = Recorder()
    memory.events.subscribe(recorder)
    plugin.configure(memory)
    host = Host()
    try:
        spec = agent()
        for _ in range(2):
            assert host.prompt_context(turn(spec, "frete grátis?")) == []
            assert host.tools(spec) == {}
            host.finish_turn(turn(spec, "frete"))
            assert plugin.drain(timeout_s=10)
    finally:
        host.close()
        plugin.close()
    degraded = recorder.named("knowledge_degraded")
    assert {d["feature"] for d in degraded} == {"retrieve", "tools", "extract"}
    assert len(degraded) == 3  # once per cause, not once per call
    assert all(str(blocker) in d["reason"] for d in degraded)


def test_a_bad_tenant_in_tools_degrades_instead_of_raising(host: Host) -> None:
    spec = AgentSpec("store-support", "../escape", {"model": "openai/fake-model"})
    assert host.tools(spec) == {}
    assert host.tools(AgentSpec("../x", "loja-a", {"model": "openai/fake-model"})) == {}
    features = [d["feature"] for d in _degraded(host)]
    assert features == ["tools", "tools"]


@pytest.mark.parametrize(
    "messages",
    [None, [{"role": "user", "content": 5}], ["hello"], [{"role": "user", "content": ["hi"]}],
     [{"role": "user", "content": [{"text": 5}]}], "not a list", [None, 3.5]],
)
def test_malformed_turns_never_raise_into_the_engine(host: Host, messages) -> None:
    spec = agent()
    bad = Turn(spec, "sess_1", "t1", messages)
    assert host.prompt_context(bad) == []
    host.finish_turn(bad)
    assert plugin.drain(timeout_s=10)
    assert bad.last_user_text() == ""


def test_last_user_text_reads_text_parts() -> None:
    turn_ = Turn(agent(), "s", "t", [{"role": "user", "content": [{"text": "a"}, "x", {"text": "b"}]},
                                     "junk"])
    assert turn_.last_user_text() == "a b"


def _request(session: str, text: str) -> tuple[dict, dict]:
    body = {"model": "m", "messages": [{"role": "user", "content": text}]}
    return body, {"x-ace-session": session}


def test_request_hook_runs_procedural_memory_and_never_raises(host: Host) -> None:
    from insika_knowledge.procedures import ProceduresConfig

    plugin.procedures_config = ProceduresConfig(mode="shadow")
    body, headers = _request("s-1", "Please cancel my reservation ABC123")
    returned, stage = host.pm.hook.request(body=body, headers=headers)
    assert returned == body  # shadow never rewrites
    assert stage.to_dict()["action"] in {"hit", "miss"}
    assert stage.to_dict()["session_scoped"] is True
    broken, stage = host.pm.hook.request(body="not a request body", headers=None)
    assert broken == "not a request body"
    assert stage is None or stage.to_dict()["action"] == "failed"
    plugin.procedures_config = ProceduresConfig(mode="off")
    plugin._skills.clear()
    assert host.pm.hook.request(body=body, headers=headers)[1] is None


def test_request_hook_refuses_a_bad_tenant_without_raising(host: Host) -> None:
    body, headers = _request("s-1", "hello")
    returned, stage = host.pm.hook.request(body=body, headers={**headers, "x-insika-tenant": "../x"})
    assert returned is body and stage is None
    assert any("procedures" == p["feature"] for p in host.recorder.named("knowledge_degraded"))  # type: ignore[attr-defined]
