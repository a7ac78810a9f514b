"""``insika-knowledge mcp``: serve one agent's concepts over MCP (stdio, or HTTP on loopback)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from insika_knowledge.errors import UserError
from insika_knowledge.hookspecs import hookimpl
from insika_knowledge.ids import DEFAULT_TENANT
from insika_knowledge.location import DATABASE_HELP

if TYPE_CHECKING:
    from insika_knowledge.memory import Memory

LOOPBACK = "127.0.0.1"


@click.command("mcp")
@click.option("--agent", required=True, help="Agent id whose concepts are served.")
@click.option("--tenant", default=DEFAULT_TENANT, show_default=True, help="Tenant name.")
@click.option("--data-dir", type=click.Path(file_okay=False), default=None,
              help="Data directory (default: $INSIKA_KNOWLEDGE_HOME, else the user data folder).")
@click.option("--database", default=None, metavar="URL", help=DATABASE_HELP)
@click.option("--http", "http_port", type=click.IntRange(1, 65535), default=None,
              help="Serve Streamable HTTP on 127.0.0.1:PORT (path /mcp) instead of stdio.")
@click.option("--model", default=None,
              help="Model that merges a related repeat of a proposed concept "
              "(default: $INSIKA_UTILITY_MODEL; none: a different repeat is a conflict).")
@click.option("--base-url", default=None, help="OpenAI-compatible endpoint for --model.")
@click.option("--types", default=None,
              help="Concept types propose_concept may write, comma-separated (default: all).")
def mcp_command(agent: str, tenant: str, data_dir: str | None, database: str | None, http_port: int | None,
                model: str | None, base_url: str | None, types: str | None) -> None:
    """Serve the agent's concepts to MCP clients: search, load, conflicts, propose; resources."""
    try:
        from insika_knowledge.mcp.server import KnowledgeServer
    except ImportError as exc:
        raise UserError(f"the MCP server needs its extra ({exc.name or exc} is missing): "
                           "pip install 'insika-knowledge[mcp]'") from None
    from insika_knowledge.config import load_config
    from insika_knowledge.memory import Memory

    memory = Memory(data_dir, database=database, base_url=base_url)
    try:
        _say_what_is_served(memory, agent, tenant)
        block: dict[str, object] = {"model": model} if model else {}
        if types:
            block["types"] = [t.strip() for t in types.split(",") if t.strip()]
        config = load_config(block)
        server = KnowledgeServer(memory, agent, tenant=tenant, config=config)
        memory.model(config.resolved_model() if config else None)  # an unusable model fails now
        if http_port is None:
            server.run("stdio")
        else:
            click.echo(f"MCP on http://{LOOPBACK}:{http_port}/mcp (agent {agent}, tenant {tenant})",
                       err=True)
            server.run("streamable-http", host=LOOPBACK, port=http_port)
    finally:
        memory.close()


def _say_what_is_served(memory: Memory, agent: str, tenant: str) -> None:
    """One line on stderr when the tenant has no database yet or the agent no concepts.

    Serving them is allowed (``propose_concept`` writes the first concept), but a mistyped
    name would otherwise start an empty memory without a word.
    """
    if not memory.has_tenant(tenant):
        others = ", ".join(memory.tenants()) or "none"
        click.echo(f"mcp: tenant {tenant!r} has no database in {memory.location} yet (tenants there: "
                   f"{others}); serving an empty memory, created on first use", err=True)
        return
    agents = memory.agents(tenant=tenant)
    if agent not in agents:
        named = ", ".join(sorted(agents)[:10]) or "none"
        click.echo(f"mcp: agent {agent!r} has no concepts in tenant {tenant!r} (agents there: {named}); "
                   "serving an empty memory", err=True)


@hookimpl
def register_commands(cli: click.Group) -> None:
    """Attach ``mcp`` to `cli` (the command line maps errors to exit codes)."""
    cli.add_command(mcp_command)
