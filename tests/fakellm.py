"""A local HTTP server that speaks the OpenAI chat-completions API, for tests (and the
Anthropic messages API on ``POST .../v1/messages``: reach it at `root_url`).

It answers from a script: a list of replies consumed in order (the last one repeats),
or a function of the request. A reply is text (the assistant message content), or
`Status(code)` for an HTTP error, or `Hang(seconds)` to sleep before answering.
Every request body is kept in `requests`, so tests can assert what was sent.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Status:
    code: int
    message: str = "error"
    headers: dict[str, str] = field(default_factory=dict)  # e.g. {"retry-after": "1"}


@dataclass
class Hang:
    seconds: float
    then: str = "[]"


@dataclass
class Page:
    """A 200 whose body is no chat completion (a web page at the wrong base URL)."""

    body: str = "<html>hi</html>"


@dataclass
class Flood:
    """A 200 whose body never ends as JSON: `size` bytes of one string, sent in 64 KiB writes,
    with a ``Content-Length`` when `declared` (else until the connection closes).
    """

    size: int
    declared: bool = False


@dataclass
class Raw:
    """A 200 of these bytes and headers as given (a compressed body, a lying length)."""

    body: bytes
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class Trickle:
    """A 200 that sends one byte every `every` seconds for `seconds` (never a whole answer)."""

    seconds: float
    every: float = 0.2


Reply = str | Status | Hang | Page | Flood | Raw | Trickle


class FakeLLM:
    def __init__(self, replies: list[Reply] | Callable[[dict[str, Any]], Reply] | None = None):
        self.replies = replies if replies is not None else ["[]"]
        self.requests: list[dict[str, Any]] = []
        self.flooded = 0  # bytes of the last `Flood` the server wrote
        self.headers: list[dict[str, str]] = []  # each request's headers, lower-cased names
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1"

    @property
    def root_url(self) -> str:
        """The server without ``/v1``, as an Anthropic client's base URL is given."""
        return self.base_url.removesuffix("/v1")

    def __enter__(self) -> FakeLLM:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def _next(self, body: dict[str, Any]) -> Reply:
        with self._lock:
            self.requests.append(body)
            if callable(self.replies):
                return self.replies(body)
            if len(self.replies) > 1:
                return self.replies.pop(0)
            return self.replies[0]

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:  # keep test output clean
                pass

            def do_POST(self) -> None:  # noqa: N802
                fake.headers.append({k.lower(): v for k, v in self.headers.items()})
                length = int(self.headers.get("content-length", 0))
                body = json.loads(self.rfile.read(length) or b"{}")
                reply = fake._next(body)
                if isinstance(reply, Hang):
                    time.sleep(reply.seconds)
                    reply = reply.then
                if isinstance(reply, Trickle):
                    self.send_response(200)
                    self.send_header("content-type", "application/json")
                    self.send_header("connection", "close")
                    self.end_headers()
                    until = time.monotonic() + reply.seconds
                    try:
                        while time.monotonic() < until:
                            self.wfile.write(b" ")
                            self.wfile.flush()
                            time.sleep(reply.every)
                    except (BrokenPipeError, ConnectionResetError):
                        pass
                    self.close_connection = True
                    return
                if isinstance(reply, Raw):
                    self.send_response(200)
                    for name, value in {"content-type": "application/json", **reply.headers}.items():
                        self.send_header(name, value)
                    if "content-length" not in reply.headers:
                        self.send_header("content-length", str(len(reply.body)))
                    self.end_headers()
                    try:
                        self.wfile.write(reply.body)
                    except (BrokenPipeError, ConnectionResetError):
                        pass
                    return
                if isinstance(reply, Flood):
                    self._flood(reply)
                    return
                if isinstance(reply, Page):
                    data = reply.body.encode()
                    self.send_response(200)
                    self.send_header("content-type", "text/html")
                    self.send_header("content-length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                    return
                if isinstance(reply, Status):
                    payload = {"error": {"message": reply.message, "type": "fake", "code": reply.code}}
                    self._send(reply.code, payload, reply.headers)
                    return
                if self.path.endswith("/messages"):
                    if self.path != "/v1/messages":  # as the real API: a base URL given with /v1 is wrong
                        self._send(404, {"type": "error", "error": {"type": "not_found_error",
                                                                    "message": f"no route {self.path}"}})
                        return
                    self._send(200, {
                        "id": "msg_fake", "type": "message", "role": "assistant",
                        "model": body.get("model", "fake"),
                        "content": [{"type": "text", "text": reply}],
                        "stop_reason": "end_turn", "stop_sequence": None,
                        "usage": {"input_tokens": 10, "output_tokens": 10},
                    })
                    return
                self._send(200, {
                    "id": "chatcmpl-fake",
                    "object": "chat.completion",
                    "created": int(time.time()),
                    "model": body.get("model", "fake"),
                    "choices": [{
                        "index": 0,
                        "message": {"role": "assistant", "content": reply},
                        "finish_reason": "stop",
                    }],
                    "usage": {"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20},
                })

            def _flood(self, reply: Flood) -> None:
                fake.flooded = 0
                self.send_response(200)
                self.send_header("content-type", "application/json")
                if reply.declared:
                    self.send_header("content-length", str(reply.size))
                else:
                    self.send_header("connection", "close")
                self.end_headers()
                chunk = b"x" * 65536
                try:
                    self.wfile.write(b'{"id": "')
                    while fake.flooded < reply.size:
                        self.wfile.write(chunk)
                        fake.flooded += len(chunk)
                except (BrokenPipeError, ConnectionResetError):
                    pass
                self.close_connection = True

            def _send(self, code: int, payload: dict[str, Any], headers: dict[str, str] | None = None) -> None:
                data = json.dumps(payload).encode()
                try:
                    self.send_response(code)
                    for name, value in (headers or {}).items():
                        self.send_header(name, value)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass

        return Handler
