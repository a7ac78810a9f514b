"""A reply over its cap is refused as it is read: a model or an embeddings endpoint that
answers without end neither grows the process nor reads, minutes later, as a timeout.

An attacker's finding: a model endpoint that streamed a 1.25 GB answer was read whole (the
process grew by as much) and then reported as ``model_timeout``. A second attacker's: the
cap counted the bytes on the wire, and a 2 KB gzip-of-gzip reply inflated to 1 GiB (3 GiB
resident) inside the SDK.
"""

from __future__ import annotations

import gzip
import json
import resource
import time
import zlib
from pathlib import Path

import pytest
from fakellm import FakeLLM, Flood, Raw, Status, Trickle

from insika_knowledge import replies
from insika_knowledge.config import KnowledgeConfig
from insika_knowledge.errors import ModelFailure, RunTimeFailure
from insika_knowledge.extract.model import InstructorModel, MergeRequest
from insika_knowledge.learn import learn_turn
from insika_knowledge.store import SQLiteStore

AGENT = "loja"
TURN = [{"role": "user", "content": "Qual o prazo de troca?"},
        {"role": "assistant", "content": "Trocas em até 30 dias após a entrega."}]


@pytest.fixture
def small_cap(monkeypatch: pytest.MonkeyPatch) -> int:
    """The model's cap at 1 MiB, so a test floods a few MiB, not the real 8."""
    monkeypatch.setattr(replies, "MODEL_REPLY_MAX_BYTES", 1024 * 1024)
    monkeypatch.setattr(replies, "EMBEDDINGS_REPLY_MAX_BYTES", 1024 * 1024)
    return 1024 * 1024


@pytest.mark.parametrize("declared", [False, True], ids=["streamed", "content-length"])
@pytest.mark.parametrize("spec", ["openai/fake", "anthropic/claude-test"])
def test_a_model_reply_over_the_cap_is_an_error_that_says_so(small_cap: int, spec: str, declared: bool) -> None:
    with FakeLLM([Flood(40 * small_cap, declared=declared)]) as fake:
        url = fake.base_url if spec.startswith("openai") else fake.root_url
        model = InstructorModel(spec, base_url=url, api_key="k", timeout_s=30.0)
        started = time.monotonic()
        with pytest.raises(ModelFailure) as failed:
            model.merge(MergeRequest(AGENT, "s1", "n", "a", "b", 100))
        took = time.monotonic() - started
    assert failed.value.outcome == "model_error" and not failed.value.transient
    assert f"over the {small_cap:,}-byte limit" in str(failed.value) and "/v1/" in str(failed.value)
    assert len(fake.requests) == 1  # not asked again: the same request is answered alike
    assert fake.flooded < 40 * small_cap and took < 20  # it stopped reading; no timeout waited out


def test_a_turn_whose_model_floods_is_recorded_and_loses_nothing(tmp_path: Path, small_cap: int) -> None:
    store = SQLiteStore(tmp_path / "k.db")
    try:
        with FakeLLM([Flood(20 * small_cap)]) as fake:
            model = InstructorModel("openai/fake", base_url=fake.base_url, api_key="k", timeout_s=30.0)
            report = learn_turn(store, AGENT, KnowledgeConfig(), model, session_id="s1", turn_id="t1", messages=TURN)
        assert report.outcome == "model_error" and "byte limit" in store.extraction(AGENT, "s1", "t1").detail
        assert store.names(AGENT) == []
    finally:
        store.close()


def test_a_reply_under_the_cap_is_read_as_before(small_cap: int) -> None:
    with FakeLLM(['{"verdict": "related", "body": "' + "y" * (small_cap // 2) + '"}']) as fake:
        model = InstructorModel("openai/fake", base_url=fake.base_url, api_key="k", timeout_s=30.0)
        answer = model.merge(MergeRequest(AGENT, "s1", "n", "a", "b", 100))
    assert answer.verdict == "related" and len(answer.body or "") == small_cap // 2


def test_an_embeddings_reply_over_the_cap_fails_the_batch_and_names_the_limit(small_cap: int) -> None:
    from insika_knowledge.index.embedders import remote

    with FakeLLM([Flood(20 * small_cap)]) as fake:
        embedder = remote.RemoteEmbedder("text-embedding-3-small", base_url=fake.base_url, api_key="k")
        with pytest.raises(RunTimeFailure, match=r"ReplyTooLarge: .*over the 1,048,576-byte limit"):
            embedder.passages(["frete para Campinas"])
    assert fake.flooded < 20 * small_cap


def test_a_cap_must_be_positive() -> None:
    with pytest.raises(ValueError, match="positive number of bytes, not 0"):
        replies.capped_transport(object, 0)
    with pytest.raises(ValueError, match="dict is not an httpx client"):
        replies.capped_transport(dict, 10)


def test_the_cap_is_found_however_deep_an_sdk_wraps_it() -> None:
    cut = replies.ReplyTooLarge("http://x/v1/chat/completions", 10)
    try:
        try:
            raise cut
        except replies.ReplyTooLarge as exc:
            raise RuntimeError("Connection error.") from exc
    except RuntimeError as outer:
        assert replies.refused(outer) is cut
    assert replies.refused(RuntimeError("other")) is None



def _completion(content: str) -> bytes:
    return json.dumps({"id": "c", "object": "chat.completion", "created": 0, "model": "fake",
                       "choices": [{"index": 0, "finish_reason": "stop",
                                    "message": {"role": "assistant", "content": content}}]}).encode()


def _bomb(size: int) -> bytes:
    """`size` bytes of spaces, gzipped twice (a few KB)."""
    return gzip.compress(gzip.compress(b" " * size, 9), 9)


@pytest.mark.parametrize("encoding", ["gzip", "gzip, gzip"])
def test_a_compressed_reply_is_held_to_the_cap_as_it_inflates(small_cap: int, encoding: str) -> None:
    body = _bomb(200 * small_cap) if "," in encoding else gzip.compress(b" " * (200 * small_cap), 9)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with FakeLLM([Raw(body, {"content-encoding": encoding})]) as fake:
        model = InstructorModel("openai/fake", base_url=fake.base_url, api_key="k", timeout_s=30.0)
        with pytest.raises(ModelFailure, match=r"runs over the 1,048,576-byte limit") as failed:
            model.merge(MergeRequest(AGENT, "s1", "n", "a", "b", 100))
    grown_mib = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    assert failed.value.outcome == "model_error" and not failed.value.transient and len(fake.requests) == 1
    assert grown_mib < 100  # 200 MiB once inflated, never held
    assert fake.headers[0]["accept-encoding"] == "identity"  # asked for as it is


@pytest.mark.parametrize(("encoding", "pack"), [
    ("gzip", gzip.compress), ("deflate", zlib.compress),
    ("deflate", lambda data: zlib.compress(data)[2:-4]),  # raw deflate, as some servers send
    ("gzip, gzip", lambda data: gzip.compress(gzip.compress(data)))])
def test_a_small_compressed_reply_is_read_as_before(small_cap: int, encoding: str, pack) -> None:
    verdict = json.dumps({"verdict": "related", "body": "frete grátis " * 100})
    with FakeLLM([Raw(pack(_completion(verdict)), {"content-encoding": encoding})]) as fake:
        model = InstructorModel("openai/fake", base_url=fake.base_url, api_key="k", timeout_s=30.0)
        answer = model.merge(MergeRequest(AGENT, "s1", "n", "a", "b", 100))
    assert answer.verdict == "related" and answer.body == "frete grátis " * 100


@pytest.mark.parametrize(("body", "headers", "said"), [
    (b"\x00" * 100, {"content-encoding": "br"}, "is in br, which is not read here"),
    (b"not gzip at all", {"content-encoding": "gzip"}, "is not valid gzip"),
])
def test_a_reply_that_cannot_be_inflated_says_why(small_cap: int, body: bytes, headers: dict[str, str],
                                                   said: str) -> None:
    with FakeLLM([Raw(body, headers)]) as fake:
        model = InstructorModel("openai/fake", base_url=fake.base_url, api_key="k", timeout_s=30.0)
        with pytest.raises(ModelFailure, match=said) as failed:
            model.merge(MergeRequest(AGENT, "s1", "n", "a", "b", 100))
    assert failed.value.outcome == "model_error" and len(fake.requests) == 1


def test_passages_over_the_cap_are_not_asked_again_but_a_server_error_is(small_cap: int) -> None:
    from insika_knowledge.index.embedders import remote

    with FakeLLM([Flood(20 * small_cap, declared=True)]) as fake:
        embedder = remote.RemoteEmbedder("text-embedding-3-small", base_url=fake.base_url, api_key="k")
        with pytest.raises(RunTimeFailure, match="ReplyTooLarge"):
            embedder.passages(["frete"])
    assert len(fake.requests) == 1
    with FakeLLM([Status(503, "busy")]) as fake:
        embedder = remote.RemoteEmbedder("text-embedding-3-small", base_url=fake.base_url, api_key="k")
        with pytest.raises(RunTimeFailure, match="503"):
            embedder.passages(["frete"])
    assert len(fake.requests) == remote.PASSAGE_TRIES == 2


@pytest.mark.parametrize("spec", ["openai/fake", "anthropic/claude-test"])
def test_a_reply_that_trickles_in_is_cut_at_the_timeout(spec: str) -> None:
    """An attacker's finding: the SDK's timeout bounds each wait for a byte, so a reply sent a
    byte every 2 s kept a call with a 10 s timeout open for 128 s."""
    with FakeLLM([Trickle(20.0, every=0.2)]) as fake:
        url = fake.base_url if spec.startswith("openai") else fake.root_url
        model = InstructorModel(spec, base_url=url, api_key="k", timeout_s=1.5)
        started = time.monotonic()
        with pytest.raises(ModelFailure, match=r"took over 1.5 s in all") as failed:
            model.merge(MergeRequest(AGENT, "s1", "n", "a", "b", 100))
        took = time.monotonic() - started
    assert failed.value.outcome == "model_timeout" and failed.value.transient
    assert 1.5 <= took < 6
