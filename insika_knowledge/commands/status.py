"""``insika-knowledge status``: what learning is doing, per tenant.

The learning queue's depth (turns waiting in each tenant's outbox, turns a process kept in
the spill journal because it could not write them to the outbox yet, and turns the queue
dropped), per agent its concepts and its recorded turns (learned, failed), and the last
failed extractions with their reasons, read through `Memory.status`. The relay serves the
same as JSON on ``GET /health``.
"""

from __future__ import annotations

import json
from pathlib import Path

import click

from insika_knowledge.commands.options import data_dir_option, database_option, json_option, open_memory, require_tenant
from insika_knowledge.errors import UserError
from insika_knowledge.hookspecs import hookimpl
from insika_knowledge.memory import TenantStatus


@click.command()
@data_dir_option
@database_option
@click.option("--tenant", "tenants", multiple=True, metavar="NAME",
              help="Only this tenant (repeatable; default: every tenant with a database).")
@click.option("--failures", default=5, show_default=True, type=click.IntRange(0, 100),
              help="Failed extractions listed per tenant, newest first.")
@json_option
def status(data_dir: str | None, database: str | None, tenants: tuple[str, ...], failures: int,
           as_json: bool) -> None:
    """Show the learning queue, per-agent counts and the last failed extractions.

    A --data-dir that does not exist is refused (exit 2). Exits 1, after printing every
    tenant, when a tenant's database cannot be read (its reason printed in place of its
    counts, ``error`` in the JSON), so a health check fails.
    """
    if data_dir is not None and not database and not Path(data_dir).exists():  # a typo would read as "nothing yet"
        raise UserError(f"--data-dir {data_dir} does not exist: no memory has been written there (check the path)")
    memory = open_memory(data_dir, database=database)
    try:
        for tenant in tenants:
            require_tenant(memory, tenant)
        found = memory.status(list(tenants) or None, failures=failures)
        where = memory.location
    finally:
        memory.close()
    if as_json:
        click.echo(json.dumps([t.to_dict() for t in found], ensure_ascii=False, indent=2))
    elif not found:
        click.echo(f"(no tenant has a database in {where})")
    for number, report in enumerate([] if as_json else found):
        if number:
            click.echo("")
        _print(report)
    if any(t.error for t in found):
        raise click.exceptions.Exit(1)


def _print(tenant: TenantStatus) -> None:
    if tenant.error:
        click.echo(f"tenant {tenant.tenant}: not readable: {tenant.error}")
        return
    waiting = f", {tenant.spilled} waiting in the spill journal" if tenant.spilled else ""
    click.echo(f"tenant {tenant.tenant}: {tenant.queued} turn(s) queued for learning{waiting}, "
               f"{tenant.dropped} dropped")
    if tenant.held:
        click.echo(f"  {tenant.held} turn(s) held until the model can be used (no API key, HTTP 401/403/404, or "
                   "an endpoint that is no chat-completions API: see the last failures); they are tried again "
                   "when a process starts")
    if tenant.agents:
        width = max(len("agent"), *(len(a.agent) for a in tenant.agents))
        click.echo(f"  {'agent':<{width}}  {'concepts':>8}  {'turns learned':>13}  {'turns failed':>12}")
        for agent in tenant.agents:
            click.echo(f"  {agent.agent:<{width}}  {agent.concepts:>8}  {agent.turns.get('ok', 0):>13}  "
                       f"{agent.failed:>12}")
    if tenant.failures:
        click.echo("  last failures:")
        for failure in tenant.failures:
            detail = f": {failure.detail}" if failure.detail else ""
            click.echo(f"    {failure.attempted_at}  {failure.agent}  {failure.session_id}/{failure.turn_id}  "
                       f"{failure.outcome}{detail}"[:300])


@hookimpl
def register_commands(cli: click.Group) -> None:
    """Attach ``status`` to `cli`."""
    cli.add_command(status)
