"""Verification: which commands are checks, and whether a step passed, failed or errored.

A verify command is a test runner, type checker, linter or build (pytest, unittest, tox,
nox, mypy, pyright, ruff, flake8, tsc, eslint, jest, vitest, npm/yarn/pnpm test, cargo
test/build/check, go test/build/vet, make test/check, mvn/gradle test, ctest, ...), plus
any pattern the configuration adds. Its result is read in this order:

1. an exit code stated in the result (``exit code: 1``, ``"returncode": 0``) or the
   wire format's error flag (Anthropic ``is_error``);
2. a failure summary (``=== 2 failed ===``, ``FAILED (failures=1)``, ``Found 3 errors``,
   ``error TS2345``, ``BUILD FAILURE``, a Python traceback, pytest's quiet summary line
   ``1 failed, 2 passed in 0.10s``...);
3. a success summary (``=== 5 passed ===``, pytest's quiet summary line ``2 passed in
   0.05s`` (``pytest -q`` prints no ``===`` banner), ``OK``, ``Success: no issues found``,
   ``All checks passed!``, ``test result: ok.``, ``BUILD SUCCESS``...);
4. no output at all from a tool that is silent on success (tsc, go build/vet, cargo
   build/check, make) or from a configured pattern.

Anything else is ``unknown``: such a step neither proves nor disproves the trace.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Final

PASS: Final = "pass"
FAIL: Final = "fail"
UNKNOWN: Final = "unknown"
OK: Final = "ok"
ERROR: Final = "error"

_VERIFY_RE: Final = re.compile(
    r"(?x)^(?:"
    r"pytest|py\.test"
    r"|python\ -m\ (?:pytest|unittest|mypy|pyright|ruff|flake8|pylint|tox|nox|doctest)"
    r"|tox|nox|mypy|pyright|ruff|ruff\ check|flake8|pylint|black|isort|tsc|eslint|jest|vitest|mocha"
    r"|npm\ (?:test|t|run\ (?:test|lint|typecheck|check|build))"
    r"|(?:yarn|pnpm|bun)\ (?:test|run\ (?:test|lint|build))"
    r"|(?:yarn|pnpm)\ (?:lint|build)|npx\ (?:jest|vitest|tsc|eslint|mocha|playwright)"
    r"|cargo\ (?:test|build|check|clippy|nextest)|go\ (?:test|build|vet)"
    r"|make\ (?:test|check|tests|build)"
    r"|mvn\ (?:test|verify|package|install)|(?:\./)?gradlew?\ (?:test|check|build)"
    r"|ctest|bazel\ test"
    r"|dotnet\ (?:test|build)|phpunit|rspec|bundle\ exec|rake\ test|swift\ (?:test|build)"
    r"|mix\ test|deno\ test|bun\ test|golangci-lint|shellcheck|hadolint|terraform\ validate"
    r")$"
)
_QUIET_ON_SUCCESS: Final = re.compile(
    r"^(?:tsc|npx tsc|go build|go vet|cargo build|cargo check|make (?:build|check)|mypy|black|isort"
    r"|shellcheck|terraform validate|eslint|npx eslint|ruff|ruff check|flake8)$"
)

_EXIT_RE: Final = re.compile(
    r"(?:exit(?:ed)?[ _](?:with[ _])?(?:code|status)|exit_?code|return[ _]?code|returncode)"
    r"\W{0,3}(-?\d{1,3})\b"
)
_FAIL_RE: Final = re.compile(
    r"(?im)^=+ .*\b\d+ (?:failed|errors?)\b.*=+\s*$|^FAILED\b|^FAILED \(|\bFound \d+ errors?\b"
    r"|\berror TS\d+|✖ \d+ problems?|^Tests:.*\b\d+ failed|test result: FAILED|^error(?:\[E\d+\])?:"
    r"|could not compile|^--- FAIL|^FAIL\b|make(?:\[\d+\])?: \*\*\*|BUILD FAILURE|BUILD FAILED"
    r"|\d+ tests? failed|Traceback \(most recent call last\)|command not found|No module named"
    r"|^E\s{2,}\S|^ERROR:|\bSyntaxError\b|^npm ERR!|\bERR_[A-Z_]+\b|^\s*\d+ failing\b"
    r"|^[^\n=]*\b\d+ (?:failed|errors?)\b[^\n=]* in \d+(?:\.\d+)?s\b"  # pytest -q: 1 failed, 2 passed in 0.1s
)
_PASS_RE: Final = re.compile(
    r"(?im)^=+ .*\b\d+ passed\b.*=+\s*$|^OK\b|^Ran \d+ tests?.*\n+OK|Success: no issues found"
    r"|All checks passed!|^Tests:.*\b\d+ passed|test result: ok\.|^\s*Finished\b|^ok\s+\S"
    r"|BUILD SUCCESS|BUILD SUCCESSFUL|100% tests passed|^\s*\d+ passing\b|\b0 errors?\b"
    r"|^PASS\b|Checks passed|no issues found|Successfully compiled"
    r"|^\s*\d+ passed\b[^\n=]* in \d+(?:\.\d+)?s\b"  # pytest -q: 2 passed, 1 warning in 0.05s
)
_STEP_ERROR_LINE_RE: Final = re.compile(r"(?m)^(?:error|fatal|usage)[:\s]")
_STEP_ERROR_MARKS: Final = (
    "traceback (most recent call last)",
    "command not found",
    "no such file or directory",
    "permission denied",
    "syntax error",
    "syntaxerror",
    "your proposed edit has introduced",
)
_TOOL_ERROR_RE: Final = re.compile(r"(?i)^\s*(?:error\b|exception\b|failed\b|\{\s*\"error\"\s*:)")


def is_verify(verb: str, command: str = "", extra: Iterable[re.Pattern[str]] = ()) -> bool:
    """True when a simple command with `verb` is a verify step.

    Args:
        verb: the command's verb (`insika_knowledge.procedures.trace.shell.Command.verb`).
        command: the whole command line, matched against the `extra` patterns.
        extra: configured patterns (``re.search`` on the command line).
    """
    if _VERIFY_RE.match(verb):
        return True
    return any(p.search(command) for p in extra)


def exit_code(result: str) -> int | None:
    """The exit code a result states (the last one), or None."""
    if not result:
        return None
    tail = result[-4000:].lower()
    if (
        "exit" not in tail
        and "returncode" not in tail
        and "return code" not in tail
        and "return_code" not in tail
    ):
        return None
    stripped = result.lstrip()
    if stripped.startswith("{") and len(stripped) < 200_000:
        try:
            data = json.loads(stripped)
        except ValueError:
            data = None
        if isinstance(data, dict):
            for key in ("exit_code", "returncode", "return_code", "exitCode", "status_code"):
                if isinstance(data.get(key), int):
                    return int(data[key])
    found = _EXIT_RE.findall(tail)
    return int(found[-1]) if found else None


def verify_status(
    verb: str, result: str, *, is_error: bool = False, configured: bool = False
) -> str:
    """Read whether a verify command passed: ``pass``, ``fail`` or ``unknown``.

    Args:
        verb: the verify command's verb.
        result: its output as the tool returned it.
        is_error: the wire format flagged the result as an error.
        configured: the command matched a configured pattern rather than a known tool.
    """
    code = exit_code(result)
    if code is not None:
        return PASS if code == 0 else FAIL
    if is_error:
        return FAIL
    tail = result[-4000:]
    if _FAIL_RE.search(tail):
        return FAIL
    if _PASS_RE.search(tail):
        return PASS
    if not _meaningful(result) and (_QUIET_ON_SUCCESS.match(verb) or configured):
        return PASS
    if configured and not _step_error(tail):
        return PASS
    return UNKNOWN


def _meaningful(result: str) -> bool:
    text = re.sub(
        r"\(Open file:.*?\)|\(Current directory:.*?\)|\(Interactive session:.*?\)|bash-\$",
        "",
        result,
    )
    return bool(text.strip())


def _step_error(text: str) -> bool:
    low = text.lower()
    return any(map(low.__contains__, _STEP_ERROR_MARKS)) or bool(_STEP_ERROR_LINE_RE.search(low))


def step_status(result: str, *, is_error: bool = False, shell: bool = False) -> str:
    """Whether a non-verify step went through: ``ok`` or ``error``.

    Args:
        result: the tool's output.
        is_error: the wire format flagged it as an error.
        shell: the step was a shell command (its output is searched for error lines);
            otherwise a tool result that starts with ``Error``/``Exception`` or is a JSON
            object with an ``error`` key is an error.
    """
    if is_error:
        return ERROR
    code = exit_code(result) if shell else None
    if code is not None:
        return OK if code == 0 else ERROR
    if shell:
        return ERROR if _step_error(result[-2000:]) else OK
    return ERROR if _TOOL_ERROR_RE.match(result[:200]) else OK
