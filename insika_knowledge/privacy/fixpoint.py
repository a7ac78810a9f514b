"""Rewriting text to a fixed point: what makes scrubbing and canonicalisation idempotent.

A replacement can expose or complete another one (a port after a replaced host, a secret's
context after a replaced key), so the rewriters here run their pass again until it changes
nothing, with a cap on the rounds.
"""

from __future__ import annotations

from collections.abc import Callable


def fixed_point(step: Callable[[str], str], text: str, rounds: int) -> str:
    """`step` applied to `text` again and again until it changes nothing, at most `rounds` times.

    Args:
        step: one rewriting pass, text -> text.
        text: the text to rewrite.
        rounds: the most passes run (the last pass's result is returned when it is reached).

    Returns:
        The rewritten text; `text` itself (the same object) when the first pass changes nothing.
    """
    for _ in range(rounds):
        result = step(text)
        if result == text:
            break
        text = result
    return text
