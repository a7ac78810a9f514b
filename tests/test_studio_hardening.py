"""The Studio's defences (issue 16, item 5), through Starlette's TestClient and raw ASGI calls.

A request body cap (413, before the form is read), login throttling (429 with
Retry-After), a minimum admin-token length, the Host-header allowlist (400), a database
file deleted or replaced while the Studio runs (503, nothing written, no empty file),
and where a login leads (a validated same-origin ``next``; a link from another site
reloads itself from the Studio so the session cookie goes with it).
"""

from __future__ import annotations

import asyncio
import hashlib
import html
import os
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import httpx
import pytest
from click.testing import CliRunner
from conftest import Clock, make_concept
from starlette.testclient import TestClient
from studio_pages import csrf as _csrf

from insika_knowledge.cli import cli
from insika_knowledge.concept import serialize
from insika_knowledge.memory import Memory
from insika_knowledge.store import SQLiteStore
from insika_knowledge.studio import auth, scope
from insika_knowledge.studio.app import create_app
from insika_knowledge.studio.hosts import host_of, normalize_host
from insika_knowledge.studio.limits import MAX_BODY_BYTES
from insika_knowledge.studio.throttle import MAX_ATTEMPTS, WINDOW_S, LoginThrottle, client_key

TOKEN = "hardening-token-0123456789"
TENANT = "acme"
AGENT = "shop"
SCOPE = f"agent={AGENT}&tenant={TENANT}"
LOCAL = "http://127.0.0.1"


@pytest.fixture
def memory(tmp_path: Path, clock: Clock) -> Iterator[Memory]:
    mem = Memory(tmp_path / "data", clock=clock)
    with mem.store(TENANT).transaction() as tx:
        tx.put(AGENT, make_concept("frete", body="Free shipping above R$199. See [[troca]]."),
               reason="extract", actor="engine", session_id="s1")
        tx.put(AGENT, make_concept("troca"), reason="extract", actor="engine", session_id="s1")
    yield mem
    mem.close()


@pytest.fixture
def store(memory: Memory) -> SQLiteStore:
    return memory.store(TENANT)


@pytest.fixture
def anon(memory: Memory) -> Iterator[TestClient]:
    with TestClient(create_app(memory, TOKEN), base_url=LOCAL) as client:
        yield client


@pytest.fixture
def client(anon: TestClient) -> TestClient:
    _login(anon)
    return anon


def _login(client: TestClient, token: str = TOKEN, **data: str) -> Any:
    page = client.get("/studio/login")
    return client.post("/studio/login", data={"token": token, "csrf": _csrf(page.text), **data},
                       follow_redirects=False)


def _state(store: SQLiteStore) -> tuple[int, int]:
    return store.generation(AGENT), store.version_cursor(AGENT)


def _asgi(app: Any, method: str, path: str, headers: list[tuple[bytes, bytes]],
          chunks: Iterator[bytes] | None = None) -> tuple[int, dict[bytes, bytes], bytes, int]:
    """Call the app as a server would; returns (status, headers, body, receive calls)."""
    calls = 0
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        nonlocal calls
        calls += 1
        if chunks is None:
            raise AssertionError("the body was read")
        chunk = next(chunks, None)
        return {"type": "http.request", "body": chunk or b"", "more_body": chunk is not None}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope_ = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": method,
              "scheme": "http", "path": path, "raw_path": path.encode(), "query_string": b"",
              "root_path": "", "headers": headers, "client": ("127.0.0.1", 5000),
              "server": ("127.0.0.1", 8765)}
    asyncio.run(app(scope_, receive, send))
    start = next(m for m in sent if m["type"] == "http.response.start")
    body = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    return start["status"], dict(start["headers"]), body, calls


# ----------------------------------------------------------------------------- body cap


def test_a_declared_large_body_is_413_before_any_of_it_is_read(memory: Memory) -> None:
    app = create_app(memory, TOKEN)
    headers = [(b"host", b"127.0.0.1:8765"), (b"content-type", b"application/x-www-form-urlencoded"),
               (b"content-length", str(1024**3).encode())]
    status, sent, body, calls = _asgi(app, "POST", "/studio/login", headers)  # unauthenticated
    assert (status, calls) == (413, 0)
    assert b"larger than the Studio accepts (1024 KiB)" in body and sent[b"connection"] == b"close"
    assert b"content-security-policy" in sent  # still a Studio page with its headers


def test_a_streamed_body_is_cut_off_once_it_passes_the_cap(memory: Memory) -> None:
    app = create_app(memory, TOKEN)
    chunk = 64 * 1024
    endless = (b"token=" + b"a" * (chunk - 6) if i == 0 else b"a" * chunk for i in range(10**6))
    headers = [(b"host", b"127.0.0.1:8765"), (b"content-type", b"application/x-www-form-urlencoded"),
               (b"transfer-encoding", b"chunked")]
    status, sent, body, calls = _asgi(app, "POST", "/studio/login", headers, endless)
    assert status == 413 and b"larger than the Studio accepts" in body
    assert sent[b"connection"] == b"close"  # the server stops reading the rest
    assert calls == MAX_BODY_BYTES // chunk + 1  # one chunk past the cap, never more


def test_the_cap_is_1_mib_and_a_form_under_it_is_read(client: TestClient, store: SQLiteStore) -> None:
    state = _state(store)
    csrf = _csrf(client.get(f"/studio/knowledge/frete?{SCOPE}").text)
    fields = f"csrf={csrf}&version=1&markdown="
    under = client.post(f"/studio/knowledge/frete?{SCOPE}", content=fields + "x" * (MAX_BODY_BYTES - len(fields)),
                        headers={"content-type": "application/x-www-form-urlencoded"})
    assert under.status_code == 422  # read and judged: not a record
    over = client.post(f"/studio/knowledge/frete?{SCOPE}", content=fields + "x" * (MAX_BODY_BYTES + 1 - len(fields)),
                       headers={"content-type": "application/x-www-form-urlencoded"})
    assert over.status_code == 413 and "Request too large" in over.text
    streamed = client.post(f"/studio/knowledge/frete?{SCOPE}",
                           content=(b"x" * 65536 for _ in range(40)),
                           headers={"content-type": "application/x-www-form-urlencoded"})
    assert streamed.status_code == 413
    assert _state(store) == state


# ----------------------------------------------------------------------------- throttling


def test_logins_are_throttled_per_address_with_a_clear_429(memory: Memory, store: SQLiteStore) -> None:
    clock = [1000.0]
    app = create_app(memory, TOKEN)
    app.state.login_throttle = LoginThrottle(clock=lambda: clock[0])
    with TestClient(app, base_url=LOCAL, client=("203.0.113.7", 4000)) as attacker:
        for _ in range(MAX_ATTEMPTS):
            assert _login(attacker, "wrong-token-0000000000").status_code == 401
        clock[0] += 10
        refused = _login(attacker, TOKEN)  # even the right token, while throttled
        assert refused.status_code == 429
        assert refused.headers["retry-after"] == str(int(WINDOW_S) - 10)
        assert f"Too many login attempts from your address: wait {int(WINDOW_S) - 10} seconds" in refused.text
        assert attacker.get(f"/studio/knowledge?{SCOPE}", follow_redirects=False).status_code == 303
        with TestClient(app, base_url=LOCAL, client=("198.51.100.9", 4000)) as other:
            assert _login(other).status_code == 303  # another address is not affected
        clock[0] += WINDOW_S
        assert _login(attacker).status_code == 303


def test_behind_a_local_proxy_each_forwarded_client_has_its_own_count(memory: Memory) -> None:
    # The throttle used to count every user behind the proxy as one address (127.0.0.1).
    app = create_app(memory, TOKEN)
    with TestClient(app, base_url=LOCAL, client=("127.0.0.1", 4000)) as proxy:
        def login_as(client: str, token: str) -> int:
            page = proxy.get("/studio/login")
            return int(proxy.post("/studio/login", data={"token": token, "csrf": _csrf(page.text)},
                                  headers={"x-forwarded-for": client}, follow_redirects=False).status_code)

        for _ in range(MAX_ATTEMPTS):
            assert login_as("9.9.9.9, 203.0.113.7", "wrong-token-0000000000") == 401  # forged first hop
        assert login_as("203.0.113.7", TOKEN) == 429  # the proxy's last hop is what counts
        assert login_as("198.51.100.9", TOKEN) == 303  # another user behind the proxy: not affected
    with TestClient(app, base_url=LOCAL, client=("203.0.113.50", 4000)) as remote:  # not a local proxy
        page = remote.get("/studio/login")
        answer = remote.post("/studio/login", data={"token": "wrong-token-0000000000", "csrf": _csrf(page.text)},
                             headers={"x-forwarded-for": "203.0.113.7"}, follow_redirects=False)
        assert answer.status_code == 401  # its header is ignored: counted as itself


def test_a_forged_login_without_the_csrf_token_is_not_counted(memory: Memory) -> None:
    app = create_app(memory, TOKEN)
    with TestClient(app, base_url=LOCAL) as browser:
        for _ in range(MAX_ATTEMPTS * 3):  # what a page on another site can make a browser send
            assert browser.post("/studio/login", data={"token": "guess-0123456789abcd"}).status_code == 403
        assert _login(browser).status_code == 303


def test_parallel_attempts_cannot_pass_the_count_together(memory: Memory) -> None:
    app = create_app(memory, TOKEN)

    async def run() -> list[int]:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url=LOCAL) as client:
            csrf = _csrf((await client.get("/studio/login")).text)
            answers = await asyncio.gather(*(
                client.post("/studio/login", data={"token": f"guess-{i:016d}", "csrf": csrf})
                for i in range(4 * MAX_ATTEMPTS)))
            return sorted(a.status_code for a in answers)

    assert asyncio.run(run()) == [401] * MAX_ATTEMPTS + [429] * (3 * MAX_ATTEMPTS)


def test_a_success_clears_the_count_and_attempts_count_on_arrival() -> None:
    now = [0.0]
    throttle = LoginThrottle(max_attempts=3, window_s=60, clock=lambda: now[0])
    assert [throttle.attempt("a") for _ in range(3)] == [None, None, None]
    assert throttle.attempt("a") == 60  # counted when it arrives, before any answer
    now[0] = 59.5
    assert throttle.attempt("a") == 1
    throttle.succeeded("a")
    assert throttle.attempt("a") is None
    small = LoginThrottle(max_attempts=1, max_clients=2, clock=lambda: 0.0)
    for key in ("x", "y", "z"):
        small.attempt(key)
    assert small.attempt("x") is None  # forgotten: the table holds at most max_clients


def test_ipv6_clients_are_counted_by_their_64() -> None:
    assert client_key("2001:db8:1:2:aaaa::1") == client_key("2001:db8:1:2:bbbb::2") == "2001:db8:1:2::/64"
    assert client_key("2001:db8:1:3::1") != client_key("2001:db8:1:2::1")
    assert client_key("::ffff:192.0.2.1") == "192.0.2.1"
    assert (client_key("192.0.2.1"), client_key(None), client_key("testclient")) == (
        "192.0.2.1", "unknown", "testclient")


# ----------------------------------------------------------------------------- token length


def test_a_short_admin_token_is_refused(memory: Memory, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ValueError, match="at least 16"):
        create_app(memory, "x" * 15)
    create_app(memory, "x" * 16)
    import uvicorn

    started: list[object] = []
    monkeypatch.setattr(uvicorn, "run", lambda *a, **k: started.append(a))
    monkeypatch.setenv("INSIKA_ADMIN_TOKEN", "a")
    result = CliRunner().invoke(cli, ["studio", "--data-dir", str(memory.directory)])
    assert result.exit_code == 2 and started == []
    assert "$INSIKA_ADMIN_TOKEN is refused: the admin token is 1 character long; the Studio needs " \
           "at least 16" in result.output
    assert "Traceback" not in result.output


# ----------------------------------------------------------------------------- Host allowlist


@pytest.mark.parametrize("host", ["evil.example", "evil.example:8765", "127.0.0.1.evil.example",
                                  "localhost:notaport", "[::1", ""])
def test_an_unknown_host_gets_400_before_anything_else(memory: Memory, host: str) -> None:
    app = create_app(memory, TOKEN)
    with TestClient(app, base_url=LOCAL) as client:
        response = client.get("/studio/login", headers={"host": host})
        assert response.status_code == 400 and "does not answer to the host" in response.text
        assert "set-cookie" not in response.headers
        posted = client.post("/studio/login", headers={"host": host}, data={"token": "guess-0123456789abc"})
        assert posted.status_code == 400
    assert app.state.login_throttle.attempt("testclient") is None  # the POST never reached the login


def test_no_host_header_is_400(memory: Memory) -> None:
    status, _, body, _ = _asgi(create_app(memory, TOKEN), "GET", "/studio/login", [])
    assert status == 400 and b"(none)" in body


@pytest.mark.parametrize("host", ["127.0.0.1:8765", "localhost", "LOCALHOST:1", "[::1]:8765", "localhost."])
def test_the_loopback_names_are_allowed(memory: Memory, host: str) -> None:
    with TestClient(create_app(memory, TOKEN), base_url=LOCAL) as client:
        assert client.get("/studio/login", headers={"host": host}).status_code == 200


def test_allowed_host_adds_names(memory: Memory, monkeypatch: pytest.MonkeyPatch) -> None:
    app = create_app(memory, TOKEN, allowed_hosts=["Studio.Example.com", "192.0.2.10"])
    with TestClient(app, base_url="http://studio.example.com") as client:
        assert client.get("/studio/login").status_code == 200
        assert client.get("/studio/login", headers={"host": "192.0.2.10:8765"}).status_code == 200
        assert client.get("/studio/login", headers={"host": "localhost"}).status_code == 400
    import uvicorn

    from insika_knowledge.studio import server

    seen: dict[str, Any] = {}
    monkeypatch.setattr(uvicorn, "run", lambda app, **k: seen.update(app=app))
    monkeypatch.setattr(server, "check_port", lambda host, port, what: None)  # 192.0.2.5 is no address here
    monkeypatch.delenv("INSIKA_ADMIN_TOKEN", raising=False)
    result = CliRunner().invoke(cli, ["studio", "--data-dir", str(memory.directory), "--allowed-host",
                                      "studio.example.com", "--allowed-host", "[2001:db8::1]"])
    assert result.exit_code == 0, result.output
    hosts = ("localhost", "127.0.0.1", "::1", "studio.example.com", "2001:db8::1")
    assert seen["app"].state.allowed_hosts == hosts
    assert f"hosts  {', '.join(hosts)}" in result.output
    wide = CliRunner().invoke(cli, ["studio", "--data-dir", str(memory.directory), "--host", "192.0.2.5"])
    assert seen["app"].state.allowed_hosts == ("localhost", "127.0.0.1", "::1", "192.0.2.5"), wide.output
    anywhere = CliRunner().invoke(cli, ["studio", "--data-dir", str(memory.directory), "--host", "0.0.0.0"])
    assert seen["app"].state.allowed_hosts == ("localhost", "127.0.0.1", "::1")
    # the URL printed is one it answers to (a newcomer opened http://0.0.0.0:8765/ and got 400)
    assert "open   http://127.0.0.1:8765/studio/knowledge" in anywhere.output, anywhere.output
    for bad in ("http://studio.example.com", "studio.example.com:8765", "*.example.com", "a/b"):
        refused = CliRunner().invoke(cli, ["studio", "--data-dir", str(memory.directory), "--allowed-host", bad])
        assert refused.exit_code == 2 and "is not a host name or IP address" in refused.output


def test_host_parsing() -> None:
    assert host_of("Example.COM:8765") == "example.com"
    assert host_of("[::1]:80") == host_of("[::1]") == "::1"
    assert host_of("[::1]x") is None and host_of("a:b:c") is None and host_of("a b") is None
    assert normalize_host("[2001:DB8::1]") == "2001:db8::1"


# ----------------------------------------------------------------------------- database file


def _pages(name: str = "frete") -> list[str]:
    return ["/studio/knowledge", f"/studio/knowledge?{SCOPE}", f"/studio/knowledge/{name}?{SCOPE}",
            f"/studio/knowledge/{name}/evidence?{SCOPE}", f"/studio/knowledge/{name}/versions/1?{SCOPE}",
            f"/studio/activity?{SCOPE}", f"/studio/deleted?{SCOPE}", f"/studio/new?{SCOPE}",
            f"/studio/export?{SCOPE}&format=json"]


def test_a_deleted_database_file_is_503_and_never_recreated(client: TestClient, store: SQLiteStore) -> None:
    csrf = _csrf(client.get(f"/studio/knowledge/frete?{SCOPE}").text)
    path = store.path
    for suffix in ("", "-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    for page in _pages()[1:]:
        response = client.get(page)
        assert response.status_code == 503, page
        assert f"The database file {path} was deleted after it was opened." in response.text
        assert "nothing was written" in response.text
    saved = client.post(f"/studio/knowledge/frete?{SCOPE}",
                        data={"csrf": csrf, "version": "1", "markdown": serialize(make_concept("frete"))})
    assert saved.status_code == 503
    deleted = client.post(f"/studio/knowledge/frete/delete?{SCOPE}", data={"csrf": csrf, "version": "1"})
    assert deleted.status_code == 503
    client.get("/studio/knowledge")  # the picker lists the files there are
    assert not path.exists() and sorted(os.listdir(path.parent)) == []


def test_a_replaced_database_file_is_503_and_stays_untouched(
    client: TestClient, store: SQLiteStore, tmp_path: Path
) -> None:
    csrf = _csrf(client.get(f"/studio/knowledge/frete?{SCOPE}").text)
    path = store.path
    other = SQLiteStore(tmp_path / "other.db")
    with other.transaction() as tx:
        tx.put(AGENT, make_concept("frete", body="From the other file."), reason="extract", actor="engine")
    other.close()
    shutil.copy(tmp_path / "other.db", tmp_path / "copy.db")
    os.replace(tmp_path / "copy.db", path)
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    for page in _pages():
        response = client.get(page)
        assert response.status_code == 503 and "was replaced by another file" in response.text, page
    saved = client.post(f"/studio/knowledge/frete?{SCOPE}",
                        data={"csrf": csrf, "version": "1", "markdown": serialize(make_concept("frete"))})
    assert saved.status_code == 503
    assert hashlib.sha256(path.read_bytes()).hexdigest() == digest


def test_a_file_replaced_between_the_check_and_the_write_is_503_from_the_store(
    client: TestClient, store: SQLiteStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    csrf = _csrf(client.get(f"/studio/knowledge/frete?{SCOPE}").text)
    monkeypatch.setattr(scope, "open_store", lambda memory, tenant: memory.store(tenant))  # no page check
    shutil.copy(store.path, tmp_path / "copy.db")
    os.replace(tmp_path / "copy.db", store.path)
    digest = hashlib.sha256(store.path.read_bytes()).hexdigest()
    stored = store.get(AGENT, "frete")
    assert stored is not None
    saved = client.post(f"/studio/knowledge/frete?{SCOPE}", data={
        "csrf": csrf, "version": "1", "markdown": stored.markdown.replace("R$199", "R$99")})
    assert saved.status_code == 503 and "was replaced by another file" in saved.text
    assert hashlib.sha256(store.path.read_bytes()).hexdigest() == digest


# ----------------------------------------------------------------------------- where a login leads


@pytest.mark.parametrize(("target", "kept"), [
    ("/studio/knowledge/frete?agent=shop&tenant=acme", True),
    ("/studio/knowledge/a%20b?agent=shop", True),
    ("/studio/activity", True),
    ("https://evil.example/", False),
    ("//evil.example/studio/", False),
    ("/\\evil.example", False),
    ("/studio/\\..\\evil", False),
    ("/\t/evil.example", False),
    ("/studio/\n/x", False),
    ("http:/studio/knowledge", False),
    ("javascript:alert(1)", False),
    ("/studio/login?next=//evil.example", False),
    ("/other", False),
    ("/studio/" + "a" * 2000, False),
    ("/studio/knowledge/ção", False),
    (None, False),
])
def test_next_is_a_page_of_this_studio(target: str | None, kept: bool) -> None:
    assert auth.safe_next(target) == (target if kept else auth.HOME_PATH)


def test_a_deep_link_lands_on_its_page_after_login(anon: TestClient) -> None:
    deep = "/studio/knowledge/frete?agent=shop&tenant=acme"
    gate = anon.get(deep, follow_redirects=False)
    assert gate.status_code == 303 and gate.headers["location"].startswith("/studio/login?next=")
    form = anon.get(gate.headers["location"])
    assert re.search(r'name="next" value="([^"]+)"', form.text).group(1).replace("&amp;", "&") == deep  # type: ignore[union-attr]
    landed = _login(anon, next=deep)
    assert landed.status_code == 303 and landed.headers["location"] == deep
    assert _login(anon, next="//evil.example/x").headers["location"] == auth.HOME_PATH


def test_a_link_from_another_site_reloads_from_the_studio_without_a_cookie(client: TestClient) -> None:
    deep = f"/studio/knowledge/frete?{SCOPE}"
    login = "/studio/login?" + urlencode({"next": deep})
    for path, expected in ((deep, deep), (login, login)):
        response = client.get(path, headers={"sec-fetch-site": "cross-site"}, follow_redirects=False)
        assert response.status_code == 200 and "set-cookie" not in response.headers
        refresh = re.search(r'<meta http-equiv="refresh" content="0; url=([^"]+)">', response.text)
        assert refresh is not None and html.unescape(refresh.group(1)) == expected
    # The session survived: the same page, same-origin, is served.
    assert client.get(deep, headers={"sec-fetch-site": "same-origin"}).status_code == 200
    evil = client.get("//evil.example/x", headers={"sec-fetch-site": "cross-site"})
    assert "evil.example" not in evil.text
