"""Procedures: the canonical step sequences mined from verified traces, with their evidence.

The procedure model, below every layer that uses it: the store reads and writes it, the
procedures service mines, recalls and injects it. It imports nothing from the library.

A procedure's confidence is the lower bound of the Wilson score interval of its success
rate: a procedure that worked 3 times out of 3 is not "100 % reliable"; the bound says how
low the true success rate may plausibly be, and grows with support (1/1 -> 0.21,
3/3 -> 0.44, 10/10 -> 0.72, 95/100 -> 0.89 at 95 %). Source: Edwin B. Wilson, "Probable
Inference, the Law of Succession, and Statistical Inference", Journal of the American
Statistical Association 22 (158): 209-212, 1927.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Final

#: Prefix of every procedure id (``proc-`` + 12 hex digits of the sequence's blake2b).
ID_PREFIX: Final = "proc-"

#: `Procedure.scope` values.
TASK: Final = "task"
PART: Final = "part"

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


@dataclass(frozen=True, slots=True)
class ProcedureStep:
    """One step of a procedure.

    Attributes:
        template: the canonical call or command (placeholders for volatile values).
        signature: what a live step is matched on when the cursor follows the procedure.
        hoisted: ``(parameter, value)`` notes for targets earlier exploration found:
            ``("reservation_id", "from get_user_details")``, ``("file", "src/x.py")``.
        verify: the step is the verify command that proved the trace.
    """

    template: str
    signature: str
    hoisted: tuple[tuple[str, str], ...] = ()
    verify: bool = False

    @property
    def key(self) -> str:
        """The step's identity in the canonical sequence (template plus hoisted notes)."""
        if not self.hoisted:
            return self.template
        return self.template + " [" + "; ".join(f"{p}: {v}" for p, v in self.hoisted) + "]"

    def display(self) -> str:
        """The step as shown in a recalled block (`key`, continuation lines indented)."""
        return self.key.replace("\n", "\n   ")

    def to_json(self) -> list[Any]:
        """``[template, signature, hoisted, verify]``."""
        return [self.template, self.signature, [list(h) for h in self.hoisted], int(self.verify)]

    @classmethod
    def from_json(cls, data: Sequence[Any]) -> ProcedureStep:
        """The inverse of `to_json`."""
        template, signature, hoisted, is_verify = data
        return cls(
            template, signature, tuple((str(p), str(v)) for p, v in hoisted), bool(is_verify)
        )


def procedure_keys(steps: Sequence[ProcedureStep]) -> list[str]:
    """The id of every non-empty prefix of `steps`; the last one is the whole sequence's id.

    Ids are ``proc-`` + 12 hex digits of blake2b over the step keys, so equal sequences get
    equal ids in every process.
    """
    digest = hashlib.blake2b(digest_size=6)
    out = []
    for step in steps:
        digest.update(step.key.encode("utf-8", "surrogatepass"))
        digest.update(b"\x1e")
        out.append(ID_PREFIX + digest.copy().hexdigest())
    return out


def procedure_id(steps: Sequence[ProcedureStep]) -> str:
    """The id of the whole sequence (see `procedure_keys`); '' for no steps."""
    keys = procedure_keys(steps)
    return keys[-1] if keys else ""


@dataclass(frozen=True)
class Procedure:
    """A procedure and its evidence.

    Attributes:
        id: ``proc-`` + 12 hex digits.
        kind: ``tool`` (tool-calling traces) or ``shell`` (command traces with verify steps).
        steps: the canonical steps, in order.
        tools: tool names the steps call (a request must offer them all to recall it).
        triggers: index term -> how many successful runs' tasks contained it; only terms
            the tasks of two distinct sessions or more had (one customer's name or
            booking code is never a trigger).
        trigger_runs: successful runs the triggers were counted over.
        successes: successful runs with exactly this step sequence.
        failures: failed runs whose steps followed it (it is a prefix of theirs).
        sample_task: the canonical task text of the latest successful run, for people,
            with every word whose terms no two sessions' tasks shared masked (``…``).
        created_at: first success, UTC ISO-8601 ``Z``.
        updated_at: last change, UTC ISO-8601 ``Z``.
        scope: ``task`` when some successful run had exactly these steps, ``part`` when
            they were only ever a run of steps ending in a verified step inside longer runs
            (a sub-procedure; see `recurs`).
    """

    id: str
    kind: str
    steps: tuple[ProcedureStep, ...]
    tools: tuple[str, ...] = ()
    triggers: dict[str, int] = field(default_factory=dict)
    trigger_runs: int = 0
    successes: int = 0
    failures: int = 0
    sample_task: str = ""
    created_at: str = ""
    updated_at: str = ""
    scope: str = TASK

    @property
    def recurs(self) -> bool:
        """A whole-task procedure, or a sub-procedure at least two successful runs share."""
        return self.scope == TASK or self.successes >= 2

    @property
    def support(self) -> int:
        """Runs counted for this procedure (successes + failures)."""
        return self.successes + self.failures

    @cached_property
    def confidence(self) -> float:
        """The Wilson 95 % lower bound of the success rate (`wilson_lower_bound`)."""
        return wilson_lower_bound(self.successes, self.support)

    def trigger_weights(self) -> dict[str, float]:
        """Term -> share of the successful runs whose task contained it (0..1]."""
        runs = max(1, self.trigger_runs)
        return {t: min(1.0, c / runs) for t, c in self.triggers.items()}
