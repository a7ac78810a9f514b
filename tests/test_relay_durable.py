"""Durable before acknowledged: a relay killed (SIGKILL) the instant its client has an answer
has that turn in its outbox. The relay runs as ``insika-knowledge relay`` in a subprocess;
the clients are the official OpenAI and Anthropic SDKs.
"""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import anthropic
import httpx
import openai
import pytest
from fakeupstream import FakeUpstream, Text
from servers import free_port

ROOT = Path(__file__).resolve().parents[1]
AGENT = "store-support"
TENANT = "loja-a"
MESSAGES: list = [{"role": "user", "content": "Qual o prazo de entrega para o CEP 13000?"}]  # type: ignore[type-arg]


@pytest.fixture(scope="module")
def upstream() -> Iterator[FakeUpstream]:
    with FakeUpstream([Text("Campinas entrega em 1-2 dias úteis.", linger_s=0.02)]) as fake:
        yield fake


def start_relay(tmp_path: Path, upstream: FakeUpstream, *extra: str) -> tuple[subprocess.Popen[bytes], str]:
    agents = tmp_path / "agents.yaml"
    agents.write_text(f"tenants: [{TENANT}]\nagents:\n  {AGENT}:\n    knowledge:\n      model: openai/fake\n",
                      encoding="utf-8")
    port = free_port()
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OPENAI_BASE_URL": "http://127.0.0.1:9/v1",
           "OPENAI_API_KEY": "", "INSIKA_UTILITY_MODEL": ""}
    process = subprocess.Popen(
        [sys.executable, "-m", "insika_knowledge", "relay", "--upstream", upstream.url, "--agents", str(agents),
         "--data-dir", str(tmp_path / "data"), "--port", str(port), *extra],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(process.stderr.read().decode() if process.stderr else "the relay exited")
        try:
            if httpx.get(url + "/health", timeout=1).status_code == 200:
                return process, url
        except httpx.HTTPError:
            time.sleep(0.05)
    process.kill()
    raise AssertionError("the relay did not start")


def recorded_sessions(data: Path) -> set[str]:
    """Sessions with a turn in the outbox or an extraction on record (read with sqlite3)."""
    with sqlite3.connect(data / f"{TENANT}.db") as db:
        rows = db.execute("SELECT session_id FROM outbox UNION SELECT session_id FROM extractions").fetchall()
    return {r[0] for r in rows}


def ask(url: str, how: str, session: str) -> str:
    headers = {"x-insika-tenant": TENANT, "x-insika-agent": AGENT, "x-ace-session": session}
    if how.startswith("openai"):
        client = openai.OpenAI(base_url=url + "/v1", api_key="sk-test", max_retries=0)
        if how == "openai-stream":
            chunks = client.chat.completions.create(model="m", messages=MESSAGES, stream=True, extra_headers=headers)
            return "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
        return client.chat.completions.create(model="m", messages=MESSAGES, extra_headers=headers) \
            .choices[0].message.content or ""
    claude = anthropic.Anthropic(base_url=url, api_key="sk-test", max_retries=0)
    if how == "anthropic-stream":
        with claude.messages.stream(model="m", max_tokens=50, messages=MESSAGES, extra_headers=headers) as events:
            return "".join(events.text_stream)
    message = claude.messages.create(model="m", max_tokens=50, messages=MESSAGES, extra_headers=headers)
    return "".join(b.text for b in message.content if b.type == "text")


def test_a_relay_killed_as_the_client_gets_its_answer_keeps_the_turn(tmp_path: Path,
                                                                      upstream: FakeUpstream) -> None:
    asked: list[str] = []
    for round_ in range(2):
        process, url = start_relay(tmp_path, upstream)
        try:
            for how in ("openai-stream", "openai-json", "anthropic-stream", "anthropic-json"):
                session = f"kill-{round_}-{how}"
                assert ask(url, how, session) == "Campinas entrega em 1-2 dias úteis."
                asked.append(session)
            os.kill(process.pid, signal.SIGKILL)  # the instant the last answer is in
        finally:
            process.kill()
            process.wait(10)
    assert recorded_sessions(tmp_path / "data") == set(asked)


def test_the_relay_refuses_to_start_when_learning_cannot_work(tmp_path: Path, upstream: FakeUpstream) -> None:
    agents = tmp_path / "agents.yaml"
    agents.write_text(f"{AGENT}:\n  knowledge:\n    model: openai/gpt-4o-mini\n", encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OPENAI_API_KEY": "", "OPENAI_BASE_URL": ""}
    result = subprocess.run(
        [sys.executable, "-m", "insika_knowledge", "relay", "--upstream", upstream.url, "--agents", str(agents),
         "--data-dir", str(tmp_path / "data"), "--port", str(free_port())],
        env=env, capture_output=True, text=True, timeout=60)
    assert result.returncode == 2
    (line,) = [x for x in result.stderr.splitlines() if x.strip()]
    assert "learning: agent store-support" in line and "OPENAI_API_KEY" in line and "--no-learn" in line
    process, url = start_relay(tmp_path, upstream, "--no-learn")  # recall only: no model needed
    try:
        r = httpx.post(url + "/v1/chat/completions", json={"model": "m", "messages": MESSAGES},
                       headers={"x-insika-tenant": TENANT, "x-insika-agent": AGENT, "x-ace-session": "s"})
        assert r.status_code == 200 and r.headers["x-insika-memory"] == "on: recall only"
        assert httpx.get(url + "/health").json()["learning"]["on"] is False
    finally:
        process.terminate()
        process.wait(10)
