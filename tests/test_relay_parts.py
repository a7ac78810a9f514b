"""The relay's parts on their own: event splitting, placement, identity, agents file, wire formats, CLI."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from insika_knowledge.cli import cli
from insika_knowledge.errors import UserError
from insika_knowledge.relay.agents import agents_from, load_agents
from insika_knowledge.relay.anthropic_format import AnthropicFormat
from insika_knowledge.relay.identity import identify, without_identity
from insika_knowledge.relay.openai_format import OpenAIFormat
from insika_knowledge.relay.placement import place, procedure_block
from insika_knowledge.relay.runtime import upstream_base
from insika_knowledge.relay.sse import SSESplitter, parse_event
from insika_knowledge.relay.upstream import request_headers
from insika_knowledge.relay.wire import DIVERT, PASS, WAIT
from insika_knowledge.retrieve import LOAD_KNOWLEDGE_SCHEMA

BLOCK = '<knowledge>\n  <concept name="a" confidence="0.60" provenance="observed">A.</concept>\n</knowledge>'
PROCEDURE = "[ACE recalled procedure — 3 prior runs, confidence 0.44]\n1. get_user_details(user_id)"

# ---------------------------------------------------------------- server-sent events

EVENTS = st.lists(
    st.tuples(
        st.sampled_from([b"\n", b"\r\n", b"\r"]),
        st.lists(st.text(st.characters(blacklist_categories=("Cs", "Cc")), max_size=20), min_size=1, max_size=3),
    ),
    max_size=8,
)


def stream_of(events: list[tuple[bytes, list[str]]]) -> bytes:
    out = b""
    for end, lines in events:
        out += b"".join(b"data: " + line.encode() + end for line in lines) + end
    return out


@given(EVENTS, st.lists(st.integers(1, 40), max_size=30))
def test_splitting_keeps_every_byte_whatever_the_chunking(events: list[tuple[bytes, list[str]]],
                                                          cuts: list[int]) -> None:
    data = stream_of(events)
    splitter = SSESplitter()
    got = []
    position = 0
    for size in [*cuts, len(data)]:
        got += splitter.feed(data[position:position + size])
        position += size
    got += splitter.feed(b"", final=True)
    assert b"".join(e.raw for e in got) + splitter.flush() == data
    assert [e.data for e in got] == ["\n".join(lines) for _, lines in events]


def test_a_carriage_return_split_from_its_line_feed_is_one_line_end() -> None:
    splitter = SSESplitter()
    assert splitter.feed(b"data: a\r") == []
    assert splitter.feed(b"\n\r") == []
    (event,) = splitter.feed(b"\ndata: b")
    assert (event.raw, event.data) == (b"data: a\r\n\r\n", "a")
    assert splitter.feed(b"\r\r") == []  # the second "\r" may be the start of "\r\n"
    assert splitter.feed(b"", final=True)[0].raw == b"data: b\r\r"
    assert splitter.flush() == b""


def test_event_fields() -> None:
    event = parse_event(b": comment\nevent: message_start\ndata: {\"a\":\ndata:1}\nid: 7\n\n")
    assert (event.event, event.data) == ("message_start", '{"a":\n1}')


# ---------------------------------------------------------------- stream readers


def test_openai_reader_decides_on_the_first_content_or_call() -> None:
    reader = OpenAIFormat().reader("load_knowledge")

    def chunk(delta: dict[str, Any], finish: str | None = None) -> Any:
        data = {"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
        return parse_event(b"data: " + json.dumps(data).encode() + b"\n\n")

    assert reader.feed(chunk({"role": "assistant", "content": ""})) == WAIT
    call = {"index": 0, "id": "c1", "function": {"name": "load_knowledge", "arguments": '{"na'}}
    assert reader.feed(chunk({"tool_calls": [call]})) == DIVERT
    assert reader.feed(chunk({"tool_calls": [{"index": 0, "function": {"arguments": 'me": "x"}'}}]})) == WAIT
    assert reader.feed(chunk({}, "tool_calls")) == PASS
    assert reader.feed(parse_event(b"data: [DONE]\n\n")) == WAIT and reader.complete
    (call_read,) = reader.answer().calls
    assert (call_read.id, call_read.name, call_read.arguments) == ("c1", "load_knowledge", {"name": "x"})


def test_anthropic_reader_assembles_blocks() -> None:
    reader = AnthropicFormat().reader("load_knowledge")

    def event(data: dict[str, Any]) -> Any:
        return parse_event(f"event: {data['type']}\ndata: {json.dumps(data)}\n\n".encode())

    assert reader.feed(event({"type": "message_start", "message": {}})) == WAIT
    assert reader.feed(event({"type": "content_block_start", "index": 0,
                              "content_block": {"type": "text", "text": ""}})) == PASS
    reader.feed(event({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Oi"}}))
    assert reader.feed(event({"type": "content_block_start", "index": 1, "content_block": {
        "type": "tool_use", "id": "t1", "name": "load_knowledge", "input": {}}})) == DIVERT
    reader.feed(event({"type": "content_block_delta", "index": 1,
                       "delta": {"type": "input_json_delta", "partial_json": '{"name": "a"}'}}))
    reader.feed(event({"type": "message_stop"}))
    answer = reader.answer()
    assert reader.complete and answer.text == "Oi"
    assert answer.parts[1] == {"type": "tool_use", "id": "t1", "name": "load_knowledge", "input": {"name": "a"}}


def test_anthropic_transcript_is_the_normalised_schema() -> None:
    body = {"system": [{"type": "text", "text": "Be kind."}], "messages": [
        {"role": "user", "content": "Where is A-17?"},
        {"role": "assistant", "content": [{"type": "text", "text": "Checking."},
                                          {"type": "tool_use", "id": "t1", "name": "get_order", "input": {"id": 1}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "shipped"}]},
    ]}
    answer = AnthropicFormat().read({"content": [{"type": "text", "text": "It shipped."}]})
    assert AnthropicFormat().transcript(body, answer) == [
        {"role": "system", "content": "Be kind."},
        {"role": "user", "content": "Where is A-17?"},
        {"role": "assistant", "content": "Checking.", "tool_calls": [
            {"id": "t1", "type": "function", "function": {"name": "get_order", "arguments": '{"id": 1}'}}]},
        {"role": "tool", "tool_call_id": "t1", "content": "shipped"},
        {"role": "assistant", "content": "It shipped."},
    ]


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
