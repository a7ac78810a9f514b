"""Steps: each tool call or shell command of a trace, canonicalised and classified once.

A `Step` keeps only what mining, pruning and cursor tracking need, never the raw
command or output: its template (secrets, bodies and volatile tokens replaced), a
signature for matching retries and procedure steps, whether it only explores, whether
it is a verify command, how it ended, and short hashes (blake2b, 48 bits) of the
targets it used and, for exploratory steps, the targets its output revealed, so a
later step that uses a discovered target can say where the target came from.

`TraceBuilder` turns trace events (`insika_knowledge.procedures.trace.events.events`) into steps,
incrementally: a request adds its new messages, and a result that arrives in a later
request completes the call it answers. It also carries what a step's meaning depends on
earlier in the trace (`TraceContext`):

- a file the trace created with a whole-file write and then ran as a script is the
  agent's own scratch script: its name is volatile, so every step that names it (its
  creation, its edits, ``python /workspace/reproduce_error.py``, ``cd /workspace &&
  python3 reproduce_error.py``) reads ``<NEW_FILE>.py``, earlier steps included;
- running a script (``python x.py``, ``node x.js``, ``bash x.sh``...) after an edit of some
  other file is a check of that edit: a verify step (`TraceContext.verify_scripts`, on by
  default) that passes when it exits 0 (or, without a stated exit code, prints no error).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Final

from insika_knowledge.procedures.trace import shell, verify
from insika_knowledge.procedures.trace.canonical import (
    NEW_FILE,
    canonical_call,
    canonical_command,
    canonical_text,
    personal,
)
from insika_knowledge.procedures.trace.events import Event, events

PENDING: Final = "pending"
SHELL: Final = "shell"
TOOL: Final = "tool"

_SHELL_TOOLS: Final = frozenset(
    {
        "bash",
        "shell",
        "sh",
        "zsh",
        "terminal",
        "run_command",
        "execute_command",
        "exec",
        "run_shell_command",
        "execute_bash",
        "run_terminal_cmd",
        "run_bash",
        "cmd",
        "command",
        "powershell",
        "container_exec",
        "local_shell",
        "shell_exec",
        "run",
        "execute",
    }
)
_COMMAND_KEYS: Final = ("command", "cmd", "script", "commands", "input")
_READ_ONLY_TOOL_RE: Final = re.compile(
    r"^(?:get|list|search|find|lookup|look|read|fetch|query|describe|show|view|retrieve|browse|"
    r"open|scroll|goto|check|inspect|count|peek|grep|glob|ls|cat|head|tail|explore|preview)(?:_|$)"
    r"|^(?:think|calculate|calculator|reflect|plan|note|noop)$"
)
_EDITOR_TOOL_RE: Final = re.compile(
    r"^(?:edit|insert|str_replace|str_replace_editor|str_replace_based_edit_tool|write|write_file|"
    r"create|create_file|apply_patch|replace_in_file|edit_file|patch|text_editor|file_editor)$"
)
_UPDATE_TOOL_RE: Final = re.compile(r"^(?:update|set|modify|edit|change|put|replace)_")
_PATH_KEYS: Final = (
    "path",
    "file_path",
    "filepath",
    "filename",
    "file_name",
    "file",
    "target_file",
)
_PATH_KEY_SET: Final = frozenset(_PATH_KEYS)
_WHOLE_FILE_COMMANDS: Final = frozenset({"create", "write", "overwrite"})
_CAMEL_RE: Final = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_FINDABLE_RE: Final = re.compile(r"(?=[\w./-]*(?:\d|/|\.[A-Za-z]))[\w][\w./-]{2,119}")
#: A word-like token (letters, digits, ``_ . / -``) with a digit, a slash or a file extension;
#: possessive, so a token without one fails without backtracking.
_MARKED_RE: Final = re.compile(r"(?<![\w./-])\.{0,2}[A-Za-z_-]*+(?:[\d/]|\.[A-Za-z])[\w./-]*+")
_MAX_HASHES: Final = 256
#: The most user messages before the first write a trace keeps (`TraceBuilder.asked`).
MAX_ASKED: Final = 24
_MAX_USER_AT: Final = 4096
#: Programs that run a script file given as an argument.
_SCRIPT_VERBS: Final = frozenset({"python", "node", "bash", "sh", "zsh", "ruby", "perl", "php"})
_SCRIPT_FILE_RE: Final = re.compile(r"[\w.-]+\.(?:py|js|mjs|cjs|ts|sh|bash|rb|pl|php)")
_TEMPLATE_PATH_RE: Final = re.compile(
    r"\b(?:path|file_path|filepath|filename|file_name|file|target_file)=([^,\s)]+)"
)


@dataclass
class TraceContext:
    """What the meaning of a step depends on earlier in its trace.

    Attributes:
        verify_scripts: agent scripts are read as checks: a script run after an edit of
            another file is a verify step, and a file the trace created and then ran is a
            scratch file (off: neither).
        created: base names of the files the trace created with a whole-file write.
        edited: base names of every file the trace wrote so far.
        scratch: created files the trace then ran as scripts (their names read
            ``<NEW_FILE>.ext`` in every step).
    """

    verify_scripts: bool = True
    created: set[str] = field(default_factory=set)
    edited: set[str] = field(default_factory=set)
    scratch: set[str] = field(default_factory=set)
    _pattern: re.Pattern[str] | None = None
    _pattern_for: frozenset[str] = frozenset()

    def observe(self, step: Step) -> None:
        """Note the file `step` wrote (its edit key, else an editor call's path), if any."""
        key = step.edit_key
        if key.startswith("@open"):
            return
        if key:
            path, _, where = key.rpartition("|")
        elif step.kind == TOOL and not step.read_only and _EDITOR_TOOL_RE.match(
            tool_base_name(step.name)
        ):
            found = _TEMPLATE_PATH_RE.search(step.template)
            if found is None:
                return
            path, where = found.group(1), ""
        else:
            return
        name = path.rstrip("/").rsplit("/", 1)[-1]
        if not name or where == "rm":
            return
        self.edited.add(name)
        if where == "*" and "." in name.strip("."):
            self.created.add(name)
            if NEW_FILE in step.template:  # a restored step renamed before
                self.scratch.add(name)

    def rename(self, text: str) -> str:
        """`text` with the scratch files' names replaced by ``<NEW_FILE>`` (extension kept)."""
        if not self.scratch or not any(n in text for n in self.scratch):
            return text
        names = frozenset(self.scratch)
        if self._pattern is None or names != self._pattern_for:
            alternatives = "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True))
            self._pattern = re.compile(r"(?<![\w.-])(?:" + alternatives + r")(?![\w-])")
            self._pattern_for = names
        return self._pattern.sub(lambda m: NEW_FILE + _extension(m.group(0)), text)


def _extension(name: str) -> str:
    stem, dot, ext = name.rpartition(".")
    return "." + ext if dot and stem else ""


_CALL_KEY_RE: Final = re.compile(r"#[0-9a-f]{12}")


@lru_cache(maxsize=65536)
def call_key(call_id: str) -> str:
    """What a step keeps of its call's wire id: ``#`` + 12 hex digits of its blake2b.

    A provider's tool-call id (``toolu_...``, ``call_...``) is opaque but ties the stored
    step to the provider's logs; the step only needs it to pair the call with its result,
    so it keeps a digest. Idempotent: a key is its own key.
    """
    if _CALL_KEY_RE.fullmatch(call_id):
        return call_id
    return "#" + hashlib.blake2b(call_id.encode("utf-8", "surrogatepass"), digest_size=6).hexdigest()


@lru_cache(maxsize=65536)
def target_hash(token: str) -> str:
    """A 12-hex-digit blake2b digest of a target token (an id, a path), stable across runs."""
    return hashlib.blake2b(token.encode("utf-8", "surrogatepass"), digest_size=6).hexdigest()


@lru_cache(maxsize=65536)
def _path_hashes(token: str) -> tuple[str, ...]:
    token = token.strip("'\"`,;:()[]{}.-/")
    if not token:
        return ()
    if "/" in token:
        base = token.rstrip("/").rsplit("/", 1)[-1]
        if base and base != token:
            return (target_hash(token), target_hash(base))
    return (target_hash(token),)


#: A tool whose call hands the task over or gives it up (its name, at the start).
_HANDOFF_RE: Final = re.compile(
    r"^(?:\w+(?:__|\.))?(?:transfer|hand_?off|escalate|give_?up|abort|request_human|ask_human"
    r"|contact_human|human_handoff)"
)


def is_handoff_tool(name: str) -> bool:
    """`name` is a tool that hands the task to a human or gives it up (``transfer_to_human_agents``)."""
    return _HANDOFF_RE.match(name.lower()) is not None


@lru_cache(maxsize=4096)
def tool_base_name(name: str) -> str:
    """`name` without a namespace (``srv__get_x`` -> ``get_x``), CamelCase made snake_case."""
    for sep in ("__", ".", "/", ":"):
        if sep in name:
            name = name.rsplit(sep, 1)[-1]
    return _CAMEL_RE.sub("_", name).lower()


@dataclass(slots=True)
class Step:
    """One call or command of a trace, canonicalised.

    Attributes:
        seq: position in the session (0-based).
        call_id: the key of the call's wire id (`call_key`; the id itself is not kept).
        kind: ``tool`` or ``shell``.
        name: the tool name, or the shell command's verb (``pytest``, ``git commit``).
        template: the canonical text (`insika_knowledge.procedures.trace.canonical`).
        signature: what a retry or a procedure step is matched on: the tool name and its
            argument names, or the template's first line.
        read_only: the step only explores (``ls``, ``cat``, ``get_*`` tools...).
        verify: the step is a verify command (a test run, a type check, a build).
        configured: the verify command matched a configured pattern.
        status: ``pending`` (no result yet), ``ok``/``error`` for ordinary steps,
            ``pass``/``fail``/``unknown`` for verify steps.
        uses: ``(parameter, target hash)`` for each target in the arguments.
        finds: target hashes the output revealed (exploratory steps only).
        edit_key: what an edit writes (file and range, or a record) so a later write of
            the same thing supersedes it; ``""`` for anything else.
        opens: the canonical path a viewer step opened (``open src/x.py``), else ``""``.
        on_open_file: an editor step that names no file (it edits the open one).
        index: the position of the message that carried the call.
        values: ``(argument, value)`` for the top-level arguments whose value is an
            enumeration word or short phrase (``cabin="economy"``, ``reason="no longer
            needed"``; `enum_values`), so an operation can show the values seen.
        fields: for an exploring tool step, ``(field, value)`` of the top-level fields of
            its JSON result whose value is an enumeration word (``status="pending"``,
            ``cabin="business"``): the state a later write may depend on.
    """

    seq: int
    call_id: str
    kind: str
    name: str
    template: str
    signature: str
    read_only: bool = False
    verify: bool = False
    configured: bool = False
    status: str = PENDING
    uses: tuple[tuple[str, str], ...] = ()
    finds: tuple[str, ...] = ()
    edit_key: str = ""
    opens: str = ""
    on_open_file: bool = False
    index: int = -1
    values: tuple[tuple[str, str], ...] = ()
    fields: tuple[tuple[str, str], ...] = ()

    @property
    def failed(self) -> bool:
        """The step ended in an error (or a failing check)."""
        return self.status in (verify.ERROR, verify.FAIL)

    def to_json(self) -> list[Any]:
        """A compact JSON-ready list (the ``capture_steps.step`` column)."""
        return [
            self.seq,
            self.call_id,
            self.kind,
            self.name,
            self.template,
            self.signature,
            int(self.read_only),
            int(self.verify),
            int(self.configured),
            self.status,
            [list(u) for u in self.uses],
            list(self.finds),
            self.edit_key,
            self.opens,
            int(self.on_open_file),
            self.index,
            [list(v) for v in self.values],
            [list(f) for f in self.fields],
        ]

    @classmethod
    def from_json(cls, data: list[Any]) -> Step:
        """The inverse of `to_json` (a step stored before `values` existed has none)."""
        values = tuple((str(k), str(v)) for k, v in data[16]) if len(data) > 16 else ()
        fields = tuple((str(k), str(v)) for k, v in data[17]) if len(data) > 17 else ()
        (
            seq,
            call_id,
            kind,
            name,
            template,
            signature,
            read_only,
            is_verify,
            configured,
            status,
            uses,
            finds,
            edit_key,
            opens,
            on_open_file,
            index,
        ) = data[:16]
        return cls(
            int(seq),
            call_id,
            kind,
            name,
            template,
            signature,
            bool(read_only),
            bool(is_verify),
            bool(configured),
            status,
            tuple(tuple(u) for u in uses),
            tuple(finds),
            edit_key,
            opens,
            bool(on_open_file),
            int(index),
            values,
            fields,
        )


#: An enumeration value: a lower-case word or a phrase of up to four (``no longer needed``).
_ENUM_VALUE_RE: Final = re.compile(r"[a-z][a-z_-]{0,23}(?: [a-z][a-z_-]{0,23}){0,3}")
#: Argument names whose values are never shown: ids, people, secrets, bodies, free text.
_NO_VALUE_KEY_RE: Final = re.compile(
    r"(?i)(?:^|_)(?:ids?|name|user|username|login|email|phone|address\d?|city|zip|postcode|dob|birth\w*"
    r"|path|file\w*|url|token|key|secret|password|summary|description|message|note|notes|comment\w*"
    r"|query|prompt|question|answer|title|subject|text|content|body|code|command|cmd|script)$"
)


def enum_values(arguments: Any) -> tuple[tuple[str, str], ...]:
    """``(argument, value)`` for the top-level string arguments that are enumeration values.

    A value is one lower-case word or a phrase of up to four (letters, ``_`` and ``-``;
    at most 24 characters a word): ``economy``, ``basic_economy``, ``no longer needed``.
    Arguments named like ids, people, places, files, secrets, bodies or prose are left
    out whatever their value, and so is a value the redactor would change (`personal`).
    """
    if not isinstance(arguments, dict):
        return ()
    out = []
    for key, value in arguments.items():
        if (
            isinstance(value, str)
            and len(value) <= 60
            and _ENUM_VALUE_RE.fullmatch(value)
            and not _NO_VALUE_KEY_RE.search(str(key))
            and personal(value) == value
        ):
            out.append((str(key), value))
    return tuple(sorted(out))


def _command_of(arguments: Any) -> str | None:
    if isinstance(arguments, str):
        return arguments
    if not isinstance(arguments, dict):
        return None
    for key in _COMMAND_KEYS:
        value = arguments.get(key)
        if isinstance(value, str):
            return value
        if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
            if len(value) >= 3 and value[0] in ("bash", "sh", "zsh") and value[1] in ("-c", "-lc"):
                return str(value[2])
            return " ".join(value)
    return None


def _scalar_uses(key: str, value: Any, out: list[tuple[str, str]]) -> None:
    if len(out) >= _MAX_HASHES:
        return
    if isinstance(value, str):
        value = value.lstrip("#")  # an order number "#W1234567" reads "W1234567" in a result's text too
        if 2 < len(value) <= 120 and _FINDABLE_RE.fullmatch(value):
            out.extend((key, h) for h in _path_hashes(value))
    elif isinstance(value, dict):
        for v in value.values():
            _scalar_uses(key, v, out)
    elif isinstance(value, list):
        for item in value:
            _scalar_uses(key, item, out)


def finds_in(result: str) -> tuple[str, ...]:
    """Hashes of the targets (ids, paths, file names) an exploratory step's output shows.

    The output is read as text (a JSON result included): every word-like token with a
    digit, a slash or a file extension, in the first 8000 characters. When a result shows
    more than 256 such hashes, the first tokens are kept (in order: the same result gives
    the same hashes in every process).
    """
    found: set[str] = set()
    for token in dict.fromkeys(_MARKED_RE.findall(result[:8000])):
        if 2 < len(token) <= 120:
            found.update(_path_hashes(token))
            if len(found) >= _MAX_HASHES:
                break
    return tuple(sorted(found))


def given_in(text: str) -> set[str]:
    """Hashes of the tokens of a user's message: targets the agent was given, not discovered."""
    out: set[str] = set()
    for token in set(_MARKED_RE.findall(text[:4000])):
        if 2 < len(token) <= 120:
            out.update(_path_hashes(token))
    return out


#: The longest arguments (their `repr`) whose reading is cached: a lookup recurs (the same
#: record fetched again in a session, or by the next run of a task), a long edit rarely does.
_CACHED_ARGUMENTS: Final = 2000


@dataclass(frozen=True, slots=True)
class _Reading:
    """What a tool call says whatever its position and id (`_tool_step`)."""

    template: str
    signature: str
    read_only: bool
    uses: tuple[tuple[str, str], ...]
    edit_key: str
    opens: str
    on_open_file: bool
    values: tuple[tuple[str, str], ...]


class _Arguments:
    """A call's arguments, hashed and compared by their `repr` (JSON values: `repr` tells
    ``"1"`` from ``1`` and ``True``), so a reading can be cached by them.
    """

    __slots__ = ("key", "value", "_hash")

    def __init__(self, key: str, value: Any) -> None:
        self.key, self.value, self._hash = key, value, hash(key)

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Arguments) and other.key == self.key


def _tool_step(seq: int, event: Event) -> Step:
    key = repr(event.arguments)
    if len(key) <= _CACHED_ARGUMENTS:
        r = _tool_reading(event.name, _Arguments(key, event.arguments))
    else:
        r = _tool_reading.__wrapped__(event.name, _Arguments(key, event.arguments))
    return Step(seq, call_key(event.call_id), TOOL, event.name, r.template, r.signature,
                read_only=r.read_only, uses=r.uses, edit_key=r.edit_key, opens=r.opens,
                on_open_file=r.on_open_file, values=r.values)


@lru_cache(maxsize=4096)
def _tool_reading(name: str, arguments: _Arguments) -> _Reading:
    base = tool_base_name(name)
    args = arguments.value if isinstance(arguments.value, dict) else {"args": arguments.value}
    template = canonical_call(name, args)
    signature = f"{name}({','.join(sorted(str(k) for k in args))})"
    sub = str(args.get("command", "")).lower() if _EDITOR_TOOL_RE.match(base) else ""
    read_only = bool(_READ_ONLY_TOOL_RE.match(base)) or sub == "view"
    uses: list[tuple[str, str]] = []
    for key, value in args.items():
        _scalar_uses(str(key), value, uses)
    edit_key, opens, on_open = "", "", False
    path = (
        None if _PATH_KEY_SET.isdisjoint(args)
        else next((args[k] for k in _PATH_KEYS if isinstance(args.get(k), str)), None)
    )
    if base == "open" and path:
        opens = canonical_text(path)
    elif _EDITOR_TOOL_RE.match(base) and sub != "view":
        target = canonical_text(path) if path else "@open"
        on_open = path is None
        if sub in _WHOLE_FILE_COMMANDS or base in ("write", "write_file", "create", "create_file"):
            where = "*"
        elif "start_line" in args or "end_line" in args:
            where = f"{args.get('start_line')}:{args.get('end_line')}"
        elif any(k in args for k in ("old_str", "search", "old_string")):
            anchor = args.get("old_str") or args.get("search") or args.get("old_string") or ""
            where = target_hash(str(anchor))
        else:
            where = ""
        edit_key = f"{target}|{where}" if where and base not in ("insert",) else ""
    elif _UPDATE_TOOL_RE.match(base):
        ids = [f"{k}={v}" for k, v in sorted(args.items()) if str(k).lower().endswith("id")]
        edit_key = f"{name}|{target_hash(';'.join(ids))}" if ids else ""
    return _Reading(template, signature, read_only, tuple(uses), edit_key, opens, on_open,
                    () if read_only else enum_values(args))


def _scripts_run(parsed: shell.Command) -> list[str]:
    """Base names of the script files the command runs (``python x.py`` -> ``x.py``)."""
    out = []
    for verb, words in zip(parsed.verbs, parsed.words, strict=True):
        if verb not in _SCRIPT_VERBS:
            continue
        for word in words[1:]:
            name = word.rsplit("/", 1)[-1]
            if _SCRIPT_FILE_RE.fullmatch(name):
                out.append(name)
                break
    return out


def _script_check(scripts: list[str], context: TraceContext | None) -> bool:
    """A script run after the trace edited some other file (a check of that edit)."""
    if context is None or not context.verify_scripts or not context.edited:
        return False
    return any(context.edited - {name} for name in scripts)


def _shell_step(
    seq: int,
    event: Event,
    command: str,
    extra: tuple[re.Pattern[str], ...],
    context: TraceContext | None = None,
) -> Step:
    parsed = shell.parse(command)
    template = shell.action_template(canonical_command(command))
    first_line = template.split("\n", 1)[0]
    is_verify = any(verify.is_verify(v) for v in parsed.verbs)
    configured = not is_verify and verify.is_verify("", command, extra) if extra else False
    scripts = _scripts_run(parsed)
    if scripts and context is not None and context.verify_scripts:
        context.scratch.update(n for n in scripts if n in context.created)
    if not is_verify and not configured and _script_check(scripts, context):
        configured = True
    uses: list[tuple[str, str]] = []
    edit_key, opens, on_open = "", "", False
    for verb, words in zip(parsed.verbs, parsed.words, strict=True):
        nv = len(verb.split(" "))
        args = [w for w in words[nv:] if not w.startswith("-")]
        for word in args:
            if len(uses) < _MAX_HASHES and 2 < len(word) <= 120 and _FINDABLE_RE.search(word):
                uses.extend(("target", h) for h in _path_hashes(word))
        if verb in shell.OPEN_VERBS and args:
            opens = canonical_text(args[0])
        elif verb in shell.EDITOR_VERBS:
            on_open = True
            edit_key = "@open|" + (personal(args[0]) if args else "")
        elif verb == "create" and args:
            edit_key = canonical_text(args[0]) + "|*"
        elif verb == "rm" and len(args) == 1 and len(parsed.verbs) == 1:
            edit_key = canonical_text(args[0]) + "|rm"
    heredoc = re.search(r"(?:^|\s)>\s*(\S+)\s*<<|<<-?\s*['\"]?\w+['\"]?\s*>\s*(\S+)", command)
    if heredoc:
        edit_key = canonical_text(heredoc.group(1) or heredoc.group(2)) + "|*"
    name = parsed.verb or "sh"
    return Step(
        seq,
        call_key(event.call_id),
        SHELL,
        name,
        template,
        first_line,
        read_only=parsed.read_only and not is_verify and not configured,
        verify=is_verify or configured,
        configured=configured,
        uses=tuple(uses),
        edit_key=edit_key,
        opens=opens,
        on_open_file=on_open,
    )


def make_step(
    seq: int,
    event: Event,
    extra_verify: tuple[re.Pattern[str], ...] = (),
    context: TraceContext | None = None,
) -> Step:
    """The step of one ``call`` event (its result not yet known).

    Args:
        seq: the step's position in the session.
        event: a ``call`` event.
        extra_verify: configured verify patterns.
        context: the trace so far (created files, script checks); it is updated with this
            step. None reads the step on its own.
    """
    base = tool_base_name(event.name)
    command = (
        _command_of(event.arguments)
        if base in _SHELL_TOOLS or "shell" in base or "bash" in base
        else None
    )
    if command is not None:
        step = _shell_step(seq, event, command, extra_verify, context)
    else:
        step = _tool_step(seq, event)
    if context is not None:
        context.observe(step)
        _rename(step, context)
    return step


def _rename(step: Step, context: TraceContext) -> bool:
    """Apply the scratch-file names to `step`; True when its template changed."""
    template = context.rename(step.template)
    if template == step.template:
        return False
    step.template = template
    if step.kind == SHELL:
        step.signature = template.split("\n", 1)[0]
    return True


def complete(step: Step, result: str, is_error: bool) -> None:
    """Record the outcome of `step` from its tool result (in place)."""
    if step.verify:
        step.status = verify.verify_status(
            step.name, result, is_error=is_error, configured=step.configured
        )
    else:
        step.status = verify.step_status(result, is_error=is_error, shell=step.kind == SHELL)
    if step.read_only:
        record = step.kind == TOOL and result.lstrip().startswith("{")
        read = _read_result if len(result) <= _CACHED_RESULT else _read_result.__wrapped__
        step.finds, fields = read(result, record)
        if record:
            step.fields = fields


#: The longest result whose reading is cached: a lookup's result recurs (the same record
#: read again later in a session, or by the next run of a task), a long output rarely does.
_CACHED_RESULT: Final = 8000


@lru_cache(maxsize=1024)
def _read_result(result: str, record: bool) -> tuple[tuple[str, ...], tuple[tuple[str, str], ...]]:
    """``(finds_in(result), result_fields(result) if record else ())``."""
    return finds_in(result), result_fields(result) if record else ()


#: The longest result whose fields are read (a longer one is a list of records, not one).
_MAX_FIELDS_RESULT: Final = 20_000


def result_fields(result: str) -> tuple[tuple[str, str], ...]:
    """The enumeration-valued top-level fields of a JSON object result (`enum_values`' rule).

    Only for a result of up to 20 000 characters (one record, not a list of them).
    """
    if len(result) > _MAX_FIELDS_RESULT:
        return ()
    try:
        data = json.loads(result)
    except ValueError:
        return ()
    return enum_values(data) if isinstance(data, dict) else ()


@dataclass
class TraceBuilder:
    """Steps of one session, built from wire events as they arrive.

    Attributes:
        steps: every step so far, in order.
        task_text: the first user message, canonicalised, once `task` has been read (a
            restored session passes its stored task here).
        given: hashes of tokens the user wrote (targets the agent did not discover).
        extra_verify: configured verify patterns.
        verify_scripts: a script run after an edit of another file is a verify step.
        latest_user: the latest user text after the first one (first 1000 characters,
            raw; never stored); '' while the task is the only user text.
        query: a cache for recall: ``(key, value)`` the caller computed from the task and
            `latest_user` (never stored).
        asked: the user messages that came before the session's first write (raw, first
            1000 characters each, at most `MAX_ASKED`; never stored): what the user asked.
        wrote: a write (a step that is not exploration) has been called.
        user_at: the message positions of the user messages (text), for telling whether
            the user spoke between two calls (a confirmation).
        recalled_upto: how many of `asked` a recall has already read (kept by the caller).
    """

    steps: list[Step] = field(default_factory=list)
    task_text: str = ""
    given: set[str] = field(default_factory=set)
    extra_verify: tuple[re.Pattern[str], ...] = ()
    verify_scripts: bool = True
    latest_user: str = ""
    query: tuple[Any, Any] = (None, None)
    context: TraceContext = field(default_factory=TraceContext)
    asked: list[str] = field(default_factory=list)
    wrote: bool = False
    user_at: list[int] = field(default_factory=list)
    recalled_upto: int = 0
    _pending: dict[str, int] = field(default_factory=dict)
    _seen_calls: set[tuple[int, str]] = field(default_factory=set)
    _seen_ids: set[str] = field(default_factory=set)
    _raw_task: str = ""
    _opening: str = ""
    _user_seen: int = -1

    @property
    def opening(self) -> str:
        """The first user message as sent (first 1000 characters; '' after a restart: never stored)."""
        return self._opening

    @property
    def task(self) -> str:
        """The first user message, canonicalised (first 1000 characters; '' until one arrives).

        Computed on first use: a trace that is never mined or recalled never pays for it.
        """
        if self._raw_task:
            self.task_text, self._raw_task = canonical_text(self._raw_task), ""
        return self.task_text

    def restore(self, steps: Iterable[Step]) -> None:
        """Continue from stored steps (after a restart or on the next request)."""
        self.context.verify_scripts = self.verify_scripts
        for step in steps:
            self.context.observe(step)
            self.steps.append(step)
            self.wrote = self.wrote or not step.read_only
            step.call_id = call_key(step.call_id)  # a step stored before keys were kept
            self._seen_calls.add((step.index, step.call_id))
            self._seen_ids.add(step.call_id)
            if step.status == PENDING:
                self._pending[step.call_id] = len(self.steps) - 1

    def feed(self, events: Iterable[Event], *, rewound: bool = False) -> set[int]:
        """Add `events`; returns the positions of the steps added or completed.

        A call already read (same message position and id) is skipped, so a request may
        re-read the end of the previous one. Ids alone are not unique in every source
        (replayed traces reuse them), except when the history was rewound (the client
        trimmed it and positions moved): then `rewound` skips any id already seen.
        """
        touched: set[int] = set()
        self.context.verify_scripts = self.verify_scripts
        for event in events:
            if event.kind == "user":
                text = event.text.strip()
                if not self.task_text and not self._raw_task and text:
                    self._raw_task = self._opening = text[:1000]
                elif text and text[:1000] != self._raw_task:
                    self.latest_user = text[:1000]
                if len(self.given) < 4 * _MAX_HASHES:
                    self.given |= given_in(event.text)
                if text and self._new_user_message(event.index, text[:1000], rewound):
                    if len(self.user_at) < _MAX_USER_AT:
                        self.user_at.append(event.index)
                    if not self.wrote and len(self.asked) < MAX_ASKED:
                        self.asked.append(text[:1000])
            elif event.kind == "call":
                key = call_key(event.call_id)
                if (event.index, key) in self._seen_calls or (rewound and key in self._seen_ids):
                    continue
                self._seen_calls.add((event.index, key))
                self._seen_ids.add(key)
                scratch = len(self.context.scratch)
                step = make_step(len(self.steps), event, self.extra_verify, self.context)
                if len(self.context.scratch) != scratch:
                    # A file the trace created is now run as a script: earlier steps that
                    # name it (its creation, its edits) read <NEW_FILE> too.
                    touched.update(
                        earlier.seq for earlier in self.steps if _rename(earlier, self.context)
                    )
                step.index = event.index
                self.steps.append(step)
                self.wrote = self.wrote or not step.read_only
                self._pending[key] = step.seq
                touched.add(step.seq)
            elif event.kind == "result":
                position = self._pending.pop(call_key(event.call_id), None)
                if position is None:
                    continue
                complete(self.steps[position], event.text, event.is_error)
                touched.add(position)
        return touched


    def _new_user_message(self, index: int, text: str, rewound: bool) -> bool:
        """`index` holds a user message not read before (a request re-reads the last one)."""
        if index > self._user_seen:
            self._user_seen = index
            return not rewound or text not in self.asked
        return False

    def spoke_between(self, after: int, before: int) -> bool:
        """The user sent a message between message positions `after` and `before` (exclusive)."""
        return any(after < at < before for at in self.user_at)


def build(
    messages: Any, extra_verify: tuple[re.Pattern[str], ...] = (), *, verify_scripts: bool = True
) -> TraceBuilder:
    """The `TraceBuilder` of a whole message list (a stored session, a request body's messages).

    Args:
        messages: the message list.
        extra_verify: configured verify patterns.
        verify_scripts: a script run after an edit of another file is a verify step.

    Raises:
        UserError: `messages` is not a list of objects with a role.
    """
    builder = TraceBuilder(extra_verify=extra_verify, verify_scripts=verify_scripts)
    builder.feed(events(messages))
    return builder
