"""Recall: match a new task against the triggers of the recallable procedures.

Matcher ``terms``: the task (the first user message, canonicalised like the triggers) is
analysed by the project's tokeniser (`insika_knowledge.analysis.text.terms`). Each procedure's
trigger is a weight per term: the share of its successful runs whose task contained the
term. The match score is the cosine between the task's vector (each term weighted by its
inverse document frequency over the indexed procedures, ``ln((N+1)/(df+0.5))`` divided
by its largest possible value, so a term no procedure knows weighs 1 and a term every
procedure has weighs about 0) and the procedure's trigger vector; it lies in [0, 1].

Only procedures whose confidence (Wilson lower bound) reaches ``min_confidence`` are in
the index; a procedure whose runs start failing falls below it and drops out. A
tool-calling procedure is only recalled when the request offers every tool its steps
call. The best score at or above ``min_match_score`` is a hit; ties go to the higher
confidence, then the larger support, then the smaller id.

An inverted index (term -> {slot: weight}) keeps a recall proportional to the postings of
the task's terms, not to the number of procedures: terms are taken rarest first; a term
held by more than 1/16 of the procedures (and over 256) only adds to the candidates the
rarer terms found (a procedure that shares nothing but frequent terms with the task
cannot score well); terms with a weight under 0.02 are skipped.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Final

from insika_knowledge.analysis.text import terms
from insika_knowledge.procedure import Procedure
from insika_knowledge.procedures.trace.canonical import canonical_text

MATCHER: Final = "terms"
_MIN_TERM_WEIGHT: Final = 0.02
_COMMON_MIN_DF: Final = 256
_COMMON_SHARE: Final = 16


@dataclass(frozen=True)
class Recall:
    """The outcome of one recall.

    Attributes:
        procedure: the recalled procedure (None on a miss).
        score: the match score of the best eligible procedure (0.0 when none shares a term).
        matcher: the matcher's name (``terms``).
    """

    procedure: Procedure | None
    score: float
    matcher: str = MATCHER

    @property
    def hit(self) -> bool:
        """A procedure was recalled."""
        return self.procedure is not None


class RecallIndex:
    """The recallable procedures, indexed by trigger term, in memory.

    Args:
        min_confidence: the Wilson lower bound a procedure needs to be recalled.
        min_match_score: the score a match needs to be a hit (0..1).
    """

    def __init__(self, min_confidence: float, min_match_score: float):
        self.min_confidence = min_confidence
        self.min_match_score = min_match_score
        self._slots: list[Procedure | None] = []
        self._norms: list[float] = []
        self._slot_of: dict[str, int] = {}
        self._free: list[int] = []
        self._postings: dict[str, dict[int, float]] = {}
        self._all: dict[str, Procedure] = {}

    def __len__(self) -> int:
        return len(self._slot_of)

    def get(self, procedure_id: str) -> Procedure | None:
        """The latest known version of a procedure (recallable or not), or None."""
        return self._all.get(procedure_id)

    def is_recallable(self, procedure_id: str) -> bool:
        """The procedure is in the index (its confidence reaches the bound)."""
        return procedure_id in self._slot_of

    def update(self, procedures: Iterable[Procedure]) -> None:
        """Add or replace procedures; one below ``min_confidence`` leaves the index."""
        for procedure in procedures:
            self._remove(procedure.id)
            self._all[procedure.id] = procedure
            if procedure.confidence < self.min_confidence or not procedure.steps:
                continue
            weights = procedure.trigger_weights()
            slot = self._free.pop() if self._free else len(self._slots)
            if slot == len(self._slots):
                self._slots.append(procedure)
                self._norms.append(0.0)
            else:
                self._slots[slot] = procedure
            self._norms[slot] = math.sqrt(sum(w * w for w in weights.values())) or 1.0
            self._slot_of[procedure.id] = slot
            for term, weight in weights.items():
                self._postings.setdefault(term, {})[slot] = weight

    def _remove(self, procedure_id: str) -> None:
        slot = self._slot_of.pop(procedure_id, None)
        if slot is None:
            return
        old = self._slots[slot]
        assert old is not None
        for term in old.triggers:
            posting = self._postings.get(term)
            if posting is not None:
                posting.pop(slot, None)
                if not posting:
                    del self._postings[term]
        self._slots[slot] = None
        self._free.append(slot)

    def recall(
        self, task: str, tools: Sequence[str] | None = None, *, prefer: str | None = None
    ) -> Recall:
        """The best procedure for `task`.

        Args:
            task: the new task's text (raw; it is canonicalised here like the triggers).
            tools: the tools the request offers; None skips the tool check.
            prefer: a procedure the session already follows: while it is recallable it is
                returned (with its own score), whatever else matches.

        Returns:
            A `Recall`: a hit when the best eligible score reaches ``min_match_score``.
        """
        return self.recall_terms(terms(canonical_text(task[:2000])), tools, prefer=prefer)

    def recall_terms(
        self, query: Iterable[str], tools: Sequence[str] | None = None, *, prefer: str | None = None
    ) -> Recall:
        """`recall` for already analysed query terms."""
        n = len(self._slot_of)
        if n == 0:
            return Recall(None, 0.0)
        query = tuple(query)
        scale = math.log((n + 1) / 0.5)
        postings = self._postings
        scores: dict[int, float] = {}
        query_norm2 = 0.0
        weighted = []
        for term in query:
            posting = postings.get(term)
            df = len(posting) if posting else 0
            weight = math.log((n + 1) / (df + 0.5)) / scale
            query_norm2 += weight * weight
            if posting and weight >= _MIN_TERM_WEIGHT:
                weighted.append((df, weight, posting))
        weighted.sort(key=lambda item: item[0])
        common = max(_COMMON_MIN_DF, n // _COMMON_SHARE)
        for df, weight, posting in weighted:
            get = scores.get
            if df > common and scores:
                # A frequent term only adds to the candidates the rarer terms found.
                pget = posting.get
                for slot in scores:
                    w = pget(slot)
                    if w is not None:
                        scores[slot] += weight * w
                continue
            for slot, w in posting.items():
                scores[slot] = get(slot, 0.0) + weight * w
        query_norm = math.sqrt(query_norm2) or 1.0
        pinned = self._slot_of.get(prefer) if prefer else None
        if pinned is not None:
            procedure = self._slots[pinned]
            assert procedure is not None
            return Recall(
                procedure, min(1.0, scores.get(pinned, 0.0) / (query_norm * self._norms[pinned]))
            )
        if not scores:
            return Recall(None, 0.0)
        offered = set(tools) if tools is not None else None
        norms, slots = self._norms, self._slots
        best_raw = -1.0
        best_key: tuple[float, int, str] = (0.0, 0, "")
        best_procedure: Procedure | None = None
        for slot, raw in scores.items():
            value = raw / norms[slot]
            if value < best_raw - 1e-12:
                continue
            procedure = slots[slot]
            assert procedure is not None
            if offered is not None and procedure.tools and not offered.issuperset(procedure.tools):
                continue
            key = (procedure.confidence, procedure.support, procedure.id)
            if (
                value > best_raw + 1e-12
                or (key[0], key[1]) > (best_key[0], best_key[1])
                or ((key[0], key[1]) == (best_key[0], best_key[1]) and key[2] < best_key[2])
            ):
                best_raw, best_key, best_procedure = value, key, procedure
        best = None if best_procedure is None else (best_raw / query_norm,)
        if best is None or best_procedure is None:
            return Recall(None, 0.0)
        score = min(1.0, best[0])
        if score + 1e-12 < self.min_match_score:
            return Recall(None, score)
        return Recall(best_procedure, score)
