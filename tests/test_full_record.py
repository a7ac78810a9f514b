"""A record at its size bound still keeps every contradicting claim, once.

The last session's note named it the most severe fault left: once a concept's body
reached `BODY_MAX`, a later contradicting claim was reported as a conflict but its text
was kept nowhere (no entry, no held claim), and every repeat of a contradicting claim
appended another identical entry, so about 150 sightings of one claim filled the record.
Now each distinct claim is one entry naming its sessions, and a claim the record has no
room for is held for review next to the concept (`Memory.held_claims`).
"""

from __future__ import annotations

from pathlib import Path

from insika_knowledge.concept import BODY_MAX, Concept
from insika_knowledge.memory import Memory

SAID = [{"role": "assistant", "content": "Customers get a first response within 2 hours."}]
CLAIM = {"name": "sla-resposta", "description": "The support SLA is 2 hours.", "type": "fact",
         "body": "Customers get a first response within 2 hours."}


def _record(body: str) -> str:
    return (f"---\nname: sla-resposta\ndescription: The support SLA is 4 hours.\ntype: fact\n"
            f"provenance: observed\nconfidence: 0.6\n---\n\n{body}\n")


def _current(memory: Memory) -> Concept:
    stored = memory.store().get("loja", "sla-resposta")
    assert stored is not None
    return stored.concept


def _full_body() -> str:
    first = "Customers get a first response within 4 hours."
    filler = "\n\n" + "Details of the support desk follow here. " * (BODY_MAX // 40)
    return (first + filler)[: BODY_MAX - 40].rstrip()


def test_a_claim_the_full_record_has_no_room_for_is_held_with_its_text(tmp_path: Path,
                                                                       database: str | None) -> None:
    memory = Memory(tmp_path, database=database)
    memory.put(_record(_full_body()), agent="loja")
    report = memory.propose(CLAIM, agent="loja", session_id="s1", messages=SAID)
    assert report.results == [("sla-resposta", "conflict")]
    concept = _current(memory)
    assert concept.in_conflict and len(concept.body) <= BODY_MAX
    assert "within 2 hours" not in concept.body  # no room in the record ...
    (held,) = memory.held_claims(agent="loja", name="sla-resposta")  # ... so it is held
    assert (held.session_id, held.description, held.body) == ("s1", CLAIM["description"], CLAIM["body"])
    assert [c.name for c in memory.conflicts(agent="loja")] == ["sla-resposta"]
    noted = _current(memory).body
    shouted = {**CLAIM, "description": CLAIM["description"].upper(), "body": CLAIM["body"].replace(" ", "  ")}
    for n in range(2, 6):  # the same claim again: held once, the ledger counts each sighting
        memory.propose(CLAIM if n % 2 else shouted, agent="loja", session_id=f"s{n}", messages=SAID)
    assert len(memory.held_claims(agent="loja", name="sla-resposta")) == 1
    assert _current(memory).body == noted  # and no second note that it had no room
    other = {**CLAIM, "description": "The support SLA is 3 hours.",
             "body": "Customers get a first response within 3 hours."}
    memory.propose(other, agent="loja", session_id="s9",
                   messages=[{"role": "assistant", "content": other["body"]}])
    assert [h.body for h in memory.held_claims(agent="loja", name="sla-resposta")] == [
        CLAIM["body"], other["body"]]
    memory.close()


def test_a_repeated_contradiction_is_one_entry_and_writes_no_new_versions(tmp_path: Path,
                                                                          database: str | None) -> None:
    memory = Memory(tmp_path, database=database)
    memory.put(_record("Customers get a first response within 4 hours."), agent="loja")
    for n in range(1, 201):
        assert memory.propose(CLAIM, agent="loja", session_id=f"s{n}", messages=SAID).results == [
            ("sla-resposta", "conflict")]
    concept = _current(memory)
    entries = [line for line in concept.body.split("\n") if line.startswith("- session ")]
    assert len(entries) == 1 and entries[0].startswith(
        "- session `s1` at ") and " (also `s2`, `s3`, `s4`, `s5`): The support SLA is 2 hours." in entries[0]
    # versions: the put, the first contradiction, and the four sessions named; no more
    assert len(memory.history("sla-resposta", agent="loja")) == 6
    assert memory.held_claims(agent="loja", name="sla-resposta") == []  # its text is in the record
    ledger = memory.store().sightings("loja", "sla-resposta")
    assert sum(s.outcome == "conflict" for s in ledger) == 200
    memory.close()


def test_a_repeated_policy_challenge_is_held_once_until_dismissed(tmp_path: Path,
                                                                  database: str | None) -> None:
    memory = Memory(tmp_path, database=database)
    memory.put(_record("Customers get a first response within 4 hours.").replace(
        "type: fact\nprovenance: observed\nconfidence: 0.6", "type: policy\nprovenance: policy\nconfidence: 0.9"),
        agent="loja")
    for n in range(1, 4):
        memory.propose(CLAIM, agent="loja", session_id=f"s{n}", messages=SAID)
    assert [h.session_id for h in memory.held_claims(agent="loja", name="sla-resposta")] == ["s1"]
    assert memory.dismiss_held("sla-resposta", agent="loja") == 1
    memory.propose(CLAIM, agent="loja", session_id="s4", messages=SAID)  # challenged again: held again
    assert [h.session_id for h in memory.held_claims(agent="loja", name="sla-resposta")] == ["s4"]
    memory.close()


def test_a_rename_to_the_name_a_held_claim_was_proposed_under_keeps_both_claims(
        tmp_path: Path, database: str | None) -> None:
    # Found by an attack: the held claim moved onto the possible duplicate's key, and the
    # rename failed with the database's own UNIQUE error.
    memory = Memory(tmp_path, database=database)
    memory.put(_record(_full_body()), agent="loja")
    memory.propose(CLAIM, agent="loja", session_id="s1", turn_id="t1", messages=SAID)  # held: no room
    close = {**CLAIM, "name": "sla-policy", "description": "The support SLA is 4 hours for first response.",
             "body": "Customers get a first response within 4 hours, on weekdays only."}
    memory.propose(close, agent="loja", session_id="s1", turn_id="t1",
                   messages=[{"role": "assistant", "content": close["body"]}])
    before = {(h.name, h.body) for h in memory.held_claims(agent="loja", name="sla-resposta")}
    assert {n for n, _ in before} == {"sla-resposta", "sla-policy"}  # held: no room; a close match
    renamed = memory.update("sla-resposta", agent="loja", rename="sla-policy")
    assert renamed.name == "sla-policy"
    after = memory.held_claims(agent="loja", name="sla-policy")
    assert {h.body for h in after} == {b for _, b in before} and len(after) == len(before)
    memory.close()


def _policy(body: str) -> str:
    return _record(body).replace("type: fact\nprovenance: observed\nconfidence: 0.6",
                                 "type: policy\nprovenance: policy\nconfidence: 0.9")


def test_a_restore_after_a_delete_reopens_the_claims_the_delete_closed(tmp_path: Path,
                                                                      database: str | None) -> None:
    """A delete closes the claims held against a concept (a new concept of its name starts
    clear); restoring the deleted concept opens them again, as its quarantine is held again.
    A claim a person had dismissed before the delete stays closed."""
    memory = Memory(tmp_path, database=database)
    memory.put(_policy("Customers get a first response within 4 hours."), agent="loja")
    memory.propose(CLAIM, agent="loja", session_id="s1", messages=SAID)
    assert memory.dismiss_held("sla-resposta", agent="loja") == 1  # a person decided: stays closed
    other = {**CLAIM, "description": "The support SLA is 3 hours.",
             "body": "Customers get a first response within 3 hours."}
    memory.propose(other, agent="loja", session_id="s2", messages=[{"role": "assistant", "content": other["body"]}])
    assert [h.session_id for h in memory.held_claims(agent="loja", name="sla-resposta")] == ["s2"]
    live = memory.history("sla-resposta", agent="loja")[-1].version
    memory.delete("sla-resposta", agent="loja")
    assert memory.held_claims(agent="loja", name="sla-resposta") == []
    assert memory.conflicts(agent="loja") == []
    memory.restore("sla-resposta", live, agent="loja")
    assert [h.session_id for h in memory.held_claims(agent="loja", name="sla-resposta")] == ["s2"]
    assert [c.name for c in memory.conflicts(agent="loja")] == ["sla-resposta"]
    # deleted again, a new concept takes the name (it starts clear), then the old one is restored
    memory.delete("sla-resposta", agent="loja")
    memory.put(_policy("Customers get a first response within 8 hours."), agent="loja")
    assert memory.held_claims(agent="loja", name="sla-resposta") == []
    memory.restore("sla-resposta", live, agent="loja")
    assert [h.session_id for h in memory.held_claims(agent="loja", name="sla-resposta")] == ["s2"]
    memory.close()


def test_restoring_the_delete_version_itself_reopens_the_claims(tmp_path: Path, database: str | None) -> None:
    """A newcomer's report: `history` lists the delete row last, and restoring it (its
    record is the last live one) brought the concept back with its claims still closed."""
    memory = Memory(tmp_path, database=database)
    memory.put(_policy("Customers get a first response within 4 hours."), agent="loja")
    memory.propose(CLAIM, agent="loja", session_id="s1", messages=SAID)
    deleted = memory.delete("sla-resposta", agent="loja")
    memory.restore("sla-resposta", deleted.version, agent="loja")
    assert [h.session_id for h in memory.held_claims(agent="loja", name="sla-resposta")] == ["s1"]
    memory.close()
