"""The ``insika-knowledge`` command line (also ``python -m insika_knowledge``).

One click group, `cli`. Its commands only raise; the group alone maps errors to exit
codes, once, for every command below it (plugins' included): 0 success, 1 a run-time
failure (`RunTimeFailure` or any other `InsikaError`), 2 a usage mistake (`UserError`: bad
option, bad input, unknown name). User mistakes never print a traceback.

The concept loop's commands are defined here. Other commands come through the
``register_commands`` hook, as llm does: the runtime's own (``list``, ``agents``,
``conflicts``, ``delete``, ``put`` from `insika_knowledge.commands.concepts`, the
``procedures`` group, ``mcp``, ``hermes``) are registered by module, plugins from the
entry point groups ``insika.plugins`` (engine plugins) and ``insika.commands``
(command-line only: ``bench`` from the tooling package, which this module never imports).
A plugin that cannot be imported is left out with a warning.
"""

from __future__ import annotations

import errno
import json
import logging
import os
import re
import shlex
import shutil
import sys
from importlib.metadata import entry_points
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, cast

import click
import pluggy

from insika_knowledge import __version__, hookspecs
from insika_knowledge.commands import concepts as concepts_cli
from insika_knowledge.commands import status as status_cli
from insika_knowledge.commands.options import (
    agent_memory,
    agent_option,
    agent_options,
    data_dir_option,
    database_option,
    open_memory,
    tenant_option,
    where_args,
)
from insika_knowledge.concept import CONCEPT_TYPES, UNSAFE_IN_BODY, parse, status_of
from insika_knowledge.config import KnowledgeConfig, load_config
from insika_knowledge.errors import InsikaError, Quarantined, RunTimeFailure, StorageCorrupt, UserError, missing_extra
from insika_knowledge.export import FORMATS as EXPORT_FORMATS
from insika_knowledge.export import Format
from insika_knowledge.hermes import cli as hermes_cli
from insika_knowledge.httplimits import limit_options
from insika_knowledge.ids import check_agent
from insika_knowledge.mcp import cli as mcp_cli
from insika_knowledge.procedures import cli as procedures_cli
from insika_knowledge.relay import cli as relay_cli

if TYPE_CHECKING:
    from insika_knowledge.memory import Memory

log = logging.getLogger(__name__)

#: The console script's name.
PROG: Final = "insika-knowledge"
#: Exit codes: a run-time failure, a usage mistake.
EXIT_FAILURE: Final = 1
EXIT_USAGE: Final = 2
#: Entry point groups whose plugins may register commands: engine plugins, command-line ones.
PLUGIN_GROUPS: Final = ("insika.plugins", "insika.commands")
#: The runtime's own command modules, registered through the same hook as plugins.
BUILTIN_PLUGINS: Final = (concepts_cli, status_cli, procedures_cli, mcp_cli, hermes_cli, relay_cli)


class _Failure(click.ClickException):
    """A run-time failure at the edge: ``Error: <message>`` on stderr, `EXIT_FAILURE`."""

    exit_code = EXIT_FAILURE


class _Mistake(click.ClickException):
    """A usage mistake at the edge: ``Error: <message>``, `EXIT_USAGE` (no usage text)."""

    exit_code = EXIT_USAGE


def exit_code(exc: InsikaError) -> int:
    """The exit code for `exc`: `EXIT_USAGE` for a `UserError`, else `EXIT_FAILURE`."""
    return EXIT_USAGE if isinstance(exc, UserError) else EXIT_FAILURE


class KnowledgeGroup(click.Group):
    """The command group: turns an `InsikaError` from any command below it into an exit code."""

    def invoke(self, ctx: click.Context) -> Any:
        """Run the chosen command; an `InsikaError` becomes its message and `exit_code`.

        An argument with bytes that are not UTF-8 (the shell passes them as surrogates) is a
        usage mistake naming that argument, before any command reads it.
        """
        protected = getattr(ctx, "_protected_args", None)  # click >= 8.2; `protected_args` before
        if protected is None:
            protected = ctx.protected_args
        for arg in [*protected, *ctx.args]:
            at = next((i for i, ch in enumerate(arg) if "\udc80" <= ch <= "\udcff"), None)
            if at is not None:
                raw = arg.encode("utf-8", "surrogateescape")
                raise _Mistake(f"the argument {raw!r} is not UTF-8 text (character {at + 1}); "
                               "pass text in UTF-8")
        try:
            return super().invoke(ctx)
        except InsikaError as exc:
            raise (_Mistake if exit_code(exc) == EXIT_USAGE else _Failure)(str(exc)) from None


def _write_stdout(text: str) -> None:
    """Write `text` whole to standard output, or fail (exit 1) saying how much was written.

    Python's own stream can drop the rest of a write the device took only part of (a full
    disk behind ``> file``: 4,096 of 11,737 bytes written, no error), so the bytes go to the
    descriptor in a loop that checks each write.
    """
    stream = sys.stdout
    data = memoryview(text.encode("utf-8"))
    written = 0
    if stream is None:  # standard output closed (">&-"): Python has none
        raise _Failure(f"the export to standard output is incomplete: 0 of {len(data)} bytes written "
                       "(standard output is closed)")
    try:
        fd = stream.fileno()
    except (OSError, ValueError, AttributeError):  # not a real descriptor (a test's buffer)
        click.echo(text, nl=False)
        return
    try:
        stream.flush()
        while written < len(data):
            count = os.write(fd, data[written:])
            if count <= 0:
                raise OSError(errno.EIO, "the output took nothing more")
            written += count
    except OSError as exc:
        raise _Failure(f"the export to standard output is incomplete: {written} of {len(data)} bytes "
                       f"written ({exc.strerror or exc})") from None


def _config(model: str | None, types: str | None, top_k: int | None, config_file: str | None) -> KnowledgeConfig:
    block: dict[str, Any] = {}
    if config_file:
        import yaml

        from insika_knowledge.readers import file_text, load_yaml, yaml_problem

        try:
            loaded = load_yaml(file_text(config_file, f"--config {config_file}"))
        except yaml.YAMLError as exc:
            raise UserError(f"--config {config_file}: not YAML: {yaml_problem(exc)}") from None
        whole = isinstance(loaded, dict) and "knowledge" not in loaded  # its top level is the block
        if isinstance(loaded, dict) and not whole:
            others = sorted(str(k) for k in loaded if k != "knowledge")
            if others:  # a setting beside the block would be silently ignored
                raise UserError(f"--config {config_file}: unknown top-level key(s) beside knowledge: "
                                f"{', '.join(others)}")
            loaded = loaded["knowledge"]
        if not isinstance(loaded, dict):
            raise UserError(f"--config {config_file}: expected a knowledge: mapping")
        try:
            load_config(loaded)  # what is wrong in the file is said of the file
        except UserError as exc:
            read_as = " (the file has no knowledge: key, so its top level is read as that block)" if whole else ""
            raise UserError(f"--config {config_file}: {exc}{read_as}") from None
        block.update(loaded)
    if model:
        block["model"] = model
    if types is not None:
        block["types"] = _types(types)
    if top_k is not None:
        block["top_k"] = top_k
    config = load_config(block)
    assert config is not None
    return config


def _types(given: str) -> list[str]:
    """The concept types of ``--types`` (comma-separated), each one of `CONCEPT_TYPES`.

    Raises:
        UserError: the list names no type (``--types ""``) or one that is not a concept type.
    """
    listed = [t.strip() for t in given.split(",") if t.strip()]
    unknown = [t for t in listed if t not in CONCEPT_TYPES]
    if not listed or unknown:
        verb = "is no concept type" if len(unknown) == 1 else "are no concept types"
        what = f"{', '.join(map(repr, unknown))} {verb}" if unknown else "it lists no concept type"
        raise UserError(f"--types {given!r}: {what}; list one or more of {', '.join(CONCEPT_TYPES)}")
    return listed


model_option = click.option(
    "--model", default=None,
    help="Model: an instructor provider string (openai/gpt-4o-mini) or replay:PATH. "
    "Default: the config's model, else $INSIKA_UTILITY_MODEL.",
)
base_url_option = click.option("--base-url", default=None,
                               help="The endpoint of --model: OpenAI-compatible for openai/ models, "
                                    "Anthropic-compatible (without /v1) for anthropic/ ones.")
types_option = click.option("--types", default=None, help="Allowed concept types, comma-separated.")
config_option = click.option(
    "--config", "config_file", type=click.Path(dir_okay=False), default=None,
    help="YAML file with the agent's knowledge: block.",
)


@click.group(cls=KnowledgeGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="insika-knowledge")
def cli() -> None:
    """A memory that learns durable concepts from an agent's own conversations."""
    # instructor's own ERROR lines are dropped where the models are built
    # (`insika_knowledge.extract.model`): the commands report every failure themselves.


@cli.command()
@click.option("--data-dir", type=click.Path(file_okay=False), default=None,
              help="Keep the demo's database here (default: a temporary folder).")
@click.option("--database", default=None, metavar="URL",
              help="Run the demo in this PostgreSQL database instead (postgresql://...; "
              "$INSIKA_DATABASE_URL is not used: the demo writes a sample store).")
@model_option
@base_url_option
@click.option("--out", type=click.Path(file_okay=False), default=None,
              help="Export folder (default: <data-dir>/export).")
def demo(data_dir: str | None, database: str | None, model: str | None, base_url: str | None,
         out: str | None) -> None:
    """Run the whole loop on a small sample store, offline unless --model is given."""
    from insika_knowledge.demo import run_demo

    if base_url is not None and model is None:
        raise UserError("--base-url is the endpoint of a live model: give --model too (e.g. openai/gpt-4o-mini); "
                        "without it the demo replays recorded answers")

    run_demo(data_dir=data_dir, database=database, model=model, base_url=base_url, out=out,
             echo=click.echo, command=invoked_as())


@cli.command()
@agent_option
@click.option("--sessions", "sessions_file", required=True, type=click.Path(dir_okay=False, allow_dash=True),
              help="Normalised JSONL file of stored sessions (gzip-compressed too; - reads standard input).")
@click.option("--since", default=None, help="Skip sessions that started before this ISO time.")
@click.option("--concurrency", default=1, show_default=True, type=int, help="Sessions at once.")
@data_dir_option
@database_option
@tenant_option
@model_option
@base_url_option
@types_option
@config_option
@click.option("--verbose", is_flag=True, help="List every session (status, counts, detail).")
@click.option("--quiet", is_flag=True, help="No progress bar and no tables: the one-line total only.")
def backfill(agent: str, sessions_file: str, since: str | None, concurrency: int,
             data_dir: str | None, database: str | None, tenant: str, model: str | None,
             base_url: str | None, types: str | None, config_file: str | None, verbose: bool,
             quiet: bool) -> None:
    """Replay stored sessions through the extractor (re-runs skip what is done)."""
    from insika_knowledge.backfill import backfill as run
    from insika_knowledge.backfill import parse_since
    from insika_knowledge.commands.progress import print_summary, session_bar

    if verbose and quiet:
        raise UserError("--verbose and --quiet ask for opposite things: give one of them")
    check_agent(agent)
    config = _config(model, types, None, config_file)
    if config.resolved_model() is None:
        raise UserError("no model: pass --model (e.g. replay:PATH) or set INSIKA_UTILITY_MODEL")
    memory = open_memory(data_dir, base_url, database=database)
    finished = 0

    def advance(*args: Any, **kwargs: Any) -> None:
        nonlocal finished
        finished += 1
        bar.advance(*args, **kwargs)

    try:
        with session_bar(agent, quiet=quiet) as bar:
            summary = run(
                memory, agent, config, sessions_file, tenant=tenant, since=parse_since(since),
                concurrency=concurrency, on_start=bar.start, on_progress=advance,
            )
        waiting = _waiting(memory, agent, tenant)
    except KeyboardInterrupt:
        click.echo(f"backfill {agent}: interrupted after {finished} session(s) of this run; what they "
                   "learned is kept, and so is what the session under way had written. Run the same "
                   "command again to resume: finished sessions are skipped, the one under way is taken up again.",
                   err=True)
        raise SystemExit(130) from None
    finally:
        memory.close()
    print_summary(summary, sessions_file, verbose=verbose, quiet=quiet, echo=click.echo,
                  where=where_args(data_dir, tenant), waiting=waiting)
    if summary.unfinished:  # an error, or a model call that failed (not an empty answer)
        first = summary.unfinished[0]
        raise RunTimeFailure(f"{len(summary.unfinished)} session(s) failed ({first.session_id}: "
                             f"{first.status}): {first.detail}; run backfill again to retry them")


def _waiting(memory: Memory, agent: str, tenant: str) -> tuple[int, int] | None:
    """(concepts awaiting a person, concepts held in quarantine) of `agent` after a backfill,
    or None when the store cannot say (nothing was written to it, or a read failed).
    """
    try:
        if not memory.has_tenant(tenant):
            return None
        held = sum(s.quarantined for s in memory.store(tenant).list_concepts(agent))
        return len(memory.conflicts(agent=agent, tenant=tenant, held=False)), held
    except InsikaError:
        return None


@cli.command()
@agent_option
@click.argument("message")
@data_dir_option
@database_option
@tenant_option
@click.option("--top-k", default=5, show_default=True, type=click.IntRange(1, 50),
              help="Concepts matched (1-50); as many linked ones again at most.")
@click.option("--index", "index_mode", type=click.Choice(["auto", "scan", "fts5"]), default="auto",
              show_default=True, help="Which index answers (auto: hybrid, lexical and semantic; "
              "lexical only without an embedding provider).")
@click.option("--json", "as_json", is_flag=True,
              help="Print the concepts matched and linked as JSON objects instead of the block.")
def search(agent: str, message: str, data_dir: str | None, database: str | None, tenant: str,
           top_k: int, index_mode: str, as_json: bool) -> None:
    """Print the <knowledge> block the agent would get for MESSAGE ('-': read it from
    standard input, UTF-8, for a message longer than a command line takes).
    """
    check_agent(agent)
    if message == "-":
        message = _stdin_message()
    elif not message.strip():
        raise UserError("MESSAGE is empty: give the customer's message (or '-' to read it from standard input)")
    config = _config(None, None, top_k, None)
    with agent_memory(data_dir, agent, tenant, database=database) as memory:
        retriever = memory.retriever(tenant)
        if as_json:
            found = retriever.retrieve(agent, message, config.top_k, index_mode, config.min_coverage)
            challenged = frozenset(retriever.store.challenged_names(agent))
            disputed = retriever.disputed(agent, found.entries)
            click.echo(json.dumps({"matched": [_entry(e, disputed, challenged) for e in found.matched],
                                   "linked": [_entry(e, disputed, challenged) for e in found.linked]},
                                  ensure_ascii=False, indent=2))
            return
        block = retriever.block(agent, message, config.top_k, index_mode, config.min_coverage)
    click.echo(block if block is not None else "(no concept matches)")


#: The most bytes ``search -`` reads from standard input (a message's first 2,000
#: characters or so decide its ranking: `insika_knowledge.analysis.pieces`).
def _stdin_message() -> str:
    """The message on standard input (``search -``; `readers.stdin_text`)."""
    from insika_knowledge.readers import stdin_text

    return stdin_text("give the customer's message")


def _entry(entry: Any, disputed: frozenset[str], challenged: frozenset[str]) -> dict[str, Any]:
    """A block entry as ``search --json`` prints it: what the block shows, its status
    included (``conflict`` as the block marks it: contradicting reports in the body, or
    `disputed` by a claim held against it), plus type and ``challenged`` (claims are held
    against it for a person, `challenged`: what ``list`` flags and ``conflicts`` lists,
    a restatement included).
    """
    return {"name": entry.name, "description": entry.description, "type": entry.type,
            "confidence": entry.confidence, "provenance": entry.provenance,
            "status": status_of(entry, disputed), "challenged": entry.name in challenged}


@cli.command()
@agent_options
@click.option("--fresh", is_flag=True, help="Drop the agent's vectors first and make every one again.")
@click.option("--quiet", is_flag=True, help="No progress bar: the one-line total only.")
def reindex(agent: str, data_dir: str | None, database: str | None, tenant: str, fresh: bool, quiet: bool) -> None:
    """Make the semantic index's vectors of the agent's concepts (missing or stale ones)."""
    from insika_knowledge.commands.progress import count_bar

    with agent_memory(data_dir, agent, tenant, database=database) as memory, \
            count_bar(f"reindex {agent}", "concepts", quiet=quiet) as bar:
        done = memory.reindex(agent=agent, tenant=tenant, fresh=fresh, progress=bar.update)
    click.echo(f"{done.made} vector(s) made for {done.concepts} concept(s) of {agent} ({done.model})")


@cli.command()
@click.argument("name")
@agent_options
def show(agent: str, name: str, data_dir: str | None, database: str | None, tenant: str) -> None:
    """Print concept NAME's markdown record.

    A concept held in quarantine is printed too, after a line on standard error saying
    why it is held and how to release it (it is never handed to a model until then); one
    with claims held against it for review (a policy's challenges, possible duplicates)
    after a line saying how many and where to see them.
    Control characters other than tab and line end are printed as ``\\xNN`` (an escape
    sequence in a body would be a command to the terminal), and the bidirectional overrides
    and isolates and the tag characters as ``\\uNNNN`` (they would show the text in
    another order, or hide words): `put` refuses them all, so a record it accepts prints as
    stored (right-to-left direction marks included). ``export`` writes the record as stored.
    """
    check_agent(agent)
    with agent_memory(data_dir, agent, tenant, database=database) as memory:
        try:
            markdown = memory.load(name, agent=agent, tenant=tenant)
        except Quarantined as held:
            click.echo(f"held in quarantine since {held.since}: {held.reason}; never handed to a model "
                       f"until an operator approves it: insika-knowledge approve {name} --agent {agent}"
                       f"{where_args(data_dir, tenant)} (or the Studio's Approve; `delete` drops it)", err=True)
            markdown = memory.load(name, agent=agent, tenant=tenant, held=True)
        held_against = memory.held_claims(agent=agent, name=parse(markdown).name, tenant=tenant)
    if held_against:
        count = len(held_against)
        click.echo(f"{count} claim{'' if count == 1 else 's'} held against it for review: see `insika-knowledge "
                   f"conflicts --agent {agent}{where_args(data_dir, tenant)}` or the Studio", err=True)
    click.echo(_UNSHOWN.sub(_escaped, markdown), nl=False)


#: What `show` prints escaped: what `put` refuses in a record (`concept.UNSAFE_IN_BODY`: control
#: characters a terminal reads as commands, tab and line end aside; the bidirectional overrides
#: and isolates, which make a terminal show the text in another order than it is stored; the
#: tag characters, invisible letters), and a carriage return, with which a line would print over
#: itself. The direction marks of right-to-left text (U+200E, U+200F, U+061C) are printed as
#: stored: `put` accepts them, so `show NAME > x.md` then `put x.md` writes the record back as it was.
_UNSHOWN: Final = re.compile(f"{UNSAFE_IN_BODY.pattern}|\r")


def _escaped(match: re.Match[str]) -> str:
    """One character of `_UNSHOWN` as ``\\xNN`` (or ``\\uNNNN``)."""
    code = ord(match.group(0))
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


@cli.command()
@agent_option
@click.option("--out", required=True, type=click.Path(allow_dash=True),
              help="Output folder, or - for standard output (graphml, json, jsonl).")
@click.option("--format", "fmt", type=click.Choice(EXPORT_FORMATS), default="md", show_default=True,
              help="md: <name>.md each; graphml: knowledge.graphml; json: knowledge.json (an array); "
              "jsonl: knowledge.jsonl (a concept a line).")
@click.option("--include-held", is_flag=True,
              help="md and graphml: also write the concepts held in quarantine (md: under quarantined/). "
              "json and jsonl always carry them, each with its quarantined field.")
@data_dir_option
@database_option
@tenant_option
@click.option("--prune", is_flag=True,
              help="Markdown: also remove from --out the records of concepts this export did not write "
                   "(deleted or renamed since an earlier export; only files that are such a record).")
def export(agent: str, out: str, fmt: str, include_held: bool, data_dir: str | None, database: str | None,
           tenant: str, prune: bool) -> None:
    """Write the agent's concepts as markdown files, a GraphML graph, JSON or JSON lines.

    With --out -, the GraphML, JSON or JSON lines go to standard output (the summary line
    to standard error). Markdown and GraphML leave out the concepts held in quarantine
    (nobody has vouched for them) unless --include-held; standard error says how many.
    """
    from insika_knowledge.export import export as run
    from insika_knowledge.export import render

    if not out.strip():
        raise UserError("--out is empty: name the folder to write to (e.g. --out ./export)")
    chosen = cast(Format, fmt)  # a click.Choice of FORMATS
    if out == "-" and chosen == "md":
        raise UserError("--format md writes one file per concept: give --out a folder, or use "
                        "--format graphml, json or jsonl with --out -")
    check_agent(agent)
    try:
        with agent_memory(data_dir, agent, tenant, database=database) as memory:
            if out == "-":
                text, result = render(memory.store(tenant), agent, chosen, include_held=include_held)
                _write_stdout(text)
            else:
                result = run(memory.store(tenant), agent, out, chosen, include_held=include_held, prune=prune)
    except StorageCorrupt as exc:  # its message points here: say what this command could not do
        where = exc.path or "the database"
        raise StorageCorrupt(f"nothing was exported: {where} is damaged past what an export can read "
                             f"({str(exc).split('; ', 1)[0]}): restore it from a backup", path=exc.path) from None
    extra = f", {result.edges} link{'' if result.edges == 1 else 's'}" if fmt == "graphml" else ""
    held = f" ({result.held} held in quarantine)" if result.held else ""
    counted = f"{result.concepts} concept{'' if result.concepts == 1 else 's'}"
    click.echo(f"exported {counted}{held}{extra} to {'standard output' if out == '-' else out}",
               err=out == "-")
    for note in (result.salvage_note(), result.left_out_note(), result.stale_note()):
        if note is not None:
            click.echo(note, err=True)
    if result.unreadable:  # what could be read is written; the export is not whole: never exit 0
        count = len(result.unreadable)
        raise StorageCorrupt(f"{count} concept{'' if count == 1 else 's'} could not be read from any version "
                             f"and {'was' if count == 1 else 'were'} not exported: {', '.join(result.unreadable)}")


@cli.command()
@data_dir_option
@database_option
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to listen on (loopback by default).")
@click.option("--port", default=8765, show_default=True, type=int, help="TCP port.")
@click.option("--allowed-host", "allowed_hosts", multiple=True, metavar="NAME",
              help="Also answer to this Host name or address (the loopback names and the "
                   "--host address always are; others get 400). Repeatable.")
@limit_options(body_mb=None)  # the Studio's body cap is fixed: 1 MiB
def studio(data_dir: str | None, database: str | None, host: str, port: int,
           allowed_hosts: tuple[str, ...], header_timeout: float, body_timeout: float) -> None:
    """Serve the Studio web page: browse, edit, resolve and restore concepts."""
    try:
        from insika_knowledge.studio.server import serve
    except ImportError as exc:
        raise missing_extra("the Studio", "studio", exc.name or str(exc)) from None
    serve(data_dir, host, port, allowed=allowed_hosts, database=database, echo=click.echo,
          header_timeout_s=header_timeout, body_timeout_s=body_timeout)


def invoked_as(argv0: str | None = None) -> str:
    """How to run this command line again from the current directory, for hints.

    ``insika-knowledge`` when that name on ``PATH`` is the script running; else the
    script's path (relative when it is under the current directory, e.g.
    ``.venv/bin/insika-knowledge``); under ``python -m insika_knowledge``, the same with
    the interpreter (``python3 -m insika_knowledge`` when that is the one on ``PATH``).

    Args:
        argv0: the program path as started (default ``sys.argv[0]``).

    Returns:
        A shell-quoted command prefix.
    """
    program = Path(sys.argv[0] if argv0 is None else argv0)
    if program.stem == PROG:
        on_path = shutil.which(program.name)
        if on_path is not None and _same(Path(on_path), program):
            return PROG
        return shlex.quote(_shown(program))
    python = Path(sys.executable)
    for name in ("python3", "python"):
        found = shutil.which(name)
        if found is not None and _same(Path(found), python):
            return f"{name} -m insika_knowledge"
    return f"{shlex.quote(_shown(python))} -m insika_knowledge"


def _same(a: Path, b: Path) -> bool:
    # Not resolve(): a virtual environment's python is a symlink to the base interpreter,
    # which does not see the environment's packages.
    return os.path.normcase(os.path.abspath(a)) == os.path.normcase(os.path.abspath(b))


def _shown(path: Path) -> str:
    absolute = Path(os.path.abspath(path))
    try:
        return str(absolute.relative_to(Path.cwd()))
    except ValueError:
        return str(absolute)


def plugin_manager() -> pluggy.PluginManager:
    """The command line's plugins: `BUILTIN_PLUGINS`, then every loadable `PLUGIN_GROUPS` entry point.

    An entry point already registered (by name or object) or blocked is skipped; one
    that raises `ImportError` (a package left out of the install) is skipped with a warning.
    """
    pm = pluggy.PluginManager(hookspecs.PROJECT)
    pm.add_hookspecs(hookspecs)
    for module in BUILTIN_PLUGINS:
        pm.register(module, name=module.__name__)
    installed = entry_points()  # one scan of the installed distributions for every group
    for group in PLUGIN_GROUPS:
        for entry in installed.select(group=group):
            if pm.get_plugin(entry.name) is not None or pm.is_blocked(entry.name):
                continue
            try:
                plugin = entry.load()
            except ImportError as exc:
                log.warning("insika-knowledge: plugin %s (%s) not loaded: %s", entry.name, entry.value, exc)
                continue
            if not pm.is_registered(plugin):
                pm.register(plugin, name=entry.name)
    return pm


plugin_manager().hook.register_commands(cli=cli)


def main() -> None:
    """Console-script entry point.

    A device that fails under the output (``> /dev/full``, a full disk: every command's
    writes to standard output) is ``Error: cannot write the output: ...`` and exit 1, not a
    traceback (click itself handles a closed pipe).
    """
    try:
        cli(standalone_mode=True)
    except KeyboardInterrupt:
        sys.exit(130)
    except OSError as exc:
        if exc.errno not in (errno.ENOSPC, errno.EDQUOT, errno.EIO):
            raise
        try:  # what is still buffered would fail again at exit
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        except (OSError, ValueError):
            pass
        click.echo(f"Error: cannot write the output: {exc.strerror or exc}", err=True)
        sys.exit(EXIT_FAILURE)
