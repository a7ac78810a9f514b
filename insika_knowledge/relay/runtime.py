"""`Relay`: what one relay process holds, from start to shutdown.

A `Memory` over the data directory (each tenant's retrieval, procedural memory and
learning hand-off, `insika_knowledge.tenant.Tenant`), the agents file, who may use the
relay (`insika_knowledge.relay.access.Access`), and the pool of connections to the
upstream (`insika_knowledge.relay.client.Upstream`, opened by the app's lifespan). The
memory's learning worker starts with the relay (unless it does not learn), so turns an
earlier relay left queued are learned without new traffic.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Final
from urllib.parse import urlsplit

import httpx

from insika_knowledge.errors import UserError
from insika_knowledge.httplimits import UPSTREAM_TIMEOUT_S
from insika_knowledge.memory import Memory
from insika_knowledge.procedures import ProceduralMemory, ProceduresConfig
from insika_knowledge.relay.access import Access
from insika_knowledge.relay.agents import AgentKnowledge
from insika_knowledge.relay.client import Upstream
from insika_knowledge.relay.degraded import DegradedLog

#: Rounds of ``load_knowledge`` the relay answers for one request; the last continuation
#: is sent with tool calls switched off, so the client always gets an answer.
MAX_ROUNDS: Final = 3
#: Upstream timeouts, seconds: connecting, and between two reads of a (streamed) answer.
CONNECT_TIMEOUT_S: Final = 10.0
READ_TIMEOUT_S: Final = UPSTREAM_TIMEOUT_S
PROCEDURES_MODE_ENV: Final = "INSIKA_PROCEDURES_MODE"


def upstream_base(url: str) -> str:
    """The upstream origin (and path prefix) requests are forwarded to, without a trailing
    ``/`` or ``/v1`` (the relay appends the request's own ``/v1/...`` path).

    Raises:
        UserError: `url` is not an http(s) URL.
    """
    parts = urlsplit(url.strip())
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise UserError(f"--upstream {url!r} is not an http(s) URL, e.g. https://api.openai.com")
    path = parts.path.rstrip("/")
    if path.endswith("/v1"):
        path = path[: -len("/v1")]
    return f"{parts.scheme}://{parts.netloc}{path}"


@dataclass(frozen=True)
class RelaySettings:
    """How a relay runs.

    Attributes:
        upstream: the upstream base URL (`upstream_base` form).
        max_rounds: ``load_knowledge`` rounds per request (`MAX_ROUNDS`).
        connect_timeout_s: seconds to connect to the upstream.
        read_timeout_s: seconds to wait between two reads of an upstream answer.
        max_connections: concurrent upstream connections at most.
    """

    upstream: str
    max_rounds: int = MAX_ROUNDS
    connect_timeout_s: float = CONNECT_TIMEOUT_S
    read_timeout_s: float = READ_TIMEOUT_S
    max_connections: int = 512


class Relay:
    """The state of one relay.

    Args:
        memory: the memory (its data directory holds every tenant's database).
        settings: upstream and limits.
        agents: agent id -> knowledge settings (`insika_knowledge.relay.agents.load_agents`).
        procedures: the procedural-memory settings (None: mode from
            ``$INSIKA_PROCEDURES_MODE``, else ``shadow``).
        access: the tenants served and the rules for unknown names (None: the tenant
            ``default`` alone, no token; unknown names pass with memory off). The agents
            of `agents` are known whatever `access` lists.
        learns: hand finished turns to learning (False: recall only, ``--no-learn``; the
            learning worker is not started).
    """

    def __init__(
        self,
        memory: Memory,
        settings: RelaySettings,
        agents: dict[str, AgentKnowledge],
        procedures: ProceduresConfig | None = None,
        *,
        access: Access | None = None,
        learns: bool = True,
    ):
        self.memory = memory
        self.settings = settings
        self.agents = agents
        self.procedures = procedures or ProceduresConfig(mode=os.environ.get(PROCEDURES_MODE_ENV, "shadow"))
        self.access = access or Access()
        self.access.listed |= frozenset(agents)
        self.learns = learns
        self.degraded = DegradedLog(memory.events)
        self._client: Upstream | None = None
        if learns:
            memory.start_learning()

    @property
    def client(self) -> Upstream:
        """The upstream connection pool.

        Raises:
            RuntimeError: the app has not started (its lifespan opens the client).
        """
        if self._client is None:
            raise RuntimeError("the relay's upstream client is not open: start the app first")
        return self._client

    def open_client(self) -> None:
        """Create the upstream connection pool (in the event loop that will use it)."""
        if self._client is None:
            timeout = httpx.Timeout(self.settings.read_timeout_s, connect=self.settings.connect_timeout_s)
            limits = httpx.Limits(
                max_connections=self.settings.max_connections,
                max_keepalive_connections=self.settings.max_connections,
            )
            self._client = Upstream(timeout, limits)

    async def close_client(self) -> None:
        """Close the upstream connection pool."""
        client, self._client = self._client, None
        if client is not None:
            await client.aclose()

    def skill(self, tenant: str) -> ProceduralMemory:
        """The tenant's procedural memory, opened (and its sweeper started) on first use.

        Raises:
            InvalidName: the tenant name is invalid.
        """
        return self.memory.tenant(tenant).procedures(self.procedures)

    def opened_skill(self, tenant: str) -> ProceduralMemory | None:
        """The tenant's procedural memory if `skill` has opened it, else None (never opens it)."""
        opened = self.memory.opened(tenant)
        return None if opened is None else opened.opened_procedures()

    def close(self) -> None:
        """Finish the turn being learned, stop the sweepers and close every store."""
        self.memory.close()
