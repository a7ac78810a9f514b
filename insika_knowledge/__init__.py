"""insika-knowledge: a memory for agent engines that learns from its own conversations.

The front door is `Memory`; the engine plugin is `insika_knowledge.plugin.plugin`.
"""

from __future__ import annotations

__version__ = "0.1.0"

from insika_knowledge.concept import Concept, normalize_name, parse, serialize  # noqa: E402
from insika_knowledge.config import KnowledgeConfig, load_config  # noqa: E402
from insika_knowledge.errors import (  # noqa: E402
    ConceptFormatError,
    ConfigError,
    InsikaError,
    ModelFailure,
    NotFound,
    RunTimeFailure,
    UserError,
)

__all__ = [
    "Concept", "ConceptFormatError", "ConfigError", "InsikaError", "KnowledgeConfig",
    "ModelFailure", "NotFound", "RunTimeFailure", "UserError", "__version__", "load_config",
    "normalize_name", "parse", "serialize",
]
