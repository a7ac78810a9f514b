"""A rule the business says has ended is never served as settled (issue 26).

The old rule learned, then the agent says it ended ("no longer", "stopped", "deixamos de",
"foi descontinuada"), proposed under another name: the new claim is held for a person, and
the block marks the old rule ``status="conflict"``. Lexical only (``embeddings="off"``, the
bulk-load setting), where short rules share two or three words.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from insika_knowledge import Memory
from insika_knowledge.extract.given import GivenModel


def _said(text: str) -> list[dict[str, str]]:
    return [{"role": "user", "content": "Oi"}, {"role": "assistant", "content": text}]


def _candidate(name: str, text: str) -> dict[str, str]:
    return {"name": name, "description": text, "type": "policy", "body": text}


@pytest.mark.parametrize(("old", "new", "question"), [
    ("We accept payment by bank slip.", "We no longer accept bank slips.", "Can I pay with a bank slip?"),
    ("We offer gift wrapping.", "Gift wrapping is no longer offered.", "Do you offer gift wrapping?"),
    ("Aceitamos boleto.", "Não aceitamos mais boleto.", "Vocês aceitam boleto?"),
    ("Aceitamos boleto.", "Deixamos de aceitar boleto.", "Vocês aceitam boleto?"),
    ("Payment by bank slip is accepted.", "Payment by bank slip was discontinued last month.",
     "Can I pay with a bank slip?"),
    # a short rule's other version, three words in common: held by the lexical fallback
    ("O estorno é feito no cartão.", "O estorno é feito em crédito na loja.", "Como recebo o estorno?"),
    # a description that repeats its body: one word changed read in the bodies alone
    ("A loja fica aberta até as 18h.", "A loja fica aberta a partir das 18h.", "Até que horas a loja fica aberta?"),
])
def test_an_ended_rule_is_served_as_disputed(tmp_path: Path, old: str, new: str, question: str) -> None:
    memory = Memory(tmp_path, embeddings="off")
    memory.learn(_said(old), agent="a", session_id="s1", model=GivenModel([_candidate("old-rule", old)]))
    report = memory.learn(_said(new), agent="a", session_id="s2", model=GivenModel([_candidate("rule-change", new)]))
    assert report.results == [("rule-change", "possible_duplicate")]
    block = memory.knowledge_block(question, agent="a") or ""
    [line] = [line for line in block.splitlines() if 'name="old-rule"' in line]
    assert 'status="conflict"' in line, block
    memory.close()
