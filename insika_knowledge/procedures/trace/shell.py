"""Shell commands: split into simple commands, name their verbs, tell exploration from action.

A command line is split on ``&&``, ``||``, ``;``, ``|`` and newlines (heredoc and editor
bodies are removed first, so their lines are not taken for commands). The verb of a
simple command is its program after leading ``VAR=value``, ``sudo``, ``env``, ``time``,
``nohup``; for multi-command programs (git, npm, cargo, go, make, pip, docker, python -m)
the subcommand joins it (``git status``, ``python -m pytest``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

from insika_knowledge.procedures.trace.canonical import bodies

_SPLIT_RE: Final = re.compile(r"\s*(?:&&|\|\||;|\||\n)\s*")
_SETUP_VERBS: Final = frozenset({"cd", "export", "source", ".", "set", "pushd", "popd", "unset"})
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
        s
        for s in _SPLIT_RE.split(text)
        if s.strip() and s.strip() not in skip and not s.strip().startswith("end_of_")
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
        if not _segment_reads_only(verb, segment):
            read_only = False
    return Command(tuple(verbs), tuple(words), read_only and bool(verbs))


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
    if _WRITE_REDIRECT_RE.search(segment) or _WRITE_FLAGS_RE.search(segment):
        return False
    return True
