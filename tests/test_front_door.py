"""The Python front door: `from insika_knowledge import Memory`, and the examples of the docs."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from conftest import demo_turn
from docexamples import python_example, run_example

from insika_knowledge import Hit, Memory
from insika_knowledge.config import load_config
from insika_knowledge.demo import demo_file
from insika_knowledge.errors import ConceptFormatError, InvalidName, NotFound, UserError
from insika_knowledge.events import Recorder
from insika_knowledge.extract.model import ReplayModel
from insika_knowledge.learn.sighting import UNSUPPORTED_WHY
from insika_knowledge.memory import digest_id
from insika_knowledge.privacy.pseudonyms import pseudonymous

ROOT = Path(__file__).resolve().parents[1]
AGENT = "loja-aurora"
REPLAY = f"replay:{demo_file('replay.json')}"
CHAT = demo_turn("demo/sess-01")  # the conversation the replay's answers for demo/sess-01 were written from


@pytest.fixture
def memory(tmp_path: Path, clock) -> Memory:
    m = Memory(tmp_path / "data", clock=clock)
    yield m
    m.close()


def test_the_python_page_example_runs_as_written(tmp_path: Path) -> None:
    out = run_example(python_example("docs/python.md", "## Memory"), tmp_path)
    assert "('cep-13-campinas', 'learned')" in out
    assert "<knowledge>" in out and "name: cep-13-campinas" in out
    assert "('horario-atendimento', 'policy')" in out


def test_the_readme_python_example_runs_as_written(tmp_path: Path) -> None:
    out = run_example(python_example("README.md", "## From Python"), tmp_path)
    assert "<knowledge>" in out and 'name="cep-13-campinas"' in out


def test_import_insika_knowledge_does_not_load_the_front_door() -> None:
    code = "import sys, insika_knowledge; print('insika_knowledge.memory' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], env={**os.environ, "PYTHONPATH": str(ROOT)},
                          capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"


def test_learn_takes_messages_and_counts_the_same_messages_once(memory: Memory) -> None:
    first = memory.learn(CHAT, agent=AGENT, session_id="demo/sess-01", model=REPLAY)
    again = memory.learn(CHAT, agent=AGENT, session_id="demo/sess-01", model=REPLAY)
    assert first.count("learned") == 3
    assert first.turn_id == again.turn_id and first.turn_id.startswith("d-")
    assert {o for _, o in again.results} == {"replayed"}


def test_a_derived_turn_id_is_stored_as_it_is_never_as_a_pseudonym() -> None:
    # 16 hex digits held a run of 8 digits for about one value in ten (read as a phone):
    # such a turn id was stored as "d-[number]~<digest>".
    key = b"k" * 32
    ids = [digest_id({"role": "user", "content": f"message {i}"}) for i in range(2000)]
    assert len(set(ids)) == len(ids)
    assert all(re.fullmatch(r"d-[a-z]{16}", i) for i in ids)
    assert [i for i in ids if pseudonymous(i, key) != i] == []


def test_learn_takes_a_model_object_and_reports_no_model_without_one(memory: Memory) -> None:
    model = ReplayModel(demo_file("replay.json"))
    report = memory.learn(CHAT, agent=AGENT, session_id="demo/sess-01", turn_id="t1", model=model)
    assert report.outcome == "ok" and report.turn_id == "t1"
    nothing = memory.learn(CHAT, agent=AGENT, session_id="demo/sess-02")
    assert (nothing.outcome, nothing.retryable) == ("no_model", True)


class _Counting:
    """A model object that counts its calls and proposes nothing."""

    def __init__(self) -> None:
        self.calls = 0

    def propose(self, request: Any) -> list[Any]:
        self.calls += 1
        return []

    def merge(self, request: Any) -> Any:
        raise NotImplementedError


@pytest.mark.parametrize("messages", [[], [{"role": "user", "content": ""}],
                                      [{"role": "user", "content": " \n"}, {"role": "assistant", "content": None}],
                                      [{"role": "assistant", "content": [{"type": "text", "text": "  "}]}]])
def test_a_turn_with_no_text_is_not_sent_to_the_model(memory: Memory, messages: list[Any]) -> None:
    model = _Counting()
    report = memory.learn(messages, agent=AGENT, session_id="s-empty", turn_id="t1", model=model)
    assert (model.calls, report.outcome, report.proposed) == (0, "ok", 0)
    assert "not asked" in (report.detail or "")
    record = memory.store().extraction(AGENT, "s-empty", "t1")
    assert record is not None and record.outcome == "ok"
    # a tool call or a tool's result alone is something to read (found by a newcomer's
    # attack: Anthropic's tool_result part and the legacy function_call were not)
    readable = [
        [{"role": "assistant", "content": "", "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "get_order", "arguments": "{}"}}]}],
        [{"role": "assistant", "content": None, "function_call": {"name": "get_order", "arguments": "{}"}}],
        [{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "1", "content": "Warranty: 2 years"}]}],
    ]
    for i, turn in enumerate(readable):
        memory.learn(turn, agent=AGENT, session_id=f"s-call-{i}", turn_id="t1", model=model)
    assert model.calls == len(readable)


def test_search_returns_scored_hits_with_status(memory: Memory) -> None:
    for session in ("demo/sess-01", "demo/sess-02", "demo/sess-06"):  # sess-06 contradicts sess-02
        memory.learn(demo_turn(session), agent=AGENT, session_id=session, model=REPLAY)
    hits = memory.search("entrega em Campinas", agent=AGENT, top_k=2)
    assert len(hits) == 2 and all(isinstance(h, Hit) for h in hits)
    best = hits[0]
    assert (best.name, best.type, best.provenance, best.status) == ("cep-13-campinas", "fact", "observed", "ok")
    assert best.score >= hits[1].score > 0 and best.confidence == 0.6
    conflict = memory.search("devolução 7 dias", agent=AGENT, top_k=1)[0]
    assert (conflict.name, conflict.status) == ("devolucao-7-dias", "conflict")
    assert [c.name for c in memory.conflicts(agent=AGENT)] == ["devolucao-7-dias"]
    assert memory.search("nada a ver", agent="other-agent") == []


def test_block_load_concepts_and_delete(memory: Memory) -> None:
    recorder = Recorder()
    memory.events.subscribe(recorder)
    memory.learn(CHAT, agent=AGENT, session_id="demo/sess-01", model=REPLAY)
    block = memory.knowledge_block("Quanto demora a entrega para Campinas?", agent=AGENT)
    assert block is not None and '<concept name="cep-13-campinas"' in block
    assert memory.knowledge_block("xyzzy", agent=AGENT) is None
    assert memory.load("cep-13-campinas", agent=AGENT).startswith("---\nname: cep-13-campinas\n")
    with pytest.raises(NotFound, match="did you mean cep-13-campinas"):
        memory.load("cep-13-campina", agent=AGENT)
    assert [c.name for c in memory.concepts(agent=AGENT)] == [
        "cep-13-campinas", "frete-gratis-acima-199", "objecao-frete-caro"]
    memory.delete(agent=AGENT, name="objecao-frete-caro")
    assert [c.name for c in memory.concepts(agent=AGENT)] == ["cep-13-campinas", "frete-gratis-acima-199"]
    assert recorder.named("knowledge_deleted") == [{"name": "objecao-frete-caro", "agent": AGENT}]
    versions = memory.store().versions(AGENT, "objecao-frete-caro")
    assert (versions[0].reason, versions[0].actor) == ("delete", "python")  # newest first


POLICY = """---
name: horario-atendimento
description: Atendimento humano de segunda a sexta, das 9h às 18h.
---

O atendimento humano funciona de segunda a sexta, das 9h às 18h.
"""


def test_put_fills_what_a_person_leaves_out_as_policy(memory: Memory) -> None:
    concept = memory.put(POLICY, agent=AGENT)
    assert (concept.provenance, concept.type, concept.confidence) == ("policy", "fact", 1.0)
    assert (concept.sources, concept.occurrences) == ((), 0)
    assert concept.created_at == concept.updated_at
    assert memory.load("horario-atendimento", agent=AGENT).endswith("das 9h às 18h.\n")
    changed = memory.put(POLICY.replace("18h", "19h"), agent=AGENT, actor="ana")
    assert changed.created_at == concept.created_at and changed.updated_at > concept.updated_at
    history = memory.store().versions(AGENT, "horario-atendimento")
    assert [(v.reason, v.actor) for v in history] == [("edit", "ana"), ("edit", "python")]


def test_put_keeps_what_is_on_record_and_accepts_observed(memory: Memory) -> None:
    memory.learn(CHAT, agent=AGENT, session_id="demo/sess-01", model=REPLAY)
    edited = memory.put("""---
name: cep-13-campinas
description: CEPs 13000-000 a 13999-999 saem de Campinas em 1 a 2 dias úteis.
type: fact
provenance: observed
---

Corrigido por uma pessoa.
""", agent=AGENT)
    assert (edited.provenance, edited.confidence, edited.sources) == ("observed", 0.6, ("demo/sess-01",))
    new = memory.put(POLICY.replace("---\n\n", "provenance: observed\n---\n\n"), agent=AGENT)
    assert (new.provenance, new.confidence) == ("observed", 0.6)


@pytest.mark.parametrize(("text", "problem"), [
    ("no frontmatter", "line 1: the record must start"),
    ("---\nname: x\n---\n\nbody\n", "line 3, field 'description': missing key"),
    ("---\nname: Not A Slug\ndescription: d\n---\n\nbody\n", "line 2, field 'name'"),
    ("---\nname: x\ndescription: d\nconfidence: 7\n---\n\nbody\n", "line 4, field 'confidence'"),
    # a tab indents no YAML key: the line with the tab is named, not a "missing key" further down
    ("---\nname: x\n\tdescription: d\n---\n\nbody\n",
     "line 3, field 'description': invalid YAML: found character '\\t'"),
    ("---\n{name: x, description: d}\n---\n\nbody\n", "line 2: write the frontmatter as 'key: value' lines"),
    ("---\n\tname: x\ndescription: d\n---\n\nbody\n", "line 2, field 'name': invalid YAML: found character '\\t'"),
    ("---\n- name: x\n- description: d\n---\n\nbody\n", "line 2: the frontmatter must be 'key: value' lines"),
    ("---\njust text\n---\n\nbody\n", "line 2: the frontmatter must be 'key: value' lines"),
])
def test_put_refuses_an_invalid_record_naming_line_and_field(memory: Memory, text: str, problem: str) -> None:
    with pytest.raises(ConceptFormatError) as caught:
        memory.put(text, agent=AGENT)
    assert str(caught.value).startswith(problem)
    assert memory.concepts(agent=AGENT) == []


@pytest.mark.parametrize("text", [
    "\ufeff---\nname: frete-gratis\ndescription: Frete grátis acima de R$ 199.\n---\n\nAcima de R$ 199.\n",
    "---\rname: frete-gratis\rdescription: Frete grátis acima de R$ 199.\r---\r\rAcima de R$ 199.\r",
    "---\r\nname: frete-gratis\r\ndescription: Frete grátis acima de R$ 199.\r\n---\r\n\r\nAcima de R$ 199.\r\n",
])
def test_put_reads_a_byte_order_mark_and_any_line_ends_as_the_parser_does(memory: Memory, text: str) -> None:
    stored = memory.put(text, agent=AGENT)
    assert (stored.name, stored.description, stored.body) == (
        "frete-gratis", "Frete grátis acima de R$ 199.", "Acima de R$ 199.")


@pytest.mark.parametrize("agent", [None, 5, b"store"])
def test_an_agent_id_that_is_not_text_is_a_type_error(memory: Memory, agent: object) -> None:
    from insika_knowledge.errors import ArgumentTypeError

    with pytest.raises(ArgumentTypeError, match="agent must be a str"):
        memory.put("---\nname: x\ndescription: d\n---\n\nbody\n", agent=agent)  # type: ignore[arg-type]


@pytest.mark.parametrize(("method", "call"), [
    ("search", lambda m: m.search("x", agent="a", tenant=5)),
    ("knowledge_block", lambda m: m.knowledge_block("x", agent="a", tenant=5)),
    ("load", lambda m: m.load("x", agent="a", tenant=5)),
    ("records", lambda m: m.records(agent="a", tenant=5)),
    ("concepts", lambda m: m.concepts(agent="a", tenant=5)),
])
def test_a_tenant_that_is_not_text_names_the_call_it_was_given_to(memory: Memory, method: str, call: Any) -> None:
    # A newcomer's report: these said "Memory.has_tenant()", a call the caller never made.
    from insika_knowledge.errors import ArgumentTypeError

    with pytest.raises(ArgumentTypeError, match=rf"^Memory\.{method}\(\): tenant must be str"):
        call(memory)


def test_an_empty_body_is_named_at_the_closing_line(memory: Memory) -> None:
    """A newcomer's finding: a four-line record with no body was told "line 6", past its end."""
    with pytest.raises(ConceptFormatError, match=r"^line 4, field 'body': the markdown body is empty"):
        memory.put("---\nname: vazio\ndescription: d\n---\n", agent=AGENT)


def test_put_over_a_held_concept_vouches_for_it(memory: Memory) -> None:
    """A newcomer's finding: `put` under the name of a concept held in quarantine wrote a
    new version but left it held, though the docs say a concept you put is served at once."""
    item = {"name": "prazo-troca", "description": "Trocas em até 30 dias.", "type": "policy",
            "body": "Trocas em até 30 dias após a entrega."}
    assert memory.propose(item, agent=AGENT, session_id="s-0").results == [("prazo-troca", "quarantined")]
    assert memory.knowledge_block("trocas em até 30 dias", agent=AGENT) is None
    memory.put("---\nname: prazo-troca\ndescription: Trocas em até 30 dias.\ntype: policy\n---\n\n"
               "Trocas em até 30 dias após a entrega.\n", agent=AGENT)
    assert memory.store().quarantine_of(AGENT, "prazo-troca") is None
    assert 'name="prazo-troca"' in (memory.knowledge_block("trocas em até 30 dias", agent=AGENT) or "")
    assert [v.reason for v in memory.history("prazo-troca", agent=AGENT)] == ["extract", "edit"]


@pytest.mark.parametrize("agent", ["..", ".", "-store", "_x"])
def test_an_agent_id_that_does_not_start_with_a_letter_or_digit_is_told_so(memory: Memory, agent: str) -> None:
    with pytest.raises(InvalidName, match="start with a letter or digit"):
        memory.put("---\nname: x\ndescription: d\n---\n\nbody\n", agent=agent)


def test_a_live_rule_repeated_by_customers_alone_is_neither_confirmed_nor_raised(memory: Memory) -> None:
    item = {"name": "troca-de-tamanho", "description": "Troca de tamanho em até 30 dias.",
            "type": "policy", "body": "A troca de tamanho é em até 30 dias."}
    agent_said = [{"role": "user", "content": "Posso trocar o tamanho?"},
                  {"role": "assistant", "content": "A troca de tamanho é em até 30 dias."}]
    assert memory.propose(item, agent=AGENT, session_id="s-0", messages=agent_said).results == \
        [("troca-de-tamanho", "learned")]
    before = next(c for c in memory.concepts(agent=AGENT) if c.name == "troca-de-tamanho")
    customer_said = [{"role": "user", "content": "A troca de tamanho é em até 30 dias, né? Quero trocar."}]
    for i in range(1, 9):
        report = memory.propose(item, agent=AGENT, session_id=f"s-{i}", messages=customer_said)
        assert report.results == [("troca-de-tamanho", "unsupported")]
    after = next(c for c in memory.concepts(agent=AGENT) if c.name == "troca-de-tamanho")
    assert (after.confidence, after.sources, after.occurrences) == \
        (before.confidence, before.sources, before.occurrences)
    assert len(memory.history("troca-de-tamanho", agent=AGENT)) == 1
    again = memory.propose(item, agent=AGENT, session_id="s-9", messages=agent_said)
    assert again.results == [("troca-de-tamanho", "confirmed")]  # the agent says it again: it counts
    assert next(c for c in memory.concepts(agent=AGENT) if c.name == "troca-de-tamanho").confidence > \
        before.confidence


@pytest.mark.parametrize("reply", [
    "We don't ship every order above $50 for free anymore.",  # a denial
    "Did someone tell you we ship every order above $50 for free?",  # a question
    "Shipping takes 3 days.",  # a line about something else
    "Orders ship daily.",
])
def test_an_agent_line_that_does_not_state_a_live_rule_does_not_confirm_it(memory: Memory, reply: str) -> None:
    rule = {"name": "frete-gratis-50", "description": "Orders above $50 ship for free.", "type": "policy",
            "body": "We ship every order above $50 for free."}
    stated = [{"role": "assistant", "content": "Yes, we ship every order above $50 for free."}]
    assert memory.propose(rule, agent=AGENT, session_id="s1", messages=stated).results == \
        [("frete-gratis-50", "learned")]
    before = next(c for c in memory.concepts(agent=AGENT) if c.name == "frete-gratis-50")
    report = memory.propose(rule, agent=AGENT, session_id="s2", messages=[{"role": "assistant", "content": reply}])
    assert report.results == [("frete-gratis-50", "unsupported")]
    after = next(c for c in memory.concepts(agent=AGENT) if c.name == "frete-gratis-50")
    assert (after.confidence, after.sources, after.status) == (before.confidence, before.sources, before.status)


@pytest.mark.parametrize("reply", [
    "You said 'we ship every order above $30 for free' but that's not our policy.",
    "We ship every order above $30 for free? Not anymore.",
    "Enviamos grátis todo pedido acima de $30? Não.",
])
def test_an_agent_turning_down_another_value_leaves_the_live_rule_as_it_is(memory: Memory, reply: str) -> None:
    rule = {"name": "frete-gratis", "description": "Orders above $50 ship for free.", "type": "policy",
            "body": "We ship every order above $50 for free."}
    stated = [{"role": "assistant", "content": "Yes, we ship every order above $50 for free."}]
    memory.propose(rule, agent=AGENT, session_id="s1", messages=stated)
    other = {**rule, "description": "Orders above $30 ship for free.",
             "body": "We ship every order above $30 for free."}
    turned_down = [{"role": "user", "content": "Orders above $30 ship for free?"},
                   {"role": "assistant", "content": reply}]
    [(name, outcome)] = memory.propose(other, agent=AGENT, session_id="s2", messages=turned_down).results
    assert outcome == "quarantined" and name != "frete-gratis"
    live = next(c for c in memory.concepts(agent=AGENT) if c.name == "frete-gratis")
    assert (live.status, live.confidence) != ("conflict", 0.4) and not live.in_conflict


def test_propose_goes_through_the_gates_redaction_and_consolidation(memory: Memory) -> None:
    item = {"name": "Troca de Tamanho", "description": "Troca de tamanho em até 30 dias.",
            "type": "procedure", "body": "Pedir a troca a joana@exemplo.com.br em até 30 dias."}
    said = [{"role": "assistant", "content": "A troca de tamanho é em até 30 dias: peça a troca por e-mail."}]
    first = memory.propose(item, agent=AGENT, session_id="mcp-1", messages=said)
    assert first.results == [("troca-de-tamanho", "learned")] and first.redacted == {"email": 1}
    stored = memory.concepts(agent=AGENT)[0]
    assert (stored.provenance, stored.body) == ("observed", "Pedir a troca a [email] em até 30 dias.")
    assert memory.propose(item, agent=AGENT, session_id="mcp-1", messages=said).results == \
        [("troca-de-tamanho", "replayed")]
    assert memory.propose(item, agent=AGENT, session_id="mcp-2", messages=said).results == \
        [("troca-de-tamanho", "confirmed")]
    other = {**item, "body": "Trocas de tamanho só em 7 dias, nunca 30."}
    changed = [{"role": "assistant", "content": "Trocas de tamanho só em 7 dias, nunca 30."}]
    assert memory.propose(other, agent=AGENT, session_id="mcp-3", messages=changed).results == \
        [("troca-de-tamanho", "conflict")]
    # A rule proposed with no conversation behind it is held for a person (issue 26).
    alone = {**item, "name": "troca-sem-evidencia", "body": "Trocas em até 90 dias."}
    assert memory.propose(alone, agent=AGENT, session_id="mcp-5").results == \
        [("troca-sem-evidencia", "quarantined")]
    refused = memory.propose({**item, "confidence": 1.0}, agent=AGENT, session_id="mcp-4")
    assert (refused.results, refused.dropped) == ([], {"stamped_key": 1})
    assert memory.store().extraction(AGENT, "mcp-1", first.turn_id) is not None


class _Boom(Exception):
    pass


class _UnreadableList(list):
    def __iter__(self):  # type: ignore[no-untyped-def]
        raise _Boom("iter boom")


class _UnreadableItem(Mapping):  # type: ignore[type-arg]
    def __getitem__(self, key):  # type: ignore[no-untyped-def]
        raise _Boom("getitem boom")

    def __iter__(self):  # type: ignore[no-untyped-def]
        return iter(["name", "description"])

    def __len__(self) -> int:
        return 2


@pytest.mark.parametrize("answer", [_UnreadableList([1]), [_UnreadableItem()]])
def test_a_model_answer_that_fails_while_read_is_a_model_error_not_raised(memory: Memory, answer: list) -> None:
    class Model:
        def propose(self, request: object) -> list:
            return answer

        def merge(self, request: object) -> object:
            raise _Boom("merge")

    report = memory.learn([{"role": "assistant", "content": "Returns within 30 days."}], agent=AGENT,
                          session_id="s1", model=Model())
    assert report.outcome == "model_error" and "boom" in (report.detail or ""), report
    assert memory.concepts(agent=AGENT) == []


@pytest.mark.parametrize("where", ["body", "description", "name"])
def test_a_credential_the_model_writes_into_a_concept_is_never_kept(memory: Memory, where: str) -> None:
    """A newcomer's finding: a key a model (or a proposer) copied into a concept was stored
    and shown in the <knowledge> block; a CPF beside it was redacted."""
    key = "sk-proj-AbCdEf1234567890abcdef1234567890"
    item = {"name": "api-frete", "description": "Chave da API de frete.", "type": "fact",
            "body": "A chave da API de frete é usada pelo time de logística."}
    item[where] = f"{item[where]} {key}" if where != "name" else f"api-frete-{key}"

    class Model:
        def propose(self, request: object) -> list:
            return [item]

        def merge(self, request: object) -> object:
            raise RuntimeError("unused")

    report = memory.learn([{"role": "assistant", "content": f"A chave da API de frete é usada pelo time. {key}"}],
                          agent=AGENT, session_id="s1", model=Model())
    assert report.redacted.get("secret", 0) >= 1, report
    stored = "".join(memory.load(c.name, agent=AGENT) for c in memory.concepts(agent=AGENT))
    assert key not in stored and key not in (memory.knowledge_block("chave da API de frete", agent=AGENT) or "")


def test_a_model_error_that_quotes_a_key_keeps_no_key(memory: Memory, tmp_path: Path) -> None:
    key = "sk-proj-AbCdEf1234567890abcdef1234567890"

    class Model:
        def propose(self, request: object) -> list:
            raise RuntimeError(f"401 https://api.example/v1?key={key} Authorization: Bearer {key}")

        def merge(self, request: object) -> object:
            raise RuntimeError("unused")

    report = memory.learn([{"role": "assistant", "content": "Returns within 30 days."}], agent=AGENT,
                          session_id="s1", model=Model())
    assert report.outcome == "model_error" and "401" in (report.detail or "") and key not in (report.detail or "")
    (status,) = memory.status()
    assert status.failures and all(key not in (f.detail or "") for f in status.failures)
    assert all(key.encode() not in p.read_bytes() for p in memory.directory.rglob("*") if p.is_file())


@pytest.mark.parametrize(("change", "why"), [
    ({"description": "d" * 301}, "invalid: description is 301 characters (at most 300)"),
    ({"type": "rumour"}, "invalid: type 'rumour' is none of entity, fact, objection, policy, procedure"),
    ({"type": "objection"}, "type_not_allowed: 'objection' (this agent learns fact)"),
    ({"body": 7}, "invalid: body must be text, not int"),
    ({"name": "!!!"}, "invalid: name: cannot make a concept name out of '!!!': use letters or digits"),
    ({"body": "   "}, "empty: body"),
    ({"confidence": 1.0}, "stamped_key: confidence (the engine stamps these)"),
    ({"evidence": "not a list"}, "invalid: evidence must be a list of quotes (strings), not str"),
    # a newcomer's finding: every limit gave one message; now the one broken is named
    ({"evidence": ["ok"] * 9}, "invalid: evidence holds 9 quotes; at most 8"),
    ({"evidence": ["ok", {"quote": "x"}]}, "invalid: evidence quote 2 is dict, not text"),
    ({"evidence": ["x" * 1001]}, "invalid: evidence quote 1 is 1001 characters; at most 1000"),
])
def test_a_refused_proposal_says_what_was_wrong_and_where(memory: Memory, change: dict[str, object],
                                                          why: str) -> None:
    item = {"name": "horario", "description": "Horário.", "type": "fact", "body": "Abrimos às 9h.", **change}
    report = memory.propose(item, agent=AGENT, session_id="s-1", config=load_config({"types": ["fact"]}))
    assert report.results == [] and sum(report.dropped.values()) == 1
    assert len(report.why) == 1 and report.why[0].startswith(f"candidate 0: {why}")
    assert report.why[0].split(": ")[1] == next(iter(report.dropped))
    assert memory.concepts(agent=AGENT) == []


@pytest.mark.parametrize(("message", "why"), [
    ({"role": "martian", "content": "hi"}, r"messages\[1\]\['role'\] is 'martian'; a message's role is one of"),
    ({"content": "hi"}, r"messages\[1\]\['role'\] is None"),
    ({"role": "user", "content": 42}, r"messages\[1\]\['content'\]"),
    ({"role": "user"}, r"messages\[1\] has no 'content'; a user message needs its text"),
    ({"role": "tool", "content": None}, r"messages\[1\]\['content'\] is None; a tool message needs its text"),
])
def test_a_message_with_an_unknown_role_or_content_is_refused_by_position(memory: Memory, message: dict[str, object],
                                                                          why: str) -> None:
    from insika_knowledge.errors import UserError

    with pytest.raises(UserError, match=why):
        memory.learn([{"role": "user", "content": "oi"}, message], agent=AGENT, session_id="s-1")
    assert memory.concepts(agent=AGENT) == []


def test_a_proposal_held_in_quarantine_says_why(tmp_path: Path) -> None:
    """A newcomer's report: `propose` of a rule without messages returned ``quarantined``
    with an empty ``why``; the reason showed only in `load`."""
    from insika_knowledge.trust import held_because

    with Memory(tmp_path) as memory:
        report = memory.propose({"name": "garantia", "description": "Garantia de 2 anos.", "type": "policy",
                                 "body": "Todo produto tem 2 anos de garantia grátis."}, agent=AGENT, session_id="s1")
        assert report.results == [("garantia", "quarantined")]
        held = memory.store().quarantine_of(AGENT, "garantia")
        assert held is not None
        assert report.why == [f"garantia: quarantined: {held_because(held.supported_by, held.markers)}"]
        assert report.why[0].startswith("garantia: quarantined: no message supported it, and it states a rule (")


def test_a_proposal_that_contradicts_without_a_merge_model_says_so(tmp_path: Path) -> None:
    """A newcomer's finding: `propose` with no merge model held a changed price as a conflict
    "the merge model gave no answer (model_empty)", though there was no merge model."""
    said = "O frete expresso custa R$ {} para todo o Brasil."
    with Memory(tmp_path, embeddings="off") as memory:
        for session, price in (("s1", "29,90"), ("s2", "39,90")):
            report = memory.propose(
                {"name": "frete-expresso", "description": f"O frete expresso custa R$ {price}.", "type": "fact",
                 "body": said.format(price)}, agent=AGENT, session_id=session,
                messages=[{"role": "user", "content": "Quanto custa o frete expresso?"},
                          {"role": "assistant", "content": said.format(price)}])
        assert report.results == [("frete-expresso", "conflict")]
        assert report.why == ["frete-expresso: conflict: it differs from the record and no merge model could be asked"]


def test_a_proposed_description_keeps_its_emoji_sequence(tmp_path: Path) -> None:
    """A newcomer's finding: `propose` dropped a description's joiners ("👨‍👩‍👧" stored as three
    emoji) while a body kept them."""
    family = "Plano família \U0001f468\u200d\U0001f469\u200d\U0001f467 com 3 linhas"
    with Memory(tmp_path) as memory:
        memory.propose({"name": "plano-familia", "description": family, "type": "fact",
                        "body": "O plano família tem 3 linhas."}, agent=AGENT, session_id="s1",
                       messages=[{"role": "assistant", "content": "O plano família tem 3 linhas."}])
        assert memory.store().get(AGENT, "plano-familia").concept.description == family


@pytest.mark.parametrize("spec", ["nope/x", "openai/gpt-4o-mini"])
def test_propose_with_an_unusable_model_raises_before_anything_is_written(
        tmp_path: Path, spec: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A newcomer's finding: a typo in the model spec was the merge model failing, so a
    related restatement was written as a conflict ("the merge model failed (UserError)")."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    said = [{"role": "assistant", "content": "The store opens at 9 am on weekdays."}]
    item = {"name": "opening", "description": "The store opens at 9 am.", "type": "fact",
            "body": "The store opens at 9 am on weekdays."}
    with Memory(tmp_path, embeddings="off") as memory:
        memory.propose(item, agent=AGENT, session_id="s1", messages=said)
        before = memory.load("opening", agent=AGENT)
        with pytest.raises(UserError, match=r"model '(nope/x|openai/gpt-4o-mini)'"):
            memory.propose({**item, "body": "The store opens at 9 am on weekdays and closes at 6 pm."},
                           agent=AGENT, session_id="s2", messages=said, model=spec)
        assert memory.load("opening", agent=AGENT) == before


def test_an_unsupported_repeat_says_why_it_changed_nothing(tmp_path: Path) -> None:
    """A newcomer's finding: the ``unsupported`` outcome came with no why."""
    item = {"name": "opening", "description": "The store opens at 9 am.", "type": "policy",
            "body": "The store opens at 9 am on weekdays."}
    with Memory(tmp_path, embeddings="off") as memory:
        memory.propose(item, agent=AGENT, session_id="s1",
                       messages=[{"role": "assistant", "content": "The store opens at 9 am on weekdays."}])
        report = memory.propose({**item, "evidence": ["The store opens at 9 am on weekdays."]}, agent=AGENT,
                                session_id="s2", messages=[
                                    {"role": "user", "content": "The store opens at 9 am on weekdays, I know it."},
                                    {"role": "assistant", "content": "Anything else?"}])
        assert report.results == [("opening", "unsupported")]
        assert report.why == [f"opening: unsupported: {UNSUPPORTED_WHY}"]


def test_approve_releases_a_held_concept_and_refuses_one_that_is_not_held(tmp_path: Path) -> None:
    from insika_knowledge.errors import NotFound, StaleVersion, UserError

    with Memory(tmp_path) as memory:
        memory.propose({"name": "garantia", "description": "Garantia de 2 anos grátis.", "type": "policy",
                        "body": "Todo produto tem 2 anos de garantia grátis."}, agent=AGENT, session_id="s1")
        assert memory.search("garantia grátis", agent=AGENT) == []
        version = memory.history("garantia", agent=AGENT)[-1].version
        with pytest.raises(StaleVersion):
            memory.approve("garantia", agent=AGENT, expected_version=version + 1)
        assert memory.store().quarantine_of(AGENT, "garantia") is not None  # nothing written
        concept = memory.approve("garantia", agent=AGENT, expected_version=version)
        assert concept.name == "garantia" and memory.store().quarantine_of(AGENT, "garantia") is None
        assert [h.name for h in memory.search("garantia grátis", agent=AGENT)] == ["garantia"]
        with pytest.raises(UserError, match="'garantia' of agent .* is not in quarantine"):
            memory.approve("garantia", agent=AGENT)
        with pytest.raises(NotFound):
            memory.approve("garantias", agent=AGENT)
        with pytest.raises(UserError, match="name"):
            memory.approve(42, agent=AGENT)  # type: ignore[arg-type]


def test_a_concept_named_in_another_script_is_learned_under_its_transliterated_name(tmp_path: Path) -> None:
    """A newcomer's finding: a model's candidate named "Доставка Москва" was dropped whole
    ("too little is ASCII"), its Russian description and body with it."""
    said = "Доставка по Москве занимает 2 дня."
    with Memory(tmp_path) as memory:
        report = memory.propose({"name": "Доставка Москва", "description": said, "type": "fact", "body": said},
                                agent=AGENT, session_id="s1", messages=[
                                    {"role": "user", "content": "Сколько дней доставка?"},
                                    {"role": "assistant", "content": said}])
        assert report.results == [("dostavka-moskva", "learned")]
        assert "Доставка по Москве" in memory.load("dostavka-moskva", agent=AGENT)


def test_update_reads_a_no_break_space_in_the_description_as_put_does(tmp_path: Path) -> None:
    """An attack: `put` took "Prix\u00a0: 10 €", `Memory.update` still refused it."""
    with Memory(tmp_path) as memory:
        memory.put("---\nname: prix\ndescription: Prix 10\n---\n\nLivraison 10 €.\n", agent=AGENT)
        memory.update("prix", agent=AGENT, description="Prix\u00a0: 12 €")
        assert memory.store().get(AGENT, "prix").concept.description == "Prix : 12 €"


def test_propose_bounds_its_messages_as_learn_bounds_a_turn(tmp_path: Path) -> None:
    """A newcomer's finding: `propose` took a 10 MB message (learn bounds a turn to 256 KiB)."""
    item = {"name": "opening", "description": "The store opens at 9 am.", "type": "fact",
            "body": "The store opens at 9 am on weekdays."}
    said = {"role": "assistant", "content": "The store opens at 9 am on weekdays."}
    with Memory(tmp_path, embeddings="off") as memory:
        with pytest.raises(UserError, match=r"Memory.propose\(\): the turn's last message alone is \d+ bytes"):
            memory.propose(item, agent=AGENT, session_id="s1",
                           messages=[{**said, "content": said["content"] + " x" * 200_000}])
        assert memory.concepts(agent=AGENT) == []
        # older messages beyond the bound are cut, the newest kept: the agent's words still support it
        report = memory.propose(item, agent=AGENT, session_id="s2",
                                messages=[{"role": "user", "content": "y" * 300_000}, said])
        assert report.results == [("opening", "learned")]
