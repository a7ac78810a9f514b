"""Who may use the relay: tenants from the agents file, access tokens, unknown names.

The relay serves the tenants its agents file (or ``--tenant``) declares, and no other:
a request naming another tenant never opens or creates a database. What happens to it,
and to a model request whose agent is missing or not in the file, is the file's
``unknown`` setting (``--unknown``):

- ``pass`` (the default): the request goes upstream as the client sent it with memory
  off, and the response says why in ``x-insika-memory`` (``off: unknown tenant``,
  ``off: no agent``, ``off: unknown agent``);
- ``refuse``: a ``403`` whose JSON body has the wire format's error shape (the SDKs raise
  their ``PermissionDeniedError``); a request with ``x-insika-memory: off`` still needs a
  known tenant, but not an agent.

A tenant may have an access token: a request for it must then carry it in
``x-insika-token`` (compared in constant time), else it is a ``401`` (the SDKs'
``AuthenticationError``). When any tenant has a token, a request for a tenant the relay
does not know is refused whatever ``unknown`` says (no token could admit it). Tokens are
optional on a loopback address; listening on any other address needs one for every
tenant (`check_exposure`).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Final

from insika_knowledge.errors import UserError
from insika_knowledge.httplimits import is_loopback, token_matches
from insika_knowledge.ids import DEFAULT_TENANT
from insika_knowledge.relay.agents import PASS, REFUSE, TenantAccess
from insika_knowledge.wire.headers import AGENT_HEADER, TENANT_HEADER, TOKEN_HEADER, memory_on

#: Error kinds of a refusal (the ``type`` of the wire format's error body).
AUTHENTICATION: Final = "authentication_error"
PERMISSION: Final = "permission_error"
#: `Access.memory_off` answers.
NO_AGENT: Final = "no agent"
UNKNOWN_AGENT: Final = "unknown agent"
UNKNOWN_TENANT: Final = "unknown tenant"


@dataclass(frozen=True)
class Refusal:
    """A request the relay does not serve.

    Attributes:
        status: the HTTP status (401 or 403).
        kind: the error's ``type`` in the wire format (`AUTHENTICATION`, `PERMISSION`).
        message: what the caller reads: the name refused and what to do.
    """

    status: int
    kind: str
    message: str


class Access:
    """The relay's admission rules (see the module doc).

    Args:
        tenants: tenant name -> its access settings (empty: ``default`` alone, no token).
        listed: every agent id of the agents file.
        unknown: `PASS` or `REFUSE`.
        token: the token of every tenant without one of its own (None: none).
    """

    def __init__(self, tenants: Mapping[str, TenantAccess] | None = None, listed: Collection[str] = (),
                 unknown: str = PASS, token: str | None = None):
        if unknown not in (PASS, REFUSE):
            raise UserError(f"unknown: {unknown!r} is not pass or refuse")
        served = dict(tenants) if tenants else {DEFAULT_TENANT: TenantAccess()}
        self.tokens: dict[str, str | None] = {name: t.token or token for name, t in served.items()}
        self.listed = frozenset(listed)
        self.unknown = unknown
        self.requires_token = any(self.tokens.values())

    @property
    def tenants(self) -> list[str]:
        """The tenants served, sorted."""
        return sorted(self.tokens)

    def tenant_of(self, headers: Mapping[str, str]) -> str:
        """The tenant a request names (``x-insika-tenant``, else ``default``), as sent."""
        return headers.get(TENANT_HEADER, "").strip() or DEFAULT_TENANT

    def admit(self, headers: Mapping[str, str], *, model: bool) -> Refusal | None:
        """None when the request may go on, else why not.

        Args:
            headers: the request headers with lower-case names.
            model: a model request (the agent rules apply), not a passed-through one.
        """
        tenant = self.tenant_of(headers)
        if tenant in self.tokens:
            token = self.tokens[tenant]
            if token is not None and not token_matches(headers.get(TOKEN_HEADER, ""), token):
                return Refusal(401, AUTHENTICATION,
                               f"tenant {tenant!r} needs its access token in the {TOKEN_HEADER} header "
                               "(missing or wrong)")
        elif self.requires_token or self.unknown == REFUSE:
            # behind tokens, which tenants exist is no one's business before a token is shown
            served = "" if self.requires_token else f" (it serves: {', '.join(self.tenants)})"
            return Refusal(403, PERMISSION, f"tenant {tenant[:80]!r} is not served by this relay{served}; "
                           f"name one in {TENANT_HEADER}")
        if model and self.unknown == REFUSE and memory_on(headers):
            off = self.agent_off(headers)
            if off is not None:
                agent = headers.get(AGENT_HEADER, "").strip()[:80]
                said = f"no {AGENT_HEADER} header" if off == NO_AGENT else f"agent {agent!r} is not in the agents file"
                return Refusal(403, PERMISSION, f"{said}: name a configured agent in {AGENT_HEADER}, "
                               "or send x-insika-memory: off")
        return None

    def agent_off(self, headers: Mapping[str, str]) -> str | None:
        """`NO_AGENT` or `UNKNOWN_AGENT` when the request's agent is missing or not listed, else None."""
        agent = headers.get(AGENT_HEADER, "").strip()
        if not agent:
            return NO_AGENT
        return None if agent in self.listed else UNKNOWN_AGENT

    def knows_tenant(self, tenant: str) -> bool:
        """True when `tenant` is served (so its database may be opened or created)."""
        return tenant in self.tokens

    def check_exposure(self, host: str) -> None:
        """Refuse to listen on a non-loopback `host` unless every tenant has a token.

        Raises:
            UserError: `host` is not loopback and a tenant has no token (named).
        """
        if is_loopback(host):
            return
        bare = [name for name, token in self.tokens.items() if token is None]
        if bare:
            raise UserError(
                f"--host {host} is reachable from other machines, and tenant(s) {', '.join(sorted(bare))} "
                "have no access token: give each a token (tenants: NAME: {token: env:VAR} in the agents file) "
                "or one for all (--token-env VAR), or listen on 127.0.0.1"
            )
