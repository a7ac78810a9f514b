"""``insika-knowledge studio``: serve the Studio with uvicorn and print how to open it."""

from __future__ import annotations

import ipaddress
import os
from collections.abc import Callable
from pathlib import Path

import uvicorn

from insika_knowledge.errors import UserError
from insika_knowledge.memory import Memory
from insika_knowledge.studio import auth
from insika_knowledge.studio.app import create_app


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def serve(
    data_dir: str | os.PathLike[str] | None, host: str, port: int,
    *, echo: Callable[[str], None] = print,
) -> None:
    """Serve the Studio over the data directory until interrupted.

    The admin token is ``$INSIKA_ADMIN_TOKEN``, or a new one printed with the URL.

    Raises:
        UserError: the data directory does not exist, or the port is out of range.
    """
    memory = Memory(data_dir)
    folder = Path(memory.directory)
    if not folder.is_dir():
        raise UserError(
            f"data directory {folder} does not exist: run `insika-knowledge demo --data-dir "
            f"{folder}` or a backfill first, or pass --data-dir"
        )
    if not 0 < port < 65536:
        raise UserError(f"--port {port} is not a TCP port (1-65535)")
    token = os.environ.get(auth.TOKEN_ENV, "").strip()
    app = create_app(memory, token or auth.new_token())
    shown_host = f"[{host}]" if ":" in host else host
    echo(f"Insika Studio on {folder}")
    echo(f"  open   http://{shown_host}:{port}/studio/knowledge")
    if token:
        echo(f"  token  the value of ${auth.TOKEN_ENV}")
    else:
        echo(f"  token  {app.state.token}   (set ${auth.TOKEN_ENV} to choose your own)")
    if not _is_loopback(host):
        echo(f"  warning: listening on {host}, reachable from the network over plain HTTP")
    echo("Stop with Ctrl+C.")
    try:
        uvicorn.run(app, host=host, port=port, log_level="warning", access_log=False)
    finally:
        memory.close()
