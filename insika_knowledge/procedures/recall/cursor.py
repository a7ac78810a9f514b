"""Cursor tracking: follow a session's later steps through the procedure it was given.

The cursor is the number of procedure steps the session has done. Each new step that is
not exploration and did not fail is compared by signature (tool name and argument names,
or a command's first template line) with the procedure's steps from the cursor on:

- the next step, or a later one (steps skipped are left behind): it follows; the cursor
  moves past it (``matched``);
- none: it diverges (``diverged``); the cursor stays.

``adherence_delta`` for a request is matched minus diverged among its new steps, and
``divergence`` says whether any of them diverged. When the cursor reaches the end the
procedure is ``completed``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from insika_knowledge.procedure import Procedure
from insika_knowledge.procedures.trace.steps import Step


@dataclass
class Cursor:
    """A session's position in a procedure.

    Attributes:
        step: procedure steps done so far (0..len(steps)).
        matched: live steps that followed the procedure, in total.
        diverged: live steps that left it, in total.
    """

    step: int = 0
    matched: int = 0
    diverged: int = 0

    def advance(self, procedure: Procedure, steps: Iterable[Step]) -> tuple[int, int]:
        """Move through `procedure` with the session's new `steps`.

        Args:
            procedure: the recalled procedure.
            steps: new, completed steps of the session, in order.

        Returns:
            ``(matched, diverged)`` among `steps` (exploration and failed steps count in neither).
        """
        signatures = [s.signature for s in procedure.steps]
        matched = diverged = 0
        for step in steps:
            if step.read_only or step.failed or step.status == "pending":
                continue
            try:
                found = signatures.index(step.signature, self.step)
            except ValueError:
                diverged += 1
                continue
            self.step = found + 1
            matched += 1
        self.matched += matched
        self.diverged += diverged
        return matched, diverged

    def remaining(self, procedure: Procedure) -> int:
        """Procedure steps still ahead of the cursor."""
        return max(0, len(procedure.steps) - self.step)

    @property
    def adherence(self) -> float | None:
        """Matched / (matched + diverged) so far, or None before any counted step."""
        total = self.matched + self.diverged
        return self.matched / total if total else None
