"""insika-knowledge: a memory for agent engines that learns from its own conversations.

The front door is `Memory` (`AsyncMemory` for asyncio engines); the engine plugin is
`insika_knowledge.plugin.plugin`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

__version__ = "0.1.0"

__all__ = [
    "ArgumentTypeError", "AsyncMemory", "Concept", "ConceptFormatError", "ConfigError", "Hit", "InsikaError",
    "InvalidName", "KnowledgeConfig", "Memory", "MemoryClosed", "ModelFailure", "NoConcepts", "NotFound", "Quarantined",
    "RunTimeFailure", "StaleVersion", "UserError",
    "__version__", "load_config", "normalize_name", "parse", "serialize",
]

# Every name is imported on first use: `import insika_knowledge` (and `--version`) costs
# nothing; `from insika_knowledge import Memory` works as usual.
if TYPE_CHECKING:
    from insika_knowledge.asyncmemory import AsyncMemory
    from insika_knowledge.concept import Concept, normalize_name, parse, serialize
    from insika_knowledge.config import KnowledgeConfig, load_config
    from insika_knowledge.errors import (
        ArgumentTypeError,
        ConceptFormatError,
        ConfigError,
        InsikaError,
        InvalidName,
        MemoryClosed,
        ModelFailure,
        NoConcepts,
        NotFound,
        Quarantined,
        RunTimeFailure,
        StaleVersion,
        UserError,
    )
    from insika_knowledge.memory import Hit, Memory

#: Where each public name lives.
_HOMES: Final = {
    "AsyncMemory": "asyncmemory", "Memory": "memory", "Hit": "memory",
    "Concept": "concept", "normalize_name": "concept", "parse": "concept", "serialize": "concept",
    "KnowledgeConfig": "config", "load_config": "config",
    **dict.fromkeys(("ArgumentTypeError", "ConceptFormatError", "ConfigError", "InsikaError", "InvalidName",
                     "MemoryClosed", "ModelFailure", "NoConcepts", "NotFound", "Quarantined", "RunTimeFailure",
                     "StaleVersion", "UserError"),
                    "errors"),
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'insika_knowledge' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(f"insika_knowledge.{home}"), name)


def __dir__() -> list[str]:
    """The public names (`__all__`: those `__getattr__` imports on first use) and the
    module's own dunders.
    """
    return sorted({*__all__, *(name for name in globals() if name.startswith("__"))})
