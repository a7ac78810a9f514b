"""One idea, one name: the prompt lists known concepts, and a new name is checked first.

Through the real write path: the fake OpenAI server for what the prompt carries, and
backfill with a replay file for aliases and possible duplicates.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from conftest import looked_up, make_concept
from fakellm import FakeLLM

from insika_knowledge import consolidate
from insika_knowledge.backfill import backfill
from insika_knowledge.candidate import Candidate
from insika_knowledge.config import load_config
from insika_knowledge.consolidate import NameRule, name_sighting
from insika_knowledge.errors import ConfigError, NotFound
from insika_knowledge.events import Recorder
from insika_knowledge.extract.model import InstructorModel
from insika_knowledge.learn import learn_turn, relevant_concepts, sight, sight_once
from insika_knowledge.memory import Memory
from insika_knowledge.store import SQLiteStore

AGENT = "loja"
VALIDITY = {"name": "gift-card-validity", "type": "policy",
            "description": "Gift cards are valid for 12 months from purchase.",
            "body": "A gift card can be used for 12 months from the purchase date; after that "
                    "the balance expires and cannot be refunded or extended by the agent."}
#: The same claim, reworded (order, case, plural, number in words), under another name.
RESTATED = {**VALIDITY, "name": "validade-vale-presente",
            "description": "Gift cards are valid for twelve months from purchase.",
            "body": "For 12 months from the purchase date a gift card can be used; after that "
                    "the balance expires and cannot be refunded or extended by the agent!"}
#: A close match that is not the same claim (a changed number), under a third name.
CHANGED = {**VALIDITY, "name": "gift-cards-expire-after-a-year",
           "description": "Gift cards are valid for 24 months from purchase.",
           "body": "A gift card can be used for 24 months from the purchase date; after that "
                   "the balance expires and cannot be refunded or extended by the agent."}
UNRELATED = {"name": "pix-discount", "type": "policy", "description": "Pix payments get 5% off.",
             "body": "Paying with Pix gives a 5% discount at checkout."}


def _session(session_id: str, answer: list[dict[str, str]]) -> dict[str, Any]:
    return {"session_id": session_id, "source": "test", "outcome": None,
            "messages": [{"role": "user", "content": "Gift card question"},
                         *looked_up(*(f"{c['description']} {c['body']}" for c in answer))]}


def _backfill(tmp_path: Path, answers: dict[str, list[dict[str, str]]],
              database: str | None = None) -> tuple[Memory, Recorder]:
    sessions = tmp_path / "sessions.jsonl"
    sessions.write_text("".join(json.dumps(_session(s, a)) + "\n" for s, a in answers.items()), encoding="utf-8")
    replay = tmp_path / "replay.json"
    replay.write_text(json.dumps({"extract": answers, "consolidate": {}}), encoding="utf-8")
    memory = Memory(tmp_path / "data", database=database)  # None: SQLite files
    recorder = Recorder()
    memory.events.subscribe(recorder)
    summary = backfill(memory, AGENT, load_config({"model": f"replay:{replay}"}), sessions)
    assert all(s.status in ("done", "skipped") for s in summary.statuses), summary.statuses
    return memory, recorder


# ----------------------------------------------------------------------------- the prompt


TURN = [{"role": "user", "content": "Meu vale-presente (gift card) ainda vale? Comprei há 10 meses."},
        *looked_up(*(f"{c['description']} {c['body']}" for c in (VALIDITY, CHANGED, UNRELATED)))]


def _learn(store: SQLiteStore, fake: FakeLLM, session: str, config: dict[str, Any] | None = None):  # noqa: ANN202
    model = InstructorModel("openai/fake-model", base_url=fake.base_url, api_key="k", timeout_s=5.0)
    return learn_turn(store, AGENT, load_config(config or {}), model, session_id=session,
                      turn_id="t", messages=TURN)


def test_the_prompt_lists_the_relevant_concepts_on_record_and_asks_to_reuse_their_names(store) -> None:
    with FakeLLM([json.dumps([VALIDITY, UNRELATED]), "[]", "[]"]) as fake:
        _learn(store, fake, "s1")
        _learn(store, fake, "s2")
        _learn(store, fake, "s3", {"known_concepts": 0})
        first, second, off = (r["messages"] for r in fake.requests)
    assert "Concepts already on record" not in first[1]["content"]  # nothing on record yet
    assert "Concepts already on record" not in first[0]["content"]
    system, user = second[0]["content"], second[1]["content"]
    assert 'use the listed "name" exactly' in system
    listed = json.loads(user.split("Concepts already on record (JSON):\n\n", 1)[1])
    assert listed[0] == {"name": "gift-card-validity", "description": VALIDITY["description"]}
    assert "Concepts already on record" not in off[1]["content"]  # known_concepts: 0


def test_relevant_concepts_are_searched_through_the_index_best_first_and_capped(store) -> None:
    for i in range(30):
        sight(store, AGENT, Candidate(f"fact-{i:02d}", f"Fact {i} about shipping to region {i}.",
                                      "fact", f"Region {i} ships in {i} days."), session_id="s", turn_id="t")
    sight(store, AGENT, Candidate(VALIDITY["name"], VALIDITY["description"], "policy", VALIDITY["body"]),
          session_id="s", turn_id="t")
    found = relevant_concepts(consolidate_index(store), AGENT, TURN + [{"role": "user", "content": "shipping"}], 20)
    assert found[0][0] == "gift-card-validity"
    assert len(found) == 20
    assert relevant_concepts(consolidate_index(store), AGENT, TURN, 0) == ()


def consolidate_index(store: SQLiteStore):  # noqa: ANN201
    from insika_knowledge.index.scan import ScanIndex

    return ScanIndex(store)


def test_known_concepts_is_a_checked_config_key() -> None:
    assert load_config({}).known_concepts == 20
    assert load_config({"known_concepts": 5}).known_concepts == 5
    with pytest.raises(ConfigError, match="known_concepts"):
        load_config({"known_concepts": 101})


# ----------------------------------------------------------------------------- aliases


def test_the_same_claim_under_a_new_name_is_recorded_under_the_existing_name(
    tmp_path: Path, database: str | None,
) -> None:
    memory, recorder = _backfill(tmp_path, {"s1": [VALIDITY], "s2": [RESTATED], "s3": [RESTATED]}, database)
    try:
        store = memory.store()
        assert store.names(AGENT) == ["gift-card-validity"]  # no second concept
        concept = store.get(AGENT, "gift-card-validity").concept
        assert (concept.occurrences, concept.sources, concept.body) == (3, ("s1", "s2", "s3"), VALIDITY["body"])
        assert [(a.alias, a.session_id) for a in store.aliases(AGENT, "gift-card-validity")] == \
            [("validade-vale-presente", "s2")]
        assert recorder.named("knowledge_aliased") == [
            {"name": "gift-card-validity", "alias": "validade-vale-presente", "agent": AGENT,
             "outcome": "confirmed"}] * 2
        versions = [v.reason for v in store.versions(AGENT, "gift-card-validity")]
        assert versions == ["confirm", "confirm", "extract"]
    finally:
        memory.close()


def test_a_replayed_turn_under_an_alias_changes_nothing(
    tmp_path: Path, database: str | None,
) -> None:
    memory, _ = _backfill(tmp_path, {"s1": [VALIDITY], "s2": [RESTATED]}, database)
    try:
        store = memory.store()
        before = store.get(AGENT, "gift-card-validity")
        candidate = Candidate(RESTATED["name"], RESTATED["description"], "policy", RESTATED["body"])
        from insika_knowledge.learn import record

        assert record(store, AGENT, candidate, session_id="s2", turn_id="session") == \
            ("gift-card-validity", "replayed")
        assert store.get(AGENT, "gift-card-validity") == before
    finally:
        memory.close()


def test_a_different_claim_under_a_known_alias_goes_to_the_aliased_concept(
    tmp_path: Path, database: str | None,
) -> None:
    other = {**CHANGED, "name": RESTATED["name"]}  # the alias again, now with 24 months
    memory, recorder = _backfill(tmp_path, {"s1": [VALIDITY], "s2": [RESTATED], "s3": [other]}, database)
    try:
        store = memory.store()
        assert store.names(AGENT) == ["gift-card-validity"]
        concept = store.get(AGENT, "gift-card-validity").concept
        assert concept.in_conflict and "24 months" in concept.body  # kept, and visible
        assert recorder.named("knowledge_conflict") == [{
            "name": "gift-card-validity", "agent": AGENT,
            "why": "the merge model failed (model_empty)"}]
    finally:
        memory.close()


# ----------------------------------------------------------------------------- possible duplicates


def test_a_close_match_that_is_not_the_same_claim_is_held_as_a_possible_duplicate(
    tmp_path: Path, database: str | None,
) -> None:
    memory, recorder = _backfill(tmp_path, {"s1": [VALIDITY], "s2": [CHANGED], "s3": [UNRELATED]}, database)
    try:
        store = memory.store()
        assert store.names(AGENT) == ["gift-card-validity", "pix-discount"]  # nothing merged or added
        concept = store.get(AGENT, "gift-card-validity")
        assert concept.version == 1 and concept.concept.body == VALIDITY["body"]
        [held] = store.possible_duplicates(AGENT, "gift-card-validity")
        assert (held.name, held.session_id, held.body, held.status) == \
            ("gift-cards-expire-after-a-year", "s2", CHANGED["body"], "open")
        assert held.similarity == 1.0  # the same words: only the number changed
        assert store.challenged_names(AGENT) == ["gift-card-validity"]
        assert recorder.named("knowledge_possible_duplicate") == [
            {"name": "gift-cards-expire-after-a-year", "duplicate_of": "gift-card-validity", "agent": AGENT,
             "why": "it closely matches gift-card-validity (overlap 1.00) but states other values: "
                    "24 months here, 12 months on record"}]
        assert not recorder.named("knowledge_aliased")
        from insika_knowledge.learn import record

        candidate = Candidate(CHANGED["name"], CHANGED["description"], "policy", CHANGED["body"])
        assert record(store, AGENT, candidate, session_id="s2", turn_id="session") == \
            ("gift-cards-expire-after-a-year", "replayed")
        assert len(store.possible_duplicates(AGENT)) == 1
    finally:
        memory.close()


def test_an_operator_rename_takes_the_aliases_and_possible_duplicates_along(
    tmp_path: Path, database: str | None,
) -> None:
    memory, _ = _backfill(tmp_path, {"s1": [VALIDITY], "s2": [RESTATED], "s3": [CHANGED]}, database)
    try:
        store = memory.store()
        current = store.get(AGENT, "gift-card-validity")
        renamed = current.markdown.replace("name: gift-card-validity", "name: vale-presente-validade")
        store.edit(AGENT, "gift-card-validity", renamed, expected_version=current.version, actor="op")
        assert sorted(a.alias for a in store.aliases(AGENT, "vale-presente-validade")) == \
            ["gift-card-validity", "validade-vale-presente"]  # the old name is kept as one
        assert [d.name for d in store.possible_duplicates(AGENT, "vale-presente-validade")] == \
            ["gift-cards-expire-after-a-year"]
        assert store.alias_of(AGENT, "validade-vale-presente") == "vale-presente-validade"
    finally:
        memory.close()


def test_a_sighting_under_an_alias_is_never_written_unless_it_is_the_same_claim(store) -> None:
    sight(store, AGENT, Candidate(VALIDITY["name"], VALIDITY["description"], "policy", VALIDITY["body"]),
          session_id="s1", turn_id="t")
    changed = Candidate(VALIDITY["name"], CHANGED["description"], "policy", CHANGED["body"])
    before = store.get(AGENT, VALIDITY["name"])
    assert sight_once(store, AGENT, changed, "s2", "t", None, None, alias=CHANGED["name"]) is None
    assert store.get(AGENT, VALIDITY["name"]) == before
    assert store.aliases(AGENT, VALIDITY["name"]) == []
    assert [s[:3] for s in store.sightings(AGENT, VALIDITY["name"])] == [("s1", "t", "extract")]


# ----------------------------------------------------------------------------- the pure rule


def _concept(item: dict[str, str]):  # noqa: ANN202
    return make_concept(name=item["name"], description=item["description"], body=item["body"])


def _cand(item: dict[str, str]) -> Candidate:
    return Candidate(item["name"], item["description"], item["type"], item["body"])


def test_name_sighting_rules_in_order() -> None:
    on_record = _concept(VALIDITY)
    assert name_sighting(_cand(VALIDITY), known=True).rule is NameRule.KNOWN
    aliased = name_sighting(_cand(RESTATED), known=False, alias_of="gift-card-validity", matches=[on_record])
    assert (aliased.rule, aliased.name) == (NameRule.ALIASED, "gift-card-validity")
    same = name_sighting(_cand(RESTATED), known=False, matches=[_concept(UNRELATED), on_record])
    assert (same.rule, same.name, same.alias) == (NameRule.SAME_CLAIM, "gift-card-validity", True)
    close = name_sighting(_cand(CHANGED), known=False, matches=[on_record])
    assert (close.rule, close.name, close.alias) == (NameRule.POSSIBLE_DUPLICATE, "gift-card-validity", False)
    assert close.similarity >= consolidate.CLOSE_MATCH
    new = name_sighting(_cand(UNRELATED), known=False, matches=[on_record])
    assert (new.rule, new.name) == (NameRule.NEW, "pix-discount")
    assert name_sighting(_cand(UNRELATED), known=False).rule is NameRule.NEW


def test_short_texts_that_share_few_terms_are_never_held() -> None:
    a = make_concept(name="a", description="Bag fee rule.", body="Fine body.")
    b = Candidate("b", "Seat map notes.", "fact", "After body.")
    assert name_sighting(b, known=False, matches=[a]).rule is NameRule.NEW


@pytest.mark.parametrize(("old", "new"), [
    (("Return shipping costs R$ 15.", "Return shipping costs R$ 15 per order."),
     ("Return shipping costs R$ 20.", "Return shipping costs R$ 20 per order.")),
    (("Store hours.", "The store opens at 9 am."), ("Opening time.", "The store opens at 10 am.")),
    (("Frete grátis para a região Sul.", "Frete grátis para a região Sul."),
     ("Frete grátis para a região Nordeste.", "Frete grátis para a região Nordeste.")),
])
def test_a_short_rule_changed_under_a_drifting_name_is_held_not_learned_beside_it(
        old: tuple[str, str], new: tuple[str, str]) -> None:
    """Issue 26: a close match needed 6 shared terms, so a short rule (3-5 terms) changed
    under another name became a second live rule beside the old one."""
    on_record = make_concept(name="old-rule", description=old[0], body=old[1])
    naming = name_sighting(Candidate("drifted-rule", new[0], "policy", new[1]), known=False, matches=[on_record])
    assert (naming.rule, naming.name) == (NameRule.POSSIBLE_DUPLICATE, "old-rule")


@pytest.mark.parametrize(("old", "new", "why"), [
    (("Return shipping.", "Return shipping costs R$ 15 per order."),
     ("Return shipping.", "Return shipping costs R$ 20 per order."),
     "it closely matches old-rule (overlap 1.00) but states other values: R$ 20 here, R$ 15 on record"),
    (("Store hours.", "The store opens at 9 am on weekdays."), ("Store hours.", "The store opens at 9 am."),
     "it closely matches old-rule (overlap 0.67) but is not the same claim"),
    (("Gift cards.", "Gift cards are valid for 12 months."),
     ("Gift cards.", "Gift cards are valid for 12 months and 2% of the balance is kept."),
     "it closely matches old-rule (overlap 0.60) but states other values: 2% here"),
])
def test_a_held_possible_duplicate_says_why_and_which_values_differ(
        old: tuple[str, str], new: tuple[str, str], why: str) -> None:
    """The last note: a possible duplicate had no why line (a conflict and a quarantine had)."""
    on_record = make_concept(name="old-rule", description=old[0], body=old[1])
    naming = name_sighting(Candidate("drifted-rule", new[0], "policy", new[1]), known=False, matches=[on_record])
    assert (naming.rule, naming.why) == (NameRule.POSSIBLE_DUPLICATE, why)


@pytest.mark.parametrize(("old", "new", "differ"), [
    ("Refunds are issued within 48 hours.", "Refunds are issued within 2 days.", ""),
    ("Gift cards expire 12 months after purchase.", "Gift cards expire one year after purchase.", ""),
    ("The free trial lasts two weeks.", "The free trial lasts 14 days.", ""),
    ("Refunds are issued within 48 hours.", "Refunds are issued within 3 days.", "3 days here, 48h on record"),
    ("Gift cards expire 12 months after purchase.", "Gift cards expire 2 years after purchase.",
     "2 years here, 12 months on record"),
])
def test_a_duration_in_another_unit_it_fills_is_no_other_value(old: str, new: str, differ: str) -> None:
    """A newcomer's restatements under new names ("within 2 days" beside "within 48 hours")
    were held as stating other values, and the concept they restate was served as disputed."""
    from insika_knowledge.consolidate.naming import disputes

    on_record = make_concept(name="old-rule", description=old, body=old)
    assert consolidate.claims.values_differ(on_record, Candidate("new-rule", new, "policy", new)) == differ
    assert disputes(on_record, "new-rule", new, new) is bool(differ)


@pytest.mark.parametrize(("old", "new"), [
    ("Outlet installation costs $15 per outlet.", "Outlet installation costs $15 per visit."),
    ("Neutering a cat costs $180 and neutering a dog costs $250.",
     "It's $250 to neuter a cat and $180 to neuter a dog."),
    ("The buyer pays return shipping when they simply change their mind.",
     "The seller pays return shipping when the buyer simply changes their mind."),
    # a newcomer's: the store named as the payer was read as no payer at all
    ("A loja paga o frete de volta.", "O frete de volta fica por conta do cliente."),
])
def test_a_claim_held_under_another_name_that_places_a_part_otherwise_disputes_its_record(
        old: str, new: str) -> None:
    """Newcomers' contradicting pairs served as settled: another basis, a value with another
    subject, another party (`analysis.arrangement.rearranged`, read both ways)."""
    from insika_knowledge.consolidate.naming import disputes

    assert disputes(make_concept(name="old-rule", description=old, body=old), "new-rule", new, new)
    assert disputes(make_concept(name="old-rule", description=new, body=new), "new-rule", old, old)
    # and the why line a person reads says what moved (a newcomer: it named values only)
    why = name_sighting(Candidate("new-rule", new, "policy", new), known=False,
                        matches=[make_concept(name="old-rule", description=old, body=old)]).why
    assert why.endswith(("but a value is counted per, or from, another thing",
                         "but a value sits with another subject", "but another party does it")), why


@pytest.mark.parametrize(("values", "said"), [
    ({"m:5:day:business", "m:3:day:calendar"}, ("5 business days", "3 calendar days")),
    ({"m:10:hour", "m:12-17:hour"}, ("10h", "12-17h")),  # a time of day or a duration: the token does not tell
    ({"d:12-25", "d:12-24:2026", "d:wd6"}, ("Saturday", "25/12", "24/12/2026")),
    ({"m:100:brl", "m:20:brl", "m:3:brl"}, ("R$ 3", "R$ 20", "R$ 100")),  # by value, not as text
    ({f"m:{i}:usd" for i in range(10)}, ("$0", "$1", "$2", "$3", "$4", "$5", "and 4 more")),
])
def test_values_are_said_in_words_a_person_reads(values: set[str], said: tuple[str, ...]) -> None:
    """A newcomer's findings: "5 day:business", "a date", "17 hours" for 5 pm, a list of
    440 prices sorted as text."""
    from insika_knowledge.consolidate.claims import in_words

    assert in_words(frozenset(values)) == said


def test_a_neighbour_the_semantic_index_names_says_so_and_other_rules_say_nothing() -> None:
    on_record = _concept(VALIDITY)
    reworded = Candidate("cartao-presente", "Validade do cartão-presente", "policy",
                         "O cartão-presente vale por 24 meses depois da compra.")
    naming = name_sighting(reworded, known=False, matches=[], meaning=[(on_record, 0.912)])
    assert naming.why == ("it is close in meaning to gift-card-validity (similarity 0.91) but is not the "
                          "same claim; it states other values: 24 months here, 12 months on record")
    assert name_sighting(_cand(RESTATED), known=False, matches=[on_record]).why == ""
    assert name_sighting(_cand(UNRELATED), known=False, matches=[on_record]).why == ""


def test_the_report_and_the_event_say_why_a_sighting_was_held(tmp_path: Path) -> None:
    memory = Memory(tmp_path / "data")
    recorder = Recorder()
    memory.events.subscribe(recorder)
    try:
        memory.propose(VALIDITY, agent=AGENT, session_id="s1", messages=TURN[1:])
        report = memory.propose(CHANGED, agent=AGENT, session_id="s2", messages=TURN[1:])
        assert report.results == [("gift-cards-expire-after-a-year", "possible_duplicate")]
        why = ("it closely matches gift-card-validity (overlap 1.00) but states other values: "
               "24 months here, 12 months on record")
        assert report.why == [f"gift-cards-expire-after-a-year: possible_duplicate: {why}"]
        assert recorder.named("knowledge_possible_duplicate") == [
            {"name": "gift-cards-expire-after-a-year", "duplicate_of": "gift-card-validity", "agent": AGENT,
             "why": why}]
    finally:
        memory.close()


def test_the_backfill_summary_counts_the_held_possible_duplicates(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from insika_knowledge.cli import cli

    sessions = tmp_path / "sessions.jsonl"
    answers = {"s1": [VALIDITY], "s2": [CHANGED]}
    sessions.write_text("".join(json.dumps(_session(s, a)) + "\n" for s, a in answers.items()), encoding="utf-8")
    replay = tmp_path / "replay.json"
    replay.write_text(json.dumps({"extract": answers}), encoding="utf-8")
    result = CliRunner().invoke(cli, ["backfill", "--agent", AGENT, "--sessions", str(sessions),
                                      "--model", f"replay:{replay}", "--data-dir", str(tmp_path / "d"),
                                      "--quiet"])
    assert result.exit_code == 0, result.output
    assert result.output.strip().endswith("learned 1, confirmed 0, merged 0, conflicts 0, dropped 0, "
                                          "possible duplicates 1")


def test_a_claim_under_another_name_with_only_the_body_in_common_is_learned_not_confirmed(tmp_path: Path) -> None:
    """Two different things over one short body ("Ask staff.") stay two concepts, both searchable."""
    memory = Memory(tmp_path)
    said = [{"role": "assistant", "content": "Free wifi in the store, password on the receipt. Ask staff."}]
    first = memory.propose({"name": "wifi", "description": "Free wifi in the store, password on the receipt.",
                            "type": "fact", "body": "Ask staff."}, agent="a", session_id="s1", messages=said)
    second = memory.propose({"name": "toilets", "description": "Toilets are on the second floor.",
                             "type": "fact", "body": "Ask staff."}, agent="a", session_id="s2")
    assert (first.results, second.results) == ([("wifi", "learned")], [("toilets", "learned")])
    store = memory.store("default")
    assert store.get("a", "toilets") is not None
    assert store.get("a", "wifi").concept.sources == ("s1",)  # the second sighting is not counted for wifi
    assert [e.name for e in memory.retriever().retrieve("a", "where are the toilets", 5, "auto").matched][:1] == \
        ["toilets"]
    memory.close()


def test_a_rule_another_writer_creates_while_this_one_names_is_seen_at_the_write(
    store, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Two writers propose one rule under two new names at once: the one that writes second
    finds the other's concept in its write transaction and is held, as it would be one after
    the other (before, both were learned live)."""
    from insika_knowledge.learn import naming, record

    first = Candidate(VALIDITY["name"], VALIDITY["description"], "policy", VALIDITY["body"])
    second = Candidate(CHANGED["name"], CHANGED["description"], "policy", CHANGED["body"])
    real_name = naming._name
    interleaved = []

    def name_then_other_writer(*args: Any, **kwargs: Any) -> Any:
        decided = real_name(*args, **kwargs)
        if not interleaved:  # the other writer creates its concept after this one named
            interleaved.append(None)
            interleaved[0] = record(store, AGENT, first, session_id="s1", turn_id="t")
        return decided

    monkeypatch.setattr(naming, "_name", name_then_other_writer)
    assert record(store, AGENT, second, session_id="s2", turn_id="t") == \
        ("gift-cards-expire-after-a-year", "possible_duplicate")
    assert interleaved == [("gift-card-validity", "learned")]
    assert store.names(AGENT) == ["gift-card-validity"]
    [held] = store.possible_duplicates(AGENT)
    assert held.duplicate_of == "gift-card-validity"


def test_concurrent_writers_of_one_rule_under_new_names_leave_one_live_concept(
    tmp_path: Path, database: str | None,
) -> None:
    import threading

    bodies = [VALIDITY, RESTATED, CHANGED, {**CHANGED, "name": "vale-presente-24-meses"}]
    replay = tmp_path / "replay.json"
    replay.write_text(json.dumps({"extract": {f"s{i}": [b] for i, b in enumerate(bodies)}}), encoding="utf-8")
    for trial in range(3):
        memory = Memory(tmp_path / f"data-{trial}", database=database)
        barrier = threading.Barrier(len(bodies))

        def learn(i: int, memory: Memory = memory, barrier: threading.Barrier = barrier) -> None:
            barrier.wait()
            memory.learn([{"role": "user", "content": "Gift card question"},
                          *looked_up(*(f"{b['description']} {b['body']}" for b in bodies))], agent=AGENT,
                         session_id=f"s{i}", model=f"replay:{replay}")

        threads = [threading.Thread(target=learn, args=(i,)) for i in range(len(bodies))]
        try:
            [t.start() for t in threads]
            [t.join() for t in threads]
            assert len(memory.store().names(AGENT)) == 1, (trial, memory.store().names(AGENT))
        finally:
            memory.close()


def _said(text: str) -> list[dict[str, str]]:
    return [{"role": "user", "content": "Qual o horário?"}, {"role": "assistant", "content": text}]


def test_a_new_concept_under_a_deleted_name_counts_only_its_own_sessions(
        tmp_path: Path, database: str | None) -> None:
    from insika_knowledge.memory import Memory

    memory = Memory(tmp_path, database=database, embeddings="off")
    old = {"name": "horario-loja", "description": "A loja abre das 9h às 18h.", "type": "fact",
           "body": "A loja abre das 9h às 18h."}
    new = {**old, "description": "A loja abre das 10h às 22h.", "body": "A loja abre das 10h às 22h."}
    try:
        for session in ("a1", "a2", "a3", "a4"):
            memory.propose(old, agent=AGENT, session_id=session, messages=_said(old["body"]))
        memory.delete(agent=AGENT, name="horario-loja")
        for session in ("b1", "b2"):
            memory.propose(new, agent=AGENT, session_id=session, messages=_said(new["body"]))
        concept = memory.store().get(AGENT, "horario-loja").concept
        assert (concept.sources, concept.confidence) == (("b1", "b2"), 0.7)
    finally:
        memory.close()


def test_a_resolution_keeps_counting_only_the_kept_claims_sessions(tmp_path: Path, database: str | None) -> None:
    from insika_knowledge.consolidate import resolution as claims
    from insika_knowledge.memory import Memory

    memory = Memory(tmp_path, database=database, embeddings="off")
    old = {"name": "horario-loja", "description": "A loja abre às 9h.", "type": "fact", "body": "A loja abre às 9h."}
    new = {**old, "description": "A loja abre às 10h.", "body": "A loja abre às 10h."}
    try:
        for session in ("a1", "a2", "a3"):
            memory.propose(old, agent=AGENT, session_id=session, messages=_said(old["body"]))
        assert memory.propose(new, agent=AGENT, session_id="b1", messages=_said(new["body"])).results == \
            [("horario-loja", "conflict")]
        store = memory.store()
        version = store.get(AGENT, "horario-loja").version
        store.resolve(AGENT, "horario-loja", lambda c, ledger: claims.keep(c, "entry-1", ledger),
                      expected_version=version, actor="op")
        memory.propose(new, agent=AGENT, session_id="b2", messages=_said(new["body"]))
        concept = store.get(AGENT, "horario-loja").concept
        assert concept.body == "A loja abre às 10h."
        assert (concept.sources, concept.confidence) == (("b1", "b2"), 0.7)  # not a1-a3, whose claim lost
    finally:
        memory.close()


def test_a_renamed_concept_is_still_reached_by_its_old_name(tmp_path: Path, database: str | None) -> None:
    # Left from an attack: a [[link]] to a concept a person renamed dangled, and the model's
    # load_knowledge of the name it had read, or a later sighting under it, found nothing.
    memory = Memory(tmp_path, database=database)
    try:
        memory.put("---\nname: troca-presente\ndescription: Presentes podem ser trocados em 30 dias.\n"
                   "type: policy\n---\n\nPresentes podem ser trocados em 30 dias. Veja [[gift-card-validity]].\n",
                   agent=AGENT)
        memory.put(f"---\nname: gift-card-validity\ndescription: {VALIDITY['description']}\ntype: policy\n---\n\n"
                   f"{VALIDITY['body']}\n", agent=AGENT)
        store = memory.store()
        current = store.get(AGENT, "gift-card-validity")
        renamed = current.markdown.replace("name: gift-card-validity", "name: vale-presente-validade")
        store.edit(AGENT, "gift-card-validity", renamed, expected_version=current.version, actor="op")
        retriever = memory.retriever()
        found = retriever.retrieve(AGENT, "Presentes podem ser trocados?", 1, "scan", 0.0)
        assert [e.name for e in found.matched] == ["troca-presente"]
        assert [e.name for e in found.linked] == ["vale-presente-validade"]
        loaded = retriever.load_knowledge(AGENT, "gift-card-validity")
        assert loaded["name"] == "vale-presente-validade" and "12 months" in loaded["markdown"]
        assert "vale-presente-validade" in memory.load("gift-card-validity", agent=AGENT)
        report = memory.propose({"name": "gift-card-validity", "description": VALIDITY["description"],
                                 "type": "policy", "body": VALIDITY["body"]}, agent=AGENT, session_id="s9",
                                messages=[{"role": "assistant", "content": VALIDITY["body"]}])
        assert report.results == [("vale-presente-validade", "confirmed")]
        assert store.get(AGENT, "gift-card-validity") is None
        # a new concept given the old name is that concept: the name is its own again
        memory.put("---\nname: gift-card-validity\ndescription: Other.\ntype: fact\n---\n\nOther.\n", agent=AGENT)
        assert retriever.load_knowledge(AGENT, "gift-card-validity")["name"] == "gift-card-validity"
    finally:
        memory.close()


def test_an_old_name_follows_the_last_concept_renamed_from_it(tmp_path: Path, database: str | None) -> None:
    # found by a newcomer's attack: the first rename's alias stood for good, so a reused and
    # renamed name, or a deleted rename target's name taken again, led to the wrong concept
    memory = Memory(tmp_path, database=database)

    def put(name: str, text: str) -> None:
        memory.put(f"---\nname: {name}\ndescription: {text}\ntype: policy\n---\n\n{text}\n", agent=AGENT)

    def rename(old: str, new: str) -> None:
        current = store.get(AGENT, old)
        store.edit(AGENT, old, current.markdown.replace(f"name: {old}", f"name: {new}"),
                   expected_version=current.version, actor="op")

    try:
        store = memory.store()
        retriever = memory.retriever()
        put("politica", "Frete grátis acima de R$ 199.")
        rename("politica", "frete-gratis")
        put("politica", "Trocas em até 7 dias.")
        rename("politica", "trocas")
        assert retriever.load_knowledge(AGENT, "politica")["name"] == "trocas"
        # a deleted target takes its old names with it
        put("g1", "Cupom de 10% na primeira compra.")
        rename("g1", "g2")
        memory.delete("g2", agent=AGENT)
        put("g2", "Parcelamento em 10x.")
        assert "error" in retriever.load_knowledge(AGENT, "g1")
        # a name taken again is that concept's, even after it is deleted
        put("n1", "Garantia de 90 dias.")
        rename("n1", "n2")
        put("n1", "Outra regra.")
        memory.delete("n1", agent=AGENT)
        assert "error" in retriever.load_knowledge(AGENT, "n1")
        # renaming back leaves no alias of a name to itself
        put("a1", "Entrega em 2 dias.")
        rename("a1", "b1")
        rename("b1", "a1")
        assert [a.alias for a in store.aliases(AGENT, "a1")] == ["b1"]
    finally:
        memory.close()


def test_an_old_name_says_which_concept_it_now_names(tmp_path: Path) -> None:
    # Left from an attack: update, history and delete of a renamed concept's old name said
    # only "no concept", while load_knowledge of that name reached the renamed concept.
    memory = Memory(tmp_path)
    try:
        memory.put("---\nname: frete\ndescription: Frete grátis acima de R$ 199.\ntype: policy\n---\n\n"
                   "Frete grátis acima de R$ 199.\n", agent=AGENT)
        memory.update("frete", agent=AGENT, rename="frete-gratis")
        hint = "it is an alias of 'frete-gratis'"
        for call in (lambda: memory.update("frete", agent=AGENT, description="Outra."),
                     lambda: memory.history("frete", agent=AGENT),
                     lambda: memory.delete(agent=AGENT, name="frete"),
                     lambda: memory.restore("frete", 1, agent=AGENT)):  # restore: a second attack
            with pytest.raises(NotFound, match=re.escape(hint)):
                call()
        assert memory.store().get(AGENT, "frete-gratis").concept.description == "Frete grátis acima de R$ 199."
        assert [v.reason for v in memory.history("frete-gratis", agent=AGENT)] == ["edit", "edit"]
        with pytest.raises(NotFound) as unknown:  # a name that never was: no hint
            memory.history("nunca", agent=AGENT)
        assert "alias" not in str(unknown.value)
    finally:
        memory.close()


def test_a_sightings_alias_goes_with_its_deleted_concept(tmp_path: Path) -> None:
    # found by a second attack: a model's alias of a deleted concept led to a new, unrelated
    # concept of the deleted one's name
    memory, _ = _backfill(tmp_path, {"s1": [VALIDITY], "s2": [RESTATED]})
    try:
        store = memory.store()
        assert store.alias_of(AGENT, RESTATED["name"]) == VALIDITY["name"]
        memory.delete(VALIDITY["name"], agent=AGENT)
        memory.put(f"---\nname: {VALIDITY['name']}\ndescription: Other.\ntype: fact\n---\n\nOther.\n", agent=AGENT)
        assert store.alias_of(AGENT, RESTATED["name"]) is None
        assert "error" in memory.retriever().load_knowledge(AGENT, RESTATED["name"])
    finally:
        memory.close()


def test_a_change_held_under_a_drifting_name_waits_for_a_person_in_conflicts(
    tmp_path: Path, database: str | None,
) -> None:
    """Issue 26, item 2: the changed rule held as a possible duplicate was listed only by
    `held_claims`; `conflicts()`, the CLI and MCP list (what an operator reviews) showed the
    old rule as fine while a contradicting claim waited."""
    from click.testing import CliRunner

    from insika_knowledge.cli import cli

    memory, _ = _backfill(tmp_path, {"s1": [VALIDITY, UNRELATED], "s2": [CHANGED]}, database)
    try:
        assert [c.name for c in memory.conflicts(agent=AGENT)] == ["gift-card-validity"]
        [hit] = [h for h in memory.search("gift card 12 months", agent=AGENT) if h.name == "gift-card-validity"]
        assert hit.status == "conflict"
        if database is None:
            result = CliRunner().invoke(cli, ["conflicts", "--agent", AGENT, "--data-dir", str(tmp_path / "data")])
            assert result.exit_code == 0, result.output
            assert "gift-cards-expire-after-a-year" in result.output and "24 months" in result.output
            listed = CliRunner().invoke(cli, ["conflicts", "--agent", AGENT, "--json",
                                              "--data-dir", str(tmp_path / "data")])
            [entry] = json.loads(listed.output)
            assert [h["name"] for h in entry["held_claims"]] == ["gift-cards-expire-after-a-year"]
        store = memory.store()
        current = store.get(AGENT, "gift-card-validity")
        store.edit(AGENT, "gift-card-validity", current.markdown.replace("12 months", "24 months"),
                   expected_version=current.version, actor="op")  # a person took the new rule
        assert memory.conflicts(agent=AGENT) == []
        assert store.possible_duplicates(AGENT) == []
    finally:
        memory.close()


def test_dismissing_a_held_possible_duplicate_leaves_conflicts(tmp_path: Path, database: str | None) -> None:
    memory, _ = _backfill(tmp_path, {"s1": [VALIDITY], "s2": [CHANGED]}, database)
    try:
        assert memory.dismiss_held("gift-card-validity", agent=AGENT) == 1
        assert memory.conflicts(agent=AGENT) == []
        assert memory.store().get(AGENT, "gift-card-validity").version == 1  # the record untouched
    finally:
        memory.close()


def test_a_mistyped_name_gets_close_names_from_every_call(tmp_path: Path) -> None:
    """A newcomer's attack: `dismiss_held` and `delete` of a near-miss name said only "no
    concept"; `load` and `update` named close ones."""
    memory = Memory(tmp_path)
    try:
        memory.put("---\nname: devolucao-prazo\ndescription: Devoluções em até 7 dias.\ntype: policy\n---\n\n"
                   "Devoluções em até 7 dias após a entrega.\n", agent=AGENT)
        for call in (lambda: memory.dismiss_held("devolucao-praz", agent=AGENT),
                     lambda: memory.delete(agent=AGENT, name="devolucao-praz"),
                     lambda: memory.history("devolucao-praz", agent=AGENT),
                     lambda: memory.restore("devolucao-praz", 1, agent=AGENT),
                     lambda: memory.update("devolucao-praz", agent=AGENT, description="Outra.")):
            with pytest.raises(NotFound, match="did you mean devolucao-prazo"):
                call()
        with pytest.raises(NotFound) as unknown:  # nothing close: no hint
            memory.delete(agent=AGENT, name="zzz")
        assert "did you mean" not in str(unknown.value)
    finally:
        memory.close()
