"""The backend-neutral store code: one implementation, each backend's errors and SQL words."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import apsw
import pytest

from insika_knowledge.errors import StorageError
from insika_knowledge.store import SQLiteStore
from insika_knowledge.store.sqlite.procedures import ProcedureStore
from insika_knowledge.store.statements import INLINE_MAX, POSTGRESQL, SQLITE, upsert


class _FailingConnection:
    """A connection whose every statement fails with a disk I/O error."""

    def execute(self, *args: Any, **kwargs: Any) -> Any:
        raise apsw.IOError("disk I/O error")


@pytest.mark.parametrize("call", [
    lambda s: s.list_concepts("a"),  # inherited from the neutral ConceptReads
    lambda s: s.aliases("a", "n"),  # inherited from the neutral NamingReads
    lambda s: s.versions("a", "n"),
    lambda s: s.outbox().pending(),  # the neutral Outbox reads through the store
])
def test_inherited_reads_of_the_sqlite_store_raise_the_librarys_errors(tmp_path: Path, call: Any) -> None:
    store = SQLiteStore(tmp_path / "t.db")
    store._conn = lambda: _FailingConnection()  # type: ignore[method-assign]
    with pytest.raises(StorageError, match="disk I/O error on .*t.db"):
        call(store)
    store.close()


def test_inherited_reads_of_the_sqlite_procedure_store_raise_the_librarys_errors(tmp_path: Path) -> None:
    store = ProcedureStore(tmp_path / "t.db")
    store._conn = lambda: _FailingConnection()  # type: ignore[method-assign]
    for call in (store.generation, store.count, lambda: store.population_terms({"x"})):
        with pytest.raises(StorageError, match="disk I/O error"):
            call()
    store.close()


def test_one_of_a_list_in_either_dialect() -> None:
    assert SQLITE.in_list("name", ["a", "b"]) == ("name IN (?, ?)", ("a", "b"))
    many = [str(i) for i in range(INLINE_MAX + 1)]
    assert SQLITE.in_list("name", many) == ("name IN (SELECT value FROM json_each(?))", (json.dumps(many),))
    assert POSTGRESQL.in_list("name", ("a", "b")) == ("name = ANY(?)", (["a", "b"],))
    assert upsert("t", "k, a, b", "k") == (
        "INSERT INTO t (k, a, b) VALUES (?, ?, ?) ON CONFLICT (k) DO UPDATE SET a = excluded.a, b = excluded.b")


def test_postgres_placeholders_are_translated_once_and_psycopg_queries_kept() -> None:
    pg_database = pytest.importorskip("insika_knowledge.store.postgres.database")
    assert pg_database.pg_query("SELECT 1 WHERE a = ? AND b = ?") == "SELECT 1 WHERE a = %s AND b = %s"
    assert pg_database.pg_query("SELECT %(x)s") == "SELECT %(x)s"


class _Counting:
    """A counted run that applies `apply` to the transaction's procedure rows."""

    def __init__(self, apply: Any):
        self.apply = apply
        self.result: Any = None

    def record(self, rows: Any) -> int:
        self.result = self.apply(rows)
        return 1


def test_population_counts_and_term_notes_are_the_same_on_both_backends(open_procedures: Any) -> None:
    store = open_procedures()
    store.record_runs([_Counting(lambda rows: rows.count_population({"": 1, "alpha": 2, "beta": 1}))])
    store.record_runs([_Counting(lambda rows: rows.count_population({"": 1, "alpha": 1}))])
    assert store.population_since(0) == {"": 2, "alpha": 3, "beta": 1}
    assert store.population_terms({"alpha", "gamma", ""}) == {"alpha"}
    runs = [_Counting(lambda rows: rows.note_terms("p1", "s1", {"x", "y"})),
            _Counting(lambda rows: rows.note_terms("p1", "s1", {"x"})),
            _Counting(lambda rows: rows.note_terms("p1", "s2", {"x", "z"})),
            _Counting(lambda rows: rows.note_terms("p1", "s3", {"y", "z"}))]
    for run in runs:
        store.record_runs([run])
    # noted, noted again (a second run), released by another session (its 2 runs), then
    # y (one run of s1) and z (one run of s2) released by a third session.
    assert [run.result for run in runs] == [{}, {}, {"x": 2}, {"y": 1, "z": 1}]
    store.close()


@pytest.mark.parametrize("count", [0, 3, INLINE_MAX + 1])
def test_a_page_of_listed_names_reads_the_same_for_short_and_long_lists(store: Any, count: int) -> None:
    from conftest import make_concept

    with store.transaction() as tx:
        tx.put("a", make_concept(), reason="extract", actor="engine")
    names = [make_concept().name] + [f"missing-{i}" for i in range(count - 1)] if count else []
    page = store.concept_page("a", ranked=names, sort="rank")
    assert [r.concept.name for r in page.rows] == names[:1] and page.total == len(names[:1])


def test_text_a_database_cannot_hold_is_a_user_error_on_both_backends(store) -> None:
    """A name from bytes that were not UTF-8 (a lone surrogate), or with a NUL, is refused
    as bad input (never a raw encoding or driver error)."""
    from insika_knowledge.errors import UserError

    for name in ("caf\udcff", "a\x00b"):
        with pytest.raises(UserError):
            store.delete("shop", name, actor="operator:x")
        try:
            assert store.get("shop", name) is None
        except UserError:
            pass  # PostgreSQL refuses a NUL even in a read
