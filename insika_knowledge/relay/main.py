"""Building and running a relay from command-line settings."""

from __future__ import annotations

import os
from collections.abc import Callable

from insika_knowledge.errors import UserError
from insika_knowledge.memory import Memory
from insika_knowledge.procedures import ProceduresConfig
from insika_knowledge.relay.agents import load_agents
from insika_knowledge.relay.app import create_app
from insika_knowledge.relay.runtime import Relay, RelaySettings, upstream_base
from insika_knowledge.relay.server import serve


def build(
    upstream: str,
    agents_file: str,
    data_dir: str | os.PathLike[str] | None,
    procedures_mode: str | None = None,
    database: str | None = None,
) -> Relay:
    """A `Relay` from settings (the caller closes it).

    Raises:
        UserError: the upstream URL, the agents file or the procedures mode is invalid.
    """
    settings = RelaySettings(upstream_base(upstream))
    agents = load_agents(agents_file)
    procedures = ProceduresConfig(mode=procedures_mode) if procedures_mode else None
    return Relay(Memory(data_dir, database=database), settings, agents, procedures)


def run(
    upstream: str,
    agents_file: str,
    data_dir: str | None,
    host: str,
    port: int,
    procedures_mode: str | None = None,
    *,
    database: str | None = None,
    echo: Callable[[str], None] = print,
) -> None:
    """Serve a relay until interrupted, after printing where to point clients.

    Raises:
        UserError: a setting is invalid (see `build`), or the port is out of range.
    """
    if not 0 < port < 65536:
        raise UserError(f"--port {port} is not a TCP port (1-65535)")
    relay = build(upstream, agents_file, data_dir, procedures_mode, database)
    shown = f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"
    echo(f"Insika relay -> {relay.settings.upstream}  (data: {relay.memory.location})")
    echo(f"  agents with knowledge  {', '.join(sorted(relay.agents)) or '(none)'}")
    echo(f"  procedures mode        {relay.procedures.mode}")
    echo(f"  OpenAI clients         base_url={shown}/v1")
    echo(f"  Anthropic clients      base_url={shown}")
    echo("Stop with Ctrl+C.")
    try:
        serve(create_app(relay), host, port)
    finally:
        relay.close()
