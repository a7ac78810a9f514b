"""The demo: the whole loop on a small invented store, offline by default.

Ten short conversations of "Loja Aurora" (Portuguese and English, written for the demo)
are learned one by one with the replay model (recorded answers), then two customer
questions are answered from what was learned, ``load_knowledge`` is called, and the
concepts are exported. ``--model`` runs the same loop against a live model.
"""

from __future__ import annotations

import shlex
import tempfile
from collections.abc import Callable
from functools import partial
from importlib import resources
from pathlib import Path
from typing import Final

from insika_knowledge.backfill import RATE_LIMIT_ATTEMPTS, RATE_LIMIT_BASE_S, RateGate, learn_paced
from insika_knowledge.config import load_config
from insika_knowledge.errors import RunTimeFailure
from insika_knowledge.events import Recorder
from insika_knowledge.export import export
from insika_knowledge.extract.model import check_usable, load_model
from insika_knowledge.memory import Memory
from insika_knowledge.sessions import read_sessions

AGENT = "loja-aurora"
TENANT = "demo"
#: Outcomes that stop the demo when no conversation has been learned yet: the model is
#: not answering at all (a wrong key or model name, no server), not merely badly.
UNREACHABLE: Final = frozenset({"model_error", "model_timeout", "model_rate_limited"})
QUESTIONS = (
    "Oi! Meu CEP é 13050-000, em Campinas. Quanto tempo demora a entrega?",
    "Recebi meu pedido há 10 dias. Ainda dá para fazer a devolução?",
)


def demo_file(name: str) -> Path:
    """Path of one of the demo's packaged files (conversations.jsonl, replay.json)."""
    return Path(str(resources.files("insika_knowledge.demo").joinpath(name)))


def demo_conversation(session_id: str) -> list[dict[str, object]]:
    """The messages of the demo conversation `session_id` (``"demo/sess-01"`` to
    ``"demo/sess-10"``): the turn the demo replay's recorded answers were written from, so
    ``memory.learn(demo_conversation(s), session_id=s, model=f"replay:{demo_file('replay.json')}")``
    learns what that conversation says.

    Raises:
        KeyError: no demo conversation has that id.
    """
    for session in read_sessions(demo_file("conversations.jsonl")):
        if session.session_id == session_id:
            return session.messages
    raise KeyError(f"no demo conversation {session_id!r} (demo/sess-01 .. demo/sess-10)")


def run_demo(
    *,
    data_dir: str | None = None,
    database: str | None = None,
    model: str | None = None,
    base_url: str | None = None,
    out: str | None = None,
    echo: Callable[[str], None] = print,
    command: str = "insika-knowledge",
) -> Memory:
    """Run the demo and print what happens at each step.

    Args:
        data_dir: where the demo database goes (a new temporary folder when None).
        database: a ``postgresql://`` URL to run the demo in instead (its ``demo``
            tenant's schema); ``$INSIKA_DATABASE_URL`` is never used here.
        model: a live model spec; None = ``replay:`` the packaged recorded answers.
        base_url: OpenAI-compatible endpoint for a live model.
        out: export folder (``<data_dir>/export`` when None).
        echo: where lines go.
        command: how the closing hint names the command line (e.g.
            ``.venv/bin/insika-knowledge``).

    Returns:
        The `Memory` used (closed), for callers that inspect the data directory.

    Raises:
        UserError: the model is unusable (not a provider string, an unknown provider, a
            missing replay file, an ``openai/`` model without ``$OPENAI_API_KEY`` or a
            base URL); checked before anything is printed or written.
        RunTimeFailure: the model failed (`UNREACHABLE`: a rejected key, an unknown
            model name, no server) before any conversation was learned.
    """
    spec = model or f"replay:{demo_file('replay.json')}"
    chosen = load_model(spec, base_url=base_url)
    check_usable(chosen)  # before anything is printed or written
    folder = Path(data_dir) if data_dir else Path(tempfile.mkdtemp(prefix="insika-demo-"))
    memory = Memory(folder, database=database or "", base_url=base_url)
    recorder = Recorder()
    memory.events.subscribe(recorder)
    config = load_config({
        "extract": True, "retrieve": True, "top_k": 3, "model": spec,
        "types": ["fact", "policy", "procedure", "objection"],
    })
    assert config is not None
    tenant = memory.tenant(TENANT)
    echo(f"insika-knowledge demo: agent {AGENT}, tenant {TENANT}, model {spec}")
    echo(f"data directory: {memory.location}\n")
    echo("1. Learning from 10 finished conversations")
    learned_any = False
    gate = RateGate(RATE_LIMIT_ATTEMPTS, RATE_LIMIT_BASE_S)
    for session in read_sessions(demo_file("conversations.jsonl")):
        report = learn_paced(gate, partial(  # a 429 waits, as a backfill does
            memory.learn_turn, AGENT, config, session_id=session.session_id, turn_id="t1",
            messages=session.messages, tenant=TENANT, model=chosen,
        ))
        if report.outcome in UNREACHABLE and not learned_any:
            memory.close()
            raise RunTimeFailure(
                f"model {spec!r} failed before learning anything: {report.outcome} on "
                f"{session.session_id} ({report.detail or 'no detail'}); check the model name, "
                "the key and --base-url"
            )
        learned_any = learned_any or report.outcome == "ok"
        parts = [f"{o} {n}" for n, o in report.results]
        if report.dropped:
            parts.append("dropped " + ", ".join(f"{k}={v}" for k, v in sorted(report.dropped.items())))
        if report.redacted:
            parts.append("redacted " + ", ".join(f"{k}={v}" for k, v in sorted(report.redacted.items())))
        if report.outcome != "ok":
            parts.append(f"{report.outcome} (retryable: {report.retryable}; nothing stored was touched)")
        echo(f"   {session.session_id}: " + ("; ".join(parts) or "nothing new"))
    store = memory.store(TENANT)
    conflicts = [s.concept.name for s in store.list_concepts(AGENT) if s.concept.in_conflict]
    echo(f"   -> {store.count(AGENT)} concepts; in conflict: {', '.join(conflicts) or 'none'}\n")

    echo("2. What the agent sees on the next turns (context_fragments, priority 77)")
    for question in QUESTIONS:
        echo(f"   customer: {question}")
        block = memory.knowledge_block(question, agent=AGENT, tenant=TENANT, config=config)
        if block is not None:
            echo("\n".join("   | " + line for line in block.splitlines()))
        else:
            echo("   | (no concept matches)")
        echo("")

    echo("3. The model calls load_knowledge (the tool from the tools hook)")
    result = tenant.retriever.load_knowledge(AGENT, "cep-13-campinas")
    if "markdown" in result:
        echo("\n".join("   | " + line for line in result["markdown"].splitlines()))
    else:  # a live model may have named it otherwise, or learned nothing
        echo(f"   load_knowledge('cep-13-campinas') -> {result['error']}")
    echo(f"   load_knowledge('frete-gratis') -> {tenant.retriever.load_knowledge(AGENT, 'frete-gratis')['error']}\n")

    echo("4. Export")
    target = Path(out) if out else folder / "export"
    md = export(store, AGENT, target, "md")
    graph = export(store, AGENT, target, "graphml")
    echo(f"   {md.concepts} markdown files and knowledge.graphml ({graph.edges} links) in {target}\n")

    names = [n for n, _ in recorder.events]
    counts = {n: names.count(n) for n in dict.fromkeys(names)}
    echo("5. Events: " + ", ".join(f"{k}={v}" for k, v in counts.items()))
    where = f"--database {memory.location}" if memory.database else f"--data-dir {shlex.quote(str(folder))}"
    echo(f"\nTry: {command} search {where} --tenant {TENANT} --agent {AGENT} \"frete grátis\"")
    memory.close()
    return memory
