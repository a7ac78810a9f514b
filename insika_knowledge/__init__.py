"""insika-knowledge: a memory for agent engines that learns from its own conversations.

The front door is `Memory`; the engine plugin is `insika_knowledge.plugin.plugin`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

from insika_knowledge.concept import Concept, normalize_name, parse, serialize  # noqa: E402
from insika_knowledge.config import KnowledgeConfig, load_config  # noqa: E402
from insika_knowledge.errors import (  # noqa: E402
    ConceptFormatError,
    ConfigError,
    InsikaError,
    ModelFailure,
    NoConcepts,
    NotFound,
    Quarantined,
    RunTimeFailure,
    UserError,
)

__all__ = [
    "Concept", "ConceptFormatError", "ConfigError", "Hit", "InsikaError", "KnowledgeConfig", "Memory",
    "ModelFailure", "NoConcepts", "NotFound", "Quarantined", "RunTimeFailure", "UserError", "__version__",
    "load_config",
    "normalize_name", "parse", "serialize",
]

# The front door, imported on first use: `import insika_knowledge` (and the command line)
# stays as fast as the models alone; `from insika_knowledge import Memory` works as usual.
if TYPE_CHECKING:
    from insika_knowledge.memory import Hit, Memory


def __getattr__(name: str) -> Any:
    if name in ("Memory", "Hit"):
        from insika_knowledge import memory

        return getattr(memory, name)
    raise AttributeError(f"module 'insika_knowledge' has no attribute {name!r}")
