"""``insika-knowledge hermes install``: put the memory provider where Hermes Agent finds it."""

from __future__ import annotations

import click

from insika_knowledge.errors import InsikaError, UserError


@click.group("hermes")
def hermes_group() -> None:
    """Hermes Agent memory provider (memory.provider: insika)."""


@hermes_group.command("install")
@click.option("--hermes-home", type=click.Path(file_okay=False), default=None,
              help="Hermes' home folder (default: $HERMES_HOME, else ~/.hermes).")
def install(hermes_home: str | None) -> None:
    """Write the plugin folder Hermes 0.19.0 discovers under $HERMES_HOME/plugins/."""
    from insika_knowledge.hermes.install import install_plugin

    try:
        folder = install_plugin(hermes_home)
    except InsikaError as exc:
        raise (UsageFailure if isinstance(exc, UserError) else RunFailure)(str(exc)) from None
    click.echo(f"wrote {folder}")
    click.echo("next: set `memory.provider: insika` (and memory.insika.agent, model...) in "
               f"{folder.parent.parent / 'config.yaml'}, and make sure the Python that runs Hermes "
               "can import insika_knowledge (pip install insika-knowledge there)")


class UsageFailure(click.ClickException):
    """A usage mistake: exit code 2, one line, no traceback."""

    exit_code = 2


class RunFailure(click.ClickException):
    """A run-time failure: exit code 1, one line, no traceback."""

    exit_code = 1
