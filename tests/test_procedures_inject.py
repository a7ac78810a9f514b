from __future__ import annotations

import copy
import json

from insika_knowledge.procedures.recall.inject import inject

STEP = "1. cancel_reservation(reservation_id=<RESERVATION_ID>)"
BLOCK = "[recalled procedure — 4 prior runs, confidence 0.51]\n" + STEP
NEWER = "[recalled procedure — 5 prior runs, confidence 0.57]\n" + STEP


def serialised_prefix(body: dict) -> str:
    """The JSON of `body` up to (and including) its last cache_control breakpoint."""
    text = json.dumps(body, ensure_ascii=False)
    end = text.rindex('"cache_control"')
    return text[: text.index("}", end) + 1]


def anthropic_body() -> dict:
    return {
        "model": "claude",
        "system": [
            {"type": "text", "text": "You are helpful.", "cache_control": {"type": "ephemeral"}}
        ],
        "tools": [{"name": "bash", "input_schema": {"type": "object"}}],
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "Fix the bug."}]},
            {
                "role": "assistant",
                "content": [
                    {"type": "tool_use", "id": "t1", "name": "bash", "input": {"command": "pytest"}}
                ],
            },
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "t1",
                        "content": "1 failed",
                        "cache_control": {"type": "ephemeral"},
                    },
                    {"type": "text", "text": "go on"},
                ],
            },
        ],
    }


def openai_body() -> dict:
    return {
        "model": "gpt-4o",
        "messages": [
            {"role": "system", "content": "policy"},
            {"role": "user", "content": "Please cancel my trip."},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "c1",
                        "type": "function",
                        "function": {"name": "get_user_details", "arguments": "{}"},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "c1", "content": "{}"},
        ],
    }


def test_anthropic_block_goes_after_the_last_breakpoint_and_the_prefix_is_byte_identical() -> None:
    body = anthropic_body()
    before = copy.deepcopy(body)
    result = inject(body, BLOCK)
    assert result.injected and result.reason is None
    assert body == before  # the caller's body is not modified
    assert serialised_prefix(result.body) == serialised_prefix(before)
    last = result.body["messages"][-1]["content"]
    assert last[-1] == {"type": "text", "text": BLOCK}
    assert last[:-1] == before["messages"][-1]["content"]
    assert result.body["messages"][:-1] == before["messages"][:-1]


def test_openai_string_content_of_the_last_user_message_gets_the_block_appended() -> None:
    body = openai_body()
    result = inject(body, BLOCK)
    assert result.injected
    assert result.body["messages"][1]["content"] == "Please cancel my trip.\n\n" + BLOCK
    assert body["messages"][1]["content"] == "Please cancel my trip."
    assert result.body["messages"][2] is body["messages"][2]  # untouched messages are shared


def test_openai_parts_with_a_breakpoint_keep_their_prefix() -> None:
    body = openai_body()
    body["messages"][1]["content"] = [
        {"type": "text", "text": "Please cancel my trip.", "cache_control": {"type": "ephemeral"}}
    ]
    result = inject(body, BLOCK)
    assert result.injected
    assert serialised_prefix(result.body) == serialised_prefix(body)
    assert result.body["messages"][1]["content"][-1]["text"] == BLOCK


def test_a_later_turn_updates_the_block_in_place() -> None:
    first = inject(openai_body(), BLOCK).body
    second = inject(first, NEWER).body
    content = second["messages"][1]["content"]
    assert content.count("[recalled procedure") == 1
    assert content == "Please cancel my trip.\n\n" + NEWER
    parts = inject(anthropic_body(), BLOCK).body
    again = inject(parts, NEWER).body["messages"][-1]["content"]
    assert sum(p.get("text", "").startswith("[recalled") for p in again) == 1
    assert again[-1]["text"] == NEWER


def test_a_block_inside_the_cached_prefix_is_left_alone_and_not_repeated() -> None:
    body = anthropic_body()
    body["messages"][-1]["content"].insert(0, {"type": "text", "text": BLOCK})
    result = inject(body, NEWER)
    assert not result.injected and result.reason == "block_in_cached_prefix"
    assert result.body is body


def test_no_injection_when_the_breakpoint_lies_after_the_last_user_message() -> None:
    body = openai_body()
    body["messages"][3]["content"] = [
        {"type": "text", "text": "{}", "cache_control": {"type": "ephemeral"}}
    ]
    result = inject(body, BLOCK)
    assert not result.injected and result.reason == "cache_breakpoint_after_last_user"
    assert result.body is body


def test_no_user_message_no_injection() -> None:
    result = inject({"messages": [{"role": "system", "content": "x"}]}, BLOCK)
    assert not result.injected and result.reason == "no_user_message"


def test_text_that_merely_mentions_the_header_is_never_overwritten() -> None:
    system = "sys [recalled procedure — x] keep this system prompt"
    user = "Do it. [recalled procedure — 3 prior runs, confidence 0.50] NEVER touch prod"
    body = {"messages": [{"role": "system", "content": system}, {"role": "user", "content": user}]}
    result = inject(body, BLOCK)
    assert result.injected
    messages = result.body["messages"]
    assert messages[0]["content"] == system
    assert messages[1]["content"] == user + "\n\n" + BLOCK


def test_a_breakpoint_on_the_last_user_message_itself_blocks_injection() -> None:
    body = {"messages": [{"role": "user", "content": "task", "cache_control": {"type": "ephemeral"}}]}
    result = inject(body, BLOCK)
    assert not result.injected and result.reason == "block_in_cached_prefix"
    assert result.body is body
