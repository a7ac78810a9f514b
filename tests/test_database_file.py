"""A database file deleted or replaced under an open store: no write lands, no empty file appears."""

from __future__ import annotations

import hashlib
import os
import shutil
import threading
from pathlib import Path

import pytest
from conftest import make_concept

from insika_knowledge.concept import serialize
from insika_knowledge.errors import DatabaseFileChanged, UserError
from insika_knowledge.store import SQLiteStore

AGENT = "shop"


def _store(path: Path) -> SQLiteStore:
    store = SQLiteStore(path)
    with store.transaction() as tx:
        tx.put(AGENT, make_concept("frete"), reason="extract", actor="engine")
    return store


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _in_thread(fn: object) -> BaseException | None:
    caught: list[BaseException] = []

    def run() -> None:
        try:
            fn()  # type: ignore[operator]
        except BaseException as exc:  # noqa: BLE001 - handed back to the test
            caught.append(exc)

    worker = threading.Thread(target=run)
    worker.start()
    worker.join()
    return caught[0] if caught else None


def test_an_open_file_in_place_has_no_problem(tmp_path: Path) -> None:
    store = _store(tmp_path / "t.db")
    assert store.file_problem() is None
    store.check_file()
    store.close()


def test_a_deleted_file_refuses_writes_and_is_not_created_again(tmp_path: Path) -> None:
    path = tmp_path / "t.db"
    store = _store(path)
    for suffix in ("", "-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    assert store.file_problem() == f"the database file {path} was deleted after it was opened"
    with pytest.raises(DatabaseFileChanged) as caught:
        with store.transaction() as tx:
            tx.put(AGENT, make_concept("novo"), reason="extract", actor="engine")
    assert caught.value.problem == store.file_problem()
    assert "nothing was written" in str(caught.value)
    # A thread without a connection yet gets an error, not a new empty database.
    error = _in_thread(lambda: store.get(AGENT, "frete"))
    assert isinstance(error, UserError) and str(path) in str(error)
    assert not path.exists()
    store.close()


def test_a_replaced_file_refuses_writes_and_stays_as_it_was(tmp_path: Path) -> None:
    path = tmp_path / "t.db"
    store = _store(path)
    other = _store(tmp_path / "other.db")
    other.close()
    shutil.copy(tmp_path / "other.db", tmp_path / "copy.db")
    os.replace(tmp_path / "copy.db", path)
    before = _digest(path)
    assert store.file_problem() == f"the database file {path} was replaced by another file after it was opened"
    with pytest.raises(DatabaseFileChanged):
        store.edit(AGENT, "frete", serialize(make_concept("frete", body="Changed.")), expected_version=1,
                   actor="studio")
    with pytest.raises(DatabaseFileChanged):
        store.delete(AGENT, "frete", actor="studio")
    assert _digest(path) == before
    store.close()


def test_the_file_put_back_is_written_again(tmp_path: Path) -> None:
    path = tmp_path / "t.db"
    store = _store(path)
    os.rename(path, tmp_path / "moved.db")
    with pytest.raises(DatabaseFileChanged):
        store.delete(AGENT, "frete", actor="studio")
    os.rename(tmp_path / "moved.db", path)  # the same file (inode) back at its path
    assert store.file_problem() is None
    store.delete(AGENT, "frete", actor="studio")
    assert store.get(AGENT, "frete") is None
    store.close()


def test_a_schema_another_process_is_creating_is_looked_at_again_not_raised(tmp_path: Path) -> None:
    """Several processes opening a fresh directory at once: one's integrity check can meet the
    schema another is creating (`apsw.SchemaChangeError`); it looks again instead of failing."""
    import apsw

    from insika_knowledge.store.sqlite.database import Database

    database = Database(tmp_path / "s.db")

    class Changing:
        def __init__(self, conn: apsw.Connection, failures: int) -> None:
            self.conn, self.failures = conn, failures

        def execute(self, sql: str):  # noqa: ANN201
            if self.failures:
                self.failures -= 1
                raise apsw.SchemaChangeError("vtable constructor failed: concepts_fts")
            return self.conn.execute(sql)

    database._check_integrity(Changing(database._conn(), 2))  # type: ignore[arg-type]
    database._check_integrity(Changing(database._conn(), 5))  # type: ignore[arg-type]
    assert database.damaged is None
