"""Storage faults surface as the library's errors: clear messages, exit code 1, no lost text."""

from __future__ import annotations

import re
from pathlib import Path

import apsw
import pytest
from click.testing import CliRunner
from conftest import make_concept
from starlette.testclient import TestClient

from insika_knowledge.cli import cli
from insika_knowledge.concept import serialize
from insika_knowledge.errors import (
    InsikaError,
    RunTimeFailure,
    StorageBusy,
    StorageCorrupt,
    StorageError,
    StorageFull,
    StorageReadOnly,
)
from insika_knowledge.extract.given import GivenModel
from insika_knowledge.memory import Memory
from insika_knowledge.store import SQLiteStore
from insika_knowledge.store.base import Store
from insika_knowledge.store.sqlite import database, faults
from insika_knowledge.studio.app import create_app

AGENT = "shop"
TOKEN = "test-token-0123456789"


def _corrupt(path: Path) -> None:
    """Overwrite bytes in every page after the second (the header and schema stay valid)."""
    data = bytearray(path.read_bytes())
    for offset in range(8192 + 100, len(data), 4096):
        data[offset : offset + 200] = b"\xff" * 200
    path.write_bytes(bytes(data))


def _filled(directory: Path) -> Path:
    memory = Memory(directory)
    store = memory.store("default")
    with store.transaction() as tx:
        for i in range(200):
            tx.put(AGENT, make_concept(f"c-{i}", body="x" * 2000), reason="extract", actor="engine")
    store._conn().execute("PRAGMA wal_checkpoint(TRUNCATE)")
    memory.close()
    return directory / "default.db"


@pytest.mark.parametrize("command", [
    ["search", "--agent", AGENT, "frete"],
    ["show", "--agent", AGENT, "c-1"],
    ["export", "--agent", AGENT, "--out", "OUT"],
])
def test_a_damaged_file_is_exit_code_1_with_a_clear_message(tmp_path: Path, command: list[str]) -> None:
    _corrupt(_filled(tmp_path / "data"))
    args = [a.replace("OUT", str(tmp_path / "out")) for a in command]
    result = CliRunner().invoke(cli, [*args, "--data-dir", str(tmp_path / "data")])
    assert result.exit_code == 1, result.output
    assert "is damaged" in result.output and "restore it from a backup" in result.output
    assert "Traceback" not in result.output
    assert not isinstance(result.exception, apsw.Error)


def test_a_lock_held_too_long_is_storage_busy_not_a_raw_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(database, "BUSY_TIMEOUT_MS", 200)
    memory = Memory(tmp_path)
    store = memory.store("default")
    holder = apsw.Connection(str(store.path))
    holder.execute("BEGIN IMMEDIATE")  # another process holds the write lock
    try:
        candidate = {"name": "frete", "description": "Free shipping.", "type": "fact",
                     "body": "Orders above 199 ship free."}
        with pytest.raises(StorageBusy) as info:
            memory.learn([], agent=AGENT, session_id="s1", model=GivenModel([candidate], None))
        assert isinstance(info.value, InsikaError) and isinstance(info.value, RunTimeFailure)
        assert "is busy" in str(info.value) and str(store.path) in str(info.value)
        assert info.value.waited_ms >= 150
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    memory.close()


@pytest.mark.parametrize(("error", "kind", "words"), [
    (apsw.BusyError("database is locked"), StorageBusy, "is busy"),
    (apsw.FullError("database or disk is full"), StorageFull, "disk full writing"),
    (apsw.CorruptError("database disk image is malformed"), StorageCorrupt, "is damaged"),
    (apsw.NotADBError("file is not a database"), StorageCorrupt, "is damaged"),
    (apsw.ReadOnlyError("attempt to write a readonly database"), StorageReadOnly, "cannot write"),
    (apsw.IOError("disk I/O error"), StorageError, "disk I/O error"),
])
def test_every_storage_fault_has_its_error(error: apsw.Error, kind: type, words: str) -> None:
    mapped = faults.storage_error(error, Path("/data/t.db"))
    assert type(mapped) is kind and words in str(mapped) and "/data/t.db" in str(mapped)
    assert isinstance(mapped, RunTimeFailure)


def test_an_io_error_on_a_full_disk_says_the_disk_is_full(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(faults, "free_bytes", lambda path: 0)
    mapped = faults.storage_error(apsw.IOError("disk I/O error"), Path("/data/t.db"))
    assert isinstance(mapped, StorageFull) and "disk full" in str(mapped)


def test_sql_mistakes_are_not_hidden_as_storage_faults() -> None:
    assert faults.storage_error(apsw.SQLError("no such table: x"), Path("t.db")) is None


def test_reads_map_errors_too(tmp_path: Path) -> None:
    from concurrent.futures import ThreadPoolExecutor

    path = _filled(tmp_path / "data")
    store = SQLiteStore(path)  # opened (and migrated) while the file was sound
    _corrupt(path)
    with ThreadPoolExecutor(1) as fresh:  # a new thread: a new connection reads the damage
        with pytest.raises(StorageCorrupt):
            fresh.submit(store.list_concepts, AGENT).result()
        with pytest.raises(StorageCorrupt):
            fresh.submit(lambda: list(store.scan_rows(AGENT))).result()  # mapped while iterating
    store.close()


def test_naming_reads_map_errors_too(tmp_path: Path) -> None:
    from concurrent.futures import ThreadPoolExecutor

    path = _filled(tmp_path / "data")
    store = SQLiteStore(path)
    _corrupt(path)
    with ThreadPoolExecutor(1) as fresh:  # the naming mixin's reads, as the store's own
        with pytest.raises(StorageCorrupt):
            fresh.submit(store.possible_duplicates, AGENT).result()
    store.close()


# ----------------------------------------------------------------------------- the Studio


def _client(memory: Memory) -> tuple[TestClient, str]:
    client = TestClient(create_app(memory, TOKEN), base_url="http://127.0.0.1",
                        raise_server_exceptions=False)
    login = client.get("/studio/login")
    token = re.search(r'name="csrf" value="([^"]+)"', login.text)
    assert token
    page = client.post("/studio/login", data={"token": TOKEN, "csrf": token.group(1)})
    csrf = re.search(r'name="csrf" value="([^"]+)"', page.text)
    assert csrf
    return client, csrf.group(1)


def _frete_and_an_edit(tmp_path: Path, body: str) -> tuple[Memory, Store, str]:
    """A memory holding ``frete`` for `AGENT` in tenant acme, and an operator's edit of it."""
    memory = Memory(tmp_path / "data")
    store = memory.store("acme")
    with store.transaction() as tx:
        tx.put(AGENT, make_concept("frete"), reason="extract", actor="engine")
    return memory, store, serialize(make_concept("frete", body=body))


@pytest.mark.parametrize("failure", [
    StorageFull("disk full writing /data/acme.db; free some space and try again"),
    StorageBusy("the database /data/acme.db is busy: another writer held its lock for more than 30000 ms"),
    StorageReadOnly("cannot write the database /data/acme.db: readonly"),
])
def test_a_failed_studio_save_keeps_the_text_and_says_why(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, failure: StorageError
) -> None:
    memory, store, text = _frete_and_an_edit(tmp_path, "The operator's careful rewrite, not to be lost.")

    def fail(*args: object, **kwargs: object) -> None:
        raise failure

    monkeypatch.setattr(type(store), "edit", fail)
    client, csrf = _client(memory)
    with client:
        response = client.post("/studio/knowledge/frete?agent=shop&tenant=acme",
                               data={"csrf": csrf, "version": "1", "markdown": text})
    assert response.status_code == 503
    assert "The operator&#39;s careful rewrite, not to be lost." in response.text
    assert str(failure).split(";")[0].replace("'", "&#39;") in response.text
    memory.close()


def test_a_studio_save_that_cannot_even_read_still_shows_the_text(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    memory, store, text = _frete_and_an_edit(tmp_path, "Kept even when nothing can be read.")

    def fail(*args: object, **kwargs: object) -> None:
        raise StorageCorrupt("/data/acme.db is damaged (malformed); restore it from a backup")

    monkeypatch.setattr(type(store), "get", fail)
    client, csrf = _client(memory)
    with client:
        response = client.post("/studio/knowledge/frete?agent=shop&tenant=acme",
                               data={"csrf": csrf, "version": "1", "markdown": text})
    assert response.status_code == 503
    assert "Kept even when nothing can be read." in response.text and "is damaged" in response.text
    memory.close()


def test_an_export_that_cannot_read_a_damaged_file_does_not_point_at_itself(tmp_path: Path) -> None:
    """A newcomer's finding: a file cut short failed every read, and the message of `list`
    and of `export` alike advised running `export`, which had just failed."""
    path = _filled(tmp_path / "data")
    path.write_bytes(path.read_bytes()[:-4096 * 40])  # cut short: even the schema's reads may fail
    listed = CliRunner().invoke(cli, ["list", "--agent", AGENT, "--data-dir", str(tmp_path / "data")])
    assert listed.exit_code == 1 and "--data-dir and --tenant" in listed.output, listed.output
    exported = CliRunner().invoke(cli, ["export", "--agent", AGENT, "--out", str(tmp_path / "out"),
                                        "--data-dir", str(tmp_path / "data")])
    assert exported.exit_code == 1, exported.output
    assert "nothing was exported" in exported.output and "restore it from a backup" in exported.output
    assert "insika-knowledge export" not in exported.output and "Traceback" not in exported.output
