"""The relay's agents file: agent ids mapped to their ``knowledge:`` block.

```yaml
store-support:
  knowledge:
    model: openai/gpt-4o-mini
    top_k: 5
billing-bot:
  knowledge:
    extract: false
```

An agent that is not in the file, or has no ``knowledge:`` block, has knowledge off (the
procedures ``request`` hook still runs for it). Every block is validated when the file is
read, so a typo stops the relay at start rather than degrading requests later.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from insika_knowledge.config import KnowledgeConfig, load_config
from insika_knowledge.errors import InsikaError, UserError
from insika_knowledge.ids import check_agent


@dataclass(frozen=True)
class AgentKnowledge:
    """One agent's knowledge settings.

    Attributes:
        config: the validated block.
        block: the block as written (what `insika_knowledge.sessions.AgentSpec` carries).
    """

    config: KnowledgeConfig
    block: Mapping[str, Any]


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
    if data is None:
        return {}
    if not isinstance(data, Mapping):
        raise UserError(f"{where}: expected a mapping of agent ids to settings")
    agents: dict[str, AgentKnowledge] = {}
    for agent, settings in data.items():
        try:
            check_agent(str(agent))
            if settings is not None and not isinstance(settings, Mapping):
                raise UserError("expected a mapping with a knowledge: block")
            unknown = set(settings or {}) - {"knowledge"}
            if unknown:
                raise UserError(f"unknown key {sorted(unknown)[0]!r} (only knowledge:)")
            block = (settings or {}).get("knowledge")
            config = load_config(block)
        except InsikaError as exc:
            raise UserError(f"{where}: agent {agent}: {exc}") from None
        if config is not None and block is not None:
            agents[str(agent)] = AgentKnowledge(config, dict(block))
    return agents


def load_agents(path: str | Path) -> dict[str, AgentKnowledge]:
    """Read and validate an agents file (see the module doc).

    Raises:
        UserError: the file cannot be read, is not YAML, or is invalid (`agents_from`).
    """
    source = Path(path)
    try:
        data = yaml.safe_load(source.read_text(encoding="utf-8"))
    except OSError as exc:
        raise UserError(f"--agents {source}: {exc.strerror or exc}") from None
    except yaml.YAMLError as exc:
        raise UserError(f"--agents {source}: not YAML ({exc})") from None
    return agents_from(data, where=str(source))
