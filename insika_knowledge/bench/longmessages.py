"""Long messages: the labelled messages of ``bench --quality`` inside a paragraph of context.

A customer who tells their story before asking (or thanks you after) writes one long
message. Each labelled message of ``benchmarks/retrieval`` is scored three ways, with
`CONTEXT_CHARS` characters of a neutral story in its own language (a retired teacher
preparing a granddaughter's birthday: no store's rule in it):

- ``before``: the story, then the message;
- ``around``: the story, the message, then a short sign-off;
- ``after``: the message, then the story.

Scored as ``bench --quality`` scores its ``auto`` row (`bench.quality.score`), per half
(odd ids ``dev``, even ``test``), beside the messages alone. Then the stories of
``benchmarks/retrieval/stories.jsonl`` (80 long messages by a writer who read the store's
concepts and wrote around them: a customer's day, family, a pet, an off-topic question; 56
in Portuguese, 24 in English, 568-1,769 characters): none asks anything the store answers,
so each should get no block (odd ids ``dev``, even ``test``). Run
``python -m insika_knowledge.bench.longmessages [--half dev|test] [--json]``; it takes
minutes (a long message's pieces are embedded one by one; the story's pieces repeat, so
they are embedded once).
"""

from __future__ import annotations

import argparse
import json
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final

from insika_knowledge.bench.datasets import benchmark_data
from insika_knowledge.bench.quality import Query, _ours, load_set, score

#: Characters of context put beside each message.
CONTEXT_CHARS: Final = 1500
#: The story, by language (anything not Portuguese reads the English one).
STORY: Final = {
    "pt": ("Oi, boa tarde! Espero que estejam bem. Vou contar um pouco da minha situação antes de perguntar. "
           "Sou professora aposentada, moro com meu marido e dois gatos, e neste fim de semana vamos receber a "
           "família inteira para comemorar o aniversário da minha neta, que faz sete anos. Ela adora desenhar e "
           "brincar no quintal, e eu queria fazer uma surpresa bonita para ela. Minha filha me ajudou a escolher "
           "algumas coisas no site ontem à noite, mas eu não sou muito boa com internet e fiquei com algumas "
           "dúvidas. "),
    "en": ("Hi there, good afternoon! I hope you are all doing well. Let me tell you a bit about my situation "
           "before I ask. I am a retired teacher, I live with my husband and two cats, and this weekend the whole "
           "family is coming over to celebrate my granddaughter's seventh birthday. She loves drawing and playing "
           "in the backyard, and I wanted to give her a lovely surprise. My daughter helped me pick a few things "
           "on the website last night, but I am not very good with the internet and I was left with a few "
           "doubts. "),
}
#: A sign-off, by language.
SIGN_OFF: Final = {"pt": "Muito obrigada desde já, um abraço e bom trabalho!",
                   "en": "Thank you so much in advance, have a lovely day!"}
#: The ways a message is put in its context.
LAYOUTS: Final = ("alone", "before", "around", "after")


def _story(lang: str, chars: int) -> str:
    text = STORY["pt" if lang == "pt" else "en"]
    cut = (text * (chars // len(text) + 1))[:chars]
    return cut[:cut.rfind(" ")].strip() + "."


def laid_out(query: Query, layout: str, chars: int = CONTEXT_CHARS) -> Query:
    """`query` with its text put in `chars` characters of context as `layout` says."""
    if layout == "alone":
        return query
    story, thanks = _story(query.lang, chars), SIGN_OFF["pt" if query.lang == "pt" else "en"]
    text = {"before": f"{story} {query.text}", "around": f"{story} {query.text} {thanks}",
            "after": f"{query.text} {story}"}[layout]
    return Query(query.id, text, query.expected, query.lang, query.kind)


def _stories() -> list[dict[str, Any]]:
    """The lines of ``benchmarks/retrieval/stories.jsonl`` (``id``, ``lang``, ``text``)."""
    path = benchmark_data("retrieval") / "stories.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def run_long(half: str = "test", *, echo: Callable[[str], None] = print, as_json: bool = False) -> dict[str, Any]:
    """Score the ``auto`` ranking on `half`'s messages in each of `LAYOUTS`; print a table or JSON."""
    concepts, queries = load_set()
    chosen = [q for q in queries if (int(q.id.lstrip("q")) % 2 == 1) == (half == "dev")]
    with tempfile.TemporaryDirectory(prefix="insika-long-") as tmp:
        auto = _ours(concepts, Path(tmp), echo=lambda _: None).get("auto")
        if auto is None:
            raise SystemExit("no embedding provider: the auto ranking is lexical only; nothing to compare")
        figures = {layout: score(auto, [laid_out(q, layout) for q in chosen]) for layout in LAYOUTS}
        stories = [s for s in _stories() if (s["id"] % 2 == 1) == (half == "dev")]
        found = [auto(s["text"]) for s in stories]
        figures["stories"] = {"messages": len(stories), "empty": sum(not f for f in found) / len(stories),
                              "concepts": sum(map(len, found)) / len(stories)}
    if as_json:
        echo(json.dumps({"half": half, "context_chars": CONTEXT_CHARS, "figures": figures}, indent=2))
    else:
        echo(f"long messages, {half} half ({len(chosen)} messages), {CONTEXT_CHARS} characters of context")
        echo(f"{'layout':8} {'R@1':>6} {'R@5':>6} {'answerable empty':>17} {'no-answer empty':>16} {'concepts':>9}")
        for layout in LAYOUTS:
            f = figures[layout]
            echo(f"{layout:8} {f['recall@1']:6.3f} {f['recall@5']:6.3f} {f['answerable_empty']:17.3f} "
                 f"{f['no_answer_empty']:16.3f} {f['concepts']:9.2f}")
        told = figures["stories"]
        echo(f"stories  ({told['messages']} with nothing to answer) empty block {told['empty']:.3f}, "
             f"concepts {told['concepts']:.2f}")
    return figures


def main(argv: list[str] | None = None) -> int:
    """``python -m insika_knowledge.bench.longmessages``."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--half", choices=("dev", "test"), default="test")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    run_long(args.half, as_json=args.json)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
