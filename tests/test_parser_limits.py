"""The record parser fails cleanly and linearly: limits before YAML, BOM and line ends, no 500."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import make_concept
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from starlette.testclient import TestClient

from insika_knowledge.concept import NESTING_MAX, NUMBER_MAX, parse, serialize
from insika_knowledge.errors import ConceptFormatError
from insika_knowledge.memory import Memory
from insika_knowledge.studio.app import create_app

RECORD = serialize(make_concept("frete-gratis", sources=("s1", "s2")))
TOKEN = "test-token-0123456789"


def _with(key: str, value: str) -> str:
    """`RECORD` with the frontmatter line of `key` replaced by ``key: value``."""
    lines = RECORD.split("\n")
    index = next(i for i, line in enumerate(lines) if line.startswith(f"{key}:"))
    lines[index] = f"{key}: {value}"
    return "\n".join(lines)


def _error(text: str) -> ConceptFormatError:
    with pytest.raises(ConceptFormatError) as info:
        parse(text)
    return info.value


# ----------------------------------------------------------------------------- limits


@pytest.mark.parametrize("depth", [NESTING_MAX + 1, 1000, 30_000])
def test_deep_nesting_is_refused_before_yaml_naming_line_and_field(depth: int) -> None:
    error = _error(_with("sources", "[" * depth + "]" * depth))
    assert (error.line, error.field) == (7, "sources")
    assert "nested" in error.problem


def test_brackets_inside_text_are_not_nesting() -> None:
    concept = make_concept("x", description="a [[[[[[[[[[[[[[[[[[[[ b ]]]] c")
    assert parse(serialize(concept)) == concept
    quoted = _with("description", "'" + "[" * 50 + "'")
    assert parse(quoted).description == "[" * 50


@pytest.mark.parametrize("digits", [NUMBER_MAX + 1, 309, 400, 4_300, 50_000])
@pytest.mark.parametrize("key", ["confidence", "occurrences"])
def test_huge_numbers_are_refused_naming_line_and_field(key: str, digits: int) -> None:
    error = _error(_with(key, "1" * digits))
    assert error.field == key and error.line == (6 if key == "confidence" else 8)
    assert "at most" in error.problem


def test_an_oversized_frontmatter_is_refused() -> None:
    sources = "[" + ", ".join(f'"s{i}"' for i in range(20_000)) + "]"
    error = _error(_with("sources", sources))
    assert (error.line, error.field) == (7, "sources") and "frontmatter is" in error.problem


def test_a_byte_order_mark_and_any_line_ends_are_read() -> None:
    concept = parse(RECORD)
    assert parse("\ufeff" + RECORD) == concept
    assert parse(RECORD.replace("\n", "\r\n")) == concept
    assert parse(RECORD.replace("\n", "\r")) == concept
    assert parse("\ufeff" + RECORD.replace("\n", "\r")) == concept


@pytest.mark.parametrize("separator", ["\u2028", "\u2029", "\x85", "\r"])
def test_a_yaml_line_break_inside_a_value_names_the_right_line(separator: str) -> None:
    error = _error(_with("description", f"Free shipping{separator}above 199."))
    assert (error.line, error.field) == (3, "description")
    assert f"U+{ord(separator):04X}" in error.problem


def test_separators_in_the_body_are_kept() -> None:
    text = RECORD.rstrip("\n") + " and\u2028more\n"
    assert parse(text).body.endswith("and\u2028more")


# ----------------------------------------------------------------------------- fuzz

_NASTY = st.one_of(
    st.integers(1, 3_000).map(lambda n: "[" * n),
    st.integers(1, 3_000).map(lambda n: "{a: " * n),
    st.integers(1, 6_000).map(lambda n: "9" * n),
    st.integers(1, 500).map(lambda n: "0." + "5" * n),
    st.sampled_from(["\x00", "\x07", "\x1b", "\x85", "\u2028", "\u2029", "\r", "\ufeff", "\t",
                     "&a", "*a", "!!python/object", "<<: *a", "'", '"', "#", ": ", "- ", "---"]),
    st.text(max_size=50),
)
_KEYS = st.sampled_from(["name", "description", "type", "provenance", "confidence", "sources",
                         "occurrences", "created_at", "updated_at"])


def _fuzzed(key: str, pieces: list[str], where: str) -> str:
    value = "".join(pieces)
    if where == "value":
        return _with(key, value)
    if where == "line":
        return RECORD.replace("\ntype:", f"\n{value}\ntype:", 1)
    return value + RECORD if where == "prefix" else RECORD + value


@settings(max_examples=300, deadline=None)
@given(_KEYS, st.lists(_NASTY, min_size=1, max_size=4),
       st.sampled_from(["value", "line", "prefix", "suffix"]))
def test_any_record_parses_or_is_refused_with_a_line(key: str, pieces: list[str], where: str) -> None:
    text = _fuzzed(key, pieces, where)
    try:
        parse(text)
    except ConceptFormatError as exc:
        assert exc.line is not None, str(exc)


def test_the_studio_answers_4xx_never_500_to_any_record(tmp_path: Path) -> None:
    import re

    memory = Memory(tmp_path / "data")
    with memory.store("acme").transaction() as tx:
        tx.put("shop", make_concept("frete-gratis"), reason="extract", actor="engine")
    url = "/studio/knowledge/frete-gratis?agent=shop&tenant=acme"

    def csrf(page: str) -> str:
        match = re.search(r'name="csrf" value="([^"]+)"', page)
        assert match
        return match.group(1)

    with TestClient(create_app(memory, TOKEN), base_url="http://127.0.0.1",
                        raise_server_exceptions=False) as client:
        login = client.get("/studio/login")
        token = csrf(client.post("/studio/login", data={"token": TOKEN, "csrf": csrf(login.text)}).text)

        @settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
        @given(_KEYS.filter(lambda k: k != "name"), st.lists(_NASTY, min_size=1, max_size=3),
               st.sampled_from(["value", "line", "prefix", "suffix"]))
        def save(key: str, pieces: list[str], where: str) -> None:
            text = _fuzzed(key, pieces, where)
            response = client.post(url, data={"csrf": token, "version": "1", "markdown": text},
                                   follow_redirects=False)
            # 303 saved; 409 stale (an earlier example saved); 422 refused, naming the line.
            assert response.status_code in (303, 409, 422), response.status_code
            if response.status_code == 422:
                assert "line " in response.text  # the refusal names its line

        save()
    memory.close()


# ----------------------------------------------------------------------------- linear time


def _cost_s(text: str) -> float:
    """The least of 3 parse times of `text`, in seconds of this thread's CPU (never below 1
    ms: noise floor). CPU time, not wall time: other processes on a loaded machine (the
    suite's other worker, a build) do not count, so the ratio below measures the parser.
    """
    best = float("inf")
    for _ in range(3):
        started = time.thread_time()
        try:
            parse(text)
        except ConceptFormatError:
            pass
        best = min(best, time.thread_time() - started)
    return max(best, 0.001)


_GROWING: dict[str, Callable[[int], str]] = {
    "nested brackets": lambda n: _with("sources", "[" * n),
    "nested mappings": lambda n: _with("sources", "{a: " * (n // 4)),
    "flat flow list": lambda n: _with("sources", "[" + "[]," * (n // 3) + "]"),
    "long number": lambda n: _with("confidence", "1" * n),
    "many lines": lambda n: RECORD.replace("\ntype:", "\n" + "# c\n" * (n // 4) + "type:", 1),
    "long quoted text": lambda n: _with("description", '"' + 'a\\"' * (n // 3) + '"'),
    "long body": lambda n: RECORD + "x" * n,
    "no closing line": lambda n: "---\n" + "a: b\n" * (n // 5),
}


@pytest.mark.parametrize("shape", sorted(_GROWING))
def test_parse_time_grows_linearly(shape: str) -> None:
    build = _GROWING[shape]
    small, large = _cost_s(build(4_000)), _cost_s(build(32_000))
    # 8 times the input: linear is ~8x; quadratic would be ~64x. Generous for noisy machines.
    assert large / small < 8 * 4, f"{shape}: {small * 1000:.1f} ms -> {large * 1000:.1f} ms"
