"""The procedure block's shape and its anchors as a session stores them."""

from __future__ import annotations

import json

from insika_knowledge import procedures
from insika_knowledge.procedure import Procedure, ProcedureStep
from insika_knowledge.procedures.recall.inject import BLOCK, anchor_json, stored_anchor
from insika_knowledge.procedures.recall.render import render
from insika_knowledge.procedures.recall.tokens import WordPieceCounter
from insika_knowledge.wire.placement import Anchor, find, place


def test_an_anchor_is_stored_with_its_procedure_as_before() -> None:
    anchor = Anchor("part", 3, 2, "0123456789abcdef", "proc-x")
    text = anchor_json(anchor)
    assert text == '{"digest":"0123456789abcdef","index":3,"kind":"part","part":2,"procedure":"proc-x"}'
    assert stored_anchor(text) == anchor
    assert stored_anchor("") is None and stored_anchor("not json") is None
    assert stored_anchor(json.dumps({"index": 1})) is None


def test_the_shape_matches_what_render_produces_and_is_the_public_one() -> None:
    procedure = Procedure(
        id="proc-aaaaaaaaaaaa", kind="tool", steps=(ProcedureStep("cancel(id=<ID>)", "cancel(id)"),), successes=3,
    )
    block = render(procedure, WordPieceCounter(), 400).text
    assert BLOCK.pattern.fullmatch(block) and block.startswith(BLOCK.header)
    assert procedures.PROCEDURE_BLOCK is BLOCK
    placed = place({"messages": [{"role": "user", "content": "Cancel it."}]}, block, BLOCK)
    assert placed.body["messages"][0]["content"] == "Cancel it.\n\n" + block
    assert find(placed.body, BLOCK) == block
