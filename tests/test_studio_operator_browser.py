"""The Studio as an operator's tool (issue 14), in a real headless Chromium.

Each feature is used as an operator would: the CodeMirror editor (wrapping, line
numbers, highlighting, Ctrl+S, the unsaved-changes warning), resolving a conflict in
one step, the evidence and activity pages, ranked search, filters, natural sort and the
pager, the create form and the export downloads. Every page is screenshot at 1280x800
and 390x844 (``test-output/``), and must not scroll sideways at either width.
"""

from __future__ import annotations

import io
import json
import re
import zipfile
from collections.abc import Iterator
from pathlib import Path

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
    screenshots,
    serve_demo,
    set_text,
    text,
    wait_for_editor,
)
from conftest import make_concept  # noqa: E402
from playwright.sync_api import Browser, BrowserContext, Page, expect, sync_playwright  # noqa: E402
from playwright.sync_api import Error as PlaywrightError  # noqa: E402

from insika_knowledge.candidate import Candidate  # noqa: E402
from insika_knowledge.consolidate import contradict  # noqa: E402

SCOPE = f"agent={AGENT}&tenant={TENANT}"


@pytest.fixture(scope="module")
def studio(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Studio]:
    with serve_demo(tmp_path_factory.mktemp("operator-demo")) as served:
        yield served


@pytest.fixture(scope="module")
def session(studio: Studio) -> Iterator[BrowserContext]:
    with sync_playwright() as playwright:
        browser: Browser = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        context = browser.new_context(viewport={"width": 1280, "height": 800},
                                      accept_downloads=True)
        page = context.new_page()
        page.goto(studio.url("/studio/knowledge"))
        page.fill("#token", TOKEN)
        page.click("form[action='/studio/login'] button[type=submit]")
        expect(page.locator("h1")).to_have_text("Pick an agent")
        page.close()
        yield context
        context.close()
        browser.close()


@pytest.fixture
def page(session: BrowserContext) -> Iterator[Page]:
    tab = session.new_page()
    errors: list[str] = []
    tab.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    tab.on("pageerror", lambda e: errors.append(str(e)))
    yield tab
    if not tab.is_closed():
        tab.close()
    # No script error and no CSP refusal (an inline style or script) on any page.
    assert [e for e in errors if "favicon" not in e and "404" not in e] == []


@pytest.fixture(scope="module")
def shots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("operator-screenshots")


def _open(page: Page, studio: Studio, name: str, suffix: str = "") -> None:
    page.goto(studio.url(f"/studio/knowledge/{name}{suffix}?{SCOPE}"))
    expect(page.locator("h1 code")).to_have_text(name)


# ----------------------------------------------------------------------------- 1. editor


def test_the_editor_wraps_numbers_and_highlights(page: Page, studio: Studio, shots: Path) -> None:
    _open(page, studio, "cep-13-campinas")
    wait_for_editor(page)
    expect(page.locator("textarea[name=markdown]")).to_be_hidden()
    expect(editor_lines(page)).to_have_count(text(page).count("\n"))
    scroller = page.locator(".cm-scroller")
    assert scroller.evaluate("s => s.scrollWidth <= s.clientWidth + 1")  # wraps: no sideways
    body_line = page.locator(".cm-line").nth(12)
    assert body_line.bounding_box()["height"] > 30  # type: ignore[index]  # a long line wraps
    # The frontmatter key and the markdown link are coloured differently from plain text.
    colours = page.evaluate("""() => {
        const plain = getComputedStyle(document.querySelector('.cm-content')).color;
        return [...document.querySelectorAll('.cm-line span')]
            .map(s => getComputedStyle(s).color).filter(c => c !== plain).length;
    }""")
    assert colours >= 5
    screenshots(page, shots, "editor")


def test_ctrl_s_saves_and_leaving_with_unsaved_changes_warns(page: Page, studio: Studio) -> None:
    _open(page, studio, "entrega-somente-brasil")
    wait_for_editor(page)
    page.locator(".cm-content").click()
    page.keyboard.press("Control+End")
    page.keyboard.type("\nTyped by an operator.")
    assert text(page).endswith("Typed by an operator.\n") or text(page).endswith(
        "Typed by an operator.")
    expect(page.locator(".editor.dirty")).to_have_count(1)
    dialogs: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.type), d.dismiss()))
    elsewhere = studio.url(f"/studio/knowledge?{SCOPE}")
    with pytest.raises(PlaywrightError, match="ERR_ABORTED"):  # the operator chose to stay
        page.goto(elsewhere, timeout=5000)
    assert dialogs == ["beforeunload"] and "entrega-somente-brasil" in page.url
    page.locator(".cm-content").click()
    page.keyboard.press("Control+s")
    expect(page.locator(".flash")).to_contain_text("Saved version")
    assert dialogs == ["beforeunload"]  # saving is not leaving
    stored = studio.store.get(AGENT, "entrega-somente-brasil")
    assert stored is not None and stored.concept.body.endswith("Typed by an operator.")
    page.goto(elsewhere)  # saved: nothing unsaved, so leaving asks nothing
    assert dialogs == ["beforeunload"] and page.url == elsewhere


# ----------------------------------------------------------------------------- 2. resolve


def test_keep_a_contradicting_claim_in_one_step(page: Page, studio: Studio, shots: Path) -> None:
    name = "devolucao-7-dias"
    before = studio.store.get(AGENT, name)
    assert before is not None and before.concept.in_conflict
    _open(page, studio, name)
    cards = page.locator("ol.claims li.claim")
    expect(cards).to_have_count(2)
    expect(cards.nth(1)).to_contain_text("30 dias")
    page.locator("#resolve-heading").scroll_into_view_if_needed()
    screenshots(page, shots, "resolve-panel")
    cards.nth(1).get_by_role("button", name="Keep this").click()
    expect(page.locator(".flash")).to_contain_text("Resolved: kept contradiction 1")
    expect(page.locator("h1 .badge.conflict")).to_have_count(0)
    expect(page.locator("ol.claims")).to_have_count(0)
    saved = studio.store.get(AGENT, name)
    assert saved is not None and not saved.concept.in_conflict
    assert "30 dias" in saved.concept.body and "7 dias corridos" not in saved.concept.body
    assert saved.concept.sources == ("demo/sess-06",)
    assert saved.concept.confidence == 0.6  # one session said it: 0.5 + 0.1
    versions = studio.store.versions(AGENT, name)
    assert len(versions) == len(studio.store.versions(AGENT, name)) and versions[0].reason == "resolve"
    assert versions[0].version == before.version + 1


def test_write_the_resolution(page: Page, studio: Studio, shots: Path) -> None:
    name = "cep-01-09-guarulhos"
    stored = studio.store.get(AGENT, name)
    assert stored is not None
    claim = Candidate(name, "CEPs 01000-09999 ship in 3 business days.", "fact",
                      "Greater São Paulo takes 3 business days.")
    with studio.store.transaction() as tx:
        tx.add_sighting(AGENT, name, "demo/sess-99", "t1", "conflict")
        tx.put(AGENT, contradict(stored.concept, claim, "demo/sess-99", "2026-08-24T19:00:00Z"),
               reason="conflict", actor="engine", session_id="demo/sess-99")
    _open(page, studio, name)
    page.get_by_role("link", name="Write the resolution…").click()
    expect(page.locator("h1")).to_contain_text("Resolve")
    wait_for_editor(page)
    assert "## Contradiction" not in text(page)
    resolved = re.sub(r"\n\n[^\n]*$", "\n\nCEPs 01000-09999: 1 a 2 dias úteis; 3 em feriados.",
                      text(page).rstrip("\n")) + "\n"
    set_text(page, resolved)
    screenshots(page, shots, "resolve-write")
    page.get_by_role("button", name="Save resolution").click()
    expect(page.locator(".flash")).to_contain_text("Resolved: kept your resolution")
    saved = studio.store.get(AGENT, name)
    assert saved is not None and saved.concept.body.endswith("3 em feriados.")
    assert "demo/sess-99" in saved.concept.sources
    assert studio.store.versions(AGENT, name)[0].reason == "resolve"


# ----------------------------------------------------------------------------- 3. evidence


def test_evidence_beside_a_concept_and_the_activity_page(
    page: Page, studio: Studio, shots: Path
) -> None:
    name = "cep-13-campinas"
    ledger = studio.store.sightings(AGENT, name)
    _open(page, studio, name)
    evidence = page.locator("section.evidence")
    expect(evidence.locator("table.sightings tbody tr")).to_have_count(len(ledger))
    expect(evidence).to_contain_text(f"{len(ledger)} sightings")
    expect(evidence).to_contain_text("None recorded.")
    expect(evidence.locator("table.sightings tbody tr").first).to_contain_text("written")
    evidence.get_by_role("link", name=re.compile("All evidence")).click()
    expect(page.locator("h1")).to_contain_text("evidence")
    expect(page.locator("ul.supporters li")).to_have_count(len({s.session_id for s in ledger}))
    screenshots(page, shots, "evidence")
    page.get_by_role("link", name="Activity").click()
    expect(page.locator("h1")).to_contain_text("activity")
    rows = page.locator("table.activity tbody tr")
    expect(rows.first).to_be_visible()
    screenshots(page, shots, "activity")
    page.locator("a.chip", has_text="extract").click()
    expect(page).to_have_url(re.compile("reason=extract"))
    assert set(rows.locator(".badge").all_text_contents()) == {"extract"}


# ----------------------------------------------------------------------------- 4. lists


def test_search_is_ranked_with_scores(page: Page, studio: Studio, shots: Path) -> None:
    page.goto(studio.url(f"/studio/knowledge?{SCOPE}"))
    page.fill("input[name=q]", "frete grátis")
    page.press("input[name=q]", "Enter")
    # auto is Index::Postings at every size (issue 17)
    expect(page.locator("p.ranked")).to_contain_text("ranked by the agent's postings index")
    index = studio.memory.retriever(TENANT).index_for(AGENT, "auto")
    hits = index.search(AGENT, "frete grátis", 50)
    names = page.locator("table.concepts td.name > a").all_text_contents()
    assert names == [h.entry.name for h in hits] and len(names) >= 2
    scores = page.locator("td.score").all_text_contents()
    assert scores == [f"{h.score:.4g}" for h in hits]
    assert [float(s) for s in scores] == sorted((float(s) for s in scores), reverse=True)
    screenshots(page, shots, "list-search")


def test_filters_natural_sort_and_the_pager(page: Page, studio: Studio, shots: Path) -> None:
    with studio.store.transaction() as tx:
        for i in (10, 2, 1, 100):
            tx.put(AGENT, make_concept(f"c{i}", description=f"Concept {i}."), reason="extract",
                   actor="engine")
    page.goto(studio.url(f"/studio/knowledge?{SCOPE}"))
    names = page.locator("table.concepts td.name > a").all_text_contents()
    assert names[:4] == ["c1", "c2", "c10", "c100"]
    screenshots(page, shots, "list")
    page.locator("a.chip.prov", has_text="observed").click()
    expect(page).to_have_url(re.compile("provenance=observed"))
    expect(page.locator("a.chip.prov.active")).to_contain_text("observed")
    page.goto(studio.url(f"/studio/knowledge?{SCOPE}&page=99999"))
    expect(page.locator("p.empty")).to_contain_text("Page 99999 is past the end")
    expect(page.locator(".pager")).not_to_contain_text("0–")
    page.get_by_role("link", name="Go to page 1").click()
    expect(page.locator("table.concepts tbody tr").first).to_be_visible()
    for i in (10, 2, 1, 100):
        studio.store.delete(AGENT, f"c{i}", actor="test")


def test_create_a_concept_by_hand(page: Page, studio: Studio, shots: Path) -> None:
    page.goto(studio.url(f"/studio/knowledge?{SCOPE}"))
    page.get_by_role("link", name="New concept").click()
    expect(page.locator("h1")).to_contain_text("New concept")
    page.fill("input[name=name]", "Horário de Atendimento")
    page.fill("input[name=description]", "O atendimento funciona das 8h às 20h, de segunda a sábado.")
    page.select_option("select[name=type]", "fact")
    set_text(page, "Atendimento humano das **8h às 20h**, de segunda a sábado.\n\nVer [[troca-procedimento]].")
    screenshots(page, shots, "new-concept")
    page.get_by_role("button", name="Create").click()
    expect(page.locator(".flash")).to_contain_text("Created horario-de-atendimento")
    expect(page.locator("h1 .badge.prov-policy")).to_have_text("policy")
    saved = studio.store.get(AGENT, "horario-de-atendimento")
    assert saved is not None and saved.concept.type == "fact" and saved.concept.occurrences == 0
    assert studio.store.versions(AGENT, "horario-de-atendimento")[0].actor == "studio"


def test_export_downloads(page: Page, studio: Studio) -> None:
    page.goto(studio.url(f"/studio/knowledge?{SCOPE}"))
    expected = studio.store.names(AGENT)
    page.locator("details.export summary").click()
    with page.expect_download() as info:
        page.get_by_role("link", name="JSON").click()
    records = json.loads(Path(info.value.path()).read_text(encoding="utf-8"))
    assert [r["name"] for r in records] == expected
    page.locator("details.export summary").click() if not page.locator(
        "details.export[open]").count() else None
    with page.expect_download() as info:
        page.get_by_role("link", name="Markdown (zip)").click()
    assert info.value.suggested_filename == f"{TENANT}-{AGENT}.md.zip"
    with zipfile.ZipFile(io.BytesIO(Path(info.value.path()).read_bytes())) as archive:
        assert sorted(archive.namelist()) == sorted(f"{n}.md" for n in expected)
    with page.expect_download() as info:
        page.get_by_role("link", name="GraphML").click()
    assert Path(info.value.path()).read_text(encoding="utf-8").startswith("<?xml")


def test_restore_is_stamped_with_the_time_of_the_restore(page: Page, studio: Studio) -> None:
    name = "produto-avariado-na-entrega"
    first = studio.store.versions(AGENT, name)[-1]
    _open(page, studio, name)
    wait_for_editor(page)
    set_text(page, text(page).replace("description: ", "description: (revisto) ", 1))
    page.get_by_role("button", name="Save").click()
    expect(page.locator(".flash")).to_contain_text("Saved version")
    page.goto(studio.url(f"/studio/knowledge/{name}/versions/{first.version}?{SCOPE}"))
    expect(page.locator("form.restore")).to_contain_text("stamped with the time of the restore")
    page.get_by_role("button", name="Restore this version").click()
    expect(page.locator(".flash")).to_contain_text(f"Restored version {first.version}")
    restored = studio.store.versions(AGENT, name)[0]
    stored = studio.store.get(AGENT, name)
    assert stored is not None and restored.reason == "restore"
    assert "(revisto)" not in stored.concept.description
    assert stored.concept.updated_at >= restored.created_at[:0] + first.created_at
    assert stored.concept.updated_at == restored.created_at or (
        stored.concept.updated_at > first.created_at)


def test_the_other_pages_fit_a_phone(page: Page, studio: Studio, shots: Path) -> None:
    page.goto(studio.url("/studio/knowledge"))
    expect(page.locator("h1")).to_have_text("Pick an agent")
    screenshots(page, shots, "picker")
    name = "troca-procedimento"
    page.goto(studio.url(f"/studio/knowledge/{name}/versions/1?{SCOPE}"))
    wait_for_editor(page)
    screenshots(page, shots, "version")
    studio.store.delete(AGENT, name, actor="test")
    page.goto(studio.url(f"/studio/deleted?{SCOPE}"))
    expect(page.get_by_role("button", name=f"Restore {name}")).to_be_visible()
    screenshots(page, shots, "deleted")
    page.get_by_role("button", name=f"Restore {name}").click()
    expect(page.locator("h1 code")).to_have_text(name)
