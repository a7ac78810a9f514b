"""The relay's agents file: who the relay serves, and each agent's ``knowledge:`` block.

The short form maps agent ids to their settings:

```yaml
store-support:
  knowledge:
    model: openai/gpt-4o-mini
    top_k: 5
billing-bot:            # listed without a block: known, knowledge off
```

The long form also names the tenants the relay serves (with an optional access token
each) and what happens to a request for a tenant or agent it does not know:

```yaml
tenants:
  loja-a: {token: env:LOJA_A_TOKEN}   # the token read from $LOJA_A_TOKEN at start
  loja-b: {}                          # no token of its own (--token-env's, if any)
agents:
  store-support:
    knowledge: {model: openai/gpt-4o-mini}
unknown: refuse                       # or pass (the default)
```

A file whose top-level keys are only ``agents``, ``tenants`` and ``unknown`` (with
``agents`` among them) is read in the long form. An agent listed without a ``knowledge:``
block is known (never refused) and has knowledge off; the procedures hook still runs for
it. Every block is validated when the file is read, so a typo stops the relay at start
rather than degrading requests later. Tenants are never created for a name nobody
declared: see `insika_knowledge.relay.access`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import yaml

from insika_knowledge.config import KnowledgeConfig, load_config
from insika_knowledge.errors import InsikaError, UserError
from insika_knowledge.httplimits import check_token
from insika_knowledge.ids import check_agent, check_tenant
from insika_knowledge.readers import file_text, load_yaml, yaml_problem

#: The top-level keys of the long form.
LONG_FORM_KEYS: Final = frozenset({"agents", "tenants", "unknown"})
#: What happens to a request for a tenant or agent the relay does not know.
PASS: Final = "pass"
REFUSE: Final = "refuse"
UNKNOWN_POLICIES: Final = (PASS, REFUSE)
#: A token value of this prefix names the environment variable holding the token.
ENV_PREFIX: Final = "env:"


@dataclass(frozen=True)
class AgentKnowledge:
    """One agent's knowledge settings.

    Attributes:
        config: the validated block.
        block: the block as written (what `insika_knowledge.sessions.AgentSpec` carries).
    """

    config: KnowledgeConfig
    block: Mapping[str, Any]


@dataclass(frozen=True)
class TenantAccess:
    """One tenant the relay serves.

    Attributes:
        token: the access token a request for it must carry in ``x-insika-token`` (None:
            none of its own).
    """

    token: str | None = None


@dataclass(frozen=True)
class Directory:
    """Everything an agents file says.

    Attributes:
        agents: agent id -> knowledge settings, for the agents with a ``knowledge:`` block.
        listed: every agent id the file names (with a block or without).
        tenants: tenant name -> its access settings (empty: the file names none).
        unknown: `PASS` or `REFUSE`; None when the file does not say.
    """

    agents: dict[str, AgentKnowledge] = field(default_factory=dict)
    listed: frozenset[str] = frozenset()
    tenants: dict[str, TenantAccess] = field(default_factory=dict)
    unknown: str | None = None


def agents_from(data: Any, *, where: str = "agents") -> dict[str, AgentKnowledge]:
    """Validate an agents mapping (``{agent id: {"knowledge": block}}``).

    Args:
        data: the parsed file (None or {} for no agents).
        where: the file's name, for messages.

    Returns:
        Agent id -> its settings, for the agents that have a block.

    Raises:
        UserError: the data is not such a mapping, an agent id is invalid, or a block is
            invalid (the message names the file, the agent and the key).
    """
    return directory_from(data, where=where).agents


def directory_from(data: Any, *, where: str = "agents") -> Directory:
    """Validate a parsed agents file in either form (see the module doc).

    Args:
        data: the parsed file (None or {} for no agents).
        where: the file's name, for messages.

    Raises:
        UserError: the file is not such a mapping, an id or a tenant name is invalid, a
            block is invalid, a token's variable is unset, or ``unknown`` is neither
            ``pass`` nor ``refuse`` (the message names the file and the entry).
    """
    if data is None:
        return Directory()
    if not isinstance(data, Mapping):
        raise UserError(f"{where}: expected a mapping of agent ids to settings")
    if "agents" not in data and "tenants" in data:  # the long form, its agents: misspelt or missing
        others = sorted(str(k) for k in set(data) - LONG_FORM_KEYS)
        stray = f"; unknown: {', '.join(others)}" if others else ""
        raise UserError(f"{where}: tenants: is given without agents: (the long form's keys are "
                        f"{', '.join(sorted(LONG_FORM_KEYS))}{stray})")
    if "agents" in data and not set(data) <= LONG_FORM_KEYS:
        others = sorted(str(k) for k in set(data) - LONG_FORM_KEYS)  # the long form, a key misspelt
        raise UserError(f"{where}: unknown top-level key {others[0]!r} beside agents: (the long form's keys "
                        f"are {', '.join(sorted(LONG_FORM_KEYS))}; an agent called agents is listed under agents:)")
    if "agents" in data:
        unknown = data.get("unknown")
        if unknown is not None and unknown not in UNKNOWN_POLICIES:
            raise UserError(f"{where}: unknown: {unknown!r} is not one of {', '.join(UNKNOWN_POLICIES)}")
        agents, listed = _agents(data.get("agents"), where)
        return Directory(agents, listed, _tenants(data.get("tenants"), where), unknown)
    agents, listed = _agents(data, where)
    return Directory(agents, listed)


def _agents(data: Any, where: str) -> tuple[dict[str, AgentKnowledge], frozenset[str]]:
    if data is None:
        return {}, frozenset()
    if not isinstance(data, Mapping):
        raise UserError(f"{where}: agents: expected a mapping of agent ids to settings")
    agents: dict[str, AgentKnowledge] = {}
    for agent, settings in data.items():
        _text_id(agent, f"{where}: agent id")
        try:
            check_agent(str(agent))
            block = _only(settings, "knowledge")
            config = load_config(block)
        except InsikaError as exc:
            raise UserError(f"{where}: agent {agent}: {exc}") from None
        if config is not None and block is not None:
            agents[str(agent)] = AgentKnowledge(config, dict(block))
    return agents, frozenset(str(a) for a in data)


def _text_id(key: object, what: str) -> None:
    """Refuse an id YAML read as no text (``010`` is 8, ``yes`` is True): ``WHAT 8 is read
    as int, not text: write it in quotes``.
    """
    if not isinstance(key, str):
        raise UserError(f"{what} {key!r} is read as {type(key).__name__}, not text: write it in quotes")


def _tenants(data: Any, where: str) -> dict[str, TenantAccess]:
    if data is None:
        return {}
    if isinstance(data, list):
        data = {name: None for name in data}
    if not isinstance(data, Mapping):
        raise UserError(f"{where}: tenants: expected a list of names or a mapping of names to settings")
    tenants: dict[str, TenantAccess] = {}
    for name, settings in data.items():
        _text_id(name, f"{where}: tenant")
        try:
            check_tenant(str(name))
            token = _only(settings, "token")
            tenants[str(name)] = TenantAccess(None if token is None else read_token(str(token)))
        except InsikaError as exc:
            raise UserError(f"{where}: tenant {name}: {exc}") from None
    return tenants


def _only(settings: Any, key: str) -> Any:
    """The value of `key` in an entry's `settings` (None or a mapping holding no other key).

    Raises:
        UserError: `settings` is not a mapping, or holds another key.
    """
    if settings is not None and not isinstance(settings, Mapping):
        raise UserError(f"expected a mapping ({key}:) or nothing")
    unknown = set(settings or {}) - {key}
    if unknown:
        raise UserError(f"unknown key {sorted(unknown)[0]!r} (only {key}:)")
    return (settings or {}).get(key)


def read_token(value: str) -> str:
    """A token as written: ``env:NAME`` reads ``$NAME``; anything else is the token itself.

    Raises:
        UserError: the variable is unset or empty, or the token is unusable
            (`insika_knowledge.serving.check_token`).
    """
    token = value
    if value.startswith(ENV_PREFIX):
        name = value.removeprefix(ENV_PREFIX)
        token = os.environ.get(name, "")
        if not token:
            raise UserError(f"token: ${name} is not set")
    return check_token(token, "token")


def load_directory(path: str | Path) -> Directory:
    """Read and validate an agents file (see the module doc).

    Raises:
        UserError: the file cannot be read, is not YAML, or is invalid (`directory_from`).
    """
    source = Path(path)
    try:
        data = load_yaml(file_text(source, f"--agents {source}"))
    except yaml.YAMLError as exc:
        raise UserError(f"--agents {source}: not YAML: {yaml_problem(exc)}") from None
    return directory_from(data, where=str(source))


def load_agents(path: str | Path) -> dict[str, AgentKnowledge]:
    """The agents with a ``knowledge:`` block in an agents file (`load_directory`'s ``agents``).

    Raises:
        UserError: as `load_directory`.
    """
    return load_directory(path).agents
