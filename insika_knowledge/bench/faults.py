"""``bench --faults``: an operator's worst day, measured: kills, a database outage, restarts.

For each backend (SQLite files; PostgreSQL on a throwaway cluster when one can be made):

- **kills at random points**: an engine process (the plugin, in a child process) hands turns
  to ``after_turn`` back to back, printing each one the hook returned for (acknowledged),
  and is killed (SIGKILL) after a random time; every fifth round the database is
  unavailable meanwhile (SQLite: another process holds the write lock; PostgreSQL: the
  server is stopped), so the turns are deferred to the spill journal;
- **kills at the instant of acknowledgement**: killed the moment it printed a random
  turn's acknowledgement;
- after the rounds, a fresh process with no traffic resumes what they left: the time until
  every pending turn is learned, then the acknowledged turns not on record (the target: 0);
- **restarts without traffic**: a process killed with turns pending, and a new one that
  gets no turn: the time until its outbox and journal are empty (target: 10 s);
- **hooks with the database down** (PostgreSQL stopped; SQLite write lock held): the
  latency of ``after_turn`` and ``context_fragments`` (target: p99 <= 50 ms), and how long
  memory takes to come back once the database is up again;
- **the relay with the database down** (PostgreSQL): a JSON request's latency with the
  database up and down (target: within 1 s of the normal time).

The model is an in-process stub that proposes nothing: the figures are the queue's and
the stores' own. Printed with the machine's load average.
"""

from __future__ import annotations

import json
import os
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Final

from insika_knowledge.bench.pgcluster import Cluster, find_bindir
from insika_knowledge.extract.model import ExtractionRequest, MergeAnswer, MergeRequest
from insika_knowledge.hookspecs import AgentSpec, Turn
from insika_knowledge.memory import Memory
from insika_knowledge.plugin import KnowledgePlugin
from insika_knowledge.queue import OutboxSettings

TENANT: Final = "bench"
AGENT: Final = "bench"
IDLE: Final = "bench-idle"
MESSAGES: Final = [{"role": "user", "content": "Tem frete grátis acima de quanto?"},
                   {"role": "assistant", "content": "Acima de R$ 199 o frete é grátis."}]
CONCEPT: Final = ("---\nname: frete-gratis\ndescription: Frete grátis acima de R$ 199.\n---\n\n"
                  "Acima de R$ 199 o frete é grátis.\n")


class Idle:
    """A model that proposes nothing and never merges (the queue's cost alone)."""

    def propose(self, request: ExtractionRequest) -> list[Any]:
        """Nothing, at once."""
        return []

    def merge(self, request: MergeRequest) -> MergeAnswer:
        """Never called: nothing is proposed."""
        raise NotImplementedError("the idle model proposes nothing to merge")


def engine(data: str, database: str | None, prefix: str, count: int, pace_s: float) -> None:
    """The child: an engine process handing turns to the plugin (``python -m ... engine``)."""
    memory = Memory(data, database=database)
    memory._models[IDLE] = Idle()
    plugin = KnowledgePlugin(memory)
    plugin.prepare([TENANT])
    print("ready", flush=True)
    agent = AgentSpec(AGENT, TENANT, {"model": IDLE})
    for i in range(count):
        started = time.perf_counter()
        plugin.after_turn(Turn(agent, f"{prefix}-{i}", "t1", MESSAGES))
        print(f"{i} {(time.perf_counter() - started) * 1000:.3f}", flush=True)
        time.sleep(pace_s)
    time.sleep(600)  # killed by the parent


def _spawn(data: Path, database: str | None, prefix: str, count: int, pace_s: float = 0.002) -> subprocess.Popen[str]:
    root = str(Path(__file__).resolve().parents[2])  # this package, wherever it is installed
    env = {**os.environ, "INSIKA_EMBEDDINGS": "off",
           "PYTHONPATH": os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH", "")) if p)}
    return subprocess.Popen(
        [sys.executable, "-c", "import sys; from insika_knowledge.bench.faults import engine; "
         "engine(sys.argv[1], sys.argv[2] or None, sys.argv[3], int(sys.argv[4]), float(sys.argv[5]))",
         str(data), database or "", prefix, str(count), str(pace_s)],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env)


class _Round:
    """One engine process: its acknowledged turns, killed at a random time or at an ack."""

    def __init__(self, data: Path, database: str | None, prefix: str, *, kill_at_ack: int | None,
                 kill_after_s: float):
        self.prefix = prefix
        self.acked: list[str] = []
        self.hook_ms: list[float] = []
        self.process = _spawn(data, database, prefix, 10_000)
        self._kill_at_ack = kill_at_ack
        self._ready = threading.Event()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        if not self._ready.wait(60):
            self.process.kill()
            raise RuntimeError("the engine process did not start")
        if kill_at_ack is None:
            time.sleep(kill_after_s)
            self.process.send_signal(signal.SIGKILL)
        self.process.wait(60)
        self._reader.join(30)

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            if line.strip() == "ready":
                self._ready.set()
                continue
            number, elapsed = line.split()
            self.acked.append(f"{self.prefix}-{number}")
            self.hook_ms.append(float(elapsed))
            if self._kill_at_ack is not None and len(self.acked) >= self._kill_at_ack:
                self.process.send_signal(signal.SIGKILL)  # the instant the hook returned
        self._ready.set()


@contextmanager
def _unavailable(data: Path, cluster: Cluster | None) -> Iterator[None]:
    """The database unavailable for the block: the SQLite write lock held, or the server stopped."""
    if cluster is not None:
        cluster.halt()
        try:
            yield
        finally:
            cluster.resume()
        return
    # Held by another process, as a stranger holds it. Not in this one: a second SQLite library
    # (the standard library's) closing its connection would drop this process's POSIX locks
    # on the file under apsw's connections (https://www.sqlite.org/howtocorrupt.html, 2.2).
    holder = subprocess.Popen(
        [sys.executable, "-c", _HOLD_LOCK, str(data / f"{TENANT}.db")],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert holder.stdin is not None and holder.stdout is not None
    try:
        if holder.stdout.readline().strip() != "locked":
            raise RuntimeError("the lock holder did not take the write lock")
        yield
    finally:
        holder.stdin.close()  # it rolls back and exits
        holder.wait(30)


#: The lock holder's program: takes the write lock, holds it until its stdin closes.
_HOLD_LOCK: Final = (
    "import sqlite3, sys\n"
    "db = sqlite3.connect(sys.argv[1], timeout=30.0, isolation_level=None)\n"
    "db.execute('BEGIN IMMEDIATE')\n"
    "print('locked', flush=True)\n"
    "sys.stdin.read()\n"
    "db.execute('ROLLBACK')\n"
)


def _pending(memory: Memory, data: Path) -> int:
    spilled = len(list((data / "spill").glob("*.turn"))) if (data / "spill").is_dir() else 0
    return memory.store(TENANT).outbox().pending() + spilled


def _percentile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else 0.0


def kill_campaign(folder: Path, database: str | None, cluster: Cluster | None, *, random_kills: int,
                  ack_kills: int, echo: Callable[[str], Any]) -> dict[str, Any]:
    """Kill engine processes at random points and at acknowledgements; count what was lost."""
    data = folder / "data"
    setup = Memory(data, database=database)
    setup.store(TENANT)  # the tenant exists before the first round (its lock can be held)
    setup.close()
    acked: list[str] = []
    hook_ms: list[float] = []
    plan = [("random", i) for i in range(random_kills)] + [("ack", i) for i in range(ack_kills)]
    random.Random(7).shuffle(plan)
    rng = random.Random(11)
    unavailable_rounds = 0
    for n, (kind, _) in enumerate(plan):
        down = kind == "random" and n % 5 == 4
        unavailable_rounds += down
        prefix = f"r{n}"
        context = _unavailable(data, cluster) if down else _nothing()
        with context:
            done = _Round(data, database, prefix, kill_at_ack=rng.randint(1, 40) if kind == "ack" else None,
                          kill_after_s=rng.uniform(0.0, 0.4))
        acked += done.acked
        hook_ms += done.hook_ms
        if (n + 1) % 20 == 0:
            echo(f"  {n + 1}/{len(plan)} kills, {len(acked)} turns acknowledged")
    checker = Memory(data, database=database)
    checker._models[IDLE] = Idle()
    pending = _pending(checker, data)
    started = time.monotonic()
    checker.start_learning()
    finished = checker.learning_queue().wait_empty(timeout_s=600)
    resumed_s = time.monotonic() - started
    store = checker.store(TENANT)
    lost = [t for t in acked if store.extraction(AGENT, t, "t1") is None]
    checker.close(timeout_s=30)
    return {"kills_random": random_kills, "kills_at_ack": ack_kills, "rounds_unavailable": unavailable_rounds,
            "acknowledged": len(acked), "lost": len(lost), "lost_ids": lost[:10],
            "pending_at_restart": pending, "resume_all_s": resumed_s, "resumed": finished,
            "after_turn_p50_ms": statistics.median(hook_ms) if hook_ms else 0.0,
            "after_turn_p99_ms": _percentile(hook_ms, 0.99), "after_turn_max_ms": max(hook_ms, default=0.0)}


@contextmanager
def _nothing() -> Iterator[None]:
    yield


def restarts(folder: Path, database: str | None, *, times: int) -> dict[str, Any]:
    """Kill an engine with turns pending, start one that gets no turn: seconds until all are learned."""
    data = folder / "restart"
    setup = Memory(data, database=database)
    setup.store(TENANT)
    setup.close()
    waits: list[float] = []
    pending: list[int] = []
    for n in range(times):
        _Round(data, database, f"k{n}", kill_at_ack=200, kill_after_s=0.0)
        watcher = Memory(data, database=database)
        left = _pending(watcher, data)
        started = time.monotonic()
        child = _spawn(data, database, f"idle{n}", 0)  # configured, no traffic
        while _pending(watcher, data) and time.monotonic() - started < 60:
            time.sleep(0.02)
        waits.append(time.monotonic() - started)
        pending.append(left)
        child.kill()
        child.wait(30)
        watcher.close()
    return {"restarts": times, "pending_each": pending, "resumed_s_median": statistics.median(waits),
            "resumed_s_max": max(waits)}


def hooks_down(folder: Path, database: str | None, cluster: Cluster | None, *, calls: int) -> dict[str, Any]:
    """The hooks' latency with the database unavailable, and how long memory takes to come back."""
    memory = Memory(folder / "hooks", database=database)
    memory._models[IDLE] = Idle()
    memory.put(CONCEPT, agent=AGENT, tenant=TENANT)
    plugin = KnowledgePlugin(memory, outbox=OutboxSettings(spill_max=max(1000, calls * 2)))
    plugin.prepare([TENANT])
    agent = AgentSpec(AGENT, TENANT, {"model": IDLE})
    up = [(plugin.context_fragments(Turn(agent, "warm", "t1", MESSAGES)) != []) for _ in range(3)]
    after: list[float] = []
    fragments: list[float] = []
    back_s = 0.0
    data = folder / "hooks"
    with _unavailable(data, cluster):
        for i in range(calls):
            turn = Turn(agent, f"down-{i}", "t1", MESSAGES)
            started = time.perf_counter()
            plugin.after_turn(turn)
            after.append((time.perf_counter() - started) * 1000)
            started = time.perf_counter()
            plugin.context_fragments(turn)
            fragments.append((time.perf_counter() - started) * 1000)
        restarted = time.monotonic()
    while plugin.context_fragments(Turn(agent, "back", "t1", MESSAGES)) == [] and time.monotonic() - restarted < 120:
        time.sleep(0.01)
    back_s = time.monotonic() - restarted
    drained = plugin.queue.wait_empty(timeout_s=300)
    written_s = time.monotonic() - restarted
    store = memory.store(TENANT)
    lost = sum(store.extraction(AGENT, f"down-{i}", "t1") is None for i in range(calls))
    plugin.close(timeout_s=30)
    return {"calls": calls, "up_before": all(up),
            "after_turn_p50_ms": statistics.median(after), "after_turn_p99_ms": _percentile(after, 0.99),
            "after_turn_max_ms": max(after),
            "context_fragments_p50_ms": statistics.median(fragments),
            "context_fragments_p99_ms": _percentile(fragments, 0.99), "context_fragments_max_ms": max(fragments),
            "memory_back_s": back_s, "deferred_written_s": written_s, "drained": drained, "lost": lost}


def relay_down(folder: Path, database: str, cluster: Cluster, *, requests: int) -> dict[str, Any]:
    """A JSON request's latency through the relay with the database up, then down."""
    import httpx

    from insika_knowledge.bench.relay import upstream_app
    from insika_knowledge.relay.access import Access
    from insika_knowledge.relay.agents import directory_from
    from insika_knowledge.relay.app import create_app
    from insika_knowledge.relay.runtime import Relay, RelaySettings
    from insika_knowledge.relay.server import BackgroundServer

    memory = Memory(folder / "relay", database=database)
    memory._models[IDLE] = Idle()
    memory.put(CONCEPT, agent=AGENT, tenant=TENANT)
    directory = directory_from({"tenants": {TENANT: {}}, "agents": {AGENT: {"knowledge": {"model": IDLE}}},
                                "unknown": "refuse"})
    body = json.dumps({"model": "m", "messages": [{"role": "user", "content": "Tem frete grátis?"}]}).encode()
    states: dict[str, int] = {}

    def timed(client: httpx.Client, url: str, session: str) -> float:
        started = time.perf_counter()
        answer = client.post(url, content=body, headers={
            "content-type": "application/json", "x-insika-tenant": TENANT, "x-insika-agent": AGENT,
            "x-ace-session": session})
        elapsed = (time.perf_counter() - started) * 1000
        state = f"{answer.status_code} {answer.headers.get('x-insika-memory', '')}".split(":")[0]
        states[state] = states.get(state, 0) + 1
        return elapsed

    with BackgroundServer(upstream_app()) as upstream:
        relay = Relay(memory, RelaySettings(upstream.url), directory.agents,
                      access=Access(directory.tenants, directory.listed, directory.unknown or "refuse"))
        try:
            with BackgroundServer(create_app(relay)) as server, httpx.Client(timeout=120) as client:
                url = server.url + "/v1/chat/completions"
                for i in range(5):
                    timed(client, url, f"warm-{i}")
                normal = [timed(client, url, f"up-{i}") for i in range(requests)]
                with _unavailable(folder, cluster):
                    down = [timed(client, url, f"down-{i}") for i in range(requests)]
        finally:
            relay.close()
    return {"requests": requests, "normal_p50_ms": statistics.median(normal),
            "down_p50_ms": statistics.median(down), "down_p99_ms": _percentile(down, 0.99),
            "down_max_ms": max(down), "added_p50_ms": statistics.median(down) - statistics.median(normal),
            "answers": states}


def run_faults_bench(*, quick: bool = False, echo: Callable[[str], Any] = print, as_json: bool = False,
                     backends: tuple[str, ...] = ("sqlite", "postgresql")) -> dict[str, Any]:
    """Run every part of the module doc on each backend; print the figures.

    Args:
        quick: 10 random kills and 4 at acknowledgement per backend, fewer calls (a smoke run).
        echo: where lines go.
        as_json: print one JSON object at the end instead of lines.
        backends: which to run (PostgreSQL is skipped when no cluster can be made).
    """
    random_kills, ack_kills = (10, 4) if quick else (100, 20)
    calls, requests, times = (100, 10, 2) if quick else (1000, 50, 5)
    results: dict[str, Any] = {"load_before": os.getloadavg()[0], "cores": os.cpu_count()}
    for backend in backends:
        with tempfile.TemporaryDirectory(prefix=f"insika-faults-{backend}-") as tmp:
            folder = Path(tmp)
            cluster: Cluster | None = None
            database: str | None = None
            if backend == "postgresql":
                bindir = find_bindir()
                if bindir is None:
                    echo("postgresql: no PostgreSQL binary found, skipped")
                    continue
                cluster = Cluster(bindir)
                cluster.start()
                database = cluster.url(cluster.create_database())
            try:
                echo(f"{backend}: {random_kills} kills at random points, {ack_kills} at acknowledgement...")
                figures: dict[str, Any] = {"kills": kill_campaign(folder, database, cluster, random_kills=random_kills,
                                                                  ack_kills=ack_kills, echo=echo)}
                figures["restarts"] = restarts(folder, database, times=times)
                if cluster is not None:
                    cluster_db = cluster.url(cluster.create_database())
                    figures["hooks_down"] = hooks_down(folder, cluster_db, cluster, calls=calls)
                    figures["relay_down"] = relay_down(folder, cluster.url(cluster.create_database()), cluster,
                                                       requests=requests)
                else:
                    figures["hooks_down"] = hooks_down(folder, None, None, calls=calls)
                results[backend] = figures
                if not as_json:
                    _print(backend, figures, echo)
            finally:
                if cluster is not None:
                    cluster.stop()
    results["load_after"] = os.getloadavg()[0]
    if as_json:
        echo(json.dumps({"faults": results}))
    else:
        echo(f"load average {results['load_before']:.1f} before, {results['load_after']:.1f} after, "
             f"{results['cores']} cores")
    return results


def _print(backend: str, figures: dict[str, Any], echo: Callable[[str], Any]) -> None:
    kills, again, hooks = figures["kills"], figures["restarts"], figures["hooks_down"]
    echo(f"{backend}: {kills['kills_random']} random kills ({kills['rounds_unavailable']} with the database "
         f"unavailable) + {kills['kills_at_ack']} at acknowledgement: {kills['lost']} of "
         f"{kills['acknowledged']} acknowledged turns lost; {kills['pending_at_restart']} pending resumed in "
         f"{kills['resume_all_s']:.1f} s; after_turn p50 {kills['after_turn_p50_ms']:.2f} ms, "
         f"p99 {kills['after_turn_p99_ms']:.1f} ms, max {kills['after_turn_max_ms']:.1f} ms")
    echo(f"{backend}: restart without traffic: pending {again['pending_each']} learned in "
         f"{again['resumed_s_median']:.1f} s median, {again['resumed_s_max']:.1f} s max (process start included)")
    echo(f"{backend}: database unavailable, {hooks['calls']} turns: after_turn p50 {hooks['after_turn_p50_ms']:.2f} "
         f"ms, p99 {hooks['after_turn_p99_ms']:.2f} ms, max {hooks['after_turn_max_ms']:.1f} ms; "
         f"context_fragments p50 {hooks['context_fragments_p50_ms']:.2f} ms, p99 "
         f"{hooks['context_fragments_p99_ms']:.2f} ms, max {hooks['context_fragments_max_ms']:.1f} ms; "
         f"memory back {hooks['memory_back_s']:.1f} s after, deferred turns written by "
         f"{hooks['deferred_written_s']:.1f} s, {hooks['lost']} lost")
    relay = figures.get("relay_down")
    if relay is not None:
        echo(f"{backend}: relay, {relay['requests']} JSON requests: p50 {relay['normal_p50_ms']:.1f} ms up, "
             f"{relay['down_p50_ms']:.1f} ms down (p99 {relay['down_p99_ms']:.1f}, max {relay['down_max_ms']:.1f}); "
             f"answers {relay['answers']}")
