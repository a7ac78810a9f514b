"""Resolving a conflict by keeping a claim its name contradicts offers a rename (issue 27)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import Clock, make_concept
from studio_pages import csrf as _csrf
from studio_pages import logged_in

from insika_knowledge.candidate import Candidate
from insika_knowledge.consolidate import contradict
from insika_knowledge.memory import Memory
from insika_knowledge.studio.resolve import rename_for

TOKEN = "operator-token-0123456789"
TENANT = "acme"
AGENT = "shop"
SCOPE = f"agent={AGENT}&tenant={TENANT}"
NAME = "devolucao-7-dias"
THIRTY = Candidate(NAME, "Returns are accepted within 30 days.", "policy",
                   "Customers may return any item within 30 days.")


@pytest.fixture
def memory(tmp_path: Path, clock: Clock) -> Iterator[Memory]:
    mem = Memory(tmp_path / "data", clock=clock)
    with mem.store(TENANT).transaction() as tx:
        base = make_concept(NAME, type="policy", description="Returns are accepted within 7 days.",
                            body="Returns within 7 days of delivery.", sources=("s1",))
        tx.add_sighting(AGENT, NAME, "s1", "t1", "extract")
        tx.put(AGENT, base, reason="extract", actor="engine", session_id="s1")
        tx.add_sighting(AGENT, NAME, "s2", "t1", "conflict")
        tx.put(AGENT, contradict(base, THIRTY, "s2", "2026-08-24T19:00:00Z"), reason="conflict", actor="engine",
               session_id="s2")
    yield mem
    mem.close()


def test_rename_for() -> None:
    assert rename_for(make_concept("devolucao-7-dias", body="Devoluções em até 30 dias.")) == "devolucao-30-dias"
    assert rename_for(make_concept("devolucao-7-dias", body="Devoluções em até 7 dias.")) is None
    assert rename_for(make_concept("devolucao-prazo", body="Devoluções em até 30 dias.")) is None
    assert rename_for(make_concept("devolucao-7-dias", body="Devoluções aceitas.")) is None


def test_keeping_a_claim_the_name_contradicts_offers_a_rename(memory: Memory) -> None:
    store = memory.store(TENANT)
    with logged_in(memory, TOKEN) as client:
        url = f"/studio/knowledge/{NAME}?{SCOPE}"
        version = store.get(AGENT, NAME).version  # type: ignore[union-attr]
        page = client.post(f"/studio/knowledge/{NAME}/resolve?{SCOPE}", data={
            "csrf": _csrf(client.get(url).text), "version": str(version), "keep": "entry-1"}).text  # redirected
        assert 'value="devolucao-30-dias"' in page and f"/studio/knowledge/{NAME}/rename" in page
        assert 'value="devolucao-30-dias"' not in client.get(url).text  # offered once
        current = store.get(AGENT, NAME)
        assert current is not None
        renamed = client.post(f"/studio/knowledge/{NAME}/rename?{SCOPE}", data={
            "csrf": _csrf(page), "version": str(current.version), "name": "devolucao-30-dias"})
        assert renamed.status_code == 200 and "Renamed devolucao-7-dias to devolucao-30-dias" in renamed.text
    assert store.get(AGENT, NAME) is None
    moved = store.get(AGENT, "devolucao-30-dias")
    assert moved is not None and "30 days" in moved.concept.body and not moved.concept.in_conflict
    assert [v.reason for v in store.versions(AGENT, "devolucao-30-dias")][0] == "edit"
