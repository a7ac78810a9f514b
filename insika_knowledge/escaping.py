"""Prompt-bound text: stored text made safe to place inside a prompt.

A concept's description, a procedure's step, any text that came from a model or a trace
and goes back into a prompt, passes through here, so it can never open or close a prompt
tag (``</knowledge>``, ``<system>``) nor start a markdown heading (``## Contradiction``):

- `xml_safe` drops the characters XML 1.0 forbids (most C0 controls, U+FFFE, U+FFFF);
- `prompt_line` also folds every run of whitespace (newlines, U+2028, U+2029, NEL
  included) into one space, so the text stays on the line it is placed on and no
  heading can begin, and escapes ``&``, ``<`` and ``>`` as XML entities.
"""

from __future__ import annotations

from xml.sax.saxutils import escape

__all__ = ["prompt_line", "xml_safe"]


def xml_safe(text: str) -> str:
    """`text` without the characters XML 1.0 forbids (tab, LF and CR are kept)."""
    return "".join(c for c in text if c in "\t\n\r" or (ord(c) >= 0x20 and c not in "\ufffe\uffff"))


def prompt_line(text: str) -> str:
    """`text` as one prompt-safe line: XML-safe, whitespace folded, ``&<>`` escaped.

    Example: ``prompt_line("a </knowledge>\\n## b")`` is ``"a &lt;/knowledge&gt; ## b"``.
    """
    return escape(" ".join(xml_safe(text).split()))
