"""``bench --relay``: what the relay adds to a model call, at 5,000 concepts.

Three processes on loopback: a fake upstream (`upstream_app`, a fixed chat completion as
JSON or as a stream of chunks), the relay (``insika-knowledge relay``, its data directory
seeded with the bench corpus's 5,000 synthetic concepts for each of two agents, one with
``index: scan`` and one with ``index: auto`` (Index::Postings);
procedures in shadow with a session id, so every request is captured, recalled and
recorded; ``extract: false``, so no model is called), and this process as the client
(``httpx``, keep-alive). Every request body is sent four ways, the order rotating from one
body to the next so a slow moment of the shared machine falls on each alike:

- ``direct``: straight to the upstream;
- ``hop``: through the relay with ``x-insika-memory: off`` (the bare proxy hop);
- ``scan`` / ``auto``: through the relay for the scan agent / the auto agent (procedures,
  retrieval, the ``<knowledge>`` block placed, ``load_knowledge`` offered);
- ``learn``: as ``auto``, for an agent that learns (``extract`` on, an offline ``replay:``
  model whose answers propose nothing): every finished answer is written to the outbox before its last
  byte (or, for JSON, before the response) goes out, and learned in the background; the
  difference to ``auto`` is the cost of that durable hand-off and of learning in the same
  process. The hand-off's own time is read from each JSON answer's trace
  (``x-ace-trace: full``, the ``knowledge`` stage's ``learning_ms``).

Figures, each relayed route against ``direct`` at the same percentile of the same run:

- added latency: p50 and p95 of a whole JSON request;
- added time to first byte: p50 and p95 of the first streamed body byte (the ``scan`` and
  ``auto`` routes hold the opening role-only chunk until the first content chunk, as the
  relay does whenever ``load_knowledge`` is on offer);
- 50 concurrent streams (20 chunks 20 ms apart each): how many complete through the relay
  with exactly the bytes the upstream sent, and the wall time beside 50 direct ones.

Run: ``insika-knowledge bench --relay [--quick] [--json]``. The ``knowledge`` block is
injected for most queries (those sharing a word with a concept), so the figures include
retrieval and placement.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any, Final

import httpx
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from insika_knowledge.bench.synthetic import corpus, queries
from insika_knowledge.bench.timing import percentiles
from insika_knowledge.index.tokenizer import TOKENIZER
from insika_knowledge.store import SQLiteStore

AGENT: Final = "bench-scan"
AUTO_AGENT: Final = "bench-auto"
LEARN_AGENT: Final = "bench-learn"
#: Sessions the requests cycle through.
SESSIONS: Final = 50
TENANT: Final = "bench"
CONCEPTS: Final = 5000
STREAMS: Final = 50
#: Stream shape of the concurrency run: chunks per answer, milliseconds between chunks.
STREAM_CHUNKS: Final = 20
STREAM_DELAY_MS: Final = 20
_ANSWER: Final = "Pedidos para o CEP 13000 saem de Campinas e chegam em 1-2 dias úteis."
_SYSTEM: Final = "You are the support agent of an online store. Answer briefly and politely. " * 12


# ----------------------------------------------------------------------------- the fake upstream


def _completion(model: str) -> bytes:
    return json.dumps({
        "id": "chatcmpl-bench", "object": "chat.completion", "created": 0, "model": model,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": _ANSWER}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120},
    }).encode()


def _chunks(model: str, count: int) -> list[bytes]:
    def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
        data = {"id": "chatcmpl-bench", "object": "chat.completion.chunk", "created": 0, "model": model,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
        return b"data: " + json.dumps(data).encode() + b"\n\n"

    words = (_ANSWER + " ") * (1 + count // 12)
    pieces = words.split(" ")[:count]
    return [
        chunk({"role": "assistant", "content": ""}),
        *(chunk({"content": p + " "}) for p in pieces),
        chunk({}, "stop"),
        b"data: [DONE]\n\n",
    ]


async def _completions(request: Request) -> Response:
    body = json.loads(await request.body())
    model = str(body.get("model", "bench"))
    if not body.get("stream"):
        return Response(_completion(model), media_type="application/json")
    delay_s = float(request.headers.get("x-bench-delay-ms", "0")) / 1000
    events = _chunks(model, int(request.headers.get("x-bench-chunks", "3")))

    async def stream() -> AsyncIterator[bytes]:
        for event in events:
            if delay_s:
                await asyncio.sleep(delay_s)
            yield event

    return StreamingResponse(stream(), media_type="text/event-stream")


async def _models(request: Request) -> Response:
    return Response(b'{"object": "list", "data": []}', media_type="application/json")


def upstream_app() -> Starlette:
    """The bench's fake upstream: ``POST /v1/chat/completions`` (JSON or stream), ``GET /v1/models``.

    A stream has ``x-bench-chunks`` content chunks (default 3), ``x-bench-delay-ms``
    milliseconds apart (default 0); the bytes are the same for the same request.
    """
    return Starlette(routes=[
        Route("/v1/chat/completions", _completions, methods=["POST"]),
        Route("/v1/models", _models, methods=["GET"]),
    ])


def serve_upstream(port: int) -> None:
    """Serve `upstream_app` on loopback `port` until killed (the bench's child process)."""
    from insika_knowledge.relay.server import serve

    serve(upstream_app(), "127.0.0.1", port)


# ----------------------------------------------------------------------------- processes


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _wait_ready(url: str, process: subprocess.Popen[bytes], timeout_s: float = 60) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"{url}: the process exited with {process.returncode}")
        with contextlib.suppress(httpx.HTTPError):
            if httpx.get(url + "/v1/models", timeout=1).status_code == 200:
                return
        time.sleep(0.1)
    raise RuntimeError(f"{url} did not start within {timeout_s} s")


@contextlib.contextmanager
def _processes(folder: Path, concepts: int, embeddings: str) -> Iterator[tuple[str, str]]:
    """Start the fake upstream and a relay over `concepts` seeded concepts; yield both URLs."""
    store = SQLiteStore(folder / "data" / f"{TENANT}.db", tokenizer=TOKENIZER)
    with store.transaction() as tx:
        for concept in corpus(concepts):
            for agent in (AGENT, AUTO_AGENT, LEARN_AGENT):
                tx.put(agent, concept, reason="extract", actor="bench")
    store.close()
    replay = folder / "empty-answers.json"  # learning runs, offline: every turn learns nothing
    replay.write_text(json.dumps({"extract": {f"bench-session-{i}": [] for i in range(SESSIONS)}}), encoding="utf-8")
    agents = folder / "agents.yaml"
    agents.write_text(
        f"{AGENT}:\n  knowledge:\n    extract: false\n    index: scan\n"
        f"{AUTO_AGENT}:\n  knowledge:\n    extract: false\n    index: auto\n"
        f"{LEARN_AGENT}:\n  knowledge:\n    index: auto\n    model: replay:{replay}\n",
        encoding="utf-8",
    )
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2]), "INSIKA_EMBEDDINGS": embeddings}
    up_port, relay_port = _free_port(), _free_port()
    upstream = subprocess.Popen(
        [sys.executable, "-c", f"from insika_knowledge.bench.relay import serve_upstream; serve_upstream({up_port})"],
        env=env,
    )
    relay = subprocess.Popen(
        [sys.executable, "-m", "insika_knowledge", "relay", "--upstream", f"http://127.0.0.1:{up_port}",
         "--agents", str(agents), "--data-dir", str(folder / "data"), "--port", str(relay_port),
         "--procedures-mode", "shadow", "--tenant", TENANT],
        env=env, stdout=subprocess.DEVNULL,
    )
    try:
        up_url, relay_url = f"http://127.0.0.1:{up_port}", f"http://127.0.0.1:{relay_port}"
        _wait_ready(up_url, upstream)
        _wait_ready(relay_url, relay)
        yield up_url, relay_url
    finally:
        for process in (relay, upstream):
            process.terminate()
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()


# ----------------------------------------------------------------------------- measurements


def _body(query: str, stream: bool = False) -> dict[str, Any]:
    history = [
        {"role": "user", "content": "Oi, boa tarde."},
        {"role": "assistant", "content": "Boa tarde! Como posso ajudar?"},
    ]
    return {"model": "bench-model", "stream": stream,
            "messages": [{"role": "system", "content": _SYSTEM}, *history, {"role": "user", "content": query}]}


def _headers(i: int, agent: str = AGENT) -> dict[str, str]:
    return {"authorization": "Bearer bench", "x-insika-tenant": TENANT, "x-insika-agent": agent,
            "x-ace-session": f"bench-session-{i % SESSIONS}"}


#: The ways one request is sent, in the order of the figures: straight to the upstream; through
#: the relay with memory off (the bare hop); through the relay for the scan agent, the auto one,
#: and the auto one that learns.
DIRECT: Final = "direct"
HOP: Final = "hop"
SCAN: Final = "scan"
AUTO: Final = "auto"
LEARN: Final = "learn"
ROUTES: Final = (DIRECT, HOP, SCAN, AUTO, LEARN)
_AGENTS: Final = {SCAN: AGENT, AUTO: AUTO_AGENT, LEARN: LEARN_AGENT}


def _route(route: str, i: int, direct: str, relayed: str) -> tuple[str, dict[str, str]]:
    """The URL and headers of request `i` sent by `route`."""
    if route == DIRECT:
        return direct, _headers(i)
    if route == HOP:
        return relayed, {**_headers(i), "x-insika-memory": "off"}
    headers = _headers(i, _AGENTS[route])
    return relayed, {**headers, "x-ace-trace": "full"} if route == LEARN else headers


#: The hand-off times (``learning_ms``) the relay's traces reported, in milliseconds.
_HANDOFFS: list[float] = []


def _json_ms(client: httpx.Client, url: str, body: bytes, headers: dict[str, str]) -> float:
    start = time.perf_counter_ns()
    response = client.post(url + "/v1/chat/completions", content=body, headers=headers)
    response.read()
    elapsed = (time.perf_counter_ns() - start) / 1e6
    response.raise_for_status()
    trace = response.headers.get("x-ace-trace")
    if trace:
        stage = json.loads(trace)[-1]
        if "learning_ms" in stage:
            _HANDOFFS.append(float(stage["learning_ms"]))
    return elapsed


def _first_byte_ms(client: httpx.Client, url: str, body: bytes, headers: dict[str, str]) -> float:
    start = time.perf_counter_ns()
    with client.stream("POST", url + "/v1/chat/completions", content=body, headers=headers) as response:
        chunks = response.iter_raw()
        next(chunks)
        elapsed = (time.perf_counter_ns() - start) / 1e6
        for _ in chunks:
            pass
    return elapsed


def _interleaved(
    measure: Callable[[httpx.Client, str, bytes, dict[str, str]], float],
    direct: str, relayed: str, bodies: list[dict[str, Any]],
) -> dict[str, list[float]]:
    """Each body sent once by every route, the routes' order rotating from one body to the next
    (so a slow moment of the machine falls on each route alike); milliseconds per route.
    """
    samples: dict[str, list[float]] = {route: [] for route in ROUTES}
    with httpx.Client(timeout=30) as client:
        for i, body in enumerate(bodies):
            content = json.dumps(body).encode()
            for k in range(len(ROUTES)):
                route = ROUTES[(i + k) % len(ROUTES)]
                url, headers = _route(route, i, direct, relayed)
                samples[route].append(measure(client, url, content, {**headers, "content-type": "application/json"}))
    return samples


def _added(samples: dict[str, list[float]]) -> dict[str, dict[str, float]]:
    """Per relayed route: p50 and p95, and what it adds to the direct call at each."""
    d50, d95 = percentiles(samples[DIRECT])
    out = {DIRECT: {"p50_ms": d50, "p95_ms": d95}}
    for route in ROUTES[1:]:
        r50, r95 = percentiles(samples[route])
        out[route] = {"p50_ms": r50, "p95_ms": r95, "added_p50_ms": r50 - d50, "added_p95_ms": r95 - d95}
    return out


async def _concurrent(url: str, count: int) -> tuple[float, list[bytes]]:
    headers = {"x-bench-chunks": str(STREAM_CHUNKS), "x-bench-delay-ms": str(STREAM_DELAY_MS)}
    limits = httpx.Limits(max_connections=count * 2)
    async with httpx.AsyncClient(timeout=60, limits=limits) as client:

        async def one(i: int) -> bytes:
            body = _body("Qual o prazo de entrega para o CEP 13000?", stream=True)
            async with client.stream("POST", url + "/v1/chat/completions", json=body,
                                     headers={**_headers(i), **headers}) as response:
                return b"".join([chunk async for chunk in response.aiter_raw()])

        start = time.perf_counter()
        received = await asyncio.gather(*(one(i) for i in range(count)))
        return (time.perf_counter() - start) * 1000, list(received)


def _line(label: str, figures: dict[str, dict[str, float]]) -> str:
    d = figures[DIRECT]
    parts = [f"  {label:<11} direct p50 {d['p50_ms']:.2f} p95 {d['p95_ms']:.2f}"]
    for route in ROUTES[1:]:
        f = figures[route]
        parts.append(f"{route} +{f['added_p50_ms']:.2f} / +{f['added_p95_ms']:.2f}")
    return " | ".join(parts) + "  (ms; added p50 / p95)"


def run_relay_bench(
    *, quick: bool = False, as_json: bool = False, concepts: int = CONCEPTS, echo: Callable[[str], None] = print,
    embeddings: str | None = None,
) -> dict[str, Any]:
    """Measure the relay (see the module doc); print a summary (or JSON) and return the figures.

    Args:
        quick: 100 requests per route instead of 1,000.
        as_json: print one JSON object instead of lines.
        concepts: concepts seeded for each agent.
        echo: where lines go.
        embeddings: the relay's embedding provider (``$INSIKA_EMBEDDINGS``); None = ``off``:
            the figures are the lexical relay's (the hybrid block's own time is
            ``bench --scale``'s), and no learned turn embeds the seeded store meanwhile.

    Returns:
        ``json`` and ``first_byte``: per route (``direct``, ``hop``, ``scan``, ``auto``,
        ``learn``), p50 and p95 in ms, and for the relayed routes ``added_p50_ms`` /
        ``added_p95_ms`` (the route's percentile minus the direct one's, from the same
        interleaved run); ``durable_handoff``: the hand-off's own time (``write_p50_ms``,
        ``write_p95_ms`` from the traces of ``writes`` JSON answers) and ``learn`` minus
        ``auto`` on JSON answers at p50 and p95 (``p50_ms``, ``p95_ms``: the outbox write
        and learning in the same process); ``concurrent_streams``: counts and wall times in ms.

    Raises:
        RuntimeError: the fake upstream or the relay did not start.
    """
    requests = 100 if quick else 1000
    provider = embeddings or "off"
    with tempfile.TemporaryDirectory(prefix="insika-relay-bench-") as tmp, \
            _processes(Path(tmp), concepts, provider) as urls:
        direct, relayed = urls
        # warm-up: connections, caches, the FTS5 index
        _interleaved(_json_ms, direct, relayed, [_body(q) for q in queries(50, seed=5)])
        _interleaved(_first_byte_ms, direct, relayed, [_body(q, stream=True) for q in queries(20, seed=7)])
        _HANDOFFS.clear()
        json_figures = _added(_interleaved(_json_ms, direct, relayed, [_body(q) for q in queries(requests)]))
        write_p50, write_p95 = percentiles(_HANDOFFS) if _HANDOFFS else (0.0, 0.0)
        streamed = [_body(q, stream=True) for q in queries(requests, seed=13)]
        ttfb_figures = _added(_interleaved(_first_byte_ms, direct, relayed, streamed))
        direct_ms, expected = asyncio.run(_concurrent(direct, STREAMS))
        relay_ms, received = asyncio.run(_concurrent(relayed, STREAMS))
    handoff: dict[str, float] = {
        **{f"p{n}_ms": json_figures[LEARN][f"p{n}_ms"] - json_figures[AUTO][f"p{n}_ms"] for n in (50, 95)},
        "write_p50_ms": write_p50, "write_p95_ms": write_p95, "writes": len(_HANDOFFS),
    }
    results: dict[str, Any] = {
        "concepts": concepts,
        "requests": requests,
        "json": json_figures,
        "first_byte": ttfb_figures,
        "durable_handoff": handoff,
        "concurrent_streams": {
            "streams": STREAMS, "chunks": STREAM_CHUNKS, "chunk_delay_ms": STREAM_DELAY_MS,
            "completed": sum(1 for r in received if r.endswith(b"data: [DONE]\n\n")),
            "byte_identical": sum(1 for r in received if r == expected[0]),
            "direct_wall_ms": direct_ms, "relay_wall_ms": relay_ms,
        },
        "quick": quick,
    }
    if as_json:
        echo(json.dumps(results, indent=2))
        return results
    c = results["concurrent_streams"]
    echo(f"relay at {concepts} concepts, {requests} requests by each route, interleaved (procedures shadow;"
         f" hop = memory off, scan / auto = knowledge on with index scan / auto, learn = auto that learns)")
    echo(_line("JSON", json_figures))
    echo(_line("first byte", ttfb_figures))
    echo(f"  durable hand-off: its own time p50 {handoff['write_p50_ms']:.2f} p95 {handoff['write_p95_ms']:.2f} ms "
         f"({handoff['writes']} JSON answers' traces); learn - auto, JSON: p50 +{handoff['p50_ms']:.2f} "
         f"p95 +{handoff['p95_ms']:.2f} ms (learning in the same process included)")
    echo(f"  {c['streams']} concurrent streams ({c['chunks']} chunks, {c['chunk_delay_ms']} ms apart): "
         f"{c['completed']}/{c['streams']} complete, {c['byte_identical']}/{c['streams']} byte-identical, "
         f"wall {c['relay_wall_ms']:.0f} ms (direct {c['direct_wall_ms']:.0f} ms)")
    if quick:
        echo("(--quick: a smoke run with few repetitions, not a measurement)")
    return results


def main() -> None:
    """``insika-knowledge bench --relay [--quick] [--json]``."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="few repetitions (a smoke run)")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args()
    run_relay_bench(quick=args.quick, as_json=args.json)


if __name__ == "__main__":
    main()
