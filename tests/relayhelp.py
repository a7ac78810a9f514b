"""Helpers for the relay tests: a relay over a temporary data directory, running on loopback."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anthropic
import openai
import pytest
from conftest import make_concept
from fakeupstream import FakeUpstream

from insika_knowledge.events import Recorder
from insika_knowledge.httplimits import Limits
from insika_knowledge.memory import Memory
from insika_knowledge.procedures import ProceduresConfig
from insika_knowledge.relay.access import Access
from insika_knowledge.relay.agents import TenantAccess, directory_from
from insika_knowledge.relay.app import create_app
from insika_knowledge.relay.runtime import Relay, RelaySettings, upstream_base
from insika_knowledge.relay.server import BackgroundServer

AGENT = "store-support"
TENANT = "loja-a"
SESSION = "sess-1"
KEY = "sk-test-caller-key"
QUESTION = "Qual o prazo de entrega para o CEP 13000 em Campinas?"
IDENTITY = {"x-insika-tenant": TENANT, "x-insika-agent": AGENT, "x-ace-session": SESSION}


@pytest.fixture(scope="module")
def shared_upstream() -> Iterator[FakeUpstream]:
    """One fake upstream for a test module (import it with `upstream`)."""
    with FakeUpstream() as fake:
        yield fake


@pytest.fixture
def upstream(shared_upstream: FakeUpstream) -> FakeUpstream:
    """The module's fake upstream, its script and records reset."""
    shared_upstream.reset()
    return shared_upstream


class Running:
    """A relay serving on loopback, with its memory's events recorded."""

    def __init__(self, relay: Relay, server: BackgroundServer, recorder: Recorder):
        self.relay = relay
        self.server = server
        self.recorder = recorder

    @property
    def url(self) -> str:
        return self.server.url

    def openai(self, **kw: Any) -> openai.OpenAI:
        return openai.OpenAI(base_url=self.url + "/v1", api_key=KEY, max_retries=0, **kw)

    def anthropic(self, **kw: Any) -> anthropic.Anthropic:
        return anthropic.Anthropic(base_url=self.url, api_key=KEY, max_retries=0, **kw)

    def store(self) -> Any:
        return self.relay.memory.store(TENANT)


def seed_concepts(memory: Memory) -> None:
    store = memory.store(TENANT)
    with store.transaction() as tx:
        tx.put(AGENT, make_concept(), reason="extract", actor="test")
        tx.put(AGENT, make_concept(
            "frete-gratis-acima-199", description="Free shipping on orders above R$ 199.",
            body="Orders above R$ 199 ship for free."), reason="extract", actor="test")


@contextmanager
def running_relay(
    data_dir: Path, upstream_url: str, *, knowledge: dict[str, Any] | None = None, mode: str = "shadow",
    seed: bool = True, database: str | None = None, access: Access | None = None, learns: bool = True,
    limits: Limits | None = None,
) -> Iterator[Running]:
    block = {"model": "openai/fake-model", **(knowledge or {})}
    directory = directory_from({AGENT: {"knowledge": block}, "no-memory-agent": None})
    memory = Memory(data_dir, database=database)
    if seed:
        seed_concepts(memory)
    recorder = Recorder()
    memory.events.subscribe(recorder)
    access = access or Access({TENANT: TenantAccess(), "default": TenantAccess()}, directory.listed)
    relay = Relay(memory, RelaySettings(upstream_base(upstream_url)), directory.agents, ProceduresConfig(mode=mode),
                  access=access, learns=learns)
    server = BackgroundServer(create_app(relay), limits=limits).start()
    try:
        yield Running(relay, server, recorder)
    finally:
        server.stop()
        relay.close()
