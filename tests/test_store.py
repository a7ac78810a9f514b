from __future__ import annotations

import ast
import inspect
import typing
from pathlib import Path

import apsw
import pytest
from conftest import make_concept
from schemas import SQLITE_SNAPSHOT, check_snapshot, sqlite_schema

import insika_knowledge.store
from insika_knowledge.analysis.text import query_terms
from insika_knowledge.errors import ConceptFormatError, InvalidName, NotFound, StaleVersion, UserError
from insika_knowledge.index.tokenizer import TOKENIZER
from insika_knowledge.store import SQLiteStore, base, open_store, tenant_path
from insika_knowledge.store.sqlite import fts, migrations
from insika_knowledge.store.sqlite.procedures import ProcedureStore

AGENT = "store-support"


def put(store: SQLiteStore, concept, reason: str = "extract"):
    with store.transaction() as tx:
        return tx.put(AGENT, concept, reason=reason, actor="engine")


def test_blank_database_gets_every_migration_recorded_once(tmp_path: Path) -> None:
    db = SQLiteStore(tmp_path / "a.db", tokenizer=TOKENIZER)
    names = [m.name for m in migrations.migrations()]
    conn = apsw.Connection(str(tmp_path / "a.db"))
    assert migrations.applied(conn) == names
    assert migrations.pending(conn) == []
    assert migrations.migrate(conn) == []  # idempotent
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    db.close()


def test_schema_matches_the_checked_in_snapshot(tmp_path: Path) -> None:
    SQLiteStore(tmp_path / "a.db", tokenizer=TOKENIZER).close()
    check_snapshot(sqlite_schema(tmp_path / "a.db"), SQLITE_SNAPSHOT)


def test_upgrade_applies_only_what_is_missing(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    conn = apsw.Connection(str(path))
    first = migrations.migrations()[0]
    conn.execute("CREATE TABLE _insika_migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)")
    conn.execute(first.sql)
    conn.execute("INSERT INTO _insika_migrations VALUES (?, 'then')", (first.name,))
    assert [m.name for m in migrations.pending(conn)] == [m.name for m in migrations.migrations()[1:]]
    fts.register(conn, TOKENIZER)
    migrations.migrate(conn, frozenset({"fts5"}))
    assert migrations.pending(conn) == []


def test_an_index_of_the_earlier_layout_is_rebuilt_at_open(tmp_path: Path) -> None:
    # A database indexed before per-agent terms: migration 002's table (the text as it is),
    # nothing recorded in `meta`. Opening it with the analyser rebuilds the index.
    path = tmp_path / "old.db"
    conn = apsw.Connection(str(path))
    fts.register(conn, TOKENIZER)
    migrations.migrate(conn, frozenset({"fts5"}))
    conn.execute(
        "INSERT INTO concepts (agent, name, description, type, provenance, confidence, sources, "
        "occurrences, created_at, updated_at, status, body, version) "
        "VALUES (?, 'cep-13-campinas', 'CEPs ship from Campinas', 'fact', 'observed', 0.6, '[]', 1, "
        "'2026-08-24T18:02:11Z', '2026-08-24T18:02:11Z', 'ok', 'Body.', 1)", (AGENT,))
    assert conn.execute("SELECT count(*) FROM meta WHERE key <> 'pseudonym_key'").fetchone()[0] == 0
    conn.close()
    db = SQLiteStore(path, tokenizer=TOKENIZER)
    assert db.fts_ready
    campinas = sorted(query_terms("Campinas"))
    assert [r.name for r, _ in db.fts_search(AGENT, campinas, 5, (1.0, 1.0, 1.0))] == ["cep-13-campinas"]
    assert db.fts_doc_freqs(AGENT, campinas) == dict.fromkeys(campinas, 1)
    terms = [r[0] for r in db._conn().execute("SELECT term FROM concepts_fts_vocab")]
    assert terms and all(t.startswith(AGENT + fts.SEPARATOR) for t in terms)  # only per-agent terms
    db.close()


def test_a_migration_that_needs_fts5_waits_without_it(tmp_path: Path, monkeypatch) -> None:
    from insika_knowledge.store.sqlite import fts as fts_module

    monkeypatch.setattr(fts_module, "fts5_available", lambda conn: False)
    db = SQLiteStore(tmp_path / "nofts.db")
    assert not db.fts_ready
    assert [m.name for m in migrations.pending(db._conn())] == ["002_fts5"]
    put(db, make_concept())  # writes work without the FTS5 triggers
    db.close()
    monkeypatch.undo()
    db = SQLiteStore(tmp_path / "nofts.db", tokenizer=TOKENIZER)  # FTS5 now available: applied, existing rows indexed
    assert db.fts_ready
    from insika_knowledge.index.fts5 import Fts5Index

    assert [h.entry.name for h in Fts5Index(db).search(AGENT, "Campinas", 5)] == ["cep-13-campinas"]
    db.close()


def test_every_write_is_versioned_with_its_reason(store: SQLiteStore) -> None:
    put(store, make_concept())
    put(store, make_concept(occurrences=2), reason="confirm")
    current = store.get(AGENT, "cep-13-campinas")
    history = store.versions(AGENT, "cep-13-campinas")
    assert [(v.version, v.reason) for v in history] == [(2, "confirm"), (1, "extract")]
    assert history[0].markdown == current.markdown
    assert current.version == 2


def test_generation_moves_on_every_change_and_only_for_that_agent(store: SQLiteStore) -> None:
    assert store.generation(AGENT) == 0
    put(store, make_concept())
    g1 = store.generation(AGENT)
    with store.transaction() as tx:
        tx.put("other-agent", make_concept(), reason="extract", actor="engine")
    assert store.generation(AGENT) == g1
    store.delete(AGENT, "cep-13-campinas", actor="op")
    assert store.generation(AGENT) > g1


def _by_hand(store, statement: str) -> None:
    """Run `statement` on the store's database outside its versioned write path."""
    if isinstance(store, SQLiteStore):
        conn = apsw.Connection(str(store.path))
        fts.register(conn, TOKENIZER)  # the FTS5 triggers need the tokenizer on any connection that writes
        conn.execute(statement)
        conn.close()
    else:
        with store.write() as writer:
            writer.execute(statement)


def _raw(store, query: str):
    """The first column of the first row `query` returns, read from the database itself."""
    if isinstance(store, SQLiteStore):
        return apsw.Connection(str(store.path)).execute(query).fetchone()[0]
    return store.row(query)[0]


def test_updated_at_trigger_stamps_hand_written_updates(store: SQLiteStore, tmp_path: Path) -> None:
    put(store, make_concept())
    _by_hand(store, "UPDATE concepts SET body='changed by hand' WHERE name='cep-13-campinas'")
    row = store.get(AGENT, "cep-13-campinas").concept
    assert row.body == "changed by hand"
    assert row.updated_at != "2026-08-24T18:02:11Z"


def test_edit_validates_whole_record_and_writes_nothing_when_invalid(store: SQLiteStore) -> None:
    stored = put(store, make_concept())
    bad = stored.markdown.replace("confidence: 0.6", "confidence: 3")
    with pytest.raises(ConceptFormatError) as info:
        store.edit(AGENT, "cep-13-campinas", bad, expected_version=stored.version, actor="op")
    assert info.value.field == "confidence" and info.value.line == 6
    assert store.get(AGENT, "cep-13-campinas") == stored
    assert len(store.versions(AGENT, "cep-13-campinas")) == 1


def test_edit_is_refused_when_stale(store: SQLiteStore) -> None:
    stored = put(store, make_concept())
    put(store, make_concept(occurrences=5), reason="confirm")
    with pytest.raises(StaleVersion):
        store.edit(AGENT, "cep-13-campinas", stored.markdown, expected_version=stored.version, actor="op")


def test_edit_can_rename_but_not_onto_another_concept(store: SQLiteStore) -> None:
    put(store, make_concept())
    put(store, make_concept(name="other"))
    cur = store.get(AGENT, "cep-13-campinas")
    with pytest.raises(UserError, match="already another concept"):
        store.edit(AGENT, "cep-13-campinas", cur.markdown.replace("name: cep-13-campinas", "name: other"),
                   expected_version=cur.version, actor="op")
    renamed = store.edit(AGENT, "cep-13-campinas", cur.markdown.replace("name: cep-13-campinas", "name: cep-13"),
                         expected_version=cur.version, actor="op")
    assert renamed.concept.name == "cep-13" and store.get(AGENT, "cep-13-campinas") is None
    assert [v.reason for v in store.versions(AGENT, "cep-13")] == ["edit", "extract"]


def test_removing_the_contradiction_section_clears_the_conflict(store: SQLiteStore) -> None:
    body = "SLA is 4 hours.\n\n## Contradiction\n\n- session `s2` at 2026-08-25T00:00:00Z: 2 hours"
    stored = put(store, make_concept(body=body, confidence=0.4), reason="conflict")
    assert stored.concept.status == "conflict"
    fixed = stored.markdown.split("\n\n## Contradiction")[0] + "\n"
    edited = store.edit(AGENT, "cep-13-campinas", fixed, expected_version=stored.version, actor="op")
    assert edited.concept.status == "ok"
    assert _raw(store, "SELECT status FROM concepts") == "ok"


def test_delete_keeps_history_and_restore_brings_back_exact_bytes(store: SQLiteStore) -> None:
    v1 = put(store, make_concept())
    put(store, make_concept(body="Second body."), reason="edit")
    store.delete(AGENT, "cep-13-campinas", actor="op")
    assert store.get(AGENT, "cep-13-campinas") is None
    assert [d.name for d in store.deleted(AGENT)] == ["cep-13-campinas"]
    restored = store.restore(AGENT, "cep-13-campinas", 1, actor="op")
    assert restored.markdown == v1.markdown
    assert restored.version == 4
    assert [v.reason for v in store.versions(AGENT, "cep-13-campinas")] == ["restore", "delete", "edit", "extract"]
    assert store.deleted(AGENT) == []
    with pytest.raises(NotFound):
        store.restore(AGENT, "cep-13-campinas", 99, actor="op")


def test_failed_transaction_leaves_nothing_half_written(store: SQLiteStore) -> None:
    with pytest.raises(RuntimeError), store.transaction() as tx:
        tx.put(AGENT, make_concept(), reason="extract", actor="engine")
        raise RuntimeError("crash between two writes")
    assert store.get(AGENT, "cep-13-campinas") is None
    assert store.versions(AGENT, "cep-13-campinas") == []
    assert store.generation(AGENT) == 0


@pytest.mark.parametrize("tenant", ["../x", "a/b", "..", "", "UPPER", "a.db", "x" * 65, "con"])
def test_tenant_names_cannot_escape_the_data_directory(tmp_path: Path, tenant: str) -> None:
    with pytest.raises(InvalidName):
        open_store(tmp_path, tenant)
    assert list(tmp_path.iterdir()) == []


def test_one_file_per_tenant(tmp_path: Path) -> None:
    a, b = open_store(tmp_path, "loja-a"), open_store(tmp_path, "loja-b")
    with a.transaction() as tx:
        tx.put(AGENT, make_concept(), reason="extract", actor="engine")
    assert b.get(AGENT, "cep-13-campinas") is None
    assert tenant_path(tmp_path, "loja-a").exists() and tenant_path(tmp_path, "loja-b").exists()
    a.close(), b.close()


def test_a_file_that_is_not_a_database_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "junk.db"
    path.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(UserError, match="not a SQLite database"):
        SQLiteStore(path)


def test_memory_delete_fires_knowledge_deleted_without_a_body(tmp_path: Path) -> None:
    from insika_knowledge.events import Recorder
    from insika_knowledge.memory import Memory

    memory = Memory(tmp_path)
    recorder = Recorder()
    memory.events.subscribe(recorder)
    with memory.store("t").transaction() as tx:
        tx.put(AGENT, make_concept(), reason="extract", actor="engine")
    memory.delete("cep-13-campinas", agent=AGENT, actor="op", tenant="t")
    assert recorder.events == [("knowledge_deleted", {"name": "cep-13-campinas", "agent": AGENT})]
    with pytest.raises(NotFound):
        memory.delete("cep-13-campinas", agent=AGENT, actor="op", tenant="t")
    assert len(recorder.events) == 1
    memory.close()


# ----------------------------------------------------------------------------- attacks


def test_a_path_under_a_regular_file_is_a_user_error_naming_it(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("x", encoding="utf-8")
    with pytest.raises(UserError, match=str(blocker / "data")):
        SQLiteStore(blocker / "data" / "t.db")


def test_a_database_that_cannot_be_opened_is_a_user_error_naming_it(tmp_path: Path) -> None:
    path = tmp_path / "t.db"
    path.symlink_to(tmp_path / "missing-folder" / "t.db")  # dangling: SQLite cannot open it
    with pytest.raises(UserError, match=str(path)):
        SQLiteStore(path)


def _fill_the_disk(store: SQLiteStore) -> None:
    conn = store._conn()
    pages = conn.execute("PRAGMA page_count").fetchone()[0]
    conn.execute(f"PRAGMA max_page_count={pages}")  # SQLite now answers SQLITE_FULL


def test_a_full_disk_is_a_run_time_failure_naming_the_file(sqlite_store: SQLiteStore) -> None:
    store = sqlite_store
    from insika_knowledge.errors import RunTimeFailure

    put(store, make_concept("kept"))
    _fill_the_disk(store)
    with pytest.raises(RunTimeFailure, match=f"disk full writing {store.path}"), \
            store.transaction() as tx:
        for i in range(40):
            tx.put(AGENT, make_concept(f"big-{i}", body="x" * 15_000), reason="extract",
                   actor="engine")
    assert not store._conn().in_transaction
    assert store.names(AGENT) == ["kept"]


def test_a_transaction_sqlite_already_ended_reports_the_original_error(sqlite_store: SQLiteStore) -> None:
    store = sqlite_store
    # After some errors (a full disk, an I/O error) SQLite rolls the transaction back by
    # itself; a second ROLLBACK would fail and hide the error that matters.
    with pytest.raises(RuntimeError, match="the original error"), store.transaction() as tx:
        tx.put(AGENT, make_concept(), reason="extract", actor="engine")
        tx.conn.execute("ROLLBACK")
        raise RuntimeError("the original error")
    assert store.get(AGENT, "cep-13-campinas") is None


def test_a_failed_migration_reports_its_own_error(tmp_path: Path, monkeypatch) -> None:
    broken = migrations.Migration("999_broken", "ROLLBACK; CREATE TABLE broken (")
    monkeypatch.setattr(migrations, "migrations", lambda: [broken])
    conn = apsw.Connection(str(tmp_path / "t.db"))
    with pytest.raises(apsw.SQLError) as info:
        migrations.migrate(conn)
    assert "cannot rollback" not in str(info.value)
    assert "incomplete input" in str(info.value)
    assert not conn.in_transaction
    conn.close()


def test_occurrences_beyond_2_53_are_a_format_error_not_an_overflow(store: SQLiteStore) -> None:
    current = put(store, make_concept())
    huge = current.markdown.replace("occurrences: 1\n", "occurrences: 9223372036854775808\n")
    with pytest.raises(ConceptFormatError) as info:
        store.edit(AGENT, "cep-13-campinas", huge, expected_version=current.version, actor="op")
    assert info.value.field == "occurrences" and info.value.line == 8
    assert store.get(AGENT, "cep-13-campinas") == current


def test_an_edit_cannot_rename_through_a_duplicate_key(store: SQLiteStore) -> None:
    current = put(store, make_concept())
    sneaky = current.markdown.replace("type: fact\n", "type: fact\nname: renamed-silently\n")
    with pytest.raises(ConceptFormatError, match="duplicate key"):
        store.edit(AGENT, "cep-13-campinas", sneaky, expected_version=current.version, actor="op")
    assert store.names(AGENT) == ["cep-13-campinas"]


@pytest.mark.parametrize(("actor", "version"), [(None, 1), ({}, 1), ("", 1), ("x" * 101, 1), ("op", "1"), ("op", 1.0)])
def test_operator_writes_check_actor_and_version(store: SQLiteStore, actor, version) -> None:
    stored = put(store, make_concept())
    with pytest.raises(UserError):
        store.edit(AGENT, "cep-13-campinas", stored.markdown, expected_version=version, actor=actor)
    with pytest.raises(UserError):
        store.delete(AGENT, "cep-13-campinas", actor=actor, expected_version=version)
    assert store.get(AGENT, "cep-13-campinas") == stored


def test_restoring_the_current_bytes_writes_no_new_version(store: SQLiteStore) -> None:
    stored = put(store, make_concept())
    assert store.restore(AGENT, "cep-13-campinas", 1, actor="op") == stored
    assert len(store.versions(AGENT, "cep-13-campinas")) == 1


# ---------------------------------------------------------------- the storage seam


def _members(protocol: type) -> dict[str, object]:
    """A protocol's members (its own and its bases'), name -> the declared attribute."""
    skip = {"__init__", "__subclasshook__", "__protocol_attrs__", "__non_callable_proto_members__"}
    out: dict[str, object] = {}
    for cls in reversed(protocol.__mro__):
        if cls in (object, typing.Protocol, typing.Generic):
            continue
        for name, value in vars(cls).items():
            if (not name.startswith("_") or name == "__call__") and name not in skip:
                out[name] = value
    return out


def _shape(function: object) -> list[tuple[str, object, object]]:
    parameters = inspect.signature(function).parameters.values()  # type: ignore[arg-type]
    return [(p.name, p.kind, p.default) for p in parameters]


def _implementations():
    from insika_knowledge.store.postgres import PostgresProcedureStore, PostgresStore

    for concepts, procedures in ((SQLiteStore, ProcedureStore), (PostgresStore, PostgresProcedureStore)):
        for protocol in (base.Store, base.ConceptStore, base.FullTextIndex, base.OperatorStore, base.ScanSource):
            yield concepts, protocol
        yield procedures, base.ProcedureStorage


@pytest.mark.parametrize(("implementation", "protocol"), list(_implementations()))
def test_both_backends_implement_the_storage_protocols(implementation: type, protocol: type,
                                                       tmp_path: Path, request) -> None:
    # Every member, same parameters, on SQLite and on PostgreSQL.
    if implementation.__module__.startswith("insika_knowledge.store.sqlite."):
        instance = implementation(tmp_path / "t.db")
    else:
        from pgcluster import unique_tenant

        instance = implementation(request.getfixturevalue("pg_shared_url"), unique_tenant())
    for name, declared in _members(protocol).items():
        assert hasattr(instance, name), f"{implementation.__name__} lacks {protocol.__name__}.{name}"
        if not isinstance(declared, property):  # an attribute or a property satisfies one
            assert _shape(getattr(implementation, name)) == _shape(declared), f"{name} differs"
    instance.close()


def test_the_store_imports_neither_the_index_nor_the_analyser() -> None:
    # The FTS5 tokenizer is given to the store (`register_tokenizer`), never imported by it.
    folder = Path(insika_knowledge.store.__file__).parent
    for path in sorted(folder.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            for name in names:
                assert not name.startswith(("insika_knowledge.index", "insika_knowledge.analysis")), \
                    f"{path.name} imports {name}"


def test_the_concept_page_filters_and_counts_quarantine_on_both_backends(store: SQLiteStore) -> None:
    for name in ("c1", "c2", "c10"):
        put(store, make_concept(name=name))
    with store.transaction() as tx:
        tx.quarantine(AGENT, "c2", session_id="s1", supported_by=["customer"], markers=["price"])
        tx.quarantine(AGENT, "c2", session_id="s9", supported_by=[], markers=[])  # kept as it was
        assert tx.is_quarantined(AGENT, "c2") and not tx.is_quarantined(AGENT, "c1")
    assert store.quarantined_names(AGENT) == {"c2"}
    assert store.quarantine_of(AGENT, "c2").session_id == "s1"
    held = store.concept_page(AGENT, quarantined=True)
    free = store.concept_page(AGENT, quarantined=False)
    assert ([r.concept.name for r in held.rows], held.total, held.counts.quarantined) == (["c2"], 1, 1)
    assert [r.concept.name for r in free.rows] == ["c1", "c10"]  # natural order
    assert store.concept_page(AGENT, ranked=["c1"]).counts.quarantined == 0
    store.delete(AGENT, "c2", actor="op")
    assert store.concept_page(AGENT, quarantined=True).total == 0  # nothing live is held...
    assert store.restore(AGENT, "c2", 1, actor="op").concept.name == "c2"
    assert store.quarantined_names(AGENT) == {"c2"}  # ...and a restore holds it again
    assert store.file_problem() is None  # in place (PostgreSQL: there is no file)
