"""Token counters: how many tokens a recalled block costs, offline.

The budget (`max_injection_tokens`, 400 by default) is counted by a `TokenCounter`, any
object with ``count(text) -> int``. Built in:

- ``wordpiece`` (the default): a regex word-piece estimate close to BPE tokenisers on
  English and code: each run of letters costs one token per started 6 letters, digits
  cost one token per started 3 (BPE vocabularies group numbers in threes), and every other
  non-space character costs one;
- ``chars4``: one token per started 4 characters (the common rule of thumb);
- ``tiktoken:<encoding>`` (e.g. ``tiktoken:cl100k_base``): the exact count of an OpenAI
  encoding, only when the optional ``tiktoken`` package is installed and has its
  encoding file locally; it is never needed.

A host can pass its own counter object to `insika_knowledge.procedures.skill.ProceduralMemory`.
"""

from __future__ import annotations

import importlib
import math
import re
from typing import Any, Final, Protocol, runtime_checkable

from insika_knowledge.errors import UserError

_PIECE_RE: Final = re.compile(r"[^\W\d_]+|\d+|[^\s\w]|_")


@runtime_checkable
class TokenCounter(Protocol):
    """Counts the tokens of a text; `name` shows in the configuration and the notes."""

    name: str

    def count(self, text: str) -> int:
        """Tokens of `text` (0 for the empty string)."""
        ...


class WordPieceCounter:
    """The default offline estimate (see the module docstring)."""

    name = "wordpiece"

    def count(self, text: str) -> int:
        """Tokens of `text`: letters per started 6, digits per started 3, other characters 1."""
        total = 0
        for piece in _PIECE_RE.findall(text):
            c = piece[0]
            if c.isdigit():
                total += (len(piece) + 2) // 3
            elif c.isalpha():
                total += (len(piece) + 5) // 6
            else:
                total += 1
        return total


class CharsPerTokenCounter:
    """One token per started `chars` characters (4 by default)."""

    def __init__(self, chars: int = 4):
        self.chars = chars
        self.name = f"chars{chars}"

    def count(self, text: str) -> int:
        """``ceil(len(text) / chars)``."""
        return math.ceil(len(text) / self.chars)


class TiktokenCounter:
    """The exact token count of a tiktoken encoding (optional dependency).

    Raises:
        UserError: tiktoken is not installed, or the encoding cannot be loaded offline.
    """

    def __init__(self, encoding: str = "cl100k_base"):
        try:
            tiktoken: Any = importlib.import_module("tiktoken")  # optional, untyped
        except ImportError:
            raise UserError(
                "token counter tiktoken: the tiktoken package is not installed; "
                "use wordpiece or chars4"
            ) from None
        try:
            self._encoding = tiktoken.get_encoding(encoding)
        except Exception as exc:  # tiktoken raises several kinds when the file is unreachable
            raise UserError(f"token counter tiktoken:{encoding} cannot be loaded: {exc}") from None
        self.name = f"tiktoken:{encoding}"

    def count(self, text: str) -> int:
        """Tokens of `text` in the encoding."""
        return len(self._encoding.encode(text, disallowed_special=()))


def get_counter(spec: str | TokenCounter) -> TokenCounter:
    """The counter named by `spec` (``wordpiece``, ``chars4``, ``charsN``, ``tiktoken[:enc]``).

    Raises:
        UserError: an unknown name, or tiktoken unavailable.
    """
    if not isinstance(spec, str):
        return spec
    if spec == "wordpiece":
        return WordPieceCounter()
    match = re.fullmatch(r"chars(\d{1,2})", spec)
    if match and int(match.group(1)) > 0:
        return CharsPerTokenCounter(int(match.group(1)))
    if spec == "tiktoken" or spec.startswith("tiktoken:"):
        return TiktokenCounter(spec.partition(":")[2] or "cl100k_base")
    raise UserError(
        f"token_counter {spec!r} is unknown: use wordpiece, chars4 or tiktoken:<encoding>"
    )
