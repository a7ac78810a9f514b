"""The Wilson score interval: how sure we are that a procedure works, from few runs.

A procedure that worked 3 times out of 3 is not "100 % reliable"; the Wilson interval's
lower bound says how low the true success rate may plausibly be, and grows with support
(1/1 -> 0.21, 3/3 -> 0.44, 10/10 -> 0.72, 95/100 -> 0.89 at 95 %).

Source: Edwin B. Wilson, "Probable Inference, the Law of Succession, and Statistical
Inference", Journal of the American Statistical Association 22 (158): 209-212, 1927.
"""

from __future__ import annotations

import math
from typing import Final

#: The two-sided 95 % standard normal quantile (Phi^-1(0.975)).
Z_95: Final = 1.959963984540054


def wilson_lower_bound(successes: int, trials: int, z: float = Z_95) -> float:
    """The lower bound of the Wilson score interval for a binomial proportion.

    With p = successes / trials and n = trials (Wilson 1927, JASA 22:209-212):

        lower = (p + z^2/(2n) - z * sqrt(p(1-p)/n + z^2/(4n^2))) / (1 + z^2/n)

    Args:
        successes: runs that succeeded (0 <= successes <= trials).
        trials: all runs (successes + failures).
        z: the normal quantile; the default gives a 95 % two-sided interval.

    Returns:
        The lower bound in [0, 1]; 0.0 when there are no trials.

    Raises:
        ValueError: counts are negative or successes exceed trials.
    """
    if trials < 0 or successes < 0 or successes > trials:
        raise ValueError(f"need 0 <= successes <= trials, got {successes}/{trials}")
    if trials == 0:
        return 0.0
    n = float(trials)
    p = successes / n
    z2 = z * z
    centre = p + z2 / (2 * n)
    margin = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n))
    return max(0.0, min(1.0, (centre - margin) / (1 + z2 / n)))
