"""The Studio's routes through Starlette's TestClient: access, list, editor, saves, history."""

from __future__ import annotations

import html
import re
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import Clock, make_concept
from starlette.testclient import TestClient
from studio_pages import csrf as _csrf
from studio_pages import names as _names

from insika_knowledge.bench import studio as bench
from insika_knowledge.cli import cli
from insika_knowledge.concept import Concept, parse, serialize
from insika_knowledge.events import Recorder
from insika_knowledge.index.scan import ScanIndex
from insika_knowledge.memory import Memory
from insika_knowledge.store import SQLiteStore, StoredConcept
from insika_knowledge.studio.app import create_app

TOKEN = "test-token-0123456789"
TENANT = "acme"
AGENT = "shop"
SCOPE = f"agent={AGENT}&tenant={TENANT}"
CONTRADICTION = (
    "\n\n## Contradiction\n\n- session `s9` at 2026-08-24T18:00:00Z: Returns are accepted "
    "within 30 days."
)
XSS_BODY = 'Beware <script>alert("body")</script> and <img src=x onerror=alert(1)>.'
XSS_DESCRIPTION = 'Quotes "><script>alert("desc")</script>'


def _concepts() -> list[Concept]:
    return [
        make_concept("cep-13-campinas", confidence=0.8, occurrences=3,
                     updated_at="2026-08-24T18:05:00Z",
                     body="Campinas DC ships CEP 13. See [[frete-gratis-acima-199]] and "
                          "[[nao-existe]]."),
        make_concept("frete-gratis-acima-199", type="policy", confidence=0.7, occurrences=2,
                     description="Orders over R$199 ship free.",
                     updated_at="2026-08-24T18:01:00Z", body="Free shipping above R$199."),
        make_concept("devolucao-7-dias", type="policy", confidence=0.4, occurrences=1,
                     description="Returns are accepted within 7 days.",
                     updated_at="2026-08-24T18:03:00Z",
                     body="Returns within 7 days of delivery." + CONTRADICTION),
        make_concept("troca-procedimento", type="procedure", confidence=0.6, occurrences=4,
                     provenance="policy", description="How an exchange works.",
                     updated_at="2026-08-24T18:02:00Z", body="Open a request, then ship it."),
        make_concept("xss-test", type="entity", confidence=0.5, occurrences=1,
                     description=XSS_DESCRIPTION, updated_at="2026-08-24T18:04:00Z",
                     body=XSS_BODY),
    ]


@pytest.fixture
def memory(tmp_path: Path, clock: Clock, database: str | None) -> Iterator[Memory]:
    # On both backends: the SQLite files of a data directory, and a PostgreSQL database.
    mem = Memory(tmp_path / "data", clock=clock, database=database)
    store = mem.store(TENANT)
    with store.transaction() as tx:
        for concept in _concepts():
            tx.put(AGENT, concept, reason="extract", actor="engine", session_id="s1")
    yield mem
    mem.close()


@pytest.fixture
def store(memory: Memory) -> SQLiteStore:
    return memory.store(TENANT)


@pytest.fixture
def anon(memory: Memory) -> Iterator[TestClient]:
    with TestClient(create_app(memory, TOKEN), base_url="http://127.0.0.1") as client:
        yield client


@pytest.fixture
def client(anon: TestClient) -> TestClient:
    _login(anon)
    return anon


def _login(client: TestClient) -> str:
    page = client.get("/studio/login")
    response = client.post("/studio/login", data={"token": TOKEN, "csrf": _csrf(page.text)})
    assert response.status_code == 200
    return _csrf(response.text)


def _textarea(page: str) -> str:
    match = re.search(r"<textarea[^>]*>\n(.*?)</textarea>", page, re.S)
    assert match, "no textarea"
    return html.unescape(match.group(1))


def _state(store: SQLiteStore) -> tuple[int, int]:
    return store.generation(AGENT), store.version_cursor(AGENT)


def _edit_url(name: str) -> str:
    return f"/studio/knowledge/{name}?{SCOPE}"


def _save(client: TestClient, name: str, markdown: str, version: int,
          csrf: str | None = None) -> object:
    token = csrf if csrf is not None else _csrf(client.get(_edit_url(name)).text)
    return client.post(_edit_url(name), data={"csrf": token, "version": str(version),
                                              "markdown": markdown})


# ----------------------------------------------------------------------------- access


def test_pages_need_login_and_the_login_page_is_a_post_form(anon: TestClient) -> None:
    response = anon.get(f"/studio/knowledge?{SCOPE}")
    assert response.url.path == "/studio/login"
    assert response.url.params["next"] == f"/studio/knowledge?{SCOPE}"
    assert re.search(r'<form method="post" action="/studio/login">', response.text)
    assert 'name="token"' in response.text and AGENT not in _names(response.text)


def test_wrong_token_is_a_401_page_and_grants_nothing(anon: TestClient) -> None:
    page = anon.get("/studio/login")
    response = anon.post("/studio/login", data={"token": "nope", "csrf": _csrf(page.text)})
    assert response.status_code == 401
    assert "not right" in response.text
    assert anon.get(f"/studio/knowledge?{SCOPE}").url.path == "/studio/login"


def test_right_token_logs_in_and_goes_where_it_was_going(anon: TestClient) -> None:
    page = anon.get(_edit_url("cep-13-campinas"))  # redirected to the login form
    response = anon.post("/studio/login", data={
        "token": TOKEN, "csrf": _csrf(page.text), "next": page.url.params["next"]})
    assert response.status_code == 200
    assert response.url.path == "/studio/knowledge/cep-13-campinas"


def test_login_never_redirects_off_site(anon: TestClient) -> None:
    page = anon.get("/studio/login")
    response = anon.post("/studio/login", data={
        "token": TOKEN, "csrf": _csrf(page.text), "next": "https://evil.example/"},
        follow_redirects=False)
    assert response.status_code == 303
    assert response.headers["location"] == "/studio/knowledge"


def test_session_cookie_is_httponly_and_samesite_strict(anon: TestClient) -> None:
    page = anon.get("/studio/login")
    response = anon.post("/studio/login", data={"token": TOKEN, "csrf": _csrf(page.text)},
                         follow_redirects=False)
    cookie = response.headers["set-cookie"].lower()
    assert cookie.startswith("insika_studio=")
    assert "httponly" in cookie and "samesite=strict" in cookie


def test_login_without_csrf_token_is_refused(anon: TestClient) -> None:
    anon.get("/studio/login")
    response = anon.post("/studio/login", data={"token": TOKEN})
    assert response.status_code == 403
    assert anon.get(f"/studio/knowledge?{SCOPE}").url.path == "/studio/login"


def test_post_without_session_is_401_and_writes_nothing(
    anon: TestClient, store: SQLiteStore
) -> None:
    before = _state(store)
    stored = store.get(AGENT, "cep-13-campinas")
    assert stored is not None
    response = anon.post(_edit_url("cep-13-campinas"), data={
        "csrf": "x", "version": str(stored.version), "markdown": stored.markdown})
    assert response.status_code == 401
    assert _state(store) == before


def test_logout_ends_the_session(client: TestClient) -> None:
    csrf = _csrf(client.get(f"/studio/knowledge?{SCOPE}").text)
    response = client.post("/studio/logout", data={"csrf": csrf})
    assert response.url.path == "/studio/login"
    assert client.get(f"/studio/knowledge?{SCOPE}").url.path == "/studio/login"


def test_a_cookie_copied_before_logout_is_refused_after_it(client: TestClient) -> None:
    cookies = dict(client.cookies)
    csrf = _csrf(client.get(f"/studio/knowledge?{SCOPE}").text)
    client.post("/studio/logout", data={"csrf": csrf})
    client.cookies.clear()
    client.cookies.update(cookies)  # replay the session cookie taken before logging out
    assert client.get(f"/studio/knowledge?{SCOPE}").url.path == "/studio/login"


def test_create_app_refuses_an_empty_token(memory: Memory) -> None:
    with pytest.raises(ValueError):
        create_app(memory, "")


# ----------------------------------------------------------------------------- list


def test_without_agent_the_picker_lists_tenants_and_agents(
    client: TestClient, memory: Memory
) -> None:
    memory.store("other").create("bot", serialize(make_concept("x-1")), actor="t")
    page = client.get("/studio/knowledge").text
    assert "Pick an agent" in page
    assert f'href="/studio/knowledge?agent={AGENT}&amp;tenant={TENANT}"' in page
    assert 'href="/studio/knowledge?agent=bot&amp;tenant=other"' in page


def test_the_picker_says_when_there_is_nothing_to_pick(tmp_path: Path) -> None:
    empty = Memory(tmp_path / "empty")
    empty.store("blank")  # a tenant database without agents
    with TestClient(create_app(empty, TOKEN), base_url="http://127.0.0.1") as client:
        _login(client)
        page = client.get("/studio/knowledge").text
    assert "Tenant <code>blank</code>" in page and "No agents." in page
    (tmp_path / "empty" / "blank.db").unlink()
    with TestClient(create_app(Memory(tmp_path / "empty"), TOKEN), base_url="http://127.0.0.1") as client:
        _login(client)
        assert "No tenant database" in client.get("/studio/knowledge").text
    empty.close()


def test_an_agent_in_several_tenants_needs_the_tenant_named(
    client: TestClient, memory: Memory
) -> None:
    memory.store("second").create(AGENT, serialize(make_concept("y-1")), actor="t")
    response = client.get(f"/studio/knowledge?agent={AGENT}")
    assert response.status_code == 400
    assert "tenant=" in response.text


def test_agent_without_tenant_uses_the_tenant_that_has_it(client: TestClient) -> None:
    page = client.get(f"/studio/knowledge?agent={AGENT}")
    assert page.status_code == 200
    assert len(_names(page.text)) == 5


def test_list_shows_columns_counts_and_conflict_badge(client: TestClient) -> None:
    page = client.get(f"/studio/knowledge?{SCOPE}").text
    assert _names(page) == sorted(c.name for c in _concepts())
    for heading in ("Name", "Type", "Confidence", "Occurrences", "Updated", "Provenance",
                    "Status"):
        assert f">{heading}" in page
    assert re.search(r"Conflicts <span class=\"count\">1</span>", page)
    assert re.search(r"policy <span class=\"count\">2</span>", page)
    assert re.search(r"All <span class=\"count\">5</span>", page)
    row = re.search(r'<tr class="in-conflict">.*?</tr>', page, re.S)
    assert row and "devolucao-7-dias" in row.group(0) and "badge conflict" in row.group(0)
    assert "0.80" in page and "2026-08-24T18:05:00Z" in page


def test_conflict_filter_shows_only_conflicts(client: TestClient) -> None:
    page = client.get(f"/studio/knowledge?{SCOPE}&status=conflict").text
    assert _names(page) == ["devolucao-7-dias"]
    assert _names(client.get(f"/studio/knowledge?{SCOPE}&status=ok").text) == sorted(
        c.name for c in _concepts() if c.name != "devolucao-7-dias")


def test_type_filter(client: TestClient) -> None:
    page = client.get(f"/studio/knowledge?{SCOPE}&type=policy").text
    assert _names(page) == ["devolucao-7-dias", "frete-gratis-acima-199"]


@pytest.mark.parametrize("desc", [False, True])
@pytest.mark.parametrize("key", ["name", "type", "confidence", "occurrences", "updated_at",
                                 "provenance", "status"])
def test_sorting_by_each_column(client: TestClient, key: str, desc: bool) -> None:
    page = client.get(f"/studio/knowledge?{SCOPE}&sort={'-' if desc else ''}{key}").text
    concepts = sorted(_concepts(), key=lambda c: c.name)
    expected = sorted(concepts, key=lambda c: getattr(c, key), reverse=desc)
    assert _names(page) == [c.name for c in expected]


def test_sort_links_toggle_direction(client: TestClient) -> None:
    page = client.get(f"/studio/knowledge?{SCOPE}&sort=confidence").text
    href = f"/studio/knowledge?agent={AGENT}&amp;tenant={TENANT}&amp;sort=-confidence"
    assert f'href="{href}"' in page
    assert 'aria-sort="ascending"' in page


def test_pagination(client: TestClient, memory: Memory) -> None:
    big = memory.store(TENANT)
    with big.transaction() as tx:
        for i in range(120):
            tx.put("big", make_concept(f"c-{i:03d}"), reason="extract", actor="engine")
    first = client.get(f"/studio/knowledge?agent=big&tenant={TENANT}").text
    assert _names(first) == [f"c-{i:03d}" for i in range(50)]
    assert "1–50 of 120" in first and 'rel="next"' in first and 'rel="prev"' not in first
    last = client.get(f"/studio/knowledge?agent=big&tenant={TENANT}&page=3").text
    assert _names(last) == [f"c-{i:03d}" for i in range(100, 120)]
    assert "101–120 of 120" in last and 'rel="next"' not in last
    desc = client.get(f"/studio/knowledge?agent=big&tenant={TENANT}&page=2&sort=-name").text
    assert _names(desc) == [f"c-{i:03d}" for i in range(69, 19, -1)]


def test_q_filters_with_the_scan_index_and_keeps_other_filters(
    client: TestClient, store: SQLiteStore
) -> None:
    hits = {h.entry.name for h in ScanIndex(store).search(AGENT, "returns delivery", 100)}
    page = client.get(f"/studio/knowledge?{SCOPE}&q=returns+delivery").text
    assert set(_names(page)) == hits and "devolucao-7-dias" in hits
    assert _names(client.get(f"/studio/knowledge?{SCOPE}&q=campinas").text) == ["cep-13-campinas"]
    assert _names(client.get(f"/studio/knowledge?{SCOPE}&q=campinas&status=conflict").text) == []
    assert "No concept matches" in client.get(f"/studio/knowledge?{SCOPE}&q=zzzzqqq").text


@pytest.mark.parametrize("query", ["sort=bogus", "status=maybe", "type=rumour", "page=0",
                                   "page=abc"])
def test_bad_list_parameters_are_a_400_page(client: TestClient, query: str) -> None:
    response = client.get(f"/studio/knowledge?{SCOPE}&{query}")
    assert response.status_code == 400
    assert "Bad request" in response.text and "Traceback" not in response.text


# ----------------------------------------------------------------------------- editor


def test_editor_shows_raw_markdown_preview_links_and_history(
    client: TestClient, store: SQLiteStore
) -> None:
    stored = store.get(AGENT, "cep-13-campinas")
    assert stored is not None
    page = client.get(_edit_url("cep-13-campinas")).text
    assert _textarea(page) == stored.markdown
    assert 'name="version" value="1"' in page
    assert re.search(r'<div class="preview"><p>Campinas DC ships CEP 13\. See <a class="wikilink"',
                     page)
    assert re.search(r'<li><a href="[^"]*frete-gratis-acima-199[^"]*">frete-gratis-acima-199</a>',
                     page)
    assert re.search(r'<span class="missing">nao-existe</span> <span class="badge missing">', page)
    assert re.search(r'<td class="num">1</td>\s*<td class="time">[^<]+</td>\s*'
                     r'<td><span class="badge reason-extract">extract</span></td>\s*'
                     r'<td>engine</td>', page)


def test_every_rendered_value_is_escaped(client: TestClient) -> None:
    pages = [client.get(f"/studio/knowledge?{SCOPE}").text,
             client.get(_edit_url("xss-test")).text,
             client.get(f"/studio/knowledge/xss-test/versions/1?{SCOPE}").text,
             client.get(f"/studio/knowledge/xss-test/delete?{SCOPE}").text]
    for page in pages:
        assert "<script>alert" not in page and "<img src=x" not in page
    assert "&lt;script&gt;alert(&#34;body&#34;)&lt;/script&gt;" in pages[1] or \
        "&lt;script&gt;alert(&quot;body&quot;)&lt;/script&gt;" in pages[1]
    assert "&lt;script&gt;" in pages[0]  # the description in the list


def test_a_valid_save_writes_an_edit_version(client: TestClient, store: SQLiteStore) -> None:
    stored = store.get(AGENT, "cep-13-campinas")
    assert stored is not None
    text = stored.markdown.replace("Campinas DC ships CEP 13.", "Campinas DC ships CEP 13 fast.")
    response = _save(client, "cep-13-campinas", text.replace("\n", "\r\n"), stored.version)
    assert response.status_code == 200
    assert response.url.path == "/studio/knowledge/cep-13-campinas"
    assert "Saved version 2." in response.text
    saved = store.get(AGENT, "cep-13-campinas")
    assert saved is not None and saved.version == 2
    assert "ships CEP 13 fast." in saved.concept.body
    latest = store.versions(AGENT, "cep-13-campinas")[0]
    assert (latest.reason, latest.actor) == ("edit", "studio")


def test_an_unchanged_save_writes_nothing(client: TestClient, store: SQLiteStore) -> None:
    stored = store.get(AGENT, "cep-13-campinas")
    assert stored is not None
    before = _state(store)
    response = _save(client, "cep-13-campinas", stored.markdown, stored.version)
    assert "No changes" in response.text
    assert _state(store) == before


def test_removing_the_contradiction_section_resolves_the_conflict(
    client: TestClient, store: SQLiteStore
) -> None:
    stored = store.get(AGENT, "devolucao-7-dias")
    assert stored is not None and stored.concept.in_conflict
    response = _save(client, "devolucao-7-dias", stored.markdown.replace(CONTRADICTION, ""),
                     stored.version)
    assert "The conflict is resolved." in response.text
    saved = store.get(AGENT, "devolucao-7-dias")
    assert saved is not None and not saved.concept.in_conflict
    assert _names(client.get(f"/studio/knowledge?{SCOPE}&status=conflict").text) == []


def test_changing_provenance_to_policy_promotes(client: TestClient, store: SQLiteStore) -> None:
    stored = store.get(AGENT, "cep-13-campinas")
    assert stored is not None and stored.concept.provenance == "observed"
    response = _save(client, "cep-13-campinas", stored.markdown.replace(
        "provenance: observed", "provenance: policy"), stored.version)
    assert "Promoted to policy." in response.text
    saved = store.get(AGENT, "cep-13-campinas")
    assert saved is not None and saved.concept.provenance == "policy"


def test_renaming_in_the_editor_moves_the_concept(client: TestClient, store: SQLiteStore) -> None:
    stored = store.get(AGENT, "troca-procedimento")
    assert stored is not None
    response = _save(client, "troca-procedimento", stored.markdown.replace(
        "name: troca-procedimento", "name: troca-passo-a-passo"), stored.version)
    assert response.url.path == "/studio/knowledge/troca-passo-a-passo"
    assert store.get(AGENT, "troca-procedimento") is None
    assert store.get(AGENT, "troca-passo-a-passo") is not None


INVALID_EDITS = [
    ("invalid YAML", "type: fact", "type: [fact", 4, "invalid YAML"),
    ("missing key", "occurrences: 3\n", "", None, "missing key 'occurrences'"),
    ("unknown key", "type: fact\n", "type: fact\ncolour: red\n", 5, "unknown key 'colour'"),
    ("wrong type", "occurrences: 3", "occurrences: many", 8, "not a whole number"),
    ("confidence out of range", "confidence: 0.8", "confidence: 1.7", 6, "outside 0..1"),
    ("name not a slug", "name: cep-13-campinas", "name: Not A Slug", 2, "is not a slug"),
    ("name taken", "name: cep-13-campinas", "name: frete-gratis-acima-199", 2, "already"),
]


@pytest.mark.parametrize(("label", "old", "new", "line", "problem"), INVALID_EDITS,
                         ids=[e[0] for e in INVALID_EDITS])
def test_an_invalid_edit_is_refused_with_its_line_and_keeps_the_text(
    client: TestClient, store: SQLiteStore, label: str, old: str, new: str, line: int | None,
    problem: str,
) -> None:
    stored = store.get(AGENT, "cep-13-campinas")
    assert stored is not None
    text = stored.markdown.replace(old, new, 1)
    assert text != stored.markdown
    before = _state(store)
    response = _save(client, "cep-13-campinas", text, stored.version)
    assert response.status_code == 422
    error = re.search(r'<div class="error" role="alert">(.*?)</div>', response.text, re.S)
    assert error, "no error box"
    message = html.unescape(error.group(1))
    assert problem in message
    if line is not None:
        assert f"line {line}" in message
        assert f'<span class="err">{line}</span>' in response.text
    assert _textarea(response.text) == text
    assert 'name="version" value="1"' in response.text
    assert _state(store) == before
    assert store.get(AGENT, "cep-13-campinas") == stored


def test_a_save_naming_a_version_the_concept_never_had_says_so(client: TestClient, store: SQLiteStore) -> None:
    # a newcomer's finding: "Someone ... wrote version 1 after you loaded the page"
    loaded = store.get(AGENT, "cep-13-campinas")
    assert loaded is not None
    before = _state(store)
    response = _save(client, "cep-13-campinas", loaded.markdown.replace("ships", "sends"), loaded.version + 5)
    assert response.status_code == 409
    said = html.unescape(response.text)
    assert f"Your form names version {loaded.version + 5}, which this concept never had (it is at version " \
        f"{loaded.version})" in said and "after you loaded the page" not in said
    assert _state(store) == before


def test_a_stale_save_is_a_409_with_both_texts_and_the_diff(
    client: TestClient, store: SQLiteStore
) -> None:
    loaded = store.get(AGENT, "cep-13-campinas")
    assert loaded is not None
    csrf = _csrf(client.get(_edit_url("cep-13-campinas")).text)
    with store.transaction() as tx:  # an extraction confirms the concept meanwhile
        tx.put(AGENT, loaded.concept.replace(occurrences=4), reason="confirm", actor="engine")
    mine = loaded.markdown.replace("Campinas DC ships CEP 13.", "Operator's careful rewrite.")
    before = _state(store)
    response = _save(client, "cep-13-campinas", mine, loaded.version, csrf)
    assert response.status_code == 409
    assert "changed while you were editing" in response.text
    assert _textarea(response.text) == mine
    assert "occurrences: 4" in html.unescape(response.text)  # the text on record
    assert '<span class="d-add">+Campinas' not in response.text
    assert re.search(r'<span class="d-del">-occurrences: 4</span>', response.text)
    assert re.search(r"<span class=\"d-add\">\+Operator&#39;s careful rewrite", response.text)
    assert _state(store) == before
    # The 409 page's form carries the version now on record: saving from it goes through.
    again = _save(client, "cep-13-campinas", mine, 2, _csrf(response.text))
    assert again.status_code == 200
    saved = store.get(AGENT, "cep-13-campinas")
    assert saved is not None and "Operator's careful rewrite." in saved.concept.body


def test_a_save_after_the_concept_was_deleted_keeps_the_text(
    client: TestClient, memory: Memory, store: SQLiteStore
) -> None:
    loaded = store.get(AGENT, "cep-13-campinas")
    assert loaded is not None
    csrf = _csrf(client.get(_edit_url("cep-13-campinas")).text)
    memory.delete("cep-13-campinas", agent=AGENT, actor="someone", tenant=TENANT)
    mine = loaded.markdown.replace("Campinas DC", "Campinas warehouse")
    response = _save(client, "cep-13-campinas", mine, loaded.version, csrf)
    assert response.status_code == 409
    assert "was deleted after you loaded the page" in response.text
    assert _textarea(response.text) == mine
    assert store.get(AGENT, "cep-13-campinas") is None


def test_the_delete_marker_version_offers_the_record_before_it(
    client: TestClient, memory: Memory
) -> None:
    memory.delete("xss-test", agent=AGENT, actor="someone", tenant=TENANT)
    page = client.get(f"/studio/knowledge/xss-test/versions/2?{SCOPE}")
    assert page.status_code == 200
    assert "current: deleted" in page.text
    assert re.search(r'name="version" value="1"', page.text)
    assert "the record before this delete (version 1)" in page.text


def _restored_as(restored: object, markdown: str) -> None:
    """`restored` is the record `markdown` except ``updated_at``: the time of the restore."""
    assert isinstance(restored, StoredConcept)
    old = parse(markdown)
    assert restored.concept == old.replace(updated_at=restored.concept.updated_at)
    assert restored.concept.updated_at != old.updated_at


def test_a_version_shows_its_diff_and_restores_it_stamped_now(
    client: TestClient, store: SQLiteStore
) -> None:
    first = store.version(AGENT, "cep-13-campinas", 1).markdown
    _save(client, "cep-13-campinas", first.replace("See [[", "Also see [["), 1)
    page = client.get(f"/studio/knowledge/cep-13-campinas/versions/1?{SCOPE}").text
    assert re.search(r'<span class="d-del">-Campinas DC ships CEP 13\. See', page)
    assert re.search(r'<span class="d-add">\+Campinas DC ships CEP 13\. Also see', page)
    response = client.post(f"/studio/knowledge/cep-13-campinas/restore?{SCOPE}",
                           data={"csrf": _csrf(page), "version": "1"})
    assert "Restored version 1 as version 3." in response.text
    restored = store.get(AGENT, "cep-13-campinas")
    assert restored is not None and restored.version == 3
    _restored_as(restored, first)
    assert store.versions(AGENT, "cep-13-campinas")[0].reason == "restore"


def test_the_current_version_offers_no_restore(client: TestClient) -> None:
    page = client.get(f"/studio/knowledge/cep-13-campinas/versions/1?{SCOPE}").text
    assert "This is the current version." in page and "/restore" not in page


# ----------------------------------------------------------------------------- delete


def test_delete_confirms_fires_the_event_keeps_history_and_undeletes(
    client: TestClient, memory: Memory, store: SQLiteStore
) -> None:
    recorder = Recorder()
    memory.events.subscribe(recorder)
    before = store.get(AGENT, "frete-gratis-acima-199")
    assert before is not None
    confirm = client.get(f"/studio/knowledge/frete-gratis-acima-199/delete?{SCOPE}")
    assert "Delete <code>frete-gratis-acima-199</code>?" in confirm.text
    assert store.get(AGENT, "frete-gratis-acima-199") is not None  # asking deletes nothing
    response = client.post(f"/studio/knowledge/frete-gratis-acima-199/delete?{SCOPE}",
                           data={"csrf": _csrf(confirm.text), "version": str(before.version)})
    assert response.url.path == "/studio/deleted"
    assert "Deleted frete-gratis-acima-199." in response.text
    assert store.get(AGENT, "frete-gratis-acima-199") is None
    assert recorder.named("knowledge_deleted") == [{"name": "frete-gratis-acima-199",
                                                    "agent": AGENT}]
    assert [v.reason for v in store.versions(AGENT, "frete-gratis-acima-199")] == ["delete",
                                                                                   "extract"]
    gone = client.get(_edit_url("frete-gratis-acima-199"))
    assert gone.status_code == 404 and "Recently deleted" in gone.text
    link = re.search(r'action="([^"]+/restore[^"]*)"', response.text)
    number = re.search(r'name="version" value="(\d+)"', response.text)
    assert link and number
    back = client.post(html.unescape(link.group(1)),
                       data={"csrf": _csrf(response.text), "version": number.group(1)})
    assert back.url.path == "/studio/knowledge/frete-gratis-acima-199"
    restored = store.get(AGENT, "frete-gratis-acima-199")
    assert restored is not None
    _restored_as(restored, before.markdown)
    assert "Nothing deleted." in client.get(f"/studio/deleted?{SCOPE}").text


def test_a_stale_delete_is_refused(client: TestClient, store: SQLiteStore) -> None:
    confirm = client.get(f"/studio/knowledge/cep-13-campinas/delete?{SCOPE}")
    response = client.post(f"/studio/knowledge/cep-13-campinas/delete?{SCOPE}",
                           data={"csrf": _csrf(confirm.text), "version": "7"})
    assert response.status_code == 409
    assert store.get(AGENT, "cep-13-campinas") is not None


# ----------------------------------------------------------------------------- safety


def _post_routes(store: SQLiteStore) -> list[tuple[str, dict[str, str]]]:
    stored = store.get(AGENT, "cep-13-campinas")
    assert stored is not None
    return [
        (_edit_url("cep-13-campinas"), {"version": "1", "markdown": stored.markdown.replace(
            "Campinas", "Jundiai")}),
        (f"/studio/knowledge/cep-13-campinas/restore?{SCOPE}", {"version": "1"}),
        (f"/studio/knowledge/cep-13-campinas/delete?{SCOPE}", {"version": "1"}),
        ("/studio/logout", {}),
    ]


@pytest.mark.parametrize("csrf", [None, "", "wrong-token"])
def test_a_post_without_the_right_csrf_token_is_403_and_writes_nothing(
    client: TestClient, store: SQLiteStore, csrf: str | None
) -> None:
    before = _state(store)
    for path, data in _post_routes(store):
        if csrf is not None:
            data = {**data, "csrf": csrf}
        response = client.post(path, data=data)
        assert response.status_code == 403, path
        assert "nothing was changed" in response.text
    assert _state(store) == before
    assert client.get(f"/studio/knowledge?{SCOPE}").url.path == "/studio/knowledge"  # still in


def test_no_get_changes_the_store(client: TestClient, store: SQLiteStore) -> None:
    _save(client, "cep-13-campinas", store.version(AGENT, "cep-13-campinas", 1).markdown
          .replace("See", "Look at"), 1)
    client.post(f"/studio/knowledge/xss-test/delete?{SCOPE}", data={
        "csrf": _csrf(client.get(f"/studio/knowledge?{SCOPE}").text), "version": "1"})
    before = _state(store)
    mtime = store.path.stat().st_mtime_ns if isinstance(store, SQLiteStore) else None
    activity = store.activity(AGENT, limit=1)
    gets = [
        "/", "/studio", "/studio/login", "/studio/knowledge", f"/studio/knowledge?{SCOPE}",
        f"/studio/knowledge?{SCOPE}&status=conflict&q=returns&sort=-updated_at",
        _edit_url("cep-13-campinas"), _edit_url("xss-test"), _edit_url("nope"),
        f"/studio/knowledge/cep-13-campinas/versions/1?{SCOPE}",
        f"/studio/knowledge/cep-13-campinas/versions/2?{SCOPE}",
        f"/studio/knowledge/xss-test/versions/2?{SCOPE}",
        f"/studio/knowledge/cep-13-campinas/delete?{SCOPE}", f"/studio/deleted?{SCOPE}",
        # A GET to a POST-only address changes nothing either.
        f"/studio/knowledge/cep-13-campinas/restore?{SCOPE}&version=1",
        "/studio/logout", "/studio/static/studio.css",
    ]
    for path in gets:
        assert client.get(path).status_code in (200, 404, 405), path
    assert _state(store) == before
    if isinstance(store, SQLiteStore):
        assert store.path.stat().st_mtime_ns == mtime
    else:  # no write reached the database: no new version, no generation moved
        assert store.activity(AGENT, limit=1) == activity
    assert store.get(AGENT, "xss-test") is None


@pytest.mark.parametrize("path", [
    f"/studio/knowledge?agent=nobody&tenant={TENANT}",
    f"/studio/knowledge?agent={AGENT}&tenant=nowhere",
    f"/studio/knowledge?agent={AGENT}&tenant=../etc",
    "/studio/knowledge?agent=../x",
    "/studio/knowledge?agent=nobody",
    f"/studio/knowledge/no-such-concept?{SCOPE}",
    f"/studio/knowledge/cep-13-campinas?agent=nobody&tenant={TENANT}",
    f"/studio/knowledge/cep-13-campinas/versions/99?{SCOPE}",
    f"/studio/knowledge/cep-13-campinas/delete?agent={AGENT}&tenant=nowhere",
    f"/studio/deleted?agent=nobody&tenant={TENANT}",
    "/studio/no-such-page",
])
def test_unknown_agent_tenant_or_name_is_a_404_page(
    client: TestClient, memory: Memory, path: str
) -> None:
    response = client.get(path)
    assert response.status_code == 404
    assert "Not found" in response.text and "Traceback" not in response.text
    assert response.headers["content-type"].startswith("text/html")
    assert not (memory.directory / "nowhere.db").exists()


def test_an_unexpected_error_is_a_500_page_without_traceback(
    memory: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("secret internals")

    with TestClient(create_app(memory, TOKEN), base_url="http://127.0.0.1", raise_server_exceptions=False) as client:
        _login(client)
        monkeypatch.setattr(type(memory.store(TENANT)), "concept_page", broken)
        response = client.get(f"/studio/knowledge?{SCOPE}")
    assert response.status_code == 500
    assert "Something went wrong" in response.text
    assert "secret internals" not in response.text and "Traceback" not in response.text


def test_responses_carry_security_headers_and_server_timing(client: TestClient) -> None:
    response = client.get(f"/studio/knowledge?{SCOPE}")
    assert "script-src 'self'" in response.headers["content-security-policy"]
    assert response.headers["x-content-type-options"] == "nosniff"
    assert re.fullmatch(r"app;dur=[0-9.]+", response.headers["server-timing"])


# ----------------------------------------------------------------------------- CLI, bench


def test_cli_studio_without_the_extra_exits_2(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delitem(sys.modules, "insika_knowledge.studio.server", raising=False)
    monkeypatch.setitem(sys.modules, "uvicorn", None)
    result = CliRunner().invoke(cli, ["studio"])
    assert result.exit_code == 2
    assert "insika-knowledge[studio]" in result.output and "Traceback" not in result.output


def test_cli_studio_needs_an_existing_data_dir(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["studio", "--data-dir", str(tmp_path / "missing")])
    assert result.exit_code == 2
    assert "does not exist" in result.output
    assert not (tmp_path / "missing").exists()


@pytest.mark.parametrize("env_token", [None, "from-the-environment-123"])
def test_cli_studio_prints_the_url_and_token_and_binds_loopback(
    memory: Memory, monkeypatch: pytest.MonkeyPatch, env_token: str | None
) -> None:
    import uvicorn

    seen: dict[str, object] = {}

    def fake_run(app: object, **kwargs: object) -> None:
        seen.update(kwargs, app=app)

    monkeypatch.setattr(uvicorn, "run", fake_run)
    if env_token:
        monkeypatch.setenv("INSIKA_ADMIN_TOKEN", env_token)
    else:
        monkeypatch.delenv("INSIKA_ADMIN_TOKEN", raising=False)
    where = ["--database", memory.database] if memory.database else []
    result = CliRunner().invoke(cli, ["studio", "--data-dir", str(memory.directory), *where])
    assert result.exit_code == 0, result.output
    assert "http://127.0.0.1:8765/studio/knowledge" in result.output
    assert (seen["host"], seen["port"]) == ("127.0.0.1", 8765)
    token = seen["app"].state.token  # type: ignore[attr-defined]
    if env_token:
        assert token == env_token and env_token not in result.output
    else:
        assert len(token) >= 32 and f"token  {token}" in result.output


def test_bench_studio_reports_percentiles(tmp_path: Path) -> None:
    result = bench.bench_studio(tmp_path, concepts=120, requests=20)
    assert result["concepts"] == 120 and result["requests"] == 20
    for key in ("list_p50_ms", "list_p95_ms", "editor_p50_ms", "editor_p95_ms"):
        assert result[key] > 0
    assert result["list_p95_ms"] >= result["list_p50_ms"]
    assert result["editor_p95_ms"] >= result["editor_p50_ms"]


def test_odd_numbers_in_the_url_or_form_are_client_errors_not_500(client: TestClient) -> None:
    assert client.get(f"/studio/knowledge?{SCOPE}&page=%C2%B2").status_code in (400, 404)
    assert client.get(f"/studio/knowledge/devolucao-7-dias/versions/99999999999999999999?{SCOPE}").status_code == 404
