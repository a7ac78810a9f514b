"""A candidate: a concept someone proposed (a model, a tool, an agent) that passed the gates.

Only the four keys a proposer may write, name, description, type and body, and the
evidence it quotes for them (checked by the trust gate, never stored). The engine stamps
the rest (provenance, confidence, sources, occurrences, times) when it stores one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

#: The longest body a model may propose, in characters (an operator's edit may be longer).
MODEL_BODY_MAX: Final = 4000
#: The most quotes of evidence a candidate may carry, and the longest one, in characters.
EVIDENCE_MAX: Final = 8
QUOTE_MAX: Final = 1000


@dataclass(frozen=True, slots=True)
class Candidate:
    """A proposed concept that passed the gates (already redacted).

    Attributes:
        name: the normalised slug.
        description: one line, at most 300 characters.
        type: one of the agent's allowed types.
        body: markdown, at most `MODEL_BODY_MAX` characters, without a ``## Contradiction`` heading.
        evidence: the business side's words that state it, quoted verbatim by the
            proposer (at most `EVIDENCE_MAX`, checked by `insika_knowledge.trust`, never
            stored); None when it quoted none.
    """

    name: str
    description: str
    type: str
    body: str
    evidence: tuple[str, ...] | None = None
