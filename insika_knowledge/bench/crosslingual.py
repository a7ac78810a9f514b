"""``bench --quality``, one store in one language, its customers in the other.

``benchmarks/retrieval_crosslingual/`` (written by a reader who saw no code; see its README):
two stores of 12 concepts, ``us`` in English and ``br`` in Portuguese, and 60 messages per
store: ``cross_lingual`` (answerable, in the other language), ``cross_no_answer`` (no concept
answers it, in the other language), ``same_lingual`` and ``same_no_answer`` (the store's own
language). Each store is its own agent; each message is answered by `Memory.search` (the
default ``auto`` ranking, top 5) of its store. Split by parity of the id (even = ``dev``,
odd = ``test``): the cross-lingual floor (`retrieve.CROSS_LINGUAL_DROPS`) was chosen on dev.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any, Final

from insika_knowledge.bench.datasets import benchmark_data, jsonl_rows
from insika_knowledge.errors import UserError

#: The set's folder under ``benchmarks/``.
CROSSLINGUAL_FOLDER: Final = "retrieval_crosslingual"
#: Concepts retrieved per message.
TOP_K: Final = 5


def crosslingual_figures(folder: Path | None = None, embeddings: str | None = None,
                         ) -> dict[str, dict[str, dict[str, float]]]:
    """Recall@5 and the empty-block rate per half and kind of message; `embeddings`: the
    provider (None: ``$INSIKA_EMBEDDINGS``, else ``auto``).

    Returns:
        ``{"dev": {kind: {"messages": n, "recall@5": r (answerable kinds), "empty": e}}, "test": ...}``.

    Raises:
        UserError: a file is missing or a line is not a concept or a message (file and line named).
    """
    from insika_knowledge.memory import Memory  # the front door loads the whole engine

    folder = folder if folder is not None else benchmark_data(CROSSLINGUAL_FOLDER)
    concepts = [row for _, row in jsonl_rows(folder / "concepts.jsonl", "the cross-lingual concepts",
                                             CROSSLINGUAL_FOLDER)]
    messages = [row for _, row in jsonl_rows(folder / "queries.jsonl", "the cross-lingual messages",
                                             CROSSLINGUAL_FOLDER)]
    counts: dict[str, dict[str, list[int]]] = {"dev": {}, "test": {}}
    with tempfile.TemporaryDirectory(prefix="insika-crosslingual-") as tmp:
        memory = Memory(tmp, embeddings=embeddings)
        try:
            for number, c in enumerate(concepts, 1):
                try:
                    described = json.dumps(c["description"], ensure_ascii=False)  # YAML reads JSON strings
                    memory.put(f"---\nname: {c['name']}\ndescription: {described}\ntype: {c['type']}\n---\n"
                               f"{c['body']}\n", agent=str(c["store"]))
                except (KeyError, TypeError) as exc:
                    raise UserError(f"{folder / 'concepts.jsonl'}:{number}: not a concept ({exc})") from None
            for number, m in enumerate(messages, 1):
                try:
                    half = "dev" if int(str(m["id"]).lstrip("x")) % 2 == 0 else "test"
                    found = {h.name for h in memory.search(str(m["text"]), agent=str(m["store"]), top_k=TOP_K)}
                    expected = set(m["expected"])
                    kind = str(m["kind"])
                except (KeyError, TypeError, ValueError) as exc:
                    raise UserError(f"{folder / 'queries.jsonl'}:{number}: not a message ({exc})") from None
                tally = counts[half].setdefault(kind, [0, 0, 0])
                tally[0] += 1
                tally[1] += bool(expected & found)
                tally[2] += not found
        finally:
            memory.close()
    return {half: {kind: {"messages": n, **({"recall@5": hit / n} if kind.endswith("lingual") else {}),
                          "empty": empty / n}
                   for kind, (n, hit, empty) in sorted(kinds.items())}
            for half, kinds in counts.items()}


def crosslingual_lines(figures: dict[str, dict[str, dict[str, Any]]]) -> list[str]:
    """The report lines of `crosslingual_figures`."""
    lines = [f"[one store's language, its customers' in the other: benchmarks/{CROSSLINGUAL_FOLDER}, "
             "auto, top 5; dev = even ids]"]
    for half, kinds in figures.items():
        said = [f"{kind} " + (f"R@5 {f['recall@5']:.3f}, " if "recall@5" in f else "") + f"empty {f['empty']:.3f}"
                for kind, f in kinds.items()]
        lines.append(f"  {half}: " + "; ".join(said))
    return lines
