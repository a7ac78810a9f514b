"""A model object held to a time limit.

A model given as a spec (``openai/gpt-4o-mini``) has its client's request timeout; a
model given as an object (anything with ``propose`` and ``merge``) is the caller's code
and may block for ever. `TimedModel` runs each call in a daemon thread and stops waiting
after ``timeout_s`` seconds: the call then fails as ``model_timeout`` (retryable; the
turn is extracted again later, a merge is treated as contradicting). Python cannot stop
a thread, so a call that never returns keeps its thread; its answer, if one comes, is
dropped.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, TypeVar

from insika_knowledge.errors import ModelFailure
from insika_knowledge.extract.model import ConceptModel, ExtractionRequest, MergeAnswer, MergeRequest

#: The default limit of one call to a model object, in seconds (an HTTP model's default).
MODEL_TIMEOUT_S = 60.0

T = TypeVar("T")


class TimedModel:
    """`model` with each ``propose`` and ``merge`` call limited to `timeout_s` seconds.

    Raises (from either method):
        ModelFailure: ``model_timeout`` when the call took longer; whatever the call
            itself raised otherwise.
    """

    def __init__(self, model: ConceptModel, timeout_s: float = MODEL_TIMEOUT_S):
        self.model = model
        self.timeout_s = timeout_s
        self.reads_turn = bool(getattr(model, "reads_turn", True))  # as `learn_turn` asks it
        self.merges = bool(getattr(model, "merges", True))  # as `learn_turn` asks it

    def propose(self, request: ExtractionRequest) -> list[Any]:  # noqa: D102
        return self._call(self.model.propose, request)

    def merge(self, request: MergeRequest) -> MergeAnswer:  # noqa: D102
        merge: Callable[[MergeRequest], MergeAnswer] | None = getattr(self.model, "merge", None)
        if merge is None:
            raise ModelFailure("model_empty", "the model object has no merge method")
        return self._call(merge, request)

    def _call(self, method: Callable[[Any], T], request: Any) -> T:
        outcome: list[Any] = []  # [value] or [None, exception]
        done = threading.Event()

        def run() -> None:
            try:
                outcome.append(method(request))
            except BaseException as exc:  # handed to the caller's thread below
                outcome.extend((None, exc))
            finally:
                done.set()

        threading.Thread(target=run, name="insika-model-call", daemon=True).start()
        if not done.wait(self.timeout_s):
            raise ModelFailure("model_timeout", f"the model gave no answer in {self.timeout_s:g} s")
        if len(outcome) == 2:
            raise outcome[1]
        return outcome[0]  # type: ignore[no-any-return]


def timed(model: ConceptModel | None, timeout_s: float = MODEL_TIMEOUT_S) -> ConceptModel | None:
    """`model` held to `timeout_s` seconds per call (None stays None; a `TimedModel` is kept)."""
    if model is None or isinstance(model, TimedModel):
        return model
    return TimedModel(model, timeout_s)
