from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from insika_knowledge.procedure import Z_95, Procedure, wilson_lower_bound

# Hand-checked with the closed form (Wilson 1927) and the scipy values below, 4 decimals.
TABLE = {
    (0, 0): 0.0,
    (0, 1): 0.0,
    (1, 1): 0.2065,
    (2, 2): 0.3424,
    (3, 3): 0.4385,
    (4, 4): 0.5101,
    (5, 10): 0.2366,
    (8, 10): 0.4902,
    (10, 10): 0.7225,
    (15, 16): 0.7167,
    (95, 100): 0.8882,
    (1, 5): 0.0362,
}


def closed_form(k: int, n: int, z: float = Z_95) -> float:
    p = k / n
    return (p + z * z / (2 * n) - z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))) / (
        1 + z * z / n
    )


def test_hand_checked_table() -> None:
    for (k, n), expected in TABLE.items():
        assert wilson_lower_bound(k, n) == pytest.approx(expected, abs=5e-5), (k, n)


def test_rejects_impossible_counts() -> None:
    for k, n in ((-1, 3), (4, 3), (0, -1)):
        with pytest.raises(ValueError):
            wilson_lower_bound(k, n)


@settings(max_examples=300)
@given(st.integers(1, 5000).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))))
def test_matches_the_formula_and_is_a_lower_bound(case: tuple[int, int]) -> None:
    k, n = case
    bound = wilson_lower_bound(k, n)
    assert bound == pytest.approx(max(0.0, closed_form(k, n)), abs=1e-12)
    assert 0.0 <= bound <= k / n + 1e-12


@settings(max_examples=200)
@given(st.integers(0, 300), st.integers(0, 300))
def test_more_successes_raise_it_and_more_failures_lower_it(k: int, f: int) -> None:
    base = wilson_lower_bound(k, k + f)
    assert wilson_lower_bound(k + 1, k + f + 1) >= base - 1e-12
    if k + f > 0:
        assert wilson_lower_bound(k, k + f + 1) <= base + 1e-12


@settings(max_examples=300, deadline=None)
@given(st.integers(1, 2000).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))))
def test_matches_scipy(case: tuple[int, int]) -> None:
    stats = pytest.importorskip("scipy.stats")
    k, n = case
    expected = stats.binomtest(k, n).proportion_ci(confidence_level=0.95, method="wilson").low
    assert wilson_lower_bound(k, n) == pytest.approx(max(0.0, expected), abs=1e-9)


def test_procedure_confidence_is_the_lower_bound_of_its_runs() -> None:
    procedure = Procedure(id="proc-x", kind="tool", steps=(), successes=15, failures=1)
    assert procedure.support == 16
    assert procedure.confidence == pytest.approx(wilson_lower_bound(15, 16))
