"""The plugin loaded through its real entry point by a reference host."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pluggy
import pytest
from fakellm import FakeLLM, Hang
from host import Host

from insika_knowledge import hookspecs, plugins
from insika_knowledge.events import Event, KnowledgeDeleted, Recorder
from insika_knowledge.hookspecs import AgentSpec, Turn, hookimpl
from insika_knowledge.ids import DEFAULT_TENANT
from insika_knowledge.memory import Memory
from insika_knowledge.plugin import KNOWLEDGE_PRIORITY, KnowledgePlugin, plugin
from insika_knowledge.plugins import load_plugins

CANDIDATE = {"name": "frete-gratis-acima-199", "description": "Free shipping on orders above R$ 199.",
             "type": "policy", "body": "Orders above R$ 199 ship for free. See [[cep-13-campinas]]."}
LINKED = {"name": "cep-13-campinas", "description": "CEPs 13000-13999 ship from Campinas.",
          "type": "fact", "body": "Campinas DC serves CEPs 13000-13999 in 1-2 business days."}


class RecordingHost(Host):
    """The reference host, plus the recorder subscribed to the plugin's event bus."""

    recorder: Recorder


@pytest.fixture
def host(tmp_path: Path) -> Iterator[RecordingHost]:
    memory = Memory(tmp_path / "data")
    recorder = Recorder()
    memory.events.subscribe(recorder)
    plugin.configure(memory)
    assert plugin.prepare(["loja-a"]) == []  # opened at start-up, as an engine does
    h = RecordingHost()
    h.recorder = recorder
    yield h
    h.close()
    plugin.close()


def agent(**knowledge: Any) -> AgentSpec:
    block = {"model": "openai/fake-model", **knowledge}
    return AgentSpec("store-support", "loja-a", block)


def turn(spec: AgentSpec, text: str, session: str = "sess_1", turn_id: str = "t1", floor: int = 199) -> Turn:
    return Turn(spec, session, turn_id, [
        {"role": "user", "content": text},
        {"role": "assistant", "content": f"Sim: pedidos acima de R$ {floor} têm frete grátis, e os CEPs "
                                         "13000-13999 saem de Campinas em 1 a 2 dias úteis."}])


def test_the_entry_point_loads_the_plugin(host: RecordingHost) -> None:
    assert host.loaded == 1
    assert host.pm.get_plugin("knowledge") is plugin


def test_after_turn_returns_before_extraction_runs_then_learns(
    host: RecordingHost, monkeypatch: pytest.MonkeyPatch
) -> None:
    with FakeLLM([Hang(0.5, json.dumps([CANDIDATE, LINKED]))]) as fake:
        monkeypatch.setenv("OPENAI_BASE_URL", fake.base_url)
        spec = agent()
        host.finish_turn(turn(spec, "frete grátis?"))
        store = plugin.memory.store("loja-a")
        assert store.extraction("store-support", "sess_1", "t1") is None  # still running
        assert plugin.drain(timeout_s=10)
    assert store.get("store-support", "frete-gratis-acima-199") is not None
    assert [p["name"] for p in host.recorder.named("knowledge_learned")] == [
        "frete-gratis-acima-199", "cep-13-campinas"]


def test_context_fragment_is_the_block_at_priority_77_with_one_hop(
    host: RecordingHost, monkeypatch: pytest.MonkeyPatch
) -> None:
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


def test_load_knowledge_tool_only_when_retrieve_is_on(host: RecordingHost, monkeypatch: pytest.MonkeyPatch) -> None:
    with FakeLLM([json.dumps([CANDIDATE])]) as fake:
        monkeypatch.setenv("OPENAI_BASE_URL", fake.base_url)
        host.finish_turn(turn(agent(), "x"))
        plugin.drain()
    tools = host.tools(agent())
    assert tools["load_knowledge"].schema["function"]["name"] == "load_knowledge"
    result = host.call_tool(agent(), "load_knowledge", {"name": "frete-gratis-acima-199"})
    assert result["markdown"].startswith("---\nname: frete-gratis-acima-199\n")
    assert host.recorder.named("knowledge_retrieved") == [
        {"name": "frete-gratis-acima-199", "agent": "store-support"}]
    assert host.tools(agent(retrieve=False)) == {}
    assert host.prompt_context(turn(agent(retrieve=False), "frete grátis")) == []


def test_absent_block_means_the_feature_is_off(host: RecordingHost) -> None:
    off = AgentSpec("store-support", "loja-off", None)  # a tenant the host did not prepare
    host.finish_turn(turn(off, "frete"))
    assert plugin.drain(timeout_s=5)
    assert host.prompt_context(turn(off, "frete")) == []
    assert host.tools(off) == {}
    assert not (plugin.memory.directory / "loja-off.db").exists()


def test_extract_off_makes_no_model_call(host: RecordingHost, monkeypatch: pytest.MonkeyPatch) -> None:
    with FakeLLM([json.dumps([CANDIDATE])]) as fake:
        monkeypatch.setenv("OPENAI_BASE_URL", fake.base_url)
        host.finish_turn(turn(agent(extract=False), "frete"))
        plugin.drain()
        assert fake.requests == []


def test_hooks_never_raise_into_the_engine(host: RecordingHost, tmp_path: Path) -> None:
    bad = AgentSpec("store-support", "loja-a", {"top_k": 0, "colour": "red"})
    host.finish_turn(turn(bad, "frete"))
    assert host.prompt_context(turn(bad, "frete")) == []
    degraded = host.recorder.named("knowledge_degraded")
    assert degraded and "knowledge.colour: unknown key" in degraded[0]["reason"]
    broken = AgentSpec("../escape", "../../etc", {"model": "openai/fake-model"})
    host.finish_turn(turn(broken, "frete"))  # invalid names: recorded, not raised
    assert plugin.drain(timeout_s=5)


def test_a_failing_model_is_recorded_not_raised(host: RecordingHost, monkeypatch: pytest.MonkeyPatch) -> None:
    with FakeLLM(["not json at all"]) as fake:
        monkeypatch.setenv("OPENAI_BASE_URL", fake.base_url)
        host.finish_turn(turn(agent(), "frete"))
        assert plugin.drain(timeout_s=10)
    record = plugin.memory.store("loja-a").extraction("store-support", "sess_1", "t1")
    assert record is not None
    assert record.outcome == "model_malformed" and record.retryable


# ----------------------------------------------------------------------------- attacks


def _degraded(host: RecordingHost) -> list[dict[str, Any]]:
    return host.recorder.named("knowledge_degraded")


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


def test_a_bad_tenant_in_tools_degrades_instead_of_raising(host: RecordingHost) -> None:
    spec = AgentSpec("store-support", "../escape", {"model": "openai/fake-model"})
    assert host.tools(spec) == {}
    assert host.tools(AgentSpec("../x", "loja-a", {"model": "openai/fake-model"})) == {}
    features = [d["feature"] for d in _degraded(host)]
    assert features == ["tools", "tools"]


@pytest.mark.parametrize(
    ("messages", "text"),
    [(None, ""), ([{"role": "user", "content": 5}], ""), (["hello"], ""),
     ([{"role": "user", "content": ["hi"]}], "hi"),  # a bare string part is text (insika_knowledge.wire.messages)
     ([{"role": "user", "content": [{"text": 5}]}], ""), ("not a list", ""), ([None, 3.5], "")],
)
def test_malformed_turns_never_raise_into_the_engine(host: RecordingHost, messages: Any, text: str) -> None:
    spec = agent()
    bad = Turn(spec, "sess_1", "t1", messages)
    assert host.prompt_context(bad) == []
    host.finish_turn(bad)
    assert plugin.drain(timeout_s=10)
    assert bad.last_user_text() == text


def test_last_user_text_reads_text_parts() -> None:
    messages: Any = [{"role": "user", "content": [{"text": "a"}, "x", {"text": "b"}]}, "junk"]
    turn_ = Turn(agent(), "s", "t", messages)
    assert turn_.last_user_text() == "a\nx\nb"  # one line per part (insika_knowledge.wire.messages.SEPARATOR)


def _request(session: str, text: str) -> tuple[dict[str, Any], dict[str, str]]:
    body = {"model": "m", "messages": [{"role": "user", "content": text}]}
    return body, {"x-ace-session": session}


def test_request_hook_runs_procedural_memory_and_never_raises(host: RecordingHost) -> None:
    from insika_knowledge.procedures import ProceduresConfig

    plugin.procedures_config = ProceduresConfig(mode="shadow")
    # No learning left running from earlier tests: it would hold the tenant's write lock past
    # the hook's budget, and the request would go on degraded (stage None) as documented.
    assert plugin.drain(timeout_s=10)
    # Its store open first: on a loaded machine the first request may find it still opening
    # within the hook's budget and go on degraded (stage None), which is not what this tests.
    plugin.memory.tenant("default")
    body, headers = _request("s-1", "Please cancel my reservation ABC123")
    returned, stage = host.pm.hook.request(body=body, headers=headers)
    assert returned == body  # shadow never rewrites
    assert stage.to_dict()["action"] in {"hit", "miss"}
    assert stage.to_dict()["session_scoped"] is True
    broken, stage = host.pm.hook.request(body="not a request body", headers=None)
    assert broken == "not a request body"
    assert stage is None or stage.to_dict()["action"] == "failed"
    plugin.procedures_config = ProceduresConfig(mode="off")  # the next request uses it
    assert host.pm.hook.request(body=body, headers=headers)[1] is None


def test_request_hook_refuses_a_bad_tenant_without_raising(host: RecordingHost) -> None:
    body, headers = _request("s-1", "hello")
    returned, stage = host.pm.hook.request(body=body, headers={**headers, "x-insika-tenant": "../x"})
    assert returned is body and stage is None
    assert any("procedures" == p["feature"] for p in host.recorder.named("knowledge_degraded"))


# ----------------------------------------------------------------------------- track_event


class Tracker:
    """A plugin that only implements ``track_event`` (an analytics or OpenTelemetry plugin)."""

    def __init__(self) -> None:
        self.events: list[Event] = []

    @hookimpl
    def track_event(self, event: Event) -> None:
        self.events.append(event)

    def named(self, name: str) -> list[dict[str, Any]]:
        return [e.payload() for e in self.events if e.name == name]


class Broken:
    """A plugin whose ``track_event`` always raises."""

    calls = 0

    @hookimpl
    def track_event(self, event: Event) -> None:
        Broken.calls += 1
        raise RuntimeError(f"analytics is down ({event.name})")


@pytest.fixture
def tracker(host: RecordingHost) -> Iterator[Tracker]:
    """A `Tracker` registered with the plugin's manager, as if installed from an entry point."""
    tracker = Tracker()
    plugin.plugin_manager.register(tracker)
    yield tracker
    plugin.plugin_manager.unregister(tracker)


CONTRADICTION = {**CANDIDATE, "description": "Free shipping only above R$ 299.",
                 "body": "Orders above R$ 299 ship for free; below that the customer pays."}


def test_every_knowledge_event_reaches_track_event(
    host: RecordingHost, tracker: Tracker, monkeypatch: pytest.MonkeyPatch
) -> None:
    with FakeLLM([json.dumps([CANDIDATE, LINKED]), json.dumps([CONTRADICTION]),
                  json.dumps({"verdict": "contradicting"})]) as fake:
        monkeypatch.setenv("OPENAI_BASE_URL", fake.base_url)
        host.finish_turn(turn(agent(), "frete grátis?"))
        assert plugin.drain(timeout_s=10)
        host.finish_turn(turn(agent(), "frete grátis?", session="sess_2", floor=299))  # the rule changed
        assert plugin.drain(timeout_s=10)
    host.call_tool(agent(), "load_knowledge", {"name": "frete-gratis-acima-199"})
    plugin.memory.delete("cep-13-campinas", agent="store-support", actor="op", tenant="loja-a")
    host.prompt_context(turn(AgentSpec("store-support", "loja-a", {"colour": "red"}), "frete"))
    assert tracker.named("knowledge_learned") == [
        {"name": "frete-gratis-acima-199", "type": "policy", "agent": "store-support"},
        {"name": "cep-13-campinas", "type": "fact", "agent": "store-support"}]
    assert tracker.named("knowledge_conflict") == [{"name": "frete-gratis-acima-199", "agent": "store-support",
                                                    "why": "the merge model said the claims contradict each other"}]
    assert tracker.named("knowledge_retrieved") == [{"name": "frete-gratis-acima-199", "agent": "store-support"}]
    assert tracker.named("knowledge_deleted") == [{"name": "cep-13-campinas", "agent": "store-support"}]
    assert [e["outcome"] for e in tracker.named("knowledge_extracted")] == ["ok", "ok"]
    assert [e["feature"] for e in tracker.named("knowledge_degraded")] == ["config"]
    # Exactly what the private bus carried, in the same order, as the same objects' payloads.
    assert [(e.name, e.payload()) for e in tracker.events] == host.recorder.events


def test_a_raising_track_event_never_breaks_the_write_path(
    host: RecordingHost, tracker: Tracker, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    broken = Broken()
    Broken.calls = 0
    plugin.plugin_manager.register(broken)  # registered last: pluggy calls it first
    try:
        with FakeLLM([json.dumps([CANDIDATE])]) as fake:
            monkeypatch.setenv("OPENAI_BASE_URL", fake.base_url)
            host.finish_turn(turn(agent(), "frete grátis?"))
            assert plugin.drain(timeout_s=10)
        result = host.call_tool(agent(), "load_knowledge", {"name": "frete-gratis-acima-199"})
    finally:
        plugin.plugin_manager.unregister(broken)
    store = plugin.memory.store("loja-a")
    record = store.extraction("store-support", "sess_1", "t1")
    assert record is not None and record.outcome == "ok" and record.written == 1
    assert store.get("store-support", "frete-gratis-acima-199") is not None
    assert result["markdown"].startswith("---\nname: frete-gratis-acima-199\n")
    assert Broken.calls == len(tracker.events) == 3  # learned, extracted, retrieved
    assert [e.name for e in tracker.events] == ["knowledge_learned", "knowledge_extracted", "knowledge_retrieved"]
    assert _degraded(host) == []  # a plugin's failure is logged, not turned into degradation
    assert "analytics is down (knowledge_learned)" in caplog.text


def test_a_host_may_hand_its_own_plugin_manager(tmp_path: Path) -> None:
    manager = pluggy.PluginManager(hookspecs.PROJECT)
    manager.add_hookspecs(hookspecs)
    tracker = Tracker()
    manager.register(tracker)
    memory = Memory(tmp_path / "data")
    own = KnowledgePlugin(memory, plugin_manager=manager)
    try:
        memory.events.emit(KnowledgeDeleted(concept="x", agent="a"))
        second = Memory(tmp_path / "data2")
        own.configure(second)  # the manager is kept; the old memory's bus is let go
        memory.events.emit(KnowledgeDeleted(concept="old", agent="a"))
        second.events.emit(KnowledgeDeleted(concept="y", agent="a"))
    finally:
        own.close()
    second.events.emit(KnowledgeDeleted(concept="closed", agent="a"))
    assert [e.payload()["name"] for e in tracker.events] == ["x", "y"]


def _install(site: Path, name: str, source: str) -> None:
    """Install a one-module distribution `name` with an ``insika.plugins`` entry point into `site`."""
    info = site / f"{name}-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n", encoding="utf-8")
    (info / "entry_points.txt").write_text(f"[insika.plugins]\n{name} = {name}_plugin:tracker\n",
                                           encoding="utf-8")
    (site / f"{name}_plugin.py").write_text(source, encoding="utf-8")


TRACKER_SOURCE = (
    "from insika_knowledge.hookspecs import hookimpl\n"
    "class Tracker:\n"
    "    def __init__(self):\n        self.names = []\n"
    "    @hookimpl\n"
    "    def track_event(self, event):\n        self.names.append(event.name)\n"
    "tracker = Tracker()\n"
)


def test_installed_plugins_are_loaded_from_the_entry_point_group(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A package that declares an ``insika.plugins`` entry point receives events, no host needed."""
    site = tmp_path / "site"
    _install(site, "fake_tracker", TRACKER_SOURCE)
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.setattr(plugins, "_default", None)  # the process's manager, loaded after the install
    manager = load_plugins()
    installed = manager.get_plugin("fake_tracker")
    assert installed is not None
    assert manager.get_plugin("knowledge") is plugin
    memory = Memory(tmp_path / "data")
    own = KnowledgePlugin(memory)
    try:
        assert installed in own.plugin_manager.get_plugins()
        memory.events.emit(KnowledgeDeleted(concept="x", agent="a"))
    finally:
        own.close()
        sys.modules.pop("fake_tracker_plugin", None)
    assert installed.names == ["knowledge_deleted"]


def test_agent_spec_defaults_to_the_stores_default_tenant() -> None:
    assert AgentSpec("a").tenant == DEFAULT_TENANT


def test_a_plugin_that_fails_to_load_does_not_take_the_knowledge_plugin_down(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    site = tmp_path / "site"
    _install(site, "broken_tracker", "raise ImportError('a missing dependency')\n")
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.setattr(plugins, "_default", None)  # the process's manager, loaded after the install
    manager = load_plugins()
    assert "could not load every insika.plugins entry point" in caplog.text
    assert manager.get_plugin("broken_tracker") is None
    memory = Memory(tmp_path / "data")
    own = KnowledgePlugin(memory)  # loads the broken entry point again: logged, not raised
    try:
        assert own.prepare(["loja-a"]) == []
        assert own.tools(agent()) != []
    finally:
        own.close()


def test_a_malformed_load_knowledge_call_answers_an_error(host: RecordingHost) -> None:
    """The model writes the call's arguments: a missing, extra or wrong-typed one is an
    ``{"error"}`` the model reads, as docs/engine.md says, never an exception in the engine."""
    plugin.memory.put("---\nname: frete-gratis\ndescription: Free shipping above R$ 199.\n---\n\n"
                      "Orders above R$ 199 ship for free.\n", agent="store-support", tenant="loja-a")
    handler = host.tools(agent())["load_knowledge"].handler
    assert handler(name="frete-gratis")["name"] == "frete-gratis"
    assert handler("frete-gratis")["name"] == "frete-gratis"  # positional, as a plain function takes it
    # the arguments as one object, as an engine holds them (a newcomer passed the dict and got an error)
    assert handler({"name": "frete-gratis"})["name"] == "frete-gratis"
    assert handler('{"name": "frete-gratis"}')["name"] == "frete-gratis"  # OpenAI's arguments are JSON text
    for args, kwargs, says in [
        ((), {}, "needs a concept name"),
        (({"name": "frete-gratis", "extra": 1},), {}, "unknown argument(s): extra"),
        (('{"name": 5}',), {}, "needs a concept name"),
        (('{"name": "frete-gratis"',), {}, "takes one argument"),  # JSON text cut short
        ((), {"name": "frete-gratis", "extra": 1}, "unknown argument(s): extra"),
        (("frete-gratis", "again"), {}, "takes one argument"),
        (("frete-gratis",), {"name": "frete-gratis"}, "takes one argument"),
        ((), {"name": 123}, "needs a concept name"),
        ((), {"name": None}, "needs a concept name"),
        ((), {"nome": "frete-gratis"}, "unknown argument(s): nome"),
    ]:
        result = handler(*args, **kwargs)
        assert set(result) == {"error"} and says in result["error"], (args, kwargs, result)
    assert host.recorder.named("knowledge_retrieved") == [
        {"name": "frete-gratis", "agent": "store-support"}] * 4


def test_a_failing_load_knowledge_call_answers_an_error_and_degrades(
    host: RecordingHost, monkeypatch: pytest.MonkeyPatch
) -> None:
    from insika_knowledge.retrieve import Retriever

    handler = host.tools(agent())["load_knowledge"].handler

    def broken(*args: Any, **kwargs: Any) -> dict[str, Any]:
        raise OSError("disk gone")

    monkeypatch.setattr(Retriever, "load_knowledge", broken)
    result = handler(name="frete-gratis")
    assert set(result) == {"error"} and "unavailable" in result["error"]
    assert [d["feature"] for d in _degraded(host)] == ["load_knowledge"]


def test_after_turn_reports_a_role_it_cannot_read_once(host: RecordingHost, monkeypatch: pytest.MonkeyPatch) -> None:
    # Left from an attack: a host that calls its assistant "bot" had every rule held in
    # quarantine (its words are no one's) and never knew why; `Memory.learn` refuses it.
    spec = agent(extract=False, retrieve=False)  # the report needs no extraction
    said = [{"role": "user", "content": "frete?"}, {"role": "bot", "content": "Acima de R$ 199 é grátis."}]
    for turn_id in ("t1", "t2"):
        host.finish_turn(Turn(spec, "sess_1", turn_id, said))
    assert host.recorder.named("knowledge_degraded") == []  # extraction off: nothing read, nothing said
    with FakeLLM([json.dumps([])] * 2) as fake:
        monkeypatch.setenv("OPENAI_BASE_URL", fake.base_url)
        for turn_id in ("t3", "t4"):
            host.finish_turn(Turn(agent(), "sess_1", turn_id, said))
        assert plugin.drain(timeout_s=10)
    (report,) = host.recorder.named("knowledge_degraded")
    assert report["feature"] == "extract" and "'bot'" in report["reason"] and "no one's" in report["reason"]
    # a role that is no text is named too, and the agent is told once whatever the roles
    other = AgentSpec("other-agent", "loja-a", {"model": "openai/fake-model"})
    with FakeLLM([json.dumps([])] * 2) as fake:
        monkeypatch.setenv("OPENAI_BASE_URL", fake.base_url)
        for turn_id, role in (("t5", ["bot"]), ("t6", "agent-1")):
            host.finish_turn(Turn(other, "sess_2", turn_id, [{"role": role, "content": "Oi"}]))
        assert plugin.drain(timeout_s=10)
    reports = [r for r in host.recorder.named("knowledge_degraded") if r["agent"] == "other-agent"]
    assert len(reports) == 1 and "['bot']" in reports[0]["reason"], reports
