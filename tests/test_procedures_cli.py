from __future__ import annotations

import json
from pathlib import Path

import apsw
import pytest
from click.testing import CliRunner

from insika_knowledge.bench.datasets import shared_data
from insika_knowledge.bench.evaluate import evaluate, split_tasks
from insika_knowledge.cli import cli
from insika_knowledge.procedure import PART, Procedure, ProcedureStep
from insika_knowledge.procedures.mining.scoring import MinedRun
from insika_knowledge.store import SQLiteStore
from insika_knowledge.store.procedure_records import SessionRow
from insika_knowledge.store.sqlite.procedures import ProcedureStore

DATA = shared_data() or Path("/nonexistent")
AIRLINE = DATA / "tau_bench_airline" / "normalized.jsonl"
RETAIL = DATA / "tau2_bench_retail" / "normalized.jsonl"
needs_data = pytest.mark.skipif(not (AIRLINE.exists() and RETAIL.exists()), reason="shared data not present")

STEPS = (
    ProcedureStep(
        "cancel_reservation(reservation_id=<RESERVATION_ID>)", "cancel_reservation(reservation_id)"
    ),
)


def success(run: str, key: str = "proc-aaaaaaaaaaaa") -> MinedRun:
    return MinedRun(
        run,
        "success",
        (key,),
        "tool",
        STEPS,
        ("cancel_reservation",),
        frozenset({"cancel"}),
        "cancel",
    )


# ---------------------------------------------------------------- store


def test_runs_count_once_and_failures_recorded_before_the_procedure_count(open_procedures) -> None:
    store = open_procedures()
    g0 = store.generation()
    assert (
        store.record_runs([MinedRun("f1", "failure", ("proc-aaaaaaaaaaaa", "proc-bbbbbbbbbbbb"))])
        == 2
    )
    assert store.count() == 0
    assert store.record_runs([success("s1"), success("s1"), success("s2")]) == 2
    procedure = store.get("proc-aaaaaaaaaaaa")
    assert (procedure.successes, procedure.failures, procedure.triggers) == (2, 1, {"cancel": 2})
    assert store.generation() > g0
    assert (
        store.record_runs([success("s1"), MinedRun("f1", "failure", ("proc-aaaaaaaaaaaa",))]) == 0
    )
    store.close()
    reopened = open_procedures()
    assert reopened.get("proc-aaaaaaaaaaaa").steps == STEPS
    reopened.close()


def test_the_population_scope_and_a_sessions_block_are_stored_on_both_backends(open_procedures) -> None:
    store = open_procedures()
    counted = MinedRun("u1", "unverified", (), terms=frozenset({"cancel", "flight"}), population=True)
    assert store.record_runs([counted, counted]) == 0  # a replayed run counts once
    g1 = store.generation()
    assert store.population_since(0) == {"": 1}  # one session's terms are only noted (two-session rule)
    store.record_runs([MinedRun("u2", "unverified", (), terms=frozenset({"cancel"}), population=True)])
    assert store.population_since(g1) == {"": 2, "cancel": 2}  # only what changed after g1
    part = Procedure("proc-cccccccccccc", "tool", STEPS, ("cancel_reservation",), {}, 0, 1, 0, "cancel",
                     "2024-01-01T00:00:00Z", "2024-01-01T00:00:00Z", scope=PART)
    store.record_runs([_Put(part)])
    assert store.get(part.id).scope == PART
    assert store.count() == 0 and store.list_procedures() == []  # one run's part is not listed
    session = SessionRow("s1", task="cancel", block="<procedure>...</procedure>", anchor='{"at": 1}')
    store.save_turn(session, [], {"session_id": "s1", "action": "hit", "mode": "prod", "injected": 0,
                                  "injected_tokens": 0, "would_inject_tokens": 0, "block_tokens": 0,
                                  "max_injection_tokens": 0,
                                  "matched_steps": 0, "diverged_steps": 0, "session_scoped": 1,
                                  "captured_turns": 1, "duration_ms": 0.0, "notes": ["read around"]})
    assert (store.load_session("s1").block, store.load_session("s1").anchor) == (session.block, session.anchor)
    assert store.stages(session_id="s1")[0]["notes"] == ["read around"]
    store.finish_task(store.load_session("s1"), [], keep=True)
    assert store.load_session("s1").block == session.block  # carried into the next task
    store.close()


class _Put:
    """A `CountedRun` that writes one procedure as it is."""

    def __init__(self, procedure: Procedure) -> None:
        self.procedure = procedure

    def record(self, rows) -> int:  # noqa: ANN001
        rows.put(self.procedure)
        return 0


def test_procedures_share_the_concept_database_file(tmp_path: Path) -> None:
    concepts = SQLiteStore(tmp_path / "tenant.db")
    procedures = ProcedureStore(tmp_path / "tenant.db")
    procedures.record_runs([success("s1")])
    tables = {
        r[0]
        for r in apsw.Connection(str(tmp_path / "tenant.db")).execute(
            "SELECT name FROM sqlite_master WHERE type='table'"
        )
    }
    assert {"concepts", "procedures", "capture_sessions", "procedure_stages"} <= tables
    concepts.close()
    procedures.close()


# ---------------------------------------------------------------- command line


@needs_data
def test_mine_list_show_recall_scorecard(tmp_path: Path) -> None:
    runner = CliRunner()
    base = ["--data-dir", str(tmp_path)]
    out = runner.invoke(cli, ["procedures", "mine", "--sessions", str(RETAIL), *base])
    assert out.exit_code == 0, out.output
    assert "mined 38 traces" in out.output and "procedures in tenant default" in out.output
    again = runner.invoke(cli, ["procedures", "mine", "--sessions", str(RETAIL), *base])
    assert "0 new run counts" in again.output
    listed = json.loads(runner.invoke(cli, ["procedures", "list", "--json", *base]).output)
    assert listed and listed[0]["confidence"] >= listed[-1]["confidence"]
    assert {p["scope"] for p in listed} == {"operation"}  # one per write, over the tasks that made it
    first = listed[0]["id"]
    assert all(not p["steps"][-1].startswith("transfer_to_human_agents") for p in listed)  # never a hand-off
    text = runner.invoke(cli, ["procedures", "list", *base]).output
    assert "operation" in text and "tasks" in text and "recallable" in text
    shown = runner.invoke(cli, ["procedures", "show", first, *base])
    assert shown.exit_code == 0 and "[ACE recalled procedure — " in shown.output and "&lt;" not in shown.output
    recalled = json.loads(
        runner.invoke(
            cli, ["procedures", "recall", "I want to exchange an item I received", "--json", *base]
        ).output
    )
    assert recalled["result"] in {"hit", "miss"} and recalled["matcher"] in ("tasks", "terms")
    # a newcomer's report: the docs' example abstained and the CLI printed only the shell
    # matcher's 0.00; it now says why the past tasks' vote gave nothing
    camera = runner.invoke(cli, ["procedures", "recall", "Hi, I'd like to return a camera I received", *base])
    assert camera.exit_code == 0 and "the past tasks' vote abstained: only one past task supports it" in camera.output
    assert "best shell score" not in camera.output  # a newcomer's finding: a store of tool procedures has none
    told = json.loads(runner.invoke(cli, ["procedures", "recall", "Hi, I'd like to return a camera I received",
                                          "--json", *base]).output)
    assert told["result"] == "miss" and told["abstained"] == "one_supporting_task"
    airline = runner.invoke(cli, ["procedures", "mine", "--sessions", str(AIRLINE), "--tenant", "air", *base])
    assert airline.exit_code == 0 and "mined 60 traces" in airline.output
    card = runner.invoke(cli, ["procedures", "scorecard", *base])
    assert (
        card.exit_code == 0
        and "recall_hit_rate" in card.output
        and "divergence_rate" in card.output
    )


def test_usage_mistakes_exit_2_with_a_message(tmp_path: Path) -> None:
    runner = CliRunner()
    missing = runner.invoke(cli, ["procedures", "list", "--data-dir", str(tmp_path)])
    assert missing.exit_code == 2 and "has no database" in missing.output
    assert "no tenant has one yet" in missing.output
    gone = runner.invoke(cli, ["procedures", "mine", "--sessions", str(tmp_path / "none.jsonl"),
                               "--data-dir", str(tmp_path)])
    assert gone.exit_code == 2 and not (tmp_path / "default.db").exists()  # refused before the tenant is made
    runner.invoke(cli, ["procedures", "mine", "--sessions", str(_shell_sessions(tmp_path / "s.jsonl")),
                        "--data-dir", str(tmp_path)], catch_exceptions=False)
    unknown = runner.invoke(cli, ["procedures", "show", "proc-nope", "--data-dir", str(tmp_path)])
    assert unknown.exit_code == 2 and "no procedure 'proc-nope'" in unknown.output
    bad = tmp_path / "bad.jsonl"
    bad.write_text("{not json}\n")
    broken = runner.invoke(
        cli, ["procedures", "mine", "--sessions", str(bad), "--data-dir", str(tmp_path)]
    )
    assert broken.exit_code == 2 and "bad.jsonl:1" in broken.output
    pattern = runner.invoke(
        cli,
        [
            "procedures",
            "mine",
            "--sessions",
            str(bad),
            "--verify-pattern",
            "(",
            "--data-dir",
            str(tmp_path),
        ],
    )
    assert pattern.exit_code == 2 and "verify_patterns" in pattern.output


def test_every_procedures_command_has_help() -> None:
    from insika_knowledge.procedures.cli import procedures

    for name, command in procedures.commands.items():
        assert command.help, name
        assert CliRunner().invoke(cli, ["procedures", name, "--help"]).exit_code == 0


# ---------------------------------------------------------------- evaluation


def test_the_split_keeps_every_trial_of_a_task_on_one_side() -> None:
    train, held = split_tasks(["1", "1", "2", "3", "3", "4"], seed=3)
    assert train and held and not train & held and train | held == {"1", "2", "3", "4"}
    assert split_tasks(["1", "2", "3", "4"], seed=3) == split_tasks(["4", "3", "2", "1"], seed=3)


@needs_data
def test_the_held_out_evaluation_is_reproducible_and_consistent() -> None:
    first = evaluate(AIRLINE, seeds=[0, 1])
    assert evaluate(AIRLINE, seeds=[0, 1]) == first
    for split in first["splits"]:
        assert not set(split["train_tasks"]) & set(split["held_out_tasks"])
        assert split["held_out_traces"] == len(split["replays"])
        assert split["hits"] == sum(r["hit"] for r in split["replays"])
        held = {r["task_id"] for r in split["replays"]}
        assert held == set(split["held_out_tasks"])
        for p in split["procedures"]:
            assert p["support"] == p["successes"] + p["failures"]
        if split["adherence_rate"] is not None:
            assert 0 <= split["adherence_rate"] <= 1
    runner = CliRunner()
    out = runner.invoke(cli, ["procedures", "evaluate", "--sessions", str(AIRLINE), "--seeds", "2"])
    assert out.exit_code == 0 and "mean over 2 split(s)" in out.output


@needs_data
def test_evaluate_reads_sessions_from_a_pipe(tmp_path: Path) -> None:
    # a newcomer's `--sessions <(zcat runs.jsonl.gz)` was read once to choose the evaluation
    # and found empty the second time: "not JSON (Expecting value at column 1)"
    import os
    import threading

    pipe = tmp_path / "runs.pipe"
    os.mkfifo(pipe)
    data = AIRLINE.read_bytes()  # read here: a feeder that failed would leave the reader waiting
    feeder = threading.Thread(target=lambda: pipe.write_bytes(data), daemon=True)
    feeder.start()
    piped = CliRunner().invoke(cli, ["procedures", "evaluate", "--sessions", str(pipe), "--seeds", "1"])
    feeder.join(5)
    from_file = CliRunner().invoke(cli, ["procedures", "evaluate", "--sessions", str(AIRLINE), "--seeds", "1"])
    assert piped.exit_code == 0, piped.output
    assert piped.output == from_file.output.replace(str(AIRLINE), str(pipe))  # the file named as given
    assert "mean over 1 split(s)" in piped.output


def test_a_piped_sessions_file_is_named_as_given_in_errors_and_has_a_size_limit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a newcomer's finding: errors named the temporary copy, deleted by then, and an endless
    # pipe (/dev/zero) was copied until the disk was full
    import os
    import threading

    from insika_knowledge import sessions

    def piped(data: bytes) -> Path:
        pipe = tmp_path / f"p{len(list(tmp_path.iterdir()))}.pipe"
        os.mkfifo(pipe)
        threading.Thread(target=lambda: pipe.write_bytes(data), daemon=True).start()
        return pipe

    pipe = piped(b'{"session_id": "a", "messages": []}\nnot json\n')
    out = CliRunner().invoke(cli, ["procedures", "evaluate", "--sessions", str(pipe)])
    assert out.exit_code == 2 and f"{pipe}:2: not JSON" in out.output and "insika-sessions-" not in out.output
    monkeypatch.setattr(sessions, "MAX_PIPE_BYTES", 1000)
    pipe = piped(b"x" * 5000)
    out = CliRunner().invoke(cli, ["procedures", "evaluate", "--sessions", str(pipe)])
    assert out.exit_code == 2 and f"sessions file {pipe}: a pipe of more than" in out.output, out.output


@pytest.mark.parametrize("content", ["", "\n\n"])
def test_evaluate_on_a_sessions_file_with_no_session_says_so(tmp_path: Path, content: str) -> None:
    empty = tmp_path / "none.jsonl"
    empty.write_text(content, encoding="utf-8")
    out = CliRunner().invoke(cli, ["procedures", "evaluate", "--sessions", str(empty)])
    assert out.exit_code == 2 and f"sessions file {empty} holds no session" in out.output


def test_the_speed_bench_without_the_shared_samples_names_where_it_looked(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    from insika_knowledge.bench import procedures as bench

    monkeypatch.setenv("INSIKA_SHARED_DATA", str(tmp_path / "missing"))
    assert bench.main(["--quick"]) == 2
    assert f"INSIKA_SHARED_DATA is '{tmp_path / 'missing'}', which is no folder" in capsys.readouterr().err
    monkeypatch.setenv("INSIKA_SHARED_DATA", str(tmp_path))  # a folder without the samples
    assert bench.main(["--quick"]) == 2
    assert "tau_bench_airline" in capsys.readouterr().err


def test_recall_refuses_an_empty_task(tmp_path: Path) -> None:
    out = CliRunner().invoke(cli, ["procedures", "recall", "  ", "--data-dir", str(tmp_path)])
    assert out.exit_code == 2 and "TASK is empty" in out.output


@pytest.mark.parametrize(("calls", "said"), [
    ('"x"', "messages[1].tool_calls must be a list"),
    ('[{"id": "a", "name": 5, "arguments": {}}]', "messages[1].tool_calls[0] has no tool name"),
    ('[{"id": "a", "function": {"name": " book "}}]', 'messages[1].tool_calls[0]: tool name " book " has spaces'),
])
def test_mine_refuses_a_call_it_cannot_read_and_writes_nothing(tmp_path: Path, calls: str, said: str) -> None:
    # a run whose calls were skipped was mined as "no write" in silence (an attacker's finding)
    sessions = tmp_path / "s.jsonl"
    good = ('{"session_id": "s1", "outcome": "success", "messages": [{"role": "user", "content": "hi"}, '
            '{"role": "assistant", "content": null, "tool_calls": [{"id": "a", "name": "book", "arguments": {}}]}]}')
    sessions.write_text(good + "\n" + good.replace('"s1"', '"s2"').replace(
        '[{"id": "a", "name": "book", "arguments": {}}]', calls) + "\n")
    out = CliRunner().invoke(cli, ["procedures", "mine", "--sessions", str(sessions), "--data-dir", str(tmp_path)])
    assert out.exit_code == 2 and f"s.jsonl:2: {said}" in out.output, out.output
    assert not (tmp_path / "default.db").exists()  # not even s1's run: the file is read whole first


def _shell_sessions(path: Path) -> Path:
    """Two tasks of shell sessions (no tool-calling operations), one run each."""
    rows = []
    for task in ("t1", "t2"):
        rows.append({"session_id": f"s-{task}", "outcome": "success", "metadata": {"task_id": task}, "messages": [
            {"role": "user", "content": f"Fix the failing test of {task}"},
            {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "type": "function", "function": {
                "name": "execute_bash", "arguments": json.dumps({"command": "pytest -q tests"})}}]},
            {"role": "tool", "tool_call_id": "c1", "content": "2 passed in 0.05s"}]})
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.mark.parametrize(("extra", "said"), [
    (["--seeds", "2", "--train-fraction", "nan"], "nan is no share"),
    (["--seeds", "2", "--train-fraction", "2"], "--train-fraction"),
    (["--seeds", "2", "--train-fraction", "0"], "--train-fraction"),
    (["--seeds", "0"], "--seeds"),
    (["--tasks", "nonexistent"], "'nonexistent' is no task of"),
    (["--reports", "reports.json"], "--reports goes with --requests"),
])
def test_evaluate_refuses_options_that_would_score_nothing_or_crash(tmp_path: Path, extra: list[str],
                                                                     said: str) -> None:
    """A newcomer's findings: a NaN share was a traceback; 0, 2 and --seeds 0 scored nothing
    with exit 0; an unknown task printed a report of nothing; --reports alone was ignored."""
    sessions = _shell_sessions(tmp_path / "s.jsonl")
    (tmp_path / "reports.json").write_text("{}", encoding="utf-8")
    result = CliRunner().invoke(cli, ["procedures", "evaluate", "--sessions", str(sessions), *extra],
                                catch_exceptions=False)
    assert result.exit_code == 2, result.output
    assert said in result.output


@pytest.mark.parametrize(("reports", "said"), [
    ("[1, 2]", "expected a JSON object of instance id -> resolved"),
    ('{"i1": "false"}', "'i1': resolved is true or false, not 'false'"),
])
def test_a_reports_file_of_another_shape_is_named(tmp_path: Path, reports: str, said: str) -> None:
    from insika_knowledge.bench.replay_eval import replay
    from insika_knowledge.errors import UserError

    (tmp_path / "requests.jsonl").write_text(json.dumps({"instance_id": "i1", "seq": 0, "body": {
        "model": "m", "messages": [{"role": "user", "content": "hi"}]}}) + "\n", encoding="utf-8")
    (tmp_path / "reports.json").write_text(reports, encoding="utf-8")
    with pytest.raises(UserError, match=said.replace("(", r"\(").replace(")", r"\)")):
        replay(tmp_path / "requests.jsonl", reports=tmp_path / "reports.json", folder=tmp_path / "work")


@pytest.mark.parametrize(("extra", "said"), [
    (["--limit", "0"], "--limit"), (["--limit", "-1"], "--limit"),
    (["--min-confidence", "5"], "--min-confidence"), (["--min-confidence", "nan"], "nan is no confidence"),
])
def test_procedures_list_refuses_a_limit_or_bound_that_lists_nothing(tmp_path: Path, extra: list[str],
                                                                      said: str) -> None:
    """A newcomer's finding: "--limit 0" and "--min-confidence 5" printed "(no procedures)"
    where five were stored; "--limit -1" listed every one."""
    result = CliRunner().invoke(cli, ["procedures", "list", "--data-dir", str(tmp_path), *extra])
    assert result.exit_code == 2 and said in result.output, result.output


def test_procedures_recall_reads_the_task_from_standard_input(tmp_path: Path) -> None:
    sessions = _shell_sessions(tmp_path / "s.jsonl")
    CliRunner().invoke(cli, ["procedures", "mine", "--data-dir", str(tmp_path), "--sessions", str(sessions)],
                       catch_exceptions=False)
    read = CliRunner().invoke(cli, ["procedures", "recall", "--data-dir", str(tmp_path), "-"], input="")
    assert read.exit_code == 2 and "standard input is empty" in read.output  # "-" itself was the task
    given = CliRunner().invoke(cli, ["procedures", "recall", "--data-dir", str(tmp_path), "--json", "-"],
                               input="Fix the failing test of t1\n")
    assert given.exit_code == 0 and json.loads(given.output)["result"] in ("hit", "miss")


@pytest.mark.skipif(not RETAIL.is_file(), reason="needs ../shared/data")
def test_a_recall_whose_tools_are_not_offered_says_so(tmp_path: Path) -> None:
    """A newcomer's finding: with another tool offered, the abstention read "the nearest past
    tasks name no write", and its matcher "terms" where the past tasks' vote decided."""
    runner = CliRunner()
    runner.invoke(cli, ["procedures", "mine", "--data-dir", str(tmp_path), "--sessions", str(RETAIL)],
                  catch_exceptions=False)
    asked = ["procedures", "recall", "--data-dir", str(tmp_path), "--json",
             "I want to exchange the items in my delivered order"]
    assert json.loads(runner.invoke(cli, asked).output)["result"] == "hit"
    other = json.loads(runner.invoke(cli, [*asked, "--tool", "find_user_id_by_name_zip"]).output)
    assert (other["result"], other["abstained"], other["matcher"]) == ("miss", "not_recallable", "tasks")


@pytest.mark.skipif(not AIRLINE.is_file(), reason="needs ../shared/data")
def test_evaluate_says_plainly_when_dev_chose_nothing_and_test_recalled_nothing() -> None:
    """A newcomer's finding: "too few groups to leave one out" (10 groups), "the dev choice"
    right after "nothing was chosen", and a heading of recalls with nothing under it."""
    out = CliRunner().invoke(cli, ["procedures", "evaluate", "--sessions", str(AIRLINE)]).output
    assert "too few groups" not in out and "nothing was chosen" in out
    assert "in use (nothing was chosen)" in out and ": the dev choice" not in out
    assert out.rstrip().endswith("(none: the memory abstained on every test run)")


def test_mining_an_empty_sessions_file_is_a_usage_error_that_makes_no_tenant(tmp_path: Path) -> None:
    """A newcomer's finding: it printed "mined 0 traces ...: ()" and made the tenant's database."""
    empty = tmp_path / "empty.jsonl"
    empty.write_text("", encoding="utf-8")
    result = CliRunner().invoke(cli, ["procedures", "mine", "--data-dir", str(tmp_path / "d"),
                                      "--sessions", str(empty)])
    assert result.exit_code == 2 and "holds no session: nothing to mine" in result.output
    assert not (tmp_path / "d").exists() or not any((tmp_path / "d").iterdir())
