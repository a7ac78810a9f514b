"""Measured, honestly: leave-one-task-out evaluation and the raw request replay (issue 9)."""

from __future__ import annotations

import copy
import gzip
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from insika_knowledge.bench.datasets import shared_data
from insika_knowledge.bench.holdout import half_of, summarise
from insika_knowledge.bench.operations_eval import evaluate_operations, format_operations
from insika_knowledge.bench.replay_eval import (
    block_place,
    kept_prefix,
    prefix_units,
    read_requests,
    replay,
)
from insika_knowledge.cli import cli
from insika_knowledge.errors import UserError
from insika_knowledge.procedures.config import ProceduresConfig
from insika_knowledge.procedures.skill import ProceduralMemory
from insika_knowledge.sessions import read_sessions
from insika_knowledge.store.sqlite.procedures import ProcedureStore

DATA = shared_data() or Path("/nonexistent")
OPENHANDS = DATA / "openhands_swebench" / "normalized.jsonl"
REQUESTS = DATA / "openhands_swebench" / "raw" / "requests.jsonl.gz"
needs_openhands = pytest.mark.skipif(
    not (OPENHANDS.exists() and REQUESTS.exists()), reason="shared data not present"
)
TAU2 = [DATA / "tau2_bench_airline" / "normalized.jsonl", DATA / "tau2_bench_retail" / "normalized.jsonl"]
needs_tau2 = pytest.mark.skipif(not all(p.exists() for p in TAU2), reason="shared data not present")

#: Any procedure recalls: the injection path runs on every session of the slice.
FORCED = ProceduresConfig(min_confidence=0.0, min_match_score=0.0, environment_runs=0)  # every procedure recallable


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


def _operations_file(tmp_path: Path) -> Path:
    """Tool-calling sessions by user group: dev groups dee, eva, fay, hal, lee; test ana, bob, gus."""

    def run(group: str, task: str, text: str, write: str | None, outcome: str = "success") -> dict:
        messages: list[dict] = [{"role": "user", "content": text}]
        if write:
            messages += [
                {"role": "assistant", "content": None, "tool_calls": [
                    {"id": "c", "type": "function", "function": {"name": write, "arguments": {"order_id": "#W1"}}}]},
                {"role": "tool", "tool_call_id": "c", "content": '{"status": "done"}'},
            ]
        return {"session_id": f"{group}/{task}/{len(text)}/{outcome}", "messages": messages, "outcome": outcome,
                "metadata": {"task_id": task, "user_group": group, "intent": write or "(no write)"}}

    rows = [
        run("dee", "t1", "I want to exchange the keyboard I received", "exchange_items"),
        run("dee", "t1", "please exchange the keyboard I received", "exchange_items"),
        run("eva", "t2", "I'd like to exchange a lamp that was delivered", "exchange_items"),
        run("fay", "t3", "exchange the delivered watch for another color", "exchange_items"),
        run("hal", "t4", "return the bicycle I received, it is damaged", "return_items"),
        run("lee", "t5", "I want to return a delivered camera", "return_items"),
        run("lee", "t6", "what is my order status", None),
        run("ana", "t7", "I want to exchange the keyboard that was delivered", "exchange_items"),
        run("ana", "t7", "exchange my delivered keyboard please", "exchange_items", "failure"),
        run("bob", "t8", "please cancel my pending order", "cancel_order"),  # an intent dev never saw
        run("gus", "t9", "I want to exchange the lamp that was delivered", None),  # the agent refused
    ]
    path = tmp_path / "ops.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    return path


SMALL = {"neighbours": (2, 3), "min_similarity": (0.2,), "min_agreement": (0.6,), "margin": (0.0,),
         "min_confidence": (0.2, 0.3)}


def test_thresholds_are_chosen_on_dev_and_test_is_scored_once(tmp_path: Path) -> None:
    path = _operations_file(tmp_path)
    report = evaluate_operations([str(path)], grid=SMALL)
    rows = {r["session_id"]: r for r in report["runs"]}
    assert {r["group"].rsplit(":", 1)[1] for r in rows.values()} == {"ana", "bob", "gus"}  # test only
    assert report["dev"]["settings_swept"] == 4 and report["scored_with"] == report["chosen"]
    exchange = [r for r in rows.values() if r["task"].endswith(":t7")]
    assert all(r["recalled"] == ["exchange_items"] for r in exchange)
    assert [r["correct"] for r in exchange if r["outcome"] == "success"] == [True]
    assert report["test"]["failed_given_right"] == 1
    # An intent only test has is abstained on; a run that wrote nothing given a write is wrong.
    (bob,) = [r for r in rows.values() if r["task"].endswith(":t8")]
    assert bob["recalled"] == [] and not bob["reachable"]
    (gus,) = [r for r in rows.values() if r["task"].endswith(":t9")]
    assert gus["recalled"] == ["exchange_items"] and gus["correct"] is False
    s = report["test"]
    assert (s["successful_runs"], s["recalls"], s["correct"], s["wrong"]) == (3, 2, 1, 1)
    assert s["precision"] == 0.5 and s["reachable"] == 1 and s["skeleton_precision"] is not None
    assert report["test_by_intent"]["exchange_items"]["correct"] == 1
    assert set(report["test_intervals"]) == {"precision", "wrong_recall_rate", "coverage"}
    # Dev alone decides: removing the test runs changes neither the sweep nor the choice.
    dev_only = tmp_path / "dev.jsonl"
    dev_only.write_text("".join(line for line in path.read_text().splitlines(keepends=True)
                                if json.loads(line)["metadata"]["user_group"] not in ("ana", "bob", "gus")))
    again = evaluate_operations([str(dev_only)], grid=SMALL)
    assert again["chosen"] == report["chosen"] and again["dev"] == report["dev"]
    assert "targets (test)" in format_operations(report)


def test_as_deployed_a_request_answered_wrongly_once_is_not_answered_so_again(tmp_path: Path) -> None:
    path = _operations_file(tmp_path)
    again = {"session_id": "gus/t9/again", "outcome": "success",
             "messages": [{"role": "user", "content": "I want to exchange the lamp that was delivered, please"}],
             "metadata": {"task_id": "t9", "user_group": "gus", "intent": "(no write)"}}
    path.write_text(path.read_text() + json.dumps(again) + "\n", encoding="utf-8")
    report = evaluate_operations([str(path)], grid=SMALL)
    frozen = {r["session_id"]: r["recalled"] for r in report["runs"] if r["task"].endswith(":t9")}
    assert list(frozen.values()) == [["exchange_items"], ["exchange_items"]]  # the memory frozen at dev
    deployed = report["deployed"]
    # The first t9 run, given an exchange it did not make, is learned before the second arrives.
    rows = {r["session_id"]: r for r in deployed["runs"]}
    assert set(rows) == {r["session_id"] for r in report["runs"]}  # every test run scored once
    assert rows["gus/t9/again"]["recalled"] == [] and rows[next(iter(frozen))]["correct"] is False
    assert (deployed["summary"]["wrong"], report["test"]["wrong"]) == (1, 2)
    # In every arrival order one of the two t9 runs is answered wrongly, never both.
    assert deployed["orders"] == 10 and deployed["shuffled"]["wrong_recall_rate"] == [0.25, 0.25, 0.25]
    assert "test as deployed" in format_operations(report)


def test_a_failed_run_is_judged_by_its_label_not_by_what_it_wrote(tmp_path: Path) -> None:
    path = _operations_file(tmp_path)
    wrote_wrongly = {"session_id": "gus/t9/failed", "outcome": "failure",
                     "messages": [{"role": "user", "content": "I want to exchange the lamp that was delivered"},
                                  {"role": "assistant", "content": None, "tool_calls": [
                                      {"id": "c", "type": "function",
                                       "function": {"name": "exchange_items", "arguments": {"order_id": "#W9"}}}]},
                                  {"role": "tool", "tool_call_id": "c", "content": '{"status": "done"}'}],
                     "metadata": {"task_id": "t9", "user_group": "gus", "intent": "(no write)"}}
    path.write_text(path.read_text() + json.dumps(wrote_wrongly) + "\n", encoding="utf-8")
    report = evaluate_operations([str(path)], grid=SMALL)
    (row,) = [r for r in report["runs"] if r["session_id"] == "gus/t9/failed"]
    # it made the exchange it was given, but its task makes no write: the wrong operation
    assert row["recalled"] == ["exchange_items"] and row["writes"] == ["exchange_items"] and row["correct"] is False
    assert report["test"]["failed_given_wrong"] == 1 and report["test"]["failed_given_right"] == 1


def test_with_nothing_to_choose_on_dev_the_configured_thresholds_are_used(tmp_path: Path) -> None:
    path = _operations_file(tmp_path)
    test_only = tmp_path / "test_only.jsonl"  # ana, bob, gus: all on the test side
    test_only.write_text("".join(line for line in path.read_text().splitlines(keepends=True)
                                 if json.loads(line)["metadata"]["user_group"] in ("ana", "bob", "gus")))
    config = ProceduresConfig()
    report = evaluate_operations([str(test_only)], grid=SMALL, config=config)
    assert report["dev"]["groups"] == 0 and not report["dev"]["chosen_on_dev"]
    assert report["scored_with"] == report["configured"]
    text = format_operations(report)
    assert "nothing was chosen" in text and "None" not in text


def test_evaluate_reads_gzip_and_names_a_run_it_would_miscount(tmp_path: Path) -> None:
    """A newcomer's runs given twice counted twice, a call without a name counted as no write,
    any JSON value was a task id, and a ``.gz`` file was refused as not UTF-8."""
    path = _operations_file(tmp_path)
    packed = tmp_path / "ops.jsonl.gz"
    packed.write_bytes(gzip.compress(path.read_bytes()))
    plain, compressed = (evaluate_operations([str(p)], grid=SMALL) for p in (path, packed))
    assert compressed["test"] == plain["test"] and compressed["chosen"] == plain["chosen"]
    lines = path.read_text().splitlines()

    def refused(rows: list[str], *more: Path) -> str:
        bad = tmp_path / "bad.jsonl"
        bad.write_text("\n".join(rows) + "\n", encoding="utf-8")
        with pytest.raises(UserError) as caught:
            evaluate_operations([str(bad), *map(str, more)], grid=SMALL)
        return str(caught.value)

    assert refused(lines + [lines[1]]).endswith(
        f"bad.jsonl:{len(lines) + 1}: session_id 'dee/t1/39/success' was read before, at {tmp_path}/bad.jsonl:2; "
        "each run appears once (a run counted twice weighs twice)")
    assert refused(lines[:1], path).startswith(f"{path}:1: session_id 'dee/t1/42/success' was read before, "
                                               f"at {tmp_path}/bad.jsonl:1")  # across files too
    nameless = json.loads(lines[0])
    nameless["messages"][1]["tool_calls"][0]["function"] = {"arguments": {}}
    assert refused([json.dumps(nameless)]).endswith(
        "bad.jsonl:1: messages[1].tool_calls[0] has no tool name (function.name, or name in the normalised form)")
    nameless["messages"][1]["tool_calls"] = {"name": "exchange_items"}
    assert refused([json.dumps(nameless)]).endswith("bad.jsonl:1: messages[1].tool_calls must be a list")
    nameless["messages"][1] = {"role": "assistant", "content": [{"type": "tool_use", "id": "c", "name": None}]}
    assert refused([json.dumps(nameless)]).endswith("bad.jsonl:1: messages[1].content[0] has no tool name "
                                                    "(a tool_use block's name)")  # Anthropic's form too
    for name in ("   ", " exchange_items"):
        nameless["messages"][1] = {"role": "assistant", "content": None,
                                   "tool_calls": [{"id": "c", "name": name, "arguments": {}}]}
        assert "messages[1].tool_calls[0]" in refused([json.dumps(nameless)])
    unlabelled = json.loads(lines[0])
    unlabelled["outcome"] = "SUCCESS"  # not scored at all, silently, before
    assert refused([json.dumps(unlabelled)]).endswith(
        "bad.jsonl:1: outcome must be 'success', 'failure' or null (a run that is not scored), not \"SUCCESS\"")
    assert refused([], path, path).endswith(f"{path} is given twice (each file's runs count once)")
    for key, value, said in (("task_id", {"id": 1}, '{"id": 1}'), ("task_id", True, "true"),
                             ("user_group", "", '""'), ("intent", 3, "3")):
        labelled = json.loads(lines[0])
        labelled["metadata"][key] = value
        assert refused([json.dumps(labelled)]).endswith(f"metadata.{key} must be non-empty text"
                                                        f"{' or an integer' if key != 'intent' else ''}, not {said}")
    spaced = json.loads(lines[0])
    spaced["metadata"]["task_id"] = " t1"  # a task of its own, silently, before
    assert refused([json.dumps(spaced)]).endswith('bad.jsonl:1: metadata.task_id " t1" has spaces around it')
    numbered = [json.loads(line) for line in lines]
    for row in numbered:
        row["metadata"]["task_id"] = int(row["metadata"]["task_id"][1:])  # integers are ids too
    path.write_text("".join(json.dumps(r) + "\n" for r in numbered), encoding="utf-8")
    assert evaluate_operations([str(path)], grid=SMALL)["test"] == plain["test"]


@needs_tau2
def test_the_shared_tau2_samples_are_evaluated_by_user_group() -> None:
    report = evaluate_operations([str(p) for p in TAU2], grid=SMALL)
    rows = report["runs"]
    assert len(rows) == sum(1 for p in TAU2 for s in read_sessions(p) if half_of(s.metadata["user_group"]) == "test")
    test_groups = {r["group"] for r in rows}
    dev_groups = {f"{p}:{s.metadata['user_group']}" for p in TAU2 for s in read_sessions(p)} - test_groups
    assert test_groups and dev_groups and report["dev"]["groups"] == len(dev_groups)
    for row in rows:
        assert not any(op.startswith("transfer") for op in row["recalled"])  # never a hand-off


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
    config = ProceduresConfig(mode="prod", min_confidence=0.0, min_match_score=0.0, environment_runs=0)
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
