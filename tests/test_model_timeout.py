"""A model object is held to a time limit: a call that hangs is a retryable ``model_timeout``."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from insika_knowledge import Memory
from insika_knowledge.errors import UserError
from insika_knowledge.extract.model import MergeAnswer

AGENT = "loja"
TURN = [{"role": "user", "content": "Qual o prazo de troca?"},
        {"role": "assistant", "content": "Trocas em até 30 dias após a entrega."}]
RULE = {"name": "prazo-de-troca", "description": "Trocas em até 30 dias.", "type": "fact",
        "body": "Trocas em até 30 dias após a entrega."}


class Model:
    """Answers `items`; blocks each call until `release` is set when `hang` is."""

    def __init__(self, items: list[dict[str, str]], *, hang: bool = False, merge: str = "related") -> None:
        self.items, self.hang, self.verdict = items, hang, merge
        self.release = threading.Event()

    def _wait(self) -> None:
        if self.hang:
            self.release.wait(30)

    def propose(self, request: Any) -> list[dict[str, str]]:
        self._wait()
        return list(self.items)

    def merge(self, request: Any) -> MergeAnswer:
        self._wait()
        return MergeAnswer("related", f"{request.old_body} {request.new_body}")


class Broken(Model):
    def propose(self, request: Any) -> list[dict[str, str]]:
        raise RuntimeError("provider exploded")


def test_a_hanging_model_object_times_out_retryably_and_the_turn_learns_later(tmp_path: Path) -> None:
    memory = Memory(tmp_path, model_timeout_s=0.2)
    hanging = Model([RULE], hang=True)
    report = memory.learn(TURN, agent=AGENT, session_id="s-1", model=hanging)
    hanging.release.set()
    assert (report.outcome, report.retryable) == ("model_timeout", True)
    assert "0.2 s" in (report.detail or "") and memory.concepts(agent=AGENT) == []
    again = memory.learn(TURN, agent=AGENT, session_id="s-1", model=Model([RULE]))
    assert again.results == [("prazo-de-troca", "learned")]


@pytest.mark.parametrize("hang", [False, True])
def test_a_hanging_merge_is_no_merge(tmp_path: Path, hang: bool) -> None:
    memory = Memory(tmp_path, model_timeout_s=0.2)
    memory.learn(TURN, agent=AGENT, session_id="s-1", model=Model([RULE]))
    changed = {**RULE, "body": "Trocas em até 30 dias após a entrega, com a nota fiscal."}
    said = [TURN[0], {"role": "assistant", "content": changed["body"]}]
    model = Model([changed], hang=hang)
    model.propose = lambda request: [changed]  # type: ignore[method-assign]  # only the merge may hang
    report = memory.learn(said, agent=AGENT, session_id="s-2", model=model)
    model.release.set()
    stored = memory.concepts(agent=AGENT)[0]
    if hang:  # no answer judged nothing: no conflict, the turn is tried again later
        assert (report.outcome, report.transient, report.results) == ("model_timeout", True, [])
        assert not stored.in_conflict and stored.body == RULE["body"]
        again = memory.learn(said, agent=AGENT, session_id="s-2", model=Model([changed]))
        assert again.results == [("prazo-de-troca", "merged")]
    else:
        assert report.results == [("prazo-de-troca", "merged")] and "nota fiscal" in stored.body


def test_a_model_objects_own_error_is_kept(tmp_path: Path) -> None:
    report = Memory(tmp_path).learn(TURN, agent=AGENT, session_id="s-1", model=Broken([RULE]))
    assert report.outcome == "model_error" and report.detail == "RuntimeError: provider exploded"


@pytest.mark.parametrize("limit", [0, -1, float("inf"), float("nan"), True, 1e10])
def test_the_time_limit_must_be_a_positive_number_of_seconds(tmp_path: Path, limit: float) -> None:
    with pytest.raises(UserError, match="model_timeout_s"):
        Memory(tmp_path, model_timeout_s=limit)


def test_a_model_spec_is_held_to_the_same_limit(tmp_path: Path) -> None:
    """A spec's HTTP client had a fixed 60 s whatever `model_timeout_s` said: the turn gave
    up in time, but the abandoned request went on in a thread until the server answered."""
    import time

    from fakellm import FakeLLM, Hang

    with FakeLLM([Hang(10.0, "[]")]) as fake:
        memory = Memory(tmp_path, base_url=fake.base_url, model_timeout_s=0.5)
        report = memory.learn(TURN, agent=AGENT, session_id="s-1", model="openai/fake-model")
        assert (report.outcome, report.retryable) == ("model_timeout", True), report
        deadline = time.monotonic() + 5.0  # the client's own timeout ends the call, well before 10 s
        while time.monotonic() < deadline and any(t.name == "insika-model-call" for t in threading.enumerate()):
            time.sleep(0.05)
        assert not any(t.name == "insika-model-call" for t in threading.enumerate())


def test_the_first_call_of_a_model_spec_is_not_charged_the_sdks_import(tmp_path: Path) -> None:
    """A newcomer's attack: with `model_timeout_s=2`, the first `learn` of a fresh process timed
    out against a server that answers at once (the SDK's import ran inside the time limit)."""
    import json
    import os
    import subprocess
    import sys

    from fakellm import FakeLLM

    script = (
        "import sys, json\n"
        "from insika_knowledge import Memory\n"
        "m = Memory(sys.argv[1], base_url=sys.argv[2], model_timeout_s=0.8)\n"
        "r = m.learn([{'role': 'user', 'content': 'Qual o prazo de troca?'},"
        " {'role': 'assistant', 'content': 'Trocas em até 30 dias.'}], agent='loja', session_id='s',"
        " model='openai/fake-model')\n"
        "print(json.dumps([r.outcome, r.detail]))\n"
    )
    with FakeLLM(['{"concepts": []}']) as fake:
        env = {**os.environ, "OPENAI_API_KEY": "k"}
        done = subprocess.run([sys.executable, "-c", script, str(tmp_path / "d"), fake.base_url],
                              capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode == 0, done.stderr
    outcome, detail = json.loads(done.stdout.strip().splitlines()[-1])
    assert outcome == "ok", detail
