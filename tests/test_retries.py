"""Item 8 of issue 10: the idle sweep race, backfill's exit code and its 429 back-off."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from fakellm import FakeLLM, Status

from insika_knowledge.backfill import backfill
from insika_knowledge.cli import cli
from insika_knowledge.config import load_config
from insika_knowledge.extract.model import retry_after_s
from insika_knowledge.memory import Memory
from insika_knowledge.procedures import ProceduralMemory, ProceduresConfig

AGENT = "airline"


def _session(session_id: str) -> dict[str, Any]:
    return {"session_id": session_id, "messages": [
        {"role": "user", "content": "Can I bring a 23 kg bag?"},
        {"role": "assistant", "content": "Yes, one 23 kg bag flies free."}]}


def _sessions(path: Path, ids: list[str]) -> Path:
    path.write_text("".join(json.dumps(_session(i)) + "\n" for i in ids), encoding="utf-8")
    return path


# ----------------------------------------------------------------------------- the sweep race


def test_the_idle_sweep_never_deletes_a_turn_that_arrived_after_it_looked(tmp_path: Path) -> None:
    clock = [1_000.0]
    config = ProceduresConfig(mode="shadow", idle_flush_s=600)
    sweeper = ProceduralMemory.open(tmp_path, "t", config, clock=lambda: clock[0])
    other = ProceduralMemory.open(tmp_path, "t", config, clock=lambda: clock[0])  # another process
    messages: list[dict[str, Any]] = [{"role": "user", "content": "Please cancel ABC123"}]
    other.handle_request({"model": "m", "messages": messages}, {"x-ace-session": "s-1"})
    clock[0] += 700  # the session is idle now
    load = sweeper.store.load_session

    def load_then_race(session_id: str) -> Any:
        row = load(session_id)
        # Between the sweep's read and its delete, the other process captures a new turn.
        messages.append({"role": "assistant", "content": "Done, ABC123 is cancelled."})
        messages.append({"role": "user", "content": "Thanks! And my seat?"})
        other.handle_request({"model": "m", "messages": messages}, {"x-ace-session": "s-1"})
        return row

    sweeper.store.load_session = load_then_race  # type: ignore[method-assign]
    assert sweeper.sweep() == []  # not idle any more: nothing flushed
    row = other.store.load_session("s-1")
    assert row is not None and row.messages_seen == 3 and row.turns == 2
    sweeper.store.load_session = load  # type: ignore[method-assign]
    clock[0] += 700
    assert sweeper.sweep() == ["s-1"]  # idle for real now: flushed
    sweeper.close()
    other.close()


# ----------------------------------------------------------------------------- backfill


@pytest.mark.parametrize("header", ["retry-after", "none"])
def test_backfill_backs_off_on_429_honouring_retry_after(tmp_path: Path, header: str) -> None:
    headers = {"retry-after": "1"} if header == "retry-after" else {}
    replies: list[Any] = [Status(429, "slow down", headers), Status(429, "slow down", headers), "[]"]
    sessions = _sessions(tmp_path / "s.jsonl", ["s1"])
    with FakeLLM(replies) as fake:
        memory = Memory(tmp_path / "data", base_url=fake.base_url)
        started = time.monotonic()
        summary = backfill(memory, AGENT, load_config({"model": "openai/fake-model"}), sessions,
                           rate_limit_base_s=0.2)
        elapsed = time.monotonic() - started
        memory.close()
        assert len(fake.requests) == 3
    assert [s.status for s in summary.statuses] == ["done"]
    if header == "retry-after":
        assert elapsed >= 2.0  # two pauses of the second the provider asked for
    else:
        assert elapsed < 5.0  # jittered back-off from 0.2 s, not a fixed long sleep


def test_backfill_gives_up_after_the_attempts_and_the_run_fails(tmp_path: Path) -> None:
    sessions = _sessions(tmp_path / "s.jsonl", ["s1", "s2"])
    with FakeLLM([Status(429, "slow down")]) as fake:
        memory = Memory(tmp_path / "data", base_url=fake.base_url)
        summary = backfill(memory, AGENT, load_config({"model": "openai/fake-model"}), sessions,
                           rate_limit_attempts=3, rate_limit_base_s=0.05, concurrency=2)
        memory.close()
        assert len(fake.requests) == 6  # 3 tries per session, then it is left for a re-run
    assert [s.status for s in summary.unfinished] == ["model_rate_limited"] * 2


def test_a_model_that_cannot_be_reached_fails_the_run(tmp_path: Path) -> None:
    sessions = _sessions(tmp_path / "s.jsonl", ["s1"])
    result = CliRunner().invoke(cli, [
        "backfill", "--agent", AGENT, "--sessions", str(sessions), "--model", "openai/fake-model",
        "--base-url", "http://127.0.0.1:9/v1", "--data-dir", str(tmp_path / "data"), "--quiet",
    ])
    assert result.exit_code == 1, result.output
    assert "model_error" in result.output


@pytest.mark.parametrize(("headers", "expected"), [
    ({"retry-after": "7"}, 7.0), ({"retry-after": "0.5"}, 0.5), ({"retry-after-ms": "1500"}, 1.5),
    ({"retry-after": "soon"}, None), ({}, None),
    # a newcomer's finding: "1e400" and "inf" reached ModelFailure as infinity, "nan" as NaN
    ({"retry-after": "1e400"}, 86_400.0), ({"retry-after": "inf"}, 86_400.0), ({"retry-after": "nan"}, 0.0),
    ({"retry-after-ms": "1e999"}, 86_400.0), ({"retry-after": "-5"}, 0.0),
])
def test_retry_after_is_read_in_seconds(headers: dict[str, str], expected: float | None) -> None:
    assert retry_after_s(headers) == expected


def test_retry_after_as_an_http_date() -> None:
    from datetime import UTC, datetime, timedelta
    from email.utils import format_datetime

    when = format_datetime(datetime.now(UTC) + timedelta(seconds=30), usegmt=True)
    wait = retry_after_s({"retry-after": when})
    assert wait is not None and 25 <= wait <= 31
