"""``insika-knowledge mcp``: serve one agent's concepts over MCP (stdio, or Streamable HTTP).

Over HTTP the server listens on loopback by default; any other ``--host`` needs an access
token (``--token-env VAR``: every request carries ``Authorization: Bearer <token>``, else
``401``). Requests have limits (`insika_knowledge.serving`): a body cap and header and
body timeouts.
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING

import click

from insika_knowledge.errors import UserError, missing_extra
from insika_knowledge.extract.model import check_usable
from insika_knowledge.hookspecs import hookimpl
from insika_knowledge.httplimits import check_port, check_token, is_loopback, limit_options, limits_from
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
              help="Serve Streamable HTTP on HOST:PORT (path /mcp) instead of stdio.")
@click.option("--host", default=LOOPBACK, show_default=True,
              help="Address --http listens on; beyond loopback, --token-env is required.")
@click.option("--token-env", metavar="VAR", default=None,
              help="Environment variable holding the token HTTP clients send as 'Authorization: Bearer TOKEN'.")
@limit_options(body_mb=4)
@click.option("--model", default=None,
              help="Model that merges a related repeat of a proposed concept "
              "(default: $INSIKA_UTILITY_MODEL; none: a different repeat is a conflict).")
@click.option("--base-url", default=None, help="OpenAI-compatible endpoint for --model.")
@click.option("--types", default=None,
              help="Concept types propose_concept may write, comma-separated (default: all).")
def mcp_command(agent: str, tenant: str, data_dir: str | None, database: str | None, http_port: int | None,
                host: str, token_env: str | None, max_body_mb: int, header_timeout: float, body_timeout: float,
                model: str | None, base_url: str | None, types: str | None) -> None:
    """Serve the agent's concepts to MCP clients: search, load, conflicts, propose; resources."""
    try:
        from insika_knowledge.mcp.http import serve_http
        from insika_knowledge.mcp.server import KnowledgeServer, session_source
    except ImportError as exc:
        raise missing_extra("the MCP server", "mcp", exc.name or str(exc)) from None
    from insika_knowledge.config import load_config
    from insika_knowledge.memory import Memory

    token = _token(token_env, host if http_port is not None else LOOPBACK)
    memory = Memory(data_dir, database=database, base_url=base_url)
    try:
        block: dict[str, object] = {"model": model} if model else {}
        if types:
            block["types"] = [t.strip() for t in types.split(",") if t.strip()]
        config = load_config(block)
        # over stdio the process serves one client: one session (over HTTP, the client's)
        session = session_source(uuid.uuid4().hex) if http_port is None else None
        server = KnowledgeServer(memory, agent, tenant=tenant, config=config, session_id=session)  # names checked
        _check_model(memory, config.resolved_model() if config else None)
        _say_what_is_served(memory, agent, tenant)
        if http_port is None:
            server.run("stdio")
        else:
            check_port(host, http_port, "MCP server", "--http")
            shown = f"[{host}]" if ":" in host else host
            click.echo(f"MCP on http://{shown}:{http_port}/mcp (agent {agent}, tenant {tenant}"
                       f"{', token required' if token else ''})", err=True)
            serve_http(server, host, http_port, token=token,
                       limits=limits_from(max_body_mb, header_timeout, body_timeout))
    finally:
        memory.close()


def _check_model(memory: Memory, spec: str | None) -> None:
    """Refuse to start with a merge model that cannot be used (an unknown provider, a
    missing SDK, an ``openai/`` model with no key and no base URL), as the relay does:
    otherwise every proposal that needs a merge would fail, each saying so.

    Raises:
        UserError: ``--model`` (or ``$INSIKA_UTILITY_MODEL``) names such a model.
    """
    try:
        check_usable(memory.model(spec))
    except UserError as exc:
        raise UserError(f"--model: {exc} (or start without a model: a different repeat is then a conflict)") from None


def _token(variable: str | None, host: str) -> str | None:
    """The HTTP access token from ``$VARIABLE``; None when not asked for on loopback.

    Raises:
        UserError: the variable is unset or the token too short, or `host` is not loopback
            and no token was given.
    """
    import os

    if variable is None:
        if not is_loopback(host):
            raise UserError(f"--host {host} is reachable from other machines: give an access token "
                            "(--token-env VAR, VAR holding at least 16 characters), or listen on 127.0.0.1")
        return None
    return check_token(os.environ.get(variable, ""), f"--token-env {variable}")


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
