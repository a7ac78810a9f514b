from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from insika_knowledge.bench.datasets import shared_data
from insika_knowledge.procedure import wilson_lower_bound
from insika_knowledge.procedures.config import ProceduresConfig
from insika_knowledge.procedures.mining.mine import Miner, judge
from insika_knowledge.procedures.mining.prune import prune
from insika_knowledge.procedures.trace.steps import build
from insika_knowledge.sessions import read_sessions

DATA = shared_data() or Path("/nonexistent")
AIRLINE = DATA / "tau_bench_airline" / "normalized.jsonl"
SWE = DATA / "swe_agent" / "normalized.jsonl"


def call(cid: str, name: str, **arguments: object) -> dict:
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": cid, "type": "function", "function": {"name": name, "arguments": arguments}}
        ],
    }


def result(cid: str, content: str) -> dict:
    return {"role": "tool", "tool_call_id": cid, "content": content}


def sh(cid: str, command: str) -> dict:
    return call(cid, "bash", command=command)


def cancel_trace(user_gives_id: bool = False) -> list[dict]:
    task = "Cancel my trip ZX9QK2 please" if user_gives_id else "Please cancel my upcoming trip"
    return [
        {"role": "user", "content": task},
        call("c1", "get_user_details", user_id="ana_lima_1234"),
        result("c1", json.dumps({"name": "Ana", "reservations": ["ZX9QK2"]})),
        call("c2", "think", thought="The reservation is ZX9QK2, I should cancel it"),
        result("c2", ""),
        call("c3", "cancel_reservation", reservation_id="ZX9QK2"),
        result("c3", '{"reservation_id": "ZX9QK2", "status": "cancelled"}'),
    ]


def keys(messages: list[dict]) -> list[str]:
    trace = build(messages)
    return [p.key for _, p in prune(trace.steps, trace.given)]


# ---------------------------------------------------------------- pruning and hoisting


def test_exploration_is_pruned_and_a_discovered_target_is_hoisted() -> None:
    assert keys(cancel_trace()) == [
        "cancel_reservation(reservation_id=<RESERVATION_ID>) "
        "[reservation_id: from get_user_details]"
    ]


def test_a_target_the_user_gave_is_not_hoisted() -> None:
    assert keys(cancel_trace(user_gives_id=True)) == [
        "cancel_reservation(reservation_id=<RESERVATION_ID>)"
    ]


def test_the_file_a_pruned_viewer_opened_is_hoisted_into_a_pathless_edit() -> None:
    messages = [
        {"role": "user", "content": "Fix the rounding bug"},
        sh("a", "find_file fields.py src"),
        result("a", "Found 1 matches:\n/repo/src/pkg/fields.py"),
        sh("b", "open src/pkg/fields.py 1474"),
        result("b", "[File: /repo/src/pkg/fields.py]"),
        sh("c", "edit 1475:1475\n        return round(x)\nend_of_edit"),
        result("c", "File updated."),
        sh("d", "pytest -q"),
        result("d", "===== 9 passed in 0.5s ====="),
    ]
    assert keys(messages) == [
        "edit <NUM>:<NUM>\n<BODY>\nend_of_edit [file: src/pkg/fields.py]",
        "pytest -q",
    ]


def test_failed_steps_that_were_retried_and_overwritten_edits_are_superseded() -> None:
    messages = [
        {"role": "user", "content": "Make the tests pass"},
        sh("a", "pytest -q"),
        result("a", "===== 1 failed, 2 passed in 0.1s ====="),
        sh("b", "cat > app.py <<EOF\nv1\nEOF"),
        result("b", ""),
        sh("c", "cat > app.py <<EOF\nv2\nEOF"),
        result("c", ""),
        call("d", "book", flight="HAT001", date="2024-05-01"),
        result("d", "Error: payment does not add up"),
        call("e", "book", flight="HAT001", date="2024-05-01"),
        result("e", '{"status": "booked"}'),
        sh("f", "pytest -q"),
        result("f", "===== 3 passed in 0.1s ====="),
    ]
    assert keys(messages) == [
        "cat > app.py <<EOF\n<BODY>\nEOF",
        "book(date=<DATE>, flight=<FLIGHT>)",
        "pytest -q",
    ]


def test_pathless_edits_of_the_same_range_in_the_same_file_keep_the_last() -> None:
    messages = [
        {"role": "user", "content": "fix"},
        sh("a", "open src/a.py"),
        result("a", "[File: src/a.py]"),
        sh("b", "edit 3:3\nx = 1\nend_of_edit"),
        result("b", "File updated."),
        sh("c", "edit 3:3\nx = 2\nend_of_edit"),
        result("c", "File updated."),
        sh("d", "pytest"),
        result("d", "===== 1 passed in 0.1s ====="),
    ]
    assert keys(messages) == ["edit 3:3\n<BODY>\nend_of_edit [file: src/a.py]", "pytest"]


# ---------------------------------------------------------------- verdicts


def test_a_shell_trace_needs_a_passing_verify_and_ends_there() -> None:
    base = [
        {"role": "user", "content": "fix it"},
        sh("a", "cat > a.py <<EOF\nx\nEOF"),
        result("a", ""),
    ]
    passing = base + [
        sh("b", "pytest"),
        result("b", "===== 2 passed in 0.1s ====="),
        sh("c", "rm -rf build"),
        result("c", ""),
    ]
    verdict = judge(build(passing).steps, None)
    assert (verdict.verdict, verdict.reason, verdict.kind) == ("success", "verify_passed", "shell")
    assert [s.key for s in verdict.steps] == ["cat > a.py <<EOF\n<BODY>\nEOF", "pytest"]
    assert verdict.steps[-1].verify
    failing = base + [sh("b", "pytest"), result("b", "===== 1 failed in 0.1s =====")]
    assert judge(build(failing).steps, None).verdict == "failure"
    unverified = judge(build(base).steps, "success")
    assert (unverified.verdict, unverified.reason) == ("unverified", "no_verify_step")
    assert judge(build(passing).steps, "failure").verdict == "failure"


def test_a_tool_trace_needs_success_and_a_clean_last_write() -> None:
    steps = build(cancel_trace()).steps
    assert judge(steps, "success").verdict == "success"
    assert judge(steps, None).reason == "no_outcome"
    assert judge(steps, "failure").verdict == "failure"
    broken = cancel_trace()
    broken[-1] = result("c3", "Error: reservation already cancelled")
    assert judge(build(broken).steps, "success").reason == "last_write_failed"
    reads_only = cancel_trace()[:3]
    assert judge(build(reads_only).steps, "success").reason == "no_write"


def test_tool_traces_give_operations_and_count_in_the_population() -> None:
    miner = Miner()
    follow_up = cancel_trace() + [call("c4", "book_reservation", origin="JFK"), result("c4", "{}")]
    miner.add_trace("f0", build(follow_up), "failure", task_key="t0")
    for run, task in (("s1", "t1"), ("s2", "t1"), ("s3", "t2")):
        miner.add_trace(run, build(cancel_trace()), "success", task_key=task)
    (cancel,) = miner.procedures()  # book_reservation: no task succeeded with it, no procedure
    assert cancel.steps[-1].template == "cancel_reservation(reservation_id=<RESERVATION_ID>)"
    assert (cancel.successes, cancel.failures) == (2, 1)  # t1 and t2 succeeded; t0 failed with it
    assert cancel.confidence == pytest.approx(wilson_lower_bound(2, 3))
    assert cancel.tools == ("cancel_reservation", "get_user_details")
    assert [s.template for s in cancel.steps] == ["get_user_details(user_id=<USER_ID>)", cancel.steps[-1].template]
    assert miner.population == {}  # tool runs are operations: the population serves shell recall
    # No sequence procedure is mined from tool traces any more.
    assert {p.scope for p in miner.procedures()} == {"operation"}


# ---------------------------------------------------------------- the shared samples


@pytest.mark.skipif(not AIRLINE.exists(), reason="shared data not present")
def test_mining_the_airline_sample_gives_well_formed_procedures() -> None:
    sessions = list(read_sessions(AIRLINE))
    miner = Miner()
    for s in sessions:
        miner.add_trace(s.session_id, build(s.messages), s.outcome, task_key=str(s.metadata["task_id"]))
    procedures = miner.procedures()
    labelled = {o: sum(s.outcome == o for s in sessions) for o in ("success", "failure")}
    tasks = {s.metadata["task_id"] for s in sessions}
    assert procedures
    assert miner.verdicts["failure"] == labelled["failure"]
    assert 0 < miner.verdicts["success"] <= labelled["success"]
    assert len({p.id for p in procedures}) == len(procedures)
    raw_ids = {
        m.group(0)
        for s in sessions
        for m in re.finditer(r"\b[a-z]+_[a-z]+_\d{4}\b|\b[A-Z0-9]{6}\b", json.dumps(s.messages))
    }
    for p in procedures:
        assert p.kind == "tool" and p.scope == "operation" and p.steps
        assert p.support == p.successes + p.failures <= len(tasks)
        assert p.confidence == pytest.approx(wilson_lower_bound(p.successes, p.support))
        assert not p.steps[-1].template.startswith(("get_", "search_", "list_", "think(", "calculate("))
        for step in p.steps:
            assert not step.template.startswith(("think(", "calculate("))
            assert not any(raw in step.key for raw in raw_ids if re.search(r"\d", raw)), step.key


@pytest.mark.skipif(not SWE.exists(), reason="shared data not present")
def test_the_swe_sample_is_only_mined_where_a_verify_step_proves_it() -> None:
    sessions = list(read_sessions(SWE))
    # Script checks (on by default) off: the built-in verify list and configured patterns.
    plain = Miner()
    for s in sessions:
        plain.add(s.session_id, build(s.messages, verify_scripts=False).steps, s.outcome)
    assert plain.procedures() == []  # the sample runs no test suite: nothing is verified
    assert plain.reasons == {"no_verify_step": len(sessions)}
    config = ProceduresConfig(verify_patterns=(r"python3? reproduce\.py",))
    verified = Miner()
    for s in sessions:
        verified.add(
            s.session_id,
            build(s.messages, config.verify_regexes, verify_scripts=False).steps,
            s.outcome,
        )
    procedures = verified.procedures()
    assert procedures and all(p.kind == "shell" for p in procedures)
    for p in procedures:
        assert p.steps[-1].verify and p.steps[-1].template == "python reproduce.py"
        assert not any(s.template.startswith(("ls", "find_file", "open ")) for s in p.steps)


def test_a_short_run_that_is_one_part_is_listed_only_once_a_second_run_shares_it(tmp_path: Path) -> None:
    """A newcomer's finding: a run of up to 4 steps ending in a verified step was listed as a
    ``task`` procedure, recallable, with the support of its one run (the docs: a whole run
    is no procedure of its own; a part is listed once two runs share it)."""
    from insika_knowledge.procedures.skill import ProceduralMemory
    from insika_knowledge.sessions import Session
    from insika_knowledge.store.sqlite.procedures import ProcedureStore

    def run(n: int) -> Session:
        return Session(f"s{n}", [
            {"role": "user", "content": f"fix bug {n} in /repo"},
            sh("a", "cat > /repo/fix.py <<EOF\nx\nEOF"), result("a", ""),
            sh("b", "cd /repo && pytest -q"), result("b", "2 passed in 0.05s"),
        ], outcome="success")

    with ProceduralMemory(ProcedureStore(tmp_path / "p.db")) as memory:
        memory.mine_sessions([run(1)])
        assert memory.store.count() == 0 and memory.store.list_procedures() == []
        memory.mine_sessions([run(2)])
        listed = memory.store.list_procedures()
        assert listed and all(p.successes == 2 and p.recurs for p in listed)
