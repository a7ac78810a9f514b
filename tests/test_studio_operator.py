"""The Studio as an operator's tool (issue 14), through Starlette's TestClient.

Resolving a conflict in one step, the evidence beside a concept, the activity page,
ranked search and the list's filters, natural sort and pager, the create form, the
export downloads, and the per-response CSP nonce the editor's styles carry.
"""

from __future__ import annotations

import html
import io
import json
import re
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import Clock, make_concept
from httpx import Response
from starlette.testclient import TestClient
from studio_pages import csrf as _csrf
from studio_pages import logged_in
from studio_pages import names as _names

from insika_knowledge.candidate import Candidate
from insika_knowledge.concept import Concept, parse, serialize
from insika_knowledge.consolidate import contradict
from insika_knowledge.consolidate import resolution as claims
from insika_knowledge.errors import UserError
from insika_knowledge.memory import Memory
from insika_knowledge.store import ExtractionRecord, SQLiteStore
from insika_knowledge.studio import listing
from insika_knowledge.studio.app import create_app

TOKEN = "operator-token-0123456789"
TENANT = "acme"
AGENT = "shop"
SCOPE = f"agent={AGENT}&tenant={TENANT}"
NAME = "devolucao-prazo"
THIRTY = Candidate(NAME, "Returns are accepted within 30 days.", "policy",
                   "Customers may return any item within 30 days.\n\nA prepaid label is sent.")
FOURTEEN = Candidate(NAME, "Returns are accepted within 14 days.", "policy",
                     "Fourteen days for returns.")


def _conflicted(store: SQLiteStore) -> None:
    """`NAME` learned in s1, confirmed in s2, contradicted by s3 and s4 (30 days) and s5 (14)."""
    with store.transaction() as tx:
        base = make_concept(NAME, type="policy", description="Returns are accepted within 7 days.",
                            body="Returns within 7 days of delivery.", sources=("s1", "s2"),
                            occurrences=2, confidence=0.7)
        tx.add_sighting(AGENT, NAME, "s1", "t1", "extract")
        tx.add_sighting(AGENT, NAME, "s2", "t1", "confirm")
        tx.put(AGENT, base, reason="extract", actor="engine", session_id="s1")
        concept = base
        for session, candidate in (("s3", THIRTY), ("s4", THIRTY), ("s5", FOURTEEN)):
            tx.add_sighting(AGENT, NAME, session, "t2", "conflict")
            concept = contradict(concept, candidate, session, "2026-08-24T19:00:00Z")
            tx.put(AGENT, concept, reason="conflict", actor="engine", session_id=session)
        tx.record_extraction(ExtractionRecord(AGENT, "s3", "t2", "ok", False, 2, 1,
                                              {"pii": 1}, None, "2026-08-24T19:00:00Z"))
        for i in (2, 10, 1, 100, 20):
            tx.put(AGENT, make_concept(f"c{i}", description=f"Concept number {i}."),
                   reason="extract", actor="engine")
        tx.put(AGENT, make_concept("regra-oficial", provenance="policy", type="policy"),
               reason="edit", actor="studio")


@pytest.fixture
def memory(tmp_path: Path, clock: Clock, database: str | None) -> Iterator[Memory]:
    # On both backends: the SQLite files of a data directory, and a PostgreSQL database.
    mem = Memory(tmp_path / "data", clock=clock, database=database)
    _conflicted(mem.store(TENANT))
    yield mem
    mem.close()


@pytest.fixture
def store(memory: Memory) -> SQLiteStore:
    return memory.store(TENANT)


@pytest.fixture
def client(memory: Memory) -> Iterator[TestClient]:
    with logged_in(memory, TOKEN) as test_client:
        yield test_client


def _edit_url(name: str, suffix: str = "") -> str:
    return f"/studio/knowledge/{name}{suffix}?{SCOPE}"


def _resolve(client: TestClient, data: dict[str, str], csrf: str | None = None) -> Response:
    token = csrf if csrf is not None else _csrf(client.get(_edit_url(NAME)).text)
    return client.post(_edit_url(NAME, "/resolve"), data={"csrf": token, **data})


# ----------------------------------------------------------------------------- claims


def test_claims_reads_the_record_and_each_contradiction_entry(store: SQLiteStore) -> None:
    stored = store.get(AGENT, NAME)
    assert stored is not None
    found = claims.claims(stored.concept)
    assert [c.key for c in found] == ["record", "entry-1", "entry-2"]
    assert found[0].body == "Returns within 7 days of delivery."
    assert (found[1].session_id, found[1].sessions, found[1].description, found[1].body) == (
        "s3", ("s3", "s4"), THIRTY.description, THIRTY.body)  # s4 made the same claim: one entry
    assert found[2].sessions == ("s5",) and not found[1].same_claim(found[2])
    assert all(c.keepable for c in found)
    assert claims.claims(make_concept()) == []


OLD_ENTRIES = """Returns within 7 days of delivery.

## Contradiction

- session `s3` at 2026-08-24T19:00:00Z: Returns are accepted within 30 days.

  Thirty days.

- session `s4` at 2026-08-24T19:30:00Z: Returns are accepted within  30 days.

  thirty days.
"""


def test_keeping_an_entry_of_an_older_record_counts_every_entry_of_its_claim() -> None:
    # Records written before one entry per claim repeat it: both entries' sessions count.
    concept = make_concept(NAME, body=OLD_ENTRIES, sources=("s1",), confidence=0.4)
    kept = claims.keep(concept, "entry-2", [])
    assert (kept.body, kept.sources, kept.confidence) == ("thirty days.", ("s3", "s4"), 0.7)


def test_an_entry_too_long_to_keep_is_not_keepable() -> None:
    body = "x" * 19_880  # room for the short entry, not for the claim
    concept = contradict(make_concept(body=body), FOURTEEN, "s9", "2026-08-24T19:00:00Z")
    entry = claims.claims(concept)[-1]
    assert entry.key == "entry-1" and not entry.keepable
    with pytest.raises(UserError, match="write the resolution"):
        claims.keep(concept, "entry-1", [])


# ----------------------------------------------------------------------------- resolve


def test_the_editor_offers_keep_this_for_every_claim(client: TestClient) -> None:
    page = client.get(_edit_url(NAME)).text
    assert page.count(">Keep this</button>") == 3
    assert "(also <code>s4</code>)" in page
    for key in ("record", "entry-1", "entry-2"):
        assert f'name="keep" value="{key}"' in page
    assert "Write the resolution" in page


def test_keep_the_claim_on_record(client: TestClient, store: SQLiteStore) -> None:
    before = store.versions(AGENT, NAME)
    response = _resolve(client, {"version": str(before[0].version), "keep": "record"})
    assert "Resolved: kept the claim on record" in response.text
    saved = store.get(AGENT, NAME)
    assert saved is not None and not saved.concept.in_conflict
    assert saved.concept.body == "Returns within 7 days of delivery."
    assert saved.concept.sources == ("s1", "s2")
    assert saved.concept.confidence == 0.7  # min(0.95, 0.5 + 0.1 x 2 sessions)
    versions = store.versions(AGENT, NAME)
    assert len(versions) == len(before) + 1  # exactly one version
    assert (versions[0].reason, versions[0].actor) == ("resolve", "studio")


def test_keep_a_contradiction_counts_the_sessions_that_said_it(
    client: TestClient, store: SQLiteStore
) -> None:
    version = store.versions(AGENT, NAME)[0].version
    _resolve(client, {"version": str(version), "keep": "entry-1"})
    saved = store.get(AGENT, NAME)
    assert saved is not None and not saved.concept.in_conflict
    assert (saved.concept.description, saved.concept.body) == (THIRTY.description, THIRTY.body)
    assert saved.concept.sources == ("s3", "s4")  # the entry names both sessions
    assert saved.concept.occurrences == 2
    assert saved.concept.confidence == 0.7
    assert store.versions(AGENT, NAME)[0].reason == "resolve"


def test_write_the_resolution(client: TestClient, store: SQLiteStore) -> None:
    page = client.get(_edit_url(NAME, "/resolve")).text
    found = re.search(r"<textarea[^>]*>\n(.*?)</textarea>", page, re.S)
    assert found
    draft = html.unescape(found.group(1))
    assert "## Contradiction" not in draft and "Returns within 7 days" in draft
    text = draft.replace("Returns within 7 days of delivery.", "Returns within 30 days (2026 rule).")
    version = store.versions(AGENT, NAME)[0].version
    response = _resolve(client, {"version": str(version), "keep": "written", "markdown": text},
                        csrf=_csrf(page))
    assert "Resolved: kept your resolution" in response.text
    saved = store.get(AGENT, NAME)
    assert saved is not None and saved.concept.body == "Returns within 30 days (2026 rule)."
    assert saved.concept.sources == ("s1", "s2", "s3", "s4", "s5")
    assert saved.concept.confidence == 0.95


def test_a_written_resolution_with_the_section_left_is_refused(
    client: TestClient, store: SQLiteStore
) -> None:
    stored = store.get(AGENT, NAME)
    assert stored is not None
    response = _resolve(client, {"version": str(stored.version), "keep": "written",
                                 "markdown": stored.markdown})
    assert response.status_code == 422
    assert "still has a ## Contradiction section" in response.text
    assert store.get(AGENT, NAME) == stored


def test_a_stale_resolution_is_a_409_and_writes_nothing(
    client: TestClient, store: SQLiteStore
) -> None:
    csrf = _csrf(client.get(_edit_url(NAME)).text)
    stored = store.get(AGENT, NAME)
    assert stored is not None
    store.edit(AGENT, NAME, stored.markdown.replace("7 days of", "seven days of"),
               expected_version=stored.version, actor="another-operator")
    state = store.versions(AGENT, NAME)
    response = _resolve(client, {"version": str(stored.version), "keep": "record"}, csrf=csrf)
    assert response.status_code == 409
    assert "Nothing was written" in response.text
    assert store.versions(AGENT, NAME) == state


def test_resolve_checks_csrf_and_the_choice(client: TestClient, store: SQLiteStore) -> None:
    stored = store.get(AGENT, NAME)
    assert stored is not None
    version = str(stored.version)
    assert _resolve(client, {"version": version, "keep": "record"},
                    csrf="forged").status_code == 403
    assert _resolve(client, {"version": version, "keep": "entry-9"}
                    ).status_code == 400
    assert store.get(AGENT, NAME) == stored
    plain = store.get(AGENT, "c2")
    assert plain is not None
    response = client.post(_edit_url("c2", "/resolve"), data={
        "csrf": _csrf(client.get(_edit_url("c2")).text), "version": str(plain.version),
        "keep": "record"})
    assert response.status_code == 400 and "nothing to resolve" in response.text


def test_resolve_keeps_a_policy_authors_confidence() -> None:
    concept = make_concept(provenance="policy", confidence=0.9, body=(
        "Free above R$199.\n\n## Contradiction\n\n- session `op` at 2026-08-24T19:00:00Z: "
        "Free above R$299.\n\n  Free shipping starts at R$299."))
    assert claims.keep(concept, "record", []).confidence == 0.9
    assert claims.keep(concept, "entry-1", []).confidence == 0.9


# ----------------------------------------------------------------------------- evidence


def test_the_evidence_beside_a_concept(client: TestClient) -> None:
    page = client.get(_edit_url(NAME)).text
    assert "5 sightings · supported by 2 sessions · contradicted by 3" in page
    rows = re.findall(r'<tr>\s*<td class="name"><code>(s\d)</code></td>', page)
    assert rows == ["s5", "s4", "s3", "s2", "s1"]  # newest first
    assert "2 proposed · 1 written · dropped pii 1" in page
    assert "None recorded." in page  # no aliases
    full = client.get(_edit_url(NAME, "/evidence")).text
    assert "<h3>Supported by</h3>" in full and "<code>s1</code>" in full
    assert "2026-08-24T19:00:00Z" in full
    rows = re.findall(r'<tr>\s*<td class="name"><code>(s\d)</code></td>\s*'
                      r'<td data-label="turn"><code>(t\d)</code></td>', full)
    assert rows == [("s5", "t2"), ("s4", "t2"), ("s3", "t2"), ("s2", "t1"), ("s1", "t1")]


def test_a_hand_written_concept_has_no_sightings(client: TestClient) -> None:
    assert "No sightings: this concept was written by hand" in client.get(
        _edit_url("regra-oficial")).text


# ----------------------------------------------------------------------------- activity


def test_activity_lists_changes_newest_first_and_filters(
    client: TestClient, store: SQLiteStore
) -> None:
    page = client.get(f"/studio/activity?{SCOPE}").text
    names = re.findall(r'<td class="name"><a href="[^"]*">([^<]+)</a>', page)
    assert names[0] == "regra-oficial" and names[-1] == NAME
    assert len(names) == 10
    conflicts = client.get(f"/studio/activity?{SCOPE}&reason=conflict").text
    assert conflicts.count('class="badge reason-conflict"') == 3
    assert 'class="badge reason-extract"' not in conflicts
    by_studio = client.get(f"/studio/activity?{SCOPE}&actor=studio").text
    assert re.findall(r'<td class="name"><a href="[^"]*">([^<]+)</a>', by_studio) == [
        "regra-oficial"]
    assert client.get(f"/studio/activity?{SCOPE}&reason=gossip").status_code == 400
    assert client.get(f"/studio/activity?{SCOPE}&before=x1").status_code == 400


def test_activity_pages_by_row_id(client: TestClient, store: SQLiteStore) -> None:
    with store.transaction() as tx:
        for i in range(60):
            tx.put(AGENT, make_concept(f"bulk-{i}"), reason="extract", actor="engine")
    first = client.get(f"/studio/activity?{SCOPE}").text
    older = re.search(r'href="([^"]+)" rel="next">Older', first)
    assert older and first.count("<tr>") == 1 + 50  # the heading row, then 50
    second = client.get(html.unescape(older.group(1))).text
    assert second.count("<tr>") == 1 + 70 - 50 and "Older" not in second


# ----------------------------------------------------------------------------- list


def test_search_is_ranked_by_the_agents_index_with_scores(
    client: TestClient, memory: Memory
) -> None:
    index = memory.retriever(TENANT).index_for(AGENT, "auto")
    hits = index.search(AGENT, "returns 30 days", 100)
    page = client.get(f"/studio/knowledge?{SCOPE}&q=returns+30+days").text
    assert _names(page) == [h.entry.name for h in hits]
    scores = re.findall(r'<td class="num score" data-label="score">([^<]+)</td>', page)
    assert scores == [f"{h.score:.4g}" for h in hits]
    assert f"ranked by the agent's {index.name} index" in page
    assert 'aria-sort="descending" class="col-rank"' in page  # best first: scores descend


def test_natural_name_sort(client: TestClient) -> None:
    names = _names(client.get(f"/studio/knowledge?{SCOPE}").text)
    assert [n for n in names if re.fullmatch(r"c\d+", n)] == ["c1", "c2", "c10", "c20", "c100"]
    desc = _names(client.get(f"/studio/knowledge?{SCOPE}&sort=-name").text)
    assert [n for n in desc if re.fullmatch(r"c\d+", n)] == ["c100", "c20", "c10", "c2", "c1"]


def test_provenance_filter(client: TestClient) -> None:
    page = client.get(f"/studio/knowledge?{SCOPE}&provenance=policy").text
    assert _names(page) == ["regra-oficial"]
    assert re.search(r'chip prov active" href="[^"]*">policy <span class="count">1</span>', page)
    assert client.get(f"/studio/knowledge?{SCOPE}&provenance=rumour").status_code == 400


def test_future_status_filters_are_accepted_and_their_chips_appear_with_concepts() -> None:
    query = listing.ListQuery.from_params({"status": "quarantined"}, AGENT, TENANT)
    assert query.status == "quarantined"
    chips = listing._status_chips(query, 9, {"ok": 6, "conflict": 1, "quarantined": 2})
    assert [(c["label"], c["count"], c["active"]) for c in chips] == [
        ("All", 9, False), ("Conflicts", 1, False), ("Quarantined", 2, True)]
    none = listing._status_chips(listing.ListQuery(AGENT, TENANT), 7, {"ok": 7})
    assert [c["label"] for c in none] == ["All", "Conflicts"]


def test_status_quarantined_filters_in_sql(client: TestClient) -> None:
    page = client.get(f"/studio/knowledge?{SCOPE}&status=quarantined")
    assert page.status_code == 200 and _names(page.text) == []


def test_a_page_past_the_end_says_so(client: TestClient) -> None:
    page = client.get(f"/studio/knowledge?{SCOPE}&page=9999999").text
    assert "Page 9999999 is past the end: there is 1 page." in page
    assert "0–" not in page and "499999" not in page
    assert 'rel="prev"' in page and "page=9999998" not in page


def test_the_pager_has_first_and_last(client: TestClient, store: SQLiteStore) -> None:
    with store.transaction() as tx:
        for i in range(120):
            tx.put(AGENT, make_concept(f"bulk-{i}"), reason="extract", actor="engine")
    middle = client.get(f"/studio/knowledge?{SCOPE}&page=2").text
    assert "51–100 of 127" in middle and "« First" in middle and "Last »" in middle
    last = client.get(f"/studio/knowledge?{SCOPE}&page=3").text
    assert "101–127 of 127" in last and "Last »" not in last


# ----------------------------------------------------------------------------- create


def _create(client: TestClient, **fields: str) -> Response:
    csrf = _csrf(client.get(f"/studio/new?{SCOPE}").text)
    data = {"name": "Troca Grátis", "description": "Exchanges are free of charge.",
            "type": "policy", "provenance": "policy", "confidence": "0.9",
            "body": "The first exchange of any order is free.", **fields}
    return client.post(f"/studio/new?{SCOPE}", data={"csrf": csrf, **data})


def test_create_a_concept_by_hand(client: TestClient, store: SQLiteStore) -> None:
    response = _create(client)
    assert "Created troca-gratis (version 1)." in response.text
    saved = store.get(AGENT, "troca-gratis")
    assert saved is not None
    assert (saved.concept.provenance, saved.concept.confidence, saved.concept.sources,
            saved.concept.occurrences) == ("policy", 0.9, (), 0)
    assert saved.concept.created_at == saved.concept.updated_at
    version = store.versions(AGENT, "troca-gratis")
    assert [(v.reason, v.actor) for v in version] == [("edit", "studio")]


@pytest.mark.parametrize(("fields", "message"), [
    ({"confidence": "lots"}, "confidence</span>: &#39;lots&#39; is not a number"),
    ({"confidence": "1.5"}, "is outside 0..1"),
    ({"description": ""}, "description</span>: must be non-empty text"),
    ({"name": "regra-oficial"}, "already exists"),
    ({"body": "  "}, "the markdown body is empty"),
    # a newcomer's finding: a long name was cut to 80 characters without a word
    ({"name": " ".join(["palavra"] * 25)}, "a name is at most 80 characters as a slug; this one makes 199"),
])
def test_an_invalid_new_concept_keeps_the_form(
    client: TestClient, store: SQLiteStore, fields: dict[str, str], message: str
) -> None:
    count = store.count(AGENT)
    response = _create(client, **fields)
    assert response.status_code == 422
    assert message in response.text
    assert "Exchanges are free of charge." in response.text or fields.get(
        "description") == ""
    assert store.count(AGENT) == count


# ----------------------------------------------------------------------------- export


def test_export_downloads(client: TestClient, store: SQLiteStore) -> None:
    md = client.get(f"/studio/export?{SCOPE}&format=md")
    assert md.headers["content-type"] == "application/zip"
    assert 'filename="acme-shop.md.zip"' in md.headers["content-disposition"]
    with zipfile.ZipFile(io.BytesIO(md.content)) as archive:
        files = {n: archive.read(n).decode() for n in archive.namelist()}
    assert files == {f"{s.concept.name}.md": s.markdown for s in store.list_concepts(AGENT)}
    graph = client.get(f"/studio/export?{SCOPE}&format=graphml").text
    assert graph.startswith("<?xml") and f'<node id="{NAME}">' in graph
    records = json.loads(client.get(f"/studio/export?{SCOPE}&format=json").text)
    assert [r["name"] for r in records] == store.names(AGENT)
    first = records[[r["name"] for r in records].index(NAME)]
    assert first["status"] == "conflict" and parse(serialize(Concept(**{
        k: tuple(v) if k == "sources" else v for k, v in first.items()
        if k not in ("status", "version", "quarantined")}))).name == NAME
    assert client.get(f"/studio/export?{SCOPE}&format=pdf").status_code == 400


# ----------------------------------------------------------------------------- CSP


def test_each_response_has_its_own_style_nonce_for_the_editor(client: TestClient) -> None:
    first, second = client.get(_edit_url(NAME)), client.get(_edit_url(NAME))
    nonces = []
    for response in (first, second):
        csp = response.headers["content-security-policy"]
        nonce = re.search(r"style-src 'self' 'nonce-([A-Za-z0-9_-]{16,})'", csp)
        assert nonce and "script-src 'self';" in csp
        assert f'<meta name="csp-nonce" content="{nonce.group(1)}">' in response.text
        nonces.append(nonce.group(1))
    assert nonces[0] != nonces[1]
    assert '<script src="/studio/static/editor.js" defer></script>' in first.text
    bundle = client.get("/studio/static/editor.js")
    assert bundle.status_code == 200 and "cm-editor" in bundle.text


def test_the_index_mode_is_checked(memory: Memory) -> None:
    with pytest.raises(ValueError, match="index_mode"):
        create_app(memory, TOKEN, index_mode="bm25")


def test_a_search_shows_the_best_hits_only(client: TestClient, store: SQLiteStore) -> None:
    with store.transaction() as tx:
        for i in range(120):
            tx.put(AGENT, make_concept(f"bulk-{i}"), reason="extract", actor="engine")
    page = client.get(f"/studio/knowledge?{SCOPE}&q=campinas").text
    assert f"The best {listing.SEARCH_MAX} matches for “campinas”" in page
    assert f"1–50 of {listing.SEARCH_MAX}" in page


def test_the_new_pages_need_a_login_and_no_get_writes(
    memory: Memory, client: TestClient, store: SQLiteStore
) -> None:
    gets = [_edit_url(NAME, "/resolve"), _edit_url(NAME, "/evidence"), f"/studio/activity?{SCOPE}",
            f"/studio/new?{SCOPE}", f"/studio/export?{SCOPE}&format=json",
            f"/studio/knowledge?{SCOPE}&q=returns&provenance=observed&sort=-rank"]
    before = (store.generation(AGENT), store.version_cursor(AGENT))
    for path in gets:
        assert client.get(path).status_code == 200, path
    assert (store.generation(AGENT), store.version_cursor(AGENT)) == before
    with TestClient(create_app(memory, TOKEN), base_url="http://127.0.0.1") as anonymous:
        for path in gets:
            response = anonymous.get(path, follow_redirects=False)
            assert response.status_code == 303 and "/studio/login" in response.headers["location"]
        assert anonymous.post(_edit_url(NAME, "/resolve"),
                              data={"version": "1", "keep": "record"}).status_code == 401
        assert anonymous.post(f"/studio/new?{SCOPE}", data={"name": "x"}).status_code == 401
