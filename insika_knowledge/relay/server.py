"""Running the relay app with uvicorn: in the foreground (the CLI) or on a background thread.

`BackgroundServer` serves any ASGI app on a loopback port in a daemon thread: tests and
the benchmark run the relay (and a fake upstream) with it, and a Python program can
embed the relay the same way. The server adds no ``date`` or ``server`` header of its
own, so the upstream's come through alone.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any, Final

import uvicorn
from starlette.types import ASGIApp

from insika_knowledge import serving
from insika_knowledge.errors import RunTimeFailure
from insika_knowledge.httplimits import Limits

#: What uvicorn logs when an app leaves a response unfinished: the relay does so on purpose
#: when the upstream's stream breaks (`insika_knowledge.relay.asgi.send_stream`), after its
#: own warning, so the client sees the break.
_UNFINISHED: Final = "ASGI callable returned without completing response."


class _Unfinished(logging.Filter):
    """Drops uvicorn's line for a response the relay left unfinished on purpose."""

    def filter(self, record: logging.LogRecord) -> bool:
        return record.msg != _UNFINISHED


def config(app: ASGIApp, host: str, port: int, limits: Limits | None = None, **options: Any) -> uvicorn.Config:
    """The uvicorn settings the relay runs with (quiet, no access log, no own date/server, no
    ``x-forwarded-*`` rewriting: nothing reads the client's address), with `limits` on
    every request (`insika_knowledge.serving`; None: the defaults).
    """
    errors = logging.getLogger("uvicorn.error")
    if not any(isinstance(f, _Unfinished) for f in errors.filters):
        errors.addFilter(_Unfinished())
    settings: dict[str, Any] = {
        "log_level": "warning",
        "access_log": False,
        "server_header": False,
        "date_header": False,
        "proxy_headers": False,
        **options,
    }
    return serving.config(app, host, port, limits, **settings)


def serve(app: ASGIApp, host: str, port: int, limits: Limits | None = None) -> None:
    """Serve `app` until interrupted (Ctrl+C), with `limits` on every request."""
    serving.raise_open_files()
    uvicorn.Server(config(app, host, port, limits)).run()


class BackgroundServer:
    """`app` served by uvicorn on a daemon thread.

    Args:
        app: the ASGI app.
        host: the address to listen on.
        port: the TCP port (0: any free one; `url` tells which).
        options: more `uvicorn.Config` settings.
    """

    def __init__(self, app: ASGIApp, host: str = "127.0.0.1", port: int = 0, limits: Limits | None = None,
                 **options: Any):
        self.server = uvicorn.Server(config(app, host, port, limits, **options))
        self._thread = threading.Thread(target=self.server.run, name="insika-relay-server", daemon=True)
        self.host = host
        self.port = port

    @property
    def url(self) -> str:
        """``http://host:port`` of the running server."""
        return f"http://{self.host}:{self.port}"

    def start(self, timeout_s: float = 10.0) -> BackgroundServer:
        """Start serving; return once the server listens.

        Raises:
            RunTimeFailure: the server did not start within `timeout_s` seconds.
        """
        self._thread.start()
        deadline = time.monotonic() + timeout_s
        while not self.server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise RunTimeFailure(f"the server on {self.host}:{self.port} did not start")
            time.sleep(0.01)
        self.port = self.server.servers[0].sockets[0].getsockname()[1]
        return self

    def stop(self, timeout_s: float = 10.0) -> None:
        """Stop serving (open streams are cut after `timeout_s` seconds)."""
        self.server.should_exit = True
        self._thread.join(timeout_s)
        if self._thread.is_alive():
            self.server.force_exit = True
            self._thread.join(timeout_s)

    def __enter__(self) -> BackgroundServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
