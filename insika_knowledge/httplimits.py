"""What every HTTP server of the package shares without running one: its request limits,
their command-line options, and the rules for access tokens and loopback addresses.

`insika_knowledge.serving` enforces `Limits` under uvicorn; this module imports no server,
so a command can declare its options (`limit_options`) before its extra is installed.
"""

from __future__ import annotations

import hmac
import ipaddress
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final, TypeVar

import click

from insika_knowledge.errors import RunTimeFailure, UserError

F = TypeVar("F", bound=Callable[..., Any])

#: Seconds an upstream a server forwards to (the relay's model API) may stay silent while it
#: answers: before its answer starts, or between two reads of a streamed one.
UPSTREAM_TIMEOUT_S: Final = 600.0


@dataclass(frozen=True)
class Limits:
    """What one request may take from a server.

    Attributes:
        max_body_bytes: the largest request body, in bytes.
        max_header_bytes: the largest request line and headers together, in bytes.
        header_timeout_s: seconds a request's headers may take to arrive.
        body_timeout_s: seconds a request's body may take to arrive, after its headers.
    """

    max_body_bytes: int = 32 * 1024 * 1024
    max_header_bytes: int = 64 * 1024
    header_timeout_s: float = 10.0
    body_timeout_s: float = 60.0

    def __post_init__(self) -> None:
        if self.max_body_bytes < 1024 or self.max_header_bytes < 1024:
            raise ValueError("max_body_bytes and max_header_bytes must be at least 1024")
        if self.header_timeout_s <= 0 or self.body_timeout_s <= 0:
            raise ValueError("header_timeout_s and body_timeout_s must be positive")


class Seconds(click.FloatRange):
    """A number of seconds in a range: `click.FloatRange`, which lets "nan" through (every
    comparison with it is false), and which this refuses.
    """

    name = "seconds"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        """`value` as seconds in range; "nan" fails as a bad value of `param`."""
        number = super().convert(value, param, ctx)
        if math.isnan(number):
            self.fail(f"{value!r} is not a number of seconds", param, ctx)
        return number


def limit_options(body_mb: int | None) -> Callable[[F], F]:
    """``--max-body-mb`` (default `body_mb`; left out when None: a fixed cap),
    ``--header-timeout`` and ``--body-timeout`` on a command; `limits_from` turns their
    values into `Limits`.
    """
    options = [
        click.option("--header-timeout", type=Seconds(0.1, 600), default=10.0, show_default=True,
                     help="Seconds a request's headers may take to arrive (slower: 408)."),
        click.option("--body-timeout", type=Seconds(0.1, 3600), default=60.0, show_default=True,
                     help="Seconds a request's body may take to arrive after its headers (slower: 408)."),
    ]
    if body_mb is not None:
        options.insert(0, click.option("--max-body-mb", type=click.IntRange(1, 1024), default=body_mb,
                                       show_default=True, help="The largest request body, in MiB (larger: 413)."))

    def decorate(command: F) -> F:
        for option in reversed(options):
            command = option(command)
        return command
    return decorate


def limits_from(max_body_mb: int, header_timeout: float, body_timeout: float) -> Limits:
    """The `Limits` of `limit_options`' values."""
    return Limits(max_body_bytes=max_body_mb * 1024 * 1024, header_timeout_s=header_timeout,
                  body_timeout_s=body_timeout)


#: The shortest access token a server accepts.
TOKEN_MIN_CHARS: Final = 16


def check_port(host: str, port: int, server: str = "server", option: str = "--port") -> None:
    """Check that `host`:`port` can be listened on now, by binding it once and letting go.

    Binds every address `host` resolves to, as uvicorn's server will (``SO_REUSEADDR``,
    so a port in TIME_WAIT passes; IPv6 sockets IPv6-only), so that a port in use fails
    before anything is printed (uvicorn would print its own error and exit 3 after the
    server's banner). Another program can still take the port between this check and
    uvicorn's bind; uvicorn then reports it.

    Args:
        host: the address to listen on.
        port: the TCP port.
        server: what listens, for the message ("Studio", "relay").
        option: the command's option that chooses the port, for the message.

    Raises:
        UserError: `host` cannot be resolved, or is not an address of this machine.
        RunTimeFailure: the port is in use, or binding it is not allowed.
    """
    import errno
    import socket

    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as exc:
        raise UserError(f"--host {host}: {exc.strerror or exc}") from None
    for family, kind, proto, _, address in dict.fromkeys(infos):
        with socket.socket(family, kind, proto) as sock:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if family == socket.AF_INET6:
                sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            try:
                sock.bind(address)
            except OSError as exc:
                if exc.errno == errno.EADDRINUSE:
                    raise RunTimeFailure(
                        f"port {port} on {host} is in use (another {server}?): stop it, or pass {option} "
                        "with a free port"
                    ) from None
                if exc.errno == errno.EADDRNOTAVAIL:
                    raise UserError(f"--host {host}: not an address of this machine") from None
                raise RunTimeFailure(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None


def is_loopback(host: str) -> bool:
    """True for ``localhost`` and loopback addresses (127.0.0.0/8, ::1): reachable from this machine only."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_token(token: str, where: str) -> str:
    """Return `token` when it is usable as an access token, else raise.

    Raises:
        UserError: empty (its variable unset), shorter than `TOKEN_MIN_CHARS`, not
            printable, or with surrounding spaces (`where` names the setting in the message).
    """
    if not token:
        raise UserError(f"{where}: the variable is unset or empty: set it to a token of at least "
                        f"{TOKEN_MIN_CHARS} printable characters")
    if len(token) < TOKEN_MIN_CHARS or not token.isprintable() or token != token.strip():
        raise UserError(f"{where}: a token needs at least {TOKEN_MIN_CHARS} printable characters, "
                        "no surrounding spaces")
    return token


def token_matches(sent: str, token: str) -> bool:
    """True when `sent` is `token` (compared in constant time)."""
    return hmac.compare_digest(sent.encode("utf-8", "replace"), token.encode("utf-8"))
