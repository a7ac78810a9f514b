"""The write path of ``bench --scale``: `learn.learn_turn` with an instant in-process model.

Each turn's model proposes one concept: every other turn a new one (an insert), else
one already learned in this run again (an update of a stored concept), so both FTS5
trigger paths run. The agent's own index (auto) is passed, as `Memory.learn_turn` does.
What is timed is everything but the model: screening, redaction, consolidation, the
store's writes and the index's refresh.
"""

from __future__ import annotations

from typing import Any

from insika_knowledge.bench.timing import percentiles, time_each
from insika_knowledge.config import KnowledgeConfig, load_config
from insika_knowledge.learn import ConceptSearch, learn_turn
from insika_knowledge.store import SQLiteStore

_CONFIG = load_config({"types": ["fact", "policy", "procedure", "objection"], "prompt": "Shipping by CEP."})
assert _CONFIG is not None
CONFIG: KnowledgeConfig = _CONFIG


class _Instant:
    """A model that answers at once: the candidate set before the call."""

    def __init__(self) -> None:
        self.candidate: dict[str, str] = {}

    def propose(self, request: Any) -> list[dict[str, str]]:
        return [self.candidate]

    def merge(self, request: Any) -> Any:  # pragma: no cover - same-claim merges need no model
        raise NotImplementedError


def learn_turn_ms(store: SQLiteStore, agent: str, index: ConceptSearch, turns: int) -> tuple[float, float]:
    """(p50, p95) ms of `turns` `learn_turn` calls against `store` (one concept proposed each)."""
    model = _Instant()
    messages = [{"role": "user", "content": "Vocês entregam em Campinas? Qual o prazo do frete?"},
                {"role": "assistant", "content": "Sim, CEPs 13000-13999 saem do CD de Campinas em 1-2 dias úteis."}]

    def one(i: int) -> None:
        name = f"learned-{i - i % 2}"  # odd turns confirm the concept the even turn before learned
        model.candidate = {"name": name, "type": "fact",
                           "description": f"Campinas CEPs ship in 1-2 business days (rule {i - i % 2}).",
                           "body": "Orders to CEP range 13000-13999 ship from the Campinas DC in 1-2 days."}
        learn_turn(store, agent, CONFIG, model, session_id=f"bench-{i}", turn_id="t1", messages=messages,
                   index=index)

    time_each(one, range(10))  # warm up
    return percentiles(time_each(one, range(10, 10 + turns)))
