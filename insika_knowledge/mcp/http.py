"""The MCP server over Streamable HTTP: the SDK's app, an optional bearer token, request limits.

`serve_http` runs `MCPServer.streamable_http_app` (one session per client connection, the
SDK's DNS-rebinding protection on a loopback address) under uvicorn with
`insika_knowledge.serving`'s limits. With a token, every request must carry
``Authorization: Bearer <token>`` (`BearerGate`), else it is answered ``401`` before the
SDK sees it.
"""

from __future__ import annotations

import json
from typing import Any

import uvicorn
from mcp.server.mcpserver import MCPServer
from starlette.types import ASGIApp, Receive, Scope, Send

from insika_knowledge import serving
from insika_knowledge.httplimits import Limits, token_matches

#: Where the MCP endpoint is served.
PATH = "/mcp"


class BearerGate:
    """ASGI middleware: HTTP requests without ``Authorization: Bearer <token>`` get ``401``.

    Args:
        app: the app behind the gate.
        token: the token every request must carry.
    """

    def __init__(self, app: ASGIApp, token: str):
        self.app = app
        self.token = token

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Pass lifespan and authorised requests on; answer the others ``401``."""
        if scope["type"] == "http":
            sent = dict(scope["headers"]).get(b"authorization", b"").decode("latin-1")
            scheme, _, value = sent.partition(" ")
            if scheme.lower() != "bearer" or not token_matches(value.strip(), self.token):
                body = json.dumps({"error": "unauthorized",
                                   "error_description": "send 'Authorization: Bearer <token>' (the server's "
                                                        "--token-env token)"}).encode()
                await send({"type": "http.response.start", "status": 401, "headers": [
                    (b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                    (b"www-authenticate", b'Bearer realm="insika-knowledge"')]})
                await send({"type": "http.response.body", "body": body})
                return
        await self.app(scope, receive, send)


def http_app(server: MCPServer[Any], host: str, *, token: str | None = None,
             limits: Limits | None = None) -> ASGIApp:
    """The server's Streamable HTTP app (path ``/mcp``), behind `BearerGate` when `token` is
    given; the SDK's own body cap is set to `limits`' (it would refuse beyond 4 MiB alone).
    """
    body_cap = (limits or Limits()).max_body_bytes
    app: ASGIApp = server.streamable_http_app(streamable_http_path=PATH, host=host, max_request_body_size=body_cap)
    return BearerGate(app, token) if token is not None else app


def serve_http(server: MCPServer[Any], host: str, port: int, *, token: str | None = None,
               limits: Limits | None = None) -> None:
    """Serve `server` over Streamable HTTP on `host`:`port` until interrupted."""
    serving.raise_open_files()
    app = http_app(server, host, token=token, limits=limits)
    uvicorn.Server(serving.config(app, host, port, limits, log_level="warning")).run()
