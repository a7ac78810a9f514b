"""The Hermes Agent memory provider: settings and behaviour here, and the real Hermes 0.19.0.

The last test lets Hermes' own loader and memory manager drive a session, in the virtualenv
``.venv-hermes`` that ``./test.sh`` builds with the pinned ``hermes-agent`` (tests/hermes_venv.py):
the test run itself never installs anything. Without that venv (or with one built for another
pin, Python or dependency list) the test is skipped, except under CI (``$CI`` set), where it fails.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import time
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import hermes_venv
import pytest
import yaml
from click.testing import CliRunner
from fakellm import FakeLLM

from insika_knowledge import Memory
from insika_knowledge.cli import cli
from insika_knowledge.errors import ConfigError, InvalidName, UserError
from insika_knowledge.hermes import provider_class, register
from insika_knowledge.hermes.install import install_plugin
from insika_knowledge.hermes.provider import NOT_AUTHORITATIVE, InsikaProvider
from insika_knowledge.hermes.settings import load_settings

ROOT = Path(__file__).resolve().parents[1]
CANDIDATE = {"name": "frete-gratis-acima-199", "description": "Pedidos acima de R$ 199 têm frete grátis.",
             "type": "policy", "body": "Todo pedido acima de R$ 199 tem frete grátis, aplicado no checkout."}


def write_config(home: Path, section: dict[str, Any]) -> None:
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.yaml").write_text(yaml.safe_dump({"memory": {"provider": "insika", "insika": section}}))


# ---------------------------------------------------------------------------- settings


def test_settings_come_from_hermes_config_then_the_environment(tmp_path: Path) -> None:
    home = tmp_path / "hermes"
    env = {"INSIKA_AGENT": "env-agent", "INSIKA_TENANT": "env-tenant",
           "INSIKA_KNOWLEDGE_HOME": str(tmp_path / "env-data")}
    write_config(home, {})
    fallback = load_settings(home, env)
    assert (fallback.agent, fallback.tenant, fallback.data_dir) == ("env-agent", "env-tenant", tmp_path / "env-data")
    assert load_settings(home, {}).data_dir == home / "insika-knowledge"
    assert load_settings(home, {}).agent == "hermes"
    write_config(home, {"agent": "support", "tenant": "acme", "data_dir": str(tmp_path / "kb"),
                        "model": "openai/gpt-4o-mini", "top_k": 3, "procedures": True})
    chosen = load_settings(home, env)
    assert (chosen.agent, chosen.tenant, chosen.data_dir) == ("support", "acme", tmp_path / "kb")
    assert (chosen.knowledge.model, chosen.knowledge.top_k, chosen.procedures) == ("openai/gpt-4o-mini", 3, True)


def test_a_huge_integer_in_hermes_config_is_a_config_error(tmp_path: Path) -> None:
    home = tmp_path / "hermes"
    home.mkdir()
    (home / "config.yaml").write_text("memory:\n  insika:\n    top_k: " + "9" * 5000 + "\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"line 3, column 12: an integer of 5000 digits"):
        load_settings(home, {})


def test_the_database_comes_from_hermes_config_then_the_environment(tmp_path: Path) -> None:
    home = tmp_path / "hermes"
    env = {"INSIKA_DATABASE_URL": "postgresql://env@db/insika"}
    write_config(home, {})
    assert load_settings(home, {}).database is None  # the SQLite files of data_dir
    assert load_settings(home, env).database == "postgresql://env@db/insika"
    with pytest.raises(UserError, match=r"\$INSIKA_DATABASE_URL '/not/a/url' is not a PostgreSQL URL"):
        load_settings(home, {"INSIKA_DATABASE_URL": "/not/a/url"})
    assert load_settings(home, {"INSIKA_DATABASE_URL": ""}).database is None
    write_config(home, {"database": "postgresql://kb@db/shared"})
    assert load_settings(home, env).database == "postgresql://kb@db/shared"
    write_config(home, {"database": ""})  # set, even empty, it wins: the SQLite files
    assert load_settings(home, env).database is None
    write_config(home, {"database": "sqlite:///tmp/x.db"})
    with pytest.raises(ConfigError, match=r"memory\.insika\.database: must be a postgresql:// URL"):
        load_settings(home, env)


def test_the_provider_keeps_its_memory_in_the_configured_database(tmp_path: Path, database: str | None) -> None:
    home = tmp_path / "hermes"
    write_config(home, {"agent": "loja", "tenant": "t", "data_dir": str(tmp_path / "kb"),
                        **({} if database is None else {"database": database})})
    p = InsikaProvider()
    p.initialize("s1", hermes_home=str(home), platform="cli", agent_context="primary")
    try:
        assert (tmp_path / "kb" / "t.db").exists() == (database is None)
        with contextlib.closing(Memory(tmp_path / "other", database=database)) as shared:
            assert ("t" in shared.tenants()) == (database is not None)
    finally:
        p.shutdown()


@pytest.mark.parametrize(("section", "error", "message"), [
    ({"colour": "blue"}, ConfigError, "memory.insika.colour: unknown key"),
    ({"top_k": 0}, ConfigError, "memory.insika.top_k"),
    ({"procedures": "yes"}, ConfigError, "memory.insika.procedures"),
    ({"tenant": "../x"}, InvalidName, "tenant '../x' is not valid"),
])
def test_bad_settings_are_named(tmp_path: Path, section: dict[str, Any], error: type, message: str) -> None:
    write_config(tmp_path, section)
    with pytest.raises(error, match=message.replace(".", r"\.").replace("(", r"\(")):
        load_settings(tmp_path, {})
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HERMES_HOME", str(tmp_path / "empty"))
        assert InsikaProvider().is_available() is True  # no memory.insika section: defaults
        patch.setenv("HERMES_HOME", str(tmp_path))
        assert InsikaProvider().is_available() is False


def test_save_config_keeps_the_rest_of_the_file(tmp_path: Path) -> None:
    (tmp_path / "config.yaml").write_text("model:\n  default: x\nmemory:\n  provider: insika\n")
    InsikaProvider().save_config({"agent": "support", "data_dir": ""}, str(tmp_path))
    saved = yaml.safe_load((tmp_path / "config.yaml").read_text())
    assert saved == {"model": {"default": "x"}, "memory": {"provider": "insika", "insika": {"agent": "support"}}}
    keys = [f["key"] for f in InsikaProvider().get_config_schema()]
    assert keys == ["agent", "tenant", "data_dir", "model"]


# ---------------------------------------------------------------------------- behaviour


@pytest.fixture
def provider(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[InsikaProvider]:
    home = tmp_path / "hermes"
    write_config(home, {"agent": "loja", "tenant": "t", "data_dir": str(tmp_path / "kb"),
                        "model": "openai/fake-model", "top_k": 2})
    p = InsikaProvider()
    p.initialize("s1", hermes_home=str(home), platform="cli", agent_context="primary")
    yield p
    p.shutdown()


def test_a_turn_is_learned_in_the_background_then_recalled(provider: InsikaProvider,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    with FakeLLM([json.dumps([CANDIDATE])]) as fake:
        monkeypatch.setenv("OPENAI_BASE_URL", fake.base_url)
        assert provider.prefetch("frete grátis?") == ""
        messages = [{"role": "user", "content": "Oi"}, {"role": "assistant", "content": "Olá"},
                    {"role": "user", "content": "Frete grátis?"},
                    {"role": "assistant", "content": "", "tool_calls": [
                        {"id": "c1", "type": "function", "function": {"name": "lookup", "arguments": "{}"}}]},
                    {"role": "tool", "tool_call_id": "c1", "content": "acima de R$ 199"},
                    {"role": "assistant", "content": "Acima de R$ 199."}]
        provider.sync_turn("Frete grátis?", "Acima de R$ 199.", messages=messages)
        provider.on_session_end(messages)
        sent = fake.requests[0]["messages"][-1]["content"]
    assert '"Oi"' not in sent and '"Frete grátis?"' in sent  # only the last turn
    assert '{"name": "lookup", "arguments": {}}' in sent  # OpenAI tool calls flattened, arguments read
    block = provider.prefetch("Tem frete grátis acima de quanto?")
    assert block.startswith(NOT_AUTHORITATIVE + "\n\n<knowledge>") and 'name="frete-gratis-acima-199"' in block
    assert "never a guarantee" in block.split("<knowledge>")[0]  # said before Hermes' "authoritative" wrapper
    # is read as applying to it
    loaded = json.loads(provider.handle_tool_call("load_knowledge", {"name": "frete-gratis-acima-199"}))
    assert loaded["markdown"].startswith("---\nname: frete-gratis-acima-199\n")
    assert "sources: [\"s1\"]" in loaded["markdown"]  # the session Hermes initialised
    assert "error" in json.loads(provider.handle_tool_call("load_knowledge", {"name": 7}))
    for malformed, says in [({}, "needs a concept name"), (None, "takes one argument"), (["x"], "takes one argument"),
                            ({"name": "frete-gratis-acima-199", "extra": 1}, "unknown argument(s): extra")]:
        answered = json.loads(provider.handle_tool_call("load_knowledge", malformed))
        assert set(answered) == {"error"} and says in answered["error"], malformed
    assert "error" in json.loads(provider.handle_tool_call("forget_everything", {}))
    assert [s["name"] for s in provider.get_tool_schemas()] == ["load_knowledge"]


def test_no_writes_outside_the_primary_agent(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "hermes"
    write_config(home, {"agent": "loja", "data_dir": str(tmp_path / "kb"), "model": "openai/fake-model"})
    p = InsikaProvider()
    p.initialize("s1", hermes_home=str(home), agent_context="cron")
    with FakeLLM([json.dumps([CANDIDATE])]) as fake:
        monkeypatch.setenv("OPENAI_BASE_URL", fake.base_url)
        p.sync_turn("Frete grátis?", "Acima de R$ 199.")
        p.on_session_end([])
    p.shutdown()
    assert fake.requests == []


def test_nothing_raises_before_initialise() -> None:
    p = InsikaProvider()
    assert p.prefetch("x") == ""
    p.sync_turn("a", "b")
    assert "error" in json.loads(p.handle_tool_call("load_knowledge", {"name": "x"}))
    p.on_session_end([])
    p.shutdown()


def test_register_hands_over_a_provider_and_the_entry_point_names_this_module() -> None:
    class Context:
        provider: Any = None

        def register_memory_provider(self, provider: Any) -> None:
            self.provider = provider

    ctx = Context()
    register(ctx)
    assert isinstance(ctx.provider, InsikaProvider) and ctx.provider.name == "insika"
    assert provider_class() is InsikaProvider  # Hermes is not importable here
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["entry-points"]["hermes_agent.memory_providers"] == {"insika": "insika_knowledge.hermes"}


def test_install_writes_the_plugin_folder(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["hermes", "install", "--hermes-home", str(tmp_path / "h")])
    assert result.exit_code == 0, result.output
    folder = tmp_path / "h" / "plugins" / "insika"
    assert f"wrote {folder}" in result.output
    shim = (folder / "__init__.py").read_text()
    assert "register_memory_provider" in shim[:8192]  # what Hermes 0.19.0 scans for
    assert yaml.safe_load((folder / "plugin.yaml").read_text())["name"] == "insika"
    assert install_plugin(tmp_path / "h") == folder  # rerunning overwrites
    blocked = tmp_path / "file"
    blocked.write_text("")
    failed = CliRunner().invoke(cli, ["hermes", "install", "--hermes-home", str(blocked / "h")])
    assert failed.exit_code == 2 and "cannot write the Hermes plugin" in failed.output


def test_the_shim_explains_a_missing_package(tmp_path: Path) -> None:
    folder = install_plugin(tmp_path)
    # Neither site-packages nor a checkout on the path (an editable install adds the checkout's
    # folder): insika_knowledge cannot be imported, as in a Hermes environment without it.
    code = (f"import os, sys, logging; sys.path = [p for p in sys.path if 'site-packages' not in p "
            f"and not os.path.isdir(os.path.join(p, 'insika_knowledge'))]; "
            f"logging.basicConfig(); import importlib.util as u; "
            f"s = u.spec_from_file_location('shim', {str(folder / '__init__.py')!r}); m = u.module_from_spec(s); "
            f"s.loader.exec_module(m); m.register(None)")
    done = subprocess.run([sys.executable, "-I", "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "pip install insika-knowledge" in done.stderr


# ---------------------------------------------------------------------------- the real Hermes


@pytest.fixture(scope="session")
def hermes_python() -> Path:
    """The Python of `.venv-hermes` (built by ./test.sh; see tests/hermes_venv.py)."""
    if not hermes_venv.ready():
        state = "stale" if hermes_venv.VENV.exists() else "missing"
        reason = (f"the virtualenv of {hermes_venv.HERMES} ({hermes_venv.VENV.name}) is {state}: "
                  f"./test.sh builds it (or: python tests/hermes_venv.py build)")
        if os.environ.get("CI"):
            pytest.fail(reason, pytrace=False)
        pytest.skip(reason)
    return hermes_venv.PYTHON


def test_the_real_hermes_loads_the_provider_and_runs_a_turn(hermes_python: Path, tmp_path: Path) -> None:
    home = tmp_path / "hermes"
    data = tmp_path / "kb"
    write_config(home, {"agent": "loja-aurora", "tenant": "demo", "data_dir": str(data),
                        "model": "openai/fake-model"})
    result = CliRunner().invoke(cli, ["hermes", "install", "--hermes-home", str(home)])
    assert result.exit_code == 0, result.output
    with FakeLLM([json.dumps([CANDIDATE])]) as fake:
        env = {"PATH": os.environ.get("PATH", ""), "HOME": str(tmp_path), "HERMES_HOME": str(home),
               "PYTHONPATH": str(ROOT), "OPENAI_BASE_URL": fake.base_url, "OPENAI_API_KEY": "test-key"}
        done = subprocess.run([str(hermes_python), str(ROOT / "tests" / "hermes_turn.py")], env=env,
                              cwd=tmp_path, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr[-3000:]
        seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["active"] == "insika"
    assert ["insika", True] in seen["discovered"]
    assert (seen["loaded"], seen["is_memory_provider"], seen["available"]) == ("InsikaMemoryProvider", True, True)
    assert seen["before"] == "" and seen["flushed"] is True
    assert seen["after"].startswith(NOT_AUTHORITATIVE + "\n\n<knowledge>")
    assert 'name="frete-gratis-acima-199"' in seen["after"]
    assert seen["context"].startswith("<memory-context>")
    assert "load_knowledge" in seen["tools"]
    assert seen["loaded_concept"]["name"] == "frete-gratis-acima-199"
    assert "provenance: observed" in seen["loaded_concept"]["markdown"]
    assert "did you mean frete-gratis-acima-199" in seen["unknown"]["error"]
    assert [r["model"] for r in fake.requests] == ["fake-model"]  # one extraction through the fake server
    with contextlib.closing(Memory(data)) as memory:
        assert [c.name for c in memory.concepts(agent="loja-aurora", tenant="demo")] == ["frete-gratis-acima-199"]


def _cancel_trip(task: str) -> list[dict[str, Any]]:
    def call(cid: str, name: str, **arguments: object) -> dict[str, Any]:
        return {"role": "assistant", "content": None, "tool_calls": [
            {"id": cid, "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}]}

    return [{"role": "user", "content": task},
            call("c1", "get_user_details", user_id="ana_lima_1234"),
            {"role": "tool", "tool_call_id": "c1", "content": json.dumps({"reservations": ["ZX9QK2"]})},
            call("c2", "cancel_reservation", reservation_id="ZX9QK2"),
            {"role": "tool", "tool_call_id": "c2", "content": '{"status": "cancelled"}'}]


def test_procedures_on_add_a_recalled_procedure_to_prefetch(tmp_path: Path) -> None:
    from insika_knowledge.procedures import ProceduralMemory
    from insika_knowledge.sessions import Session

    with contextlib.closing(ProceduralMemory.open(tmp_path / "kb", "t")) as skill:
        # three tasks (support counts distinct tasks, not repeated trials of one)
        skill.mine_sessions([Session(f"seed-{i}", _cancel_trip(f"cancel my trip number {i} please"), "success",
                                     metadata={"task_id": f"t{i}"}) for i in range(3)])
    home = tmp_path / "hermes"
    for procedures, expected in ((False, False), (True, True)):
        write_config(home, {"agent": "loja", "tenant": "t", "data_dir": str(tmp_path / "kb"),
                            "procedures": procedures})
        p = InsikaProvider()
        p.initialize("s1", hermes_home=str(home))
        block = p.prefetch("Please cancel my trip")
        p.shutdown()
        assert ("cancel_reservation" in block) is expected, block


# ---------------------------------------------------------------------------- durability

KILLED_CHILD = """
import os, signal, sys, threading
from insika_knowledge.hermes.provider import InsikaProvider
from insika_knowledge.memory import Memory

accepted = threading.Event()

def never(self, tenant, turn):  # the worker claims the turn, and the process dies before it is learned
    accepted.wait(60)
    os.kill(os.getpid(), signal.SIGKILL)

Memory.learn_queued = never
p = InsikaProvider()
p.initialize("s-killed", hermes_home=sys.argv[1], platform="cli", agent_context="primary")
p.sync_turn("Frete grátis acima de quanto?", "Acima de R$ 199 o frete é grátis.", session_id="s-killed")
print("accepted", flush=True)
accepted.set()
signal.pause()
"""


def test_a_turn_hermes_accepted_survives_a_kill_before_extraction(tmp_path: Path) -> None:
    """sync_turn returned: the turn is in the durable outbox, so a kill -9 loses nothing; the next start learns it."""
    home = tmp_path / "hermes"
    write_config(home, {"agent": "loja", "tenant": "t", "data_dir": str(tmp_path / "kb"), "model": "openai/fake-model"})
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HERMES_HOME": str(home)}
    child = subprocess.run([sys.executable, "-c", KILLED_CHILD, str(home)], env=env, capture_output=True,
                           text=True, timeout=120)
    assert child.returncode == -9, child.stderr[-2000:]
    assert child.stdout.strip() == "accepted"
    with FakeLLM([json.dumps([CANDIDATE])]) as fake, pytest.MonkeyPatch.context() as patch:
        patch.setenv("OPENAI_BASE_URL", fake.base_url)
        p = InsikaProvider()
        p.initialize("s-next", hermes_home=str(home), platform="cli", agent_context="primary")
        try:
            with contextlib.closing(Memory(tmp_path / "kb")) as memory:
                deadline = time.monotonic() + 30
                while time.monotonic() < deadline and (not memory.concepts(agent="loja", tenant="t")
                                                       or memory.store("t").outbox().pending()):
                    time.sleep(0.05)
                learned = [c.name for c in memory.concepts(agent="loja", tenant="t")]
                assert learned == ["frete-gratis-acima-199"]
                assert [c.sources for c in memory.concepts(agent="loja", tenant="t")] == [("s-killed",)]
                assert memory.store("t").outbox().pending() == 0
        finally:
            p.shutdown()
