"""Other subjects: a table of rules one message states is learned row by row; a later rule
about another subject of the same kind is held for a person, as a changed rule named by
what changed is (no lexical rule tells the two apart: benchmarks/README.md).
"""

from __future__ import annotations

from pathlib import Path

from insika_knowledge.bench.consolidation import CONFIG, ScriptedModel
from insika_knowledge.index.tokenizer import TOKENIZER
from insika_knowledge.learn import learn_turn
from insika_knowledge.memory import Memory
from insika_knowledge.store import SQLiteStore

REGIONS = [("sul", "Sul", 15), ("nordeste", "Nordeste", 30), ("norte", "Norte", 40)]


def _two_regions() -> tuple[list[dict[str, str]], list[dict[str, str]]]:
    """The first two regions' rows as candidates, and the turn whose one message states both."""
    rows = [{"name": f"frete-{slug}", "description": f"Frete para a região {region}", "type": "fact",
             "body": f"O frete para a região {region} custa R$ {fee}."} for slug, region, fee in REGIONS[:2]]
    said = [{"role": "user", "content": "Quanto é o frete?"},
            {"role": "assistant", "content": "O frete para a região Sul custa R$ 15, para a região Nordeste "
                                             "custa R$ 30."}]
    return rows, said


def test_the_rows_of_a_table_one_message_states_are_each_learned(tmp_path: Path) -> None:
    candidates = [{"name": f"frete-{slug}", "description": f"Frete para a região {region}", "type": "fact",
                   "body": f"O frete para a região {region} custa R$ {fee}."} for slug, region, fee in REGIONS]
    said = ", ".join(f"para a região {region} custa R$ {fee}" for _, region, fee in REGIONS)
    store = SQLiteStore(tmp_path / "k.db", tokenizer=TOKENIZER)
    try:
        report = learn_turn(store, "loja", CONFIG, ScriptedModel({"s1": candidates}, None), session_id="s1",
                            turn_id="t", messages=[{"role": "user", "content": "Quanto é o frete?"},
                                                   {"role": "assistant", "content": f"O frete {said}."}])
        assert report.results == [(f"frete-{slug}", "learned") for slug, _, _ in REGIONS]
    finally:
        store.close()


def test_a_later_sibling_and_a_change_named_by_what_changed_are_both_held(tmp_path: Path) -> None:
    memory = Memory(tmp_path / "k.db")

    def propose(name: str, description: str, body: str, session: str) -> str:
        said = [{"role": "user", "content": "?"}, {"role": "assistant", "content": f"{description}. {body}"}]
        report = memory.propose({"name": name, "description": description, "type": "policy", "body": body},
                                agent="loja", session_id=session, messages=said)
        [(_, outcome)] = report.results
        return outcome

    try:
        assert propose("horario-loja-d", "Horário da loja D", "A loja D abre às 9h e fecha às 18h.", "s1") \
            == "learned"
        assert propose("horario-loja-a", "Horário da loja A", "A loja A abre às 10h e fecha às 22h.", "s2") \
            == "possible_duplicate"
        assert propose("frete-correios", "Todos os pedidos vão pelos Correios",
                       "Todos os pedidos são enviados pelos Correios e chegam em até 7 dias úteis.", "s3") \
            == "learned"
        assert propose("frete-jadlog", "Todos os pedidos vão pela Jadlog",
                       "Todos os pedidos são enviados pela Jadlog e chegam em até 4 dias úteis.", "s4") \
            == "possible_duplicate"
        assert {c.name for c in memory.concepts(agent="loja")} == {"horario-loja-d", "frete-correios"}
    finally:
        memory.close()


def test_a_replayed_turn_still_reads_its_own_rows_as_its_own(tmp_path: Path) -> None:
    # the turn is tried again (a transient failure after its first row was written): the
    # first row is replayed, and the next is still no possible duplicate of it
    rows, messages = _two_regions()
    store = SQLiteStore(tmp_path / "k.db", tokenizer=TOKENIZER)
    try:
        first = learn_turn(store, "loja", CONFIG, ScriptedModel({"s1": rows[:1]}, None), session_id="s1",
                           turn_id="t", messages=messages)
        assert first.results == [("frete-sul", "learned")]
        again = learn_turn(store, "loja", CONFIG, ScriptedModel({"s1": rows}, None), session_id="s1",
                           turn_id="t", messages=messages)
        assert again.results == [("frete-sul", "replayed"), ("frete-nordeste", "learned")]
        later = learn_turn(store, "loja", CONFIG, ScriptedModel({"s2": rows[1:]}, None), session_id="s2",
                           turn_id="t", messages=messages)
        assert later.results == [("frete-nordeste", "confirmed")]
    finally:
        store.close()


def test_two_versions_of_one_claim_from_one_turn_are_still_held(tmp_path: Path) -> None:
    # a message that corrects itself in words the trust gate does not read as a correction,
    # or a model that dropped the rows' subjects: the second is no row, it is a version
    cases = [
        ("O frete custa R$ 15, ou melhor, R$ 18 para todo o Brasil.",
         [("frete-15", "O frete custa R$ 15 para todo o Brasil."),
          ("frete-18", "O frete custa R$ 18 para todo o Brasil.")]),
        ("O plano Básico custa R$ 50 e o Plus custa R$ 80.",
         [("plano-50", "O plano custa R$ 50 por mês."), ("plano-80", "O plano custa R$ 80 por mês.")]),
        ("Aceitamos devolução de produtos em promoção. Atenção: produtos em promoção não podem ser devolvidos.",
         [("devolucao-promocao", "Aceitamos devolução de produtos em promoção."),
          ("sem-devolucao-promocao", "Produtos em promoção não podem ser devolvidos.")]),
    ]
    store = SQLiteStore(tmp_path / "k.db", tokenizer=TOKENIZER)
    try:
        for n, (said, rows) in enumerate(cases):
            candidates = [{"name": name, "description": body, "type": "policy", "body": body} for name, body in rows]
            report = learn_turn(store, f"loja-{n}", CONFIG, ScriptedModel({"s1": candidates}, None), session_id="s1",
                                turn_id="t", messages=[{"role": "user", "content": "?"},
                                                       {"role": "assistant", "content": said}])
            assert [outcome for _, outcome in report.results] == ["learned", "possible_duplicate"], (said, report)
    finally:
        store.close()


def test_a_replayed_turn_does_not_read_an_earlier_turns_concept_as_its_own(tmp_path: Path) -> None:
    # found by a review: the session's earlier turn wrote frete-sul; this turn confirmed it
    # and held its sibling; tried again, the sibling is still held, not learned
    rows, said = _two_regions()
    store = SQLiteStore(tmp_path / "k.db", tokenizer=TOKENIZER)
    try:
        learn_turn(store, "loja", CONFIG, ScriptedModel({"s1": rows[:1]}, None), session_id="s1", turn_id="t1",
                   messages=said)
        first = learn_turn(store, "loja", CONFIG, ScriptedModel({"s1": rows}, None), session_id="s1", turn_id="t2",
                           messages=said)
        again = learn_turn(store, "loja", CONFIG, ScriptedModel({"s1": rows}, None), session_id="s1", turn_id="t2",
                           messages=said)
        assert [o for _, o in first.results] == ["confirmed", "possible_duplicate"]
        assert [o for _, o in again.results] == ["replayed", "replayed"]
        assert store.get("loja", "frete-nordeste") is None
    finally:
        store.close()
