"""Cache-safe placement of a block whose shape the caller gives (`insika_knowledge.wire.placement`)."""

from __future__ import annotations

import copy
import json
import re
from typing import Any

from insika_knowledge.wire import placement
from insika_knowledge.wire.placement import Anchor, BlockShape, Placement, carry, find, unmarked, wire_format

STEP = "1. cancel_reservation(reservation_id=<RESERVATION_ID>)"
BLOCK = "[ACE recalled procedure — 4 prior runs, confidence 0.51]\n" + STEP
NEWER = "[ACE recalled procedure — 5 prior runs, confidence 0.57]\n" + STEP
#: The caller's block shape (this one is the procedure block's; placement knows none of its own).
HEADER = "[ACE recalled procedure — "
SHAPE = BlockShape(
    HEADER, re.compile(re.escape(HEADER) + r"\d+ prior runs?, confidence \d+\.\d{2}\](?:\n\d+\. [^\n]*)*")
)


def place(body: Any, block: str, label: str = "") -> Placement:
    return placement.place(body, block, SHAPE, label=label)


def inject(body: Any, block: str) -> Placement:
    return placement.place(body, block, SHAPE)


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
    assert result.placed and result.reason is None
    assert body == before  # the caller's body is not modified
    assert serialised_prefix(result.body) == serialised_prefix(before)
    last = result.body["messages"][-1]["content"]
    assert last[-1] == {"type": "text", "text": BLOCK}
    assert last[:-1] == before["messages"][-1]["content"]
    assert result.body["messages"][:-1] == before["messages"][:-1]


def test_openai_string_content_of_the_last_user_message_gets_the_block_appended() -> None:
    body = openai_body()
    result = inject(body, BLOCK)
    assert result.placed
    assert result.body["messages"][1]["content"] == "Please cancel my trip.\n\n" + BLOCK
    assert body["messages"][1]["content"] == "Please cancel my trip."
    assert result.body["messages"][2] is body["messages"][2]  # untouched messages are shared


def test_openai_parts_with_a_breakpoint_keep_their_prefix() -> None:
    body = openai_body()
    body["messages"][1]["content"] = [
        {"type": "text", "text": "Please cancel my trip.", "cache_control": {"type": "ephemeral"}}
    ]
    result = inject(body, BLOCK)
    assert result.placed
    assert serialised_prefix(result.body) == serialised_prefix(body)
    assert result.body["messages"][1]["content"][-1]["text"] == BLOCK


def test_a_later_turn_updates_the_block_in_place() -> None:
    first = inject(openai_body(), BLOCK).body
    second = inject(first, NEWER).body
    content = second["messages"][1]["content"]
    assert content.count("[ACE recalled procedure") == 1
    assert content == "Please cancel my trip.\n\n" + NEWER
    parts = inject(anthropic_body(), BLOCK).body
    again = inject(parts, NEWER).body["messages"][-1]["content"]
    assert sum(p.get("text", "").startswith("[ACE recalled") for p in again) == 1
    assert again[-1]["text"] == NEWER


def test_a_block_inside_the_cached_prefix_is_left_alone_and_not_repeated() -> None:
    body = anthropic_body()
    body["messages"][-1]["content"].insert(0, {"type": "text", "text": BLOCK})
    result = inject(body, NEWER)
    assert not result.placed and result.reason == "block_in_cached_prefix"
    assert result.body is body


def test_a_breakpoint_after_the_last_user_message_gets_the_block_in_a_new_user_message() -> None:
    # An agent loop marks its newest tool result: nothing before that mark may change, so
    # OpenAI chat gets the block as a user turn after the last message (issue 9).
    body = openai_body()
    body["messages"][3]["content"] = [
        {"type": "text", "text": "{}", "cache_control": {"type": "ephemeral"}}
    ]
    result = inject(body, BLOCK)
    assert result.placed and result.anchor is not None
    assert result.anchor.kind == "message" and result.anchor.index == 3
    assert result.body["messages"][:4] == body["messages"]
    assert result.body["messages"][4] == {"role": "user", "content": BLOCK}
    assert serialised_prefix(result.body) == serialised_prefix(body)


def test_no_user_message_no_injection() -> None:
    result = inject({"messages": [{"role": "system", "content": "x"}]}, BLOCK)
    assert not result.placed and result.reason == "no_user_message"


def test_text_that_merely_mentions_the_header_is_never_overwritten() -> None:
    system = "sys [ACE recalled procedure — x] keep this system prompt"
    user = "Do it. [ACE recalled procedure — 3 prior runs, confidence 0.50] NEVER touch prod"
    body = {"messages": [{"role": "system", "content": system}, {"role": "user", "content": user}]}
    result = inject(body, BLOCK)
    assert result.placed
    messages = result.body["messages"]
    assert messages[0]["content"] == system
    assert messages[1]["content"] == user + "\n\n" + BLOCK


def test_a_breakpoint_on_the_whole_last_user_message_keeps_it_byte_identical() -> None:
    body = {
        "messages": [{"role": "user", "content": "task", "cache_control": {"type": "ephemeral"}}]
    }
    result = inject(body, BLOCK)
    assert result.placed and result.body["messages"][0] is body["messages"][0]
    assert result.body["messages"][1] == {"role": "user", "content": BLOCK}


def marked(message: dict) -> dict:
    """`message` with a breakpoint on its last part (or on itself for a string content)."""
    out = copy.deepcopy(message)
    if isinstance(out.get("content"), list):
        out["content"][-1]["cache_control"] = {"type": "ephemeral"}
    else:
        out["cache_control"] = {"type": "ephemeral"}
    return out


def agent_loop(turns: int) -> list[dict]:
    """OpenHands-like requests: the client marks its newest messages, moving the marks."""
    history = [
        {"role": "system", "content": [{"type": "text", "text": "You are an agent."}]},
        {"role": "user", "content": [{"type": "text", "text": "Fix the failing test."}]},
    ]
    bodies = []
    for turn in range(turns):
        marks = {0, len(history) - 1, len(history) - 3}
        bodies.append(
            {
                "messages": [
                    marked(m) if i in marks else copy.deepcopy(m) for i, m in enumerate(history)
                ]
            }
        )
        history += [
            {
                "role": "assistant",
                "content": [{"type": "text", "text": f"step {turn}"}],
                "tool_calls": [
                    {
                        "id": f"c{turn}",
                        "type": "function",
                        "function": {"name": "bash", "arguments": "{}"},
                    }
                ],
            },
            {
                "role": "tool",
                "tool_call_id": f"c{turn}",
                "content": [{"type": "text", "text": "ok"}],
            },
        ]
    return bodies


def prefix_units(body: dict) -> list:
    """The body's messages as units (one per part), markers removed, up to its last mark."""
    units, last = [], -1
    for i, message in enumerate(body["messages"]):
        content = message.get("content")
        parts = content if isinstance(content, list) else [content]
        for part in parts:
            units.append((i, message.get("role"), json.dumps(unmarked(part), sort_keys=True)))
            if (isinstance(part, dict) and "cache_control" in part) or (
                "cache_control" in message and part is parts[-1]
            ):
                last = len(units) - 1
    return units[: last + 1]


def test_a_carried_block_keeps_the_upstream_prefix_byte_stable_across_an_agent_loop() -> None:
    bodies = agent_loop(6)
    first = place(bodies[2], BLOCK, "proc-x")  # recalled on the third request
    assert first.placed and first.anchor is not None and first.anchor.kind == "message"
    upstream = [first.body]
    for body in bodies[3:]:
        carried = carry(body, BLOCK, first.anchor, SHAPE)
        assert carried.placed
        upstream.append(carried.body)
    for before, after in zip(upstream, upstream[1:], strict=False):
        kept = prefix_units(before)
        assert [u[1:] for u in prefix_units(after)[: len(kept)]] == [u[1:] for u in kept]
        assert json.dumps(after, ensure_ascii=False).count(BLOCK.splitlines()[0]) == 1


def test_a_block_placed_on_the_first_request_rides_along_as_a_part() -> None:
    bodies = agent_loop(4)
    first = place(bodies[0], BLOCK)
    assert first.anchor is not None and (first.anchor.kind, first.anchor.index) == ("part", 1)
    later = carry(bodies[3], BLOCK, first.anchor, SHAPE)
    assert later.placed
    assert later.body["messages"][1]["content"][-1] == {"type": "text", "text": BLOCK}


def test_a_rewritten_anchor_loses_the_carry() -> None:
    bodies = agent_loop(3)
    first = place(bodies[0], BLOCK)
    assert first.anchor is not None
    rewritten = copy.deepcopy(bodies[2])
    rewritten["messages"][1]["content"][0]["text"] = "Another task."
    lost = carry(rewritten, BLOCK, first.anchor, SHAPE)
    assert not lost.placed and lost.reason == "carry_lost" and lost.body is rewritten


def test_anthropic_after_a_marked_tool_result_gets_a_text_part_and_a_prefill_gets_nothing() -> None:
    body = anthropic_body()
    body["messages"][-1]["content"] = body["messages"][-1]["content"][:1]  # only the result
    assert wire_format(body) == "anthropic"
    result = place(body, BLOCK)
    assert result.placed and result.body["messages"][-1]["content"][-1]["text"] == BLOCK
    assert serialised_prefix(result.body) == serialised_prefix(body)
    prefill = anthropic_body()
    prefill["messages"].append(
        {"role": "assistant", "content": [{"type": "text", "text": "Sure", "cache_control": {}}]}
    )
    refused = place(prefill, BLOCK)
    assert not refused.placed and refused.reason == "assistant_prefill"


def test_the_anchor_keeps_the_callers_label() -> None:
    first = place(agent_loop(1)[0], BLOCK, "proc-x")
    assert first.anchor == Anchor("part", 1, 1, first.anchor.digest if first.anchor else "", "proc-x")


def test_find_reads_the_block_a_body_carries() -> None:
    placed = inject(openai_body(), BLOCK).body
    assert find(placed, SHAPE) == BLOCK
    parts = inject(anthropic_body(), BLOCK).body
    assert find(parts, SHAPE) == BLOCK
    assert find(openai_body(), SHAPE) is None
    mentioned = {"messages": [{"role": "user", "content": "see [ACE recalled procedure — 1 prior run, x]"}]}
    assert find(mentioned, SHAPE) is None


def test_the_shape_is_the_callers_own() -> None:
    note = BlockShape("<note>", re.compile(r"<note>[^<]*</note>"), separator="\n---\n")
    body = {"messages": [{"role": "user", "content": "Hi."}]}
    first = placement.place(body, "<note>one</note>", note)
    assert first.body["messages"][0]["content"] == "Hi.\n---\n<note>one</note>"
    second = placement.place(first.body, "<note>two</note>", note)  # an echoed block is replaced
    assert second.body["messages"][0]["content"] == "Hi.\n---\n<note>two</note>"
    assert find(second.body, note) == "<note>two</note>" and find(second.body, SHAPE) is None
