"""A minimal reference host: loads plugins from the `insika.plugins` entry points and drives turns.

It stands in for the engine: it knows nothing of insika_knowledge beyond the hook
contract (`insika_knowledge.hookspecs` and its argument types).
"""

from __future__ import annotations

from typing import Any

import pluggy

from insika_knowledge import hookspecs
from insika_knowledge.hookspecs import AgentSpec, Fragment, Tool, Turn


class Host:
    def __init__(self) -> None:
        self.pm = pluggy.PluginManager(hookspecs.PROJECT)
        self.pm.add_hookspecs(hookspecs)
        self.loaded = self.pm.load_setuptools_entrypoints("insika.plugins")

    def prompt_context(self, turn: Turn) -> list[Fragment]:
        groups: list[list[Fragment]] = self.pm.hook.context_fragments(turn=turn)
        return sorted((f for group in groups for f in group), key=lambda f: -f.priority)

    def tools(self, agent: AgentSpec) -> dict[str, Tool]:
        groups: list[list[Tool]] = self.pm.hook.tools(agent=agent)
        return {t.name: t for group in groups for t in group}

    def call_tool(self, agent: AgentSpec, name: str, arguments: dict[str, Any]) -> Any:
        return self.tools(agent)[name].handler(**arguments)

    def finish_turn(self, turn: Turn) -> None:
        self.pm.hook.after_turn(turn=turn)

    def close(self) -> None:
        for plugin in self.pm.get_plugins():
            self.pm.unregister(plugin)
