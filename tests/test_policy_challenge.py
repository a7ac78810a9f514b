"""Issue 26: a sighting that contradicts a ``provenance: policy`` concept keeps its claim.

The engine never changes a policy's body, so the claim used to be stored nowhere and the
concept appeared neither in `Memory.conflicts` nor in the Studio's conflict filter. Now
the claim is held for review under the concept's own name (a challenge), and the concept
counts as in conflict until a person resolves it.
"""

from __future__ import annotations

from pathlib import Path

from insika_knowledge.config import KnowledgeConfig
from insika_knowledge.events import EventBus, Recorder
from insika_knowledge.memory import Memory

POLICY = """---
name: return-fee
description: Return shipping costs R$ 15.
type: policy
---

Return shipping costs R$ 15 per order.
"""


def test_a_challenged_policy_keeps_its_body_and_the_claim_for_review(tmp_path: Path, database: str | None) -> None:
    # On both backends: SQLite files (database None), and a PostgreSQL database.
    events, recorder = EventBus(), Recorder()
    events.subscribe(recorder)
    memory = Memory(tmp_path, events=events, database=database)
    memory.put(POLICY, agent="loja")
    said = [{"role": "user", "content": "How much is return shipping?"},
            {"role": "assistant", "content": "Return shipping costs R$ 20 per order now."}]
    report = memory.propose({"name": "return-fee", "description": "Return shipping costs R$ 20.",
                             "type": "policy", "body": "Return shipping costs R$ 20 per order."},
                            agent="loja", session_id="s2", messages=said, config=KnowledgeConfig())
    assert report.results == [("return-fee", "conflict")]
    assert recorder.named("knowledge_conflict") == [{"name": "return-fee", "agent": "loja"}]
    store = memory.store()
    stored = store.get("loja", "return-fee")
    assert stored is not None and stored.concept.body == "Return shipping costs R$ 15 per order."
    assert stored.version == 1  # the body, and the record, untouched
    (held,) = store.possible_duplicates("loja", "return-fee")
    assert (held.name, held.duplicate_of, held.session_id) == ("return-fee", "return-fee", "s2")
    assert held.body == "Return shipping costs R$ 20 per order."
    assert [c.name for c in memory.conflicts(agent="loja")] == ["return-fee"]
    page = store.concept_page("loja", status="conflict")
    assert [r.concept.name for r in page.rows] == ["return-fee"] and page.counts.status["conflict"] == 1
    assert store.challenged_names("loja") == ["return-fee"]
    memory.close()


def test_a_replayed_challenge_is_held_once(tmp_path: Path, database: str | None) -> None:
    memory = Memory(tmp_path, database=database)
    memory.put(POLICY, agent="loja")
    said = [{"role": "assistant", "content": "Return shipping costs R$ 20 per order now."}]
    item = {"name": "return-fee", "description": "Return shipping costs R$ 20.", "type": "policy",
            "body": "Return shipping costs R$ 20 per order."}
    for _ in range(2):
        memory.propose(item, agent="loja", session_id="s2", turn_id="t", messages=said)
    assert len(memory.store().possible_duplicates("loja", "return-fee")) == 1
    memory.close()
