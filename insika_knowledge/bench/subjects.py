"""``bench --consolidation``, other subjects: is a rule about another subject of the same kind
learned, and a changed rule named by what changed held?

Each case is two concepts a model proposed, with their names (``a`` and ``b``; each a
``{"name", "description", "body"}``), and a ``label``:

- ``sibling``: two facts true together about two subjects of one kind (the fee of two
  regions, the price of two plans, the hours of two stores or weekdays);
- ``change``: ``b`` is a changed version of ``a``'s rule, often named by what changed
  (``carrier-fedex`` / ``carrier-ups``, ``returns-30-days`` / ``returns-14-days``).

Two runs, through `Memory.propose` and `learn_turn` with the agent stating each claim (so
the trust gate admits it), the offline semantic index on when it is installed:

- **one turn**: one agent message states both siblings and the model proposes both (the
  rows of a table): both must be learned (`consolidate.name_sighting`'s ``written``);
- **later sessions**: ``a`` in one session, ``b`` in a later one. No rule tells a sibling
  from a change reworded under a drifting name (one was tried and taken back: see
  ``benchmarks/README.md``), so both are held as possible duplicates: a change must never
  be learned beside its rule, and the siblings held are the cost of that.

Split by parity of the id (even = ``dev``, odd = ``test``). ``subjects.jsonl`` (71 cases,
written with the tried rule in mind), ``subjects2.jsonl`` (120, a second reader who saw
neither, told to vary the wording and name changes by what changed), ``subjects3.jsonl`` (81,
a third reader's attack on the tried rule).
"""

from __future__ import annotations

import tempfile
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from insika_knowledge.bench.datasets import benchmark_data, half_of, labelled_cases
from insika_knowledge.config import KnowledgeConfig
from insika_knowledge.extract.given import GivenModel

#: The labels of a case.
SUBJECT_LABELS: Final = ("sibling", "change")
#: The sets in ``benchmarks/consolidation`` (see the module doc).
SUBJECT_FILES: Final = ("subjects.jsonl", "subjects2.jsonl", "subjects3.jsonl")
_FIELDS: Final = ("name", "description", "body")


@dataclass(frozen=True, slots=True)
class SubjectCase:
    """One labelled pair of named concepts (see the module doc); its half is
    `bench.datasets.half_of` of its id.
    """

    id: int
    lang: str
    label: str
    a: dict[str, str]
    b: dict[str, str]


def load_subjects(path: Path | None = None) -> list[SubjectCase]:
    """Read the cases (`path`, or the first of `SUBJECT_FILES`).

    Raises:
        UserError: the file is missing, or a line is not a case (file and line named).
    """
    path = path if path is not None else benchmark_data(f"consolidation/{SUBJECT_FILES[0]}")
    return labelled_cases(path, "the other-subject cases", "an other-subject case", "consolidation", _case,
                          SUBJECT_LABELS)


def _case(row: Any) -> SubjectCase:
    sides = [{k: str(row[side][k]) for k in _FIELDS} for side in ("a", "b")]
    return SubjectCase(int(row["id"]), str(row["lang"]), str(row["label"]), *sides)


def subject_figures(cases: list[SubjectCase]) -> dict[str, dict[str, Any]]:
    """Run each case both ways (module doc; one agent per case and run, one fresh store).

    Returns:
        ``{"dev": {"sibling": n, "sibling_learned": k, "sibling_one_turn": j, "change": m,
        "change_learned": i, "outcomes": {"label:outcome": count}}, "test": {...}}``:
        ``*_learned`` counts ``b`` learned as a second concept in a later session,
        ``sibling_one_turn`` the siblings both learned from one message.
    """
    from insika_knowledge.memory import Memory  # the front door loads the whole engine

    figures: dict[str, dict[str, Any]] = {half: {"outcomes": Counter(), "sibling_one_turn": 0}
                                          for half in ("dev", "test")}
    with tempfile.TemporaryDirectory(prefix="insika-subjects-") as tmp:
        memory = Memory(Path(tmp) / "subjects.db")
        try:
            for case in cases:
                _propose(memory, f"later-{case.id}", [case.a], "s-a")
                results = _propose(memory, f"later-{case.id}", [case.b], "s-b").results
                outcome = results[0][1] if results else "dropped"  # the screen may drop it
                figures[half_of(case.id)]["outcomes"][f"{case.label}:{outcome}"] += 1
                if case.label == "sibling":
                    both = _propose(memory, f"turn-{case.id}", [case.a, case.b], "s-ab").results
                    figures[half_of(case.id)]["sibling_one_turn"] += [o for _, o in both] == ["learned", "learned"]
        finally:
            memory.close()
    for f in figures.values():
        outcomes: Counter[str] = f["outcomes"]
        for label in SUBJECT_LABELS:
            f[label] = sum(v for k, v in outcomes.items() if k.startswith(f"{label}:"))
            f[f"{label}_learned"] = outcomes[f"{label}:learned"]
        f["outcomes"] = dict(sorted(outcomes.items()))
    return figures


def _propose(memory: Any, agent: str, sides: list[dict[str, str]], session: str) -> Any:
    """Learn `sides` in one turn, each stated by the agent in its one message."""
    said = " ".join(f"{side['description']}. {side['body']}" for side in sides)
    messages = [{"role": "user", "content": "Can you tell me about this?"}, {"role": "assistant", "content": said}]
    model = GivenModel([{**side, "type": "policy"} for side in sides])
    return memory.learn_turn(agent, KnowledgeConfig(), session_id=session, turn_id="t", messages=messages,
                             model=model)


def subject_lines(figures: dict[str, dict[str, Any]], file: str = SUBJECT_FILES[0]) -> list[str]:
    """The report lines of `subject_figures` of the set `file`."""
    lines = [f"other subjects (benchmarks/consolidation/{file}; dev = even ids, test = odd ids):"]
    for half, f in figures.items():
        lines.append(f"  {half}: siblings stated in one message both learned {f['sibling_one_turn']} of "
                     f"{f['sibling']}; in a later session, siblings learned {f['sibling_learned']} of "
                     f"{f['sibling']} (held otherwise), changes learned beside their rule {f['change_learned']} "
                     f"of {f['change']} (target 0)")
    return lines
