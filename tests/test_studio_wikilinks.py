"""``[[links]]`` in the Studio's preview are made on markdown-it's tokens (issue 16, item 5).

The old rewrite ran a regex over the rendered HTML, so a ``[[link]]`` inside an image's
alt text or a link's title put an ``<a href="...">`` (with its quotes) inside the
attribute and broke out of it. The property feeds markdown soup built to break
attributes and checks the HTML element by element.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

from hypothesis import given, settings
from hypothesis import strategies as st

from insika_knowledge.studio.render import preview

AGENT = "shop"
TENANT = "acme"
#: What CommonMark (raw HTML off) and the wikilinks may produce.
TAGS = {"p", "a", "img", "em", "strong", "code", "pre", "ul", "ol", "li", "blockquote", "hr", "br",
        "h1", "h2", "h3", "h4", "h5", "h6"}
ATTRIBUTES = {"a": {"href", "title", "class"}, "img": {"src", "alt", "title"}, "ol": {"start"},
              "code": {"class"}}
HREF_RE = re.compile(r"/studio/knowledge/[a-z0-9][a-z0-9-]*\?agent=shop&tenant=acme")


class Elements(HTMLParser):
    """Every start tag with its attributes, and the text inside wikilinks."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, list[tuple[str, str | None]]]] = []
        self.open_links: list[bool] = []
        self.wikilink_text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, attrs))
        if tag == "a":
            self.open_links.append(("class", "wikilink") in attrs)
            if self.open_links[-1]:
                self.wikilink_text.append("")

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, attrs))

    def handle_endtag(self, tag: str) -> None:
        if tag == "a" and self.open_links:
            self.open_links.pop()

    def handle_data(self, data: str) -> None:
        if self.open_links and self.open_links[-1]:
            self.wikilink_text[-1] += data


def _elements(html: str) -> Elements:
    parser = Elements()
    parser.feed(html)
    parser.close()
    return parser


def _check(html: str) -> Elements:
    found = _elements(html)
    for tag, attrs in found.tags:
        assert tag in TAGS, f"unexpected element <{tag}> in {html!r}"
        names = [name for name, _ in attrs]
        assert len(names) == len(set(names)), f"repeated attribute in <{tag}>: {html!r}"
        assert set(names) <= ATTRIBUTES.get(tag, set()), f"<{tag} {names}> in {html!r}"
        values = dict(attrs)
        if tag == "a" and values.get("class") == "wikilink":
            assert HREF_RE.fullmatch(values.get("href") or ""), html
        elif tag == "a":
            assert "class" not in values
    for text in found.wikilink_text:
        assert re.fullmatch(r"\[\[[^\[\]\n]{1,120}\]\]", text), f"wikilink text {text!r}"
    return found


def test_links_in_text_headings_and_lists_are_made() -> None:
    html = str(preview("# See [[Frete Grátis]]\n\n- a [[troca]]\n\ntext [[nao-existe]].", AGENT, TENANT))
    found = _check(html)
    hrefs = [dict(a)["href"] for t, a in found.tags if t == "a"]
    assert hrefs == [f"/studio/knowledge/{n}?agent=shop&tenant=acme"
                     for n in ("frete-gratis", "troca", "nao-existe")]
    assert found.wikilink_text == ["[[Frete Grátis]]", "[[troca]]", "[[nao-existe]]"]


def test_an_image_alt_and_a_link_title_keep_their_brackets_as_text() -> None:
    body = ('![x [[y]]" onerror="alert(1)](i.png "[[t]]\\" onload=\\"alert(2)") '
            '[l [[n]]](u "[[q]]\\" onclick=\\"alert(3)") `[[c]]` \\[\\[e]]')
    html = str(preview(body, AGENT, TENANT))
    found = _check(html)
    image = dict(next(a for t, a in found.tags if t == "img"))
    assert image["alt"] == 'x [[y]]" onerror="alert(1)' and image["title"] == '[[t]]" onload="alert(2)'
    link = dict(next(a for t, a in found.tags if t == "a"))
    assert link == {"href": "u", "title": '[[q]]" onclick="alert(3)'}
    assert found.wikilink_text == []  # not in alt, title, link text, code, or when escaped
    assert "<code>[[c]]</code>" in html and " [[e]]</p>" in html


FRAGMENTS = st.sampled_from([
    "[[", "]]", "[", "]", "(", ")", "!", '"', "'", "<", ">", "=", "&", "&quot;", "\\", "`", "*", "_",
    " ", "\n", "\n\n", "# ", "- ", "> ", "x", "onerror=", "onload=alert(1)", "<a href=x>", "</a>",
    "<img src=x>", "javascript:", "http://e.example/", "[[ok]]", "[[Frete Grátis]]", "[[a\"b]]",
    '[[x" onerror="y]]', "[[<b>]]", "[[&amp;]]", "[[a]b]]", "[[" + "z" * 130 + "]]",
])
SOUP = st.lists(FRAGMENTS, max_size=30).map("".join)


@st.composite
def markdown_soup(draw: st.DrawFn) -> str:
    """Images and links whose alt, text, destination and title carry [[links]] and quotes."""
    pieces = []
    for _ in range(draw(st.integers(1, 4))):
        shape = draw(st.sampled_from(["image", "link", "text", "reference"]))
        a, b, c = draw(SOUP), draw(SOUP), draw(SOUP)
        if shape == "image":
            pieces.append(f'![{a}]({b.replace(" ", "") or "i.png"} "{c}")')
        elif shape == "link":
            pieces.append(f"[{a}](<{b}> '{c}')")
        elif shape == "reference":
            pieces.append(f'[{a}]\n\n[{a}]: /u "{c}"')
        else:
            pieces.append(a)
    return draw(st.sampled_from(["", "\n\n", " "])).join(pieces)


@settings(max_examples=400, deadline=None)
@given(markdown_soup())
def test_no_link_ever_breaks_out_of_an_attribute(body: str) -> None:
    _check(str(preview(body, AGENT, TENANT)))
