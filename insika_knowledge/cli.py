"""The ``insika-knowledge`` command line (also ``python -m insika_knowledge``).

This module alone maps errors to exit codes: 0 success, 1 a run-time failure,
2 a usage mistake (bad option, bad input, unknown name). User mistakes never print
a traceback.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click

from insika_knowledge import __version__
from insika_knowledge.config import KnowledgeConfig, load_config
from insika_knowledge.errors import InsikaError, NotFound, UserError
from insika_knowledge.store.paths import DEFAULT_TENANT, check_agent


class _Exit(click.ClickException):
    def __init__(self, message: str, code: int):
        super().__init__(message)
        self.exit_code = code


def _fail(exc: InsikaError) -> _Exit:
    return _Exit(str(exc), 2 if isinstance(exc, UserError) else 1)


def _memory(data_dir: str | None, base_url: str | None = None) -> Any:
    from insika_knowledge.memory import Memory

    return Memory(data_dir, base_url=base_url)


def _config(model: str | None, types: str | None, top_k: int | None, config_file: str | None) -> KnowledgeConfig:
    block: dict[str, Any] = {}
    if config_file:
        import yaml

        try:
            loaded = yaml.safe_load(Path(config_file).read_text(encoding="utf-8"))
        except (OSError, yaml.YAMLError) as exc:
            raise UserError(f"--config {config_file}: {exc}") from None
        if isinstance(loaded, dict) and "knowledge" in loaded:
            loaded = loaded["knowledge"]
        if not isinstance(loaded, dict):
            raise UserError(f"--config {config_file}: expected a knowledge: mapping")
        block.update(loaded)
    if model:
        block["model"] = model
    if types:
        block["types"] = [t.strip() for t in types.split(",") if t.strip()]
    if top_k is not None:
        block["top_k"] = top_k
    config = load_config(block)
    assert config is not None
    return config


data_dir_option = click.option(
    "--data-dir", type=click.Path(file_okay=False), default=None,
    help="Data directory (default: $INSIKA_KNOWLEDGE_HOME, else the user data folder).",
)
tenant_option = click.option("--tenant", default=DEFAULT_TENANT, show_default=True, help="Tenant name.")
agent_option = click.option("--agent", required=True, help="Agent id.")
model_option = click.option(
    "--model", default=None,
    help="Model: an instructor provider string (openai/gpt-4o-mini) or replay:PATH. "
    "Default: the config's model, else $INSIKA_UTILITY_MODEL.",
)
base_url_option = click.option("--base-url", default=None, help="OpenAI-compatible endpoint for --model.")
types_option = click.option("--types", default=None, help="Allowed concept types, comma-separated.")
config_option = click.option(
    "--config", "config_file", type=click.Path(dir_okay=False), default=None,
    help="YAML file with the agent's knowledge: block.",
)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="insika-knowledge")
def cli() -> None:
    """A memory that learns durable concepts from an agent's own conversations."""


@cli.command()
@click.option("--data-dir", type=click.Path(file_okay=False), default=None,
              help="Keep the demo's database here (default: a temporary folder).")
@model_option
@base_url_option
@click.option("--out", type=click.Path(file_okay=False), default=None,
              help="Export folder (default: <data-dir>/export).")
def demo(data_dir: str | None, model: str | None, base_url: str | None, out: str | None) -> None:
    """Run the whole loop on a small sample store, offline unless --model is given."""
    from insika_knowledge.demo import run_demo

    try:
        run_demo(data_dir=data_dir, model=model, base_url=base_url, out=out, echo=click.echo)
    except InsikaError as exc:
        raise _fail(exc) from None


@cli.command()
@agent_option
@click.option("--sessions", "sessions_file", required=True, type=click.Path(dir_okay=False),
              help="Normalised JSONL file of stored sessions.")
@click.option("--since", default=None, help="Skip sessions that started before this ISO time.")
@click.option("--concurrency", default=1, show_default=True, type=int, help="Sessions at once.")
@data_dir_option
@tenant_option
@model_option
@base_url_option
@types_option
@config_option
@click.option("--quiet", is_flag=True, help="No progress bar or per-session table.")
def backfill(agent: str, sessions_file: str, since: str | None, concurrency: int,
             data_dir: str | None, tenant: str, model: str | None, base_url: str | None,
             types: str | None, config_file: str | None, quiet: bool) -> None:
    """Replay stored sessions through the extractor (re-runs skip what is done)."""
    from rich.console import Console
    from rich.progress import Progress
    from rich.table import Table

    from insika_knowledge.backfill import backfill as run
    from insika_knowledge.backfill import parse_since

    try:
        check_agent(agent)
        config = _config(model, types, None, config_file)
        memory = _memory(data_dir, base_url)
        if config.resolved_model() is None:
            raise UserError("no model: pass --model (e.g. replay:PATH) or set INSIKA_UTILITY_MODEL")
        console = Console(stderr=True, quiet=quiet)
        with Progress(console=console, transient=True) as progress:
            task = progress.add_task("backfill", total=None)
            summary = run(
                memory, agent, config, sessions_file, tenant=tenant, since=parse_since(since),
                concurrency=concurrency,
                on_progress=lambda _s: progress.advance(task),
            )
    except InsikaError as exc:
        raise _fail(exc) from None
    out = Console(quiet=quiet, width=None if sys.stdout.isatty() else 160)
    table = Table("session", "status", "learned", "confirmed", "merged", "conflicts", "dropped",
                  "detail")
    for s in summary.statuses:
        detail = s.detail or ""
        table.add_row(s.session_id, s.status, str(s.learned), str(s.confirmed), str(s.merged),
                      str(s.conflicts), ", ".join(f"{k}={v}" for k, v in sorted(s.dropped.items())),
                      detail if len(detail) <= 60 else detail[:59] + "…")
    if summary.statuses:
        out.print(table)
    else:
        click.echo(f"no sessions in {sessions_file}")
    statuses = summary.by_status()
    click.echo(
        f"backfill {agent}: {len(summary.statuses)} sessions "
        f"({', '.join(f'{k} {v}' for k, v in sorted(statuses.items()))}); "
        f"learned {summary.total('learned')}, confirmed {summary.total('confirmed')}, "
        f"merged {summary.total('merged')}, conflicts {summary.total('conflicts')}, "
        f"dropped {sum(summary.dropped.values())}"
        + (f" ({', '.join(f'{k}={v}' for k, v in sorted(summary.dropped.items()))})"
           if summary.dropped else "")
    )
    memory.close()
    if summary.unfinished:  # an error, or a model call that failed (not an empty answer)
        first = summary.unfinished[0]
        raise _Exit(f"{len(summary.unfinished)} session(s) failed ({first.session_id}: "
                    f"{first.status}): {first.detail}; run backfill again to retry them", 1)


@cli.command()
@agent_option
@click.argument("message")
@data_dir_option
@tenant_option
@click.option("--top-k", default=5, show_default=True, type=int, help="Concepts to inject.")
@click.option("--index", "index_mode", type=click.Choice(["auto", "scan", "fts5"]), default="auto",
              show_default=True, help="Which index answers (auto: FTS5 for large agents).")
@click.option("--json", "as_json", is_flag=True, help="Print the hits as JSON instead of the block.")
def search(agent: str, message: str, data_dir: str | None, tenant: str, top_k: int,
           index_mode: str, as_json: bool) -> None:
    """Print the <knowledge> block the agent would get for MESSAGE."""
    try:
        check_agent(agent)
        config = _config(None, None, top_k, None)
        memory = _memory(data_dir)
        _require_tenant(memory, tenant)
        retriever = memory.retriever(tenant)
        if as_json:
            found = retriever.retrieve(agent, message, config.top_k, index_mode, config.min_coverage)
            click.echo(json.dumps({
                "matched": [e.name for e in found.matched], "linked": [e.name for e in found.linked]
            }))
            return
        block = retriever.block(agent, message, config.top_k, index_mode, config.min_coverage)
    except InsikaError as exc:
        raise _fail(exc) from None
    click.echo(block if block is not None else "(no concept matches)")


@cli.command()
@agent_option
@click.argument("name")
@data_dir_option
@tenant_option
def show(agent: str, name: str, data_dir: str | None, tenant: str) -> None:
    """Print concept NAME's markdown record."""
    try:
        check_agent(agent)
        memory = _memory(data_dir)
        _require_tenant(memory, tenant)
        result = memory.retriever(tenant).load_knowledge(agent, name, max_chars=None)
    except InsikaError as exc:
        raise _fail(exc) from None
    if "error" in result:
        raise _Exit(result["error"], 2)
    click.echo(result["markdown"], nl=False)


@cli.command()
@agent_option
@click.option("--out", required=True, type=click.Path(), help="Output folder.")
@click.option("--format", "fmt", type=click.Choice(["md", "graphml"]), default="md", show_default=True)
@data_dir_option
@tenant_option
def export(agent: str, out: str, fmt: str, data_dir: str | None, tenant: str) -> None:
    """Write the agent's concepts as markdown files or one GraphML graph."""
    from insika_knowledge.export import export as run

    try:
        check_agent(agent)
        memory = _memory(data_dir)
        _require_tenant(memory, tenant)
        result = run(memory.store(tenant), agent, out, fmt)  # type: ignore[arg-type]
    except InsikaError as exc:
        raise _fail(exc) from None
    extra = f", {result.edges} links" if fmt == "graphml" else ""
    click.echo(f"exported {result.concepts} concepts{extra} to {out}")


@cli.command()
@click.option("--json", "as_json", is_flag=True, help="Print the results as JSON.")
@click.option("--quick", is_flag=True, help="Fewer repetitions (a smoke run, not a measurement).")
@click.option("--scale", is_flag=True, help="Scan vs FTS5 at 1000..200000 concepts instead.")
@click.option("--sizes", default=None, help="With --scale: comma-separated concept counts.")
@click.option("--quality", is_flag=True, help="Retrieval quality on the labelled set instead.")
@click.option("--set", "eval_set", type=click.Path(file_okay=False), default=None,
              help="With --quality: the folder with concepts.jsonl and queries.jsonl.")
def bench(as_json: bool, quick: bool, scale: bool, sizes: str | None, quality: bool,
          eval_set: str | None) -> None:
    """Measure speed (medians, ratios to the seed), scale, or retrieval quality."""
    try:
        if quality:
            from insika_knowledge.quality import DEFAULT_SET, run_quality

            run_quality(folder=Path(eval_set) if eval_set else DEFAULT_SET, as_json=as_json,
                        echo=click.echo)
        elif scale:
            from insika_knowledge.bench import SCALE_SIZES, run_scale

            try:
                chosen = tuple(int(n) for n in sizes.split(",")) if sizes else SCALE_SIZES
            except ValueError:
                raise UserError(f"--sizes {sizes!r}: give whole numbers like 1000,5000") from None
            run_scale(sizes=chosen, as_json=as_json, quick=quick, echo=click.echo)
        else:
            from insika_knowledge.bench import run_bench

            run_bench(as_json=as_json, quick=quick, echo=click.echo)
    except InsikaError as exc:
        raise _fail(exc) from None


@cli.command()
@data_dir_option
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to listen on (loopback by default).")
@click.option("--port", default=8765, show_default=True, type=int, help="TCP port.")
def studio(data_dir: str | None, host: str, port: int) -> None:
    """Serve the Studio web page: browse, edit, resolve and restore concepts."""
    try:
        from insika_knowledge.studio.server import serve
    except ImportError as exc:
        raise _Exit(
            f"the Studio needs its extra ({exc.name or exc} is missing): "
            "pip install 'insika-knowledge[studio]'", 2,
        ) from None
    try:
        serve(data_dir, host, port, echo=click.echo)
    except InsikaError as exc:
        raise _fail(exc) from None


cli.add_command(__import__("insika_knowledge.procedures.cli", fromlist=["procedures"]).procedures)
cli.add_command(__import__("insika_knowledge.mcp.cli", fromlist=["mcp_command"]).mcp_command)
cli.add_command(__import__("insika_knowledge.hermes.cli", fromlist=["hermes_group"]).hermes_group)


def _require_tenant(memory: Any, tenant: str) -> None:
    if not memory.has_tenant(tenant):
        raise NotFound(f"tenant {tenant!r} has no database in {memory.directory}")


def main() -> None:
    """Console-script entry point."""
    try:
        cli(standalone_mode=True)
    except KeyboardInterrupt:
        sys.exit(130)
