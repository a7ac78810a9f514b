"""A claim held as a possible duplicate that a person finds to be another rule is learned as a
concept of its own (`Memory.learn_held`, ``insika-knowledge learn-held``); ``dismiss`` keeps
a concept as it is from the command line.

A newcomer's finding: a new rule of the same shape as one on record ("Orders over $100 get
free gift wrap" beside "Orders over $50 ship free") was held as its possible duplicate, the
rule on record was served as disputed, and nothing but an edit of that rule could end it:
dismissing the held claim left the new rule unlearned, and its next sighting was held again.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from insika_knowledge import Memory
from insika_knowledge.cli import cli
from insika_knowledge.errors import UserError

AGENT = "loja"
WRAP = {"name": "gift-wrap-over-100", "type": "policy", "description": "Orders over $100 get free gift wrap.",
        "body": "Orders over $100 get free gift wrap."}
# the same rule in other words, under another name: held lexically whatever the index
AGAIN = {"name": "free-gift-wrapping", "type": "policy", "description": "Gift wrapping is free on orders above $100.",
         "body": "Gift wrapping is free on orders above $100."}


def _said(item: dict[str, str]) -> list[dict[str, str]]:
    return [{"role": "user", "content": "Do you wrap gifts?"}, {"role": "assistant", "content": item["body"]}]


def _held(memory: Memory) -> None:
    assert memory.propose(WRAP, agent=AGENT, session_id="s1", messages=_said(WRAP)).results == \
        [("gift-wrap-over-100", "learned")]
    assert memory.propose(AGAIN, agent=AGENT, session_id="s2", messages=_said(AGAIN)).results == \
        [("free-gift-wrapping", "possible_duplicate")]


def test_a_held_claim_learned_as_its_own_concept_ends_the_dispute(tmp_path: Path, database: str | None) -> None:
    memory = Memory(tmp_path, database=database)
    try:
        _held(memory)
        assert 'status="conflict">' in (memory.knowledge_block("gift wrap over $100", agent=AGENT) or "")
        concept = memory.learn_held("free-gift-wrapping", agent=AGENT, actor="ana")
        assert (concept.name, concept.provenance, concept.sources, concept.occurrences, concept.confidence) == \
            ("free-gift-wrapping", "observed", ("s2",), 1, 0.6)
        assert (concept.description, concept.body) == (AGAIN["description"], AGAIN["body"])
        assert memory.held_claims(agent=AGENT) == [] and memory.conflicts(agent=AGENT) == []
        block = memory.knowledge_block("gift wrap over $100", agent=AGENT) or ""
        assert 'name="gift-wrap-over-100"' in block and 'status="conflict">' not in block
        (version,) = memory.history("free-gift-wrapping", agent=AGENT)
        assert (version.reason, version.actor) == ("resolve", "ana")
        assert memory.history("gift-wrap-over-100", agent=AGENT)[-1].version == 1  # the record untouched
        # its next sighting under its name confirms it
        assert memory.propose(AGAIN, agent=AGENT, session_id="s3", messages=_said(AGAIN)).results == \
            [("free-gift-wrapping", "confirmed")]
    finally:
        memory.close()


def test_learn_held_of_a_name_nothing_is_held_under_names_what_is(tmp_path: Path) -> None:
    memory = Memory(tmp_path)
    try:
        _held(memory)
        with pytest.raises(UserError, match=r"no claim of agent 'loja' is held open under the name 'gift-wrap'; "
                                            r"held: free-gift-wrapping"):
            memory.learn_held("gift-wrap", agent=AGENT)
        with pytest.raises(UserError, match="held open under the name 'gift-wrap-over-100'"):
            memory.learn_held("gift-wrap-over-100", agent=AGENT)  # the concept held against, not a held claim
        memory.learn_held("free-gift-wrapping", agent=AGENT)
        with pytest.raises(UserError, match="held open under the name 'free-gift-wrapping'; none is held"):
            memory.learn_held("free-gift-wrapping", agent=AGENT)  # done once: nothing left
        assert memory.store().get(AGENT, "free-gift-wrapping").version == 1
    finally:
        memory.close()


def test_the_command_line_dismisses_and_learns_held_claims(tmp_path: Path) -> None:
    memory = Memory(tmp_path)
    _held(memory)
    other = {**AGAIN, "name": "wrap-free-above-100", "body": "Free gift wrap applies to orders above $100."}
    assert memory.propose(other, agent=AGENT, session_id="s3", messages=_said(other)).results == \
        [("wrap-free-above-100", "possible_duplicate")]
    memory.close()
    runner = CliRunner()
    where = ["--agent", AGENT, "--data-dir", str(tmp_path)]
    shown = runner.invoke(cli, ["conflicts", *where])
    assert shown.exit_code == 0, shown.output
    here = f"--agent loja --data-dir {tmp_path}"  # a newcomer's finding: copied as printed, they opened another store
    assert f"keep gift-wrap-over-100 as it is: insika-knowledge dismiss gift-wrap-over-100 {here}" in shown.output
    assert f"free-gift-wrapping is another rule: insika-knowledge learn-held free-gift-wrapping {here}" \
        in shown.output
    learned = runner.invoke(cli, ["learn-held", "free-gift-wrapping", *where])
    assert learned.exit_code == 0, learned.output
    assert learned.output.startswith("learned loja/free-gift-wrapping in tenant default as a concept of its own")
    dismissed = runner.invoke(cli, ["dismiss", "gift-wrap-over-100", *where])  # the other held claim
    assert dismissed.exit_code == 0, dismissed.output
    assert dismissed.output.startswith("dismissed 1 claim held against loja/gift-wrap-over-100 in tenant default")
    assert "(no conflicts)" in runner.invoke(cli, ["conflicts", *where]).output
    nothing = runner.invoke(cli, ["dismiss", "gift-wrap-over-100", *where])
    assert nothing.exit_code == 0 and "has no claim held against it: nothing to dismiss" in nothing.output
    missing = runner.invoke(cli, ["learn-held", "nope", *where])
    assert missing.exit_code != 0 and "held open under the name 'nope'; none is held" in missing.output


def test_the_command_line_renames_a_concept_with_its_history(tmp_path: Path) -> None:
    """A newcomer's finding: after `resolve --keep entry-1` the rule kept its old name
    ("devolucao-7-dias" holding the 30-day rule), and only Python could rename it."""
    memory = Memory(tmp_path)
    _held(memory)
    memory.close()
    runner = CliRunner()
    where = ["--agent", AGENT, "--data-dir", str(tmp_path)]
    done = runner.invoke(cli, ["rename", "gift-wrap-over-100", "free-gift-wrap-100", *where])
    assert done.exit_code == 0, done.output
    assert done.output.startswith("renamed loja/gift-wrap-over-100 to free-gift-wrap-100 in tenant default")
    memory = Memory(tmp_path)
    try:
        assert [v.reason for v in memory.history("free-gift-wrap-100", agent=AGENT)] == ["extract", "edit"]
        assert [h.duplicate_of for h in memory.held_claims(agent=AGENT)] == ["free-gift-wrap-100"]  # moved with it
    finally:
        memory.close()
    taken = runner.invoke(cli, ["rename", "free-gift-wrap-100", "free-gift-wrap-100", *where])
    assert taken.exit_code == 0 and "already has that name: nothing written" in taken.output
    bad = runner.invoke(cli, ["rename", "free-gift-wrap-100", "Not A Slug", *where])
    assert bad.exit_code != 0 and "Not A Slug" in bad.output


def test_a_concept_renamed_onto_a_held_claims_name_is_challenged_by_it(tmp_path: Path,
                                                                      database: str | None) -> None:
    """A newcomer's finding: after a rename to the name a held claim was proposed under,
    `learn_held` of that name said nothing was held. The claim now challenges the concept of
    its name (the rename stands: `test_full_record`), and the error says so."""
    memory = Memory(tmp_path, database=database)
    try:
        _held(memory)
        memory.update("gift-wrap-over-100", agent=AGENT, rename="free-gift-wrapping")
        with pytest.raises(UserError, match="'free-gift-wrapping' is a concept of agent 'loja' now: the claims held "
                                            "under its name challenge it"):
            memory.learn_held("free-gift-wrapping", agent=AGENT)
        assert memory.dismiss_held("free-gift-wrapping", agent=AGENT) == 1
    finally:
        memory.close()


def test_a_concept_is_not_renamed_onto_another_concepts_alias(tmp_path: Path, database: str | None) -> None:
    """A newcomer's attack: renamed onto a name another concept kept from a rename, the gift
    wrap rule took that rule's later sightings as contradictions."""
    memory = Memory(tmp_path, database=database)
    try:
        _held(memory)
        memory.learn_held("free-gift-wrapping", agent=AGENT)
        memory.update("gift-wrap-over-100", agent=AGENT, rename="gift-wrap-100")  # keeps the old name as an alias
        with pytest.raises(UserError, match="rename: 'gift-wrap-over-100' is a name of concept 'gift-wrap-100'"):
            memory.update("free-gift-wrapping", agent=AGENT, rename="gift-wrap-over-100")
        assert memory.update("gift-wrap-100", agent=AGENT, rename="gift-wrap-over-100").name == \
            "gift-wrap-over-100"  # its own old name: allowed
    finally:
        memory.close()


def test_a_claim_a_person_dismissed_is_not_held_again(tmp_path: Path, database: str | None) -> None:
    """A newcomer's finding: after `dismiss`, the next session that proposed the same wording
    had it held again, and the rule it restates was served as disputed again."""
    memory = Memory(tmp_path, database=database)
    try:
        _held(memory)
        assert memory.dismiss_held("gift-wrap-over-100", agent=AGENT, actor="ana") == 1
        again = memory.propose(AGAIN, agent=AGENT, session_id="s3", messages=_said(AGAIN))
        assert again.results == [("free-gift-wrapping", "possible_duplicate")]
        assert "already settled this claim against gift-wrap-over-100" in " ".join(again.why)
        assert memory.held_claims(agent=AGENT) == [] and memory.conflicts(agent=AGENT) == []
        settled = memory.store().possible_duplicates(AGENT, "gift-wrap-over-100", status="resolved")
        assert sorted(h.session_id for h in settled) == ["s2", "s3"]  # recorded, for the audit
        # another wording is a claim no person has seen: held as before
        other = {**AGAIN, "name": "wrap-for-free", "body": "Gift wrap is free for orders over $100 (one per order)."}
        assert memory.propose(other, agent=AGENT, session_id="s4", messages=_said(other)).results == \
            [("wrap-for-free", "possible_duplicate")]
        assert [h.name for h in memory.held_claims(agent=AGENT)] == ["wrap-for-free"]
    finally:
        memory.close()
