"""Erasure: `purge` removes a concept and everything kept of it, on both backends; on SQLite
no byte of it stays in the database file or its log (a newcomer's finding: after an edit that
removed a customer's name and a `delete`, the name was still in `history` and in the file)."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import make_concept

from insika_knowledge.cli import cli
from insika_knowledge.errors import NotFound
from insika_knowledge.memory import Memory
from insika_knowledge.store import Store

AGENT = "loja"
RECORD = ("---\nname: caso-zorbalina\ndescription: Caso da cliente Zorbalina Quixaba.\n---\n"
          "A cliente Zorbalina Quixaba pediu troca do tapete.")


def _bytes(folder: Path) -> bytes:
    return b"".join(p.read_bytes() for p in folder.rglob("*") if p.is_file()).lower()


def test_a_purged_concept_leaves_no_byte_in_the_file_nor_its_log(tmp_path: Path) -> None:
    with Memory(tmp_path, embeddings="off") as memory:
        memory.put(RECORD, agent=AGENT)
        assert [h.name for h in memory.search("zorbalina", agent=AGENT)] == ["caso-zorbalina"]
        memory.update("caso-zorbalina", agent=AGENT, description="Caso de uma cliente.",
                      body="Uma cliente pediu troca.")
        memory.delete("caso-zorbalina", agent=AGENT)
        assert b"zorbal" in _bytes(tmp_path)  # what `delete` keeps: the history, restorable
        assert memory.purge("caso-zorbalina", agent=AGENT) == 3
        with pytest.raises(NotFound):
            memory.history("caso-zorbalina", agent=AGENT)
        with pytest.raises(NotFound):
            memory.restore("caso-zorbalina", 1, agent=AGENT)
        assert memory.search("zorbalina", agent=AGENT) == []
    stored = _bytes(tmp_path)
    assert b"zorbal" not in stored and b"quixab" not in stored  # the name, and the index's stemmed terms


def test_purge_erases_what_is_kept_beside_the_concept(store: Store) -> None:
    """Both backends: versions, sightings, quarantine, held claims and aliases go with it."""
    concept = make_concept(name="entrega-recife", description="Entregamos em Recife em 5 dias.",
                           body="Entregamos em Recife em 5 dias úteis.")
    with store.transaction() as tx:
        tx.put(AGENT, concept, reason="extract", actor="engine")
        tx.add_sighting(AGENT, "entrega-recife", "s1", "t1", "extract")
    with store.transaction() as tx:
        tx.rename(AGENT, "entrega-recife", "entrega-em-recife")
    assert store.alias_of(AGENT, "entrega-recife") == "entrega-em-recife"
    assert store.purge(AGENT, "entrega-em-recife", actor="ana") == 1 + len(store.versions(AGENT, "entrega-em-recife"))
    assert store.get(AGENT, "entrega-em-recife") is None and store.versions(AGENT, "entrega-em-recife") == []
    assert store.alias_of(AGENT, "entrega-recife") is None
    assert store.deleted(AGENT) == []
    if hasattr(store, "schema"):  # PostgreSQL: no document-frequency row keeps its terms
        terms = {r[0] for r in store.rows("SELECT term FROM concept_terms WHERE agent = %s", (AGENT,))}
        assert not any(t.startswith("recif") for t in terms), terms
    with pytest.raises(NotFound):
        store.purge(AGENT, "entrega-em-recife", actor="ana")


def test_the_command_says_what_would_go_then_erases_with_yes(tmp_path: Path) -> None:
    with Memory(tmp_path, embeddings="off") as memory:
        memory.put(RECORD, agent=AGENT)
        memory.put("---\nname: horario\ndescription: Abrimos às 9h.\n---\nAbrimos às 9h.", agent=AGENT)
    where = ["--agent", AGENT, "--data-dir", str(tmp_path)]
    dry = CliRunner().invoke(cli, ["purge", "caso-zorbalina", *where])
    assert dry.exit_code == 0 and "would erase loja/caso-zorbalina" in dry.output and "--yes" in dry.output
    with Memory(tmp_path, embeddings="off") as memory:
        assert memory.concepts(agent=AGENT)  # nothing erased yet
    done = CliRunner().invoke(cli, ["purge", "caso-zorbalina", *where, "--yes"])
    assert done.exit_code == 0 and done.output.startswith("erased loja/caso-zorbalina"), done.output
    missing = CliRunner().invoke(cli, ["purge", "caso-zorbalin", *where, "--yes"])
    assert missing.exit_code == 2 and "caso-zorbalin" in missing.output


def test_the_dry_run_says_what_goes_and_a_mistyped_agent_is_named(tmp_path: Path) -> None:
    """A newcomer's report: "3 version(s) and all kept of it" said nothing of what goes, and
    a mistyped agent got only "no concept ... has a history"."""
    with Memory(tmp_path, embeddings="off") as memory:
        memory.put(RECORD, agent=AGENT)
    dry = CliRunner().invoke(cli, ["purge", "caso-zorbalina", "--agent", AGENT, "--data-dir", str(tmp_path)])
    assert dry.exit_code == 0 and "1 version(s), its sightings, held claims, aliases and vectors" in dry.output
    wrong = CliRunner().invoke(cli, ["purge", "caso-zorbalina", "--agent", AGENT + "x", "--data-dir", str(tmp_path)])
    assert wrong.exit_code == 2 and f"agent {AGENT + 'x'!r} has no concept or history here" in wrong.output
    assert f"did you mean agent {AGENT}?" in wrong.output


def test_the_command_erases_a_deleted_concept_that_was_the_agents_last(tmp_path: Path) -> None:
    """A newcomer's report: the agent had no live concept left, so the command refused."""
    with Memory(tmp_path, embeddings="off") as memory:
        memory.put(RECORD, agent=AGENT)
        memory.delete("caso-zorbalina", agent=AGENT)
        assert not memory.concepts(agent=AGENT)
    where = ["--agent", AGENT, "--data-dir", str(tmp_path)]
    dry = CliRunner().invoke(cli, ["purge", "caso-zorbalina", *where])
    assert dry.exit_code == 0 and "would erase loja/caso-zorbalina" in dry.output, dry.output
    done = CliRunner().invoke(cli, ["purge", "caso-zorbalina", *where, "--yes"])
    assert done.exit_code == 0 and done.output.startswith("erased loja/caso-zorbalina"), done.output
    with Memory(tmp_path, embeddings="off") as memory, pytest.raises(NotFound):
        memory.history("caso-zorbalina", agent=AGENT)
