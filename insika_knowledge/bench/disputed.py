"""``bench --consolidation``, served as disputed: a claim held under another name against a
concept on record marks that concept ``status="conflict"`` in the ``<knowledge>`` block
when it disputes it (`consolidate.naming.disputes`: other values, or another version of the
claim). A restatement must not (the agent is told not to rely on a right rule); a
contradicting claim or a policy change must.

Each labelled pair is read as the record (``a``, its description and statement) and a
claim held against it under another name (``b``); each policy change as its old rule and
its new one. Counted per label and half (even id = ``dev``); ``related`` pairs (one adds to
the other) are counted too, with no right answer.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any, Final, Protocol

from insika_knowledge.concept import Concept
from insika_knowledge.consolidate.naming import disputes

#: The label a policy change is counted under.
CHANGE: Final = "change"
#: The record's name and the held claim's (any two names: `disputes` reads the held claim's
#: name only to tell a sighting under the record's own name).
_RECORD, _HELD = "on-record", "held-under-another-name"


class _Labelled(Protocol):  # `bench.consolidation.Pair`
    @property
    def id(self) -> int: ...
    @property
    def label(self) -> str: ...
    @property
    def a(self) -> str: ...
    @property
    def b(self) -> str: ...
    @property
    def a_description(self) -> str: ...
    @property
    def b_description(self) -> str: ...


class _Changed(Protocol):  # `bench.consolidation.Change`
    @property
    def id(self) -> int: ...
    @property
    def old(self) -> dict[str, str]: ...
    @property
    def new(self) -> dict[str, str]: ...


def _record(description: str, body: str) -> Concept:
    return Concept(name=_RECORD, type="policy", description=description, body=body, provenance="observed",
                   confidence=0.6, sources=("bench",), occurrences=1, created_at="2026-01-01T00:00:00Z",
                   updated_at="2026-01-01T00:00:00Z")


def disputed_figures(pairs: Iterable[_Labelled], changes: Iterable[_Changed] = ()) -> dict[str, Any]:
    """``{half: {label: {"disputed": n, "of": m}}}`` over `pairs` and `changes` (label `CHANGE`)."""
    disputed: dict[str, Counter[str]] = {"dev": Counter(), "test": Counter()}
    total: dict[str, Counter[str]] = {"dev": Counter(), "test": Counter()}
    cases = [(p.id, p.label, (p.a_description or p.a, p.a), (p.b_description or p.b, p.b)) for p in pairs]
    cases += [(c.id, CHANGE, (c.old["description"], c.old["body"]), (c.new["description"], c.new["body"]))
              for c in changes]
    for case_id, label, old, new in cases:
        half = "dev" if case_id % 2 == 0 else "test"
        total[half][label] += 1
        disputed[half][label] += disputes(_record(*old), _HELD, *new)
    return {half: {label: {"disputed": disputed[half][label], "of": n} for label, n in sorted(total[half].items())}
            for half in ("dev", "test")}


def disputed_lines(figures: dict[str, Any], half: str) -> list[str]:
    """The report's lines for one half of `disputed_figures`."""
    counts = figures.get(half) or {}
    if not counts:
        return []
    said = ", ".join(f"{label} {c['disputed']} of {c['of']}" for label, c in counts.items())
    return ["  held under another name, the record then served as disputed (same: lower is better; "
            f"contradicting, change: higher): {said}"]
