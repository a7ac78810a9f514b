"""A session id that holds personal data (a WhatsApp number, an e-mail) is stored as a pseudonym.

Engines name conversations after their customers; such an id used to become every
sighting's source, the quarantine ledger's and the extraction record's, in the database
file and its WAL. Now it is kept as its redacted text plus a keyed digest: one
conversation keeps one id (a replayed turn counts once), two customers never share one.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from insika_knowledge import Memory
from insika_knowledge.backfill import backfill
from insika_knowledge.config import load_config
from insika_knowledge.hookspecs import AgentSpec, Turn
from insika_knowledge.ids import SESSION_ID_MAX, session_id_problem
from insika_knowledge.learn import learn_turn, stored_ids
from insika_knowledge.plugin import KnowledgePlugin
from insika_knowledge.privacy.pseudonyms import LONGEST, pseudonymous
from insika_knowledge.privacy.redact import redact
from insika_knowledge.store.base import Store

AGENT = "loja"
CONFIG = load_config({"types": ["fact", "policy", "procedure", "objection"]})
KEY = bytes(range(32))
PHONE = "5511987654321"
SAID = [{"role": "user", "content": "Vocês entregam em Campinas?"},
        {"role": "assistant", "content": "Entregamos em Campinas em 2 dias úteis."}]
ITEM = {"name": "entrega-campinas", "type": "fact", "description": "Entrega em Campinas em 2 dias úteis.",
        "body": "Entregamos em Campinas em 2 dias úteis."}


class _Model:
    def propose(self, request: Any) -> list[dict[str, Any]]:
        return [dict(ITEM)]

    def merge(self, request: Any) -> Any:
        raise RuntimeError("no merge model")


@pytest.mark.parametrize("given_id, kind", [
    (f"whatsapp:{PHONE}", "phone"), ("wa-+55 11 98765-4321", "phone"), ("maria.silva@gmail.com", "email"),
    ("cpf-529.982.247-25", "cpf"), ("Maria Souza <maria@example.com>", "email"),
])
def test_an_id_with_personal_data_becomes_its_redacted_text_and_a_keyed_digest(given_id: str, kind: str) -> None:
    stored = pseudonymous(given_id, KEY)
    assert f"[{kind}]" in stored and redact(stored).counts == {}
    assert pseudonymous(given_id, KEY) == stored  # one conversation, one id
    assert pseudonymous(stored, KEY) == stored  # a pseudonym is its own
    assert pseudonymous(given_id, bytes(32)) != stored  # the digest is the tenant key's
    assert session_id_problem(stored) is None


def test_a_pseudonym_fits_the_longest_session_id() -> None:
    assert LONGEST == SESSION_ID_MAX


@pytest.mark.parametrize("given_id", [
    # found by a newcomer's attack: ids the text redactor read as no one's (no context)
    "whatsapp:14155550132", "conv-5511987654321-1", "user5511987654321", "chat#11987654321", "joana@gmail.com-2",
    "cpf52998224725", "529.982.247-25-1", "1\u03011987654321", "00000000000000000005511987654321",
    "\uff11\uff11\uff19\uff18\uff17\uff16\uff15\uff14\uff13\uff12\uff11-1", "telegram:123456789",
])
def test_an_id_fails_closed_on_any_long_number_or_address(given_id: str) -> None:
    stored = pseudonymous(given_id, KEY)
    assert "~" in stored and pseudonymous(stored, KEY) == stored
    digits = "".join(c for c in given_id if c.isascii() and c.isdigit())
    assert not any(run in stored for run in (digits[:8], digits[-8:]) if len(run) == 8)
    assert "joana" not in stored


@pytest.mark.parametrize("given_id", ["sess-01", "demo/sess-02", "2024-05-15T10:00:00Z",
                                      "tau2-bench/airline/gpt-4.1/task10/trial0",
                                      "d-3f9a1c2b4d5e6f70", "9f0c2a1e-7c4b-4a8e-9a53-1f2d3c4b5a6d",
                                      "9f0c2a1e7c4b4a8e9a531f2d3c4b5a6d"])
def test_an_id_without_personal_data_is_kept_as_given(given_id: str) -> None:
    assert pseudonymous(given_id, KEY) == given_id


@settings(max_examples=60, deadline=None)
@given(st.text("0123456789", min_size=8, max_size=9), st.text("0123456789", min_size=8, max_size=9),
       st.sampled_from(["whatsapp:55119", "wa:+55 21 9", "tel-+1 415 5"]),
       st.text(st.characters(codec="ascii", categories=["L", "N"]), max_size=150))
def test_two_customers_never_share_an_id_and_no_digit_run_survives(a: str, b: str, prefix: str,
                                                                  padding: str) -> None:
    first, second = pseudonymous(prefix + a, KEY), pseudonymous(prefix + b, KEY)
    if redact(prefix + a).counts and redact(prefix + b).counts:
        assert (first == second) == (a == b)
        assert a not in first and b not in second
    long_one = pseudonymous(f"{padding}{prefix}{a}{padding}", KEY)
    assert len(long_one) <= SESSION_ID_MAX and session_id_problem(long_one) is None


def _stored_bytes(folder: Path) -> bytes:
    return b"".join(p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file())


def test_a_phone_number_session_id_reaches_no_stored_byte_and_a_replay_still_counts_once(
        store: Store, tmp_path: Path) -> None:
    session = f"whatsapp:{PHONE}"
    first = learn_turn(store, AGENT, CONFIG, _Model(), session_id=session, turn_id="t1", messages=SAID)
    again = learn_turn(store, AGENT, CONFIG, _Model(), session_id=session, turn_id="t1", messages=SAID)
    other = learn_turn(store, AGENT, CONFIG, _Model(), session_id="whatsapp:5521998765432", turn_id="t1",
                       messages=SAID)
    assert [o for _, o in first.results] == ["learned"]
    assert [o for _, o in again.results] == ["replayed"]
    assert [o for _, o in other.results] == ["confirmed"]  # another customer: a second sighting
    stored_session = stored_ids(store, session, "t1")[0]
    assert first.session_id == stored_session and stored_session.startswith("whatsapp:[phone]~")
    concept = store.get(AGENT, "entrega-campinas")
    assert concept is not None and len(set(concept.concept.sources)) == 2
    assert stored_session in concept.concept.sources and all(PHONE not in s for s in concept.concept.sources)
    assert store.extraction(AGENT, stored_session, "t1") is not None
    assert {s.session_id for s in store.sightings(AGENT, "entrega-campinas")} >= {stored_session}
    if isinstance(getattr(store, "path", None), Path):  # SQLite: the file and its WAL
        assert PHONE.encode() not in _stored_bytes(tmp_path)


def test_the_pseudonym_key_is_the_tenants_own_and_survives_reopening(tmp_path: Path) -> None:
    with Memory(tmp_path / "data") as memory:
        key = memory.store("a").pseudonym_key()
        assert len(key) == 32 and memory.store("b").pseudonym_key() != key
    with Memory(tmp_path / "data") as memory:
        assert memory.store("a").pseudonym_key() == key


def test_backfill_finds_a_phone_number_session_it_already_learned(tmp_path: Path) -> None:
    sessions = tmp_path / "sessions.jsonl"
    sessions.write_text(json.dumps({"session_id": f"whatsapp:{PHONE}", "messages": SAID}) + "\n", encoding="utf-8")
    with Memory(tmp_path / "data") as memory:
        first = backfill(memory, AGENT, CONFIG, sessions, model=_Model())
        again = backfill(memory, AGENT, CONFIG, sessions, model=_Model())
        assert [s.status for s in first.statuses] == ["done"]
        assert [s.status for s in again.statuses] == ["skipped"]
        memory.close()
        assert PHONE.encode() not in _stored_bytes(tmp_path / "data")


class _Idle:
    def propose(self, request: Any) -> list[Any]:
        return []

    def merge(self, request: Any) -> Any:
        raise NotImplementedError


def test_a_queued_turn_of_a_phone_number_session_is_recorded_under_its_pseudonym(tmp_path: Path) -> None:
    memory = Memory(tmp_path / "data")
    memory._models["idle"] = _Idle()
    plugin = KnowledgePlugin(memory)
    try:
        plugin.after_turn(Turn(AgentSpec(AGENT, "t", {"model": "idle"}), f"whatsapp:{PHONE}", "t1", SAID))
        assert plugin.drain(timeout_s=20)
        store = memory.store("t")
        session = stored_ids(store, f"whatsapp:{PHONE}", "t1")[0]
        assert store.extraction(AGENT, session, "t1") is not None
        assert store.extraction(AGENT, f"whatsapp:{PHONE}", "t1") is None
    finally:
        plugin.close(timeout_s=10)
    assert PHONE.encode() not in _stored_bytes(tmp_path / "data")



def test_a_relayed_session_named_by_a_phone_number_is_captured_under_its_pseudonym(tmp_path: Path) -> None:
    from insika_knowledge.procedures.config import ProceduresConfig
    from insika_knowledge.procedures.skill import ProceduralMemory
    from insika_knowledge.store.sqlite.procedures import ProcedureStore

    memory = ProceduralMemory(ProcedureStore(tmp_path / "t.db"), ProceduresConfig(mode="prod"))
    messages = [{"role": "user", "content": "Cancel my booking, please."}]
    _, stage = memory.handle_request({"messages": messages}, {"x-ace-session": f"whatsapp:{PHONE}"})
    assert stage is not None and stage.session_id is not None and stage.session_id.startswith("whatsapp:[phone]~")
    assert memory.session(f"whatsapp:{PHONE}") is not None  # read back by the id the caller knows
    memory.store.close()
    assert PHONE.encode() not in _stored_bytes(tmp_path)
