"""Canonicalisation: a step's command or call becomes a template, safe to keep and compare.

Four things are taken out, in this order:

1. secrets -> ``<SECRET>`` (`insika_knowledge.privacy.credentials`);
2. file bodies -> ``<BODY>``: heredocs, editor blocks (``edit ... end_of_edit``),
   ``python -c`` scripts, long quoted literals, and the content arguments of editor and
   write tools (``content``, ``new_str``, ``patch``...);
3. personal data -> ``<EMAIL>``, ``<PHONE>``, ``<CPF>``, ``<CNPJ>``, ``<CARD>``,
   ``<IBAN>``: what the write path's redactor finds (`insika_knowledge.privacy.redact.redact`,
   obfuscated e-mails and documents with any separator included; `personal`);
4. volatile tokens -> typed placeholders: ``<UUID>``, ``<TIMESTAMP>``, ``<DATE>``,
   ``<TIME>``, ``<TMP>`` (temporary paths), ``<EMAIL>``, ``<CALL_ID>`` (a provider's
   tool-call or message id: ``toolu_01A09q90qw90lq917835lq9``, ``call_oIHazX6yQrB8hUwl``),
   ``<HEX>`` (hashes, commit ids), ``<PORT>``, ``<ID>`` (record ids and booking codes:
   upper-case letters with digits such as ``SI5UKW``, ``ZFA04Y`` or ``W4928371``, and
   ``mia_li_3668``), ``<NUM>`` (numbers of 4+ digits). A tool argument is typed by its key, never by its value: one
   placeholder type per argument position (``reservation_id="SI5UKW"`` ->
   ``reservation_id=<RESERVATION_ID>``; ``location`` is ``<LOCATION>`` for ``"Paris"`` and
   for ``"New York"`` alike; free-text keys such as ``summary`` are always ``<TEXT>``).

Every function here is idempotent: a template canonicalises to itself.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any, Final

from insika_knowledge.privacy.credentials import SECRET, is_secret_key, scrub
from insika_knowledge.privacy.fixpoint import fixed_point
from insika_knowledge.privacy.redact import PLACEHOLDERS, redact, unmask

BODY: Final = "<BODY>"
TEXT: Final = "<TEXT>"
NUM: Final = "<NUM>"
#: A scratch file a run wrote and ran, named by its run (`steps`: ``python <NEW_FILE>.py``).
NEW_FILE: Final = "<NEW_FILE>"
PLACEHOLDER_RE: Final = re.compile(r"<[A-Z][A-Z0-9_]*>")

#: Argument names whose value is a file body (editor, write and patch tools).
BODY_KEYS: Final = frozenset(
    {
        "content",
        "contents",
        "text",
        "file_text",
        "new_str",
        "old_str",
        "new_string",
        "old_string",
        "replacement_text",
        "replacement",
        "replace",
        "search",
        "patch",
        "diff",
        "body",
        "code",
        "source",
        "data",
        "insert_text",
        "new_content",
        "old_content",
        "script",
    }
)

_VOLATILE: Final[list[tuple[re.Pattern[str], str]]] = [
    (
        re.compile(
            r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b"
        ),
        "<UUID>",
    ),
    (
        re.compile(
            r"\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?"
            r"(?:Z|[+-]\d{2}:?\d{2})?(?![\w:])"
        ),
        "<TIMESTAMP>",
    ),
    (re.compile(r"\b\d{4}-\d{2}-\d{2}\b"), "<DATE>"),
    (re.compile(r"\b\d{1,2}:\d{2}:\d{2}(?:[.,]\d+)?\b"), "<TIME>"),
    (
        re.compile(
            r"(?<![\w.~-])(?:/private)?(?:/tmp|/var/tmp|/var/folders|/dev/shm)(?:/[^\s'\"`;,)<>|&]*)?"
        ),
        "<TMP>",
    ),
    (re.compile(r"(?i)\b[A-Z]:\\Users\\[^\\\s]+\\AppData\\Local\\Temp(?:\\[^\s'\"]*)?"), "<TMP>"),
    (
        re.compile(r"\b[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}\b"),
        "<EMAIL>",
    ),
    (
        # A provider's tool-call, message or response id: a known prefix, then an opaque
        # run with two digits or more (8+ characters) or with mixed case (16+).
        re.compile(
            r"(?<![\w-])(?:call|toolu_bdrk|toolu|tooluse|fc|chatcmpl|resp|msg|run)[_-]"
            r"(?:(?=(?:[A-Za-z]*\d){2})[A-Za-z0-9]{8,}"
            r"|(?=[A-Za-z0-9]*[A-Z])(?=[A-Za-z0-9]*[a-z])[A-Za-z0-9]{16,})(?![\w-])"
        ),
        "<CALL_ID>",
    ),
    (re.compile(r"\b0x[0-9a-fA-F]{6,}\b"), "<HEX>"),
    (re.compile(r"\b(?=[0-9a-f]*[a-f])(?=[0-9a-f]*\d)[0-9a-f]{7,}\b"), "<HEX>"),
    (re.compile(r"\b(?=[0-9A-F]*[A-F])(?=[0-9A-F]*\d)[0-9A-F]{16,}\b"), "<HEX>"),
    (
        re.compile(
            r"(?i)\b(localhost|(?:\d{1,3}\.){3}\d{1,3}|[a-z0-9-]+(?:\.[a-z0-9-]+)+|\[[0-9a-f:]+\])"
            r":\d{2,5}\b"
        ),
        r"\1:<PORT>",
    ),
    (re.compile(r"(?i)(--port(?:=|\s+)|\bPORT=)\d{2,5}\b"), r"\1<PORT>"),
    (
        re.compile(
            r"(?i)\b((?:nc|ncat|netcat|telnet|connect_start|connect)\s+(?:-\S+\s+)*[^\s<>]+)(\s+)"
            r"\d{2,5}(?![^\s;&|)])"
        ),
        r"\1\2<PORT>",
    ),
    (re.compile(r"\b(?=[A-Z0-9]*\d)(?=[A-Z0-9]*[A-Z])[A-Z0-9]{5,12}\b"), "<ID>"),
    (re.compile(r"\b[a-z][a-z_]*_\d{3,}\b"), "<ID>"),
    (re.compile(r"(?<![\w.])\d{4,}(?:\.\d+)?\b"), NUM),
]
_VOLATILE_HINT: Final = re.compile(
    r"\d|/tmp|/var|/dev/shm|@|Temp|(?:call|toolu|fc|chatcmpl|resp|msg|run)[_-]"
)

_HEREDOC_RE: Final = re.compile(r"<<(-?)[ \t]*(['\"]?)([A-Za-z_][A-Za-z0-9_]*)\2[^\n]*\n")
_EDITOR_BLOCK_RE: Final = re.compile(
    r"^([ \t]*(?:edit|insert|append|create|str_replace|write)\b[^\n]*)\n"
    r"[\s\S]*?(?:\n(end_of_\w+)[ \t]*$|\Z)",
    re.M,
)
_INLINE_SCRIPT_RE: Final = re.compile(
    r"(\b(?:python[0-9.]*|node|perl|ruby|php|bash|sh|zsh|deno)\s+(?:-[A-Za-z]+\s+)*-[ce]\s+)"
    r"(\"(?:[^\"\\]|\\.)*\"|'[^']*')"
)
_LONG_QUOTED_RE: Final = re.compile(
    r"\"(?:[^\"\\\n]|\\.){60,}\"|'[^'\n]{60,}'|\$'(?:[^'\\]|\\.){40,}'"
)
_ECHO_TO_FILE_RE: Final = re.compile(
    r"(\b(?:echo|printf)\s+(?:-[a-zA-Z]+\s+)*)(\"(?:[^\"\\]|\\.)*\"|'[^']*')(\s*>>?\s*\S+)"
)
_ENUM_RE: Final = re.compile(r"[a-z][a-z_-]{0,23}")
_PERSONAL_KEY_RE: Final = re.compile(
    r"(?i)(?:^|_)(?:name|user|username|login|email|phone|address\d?|city|zip|postcode|dob|birth\w*)$"
)
#: Argument names whose value is free prose: always ``<TEXT>``, whatever the value.
_FREE_TEXT_KEY_RE: Final = re.compile(
    r"(?i)(?:^|_)(?:summary|description|desc|message|msg|note|notes|reason|comment|comments"
    r"|query|prompt|question|answer|title|subject|instruction|instructions|explanation"
    r"|detail|details|thought|thoughts|feedback|goal|task|request)$"
)
_ID_KEY_RE: Final = re.compile(r"(?:^|[_.-])[Ii][Dd][Ss]?$|[a-z]I[Dd]s?$")
_PATHLIKE_RE: Final = re.compile(r"[\w.~/-]*(?:/[\w.~-]+|\.[A-Za-z][A-Za-z0-9]{0,5})")
_KEY_CLEAN_RE: Final = re.compile(r"[^A-Za-z0-9]+")
_SPACE_RE: Final = re.compile(r"\s")  # what str.isspace calls a space
_CAMEL_RE: Final = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


#: What each rule of ``_VOLATILE`` (in its order) cannot match without: one of these
#: substrings in the text, or ``_DIGIT`` (a decimal digit of any script). A rule whose
#: needs are absent is left out of the pass: it could match nowhere.
_DIGIT: Final = ""
_VOLATILE_NEEDS: Final[tuple[tuple[str, ...], ...]] = (
    ("-",),  # uuid
    ("-",),  # timestamp
    ("-",),  # date
    (":",),  # time of day
    ("/",),  # temp path
    ("\\",),  # Windows temp path
    ("@",),  # e-mail
    ("_", "-"),  # a provider's call id
    ("0x",),  # 0x hex
    (_DIGIT,),  # lower-case hex
    (_DIGIT,),  # upper-case hex
    (":",),  # host:port
    (_DIGIT,),  # --port / PORT=
    (_DIGIT,),  # nc host port
    (_DIGIT,),  # upper-case id
    ("_",),  # word_123
    (_DIGIT,),  # long number
)
assert len(_VOLATILE_NEEDS) == len(_VOLATILE)
_ANY_DIGIT_RE: Final = re.compile(r"\d")


@lru_cache(maxsize=512)
def _combined(rules: int) -> re.Pattern[str]:
    """One pattern of the rules whose bit is set in `rules`, each as group ``v<its index>``."""
    parts = []
    for i, (pattern, _) in enumerate(_VOLATILE):
        if not rules >> i & 1:
            continue
        body = pattern.pattern
        flags = ""
        if pattern.flags & re.IGNORECASE:
            body = body.removeprefix("(?i)")
            flags = "i"
        parts.append(f"(?P<v{i}>{'(?' + flags + ':' if flags else ''}{body}{')' if flags else ''})")
    return re.compile("|".join(parts))


_ALL_RULES: Final = (1 << len(_VOLATILE)) - 1


def _possible_rules(text: str) -> int:
    """The bits of the rules of ``_VOLATILE`` that could match somewhere in `text`."""
    digit = _ANY_DIGIT_RE.search(text) is not None
    rules = 0
    for i, needs in enumerate(_VOLATILE_NEEDS):
        if any(digit if need == _DIGIT else need in text for need in needs):
            rules |= 1 << i
    return rules


def _volatile_pass(text: str) -> str:
    rules = _possible_rules(text)
    return _combined(rules).sub(_volatile_match, text) if rules else text


def _volatile_match(match: re.Match[str]) -> str:
    name = match.lastgroup
    assert name is not None
    pattern, replacement = _VOLATILE[int(name[1:])]
    if "\\" in replacement:
        return pattern.sub(replacement, match.group(0), count=1)
    return replacement


def volatile(text: str) -> str:
    """Replace volatile tokens (ids, hashes, times, temp paths, ports, long numbers) in `text`.

    One pass over the text with every rule as an alternative, in the order listed in
    ``_VOLATILE`` (a rule that could match nowhere in it, `_VOLATILE_NEEDS`, is left out of
    the pass: the rules are many, and each is tried at every position); the pass is
    repeated until nothing changes (a replacement can expose a token, e.g. a port after a
    replaced host), so the result is a fixed point.
    """
    if _VOLATILE_HINT.search(text) is None:
        return text
    return fixed_point(_volatile_pass, text, rounds=4)


#: The redactor's placeholders (``[email]``) as typed placeholders (``<EMAIL>``).
_PERSONAL: Final = {mark: f"<{kind.upper()}>" for kind, mark in PLACEHOLDERS.items()}
_PERSONAL_RE: Final = re.compile("|".join(re.escape(mark) for mark in _PERSONAL))
#: What every detector of the redactor needs: a digit (phones, documents, cards, IBANs,
#: boletos, addresses, most PIX keys), an "@" or the word "at"/"arroba" (e-mails,
#: obfuscated ones included), a "[" (a person's name next to a contact placeholder) or a
#: hex run of a PIX key, in the text the detectors read (`unmask`: "＠" is an "@" there).
#: A text without any is returned as it is, without running them.
_PERSONAL_HINT: Final = re.compile(r"\d|@|\[|\b(?:at|arroba)\b|[a-f]{8}-?[a-f]{4}", re.IGNORECASE)


@lru_cache(maxsize=16384)
def personal(text: str) -> str:
    """`text` with the personal data the write path's redactor finds as typed placeholders.

    `insika_knowledge.privacy.redact.redact` (e-mails in any spelling, phones, CPF, CNPJ,
    card numbers, IBANs; it fails closed), its ``[email]`` marks written ``<EMAIL>``.
    """
    if _PERSONAL_HINT.search(unmask(text)) is None:
        return text
    found = redact(text)
    if not found.counts:
        return text
    return _PERSONAL_RE.sub(lambda m: _PERSONAL[m.group()], found.text)


@lru_cache(maxsize=65536)
def canonical_text(text: str) -> str:
    """Free text (a task, a message) with secrets, personal data and volatile tokens replaced.

    Args:
        text: any text.

    Returns:
        The text with ``<SECRET>`` and typed placeholders; idempotent.
    """
    return fixed_point(lambda t: volatile(personal(scrub(t))), text, rounds=6)


def _heredocs(command: str) -> str:
    out: list[str] = []
    pos = 0
    while True:
        match = _HEREDOC_RE.search(command, pos)
        if match is None:
            out.append(command[pos:])
            return "".join(out)
        out.append(command[pos : match.end()])
        delimiter = match.group(3)
        end = re.compile(r"^[ \t]*" + re.escape(delimiter) + r"[ \t]*$", re.M).search(
            command, match.end()
        )
        if end is None:
            out.append(BODY)
            return "".join(out)
        out.append(BODY + "\n")
        pos = end.start()


def _editor_block(match: re.Match[str]) -> str:
    terminator = match.group(2)
    return match.group(1) + "\n" + BODY + ("\n" + terminator if terminator else "")


def bodies(command: str) -> str:
    """Replace file bodies in a shell command with ``<BODY>`` (heredocs, editor blocks, scripts)."""
    command = command.strip()
    if "\n" in command:
        command = _heredocs(command)
        command = _EDITOR_BLOCK_RE.sub(_editor_block, command)
    if "-c" in command or "-e" in command:
        command = _INLINE_SCRIPT_RE.sub(lambda m: m.group(1) + BODY, command)
    if "echo" in command or "printf" in command:
        command = _ECHO_TO_FILE_RE.sub(lambda m: m.group(1) + BODY + m.group(3), command)
    if len(command) > 60:
        command = _LONG_QUOTED_RE.sub(TEXT, command)
    return command


#: The longest command whose template is cached: a command recurs (the same test run,
#: the same listing, in a trace and across traces), a long heredoc rarely does.
_CACHED_COMMAND: Final = 2000


def canonical_command(command: str) -> str:
    r"""A shell command as a template: secrets, bodies, personal data, then volatile tokens replaced.

    Args:
        command: the command as the agent ran it (one or more lines).

    Returns:
        The template, whitespace-trimmed, e.g. ``"cat > <TMP> <<'EOF'\\n<BODY>\\nEOF"``.
    """
    return _cached_command(command) if len(command) <= _CACHED_COMMAND else _template(command)


@lru_cache(maxsize=4096)
def _cached_command(command: str) -> str:
    return _template(command)


def _template(command: str) -> str:
    # to a fixed point, so that a template canonicalises to itself (trimmed first: a
    # command's trailing newline would cost a second round)
    return fixed_point(lambda t: volatile(personal(bodies(scrub(t)))).strip(), command.strip(), rounds=6)


#: The placeholders canonicalisation writes whatever the step: file bodies, free text, numbers,
#: scratch files, secrets, the volatile tokens' and the personal data's.
FIXED_PLACEHOLDERS: Final = frozenset(
    {BODY, TEXT, NUM, NEW_FILE, SECRET, "<VALUE>"}
    | {found for _, replacement in _VOLATILE for found in PLACEHOLDER_RE.findall(replacement)}
    | set(_PERSONAL.values())
)
#: An argument name as a call's template writes it before its value (``item_ids=``).
_ARGUMENT_KEY_RE: Final = re.compile(r"(?<![\w.:-])([A-Za-z_][\w.:-]*)=")


def placeholders_in(template: str) -> frozenset[str]:
    """The placeholders canonicalisation may have written in `template`: `FIXED_PLACEHOLDERS`,
    and the key-typed one of each argument name a call's template gives (``item_ids=`` ->
    ``<ITEM_IDS>``). What a rendered step keeps as written (`escaping.prompt_line`); a
    ``<SYSTEM>`` an agent's shell command held as a literal is no placeholder, and is escaped.
    """
    keys = {key_placeholder(key) for key in _ARGUMENT_KEY_RE.findall(template)} if "=" in template else set()
    return FIXED_PLACEHOLDERS | keys


@lru_cache(maxsize=4096)
def key_placeholder(key: str) -> str:
    """The placeholder typed by an argument name: ``"reservation_id"`` -> ``"<RESERVATION_ID>"``."""
    cleaned = _KEY_CLEAN_RE.sub("_", _CAMEL_RE.sub("_", key)).strip("_").upper()
    return f"<{cleaned or 'VALUE'}>"


@lru_cache(maxsize=4096)
def _is_id_key(key: str) -> bool:
    return _ID_KEY_RE.search(key) is not None or _PERSONAL_KEY_RE.search(key) is not None


_JSON_CONSTANTS: Final = {True: "true", False: "false", None: "null"}


@lru_cache(maxsize=4096)
def _key_kinds(key: str) -> tuple[bool, bool, bool]:
    """``(body key, id or personal key, free-text key)`` of an argument name."""
    return key.lower() in BODY_KEYS, _is_id_key(key), _FREE_TEXT_KEY_RE.search(key) is not None


def canonical_value(key: str, value: Any) -> str:
    """One tool-call argument value as template text.

    Rules: a secret-named key -> ``<SECRET>``; a body key or a multi-line string ->
    ``<BODY>``; an id key or a personal one (``name``, ``email``, ``phone``, ``address``...)
    -> its typed placeholder; numbers -> ``<NUM>``; a single lowercase word (an enumeration
    such as ``economy``) stays; a free-text key (``summary``, ``reason``, ``message``...) ->
    ``<TEXT>``; a path stays; any other string -> the key's placeholder, with or without
    spaces (one placeholder type per argument position). Lists become the sorted distinct
    templates of their items; objects become ``{k=v, ...}`` by sorted key.

    Args:
        key: the argument name (the parent's name for list items).
        value: the JSON value.

    Returns:
        The template fragment (no secret, no volatile token survives).
    """
    if isinstance(value, bool) or value is None:
        return _JSON_CONSTANTS[value]
    if is_secret_key(key):
        return SECRET
    if isinstance(value, (int, float)):
        return NUM
    if isinstance(value, dict):
        inner = ", ".join(f"{k}={canonical_value(str(k), v)}" for k, v in sorted(value.items()))
        return "{" + inner + "}"
    if isinstance(value, (list, tuple)):
        items = sorted({canonical_value(key, item) for item in value})
        return "[" + ", ".join(items) + "]"
    text = str(value)
    body_key, id_key, free_text_key = _key_kinds(key)
    if body_key or "\n" in text:
        return BODY
    if id_key:
        return key_placeholder(key)
    if _ENUM_RE.fullmatch(text):
        return text
    if free_text_key:
        return TEXT
    if len(text) <= 160 and _SPACE_RE.search(text) is None:
        cleaned = canonical_text(text)
        if _PATHLIKE_RE.fullmatch(cleaned) and not PLACEHOLDER_RE.fullmatch(cleaned):
            return cleaned
    return key_placeholder(key)


def canonical_call(name: str, arguments: Any) -> str:
    """A tool call as a template: ``name(key=value, ...)`` with keys sorted.

    Args:
        name: the tool name.
        arguments: the call's arguments (a JSON object; anything else is one ``args`` value).

    Returns:
        e.g. ``"cancel_reservation(reservation_id=<RESERVATION_ID>)"``.
    """
    if not isinstance(arguments, dict):
        arguments = {} if arguments in (None, "", {}) else {"args": arguments}
    inner = ", ".join(f"{k}={canonical_value(str(k), v)}" for k, v in sorted(arguments.items()))
    return f"{_tool_name(name)}({inner})"


@lru_cache(maxsize=4096)
def _tool_name(name: str) -> str:
    """A tool's name as template text (`scrub`: a session has a handful of tools, called often)."""
    return scrub(name)
