"""JSON and YAML a person gives (sessions files, config files): errors that say where, never a traceback.

Python refuses to convert an integer of more than ``sys.get_int_max_str_digits()``
digits (4,300 by default) and raises a bare `ValueError`, which `json` and PyYAML let
through: these readers turn it, and every other parse failure, into an error naming
the place (line and column) and what is wrong.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any, Final

import yaml

from insika_knowledge.errors import UserError


def parse_json(text: str, where: str) -> Any:
    """`text` parsed as one JSON value.

    Args:
        text: the JSON text (one JSONL line, or a whole file).
        where: what the message starts with (``FILE:LINE`` for a JSONL line, ``FILE``).

    Raises:
        UserError: not JSON, an integer longer than Python converts, or nested too deeply;
            the message starts with `where` and gives the column (and the line, when
            `text` holds more than one).
    """
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        problem = exc.msg.removesuffix(" at")  # "Invalid control character at": no "at at"
        raise UserError(f"{where}: not JSON ({problem} at {_place(text, exc.pos)})") from None
    except ValueError as exc:  # int() past the digit limit; the decoder raises nothing else bare
        found = _long_integer(text)
        if found is None:
            raise UserError(f"{where}: not JSON ({exc})") from None
        raise UserError(f"{where}: an integer of {found.end(1) - found.start(1)} digits at "
                        f"{_place(text, found.start(1))}: numbers are limited to "
                        f"{sys.get_int_max_str_digits()} digits") from None
    except RecursionError:
        raise UserError(f"{where}: nested too deeply to read") from None


def load_yaml(text: str) -> Any:
    """`text` parsed as YAML with `yaml.SafeLoader`'s types.

    Raises:
        yaml.YAMLError: not YAML, an integer longer than Python converts, or a key written
            twice in one mapping (its message gives the line and column: ``an integer of N
            digits ... line L, column C``, ``duplicate key 'top_k' (first on line 2)``), as
            `yaml.safe_load` raises for other mistakes, so callers keep one handler.
    """
    return yaml.load(text, Loader=_Loader)  # noqa: S506 - a SafeLoader


def yaml_problem(exc: yaml.YAMLError) -> str:
    """What is wrong with a YAML text, in one line, where: ``line 2, column 10: expected ','
    or ']', but got '<stream end>' (a '[' opened here is never closed)`` (1-based; the place
    a bracket or a quote left open was opened, else where the parser stopped), instead of
    PyYAML's lines that name an ``"<unicode string>"``.
    """
    if not isinstance(exc, yaml.MarkedYAMLError):
        return " ".join(str(exc).split())
    opened = exc.context is not None and ("flow" in exc.context or "quoted" in exc.context)
    mark = (exc.context_mark if opened else exc.problem_mark) or exc.context_mark or exc.problem_mark
    problem = " ".join(f"{exc.problem or ''} ({exc.context})".split()) if opened and exc.problem \
        else " ".join((exc.problem or exc.context or "not YAML").split())
    return f"line {mark.line + 1}, column {mark.column + 1}: {problem}" if mark is not None else problem


class _Loader(yaml.SafeLoader):
    """`yaml.SafeLoader`, with an integer too long for Python and a key written twice in one
    mapping errors at their place (PyYAML keeps the last: a settings block written twice
    would silently lose the first).
    """

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        first: dict[tuple[str, str], int] = {}
        for key_node, _ in node.value:
            if not isinstance(key_node, yaml.ScalarNode) or key_node.tag == MERGE_TAG:
                continue
            key = (key_node.tag, key_node.value)
            if key in first:
                raise yaml.constructor.ConstructorError(
                    None, None, f"duplicate key {key_node.value!r} (first on line {first[key] + 1})",
                    key_node.start_mark)
            first[key] = key_node.start_mark.line
        return super().construct_mapping(node, deep)


#: The tag of a YAML merge key (``<<``): the keys it brings may be overridden.
MERGE_TAG: Final = "tag:yaml.org,2002:merge"


def _construct_int(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> Any:
    try:
        return yaml.SafeLoader.construct_yaml_int(loader, node)
    except ValueError:
        digits = sum(ch.isdigit() for ch in str(node.value))
        raise yaml.constructor.ConstructorError(
            None, None, f"an integer of {digits} digits: numbers are limited to "
            f"{sys.get_int_max_str_digits()} digits", node.start_mark) from None


_Loader.add_constructor("tag:yaml.org,2002:int", _construct_int)


def _long_integer(text: str) -> re.Match[str] | None:
    """The first JSON number in `text` longer than Python converts to an int (group 1: its
    digits), if any: digits where a value starts (after ``:``, ``[``, ``,`` or at the start),
    not a run of digits inside a string.
    """
    longest = sys.get_int_max_str_digits()
    return re.search(r"(?:^|[:\[,])\s*-?([0-9]{" + str(longest + 1) + ",})", text)


def _place(text: str, pos: int) -> str:
    """``column C`` of character offset `pos` (1-based), or ``line L, column C`` when `text`
    has a line break before `pos` (a line ending at its very end does not count).
    """
    line = text.count("\n", 0, pos) + 1
    column = pos - (text.rfind("\n", 0, pos) + 1) + 1
    return f"column {column}" if line == 1 else f"line {line}, column {column}"


#: Byte-order marks of the wide encodings, UTF-32's first (its little-endian mark starts as UTF-16's).
_WIDE_MARKS: Final = ((b"\xff\xfe\x00\x00", "UTF-32"), (b"\x00\x00\xfe\xff", "UTF-32"),
                      (b"\xff\xfe", "UTF-16"), (b"\xfe\xff", "UTF-16"))


def not_utf8(where: str, exc: UnicodeDecodeError, first_line: int = 1) -> UserError:
    """The error for bytes that are not UTF-8: ``WHERE:LINE: byte C of the line (b'\\xe9')
    is not UTF-8 ...``, the line and byte counted in the bytes `exc` decoded (a whole file,
    or the lines of it from `first_line` on).
    """
    data = exc.object
    wide = next((name for mark, name in _WIDE_MARKS if data.startswith(mark)), None) if first_line == 1 else None
    if wide is not None:  # a UTF-16 or UTF-32 byte-order mark: no byte of a line is the fault
        return UserError(f"{where}: the file is {wide} (it starts with a {wide} byte-order mark); save it as UTF-8")
    line = data.count(b"\n", 0, exc.start) + first_line
    column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
    return UserError(f"{where}:{line}: byte {column} of the line ({data[exc.start:exc.start + 1]!r}) is not UTF-8; "
                     "save the file as UTF-8 (it looks like Latin-1 or Windows-1252)")



def file_text(path: str | Path, where: str, error: type[UserError] = UserError) -> str:
    """The text of the UTF-8 file at `path` (a configuration or an agents file), a leading
    byte-order mark left out.

    Raises:
        UserError: (or `error`, one of its kinds) it cannot be read (``WHERE: No such file or
            directory``), or it is not UTF-8 (`not_utf8`: the line and byte named).
    """
    try:
        return Path(path).read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise error(str(not_utf8(where, exc))) from None
    except OSError as exc:
        raise error(f"{where}: {exc.strerror or exc}") from None


#: The most bytes a command reads from standard input for one message (1 MiB).
STDIN_MESSAGE_MAX: Final = 1 << 20


def stdin_text(wanted: str) -> str:
    """The text on standard input, for a command given ``-`` (``search -``,
    ``procedures recall -``).

    Args:
        wanted: what to give, for the message when it is empty ("give the customer's message").

    Raises:
        UserError: empty, over `STDIN_MESSAGE_MAX` bytes, or not UTF-8.
    """
    data = sys.stdin.buffer.read(STDIN_MESSAGE_MAX + 1)
    if len(data) > STDIN_MESSAGE_MAX:
        raise UserError(f"standard input is over {STDIN_MESSAGE_MAX:,} bytes: give the message's "
                        "question, not a whole transcript")
    if not data.strip():
        raise UserError(f"standard input is empty: {wanted}")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise not_utf8("standard input", exc) from None
