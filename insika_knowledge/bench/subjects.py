"""``bench --consolidation``, other subjects: is a rule about another subject of the same kind
learned beside its sibling, and a changed rule named by what changed still held?

Each case is two concepts a model proposed in two sessions, with their names (``a``, then
``b``; each a ``{"name", "description", "body"}``), and a ``label``:

- ``sibling``: two facts true together about two subjects of one kind (the fee of two
  regions, the price of two plans, the hours of two stores or weekdays): ``b`` must be
  learned as a new concept, not held as a possible duplicate of ``a``;
- ``change``: ``b`` is a changed version of ``a``'s rule, often named by what changed
  (``carrier-fedex`` / ``carrier-ups``, ``returns-30-days`` / ``returns-14-days``): ``b``
  must not be learned beside it (held as a possible duplicate, or a conflict).

Both are proposed through `Memory.propose` (the front door, with the offline semantic index
when it is installed), each stated by the agent in its session. Split by parity of the id
(even = ``dev``, odd = ``test``). ``subjects.jsonl`` was written with the rule
(`consolidate.subjects`) and both its halves were read while choosing it; ``subjects2.jsonl``
was written by a second reader who saw neither, and was scored once.
"""

from __future__ import annotations

import tempfile
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from insika_knowledge.bench.datasets import benchmark_data, jsonl_rows
from insika_knowledge.errors import UserError

#: The labels of a case.
SUBJECT_LABELS: Final = ("sibling", "change")
#: The sets in ``benchmarks/consolidation`` (see the module doc).
SUBJECT_FILES: Final = ("subjects.jsonl", "subjects2.jsonl")
_FIELDS: Final = ("name", "description", "body")


@dataclass(frozen=True, slots=True)
class SubjectCase:
    """One labelled pair of named concepts (see the module doc)."""

    id: int
    lang: str
    label: str
    a: dict[str, str]
    b: dict[str, str]

    @property
    def half(self) -> str:
        """``dev`` for an even id, ``test`` for an odd one."""
        return "dev" if self.id % 2 == 0 else "test"


def load_subjects(path: Path | None = None) -> list[SubjectCase]:
    """Read the cases (`path`, or the first of `SUBJECT_FILES`).

    Raises:
        UserError: the file is missing, or a line is not a case (file and line named).
    """
    path = path if path is not None else benchmark_data(f"consolidation/{SUBJECT_FILES[0]}")
    out: list[SubjectCase] = []
    for number, row in jsonl_rows(path, "the other-subject cases", "consolidation"):
        try:
            sides = [{k: str(row[side][k]) for k in _FIELDS} for side in ("a", "b")]
            out.append(SubjectCase(int(row["id"]), str(row["lang"]), str(row["label"]), *sides))
        except (KeyError, TypeError, ValueError) as exc:
            raise UserError(f"{path}:{number}: not an other-subject case ({exc!r})") from None
        if out[-1].label not in SUBJECT_LABELS:
            raise UserError(f"{path}:{number}: label {out[-1].label!r} is not one of {', '.join(SUBJECT_LABELS)}")
    return out


def subject_figures(cases: list[SubjectCase]) -> dict[str, dict[str, Any]]:
    """Learn each case's ``a`` then ``b`` (one agent per case, one fresh store) and count
    how ``b`` ended.

    Returns:
        ``{"dev": {"sibling": n, "sibling_learned": k, "change": m, "change_learned": j,
        "outcomes": {"label:outcome": count}}, "test": {...}}``.
    """
    from insika_knowledge.memory import Memory  # the front door loads the whole engine

    figures: dict[str, dict[str, Any]] = {half: {"outcomes": Counter()} for half in ("dev", "test")}
    with tempfile.TemporaryDirectory(prefix="insika-subjects-") as tmp:
        memory = Memory(Path(tmp) / "subjects.db")
        try:
            for case in cases:
                _propose(memory, case.id, case.a, "s-a")
                [(_, outcome)] = _propose(memory, case.id, case.b, "s-b").results
                counts = figures[case.half]["outcomes"]
                counts[f"{case.label}:{outcome}"] += 1
        finally:
            memory.close()
    for f in figures.values():
        outcomes: Counter[str] = f["outcomes"]
        for label in SUBJECT_LABELS:
            f[label] = sum(v for k, v in outcomes.items() if k.startswith(f"{label}:"))
            f[f"{label}_learned"] = outcomes[f"{label}:learned"]
        f["outcomes"] = dict(sorted(outcomes.items()))
    return figures


def _propose(memory: Any, case: int, side: dict[str, str], session: str) -> Any:
    """Propose one side as the agent stated it in its session (so the trust gate admits it)."""
    said = [{"role": "user", "content": "Can you tell me about this?"},
            {"role": "assistant", "content": f"{side['description']} {side['body']}"}]
    return memory.propose({**side, "type": "policy"}, agent=f"case-{case}", session_id=session, messages=said)


def subject_lines(figures: dict[str, dict[str, Any]], file: str = SUBJECT_FILES[0]) -> list[str]:
    """The report lines of `subject_figures` of the set `file`."""
    lines = [f"other subjects (benchmarks/consolidation/{file}: b proposed under its own name after a; "
             "dev = even ids, test = odd ids):"]
    for half, f in figures.items():
        lines.append(f"  {half}: siblings learned as new concepts {f['sibling_learned']} of {f['sibling']} "
                     f"(held as a possible duplicate otherwise); changes learned beside their rule "
                     f"{f['change_learned']} of {f['change']} (target 0)")
    return lines
