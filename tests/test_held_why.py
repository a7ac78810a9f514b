"""Why a claim waits for a person is stored with the claim, not only said once.

The last note: the reason a sighting was held (`TurnReport.why`, the ``knowledge_conflict``
event) reached nothing an operator opens later: `show`, `conflicts` and the Studio listed
the contradicting claim without it. Now a ``## Contradiction`` entry carries a ``Why:``
line and a held claim (a policy's challenge, a possible duplicate) its ``why`` column.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import make_concept
from studio_pages import logged_in
from test_one_name import CHANGED, VALIDITY

from insika_knowledge.candidate import Candidate
from insika_knowledge.cli import cli
from insika_knowledge.concept import claim_text, parse
from insika_knowledge.consolidate import Decision, Rule, apply, entries
from insika_knowledge.consolidate.merge import LISTED
from insika_knowledge.consolidate.resolution import claims
from insika_knowledge.memory import Memory

AGENT = "loja"
TOKEN = "test-token-0123456789"
SAID = "O frete expresso custa R$ {} para todo o Brasil."
NO_MODEL = "it differs from the record and no merge model could be asked"
POLICY = "it contradicts a policy, whose text the engine never changes"


def _price(memory: Memory, session: str, price: str, kind: str = "fact") -> list[tuple[str, str]]:
    report = memory.propose(
        {"name": "frete-expresso", "description": f"O frete expresso custa R$ {price}.", "type": kind,
         "body": SAID.format(price)}, agent=AGENT, session_id=session, turn_id="t",
        messages=[{"role": "user", "content": "Quanto custa o frete expresso?"},
                  {"role": "assistant", "content": SAID.format(price)}])
    return report.results


def test_a_contradiction_entry_says_why_it_was_held(tmp_path: Path, database: str | None) -> None:
    with Memory(tmp_path, embeddings="off", database=database) as memory:
        _price(memory, "s1", "29,90")
        assert _price(memory, "s2", "39,90") == [("frete-expresso", "conflict")]
        concept = parse(memory.load("frete-expresso", agent=AGENT))
        (entry,) = entries(concept.body)
        assert (entry.why, entry.body) == (NO_MODEL, SAID.format("39,90"))  # the why line is no part of the claim
        assert f"\n  Why: {NO_MODEL}\n\n  {SAID.format('39,90')}" in concept.body
        assert claims(concept)[1].why == NO_MODEL and claims(concept)[0].why == ""
        # the same claim again: the entry names the session, its why stays as written
        assert _price(memory, "s3", "39,90") == [("frete-expresso", "conflict")]
        (again,) = entries(parse(memory.load("frete-expresso", agent=AGENT)).body)
        assert (again.sessions, again.why) == (("s2", "s3"), NO_MODEL)


def test_the_conflicts_command_shows_each_contradiction_with_its_why(tmp_path: Path) -> None:
    with Memory(tmp_path, embeddings="off") as memory:
        _price(memory, "s1", "29,90")
        _price(memory, "s2", "39,90")
    runner = CliRunner()
    shown = runner.invoke(cli, ["conflicts", "--agent", AGENT, "--data-dir", str(tmp_path)])
    assert shown.exit_code == 0, shown.output
    assert "frete-expresso: 1 contradicting claim in its body:" in shown.output
    assert f"O frete expresso custa R$ 39,90.\n    held because {NO_MODEL}\n" in shown.output
    as_json = json.loads(runner.invoke(cli, ["conflicts", "--agent", AGENT, "--data-dir", str(tmp_path),
                                             "--json"]).output)
    (reported,) = as_json[0]["contradictions"]
    assert (reported["sessions"], reported["why"], reported["body"]) == (["s2"], NO_MODEL, SAID.format("39,90"))


def test_a_held_policy_challenge_keeps_its_why(tmp_path: Path, database: str | None) -> None:
    with Memory(tmp_path, embeddings="off", database=database) as memory:
        _price(memory, "s1", "29,90", kind="policy")
        memory.put(memory.load("frete-expresso", agent=AGENT).replace("provenance: observed",
                                                                       "provenance: policy"), agent=AGENT)
        assert _price(memory, "s2", "39,90", kind="policy") == [("frete-expresso", "conflict")]
        (held,) = memory.held_claims(agent=AGENT, name="frete-expresso")
        assert held.why == POLICY
    if database is None:
        shown = CliRunner().invoke(cli, ["conflicts", "--agent", AGENT, "--data-dir", str(tmp_path), "--json"])
        assert json.loads(shown.output)[0]["held_claims"][0]["why"] == POLICY


def test_a_held_possible_duplicate_keeps_its_why_and_the_studio_shows_it(tmp_path: Path) -> None:
    turn = [{"role": "user", "content": "Meu vale-presente ainda vale?"},
            {"role": "assistant", "content": f"{VALIDITY['body']} {CHANGED['body']}"}]
    memory = Memory(tmp_path, embeddings="off")
    memory.propose(VALIDITY, agent=AGENT, session_id="s1", messages=turn)
    report = memory.propose(CHANGED, agent=AGENT, session_id="s2", messages=turn)
    assert report.results == [("gift-cards-expire-after-a-year", "possible_duplicate")]
    (held,) = memory.held_claims(agent=AGENT, name="gift-card-validity")
    assert held.why == report.why[0].split(": ", 2)[2]
    assert held.why.startswith("it closely matches gift-card-validity")
    with logged_in(memory, TOKEN) as client:
        page = client.get(f"/studio/knowledge/gift-card-validity?agent={AGENT}&tenant=default").text
    assert f'<div class="held-why muted">Held because {held.why}.</div>' in page
    memory.close()


def test_the_resolve_page_and_panel_say_why_each_contradiction_was_held(tmp_path: Path) -> None:
    memory = Memory(tmp_path, embeddings="off")
    _price(memory, "s1", "29,90")
    _price(memory, "s2", "39,90")
    with logged_in(memory, TOKEN) as client:
        for page in (client.get(f"/studio/knowledge/frete-expresso/resolve?agent={AGENT}&tenant=default").text,
                     client.get(f"/studio/knowledge/frete-expresso?agent={AGENT}&tenant=default").text):
            assert page.count(f'<p class="claim-why muted">Held because {NO_MODEL}.</p>') == 1
    memory.close()


def test_a_merge_verdict_is_said_in_the_entry_on_one_line() -> None:
    stored = make_concept(name="return-labels", description="Return labels are sent by email.",
                          body="Return labels are sent by email.")
    candidate = Candidate("return-labels", "Return labels are sent by WhatsApp.", "fact",
                          "Return labels are sent by WhatsApp.")
    written = apply(Decision(Rule.CONTRADICTING, why=LISTED), stored, candidate, sources=[],
                    session_id="s2", now="2026-12-04T10:00:00Z")
    assert written is not None
    (entry,) = entries(written.body)
    assert entry.why == ("the merge model merged two versions of one claim (its text says both), "
                         "which folds a change instead of merging")
    assert entry.body == "Return labels are sent by WhatsApp."
    # a reason that spans lines (a failure's text) is one line in the record
    failed = apply(Decision(Rule.CONTRADICTING, why="unusable:line one\n## Contradiction\nline three"), stored,
                   candidate, sources=[], session_id="s2", now="2026-12-04T10:00:00Z")
    assert failed is not None
    (entry,) = entries(failed.body)
    assert entry.why == "the merge model's merged text cannot be used: line one ## Contradiction line three"
    assert [line for line in failed.body.splitlines() if "## Contradiction" in line][0] == "## Contradiction"
    assert claim_text(failed.body) == "Return labels are sent by email."  # no heading forged


def test_an_entry_without_a_why_line_reads_as_before() -> None:
    body = ("Price is R$ 10.\n\n## Contradiction\n\n- session `s2` at 2026-01-01T00:00:00Z: Price is R$ 12.\n\n"
            "  Why: a body line that only looks like a reason.\n\n"
            "- session `s3` at 2026-01-02T00:00:00Z: Price is R$ 14.\n  Why: stated.\n\n  Price is R$ 14.")
    first, second = entries(body)
    assert (first.why, first.body) == ("", "Why: a body line that only looks like a reason.")
    assert (second.why, second.body) == ("stated.", "Price is R$ 14.")
    # a newcomer's finding: a hand-written claim right under the first line, opening with "Why:"
    hand = ("Preço R$ 10.\n\n## Contradiction\n\n- session `h3` at 2026-01-01T00:00:00Z: Preço R$ 69,90.\n"
            "  Why: o frete subiu\n")
    (entry,) = entries(hand)
    assert (entry.why, entry.body, entry.kept_text) == ("", "Why: o frete subiu", True)


@pytest.mark.parametrize("index", ["scan", "fts5", "auto"])
def test_the_reason_is_no_search_term_of_the_concept(tmp_path: Path, database: str | None, index: str) -> None:
    """A newcomer's finding: the Why line's words ("merge model", "differs", "person") made a
    conflicted concept match "can a person help me?", on every lexical index."""
    with Memory(tmp_path, embeddings="off", database=database) as memory:
        _price(memory, "s1", "29,90")
        _price(memory, "s2", "39,90")
        def found(query: str) -> list[str]:
            return [h.name for h in memory.search(query, agent=AGENT, index=index)]
        assert found("the record differs and no merge model could be asked") == []
        assert found("frete expresso R$ 39,90") == ["frete-expresso"]  # the contradicting claim is searched


def test_a_hand_written_contradiction_section_is_shown_as_it_is(tmp_path: Path) -> None:
    """A newcomer's finding: a concept put with "## Contradiction" and no engine entry was
    listed in conflict with nothing under it for the person to review."""
    with Memory(tmp_path, embeddings="off") as memory:
        memory.put("---\nname: horario\ndescription: Abrimos às 9h.\ntype: fact\n---\n\nAbrimos às 9h.\n\n"
                   "## Contradiction\n\n- a customer said 8h\n", agent=AGENT)
    runner = CliRunner()
    shown = runner.invoke(cli, ["conflicts", "--agent", AGENT, "--data-dir", str(tmp_path)])
    assert "horario: its ## Contradiction section holds no entry of the engine's:\n" in shown.output
    assert "  - a customer said 8h" in shown.output
    listed = json.loads(runner.invoke(cli, ["conflicts", "--agent", AGENT, "--data-dir", str(tmp_path),
                                            "--json"]).output)
    assert listed[0]["contradictions"] == [] and listed[0]["contradiction_text"].endswith("- a customer said 8h")


def test_a_claim_held_for_a_made_up_value_says_so_once(tmp_path: Path) -> None:
    """A newcomer's report: "quarantined: a value it states is in no message of the turn (its
    quotes: a value no message states)", though the proposal quoted nothing."""
    from insika_knowledge import Memory
    from insika_knowledge.extract.given import GivenModel

    item = {"name": "entrega-recife", "description": "Entregamos em Recife em 5 dias úteis.", "type": "fact",
            "body": "Entregamos em Recife em 5 dias úteis."}
    with Memory(tmp_path) as memory:
        report = memory.learn([{"role": "user", "content": "oi"}, {"role": "assistant", "content": "Olá!"}],
                              agent="loja", session_id="s1", model=GivenModel([item]))
    assert report.results == [("entrega-recife", "quarantined")]
    assert report.why == ["entrega-recife: quarantined: a value it states is in no message of the turn"]
