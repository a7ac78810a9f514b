"""The README documents every command and every engine hook."""

from __future__ import annotations

import inspect
from pathlib import Path

from insika_knowledge import hookspecs
from insika_knowledge.cli import cli

README = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")


def test_every_command_is_in_the_readme() -> None:
    missing = [name for name in cli.commands if f"`{name}" not in README and f" {name} " not in README]
    assert missing == []


def test_every_hook_is_in_the_readme_and_has_a_docstring() -> None:
    hooks = [name for name, fn in inspect.getmembers(hookspecs, inspect.isfunction)
             if hasattr(fn, "insika_spec")]
    assert set(hooks) == {"after_turn", "context_fragments", "tools", "request", "register_commands"}
    for name in hooks:
        assert f"`{name}(" in README, name
        assert (getattr(hookspecs, name).__doc__ or "").strip(), name
