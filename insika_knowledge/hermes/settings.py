"""The provider's settings: Hermes' ``config.yaml`` first, then the environment.

In ``$HERMES_HOME/config.yaml``::

    memory:
      provider: insika
      insika:
        agent: support          # else $INSIKA_AGENT, else "hermes"
        tenant: default         # else $INSIKA_TENANT, else "default"
        data_dir: ~/kb          # else $INSIKA_KNOWLEDGE_HOME, else $HERMES_HOME/insika-knowledge
        database: postgresql://kb@db/insika  # else $INSIKA_DATABASE_URL, else the files of data_dir
        model: openai/gpt-4o-mini   # else $INSIKA_UTILITY_MODEL (no model: nothing is learned)
        base_url: http://...    # an OpenAI-compatible endpoint for the model (optional)
        procedures: false       # also recall a mined procedure into prefetch
        top_k: 5                # and any other key of the knowledge: block

``database`` shares one memory between several Hermes processes: every tenant is a
schema of that PostgreSQL database (an empty value keeps the SQLite files even when
``$INSIKA_DATABASE_URL`` is set).

Every other key of the agent's ``knowledge:`` block (`insika_knowledge.config`) is
accepted too; an unknown key is an error naming it, as for that block.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import yaml

from insika_knowledge.config import KnowledgeConfig, load_config
from insika_knowledge.errors import ConfigError
from insika_knowledge.ids import DEFAULT_TENANT, check_agent, check_tenant
from insika_knowledge.location import HOME_ENV, database_url, is_postgres_url
from insika_knowledge.readers import file_text, load_yaml, yaml_problem

#: The provider's name: ``memory.provider: insika`` and the ``memory.insika`` section.
PROVIDER: Final = "insika"
AGENT_ENV: Final = "INSIKA_AGENT"
TENANT_ENV: Final = "INSIKA_TENANT"
DEFAULT_AGENT: Final = "hermes"
#: Keys of ``memory.insika`` that are the provider's own (the rest go to `KnowledgeConfig`).
OWN_KEYS: Final = ("agent", "tenant", "data_dir", "base_url", "procedures", "database")


@dataclass(frozen=True)
class HermesSettings:
    """Where the provider reads and writes, and how.

    Attributes:
        agent: the agent id whose concepts Hermes gets.
        tenant: the tenant (one database file per tenant).
        data_dir: the data directory.
        knowledge: the ``knowledge:`` settings (model, top_k, types, index...).
        base_url: the OpenAI-compatible endpoint of the model (None = the provider's default
            or ``$OPENAI_BASE_URL``).
        procedures: recall a mined procedure into ``prefetch`` as well.
        database: the ``postgresql://`` URL every tenant is a schema of (None = the SQLite
            files of `data_dir`).
    """

    agent: str
    tenant: str
    data_dir: Path
    knowledge: KnowledgeConfig
    base_url: str | None = None
    procedures: bool = False
    database: str | None = None


def default_hermes_home(env: Mapping[str, str] | None = None) -> Path:
    """``$HERMES_HOME``, else ``~/.hermes`` (Hermes' own rule on Linux and macOS)."""
    value = (os.environ if env is None else env).get("HERMES_HOME", "").strip()
    return Path(value).expanduser() if value else Path.home() / ".hermes"


def read_section(hermes_home: Path) -> dict[str, Any]:
    """The ``memory.insika`` mapping of ``<hermes_home>/config.yaml`` ({} when absent).

    Raises:
        ConfigError: the file is not YAML, or the section is not a mapping.
    """
    path = hermes_home / "config.yaml"
    try:
        data = load_yaml(file_text(path, str(path), ConfigError)) if path.exists() else None
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: not YAML: {yaml_problem(exc)}") from None
    memory = data.get("memory") if isinstance(data, dict) else None
    section = memory.get(PROVIDER) if isinstance(memory, dict) else None
    if section is None:
        return {}
    if not isinstance(section, dict):
        raise ConfigError(f"{path}: memory.{PROVIDER} must be a mapping of settings")
    return dict(section)


def load_settings(hermes_home: Path, env: Mapping[str, str] | None = None) -> HermesSettings:
    """The settings from ``<hermes_home>/config.yaml`` with the environment as fallback.

    Raises:
        ConfigError: a key is unknown or a value invalid (the message names it).
        InvalidName: the agent or tenant name is invalid.
    """
    environ = os.environ if env is None else env
    section = read_section(hermes_home)
    own = {k: section.pop(k) for k in OWN_KEYS if k in section}
    try:
        knowledge = load_config(section)
    except ConfigError as exc:
        raise ConfigError(str(exc).replace("knowledge.", f"memory.{PROVIDER}.")) from None
    assert knowledge is not None
    agent = str(own.get("agent") or environ.get(AGENT_ENV) or DEFAULT_AGENT)
    tenant = str(own.get("tenant") or environ.get(TENANT_ENV) or DEFAULT_TENANT)
    folder = own.get("data_dir") or environ.get(HOME_ENV)
    data_dir = Path(os.path.expandvars(str(folder))).expanduser() if folder else hermes_home / "insika-knowledge"
    procedures = own.get("procedures", False)
    if not isinstance(procedures, bool):
        raise ConfigError(f"memory.{PROVIDER}.procedures: must be true or false")
    base_url = own.get("base_url")
    return HermesSettings(
        agent=check_agent(agent), tenant=check_tenant(tenant), data_dir=data_dir, knowledge=knowledge,
        base_url=str(base_url) if base_url else None, procedures=procedures,
        database=_database(own.get("database"), environ),
    )


def _database(value: object, environ: Mapping[str, str]) -> str | None:
    """The PostgreSQL URL of ``memory.insika.database`` (set, even empty, it wins), else of
    ``$INSIKA_DATABASE_URL``; None for the SQLite files.

    Raises:
        ConfigError: the key is set to something other than a ``postgresql://`` URL.
        UserError: ``$INSIKA_DATABASE_URL`` is (`insika_knowledge.location.database_url`).
    """
    if value is None:
        return database_url(None, environ)
    if not isinstance(value, str) or (value.strip() and not is_postgres_url(value)):
        raise ConfigError(f"memory.{PROVIDER}.database: must be a postgresql:// URL (or empty for the "
                          "SQLite files of data_dir)")
    return database_url(value)


def config_schema() -> list[dict[str, Any]]:
    """The fields ``hermes memory setup`` asks for (Hermes' ``get_config_schema`` shape)."""
    return [
        {"key": "agent", "description": "Agent id whose concepts Hermes learns and recalls",
         "default": DEFAULT_AGENT, "env_var": AGENT_ENV},
        {"key": "tenant", "description": "Tenant (one database file per tenant)",
         "default": DEFAULT_TENANT, "env_var": TENANT_ENV},
        {"key": "data_dir", "description": "Data directory (default: $HERMES_HOME/insika-knowledge)",
         "env_var": HOME_ENV},
        {"key": "model", "description": "Extraction model, e.g. openai/gpt-4o-mini (none: nothing is learned)",
         "env_var": "INSIKA_UTILITY_MODEL"},
    ]


def save_section(values: Mapping[str, Any], hermes_home: Path) -> Path:
    """Write `values` into ``memory.insika`` of ``<hermes_home>/config.yaml`` (other keys kept).

    Returns:
        The file written.

    Raises:
        ConfigError: the file exists and is not a YAML mapping.
    """
    path = hermes_home / "config.yaml"
    data: Any = {}
    if path.exists():
        try:
            data = load_yaml(file_text(path, str(path), ConfigError)) or {}
        except yaml.YAMLError as exc:
            raise ConfigError(f"{path}: not YAML: {yaml_problem(exc)}") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: must be a YAML mapping")
    memory = data.setdefault("memory", {})
    if not isinstance(memory, dict):
        raise ConfigError(f"{path}: memory must be a mapping")
    section = memory.setdefault(PROVIDER, {})
    if not isinstance(section, dict):
        raise ConfigError(f"{path}: memory.{PROVIDER} must be a mapping")
    section.update({k: v for k, v in values.items() if v not in (None, "")})
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True), encoding="utf-8")
    return path
