"""The second pure step of consolidation: what the merge model's answer means.

When a sighting is not the same claim, the merge model is asked whether the two bodies
are ``related`` (and, if so, for one merged body) or ``contradicting``. `interpret_merge`
turns whatever came back into a `MergeVerdict`: a usable merged body (redacted for
personal data, length-bounded, no ``## Contradiction`` heading, writable as UTF-8), or
a contradiction with the reason. `merge_failed` is the verdict when the call itself failed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from insika_knowledge.concept import has_contradiction, surrogate_in
from insika_knowledge.extract.candidates import MODEL_BODY_MAX
from insika_knowledge.extract.redact import redact

#: `MergeVerdict.why` of a usable related answer.
RELATED: Final = "related"
#: `MergeVerdict.why` when the model said the two claims contradict each other.
CONTRADICTING: Final = "contradicting"
#: `MergeVerdict.why` when the answer was related but its body cannot be used.
UNUSABLE: Final = "unusable"
#: `MergeVerdict.why` prefix when the call failed (``model_failed:<kind>``).
MODEL_FAILED: Final = "model_failed"


@dataclass(frozen=True, slots=True)
class MergeVerdict:
    """The merge model's answer on one stored body and one new sighting, interpreted.

    Attributes:
        body: the merged body to write (stripped, redacted), or None: the claims are
            then treated as contradicting.
        why: `RELATED`, `CONTRADICTING`, `UNUSABLE`, or ``model_failed:<kind>``.
    """

    body: str | None
    why: str

    @property
    def related(self) -> bool:
        """True when the verdict carries a body to write."""
        return self.body is not None


def merge_limit(old_body: str, new_body: str) -> int:
    """The longest merged body accepted: the longer body twice plus 200, at most 4000 chars."""
    return min(MODEL_BODY_MAX, 2 * max(len(old_body), len(new_body)) + 200)


def usable_merge(body: object, limit: int) -> bool:
    """True when a model's merged body may replace the one on record."""
    return (
        isinstance(body, str)
        and bool(body.strip())
        and len(body) <= limit
        and not has_contradiction(body)
        and "\x00" not in body
        and surrogate_in(body) is None
    )


def interpret_merge(answer: object, old_body: str, new_body: str) -> MergeVerdict:
    """What the merge model's `answer` about `old_body` and `new_body` means.

    Args:
        answer: what the model returned: normally a ``MergeAnswer`` (``verdict`` and
            ``body`` attributes); anything else is unusable.
        old_body: the body on record the model was shown.
        new_body: the new sighting's body the model was shown.

    Returns:
        A related verdict with the merged body, redacted and stripped, when the model
        said ``related`` and the body is usable before and after redaction (see
        `usable_merge`, bounded by `merge_limit`); otherwise a contradicting verdict.
        Never raises for a malformed answer.
    """
    limit = merge_limit(old_body, new_body)
    verdict = getattr(answer, "verdict", None)
    body = getattr(answer, "body", None)
    if verdict != "related":
        return MergeVerdict(None, CONTRADICTING if verdict == "contradicting" else UNUSABLE)
    if not isinstance(body, str) or not usable_merge(body, limit):
        return MergeVerdict(None, UNUSABLE)
    cleaned = redact(body).text.strip()
    return MergeVerdict(cleaned, RELATED) if usable_merge(cleaned, limit) else MergeVerdict(None, UNUSABLE)


def merge_failed(kind: str) -> MergeVerdict:
    """The verdict when the merge call failed (`kind`: the failure's outcome or type)."""
    return MergeVerdict(None, f"{MODEL_FAILED}:{kind}")
