"""Personal data left, business data lost: redaction on a labelled set of chat messages.

Each line of a set (``benchmarks/privacy/*.jsonl``) is one message as a conversation holds
it::

    {"id": "phone-03", "kind": "phone", "role": "user", "context": [{"role": ..., "content": ...}],
     "text": "...", "values_that_must_go": ["..."], "values_that_must_stay": ["..."]}

The message is redacted as learning redacts a concept's text: `privacy.redact.redact` with
the contacts the conversation (``context``, then the message) shows to be the business's
(`privacy.redact.kept_contacts` over the trust reader's pieces). A value that must go
*leaks* when it survives whole, or when a piece of it that tells it alone survives (a run
of four digits or more, a word of four letters or more other than a label such as "rua"
or "gmail": `_telling`); a value that must stay is *lost* when it is not in the output
whole. Cases alternate between halves within each kind, in file order (the first
``dev``, the second ``test``...).

Run ``python -m insika_knowledge.bench.privacy --set FILE [--half dev|test|all] [--json]
[--show] [--time]`` (``--time``: ms a message, the median of five passes).
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Final

from insika_knowledge.privacy.redact import kept_contacts, redact
from insika_knowledge.trust.grounding import speaker
from insika_knowledge.trust.sources import pieces
from insika_knowledge.wire.messages import message_text

#: Words of a value that name its kind or a common domain, not the person ("rua", "gmail").
_LABELS: Final = frozenset(
    "ponto arroba gmail hotmail outlook yahoo dot com br apto bloco casa rua sala street avenue road ap apt conj "
    "apartamento numero número avenida alameda travessa estrada rodovia lote quadra".split())


def _telling(value: str) -> list[str]:
    """The pieces of `value` that tell it alone: digit runs of 4+, words of 4+ letters (labels aside)."""
    return [t for t in re.findall(r"\w+", value)
            if (t.isdigit() and len(t) >= 4) or (t.isalpha() and len(t) >= 4 and t.lower() not in _LABELS)]


def leaked(value: str, text: str) -> bool:
    """Whether `value` (or a piece of it that tells it alone) is still in `text`."""
    return value in text or any(re.search(rf"(?<!\w){re.escape(t)}(?!\w)", text) for t in _telling(value))


def redacted(case: Mapping[str, Any]) -> str:
    """The case's message as learning would store it."""
    messages = [*case.get("context", []), {"role": case["role"], "content": case["text"]}]
    keep = kept_contacts((p.speaker, p.text) for p in pieces(messages, speaker, message_text))
    return redact(case["text"], keep).text


def halves(cases: Sequence[Mapping[str, Any]]) -> dict[str, list[Mapping[str, Any]]]:
    """The cases by half: alternating within each kind, in file order."""
    seen: Counter[str] = Counter()
    out: dict[str, list[Mapping[str, Any]]] = {"dev": [], "test": []}
    for case in cases:
        out["dev" if seen[case["kind"]] % 2 == 0 else "test"].append(case)
        seen[case["kind"]] += 1
    return out


def score(cases: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """Per kind: cases, cases with a leak, cases with a business value lost; and the cases themselves."""
    kinds: dict[str, dict[str, int]] = defaultdict(lambda: {"cases": 0, "leaked": 0, "lost": 0})
    failures = []
    for case in cases:
        text = redacted(case)
        row = kinds[case["kind"]]
        row["cases"] += 1
        leaks = [v for v in case.get("values_that_must_go", []) if leaked(v, text)]
        lost = [v for v in case.get("values_that_must_stay", []) if v not in text]
        row["leaked"] += bool(leaks)
        row["lost"] += bool(lost)
        if leaks or lost:
            failures.append({"id": case["id"], "leaked": leaks, "lost": lost, "text": text})
    total = {k: sum(r[k] for r in kinds.values()) for k in ("cases", "leaked", "lost")}
    must_go = sum(r["cases"] for k, r in kinds.items() if k not in _KEEP_KINDS)
    return {"kinds": dict(sorted(kinds.items())), "total": total, "with_personal_data": must_go,
            "failures": failures}


#: Kinds of cases that hold only business data.
_KEEP_KINDS: Final = frozenset({"keep", "business_contact"})


def _timed(cases: Sequence[Mapping[str, Any]], passes: int = 5) -> float:
    """Milliseconds a message `redacted` takes over `cases`: the median of `passes` passes,
    after one to warm the caches.
    """
    def one() -> float:
        started = time.perf_counter()
        for case in cases:
            redacted(case)
        return (time.perf_counter() - started) * 1000 / max(1, len(cases))
    one()
    return statistics.median(one() for _ in range(passes))


def main(argv: list[str] | None = None) -> int:
    """The command (see the module doc)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--set", dest="path", type=Path, required=True)
    parser.add_argument("--half", choices=("dev", "test", "all"), default="test")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--show", action="store_true", help="Print each failing case.")
    parser.add_argument("--time", action="store_true",
                        help="Also time the redaction: ms a message, median of five passes over the set's half.")
    args = parser.parse_args(argv)
    lines = args.path.read_text(encoding="utf-8").splitlines()
    cases = [json.loads(line) for line in lines if line.strip()]
    chosen = cases if args.half == "all" else halves(cases)[args.half]
    result = score(chosen)
    if args.time:
        result["ms_per_message"] = _timed(chosen)
    if args.json:
        print(json.dumps({"set": str(args.path), "half": args.half, **result}, ensure_ascii=False, indent=2))
        return 0
    print(f"{args.path} ({args.half} half, {result['total']['cases']} cases)")
    print(f"  {'kind':<20} {'cases':>5} {'leaked':>6} {'lost':>5}")
    for kind, row in result["kinds"].items():
        print(f"  {kind:<20} {row['cases']:>5} {row['leaked']:>6} {row['lost']:>5}")
    total = result["total"]
    print(f"  {'all':<20} {total['cases']:>5} {total['leaked']:>6} {total['lost']:>5}")
    if args.time:
        print(f"  redaction: {result['ms_per_message']:.3f} ms a message (median of five passes)")
    if args.show:
        for failure in result["failures"]:
            print(f"  - {failure['id']}: leaked {failure['leaked']} lost {failure['lost']}: {failure['text']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
