"""``bench --consolidation``: the labelled pairs and the renamed sightings meet their targets."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Final

import pytest
from click.testing import CliRunner

from insika_knowledge.bench import consolidation as consolidate_bench
from insika_knowledge.bench.datasets import shared_data
from insika_knowledge.cli import cli
from insika_knowledge.errors import UserError
from insika_knowledge.index.embedders import resolve as resolve_embedder


def test_the_consolidation_bench_meets_its_targets_on_both_halves(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("INSIKA_EMBEDDINGS", "auto")  # as a memory's defaults: the offline model
    result = CliRunner().invoke(cli, ["bench", "--consolidation", "--json"])
    assert result.exit_code == 0, result.output
    figures = json.loads(result.output)
    # The dev half (the rules were tuned on it) meets every target; the test half meets the
    # pair targets and is reported as it is for the policy changes (benchmarks/README.md).
    dev = figures["targets_met"]["dev"]
    assert all(met for target, met in dev.items() if target not in ("unflagged_contradictory", "silently_folded")), dev
    # Policy changes: no model, or a model answering "related" with one side, fold none on
    # either half; a model that lists both sides still folds some (the listing rule keeps
    # two subjects with their own values apart): a regression bound, not the target.
    for half, listed in (("dev", 38), ("test", 36)):
        outcomes = figures["changes"][half]["outcomes"]
        for run in ("same_name_no_model", "same_name_wrong_related_new", "same_name_wrong_related_old"):
            assert not {"confirmed", "merged"} & set(outcomes[run]), (half, run, outcomes[run])
        assert outcomes["same_name_wrong_related_both"].get("merged", 0) <= listed
        assert figures["changes"][half]["silently_folded"] == outcomes["same_name_wrong_related_both"].get("merged", 0)
    assert figures["pairs"]["dev"]["unflagged_contradictory"] == 0
    # Dev changes reworded under drifting names share too few words for the lexical close
    # match (21 of 65 learned beside their rule); the semantic index (the offline model, a
    # default dependency) holds all but 5 of them, at cosines 0.77-0.81 (benchmarks/README.md):
    # a regression bound on today's figures, not the target.
    lexical_only = resolve_embedder(None)[0] is None
    # (lexically alone 24 of 70 before a short rule's other version among the best lexical
    # matches was held, forty-fifth session: 20)
    assert figures["changes"]["dev"]["unflagged_contradictory"] <= (20 if lexical_only else 1)
    for half in ("dev", "test"):
        pairs = figures["pairs"][half]
        # dev is 0; the test half of a fresh reader's pairs (reader.jsonl, never tuned on)
        # confirms 3 different claims ("Recarga Oi" / "Recarga", "Few items" / "Items",
        # "Shipping cost" / "costs"): reported as they are, a regression bound, not the target
        assert pairs["false_same"] <= (0 if half == "dev" else 3)
        # dev meets the target (0.75); test 75 of 98 since reader.jsonl was added (0.765)
        assert pairs["same_without_model"] / pairs["same"] >= 0.75
        assert pairs["different_merged"] <= (0 if half == "dev" else 3)  # the same three
        assert set(figures["changes"][half]["outcomes"]["same_name_no_model"]) == {"conflict"}
        # held under another name: restatements 6 / 14 of 97 / 98 serve their record as
        # disputed, contradicting pairs 238 of 253 / 252 (regression bounds, docstring of disputes)
        disputed = figures["disputed"][half]
        assert disputed["same"]["disputed"] <= (6 if half == "dev" else 14)
        assert disputed["contradicting"]["disputed"] >= 238
        scripted = pairs["tables"]["scripted_model"]
        confirmed = scripted["contradicting"].get("confirmed", 0)  # the false same, confirmed before any model
        assert confirmed <= (0 if half == "dev" else 3)
        assert scripted["contradicting"] == {"conflict": pairs["labels"]["contradicting"] - confirmed,
                                             **({"confirmed": confirmed} if confirmed else {})}
        # the scripted model lists both texts: "every order" / "every first order" (dev, en
        # and pt) read as two versions of one claim and are held for a person; on test,
        # "Flights can be cancelled within 24 hours" / "... only by gold members" since a
        # restriction added with no value of its own reads as another version (forty-fifth
        # session: chosen on the dev halves, where it holds scope changes the set labels
        # contradicting; the safe side, a person reviews it); since the forty-sixth session
        # also an exception made of the rule ("Free shipping on all products" / "... except
        # appliances": three dev pairs), a list with an item more and a rule of "all" said of
        # a narrower kind (chosen on the dev halves of the newer pair files, which label them
        # contradicting; test 1 -> 3, not tuned on)
        assert set(scripted["related"]) <= {"merged", "conflict"}
        assert scripted["related"].get("conflict", 0) <= (5 if half == "dev" else 3)
    # Other subjects (benchmarks/consolidation/subjects*.jsonl; bench.subjects): siblings
    # stated in one message are each learned unless they read as two versions of one claim
    # and each names a subject of its own (18 / 19 of 21, 28 / 29 and 29 / 31, 10 / 15 and 8 / 15;
    # before `written`: 0 + 0 of 42,
    # 18 + 16 of 60, 1 + 0 of 30); a later session's are held, as the changes named by what
    # changed are (2 of 60 of the second set's learned, and 2 of its test changes: they share
    # few words with their rule, which no close match finds).
    subjects = figures["subjects"]
    assert set(subjects) == {"subjects.jsonl", "subjects2.jsonl", "subjects3.jsonl"}
    least = {("subjects.jsonl", "dev"): 18, ("subjects.jsonl", "test"): 19, ("subjects2.jsonl", "dev"): 28,
             ("subjects2.jsonl", "test"): 29, ("subjects3.jsonl", "dev"): 10, ("subjects3.jsonl", "test"): 8}
    for (name, half), learned in least.items():
        assert subjects[name][half]["sibling_one_turn"] >= learned, (name, half, subjects[name][half])
    for name, halves in subjects.items():
        for half, f in halves.items():
            if not lexical_only:  # without the semantic index few of them are close matches at all
                assert f["change_learned"] <= (2 if (name, half) == ("subjects2.jsonl", "test") else 0), (name, f)
                assert f["sibling_learned"] <= 2, (name, half, f)
    # Crowded stores (benchmarks/consolidation/crowded*; bench.crowded): a new fact of a store's
    # domain is learned unless one to three concepts stand apart as its neighbourhood (before:
    # 10 / 14 of 18 learned; now 16 / 17), a rule changed under a new name held (17 / 17 of
    # 18 before and after); the attack on the first version: 69 of 73 changes held (73
    # before), 11 of 20 new facts learned (6 before). Regression bounds, not targets.
    crowded, attack = figures["crowded"]["crowded"], figures["crowded"]["crowded-attack"]
    for half in ("dev", "test"):
        assert crowded[half]["distinct"] == crowded[half]["changed"] == 18
        if not lexical_only:
            assert crowded[half]["distinct_learned"] >= 16, crowded[half]
            assert crowded[half]["changed_held"] >= 17, crowded[half]
    if not lexical_only:
        assert sum(attack[h]["changed_held"] for h in ("dev", "test")) >= 69, attack
        assert sum(attack[h]["distinct_learned"] for h in ("dev", "test")) >= 11, attack
    # Sparse stores (one rule of each kind; a new rule of another subject copies a stored
    # rule's shape): every change but one is held, and most new rules are held too (7 / 6 of
    # 20 learned): the passage vectors read shape, not subject (benchmarks/README.md).
    sparse = figures["crowded"]["sparse"]
    for half in ("dev", "test"):
        assert sparse[half]["distinct"] == sparse[half]["changed"] == 20
        assert lexical_only or sparse[half]["changed_held"] >= 19, sparse[half]
        assert sparse[half]["changed_held_against_its_rule"] <= sparse[half]["changed_held"], sparse[half]
    if not lexical_only:
        assert sum(sparse[h]["distinct_learned"] for h in ("dev", "test")) >= 13, sparse
    if shared_data() is None:
        assert figures["renamed"] is None
        return
    for half in ("dev", "test"):
        renamed = figures["renamed"][half]
        assert renamed["renamed_sightings"] > 20
        assert renamed["duplicate_share"] <= 0.05
        assert renamed["wrongly_attributed"] == 0


def test_the_pair_set_is_large_bilingual_and_labelled() -> None:
    pairs = consolidate_bench.load_pairs()
    assert len(pairs) >= 340 and len({p.id for p in pairs}) == len(pairs)
    structured = {p.kind for p in pairs if p.source == "structure.jsonl"}
    assert {"swap_value", "swap_direction", "swap_date", "scope_join", "description_scope",
            "reword_contraction", "reword_money", "reword_date"} <= structured
    changes = consolidate_bench.load_changes()
    assert len(changes) >= 40 and {c.half for c in changes} == {"dev", "test"}
    assert {p.lang for p in pairs} == {"en", "pt"}
    assert {p.label for p in pairs} == set(consolidate_bench.LABELS)
    kinds = {p.kind for p in pairs}
    assert {"qualifier", "unit_kind", "time_of_day", "change_verb", "number_words", "antonym",
            "negation", "number", "reword_order", "reword_numword", "reword_spelling"} <= kinds


def test_a_malformed_pair_file_names_the_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "pairs.jsonl"
    bad.write_text('{"id": 1, "lang": "en", "kind": "x", "label": "same", "a": "A", "b": "A"}\n{"id": 2}\n')
    with pytest.raises(UserError, match=r"pairs.jsonl:2: not a labelled pair"):
        consolidate_bench.load_pairs(bad)
    assert consolidate_bench.main(["--pairs", str(bad)]) == 2
    assert "pairs.jsonl:2" in capsys.readouterr().out


def test_the_newcomers_pairs_stay_read_apart() -> None:
    """Regression bounds on the newcomers' pairs (benchmarks/README.md, sixth session):
    dev was tuned on (1 false same left: a weekday abbreviation that is a stop word), the
    test half scored once (8 of 142, 36 before).
    """
    from insika_knowledge.bench.datasets import benchmark_data
    from insika_knowledge.consolidate.claims import assertion, same_claims

    pairs = consolidate_bench.load_pairs(benchmark_data("consolidation/newcomers.jsonl"))
    false_same = {"dev": 0, "test": 0}
    for pair in pairs:
        if pair.label != "same" and same_claims(assertion(pair.a, pair.a), assertion(pair.b, pair.b)):
            false_same[pair.half] += 1
    assert false_same["dev"] <= 1 and false_same["test"] <= 8, false_same


def test_the_second_newcomers_pairs_stay_read_apart() -> None:
    """Regression bounds on the second newcomers' pairs (benchmarks/README.md, eighth
    session): scored once first (3 + 1 false sames, all slashed English dates both orders
    read), then the dates were fixed (both halves are spent).
    """
    from insika_knowledge.bench.datasets import benchmark_data
    from insika_knowledge.consolidate.claims import assertion, same_claims

    pairs = consolidate_bench.load_pairs(benchmark_data("consolidation/newcomers2.jsonl"))
    false_same = sum(pair.label != "same" and same_claims(assertion(pair.a, pair.a), assertion(pair.b, pair.b))
                     for pair in pairs)
    assert false_same == 0


def test_the_third_newcomers_pairs_stay_read_apart() -> None:
    """Regression bounds on the third newcomers' pairs (benchmarks/README.md, ninth session):
    scored once before any change, 0 false sames of 110 on either half; the durations and
    comparisons read since came from its dev half's restatements.
    """
    from insika_knowledge.bench.datasets import benchmark_data
    from insika_knowledge.consolidate.claims import assertion, same_claims

    pairs = consolidate_bench.load_pairs(benchmark_data("consolidation/newcomers3.jsonl"))
    assert len(pairs) == 200
    false_same = [pair.id for pair in pairs
                  if pair.label != "same" and same_claims(assertion(pair.a, pair.a), assertion(pair.b, pair.b))]
    assert false_same == []


#: Pairs of different claims still read as one, by file: "os clientes que têm o cartão" /
#: "os clientes, que têm o cartão," (a relative that narrows, one that describes: commas only).
_KNOWN_FALSE_SAME: Final[dict[str, set[int]]] = {"newcomers23": {20148, 20149}}


@pytest.mark.parametrize(("name", "dev_confirmed"), [
    # scored once before any change (0 false sames of 62 on dev, 1 of 48 on test: a
    # negation's phrase, read after the second scoring and fixed as its class); the dev
    # half's wording-only restatements confirm without a model: 13 of 38, from 10
    ("newcomers4", 13),
    # scored once before any change (0 of 60 on dev, 0 of 50 on test); dev: 11 of 40, from 10
    ("newcomers5", 11),
    # scored once before any change (0 of 55 on dev, 0 of 55 on test); dev: 18 of 45, from 11
    ("newcomers6", 18),
    # scored once before any change (0 of 55 on dev, 0 of 55 on test); dev (all English):
    # 12 of 45, from 8
    ("newcomers7", 12),
    # scored once before any change (0 of 55 on dev, 0 of 55 on test); dev (both languages):
    # 10 of 45, from 8
    ("newcomers8", 10),
    # scored once before any change (0 of 49 on dev, 0 of 61 on test); dev (both languages):
    # 20 of 51, from 16
    ("newcomers9", 20),
    # scored once before any change (0 of 55 on dev, 0 of 55 on test); dev: 14 of 45, from 10
    ("newcomers10", 14),
    # scored once before any change (0 of 55 on dev, 0 of 55 on test); dev: 14 of 45, from 11
    ("newcomers11", 14),
    # scored once before any change (0 of 55 on dev, 0 of 55 on test); dev: 28 of 45, from 15
    ("newcomers12", 28),
    # scored once before any change (0 of 55 on dev, 0 of 55 on test); dev: 14 of 45, from 6
    ("newcomers13", 14),
    # scored once before any change (0 of 55 on dev, 0 of 55 on test); dev: 14 of 45, from 13
    ("newcomers14", 14),
    # scored once before any change (0 of 51 on dev, 0 of 59 on test); dev: 13 of 49, from 12
    ("newcomers15", 13),
    # scored once before any change (0 of 55 on dev, 0 of 55 on test); dev: 14 of 45
    ("newcomers16", 14),
    # scored once before any change (forty-second session: 0 of 56 on dev, 0 of 54 on test);
    # dev: 12 of 44, test 13 of 46; dev 15 after a leading phrase of when and two synonym
    # groups (2026-12-07)
    ("newcomers17", 15),
    # scored once before any change (forty-fourth session: 0 of 57 on dev, 0 of 53 on test);
    # dev: 12 of 43, test 20 of 47; dev 22 after lists read in any order, "as" as an article,
    # "/hr", "tá", a dozen, "optional", "requer", a day range of one month (test: 20 still)
    ("newcomers18", 22),
    # scored once before any change (forty-fifth session: 0 of 60 on dev, 0 of 50 on test);
    # dev: 3 of 40, test 4 of 50; dev 9 after requirements read either way ("X is mandatory
    # for Y" / "Y must use X"), metric units, "com mais de", "open until", a dated future
    ("newcomers19", 9),
    # scored once before any change (forty-sixth session: 0 of 52 on dev, 0 of 58 on test);
    # dev: 11 of 48, test 10 of 42; dev 18 after a future that recurs, "not ... unless" as
    # "only if", a negated opening, "para cada" after a price (test: 10 still)
    ("newcomers20", 18),
    # scored once before any change (forty-seventh session: 1 of 50 on dev, "in-network" /
    # "out-of-network" read alike; 0 of 60 on test); dev: 8 of 50, test 6 of 40; dev 12 after
    # a period named by one word ("quarterly", "semestral") and "acontece" / "ocorre" as "é"
    # (test: 6 still)
    ("newcomers21", 12),
    # scored once before any change (forty-seventh session, second round: 0 of 55 on dev, 0 of
    # 55 on test); dev: 1 of 45, test 1 of 45 (restatements by structure: a topic fronted, a
    # comparative inverted, a total against its instalments); dev 2 after "should ..." and
    # "in the event that" as "if" and "bloqueá-lo" as "bloquear"
    ("newcomers22", 2),
    # scored once before any change (forty-eighth session: 1 of 55 on dev, 1 of 55 on test,
    # the two pairs that differ in commas only, `_KNOWN_FALSE_SAME`); dev: 0 of 45, test 0 of
    # 45 (restatements by structure: gapping, a causal clause moved, an idiom for a clock time);
    # dev 4 after "not only ... but also", "que foram comprados", "is going to", an
    # announcement's frame, "absolutamente todos ... sem exceção", "taxa alguma"
    ("newcomers23", 4),
    # scored once before any change (forty-eighth session, second round, at 4f481f8: 0 of 55 on
    # dev, 0 of 55 on test); dev: 0 of 45, test 0 of 45 (everyday rules in a second employee's
    # words); still 0 after "as 2 primeiras horas" and "um ano e meio" (each pair differs in
    # more than that: a fronted topic, a synonym)
    ("newcomers24", 0),
    # scored once before any change (forty-ninth session, at f821dd9: 0 of 55 on dev, 0 of 55 on
    # test); dev: 20 of 45, test 17 of 45; dev 26 after minutes as hours, tonnes as kilograms,
    # "must not" / "not allowed to" as "cannot", ranges of days ("Mon–Fri", "Monday through
    # Friday"), "who are enrolled" as "enrolled", a fee and its charging once (test: 19)
    ("newcomers25", 26),
    # scored once before any change (forty-ninth session, second round, at b85601c: 0 of 55 on
    # dev, 0 of 55 on test); dev: 7 of 45, test 3 of 45 (a second employee's wording: numbers in
    # words, nominalised requirements, synonyms); dev 10 after a list after a fronted phrase in
    # any order, "para cada" / "for every" as "per", ", which is" as "and is" (test: 4)
    ("newcomers26", 10),
])
def test_the_latest_newcomers_pairs_stay_read_apart(name: str, dev_confirmed: int) -> None:
    """Regression bounds on the fourth to twenty-sixth newcomers' pairs (benchmarks/README.md,
    tenth to forty-ninth sessions): no false same (but `_KNOWN_FALSE_SAME`), and the dev
    half's restatements that confirm without a model.
    """
    from insika_knowledge.bench.datasets import benchmark_data
    from insika_knowledge.consolidate.claims import assertion, same_claims

    pairs = consolidate_bench.load_pairs(benchmark_data(f"consolidation/{name}.jsonl"))
    assert len(pairs) == 200
    false_same = [pair.id for pair in pairs
                  if pair.label != "same" and same_claims(assertion(pair.a, pair.a), assertion(pair.b, pair.b))]
    assert set(false_same) <= _KNOWN_FALSE_SAME.get(name, set())
    confirmed = sum(pair.label == "same" and same_claims(assertion(pair.a, pair.a), assertion(pair.b, pair.b))
                    for pair in pairs if pair.id % 2 == 0)
    assert confirmed >= dev_confirmed


def test_the_listed_merges_are_refused_when_they_fold_a_change_and_kept_when_they_add() -> None:
    """Regression bounds on benchmarks/consolidation/listings.jsonl (a fresh reader's 244
    merged texts that list both sides; the listing rule was chosen on dev). Before it the
    guard refused 10 of 60 dev versions (test 13 of 62) and 0 of 62 dev adds (test 2 of 60);
    when it read only texts that list each side word for word, 33 (44) and 2 (3). A share
    against an amount, free against a price, a requirement made optional, a remedy denied
    and a sentence that negates the other (2026-12-07, chosen on the dev halves of the pair
    files): 46 -> 47 dev and 49 -> 51 test versions refused, adds unchanged. A refund in
    another form (store credit / the card, 2026-12-07, forty-fourth session): dev 47 -> 49. Two
    claims that open alike and end otherwise (`merge._tail_replaced`, forty-seventh session,
    chosen on the dev halves of every pair file): versions refused dev 50 -> 53, test 51 -> 53;
    adds refused dev 2 -> 2, test 5 -> 7 ("Sale items cannot be returned" / "Sale items can be
    exchanged ...": two rules of one subject, a cost the dev half did not show).
    """
    from insika_knowledge.bench.listings import listing_figures, listing_lines, load_listings

    figures = listing_figures(load_listings())
    dev, test = figures["dev"], figures["test"]
    assert (dev["versions"], dev["adds"], test["versions"], test["adds"]) == (60, 62, 62, 60)
    assert dev["versions_refused"] >= 53 and test["versions_refused"] >= 53
    assert dev["adds_refused"] <= 2 and test["adds_refused"] <= 7
    assert listing_lines(figures)[2] == (
        f"  test: versions of one rule refused {test['versions_refused']} of 62 (a change folded otherwise); "
        f"claims that add to each other refused {test['adds_refused']} of 60 (a needless conflict)")


def test_a_second_readers_listed_merges_hold_their_figures() -> None:
    """Regression bounds on benchmarks/consolidation/listings2.jsonl (120 cases a second
    fresh reader wrote; scored once with the rule of `consolidate.merge.versions` before its
    dev half was read: versions refused dev 32 of 35, test 21 of 25; adds refused dev 5 of 25,
    test 11 of 35; the rule before it, 24 / 17 and 4 / 11). Its dev half taught that a side
    saying "also" adds to the other."""
    from insika_knowledge.bench.datasets import benchmark_data
    from insika_knowledge.bench.listings import LISTING_FILES, listing_figures, load_listings

    figures = listing_figures(load_listings(benchmark_data(f"consolidation/{LISTING_FILES[1]}")))
    dev, test = figures["dev"], figures["test"]
    assert (dev["versions"], dev["adds"], test["versions"], test["adds"]) == (35, 25, 25, 35)
    assert dev["versions_refused"] >= 34 and test["versions_refused"] >= 23  # 21 before 2026-12-07
    assert dev["adds_refused"] <= 3 and test["adds_refused"] <= 8


def test_a_third_readers_listed_merges_hold_their_figures() -> None:
    """Regression bounds on benchmarks/consolidation/listings3.jsonl (160 cases a third fresh
    reader wrote, 32 kinds; scored once at d6607bf before its dev half was read: versions
    refused dev 33 of 40, test 30 of 40; adds refused dev 2 of 40, test 3 of 40; the rule
    of 089640c, 30 / 29 and 2 / 3). Its dev half taught currency codes ("120 CAD")."""
    from insika_knowledge.bench.datasets import benchmark_data
    from insika_knowledge.bench.listings import LISTING_FILES, listing_figures, load_listings

    figures = listing_figures(load_listings(benchmark_data(f"consolidation/{LISTING_FILES[2]}")))
    dev, test = figures["dev"], figures["test"]
    assert (dev["versions"], dev["adds"], test["versions"], test["adds"]) == (40, 40, 40, 40)
    assert dev["versions_refused"] >= 34 and test["versions_refused"] >= 30
    assert dev["adds_refused"] <= 2 and test["adds_refused"] <= 3


def test_a_listed_merge_that_is_no_case_names_its_line(tmp_path: Path) -> None:
    from insika_knowledge.bench.listings import load_listings

    path = tmp_path / "listings.jsonl"
    row = {"lang": "en", "kind": "k", "old": "a", "new": "b", "merged": "a b"}
    path.write_text(json.dumps({**row, "id": 1, "label": "versions"}) + "\n"
                    + json.dumps({**row, "id": 2, "label": "maybe"}) + "\n", encoding="utf-8")
    with pytest.raises(UserError, match=r"listings.jsonl:2: label 'maybe' is not one of versions, adds"):
        load_listings(path)
    path.write_text('{"id": 1}\n', encoding="utf-8")
    with pytest.raises(UserError, match=r"listings.jsonl:1: not a listed merge"):
        load_listings(path)


def test_the_other_subject_report_reads_its_figures() -> None:
    from insika_knowledge.bench.subjects import subject_lines

    half = {"sibling": 21, "sibling_learned": 0, "sibling_one_turn": 20, "change": 14, "change_learned": 1,
            "outcomes": {}}
    assert subject_lines({"dev": half}, "subjects2.jsonl") == [
        "other subjects (benchmarks/consolidation/subjects2.jsonl; dev = even ids, test = odd ids):",
        "  dev: siblings stated in one message both learned 20 of 21; in a later session, siblings learned 0 "
        "of 21 (held otherwise), changes learned beside their rule 1 of 14 (target 0)"]


def test_an_other_subject_case_that_is_no_case_names_its_line(tmp_path: Path) -> None:
    from insika_knowledge.bench.subjects import load_subjects

    path = tmp_path / "subjects.jsonl"
    side = {"name": "a", "description": "d", "body": "b"}
    path.write_text(json.dumps({"id": 1, "lang": "en", "label": "sibling", "a": side, "b": side}) + "\n"
                    + json.dumps({"id": 2, "lang": "en", "label": "twin", "a": side, "b": side}) + "\n",
                    encoding="utf-8")
    with pytest.raises(UserError, match=r"subjects.jsonl:2: label 'twin' is not one of sibling, change"):
        load_subjects(path)
    path.write_text(json.dumps({"id": 1, "lang": "en", "label": "sibling", "a": side}) + "\n", encoding="utf-8")
    with pytest.raises(UserError, match=r"subjects.jsonl:1: not an other-subject case"):
        load_subjects(path)


def test_a_crowded_claim_of_a_concept_no_store_has_names_it(tmp_path: Path) -> None:
    from insika_knowledge.bench.crowded import crowded_lines, load_crowded

    (tmp_path / "stores.jsonl").write_text(json.dumps(
        {"store": "A", "name": "frete", "description": "Frete.", "type": "fact", "body": "Frete grátis."}) + "\n",
        encoding="utf-8")
    claim = {"id": 2, "store": "A", "label": "changed", "of": "prazo", "name": "frete-novo", "description": "d",
             "type": "fact", "body": "b", "lang": "pt"}
    (tmp_path / "claims.jsonl").write_text(json.dumps(claim) + "\n", encoding="utf-8")
    with pytest.raises(UserError, match=r"claim 2 names store 'A' / concept 'prazo', which the stores do not have"):
        load_crowded(tmp_path)
    (tmp_path / "claims.jsonl").write_text(json.dumps({**claim, "label": "twin"}) + "\n", encoding="utf-8")
    with pytest.raises(UserError, match=r"claims.jsonl:1: label 'twin' is not one of distinct, changed"):
        load_crowded(tmp_path)
    stores, claims = load_crowded()  # the shipped set: three stores of 15, 36 claims of each label
    assert sorted(len(c) for c in stores.values()) == [15, 15, 15]
    assert sorted(c.label for c in claims).count("distinct") == 36 and len(claims) == 72
    half = {"distinct": 18, "distinct_learned": 17, "changed": 18, "changed_held": 16,
            "changed_held_against_its_rule": 15}
    assert crowded_lines({"test": half})[1] == (
        "  test: new facts of the store's domain learned 17 of 18 (held otherwise); changed rules under a new "
        "name held 16 of 18 (15 against the rule they change)")


def test_served_as_disputed_counts_each_label_per_half() -> None:
    """A restatement held under another name leaves its record undisputed (a duration in
    another unit it fills included); another value disputes it."""
    from insika_knowledge.bench.disputed import disputed_figures, disputed_lines

    said = "Refunds are issued within 48 hours."
    pairs = [consolidate_bench.Pair(2, "en", "unit", "same", said, "Refunds are issued within 2 days."),
             consolidate_bench.Pair(4, "en", "value", "contradicting", said, "Refunds are issued within 3 days."),
             consolidate_bench.Pair(1, "en", "value", "contradicting", said, "Refunds are issued within 5 days.")]
    figures = disputed_figures(pairs)
    assert figures["dev"] == {"contradicting": {"disputed": 1, "of": 1}, "same": {"disputed": 0, "of": 1}}
    assert figures["test"] == {"contradicting": {"disputed": 1, "of": 1}}
    assert "contradicting 1 of 1, same 0 of 1" in disputed_lines(figures, "dev")[0]
