"""One migration numbering for both backends (``sql/README.md``): a blank database and one
migrated by the release before it reach the same schema, the checked-in snapshot.

A database of that release (2819c2b) is rebuilt here as it was: its recorded ids, in its
order, each applied with the files of today that hold what it did (`SQLITE_BEFORE`,
`POSTGRES_BEFORE`: written out, not read from the ``-- formerly:`` lines they check).
"""

from __future__ import annotations

from pathlib import Path

import apsw
import pytest
from conftest import make_concept
from pgcluster import unique_tenant
from schemas import POSTGRES_SNAPSHOT, SQLITE_SNAPSHOT, check_snapshot, postgres_schema, sqlite_schema

from insika_knowledge.index.tokenizer import TOKENIZER
from insika_knowledge.store import SQLiteStore
from insika_knowledge.store import migrations as numbering
from insika_knowledge.store.migrations import MIGRATIONS_TABLE, Migration
from insika_knowledge.store.sqlite import fts
from insika_knowledge.store.sqlite import migrations as sqlite_migrations

AGENT = "store-support"

#: (recorded id, today's files that hold what it did), in the order that release applied them.
SQLITE_BEFORE = [(name, [name]) for name in (
    "001_concepts", "002_fts5", "003_procedures", "004_resolve_reason", "005_meta", "006_aliases",
    "007_quarantine", "008_outbox", "009_procedure_population", "010_procedure_term_notes",
    "011_index_snapshots",
)]
POSTGRES_BEFORE = [
    ("001_concepts", ["001_concepts"]),
    ("002_procedures", ["003_procedures"]),
    ("003_naming_population", ["006_aliases", "009_procedure_population"]),
    ("004_outbox", ["008_outbox"]),
    ("005_procedure_term_notes", ["010_procedure_term_notes"]),
    ("006_index_snapshots", ["011_index_snapshots"]),
    ("007_fts_pruned", ["012_fts_pruned"]),
]


def put(store, name: str = "cep-13-campinas") -> None:
    with store.transaction() as tx:
        tx.put(AGENT, make_concept(name), reason="extract", actor="engine")


# ------------------------------------------------------------------------------- the numbering


def test_one_number_names_one_step_on_both_backends_and_the_readme_lists_them() -> None:
    steps = numbering.steps()
    assert [s[:3] for s in steps] == sorted({s[:3] for s in steps})
    readme = (numbering.sql_dir() / "README.md").read_text(encoding="utf-8")
    assert [s for s in steps if f"| {s} |" not in readme] == []
    for backend in numbering.BACKENDS:
        found = numbering.read_steps(numbering.sql_dir() / backend)
        assert {m.name for m in found} <= set(steps)
        former = {old for m in found for old in m.formerly}
        assert former.isdisjoint(m.name for m in found)  # a former id is no current step's


def test_a_number_that_names_two_steps_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for backend, name in (("sqlite", "013_one"), ("postgres", "013_other")):
        (tmp_path / backend).mkdir()
        (tmp_path / backend / f"{name}.sql").write_text("SELECT 1;\n", encoding="utf-8")
    monkeypatch.setattr(numbering, "sql_dir", lambda: tmp_path)
    with pytest.raises(ValueError, match="013_one and 013_other"):
        numbering.steps()


def test_header_lines_name_capabilities_and_former_ids() -> None:
    step = Migration("009_x", "-- requires: fts5\n-- formerly: 003_a, 004_b\n-- 009: text\n-- formerly: 7_no\n")
    assert step.requires == {"fts5"} and step.formerly == {"003_a", "004_b"}
    assert step.recorded_in({"004_b"}) and step.recorded_in({"009_x"}) and not step.recorded_in({"7_no"})
    assert Migration("001_y", "-- 001: text\n-- requires: fts5\n").requires == frozenset()


def test_a_step_recorded_under_its_former_id_is_not_applied_again_on_sqlite(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    conn = apsw.Connection(str(tmp_path / "t.db"))
    conn.execute(f"CREATE TABLE {MIGRATIONS_TABLE} (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)")
    conn.execute(f"INSERT INTO {MIGRATIONS_TABLE} VALUES ('001_old', 'then')")
    renamed = Migration("002_new", "-- formerly: 001_old\nCREATE TABLE x (a);")
    monkeypatch.setattr(sqlite_migrations, "migrations", lambda: [renamed])
    assert sqlite_migrations.pending(conn) == [] and sqlite_migrations.migrate(conn) == []
    assert sqlite_migrations.applied(conn) == ["001_old"]  # the record is kept as it is
    conn.close()


def test_a_former_id_is_recorded_once_every_step_it_stood_for_is_applied(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    split = [Migration("002_a", "-- formerly: 001_old\nCREATE TABLE a (x);"),
             Migration("003_b", "-- requires: later\n-- formerly: 001_old\nCREATE TABLE b (x);")]
    monkeypatch.setattr(sqlite_migrations, "migrations", lambda: split)
    conn = apsw.Connection(str(tmp_path / "t.db"))
    assert sqlite_migrations.migrate(conn) == ["002_a"]  # 003_b waits: 001_old would mean both
    assert sqlite_migrations.applied(conn) == ["002_a"]
    assert sqlite_migrations.migrate(conn, frozenset({"later"})) == ["003_b"]
    assert sqlite_migrations.applied(conn) == ["002_a", "003_b", "001_old"]  # the earlier release finds its id
    conn.close()


# ------------------------------------------------------------------------------------- SQLite


def _sqlite_before(path: Path, upto: int) -> apsw.Connection:
    """A file as the release before the one numbering left it after its first `upto` steps."""
    conn = apsw.Connection(str(path))
    fts.register(conn, TOKENIZER)
    conn.execute(f"CREATE TABLE {MIGRATIONS_TABLE} (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)")
    for recorded, files in SQLITE_BEFORE[:upto]:
        for name in files:
            conn.execute((sqlite_migrations.folder() / f"{name}.sql").read_text(encoding="utf-8"))
        conn.execute(f"INSERT INTO {MIGRATIONS_TABLE} VALUES (?, 'then')", (recorded,))
    return conn


@pytest.mark.parametrize(("upto", "applied"), [
    (len(SQLITE_BEFORE), ["014_concept_vectors", "015_operations", "016_quarantine_kept", "017_pseudonym_key",
                          "018_held_why"]),
    (7, ["008_outbox", "009_procedure_population", "010_procedure_term_notes", "011_index_snapshots",
         "014_concept_vectors", "015_operations", "016_quarantine_kept", "017_pseudonym_key", "018_held_why"]),
])
def test_a_sqlite_file_of_the_previous_release_runs_no_step_twice_and_skips_none(
        tmp_path: Path, upto: int, applied: list[str]) -> None:
    path = tmp_path / "old.db"
    conn = _sqlite_before(path, upto)
    assert sqlite_migrations.migrate(conn, frozenset({"fts5"})) == applied
    assert sqlite_migrations.applied(conn) == [old for old, _ in SQLITE_BEFORE[:upto]] + applied
    conn.close()
    store = SQLiteStore(path, tokenizer=TOKENIZER)
    put(store)
    assert store.get(AGENT, "cep-13-campinas") is not None
    store.close()
    assert sqlite_schema(path) == SQLITE_SNAPSHOT.read_text(encoding="utf-8")


# --------------------------------------------------------------------------------- PostgreSQL


def _postgres_before(url: str, tenant: str, upto: int) -> str:
    """A tenant schema as the release before the one numbering left it after its first `upto` steps."""
    psycopg = pytest.importorskip("psycopg")
    from psycopg import sql

    from insika_knowledge.store.postgres.database import migrations_dir, schema_for

    schema = schema_for(tenant)
    with psycopg.connect(url, autocommit=True) as conn, conn.transaction():
        conn.execute(sql.SQL("CREATE SCHEMA {}").format(sql.Identifier(schema)))
        conn.execute(sql.SQL("SET LOCAL search_path TO {}").format(sql.Identifier(schema)))
        conn.execute(f"CREATE TABLE {MIGRATIONS_TABLE} (name text PRIMARY KEY, applied_at text NOT NULL)")
        for recorded, files in POSTGRES_BEFORE[:upto]:
            for name in files:
                conn.execute((migrations_dir() / f"{name}.sql").read_text(encoding="utf-8").encode())
            conn.execute(f"INSERT INTO {MIGRATIONS_TABLE} VALUES (%s, 'then')", (recorded,))
    return schema


def _schema_text(url: str, schema: str) -> str:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        return postgres_schema(conn, schema)


def test_a_blank_postgresql_schema_matches_the_checked_in_snapshot(pg_shared_url: str) -> None:
    from insika_knowledge.store.postgres import PostgresStore

    store = PostgresStore(pg_shared_url, unique_tenant())
    check_snapshot(_schema_text(pg_shared_url, store.schema), POSTGRES_SNAPSHOT)
    recorded = {r[0] for r in store.rows(f"SELECT name FROM {MIGRATIONS_TABLE}")}
    steps = {m.name for m in numbering.read_steps(numbering.sql_dir() / "postgres")}
    assert recorded == steps | {old for old, _ in POSTGRES_BEFORE}  # the previous release finds its ids
    store.close()


@pytest.mark.parametrize(("upto", "applied"), [
    (len(POSTGRES_BEFORE), ["013_positive_idf", "014_concept_vectors", "015_operations", "016_quarantine_kept",
                            "017_pseudonym_key", "018_held_why"]),
    (4, ["010_procedure_term_notes", "011_index_snapshots", "012_fts_pruned", "013_positive_idf",
         "014_concept_vectors", "015_operations", "016_quarantine_kept", "017_pseudonym_key", "018_held_why"]),
    (1, ["003_procedures", "006_aliases", "008_outbox", "009_procedure_population",
         "010_procedure_term_notes", "011_index_snapshots", "012_fts_pruned", "013_positive_idf",
         "014_concept_vectors", "015_operations", "016_quarantine_kept", "017_pseudonym_key", "018_held_why"]),
])
def test_a_postgresql_schema_of_the_previous_release_runs_no_step_twice_and_skips_none(
        pg_shared_url: str, upto: int, applied: list[str]) -> None:
    import psycopg

    from insika_knowledge.store.postgres import PostgresStore
    from insika_knowledge.store.postgres.database import migrate

    tenant = unique_tenant()
    schema = _postgres_before(pg_shared_url, tenant, upto)
    with psycopg.connect(pg_shared_url, autocommit=True) as conn:
        assert migrate(conn, schema, tenant) == applied
        recorded = [r[0] for r in conn.execute(f'SELECT name FROM "{schema}".{MIGRATIONS_TABLE} ORDER BY name')]
    # the new ids of what ran, and beside them every id the previous release knows: it opens the schema too
    assert recorded == sorted({old for old, _ in POSTGRES_BEFORE} | set(applied))
    store = PostgresStore(pg_shared_url, tenant, tokenizer=TOKENIZER)
    put(store)
    assert store.get(AGENT, "cep-13-campinas") is not None
    store.close()
    assert _schema_text(pg_shared_url, schema) == POSTGRES_SNAPSHOT.read_text(encoding="utf-8")
