"""A minimal reference host: loads plugins from the `insika.plugins` entry points and drives turns.

It stands in for the engine: it knows nothing of insika_knowledge beyond the hook
contract (`insika_knowledge.hookspecs`).
"""

from __future__ import annotations

from typing import Any

import pluggy

from insika_knowledge import hookspecs


class Host:
    def __init__(self) -> None:
        self.pm = pluggy.PluginManager(hookspecs.PROJECT)
        self.pm.add_hookspecs(hookspecs)
        self.loaded = self.pm.load_setuptools_entrypoints("insika.plugins")

    def prompt_context(self, turn: Any) -> list[hookspecs.Fragment]:
        fragments = [f for group in self.pm.hook.context_fragments(turn=turn) for f in group]
        return sorted(fragments, key=lambda f: -f.priority)

    def tools(self, agent: Any) -> dict[str, hookspecs.Tool]:
        return {t.name: t for group in self.pm.hook.tools(agent=agent) for t in group}

    def call_tool(self, agent: Any, name: str, arguments: dict[str, Any]) -> Any:
        return self.tools(agent)[name].handler(**arguments)

    def finish_turn(self, turn: Any) -> None:
        self.pm.hook.after_turn(turn=turn)

    def close(self) -> None:
        for plugin in self.pm.get_plugins():
            self.pm.unregister(plugin)
