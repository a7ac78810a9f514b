from __future__ import annotations

from hypothesis import example, given, settings
from hypothesis import strategies as st

from insika_knowledge import concept
from insika_knowledge.index.tokenizer import TOKENIZER, DocumentTokenizer

TRICKY = ("aZ09 .,;:()/%+=_'\"!?&$@*-#\t\n\r~<>|[]{}`\\^"
          "\u00c0\u00e7\u00e3\u0131\u024f\u0250\u00d7\u2028\u0085\ufeffxyYNnoOfF")


@settings(max_examples=3000, deadline=None)
@given(st.text(alphabet=TRICKY, max_size=14))
@example("yes")
@example("On")
@example("0x1F")
@example("1_000")
@example("190:20:30")
@example("2001-12-14")
@example("3.5e+3")
@example("a:b")
@example("ends with space ")
@example("Null")
@example("=")
@example("09")  # an integer to a YAML 1.2 reader, text to PyYAML: quoted either way
def test_the_fast_plain_scalar_check_decides_as_yaml_load_does(text: str) -> None:
    assert concept._plain_is_safe(text) == concept._plain_is_safe_by_yaml(text)


@given(st.text(alphabet="abc 12-ç\u00e3.,", max_size=30))
def test_the_tokenizer_memo_returns_what_analysis_gives(text: str) -> None:
    fresh = DocumentTokenizer()
    first = list(TOKENIZER(text))
    assert list(TOKENIZER(text)) == first == list(fresh(text))
