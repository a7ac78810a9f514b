"""Several OS processes sighting one concept at once: nothing lost, nothing duplicated.

On both backends: processes sharing one SQLite file, and replicas sharing one PostgreSQL
database (the tenant's schema).
"""

from __future__ import annotations

import json
import multiprocessing as mp
from pathlib import Path

import pytest

from insika_knowledge.candidate import Candidate
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


# ----------------------------------------------------------------------------- related merges

WRITERS = 4
RELATED_EACH = 10
REGIONS = ("north", "south", "east", "west")
LANES = ("alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet")


def related_worker(path: str, base_url: str, index: int, start: mp.Barrier) -> list[str]:  # type: ignore[type-arg]
    from insika_knowledge.extract.model import load_model

    store = SQLiteStore(path)
    model = load_model("openai/fake-model", base_url=base_url)
    start.wait()
    outcomes = []
    for i in range(RELATED_EACH):
        # The fake merges by keeping both statements: the merge guard (`keeps_details`)
        # accepts it, so any conflict is the concurrency's. Each lane has its own amount:
        # two lanes with the same amount would read as two versions of one rule listed
        # side by side (`lists_versions`), a conflict of the guard's, not the concurrency's.
        region, lane = REGIONS[index], LANES[i]
        candidate = Candidate("frete-gratis", "Free shipping above R$ 199.", "policy",
                              f"Region {region}, lane {lane}: orders above R$ {199 + 10 * index + i} ship "
                              f"free from the {lane} warehouse.")
        outcomes.append(sight(store, AGENT, candidate, session_id=f"w{index}-s{i}", turn_id="t1",
                              model=model))
    store.close()
    return outcomes


def _always_related(body: dict) -> object:
    from fakellm import Hang

    content = body["messages"][-1]["content"]
    if "on_record" in content:  # the merge prompt: slow enough for the writers to overlap
        # A careful merge: both statements kept, so the merge guard accepts it.
        data = json.loads(content.strip().splitlines()[-1])
        return Hang(0.03, json.dumps({"verdict": "related",
                                      "body": f"{data['on_record']} {data['new_sighting']}"}))
    return "[]"


def test_concurrent_related_sightings_merge_instead_of_conflicting(tmp_path: Path) -> None:
    from fakellm import FakeLLM

    path = str(tmp_path / "tenant.db")
    SQLiteStore(path).close()
    ctx = mp.get_context("spawn")
    with FakeLLM(_always_related) as fake, ctx.Manager() as manager:
        start = manager.Barrier(WRITERS)
        with ctx.Pool(WRITERS) as pool:
            results = pool.starmap(related_worker, [(path, fake.base_url, i, start) for i in range(WRITERS)])
    outcomes = [o for r in results for o in r]
    total = WRITERS * RELATED_EACH
    assert outcomes.count("conflict") == 0, outcomes
    assert outcomes.count("learned") == 1
    assert outcomes.count("merged") + outcomes.count("confirmed") == total - 1
    store = SQLiteStore(path)
    concept = store.get(AGENT, "frete-gratis").concept
    assert not concept.in_conflict
    assert concept.occurrences == total
    assert len(concept.sources) == total
    assert store._conn().execute("SELECT count(*) FROM merge_leases").fetchone()[0] == 0
    store.close()


def test_a_merge_lease_of_a_dead_process_is_taken_over_at_once(tmp_path: Path) -> None:
    import socket
    import subprocess
    import sys
    import time

    from insika_knowledge.store.leases import holder_gone, holder_id

    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    ghost = f"{socket.gethostname()}:{dead.pid}:1:abcd"
    store = SQLiteStore(tmp_path / "t.db")
    now = time.time()
    with store.transaction() as tx:
        assert tx.take_merge_lease(AGENT, "x", ghost, lease_s=120, wait_ttl_s=10,
                                   gone=lambda h: False, now_s=now) is None
    me, other = holder_id(per_thread=True), holder_id(per_thread=True)
    with store.transaction() as tx:  # alive as far as this check knows: wait behind it
        assert tx.take_merge_lease(AGENT, "x", me, lease_s=120, wait_ttl_s=10,
                                   gone=lambda h: False, now_s=now) == now + 120
    with store.transaction() as tx:  # a later writer queues behind the first waiter
        assert tx.take_merge_lease(AGENT, "x", other, lease_s=120, wait_ttl_s=10,
                                   gone=holder_gone, now_s=now) is not None
    with store.transaction() as tx:  # its process is gone: the first waiter gets it now
        assert tx.take_merge_lease(AGENT, "x", me, lease_s=120, wait_ttl_s=10,
                                   gone=holder_gone, now_s=now) is None
    store.close()


def test_closing_a_memory_that_other_threads_use_waits_for_their_statements(tmp_path: Path) -> None:
    """SQLite refuses to close a connection busy in another thread: close waits for it."""
    import threading
    import time

    from insika_knowledge import Memory
    from insika_knowledge.errors import MemoryClosed, RunTimeFailure

    memory = Memory(tmp_path, embeddings="off")
    record = "---\nname: r\ndescription: d.\n---\nbody\n"
    memory.put(record, agent="ag")
    ended: list[str] = []

    def work() -> None:
        while True:
            try:
                memory.put(record, agent="ag")
                memory.search("body", agent="ag")
            except MemoryClosed:
                ended.append("closed")
                return
            except RunTimeFailure:  # one name put by 8 threads: documented, retryable
                continue

    threads = [threading.Thread(target=work) for _ in range(8)]
    for thread in threads:
        thread.start()
    time.sleep(0.3)
    assert memory.close(timeout_s=5) is True  # raised apsw.ThreadingViolationError before
    for thread in threads:
        thread.join(10)
    assert ended == ["closed"] * 8
    with Memory(tmp_path, embeddings="off") as again:
        assert [c.name for c in again.concepts(agent="ag")] == ["r"]



def test_a_statement_on_a_connection_closed_under_it_raises_memory_closed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`close` in another thread can close a call's connection between two of its
    statements (seen in CI under load): the next statement raises `MemoryClosed`, as the
    call's next call would, not apsw's ``ConnectionClosedError``.
    """
    import apsw

    from insika_knowledge import Memory
    from insika_knowledge.errors import MemoryClosed

    memory = Memory(tmp_path, embeddings="off")
    memory.put("---\nname: r\ndescription: d.\n---\nbody\n", agent="ag")
    store = memory.store()
    gone = apsw.Connection(str(store.path))
    gone.close()
    monkeypatch.setattr(store, "_conn", lambda: gone)  # the connection the call holds, closed under it
    with pytest.raises(MemoryClosed):
        store.get("ag", "r")
    monkeypatch.undo()
    memory.close()
