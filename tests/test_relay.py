"""The relay with the real OpenAI and Anthropic SDK clients against a fake upstream on loopback."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import anthropic
import httpx
import openai
import pytest
from fakeupstream import Call, Calls, FakeUpstream, Status, Text
from relayhelp import AGENT, IDENTITY, KEY, QUESTION, SESSION, TENANT, Running, running_relay

from insika_knowledge.relay.identity import PRIVATE_PREFIXES


@pytest.fixture
def upstream() -> Iterator[FakeUpstream]:
    with FakeUpstream() as fake:
        yield fake


@pytest.fixture
def relay(tmp_path: Path, upstream: FakeUpstream) -> Iterator[Running]:
    with running_relay(tmp_path / "data", upstream.url) as running:
        yield running


def ask_openai(relay: Running, *, stream: bool = False, headers: dict[str, str] | None = None,
               **kw: object) -> tuple[str, httpx.Headers]:
    client = relay.openai()
    messages = [{"role": "user", "content": QUESTION}]
    extra = {**IDENTITY, **(headers or {})}
    if not stream:
        raw = client.chat.completions.with_raw_response.create(
            model="gpt-test", messages=messages, extra_headers=extra, **kw)  # type: ignore[call-overload]
        return raw.parse().choices[0].message.content or "", raw.headers
    with client.chat.completions.with_streaming_response.create(
            model="gpt-test", messages=messages, stream=True, extra_headers=extra, **kw) as response:  # type: ignore[call-overload]
        text = "".join(chunk.choices[0].delta.content or "" for chunk in response.parse() if chunk.choices)
        return text, response.headers


def ask_anthropic(relay: Running, *, stream: bool = False, headers: dict[str, str] | None = None,
                  **kw: object) -> tuple[str, httpx.Headers]:
    client = relay.anthropic()
    messages = [{"role": "user", "content": QUESTION}]
    extra = {**IDENTITY, **(headers or {})}
    if not stream:
        raw = client.messages.with_raw_response.create(
            model="claude-test", max_tokens=100, messages=messages, extra_headers=extra, **kw)  # type: ignore[arg-type]
        message = raw.parse()
        return "".join(b.text for b in message.content if b.type == "text"), raw.headers
    with client.messages.stream(model="claude-test", max_tokens=100, messages=messages,  # type: ignore[arg-type]
                                extra_headers=extra, **kw) as events:
        text = "".join(events.text_stream)
        final = events.get_final_message()
        assert "".join(b.text for b in final.content if b.type == "text") == text
        return text, events.response.headers


ASK = {"openai": ask_openai, "anthropic": ask_anthropic}
FORMATS = pytest.mark.parametrize("api", ["openai", "anthropic"])
STREAMS = pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])


def last_user_text(body: dict) -> str:
    message = [m for m in body["messages"] if m["role"] == "user"][-1]
    content = message["content"]
    return content if isinstance(content, str) else "\n".join(p.get("text", "") for p in content)


def tool_names(body: dict) -> list[str]:
    return [t.get("name") or t["function"]["name"] for t in body.get("tools", [])]


# ---------------------------------------------------------------- wire formats


@FORMATS
@STREAMS
def test_an_answer_comes_back_with_the_knowledge_block_sent_up(relay: Running, upstream: FakeUpstream,
                                                                api: str, stream: bool) -> None:
    upstream.replies = [Text("Campinas entrega em 1-2 dias úteis.")]
    text, headers = ASK[api](relay, stream=stream)
    assert text == "Campinas entrega em 1-2 dias úteis."
    (seen,) = upstream.requests
    sent = last_user_text(seen.body)
    assert sent.startswith(QUESTION + "\n\n<knowledge>")
    assert '<concept name="cep-13-campinas"' in sent
    assert tool_names(seen.body) == ["load_knowledge"]
    assert headers["x-insika-knowledge"] == "injected"
    assert headers["x-ace-skill-modes"] == "skill_knowledge_graph=shadow"
    assert "x-ace-body-rewritten" not in headers and "x-insika-degraded" not in headers
    assert headers["x-request-id"].startswith("req_")  # the upstream's headers come back


@FORMATS
def test_a_stream_reaches_the_client_byte_for_byte(relay: Running, upstream: FakeUpstream, api: str) -> None:
    upstream.replies = [Text("Um texto com acentuação, em vários pedaços.", pieces=7)]
    path = "/v1/chat/completions" if api == "openai" else "/v1/messages"
    for agent in (AGENT, "no-memory-agent"):  # load_knowledge on offer (whole events) or not (chunks)
        body = {"model": "m", "max_tokens": 50, "stream": True, "messages": [{"role": "user", "content": QUESTION}]}
        with httpx.stream("POST", relay.url + path, json=body,
                          headers={**IDENTITY, "x-insika-agent": agent, "authorization": f"Bearer {KEY}"}) as r:
            received = b"".join(r.iter_raw())
            assert r.headers["content-type"].startswith("text/event-stream")
        assert received == upstream.sent[-1]
        assert received.count(b"\n\n") > 7


@FORMATS
@STREAMS
def test_the_clients_own_tool_calls_pass_through(relay: Running, upstream: FakeUpstream, api: str,
                                                 stream: bool) -> None:
    upstream.replies = [Calls([Call("get_order", {"order_id": "A-17"}, id="call_a")])]
    if api == "openai":
        tools = [{"type": "function", "function": {"name": "get_order", "parameters": {"type": "object"}}}]
        client = relay.openai()
        messages = [{"role": "user", "content": QUESTION}]
        if stream:
            chunks = list(client.chat.completions.create(model="m", messages=messages, tools=tools, stream=True,
                                                         extra_headers=IDENTITY))  # type: ignore[arg-type]
            pieces = [tc for c in chunks if c.choices for tc in c.choices[0].delta.tool_calls or []]
            assert pieces[0].function.name == "get_order"
            assert json.loads("".join(p.function.arguments or "" for p in pieces)) == {"order_id": "A-17"}
        else:
            out = client.chat.completions.create(model="m", messages=messages, tools=tools,  # type: ignore[arg-type]
                                                 extra_headers=IDENTITY)
            (call,) = out.choices[0].message.tool_calls or []
            assert (call.id, call.function.name, json.loads(call.function.arguments)) == (
                "call_a", "get_order", {"order_id": "A-17"})
    else:
        tools = [{"name": "get_order", "input_schema": {"type": "object"}}]
        client = relay.anthropic()
        kw = dict(model="m", max_tokens=50, messages=[{"role": "user", "content": QUESTION}], tools=tools,
                  extra_headers=IDENTITY)
        if stream:
            with client.messages.stream(**kw) as events:  # type: ignore[arg-type]
                message = events.get_final_message()
        else:
            message = client.messages.create(**kw)  # type: ignore[arg-type]
        (block,) = [b for b in message.content if b.type == "tool_use"]
        assert (block.name, block.input) == ("get_order", {"order_id": "A-17"})
    (seen,) = upstream.requests
    assert tool_names(seen.body) == ["get_order", "load_knowledge"]  # ours appended after the client's


@FORMATS
@STREAMS
def test_load_knowledge_is_answered_by_the_relay(relay: Running, upstream: FakeUpstream, api: str,
                                                 stream: bool) -> None:
    upstream.replies = [Calls([Call("load_knowledge", {"name": "cep-13-campinas"})]),
                        Text("Pelo que aprendemos, Campinas atende em 1-2 dias úteis.")]
    text, headers = ASK[api](relay, stream=stream)
    assert text == "Pelo que aprendemos, Campinas atende em 1-2 dias úteis."
    first, second = upstream.requests
    messages = second.body["messages"]
    assert messages[:-2] == first.body["messages"]  # the continuation only appends
    if api == "openai":
        call, result = messages[-2:]
        assert call["tool_calls"][0]["function"]["name"] == "load_knowledge"
        assert result["role"] == "tool" and result["tool_call_id"] == call["tool_calls"][0]["id"]
        loaded = json.loads(result["content"])
    else:
        call, result = messages[-2:]
        assert call["content"][-1]["name"] == "load_knowledge"
        (block,) = result["content"]
        assert block["type"] == "tool_result" and block["tool_use_id"] == call["content"][-1]["id"]
        loaded = json.loads(block["content"])
    assert loaded["name"] == "cep-13-campinas" and "Campinas DC" in loaded["markdown"]
    assert relay.recorder.named("knowledge_retrieved") == [{"name": "cep-13-campinas", "agent": AGENT}]
    assert headers["x-insika-knowledge"] == "injected"


def test_a_streamed_load_knowledge_call_never_reaches_the_client(relay: Running, upstream: FakeUpstream) -> None:
    upstream.replies = [Calls([Call("load_knowledge", {"name": "cep-13-campinas"})]), Text("Pronto.", pieces=2)]
    body = {"model": "m", "stream": True, "messages": [{"role": "user", "content": QUESTION}]}
    with httpx.stream("POST", relay.url + "/v1/chat/completions", json=body, headers=IDENTITY) as r:
        received = b"".join(r.iter_raw())
    assert b"load_knowledge" not in received
    assert received == upstream.sent[1]  # exactly the continuation's bytes


def test_load_knowledge_rounds_are_capped(relay: Running, upstream: FakeUpstream) -> None:
    upstream.replies = lambda seen: (  # type: ignore[assignment]
        Text("Sem mais ferramentas.") if seen.body.get("tool_choice") == "none"
        else Calls([Call("load_knowledge", {"name": "nope"})]))
    text, _ = ask_openai(relay)
    assert text == "Sem mais ferramentas."
    assert len(upstream.requests) == relay.relay.settings.max_rounds + 1
    assert "did you mean" in upstream.requests[1].body["messages"][-1]["content"] or \
        "no concept" in upstream.requests[1].body["messages"][-1]["content"]


@FORMATS
@pytest.mark.parametrize("code", [429, 500])
def test_error_answers_pass_through_unchanged(relay: Running, upstream: FakeUpstream, api: str, code: int) -> None:
    upstream.replies = [Status(code, "slow down" if code == 429 else "boom", headers={"retry-after": "7"})]
    path = "/v1/chat/completions" if api == "openai" else "/v1/messages"
    body = {"model": "m", "max_tokens": 5, "messages": [{"role": "user", "content": QUESTION}]}
    r = httpx.post(relay.url + path, json=body, headers=IDENTITY)
    assert r.status_code == code
    assert r.content == upstream.sent[-1]
    assert r.headers["retry-after"] == "7"
    error = openai.RateLimitError if code == 429 else openai.InternalServerError
    if api == "openai":
        with pytest.raises(error) as raised:
            ask_openai(relay)
        assert raised.value.status_code == code
    else:
        with pytest.raises(anthropic.RateLimitError if code == 429 else anthropic.InternalServerError) as got:
            ask_anthropic(relay, stream=True)
        assert got.value.status_code == code


def test_a_client_that_disconnects_mid_stream_cancels_the_upstream(relay: Running, upstream: FakeUpstream) -> None:
    upstream.replies = [Text("palavra " * 400, pieces=400, delay_s=0.01)]
    body = {"model": "m", "stream": True, "messages": [{"role": "user", "content": QUESTION}]}
    with httpx.stream("POST", relay.url + "/v1/chat/completions", json=body, headers=IDENTITY) as r:
        chunks = r.iter_raw()
        assert next(chunks)
        assert next(chunks)
    deadline = time.monotonic() + 5
    while upstream.cancelled == 0 and time.monotonic() < deadline:
        time.sleep(0.02)
    assert upstream.cancelled == 1 and upstream.finished == 0
    assert relay.relay.learner.drain(timeout_s=5)
    assert relay.store().extractions(AGENT) == []  # an unfinished answer is not learned


# ---------------------------------------------------------------- identity


def test_identity_headers_and_session_id_are_never_forwarded(relay: Running, upstream: FakeUpstream) -> None:
    body = {"model": "m", "session_id": "body-session", "messages": [{"role": "user", "content": "oi"}]}
    headers = {**IDENTITY, "x-ace-task-outcome": "success", "x-insika-memory": "on",
               "authorization": f"Bearer {KEY}", "x-api-key": "anthropic-key", "x-custom": "kept"}
    for path in ("/v1/chat/completions", "/v1/messages", "/v1/models"):
        httpx.request("GET" if path == "/v1/models" else "POST", relay.url + path,
                      json=None if path == "/v1/models" else body, headers=headers)
    assert [s.path for s in upstream.requests] == ["/v1/chat/completions", "/v1/messages"]
    for seen in upstream.requests:
        assert not [h for h in seen.headers if h.startswith(PRIVATE_PREFIXES)]
        assert seen.headers["authorization"] == f"Bearer {KEY}"
        assert seen.headers["x-api-key"] == "anthropic-key"
        assert seen.headers["x-custom"] == "kept"
        assert "session_id" not in seen.body


def test_memory_off_sends_the_body_as_the_client_sent_it(relay: Running, upstream: FakeUpstream) -> None:
    raw = json.dumps({"model": "m", "messages": [{"role": "user", "content": QUESTION}]}, indent=1).encode()
    r = httpx.post(relay.url + "/v1/chat/completions", content=raw,
                   headers={**IDENTITY, "x-insika-memory": "off", "content-type": "application/json"})
    assert r.status_code == 200
    assert upstream.requests[0].raw == raw
    assert not [h for h in r.headers if h.startswith(PRIVATE_PREFIXES)]
    assert relay.relay.learner.drain(timeout_s=5)
    assert relay.store().extractions(AGENT) == []
