"""Rendering: the recalled-procedure block and its token cost.

The block is one header line, the seed's
``[ACE recalled procedure — N prior runs, confidence 0.87]``, then the steps numbered from
1, one per line, each neutralised by `insika_knowledge.escaping.prompt_line`
(whitespace folded; only a ``<`` that could start a tag written ``&lt;``, so placeholders
such as ``<ITEM_IDS>`` and commands such as ``a && b > out`` reach the model as written),
so a step can open or close no prompt tag and start no line of its own. N counts the runs
behind the procedure (`insika_knowledge.procedure.Procedure.prior_runs`): for an operation,
the successful runs that made the write; for a shell procedure, the successful runs that
did these steps and the failed runs that began or ended like them. Confidence is the
Wilson lower bound (2 decimals); an operation's counts distinct tasks. For a chain of
composed procedures N is the smallest among them and confidence the product of theirs
(the chain's path confidence), and the steps run on across the chain. Steps are
never cut: a block over the budget is not shortened, it is skipped (``skipped_budget``).
A session carries the block it received unchanged (`insika_knowledge.procedures.recall.inject`),
so the bytes the provider cached stay the same.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Final

from insika_knowledge.escaping import PROCEDURE_HEADER, prompt_line
from insika_knowledge.procedure import Procedure, ProcedureStep
from insika_knowledge.procedures.recall.tokens import TokenCounter
from insika_knowledge.procedures.trace.canonical import placeholders_in

HEADER_PREFIX: Final = PROCEDURE_HEADER


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


def header(procedure: Procedure | Sequence[Procedure]) -> str:
    """The block's first line, for a procedure or a chain of them."""
    chain = [procedure] if isinstance(procedure, Procedure) else list(procedure)
    runs = min(p.prior_runs for p in chain)
    confidence = math.prod(p.confidence for p in chain)
    return f"{HEADER_PREFIX}{runs} prior runs, confidence {confidence:.2f}]"


def render(
    procedure: Procedure | Sequence[Procedure], counter: TokenCounter, max_tokens: int
) -> Block:
    """The block for `procedure` (or a chain), counted against `max_tokens` (whole steps only).

    Args:
        procedure: the recalled procedure, or the chain of composed procedures.
        counter: the token counter.
        max_tokens: the budget (``max_injection_tokens``).
    """
    chain = [procedure] if isinstance(procedure, Procedure) else list(procedure)
    steps = [step for p in chain for step in p.steps]
    text = _text(chain, steps)
    tokens = counter.count(text)
    # Over the budget, an operation's optional steps go, the least seen first (they are the
    # ones only some supporting tasks took); every other step stays whole.
    optional = sorted((_seen(s), i) for i, s in enumerate(steps) if s.note.startswith("optional"))
    while tokens > max_tokens and optional:
        _, drop = optional.pop(0)
        kept = [s for i, s in enumerate(steps) if i != drop]
        optional = [(k, i - (i > drop)) for k, i in optional]
        steps = kept
        text = _text(chain, steps)
        tokens = counter.count(text)
    return Block(text, tokens, tokens <= max_tokens)


def _seen(step: ProcedureStep) -> int:
    """The number of tasks an optional step's note counts (``optional, 3 of 5 tasks`` -> 3)."""
    words = step.note.split()
    return int(words[1]) if len(words) > 1 and words[1].isdigit() else 0


def _text(chain: Sequence[Procedure], steps: Sequence[ProcedureStep]) -> str:
    lines = [header(chain)]
    # One line per step: `inject` recognises its own block by this exact shape. Each step
    # is prompt-bound text from a trace: it can open or close no tag and forge no heading.
    # A note naming the tool a target came from names that tool's earlier step instead
    # (``order_id: from step 3``).
    first: dict[str, int] = {}
    for i, step in enumerate(steps, start=1):
        if step.hoisted:
            step = replace(step, hoisted=tuple(
                (p, f"from step {first[v[5:]]}") if v.startswith("from ") and v[5:] in first else (p, v)
                for p, v in step.hoisted))
        lines.append(f"{i}. {prompt_line(step.display(), placeholders=placeholders_in(step.template))}")
        first.setdefault(step.signature.split("(", 1)[0], i)
    return "\n".join(lines)
