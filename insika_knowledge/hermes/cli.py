"""``insika-knowledge hermes install``: put the memory provider where Hermes Agent finds it."""

from __future__ import annotations

import click

from insika_knowledge.hookspecs import hookimpl


@click.group("hermes")
def hermes_group() -> None:
    """Hermes Agent memory provider (memory.provider: insika)."""


@hermes_group.command("install")
@click.option("--hermes-home", type=click.Path(file_okay=False), default=None,
              help="Hermes' home folder (default: $HERMES_HOME, else ~/.hermes).")
def install(hermes_home: str | None) -> None:
    """Write the plugin folder Hermes 0.19.0 discovers under $HERMES_HOME/plugins/."""
    from insika_knowledge.hermes.install import install_plugin

    folder = install_plugin(hermes_home)
    click.echo(f"wrote {folder}")
    click.echo("next: set `memory.provider: insika` (and memory.insika.agent, model...) in "
               f"{folder.parent.parent / 'config.yaml'}, and make sure the Python that runs Hermes "
               "can import insika_knowledge (in that environment: pip install PATH-OF-THIS-CHECKOUT, or the wheel "
               "built from it)")


@hookimpl
def register_commands(cli: click.Group) -> None:
    """Attach the ``hermes`` group to `cli` (the command line maps errors to exit codes)."""
    cli.add_command(hermes_group)
