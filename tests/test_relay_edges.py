"""The relay's edges (issues 24 and 27): no turn lost, no door open, every failure said out
loud; through the official OpenAI and Anthropic SDKs against a fake upstream on loopback.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anthropic
import httpx
import openai
import pytest
import relayhelp
from docexamples import python_example, run_example
from fakellm import FakeLLM
from fakeupstream import FakeUpstream, Text
from relayhelp import AGENT, IDENTITY, KEY, QUESTION, TENANT, Running, running_relay

from insika_knowledge.httplimits import Limits
from insika_knowledge.relay.access import Access
from insika_knowledge.relay.agents import TenantAccess

#: The module's fake upstream (`relayhelp`'s fixtures).
shared_upstream, upstream = relayhelp.shared_upstream, relayhelp.upstream


def _importable(module: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(module) is not None


ANSWER = "Campinas entrega em 1-2 dias úteis."
#: What an SDK raises reading a stream cut without its end (openai 3 reads through httpx2).
BROKEN: tuple[type[BaseException], ...] = (
    httpx.RemoteProtocolError, openai.APIConnectionError, anthropic.APIConnectionError,
    *[__import__(m).RemoteProtocolError for m in ("httpx2",) if _importable(m)],
)
MESSAGES: Any = [{"role": "user", "content": QUESTION}]
CANDIDATE = {"name": "frete-gratis-acima-299", "description": "Free shipping above R$ 299 in the south.",
             "type": "policy", "body": "Orders above R$ 299 to the south ship for free."}


@pytest.fixture
def relay(tmp_path: Path, upstream: FakeUpstream) -> Iterator[Running]:
    with running_relay(tmp_path / "data", upstream.url) as running:
        yield running


class Submits:
    """Counts the relay's hand-offs per session (a turn handed off twice would show here)."""

    def __init__(self, relay: Running, monkeypatch: pytest.MonkeyPatch):
        self.sessions: list[str] = []
        tenant = relay.relay.memory.tenant(TENANT)
        original = tenant.submit

        def counted(turn: Any, **kw: Any) -> Any:
            done = original(turn, **kw)  # a hand-off the busy lock refused (StorageBusy) is tried again: not one
            self.sessions.append(turn.session_id)
            return done

        monkeypatch.setattr(tenant, "submit", counted)


def learned_sessions(relay: Running) -> list[str]:
    assert relay.relay.memory.drain(timeout_s=20)
    return sorted(r.session_id for r in relay.store().extractions(AGENT))


def wait_for(check: Any, timeout_s: float = 10.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not check() and time.monotonic() < deadline:
        time.sleep(0.02)


# ---------------------------------------------------------------- a finished answer is learned exactly once


@pytest.mark.parametrize("linger_ms", [0, 10, 50])
def test_openai_sdk_streams_closed_at_done_are_learned_once(relay: Running, upstream: FakeUpstream,
                                                            monkeypatch: pytest.MonkeyPatch, linger_ms: int) -> None:
    # The SDK stops reading at [DONE] and closes; the upstream ends its body later (or not).
    upstream.replies = [Text(ANSWER, linger_s=linger_ms / 1000)]
    submits = Submits(relay, monkeypatch)
    with FakeLLM([json.dumps([CANDIDATE])]) as extractor:
        monkeypatch.setenv("OPENAI_BASE_URL", extractor.base_url)
        client = relay.openai()
        sessions = [f"done-{linger_ms}-{i}" for i in range(3)]
        for session in sessions:
            chunks = client.chat.completions.create(model="m", messages=MESSAGES, stream=True,
                                                    extra_headers={**IDENTITY, "x-ace-session": session})
            assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == ANSWER
        assert learned_sessions(relay) == sorted(sessions)
    assert sorted(submits.sessions) == sorted(sessions)  # once each


@pytest.mark.parametrize("api", ["openai", "anthropic"])
@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
def test_every_finished_answer_is_learned_once(relay: Running, upstream: FakeUpstream,
                                               monkeypatch: pytest.MonkeyPatch, api: str, stream: bool) -> None:
    upstream.replies = [Text(ANSWER, linger_s=0.03)]
    submits = Submits(relay, monkeypatch)
    session = f"once-{api}-{stream}"
    headers = {**IDENTITY, "x-ace-session": session}
    if api == "openai":
        client = relay.openai()
        if stream:
            list(client.chat.completions.create(model="m", messages=MESSAGES, stream=True, extra_headers=headers))
        else:
            raw = client.chat.completions.with_raw_response.create(model="m", messages=MESSAGES, extra_headers=headers)
            assert raw.headers["x-insika-learning"] == "queued"  # durable before the answer
    else:
        claude = relay.anthropic()
        if stream:
            with claude.messages.stream(model="m", max_tokens=50, messages=MESSAGES, extra_headers=headers) as events:
                assert "".join(events.text_stream) == ANSWER
        else:
            raw = claude.messages.with_raw_response.create(model="m", max_tokens=50, messages=MESSAGES,
                                                           extra_headers=headers)
            assert raw.headers["x-insika-learning"] == "queued"
    assert relay.relay.memory.drain(timeout_s=20)
    wait_for(lambda: submits.sessions)
    assert submits.sessions == [session]
    assert [r.session_id for r in relay.store().extractions(AGENT)] == [session]


@pytest.mark.parametrize("api", ["openai", "anthropic"])
def test_a_client_gone_mid_stream_learns_nothing(relay: Running, upstream: FakeUpstream,
                                                 monkeypatch: pytest.MonkeyPatch, api: str) -> None:
    upstream.replies = [Text("palavra " * 200, pieces=200, delay_s=0.01)]
    submits = Submits(relay, monkeypatch)
    if api == "openai":
        chunks = relay.openai().chat.completions.create(model="m", messages=MESSAGES, stream=True,
                                                        extra_headers=IDENTITY)
        next(iter(chunks))
        chunks.close()
    else:
        with relay.anthropic().messages.stream(model="m", max_tokens=50, messages=MESSAGES,
                                               extra_headers=IDENTITY) as events:
            next(iter(events.text_stream))
    wait_for(lambda: upstream.cancelled == 1)
    assert upstream.cancelled == 1 and upstream.finished == 0
    time.sleep(0.2)
    assert submits.sessions == [] and learned_sessions(relay) == []


# ---------------------------------------------------------------- a broken upstream is a broken answer


def test_an_upstream_stream_that_breaks_makes_the_openai_sdk_raise(relay: Running, upstream: FakeUpstream,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    upstream.replies = [Text("palavra " * 20, pieces=10, break_after=4)]
    submits = Submits(relay, monkeypatch)
    direct = openai.OpenAI(base_url=upstream.url + "/v1", api_key=KEY, max_retries=0)
    for client in (direct, relay.openai()):  # as the upstream itself would, through the relay
        received: list[str] = []
        with pytest.raises(BROKEN):
            for chunk in client.chat.completions.create(model="m", messages=MESSAGES, stream=True,
                                                        extra_headers=IDENTITY):
                received.append(chunk.choices[0].delta.content or "")
        assert received  # part of the answer came, then the failure
    assert submits.sessions == []  # a broken answer is not learned


def test_an_upstream_stream_that_breaks_makes_the_anthropic_sdk_raise(relay: Running,
                                                                       upstream: FakeUpstream) -> None:
    upstream.replies = [Text("palavra " * 20, pieces=10, break_after=5)]
    with pytest.raises(BROKEN):
        with relay.anthropic().messages.stream(model="m", max_tokens=50, messages=MESSAGES,
                                               extra_headers=IDENTITY) as events:
            "".join(events.text_stream)


# ---------------------------------------------------------------- the memory's state, said


@pytest.mark.parametrize("headers, state", [
    ({}, "on"),
    ({"x-insika-agent": ""}, "off: no agent"),
    ({"x-insika-agent": "somebody-else"}, "off: unknown agent"),
    ({"x-insika-agent": "no-memory-agent"}, "off: agent has no knowledge block"),
    ({"x-insika-tenant": "loja-z"}, "off: unknown tenant"),
    ({"x-insika-memory": "off"}, "off: by request"),
])
def test_the_response_says_the_memory_state(relay: Running, upstream: FakeUpstream, headers: dict[str, str],
                                            state: str) -> None:
    raw = relay.openai().chat.completions.with_raw_response.create(
        model="m", messages=MESSAGES, extra_headers={**IDENTITY, **headers})
    assert raw.parse().choices[0].message.content == "Hello there."
    assert raw.headers["x-insika-memory"] == state
    assert not (relay.relay.memory.directory / "loja-z.db").exists()  # an unknown tenant is never created


def test_a_degraded_stage_is_in_the_memory_state(relay: Running, upstream: FakeUpstream,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    from insika_knowledge.retrieve import Retriever

    def broken(*args: object, **kw: object) -> str:
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(Retriever, "block", broken)
    with relay.anthropic().messages.stream(model="m", max_tokens=50, messages=MESSAGES,
                                           extra_headers=IDENTITY) as events:
        "".join(events.text_stream)
        assert events.response.headers["x-insika-memory"] == "degraded: retrieve"


def test_no_learn_runs_recall_only(tmp_path: Path, upstream: FakeUpstream) -> None:
    with running_relay(tmp_path / "data", upstream.url, learns=False) as relay:
        raw = relay.openai().chat.completions.with_raw_response.create(model="m", messages=MESSAGES,
                                                                         extra_headers=IDENTITY)
        assert raw.headers["x-insika-memory"] == "on: recall only" and "x-insika-learning" not in raw.headers
        assert raw.headers["x-insika-knowledge"] == "injected"
        assert relay.store().outbox().pending() == 0 and relay.store().extractions(AGENT) == []


# ---------------------------------------------------------------- identity and access


@pytest.fixture
def strict(tmp_path: Path, upstream: FakeUpstream, monkeypatch: pytest.MonkeyPatch) -> Iterator[Running]:
    access = Access({TENANT: TenantAccess("loja-a-secret-token-1234"), "open": TenantAccess()},
                    {AGENT, "no-memory-agent"}, unknown="refuse")
    with running_relay(tmp_path / "data", upstream.url, access=access) as running:
        yield running


def test_unknown_names_are_refused_in_each_wire_format(strict: Running, upstream: FakeUpstream) -> None:
    good = {**IDENTITY, "x-insika-token": "loja-a-secret-token-1234"}
    assert strict.openai().chat.completions.create(model="m", messages=MESSAGES, extra_headers=good)
    with pytest.raises(openai.PermissionDeniedError) as refused:
        strict.openai().chat.completions.create(model="m", messages=MESSAGES,
                                                extra_headers={**good, "x-insika-tenant": "loja-z"})
    assert refused.value.status_code == 403 and "tenant 'loja-z' is not served" in refused.value.message
    with pytest.raises(anthropic.PermissionDeniedError) as denied:
        strict.anthropic().messages.create(model="m", max_tokens=5, messages=MESSAGES,
                                           extra_headers={**good, "x-insika-agent": "intruder"})
    assert denied.value.body["error"]["type"] == "permission_error"  # type: ignore[index]
    assert "agent 'intruder' is not in the agents file" in str(denied.value)
    with pytest.raises(openai.PermissionDeniedError, match="no x-insika-agent header"):
        strict.openai().chat.completions.create(model="m", messages=MESSAGES,
                                                extra_headers={**good, "x-insika-agent": ""})
    assert len(upstream.requests) == 1  # nothing refused went upstream
    assert not (strict.relay.memory.directory / "loja-z.db").exists()


def test_a_tenant_with_a_token_needs_it(strict: Running, upstream: FakeUpstream) -> None:
    with pytest.raises(openai.AuthenticationError, match="x-insika-token"):
        strict.openai().chat.completions.create(model="m", messages=MESSAGES, extra_headers=IDENTITY)
    with pytest.raises(anthropic.AuthenticationError):
        strict.anthropic().messages.create(model="m", max_tokens=5, messages=MESSAGES,
                                           extra_headers={**IDENTITY, "x-insika-token": "wrong-token-wrong-token"})
    r = httpx.get(strict.url + "/v1/models", headers={"x-insika-tenant": TENANT})  # passed-through paths too
    assert r.status_code == 401 and r.json()["error"]["type"] == "authentication_error"
    assert upstream.requests == []
    assert strict.openai().models.list(extra_headers={"x-insika-tenant": "open"}).data[0].id == "fake-model"


def test_listening_beyond_loopback_needs_a_token_for_every_tenant() -> None:
    from insika_knowledge.errors import UserError

    Access().check_exposure("127.0.0.1")
    with pytest.raises(UserError, match="tenant.*default.*no access token"):
        Access().check_exposure("0.0.0.0")
    Access({"a": TenantAccess("a-token-a-token-a-token")}).check_exposure("0.0.0.0")
    Access({"a": TenantAccess()}, token="one-token-for-all-tenants").check_exposure("192.0.2.7")


# ---------------------------------------------------------------- health, skills, trace


def test_health_shows_the_queue_and_the_last_failures(relay: Running, upstream: FakeUpstream,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")  # the learning model is unreachable
    relay.openai().chat.completions.create(model="m", messages=MESSAGES, extra_headers=IDENTITY)
    assert relay.relay.memory.drain(timeout_s=20)
    body = httpx.get(relay.url + "/health").json()
    assert body["status"] == "ok" and body["learning"] == {"on": True, "worker": {"running": True, "in_memory": 0}}
    (tenant,) = [t for t in body["tenants"] if t["tenant"] == TENANT]
    assert tenant["queued"] == 1 and tenant["dropped"] == 0  # kept for the model's next attempt
    (agent,) = tenant["agents"]
    assert agent["agent"] == AGENT and agent["concepts"] == 2 and agent["failed"] == 1
    (failure,) = tenant["failures"]
    assert failure["outcome"] == "model_error" and failure["session_id"] == IDENTITY["x-ace-session"]
    assert upstream.requests and all(s.path != "/health" for s in upstream.requests)


def test_skills_are_listed(relay: Running) -> None:
    body = httpx.get(relay.url + "/api/v1/skills").json()
    assert body["universal"] == ["skill_knowledge_graph"]
    assert body["skills"][0]["mode"] == "shadow" and body["skills"][0]["max_injection_tokens"] > 0


@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
def test_the_trace_is_readable_on_demand(relay: Running, upstream: FakeUpstream, stream: bool) -> None:
    headers = {**IDENTITY, "x-ace-trace": "full"}
    client = relay.openai()
    if stream:
        with client.chat.completions.with_streaming_response.create(
                model="m", messages=MESSAGES, stream=True, extra_headers=headers) as response:
            list(response.parse())
            trace = json.loads(response.headers["x-ace-trace"])
    else:
        raw = client.chat.completions.with_raw_response.create(model="m", messages=MESSAGES, extra_headers=headers)
        trace = json.loads(raw.headers["x-ace-trace"])
    skill, knowledge = trace
    assert skill["name"] == "skill_knowledge_graph" and skill["mode"] == "shadow" and "action" in skill
    if not stream:  # a JSON answer's hand-off is over before its headers: its outcome and its cost
        assert knowledge.pop("learning") == "queued" and knowledge.pop("learning_ms") >= 0
    assert knowledge == {"name": "knowledge", "memory": "on", "block": "injected", "concepts": 2,
                         "load_knowledge": []}
    plain = client.chat.completions.with_raw_response.create(model="m", messages=MESSAGES, extra_headers=IDENTITY)
    assert "x-ace-trace" not in plain.headers


# ---------------------------------------------------------------- servers with limits


@pytest.fixture
def limited(tmp_path: Path, upstream: FakeUpstream) -> Iterator[Running]:
    limits = Limits(max_body_bytes=64 * 1024, header_timeout_s=0.5, body_timeout_s=0.5)
    with running_relay(tmp_path / "data", upstream.url, limits=limits) as running:
        yield running


def test_a_body_over_the_cap_is_413(limited: Running, upstream: FakeUpstream) -> None:
    big: Any = [{"role": "user", "content": "x" * 100_000}]
    with pytest.raises(openai.APIStatusError) as raised:
        limited.openai().chat.completions.create(model="m", messages=big, extra_headers=IDENTITY)
    assert raised.value.status_code == 413 and "over the 65536-byte limit" in raised.value.message
    with pytest.raises(anthropic.APIStatusError) as too_big:
        limited.anthropic().messages.create(model="m", max_tokens=5, messages=big, extra_headers=IDENTITY)
    assert too_big.value.status_code == 413
    chunked = httpx.post(limited.url + "/v1/chat/completions", content=iter([b"{" + b" " * 70_000, b"}"]),
                         headers=IDENTITY)  # no content-length: counted as it comes
    assert chunked.status_code == 413
    assert upstream.requests == []


def test_slow_clients_are_cut_and_others_served(limited: Running, upstream: FakeUpstream) -> None:
    import socket

    host, port = limited.server.host, limited.server.port
    slow = []
    for _ in range(300):  # sockets that never finish their headers
        sock = socket.create_connection((host, port))
        sock.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\n")
        slow.append(sock)
    try:
        answer = limited.openai().chat.completions.create(model="m", messages=MESSAGES, extra_headers=IDENTITY)
        assert answer.choices[0].message.content == "Hello there."
        time.sleep(1.0)  # past the header timeout
        sock = slow[0]
        sock.settimeout(2)
        assert sock.recv(200).startswith(b"HTTP/1.1 408")
        body = socket.create_connection((host, port))
        body.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\ncontent-length: 100\r\n\r\n{")
        body.settimeout(3)
        assert body.recv(200).startswith(b"HTTP/1.1 408")  # the body did not come in time
        body.close()
    finally:
        for sock in slow:
            sock.close()


def test_headers_over_the_cap_are_431(limited: Running) -> None:
    r = httpx.get(limited.url + "/v1/models", headers={"x-big": "y" * 70_000})
    assert r.status_code == 431


def test_the_answer_is_durable_before_the_client_has_it(relay: Running, upstream: FakeUpstream) -> None:
    # What the client has, the outbox has: read the outbox the moment the answer ends.
    upstream.replies = [Text(ANSWER)]
    seen: list[int] = []
    lock = threading.Lock()
    store = relay.store()

    relay.relay.memory.learning_queue().close(timeout_s=5)  # no worker: the turns stay in the outbox
    for i in range(5):
        list(relay.openai().chat.completions.create(model="m", messages=MESSAGES, stream=True,
                                                    extra_headers={**IDENTITY, "x-ace-session": f"d-{i}"}))
        with lock:
            seen.append(store.outbox().pending())
    assert seen == [1, 2, 3, 4, 5]


def test_the_relay_page_example_runs(tmp_path: Path) -> None:
    out = run_example(python_example("docs/relay.md", "## An example that runs"), tmp_path)
    assert out.splitlines() == ["on: recall only injected", "['skill_knowledge_graph', 'knowledge']",
                                "['skill_knowledge_graph']", "1", "PermissionDeniedError"]


def test_the_start_lines_say_how_it_learns_and_whom_it_serves(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from click.testing import CliRunner

    from insika_knowledge.cli import cli
    from insika_knowledge.relay import main

    served: list[str] = []
    monkeypatch.setattr(main, "serve", lambda app, host, port, limits: served.append(f"{host}:{port}"))
    monkeypatch.setenv("OPENAI_API_KEY", "sk-relay-own-key")
    monkeypatch.setenv("LOJA_TOKEN", "loja-token-0123456789")
    agents = tmp_path / "agents.yaml"
    agents.write_text("tenants:\n  loja-a: {token: env:LOJA_TOKEN}\nagents:\n  store-support:\n    knowledge:\n"
                      "      model: openai/gpt-4o-mini\n  quiet-bot:\nunknown: refuse\n", encoding="utf-8")
    args = ["relay", "--upstream", "https://api.openai.com", "--agents", str(agents), "--data-dir", str(tmp_path)]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert "  tenants                loja-a (token)" in lines
    assert "  learning               store-support -> openai/gpt-4o-mini" in lines
    assert "  unknown names          refuse (x-insika-memory says why memory is off)" in lines
    assert served == ["127.0.0.1:8787"]
    exposed = CliRunner().invoke(cli, [*args, "--host", "0.0.0.0", "--tenant", "open"])
    assert exposed.exit_code == 2 and "tenant(s) open have no access token" in exposed.output


def test_a_turn_with_half_an_emoji_is_still_learned(relay: Running, upstream: FakeUpstream) -> None:
    """A lone surrogate escape (valid JSON text: an emoji a client cut in half) used to fail
    the turn's id and drop the turn from learning."""
    upstream.replies = [Text(ANSWER)]
    body = ('{"model": "m", "messages": [{"role": "user", "content": "Prazo para o CEP 13000? \\ud83d"}]}')
    raw = httpx.post(f"{relay.url}/v1/chat/completions", content=body,
                     headers={**IDENTITY, "x-ace-session": "half-emoji", "content-type": "application/json"})
    assert raw.status_code == 200
    assert raw.headers["x-insika-learning"] == "queued"


def test_the_relay_and_the_mcp_server_on_a_port_in_use_stop_before_their_banner(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # a newcomer's finding: the relay printed its whole banner and "Stop with Ctrl+C.", then
    # uvicorn's own error, and exited 3 (no documented code)
    import socket

    from click.testing import CliRunner

    from insika_knowledge.cli import cli
    from insika_knowledge.relay import main

    served: list[str] = []
    monkeypatch.setattr(main, "serve", lambda app, host, port, limits: served.append(f"{host}:{port}"))
    monkeypatch.delenv("INSIKA_UTILITY_MODEL", raising=False)
    agents = tmp_path / "agents.yaml"
    agents.write_text("agents:\n  quiet-bot:\n", encoding="utf-8")
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        relay = CliRunner().invoke(cli, ["relay", "--upstream", "https://api.openai.com", "--agents", str(agents),
                                         "--data-dir", str(tmp_path), "--port", str(port), "--no-learn"])
        mcp = CliRunner().invoke(cli, ["mcp", "--agent", "quiet-bot", "--data-dir", str(tmp_path),
                                       "--http", str(port)])
    assert relay.exit_code == 1 and relay.output.strip() == (
        f"Error: port {port} on 127.0.0.1 is in use (another relay?): stop it, or pass --port with a free "
        "port"), relay.output
    assert not served
    if mcp.exit_code != 2 or "the MCP server needs the mcp extra" not in mcp.output:  # the mcp extra installed
        assert mcp.exit_code == 1, mcp.output
        assert (f"port {port} on 127.0.0.1 is in use (another MCP server?): stop it, or pass --http with a "
                "free port") in mcp.output
        assert "MCP on http" not in mcp.output


def test_the_upstream_timeout_is_a_flag_and_a_silent_upstream_is_a_502_in_that_time(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A newcomer's finding: an upstream that never answered held the client for 600 s, and
    no option shortened it."""
    from click.testing import CliRunner
    from fakellm import Hang

    from insika_knowledge.cli import cli
    from insika_knowledge.relay import main
    from insika_knowledge.relay.server import BackgroundServer

    answers: list[tuple[int, str, float]] = []

    def serve_once(app: Any, host: str, port: int, limits: Limits) -> None:
        server = BackgroundServer(app, limits=limits).start()
        try:
            started = time.monotonic()
            reply = httpx.post(f"{server.url}/v1/chat/completions", timeout=30, headers=IDENTITY,
                               json={"model": "m", "messages": [{"role": "user", "content": QUESTION}]})
            answers.append((reply.status_code, reply.text, time.monotonic() - started))
        finally:
            server.stop()

    monkeypatch.setattr(main, "serve", serve_once)
    agents = tmp_path / "agents.yaml"
    agents.write_text(f"tenants: [{TENANT}]\nagents:\n  {AGENT}:\n", encoding="utf-8")
    with FakeLLM([Hang(20.0)]) as silent:
        result = CliRunner().invoke(cli, ["relay", "--upstream", silent.root_url, "--agents", str(agents),
                                          "--data-dir", str(tmp_path), "--no-learn", "--upstream-timeout", "1.5"])
    assert result.exit_code == 0, result.output
    [(status, text, seconds)] = answers
    assert status == 502 and "ReadTimeout" in text, text
    assert 1.4 < seconds < 10, seconds
    for bad in ("0", "nan", "inf"):  # "nan" passed click's range (an attack): every request was then a 500
        refused = CliRunner().invoke(cli, ["relay", "--upstream", "https://api.openai.com", "--agents", str(agents),
                                           "--data-dir", str(tmp_path), "--upstream-timeout", bad])
        assert refused.exit_code == 2 and "--upstream-timeout" in refused.output, (bad, refused.output)
    late = CliRunner().invoke(cli, ["studio", "--data-dir", str(tmp_path), "--header-timeout", "nan"])
    assert late.exit_code == 2 and "'nan' is not a number of seconds" in late.output
