"""Connections are owned and closed: Studio bursts and repeated backfills under a low RLIMIT_NOFILE."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest

pytestmark = pytest.mark.skipif(not Path("/proc/self/fd").exists(), reason="needs /proc")

LIMIT = 160
ROOT = Path(__file__).resolve().parents[1]

BACKFILLS = """
import json, os, resource, sys
resource.setrlimit(resource.RLIMIT_NOFILE, (%(limit)d, %(limit)d))
from insika_knowledge.backfill import backfill
from insika_knowledge.config import load_config
from insika_knowledge.memory import Memory

data, sessions, replay = sys.argv[1:4]
memory = Memory(data)
config = load_config({"model": "replay:" + replay})
counts, failed = [], 0
for run in range(%(runs)d):
    for tenant in ("t1", "t2", "t3"):
        summary = backfill(memory, "airline", config, sessions, tenant=tenant, concurrency=8)
        failed += sum(1 for s in summary.statuses if s.status not in ("done", "skipped"))
    counts.append(len(os.listdir("/proc/self/fd")))
memory.close()
print(json.dumps({"failed": failed, "fds": counts}))
"""


def test_repeated_concurrent_backfills_under_a_low_descriptor_limit(tmp_path: Path) -> None:
    ids = [f"s{i}" for i in range(24)]
    sessions = tmp_path / "s.jsonl"
    sessions.write_text("".join(json.dumps({"session_id": i, "messages": [
        {"role": "user", "content": f"question {i}"}, {"role": "assistant", "content": "answer"}]}) + "\n"
        for i in ids), encoding="utf-8")
    replay = tmp_path / "r.json"
    replay.write_text(json.dumps({"extract": {i: [] for i in ids}, "consolidate": {}}), encoding="utf-8")
    script = tmp_path / "backfills.py"
    script.write_text(BACKFILLS % {"limit": LIMIT, "runs": 6}, encoding="utf-8")
    # Each run starts 8 new worker threads per tenant: without closing their connections when
    # they end, 6 runs x 3 tenants x 8 threads x 2-3 files are far beyond 160 descriptors.
    done = subprocess.run([sys.executable, str(script), str(tmp_path / "data"), str(sessions), str(replay)],
                          capture_output=True, text=True, timeout=300, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["failed"] == 0
    fds = result["fds"]
    # Flat from run to run, not growing by the dozens a leak adds per run. Measured from the
    # second run: one loaded run of the suite counted [30, 36, 37, 37, 37, 37] (descriptors
    # the second run opens for good, e.g. a tenant's file opened late), which is no leak.
    assert max(fds[1:]) - fds[1] <= 6, fds


STUDIO = """
import resource, sys
resource.setrlimit(resource.RLIMIT_NOFILE, (%(limit)d, %(limit)d))
import anyio._backends._asyncio as backend
backend.WorkerThread.MAX_IDLE_TIME = 0.05  # the thread pool replaces its threads between bursts
import uvicorn
from insika_knowledge.memory import Memory
from insika_knowledge.studio.app import create_app

memory = Memory(sys.argv[1])
uvicorn.run(create_app(memory, "test-token-0123456789"), host="127.0.0.1", port=int(sys.argv[2]),
            log_level="warning", access_log=False)
"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_studio_bursts_under_a_low_descriptor_limit_never_answer_500(tmp_path: Path) -> None:
    from conftest import make_concept

    from insika_knowledge.memory import Memory

    data = tmp_path / "data"
    setup = Memory(data)
    for tenant in ("t1", "t2", "t3"):
        with setup.store(tenant).transaction() as tx:
            for i in range(20):
                tx.put("shop", make_concept(f"c-{i}"), reason="extract", actor="engine")
    setup.close()
    script = tmp_path / "studio.py"
    script.write_text(STUDIO % {"limit": LIMIT}, encoding="utf-8")
    port = _free_port()
    server = subprocess.Popen([sys.executable, str(script), str(data), str(port)],
                              env={**os.environ, "PYTHONPATH": str(ROOT)},
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                httpx.get(f"{base}/studio/login", timeout=1)
                break
            except httpx.TransportError:
                time.sleep(0.1)
        with httpx.Client(base_url=base, timeout=30) as client:
            login = client.get("/studio/login")
            token = re.search(r'name="csrf" value="([^"]+)"', login.text)
            assert token
            client.post("/studio/login", data={"token": "test-token-0123456789", "csrf": token.group(1)})
            cookies = dict(client.cookies)
        urls = [f"/studio/knowledge?agent=shop&tenant={t}" for t in ("t1", "t2", "t3")]
        urls += [f"/studio/knowledge/c-{i}?agent=shop&tenant=t{1 + i % 3}" for i in range(20)]

        def fetch(url: str) -> int:
            with httpx.Client(base_url=base, timeout=30, cookies=cookies) as one:
                return one.get(url).status_code

        statuses: list[int] = []
        fds: list[int] = []
        with ThreadPoolExecutor(16) as pool:
            for _ in range(6):
                statuses += list(pool.map(fetch, urls * 2))
                time.sleep(0.3)  # the server's idle worker threads end
                fds.append(len(os.listdir(f"/proc/{server.pid}/fd")))
        assert statuses and all(code == 200 for code in statuses), sorted(set(statuses))
        # Flat, not 11-14 more per burst (a leak: about 60 more after six, which never close).
        # A loaded machine can leave the last bursts' idle threads and their sockets alive past
        # the 0.3 s (seen in a clean-clone CI run with the other test worker busy: 13 more after
        # 5 s): they get up to 15 s, and a leak still fails.
        settle = time.monotonic() + 15
        while len(os.listdir(f"/proc/{server.pid}/fd")) - fds[0] > 10 and time.monotonic() < settle:
            time.sleep(0.1)
        fds.append(len(os.listdir(f"/proc/{server.pid}/fd")))
        assert fds[-1] - fds[0] <= 10, fds
    finally:
        server.terminate()
        server.communicate(timeout=10)
