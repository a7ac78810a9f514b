"""What a message says (`insika_knowledge.wire.messages`), and that every reader of one agrees."""

from __future__ import annotations

import json
from typing import Any

import pytest

from insika_knowledge.extract.prompt import render_transcript
from insika_knowledge.hookspecs import AgentSpec, Turn
from insika_knowledge.learn import relevant_concepts
from insika_knowledge.procedures.trace.events import events
from insika_knowledge.trust import grounding
from insika_knowledge.wire import anthropic
from insika_knowledge.wire.answer import Answer
from insika_knowledge.wire.messages import (
    SEPARATOR,
    ToolCall,
    arguments,
    last_user_text,
    message_text,
    text_of,
    tool_calls,
    tool_names,
)

# ---------------------------------------------------------------- the text of a message

#: The same user message in each shape the library meets, and the text each one says.
USER_MESSAGES = {
    "string": ({"role": "user", "content": "Free shipping over R$ 50\nReturns within 7 days"},
               "Free shipping over R$ 50\nReturns within 7 days"),
    "openai parts": ({"role": "user", "content": [
        {"type": "text", "text": "Free shipping over R$ 50"},
        {"type": "image_url", "image_url": {"url": "https://example.com/a.png"}},
        {"type": "text", "text": "Returns within 7 days"},
    ]}, "Free shipping over R$ 50\nReturns within 7 days"),
    "anthropic blocks": ({"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "t1", "content": "shipped"},
        {"type": "text", "text": "Free shipping over R$ 50", "cache_control": {"type": "ephemeral"}},
        {"type": "text", "text": "Returns within 7 days"},
    ]}, "Free shipping over R$ 50\nReturns within 7 days"),
    "responses parts": ({"role": "user", "content": [
        {"type": "input_text", "text": "Free shipping over R$ 50"}, "Returns within 7 days",
    ]}, "Free shipping over R$ 50\nReturns within 7 days"),
    "no text": ({"role": "user", "content": None}, ""),
}


class _Recorder:
    """A concept index that records the text it is asked to search."""

    def __init__(self) -> None:
        self.queries: list[str] = []

    def search(self, agent: str, query: str, top_k: int) -> list[Any]:
        self.queries.append(query)
        return []


def _grounding_text(message: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> str:
    seen: list[str] = []
    real = grounding.features

    def features(text: str) -> frozenset[str]:
        seen.append(text)
        return real(text)

    monkeypatch.setattr(grounding, "features", features)
    grounding.supporters("free shipping returns", [message])
    monkeypatch.undo()
    return seen[1]  # the claim's, then the message's


@pytest.mark.parametrize("shape", list(USER_MESSAGES))
def test_the_text_of_a_message_is_the_same_whichever_caller_asks(
    shape: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    message, text = USER_MESSAGES[shape]
    assert message_text(message) == text
    # learning's search for known concepts
    index = _Recorder()
    relevant_concepts(index, "a", [message], 5)
    assert index.queries == ([text] if text.strip() else [])
    # grounding
    assert _grounding_text(message, monkeypatch) == text
    # the extraction prompt
    assert json.loads(render_transcript([message]))[0]["content"] == text
    # hookspecs' Turn, and retrieval's query in the relay
    assert Turn(AgentSpec("a"), "s", "t", [message]).last_user_text() == text
    assert last_user_text([{"role": "user", "content": "older"}, message]) == text
    # procedures' traces
    users = [e.text for e in events([message]) if e.kind == "user"]
    assert users == [text]
    # the relay's transcript of an Anthropic body
    transcript = anthropic.transcript({"messages": [message]}, Answer())
    assert [m["content"] for m in transcript if m["role"] == "user"] == [text]


def test_parts_are_joined_by_one_line_break_so_they_stay_apart() -> None:
    assert SEPARATOR == "\n"
    assert text_of([{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]) == "a\nb"
    assert text_of({"type": "text", "text": "one part"}) == "one part"
    assert text_of([{"type": "thinking", "thinking": "x"}, {"type": "tool_use", "text": "y"}]) == ""
    assert text_of(42) == "" and text_of(None) == ""
    assert last_user_text("not a list") == "" and last_user_text([{"role": "assistant", "content": "x"}]) == ""


# ---------------------------------------------------------------- tool calls

#: One call to get_order(id=1) in each shape; extraction, traces and the relay read it alike.
CALLS = {
    "openai": {"role": "assistant", "content": None, "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "get_order", "arguments": '{"id": 1}'}}]},
    "normalised": {"role": "assistant", "content": None, "tool_calls": [
        {"id": "c1", "name": "get_order", "arguments": {"id": 1}}]},
    "anthropic": {"role": "assistant", "content": [
        {"type": "tool_use", "id": "c1", "name": "get_order", "input": {"id": 1}}]},
}


@pytest.mark.parametrize("shape", list(CALLS))
def test_a_tool_call_reads_the_same_in_every_shape(shape: str) -> None:
    message = CALLS[shape]
    (call,) = tool_calls(message)
    assert (call.id, call.name, call.arguments) == ("c1", "get_order", {"id": 1})
    assert json.loads(render_transcript([message]))[0]["tool_calls"] == [{"name": "get_order", "arguments": {"id": 1}}]
    (event,) = [e for e in events([message]) if e.kind == "call"]
    assert (event.call_id, event.name, event.arguments) == ("c1", "get_order", {"id": 1})


def test_tool_calls_in_order_and_without_a_name_none() -> None:
    message = {"role": "assistant", "tool_calls": [
        {"function": {"name": "a", "arguments": ""}}, {"function": {"arguments": "{}"}}, "junk",
        {"id": 7, "name": "b", "arguments": None},
    ], "content": [{"type": "text", "text": "x"}, {"type": "tool_use", "name": "c", "input": {"k": "v"}}]}
    assert tool_calls(message) == [
        ToolCall("", "a", {}, 0), ToolCall("7", "b", {}, 3), ToolCall("", "c", {"k": "v"}, 1),
    ]
    assert [e.call_id for e in events([message]) if e.kind == "call"] == ["call-0-0", "7", "call-0-1"]


def test_arguments() -> None:
    assert arguments('{"a": 1}') == {"a": 1} and arguments({"a": 1}) == {"a": 1}
    assert arguments(None) == {} and arguments("  ") == {}
    assert arguments("not json") == "not json" and arguments("[1]") == "[1]" and arguments(5) == 5


def test_tool_names_of_either_format() -> None:
    body = {"tools": [{"type": "function", "function": {"name": "a"}}, {"name": "b", "input_schema": {}}, "x"]}
    assert tool_names(body) == ("a", "b")
    assert tool_names({"tools": {"name": "a"}}) == () and tool_names({}) == ()


def test_tool_call_arguments_nested_past_the_parsers_depth_stay_text() -> None:
    from insika_knowledge.wire.messages import arguments

    raw = "[" * 100_000 + "]" * 100_000
    assert arguments(raw) == raw
