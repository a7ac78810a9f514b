"""One session through the real Hermes Agent, run by the Python of Hermes' own virtualenv.

Usage: ``python hermes_turn.py`` with ``HERMES_HOME`` set (its config.yaml activates the
provider) and the repository on ``PYTHONPATH``. Hermes' loader finds the plugin folder,
Hermes' `MemoryManager` drives a turn, and what happened is printed as one JSON object.
"""

from __future__ import annotations

import json
import os

from agent.memory_manager import MemoryManager, build_memory_context_block
from agent.memory_provider import MemoryProvider
from plugins.memory import _get_active_memory_provider, discover_memory_providers, load_memory_provider

SESSION = "20260824_180000_hermes"
USER = "Tem frete grátis? Meu CEP é 13050-000."
ASSISTANT = "Sim: pedidos acima de R$ 199 têm frete grátis; Campinas recebe em 1 a 2 dias úteis."
QUESTION = "Qual o valor mínimo para frete grátis?"


def main() -> dict[str, object]:
    home = os.environ["HERMES_HOME"]
    active = _get_active_memory_provider()  # memory.provider from config.yaml, as agent_init reads it
    out: dict[str, object] = {
        "active": active,
        "discovered": [[name, available] for name, _, available in discover_memory_providers()],
    }
    provider = load_memory_provider(active)
    out["loaded"] = type(provider).__name__
    out["is_memory_provider"] = isinstance(provider, MemoryProvider)
    out["available"] = provider.is_available()
    manager = MemoryManager()
    manager.add_provider(provider)
    manager.initialize_all(session_id=SESSION, platform="cli", hermes_home=home, agent_context="primary")
    out["before"] = manager.prefetch_all(QUESTION, session_id=SESSION)
    messages = [{"role": "system", "content": "You are a store assistant."},
                {"role": "user", "content": USER},
                {"role": "assistant", "content": ASSISTANT}]
    manager.sync_all(USER, ASSISTANT, session_id=SESSION, messages=messages)
    out["flushed"] = manager.flush_pending(timeout=60)
    manager.on_session_end(messages)  # the provider finishes its extraction
    after = manager.prefetch_all(QUESTION, session_id=SESSION)
    out["after"] = after
    out["context"] = build_memory_context_block(after)
    out["tools"] = [schema["name"] for schema in manager.get_all_tool_schemas()]
    out["loaded_concept"] = json.loads(manager.handle_tool_call("load_knowledge", {"name": "frete-gratis-acima-199"}))
    out["unknown"] = json.loads(manager.handle_tool_call("load_knowledge", {"name": "frete-gratis"}))
    manager.shutdown_all()
    return out


if __name__ == "__main__":
    print(json.dumps(main(), ensure_ascii=False))
