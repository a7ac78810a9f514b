"""Reading the Studio's pages in route tests: the CSRF field, the list's names, a logged-in client."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager

from starlette.testclient import TestClient

from insika_knowledge.memory import Memory
from insika_knowledge.studio.app import create_app


def csrf(page: str) -> str:
    """The value of the page's ``csrf`` form field (fails the test when there is none)."""
    match = re.search(r'name="csrf" value="([^"]+)"', page)
    assert match, "no CSRF field on the page"
    return match.group(1)


def names(page: str) -> list[str]:
    """The concept names of a list page, in the order shown."""
    return re.findall(r'<td class="name"><a href="[^"]*">([^<]+)</a>', page)


@contextmanager
def logged_in(memory: Memory, token: str, base_url: str = "http://127.0.0.1") -> Iterator[TestClient]:
    """A test client of a Studio over `memory`, logged in with `token`."""
    with TestClient(create_app(memory, token), base_url=base_url) as client:
        page = client.get("/studio/login")
        client.post("/studio/login", data={"token": token, "csrf": csrf(page.text)})
        yield client
