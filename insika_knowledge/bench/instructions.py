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
[--show] [--json]``; with no ``--set``, every file of ``benchmarks/instructions``. With
``--meaning`` the reader by meaning (`learn.addressing`, the offline default model) reads
what the rules kept, as learning does: the labelled cases, and a sample of `SWEEP_SAMPLE`
texts of the sweep that are not in its bank. ``--build-bank`` embeds the bank's texts
with the offline default model and writes its vectors (`learn.addressing.BANK_VECTORS`).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Final

import numpy as np

from insika_knowledge.bench.datasets import benchmark_data
from insika_knowledge.concept import CONCEPT_TYPES
from insika_knowledge.extract.candidates import screen
from insika_knowledge.extract.instructions import addressed_to_model
from insika_knowledge.index.embedders import family
from insika_knowledge.index.embedders.protocol import Embedder
from insika_knowledge.index.semantic import SemanticIndex
from insika_knowledge.learn.addressing import (
    BANK_TEXTS,
    BANK_VECTORS,
    MARGINS,
    AddressingVote,
    Bank,
    ByMeaning,
    load_bank,
)

#: The labelled sets (``benchmarks/instructions``, installed or in the checkout), and the
#: folder of every set beside them (the sweep's).
LABELLED: Final = benchmark_data("instructions")
BENCHMARKS: Final = LABELLED.parent
#: How many sweep texts `--meaning` reads (a seeded sample: every one takes about 30 minutes).
SWEEP_SAMPLE: Final = 2000
#: The sample's seed.
SEED: Final = 7
#: The keys of the other sets whose values are business text (claims, concepts' fields).
_TEXT_KEYS: Final = frozenset({"a", "b", "description", "body", "claim"})


def half_of(case: Mapping[str, Any]) -> str:
    """``dev`` for an even id, ``test`` for an odd one."""
    return "dev" if int(case["id"]) % 2 == 0 else "test"


def dropped_as_instruction(case: Mapping[str, Any], meaning: AddressingVote | None = None) -> str | None:
    """Why learning drops `case` as ``instruction`` (its reason line), or None when it does not;
    with `meaning`, what the rules keep is read by it too.
    """
    item = {k: case[k] for k in ("name", "description", "type", "body")}
    screened = screen([item], CONCEPT_TYPES)
    if screened.dropped.get("instruction"):
        return screened.why[0]
    if meaning is not None and screened.candidates:
        vote = meaning.vote(screened.candidates[0])
        if vote is not None:
            return f"by meaning: nearest {vote[0]!r}, lead {vote[1]:.3f}"
    return None


def score(cases: Iterable[Mapping[str, Any]], half: str = "all",
          meaning: AddressingVote | None = None) -> dict[str, Any]:
    """Caught / lost counts of `cases` in `half`, and the cases missed or lost (id, why)."""
    out: dict[str, Any] = {"instruction": 0, "caught": 0, "business": 0, "lost": 0, "missed": [], "lost_cases": []}
    for case in cases:
        if half != "all" and half_of(case) != half:
            continue
        why = dropped_as_instruction(case, meaning)
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


def sweep_texts(root: Path = BENCHMARKS) -> list[tuple[str, str]]:
    """Every business text of the other sets: (file under `root`, text), in file order."""
    texts = []
    for path in sorted(root.rglob("*.jsonl")):
        if LABELLED in path.parents:
            continue
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                texts += [(str(path.relative_to(root)), text) for text in _texts(json.loads(line))]
    return texts


def sweep(root: Path = BENCHMARKS) -> tuple[int, list[tuple[str, str, str]]]:
    """How many business texts the other sets hold, and each one the rules find to address
    the model (file, family and words, the text's first 160 characters).
    """
    texts = sweep_texts(root)
    found = [(where, f"{hit[0]}: {hit[1]}", text[:160]) for where, text in texts
             if (hit := addressed_to_model(text)) is not None]
    return len(texts), found


def sweep_by_meaning(meaning: ByMeaning, size: int = SWEEP_SAMPLE) -> tuple[int, list[tuple[str, str, str]]]:
    """A seeded sample of `size` sweep texts not in the bank, and each one the reader by
    meaning drops (file, lead, the text's first 160 characters).
    """
    banked = {json.loads(line)["text"] for line in BANK_TEXTS.read_text(encoding="utf-8").splitlines() if line}
    texts = [t for t in sweep_texts() if t[1][:2000] not in banked]
    random.Random(SEED).shuffle(texts)
    sample = texts[:size]
    vectors = meaning.semantic.embedder.passages([text[:2000] for _, text in sample])
    found = []
    for (where, text), vector in zip(sample, vectors, strict=True):
        lead, _ = meaning.lead(vector)
        if lead > meaning.margin:
            found.append((where, f"lead {lead:.3f}", text[:160]))
    return len(sample), found


def build_bank(embedder: Embedder, path: Path = BANK_VECTORS) -> int:
    """Embed the bank's texts (`BANK_TEXTS`) as passages with `embedder` and write their
    vectors, labels, kinds and model to `path` (float16). Returns how many.
    """
    rows = [json.loads(line) for line in BANK_TEXTS.read_text(encoding="utf-8").splitlines() if line]
    vectors = np.concatenate([embedder.passages([r["text"] for r in rows[i:i + 32]]) for i in range(0, len(rows), 32)])
    np.savez_compressed(path, vectors=vectors.astype(np.float16), model=np.str_(embedder.model_id),
                        instruction=np.array([r["label"] == "instruction" for r in rows]),
                        kinds=np.array([r["kind"] for r in rows]))
    return len(rows)


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
    parser.add_argument("--meaning", action="store_true", help="the reader by meaning too (offline default model)")
    parser.add_argument("--build-bank", action="store_true", help="rebuild the reader's bank vectors, then exit")
    args = parser.parse_args(argv)
    meaning = _by_meaning() if (args.meaning or args.build_bank) else None
    if args.build_bank:
        assert meaning is not None
        print(f"{build_bank(meaning.semantic.embedder)} texts embedded into {BANK_VECTORS}")
        return 0
    sets = args.set or sorted(LABELLED.glob("*.jsonl"))
    rows: dict[str, Any] = {}
    for path in sets:
        halves = ("dev", "test") if args.half == "all" else (args.half,)
        rows[path.name] = {half: score(load(path), half, meaning) for half in halves}
    texts, found = sweep()
    if meaning is not None:
        sampled, by_meaning = sweep_by_meaning(meaning)
    if args.json:
        out: dict[str, Any] = {"sets": rows, "sweep": {"texts": texts, "found": found}}
        if meaning is not None:
            out["sweep_by_meaning"] = {"texts": sampled, "found": by_meaning}
        json.dump(out, sys.stdout, indent=1)
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
    if meaning is not None:
        print(f"other sets, by meaning: {len(by_meaning)} of {sampled} sampled business texts (none in the bank)")
        for where, why, text in by_meaning:
            print(f"    {where}: {why} | {text}")
    return 0


def _by_meaning() -> ByMeaning:
    """The reader by meaning over the offline default model (a throwaway store: only its
    embedder and passage cache are used); the bank as it is, or any when rebuilding.
    """
    from insika_knowledge.index.embedders import resolve
    from insika_knowledge.store import SQLiteStore

    embedder, missing = resolve("auto")
    if embedder is None:
        raise SystemExit(f"no offline embedding model: {missing}")
    folder = Path(tempfile.mkdtemp(prefix="insika-instructions-"))
    semantic = SemanticIndex(SQLiteStore(folder / "unused.db"), embedder)
    bank = load_bank() or Bank(np.zeros((1, embedder.dim), np.float32), np.array([True]), ("",), embedder.model_id)
    k, margin = MARGINS.get(family(semantic.model), (5, 0.02))
    return ByMeaning(semantic, bank, k, margin)


if __name__ == "__main__":
    raise SystemExit(main())
