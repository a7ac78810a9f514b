"""``insika-knowledge procedures ...``: mine, list, show, recall, scorecard.

The group attaches itself to the command line through the ``register_commands`` hook
(the tooling adds ``evaluate`` to it the same way). Commands only raise: the command
line's group maps errors to exit codes, 2 for a usage mistake or bad input (the message
says what and where), 1 for a run-time failure.
"""

from __future__ import annotations

import json
from typing import Any, Final

import click

from insika_knowledge.errors import NotFound, UserError
from insika_knowledge.hookspecs import hookimpl
from insika_knowledge.ids import DEFAULT_TENANT
from insika_knowledge.location import DATABASE_HELP


def _memory(data_dir: str | None, database: str | None, tenant: str, *, create: bool = False,
            **config: Any) -> Any:
    from insika_knowledge.procedures.config import ProceduresConfig
    from insika_knowledge.procedures.skill import ProceduralMemory
    from insika_knowledge.store import has_tenant, list_tenants, location

    if not create and not has_tenant(tenant, data_dir, database):
        others = list_tenants(data_dir, database)
        there = f"tenants there: {', '.join(others)}" if others else "no tenant has one yet"
        raise NotFound(f"tenant {tenant!r} has no database in {location(data_dir, database)} ({there})")
    return ProceduralMemory.open(data_dir, tenant, ProceduresConfig(**config), database=database)


_data_dir = click.option(
    "--data-dir",
    type=click.Path(file_okay=False),
    default=None,
    help="Data directory (default: $INSIKA_KNOWLEDGE_HOME, else the user data folder).",
)
_database = click.option("--database", default=None, metavar="URL", help=DATABASE_HELP)
_tenant = click.option("--tenant", default=DEFAULT_TENANT, show_default=True, help="Tenant name.")
_as_json = click.option("--json", "as_json", is_flag=True, help="Print JSON.")
#: ``--verify-pattern`` (repeatable): what mining and ``procedures evaluate`` add to the verify steps.
verify_pattern_option = click.option(
    "--verify-pattern",
    "verify_patterns",
    multiple=True,
    help="Extra regular expression that makes a shell command a verify step (repeatable).",
)


@click.group("procedures")
def procedures() -> None:
    """Procedural memory: procedures mined from verified agent traces."""


@hookimpl
def register_commands(cli: click.Group) -> None:
    """Attach the ``procedures`` group to `cli`."""
    cli.add_command(procedures)


@procedures.command()
@click.option(
    "--sessions",
    "sessions_file",
    required=True,
    type=click.Path(dir_okay=False, allow_dash=True),
    help="Normalised JSONL file of stored sessions, with outcome labels (gzip-compressed too; - reads standard "
    "input).",
)
@verify_pattern_option
@_data_dir
@_database
@_tenant
@_as_json
def mine(
    sessions_file: str,
    verify_patterns: tuple[str, ...],
    data_dir: str | None,
    database: str | None,
    tenant: str,
    as_json: bool,
) -> None:
    """Mine the verified traces of a sessions file into procedures (re-runs count nothing twice)."""
    from insika_knowledge.procedures.config import ProceduresConfig
    from insika_knowledge.sessions import read_sessions

    ProceduresConfig(verify_patterns=verify_patterns)  # the settings are checked first, then the file
    sessions = list(read_sessions(sessions_file))  # read whole (and checked) before the tenant is made
    if not sessions:
        raise UserError(f"sessions file {sessions_file} holds no session: nothing to mine (no tenant was made)")
    with _memory(data_dir, database, tenant, create=True, verify_patterns=verify_patterns) as memory:
        report = memory.mine_sessions(sessions)
    if as_json:
        click.echo(json.dumps(report.__dict__, indent=2))
        return
    click.echo(
        f"mined {report.traces} traces from {sessions_file}: "
        + ", ".join(f"{k} {v}" for k, v in sorted(report.verdicts.items()))
        + f" ({', '.join(f'{k} {v}' for k, v in sorted(report.reasons.items()))}); "
        f"{report.counted} new run counts; {report.procedures} procedures in tenant {tenant}"
    )
    if report.unknown_outcomes:
        said = ", ".join(f"{label!r} ({n})" for label, n in sorted(report.unknown_outcomes.items()))
        click.echo(f"note: outcomes that are neither 'success' nor 'failure' were read as none (the run "
                   f"unlabelled): {said}", err=True)
    if report.repeated:
        click.echo(f"note: {report.repeated} session(s) repeat an earlier session id of the file: "
                   "only the first of each was mined (a run counts once)", err=True)


@procedures.command("list")
@click.option(
    "--min-confidence",
    type=click.FloatRange(0.0, 1.0),
    default=0.0,
    show_default=True,
    help="Only procedures whose Wilson lower bound reaches this (0 to 1).",
)
@click.option("--limit", type=click.IntRange(min=1), default=50, show_default=True)
@_data_dir
@_database
@_tenant
@_as_json
def list_(
    min_confidence: float, limit: int, data_dir: str | None, database: str | None, tenant: str, as_json: bool
) -> None:
    """List procedures, most confident first."""
    if min_confidence != min_confidence:  # NaN passes any range check
        raise click.BadParameter("nan is no confidence", param_hint="'--min-confidence'")
    with _memory(data_dir, database, tenant) as memory:
        found = memory.store.list_procedures(min_confidence=min_confidence, limit=limit)
        bound = memory.config.min_confidence
    if as_json:
        click.echo(json.dumps([_summary(p, bound) for p in found], indent=2))
        return
    if not found:
        click.echo("(no procedures)")
    for p in found:
        flag = _standing(p, bound)
        unit = "tasks" if p.scope == "operation" else "runs"
        shown = p.steps[-1] if p.scope == "operation" and p.steps else (p.steps[0] if p.steps else None)
        click.echo(
            f"{p.id}  {p.kind:5}  {p.scope:9}  support {p.support:3} {unit} ({p.successes} ok, {p.failures} "
            f"against)  confidence {p.confidence:.2f}  {flag}  {len(p.steps)} step(s): "
            f"{shown.key.splitlines()[0][:70] if shown else ''}"
        )


def _standing(procedure: Any, bound: float) -> str:
    """Whether recall may give `procedure`: ``recallable``, or why not."""
    from insika_knowledge.procedures.recall.recall import is_handoff

    if is_handoff(procedure):
        return "hand-off, never recalled"
    if procedure.confidence < bound:
        return "below bound"
    return "recallable" if procedure.recurs and procedure.steps else "one run"


def _summary(procedure: Any, bound: float) -> dict[str, Any]:
    return {
        "id": procedure.id,
        "kind": procedure.kind,
        "scope": procedure.scope,
        "support": procedure.support,
        "prior_runs": procedure.prior_runs,
        "successes": procedure.successes,
        "failures": procedure.failures,
        "confidence": round(procedure.confidence, 4),
        "recallable": _standing(procedure, bound) == "recallable",
        "steps": [s.key for s in procedure.steps],
        "tools": list(procedure.tools),
        "sample_task": procedure.sample_task,
        "created_at": procedure.created_at,
        "updated_at": procedure.updated_at,
    }


@procedures.command()
@click.argument("procedure_id")
@_data_dir
@_database
@_tenant
@_as_json
def show(procedure_id: str, data_dir: str | None, database: str | None, tenant: str, as_json: bool) -> None:
    """Show one procedure: its evidence, triggers and the block it injects."""
    from insika_knowledge.procedures.recall.render import render

    with _memory(data_dir, database, tenant) as memory:
        procedure = memory.store.get(procedure_id)
        if procedure is None:
            raise NotFound(
                f"no procedure {procedure_id!r} in tenant {tenant!r}; "
                "see `insika-knowledge procedures list`"
            )
        block = render(procedure, memory.counter, memory.config.max_injection_tokens)
        bound = memory.config.min_confidence
    if as_json:
        click.echo(
            json.dumps(
                {
                    **_summary(procedure, bound),
                    "triggers": procedure.triggers,
                    "block": block.text,
                    "block_tokens": block.tokens,
                },
                indent=2,
            )
        )
        return
    click.echo(
        f"{procedure.id} ({procedure.kind}): support {procedure.support}, {procedure.successes} "
        f"successes, {procedure.failures} failures, Wilson lower bound {procedure.confidence:.3f}"
    )
    top = sorted(procedure.triggers.items(), key=lambda kv: (-kv[1], kv[0]))[:12]
    click.echo("triggers: " + ", ".join(f"{t} ({n})" for t, n in top))
    click.echo(f"sample task: {procedure.sample_task[:200]}")
    click.echo(f"block ({block.tokens} tokens{'' if block.fits else ', over budget'}):")
    click.echo(block.text)


#: What a vote's abstention reason means, for a person.
_ABSTAINED: Final = {
    "no_neighbour": "no past task's request is close enough",
    "nothing_asked": "the message asks nothing",
    "no_write_voted": "the nearest past tasks made no write (they refused or handed off)",
    "nothing_named": "the nearest past tasks name no write",
    "not_recallable": "the write asked for cannot be recalled here: the request does not offer its tools "
                      "(--tool), or its procedure is below the confidence bound",
    "one_supporting_task": "only one past task supports it (two are needed)",
    "near_tie": "two operations are as close",
    "disagreement": "the nearest past tasks disagree",
    "another_object": "the message names what another write acts on, not what the voted one does",
}


@procedures.command()
@click.argument("task")
@click.option(
    "--tool", "tools", multiple=True, help="A tool the agent has (repeatable); none: no tool check."
)
@_data_dir
@_database
@_tenant
@_as_json
def recall(
    task: str, tools: tuple[str, ...], data_dir: str | None, database: str | None, tenant: str, as_json: bool
) -> None:
    """Print the block a new TASK would get (or why it gets none); - reads TASK from standard input."""
    from insika_knowledge.procedures.recall.render import render

    if task == "-":
        from insika_knowledge.readers import stdin_text

        task = stdin_text("give the user's request, as a new session would bring it")
    if not task.strip():
        raise UserError("TASK is empty: give the user's request, as a new session would bring it")

    with _memory(data_dir, database, tenant) as memory:
        found = memory.recall(task, tools or None)
        block = (
            render(found.procedure, memory.counter, memory.config.max_injection_tokens)
            if found.procedure
            else None
        )
    result = "miss" if block is None else ("hit" if block.fits else "skipped_budget")
    if as_json:
        click.echo(
            json.dumps(
                {
                    "result": result,
                    "matcher": found.matcher,
                    "match_score": round(found.score, 4),
                    "abstained": found.abstained or None,
                    "procedure_id": found.procedure.id if found.procedure else None,
                    "block": block.text if block else None,
                    "block_tokens": block.tokens if block else 0,
                },
                indent=2,
            )
        )
        return
    if block is None:
        said = [f"the past tasks' vote abstained: {_ABSTAINED.get(found.abstained, found.abstained)}"] \
            if found.abstained else []
        if found.score > 0 or not said:  # a store of tool procedures alone has no shell score to give
            said.insert(0, f"best shell score {found.score:.2f}")
        click.echo(f"(no procedure matches: {'; '.join(said)})")
        return
    click.echo(
        f"{result}: {found.procedure.id if found.procedure else ''}, "
        f"match score {found.score:.2f}, "
        f"{block.tokens} tokens"
    )
    click.echo(block.text)


@procedures.command()
@_data_dir
@_database
@_tenant
@_as_json
def scorecard(data_dir: str | None, database: str | None, tenant: str, as_json: bool) -> None:
    """Print recall_hit_rate, adherence_rate, avg_injected_tokens and divergence_rate."""
    with _memory(data_dir, database, tenant) as memory:
        card = memory.store.scorecard()
    if as_json:
        click.echo(json.dumps(card, indent=2))
        return

    def fmt(value: float | None, pct: bool = True) -> str:
        if value is None:
            return "n/a"
        return f"{100 * value:.1f}%" if pct else f"{value:.1f}"

    click.echo(f"requests            {card['requests']}")
    click.echo(f"recall_hit_rate     {fmt(card['recall_hit_rate'])}")
    click.echo(f"adherence_rate      {fmt(card['adherence_rate'])}")
    click.echo(f"avg_injected_tokens {fmt(card['avg_injected_tokens'], pct=False)}")
    click.echo(f"divergence_rate     {fmt(card['divergence_rate'])}")
    click.echo(
        "by action           "
        + (", ".join(f"{k} {v}" for k, v in card["by_action"].items()) or "-")
    )
