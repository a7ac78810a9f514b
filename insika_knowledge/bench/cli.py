"""The tooling's commands: ``bench`` and ``procedures evaluate``.

`insika_knowledge.bench.plugin` attaches them to the command line, whose group maps
errors to exit codes (2 a usage mistake, 1 a run-time failure); the commands here only
raise. Their work is imported when they run, so ``--help`` stays fast. ``bench`` shows
its progress on stderr (a rich bar on a terminal, one line a step otherwise), so the
results on stdout stay clean.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import click

from insika_knowledge.errors import NotFound, UserError, missing_extra
from insika_knowledge.ids import DEFAULT_TENANT
from insika_knowledge.procedure import Procedure, TaskRecord
from insika_knowledge.procedures.cli import verify_pattern_option


@click.command()
@click.option("--json", "as_json", is_flag=True, help="Print the results as JSON.")
@click.option("--quick", is_flag=True, help="Fewer repetitions (a smoke run, not a measurement).")
@click.option("--scale", is_flag=True, help="auto, Scan, FTS5, bm25s and tantivy at 1000..200000 concepts instead.")
@click.option("--sizes", default=None, help="With --scale: comma-separated concept counts.")
@click.option("--quality", is_flag=True, help="Retrieval quality on the labelled set instead.")
@click.option("--set", "eval_set", type=click.Path(), default=None,
              help="The labelled set: with --quality the folder with concepts.jsonl and queries.jsonl, with "
              "--consolidation a pairs file (JSONL), with --trust a conversations file (JSONL).")
@click.option("--trust", is_flag=True, help="Poisoning injected / legitimate quarantined on the trust set.")
@click.option("--quotes", type=click.Choice(["given", "removed", "paraphrased"]), default=None,
              help="With --trust: the candidates' quotes as recorded (default), none, or reworded (found nowhere).")
@click.option("--relay", is_flag=True, help="The relay's added latency at 5,000 concepts (needs the relay extra).")
@click.option("--consolidation", is_flag=True,
              help="Consolidation on the labelled pairs and the renamed sightings instead.")
@click.option("--outbox", is_flag=True,
              help="after_turn p50/p95 and the extraction outbox's throughput instead.")
@click.option("--faults", is_flag=True,
              help="Kills, a database outage and restarts on both backends: turns lost, resume time, "
                   "hook and relay latency with the database down.")
@click.option("--backend", type=click.Choice(["sqlite", "postgresql"]), default="sqlite", show_default=True,
              help="postgresql: full-text search, same-claim writes and 4 writer processes on PostgreSQL "
              "beside SQLite (with --quality: our rankers on PostgreSQL too).")
@click.option("--database", default=None, metavar="URL",
              help="With --backend postgresql: the database to use (default: $INSIKA_DATABASE_URL, "
              "else a throwaway cluster started here).")
@click.option("--embeddings", default=None, metavar="SPEC",
              help="With --quality or --scale: the embedding provider of the dense and hybrid rows "
              "(default: $INSIKA_EMBEDDINGS, else auto; off leaves them out). With --relay: the relay's "
              "(default: off, the lexical relay).")
def bench(as_json: bool, quick: bool, scale: bool, sizes: str | None, quality: bool, eval_set: str | None,
          trust: bool, quotes: str | None, relay: bool, consolidation: bool, outbox: bool, faults: bool, backend: str,
          database: str | None,
          embeddings: str | None) -> None:
    """Measure speed, scale, quality, trust, consolidation, the outbox, faults, the relay, or PostgreSQL."""
    modes = [flag for flag, on in (("--outbox", outbox), ("--faults", faults), ("--consolidation", consolidation),
                                   ("--quality", quality), ("--relay", relay), ("--trust", trust),
                                   ("--scale", scale)) if on]
    if len(modes) > 1:
        raise UserError(f"bench {' '.join(modes)}: give one of them at a time")
    if sizes is not None and not scale:
        raise UserError("--sizes goes with --scale")
    if quotes is not None and not trust:
        raise UserError("--quotes goes with --trust")
    if eval_set is not None and not (quality or consolidation or trust):
        raise UserError("--set goes with --quality, --consolidation or --trust")
    if outbox:
        from insika_knowledge.bench.outbox import run_outbox_bench

        run_outbox_bench(quick=quick, as_json=as_json, echo=click.echo)
    elif faults:
        from insika_knowledge.bench.faults import run_faults_bench

        run_faults_bench(quick=quick, as_json=as_json, echo=click.echo)
    elif consolidation:
        from insika_knowledge.bench.consolidation import run_consolidation

        run_consolidation(pairs_path=Path(eval_set) if eval_set else None, as_json=as_json, echo=click.echo)
    elif quality:
        from insika_knowledge.bench.quality import run_quality

        run_quality(folder=Path(eval_set) if eval_set else None, as_json=as_json, echo=click.echo,
                    backend=backend, database=database, embeddings=embeddings)
    elif backend == "postgresql":
        from insika_knowledge.bench.backend import run_backend_bench

        run_backend_bench(backend=backend, database=database, quick=quick, as_json=as_json, echo=click.echo)
    elif relay:
        try:
            from insika_knowledge.bench.relay import run_relay_bench
        except ImportError as exc:
            raise missing_extra("bench --relay", "relay", exc.name or str(exc)) from None
        run_relay_bench(quick=quick, as_json=as_json, echo=click.echo, embeddings=embeddings)
    elif trust:
        from insika_knowledge.bench.trust import run_trust

        run_trust(path=Path(eval_set) if eval_set else None, as_json=as_json, echo=click.echo,
                  quotes=quotes or "given")
    elif scale:
        from insika_knowledge.bench.scale import SCALE_SIZES, run_scale

        chosen = scale_sizes(sizes) if sizes is not None else SCALE_SIZES
        with step_progress("bench --scale") as on_step:
            run_scale(sizes=chosen, as_json=as_json, quick=quick, echo=click.echo, on_step=on_step,
                      embeddings=embeddings)
    else:
        from insika_knowledge.bench.speed import run_bench

        with step_progress("bench --quick" if quick else "bench") as on_step:
            run_bench(as_json=as_json, quick=quick, echo=click.echo, on_step=on_step)


#: `bench --scale --sizes` accepts concept counts up to this (200000 takes minutes and GBs).
MAX_SCALE_SIZE = 1_000_000


def scale_sizes(text: str) -> tuple[int, ...]:
    """The concept counts of ``--sizes`` (``"1000,5000"``), each 1..`MAX_SCALE_SIZE`.

    Raises:
        UserError: empty, not whole numbers, or a count out of range (named).
    """
    try:
        chosen = tuple(int(n) for n in text.split(","))
    except ValueError:
        raise UserError(f"--sizes {text!r}: give whole numbers like 1000,5000") from None
    for n in chosen:
        if not 1 <= n <= MAX_SCALE_SIZE:
            raise UserError(f"--sizes {text!r}: {n} concepts is out of 1..{MAX_SCALE_SIZE:,}")
    return chosen


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
@click.option("--sessions", "sessions_files", multiple=True, type=click.Path(dir_okay=False, allow_dash=True),
              help="Normalised JSONL whose sessions carry metadata.task_id (and user_group) and an outcome; "
              "repeatable (each file one tenant; .gz ok; - reads standard input).")
@click.option("--requests", "requests_file", default=None, type=click.Path(dir_okay=False),
              help="Raw request bodies (JSONL, .gz ok) to replay through handle_request in prod.")
@click.option("--reports", "reports_file", default=None, type=click.Path(dir_okay=False),
              help="With --requests: JSON instance id -> resolved (default: each record's resolved).")
@click.option("--seeds", type=click.IntRange(min=1), default=None,
              help="Seeded half splits 0..N-1 instead of leave-one-task-out.")
@click.option("--train-fraction", type=click.FloatRange(0, 1, min_open=True, max_open=True), default=0.5,
              show_default=True, help="With --seeds: the share of tasks mined, between 0 and 1.")
@click.option("--tasks", default=None, help="Comma-separated tasks to hold out (default: all).")
@click.option("--min-confidence", type=float, default=None, help="Default: the configured 0.2.")
@click.option("--min-match-score", type=float, default=None, help="Default: the configured 0.7.")
@click.option("--identity", type=click.Choice(["task", "derived"]), default="task", show_default=True,
              help="Operations: a run's task is the task id the sessions carry, or (derived) its first "
              "user message, as the live path tells it.")
@click.option("--fixed", is_flag=True,
              help="Operations: score test with the configured thresholds, not the dev choice (dev is still swept).")
@verify_pattern_option
@click.option("--data-dir", type=click.Path(file_okay=False), default=None,
              help="Evaluate the procedures already mined into this data directory "
              "(`procedures mine`) instead of mining the file (default tenant: default).")
@click.option("--tenant", default=None,
              help="Evaluate the procedures already mined into this tenant (in --data-dir, "
              "else $INSIKA_KNOWLEDGE_HOME) instead of mining the file.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def evaluate(
    sessions_files: tuple[str, ...],
    requests_file: str | None,
    reports_file: str | None,
    seeds: int | None,
    train_fraction: float,
    tasks: str | None,
    min_confidence: float | None,
    min_match_score: float | None,
    identity: str,
    fixed: bool,
    verify_patterns: tuple[str, ...],
    data_dir: str | None,
    tenant: str | None,
    as_json: bool,
) -> None:
    """Report recall precision, wrong recalls, coverage and adherence on held-out tasks.

    Tool-calling sessions (operation procedures): split by user group into dev and test;
    every threshold is chosen on dev, leaving one group out; test is scored once (per
    intent, with bootstrap intervals). Shell sessions: each task of --sessions is held
    out in turn (leave-one-task-out). With --requests, every raw request is replayed
    through the live path in prod: prefix kept, block carried, sessions that got a
    procedure, latency. With --data-dir or --tenant, the procedures a tenant already
    holds are recalled on every session of the file instead (nothing mined, nothing
    written).
    """
    from insika_knowledge.bench.evaluate import evaluate_stored, format_report, run
    from insika_knowledge.procedures.config import ProceduresConfig

    if math.isnan(train_fraction):
        raise click.BadParameter("nan is no share of the tasks", param_hint="'--train-fraction'")
    if reports_file is not None and requests_file is None:
        raise click.UsageError("--reports goes with --requests (it says which replayed instance was resolved)")

    config = ProceduresConfig(
        min_confidence=ProceduresConfig.min_confidence
        if min_confidence is None
        else min_confidence,
        min_match_score=ProceduresConfig.min_match_score
        if min_match_score is None
        else min_match_score,
        verify_patterns=verify_patterns,
    )
    sessions_file = sessions_files[0] if sessions_files else None
    if data_dir is not None or tenant is not None:
        if sessions_file is None or seeds is not None or requests_file is not None:
            raise UserError("--data-dir/--tenant evaluate the stored procedures once, on every "
                            "session of --sessions (no --seeds, no --requests)")
        procedures, population, source, records, key = _stored_procedures(data_dir, tenant or DEFAULT_TENANT)
        stored = evaluate_stored(sessions_file, procedures, source=source, config=config, population=population,
                                 tasks=records, key=key)
        click.echo(json.dumps(stored, indent=2) if as_json else format_report(stored, detail=True))
        return
    with step_progress("replaying requests") as step:
        report, text = run(
            sessions=sessions_file,
            requests=requests_file,
            reports=reports_file,
            seeds=seeds,
            train_fraction=train_fraction,
            tasks=tasks.split(",") if tasks else None,
            config=config,
            more_sessions=sessions_files[1:],
            identity=identity,
            fixed=fixed,
            on_progress=step,  # --requests: one step an instance, on stderr
            progress=lambda line: click.echo(line, err=True),
        )
    click.echo(json.dumps(report, indent=2) if as_json else text)


def _stored_procedures(
    data_dir: str | None, tenant: str
) -> tuple[list[Procedure], dict[str, int], str, list[TaskRecord], bytes]:
    """Every procedure of `tenant`'s database, its population, where it is (for the report),
    its task records and its key of term digests.

    Raises:
        InvalidName: the tenant name is invalid.
        NotFound: the tenant has no database there (nothing is created).
    """
    from insika_knowledge.location import data_dir as resolve
    from insika_knowledge.store.sqlite.paths import tenant_path
    from insika_knowledge.store.sqlite.procedures import ProcedureStore

    path = tenant_path(resolve(data_dir), tenant)
    if not path.exists():
        raise NotFound(f"tenant {tenant!r} has no database in {path.parent}: "
                       "run `insika-knowledge procedures mine` first")
    store = ProcedureStore(path)
    try:
        return (store.list_procedures(), store.population_since(0), f"tenant {tenant} in {path.parent}",
                store.tasks_since(0), store.digest_key())
    finally:
        store.close()
