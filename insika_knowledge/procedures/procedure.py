"""Procedures: the canonical step sequences mined from verified traces, with their evidence."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Final

from insika_knowledge.procedures.wilson import wilson_lower_bound

#: Prefix of every procedure id (``proc-`` + 12 hex digits of the sequence's blake2b).
ID_PREFIX: Final = "proc-"


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
        triggers: index term -> how many successful runs' tasks contained it.
        trigger_runs: successful runs the triggers were counted over.
        successes: successful runs with exactly this step sequence.
        failures: failed runs whose steps followed it (it is a prefix of theirs).
        sample_task: the canonical task text of the first successful run (for people).
        created_at: first success, UTC ISO-8601 ``Z``.
        updated_at: last change, UTC ISO-8601 ``Z``.
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


def tools_of(steps: Iterable[Any]) -> tuple[str, ...]:
    """Sorted distinct tool names of the tool-kind `steps` (`procedures.steps.Step` values)."""
    return tuple(sorted({s.name for s in steps if s.kind == "tool"}))
