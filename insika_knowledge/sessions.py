"""Transcripts: readers for stored sessions (JSONL).

Session ids are checked by `insika_knowledge.ids`.

The turn the engine hands over (`Turn`, `AgentSpec`) is defined with the hooks in
`insika_knowledge.hookspecs` and re-exported here.

The JSONL schema is the normalised one of ``shared/data/README.md``: one object per
line with ``session_id``, ``messages`` (role, content, optional tool_calls,
tool_call_id, name), ``outcome`` and ``metadata``.
"""

from __future__ import annotations

import gzip
import io
import json
import os
import stat
import sys
import tempfile
import zlib
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from insika_knowledge.errors import UserError
from insika_knowledge.hookspecs import AgentSpec as AgentSpec  # re-exported: the hook types
from insika_knowledge.hookspecs import Turn as Turn
from insika_knowledge.ids import session_id_problem
from insika_knowledge.readers import not_utf8, parse_json
from insika_knowledge.wire.messages import MESSAGE_ROLES

#: The roles a session's message may have: those `Memory.learn` accepts (developer,
#: function and human_agent too: a backfill reads the same transcripts the hooks learn).
ROLES: Final = MESSAGE_ROLES


#: The keys a session record may give its start time under (top level or in ``metadata``).
TIME_KEYS: Final = ("started_at", "time_utc", "time", "created_at")
#: The first bytes of gzip data (RFC 1952).
_GZIP_MAGIC: Final = b"\x1f\x8b"


@dataclass(frozen=True)
class Session:
    """A stored conversation: its id, messages, outcome label and metadata.

    ``started_at`` is the record's top-level start time as written (the first of
    `TIME_KEYS` it has; a value that is not text, such as a number, as its JSON), None when
    it has none there.
    """

    session_id: str
    messages: list[dict[str, Any]]
    outcome: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    line: int = 0
    started_at: str | None = None


def read_sessions(path: str | os.PathLike[str]) -> Iterator[Session]:
    """Read a normalised JSONL file lazily, one `Session` per non-blank line.

    A UTF-8 byte-order mark at the start is skipped. A gzip-compressed file (known by its
    first two bytes, whatever its name) is read through `gzip`. ``-`` reads standard input
    (named ``<stdin>`` in messages).

    Raises:
        UserError: the file is missing, its gzip data is damaged or cut short (the last
            line read is named), a line is not UTF-8 (the byte is named), or a line is not
            such a JSON object (the message names the file and line number).
    """
    if os.fspath(path) == STDIN:
        yield from _sessions(Path("<stdin>"), _stdin())  # (not closed: the process's)
        return
    source = Path(path)
    try:
        handle = source.open("rb")
    except FileNotFoundError:
        raise UserError(f"sessions file {source} does not exist") from None
    except OSError as exc:
        raise UserError(f"cannot read sessions file {source}: {exc}") from None
    with handle:
        yield from _sessions(source, handle)


def _stdin() -> io.BufferedReader:
    """Standard input's bytes, buffered (a test runner's stdin may not be)."""
    raw = sys.stdin.buffer
    return raw if isinstance(raw, io.BufferedReader) else io.BufferedReader(raw)  # type: ignore[arg-type]


#: The path that names standard input.
STDIN: Final = "-"
#: The most bytes of a pipe `rereadable` copies (an endless one, ``/dev/zero``, would fill the disk).
MAX_PIPE_BYTES: Final = 2 << 30


@contextmanager
def rereadable(paths: Sequence[str]) -> Iterator[list[str]]:
    """`paths`, each readable more than once: a pipe, such as a shell's process
    substitution (``--sessions <(zcat runs.jsonl.gz)``) or standard input (``-``), is
    copied to a temporary file first (removed on exit); a regular file (or one that is
    missing: `read_sessions` names it) is given as it is.

    Raises:
        UserError: a pipe cannot be read, or holds more than `MAX_PIPE_BYTES` (2 GiB).
    """
    with tempfile.TemporaryDirectory(prefix="insika-sessions-") as folder:
        out = []
        for k, path in enumerate(paths):
            try:
                regular = path != STDIN and stat.S_ISREG(os.stat(path).st_mode)
            except OSError:
                regular = True  # missing or unreadable: read_sessions says which
            if regular:
                out.append(path)
                continue
            copy = Path(folder) / f"{k}-{'stdin' if path == STDIN else Path(path).name}"
            try:
                with (open(path, "rb") if path != STDIN else nullcontext(_stdin())) as source, \
                        copy.open("wb") as target:
                    copied = 0
                    while chunk := source.read(1 << 20):
                        copied += len(chunk)
                        if copied > MAX_PIPE_BYTES:
                            raise UserError(f"sessions file {path}: a pipe of more than {MAX_PIPE_BYTES >> 30} GiB "
                                            "is not copied (it is read more than once): write it to a file first")
                        target.write(chunk)
            except OSError as exc:
                raise UserError(f"cannot read sessions file {path}: {exc}") from None
            out.append(str(copy))
        yield out


def _sessions(source: Path, handle: io.BufferedReader) -> Iterator[Session]:
    compressed = handle.peek(len(_GZIP_MAGIC)).startswith(_GZIP_MAGIC)
    lines: Iterator[bytes] = iter(gzip.GzipFile(fileobj=handle, mode="rb") if compressed else handle)
    number = 0
    while True:
        try:
            raw = next(lines)
        except StopIteration:
            return
        except (OSError, EOFError, zlib.error) as exc:  # gzip.BadGzipFile is an OSError
            if not compressed:
                raise
            where = f"after line {number}" if number else "before its first line"
            raise UserError(f"sessions file {source}: its gzip data is damaged or cut short {where} ({exc})") from None
        number += 1
        if number == 1:
            raw = raw.removeprefix(b"\xef\xbb\xbf")  # a byte-order mark (an editor's UTF-8)
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            error = not_utf8(str(source), exc, first_line=number)
        else:
            if not line.strip():
                continue
            try:
                where = f"{source}:{number}"
                session = parse_session(line.rstrip("\r\n"), where=where, line=number)  # its end: a column
            except UserError as exc:
                error = exc
            else:
                yield session
                continue
        if compressed:
            _check_the_rest(source, lines, number)  # a changed byte is read as text before the checksum at the end
        raise error


def _check_the_rest(source: Path, lines: Iterator[bytes], number: int) -> None:
    """Read the rest of a gzip stream: raise `UserError` naming the damage when its data is
    damaged (a line that reads wrongly is then no mistake of its writer's).
    """
    try:
        for _ in lines:
            pass
    except (OSError, EOFError, zlib.error) as exc:
        raise UserError(f"sessions file {source}: its gzip data is damaged "
                        f"(line {number} read wrongly: {exc})") from None


def parse_session(text: str, *, where: str = "<input>", line: int = 0) -> Session:
    """Parse one JSONL line into a `Session`.

    Raises:
        UserError: invalid JSON (`insika_knowledge.readers.parse_json`: the column is
            named, and an integer of more digits than Python converts is one), a missing or
            invalid ``session_id`` (see `session_id_problem`), a missing ``messages``, a
            message without a known role or whose content is neither text, a list of parts
            nor null, a ``tool_calls`` that is not a list of named calls (or a ``tool_use``
            block without a name), ``metadata`` that is no object, or text that cannot be written as
            UTF-8 (a lone surrogate, which JSON can spell as ``\\ud800``); the message starts
            with `where`.
    """
    data = parse_json(text, where)
    if not isinstance(data, dict):
        raise UserError(f"{where}: a session must be a JSON object")
    session_id = data.get("session_id")
    if "session_id" not in data:
        raise UserError(f"{where}: 'session_id' must be non-empty text")
    problem = session_id_problem(session_id)
    if problem is not None or not isinstance(session_id, str):  # not text always has a problem
        raise UserError(f"{where}: 'session_id' {problem}")
    messages = data.get("messages")
    if not isinstance(messages, list):
        raise UserError(f"{where}: 'messages' must be a list")
    for i, message in enumerate(messages):
        if not isinstance(message, dict) or message.get("role") not in ROLES:
            given = f"its role is {message.get('role')!r}" if isinstance(message, dict) and "role" in message \
                else "it has no role" if isinstance(message, dict) else f"it is {type(message).__name__}, not an object"
            raise UserError(f"{where}: messages[{i}] needs a role of {sorted(ROLES)} ({given})")
        content = message.get("content")
        if content is not None and not isinstance(content, (str, list)):  # as `Memory.learn` refuses it
            raise UserError(f"{where}: messages[{i}].content must be text, a list of parts or null, "
                            f"not {type(content).__name__}")
        if not _encodable(message):
            raise UserError(
                f"{where}: messages[{i}] holds text that cannot be written as UTF-8 "
                "(a lone surrogate such as \\ud800)"
            )
    _check_calls(messages, where)
    metadata = data.get("metadata")
    if metadata is not None and not isinstance(metadata, dict):  # its task, group and labels would be lost
        raise UserError(f"{where}: 'metadata' must be a JSON object or null, not {type(metadata).__name__}")
    written = next((data[k] for k in TIME_KEYS if data.get(k) is not None), None)
    started = written if written is None or isinstance(written, str) else json.dumps(written)[:80]  # no date
    return Session(session_id, messages, data.get("outcome"), metadata or {}, line, started)


def _check_calls(messages: Sequence[Mapping[str, Any]], where: str) -> None:
    """Refuse a ``tool_calls`` that is not a list of named calls, or a ``tool_use`` block
    without a name: the live path skips such an entry (a model request may hold anything),
    but a labelled run that lost a call would be scored as a run that made no write. A name
    with spaces around it is refused too (it would be another tool).
    """
    for i, message in enumerate(messages):
        calls = message.get("tool_calls")
        if calls is not None and not isinstance(calls, list):
            raise UserError(f"{where}: messages[{i}].tool_calls must be a list")
        for j, call in enumerate(calls or ()):
            function = call.get("function", call) if isinstance(call, dict) else None
            _check_name(function.get("name") if isinstance(function, dict) else None,
                        f"{where}: messages[{i}].tool_calls[{j}]", "function.name, or name in the normalised form")
        content = message.get("content")
        for j, block in enumerate(content if isinstance(content, list) else ()):
            if isinstance(block, dict) and block.get("type") == "tool_use":
                _check_name(block.get("name"), f"{where}: messages[{i}].content[{j}]", "a tool_use block's name")


def _check_name(name: object, where: str, field: str) -> None:
    if not isinstance(name, str) or not name.strip():
        raise UserError(f"{where} has no tool name ({field})")
    if name != name.strip():
        raise UserError(f"{where}: tool name {json.dumps(name)[:60]} has spaces around it")


def _encodable(value: Any) -> bool:
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
