"""``insika-knowledge relay``: serve the OpenAI/Anthropic-compatible relay.

The command imports the relay (Starlette, uvicorn, httpx: the ``relay`` extra) only when
it runs, so the rest of the command line works without the extra. `register_commands`
attaches it to the command group (the ``register_commands`` hook, as ``mcp`` does).
"""

from __future__ import annotations

import click

from insika_knowledge.errors import missing_extra
from insika_knowledge.hookspecs import hookimpl
from insika_knowledge.httplimits import UPSTREAM_TIMEOUT_S, Seconds, limit_options, limits_from
from insika_knowledge.location import DATABASE_HELP


@click.command("relay")
@click.option("--upstream", required=True,
              help="The model API to forward to, e.g. https://api.openai.com or https://api.anthropic.com.")
@click.option("--agents", "agents_file", required=True, type=click.Path(dir_okay=False),
              help="YAML file mapping agent ids to their knowledge: block.")
@click.option("--data-dir", type=click.Path(file_okay=False), default=None,
              help="Data directory (default: $INSIKA_KNOWLEDGE_HOME, else the user data folder).")
@click.option("--database", default=None, metavar="URL", help=DATABASE_HELP)
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option("--port", default=8787, show_default=True, type=int, help="TCP port.")
@click.option("--procedures-mode", default=None,
              help="Procedural memory: off, shadow, prod or canary:N (default: $INSIKA_PROCEDURES_MODE, else shadow).")
@click.option("--tenant", "tenants", multiple=True, metavar="NAME",
              help="A tenant to serve besides the agents file's (default when none is named: 'default'). "
                   "Repeatable.")
@click.option("--unknown", type=click.Choice(["pass", "refuse"]), default=None,
              help="A tenant or agent the relay does not know: pass it upstream with memory off, or refuse "
                   "it (403). Default: the agents file's unknown:, else pass.")
@click.option("--token-env", metavar="VAR", default=None,
              help="Environment variable holding the access token (x-insika-token) of every tenant without "
                   "its own. Required, or per-tenant tokens, when --host is not a loopback address.")
@click.option("--no-learn", is_flag=True, help="Recall only: hand no turn to learning (no model needed).")
@click.option("--upstream-timeout", type=Seconds(1.0, 3600.0), default=UPSTREAM_TIMEOUT_S, show_default=True,
              help="Seconds the upstream may stay silent while it answers: before its answer starts, or "
                   "between two parts of a streamed one (slower: 502, the client told why).")
@limit_options(body_mb=32)
def relay_command(
    upstream: str, agents_file: str, data_dir: str | None, database: str | None, host: str, port: int,
    procedures_mode: str | None, tenants: tuple[str, ...], unknown: str | None, token_env: str | None,
    no_learn: bool, upstream_timeout: float, max_body_mb: int, header_timeout: float, body_timeout: float,
) -> None:
    """Serve a relay that gives any OpenAI or Anthropic client both memories.

    Point the client's base URL at the relay (OpenAI: http://HOST:PORT/v1, Anthropic:
    http://HOST:PORT) and name the agent in the x-insika-agent header. Before serving,
    the model each learning agent uses is checked (its key in the relay's environment);
    --no-learn runs recall only.
    """
    try:
        from insika_knowledge.relay.main import Options, run
    except ImportError as exc:
        raise missing_extra("the relay", "relay", exc.name or str(exc)) from None
    options = Options(tenants=tenants, unknown=unknown, token_env=token_env, learns=not no_learn,
                      limits=limits_from(max_body_mb, header_timeout, body_timeout),
                      upstream_timeout_s=upstream_timeout)
    run(upstream, agents_file, data_dir, host, port, procedures_mode, database=database, options=options,
        echo=click.echo)


@hookimpl
def register_commands(cli: click.Group) -> None:
    """Attach ``relay`` to `cli`."""
    cli.add_command(relay_command)
