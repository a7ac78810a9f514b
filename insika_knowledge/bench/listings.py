"""``bench --consolidation``, listed merges: does the merge guard refuse two versions of one
claim written side by side, and only those?

``benchmarks/consolidation/listings.jsonl`` holds 244 cases a fresh reader wrote without
reading the analyser (English and Brazilian Portuguese, 21 kinds): a rule on record
(``old``), a sighting (``new``) and the merged text a merge model that answered "related"
wrote (``merged``: both sides side by side, joined by a space, a line end or "; ", in
either order, sometimes lightly reworded). ``label`` says what the two are:

- ``versions``: two versions of one rule (a changed value, party, place, channel,
  direction, modality, condition or negation); the merged text folds a change into one
  record, and the guard must refuse it (a conflict for a person);
- ``adds``: two claims that are true together (an exception beside its rule, a qualifier,
  two subjects each with its own value, a second fact); the guard must accept it.

Each case is read by `consolidate.interpret_merge`, the guard the write path runs. Split by
parity of the id (even = ``dev``, odd = ``test``); the listing rule
(`consolidate.merge.versions`) was chosen on ``dev`` only.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from insika_knowledge.bench.datasets import benchmark_data, half_of, labelled_cases
from insika_knowledge.consolidate import interpret_merge
from insika_knowledge.extract.model import MergeAnswer

#: The labels of a listed merge.
LISTING_LABELS: Final = ("versions", "adds")
#: The sets of listed merges in ``benchmarks/consolidation``: the first reader's (the rule was
#: chosen on its dev half), a second reader's 120 and a third's 160 (2026-12-07), each scored
#: once before its dev half was read.
LISTING_FILES: Final = ("listings.jsonl", "listings2.jsonl", "listings3.jsonl")


@dataclass(frozen=True, slots=True)
class Listing:
    """One labelled listed merge (see the module doc)."""

    id: int
    lang: str
    kind: str
    label: str
    old: str
    new: str
    merged: str

    @property
    def half(self) -> str:
        """``dev`` or ``test`` (`bench.datasets.half_of`)."""
        return half_of(self.id)


def load_listings(path: Path | None = None) -> list[Listing]:
    """Read the listed merges (`path`, or ``benchmarks/consolidation/listings.jsonl``, the
    first of `LISTING_FILES`).

    Raises:
        UserError: the file is missing, or a line is not a listed merge (file and line named).
    """
    path = path if path is not None else benchmark_data(f"consolidation/{LISTING_FILES[0]}")
    return labelled_cases(path, "the listed merges", "a listed merge", "consolidation", _listing, LISTING_LABELS)


def _listing(row: Any) -> Listing:
    return Listing(int(row["id"]), row["lang"], row["kind"], row["label"], row["old"], row["new"], row["merged"])


def listing_figures(listings: list[Listing]) -> dict[str, dict[str, Any]]:
    """Per half: how many of each label the guard refused (``refused``) and why.

    Returns:
        ``{"dev": {"versions": n, "versions_refused": k, "adds": m, "adds_refused": j,
        "why": {reason: count}}, "test": {...}}``; a reason is `MergeVerdict.why` up to
        its first colon.
    """
    figures: dict[str, dict[str, Any]] = {}
    for half in ("dev", "test"):
        counts: Counter[str] = Counter()
        why: Counter[str] = Counter()
        for case in (c for c in listings if c.half == half):
            verdict = interpret_merge(MergeAnswer("related", case.merged), case.old, case.new)
            counts[case.label] += 1
            if verdict.body is None:
                counts[f"{case.label}_refused"] += 1
                why[f"{case.label}:{verdict.why.split(':', 1)[0]}"] += 1
        figures[half] = {**{k: counts[k] for k in (*LISTING_LABELS, *(f"{k}_refused" for k in LISTING_LABELS))},
                         "why": dict(sorted(why.items()))}
    return figures


def listing_lines(figures: dict[str, dict[str, Any]], file: str = LISTING_FILES[0]) -> list[str]:
    """The report lines of `listing_figures` of the set `file` (a name of `LISTING_FILES`)."""
    lines = [f"listed merges (benchmarks/consolidation/{file}: a merge model answered related and "
             "wrote both sides; dev = even ids, test = odd ids):"]
    for half, f in figures.items():
        lines.append(f"  {half}: versions of one rule refused {f['versions_refused']} of {f['versions']} "
                     f"(a change folded otherwise); claims that add to each other refused {f['adds_refused']} "
                     f"of {f['adds']} (a needless conflict)")
    return lines
