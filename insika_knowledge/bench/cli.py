"""The tooling's commands: ``bench`` and ``procedures evaluate``.

`insika_knowledge.bench.plugin` attaches them to the command line, whose group maps
errors to exit codes (2 a usage mistake, 1 a run-time failure); the commands here only
raise. Their work is imported when they run, so ``--help`` stays fast. ``bench`` shows
its progress on stderr (a rich bar on a terminal, one line a step otherwise), so the
results on stdout stay clean.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

import click

from insika_knowledge.errors import NotFound, UserError
from insika_knowledge.procedure import Procedure
from insika_knowledge.store.paths import DEFAULT_TENANT


@click.command()
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
    if quality:
        from insika_knowledge.bench.quality import run_quality

        run_quality(folder=Path(eval_set) if eval_set else None, as_json=as_json, echo=click.echo)
    elif scale:
        from insika_knowledge.bench.scale import SCALE_SIZES, run_scale

        try:
            chosen = tuple(int(n) for n in sizes.split(",")) if sizes else SCALE_SIZES
        except ValueError:
            raise UserError(f"--sizes {sizes!r}: give whole numbers like 1000,5000") from None
        with step_progress("bench --scale") as on_step:
            run_scale(sizes=chosen, as_json=as_json, quick=quick, echo=click.echo, on_step=on_step)
    else:
        from insika_knowledge.bench.speed import run_bench

        with step_progress("bench --quick" if quick else "bench") as on_step:
            run_bench(as_json=as_json, quick=quick, echo=click.echo, on_step=on_step)


@contextmanager
def step_progress(title: str) -> Iterator[Callable[[str, int, int], None]]:
    """A step callback ``(what, done, total)`` that shows progress on stderr.

    On a terminal, a rich bar with the step, steps done / total and the time elapsed
    (cleared at the end); otherwise one line a step, ``title: [k/n] what``.
    """
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    console = Console(stderr=True)
    if not console.is_terminal:
        def line(what: str, done: int, total: int) -> None:
            if what != "done":
                click.echo(f"{title}: [{done + 1}/{total}] {what}", err=True)

        yield line
        return
    columns = (TextColumn(title), BarColumn(), MofNCompleteColumn(), TextColumn("{task.description}"),
               TimeElapsedColumn())
    with Progress(*columns, console=console, transient=True) as progress:
        task = progress.add_task("", total=None)

        def bar(what: str, done: int, total: int) -> None:
            progress.update(task, description=what, completed=done, total=total)

        yield bar


@click.command()
@click.option(
    "--sessions",
    "sessions_file",
    required=True,
    type=click.Path(dir_okay=False),
    help="Normalised JSONL whose sessions carry metadata.task_id.",
)
@click.option(
    "--seeds", type=int, default=1, show_default=True, help="Splits to run (seeds 0..N-1)."
)
@click.option("--train-fraction", type=float, default=0.5, show_default=True)
@click.option("--min-confidence", type=float, default=None, help="Default: the configured 0.3.")
@click.option("--min-match-score", type=float, default=None, help="Default: the configured 0.25.")
@click.option("--data-dir", type=click.Path(file_okay=False), default=None,
              help="Evaluate the procedures already mined into this data directory "
              "(`procedures mine`) instead of mining a split (default tenant: default).")
@click.option("--tenant", default=None,
              help="Evaluate the procedures already mined into this tenant (in --data-dir, "
              "else $INSIKA_KNOWLEDGE_HOME) instead of mining a split.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def evaluate(
    sessions_file: str,
    seeds: int,
    train_fraction: float,
    min_confidence: float | None,
    min_match_score: float | None,
    data_dir: str | None,
    tenant: str | None,
    as_json: bool,
) -> None:
    """Mine some tasks, recall on the held-out others, and report hit rate and adherence.

    With --data-dir or --tenant, the procedures a tenant already holds are recalled on
    every session of the file instead (no split, nothing mined, nothing written).
    """
    from insika_knowledge.bench.evaluate import evaluate as run
    from insika_knowledge.bench.evaluate import evaluate_stored, format_report
    from insika_knowledge.procedures.config import ProceduresConfig

    if seeds < 1:
        raise UserError("--seeds: must be at least 1")
    config = ProceduresConfig()
    config = replace(
        config,
        min_confidence=config.min_confidence if min_confidence is None else min_confidence,
        min_match_score=config.min_match_score if min_match_score is None else min_match_score,
    )
    if data_dir is None and tenant is None:
        report = run(sessions_file, seeds=range(seeds), train_fraction=train_fraction, config=config)
    else:
        if seeds != 1:
            raise UserError("--seeds splits the file for mining; with --data-dir or --tenant the "
                            "stored procedures are evaluated once, on every session")
        procedures, source = _stored_procedures(data_dir, tenant or DEFAULT_TENANT)
        report = evaluate_stored(sessions_file, procedures, source=source, config=config)
    click.echo(
        json.dumps(report, indent=2) if as_json else format_report(report, detail=seeds <= 3)
    )


def _stored_procedures(data_dir: str | None, tenant: str) -> tuple[list[Procedure], str]:
    """Every procedure of `tenant`'s database, and where it is (for the report).

    Raises:
        InvalidName: the tenant name is invalid.
        NotFound: the tenant has no database there (nothing is created).
    """
    from insika_knowledge.store.paths import data_dir as resolve
    from insika_knowledge.store.paths import tenant_path
    from insika_knowledge.store.procedures import ProcedureStore

    path = tenant_path(resolve(data_dir), tenant)
    if not path.exists():
        raise NotFound(f"tenant {tenant!r} has no database in {path.parent}: "
                       "run `insika-knowledge procedures mine` first")
    store = ProcedureStore(path)
    try:
        return store.list_procedures(), f"tenant {tenant} in {path.parent}"
    finally:
        store.close()
