"""Shell commands: split into simple commands, name their verbs, tell exploration from action.

A command line is split on ``&&``, ``||``, ``;``, ``|`` and newlines (heredoc and editor
bodies are removed first, so their lines are not taken for commands). The verb of a
simple command is its program after leading ``VAR=value``, ``sudo``, ``env``, ``time``,
``nohup``; for multi-command programs (git, npm, cargo, go, make, pip, docker, python -m)
the subcommand joins it (``git status``, ``python -m pytest``).

Setup commands (``cd``, ``export``, ``source``, ``pushd``...) neither explore nor act: a
line is read-only when every other command in it only reads, so ``cd repo && grep -n x f``
is exploration. `action_template` splits a compound line on ``&&``, ``||``, ``;`` and
newlines outside quotes (pipelines stay whole) and keeps the setup and the acting parts
(``cd repo && ls && python x.py`` -> ``cd repo && python x.py``), so the exploration inside
a compound command is collapsed like a separate exploring step.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Final

from insika_knowledge.procedures.trace.canonical import bodies

_SPLIT_RE: Final = re.compile(r"\s*(?:&&|\|\||;|\||\n)\s*")
_TOP_SPLIT_RE: Final = re.compile(r"\s*(?:&&|\|\||;|\n)\s*")
_QUOTING_RE: Final = re.compile(r"['\"`()]")
#: Shell tokens for splitting: quoted strings whole (an unclosed quote is one character),
#: separators, parentheses, and runs of anything else.
_TOKEN_RE: Final = re.compile(
    r"'[^']*'|\"(?:[^\"\\]|\\.)*\"|`[^`]*`|&&|\|\||[;\n|()'\"`]|[^'\"`&|;\n()]+|&"
)
#: Commands that only set up the shell (directory, environment) for the ones after them.
SETUP_VERBS: Final = frozenset(
    {"cd", "export", "source", ".", "set", "pushd", "popd", "unset", "ulimit", "umask", "shopt"}
)
_SETUP_VERBS: Final = SETUP_VERBS
_DELIMITER_RE: Final = re.compile(r"<<-?\s*['\"]?([A-Za-z_][A-Za-z0-9_]*)")
_WORD_RE: Final = re.compile(
    r"'[^']*'|\"(?:[^\"\\]|\\.)*\"|[^\s'\"]+(?:'[^']*'|\"[^\"]*\")?[^\s'\"]*"
)
_ASSIGN_RE: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=\S*")
_PREFIXES: Final = frozenset(
    {"sudo", "env", "time", "nohup", "exec", "command", "builtin", "xargs"}
)
_SUBCOMMAND_PROGRAMS: Final = frozenset(
    {
        "git",
        "npm",
        "yarn",
        "pnpm",
        "npx",
        "cargo",
        "go",
        "make",
        "pip",
        "pip3",
        "uv",
        "poetry",
        "docker",
        "kubectl",
        "mvn",
        "gradle",
        "./gradlew",
        "gradlew",
        "dotnet",
        "bundle",
        "rake",
        "mix",
        "deno",
        "bun",
        "swift",
        "bazel",
        "conda",
        "brew",
        "apt",
        "apt-get",
        "pdm",
        "hatch",
    }
)
_READ_ONLY_VERBS: Final = frozenset(
    {
        "ls",
        "ll",
        "la",
        "dir",
        "cat",
        "bat",
        "less",
        "more",
        "head",
        "tail",
        "grep",
        "egrep",
        "fgrep",
        "rg",
        "ag",
        "ack",
        "find",
        "fd",
        "locate",
        "tree",
        "pwd",
        "wc",
        "file",
        "stat",
        "du",
        "df",
        "which",
        "whereis",
        "type",
        "echo",
        "printf",
        "printenv",
        "id",
        "whoami",
        "hostname",
        "uname",
        "date",
        "diff",
        "cmp",
        "strings",
        "hexdump",
        "xxd",
        "od",
        "readlink",
        "realpath",
        "dirname",
        "basename",
        "sort",
        "uniq",
        "cut",
        "column",
        "nl",
        "tac",
        "md5sum",
        "sha1sum",
        "sha256sum",
        "jq",
        "yq",
        "true",
        "history",
        "man",
        "help",
        "ps",
        "top",
        "free",
        "lsof",
        "nproc",
        "sed",
        "awk",
        # SWE-agent's viewer helpers
        "open",
        "goto",
        "scroll_up",
        "scroll_down",
        "search_file",
        "search_dir",
        "find_file",
        "filemap",
        "set_cursors",
        "git status",
        "git log",
        "git diff",
        "git show",
        "git blame",
        "git grep",
        "git ls-files",
        "git rev-parse",
        "git describe",
        "git shortlog",
        "git reflog",
        "git branch",
        "git remote",
        "pip list",
        "pip show",
        "pip freeze",
        "pip3 list",
        "pip3 show",
        "pip3 freeze",
        "npm ls",
        "npm list",
        "npm view",
        "cargo tree",
        "go list",
        "go env",
        "docker ps",
        "docker images",
        "kubectl get",
        "kubectl describe",
        "kubectl logs",
        "conda list",
        "uv pip",
    }
)
_WRITE_REDIRECT_RE: Final = re.compile(r"(?<![0-9&])>>?(?!\s*&|\s*/dev/null)|\btee\b")
_WRITE_FLAGS_RE: Final = re.compile(r"(?:^|\s)(?:-i\b|--in-place|-delete\b|-exec\b|-execdir\b)")
_IN_PLACE_RE: Final = re.compile(r"(?:^|\s)(?:-i\S*|--in-place\S*)")
#: ``find ... -exec PROGRAM``: the program ``find`` runs on each file.
_EXEC_RE: Final = re.compile(r"(?:^|\s)-exec(?:dir)?\s+(\S+)")

#: The viewer commands whose path argument becomes the "open file" later edits act on.
OPEN_VERBS: Final = frozenset({"open"})
#: Editor helper verbs that act on the open file when they name no path.
EDITOR_VERBS: Final = frozenset({"edit", "insert", "append", "str_replace"})


@dataclass(frozen=True, slots=True)
class Command:
    """One parsed command line.

    Attributes:
        verbs: the verb of each simple command, in order (``("cd", "python -m pytest")``).
        words: the words of each simple command (bodies removed), in order.
        read_only: every simple command only reads (no redirection, no in-place flags).
    """

    verbs: tuple[str, ...]
    words: tuple[tuple[str, ...], ...]
    read_only: bool

    @property
    def verb(self) -> str:
        """The verb that names the command: the first that is not ``cd``/``export``/``source``."""
        for verb in self.verbs:
            if verb not in _SETUP_VERBS:
                return verb
        return self.verbs[0] if self.verbs else ""


def _words(segment: str) -> list[str]:
    out = []
    for word in _WORD_RE.findall(segment):
        if len(word) >= 2 and word[0] == word[-1] and word[0] in "'\"":
            word = word[1:-1]
        out.append(word)
    return out


def _verb(words: list[str]) -> str:
    i = 0
    while i < len(words) and (_ASSIGN_RE.fullmatch(words[i]) or words[i] in _PREFIXES):
        i += 1
    if i >= len(words):
        return ""
    program = words[i].rsplit("/", 1)[-1] if not words[i].startswith("./") else words[i]
    rest = [w for w in words[i + 1 :] if not w.startswith("-")]
    if re.fullmatch(r"python[0-9.]*", program):
        args = words[i + 1 :]
        if len(args) >= 2 and args[0] == "-m":
            return f"python -m {args[1]}"
        return "python"
    if program in _SUBCOMMAND_PROGRAMS and rest:
        if program in {"npm", "yarn", "pnpm", "bun"} and rest[0] == "run" and len(rest) > 1:
            return f"{program} run {rest[1]}"
        return f"{program} {rest[0]}"
    return program


def parse(command: str) -> Command:
    """Split `command` into simple commands and name their verbs.

    Args:
        command: a shell command line (may span lines).

    Returns:
        The `Command`; an empty command has no verbs and counts as read-only.
    """
    text = bodies(command)
    skip = {"<BODY>", *_DELIMITER_RE.findall(text)}
    segments = [
        s for s in _split(text, pipes=True) if s not in skip and not s.startswith("end_of_")
    ]
    verbs: list[str] = []
    words: list[tuple[str, ...]] = []
    read_only = True
    for segment in segments:
        seg_words = _words(segment)
        verb = _verb(seg_words)
        if not verb:
            continue
        verbs.append(verb)
        words.append(tuple(seg_words))
        if verb not in SETUP_VERBS and not _segment_reads_only(verb, segment):
            read_only = False
    return Command(tuple(verbs), tuple(words), read_only and bool(verbs))


def _split(command: str, *, pipes: bool) -> list[str]:
    if not _QUOTING_RE.search(command):  # nothing can hide a separator: split directly
        splitter = _SPLIT_RE if pipes else _TOP_SPLIT_RE
        return [p.strip() for p in splitter.split(command) if p.strip()]
    parts: list[str] = []
    current: list[str] = []
    depth = 0
    for token in _TOKEN_RE.findall(command):
        first = token[0]
        if first in "'\"`" and (len(token) < 2 or token[-1] != first):
            # an unbalanced quote (an apostrophe in plain text): no quoting rules at all
            splitter = _SPLIT_RE if pipes else _TOP_SPLIT_RE
            return [p.strip() for p in splitter.split(command) if p.strip()]
        if token == "(":
            depth += 1
        elif token == ")" and depth:
            depth -= 1
        elif depth == 0 and (token in ("&&", "||", ";", "\n") or (pipes and token == "|")):
            parts.append("".join(current))
            current = []
            continue
        current.append(token)
    parts.append("".join(current))
    return [p.strip() for p in parts if p.strip()]


def split_top(command: str) -> list[str]:
    """The top-level parts of a command line, split on ``&&``, ``||``, ``;`` and newlines.

    Separators inside quotes, ``$(...)``, ``(...)`` or backticks do not split; a pipeline
    (``a | b``) stays one part. Parts are stripped; empty ones are dropped. A line with an
    unbalanced quote is split on every separator instead.
    """
    return _split(command, pipes=False)


def action_template(template: str) -> str:
    """`template` without its exploring parts, when it mixes exploration and action.

    A compound line (see `split_top`) keeps its setup parts up to its last acting part and
    its acting parts, joined by `` && ``; a line with a heredoc, a single part, or no acting
    part at all comes back unchanged.

    Args:
        template: a canonical command (`insika_knowledge.procedures.trace.canonical`).
    """
    if "<<" in template:
        return template
    parts = split_top(template)
    if len(parts) < 2:
        return template
    kinds = []
    for part in parts:
        verb = _verb(_words(part))
        if not verb or verb in SETUP_VERBS:
            kinds.append("setup")
        elif _segment_reads_only(verb, part):
            kinds.append("read")
        else:
            kinds.append("act")
    if "act" not in kinds or "read" not in kinds:
        return template
    last = max(i for i, kind in enumerate(kinds) if kind == "act")
    return " && ".join(
        p
        for i, (p, k) in enumerate(zip(parts, kinds, strict=True))
        if k == "act" or (k == "setup" and i < last)
    )


def _segment_reads_only(verb: str, segment: str) -> bool:
    if verb not in _READ_ONLY_VERBS and verb.split(" ")[0] not in _READ_ONLY_VERBS:
        return False
    if (
        verb.split(" ")[0]
        in {"git", "pip", "pip3", "npm", "cargo", "go", "docker", "kubectl", "conda", "uv"}
        and verb not in _READ_ONLY_VERBS
    ):
        return False
    if verb == "git branch" and re.search(r"\s-[dDmMcC]\b|\s--(?:delete|move|copy)", segment):
        return False
    if _WRITE_REDIRECT_RE.search(segment):
        return False
    if verb in ("sed", "awk") and _IN_PLACE_RE.search(segment):
        return False
    if verb == "find" and _WRITE_FLAGS_RE.search(segment) and not _execs_read_only(segment):
        return False
    return True


def _execs_read_only(segment: str) -> bool:
    """``find -exec grep ...``: every program find runs only reads (``-delete`` does not)."""
    if re.search(r"(?:^|\s)(?:-delete|-i|--in-place)\b", segment):
        return False
    programs = _EXEC_RE.findall(segment)
    return bool(programs) and all(
        p.rsplit("/", 1)[-1] in _READ_ONLY_VERBS and p.rsplit("/", 1)[-1] not in ("sed", "awk")
        for p in programs
    )


def retry_key(template: str) -> str:
    """What two attempts at the same shell action share, whatever directory or env they set.

    The acting commands' verbs, each with the base name of its first file argument:
    ``cd repo && python3 ../<NEW_FILE>.py`` and ``cd /w && python3 <NEW_FILE>.py`` are both
    ``python <NEW_FILE>.py``, so a failed first try is superseded by the working second.
    """
    return _retry_key(template)


@lru_cache(maxsize=16384)
def _retry_key(template: str) -> str:
    parsed = parse(template)
    out = []
    for verb, words in zip(parsed.verbs, parsed.words, strict=True):
        if verb in SETUP_VERBS:
            continue
        nv = len(verb.split(" "))
        skip = True
        target = ""
        for word in words:
            if skip:  # assignments, prefixes and the program itself
                if _ASSIGN_RE.fullmatch(word) or word in _PREFIXES:
                    continue
                skip = False
                nv -= 1
                continue
            if nv > 0:
                nv -= 1
                continue
            if not word.startswith("-"):
                target = word.rsplit("/", 1)[-1]
                break
        out.append(f"{verb} {target}".strip())
    return " && ".join(out) or template
