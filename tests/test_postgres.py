"""What only the PostgreSQL backend has: schemas per tenant, migrations under a lock, replicas."""

from __future__ import annotations

import json
import multiprocessing as mp
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import make_concept
from pgcluster import unique_tenant

from insika_knowledge.errors import InvalidName, UserError
from insika_knowledge.index.fts5 import Fts5Index
from insika_knowledge.index.scan import ScanIndex
from insika_knowledge.index.tokenizer import TOKENIZER
from insika_knowledge.location import database_url, is_postgres_url
from insika_knowledge.memory import Memory
from insika_knowledge.store import open_store
from insika_knowledge.store.postgres import PostgresStore, redact, schema_for, tenants
from insika_knowledge.store.postgres import fts as pg_fts
from insika_knowledge.store.postgres.database import pg_migrations

AGENT = "store-support"


def put(store, concept, reason: str = "extract"):
    with store.transaction() as tx:
        return tx.put(AGENT, concept, reason=reason, actor="engine")


def test_only_a_postgresql_url_selects_postgresql(monkeypatch: pytest.MonkeyPatch) -> None:
    assert is_postgres_url("postgresql://u@h/db") and is_postgres_url("postgres:///db?host=/tmp")
    assert not is_postgres_url("sqlite:///x.db") and not is_postgres_url("/var/lib/x")
    assert database_url(None) is None
    monkeypatch.setenv("INSIKA_DATABASE_URL", "postgresql:///from-env")
    assert database_url(None) == "postgresql:///from-env"
    assert database_url("postgresql:///explicit") == "postgresql:///explicit"
    assert database_url("") is None  # explicit: the SQLite files, whatever the environment says
    monkeypatch.setenv("INSIKA_DATABASE_URL", "/some/folder")  # not a URL: a mistake, never ignored
    with pytest.raises(UserError, match="is not a PostgreSQL URL"):
        database_url(None)


def test_a_fresh_schema_gets_every_migration_once_and_replicas_migrate_together(pg_url: str) -> None:
    ctx = mp.get_context("spawn")
    with ctx.Pool(3) as pool:  # three replicas open the same new tenant at once
        pool.map(_open_and_close, [pg_url] * 3)
    store = PostgresStore(pg_url, "loja")
    names = sorted({m.name for m in pg_migrations()} | {old for m in pg_migrations() for old in m.formerly})
    assert [r[0] for r in store.rows("SELECT name FROM _insika_migrations ORDER BY name")] == names
    assert store.schema == "insika_loja" and tenants(pg_url) == ["loja"]
    store.close()


def _open_and_close(url: str) -> None:
    PostgresStore(url, "loja", tokenizer=TOKENIZER).close()


def test_one_schema_per_tenant_and_names_validated_as_on_sqlite(pg_url: str) -> None:
    a, b = PostgresStore(pg_url, "loja-a"), PostgresStore(pg_url, "loja-b")
    put(a, make_concept())
    assert b.get(AGENT, "cep-13-campinas") is None and b.agents() == []
    long_name = "x" * 64
    c = PostgresStore(pg_url, long_name)  # longer than PostgreSQL's 63-byte names: shortened
    assert len(c.schema.encode()) <= 63 and c.schema != schema_for("x" * 63)
    assert tenants(pg_url) == sorted(["loja-a", "loja-b", long_name])
    for bad in ("../x", "UPPER", "a.b", "", "x" * 65, "con"):
        with pytest.raises(InvalidName):
            PostgresStore(pg_url, bad)
    assert len(tenants(pg_url)) == 3  # no schema was created for them
    for store in (a, b, c):
        store.close()


def test_an_unreachable_server_is_unavailable_without_the_password(tmp_path: Path) -> None:
    from insika_knowledge.errors import StorageUnavailable

    url = f"postgresql://someone:s3cret@/db?host={tmp_path}&connect_timeout=1"
    with pytest.raises(StorageUnavailable, match="cannot connect") as info:  # a run-time failure:
        PostgresStore(url, "t")  # the breaker opens, memory comes back once the server answers
    assert "s3cret" not in str(info.value) and redact(url) in str(info.value)
    with pytest.raises(StorageUnavailable, match="unreachable"):  # at once now, no connection tried
        PostgresStore(url, "t")


def test_memory_and_the_command_line_take_the_url(pg_url: str, tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    from insika_knowledge.cli import cli

    memory = Memory(tmp_path / "unused", database=pg_url)
    put(memory.store("loja"), make_concept())
    assert memory.tenants() == ["loja"] and memory.has_tenant("loja") and not memory.has_tenant("x")
    memory.close()
    assert not (tmp_path / "unused").exists()  # nothing written to the data directory
    shown = CliRunner().invoke(cli, ["show", "--agent", AGENT, "--tenant", "loja", "--database", pg_url,
                                     "cep-13-campinas"])
    assert shown.exit_code == 0, shown.output
    assert shown.output.startswith("---\nname: cep-13-campinas\n")
    monkeypatch.setenv("INSIKA_DATABASE_URL", pg_url)
    found = CliRunner().invoke(cli, ["search", "--agent", AGENT, "--tenant", "loja", "--json", "Campinas"])
    assert found.exit_code == 0, found.output
    assert [c["name"] for c in json.loads(found.output)["matched"]] == ["cep-13-campinas"]
    missing = CliRunner().invoke(cli, ["show", "--agent", AGENT, "--tenant", "nope", "x"])
    assert missing.exit_code == 2 and "tenant 'nope' has no database" in missing.output


def test_a_write_on_one_replica_is_seen_by_the_next_search_on_another(pg_shared_url: str) -> None:
    tenant = unique_tenant()
    replica_a = PostgresStore(pg_shared_url, tenant, tokenizer=TOKENIZER)
    replica_b = PostgresStore(pg_shared_url, tenant, tokenizer=TOKENIZER)
    scan_b, fts_b = ScanIndex(replica_b), Fts5Index(replica_b)
    put(replica_a, make_concept("frete-gratis", description="Frete grátis acima de R$ 199."))
    assert [h.entry.name for h in scan_b.search(AGENT, "frete grátis", 5)] == ["frete-gratis"]
    put(replica_a, make_concept("frete-expresso", description="Frete expresso em 1 dia."))
    assert {h.entry.name for h in scan_b.search(AGENT, "frete", 5)} == {"frete-gratis", "frete-expresso"}
    assert {h.entry.name for h in fts_b.search(AGENT, "frete", 5)} == {"frete-gratis", "frete-expresso"}
    replica_a.delete(AGENT, "frete-gratis", actor="op")
    assert [h.entry.name for h in scan_b.search(AGENT, "frete", 5)] == ["frete-expresso"]
    assert [h.entry.name for h in fts_b.search(AGENT, "frete", 5)] == ["frete-expresso"]
    replica_a.close()
    replica_b.close()


@pytest.fixture
def pg_store(pg_shared_url: str, clock):
    store = PostgresStore(pg_shared_url, unique_tenant(), clock=clock, tokenizer=TOKENIZER)
    yield store
    store.close()


def test_bm25_on_postgresql_ranks_and_scores_as_fts5(pg_store, tmp_path: Path) -> None:
    from insika_knowledge.store import SQLiteStore

    store = pg_store
    sqlite = SQLiteStore(tmp_path / "fts5.db", tokenizer=TOKENIZER)
    texts = [
        ("frete-gratis", "Frete grátis acima de R$ 199.", "Pedidos acima de R$ 199 têm frete grátis."),
        ("frete-expresso", "Frete expresso em 1 dia útil.", "Entrega expressa para capitais, frete pago."),
        ("troca-7-dias", "Troca em até 7 dias.", "A troca é grátis em até 7 dias após a entrega."),
        ("cep-13-campinas", "CEPs 13000-13999 saem de Campinas.", "Frete de Campinas em 1-2 dias."),
        ("boleto", "Boleto vence em 3 dias.", "Pagamento por boleto compensa em até 3 dias úteis."),
    ]
    for target in (store, sqlite):
        for name, description, body in texts:
            put(target, make_concept(name, description=description, body=body))
    for query in ("frete grátis", "troca em 7 dias", "campinas frete", "boleto 3 dias", "entrega"):
        ours = Fts5Index(store).search(AGENT, query, 5)
        theirs = Fts5Index(sqlite).search(AGENT, query, 5)
        assert [h.entry.name for h in ours] == [h.entry.name for h in theirs], query
        assert [h.score for h in ours] == pytest.approx([h.score for h in theirs], rel=1e-9), query
    sqlite.close()


def test_terms_are_stored_verbatim_with_a_frequency_per_field(pg_store) -> None:
    store = pg_store
    literal, length = pg_fts.document(("it's", "a\\b it's", "x " * 300), lambda t: t.split())
    assert length == 1 + 2 + 300
    # positions number each field's occurrences from the field's offset: name 1, description 4001, body 8001
    assert literal.startswith("'it''s':1,4001 'a\\\\b':4001 'x':8001,8002,")
    assert literal.split("'x':")[1].count(",") + 1 == pg_fts.MAX_POSITIONS  # PostgreSQL keeps 256 a term
    assert pg_fts.query(["b'", "", "a" * 3000]) == "'b'''"
    put(store, make_concept("odd", description="O'Brien's \\ backslash", body="plain"))
    assert store.fts_doc_freqs(AGENT, ["plain"]) == {"plain": 1}


def test_a_store_without_the_analyser_indexes_later_and_then_refuses_unanalysed_writes(pg_shared_url: str) -> None:
    tenant = unique_tenant()
    plain = PostgresStore(pg_shared_url, tenant)  # no tokenizer: no index yet, writes work
    assert not plain.fts_ready
    put(plain, make_concept())
    indexed = PostgresStore(pg_shared_url, tenant, tokenizer=TOKENIZER)  # indexes what is there
    assert [r.name for r, _ in indexed.fts_search(AGENT, ["campin"], 5, (1.0, 1.0, 1.0))] == ["cep-13-campinas"]
    with pytest.raises(UserError, match="needs the analyser"):
        put(plain, make_concept("another"))
    assert plain.names(AGENT) == ["cep-13-campinas"]

    class Newer:  # another analysis version: every row is indexed again at open
        version = TOKENIZER.version + 1

        def __call__(self, text: str):
            return ["only"]

    newer = PostgresStore(pg_shared_url, tenant, tokenizer=Newer())
    assert newer.fts_vocabulary(AGENT) == {"only": 1}
    for store in (plain, indexed, newer):
        store.close()


def test_open_store_names_the_missing_extra(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "psycopg" else real(name, *a))
    with pytest.raises(UserError, match=r"insika-knowledge\[postgres\]"):
        open_store(tmp_path, "t", database="postgresql:///x")
