"""Loading plugins: the ``insika.plugins`` entry points under one `pluggy` manager per process.

Like llm's and datasette's ``plugins.py``: `load_plugins` builds a manager with the
``insika`` hookspecs and every installed plugin; `default_manager` keeps one for the
process. Every `insika_knowledge.memory.Memory` forwards its events to the
``track_event`` hook of the default manager unless it is given another, so an analytics
or OpenTelemetry plugin sees every event, whichever edge (the engine plugin, the Studio,
the command line, backfill, the relay, MCP, Hermes) caused it.
"""

from __future__ import annotations

import logging
import threading
from typing import Final

import pluggy

from insika_knowledge import hookspecs

log = logging.getLogger(__name__)

#: The entry-point group plugins are installed under (the engine's and this package's).
ENTRY_POINTS: Final = "insika.plugins"

_default: pluggy.PluginManager | None = None
_default_lock = threading.Lock()


def load_plugins() -> pluggy.PluginManager:
    """A new plugin manager with the ``insika`` hookspecs and every installed ``insika.plugins`` plugin.

    Never raises: an installed plugin that fails to load is logged, and the manager keeps
    the plugins loaded before it (the engine's turn must not depend on an analytics plugin).
    """
    manager = pluggy.PluginManager(hookspecs.PROJECT)
    manager.add_hookspecs(hookspecs)
    try:
        manager.load_setuptools_entrypoints(ENTRY_POINTS)
    except Exception:  # a broken third-party plugin must not take the knowledge plugin down
        log.exception("could not load every %s entry point", ENTRY_POINTS)
    return manager


def default_manager() -> pluggy.PluginManager:
    """The process's plugin manager (`load_plugins`, once); tests may register plugins on it."""
    global _default
    with _default_lock:
        if _default is not None:
            return _default
    manager = load_plugins()  # outside the lock: loading imports plugins that may ask for it
    with _default_lock:
        if _default is None:
            _default = manager
        return _default
