"""The docs stay honest: the command table, the hooks, a short README, links that resolve."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import click

from insika_knowledge import hookspecs
from insika_knowledge.cli import cli

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
DOCS = ROOT / "docs"
CLI_PAGE = (DOCS / "cli.md").read_text(encoding="utf-8")
ENGINE_PAGE = (DOCS / "engine.md").read_text(encoding="utf-8")
#: The longest the README may grow: a newcomer reads it in two minutes.
README_MAX_LINES = 160


def command_table(page: str) -> dict[str, set[str]]:
    """The command table of `page` (docs/cli.md): command -> the sub-commands its row names.

    A command counts only as the first word of the code span that opens a row of the
    table under ``## Commands`` (``| `name [--options]` | what it does |``); a group row
    names its sub-commands as ``group a\\|b\\|c``. A command mentioned anywhere else in
    the prose does not count.
    """
    section = page.split("\n## Commands\n", 1)[1].split("\n## ", 1)[0]
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
    table = command_table(CLI_PAGE)
    assert sorted(table) == sorted(cli.commands)
    for name, command in cli.commands.items():
        if isinstance(command, click.Group):
            assert table[name] == set(command.commands), name


def test_a_command_named_only_in_prose_does_not_count() -> None:
    prose = CLI_PAGE.replace("| `show --agent A NAME` |", "| |") + "\nYou can show a concept with `show`.\n"
    assert "show" not in command_table(prose)
    lost_subcommand = CLI_PAGE.replace("procedures mine\\|list", "procedures mine")
    assert "list" not in command_table(lost_subcommand)["procedures"]


def test_every_hook_is_on_the_engine_page_and_has_a_docstring() -> None:
    hooks = [name for name, fn in inspect.getmembers(hookspecs, inspect.isfunction)
             if hasattr(fn, "insika_spec")]
    assert set(hooks) == {"after_turn", "context_fragments", "tools", "request", "track_event", "register_commands"}
    section = ENGINE_PAGE.split("\n## The hooks\n", 1)[1].split("\n## ", 1)[0]
    for name in hooks:
        assert f"- `{name}(" in section, name
        assert (getattr(hookspecs, name).__doc__ or "").strip(), name


def test_the_readme_is_short_and_begins_with_the_two_commands() -> None:
    lines = README.splitlines()
    assert len(lines) <= README_MAX_LINES, f"README.md has {len(lines)} lines; at most {README_MAX_LINES}"
    assert lines[0] == "# insika-knowledge"
    first = [line for line in lines[1:] if line.strip()][:4]
    assert first[0] == "```bash"
    assert first[1].startswith("./demo.sh ") and first[2].startswith("./test.sh ")
    assert first[3] == "```"
    # what a newcomer needs before ./test.sh passes: the .venv, and the two system programs
    head = "\n".join(lines[:25])
    assert ".venv" in head and "chromium" in head and "initdb" in head and ".ci/run" in head


def _links(markdown: str) -> list[str]:
    """The targets of the inline links of `markdown`, outside code blocks and code spans."""
    prose = re.sub(r"^```.*?^```", "", markdown, flags=re.S | re.M)
    prose = re.sub(r"`[^`\n]*`", "", prose)
    return re.findall(r"\]\(([^)\s]+)\)", prose)


def test_every_relative_link_points_to_a_file_that_exists() -> None:
    pages = [ROOT / "README.md", *sorted(DOCS.glob("*.md"))]
    assert len(pages) > 10, pages
    checked = 0
    for page in pages:
        for target in _links(page.read_text(encoding="utf-8")):
            if re.match(r"[a-z][a-z0-9+.-]*:", target) or target.startswith("#"):
                continue  # a URL (https:, mailto:) or an anchor on the same page
            path = (page.parent / target.split("#", 1)[0]).resolve()
            assert path.exists(), f"{page.relative_to(ROOT)}: {target} does not exist"
            checked += 1
    assert checked > 20


def test_a_broken_link_is_found_and_code_is_not_read_as_links() -> None:
    assert _links("See [the CLI](docs/cli.md#commands) and [x](https://example.com).") == [
        "docs/cli.md#commands", "https://example.com"]
    assert _links("```python\nprint([a](b))\n```\nand `[c](d)` in a span\n") == []
