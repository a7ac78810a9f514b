"""A candidate: a concept someone proposed (a model, a tool, an agent) that passed the gates.

Only the four keys a proposer may write: name, description, type and body. The engine
stamps the rest (provenance, confidence, sources, occurrences, times) when it stores one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

#: The longest body a model may propose, in characters (an operator's edit may be longer).
MODEL_BODY_MAX: Final = 4000


@dataclass(frozen=True, slots=True)
class Candidate:
    """A proposed concept that passed the gates (already redacted).

    Attributes:
        name: the normalised slug.
        description: one line, at most 300 characters.
        type: one of the agent's allowed types.
        body: markdown, at most `MODEL_BODY_MAX` characters, without a ``## Contradiction`` heading.
    """

    name: str
    description: str
    type: str
    body: str
