"""The Studio's speed: server-side latency of the list and editor pages at 5000 concepts.

`bench_studio` builds one agent with 5000 synthetic concepts (`insika_knowledge.bench.synthetic`,
every 25th in conflict, types mixed), logs in through the real form with Starlette's
TestClient, and times 200 requests of each page in process. The server-side time is the
app's ``Server-Timing`` header (request arrival to response start, page rendered); the
round trip through the test client is reported beside it.
"""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any, Final

from insika_knowledge.bench.synthetic import corpus
from insika_knowledge.bench.timing import percentiles
from insika_knowledge.concept import CONCEPT_TYPES
from insika_knowledge.memory import Memory
from insika_knowledge.studio.app import create_app

CONCEPTS: Final = 5000
REQUESTS: Final = 200
WARMUP: Final = 20
TENANT: Final = "studio-bench"
AGENT: Final = "bench"
BENCH_TOKEN: Final = "bench-token-0123456789"  # at least auth.MIN_TOKEN_LENGTH characters
#: Targets (p50, ms, server-side): the list page and the editor page.
TARGET_LIST_MS: Final = 50.0
TARGET_EDITOR_MS: Final = 20.0
_TIMING: Final = re.compile(r"app;dur=([0-9.]+)")


def _fill(memory: Memory, n: int) -> list[str]:
    store = memory.store(TENANT)
    names = []
    with store.transaction() as tx:
        for i, concept in enumerate(corpus(n)):
            changes: dict[str, Any] = {"type": CONCEPT_TYPES[i % len(CONCEPT_TYPES)]}
            if i % 25 == 0:
                changes["body"] = (concept.body + "\n\n## Contradiction\n\n- session `s` at "
                                   "2026-08-24T18:00:00Z: a different claim.")
            tx.put(AGENT, concept.replace(**changes), reason="extract", actor="bench")
            names.append(concept.name)
    for name in names[:10]:  # a few concepts with a longer history
        stored = store.get(AGENT, name)
        assert stored is not None
        with store.transaction() as tx:
            for k in range(4):
                tx.put(AGENT, stored.concept.replace(occurrences=k + 2), reason="confirm",
                       actor="engine", session_id=f"sess-{k}")
    return names


def bench_studio(
    folder: str | Path, *, concepts: int = CONCEPTS, requests: int = REQUESTS
) -> dict[str, Any]:
    """Time the list and editor pages for an agent with 5000 concepts.

    Args:
        folder: an empty scratch folder (a tenant database is written there).
        concepts: concepts of the agent (5000 for the figures; fewer for a smoke test).
        requests: measured requests per page.

    Returns:
        ``{"concepts", "requests", "list_p50_ms", "list_p95_ms", "editor_p50_ms",
        "editor_p95_ms", "list_roundtrip_p50_ms", "editor_roundtrip_p50_ms",
        "target_list_p50_ms", "target_editor_p50_ms"}``; times in milliseconds, p50/p95
        over `requests` requests each after `WARMUP` unmeasured ones.
    """
    from starlette.testclient import TestClient

    memory = Memory(Path(folder))
    try:
        names = _fill(memory, concepts)
        client = TestClient(create_app(memory, BENCH_TOKEN), base_url="http://127.0.0.1")
        page = client.get("/studio/login").text
        csrf = re.search(r'name="csrf" value="([^"]+)"', page)
        assert csrf is not None
        client.post("/studio/login", data={"token": BENCH_TOKEN, "csrf": csrf.group(1)})
        base = f"/studio/knowledge?agent={AGENT}&tenant={TENANT}"
        list_urls = [
            base, base + "&sort=-confidence",
            base + f"&sort=-updated_at&page={max(1, concepts // 125)}",
            base + "&status=conflict", base + "&type=policy&sort=occurrences&page=3",
            base + "&q=frete+entrega+prazo", base + f"&sort=-name&page={max(1, concepts // 50)}",
        ]
        editor_urls = [f"/studio/knowledge/{name}?agent={AGENT}&tenant={TENANT}"
                       for name in names[:10] + names[-10:]]
        result: dict[str, Any] = {"concepts": concepts, "requests": requests}
        for label, urls in (("list", list_urls), ("editor", editor_urls)):
            server, roundtrip = [], []
            for i in range(WARMUP + requests):
                start = time.perf_counter()
                response = client.get(urls[i % len(urls)])
                elapsed_ms = (time.perf_counter() - start) * 1000
                if response.status_code != 200:
                    raise RuntimeError(f"{urls[i % len(urls)]} answered {response.status_code}")
                if i >= WARMUP:
                    match = _TIMING.search(response.headers.get("server-timing", ""))
                    assert match is not None
                    server.append(float(match.group(1)))
                    roundtrip.append(elapsed_ms)
            p50, p95 = percentiles(server)
            result[f"{label}_p50_ms"] = round(p50, 2)
            result[f"{label}_p95_ms"] = round(p95, 2)
            result[f"{label}_roundtrip_p50_ms"] = round(percentiles(roundtrip)[0], 2)
        result["target_list_p50_ms"] = TARGET_LIST_MS
        result["target_editor_p50_ms"] = TARGET_EDITOR_MS
        return result
    finally:
        memory.close()


if __name__ == "__main__":  # python -m insika_knowledge.bench.studio
    import json
    import tempfile

    with tempfile.TemporaryDirectory() as scratch:
        print(json.dumps(bench_studio(scratch), indent=2))
