"""Building and running a relay from command-line settings."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from insika_knowledge.errors import UserError
from insika_knowledge.extract.model import check_usable
from insika_knowledge.httplimits import Limits, check_port
from insika_knowledge.ids import check_tenant
from insika_knowledge.memory import Memory
from insika_knowledge.procedures import ProceduresConfig
from insika_knowledge.relay.access import Access
from insika_knowledge.relay.agents import PASS, TenantAccess, load_directory, read_token
from insika_knowledge.relay.app import create_app
from insika_knowledge.relay.runtime import READ_TIMEOUT_S, Relay, RelaySettings, upstream_base
from insika_knowledge.relay.server import serve


@dataclass(frozen=True)
class Options:
    """The relay command's options beyond where it listens.

    Attributes:
        tenants: tenants served besides the agents file's (``--tenant``).
        unknown: ``pass`` or ``refuse`` (None: the agents file's, else ``pass``).
        token_env: the variable holding the token of every tenant without its own.
        learns: hand finished turns to learning (False: ``--no-learn``, recall only).
        limits: what one request may take.
        upstream_timeout_s: seconds the upstream may go silent while it answers (before
            its answer starts, or between two reads of a streamed one; slower: 502).
    """

    tenants: Sequence[str] = ()
    unknown: str | None = None
    token_env: str | None = None
    learns: bool = True
    limits: Limits = field(default_factory=Limits)
    upstream_timeout_s: float = READ_TIMEOUT_S


def build(
    upstream: str,
    agents_file: str,
    data_dir: str | os.PathLike[str] | None,
    procedures_mode: str | None = None,
    database: str | None = None,
    options: Options | None = None,
) -> Relay:
    """A `Relay` from settings (the caller closes it).

    Raises:
        UserError: the upstream URL, the agents file, a tenant name, the token variable or
            the procedures mode is invalid.
    """
    options = options or Options()
    settings = RelaySettings(upstream_base(upstream), read_timeout_s=options.upstream_timeout_s)
    directory = load_directory(agents_file)
    tenants = dict(directory.tenants)
    for name in options.tenants:
        try:
            tenants.setdefault(check_tenant(name), TenantAccess())
        except UserError as exc:
            raise UserError(f"--tenant: {exc}") from None
    token = read_token(f"env:{options.token_env}") if options.token_env else None
    access = Access(tenants, directory.listed, options.unknown or directory.unknown or PASS, token)
    procedures = ProceduresConfig(mode=procedures_mode) if procedures_mode else None
    return Relay(Memory(data_dir, database=database), settings, directory.agents, procedures,
                 access=access, learns=options.learns)


def check_learning(relay: Relay) -> list[str]:
    """Check, at start, the model every learning agent learns with; one line per agent.

    Learning runs in the relay with its own settings: the agents file's ``knowledge.model``
    (else ``$INSIKA_UTILITY_MODEL``) and the relay process's environment for the key
    (``$OPENAI_API_KEY``, ``$OPENAI_BASE_URL``), never a client's credentials.

    Returns:
        ``agent -> model`` for each agent whose turns are learned (none when the relay
        does not learn).

    Raises:
        UserError: an agent with ``extract`` on has no model, or its model cannot be used
            (no key, unknown provider, missing replay file); the message names the agent
            and says how to run recall only (``--no-learn``).
    """
    if not relay.learns:
        return []
    lines: list[str] = []
    for agent_id, agent in sorted(relay.agents.items()):
        if not agent.config.extract:
            continue
        spec = agent.config.resolved_model()
        hint = ("learning uses the relay's own model settings (knowledge.model in the agents file or "
                "$INSIKA_UTILITY_MODEL, the key from the relay's environment), never a client's key: "
                "fix them, or start with --no-learn to run recall only")
        if spec is None:
            raise UserError(f"learning: agent {agent_id} has no model; {hint}")
        try:
            check_usable(relay.memory.model(spec))
        except UserError as exc:
            raise UserError(f"learning: agent {agent_id}: {exc}; {hint}") from None
        lines.append(f"{agent_id} -> {spec}")
    return lines


def run(
    upstream: str,
    agents_file: str,
    data_dir: str | None,
    host: str,
    port: int,
    procedures_mode: str | None = None,
    *,
    database: str | None = None,
    options: Options | None = None,
    echo: Callable[[str], None] = print,
) -> None:
    """Serve a relay until interrupted, after checking it and printing where to point clients.

    Raises:
        UserError: a setting is invalid (see `build`), the port is out of range, a
            non-loopback `host` has a tenant without a token, or learning cannot work
            (`check_learning`).
    """
    if not 0 < port < 65536:
        raise UserError(f"--port {port} is not a TCP port (1-65535)")
    options = options or Options()
    relay = build(upstream, agents_file, data_dir, procedures_mode, database, options)
    try:
        relay.access.check_exposure(host)
        learning = check_learning(relay)
        check_port(host, port, "relay")
    except BaseException:
        relay.close()
        raise
    access = relay.access
    shown = f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"
    limits = options.limits
    echo(f"Insika relay -> {relay.settings.upstream}  (data: {relay.memory.location})")
    echo(f"  tenants                {', '.join(t + (' (token)' if access.tokens[t] else '') for t in access.tenants)}")
    echo(f"  agents with knowledge  {', '.join(sorted(relay.agents)) or '(none)'}")
    if not relay.learns:
        echo("  learning               off (--no-learn): recall only")
    else:
        echo(f"  learning               {'; '.join(learning) or 'no agent has extract on'}")
    echo(f"  unknown names          {access.unknown} (x-insika-memory says why memory is off)")
    echo(f"  procedures mode        {relay.procedures.mode}")
    echo(f"  limits                 body {limits.max_body_bytes // (1024 * 1024)} MiB, headers in "
         f"{limits.header_timeout_s:g} s, body in {limits.body_timeout_s:g} s")
    others = sorted(set(relay.memory.tenants()) - set(access.tenants))
    if others:
        echo(f"  not served             {', '.join(others)} (databases here no tenant entry names)")
    echo(f"  OpenAI clients         base_url={shown}/v1")
    echo(f"  Anthropic clients      base_url={shown}")
    echo(f"  status                 {shown}/health")
    echo("Stop with Ctrl+C.")
    try:
        serve(create_app(relay), host, port, limits)
    finally:
        relay.close()
