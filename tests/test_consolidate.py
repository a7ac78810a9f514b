from __future__ import annotations

import re

import pytest
from conftest import make_concept
from hypothesis import given
from hypothesis import strategies as st

from insika_knowledge import consolidate
from insika_knowledge.candidate import Candidate
from insika_knowledge.concept import BODY_MAX, Concept


def cand(description: str, body: str, name: str = "cep-13-campinas") -> Candidate:
    return Candidate(name=name, description=description, type="fact", body=body)


ON_RECORD = make_concept(
    name="sla-resposta",
    description="The support SLA is 4 hours for first response.",
    body="Customers get a first response within 4 hours on business days.",
)


def test_reworded_claim_with_same_numbers_is_the_same_claim() -> None:
    again = cand("The support SLA for first response is 4 hours.",
                 "On business days customers get a first response within 4 hours.", "sla-resposta")
    assert consolidate.same_claim(ON_RECORD, again)


@pytest.mark.parametrize(
    ("description", "body"),
    [
        ("The support SLA is 2 hours for first response.",
         "Customers get a first response within 2 hours on business days."),
        ("The support SLA is 4 days for first response.",
         "Customers get a first response within 4 days on business days."),
        ("The support SLA is not 4 hours for first response.",
         "Customers do not get a first response within 4 hours on business days."),
    ],
)
def test_different_number_unit_or_negation_is_never_the_same_claim(description: str, body: str) -> None:
    assert not consolidate.same_claim(ON_RECORD, cand(description, body, "sla-resposta"))


def test_cap_50_units_is_not_cap_500_units() -> None:
    old = make_concept(name="cap", description="Order cap is 50 units.", body="Each order is capped at 50 units.")
    assert not consolidate.same_claim(old, cand("Order cap is 500 units.", "Each order is capped at 500 units.", "cap"))
    assert consolidate.same_claim(old, cand("Order cap is 50 units.", "Each order is capped at 50 units.", "cap"))


def test_unrelated_wording_is_not_the_same_claim() -> None:
    other = cand("Returns need the original box.", "Items must come back in the original packaging.", "sla-resposta")
    assert not consolidate.same_claim(ON_RECORD, other)


def test_number_formats_are_compared_by_value() -> None:
    assert consolidate.analyse("R$ 1.250,00").numbers == consolidate.analyse("R$1250").numbers
    assert consolidate.analyse("$1,250.00").numbers == consolidate.analyse("1250 dollars").numbers
    assert consolidate.analyse("R$ 199").units == {"brl"}


def test_same_claim_ignores_the_open_contradiction_section() -> None:
    conflicted = consolidate.contradict(ON_RECORD, cand("SLA is 2 hours", "Two hours now.", "sla-resposta"),
                                        "sess_9", "2026-08-25T10:00:00Z")
    again = cand("The support SLA for first response is 4 hours.",
                 "On business days customers get a first response within 4 hours.", "sla-resposta")
    assert consolidate.same_claim(conflicted, again)


def test_contradiction_appends_under_one_heading_with_session_and_time() -> None:
    first = consolidate.contradict(ON_RECORD, cand("SLA is 2 hours", "Two hours.", "sla-resposta"),
                                   "sess_9", "2026-08-25T10:00:00Z")
    second = consolidate.contradict(first, cand("SLA is 8 hours", "Eight hours.", "sla-resposta"),
                                    "sess_10", "2026-08-26T10:00:00Z")
    assert second.body.startswith(ON_RECORD.body)
    assert second.body.count("## Contradiction") == 1
    assert "`sess_9` at 2026-08-25T10:00:00Z" in second.body
    assert "`sess_10` at 2026-08-26T10:00:00Z" in second.body
    assert second.confidence == 0.4 and second.in_conflict


@given(st.integers(0, 1000))
def test_confidence_is_bounded(n: int) -> None:
    assert 0.5 <= consolidate.confidence(n) <= 0.95


@given(st.integers(0, 1000), st.integers(0, 1000))
def test_confidence_is_monotone_in_distinct_sources(a: int, b: int) -> None:
    lo, hi = sorted((a, b))
    assert consolidate.confidence(lo) <= consolidate.confidence(hi)


def test_confidence_matches_the_evidence_rule() -> None:
    assert [consolidate.confidence(n) for n in range(7)] == [0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.95]
    with pytest.raises(ValueError):
        consolidate.confidence(-1)


def test_confirm_keeps_the_body_and_a_policy_keeps_its_confidence() -> None:
    confirmed = consolidate.confirm(ON_RECORD, ["sess_1", "sess_2"], "2026-08-30T00:00:00Z")
    assert confirmed.body == ON_RECORD.body
    assert confirmed.occurrences == ON_RECORD.occurrences + 1
    assert confirmed.confidence == 0.7
    policy = ON_RECORD.replace(provenance="policy", confidence=1.0)
    assert consolidate.confirm(policy, ["sess_1", "sess_2", "sess_3"], "2026-08-30T00:00:00Z").confidence == 1.0


@pytest.mark.parametrize(
    ("body", "ok"),
    [("Merged statement.", True), ("", False), ("   ", False), (None, False), (42, False),
     ("x" * 5000, False), ("Fine.\n\n## Contradiction\n\n- no", False)],
)
def test_unusable_merges_are_refused(body: object, ok: bool) -> None:
    assert consolidate.usable_merge(body, consolidate.merge_limit("a" * 100, "b" * 100)) is ok


def test_merge_limit_is_bounded() -> None:
    assert consolidate.merge_limit("a" * 100, "b" * 300) == 800
    assert consolidate.merge_limit("a" * 3000, "b") == 4000


# ----------------------------------------------------------------------------- attacks

NOW = "2026-08-25T10:00:00Z"
HEADING = "\n\n## Contradiction\n\n"


def _near_limit(free: int, with_heading: bool = False) -> Concept:
    """ON_RECORD with a body `free` characters short of BODY_MAX."""
    head = ON_RECORD.body + (HEADING + "- session `s0` at 2026-08-24T10:00:00Z: old" if with_heading else "")
    body = (head + "\n\n" + "word " * (BODY_MAX // 5))[: BODY_MAX - free - 1] + "x"
    assert len(body) == BODY_MAX - free
    return ON_RECORD.replace(body=body)


LONG_CLAIM = cand("SLA is 2 hours", "Two hours, not four. " * 40, "sla-resposta")


def _entries(body: str) -> list[str]:
    return [e for e in body.split("\n\n") if e.startswith("- session ")]


def test_a_contradiction_that_does_not_fit_appends_a_short_whole_entry() -> None:
    existing = _near_limit(200)
    after = consolidate.contradict(existing, LONG_CLAIM, "sess_9", NOW)
    assert len(after.body) <= BODY_MAX
    assert after.body == (existing.body + HEADING + f"- session `sess_9` at {NOW}: "
                          "claim held for review: no room in the record")
    assert after.in_conflict and after.confidence == 0.4
    assert not consolidate.keeps(after, LONG_CLAIM)  # so the write path holds it


def test_a_contradiction_with_no_room_at_all_keeps_the_body_and_the_heading() -> None:
    crowded = _near_limit(5, with_heading=True)
    after = consolidate.contradict(crowded, LONG_CLAIM, "sess_9", NOW)
    assert after.body == crowded.body  # nothing cut, no half entry
    assert after.in_conflict and after.confidence == 0.4
    full = _near_limit(0)
    assert not full.in_conflict
    after = consolidate.contradict(full, LONG_CLAIM, "sess_9", NOW)
    assert len(after.body) <= BODY_MAX
    assert after.in_conflict and after.confidence == 0.4  # the heading is always there
    assert after.body.rstrip().endswith("## Contradiction")
    assert after.body.startswith(ON_RECORD.body)


def test_a_contradiction_with_no_room_writes_no_version_that_only_moves_its_time() -> None:
    crowded = _near_limit(5, with_heading=True).replace(confidence=0.4)
    assert consolidate.contradict(crowded, LONG_CLAIM, "sess_9", NOW) is crowded
    decision = consolidate.decide(crowded, LONG_CLAIM, already_sighted=False, model_available=False)
    assert decision.sighting is not None  # the ledger still records it
    assert consolidate.apply(decision, crowded, LONG_CLAIM, sources=[], session_id="sess_9", now=NOW) is None


@given(st.integers(0, 400), st.booleans())
def test_contradiction_never_cuts_the_heading_or_an_entry(free: int, with_heading: bool) -> None:
    existing = _near_limit(free, with_heading)
    after = consolidate.contradict(existing, LONG_CLAIM, "sess_9", NOW)
    assert len(after.body) <= BODY_MAX
    assert after.in_conflict and after.confidence == 0.4
    for entry in _entries(after.body):
        assert entry.endswith((": old", ": claim held for review: no room in the record",
                               ": SLA is 2 hours"))


SHORT_CLAIM = cand("SLA is 2 hours", "Two hours,  not four.", "sla-resposta")


def test_a_claim_repeated_is_one_entry_naming_its_sessions() -> None:
    first = consolidate.contradict(ON_RECORD, SHORT_CLAIM, "s1", NOW)
    assert consolidate.keeps(first, SHORT_CLAIM)
    again = consolidate.contradict(first, cand("SLA is 2 hours", "two hours, NOT four.", "sla-resposta"),
                                   "s2", "2026-08-25T11:00:00Z")
    assert _entries(again.body) == [f"- session `s1` at {NOW} (also `s2`): SLA is 2 hours"]
    assert consolidate.contradict(again, SHORT_CLAIM, "s2", "2026-08-25T12:00:00Z") is again  # named already
    other = consolidate.contradict(again, cand("SLA is 3 hours", "Three hours.", "sla-resposta"), "s3", NOW)
    assert len(_entries(other.body)) == 2  # a different claim is its own entry
    record = other
    for n in range(4, 400):
        record = consolidate.contradict(record, SHORT_CLAIM, f"s{n}", NOW)
    entry = consolidate.entries(record.body)[0]
    assert entry.sessions == ("s1", "s2", "s4", "s5", "s6")  # bounded: the ledger has the rest
    assert len(record.body) < len(other.body) + 40
    assert [e.description for e in consolidate.entries(record.body)] == ["SLA is 2 hours", "SLA is 3 hours"]


def test_a_session_is_added_to_the_entry_that_states_its_claim_and_nowhere_else() -> None:
    # Found by an attack: the entry was found by its first line's text, so two entries with
    # the same first line (one session, one second) or a body quoting a later entry's first
    # line took the session in the wrong place.
    by_mail = cand("Returns are accepted within 30 days.", "Body A: by mail.", "sla-resposta")
    in_store = cand("Returns are accepted within 30 days.", "Body B: in store.", "sla-resposta")
    record = consolidate.contradict(ON_RECORD, by_mail, "s1", NOW)
    record = consolidate.contradict(record, in_store, "s1", NOW)
    record = consolidate.contradict(record, in_store, "s2", NOW)
    assert [(e.sessions, e.body) for e in consolidate.entries(record.body)] == [
        (("s1",), "Body A: by mail."), (("s1", "s2"), "Body B: in store.")]
    later = cand("Returns are accepted within 60 days.", "Sixty days.", "sla-resposta")
    quoting = cand("Returns: a quote.", f"- session `s9` at {NOW}: Returns are accepted within 60 days.",
                   "sla-resposta")
    record = consolidate.contradict(ON_RECORD, quoting, "s8", NOW)
    record = consolidate.contradict(record, later, "s9", NOW)
    record = consolidate.contradict(record, later, "s10", NOW)
    assert [(e.sessions, e.body) for e in consolidate.entries(record.body)] == [
        (("s8",), quoting.body), (("s9", "s10"), "Sixty days.")]


def test_an_entry_of_a_record_with_lone_cr_line_ends_is_read() -> None:
    # Found by an attack: a hand-edited record keeps lone CRs, which end a line for the
    # heading but did not for the entries, so a repeat appended a second entry.
    body = (f"{ON_RECORD.body}\r\r## Contradiction\r\r- session `s1` at {NOW}: SLA is 2 hours\r\r"
            "  Two hours,  not four.")
    record = consolidate.contradict(ON_RECORD.replace(body=body), SHORT_CLAIM, "s2", NOW)
    assert [e.sessions for e in consolidate.entries(record.body)] == [("s1", "s2")]


def test_a_claim_described_as_the_no_room_note_is_still_one_claim() -> None:
    odd = cand(consolidate.NO_ROOM_NOTE, "But it has a body.", "sla-resposta")
    record = ON_RECORD
    for n in range(1, 8):
        record = consolidate.contradict(record, odd, f"s{n}", NOW)
    (entry,) = consolidate.entries(record.body)
    assert entry.kept_text and len(entry.sessions) == 5 and consolidate.keeps(record, odd)


def test_a_repeated_claim_at_the_limit_is_still_kept_once() -> None:
    entry = f"- session `s1` at {NOW}: SLA is 2 hours\n\n  Two hours,  not four."
    crowded = consolidate.contradict(_near_limit(len(HEADING) + len(entry) + 3), SHORT_CLAIM, "s1", NOW)
    assert len(crowded.body) == BODY_MAX - 3 and consolidate.keeps(crowded, SHORT_CLAIM)
    after = consolidate.contradict(crowded, SHORT_CLAIM, "s2", NOW)
    assert after is crowded  # no room to name s2, and no second entry: the ledger has it


def test_the_session_id_cannot_forge_a_heading_or_a_link() -> None:
    evil = "evil`\n\n## Contradiction\n[[pwn]] \x1b[31m"
    after = consolidate.contradict(ON_RECORD, cand("SLA is 2 hours", "Two hours.", "sla-resposta"),
                                   evil, NOW)
    assert re.findall(r"^.*Contradiction.*$", after.body, re.MULTILINE)[0] == "## Contradiction"
    assert len(re.findall(r"^## Contradiction$", after.body, re.MULTILINE)) == 1
    assert after.links == ()
    entry = after.body.split(HEADING, 1)[1]
    assert entry.startswith("- session `evil'\\u000a\\u000a## Contradiction\\u000a\\[\\[pwn\\]\\] ")
    assert "\x1b" not in after.body


def test_a_merged_body_that_cannot_be_written_as_utf8_is_unusable() -> None:
    assert not consolidate.usable_merge("Merged \ud800 statement.", 800)
