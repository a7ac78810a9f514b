"""Procedures that recur: compound commands, typed arguments, scratch scripts, script checks."""

from __future__ import annotations

from pathlib import Path

from insika_knowledge.procedures.mining.mine import Miner, judge
from insika_knowledge.procedures.mining.prune import prune
from insika_knowledge.procedures.trace import shell
from insika_knowledge.procedures.trace.canonical import canonical_call
from insika_knowledge.procedures.trace.steps import build


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
    return call(cid, "execute_bash", command=command)


def done(code: int) -> str:
    return f"some output\n[Command finished with exit code {code}]"


def editor(cid: str, command: str, path: str, **more: object) -> dict:
    return call(cid, "str_replace_editor", command=command, path=path, **more)


def swe_trace(script: str, repo: str = "/workspace/django__django__3.0") -> list[dict]:
    """An OpenHands-like run: reproduce with a scratch script, fix, check the fix."""
    return [
        {"role": "user", "content": f"<uploaded_files>\n{repo}\n</uploaded_files> fix the bug"},
        sh("a", f"cd {repo} && grep -rn 'def escape' django/utils/html.py"),
        result("a", done(0)),
        editor("b", "create", f"/workspace/{script}", file_text="import django\nprint(1)\n"),
        result("b", f"File created successfully at: /workspace/{script}"),
        sh("c", f"cd {repo} && python3 ../{script}"),
        result("c", "Traceback (most recent call last):\n[Command finished with exit code 1]"),
        sh("d", f"cd /workspace && PYTHONPATH={repo} python3 {script}"),
        result("d", "wrong output\n" + done(0)),
        editor("e", "str_replace", f"{repo}/django/utils/html.py", old_str="a", new_str="b"),
        result("e", "The file has been edited."),
        sh("f", f"cd /workspace && PYTHONPATH={repo} python3 {script}"),
        result("f", "right output\n" + done(0)),
    ]


def test_compound_commands_split_before_exploration_collapse() -> None:
    assert shell.parse("cd /repo && grep -n 'a && b' src/x.py").read_only
    assert shell.parse("cd /repo && ls -la && cat setup.py | head -5").read_only
    assert not shell.parse("cd /repo && python3 run.py").read_only
    assert shell.parse("find /repo -name '*.py' -exec grep -l metaclass {} \\;").read_only
    assert not shell.parse("find /repo -name '*.pyc' -exec rm {} \\;").read_only
    assert shell.split_top("cd a && echo 'x; y' | wc -l; make\nls") == [
        "cd a",
        "echo 'x; y' | wc -l",
        "make",
        "ls",
    ]
    assert shell.action_template("cd /repo && ls && python x.py 2>&1 | head; cd ..") == (
        "cd /repo && python x.py 2>&1 | head"
    )
    assert shell.action_template("cd /repo && python x.py") == "cd /repo && python x.py"


def test_one_placeholder_type_per_argument_position() -> None:
    one = canonical_call("search", {"location": "Paris", "summary": "Short."})
    two = canonical_call("search", {"location": "New York City", "summary": "a longer reason"})
    assert one == two == "search(location=<LOCATION>, summary=<TEXT>)"
    assert canonical_call("search", {"cabin": "economy"}) == "search(cabin=economy)"
    assert canonical_call("open", {"path": "src/app.py"}) == "open(path=src/app.py)"


def test_a_script_run_after_an_edit_of_another_file_verifies_the_trace() -> None:
    trace = build(swe_trace("reproduce_error.py"))
    runs = [s for s in trace.steps if s.name == "python"]
    # Before any source edit a run only reproduces; after the fix it checks it.
    assert [(s.verify, s.status) for s in runs] == [(False, "error"), (False, "ok"), (True, "pass")]
    verdict = judge(trace.steps, None, trace.given)
    assert (verdict.verdict, verdict.reason) == ("success", "verify_passed")
    # The failed first try (another directory) is superseded by the working one.
    assert [s.key for s in verdict.steps] == [
        "str_replace_editor(command=create, file_text=<BODY>, path=/workspace/<NEW_FILE>.py)",
        "cd /workspace && PYTHONPATH=/workspace/django__django__3.0 python3 <NEW_FILE>.py",
        "str_replace_editor(command=str_replace, new_str=<BODY>, old_str=<BODY>, "
        "path=/workspace/django__django__3.0/django/utils/html.py)",
        "cd /workspace && PYTHONPATH=/workspace/django__django__3.0 python3 <NEW_FILE>.py",
    ]
    off = build(swe_trace("reproduce_error.py"), verify_scripts=False)
    assert judge(off.steps, None, off.given).reason == "no_verify_step"
    assert "reproduce_error.py" in off.steps[1].template


def test_scratch_scripts_lose_their_names_so_two_tasks_share_steps() -> None:
    one = build(swe_trace("reproduce_error.py"))
    two = build(swe_trace("repro_issue.py"))
    assert [s.template for s in one.steps] == [s.template for s in two.steps]
    # A created file that is never run keeps its name.
    kept = build(
        [
            {"role": "user", "content": "add a config"},
            editor("a", "create", "/repo/settings.py", file_text="X = 1\n"),
            result("a", "File created successfully"),
        ]
    )
    assert kept.steps[0].template.endswith("path=/repo/settings.py)")


def test_removing_a_file_that_is_created_again_is_superseded() -> None:
    messages = [
        {"role": "user", "content": "fix"},
        editor("a", "create", "/w/r.py", file_text="x\n"),
        result("a", "File created successfully"),
        editor("b", "create", "/w/r.py", file_text="y\n"),
        result("b", "ERROR: File already exists at: /w/r.py"),
        sh("c", "rm /w/r.py"),
        result("c", done(0)),
        editor("d", "create", "/w/r.py", file_text="y\n"),
        result("d", "File created successfully"),
    ]
    trace = build(messages)
    assert [p.key for _, p in prune(trace.steps, trace.given)] == [
        "str_replace_editor(command=create, file_text=<BODY>, path=/w/r.py)"
    ]


def test_grep_i_reads() -> None:
    assert shell.parse("find /w -name '*.py' | grep -i backend").read_only
    assert not shell.parse("sed -i 's/a/b/' x.py").read_only


# ---------------------------------------------------------------- sub-procedures


def _mine(traces: list[tuple[str, list[dict], str | None]]) -> Miner:
    miner = Miner()
    for run_id, messages, outcome in traces:
        trace = build(messages)
        miner.add(run_id, trace.steps, outcome, task=lambda t=trace: t.task, given=trace.given)
    return miner


def test_a_step_run_ending_in_a_verified_step_recurs_across_tasks() -> None:
    one = swe_trace("reproduce_error.py")
    two = swe_trace("repro.py")
    # A different fix in the second task: the whole traces differ, the part does not.
    two[9] = editor("e", "str_replace", "/workspace/django__django__3.0/django/db/x.py")
    miner = _mine([("t1", one, "success"), ("t2", two, "success")])
    listed = miner.procedures()
    # A coding task's whole sequence is no procedure of its own: only parts that recur.
    assert all(p.scope == "part" for p in listed)
    run = "cd /workspace && PYTHONPATH=/workspace/django__django__3.0 python3 <NEW_FILE>.py"
    parts = {tuple(s.template for s in p.steps): p for p in listed if p.scope == "part"}
    assert parts[(run,)].successes == 2 and parts[(run,)].steps[-1].verify
    assert list(parts) == [(run,)]  # the parts holding the fix differ between the tasks
    # One run alone shows a part, but it is not listed until a second run shares it.
    assert len(miner.procedures(latent=True)) > len(listed)


def test_a_write_seen_with_another_is_its_own_operation() -> None:
    def trace(upgrade: bool) -> list[dict]:
        messages: list[dict] = [{"role": "user", "content": "cancel my reservation"}]
        if upgrade:
            messages += [
                call("u", "update_reservation_flights", reservation_id="AB12CD", cabin="economy"),
                result("u", '{"ok": true}'),
            ]
        return messages + [
            call("c", "cancel_reservation", reservation_id="AB12CD"),
            result("c", '{"status": "cancelled"}'),
        ]

    miner = Miner()
    for run_id, messages, task in (("a", trace(True), "ta"), ("b", trace(False), "tb")):
        miner.add_trace(run_id, build(messages), "success", task_key=task)
    by_write = {p.steps[-1].template.split("(")[0]: p for p in miner.procedures()}
    cancel = by_write["cancel_reservation"]
    assert [s.template for s in cancel.steps] == ["cancel_reservation(reservation_id=<RESERVATION_ID>)"]
    assert cancel.successes == 2 and cancel.scope == "operation"
    upgrade = by_write["update_reservation_flights"]
    assert upgrade.successes == 1 and upgrade.steps[-1].template == (
        "update_reservation_flights(cabin=<CABIN>, reservation_id=<RESERVATION_ID>)")


def test_a_failed_run_counts_against_the_parts_that_end_it() -> None:
    ok = swe_trace("a.py")
    failed = swe_trace("b.py")
    miner = _mine(
        [("ok1", ok, "success"), ("ok2", swe_trace("c.py"), "success"), ("bad", failed, "failure")]
    )
    run = "cd /workspace && PYTHONPATH=/workspace/django__django__3.0 python3 <NEW_FILE>.py"
    part = next(p for p in miner.procedures() if [s.template for s in p.steps] == [run])
    assert (part.successes, part.failures) == (2, 1)


def test_the_population_counts_every_shell_run_labelled_successful() -> None:
    unverified = [
        {"role": "user", "content": "explain the parser module"},
        call("g", "bash", command="cat src/parser.py"),
        result("g", "def parse(): ..."),
    ]
    miner = _mine([("r", unverified, "success"), ("f", unverified, "failure")])
    assert miner.verdicts["unverified"] == 1
    # The run counts; its terms wait for a second session's task (issue 16).
    assert miner.population[""] == 1 and miner.population["pars"] == 0
    miner.add("r2", build(unverified).steps, "success", task=build(unverified).task)
    assert miner.population[""] == 2 and miner.population["pars"] == 2


def test_the_live_recall_keeps_a_repository_procedure_to_that_repository(tmp_path: Path) -> None:
    from insika_knowledge.procedures.config import ProceduresConfig
    from insika_knowledge.procedures.skill import ProceduralMemory
    from insika_knowledge.procedures.telemetry import HIT, MISS
    from insika_knowledge.store.sqlite.procedures import ProcedureStore

    config = ProceduresConfig(mode="prod", min_confidence=0.0, min_match_score=0.0)
    memory = ProceduralMemory(ProcedureStore(tmp_path / "p.db"), config)
    for n, script in enumerate(("reproduce_error.py", "repro.py")):
        messages = swe_trace(script)
        for end in range(1, len(messages) + 1):
            headers = {"x-ace-session": f"django-{n}"}
            if end == len(messages):
                headers["x-ace-task-outcome"] = "success"
            memory.handle_request({"messages": messages[:end]}, headers)
    run = "cd /workspace && PYTHONPATH=/workspace/django__django__3.0 python3 <NEW_FILE>.py"
    assert any([s.template for s in p.steps] == [run] for p in memory.index._all.values())

    def first_request(repo: str) -> str:
        task = f"<uploaded_files>\n{repo}\n</uploaded_files> fix the bug"
        body = {"messages": [{"role": "user", "content": task}]}
        _, stage = memory.handle_request(body, {"x-ace-session": repo})
        assert stage is not None
        return stage.action

    assert first_request("/workspace/django__django__3.0") == HIT
    # The same words in another repository: its procedures name the django directory.
    assert first_request("/workspace/astropy__astropy__5.0") == MISS
    memory.close()
