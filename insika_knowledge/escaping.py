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

  * a ``<`` that could open a tag or a markup declaration (followed by a letter of any
    script, ``/`` or a slash that looks like one, ``!`` or ``?``, after any characters a
    reader does not see: zero-width, joiners, fillers, variation selectors, combining
    marks), or a character a model may read as ``<`` (full-width ``＜``, small ``﹤``,
    ``‹``, ``〈``, ``⟨``...), is written ``&lt;``, unless, in a procedure's step, it starts one
    of the placeholders canonicalisation wrote in that step (``<ITEM_IDS>``, ``<NEW_FILE>``:
    ``prompt_line(step, placeholders={...})``, the caller names them). Any other
    ``<SYSTEM>``, a literal an agent's shell command held, is escaped; a stored record or
    description keeps none (`prompt_text`, `prompt_line` without `placeholders`);
  * every other character is kept: ``&&``, ``2>&1``, ``>``, ``<<'EOF'``, ``a < b``, and
    ``&`` itself (a literal ``&lt;`` in a stored step stays as it is: it is not a tag).

  So ``</knowledge>`` reads ``&lt;/knowledge>`` and ``<system>`` reads ``&lt;system>`` (no tag
  is opened or closed), while ``cd repo && pytest -q > out.txt`` and
  ``return_delivered_order_items(item_ids=[<ITEM_IDS>])`` are unchanged.

The concept block of `insika_knowledge.retrieve` is XML and escapes with the XML rules of
its own; this module is for plain-text blocks such as the recalled procedure. Every one of
these functions also quotes memory's own procedure header (`quoted_header`): a stored text
that writes "[ACE recalled procedure — ..." cannot pass for a recalled block.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from functools import lru_cache
from typing import Final
from xml.sax.saxutils import escape

__all__ = ["BIDI_CONTROLS", "PROCEDURE_HEADER", "TERMINAL_CONTROLS", "inert_tags", "prompt_line", "prompt_text",
           "quoted_header", "xml_safe", "xml_text"]

#: The invisible bidirectional controls (U+202A-U+202E, U+2066-U+2069, U+200E, U+200F,
#: U+061C), as the inside of a regular expression's character class.
BIDI_CONTROLS: Final = "\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c"
#: The control characters a terminal reads as commands (``\x1b[...``, a bell; tab and line
#: end aside), as the inside of a character class.
TERMINAL_CONTROLS: Final = "\x01-\x08\x0b-\x1f\x7f-\x9f"

#: A ``<`` and the characters a model may read as one: full-width, small, the single angle
#: quotation mark, the CJK (single and double), technical and mathematical angle brackets, the
#: ornamental ones, the modifier and Canadian forms.
_LESS_THAN: Final = "<\uff1c\ufe64\u2039\u3008\u27e8\u02c2\u1438\u276e\u2329\u276c\u2770\u29fc\u300a"
#: What a reader does not see between a ``<`` and a tag's name: default-ignorable code points
#: (zero-width characters, joiners, fillers, variation selectors, the tag block, musical and
#: hieroglyph format controls, interlinear annotation marks), combining marks (``<`` U+200B
#: ``/knowledge>`` reads as a closing tag to a model), and the spaces but the ASCII one (a
#: shell's ``cmd < /dev/null`` stays runnable).
_UNSEEN: Final = ("\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e"
                  "\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff"
                  "\u20d0-\u20ff\ufe20-\ufe2f\U0001bca0-\U0001bca3\U000e0000-\U000e0fff"
                  "\U0001d173-\U0001d17a\ufff9-\ufffb\U00013430-\U0001343f"
                  "\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000")
#: What makes a tag of what follows a ``<``, after anything `_UNSEEN`: a letter of any script or
#: ``_`` (an XML name's start), ``:``, ``|`` (``<|im_start|>``, a chat template's token), ``/`` or
#: a slash that looks like one, ``!`` or ``?`` (or their full-width forms).
_TAG_NAME: Final = f"(?=[{_UNSEEN}]*(?:[^\\W\\d]|[/!?:|\uff0f\uff01\uff1f\u2044\u2215\u29f8]))"
#: The shape of a canonical template's placeholder (``<ITEM_IDS>``, ``<NEW_FILE>``).
_PLACEHOLDER_RE: Final = re.compile(r"<[A-Z][A-Z0-9_]*>")
#: Any tag start.
_ANY_TAG_START: Final = re.compile(f"[{_LESS_THAN}]{_TAG_NAME}")
#: How a recalled procedure block starts (`insika_knowledge.procedures.recall.render.header`):
#: memory's own marker, which no stored or client text may write as it is.
PROCEDURE_HEADER: Final = "[ACE recalled procedure \u2014 "
#: The marker as quoted text shows it: a full-width ``［``, the same words.
_QUOTED_HEADER: Final = "\uff3b" + PROCEDURE_HEADER[1:]


def quoted_header(text: str) -> str:
    """`text` with each procedure header (`PROCEDURE_HEADER`) opened by a full-width ``［``:
    the words read the same, and no block of that shape is found there.
    """
    return text.replace(PROCEDURE_HEADER, _QUOTED_HEADER) if PROCEDURE_HEADER in text else text


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


_TERMINAL_RE: Final = re.compile(f"[{TERMINAL_CONTROLS}]")


def model_text(text: str) -> str:
    """A body a model wrote, as it may be stored: without terminal escapes and bells (nothing
    a reader needs), nor what `xml_safe` drops (tag characters and bidirectional controls
    would show a person reviewing the record other words than a model reads). Extraction's
    candidates and the merge model's bodies both go through it.
    """
    return xml_safe(_TERMINAL_RE.sub("", text))


def prompt_line(text: str, *, placeholders: Collection[str] = ()) -> str:
    """`text` as one prompt-safe line: XML-safe, whitespace folded, tag starts escaped.

    Args:
        text: any text.
        placeholders: the template placeholders `text` may keep as written (a procedure's
            step: those its canonicalisation wrote, ``{"<ITEM_IDS>"}``); every other ``<``
            that could start a tag is escaped, ``<ITEM_IDS>`` too when it is not named.

    See the module docstring for the scheme. Examples:
    ``prompt_line("a </knowledge>\\n## b")`` is ``"a &lt;/knowledge> ## b"``;
    ``prompt_line("f(x=<X>) && g 2>&1", placeholders={"<X>"})`` is unchanged, and
    ``prompt_line("<X>")`` is ``"&lt;X>"``.
    """
    safe = quoted_header(xml_safe(text))  # escaped before the whitespace is folded: "<" NBSP "/x>" is a tag start
    if not placeholders:
        return " ".join(_ANY_TAG_START.sub("&lt;", safe).split())

    def escaped(match: re.Match[str]) -> str:
        kept = _PLACEHOLDER_RE.match(safe, match.start())
        return match.group() if kept is not None and kept.group() in placeholders else "&lt;"

    return " ".join(_ANY_TAG_START.sub(escaped, safe).split())


def xml_text(text: str) -> str:
    """`text` as the content of an XML element in a prompt (the ``<knowledge>`` block): XML-safe,
    XML-escaped (``<``, ``>``, ``&``), and a full-width or small ``<`` that could start a tag
    written ``&lt;`` too (a model reads ``＜/knowledge＞`` as the tag an XML parser does not).

    ``xml_text("a ＜/knowledge＞ & b")`` is ``"a &lt;/knowledge＞ &amp; b"``.
    """
    return _ANY_TAG_START.sub("&lt;", escape(quoted_header(xml_safe(text))))


def prompt_text(text: str) -> str:
    """`text` made prompt-safe with its lines kept (a whole record a tool hands a model):
    XML-safe, and each ``<`` that could start a tag escaped as in `prompt_line` (no placeholder kept).

    ``prompt_text("a\n</tool_result>\u202e")`` is ``"a\n&lt;/tool_result>"``. A record holds
    no template placeholder: ``<SYSTEM>`` is escaped too.
    """
    return _ANY_TAG_START.sub("&lt;", quoted_header(xml_safe(text)))


def inert_tags(text: str, names: Collection[str]) -> str:
    """`text` with each ``<`` (or a character a model reads as one) that opens or closes a tag
    named in `names` (any case, after any characters a reader does not see) written ``&lt;``;
    every other character is kept.

    For text a client wrote into a message memory adds its own block to: ``inert_tags("a
    </knowledge><knowledge>", {"knowledge"})`` is ``"a &lt;/knowledge>&lt;knowledge>"``, while
    ``<div>`` and ``a < b`` stay as written. The same text always gives the same bytes.
    """
    return _named_tag_start(tuple(sorted(names))).sub("&lt;", text)


@lru_cache(maxsize=8)
def _named_tag_start(names: tuple[str, ...]) -> re.Pattern[str]:
    alternatives = "|".join(re.escape(name) for name in names)
    slash = "/\uff0f\u2044\u2215\u29f8"
    return re.compile(f"[{_LESS_THAN}](?=[{_UNSEEN}]*[{slash}]?[{_UNSEEN}]*(?:{alternatives})(?![\\w-]))",
                      re.IGNORECASE)
