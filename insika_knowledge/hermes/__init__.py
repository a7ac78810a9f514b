"""insika-knowledge as a Hermes Agent memory provider (``memory.provider: insika``).

Hermes finds it two ways: the released Hermes (0.19.0) scans ``$HERMES_HOME/plugins/<name>/``
for a folder whose ``__init__.py`` registers a memory provider
(``insika-knowledge hermes install`` writes one, see `insika_knowledge.hermes.install`);
newer Hermes also reads the ``hermes_agent.memory_providers`` entry point, which names this
module. Either way Hermes calls `register` with its plugin context.

The provider itself is `insika_knowledge.hermes.provider.InsikaProvider`; the settings
are in `insika_knowledge.hermes.settings`. Hermes itself is never a dependency: its
``MemoryProvider`` base class is used when Hermes is importable.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # imported on use: `insika-knowledge hermes install` needs none of it
    from insika_knowledge.hermes.provider import InsikaProvider


def provider_class() -> type[InsikaProvider]:
    """`InsikaProvider`, made a subclass of Hermes' ``MemoryProvider`` when Hermes is importable."""
    from insika_knowledge.hermes.provider import InsikaProvider

    try:
        base = importlib.import_module("agent.memory_provider").MemoryProvider
    except (ImportError, AttributeError):
        return InsikaProvider
    return type("InsikaMemoryProvider", (InsikaProvider, base), {"__module__": __name__})


def register(ctx: Any) -> None:
    """Hand Hermes a new provider: ``ctx.register_memory_provider(provider)``."""
    ctx.register_memory_provider(provider_class()())


__all__ = ["provider_class", "register"]
