"""The write path of ``bench --scale``: `learn.learn_turn` with an instant in-process model.

Every timed turn writes. Turns come in cycles of ten, in this stated mix:

- 5 **new** concepts (a synthetic concept of its own each, under a new name: the naming
  search, the trust gate, a create, a version, the index refresh);
- 3 **confirmations** (a concept learned earlier in this run, restated in a new session:
  the same-claim check, a counts update, a version);
- 2 **conflicts** (a concept learned earlier, its claim changed under its name: the merge
  call fails at once, so the sighting is appended under ``## Contradiction``).

A candidate is the size of a rule a model writes: a synthetic concept's description (12
words) and the first 24 words of its body. The turn's transcript is a short customer
question and the agent stating the candidate's description and body, so the trust gate
admits it (a description the agent never said may name an entitlement, "desconto",
"free", that only the candidate asserts: such a candidate is quarantined, and the turn
would not write what the mix says).
The agent's own index (auto) is passed, as `Memory.learn_turn` does. What is timed is
everything but the model: screening, redaction, trust, naming, consolidation, the
store's writes and the index's refresh. The outcomes are counted and returned, so a run
whose turns did not write what they were meant to (held as possible duplicates, say)
shows it.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from insika_knowledge.bench.synthetic import corpus
from insika_knowledge.bench.timing import percentiles, time_each
from insika_knowledge.config import KnowledgeConfig, load_config
from insika_knowledge.errors import ModelFailure
from insika_knowledge.learn import ConceptSearch, learn_turn
from insika_knowledge.store import SQLiteStore

_CONFIG = load_config({"types": ["fact", "policy", "procedure", "objection"], "prompt": "Shipping by CEP."})
assert _CONFIG is not None
CONFIG: KnowledgeConfig = _CONFIG
#: A candidate's body: the first this-many words of a synthetic concept's body.
BODY_WORDS = 24
#: The mix of one cycle of ten turns: what each position writes.
MIX = ("new", "new", "confirm", "new", "conflict", "new", "confirm", "new", "confirm", "conflict")


class _Instant:
    """A model that answers at once: the candidate set before the call; no merge."""

    def __init__(self) -> None:
        self.candidate: dict[str, str] = {}

    def propose(self, request: Any) -> list[dict[str, str]]:
        return [self.candidate]

    def merge(self, request: Any) -> Any:
        raise ModelFailure("model_empty", "the bench has no merge model")


def learn_turns(store: SQLiteStore, agent: str, index: ConceptSearch,
                turns: int) -> tuple[float, float, dict[str, int]]:
    """(p50, p95) ms of `turns` writing turns in the mix of `MIX`, and their outcomes."""
    model = _Instant()
    fresh = iter(corpus(2 * turns + 40, seed=4242))
    learned: list[dict[str, str]] = []
    outcomes: Counter[str] = Counter()
    plans: list[tuple[str, dict[str, str]]] = []

    def one(i: int) -> None:
        kind, candidate = plans[i]
        model.candidate = candidate
        said = [{"role": "user", "content": "Can you tell me about this?"},
                {"role": "assistant", "content": f"{candidate['description']}. {candidate['body']}"}]
        report = learn_turn(store, agent, CONFIG, model, session_id=f"learn-{i}", turn_id="t1",
                            messages=said, index=index)
        outcomes.update(f"{kind}:{o}" for _, o in report.results)

    def plan(i: int) -> tuple[str, dict[str, str]]:
        kind = MIX[i % len(MIX)]
        if kind == "new" or not learned:
            concept = next(fresh)
            item = {"name": f"learned-{i}", "type": "fact", "description": concept.description,
                    "body": " ".join(concept.body.split()[:BODY_WORDS]) + "."}
            learned.append(item)
            return "new", item
        earlier = learned[(i * 7) % len(learned)]
        if kind == "confirm":
            return kind, dict(earlier)
        return kind, {**earlier, "body": f"{earlier['body']} Changed at turn {i}: R$ {100 + i}."}

    plans.extend(plan(i) for i in range(10 + turns))
    time_each(one, range(10))  # warm up
    outcomes.clear()
    p50, p95 = percentiles(time_each(one, range(10, 10 + turns)))
    return p50, p95, dict(outcomes)
