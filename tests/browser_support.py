"""What the Studio's Chromium tests share: a served Studio, the browser, the editor, screenshots.

The app runs under uvicorn in a background thread on 127.0.0.1 and a free port, over
the demo's data (tenant ``demo``, agent ``loja-aurora``). The editor is CodeMirror
(static/editor.js); `set_text` replaces its text as one change, the way a paste does,
and `text` reads the form's textarea, which is what a save submits.
"""

from __future__ import annotations

import os
import shutil
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import uvicorn
from playwright.sync_api import Page, expect

from insika_knowledge.demo import run_demo
from insika_knowledge.events import Recorder
from insika_knowledge.memory import Memory
from insika_knowledge.store import SQLiteStore
from insika_knowledge.studio.app import create_app

CHROMIUM = "/usr/bin/chromium"
TOKEN = "browser-test-token-42"
TENANT = "demo"
AGENT = "loja-aurora"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update"]
SCREENSHOTS = Path(__file__).resolve().parents[1] / "test-output"
#: The two viewports every screenshot is taken at: a laptop, and a phone.
VIEWPORTS = {"1280": {"width": 1280, "height": 800}, "390": {"width": 390, "height": 844}}


def require_chromium() -> None:
    """Skip the calling test module without Debian's Chromium (`CHROMIUM`); under CI, fail.

    Playwright drives that browser and never downloads one, so CI installs it
    (``apt-get install chromium``, see .ci/run) and a missing one there is a failure.
    """
    if Path(CHROMIUM).exists():
        return
    reason = f"{CHROMIUM} is missing: apt-get install chromium (Debian's Chromium, which Playwright drives)"
    if os.environ.get("CI"):
        pytest.fail(f"the Studio's browser tests must run under CI: {reason}", pytrace=False)
    pytest.skip(reason, allow_module_level=True)


class Studio:
    """A running Studio: its base URL, its Memory and the events it emitted."""

    def __init__(self, base: str, memory: Memory, events: Recorder, data: Path):
        self.base = base
        self.memory = memory
        self.events = events
        self.data = data

    @property
    def store(self) -> SQLiteStore:
        return self.memory.store(TENANT)

    def url(self, path: str) -> str:
        return self.base + path


@contextmanager
def serve_demo(data: Path) -> Iterator[Studio]:
    """The demo's data written under `data`, and a Studio serving it until the block ends."""
    run_demo(data_dir=str(data), echo=lambda line: None)
    memory = Memory(data)
    events = Recorder()
    memory.events.subscribe(events)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(create_app(memory, TOKEN), log_level="warning",
                                           lifespan="off", access_log=False))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 15
    while not server.started:
        assert time.monotonic() < deadline, "uvicorn did not start"
        time.sleep(0.02)
    try:
        yield Studio(f"http://127.0.0.1:{port}", memory, events, data)
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()
        memory.close()


def screenshot(page: Page, shots: Path, name: str) -> Path:
    """A full-page screenshot under `shots`, copied to ``test-output/`` to look at."""
    path = shots / name
    page.screenshot(path=str(path), full_page=True)
    SCREENSHOTS.mkdir(exist_ok=True)
    shutil.copy(path, SCREENSHOTS / name)
    assert path.stat().st_size > 10_000  # a real rendering, not a blank page
    return path


def screenshots(page: Page, shots: Path, stem: str) -> list[Path]:
    """`stem`-1280.png and `stem`-390.png: the page at both `VIEWPORTS`, each checked to fit.

    At each width the page must not scroll sideways (nothing wider than the screen).
    The viewport is left at 1280x800.
    """
    out = []
    for label, size in VIEWPORTS.items():
        page.set_viewport_size(size)
        page.wait_for_timeout(100)  # let CodeMirror re-measure its lines
        overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
        assert overflow <= 0, f"{stem} at {label} px is {overflow} px wider than the screen"
        out.append(screenshot(page, shots, f"{stem}-{label}.png"))
    page.set_viewport_size(VIEWPORTS["1280"])
    return out


def wait_for_editor(page: Page) -> None:
    """Wait until CodeMirror has replaced the record's textarea."""
    expect(page.locator(".editor.cm-mounted .cm-content").first).to_be_visible()


def set_text(page: Page, text: str, box: str = ".editor") -> None:
    """Replace the editor's whole text with `text` (one change, as a paste makes).

    The editor holds a record without its final newline (it adds it back when it copies
    into the form), so one final newline of `text` is left out.
    """
    wait_for_editor(page)
    text = text.removesuffix("\n")
    page.evaluate(
        """([selector, text]) => {
            const view = document.querySelector(selector).editorView;
            view.dispatch({changes: {from: 0, to: view.state.doc.length, insert: text}});
        }""",
        [box, text],
    )


def text(page: Page, name: str = "markdown") -> str:
    """The text the form submits (the hidden textarea CodeMirror keeps in step)."""
    return page.input_value(f"textarea[name={name}]")


def editor_lines(page: Page) -> Any:
    """The editor's line-number gutter cells (CodeMirror's, without its sizing spacer)."""
    return page.locator(".cm-lineNumbers .cm-gutterElement:not([style*='visibility: hidden'])")
