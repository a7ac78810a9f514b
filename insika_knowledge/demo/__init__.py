"""The demo: the whole loop on a small invented store, offline by default.

Ten short conversations of "Loja Aurora" (Portuguese and English, written for the demo)
are learned one by one with the replay model (recorded answers), then two customer
questions are answered from what was learned, ``load_knowledge`` is called, and the
concepts are exported. ``--model`` runs the same loop against a live model.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from importlib import resources
from pathlib import Path

from insika_knowledge.events import Recorder
from insika_knowledge.export import export
from insika_knowledge.memory import Memory
from insika_knowledge.plugin import KnowledgePlugin
from insika_knowledge.sessions import AgentSpec, Turn, read_sessions

AGENT = "loja-aurora"
TENANT = "demo"
QUESTIONS = (
    "Oi! Meu CEP é 13050-000, em Campinas. Quanto tempo demora a entrega?",
    "Recebi meu pedido há 10 dias. Ainda dá para fazer a devolução?",
)


def demo_file(name: str) -> Path:
    """Path of one of the demo's packaged files (conversations.jsonl, replay.json)."""
    return Path(str(resources.files("insika_knowledge.demo").joinpath(name)))


def run_demo(
    *,
    data_dir: str | None = None,
    model: str | None = None,
    base_url: str | None = None,
    out: str | None = None,
    echo: Callable[[str], None] = print,
) -> Memory:
    """Run the demo and print what happens at each step.

    Args:
        data_dir: where the demo database goes (a new temporary folder when None).
        model: a live model spec; None = ``replay:`` the packaged recorded answers.
        base_url: OpenAI-compatible endpoint for a live model.
        out: export folder (``<data_dir>/export`` when None).
        echo: where lines go.

    Returns:
        The `Memory` used (closed), for callers that inspect the data directory.
    """
    folder = Path(data_dir) if data_dir else Path(tempfile.mkdtemp(prefix="insika-demo-"))
    spec = model or f"replay:{demo_file('replay.json')}"
    memory = Memory(folder, base_url=base_url)
    recorder = Recorder()
    memory.events.subscribe(recorder)
    plugin = KnowledgePlugin(memory)
    agent = AgentSpec(AGENT, TENANT, {
        "extract": True, "retrieve": True, "top_k": 3, "model": spec,
        "types": ["fact", "policy", "procedure", "objection"],
    })
    config = plugin._config(agent)
    assert config is not None
    echo(f"insika-knowledge demo: agent {AGENT}, tenant {TENANT}, model {spec}")
    echo(f"data directory: {folder}\n")
    echo("1. Learning from 10 finished conversations")
    for session in read_sessions(demo_file("conversations.jsonl")):
        report = memory.learn(
            AGENT, config, session_id=session.session_id, turn_id="t1",
            messages=session.messages, tenant=TENANT,
        )
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
    for i, question in enumerate(QUESTIONS, start=1):
        turn = Turn(agent, f"demo/live-{i}", "t1", [{"role": "user", "content": question}])
        echo(f"   customer: {question}")
        fragments = plugin.context_fragments(turn)
        for fragment in fragments:
            echo("\n".join("   | " + line for line in fragment.text.splitlines()))
        if not fragments:
            echo("   | (no concept matches)")
        echo("")

    echo("3. The model calls load_knowledge (the tool from the tools hook)")
    tool = plugin.tools(agent)[0]
    result = tool.handler(name="cep-13-campinas")
    echo("\n".join("   | " + line for line in result["markdown"].splitlines()))
    echo(f"   load_knowledge('frete-gratis') -> {tool.handler(name='frete-gratis')['error']}\n")

    echo("4. Export")
    target = Path(out) if out else folder / "export"
    md = export(store, AGENT, target, "md")
    graph = export(store, AGENT, target, "graphml")
    echo(f"   {md.concepts} markdown files and knowledge.graphml ({graph.edges} links) in {target}\n")

    names = [n for n, _ in recorder.events]
    counts = {n: names.count(n) for n in dict.fromkeys(names)}
    echo("5. Events: " + ", ".join(f"{k}={v}" for k, v in counts.items()))
    echo(f"\nTry: insika-knowledge search --data-dir {folder} --tenant {TENANT} --agent {AGENT} "
         "\"frete grátis\"")
    plugin.close()
    return memory
