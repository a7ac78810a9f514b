"""Rendering: the recalled-procedure block and its token cost.

The block is one header line, ``[recalled procedure — N prior runs, confidence 0.87]``
(N = the procedure's support, confidence = its Wilson lower bound, 2 decimals), then the
steps numbered from 1, one per line, each neutralised by `insika_knowledge.escaping.prompt_line`
(whitespace folded, ``&<>`` escaped), so a step can open or close no prompt tag and
start no heading. Steps are
never cut: a block over the budget is not shortened, it is skipped (``skipped_budget``).
The block does not change while a session moves through the procedure, so re-injecting it
on every turn keeps the bytes the provider has cached.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from insika_knowledge.escaping import prompt_line
from insika_knowledge.procedure import Procedure
from insika_knowledge.procedures.recall.tokens import TokenCounter

HEADER_PREFIX: Final = "[recalled procedure — "


@dataclass(frozen=True)
class Block:
    """A rendered block.

    Attributes:
        text: the block.
        tokens: its cost by the configured counter.
        fits: ``tokens <= max_injection_tokens``.
    """

    text: str
    tokens: int
    fits: bool


def header(procedure: Procedure) -> str:
    """The block's first line."""
    runs = procedure.support
    plural = "s" if runs != 1 else ""
    return f"{HEADER_PREFIX}{runs} prior run{plural}, confidence {procedure.confidence:.2f}]"


def render(procedure: Procedure, counter: TokenCounter, max_tokens: int) -> Block:
    """The block for `procedure`, counted against `max_tokens` (whole steps only).

    Args:
        procedure: the recalled procedure.
        counter: the token counter.
        max_tokens: the budget (``max_injection_tokens``).
    """
    lines = [header(procedure)]
    # One line per step: `inject` recognises its own block by this exact shape. Each step
    # is prompt-bound text from a trace: it can open or close no tag and forge no heading.
    lines.extend(f"{i}. {prompt_line(step.display())}" for i, step in enumerate(procedure.steps, start=1))
    text = "\n".join(lines)
    tokens = counter.count(text)
    return Block(text, tokens, tokens <= max_tokens)
