"""Prompt-bound text: stored text made safe to place inside a prompt.

A procedure's step, any text that came from a model or a trace and goes back into a
prompt, passes through here, so it can never open or close a prompt tag (``</knowledge>``,
``<system>``, ``<!--``) nor start a line of its own (a heading such as ``## Contradiction``,
or a forged block header):

- `xml_safe` drops the characters XML 1.0 forbids (most C0 controls, U+FFFE, U+FFFF), the
  C1 controls (U+0080-U+009F), the invisible bidirectional controls (U+202A-U+202E,
  U+2066-U+2069, U+200E, U+200F, U+061C), which show a person reviewing a text another
  order of its words than the model reads, and the tag characters (U+E0000-U+E007F),
  which spell words a model reads and a person does not see;
- `prompt_line` also folds every run of whitespace (newlines, U+2028, U+2029, NEL
  included) into one space, so the text stays on the line it is placed on, and escapes
  only what could start a tag. The scheme is minimal, so a step stays runnable as written
  and costs no extra tokens:

  * a ``<`` that could open a tag or a markup declaration (followed by a letter, ``/``,
    ``!`` or ``?``, after any invisible characters; its full-width ``＜`` and small ``﹤``
    forms too) is written ``&lt;``, unless it starts a placeholder: ``<`` + an upper-case
    letter + upper-case letters, digits or ``_`` + ``>`` (``<ITEM_IDS>``, ``<NEW_FILE>``),
    the only tag-like shape a canonical template has;
  * every other character is kept: ``&&``, ``2>&1``, ``>``, ``<<'EOF'``, ``a < b``, and
    ``&`` itself (a literal ``&lt;`` in a stored step stays as it is: it is not a tag).

  So ``</knowledge>`` reads ``&lt;/knowledge>`` and ``<system>`` reads ``&lt;system>`` (no tag
  is opened or closed), while ``cd repo && pytest -q > out.txt`` and
  ``return_delivered_order_items(item_ids=[<ITEM_IDS>])`` are unchanged.

The concept block of `insika_knowledge.retrieve` is XML and escapes with the XML rules of
its own; this module is for plain-text blocks such as the recalled procedure.
"""

from __future__ import annotations

import re
from typing import Final
from xml.sax.saxutils import escape

__all__ = ["BIDI_CONTROLS", "TERMINAL_CONTROLS", "prompt_line", "prompt_text", "xml_safe", "xml_text"]

#: The invisible bidirectional controls (U+202A-U+202E, U+2066-U+2069, U+200E, U+200F,
#: U+061C), as the inside of a regular expression's character class.
BIDI_CONTROLS: Final = "\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c"
#: The control characters a terminal reads as commands (``\x1b[...``, a bell; tab and line
#: end aside), as the inside of a character class.
TERMINAL_CONTROLS: Final = "\x01-\x08\x0b-\x1f\x7f-\x9f"

#: What makes a tag of what follows a ``<``: not a placeholder (``<ITEM_IDS>``), then a letter,
#: ``/``, ``!`` or ``?`` (or their full-width forms), after any invisible characters (``<``
#: U+200B ``/knowledge>`` reads as a closing tag to a model that does not see them).
_TAG_NEXT: Final = (r"(?![A-Z][A-Z0-9_]*>)"
                    r"(?=[\u00ad\u180e\u200b-\u200d\u2060-\u2064\ufeff]*[A-Za-z/!?\uff0f\uff01\uff1f])")
#: A ``<``, or its full-width or small form (``＜/knowledge＞``), that could start a tag, a
#: closing tag, a comment or a processing instruction.
_TAG_START: Final = re.compile(r"[<\uff1c\ufe64]" + _TAG_NEXT)


#: What prompt-bound text never carries: the characters XML 1.0 forbids (control characters
#: but tab, line feed and carriage return; U+FFFE, U+FFFF), the C1 controls, the
#: bidirectional controls and the tag characters.
_UNSAFE: Final = re.compile(
    f"[\x00-\x08\x0b\x0c\x0e-\x1f\x80-\x9f\ufffe\uffff{BIDI_CONTROLS}\U000e0000-\U000e007f]")


def xml_safe(text: str) -> str:
    """`text` without the characters XML 1.0 forbids (tab, LF and CR are kept), C1 controls,
    bidirectional controls and tag characters (see the module docstring).
    """
    return _UNSAFE.sub("", text)


def prompt_line(text: str) -> str:
    """`text` as one prompt-safe line: XML-safe, whitespace folded, tag starts escaped.

    See the module docstring for the scheme. Examples:
    ``prompt_line("a </knowledge>\\n## b")`` is ``"a &lt;/knowledge> ## b"``;
    ``prompt_line("f(x=<ITEM_IDS>) && g 2>&1")`` is unchanged.
    """
    return _TAG_START.sub("&lt;", " ".join(xml_safe(text).split()))


def xml_text(text: str) -> str:
    """`text` as the content of an XML element in a prompt (the ``<knowledge>`` block): XML-safe,
    XML-escaped (``<``, ``>``, ``&``), and a full-width or small ``<`` that could start a tag
    written ``&lt;`` too (a model reads ``＜/knowledge＞`` as the tag an XML parser does not).

    ``xml_text("a ＜/knowledge＞ & b")`` is ``"a &lt;/knowledge＞ &amp; b"``.
    """
    return _WIDE_TAG_START.sub("&lt;", escape(xml_safe(text)))


#: A full-width or small ``<`` (what `escape` keeps) where it could start a tag (`_TAG_START`).
_WIDE_TAG_START: Final = re.compile(r"[\uff1c\ufe64]" + _TAG_NEXT)


def prompt_text(text: str) -> str:
    """`text` made prompt-safe with its lines kept (a whole record a tool hands a model):
    XML-safe, and each ``<`` that could start a tag escaped as in `prompt_line`.

    ``prompt_text("a\n</tool_result>\u202e")`` is ``"a\n&lt;/tool_result>"``.
    """
    return _TAG_START.sub("&lt;", xml_safe(text))
