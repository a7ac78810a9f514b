from __future__ import annotations

import collections
import copy
import json
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from insika_knowledge.procedure import operation_id
from insika_knowledge.procedures.config import ProceduresConfig
from insika_knowledge.procedures.skill import ProceduralMemory
from insika_knowledge.procedures.telemetry import STAGE_NAME
from insika_knowledge.sessions import Session
from insika_knowledge.store.sqlite.procedures import ProcedureStore

TOOLS = [
    {"type": "function", "function": {"name": n}}
    for n in (
        "get_user_details",
        "cancel_reservation",
        "book_reservation",
        "transfer_to_human_agents",
    )
]


class FakeClock:
    def __init__(self) -> None:
        self.now = 1_700_000_000.0

    def __call__(self) -> float:
        return self.now


def call(cid: str, name: str, **arguments: object) -> dict:
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": cid,
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(arguments)},
            }
        ],
    }


def result(cid: str, content: str) -> dict:
    return {"role": "tool", "tool_call_id": cid, "content": content}


def cancel_messages(task: str = "Please cancel my upcoming trip") -> list[dict]:
    return [
        {"role": "system", "content": "airline policy"},
        {"role": "user", "content": task},
        call("c1", "get_user_details", user_id="ana_lima_1234"),
        result("c1", json.dumps({"reservations": ["ZX9QK2"]})),
        call("c2", "cancel_reservation", reservation_id="ZX9QK2"),
        result("c2", '{"status": "cancelled"}'),
    ]


def anthropic_cancel_messages(task: str = "Please cancel my upcoming trip") -> list[dict]:
    return [
        {"role": "user", "content": [{"type": "text", "text": task}]},
        {
            "role": "assistant",
            "content": [
                {
                    "type": "tool_use",
                    "id": "t1",
                    "name": "get_user_details",
                    "input": {"user_id": "ana_lima_1234"},
                }
            ],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "t1",
                    "content": json.dumps({"reservations": ["ZX9QK2"]}),
                }
            ],
        },
        {
            "role": "assistant",
            "content": [
                {
                    "type": "tool_use",
                    "id": "t2",
                    "name": "cancel_reservation",
                    "input": {"reservation_id": "ZX9QK2"},
                }
            ],
        },
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "t2", "content": "cancelled"}],
        },
    ]


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def make(open_procedures, clock: FakeClock) -> Iterator:
    # On both backends: the SQLite file, and the tenant's schema of a PostgreSQL database.
    opened: list[ProceduralMemory] = []

    def factory(**settings: object) -> ProceduralMemory:
        settings.setdefault("mode", "prod")
        memory = ProceduralMemory(open_procedures(), ProceduresConfig(**settings), clock=clock)
        opened.append(memory)
        return memory

    yield factory
    for memory in opened:
        memory.close()


CANCEL = operation_id("cancel_reservation")
WORDS = ("alpha", "bravo", "charlie", "delta", "echo")


def seed(memory: ProceduralMemory, runs: int = 3, failures: int = 0) -> str:
    """`runs` past tasks (task ids given) whose successful runs cancelled; returns the operation's id."""
    sessions = [
        Session(f"seed-{i}", cancel_messages(f"please cancel my trip {WORDS[i]}"), "success",
                metadata={"task_id": f"t{i}"})
        for i in range(runs)
    ]
    sessions += [
        Session(f"seed-f{i}", cancel_messages("cancel my trip"), "failure", metadata={"task_id": f"f{i}"})
        for i in range(failures)
    ]
    memory.mine_sessions(sessions)
    (procedure,) = memory.store.list_procedures()
    assert procedure.id == CANCEL and procedure.scope == "operation"
    return procedure.id


def request(messages: list[dict], **extra: object) -> dict:
    return {"model": "m", "tools": TOOLS, "messages": messages, **extra}


# ---------------------------------------------------------------- capture and mining


@pytest.mark.parametrize(
    "messages", [cancel_messages(), anthropic_cancel_messages()], ids=["openai", "anthropic"]
)
def test_a_session_closed_with_success_is_mined_in_both_wire_formats(
    make, messages: list[dict]
) -> None:
    memory = make()
    for end in range(2, len(messages) + 1):  # the client sends the growing history
        _, stage = memory.handle_request(request(messages[:end]), {"x-ace-session": "s1"})
        assert stage.session_scoped
    assert memory.store.count() == 0
    _, stage = memory.handle_request(
        request(messages), {"x-ace-session": "s1", "x-ace-task-outcome": "success"}
    )
    # One task made one write: an operation procedure, not listed until a second task shares it.
    assert memory.store.list_procedures() == []
    procedure = memory.store.get(CANCEL)
    assert [s.key for s in procedure.steps] == [
        "get_user_details(user_id=<USER_ID>)",
        "cancel_reservation(reservation_id=<RESERVATION_ID>) [reservation_id: from get_user_details]",
    ]
    assert (procedure.successes, procedure.failures, procedure.trigger_runs) == (1, 0, 1)
    (task,) = memory.store.tasks_since(0)
    assert task.ops == {"cancel_reservation": 1} and task.runs == 1 and task.messages
    assert memory.session("s1").turns == 0  # a new task starts in the same session


def test_a_closed_procedural_memory_captures_and_mines_nothing(make) -> None:
    """A newcomer's finding: after `close`, requests were still captured and sessions mined."""
    from insika_knowledge.errors import UserError

    memory = make()
    memory.handle_request(request(cancel_messages()[:2]), {"x-ace-session": "s1"})
    memory.close()
    body = request(cancel_messages())
    sent, stage = memory.handle_request(body, {"x-ace-session": "s1", "x-ace-task-outcome": "success"})
    assert sent is body and stage is None  # the request goes on unchanged, as with the skill off
    for call_it in (lambda: memory.close_session("s1", "success"), lambda: memory.recall("cancel my trip"),
                    lambda: memory.mine_sessions([]), lambda: memory.sweep()):
        with pytest.raises(UserError, match="this procedural memory is closed"):
            call_it()
    memory.close()  # twice is fine


@pytest.mark.parametrize(("call_it", "said"), [
    (lambda m: m.recall(5), "recall\\(\\): task must be"),
    (lambda m: m.recall("cancel", tools="cancel_reservation"), "tools must be"),
    (lambda m: m.close_session(5, "success"), "close_session\\(\\): session_id must be"),
])
def test_wrong_types_are_named(make, call_it, said: str) -> None:
    from insika_knowledge.errors import UserError

    with pytest.raises(UserError, match=said):
        call_it(make())


def test_settings_given_as_a_mapping_are_read_as_procedures_settings(open_procedures) -> None:
    from insika_knowledge.errors import UserError

    memory = ProceduralMemory(open_procedures(), {"mode": "prod", "max_injection_tokens": 300})
    try:
        assert memory.config.mode == "prod" and memory.config.max_injection_tokens == 300
    finally:
        memory.close()
    with pytest.raises(UserError, match="config must be"):
        ProceduralMemory(open_procedures(), "prod")  # type: ignore[arg-type]


@pytest.mark.parametrize("outcome", ["Success", "succeeded", "", 12345])
def test_close_session_refuses_an_outcome_that_is_no_label(make, outcome: object) -> None:
    """An attacker's finding: `close_session("s1", "Success")` closed the task unlabelled
    (its success lost), and `close_session("s2", 12345)` returned None."""
    from insika_knowledge.errors import UserError

    memory = make()
    memory.handle_request(request(cancel_messages()), {"x-ace-session": "s1"})
    with pytest.raises(UserError, match="is none of 'success', 'failure' or None"):
        memory.close_session("s1", outcome)  # type: ignore[arg-type]
    assert memory.session("s1") is not None  # still open: nothing was closed or lost
    verdict = memory.close_session("s1", "success")
    assert verdict is not None


def test_tasks_of_two_domains_with_one_task_id_stay_two_tasks(make) -> None:
    """An attacker's finding: the airline and retail files mined into one tenant merged
    their tasks 0, 4 and 9 (40 task records for 43 tasks): a task id is scoped by the
    session's dataset and domain when it names them."""
    from insika_knowledge.procedures.skill import task_key_of

    memory = make()
    memory.mine_sessions([
        Session("air-0", cancel_messages(), "success", metadata={"dataset": "d", "domain": "airline", "task_id": 0}),
        Session("shop-0", cancel_messages("cancel my order"), "success",
                metadata={"dataset": "d", "domain": "retail", "task_id": "0"}),
    ])
    assert len(memory.store.tasks_since(0)) == 2
    assert task_key_of({"task_id": 7}) == "7" and task_key_of({"domain": "retail"}) is None
    assert task_key_of({"dataset": "tau2_bench", "domain": "retail", "task_id": "0"}) == "tau2_bench/retail/0"


def test_a_session_id_given_twice_in_one_pass_is_mined_once_and_said(make) -> None:
    """An attacker's finding: the same id with outcomes success and failure was reported
    "failure 8, success 8" while only the first was counted, without a word."""
    memory = make()
    report = memory.mine_sessions([Session("dup", cancel_messages(), "success", metadata={"task_id": "t"}),
                                   Session("dup", cancel_messages(), "failure", metadata={"task_id": "t"})])
    assert (report.traces, report.repeated, report.verdicts) == (1, 1, {"success": 1})


def test_an_outcome_that_is_no_label_is_counted_apart(make) -> None:
    """A newcomer's finding: a file whose outcomes read "Success" or "sucess" was mined as
    unlabelled (0 procedures) without a word."""
    memory = make()
    report = memory.mine_sessions([Session("a", cancel_messages(), "Success", metadata={"task_id": "t"}),
                                   Session("b", cancel_messages(), "sucess", metadata={"task_id": "u"}),
                                   Session("c", cancel_messages(), "success", metadata={"task_id": "v"})])
    assert report.unknown_outcomes == {"Success": 1, "sucess": 1}


def test_outcome_spellings_and_a_body_session_id(make) -> None:
    memory = make()
    memory.handle_request(request(cancel_messages("cancel my trip alpha"), session_id="b1"),
                          {"x-ace-outcome": "success"})
    memory.handle_request(request(cancel_messages("cancel the flight to bravo city")),
                          {"x-ace-session": "b2", "x-ace-task-success": "true"})
    memory.handle_request(request(cancel_messages("drop charlie booking quickly")),
                          {"x-ace-session": "b3", "X-Ace-Task-Success": "false"})
    (procedure,) = memory.store.list_procedures()
    # Support counts distinct tasks: two tasks succeeded, one task's only run failed.
    assert (procedure.successes, procedure.failures) == (2, 1)


def test_a_request_without_a_session_is_not_captured_and_recalls_nothing(make) -> None:
    memory = make()
    seed(memory)
    body = request(cancel_messages()[:2])
    out, stage = memory.handle_request(body, {})
    assert out is body
    assert (stage.action, stage.reason, stage.session_scoped) == ("skipped", "no_session", False)
    assert stage.skill_attrs() == {}
    assert memory.store.idle_sessions(float("inf")) == []


def test_capture_survives_a_restart(make, tmp_path: Path, clock: FakeClock) -> None:
    messages = cancel_messages()
    first = make()
    first.handle_request(request(messages[:4]), {"x-ace-session": "r1"})
    first.close()
    second = make()
    assert [s.name for s in second.session_steps("r1")] == ["get_user_details"]
    second.handle_request(
        request(messages), {"x-ace-session": "r1", "x-ace-task-outcome": "success"}
    )
    procedure = second.store.get(CANCEL)
    assert procedure.steps[-1].template == "cancel_reservation(reservation_id=<RESERVATION_ID>)"
    assert procedure.steps[-1].hoisted == (("reservation_id", "from get_user_details"),)


def test_idle_sessions_are_flushed_by_the_sweep_and_shell_traces_mined(
    make, clock: FakeClock
) -> None:
    memory = make(idle_flush_s=600)
    shell = [
        {"role": "user", "content": "make the tests pass"},
        call("a", "bash", command="cat > a.py <<EOF\nx = 1\nEOF"),
        result("a", ""),
        call("b", "bash", command="pytest -q"),
        result("b", "===== 2 passed in 0.1s ====="),
    ]
    memory.handle_request(request(shell), {"x-ace-session": "shell"})
    memory.handle_request(request(shell), {"x-ace-session": "shell-2"})  # listed once two runs share it
    memory.handle_request(
        request(cancel_messages()), {"x-ace-session": "tool"}
    )  # no outcome: unverified
    clock.now += 599
    assert memory.sweep() == []
    clock.now += 2
    assert sorted(memory.sweep()) == ["shell", "shell-2", "tool"]
    procedures = memory.store.list_procedures()
    assert procedures and all(p.kind == "shell" and p.steps[-1].template == "pytest -q" for p in procedures)
    assert memory.session("shell") is None and memory.session("tool") is None


def test_the_background_sweeper_runs_every_interval(make, clock: FakeClock) -> None:
    memory = make(idle_flush_s=1, sweep_interval_s=0.01)
    memory.handle_request(request(cancel_messages()[:2]), {"x-ace-session": "idle"})
    clock.now += 5
    swept = threading.Event()
    original = memory.sweep

    def watched(now: float | None = None) -> list[str]:
        out = original(now)
        if out:
            swept.set()
        return out

    memory.sweep = watched  # type: ignore[method-assign]
    memory.start_sweeper()
    assert swept.wait(5)
    assert memory.session("idle") is None


# ---------------------------------------------------------------- recall, injection, cursor


def test_prod_injects_follows_the_cursor_and_completes(make) -> None:
    memory = make()
    pid = seed(memory)
    messages = cancel_messages("I need to cancel my trip")
    body = request(messages[:2])
    original = copy.deepcopy(body)
    out, stage = memory.handle_request(body, {"x-ace-session": "p1"})
    assert body == original
    assert (stage.action, stage.injected, stage.procedure_id, stage.matcher) == ("hit", True, pid, "tasks")
    assert stage.injected_tokens == stage.block_tokens > 0
    assert stage.cursor_step == 0 and stage.steps_remaining == 2
    assert out["messages"][1]["content"] == (
        "I need to cancel my trip\n\n[ACE recalled procedure — 3 prior runs, confidence 0.44]\n"
        "1. get_user_details(user_id=<USER_ID>)\n"
        "2. cancel_reservation(reservation_id=<RESERVATION_ID>) [reservation_id: from step 1]"
    )
    assert stage.rewrite_headers() == {
        "x-ace-body-rewritten": "tail",
        "x-ace-rewrite-tokens": f"+{stage.injected_tokens}",
        "x-ace-rewritten-by": STAGE_NAME,
    }
    _, stage = memory.handle_request(request(messages), {"x-ace-session": "p1"})
    assert (stage.action, stage.cursor_step, stage.steps_remaining) == ("completed", 2, 0)
    assert (stage.adherence_delta, stage.divergence) == (1, False)
    assert stage.skill_attrs()["kg_recall_result"] == "completed"


def test_divergence_is_reported(make) -> None:
    memory = make()
    seed(memory)
    messages = cancel_messages("I need to cancel my trip")[:2] + [
        call("x", "book_reservation", origin="JFK"),
        result("x", "{}"),
    ]
    _, stage = memory.handle_request(request(messages[:2]), {"x-ace-session": "d1"})
    assert (stage.action, stage.divergence, stage.adherence_delta) == ("hit", False, 0)
    _, stage = memory.handle_request(request(messages), {"x-ace-session": "d1"})
    assert (stage.action, stage.divergence, stage.adherence_delta, stage.cursor_step) == (
        "hit",
        True,
        -1,
        0,
    )


def test_no_operation_is_recalled_once_the_session_wrote(make) -> None:
    # Recall reads the user's messages until the session's first write; after it, the
    # cursor follows what was recalled, and a session that recalled nothing gets nothing.
    memory = make()
    seed(memory)
    messages = cancel_messages("I need to cancel my trip")[:2] + [
        call("x", "book_reservation", origin="JFK"),
        result("x", "{}"),
    ]
    _, stage = memory.handle_request(request(messages), {"x-ace-session": "d2"})
    assert (stage.action, stage.divergence, stage.adherence_delta) == ("miss", None, None)


def test_a_block_over_budget_is_skipped(make) -> None:
    memory = make(max_injection_tokens=5)
    seed(memory)
    body = request(cancel_messages("cancel my trip")[:2])
    out, stage = memory.handle_request(body, {"x-ace-session": "b"})
    assert out is body
    assert (stage.action, stage.injected, stage.injected_tokens) == ("skipped_budget", False, 0)
    assert stage.block_tokens > stage.max_injection_tokens == 5


def test_a_procedure_whose_runs_fail_stops_being_recalled(make) -> None:
    memory = make(min_confidence=0.3)
    pid = seed(memory, runs=2)
    assert memory.recall("cancel my trip").procedure.id == pid
    for i, task in enumerate(("cancel order kilo", "cancel lima flight now", "cancel mike ticket")):
        memory.handle_request(
            request(cancel_messages(task)), {"x-ace-session": f"bad{i}", "x-ace-task-outcome": "failure"}
        )
    procedure = memory.store.get(pid)  # three other tasks whose only runs failed doing it
    assert procedure.failures == 3 and procedure.confidence < 0.3
    assert not memory.recall("cancel my trip").hit
    _, stage = memory.handle_request(
        request(cancel_messages("cancel my trip")[:2]), {"x-ace-session": "later"}
    )
    assert stage.action == "miss"


def test_tools_the_request_does_not_offer_prevent_recall(make) -> None:
    memory = make()
    seed(memory)
    body = {
        "messages": cancel_messages("cancel my trip")[:2],
        "tools": [{"type": "function", "function": {"name": "get_user_details"}}],
    }
    _, stage = memory.handle_request(body, {"x-ace-session": "t"})
    assert stage.action == "miss"


def test_a_custom_token_counter_is_used(make, tmp_path: Path) -> None:
    class Fixed:
        name = "fixed"

        def count(self, text: str) -> int:
            return 7

    memory = ProceduralMemory(
        ProcedureStore(tmp_path / "t2.db"), ProceduresConfig(mode="prod"), token_counter=Fixed()
    )
    seed(memory)
    _, stage = memory.handle_request(
        request(cancel_messages("cancel my trip")[:2]), {"x-ace-session": "c"}
    )
    assert stage.block_tokens == stage.injected_tokens == 7
    memory.close()


# ---------------------------------------------------------------- modes


def test_off_does_nothing_and_records_nothing(make) -> None:
    memory = make(mode="off")
    body = request(cancel_messages())
    out, stage = memory.handle_request(
        body, {"x-ace-session": "o", "x-ace-task-outcome": "success"}
    )
    assert out is body and stage is None
    assert memory.store.stages() == [] and memory.store.count() == 0


def test_shadow_recalls_but_injects_nothing(make) -> None:
    memory = make(mode="shadow")
    seed(memory)
    body = request(cancel_messages("cancel my trip")[:2])
    out, stage = memory.handle_request(body, {"x-ace-session": "sh"})
    assert out is body
    assert (stage.action, stage.injected, stage.injected_tokens) == ("hit", False, 0)
    assert stage.would_inject_tokens == stage.block_tokens > 0
    assert (
        stage.skill_attrs()["kg_injected_tokens"] == stage.would_inject_tokens
    )  # the row keeps it
    assert stage.to_dict()["injected_tokens"] == 0


def test_the_skills_header_switches_the_skill_per_request(make) -> None:
    memory = make(mode="prod")
    seed(memory)
    body = request(cancel_messages("cancel my trip")[:2])
    assert memory.handle_request(body, {"x-ace-session": "h", "x-ace-skills": "*=off"}) == (
        body,
        None,
    )
    # The header can only switch the skill off (issue 9): its own entry "shadow" is not
    # honoured, so the deployment's prod runs, and the stage says the value was ignored.
    out, stage = memory.handle_request(
        body, {"x-ace-session": "h", "x-ace-skills": "*=off,skill_knowledge_graph=shadow"}
    )
    assert stage.mode == "prod" and stage.injected and out is not body
    assert any("ignored" in note for note in stage.to_dict()["notes"])


def test_canary_arms_are_stable_per_session_and_split_near_n(make) -> None:
    memory = make(mode="canary:30")
    seed(memory)
    arms = collections.Counter()
    for i in range(200):
        sid = f"c{i}"
        seen = set()
        for end in (2, 4):
            out, stage = memory.handle_request(
                request(cancel_messages("cancel my trip")[:end]), {"x-ace-session": sid}
            )
            seen.add(stage.mode)
            assert stage.canary_percent == 30 and stage.canary_keyed_by == "session"
            if stage.mode == "canary_control":
                assert stage.to_dict() == {
                    "name": STAGE_NAME,
                    "action": "skipped",
                    "mode": "canary_control",
                    "reason": "canary_control",
                    "injected": False,
                    "injected_tokens": 0,
                    "would_inject_tokens": 0,
                    "block_tokens": 0,
                    "max_injection_tokens": 400,
                    "canary_bucket": "control",
                    "canary_percent": 30,
                    "canary_keyed_by": "session",
                    "session_scoped": True,
                    "captured_turns": 0,
                    "duration_ms": stage.to_dict()["duration_ms"],
                }
                assert stage.skill_attrs() == {}
                assert memory.session(sid) is None  # nothing captured on the control arm
            else:
                assert stage.canary_bucket == "treatment" and stage.injected
        assert len(seen) == 1
        arms[seen.pop()] += 1
    assert 40 <= arms["canary_treatment"] <= 80


def test_canary_without_a_session_is_keyed_by_request(make) -> None:
    memory = make(mode="canary:50")
    body = request(cancel_messages()[:2])
    first = memory.handle_request(body, {"x-request-id": "r-1"})[1]
    again = memory.handle_request(body, {"x-request-id": "r-1"})[1]
    assert first.canary_keyed_by == "request" and first.canary_bucket == again.canary_bucket
    assert not first.session_scoped


def test_an_invalid_mode_is_a_config_error() -> None:
    from insika_knowledge.errors import UserError

    with pytest.raises(UserError, match="canary"):
        ProceduresConfig(mode="canary:120")
    with pytest.raises(UserError, match="unknown key 'bogus'"):
        ProceduresConfig.from_mapping({"bogus": 1})


@pytest.mark.parametrize(("given", "said"), [
    ({"verify_patterns": "pytest"}, "a list of regular expressions, not one string"),
    ({"verify_patterns": [""]}, "matches every command"),
    ({"verify_patterns": ["pytest|"]}, "matches every command"),
    ({"verify_patterns": [5]}, "is no text"),
    ({"min_confidence": float("nan")}, "must be a number from 0 to 1"),
    ({"min_confidence": True}, "must be a number from 0 to 1"),
])
def test_a_verify_pattern_that_would_verify_every_command_is_a_config_error(given: dict[str, object],
                                                                               said: str) -> None:
    """A newcomer's finding: "pytest" was read as six one-letter patterns, and "" as one that
    every command matches, so every run was verified."""
    from insika_knowledge.errors import ConfigError

    with pytest.raises(ConfigError, match=said):
        ProceduresConfig.from_mapping(given)
    with pytest.raises(ConfigError, match=said):
        ProceduresConfig(**given)  # type: ignore[arg-type]


def test_procedures_settings_that_are_no_mapping_are_a_config_error() -> None:
    from insika_knowledge.errors import ConfigError

    with pytest.raises(ConfigError, match="procedures: expected a mapping of settings, got list"):
        ProceduresConfig.from_mapping(["mode"])  # type: ignore[arg-type]


# ---------------------------------------------------------------- failures and telemetry


@pytest.mark.parametrize(
    ("body", "headers", "reason"),
    [
        # a refused request says what was wrong with it; any other failure only its kind
        ({"messages": "not a list"}, {"x-ace-session": "f"}, "UserError: request body: 'messages' must be a list"),
        ({"messages": [{"content": "no role"}]}, {"x-ace-session": "f"},
         "UserError: request body: messages[0] must be an object with a 'role'"),
        (["not", "a", "dict"], {"x-ace-session": "f"}, "TypeError"),
    ],
)
def test_bad_requests_never_raise_and_go_upstream_unchanged(
    make, body: object, headers: dict, reason: str
) -> None:
    memory = make()
    out, stage = memory.handle_request(body, headers)  # type: ignore[arg-type]
    assert out is body
    assert (stage.action, stage.injected) == ("failed", False)
    assert stage.reason is not None and stage.reason.startswith(reason), stage.reason
    assert memory.store.stages()[0]["action"] == "failed"


def test_stages_are_stored_and_the_scorecard_reads_them(make) -> None:
    memory = make()
    seed(memory)
    hit = cancel_messages("I need to cancel my trip")
    memory.handle_request(request(hit[:2]), {"x-ace-session": "k1"})
    memory.handle_request(request(hit), {"x-ace-session": "k1"})
    wander = hit[:2] + [call("x", "book_reservation", origin="JFK"), result("x", "{}")]
    memory.handle_request(request(wander[:2]), {"x-ace-session": "k2"})
    memory.handle_request(request(wander), {"x-ace-session": "k2"})
    memory.handle_request(
        request([{"role": "user", "content": "what is the weather on mars"}]),
        {"x-ace-session": "k3"},
    )
    rows = memory.store.stages()
    assert [r["action"] for r in rows] == ["miss", "hit", "hit", "completed", "hit"]
    assert rows[1]["skill_attrs"]["kg_recall_result"] == "hit"
    assert rows[1]["divergence"] == 1 and rows[1]["session_id"] == "k2"
    card = memory.store.scorecard()
    assert card["requests"] == 5
    assert card["recall_hit_rate"] == pytest.approx(4 / 5)
    assert card["adherence_rate"] == pytest.approx(1 / 2)  # one step followed, one left
    assert card["divergence_rate"] == pytest.approx(1 / 4)
    assert card["avg_injected_tokens"] == pytest.approx(rows[1]["injected_tokens"])


# ---------------------------------------------------------------- the seed's contract (issue 9)


def test_the_skills_header_only_switches_off_with_names_in_any_case(make) -> None:
    shadow = make(mode="shadow")
    seed(shadow)
    body = request(cancel_messages("cancel my trip")[:2])
    out, stage = shadow.handle_request(
        body, {"x-ace-session": "s1", "X-ACE-SKILLS": "Skill_Knowledge_Graph=prod"}
    )
    assert stage.mode == "shadow" and out is body and not stage.injected  # no escalation
    assert stage.notes and "only switch the skill off" in stage.notes[0]
    assert shadow.handle_request(
        body, {"x-ace-session": "s2", "x-ace-skills": "SKILL_KNOWLEDGE_GRAPH=OFF"}
    ) == (body, None)
    _, unknown = shadow.handle_request(
        body, {"x-ace-session": "s3", "x-ace-skills": "skill_knowledge_graph=loud"}
    )
    assert unknown.action == "hit" and "'loud' ignored" in unknown.notes[0]
    _, on = shadow.handle_request(body, {"x-ace-session": "s4", "x-ace-skills": "*=on"})
    assert on.action == "hit" and on.notes == []
    stored = shadow.store.stages(session_id="s3")[0]
    assert "'loud' ignored" in stored["notes"][0]


def test_an_unparsable_outcome_is_noted_and_capture_and_recall_go_on(make) -> None:
    memory = make(mode="prod")
    seed(memory)
    body = request(cancel_messages("I need to cancel my trip")[:2])
    out, stage = memory.handle_request(
        body, {"x-ace-session": "o1", "x-ace-task-outcome": "perhaps"}
    )
    assert stage.action == "hit" and stage.injected and out is not body
    assert stage.captured_turns == 1 and memory.session("o1") is not None
    assert "'perhaps' is not an outcome" in stage.notes[0]


def test_ace_skg_max_tokens_sets_the_cap(make, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ACE_SKG_MAX_TOKENS", "5")
    assert ProceduresConfig().max_injection_tokens == 5
    memory = make(mode="prod")
    seed(memory)
    _, stage = memory.handle_request(
        request(cancel_messages("I need to cancel my trip")[:2]), {"x-ace-session": "b1"}
    )
    assert stage.action == "skipped_budget" and stage.max_injection_tokens == 5
    monkeypatch.setenv("ACE_SKG_MAX_TOKENS", "lots")
    from insika_knowledge.errors import ConfigError

    with pytest.raises(ConfigError, match="ACE_SKG_MAX_TOKENS"):
        ProceduresConfig()


def test_a_session_carries_its_block_byte_for_byte_on_every_later_request(make) -> None:
    memory = make(mode="prod")
    pid = seed(memory)
    messages = cancel_messages("I need to cancel my trip")
    first, stage = memory.handle_request(request(messages[:2]), {"x-ace-session": "c1"})
    assert stage.injected and not stage.carried
    block = first["messages"][1]["content"].split("\n\n", 1)[1]
    assert block.startswith("[ACE recalled procedure — ")
    # The procedure changes (a new success): the session still gets the bytes it got.
    memory.mine_sessions([Session("extra", [*messages], "success")])
    later, stage2 = memory.handle_request(request(messages[:4]), {"x-ace-session": "c1"})
    assert stage2.injected and stage2.carried and stage2.procedure_id == pid
    assert later["messages"][1]["content"] == first["messages"][1]["content"]
    assert stage2.injected_tokens == stage.injected_tokens
    # A fresh session gets the newer block.
    fresh, _ = memory.handle_request(request(messages[:2]), {"x-ace-session": "c2"})
    assert fresh["messages"][1]["content"] != first["messages"][1]["content"]


def test_a_composed_chain_reports_its_hops_and_path_confidence(make) -> None:
    from insika_knowledge.analysis.text import terms
    from insika_knowledge.procedure import ProcedureStep, procedure_id
    from insika_knowledge.procedures.mining.mine import Part
    from insika_knowledge.procedures.mining.scoring import MinedRun

    memory = make(mode="prod")
    repro = (ProcedureStep("python <NEW_FILE>.py", "python <NEW_FILE>.py", verify=True),)
    suite = (ProcedureStep("python -m pytest tests", "python -m pytest tests", verify=True),)
    a, b = Part(procedure_id(repro), repro, ()), Part(procedure_id(suite), suite, ())
    task = "fix the parser bug"
    memory.store.record_runs(
        MinedRun(f"r{i}", "success", (a.key,), "shell", repro, (), terms(task), task, (a, b), True)
        for i in range(3)
    )
    body = {"model": "m", "messages": [{"role": "user", "content": "Please fix the parser bug"}]}
    out, stage = memory.handle_request(body, {"x-ace-session": "chain"})
    assert stage.action == "hit" and stage.composed_hops == 1 and stage.injected
    confidence = memory.store.get(a.key).confidence * memory.store.get(b.key).confidence
    assert stage.path_confidence == pytest.approx(confidence, abs=1e-4)
    attrs = stage.skill_attrs()
    assert attrs["kg_composed_hops"] == 1 and attrs["kg_procedure_id"] == stage.procedure_id
    block = out["messages"][0]["content"].split("\n\n", 1)[1].splitlines()
    assert block[0] == f"[ACE recalled procedure — 3 prior runs, confidence {confidence:.2f}]"
    assert len(block) == 3


def test_a_recall_the_session_contradicts_counts_against_the_operation(make) -> None:
    memory = make(mode="prod", min_confidence=0.0)
    seed(memory, runs=2)
    booked = [
        {"role": "user", "content": "please cancel my trip echo, or maybe book a new one"},
        call("g", "get_user_details", user_id="ana_lima_1234"),
        result("g", json.dumps({"reservations": ["ZX9QK2"]})),
        call("b", "book_reservation", origin="JFK"),
        result("b", '{"reservation_id": "NEW123"}'),
    ]
    _, stage = memory.handle_request(request(booked[:1]), {"x-ace-session": "x1"})
    assert stage.action == "hit" and stage.procedure_id == CANCEL
    memory.handle_request(request(booked), {"x-ace-session": "x1", "x-ace-task-outcome": "success"})
    procedure = memory.store.get(CANCEL)  # the run was given cancel_reservation and booked instead
    assert (procedure.successes, procedure.failures) == (2, 1)
    (task,) = [t for t in memory.store.tasks_since(0) if t.contradicted]
    assert task.contradicted == {"cancel_reservation": 1} and task.ops == {"book_reservation": 1}
