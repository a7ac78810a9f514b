"""Attaches the tooling's commands to the command line (the ``register_commands`` hook).

Loaded by `insika_knowledge.cli` from the entry point ``bench`` of the ``insika.commands``
group; an engine, which loads ``insika.plugins`` only, never imports it. Adds ``bench``
to the top-level group and ``evaluate`` to the ``procedures`` group.
"""

from __future__ import annotations

import click

from insika_knowledge.hookspecs import hookimpl


@hookimpl(trylast=True)  # after the runtime's own groups, so ``procedures`` is there to extend
def register_commands(cli: click.Group) -> None:
    """Add ``bench`` to `cli`, and ``evaluate`` to its ``procedures`` group when it has one."""
    from insika_knowledge.bench.cli import bench, evaluate

    cli.add_command(bench)
    procedures = cli.commands.get("procedures")
    if isinstance(procedures, click.Group):
        procedures.add_command(evaluate)
