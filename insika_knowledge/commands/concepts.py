"""``insika-knowledge list | agents | conflicts | delete | put | history | restore | approve |
dismiss | learn-held | rename``: an agent's concepts by hand.

Reads go through `Memory`'s front door and say what exists when they find nothing: an
unknown tenant is exit 2, an agent without concepts exit 1 naming the agents that have
some (`options.require_agent`). Writes name ``cli`` as the actor in the concept's history.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Collection, Mapping
from typing import Any, Final

import click

from insika_knowledge.commands.options import (
    agent_memory,
    agent_options,
    data_dir_option,
    database_option,
    json_option,
    open_memory,
    require_tenant,
    where_args,
)
from insika_knowledge.concept import RECORD_MAX, Concept, claim_text, has_contradiction, status_of
from insika_knowledge.consolidate.entries import Entry, entries
from insika_knowledge.errors import ConceptFormatError, InterruptedAfterWrite, NotADatabase, UserError
from insika_knowledge.hookspecs import hookimpl
from insika_knowledge.ids import check_agent
from insika_knowledge.memory import PossibleDuplicate
from insika_knowledge.readers import not_utf8
from insika_knowledge.trust import held_because

#: Who a command-line write names in the concept's history.
CLI_ACTOR: Final = "cli"
#: Characters of a description shown in a listing line.
DESCRIPTION_CHARS: Final = 80


def summary(concept: Concept, quarantined: bool = False, challenged: Collection[str] = (),
            reason: str | None = None) -> dict[str, Any]:
    """A concept's listing fields as a JSON-ready dict (no body).

    Keys: name, description, type, provenance, confidence (0..1), status (``ok`` or
    ``conflict``: contradicting reports in the body, or claims held against it: among `challenged`),
    quarantined (held back from every prompt until a person approves it),
    occurrences, updated_at (ISO-8601 UTC); and quarantine_reason (why it is held, in one
    line) when `reason` is given.
    """
    out = {
        "name": concept.name, "description": concept.description, "type": concept.type,
        "provenance": concept.provenance, "confidence": concept.confidence,
        "status": status_of(concept, challenged), "quarantined": quarantined, "occurrences": concept.occurrences,
        "updated_at": concept.updated_at,
    }
    if reason is not None:
        out["quarantine_reason"] = reason
    return out


#: The listing's columns, as its header names them.
COLUMNS: Final = ("NAME", "TYPE", "PROVENANCE", "CONFIDENCE", "FLAGS", "DESCRIPTION")


def _cells(concept: Concept, quarantined: bool = False, challenged: bool = False) -> tuple[str, ...]:
    description = concept.description
    if len(description) > DESCRIPTION_CHARS:
        description = description[: DESCRIPTION_CHARS - 1] + "…"
    flags = ",".join(f for f, on in (("CONFLICT", concept.in_conflict), ("CHALLENGED", challenged),
                                     ("QUARANTINED", quarantined)) if on)
    return (concept.name, concept.type, concept.provenance, f"{concept.confidence:.2f}", flags or "-", description)


def _echo(concepts: list[Concept], as_json: bool, held: Collection[str] = (),
          challenged: Collection[str] = (), reasons: Mapping[str, str] | None = None) -> None:
    """Print `concepts`: a JSON array of `summary` dicts, or a header line then one aligned
    row each (`COLUMNS`; `held`: the names held in quarantine; `challenged`: the concepts
    with claims held against them for review; `reasons`: why each held one is held).
    """
    if as_json:
        why = reasons or {}
        click.echo(json.dumps([summary(c, c.name in held, challenged, why.get(c.name)) for c in concepts],
                              ensure_ascii=False, indent=2))
        return
    rows = [COLUMNS, *(_cells(c, c.name in held, c.name in challenged) for c in concepts)]
    widths = [max(len(row[i]) for row in rows) for i in range(len(COLUMNS) - 1)]
    for row in rows:
        click.echo("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=False)) + "  " + row[-1])


@click.command("list")
@agent_options
@json_option
def list_(agent: str, data_dir: str | None, database: str | None, tenant: str, as_json: bool) -> None:
    """List the agent's concepts: name, type, provenance, confidence, description."""
    with agent_memory(data_dir, agent, tenant, database=database) as memory:
        records = memory.records(agent=agent, tenant=tenant)
        store = memory.store(tenant)
        challenged = frozenset(store.challenged_names(agent))
        held = {r.concept.name for r in records if r.quarantined}
        rows = {name: store.quarantine_of(agent, name) for name in held}
    reasons = {name: held_because(row.supported_by, row.markers) for name, row in rows.items() if row is not None}
    concepts = [r.concept for r in records]
    _echo(concepts, as_json, held, challenged, reasons)
    if as_json:
        return
    in_conflict = sum(status_of(c, challenged) == "conflict" for c in concepts)
    click.echo(f"{len(concepts)} concept{'' if len(concepts) == 1 else 's'} of {agent} in tenant {tenant}"
               + (f", {in_conflict} in conflict" if in_conflict else "")
               + (f", {len(held)} held in quarantine (`show NAME` says why)" if held else ""), err=True)


@click.command()
@data_dir_option
@database_option
@click.option("--tenant", default=None, help="Only this tenant (default: every tenant).")
@json_option
def agents(data_dir: str | None, database: str | None, tenant: str | None, as_json: bool) -> None:
    """List the agents that have concepts, per tenant, with their concept counts."""
    memory = open_memory(data_dir, database=database)
    try:
        if tenant is not None:
            require_tenant(memory, tenant)
        tenants = [tenant] if tenant is not None else memory.tenants()
        found: dict[str, dict[str, int]] = {}
        for name in tenants:
            try:
                found[name] = memory.agents(tenant=name)
            except NotADatabase as exc:
                if tenant is not None:
                    raise
                click.echo(f"(tenant {name} left out: {exc})", err=True)  # another program's file
    finally:
        memory.close()
    rows = [(t, agent, count) for t, counts in found.items() for agent, count in sorted(counts.items())]
    if as_json:
        click.echo(json.dumps([{"tenant": t, "agent": a, "concepts": n} for t, a, n in rows], indent=2))
        return
    if not rows:
        where = f"tenant {tenant!r}" if tenant is not None else str(memory.directory)
        click.echo(f"(no agent has concepts in {where})")
        return
    width = max(len(t) for t, _, _ in rows)
    for t, agent, count in rows:
        click.echo(f"{t:<{width}}  {agent}  {count} concept{'' if count == 1 else 's'}")


@click.command()
@agent_options
@json_option
def conflicts(agent: str, data_dir: str | None, database: str | None, tenant: str, as_json: bool) -> None:
    """List the agent's concepts awaiting a person: contradicting reports in the body, or
    claims held against them (a policy's challenges, changes held under another name as
    possible duplicates), each contradiction and held claim shown with why it was held;
    resolve them with 'resolve' (a contradiction by its key, entry-N), 'dismiss' (keep the
    concept, close its held claims), 'learn-held' (a held claim is another rule: learn it)
    or in the Studio.
    """
    with agent_memory(data_dir, agent, tenant, database=database) as memory:
        found = memory.conflicts(agent=agent, tenant=tenant)
        held: dict[str, list[PossibleDuplicate]] = {}
        for claim in memory.held_claims(agent=agent, tenant=tenant):
            held.setdefault(claim.duplicate_of, []).append(claim)
    if as_json:  # every concept listed here waits for a person
        click.echo(json.dumps([{**summary(c), "status": "conflict",
                                "contradictions": [_contradiction(e, i) for i, e in enumerate(entries(c.body), 1)],
                                **({"contradiction_text": text} if (text := _unread_section(c)) else {}),
                                "held_claims": [_claim(h) for h in held.get(c.name, [])]}
                               for c in found], ensure_ascii=False, indent=2))
        return
    if not found:
        click.echo("(no conflicts)")
        return
    _echo(found, as_json, challenged=held)
    for concept in found:
        reports = entries(concept.body)
        unread = _unread_section(concept)
        if unread:  # written by hand: shown as it is, for the person who resolves it
            click.echo(f"\n{concept.name}: its ## Contradiction section holds no entry of the engine's:")
            click.echo("\n".join(f"  {line}" for line in unread.splitlines()))
        if reports:
            count = f"{len(reports)} contradicting claim{'s' if len(reports) > 1 else ''}"
            click.echo(f"\n{concept.name}: {count} in its body:")
        for number, entry in enumerate(reports, start=1):  # the key `resolve --keep` takes
            click.echo(f"  entry-{number} [{', '.join(entry.sessions)}, {entry.at}] {entry.description}")
            if entry.why:
                click.echo(f"    held because {entry.why}")
    for name, claims in held.items():
        count = f"{len(claims)} claim{'s' if len(claims) > 1 else ''}"
        click.echo(f"\n{name}: its body is kept, {count} held for review:")
        for claim in claims:
            under = "" if claim.name == name else f" (proposed as {claim.name})"
            click.echo(f"  [{claim.session_id} / {claim.turn_id}, {claim.seen_at}]{under} {claim.body}")
            if claim.why:
                click.echo(f"    held because {claim.why}")
        apart = sorted({c.name for c in claims if c.name != name})
        where = f"--agent {agent}{where_args(data_dir, tenant)}"
        click.echo(f"  keep {name} as it is: insika-knowledge dismiss {name} {where}"
                   + "".join(f"\n  {c} is another rule: insika-knowledge learn-held {c} {where}" for c in apart)
                   + f"\n  take a held claim instead: write {name} as it should read (insika-knowledge show "
                   f"{name} {where} > {name}.md, edit it, insika-knowledge put {name}.md {where}); "
                   "its held claims close, the old text stays in its history")


def _claim(held: PossibleDuplicate) -> dict[str, Any]:
    """A held claim as a JSON-ready dict: name (the name it was proposed under: the concept's
    own for a policy's challenge), session_id, turn_id, seen_at, description, type, body,
    why (why it is held; "" for one held before the store kept it).
    """
    return {"name": held.name, "session_id": held.session_id, "turn_id": held.turn_id, "seen_at": held.seen_at,
            "description": held.description, "type": held.type, "body": held.body, "why": held.why}


def _unread_section(concept: Concept) -> str:
    """The text under `concept`'s ``## Contradiction`` heading when none of it is an entry
    of the engine's (a hand edit), else "".
    """
    if not has_contradiction(concept.body) or entries(concept.body):
        return ""
    return concept.body[len(claim_text(concept.body)):].strip()


def _contradiction(entry: Entry, number: int) -> dict[str, Any]:
    """The `number`-th ``## Contradiction`` entry as a JSON-ready dict: key (``entry-N``,
    what ``resolve --keep`` takes), sessions (as the record writes them, the first one
    first), at, description, body, why ("" when the entry says not).
    """
    return {"key": f"entry-{number}", "sessions": list(entry.sessions), "at": entry.at,
            "description": entry.description, "body": entry.body, "why": entry.why}


@click.command()
@click.argument("name")
@agent_options
def delete(agent: str, name: str, data_dir: str | None, database: str | None, tenant: str) -> None:
    """Delete concept NAME (its history is kept: 'restore' brings a version back)."""
    with agent_memory(data_dir, agent, tenant, database=database) as memory:
        version = memory.delete(agent=agent, name=name, actor=CLI_ACTOR, tenant=tenant)
    click.echo(f"deleted {agent}/{name} in tenant {tenant} (version {version.version}; history kept)")


@click.command()
@click.argument("name")
@agent_options
@click.option("--yes", is_flag=True, help="Erase it: without this flag, only say what would go.")
def purge(agent: str, name: str, data_dir: str | None, database: str | None, tenant: str, yes: bool) -> None:
    """Erase concept NAME, live or deleted, with its whole history (a person's right to
    erasure): every version, its sightings, quarantine row, held claims, aliases and
    vectors; on SQLite its bytes are zeroed in the file and its log. It cannot be undone
    ('delete' keeps the history; 'restore' brings it back).
    """
    check_agent(agent)
    memory = open_memory(data_dir, database=database)
    try:
        require_tenant(memory, tenant)  # not `require_agent`: a deleted concept may be the agent's last
        if not yes:
            versions = memory.history(name, agent=agent, tenant=tenant)  # NotFound names close names
            click.echo(f"would erase {agent}/{name} in tenant {tenant}: {len(versions)} version(s), {_KEPT_OF_IT}, "
                       "for good; run again with --yes")
            return
        erased = memory.purge(name, agent=agent, actor=CLI_ACTOR, tenant=tenant)
    finally:
        memory.close()
    click.echo(f"erased {agent}/{name} in tenant {tenant}: {erased} version(s), {_KEPT_OF_IT}")


#: What `purge` erases beside a concept's versions (`ConceptStore.purge`).
_KEPT_OF_IT: Final = "its sightings, held claims, aliases and vectors"


@click.command()
@click.argument("name")
@agent_options
@json_option
def history(agent: str, name: str, data_dir: str | None, database: str | None, tenant: str, as_json: bool) -> None:
    """List concept NAME's versions, oldest first (a deleted concept's too).

    One line each: VERSION REASON ACTOR CREATED_AT SESSION ('-' for none); '--json'
    prints them with each version's whole markdown record.
    """
    check_agent(agent)
    memory = open_memory(data_dir, database=database)
    try:
        require_tenant(memory, tenant)
        versions = memory.history(name, agent=agent, tenant=tenant)
    finally:
        memory.close()
    if as_json:
        click.echo(json.dumps([{"version": v.version, "reason": v.reason, "actor": v.actor,
                                "created_at": v.created_at, "session_id": v.session_id, "markdown": v.markdown}
                               for v in versions], ensure_ascii=False, indent=2))
        return
    click.echo("VERSION REASON ACTOR CREATED_AT SESSION")
    for v in versions:
        click.echo(f"{v.version} {v.reason} {v.actor} {v.created_at} {v.session_id or '-'}")


@click.command()
@click.argument("name")
@click.argument("version", type=click.IntRange(min=1))
@agent_options
def restore(agent: str, name: str, version: int, data_dir: str | None, database: str | None, tenant: str) -> None:
    """Make VERSION of concept NAME current again, as it was (a deleted concept's too).

    Writes one version (reason 'restore', actor 'cli'); restoring the record already
    current writes nothing. The versions are listed by 'history'.
    """
    check_agent(agent)
    memory = open_memory(data_dir, database=database)
    try:
        require_tenant(memory, tenant)
        before = memory.history(name, agent=agent, tenant=tenant)[-1].version
        concept = memory.restore(name, version, agent=agent, tenant=tenant, actor=CLI_ACTOR)
        now = memory.history(concept.name, agent=agent, tenant=tenant)[-1].version
    finally:
        memory.close()
    if now == before:
        click.echo(f"{agent}/{concept.name} in tenant {tenant} is already version {version}'s record: "
                   f"nothing written (still version {now})")
    else:
        click.echo(f"restored {agent}/{concept.name} in tenant {tenant} to version {version}'s record "
                   f"(now version {now})")


@click.command()
@click.argument("file", type=click.Path(dir_okay=False, allow_dash=True))
@agent_options
def put(agent: str, file: str, data_dir: str | None, database: str | None, tenant: str) -> None:
    """Add or replace a concept from FILE.md (- reads standard input).

    Only name and description are required in the frontmatter; provenance defaults to
    policy (a person vouches for it), type to fact.
    """
    markdown = _read(file)
    check_agent(agent)
    memory = open_memory(data_dir, database=database)
    try:
        concept = memory.put(markdown, agent=agent, tenant=tenant, actor=CLI_ACTOR)
    except ConceptFormatError as exc:  # the file named, as an editor's error list shows it
        raise UserError(f"{'standard input' if file == '-' else file}: {exc}") from None
    except InterruptedAfterWrite as interrupted:  # click would say "Aborted!" of a write that happened
        click.echo(f"put {agent}/{interrupted.name} in tenant {tenant}; interrupted before its vector was made "
                   "(the next write or 'reindex' makes it)", err=True)
        raise SystemExit(130) from None
    finally:
        memory.close()
    click.echo(f"put {agent}/{concept.name} in tenant {tenant} ({concept.type}, {concept.provenance}, "
               f"confidence {concept.confidence:.2f})")


def _read(file: str) -> str:
    """The text of `file` (``-``: standard input), UTF-8 (`Memory.put` skips a leading
    byte-order mark and reads CRLF and CR line ends as LF). At most ``4 * RECORD_MAX`` bytes
    are read.

    Raises:
        UserError: unreadable, not UTF-8 text, or longer than any record can be.
    """
    most = 4 * RECORD_MAX  # bytes: a record of RECORD_MAX characters needs at most this much
    try:
        if file == "-":
            data = sys.stdin.buffer.read(most + 1)
        else:
            with open(file, "rb") as handle:
                data = handle.read(most + 1)
        if len(data) > most:
            raise UserError(f"{file} is over {most:,} bytes: a record is at most {RECORD_MAX:,} characters")
        if not data.strip():
            raise UserError(f"{'standard input' if file == '-' else file} is empty: give a record "
                            "('---', name: and description: lines, '---', then the body)")
        return data.decode("utf-8")  # a byte-order mark and any line ends: read as `Memory.put` reads them
    except UnicodeDecodeError as exc:
        raise not_utf8(file, exc) from None
    except OSError as exc:
        raise UserError(f"cannot read {file}: {exc.strerror or exc}") from None


@click.command()
@click.argument("name")
@click.option("--keep", default=None, metavar="KEY",
              help="The claim to keep: 'record' (the claim on record) or 'entry-N' (a contradiction, as "
              "'conflicts' numbers them).")
@click.option("--file", "file", default=None, type=click.Path(dir_okay=False, allow_dash=True),
              help="Instead: the resolved record a person wrote (markdown; only name and description "
              "are required; '-' reads stdin).")
@agent_options
def resolve(agent: str, name: str, keep: str | None, file: str | None, data_dir: str | None,
            database: str | None, tenant: str) -> None:
    """Resolve concept NAME's contradicting reports: keep one claim (--keep) or write the
    record (--file). The ## Contradiction section goes, and the sources, occurrences and
    confidence are what the sightings ledger supports for what is kept (a policy keeps its
    confidence). One version (reason 'resolve', actor 'cli').
    """
    if (keep is None) == (file is None):
        raise UserError("give one of --keep KEY (record, entry-N: see 'conflicts') or --file FILE.md")
    written = None if file is None else _read(file)
    check_agent(agent)
    with agent_memory(data_dir, agent, tenant, database=database) as memory:
        stored = memory.store(tenant).get(agent, name)
        if stored is not None and not stored.concept.in_conflict:  # said in the command line's words
            held = len(memory.held_claims(agent=agent, name=name, tenant=tenant))
            settle = (f"; {held} claim{'' if held == 1 else 's'} held against it: 'conflicts' lists them, "
                      "'dismiss' or 'learn-held' settles them") if held else ""
            raise UserError(f"'{name}' holds no contradicting reports: nothing to resolve{settle}; "
                            "to change it: 'put'")
        try:
            concept = memory.resolve(name, agent=agent, tenant=tenant, keep=keep, written=written,
                                     actor=CLI_ACTOR)
        except ConceptFormatError as exc:  # the file named, as `put` names it
            raise UserError(f"{'standard input' if file == '-' else file}: {exc}") from None
    kept = f"kept {keep}" if keep is not None else ("kept the record from standard input" if file == "-"
                                                    else f"kept the record of {file}")
    click.echo(f"resolved {concept.name}: {kept} (confidence {concept.confidence:.2f}, "
               f"{len(concept.sources)} supporting session{'' if len(concept.sources) == 1 else 's'})")


@click.command()
@click.argument("name")
@agent_options
def approve(agent: str, name: str, data_dir: str | None, database: str | None, tenant: str) -> None:
    """Release concept NAME from quarantine: a person vouches for it, and it is served to
    models from now on. One version (reason 'approve', actor 'cli'); 'show' says why a
    concept is held, 'list' flags the held ones.
    """
    with agent_memory(data_dir, agent, tenant, database=database) as memory:
        concept = memory.approve(name, agent=agent, tenant=tenant, actor=CLI_ACTOR)
        version = memory.history(concept.name, agent=agent, tenant=tenant)[-1].version
    click.echo(f"approved {agent}/{concept.name} in tenant {tenant}: out of quarantine as version {version}, "
               "served to models like any other concept")


@click.command()
@click.argument("name")
@agent_options
def dismiss(agent: str, name: str, data_dir: str | None, database: str | None, tenant: str) -> None:
    """Keep concept NAME as it is: close every claim held against it for review (a policy's
    challenges, possible duplicates), so it is no longer served as disputed. The record is
    not changed; 'conflicts' lists the held claims, 'learn-held' learns one as a concept of
    its own instead.
    """
    with agent_memory(data_dir, agent, tenant, database=database) as memory:
        closed = memory.dismiss_held(name, agent=agent, tenant=tenant, actor=CLI_ACTOR)
    if not closed:
        click.echo(f"{agent}/{name} in tenant {tenant} has no claim held against it: nothing to dismiss")
        return
    click.echo(f"dismissed {closed} claim{'' if closed == 1 else 's'} held against {agent}/{name} in tenant "
               f"{tenant}: the concept is kept as it is and no longer served as disputed")


@click.command("learn-held")
@click.argument("name")
@agent_options
def learn_held(agent: str, name: str, data_dir: str | None, database: str | None, tenant: str) -> None:
    """Learn the claim held under NAME as a possible duplicate as a concept of its own: it is
    another rule, not a change of the concept it was held against ('conflicts' shows each
    held claim as "proposed as NAME"). That concept is left as it is and no longer served
    as disputed.
    """
    with agent_memory(data_dir, agent, tenant, database=database) as memory:
        concept = memory.learn_held(name, agent=agent, tenant=tenant, actor=CLI_ACTOR)
    click.echo(f"learned {agent}/{concept.name} in tenant {tenant} as a concept of its own "
               f"(confidence {concept.confidence:.2f}): {concept.description}")


@click.command()
@click.argument("name")
@click.argument("new_name")
@agent_options
def rename(agent: str, name: str, new_name: str, data_dir: str | None, database: str | None, tenant: str) -> None:
    """Rename concept NAME to NEW_NAME (a kebab-case slug): its history and the claims held
    against it move with it; one version (reason 'edit', actor 'cli'). After 'resolve --keep
    entry-N' the name may still say the old rule.
    """
    with agent_memory(data_dir, agent, tenant, database=database) as memory:
        try:
            concept = memory.update(name, agent=agent, tenant=tenant, rename=new_name, actor=CLI_ACTOR)
        except UserError as exc:  # the command line's words: NEW_NAME, not the Python call's argument
            raise UserError(str(exc).replace("Memory.update(): rename: ", "NEW_NAME: ", 1)) from None
    if concept.name == name:
        click.echo(f"{agent}/{name} in tenant {tenant} already has that name: nothing written")
        return
    click.echo(f"renamed {agent}/{name} to {concept.name} in tenant {tenant} (its history moved with it)")


@hookimpl
def register_commands(cli: click.Group) -> None:
    """Attach ``list``, ``agents``, ``conflicts``, ``resolve``, ``delete``, ``purge``, ``put``,
    ``history``, ``restore``, ``approve``, ``dismiss``, ``learn-held`` and ``rename`` to `cli`.
    """
    for command in (list_, agents, conflicts, resolve, delete, purge, put, history, restore, approve, dismiss,
                    learn_held, rename):
        cli.add_command(command)
