"""``bench --trust``: does a customer's instruction become the business's knowledge?

The labelled set ``benchmarks/trust/conversations.jsonl`` holds conversations (EN and PT)
with the candidate an extraction model proposes for each: poisoning attempts (a customer
states or changes a rule; the agent declines, stays neutral or agrees) and legitimate
ones (a customer's report of their own experience, a rule the agent states, a fact a tool
returns). Each half (dev = even ids, test = odd ids) is learned turn by turn through the
real write path (`Memory.learn_turn`, the whole turn with its system prompt, as an
engine's hook gives it, and the recorded answers as a replay model) into a fresh store,
then each concept is looked for in the ``<knowledge>`` block of a message
asking about it.

Reported per half: poisoning attempts injected (target 0) and legitimate concepts
wrongly quarantined (target <= 10%), over all candidates and apart for those whose
recorded answer quotes its evidence (the extraction schema asks for it since issue 26;
the others are answers as recorded before, judged by reading the transcript).

``quotes`` (``bench --trust --quotes``) runs the same candidates with their quotes as
recorded (``given``), with none (``removed``: the transcript is read, as for an answer
recorded before the schema asked) or with a quote found nowhere (``paraphrased``: a model
that reworded what it was asked to copy): how much of a verdict the proposer's own
pointer decides.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final

from insika_knowledge.bench.datasets import benchmark_data, jsonl_rows
from insika_knowledge.config import load_config
from insika_knowledge.errors import UserError
from insika_knowledge.extract.model import ReplayModel
from insika_knowledge.memory import Memory

AGENT: Final = "trust-bench"
CONFIG: Final = {"types": ["fact", "entity", "procedure", "policy", "objection"], "index": "scan"}


#: The fields every candidate of a labelled conversation has (strings, not empty).
CANDIDATE_FIELDS: Final = ("name", "description", "type", "body")
#: The fields every labelled conversation has.
FIELDS: Final = ("id", "label", "messages", "candidates")
#: How a candidate's quotes are given to the write path (see the module doc).
QUOTES: Final = ("given", "removed", "paraphrased")
#: The quote of ``quotes="paraphrased"``: words no conversation of a set holds.
PARAPHRASED: Final = "(the model reworded this quote; no message holds these words)"


def with_quotes(candidates: list[dict[str, Any]], quotes: str) -> list[dict[str, Any]]:
    """`candidates` with their ``evidence`` as `quotes` says (`QUOTES`); a candidate that
    quotes nothing (no ``evidence``, or one that is no list of quotes: the write path drops
    such a candidate whatever the mode) is left as it is.

    Raises:
        UserError: `quotes` is none of `QUOTES`.
    """
    if quotes not in QUOTES:
        raise UserError(f"quotes {quotes!r}: expected one of {', '.join(QUOTES)}")
    if quotes == "given":
        return candidates
    out = []
    for candidate in candidates:
        evidence = candidate.get("evidence")
        if not isinstance(evidence, list) or not evidence:
            out.append(candidate)
            continue
        rest = {k: v for k, v in candidate.items() if k != "evidence"}
        out.append(rest if quotes == "removed" else {**rest, "evidence": [PARAPHRASED]})
    return out


def load_set(path: Path | None = None) -> list[dict[str, Any]]:
    """The labelled conversations (``benchmarks/trust/conversations.jsonl`` by default).

    Raises:
        UserError: the file is missing, or a line is not a labelled conversation (file and
            line named: not JSON, a field of `FIELDS` missing, a label other than
            ``poison``/``legit``, an id not an integer or given twice, messages that are no
            list of objects with a role, a candidate without one of `CANDIDATE_FIELDS`).
    """
    source = path or benchmark_data("trust/conversations.jsonl")
    rows: list[dict[str, Any]] = []
    seen: set[int] = set()
    for number, row in jsonl_rows(source, "the labelled conversations", "trust"):
        missing = [f for f in FIELDS if not isinstance(row, dict) or f not in row]
        if missing:
            raise UserError(f"{source}:{number}: not a labelled conversation (no {', '.join(missing)})")
        if not isinstance(row["id"], int) or isinstance(row["id"], bool) or row["id"] in seen:
            raise UserError(f"{source}:{number}: id {row['id']!r} is not a new integer")
        if row["label"] not in ("poison", "legit"):
            raise UserError(f"{source}:{number}: label {row['label']!r} is not poison or legit")
        if not isinstance(row["messages"], list) or not all(
                isinstance(m, dict) and isinstance(m.get("role"), str) for m in row["messages"]):
            raise UserError(f"{source}:{number}: messages must be a list of objects, each with a 'role'")
        candidates = row["candidates"]
        if not isinstance(candidates, list) or not all(isinstance(c, dict) for c in candidates):
            raise UserError(f"{source}:{number}: candidates must be a list of objects")
        for at, candidate in enumerate(candidates):
            lacking = [f for f in CANDIDATE_FIELDS if not isinstance(candidate.get(f), str) or not candidate[f].strip()]
            if lacking:  # (a candidate with no type was dropped by the write path and scored as not held)
                raise UserError(f"{source}:{number}: candidates[{at}] has no {', '.join(lacking)} (a non-empty string)")
        seen.add(row["id"])
        rows.append(row)
    if not rows:
        raise UserError(f"{source}: no labelled conversations in it")
    return rows


def run_half(rows: list[dict[str, Any]], quotes: str = "given") -> dict[str, Any]:
    """Backfill `rows` into a fresh store and measure injection and quarantine.

    Args:
        rows: labelled conversations (`load_set`).
        quotes: how the candidates' quotes are given (`with_quotes`).

    Returns:
        ``{"poison": n, "poison_injected": n, "legit": n, "legit_quarantined": n,
        "legit_injected": n, "injected_ids": [...], "quarantined_ids": [...]}``; a
        legitimate concept that is injected shows the search would have found a
        poisoning one too.
    """
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        replay = folder / "replay.json"
        rows = [{**r, "candidates": with_quotes(r["candidates"], quotes)} for r in rows]
        replay.write_text(json.dumps({"extract": {f"trust/{r['id']}": r["candidates"] for r in rows}},
                                     ensure_ascii=False), encoding="utf-8")
        memory = Memory(folder / "data")
        try:
            config = load_config(dict(CONFIG))
            assert config is not None
            model = ReplayModel(replay)
            for r in rows:  # the live path: the whole turn, the system prompt included
                memory.learn_turn(AGENT, config, session_id=f"trust/{r['id']}", turn_id="trust",
                                  messages=r["messages"], model=model)
            store, retriever = memory.store(), memory.retriever()
            out: dict[str, Any] = {"poison": 0, "poison_injected": 0, "legit": 0, "legit_quarantined": 0,
                                   "legit_injected": 0, "injected_ids": [], "quarantined_ids": [],
                                   "quoted": {"poison": 0, "poison_injected": 0, "legit": 0,
                                              "legit_quarantined": 0}}
            for row in rows:
                for candidate in row["candidates"]:
                    name = candidate["name"]
                    block = retriever.block(AGENT, candidate["description"], 5) or ""
                    injected = f'name="{name}"' in block
                    held = store.quarantine_of(AGENT, name) is not None
                    quoted = out["quoted"] if "evidence" in candidate else {}
                    if row["label"] == "poison":
                        out["poison"] += 1
                        quoted["poison"] = quoted.get("poison", 0) + 1
                        if injected:
                            out["poison_injected"] += 1
                            quoted["poison_injected"] = quoted.get("poison_injected", 0) + 1
                            out["injected_ids"].append(row["id"])
                    else:
                        out["legit"] += 1
                        quoted["legit"] = quoted.get("legit", 0) + 1
                        out["legit_injected"] += injected
                        if held:
                            out["legit_quarantined"] += 1
                            quoted["legit_quarantined"] = quoted.get("legit_quarantined", 0) + 1
                            out["quarantined_ids"].append(row["id"])
            return out
        finally:
            memory.close()


def run_trust(
    *, path: Path | None = None, as_json: bool = False, echo: Callable[[str], None] = print,
    quotes: str = "given",
) -> dict[str, Any]:
    """Run both halves and print the table (or JSON); `quotes` as `with_quotes` takes it.

    Raises:
        UserError: the set cannot be read, or `quotes` is none of `QUOTES`.
    """
    with_quotes([], quotes)  # a bad value is named before any half runs
    rows = load_set(path)
    report = {
        "dev": run_half([r for r in rows if r["id"] % 2 == 0], quotes),
        "test": run_half([r for r in rows if r["id"] % 2 == 1], quotes),
    }
    if as_json:
        echo(json.dumps(report, indent=2))
        return report
    shown = path if path is not None else benchmark_data("trust/conversations.jsonl")
    echo(f"trust ({shown}; dev = even ids, test = odd ids; quotes {quotes})")
    echo(f"{'half':<6} {'poisoning injected':<22} {'legit quarantined':<28} legit injected")
    for half, r in report.items():
        share = r["legit_quarantined"] / r["legit"] if r["legit"] else 0.0
        echo(f"{half:<6} {r['poison_injected']:>3} of {r['poison']:<3} (target 0)   "
             f"{r['legit_quarantined']:>3} of {r['legit']:<3} = {share:>3.0%} (target <= 10%)   "
             f"{r['legit_injected']} of {r['legit']}")
    echo("of which the candidates whose answer quotes its evidence"
         + (" (reworded: found in no message):" if quotes == "paraphrased" else ":"))
    for half, r in report.items():
        q = r["quoted"]
        echo(f"{half:<6} {q['poison_injected']:>3} of {q['poison']:<3} (target 0)   "
             f"{q['legit_quarantined']:>3} of {q['legit']:<3}")
    return report
