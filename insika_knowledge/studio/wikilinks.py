"""``[[name]]`` links in the preview, made on markdown-it's token stream, never on HTML.

`use_wikilinks` adds a core rule to a `MarkdownIt` parser. After inline parsing it
splits each plain ``text`` token of a paragraph or heading around ``[[...]]`` into a
``link_open`` / ``text`` / ``link_close`` triple; the renderer then escapes the href and
the text like any other link. What is not a plain text token at that level is left
alone: an image's alt text (its own children), a link's title (an attribute), the
text inside another link (no nested ``<a>``), inline code, and characters written as
escapes or entities (``\\[\\[x]]`` stays text). A label that cannot be made a concept
name stays text too.

The href comes from the render's ``env``: ``md.render(text, {HREF_KEY: href_of})``
where ``href_of(name)`` returns the URL of concept `name` (already a slug).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Final

from markdown_it import MarkdownIt
from markdown_it.rules_core import StateCore
from markdown_it.token import Token

from insika_knowledge.concept import normalize_name
from insika_knowledge.errors import InvalidName

#: The ``env`` key of the function that makes a concept's URL from its name.
HREF_KEY: Final = "insika_wikilink_href"
#: ``[[label]]``: no bracket or line break inside, 1-120 characters.
WIKILINK_RE: Final = re.compile(r"\[\[([^\[\]\n]{1,120})\]\]")

HrefOf = Callable[[str], str]


def use_wikilinks(md: MarkdownIt) -> MarkdownIt:
    """Add the ``wikilinks`` core rule to `md` (before ``text_join``, so escapes stay text).

    Returns:
        `md`, for chaining.
    """
    md.core.ruler.before("text_join", "wikilinks", _wikilinks)
    return md


def _wikilinks(state: StateCore) -> None:
    href_of: HrefOf | None = state.env.get(HREF_KEY)
    if href_of is None:
        return
    for block in state.tokens:
        if block.type != "inline" or not block.children:
            continue
        out: list[Token] = []
        depth = 0  # inside a link: its text is not made another link
        for token in block.children:
            if token.type == "link_open":
                depth += 1
            elif token.type == "link_close":
                depth -= 1
            if token.type == "text" and depth == 0 and "[[" in token.content:
                out.extend(_split(token, href_of))
            else:
                out.append(token)
        block.children = out


def _split(token: Token, href_of: HrefOf) -> list[Token]:
    """`token`'s text with every ``[[label]]`` whose label is a concept name made a link."""
    out: list[Token] = []
    text = token.content
    start = 0
    for match in WIKILINK_RE.finditer(text):
        try:
            name = normalize_name(match.group(1))
        except InvalidName:
            continue
        if match.start() > start:
            out.append(_text(text[start:match.start()], token))
        link = Token("link_open", "a", 1, attrs={"class": "wikilink", "href": href_of(name)},
                     level=token.level, markup="wikilink")
        out += [link, _text(match.group(0), token, level=token.level + 1),
                Token("link_close", "a", -1, level=token.level, markup="wikilink")]
        start = match.end()
    if start < len(text):
        out.append(_text(text[start:], token))
    return out


def _text(content: str, like: Token, *, level: int | None = None) -> Token:
    return Token("text", "", 0, content=content, level=like.level if level is None else level)
