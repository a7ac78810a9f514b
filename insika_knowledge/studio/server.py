"""``insika-knowledge studio``: serve the Studio with uvicorn and print how to open it."""

from __future__ import annotations

import ipaddress
import os
from collections.abc import Callable, Sequence
from pathlib import Path

import uvicorn

from insika_knowledge import serving
from insika_knowledge.errors import UserError
from insika_knowledge.httplimits import Limits, check_port, is_loopback
from insika_knowledge.memory import Memory
from insika_knowledge.studio import auth
from insika_knowledge.studio.app import create_app
from insika_knowledge.studio.hosts import LOOPBACK_HOSTS, normalize_host
from insika_knowledge.studio.limits import MAX_BODY_BYTES


def _is_unspecified(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_unspecified
    except ValueError:
        return False


def allowed_hosts(host: str, extra: Sequence[str] = ()) -> tuple[str, ...]:
    """The names the Studio answers to: the loopback names, the listening address unless
    it is a wildcard (``0.0.0.0``, ``::``), then `extra`, normalised, without repeats.

    Raises:
        UserError: a name of `extra` is not a host name or address.
    """
    bound = () if _is_unspecified(host) else (host,)
    return tuple(dict.fromkeys(normalize_host(h) for h in (*LOOPBACK_HOSTS, *bound, *extra)))


def open_host(host: str) -> str:
    """The host to print in the URL to open: `host`, or for a wildcard (``0.0.0.0``, ``::``)
    the loopback address of its family, which the Studio answers to (`allowed_hosts`); an
    IPv6 address in brackets.
    """
    if _is_unspecified(host):
        host = "::1" if ":" in host else "127.0.0.1"
    return f"[{host}]" if ":" in host else host


def serve(
    data_dir: str | os.PathLike[str] | None, host: str, port: int,
    *, allowed: Sequence[str] = (), database: str | None = None, echo: Callable[[str], None] = print,
    header_timeout_s: float = 10.0, body_timeout_s: float = 60.0,
) -> None:
    """Serve the Studio over the data directory (or a PostgreSQL database) until interrupted.

    The admin token is ``$INSIKA_ADMIN_TOKEN`` (at least `auth.MIN_TOKEN_LENGTH`
    characters), or a new one printed with the URL. The Studio answers only to the
    host names of `allowed_hosts` (``--allowed-host`` adds to them).

    Args:
        data_dir: the data directory (its SQLite files).
        host: the address to listen on.
        port: the TCP port.
        allowed: host names to answer to beyond `allowed_hosts`' defaults (``--allowed-host``).
        database: a ``postgresql://`` URL (None = ``$INSIKA_DATABASE_URL``); then the
            data directory is not used.
        echo: where the start-up lines go.
        header_timeout_s: seconds a request's headers may take to arrive (then 408).
        body_timeout_s: seconds a request's body may take after its headers (then 408).

    Raises:
        UserError: the data directory does not exist, the database cannot be reached, the
            port is out of range, the host is not an address of this machine,
            ``$INSIKA_ADMIN_TOKEN`` is too short, or an allowed host is not a name.
        RunTimeFailure: the port is in use (checked before anything is printed).
    """
    memory = Memory(data_dir, database=database)
    folder = Path(memory.directory)
    if memory.database:
        memory.tenants()  # an unreachable database fails now, not on the first page
    elif not folder.is_dir():
        raise UserError(
            f"data directory {folder} does not exist: run `insika-knowledge demo --data-dir "
            f"{folder}` or a backfill first, or pass --data-dir"
        )
    if not 0 < port < 65536:
        raise UserError(f"--port {port} is not a TCP port (1-65535)")
    check_port(host, port, "Studio")
    token = os.environ.get(auth.TOKEN_ENV, "").strip()
    problem = auth.token_problem(token) if token else None
    if problem is not None:
        raise UserError(f"${auth.TOKEN_ENV} is refused: {problem}")
    hosts = allowed_hosts(host, allowed)
    app = create_app(memory, token or auth.new_token(), allowed_hosts=hosts)
    shown_host = open_host(host)
    echo(f"Insika Studio on {memory.location}")
    echo(f"  open   http://{shown_host}:{port}/studio/knowledge")
    if token:
        echo(f"  token  the value of ${auth.TOKEN_ENV}")
    else:
        echo(f"  token  {app.state.token}   (set ${auth.TOKEN_ENV} to choose your own)")
    echo(f"  hosts  {', '.join(hosts)}   (the Host names it answers to; add with --allowed-host)")
    if not is_loopback(host):
        echo(f"  warning: listening on {host}, reachable from the network over plain HTTP")
    echo("Stop with Ctrl+C.")
    try:
        # proxy_headers=False: the Studio reads X-Forwarded-For itself, for the login throttle
        # only, and only from a proxy on this machine (`throttle.client_address`).
        # Limits below the app too (`insika_knowledge.serving`): the same body cap as
        # `limits.BodyLimit`, and header and body timeouts, so slow clients cannot hold it.
        limits = Limits(max_body_bytes=MAX_BODY_BYTES, header_timeout_s=header_timeout_s,
                        body_timeout_s=body_timeout_s)
        serving.raise_open_files()
        uvicorn.run(app, host=host, port=port, log_level="warning", access_log=False, proxy_headers=False,
                    http=serving.protocol(limits))
    finally:
        memory.close()
