"""Credentials: find secrets in commands, arguments and text and replace them with ``<SECRET>``.

This runs before anything from a trace is stored, rendered or hashed into a template,
so a key typed into a command never reaches the procedure graph. Two kinds of rule:

- shapes: a token that is a secret by its form alone (provider API keys: OpenAI,
  Anthropic, AWS, GitHub, GitLab, Slack, Stripe, Google, Hugging Face, npm, SendGrid,
  JWTs, PEM private keys);
- contexts: a value that is a secret by where it stands (``Authorization: Bearer x``,
  ``--password x``, ``DB_PASSWORD=x``, ``https://user:x@host``, ``?token=x``,
  ``"api_key": "x"``, ``mysql -px``; in prose, "minha senha é x1", "my PIN is 4821").

`scrub` is idempotent: ``scrub(scrub(s)) == scrub(s)``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache
from typing import Final

from insika_knowledge.privacy.fixpoint import fixed_point

SECRET: Final = "<SECRET>"

#: Argument or field names whose value is a secret whatever it looks like.
SECRET_KEY_RE: Final = re.compile(
    r"(?i)^(?:[a-z0-9_.-]*[_.-])?(?:password|passwd|passphrase|secret|token|api[_-]?key|apikey|"
    r"access[_-]?key|secret[_-]?key|private[_-]?key|client[_-]?secret|auth[_-]?token|"
    r"credentials?|authorization|cookie|session[_-]?token)(?:[_.-][a-z0-9_.-]*)?$"
)

_NAMES: Final = (
    r"password|passwd|passphrase|secret|token|api[_-]?key|apikey|access[_-]?key|secret[_-]?key|"
    r"private[_-]?key|client[_-]?secret|auth[_-]?token|credentials?|pass|pwd"
)
_VALUE: Final = r"(?:\"[^\"\n]*\"|'[^'\n]*'|[^\s'\"&;|]+)"

_Rule = tuple[re.Pattern[str], str | Callable[[re.Match[str]], str]]


def _prose_secret(match: re.Match[str]) -> str:
    """A password said in prose replaced, the sentence's closing marks and quote kept
    ("... é abc123." keeps its period; "Summer2024!" is taken whole: the "!" may be its own).
    """
    value = match.group(3)
    kept = len(value) - len(value.rstrip(".,;:)?\"'”"))
    return match.group(1) + match.group(2) + SECRET + value[len(value) - kept:]

_RULES: Final[list[_Rule]] = [
    # PEM private keys, terminated or cut off
    (
        re.compile(
            r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----[\s\S]*?"
            r"(?:-----END [A-Z0-9 ]*PRIVATE KEY-----|\Z)"
        ),
        SECRET,
    ),
    # credentials inside a URL: scheme://user:password@host (the password may hold ':' or '@')
    (re.compile(r"([A-Za-z][A-Za-z0-9+.-]*://[^\s:/@'\"]*):([^\s/'\"]+)@"), r"\1:" + SECRET + "@"),
    # tools that take a password as a short option or positional argument
    (re.compile(r"(\bsshpass\s+-p\s*)(?!<SECRET>)(\S+)"), r"\1" + SECRET),
    (re.compile(r"(\b(?:curl|wget|http)\b[^\n|;&]*?\s(?:-u|--user|--proxy-user)[\s=]+['\"]?[^\s:'\"]+:)"
                r"(?!<SECRET>)([^\s'\"]+)"), r"\1" + SECRET),
    (re.compile(r"(\b(?:docker|podman|helm|az|oc|buildah|skopeo|nerdctl)\b[^\n|;&]*?\s"
                r"(?:-p|--password)(?:=|\s+))(?!<SECRET>)(\S+)"), r"\1" + SECRET),
    (re.compile(r"(\bredis-cli\b[^\n|;&]*?\s-a\s+)(?!<SECRET>)(\S+)"), r"\1" + SECRET),
    (re.compile(r"(\bopenssl\b[^\n|;&]*?\s-(?:k|pass|passin|passout)\s+(?:pass:)?)(?!<SECRET>)(\S+)"),
     r"\1" + SECRET),
    (re.compile(r"(\bhtpasswd\b[^\n|;&]*?\s-[a-zA-Z]*b[a-zA-Z]*\s+\S+\s+\S+\s+)(?!<SECRET>)(\S+)"),
     r"\1" + SECRET),
    (re.compile(r"(\b(?:echo|printf)\s+)(?!<SECRET>)(['\"]?[^\s|'\"]+['\"]?)(\s*\|[^\n]*--password-stdin)"),
     r"\1" + SECRET + r"\3"),
    (re.compile(r"((?:\s-b|--cookie)[\s=]+['\"]?[^=\s'\"]+=)(?!<SECRET>)([^;\s'\"]+)"), r"\1" + SECRET),
    # secrets in a query string
    (
        re.compile(
            r"(?i)([?&](?:access_token|refresh_token|id_token|token|api[_-]?key|apikey|key|"
            r"password|passwd|secret|client_secret|sig|signature|auth)=)([^&\s#'\"]+)"
        ),
        r"\1" + SECRET,
    ),
    # Authorization / API key headers
    (re.compile(r"(?i)\b(bearer)(\s+)(?!<SECRET>)([^\s\"',;<>]{6,})"), r"\1\2" + SECRET),
    (
        re.compile(
            r"(?i)\b((?:proxy-)?authorization\s*[:=]\s*[\"']?basic)(\s+)(?!<SECRET>)"
            r"([^\s\"',;<>]+)"
        ),
        r"\1\2" + SECRET,
    ),
    (
        re.compile(
            r"(?i)\b(token|bot)(\s+)(?!<SECRET>)((?=[A-Za-z._~+/=-]*\d)[A-Za-z0-9._~+/=-]{12,}"
            r"|[A-Za-z0-9._~+/=-]{24,})"
        ),
        r"\1\2" + SECRET,
    ),
    (
        re.compile(
            r"(?i)((?:authorization|proxy-authorization|x-api-key|api-key|x-auth-token|"
            r"private-token|x-goog-api-key|cookie)\s*:\s*)(?!<SECRET>)"
            r"(?!(?:bearer|basic|token|bot)\s)([^\s\"',]+)"
        ),
        r"\1" + SECRET,
    ),
    # --password value / --api-key=value
    (re.compile(r"(?i)(--?(?:" + _NAMES + r")(?:=|\s+))" + _VALUE), r"\1" + SECRET),
    # mysql -pSECRET (glued short option)
    (
        re.compile(
            r"(\b(?:mysql|mysqldump|mysqladmin|mariadb)\b[^\n|;&]*?\s-p)(?!<SECRET>)([^\s<][^\s]*)"
        ),
        r"\1" + SECRET,
    ),
    # NAME_TOKEN=value, export API_KEY="value", password = value
    (
        re.compile(
            r"(?i)\b((?:export\s+)?[A-Za-z0-9_]*(?:" + _NAMES + r")[A-Za-z0-9_]*)(\s*=\s*)" + _VALUE
        ),
        r"\1\2" + SECRET,
    ),
    # "password": "value" and password: value (JSON, YAML)
    (
        re.compile(
            r"(?i)([\"']?\b[A-Za-z0-9_-]*(?:" + _NAMES + r")[\"']?\s*:\s*)(\"[^\"\n]*\"|'[^'\n]*')"
        ),
        lambda m: m.group(1) + m.group(2)[0] + SECRET + m.group(2)[0],
    ),
    (
        # a configuration line's value ends its line (or a comment, a "," or "}" follows):
        # "Password: must contain a symbol." is a sentence, not a setting
        re.compile(r"(?im)^(\s*[A-Za-z0-9_-]*(?:" + _NAMES + r")\s*:\s+)(?![\"'])([^\s#,}]+)(?=[ \t]*(?:$|#|,|\}))"),
        r"\1" + SECRET,
    ),
    # a password or PIN said in prose: "minha senha é girassol123", "my PIN is 4821", "a
    # senha nova eh Brasil2024!", "coloquei a senha flamengo10" (a value with a digit or a
    # sign other than a hyphen, four characters or more; "a senha é enviada por SMS",
    # "password is required" and "the password is case-sensitive" keep their words)
    (
        re.compile(
            r"(?i)(\b(?:senha|password|passcode|passphrase|pin(?:\s+code)?|c[óo]digo\s+de\s+acesso|access\s+code)"
            r"(?:\s+(?:d[oae]s?|of|for)(?:\s+[^\W\d_]+){1,2})?"
            r"(?:\s+(?:nova|novo|atual|provis[óo]ria|tempor[áa]ria|antiga|new|current|temporary|old))?"
            r"(?:\s+(?:que\s+\w+\s+\w+|you\s+\w+))?"
            r"(?:\s*(?:é|eh|is|was|era|foi|será|:|=)\s*|\s+))"
            r"(?!<SECRET>)([\"'“]?)((?=[^\s\"'”]*[\d!@#$%&*?_+=])[^\s\"'”]{4,})",
        ),
        _prose_secret,
    ),
    # shapes
    (
        re.compile(
            r"\b(?:sk-ant-[A-Za-z0-9_-]{16,}"
            r"|sk-(?:proj-|svcacct-|admin-|live-)?[A-Za-z0-9_-]{16,}"
            r"|(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{12,}"
            r"|(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[0-9A-Z]{16}"
            r"|gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,}"
            r"|glpat-[A-Za-z0-9_-]{20,}"
            r"|xox[abposr]-[A-Za-z0-9-]{10,}"
            r"|AIza[0-9A-Za-z_-]{35}"
            r"|hf_[A-Za-z0-9]{30,}"
            r"|npm_[A-Za-z0-9]{36,}"
            r"|SG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}"
            r"|(?:gsk|pplx|xai)[-_][A-Za-z0-9]{20,}"
            r"|r8_[A-Za-z0-9]{30,}"
            r"|eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,})"
        ),
        SECRET,
    ),
    # AWS secret access keys next to their name
    (
        re.compile(r"(?i)(aws_secret_access_key[\"']?(?:\s*[:=]\s*|\s+)[\"']?)([A-Za-z0-9/+=]{40})"),
        r"\1" + SECRET,
    ),
]

#: Cheap pre-check: text without any of these (lower-cased) substrings holds no secret we know.
_HINTS: Final = (
    "private key",
    "://",
    "token",
    "api",
    "_key",
    "-key",
    "key=",
    "key:",
    "passw",
    "passph",
    "passcode",
    "senha",
    "pin",
    "acesso",
    "access code",
    "secret",
    "sig=",
    "signature=",
    "authoriz",
    "auth_",
    "auth-",
    "auth=",
    "bearer",
    "basic ",
    "bot ",
    "cookie",
    "credential",
    "sk-",
    "sk_",
    "rk_",
    "pk_",
    "akia",
    "asia",
    "agpa",
    "aida",
    "aroa",
    "anpa",
    "anva",
    "aipa",
    "ghp_",
    "gho_",
    "ghu_",
    "ghs_",
    "ghr_",
    "github_pat",
    "glpat",
    "xox",
    "aiza",
    "hf_",
    "npm_",
    "sg.",
    "gsk",
    "pplx",
    "xai",
    "r8_",
    "eyj",
    "mysql",
    "mariadb",
    "pass",
    "pwd",
    "curl",
    "wget",
    "login",
    "redis-cli",
    "openssl",
    "htpasswd",
    "-b ",
    "--cookie",
    "-p",
)


def scrub(text: str) -> str:
    """`text` with every recognised secret replaced by ``<SECRET>``.

    Args:
        text: a command, an argument value, a message.

    Returns:
        The scrubbed text; the same object when nothing looked like a secret.
    """
    if not text:
        return text
    low = text.lower()
    if not any(map(low.__contains__, _HINTS)):
        return text
    # to a fixed point: a replacement can complete another rule's context
    return fixed_point(_scrub_once, text, rounds=6)


def _scrub_once(text: str) -> str:
    for pattern, replacement in _RULES:
        text = pattern.sub(replacement, text)
    return text


@lru_cache(maxsize=4096)
def is_secret_key(key: str) -> bool:
    """True when an argument or field called `key` holds a secret (``api_key``, ``password``)."""
    return bool(SECRET_KEY_RE.match(key))
