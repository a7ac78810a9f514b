"""The timing helpers every benchmark of the project shares, and its step runner."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Iterable, Sequence
from typing import TypeVar

T = TypeVar("T")
#: A progress callback: ``(what is measured now, steps done, steps in all)``.
OnStep = Callable[[str, int, int], None]


def percentiles(samples_ms: list[float]) -> tuple[float, float]:
    """(p50, p95) of `samples_ms`; every benchmark of the project reports these two.

    Args:
        samples_ms: at least one sample, in milliseconds (any order).

    Returns:
        ``(median, 95th percentile)`` in milliseconds; the 95th is the sample at rank
        ``int(0.95 * n)`` of the sorted samples (the largest when n < 20).

    Raises:
        statistics.StatisticsError: `samples_ms` is empty.
    """
    ordered = sorted(samples_ms)
    return statistics.median(ordered), ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]


def time_each(call: Callable[[T], object], items: Iterable[T]) -> list[float]:
    """Milliseconds each `call(item)` took, in item order (monotonic nanosecond clock)."""
    samples = []
    for item in items:
        start = time.perf_counter_ns()
        call(item)
        samples.append((time.perf_counter_ns() - start) / 1e6)
    return samples


def run_steps(steps: Sequence[tuple[str, Callable[[], T]]], on_step: OnStep | None = None) -> list[T]:
    """Run each ``(label, step)`` in order and return the steps' results, in order.

    `on_step` (for a progress display) is called before each step with ``(label, steps
    done, steps in all)``, and once more with ``("done", n, n)`` at the end.
    """
    results = []
    for done, (label, step) in enumerate(steps):
        if on_step is not None:
            on_step(label, done, len(steps))
        results.append(step())
    if on_step is not None:
        on_step("done", len(steps), len(steps))
    return results
