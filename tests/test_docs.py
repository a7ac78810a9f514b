"""The README documents every command and every engine hook."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import click

from insika_knowledge import hookspecs
from insika_knowledge.cli import cli

README = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")


def command_table(readme: str) -> dict[str, set[str]]:
    """The README's command table: command -> the sub-commands its row names.

    A command counts only as the first word of the code span that opens a row of the
    table under ``## The command line`` (``| `name [--options]` | what it does |``);
    a group row names its sub-commands as ``group a\\|b\\|c``. A command mentioned
    anywhere else in the prose does not count.
    """
    section = readme.split("\n## The command line\n", 1)[1].split("\n## ", 1)[0]
    commands: dict[str, set[str]] = {}
    for line in section.splitlines():
        row = re.match(r"\| `((?:[^`\\]|\\.)+)` \|", line)
        if row is None:
            continue
        name, *rest = row.group(1).split()
        named = rest[0].split("\\|") if rest else []
        commands[name] = {word for word in named if re.fullmatch(r"[a-z][a-z-]*", word)}
    return commands


def test_the_command_table_names_exactly_the_commands() -> None:
    table = command_table(README)
    assert sorted(table) == sorted(cli.commands)
    for name, command in cli.commands.items():
        if isinstance(command, click.Group):
            assert table[name] == set(command.commands), name


def test_a_command_named_only_in_prose_does_not_count() -> None:
    prose = README.replace("| `show --agent A NAME` |", "| |") + "\nYou can show a concept with `show`.\n"
    assert "show" not in command_table(prose)
    lost_subcommand = README.replace("procedures mine\\|list", "procedures mine")
    assert "list" not in command_table(lost_subcommand)["procedures"]


def test_every_hook_is_in_the_readme_and_has_a_docstring() -> None:
    hooks = [name for name, fn in inspect.getmembers(hookspecs, inspect.isfunction)
             if hasattr(fn, "insika_spec")]
    assert set(hooks) == {"after_turn", "context_fragments", "tools", "request", "track_event"}
    for name in hooks:
        assert f"`{name}(" in README, name
        assert (getattr(hookspecs, name).__doc__ or "").strip(), name
