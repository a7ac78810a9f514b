"""Server-sent events and each format's responses and streams (`insika_knowledge.wire.sse`,
`openai`, `anthropic`, `answer`)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from insika_knowledge.wire import anthropic, openai
from insika_knowledge.wire.answer import DIVERT, PASS, WAIT
from insika_knowledge.wire.anthropic import AnthropicStreamReader
from insika_knowledge.wire.messages import ToolCall
from insika_knowledge.wire.openai import OpenAIStreamReader
from insika_knowledge.wire.sse import SSESplitter, parse_event

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
    reader = OpenAIStreamReader("load_knowledge")

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
    reader = AnthropicStreamReader("load_knowledge")

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
    answer = anthropic.read_response({"content": [{"type": "text", "text": "It shipped."}]})
    assert anthropic.transcript(body, answer) == [
        {"role": "system", "content": "Be kind."},
        {"role": "user", "content": "Where is A-17?"},
        {"role": "assistant", "content": "Checking.", "tool_calls": [
            {"id": "t1", "type": "function", "function": {"name": "get_order", "arguments": '{"id": 1}'}}]},
        {"role": "tool", "tool_call_id": "t1", "content": "shipped"},
        {"role": "assistant", "content": "It shipped."},
    ]


def test_openai_response_text_and_calls() -> None:
    answer = openai.read_response({"choices": [{"message": {"content": "Hi", "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}]}}]})
    assert answer.text == "Hi" and answer.calls == [ToolCall("c1", "f", {}, 0)]
    with pytest.raises(ValueError, match="choices"):
        openai.read_response({"choices": []})
