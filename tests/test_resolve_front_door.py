"""Resolving a concept's contradicting reports from Python and the CLI, as the Studio does.

A newcomer's report: a person who settled a conflict through `update` (the section edited
away) left the conflict's flat 0.4 confidence on a rule two sessions supported, and the
front door had no way to keep one claim: only the Studio could.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from insika_knowledge.cli import cli
from insika_knowledge.consolidate import CONFLICT_CONFIDENCE, confidence
from insika_knowledge.errors import NotFound, StaleVersion, UserError
from insika_knowledge.memory import Memory

AGENT = "loja"
OLD = {"name": "prazo-de-troca", "type": "fact", "description": "Trocas em até 30 dias.",
       "body": "Trocas são aceitas em até 30 dias após a entrega."}
NEW = {**OLD, "description": "Trocas em até 7 dias.", "body": "Trocas são aceitas em até 7 dias após a entrega."}


def _said(text: str) -> list[dict[str, str]]:
    return [{"role": "user", "content": "Qual o prazo de troca?"}, {"role": "assistant", "content": text}]


@pytest.fixture
def memory(tmp_path: Path) -> Memory:
    """A rule two sessions stated (observed), then contradicted by a third (no merge model)."""
    memory = Memory(tmp_path)
    for session, claim in (("s1", OLD), ("s2", OLD), ("s3", NEW)):
        memory.propose(claim, agent=AGENT, session_id=session, messages=_said(claim["body"]))
    concept = memory.concepts(agent=AGENT)[0]
    assert concept.in_conflict and concept.confidence == CONFLICT_CONFIDENCE
    return memory


def test_the_claims_are_listed_by_key(memory: Memory) -> None:
    listed = memory.claims("prazo-de-troca", agent=AGENT)
    assert [(c.key, c.description, c.sessions) for c in listed] == [
        ("record", "Trocas em até 30 dias.", ()), ("entry-1", "Trocas em até 7 dias.", ("s3",))]


@pytest.mark.parametrize(("keep", "body", "sessions"), [
    ("record", OLD["body"], ("s1", "s2")),
    ("entry-1", NEW["body"], ("s3",)),
])
def test_keeping_a_claim_counts_the_sessions_that_made_it(memory: Memory, keep: str, body: str,
                                                           sessions: tuple[str, ...]) -> None:
    resolved = memory.resolve("prazo-de-troca", agent=AGENT, keep=keep)
    assert (resolved.body, resolved.in_conflict, resolved.sources) == (body, False, sessions)
    assert resolved.confidence == confidence(len(sessions)) > CONFLICT_CONFIDENCE
    assert [v.reason for v in memory.history("prazo-de-troca", agent=AGENT)][-1] == "resolve"
    assert memory.conflicts(agent=AGENT) == []


def test_an_update_that_edits_the_section_away_resolves_it(memory: Memory) -> None:
    settled = memory.update("prazo-de-troca", agent=AGENT, body=OLD["body"])
    assert not settled.in_conflict and settled.confidence == confidence(3)  # every session, as a written one
    assert [v.reason for v in memory.history("prazo-de-troca", agent=AGENT)][-1] == "resolve"
    renamed = memory.concepts(agent=AGENT)[0]
    assert renamed == settled


def test_an_update_that_settles_and_renames_does_both(memory: Memory) -> None:
    settled = memory.update("prazo-de-troca", agent=AGENT, body=NEW["body"], rename="prazo-troca")
    assert (settled.name, settled.in_conflict, settled.body) == ("prazo-troca", False, NEW["body"])
    assert settled.confidence > CONFLICT_CONFIDENCE
    assert [v.reason for v in memory.history("prazo-troca", agent=AGENT)][-2:] == ["resolve", "edit"]


def test_a_written_resolution_is_a_whole_record(memory: Memory) -> None:
    written = ("---\nname: prazo-de-troca\ndescription: Trocas em até 7 dias (desde março).\n"
               "provenance: policy\n---\n\nTrocas são aceitas em até 7 dias após a entrega.\n")
    resolved = memory.resolve("prazo-de-troca", agent=AGENT, written=written)
    assert (resolved.description, resolved.provenance, resolved.in_conflict, resolved.confidence) == (
        "Trocas em até 7 dias (desde março).", "policy", False, 1.0)


@pytest.mark.parametrize(("kwargs", "said"), [
    ({}, "give one of keep"),
    ({"keep": "record", "written": "---\nname: x\ndescription: d.\n---\nb\n"}, "give one of keep"),
    ({"keep": "entry-9"}, "has no claim 'entry-9': its claims are record, entry-1"),
    ({"written": "---\nname: outro\ndescription: d.\n---\nb\n"}, "keeps the name 'prazo-de-troca'"),
    ({"keep": "record", "expected_version": 1}, "StaleVersion"),
])
def test_a_wrong_resolution_says_what_and_writes_nothing(memory: Memory, kwargs: dict[str, object],
                                                         said: str) -> None:
    before = memory.history("prazo-de-troca", agent=AGENT)
    with pytest.raises((UserError, StaleVersion)) as refused:
        memory.resolve("prazo-de-troca", agent=AGENT, **kwargs)  # type: ignore[arg-type]
    assert said in f"{type(refused.value).__name__}: {refused.value}", refused.value
    assert memory.history("prazo-de-troca", agent=AGENT) == before


def test_nothing_to_resolve_and_no_such_concept_are_said(memory: Memory) -> None:
    memory.resolve("prazo-de-troca", agent=AGENT, keep="record")
    with pytest.raises(UserError, match="holds no contradicting reports"):
        memory.resolve("prazo-de-troca", agent=AGENT, keep="record")
    with pytest.raises(NotFound, match="prazo-de-troca"):
        memory.resolve("prazo-de-trocas", agent=AGENT, keep="record")


def test_the_cli_lists_the_keys_and_resolves(memory: Memory, tmp_path: Path) -> None:
    where = ["--agent", AGENT, "--data-dir", str(tmp_path)]
    memory.close()
    listed = CliRunner().invoke(cli, ["conflicts", *where])
    assert listed.exit_code == 0 and "entry-1" in listed.output, listed.output
    wrong = CliRunner().invoke(cli, ["resolve", *where, "prazo-de-troca", "--keep", "entry-2"])
    assert wrong.exit_code == 2 and "has no claim 'entry-2'" in wrong.output, wrong.output
    bad = CliRunner().invoke(cli, ["resolve", *where, "prazo-de-troca", "--file", "-"],
                             input="---\nname: prazo-de-troca\ndescription: [oops\n---\n\nTrocas.\n")
    assert bad.exit_code == 2 and "Error: standard input: line 3" in bad.output, bad.output
    done = CliRunner().invoke(cli, ["resolve", *where, "prazo-de-troca", "--keep", "entry-1"])
    assert done.exit_code == 0, done.output
    assert "resolved prazo-de-troca: kept entry-1" in done.output
    with Memory(tmp_path) as again:
        concept = again.concepts(agent=AGENT)[0]
        assert (concept.body, concept.in_conflict) == (NEW["body"], False)
    # resolved: said in the command line's words (a newcomer read "Memory.resolve(): ...
    # dismiss_held"), and a bad record from standard input names it as `put` does
    again = CliRunner().invoke(cli, ["resolve", *where, "prazo-de-troca", "--keep", "record"])
    assert again.exit_code == 2 and "'prazo-de-troca' holds no contradicting reports" in again.output
    assert "Memory.resolve" not in again.output and "dismiss_held" not in again.output
    # and speaks of held claims only when there are some (a newcomer read that some were held)
    assert "held against it" not in again.output and "to change it: 'put'" in again.output
    assert CliRunner().invoke(cli, ["resolve", *where, "prazo-de-troca", "--keep", "entry-1"]).exit_code == 2
