"""Who a request is for: tenant, agent, session, and whether memory is on for it.

The caller names them in headers the relay reads and never forwards upstream (their
names and rules are `insika_knowledge.wire.headers`'):

- ``x-insika-tenant``: the tenant (default ``default``), one database per tenant;
- ``x-insika-agent``: the agent whose ``knowledge:`` block applies (none = knowledge off);
- ``x-ace-session`` (or the body's ``session_id``): the session procedures and learning
  are keyed by (`insika_knowledge.wire.headers.session_id`);
- ``x-insika-memory: off``: both memories off for this request (``off``, ``false``, ``0``,
  ``no``, any case).

The body's ``session_id`` is taken out of the body that goes upstream (`without_identity`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from insika_knowledge.ids import DEFAULT_TENANT
from insika_knowledge.wire.headers import AGENT_HEADER, SESSION_FIELD, TENANT_HEADER, memory_on, session_id


@dataclass(frozen=True)
class Identity:
    """The identity of one request (not validated: `insika_knowledge.relay.prepare` checks it).

    Attributes:
        tenant: the tenant name.
        agent: the agent id, None when the header is absent.
        session_id: the session id, None when absent.
        memory: False when ``x-insika-memory: off``.
    """

    tenant: str
    agent: str | None
    session_id: str | None
    memory: bool = True


def identify(headers: Mapping[str, str], body: Mapping[str, Any] | None) -> Identity:
    """Read the identity of a request.

    Args:
        headers: the request headers with lower-case names.
        body: the parsed JSON body, None when it is not a JSON object.
    """
    tenant = headers.get(TENANT_HEADER, "").strip() or DEFAULT_TENANT
    agent = headers.get(AGENT_HEADER, "").strip() or None
    session = session_id(body if body is not None else {}, headers)
    return Identity(tenant, agent, session, memory_on(headers))


def without_identity(body: dict[str, Any]) -> dict[str, Any]:
    """`body` without its ``session_id`` (the object itself when it has none)."""
    if SESSION_FIELD not in body:
        return body
    return {k: v for k, v in body.items() if k != SESSION_FIELD}
