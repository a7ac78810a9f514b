"""The relay's parts on their own: placement, identity, agents file, wire formats, CLI.

Reading bodies, streams and headers is `insika_knowledge.wire`'s (tests/test_wire_*.py).
"""

from __future__ import annotations

import copy
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from insika_knowledge.cli import cli
from insika_knowledge.errors import UserError
from insika_knowledge.relay.agents import agents_from, load_agents
from insika_knowledge.relay.anthropic_format import AnthropicFormat
from insika_knowledge.relay.identity import identify, without_identity
from insika_knowledge.relay.openai_format import OpenAIFormat
from insika_knowledge.relay.placement import place, procedure_block
from insika_knowledge.relay.runtime import upstream_base
from insika_knowledge.relay.upstream import request_headers
from insika_knowledge.retrieve import LOAD_KNOWLEDGE_SCHEMA

BLOCK = '<knowledge>\n  <concept name="a" confidence="0.60" provenance="observed">A.</concept>\n</knowledge>'
PROCEDURE = "[ACE recalled procedure — 3 prior runs, confidence 0.44]\n1. get_user_details(user_id)"

# ---------------------------------------------------------------- wire formats


@pytest.mark.parametrize("wire", [OpenAIFormat(), AnthropicFormat()], ids=["openai", "anthropic"])
def test_the_tool_is_appended_once_and_never_over_the_clients_own(wire: Any) -> None:
    body: dict[str, Any] = {"messages": []}
    offered = wire.offer(body, LOAD_KNOWLEDGE_SCHEMA)
    assert body == {"messages": []} and len(offered["tools"]) == 1
    assert wire.offer(offered, LOAD_KNOWLEDGE_SCHEMA) is offered


# ---------------------------------------------------------------- placement


def test_the_block_goes_at_the_end_of_the_last_user_message() -> None:
    body = {"messages": [{"role": "user", "content": "first"}, {"role": "assistant", "content": "ok"},
                         {"role": "user", "content": [{"type": "text", "text": "second"}]}]}
    original = copy.deepcopy(body)
    placement = place(body, BLOCK)
    assert placement.placed and body == original
    assert placement.body["messages"][2]["content"] == [{"type": "text", "text": "second"},
                                                        {"type": "text", "text": BLOCK}]
    assert placement.body["messages"][:2] == body["messages"][:2]


def test_a_later_cache_breakpoint_keeps_every_byte_before_it() -> None:
    # Issue 9: the block still reaches the model, after the breakpoint: OpenAI chat gets a
    # new user message at the end; an Anthropic prefill gets nothing.
    body = {"messages": [{"role": "user", "content": "q"}, {"role": "assistant", "content": [
        {"type": "text", "text": "a", "cache_control": {"type": "ephemeral"}}]}]}
    placement = place(body, BLOCK, "openai")
    assert placement.placed and placement.body["messages"][:2] == body["messages"]
    assert placement.body["messages"][2] == {"role": "user", "content": BLOCK}
    prefill = place(body, BLOCK, "anthropic")
    assert not prefill.placed and prefill.body is body and prefill.reason == "assistant_prefill"


def test_a_procedure_block_stays_at_the_tail_after_the_knowledge_block() -> None:
    body = {"messages": [{"role": "user", "content": "cancel my trip\n\n" + PROCEDURE}]}
    assert procedure_block(body) == PROCEDURE
    placement = place(body, BLOCK)
    assert placement.body["messages"][0]["content"] == "cancel my trip\n\n" + BLOCK + "\n\n" + PROCEDURE
    assert procedure_block(placement.body) == PROCEDURE


# ---------------------------------------------------------------- identity, headers, settings


def test_identity_from_headers_and_body() -> None:
    identity = identify({"x-insika-tenant": "loja-a", "x-insika-agent": "bot", "x-insika-memory": "OFF"},
                        {"session_id": "s-9"})
    assert (identity.tenant, identity.agent, identity.session_id, identity.memory) == ("loja-a", "bot", "s-9", False)
    assert identify({"x-ace-session": "h"}, {"session_id": "b"}).session_id == "h"
    assert identify({}, None).tenant == "default" and identify({}, None).memory
    body = {"model": "m", "session_id": "s"}
    assert without_identity(body) == {"model": "m"} and without_identity({"model": "m"}) == {"model": "m"}


def test_only_the_callers_own_headers_go_upstream() -> None:
    sent = request_headers([("Authorization", "Bearer k"), ("Host", "relay"), ("X-Insika-Agent", "a"),
                            ("x-ace-session", "s"), ("Connection", "keep-alive"), ("Accept-Encoding", "gzip"),
                            ("anthropic-version", "2023-06-01"), ("Content-Length", "9")])
    assert sent == [("Authorization", "Bearer k"), ("anthropic-version", "2023-06-01"),
                    ("accept-encoding", "identity")]


def test_upstream_base() -> None:
    assert upstream_base("https://api.openai.com/v1/") == "https://api.openai.com"
    assert upstream_base("http://127.0.0.1:8080/proxy") == "http://127.0.0.1:8080/proxy"
    with pytest.raises(UserError, match="not an http"):
        upstream_base("api.openai.com")


# ---------------------------------------------------------------- agents file and CLI


def test_agents_file(tmp_path: Path) -> None:
    path = tmp_path / "agents.yaml"
    path.write_text("store-support:\n  knowledge:\n    top_k: 3\nquiet-bot:\n  knowledge:\n", encoding="utf-8")
    agents = load_agents(path)
    assert list(agents) == ["store-support"] and agents["store-support"].config.top_k == 3
    with pytest.raises(UserError, match="agent bot: knowledge.top_k"):
        agents_from({"bot": {"knowledge": {"top_k": 0}}})
    with pytest.raises(UserError, match="unknown key 'knowlege'"):
        agents_from({"bot": {"knowlege": {}}})
    with pytest.raises(UserError, match="not valid"):
        agents_from({"bad agent!": {"knowledge": {}}})


@pytest.mark.parametrize("text", [
    "agents:\n  store-support: {}\nunknwon: refuse\n",
    "tenants: [loja-a]\nagents:\n  store-support: {}\ntoken: env:X\n",
])
def test_a_long_form_file_with_a_misspelt_key_names_that_key(tmp_path: Path, text: str) -> None:
    """A newcomer's finding: the file was read in the short form, and the error called
    ``agents`` an agent with an unknown key ``store-support``."""
    from insika_knowledge.relay.agents import load_directory

    path = tmp_path / "agents.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(UserError, match=r"unknown top-level key '(unknwon|token)'.*agents, tenants, unknown"):
        load_directory(path)


def test_a_huge_integer_in_the_agents_file_is_a_usage_error(tmp_path: Path) -> None:
    path = tmp_path / "agents.yaml"
    path.write_text("bot:\n  knowledge:\n    top_k: " + "9" * 5000 + "\n", encoding="utf-8")
    with pytest.raises(UserError, match=r"line 3, column 12: an integer of 5000 digits"):
        load_agents(path)


def test_the_relay_command(tmp_path: Path) -> None:
    runner = CliRunner()
    assert "--upstream" in runner.invoke(cli, ["relay", "--help"]).output
    bad = tmp_path / "agents.yaml"
    bad.write_text("bot:\n  knowledge:\n    top_k: 0\n", encoding="utf-8")
    result = runner.invoke(cli, ["relay", "--upstream", "https://api.openai.com", "--agents", str(bad)])
    assert result.exit_code == 2 and "knowledge.top_k" in result.output
    result = runner.invoke(cli, ["relay", "--upstream", "nope", "--agents", str(bad)])
    assert result.exit_code == 2 and "not an http" in result.output


def test_the_relay_is_built_on_either_backend(tmp_path: Path, database: str | None) -> None:
    # `relay --database URL` (build) keeps every tenant in that database, not under --data-dir.
    from insika_knowledge.relay.main import build
    from insika_knowledge.store import SQLiteStore

    agents = tmp_path / "agents.yaml"
    agents.write_text("store-support:\n  knowledge:\n    top_k: 3\n", encoding="utf-8")
    relay = build("http://127.0.0.1:9", str(agents), tmp_path / "data", database=database)
    try:
        store = relay.memory.store("loja-a")
        assert isinstance(store, SQLiteStore) == (database is None)
        assert (tmp_path / "data" / "loja-a.db").exists() == (database is None)
        if database is not None:
            assert relay.memory.location.startswith("postgresql://")
            assert "loja-a" in relay.memory.tenants()
    finally:
        relay.close()


def test_a_relay_turn_id_has_no_digits_to_read_as_personal_data() -> None:
    # a newcomer's finding: hex ids with 8 digits in a row were kept as pseudonyms
    # ("relay-fe[number]e5a8c7~...") in logs and /health
    from insika_knowledge.relay.learning import turn_id

    ids = {turn_id([{"role": "user", "content": f"pergunta {i}"}]) for i in range(2000)}
    assert len(ids) == 2000 and all(re.fullmatch(r"relay-[a-p]{16}", i) for i in ids)


def test_a_tenant_refused_behind_tokens_learns_no_other_tenants_name() -> None:
    """A newcomer's finding: with tokens set, a caller without one was told every tenant served."""
    from insika_knowledge.relay.access import Access
    from insika_knowledge.relay.agents import TenantAccess

    guarded = Access({"loja-a": TenantAccess(token="a-token-0123456789"), "loja-b": TenantAccess()},
                     token="shared-token-0123456789")
    refused = guarded.admit({"x-insika-tenant": "other"}, model=True)
    assert refused is not None and refused.status == 403
    assert "'other' is not served by this relay" in refused.message
    assert "loja-a" not in refused.message and "loja-b" not in refused.message
    open_relay = Access({"loja-a": TenantAccess()}, unknown="refuse")  # no token anywhere: loopback, says which
    said = open_relay.admit({"x-insika-tenant": "other"}, model=True)
    assert said is not None and "(it serves: loja-a)" in said.message


def test_a_long_form_file_whose_agents_key_is_misspelt_says_so(tmp_path: Path) -> None:
    from insika_knowledge.relay.agents import load_directory

    path = tmp_path / "agents.yaml"
    path.write_text("tenants: [loja-a]\nagent:\n  store-support: {}\n", encoding="utf-8")
    with pytest.raises(UserError, match="tenants: is given without agents:.*unknown: agent"):
        load_directory(path)
