"""Candidates that address the model: dropped, and business text kept (`extract.instructions`).

Two measurements:

1. **Labelled sets** (``benchmarks/instructions/*.jsonl``), one candidate a line::

       {"id": 7, "label": "instruction" | "business", "language": "en" | "pt", "kind": "...",
        "name": "...", "description": "...", "type": "policy", "body": "..."}

   Each candidate is screened as learning screens it (`extract.candidates.screen`, every
   type allowed): an ``instruction`` case is *caught* when it is dropped as ``instruction``,
   a ``business`` case is *lost* when it is. Even ids are the dev half, odd ids the test half.
2. **Business text of the other sets** (the sweep): every claim, description, body and agent
   message of the repository's other benchmark files (``benchmarks/**.jsonl``), none of which
   speaks to a model: each one `addressed_to_model` finds is a business text that would be lost.

Run ``python -m insika_knowledge.bench.instructions [--set FILE ...] [--half dev|test|all]
[--show] [--json]``; with no ``--set``, every file of ``benchmarks/instructions``.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Final

from insika_knowledge.bench.datasets import benchmark_data
from insika_knowledge.concept import CONCEPT_TYPES
from insika_knowledge.extract.candidates import screen
from insika_knowledge.extract.instructions import addressed_to_model

#: The labelled sets (``benchmarks/instructions``, installed or in the checkout), and the
#: folder of every set beside them (the sweep's).
LABELLED: Final = benchmark_data("instructions")
BENCHMARKS: Final = LABELLED.parent
#: The keys of the other sets whose values are business text (claims, concepts' fields).
_TEXT_KEYS: Final = frozenset({"a", "b", "description", "body", "claim"})


def half_of(case: Mapping[str, Any]) -> str:
    """``dev`` for an even id, ``test`` for an odd one."""
    return "dev" if int(case["id"]) % 2 == 0 else "test"


def dropped_as_instruction(case: Mapping[str, Any]) -> str | None:
    """Why learning drops `case` as ``instruction`` (its reason line), or None when it does not."""
    item = {k: case[k] for k in ("name", "description", "type", "body")}
    screened = screen([item], CONCEPT_TYPES)
    if screened.dropped.get("instruction"):
        return screened.why[0]
    return None


def score(cases: Iterable[Mapping[str, Any]], half: str = "all") -> dict[str, Any]:
    """Caught / lost counts of `cases` in `half`, and the cases missed or lost (id, why)."""
    out: dict[str, Any] = {"instruction": 0, "caught": 0, "business": 0, "lost": 0, "missed": [], "lost_cases": []}
    for case in cases:
        if half != "all" and half_of(case) != half:
            continue
        why = dropped_as_instruction(case)
        if case["label"] == "instruction":
            out["instruction"] += 1
            if why:
                out["caught"] += 1
            else:
                out["missed"].append((case["id"], case.get("kind", "")))
        else:
            out["business"] += 1
            if why:
                out["lost"] += 1
                out["lost_cases"].append((case["id"], why))
    return out


def _texts(value: Any, key: str = "") -> Iterator[str]:
    """The business texts in one decoded line of another set (see the module doc)."""
    if isinstance(value, str):
        if key in _TEXT_KEYS:
            yield value
    elif isinstance(value, list):
        for item in value:
            yield from _texts(item, key)
    elif isinstance(value, dict):
        agent = value.get("role") == "assistant"
        for k, v in value.items():
            if agent and k == "content" and isinstance(v, str):
                yield v
            else:
                yield from _texts(v, k)


def sweep(root: Path = BENCHMARKS) -> tuple[int, list[tuple[str, str, str]]]:
    """How many business texts the other sets hold, and each one found to address the model
    (file, family and words, the text's first 160 characters).
    """
    count, found = 0, []
    for path in sorted(root.rglob("*.jsonl")):
        if LABELLED in path.parents:
            continue
        for line in path.read_text(encoding="utf-8").splitlines():
            if not line.strip():
                continue
            for text in _texts(json.loads(line)):
                count += 1
                hit = addressed_to_model(text)
                if hit is not None:
                    found.append((str(path.relative_to(root)), f"{hit[0]}: {hit[1]}", text[:160]))
    return count, found


def load(path: Path) -> list[dict[str, Any]]:
    """The cases of one labelled set (UserError-free: a malformed line raises ValueError naming it)."""
    cases = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if line.strip():
            try:
                cases.append(json.loads(line))
            except json.JSONDecodeError as error:
                raise ValueError(f"{path}:{number}: not JSON ({error.msg})") from None
    return cases


def main(argv: Sequence[str] | None = None) -> int:
    """The command line of the module doc; prints each set's halves, then the sweep. Returns 0."""
    parser = argparse.ArgumentParser(prog="python -m insika_knowledge.bench.instructions",
                                     description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--set", action="append", type=Path, help="a labelled set (JSONL); repeatable")
    parser.add_argument("--half", choices=("dev", "test", "all"), default="all")
    parser.add_argument("--show", action="store_true", help="list the cases missed and lost")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    sets = args.set or sorted(LABELLED.glob("*.jsonl"))
    rows: dict[str, Any] = {}
    for path in sets:
        halves = ("dev", "test") if args.half == "all" else (args.half,)
        rows[path.name] = {half: score(load(path), half) for half in halves}
    texts, found = sweep()
    if args.json:
        json.dump({"sets": rows, "sweep": {"texts": texts, "found": found}}, sys.stdout, indent=1)
        print()
        return 0
    for name, halves in rows.items():
        for half, r in halves.items():
            print(f"{name} {half}: caught {r['caught']} of {r['instruction']} instructions, "
                  f"lost {r['lost']} of {r['business']} business cases")
            if args.show:
                for cid, kind in r["missed"]:
                    print(f"    missed {cid} {kind}")
                for cid, why in r["lost_cases"]:
                    print(f"    lost {cid} {why}")
    print(f"other sets: {len(found)} of {texts} business texts read as addressing the model")
    for where, why, text in found if args.show else found[:10]:
        print(f"    {where}: {why} | {text}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
