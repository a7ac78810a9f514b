"""Several OS processes sighting one concept at once: nothing lost, nothing duplicated.

On both backends: processes sharing one SQLite file, and replicas sharing one PostgreSQL
database (the tenant's schema).
"""

from __future__ import annotations

import multiprocessing as mp
from pathlib import Path

from insika_knowledge.extract.candidates import Candidate
from insika_knowledge.index.tokenizer import TOKENIZER
from insika_knowledge.learn import sight
from insika_knowledge.store import SQLiteStore, Store

AGENT = "store-support"
CANDIDATE = Candidate("frete-gratis", "Free shipping above R$ 199.", "policy", "Orders above R$ 199 ship free.")
PROCESSES = 4
SESSIONS_EACH = 15


def open_store(where: tuple[str, ...], tokenizer=TOKENIZER) -> Store:
    """The store at `where`: ``(path,)`` of a SQLite file, or ``(url, tenant)``."""
    if len(where) == 1:
        return SQLiteStore(where[0], tokenizer=tokenizer)
    from insika_knowledge.store.postgres import PostgresStore

    return PostgresStore(where[0], where[1], tokenizer=tokenizer)


def worker(where: tuple[str, ...], index: int, start: mp.Barrier) -> list[str]:  # type: ignore[type-arg]
    store = open_store(where)
    start.wait()
    outcomes = [
        sight(store, AGENT, CANDIDATE, session_id=f"p{index}-s{i}", turn_id="t1")
        for i in range(SESSIONS_EACH)
    ]
    # Each process also replays one of another process's sessions: it must count once.
    outcomes.append(sight(store, AGENT, CANDIDATE, session_id=f"p{(index + 1) % PROCESSES}-s0", turn_id="t1"))
    store.close()
    return outcomes


def test_concurrent_same_claim_sightings_from_many_processes(tmp_path: Path, backend: str, request) -> None:
    if backend == "sqlite":
        where: tuple[str, ...] = (str(tmp_path / "tenant.db"),)
        open_store(where).close()  # migrate once up front
    else:  # every replica opens (and migrates) the schema at once
        where = (request.getfixturevalue("pg_url"), "default")
    ctx = mp.get_context("spawn")
    with ctx.Manager() as manager:
        start = manager.Barrier(PROCESSES)
        with ctx.Pool(PROCESSES) as pool:
            results = pool.starmap(worker, [(where, i, start) for i in range(PROCESSES)])
    outcomes = [o for r in results for o in r]
    total = PROCESSES * SESSIONS_EACH
    assert outcomes.count("learned") == 1
    assert outcomes.count("confirmed") == total - 1
    assert outcomes.count("replayed") + outcomes.count("confirmed") + 1 == len(outcomes)
    store = open_store(where, tokenizer=None)
    concept = store.get(AGENT, "frete-gratis").concept
    assert concept.occurrences == total
    assert sorted(concept.sources) == sorted(f"p{p}-s{i}" for p in range(PROCESSES) for i in range(SESSIONS_EACH))
    assert concept.confidence == 0.95
    assert store.count(AGENT) == 1
    assert len(store.versions(AGENT, "frete-gratis")) == total
    store.close()
