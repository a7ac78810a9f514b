"""The Studio end to end in a real headless Chromium (Debian's), driven by Playwright.

The app runs under uvicorn in a background thread on 127.0.0.1 and a free port, over
the demo's data (tenant ``demo``, agent ``loja-aurora``). Skipped only when
/usr/bin/chromium is missing and $CI is not set; in CI these tests must run.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from browser_support import CHROMIUM, require_chromium

require_chromium()  # Debian's chromium: skips this module without it, fails under CI

from browser_support import (  # noqa: E402
    AGENT,
    ARGS,
    TENANT,
    TOKEN,
    Studio,
    editor_lines,
    screenshot,
    serve_demo,
    set_text,
    text,
    wait_for_editor,
)
from click.testing import CliRunner  # noqa: E402
from playwright.sync_api import Browser, BrowserContext, Page, expect, sync_playwright  # noqa: E402

from insika_knowledge.cli import cli  # noqa: E402
from insika_knowledge.concept import parse  # noqa: E402


@pytest.fixture(scope="module")
def studio(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Studio]:
    with serve_demo(tmp_path_factory.mktemp("studio-demo")) as served:
        yield served


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield chromium
        chromium.close()


def _login(page: Page, studio: Studio, token: str = TOKEN) -> None:
    page.goto(studio.url("/studio/knowledge"))
    expect(page).to_have_url(re.compile(r"/studio/login\?next="))
    page.fill("#token", token)
    page.click("form[action='/studio/login'] button[type=submit]")


@pytest.fixture(scope="module")
def session(browser: Browser, studio: Studio) -> Iterator[BrowserContext]:
    context = browser.new_context(viewport={"width": 1360, "height": 900})
    page = context.new_page()
    _login(page, studio)
    expect(page.locator("h1")).to_have_text("Pick an agent")
    page.close()
    yield context
    context.close()


@pytest.fixture
def page(session: BrowserContext) -> Iterator[Page]:
    tab = session.new_page()
    yield tab
    tab.close()


@pytest.fixture(scope="module")
def shots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("studio-screenshots")


def _screenshot(page: Page, shots: Path, name: str) -> Path:
    return screenshot(page, shots, name)


def _open(page: Page, studio: Studio, name: str) -> None:
    page.goto(studio.url(f"/studio/knowledge/{name}?agent={AGENT}&tenant={TENANT}"))
    expect(page.locator("h1 code")).to_have_text(name)
    wait_for_editor(page)


def _set_text(page: Page, markdown: str) -> None:
    set_text(page, markdown)


def _text(page: Page) -> str:
    return text(page)


def _record(studio: Studio, name: str) -> Any:
    stored = studio.store.get(AGENT, name)
    assert stored is not None
    return stored


def _restored_as(studio: Studio, name: str, markdown: str) -> None:
    """`name` is the record `markdown` again, stamped with the time of the restore."""
    restored, old = _record(studio, name).concept, parse(markdown)
    assert restored == old.replace(updated_at=restored.updated_at)
    assert restored.updated_at >= old.updated_at


# ----------------------------------------------------------------------------- tests


def test_login_with_the_token(browser: Browser, studio: Studio) -> None:
    context = browser.new_context()
    page = context.new_page()
    _login(page, studio, token="not-the-token")
    expect(page.locator("p.error")).to_contain_text("not right")
    page.fill("#token", TOKEN)
    page.click("form[action='/studio/login'] button[type=submit]")
    expect(page.locator("h1")).to_have_text("Pick an agent")
    expect(page.get_by_role("link", name=AGENT)).to_be_visible()
    cookie = next(c for c in context.cookies() if c["name"] == "insika_studio")
    assert cookie["httpOnly"] is True and cookie["sameSite"] == "Strict"
    context.close()


def test_list_and_conflict_filter(page: Page, studio: Studio, shots: Path) -> None:
    page.goto(studio.url("/studio/knowledge"))
    page.get_by_role("link", name=AGENT).click()
    rows = page.locator("table.concepts tbody tr")
    expect(rows).to_have_count(studio.store.count(AGENT))
    expect(page.locator("tr.in-conflict td.name a")).to_have_text(["devolucao-7-dias"])
    _screenshot(page, shots, "studio-list.png")
    page.locator("a.chip", has_text="Conflicts").click()
    expect(page).to_have_url(re.compile(r"status=conflict"))
    expect(rows).to_have_count(1)
    expect(rows.first.locator("td.name a")).to_have_text("devolucao-7-dias")
    expect(rows.first.locator(".badge.conflict")).to_be_visible()
    page.fill("input[name=q]", "campinas")
    page.press("input[name=q]", "Enter")
    expect(page).to_have_url(re.compile(r"q=campinas"))
    expect(page.locator("p.empty")).to_contain_text("No concept matches")  # conflict kept


def test_open_a_concept_and_resolve_the_demo_conflict(
    page: Page, studio: Studio, shots: Path
) -> None:
    page.goto(studio.url(f"/studio/knowledge?agent={AGENT}&tenant={TENANT}&status=conflict"))
    page.get_by_role("link", name="devolucao-7-dias").click()
    expect(page.locator("h1 .badge.conflict")).to_be_visible()
    expect(page.locator(".preview h2")).to_have_text("Contradiction")
    expect(page.locator(".history tbody tr")).to_have_count(2)
    wait_for_editor(page)
    # one number a drawn line (CodeMirror draws only the lines in view of its 460 px box)
    drawn = page.locator(".editor .cm-line")
    expect(editor_lines(page)).to_have_count(drawn.count())
    assert 10 < drawn.count() <= _text(page).count("\n")
    _screenshot(page, shots, "studio-editor.png")
    text = _text(page)
    assert "## Contradiction" in text
    resolved = text[: text.index("## Contradiction")].rstrip() + "\n"
    _set_text(page, resolved)
    page.get_by_role("button", name="Save").click()
    expect(page.locator(".flash")).to_contain_text("The conflict is resolved.")
    expect(page.locator("h1 .badge.conflict")).to_have_count(0)
    stored = _record(studio, "devolucao-7-dias")
    assert not stored.concept.in_conflict
    assert studio.store.versions(AGENT, "devolucao-7-dias")[0].reason == "edit"
    result = CliRunner().invoke(cli, ["search", "--data-dir", str(studio.data), "--tenant",
                                      TENANT, "--agent", AGENT, "devolução em 7 dias"])
    assert result.exit_code == 0, result.output
    line = next(x for x in result.output.splitlines() if 'name="devolucao-7-dias"' in x)
    assert 'status="conflict"' not in line


def test_promote_to_policy(page: Page, studio: Studio) -> None:
    _open(page, studio, "frete-gratis-acima-199")
    expect(page.locator("h1 .badge")).to_have_text("observed")
    _set_text(page, _text(page).replace("provenance: observed", "provenance: policy"))
    page.get_by_role("button", name="Save").click()
    expect(page.locator(".flash")).to_contain_text("Promoted to policy.")
    expect(page.locator("h1 .badge.prov-policy")).to_have_text("policy")
    assert _record(studio, "frete-gratis-acima-199").concept.provenance == "policy"


def test_an_invalid_edit_is_refused(page: Page, studio: Studio) -> None:
    before = _record(studio, "troca-procedimento")
    _open(page, studio, "troca-procedimento")
    broken = re.sub(r"confidence: [0-9.]+", "confidence: 1.7", _text(page))
    _set_text(page, broken)
    page.get_by_role("button", name="Save").click()
    expect(page.locator("div.error")).to_contain_text("line 6, field 'confidence'")
    expect(page.locator("div.error")).to_contain_text("outside 0..1")
    expect(page.locator(".cm-lineNumbers .cm-gutterElement.err")).to_have_text("6")
    assert _text(page) == broken
    assert _record(studio, "troca-procedimento") == before


def test_a_stale_edit_is_a_409_and_keeps_my_text(page: Page, studio: Studio) -> None:
    _open(page, studio, "cep-13-campinas")
    loaded = _record(studio, "cep-13-campinas")
    other = loaded.markdown.replace("description: ", "description: (revisado) ", 1)
    studio.store.edit(AGENT, "cep-13-campinas", other, expected_version=loaded.version,
                      actor="another-operator")
    mine = _text(page).replace("1 a 2 dias úteis", "1 a 3 dias úteis")
    assert mine != _text(page)
    _set_text(page, mine)
    page.get_by_role("button", name="Save").click()
    expect(page.locator("h1")).to_contain_text("changed while you were editing")
    expect(page.locator("pre.diff .d-add").first).to_be_visible()
    expect(page.locator("pre.record")).to_contain_text("(revisado)")
    assert _text(page) == mine
    assert "(revisado)" in _record(studio, "cep-13-campinas").markdown
    page.get_by_role("button", name=re.compile(r"Save my text over version")).click()
    expect(page.locator(".flash")).to_contain_text("Saved version")
    saved = _record(studio, "cep-13-campinas")
    assert "1 a 3 dias úteis" in saved.markdown and "(revisado)" not in saved.markdown


def test_restore_an_old_version(page: Page, studio: Studio) -> None:
    name = "reembolso-apos-devolucao"
    _open(page, studio, name)
    _set_text(page, _text(page).replace("5 dias úteis", "10 dias úteis"))
    page.get_by_role("button", name="Save").click()
    expect(page.locator(".flash")).to_contain_text("Saved version")
    first = studio.store.versions(AGENT, name)[-1]
    page.locator(".history a", has_text="view, diff, restore").last.click()
    expect(page.locator("h1")).to_contain_text(f"version {first.version}")
    expect(page.locator("pre.diff .d-del").first).to_be_visible()
    page.get_by_role("button", name="Restore this version").click()
    expect(page.locator(".flash")).to_contain_text(f"Restored version {first.version}")
    _restored_as(studio, name, first.markdown)
    assert studio.store.versions(AGENT, name)[0].reason == "restore"


def test_delete_and_undelete(page: Page, studio: Studio) -> None:
    name = "objecao-frete-caro"
    before = _record(studio, name)
    _open(page, studio, name)
    page.get_by_role("link", name="Delete…").click()
    expect(page.locator("h1")).to_contain_text(f"Delete {name}?")
    assert studio.store.get(AGENT, name) is not None  # the confirmation page deletes nothing
    page.get_by_role("button", name=f"Delete {name}").click()
    expect(page.locator(".flash")).to_contain_text(f"Deleted {name}.")
    assert studio.store.get(AGENT, name) is None
    assert {"name": name, "agent": AGENT} in studio.events.named("knowledge_deleted")
    response = page.goto(studio.url(f"/studio/knowledge/{name}?agent={AGENT}&tenant={TENANT}"))
    assert response is not None and response.status == 404
    page.get_by_role("link", name="Recently deleted").first.click()
    page.get_by_role("button", name=f"Restore {name}").click()
    expect(page.locator("h1 code")).to_have_text(name)
    _restored_as(studio, name, before.markdown)
