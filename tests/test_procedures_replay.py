"""Measured, honestly: leave-one-task-out evaluation and the raw request replay (issue 9)."""

from __future__ import annotations

import copy
import gzip
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from insika_knowledge.bench.datasets import shared_data
from insika_knowledge.bench.holdout import half_of, leave_one_task_out, summarise
from insika_knowledge.bench.replay_eval import (
    block_place,
    kept_prefix,
    prefix_units,
    read_requests,
    replay,
)
from insika_knowledge.cli import cli
from insika_knowledge.procedures.config import ProceduresConfig
from insika_knowledge.procedures.skill import ProceduralMemory
from insika_knowledge.sessions import read_sessions
from insika_knowledge.store.sqlite.procedures import ProcedureStore

DATA = shared_data() or Path("/nonexistent")
AIRLINE = DATA / "tau_bench_airline" / "normalized.jsonl"
OPENHANDS = DATA / "openhands_swebench" / "normalized.jsonl"
REQUESTS = DATA / "openhands_swebench" / "raw" / "requests.jsonl.gz"
needs_openhands = pytest.mark.skipif(
    not (OPENHANDS.exists() and REQUESTS.exists()), reason="shared data not present"
)
needs_airline = pytest.mark.skipif(not AIRLINE.exists(), reason="shared data not present")

#: Any procedure recalls: the injection path runs on every session of the slice.
FORCED = ProceduresConfig(min_confidence=0.0, min_match_score=0.0)


def test_summarise_counts_precision_wrong_recalls_coverage_and_adherence() -> None:
    rows = [
        {
            "outcome": "success",
            "recalled": "p",
            "correct": True,
            "matched": 3,
            "diverged": 1,
            "hops": 0,
        },
        {
            "outcome": "success",
            "recalled": "p",
            "correct": False,
            "matched": 0,
            "diverged": 2,
            "hops": 1,
        },
        {
            "outcome": "success",
            "recalled": None,
            "correct": None,
            "matched": 0,
            "diverged": 0,
            "hops": 0,
        },
        {
            "outcome": "success",
            "recalled": None,
            "correct": None,
            "matched": 0,
            "diverged": 0,
            "hops": 0,
        },
        {
            "outcome": "failure",
            "recalled": "p",
            "correct": False,
            "matched": 1,
            "diverged": 3,
            "hops": 0,
        },
    ]
    s = summarise(rows)
    assert (s["precision"], s["wrong_recall_rate"], s["coverage"]) == (0.5, 0.25, 0.5)
    assert s["correct_coverage"] == 0.25
    assert s["successful_adherence"] == pytest.approx(3 / 6)
    assert s["failed_adherence"] == pytest.approx(1 / 4) and s["failed_recall_rate"] == 1.0
    assert s["composed"] == 1
    assert s["meets_targets"] == {"precision": False, "wrong_recalls": False}


def _tiny_file(tmp_path: Path) -> Path:
    def run(task: str, text: str, outcome: str, write: bool = True) -> dict:
        messages: list[dict] = [{"role": "user", "content": text}]
        if write:
            messages += [
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": "c",
                            "type": "function",
                            "function": {
                                "name": "cancel_reservation",
                                "arguments": {"reservation_id": "AB12CD"},
                            },
                        }
                    ],
                },
                {"role": "tool", "tool_call_id": "c", "content": '{"status": "cancelled"}'},
            ]
        return {
            "session_id": f"{task}-{text}",
            "messages": messages,
            "outcome": outcome,
            "metadata": {"task_id": task},
        }

    rows = [
        run("a", "please cancel my reservation", "success"),
        run("a", "cancel my reservation please", "success"),
        run("b", "I want to cancel the reservation", "success"),
        run("b", "cancel reservation now", "success"),
        run("c", "cancel my reservation today", "success"),
        run("d", "what is the baggage allowance", "success", write=False),
    ]
    path = tmp_path / "tiny.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    return path


def test_leave_one_task_out_mines_only_other_tasks(tmp_path: Path) -> None:
    report = leave_one_task_out(_tiny_file(tmp_path))
    rows = {r["session_id"]: r for r in report["runs"]}
    assert len(rows) == 6 and report["tasks"] == ["a", "b", "c", "d"]
    # Task c's only run is recalled the cancel procedure the other tasks' runs proved.
    (c,) = [r for r in rows.values() if r["task_id"] == "c"]
    assert c["recalled"] and c["correct"] and c["score"] >= 0.7
    # The no-write success is never given the cancel procedure: its task is not about it.
    (d,) = [r for r in rows.values() if r["task_id"] == "d"]
    assert d["recalled"] is None
    only_c = leave_one_task_out(_tiny_file(tmp_path), tasks=["c"])
    assert [r["task_id"] for r in only_c["runs"]] == ["c"]
    # The ceiling: every cancel run could be served; the no-write success could not.
    assert report["summary"]["reachable"] == 5 and not d["reachable"]
    halves = report["halves"]
    assert {half_of(t) for t in "abcd"} == {"dev", "test"}
    assert sum(h["successful_runs"] for h in halves.values()) == 6
    assert halves[half_of("c")]["correct_recalls"] >= 1


@needs_airline
def test_airline_leave_one_task_out_makes_no_wrong_recall_by_default() -> None:
    report = leave_one_task_out(AIRLINE)
    s = report["summary"]
    assert s["successful_runs"] == 26 and s["failed_runs"] == 34
    assert s["wrong_recall_rate"] <= 0.05
    # A hand-off is never recalled as the way to do a task, whatever the threshold.
    loose = leave_one_task_out(AIRLINE, config=ProceduresConfig(min_match_score=0.0))
    assert loose["summary"]["recalls_on_successful"] > 0
    for row in loose["runs"]:
        assert not (row["recalled"] and all(s.startswith("transfer_") for s in row["steps"]))


def test_prefix_units_ignore_moving_markers() -> None:
    one = {
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "a", "cache_control": {}}]},
            {"role": "assistant", "content": "b"},
        ]
    }
    two = copy.deepcopy(one)
    del two["messages"][0]["content"][0]["cache_control"]
    two["messages"].append({"role": "tool", "content": "c", "cache_control": {}})
    assert prefix_units(one)[1] == 0 and prefix_units(two)[1] == 2
    assert kept_prefix(one, two)
    two["messages"][0]["content"][0]["text"] = "changed"
    assert not kept_prefix(one, two)


def _slice(tmp_path: Path, instances: int) -> Path:
    """The first `instances` instances of the OpenHands request file (read by path)."""
    records = read_requests(REQUESTS)
    keep = list(dict.fromkeys(r["instance_id"] for r in records))[:instances]
    path = tmp_path / "slice.jsonl.gz"
    with gzip.open(path, "wt", encoding="utf-8") as handle:
        for record in records:
            if record["instance_id"] in keep:
                handle.write(json.dumps(record) + "\n")
    return path


@needs_openhands
def test_replaying_openhands_bodies_keeps_the_prefix_and_carries_the_block(tmp_path: Path) -> None:
    path = _slice(tmp_path, 4)
    report = replay(path, sessions=OPENHANDS, config=FORCED)
    assert report["sessions"] == 4 and report["requests"] > 40
    assert report["sessions_with_block"] == 4
    assert report["prefix_kept"] == 1.0 and report["prefix_pairs"] > 30
    assert report["block_carried"] == 1.0 and report["later_requests"] > 30
    assert report["latency"]["p50_ms"] > 0
    honest = replay(path, sessions=OPENHANDS)
    assert honest["prefix_kept"] == 1.0 and honest["requests"] == report["requests"]


@needs_openhands
def test_a_block_first_placed_mid_loop_rides_after_the_marked_tool_result(tmp_path: Path) -> None:
    # The skill is off for the first requests of the session (so the first recall comes when
    # the agent's newest mark sits on a tool result after the last user message).
    records = read_requests(_slice(tmp_path, 1))
    config = ProceduresConfig(mode="prod", min_confidence=0.0, min_match_score=0.0)
    memory = ProceduralMemory(ProcedureStore(tmp_path / "mid.db"), config)
    memory.mine_sessions(
        s
        for s in read_sessions(OPENHANDS)
        if s.metadata.get("task_id") != records[0]["instance_id"]
    )
    previous = None
    first_place = None
    for position, record in enumerate(records):
        headers = {"x-ace-session": "mid"}
        if position < 3:
            headers["x-ace-skills"] = "skill_knowledge_graph=off"
        upstream, stage = memory.handle_request(record["body"], headers)
        if position == 3:
            assert stage is not None and stage.injected and not stage.carried
            messages = record["body"]["messages"]
            assert messages[-1]["role"] == "tool" and "cache_control" in messages[-1]
            assert upstream["messages"][: len(messages)] == messages  # nothing before it moved
            first_place = block_place(upstream)
            assert first_place is not None and first_place[0] == len(messages)
        elif position > 3:
            assert stage is not None and stage.carried
            assert block_place(upstream) == first_place
        if previous is not None:
            assert kept_prefix(previous, upstream)
        previous = upstream
    memory.close()


@needs_openhands
def test_evaluate_cli_runs_leave_one_task_out_and_the_replay(tmp_path: Path) -> None:
    runner = CliRunner()
    out = runner.invoke(cli, ["procedures", "evaluate", "--sessions", str(OPENHANDS), "--json"])
    assert out.exit_code == 0, out.output
    report = json.loads(out.output)
    assert report["summary"]["successful_runs"] == 14 and len(report["tasks"]) == 24
    assert report["summary"]["wrong_recall_rate"] <= 0.05
    # The ceiling and the two fixed halves are reported with every run.
    assert 1 <= report["summary"]["reachable"] <= 14
    assert sum(h["successful_runs"] for h in report["halves"].values()) == 14
    text = runner.invoke(cli, ["procedures", "evaluate", "--sessions", str(OPENHANDS)]).output
    assert "reachable:" in text and "dev half:" in text and "test half:" in text
    replayed = runner.invoke(
        cli,
        ["procedures", "evaluate", "--requests", str(_slice(tmp_path, 2)), "--verify-pattern", "x"],
    )
    assert replayed.exit_code == 0, replayed.output
    assert "prefix kept: 100.0%" in replayed.output
    bad = runner.invoke(cli, ["procedures", "evaluate"])
    assert bad.exit_code == 2 and "--sessions" in bad.output
