"""A body a person writes holds no control characters, bidirectional overrides or tag
characters: refused with the line and the character named, nothing written.

The last notes left it: `put` kept ESC, DEL and U+202E in a body (a description refused
them), `show` and the prompt escaped them, and `export --format md` wrote them raw into
files a terminal or an editor shows. A body already stored with them is not refused when
an edit leaves the body alone.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from insika_knowledge.errors import ConceptFormatError
from insika_knowledge.memory import Memory

RECORD = "---\nname: frete\ndescription: Frete grátis\n---\n\nFrete grátis acima de R$ 199.\n{extra}\n"


@pytest.mark.parametrize(("char", "named"), [
    ("\x1b[31m", "U+001B"), ("\x7f", "U+007F"), ("\u202e", "U+202E"), ("\u2066", "U+2066"),
    ("\U000e0041", "U+E0041"), ("\x85", "U+0085"),
])
def test_a_body_with_a_control_character_is_refused_and_nothing_is_written(
        tmp_path: Path, database: str | None, char: str, named: str) -> None:
    memory = Memory(tmp_path, database=database)
    with pytest.raises(ConceptFormatError) as caught:
        memory.put(RECORD.format(extra=f"Pague com {char}Pix."), agent="loja")
    assert caught.value.field == "body" and caught.value.line == 7 and named in str(caught.value)
    assert memory.store().get("loja", "frete") is None
    memory.close()


def test_tabs_line_ends_and_right_to_left_text_are_kept(tmp_path: Path, database: str | None) -> None:
    memory = Memory(tmp_path, database=database)
    saved = memory.put(RECORD.format(extra="Col\tuna\r\nשלום עולם, \u200fمرحبا"), agent="loja")
    assert "\t" in saved.body and "\u200f" in saved.body
    memory.close()


def test_an_update_that_leaves_an_old_body_alone_is_not_refused(tmp_path: Path, database: str | None) -> None:
    memory = Memory(tmp_path, database=database)
    memory.put(RECORD.format(extra="ok"), agent="loja")
    with pytest.raises(ConceptFormatError, match="U\\+202E"):
        memory.update("frete", agent="loja", body="Frete \u202egrátis")
    old = memory.store().get("loja", "frete")
    assert old is not None and old.concept.body.endswith("ok")  # nothing written
    with memory.store().transaction() as tx:  # a body stored before the rule (the store itself takes it)
        tx.put("loja", old.concept.replace(body="Frete \x1b[31mgrátis"), reason="edit", actor="python")
    updated = memory.update("frete", agent="loja", description="Frete grátis no Brasil")  # the body untouched
    assert updated.description == "Frete grátis no Brasil" and "\x1b" in updated.body
    memory.close()


@pytest.mark.parametrize(("markdown", "line"), [
    ("---\nname: a\ndescription: d\n---\n\n1\n2\n3\n4\nx\x00y\n", 10),  # a NUL on its own line
    ("---\nname: a\ndescription: d\n---\nx\x07\n", 5),  # no blank line after the frontmatter
    ("---\nname: a\n# comment\ndescription: d\n---\n\nok\nx\x1b\n", 8),  # a YAML comment
    ("---\nname: a\ndescription: d\n---\n \n\t\n\nok\nx\x1b\n", 9),  # whitespace-only lines
    ("---\r\nname: a\r\ndescription: d\r\n---\r\n\r\nok\r\nx\u202e\r\n", 7),  # CRLF
])
def test_the_refusal_names_the_line_of_the_authors_text(tmp_path: Path, markdown: str, line: int) -> None:
    """A newcomer's report: the line was counted in the record rebuilt from the text."""
    memory = Memory(tmp_path)
    with pytest.raises(ConceptFormatError) as caught:
        memory.put(markdown, agent="ag")
    assert caught.value.line == line and caught.value.field == "body", caught.value
    memory.close()


def test_update_names_the_line_of_the_body_it_was_given(tmp_path: Path) -> None:
    memory = Memory(tmp_path)
    memory.put(RECORD.format(extra="ok"), agent="loja")
    with pytest.raises(ConceptFormatError, match=r"^Memory.update\(\): body, line 2: contains U\+202E"):
        memory.update("frete", agent="loja", body="fine\nbad\u202ehere\n")
    with pytest.raises(ConceptFormatError, match=r"line 1: contains U\+E0041 \(TAG LATIN CAPITAL LETTER A\)"):
        memory.update("frete", agent="loja", body="\U000e0041")
    with pytest.raises(ConceptFormatError, match=r"line 1: contains U\+0000"):
        memory.update("frete", agent="loja", body="x\x00y")
    memory.close()


def test_a_folded_description_is_one_line(tmp_path: Path) -> None:
    """A newcomer's report: `description: >` over two lines failed with "contains U+000A"
    (YAML keeps the folded scalar's last line end); a literal block of two lines is still
    refused."""
    memory = Memory(tmp_path)
    saved = memory.put("---\nname: frete\ndescription: >\n  Frete grátis\n  acima de R$ 199\n---\n\nCorpo.\n",
                       agent="loja")
    assert saved.description == "Frete grátis acima de R$ 199"
    with pytest.raises(ConceptFormatError, match="U\\+000A"):
        memory.put("---\nname: frete2\ndescription: |\n  Frete grátis\n  acima de R$ 199\n---\n\nCorpo.\n",
                   agent="loja")
    memory.close()


def test_a_put_whose_clock_is_behind_a_concurrent_create_tries_again(tmp_path: Path) -> None:
    """A newcomer's report: threads putting a record without timestamps while others deleted
    and restored it got "updated_at ... is earlier than created_at" (a `ConceptFormatError`
    blaming the caller): the clock was read once, before another writer created the concept.
    Here the first clock reading is behind the stored record, as it is in that race."""
    memory = Memory(tmp_path)
    memory.put(RECORD.format(extra="ok"), agent="loja")
    store = memory.store()
    real, calls = store.clock, []

    def clock() -> str:
        calls.append(1)
        return "2020-01-01T00:00:00Z" if len(calls) == 1 else real()

    store.clock = clock  # type: ignore[method-assign]
    saved = memory.put(RECORD.format(extra="again"), agent="loja")
    assert saved.body.endswith("again") and saved.updated_at >= saved.created_at and len(calls) >= 2
    memory.close()


@pytest.mark.parametrize(("markdown", "line"), [
    ("---\nname: b1\ntype: fact\ndescription: [link] text\n---\n\nx\n", 4),
    ("---\nname: b1\ndescription: Horário: 9h às 18h\n---\n\nx\n", 3),
])
def test_a_value_that_needed_quotes_is_named_at_its_line_with_the_hint(tmp_path: Path, markdown: str,
                                                                       line: int) -> None:
    """A newcomer's report: "description: [link] text" was placed on line 2, field 'name' (the
    block mapping's first key), and no message said the value needed quotes."""
    memory = Memory(tmp_path)
    with pytest.raises(ConceptFormatError, match="goes in quotes") as caught:
        memory.put(markdown, agent="ag")
    assert caught.value.line == line and caught.value.field == "description", caught.value
    memory.close()
