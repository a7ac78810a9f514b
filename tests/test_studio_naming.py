"""The Studio's human side of one idea, one name: the possible-duplicates filter, aliases."""

from __future__ import annotations

import html

from starlette.testclient import TestClient
from test_studio_routes import AGENT, SCOPE, _edit_url, _names, anon, client, memory, store  # noqa: F401

from insika_knowledge.store import PossibleDuplicate, SQLiteStore


def _name(store: SQLiteStore) -> None:  # noqa: F811 - the imported fixture's name
    with store.transaction() as tx:
        tx.add_alias(AGENT, "frete-gratis-199", "frete-gratis-acima-199", "s2", "t")
        tx.add_possible_duplicate(AGENT, PossibleDuplicate(
            name="frete-gratis-acima-299", duplicate_of="frete-gratis-acima-199", session_id="s3",
            turn_id="t", description="Orders over R$299 ship free.", type="policy",
            body="Free shipping above R$299 <b>now</b>.", similarity=0.8))


def test_the_list_has_a_possible_duplicates_filter_beside_conflicts(client: TestClient,  # noqa: F811
                                                                    store: SQLiteStore) -> None:  # noqa: F811
    page = client.get(f"/studio/knowledge?{SCOPE}").text
    assert "Possible duplicates" not in page  # the chip shows once there is one
    _name(store)
    page = client.get(f"/studio/knowledge?{SCOPE}").text
    assert "Possible duplicates <span class=\"count\">1</span>" in page
    assert page.index("Conflicts") < page.index("Possible duplicates")
    filtered = client.get(f"/studio/knowledge?{SCOPE}&status=duplicate")
    assert filtered.status_code == 200
    assert _names(filtered.text) == ["frete-gratis-acima-199"]
    assert "possible duplicate</span>" in filtered.text
    searched = client.get(f"/studio/knowledge?{SCOPE}&status=duplicate&q=campinas")
    assert _names(searched.text) == []


def test_the_editor_shows_aliases_and_held_possible_duplicates_escaped(client: TestClient,  # noqa: F811
                                                                      store: SQLiteStore) -> None:  # noqa: F811
    assert "None recorded." in client.get(_edit_url("frete-gratis-acima-199")).text  # no aliases yet
    _name(store)
    page = client.get(_edit_url("frete-gratis-acima-199")).text
    assert "<code>frete-gratis-199</code>" in page and "session s2" in page
    assert "<code>frete-gratis-acima-299</code>" in page and "similarity 0.80" in page
    assert html.escape("Free shipping above R$299 <b>now</b>.", quote=False) in page
    assert "<b>now</b>" not in page
    # what differs from the record, in words (the values of the held claim and of the concept)
    assert '<div class="differs">It states other values: R$ 299 here, R$ 199 on record.</div>' in page
