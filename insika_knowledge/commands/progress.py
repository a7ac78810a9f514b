"""The backfill's view (a progress bar while it runs, tables when it is done), and ``reindex``'s bar.

While sessions run, stderr shows a bar with sessions done / total, elapsed time and an
estimate of the time left (rich; shown only on a terminal, never with ``--quiet``). When
the run ends, stdout gets a summary table (one row per session status, with the concepts
learned, confirmed, merged, put in conflict and the candidates dropped), the sessions that
failed with their detail, every session's row with ``--verbose``, and the one-line total
scripts read.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Final

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table

from insika_knowledge.backfill import BackfillSummary, SessionStatus

#: Failed sessions listed without ``--verbose``; the others are counted.
FAILURES_SHOWN: Final = 10
#: Characters of a detail shown in a table cell.
DETAIL_CHARS: Final = 60
#: Statuses that are not failures: learned now, learned before, left out by ``--since`` (its
#: time before it, or written but no date), or nothing said in the session.
SETTLED: Final = frozenset({"done", "skipped", "before-since", "undated", "empty"})
#: Table width when stdout is not a terminal (a file or a pipe).
PIPE_WIDTH: Final = 160


class SessionBar:
    """The progress bar: `start` with the number of sessions, `advance` once per session.

    Both are safe to call from the backfill's worker threads.
    """

    def __init__(self, progress: Progress):
        self._progress = progress
        self._task = progress.add_task("backfill", total=None)

    def start(self, total: int) -> None:
        """Set the number of sessions the run will go through."""
        self._progress.update(self._task, total=total)

    def advance(self, status: SessionStatus) -> None:
        """Count one finished session."""
        self._progress.advance(self._task)


@contextmanager
def session_bar(agent: str, *, quiet: bool) -> Iterator[SessionBar]:
    """A progress bar on stderr for the duration of the block (cleared when it ends)."""
    with _bar(f"backfill {agent}", "sessions", quiet=quiet) as progress:
        yield SessionBar(progress)


class CountBar:
    """A bar of `update` (done, total) calls: what `count_bar` yields."""

    def __init__(self, progress: Progress):
        self._progress = progress
        self._task = progress.add_task("count", total=None)

    def update(self, done: int, total: int) -> None:
        """Show `done` of `total`."""
        self._progress.update(self._task, completed=done, total=total)


@contextmanager
def count_bar(label: str, unit: str, *, quiet: bool) -> Iterator[CountBar]:
    """A progress bar on stderr (`label`, done / total `unit`, elapsed, eta), cleared when it ends."""
    with _bar(label, unit, quiet=quiet) as progress:
        yield CountBar(progress)


@contextmanager
def _bar(label: str, unit: str, *, quiet: bool) -> Iterator[Progress]:
    """The rich progress on stderr both bars show: label, bar, done / total unit, elapsed, eta."""
    console = Console(stderr=True, quiet=quiet)
    columns = (TextColumn(label), BarColumn(), MofNCompleteColumn(), TextColumn(unit), TimeElapsedColumn(),
               TextColumn("eta"), TimeRemainingColumn())
    # (off when stderr is no terminal: a bar there is only a stray blank line before the result)
    with Progress(*columns, console=console, transient=True, disable=not console.is_terminal) as progress:
        yield progress


def print_summary(summary: BackfillSummary, sessions_file: str, *, verbose: bool, quiet: bool,
                  echo: Callable[[str], None], where: str = "", waiting: tuple[int, int] | None = None) -> None:
    """Print the run's tables (not with `quiet`), its one-line total (always) and what the
    store holds for a person (`review_line`; not with `quiet`).

    Args:
        summary: the finished run.
        sessions_file: the file it read (named when it held no session).
        verbose: also list every session (status, counts, detail).
        quiet: leave the tables out.
        echo: where the one-line total goes.
        where: what the suggested commands add after ``--agent A`` to reach this store
            (``" --data-dir D --tenant T"``; `options.where_args`).
        waiting: what the store holds for a person after the run (`review_line`).
    """
    out = Console(quiet=quiet, width=None if sys.stdout.isatty() else PIPE_WIDTH)
    if not summary.statuses:
        echo(f"no sessions in {sessions_file}")
    elif verbose:
        out.print(_sessions_table(summary.statuses, "every session"))
    else:
        out.print(_status_table(summary))
        failed = [s for s in summary.statuses if s.status not in SETTLED]
        if failed:
            shown = failed[:FAILURES_SHOWN]
            more = len(failed) - len(shown)
            title = "sessions not learned" + (f" (first {len(shown)}; --verbose lists all)" if more else "")
            out.print(_sessions_table(shown, title))
    echo(total_line(summary))
    if (review := review_line(summary.agent, waiting, where)) and not quiet:
        echo(review)


def total_line(summary: BackfillSummary) -> str:
    """``backfill A: N sessions (status n, ...); learned n, confirmed n, ... dropped n (reason=n)``."""
    statuses = summary.by_status()
    dropped = summary.dropped
    counted = f" ({', '.join(f'{k} {v}' for k, v in sorted(statuses.items()))})" if statuses else ""
    return (
        f"backfill {summary.agent}: {len(summary.statuses)} session{'' if len(summary.statuses) == 1 else 's'}"
        f"{counted}; "
        f"learned {summary.total('learned')}, confirmed {summary.total('confirmed')}, "
        f"merged {summary.total('merged')}, conflicts {summary.total('conflicts')}, "
        f"dropped {sum(dropped.values())}"
        + (f" ({', '.join(f'{k}={v}' for k, v in sorted(dropped.items()))})" if dropped else "")
        + (f", possible duplicates {held}" if (held := summary.total("possible_duplicates")) else "")
        + (f", quarantined {q}" if (q := summary.total("quarantined")) else "")
        + (f", unsupported {u}" if (u := summary.total("unsupported")) else "")
    )


#: The outcomes the status table shows in a column of their own only when a session had one
#: (held for a person: a possible duplicate, a claim only the customer made, one no message said).
_HELD_COLUMNS: Final = (("possible_duplicates", "possible duplicates"), ("quarantined", "quarantined"),
                        ("unsupported", "unsupported"))


def _status_table(summary: BackfillSummary) -> Table:
    held = [(key, title) for key, title in _HELD_COLUMNS if summary.total(key)]
    table = Table("status", "sessions", "learned", "confirmed", "merged", "conflicts", "dropped",
                  *(title for _, title in held), title=f"backfill {summary.agent}")
    for status, count in sorted(summary.by_status().items()):
        rows = [s for s in summary.statuses if s.status == status]
        table.add_row(status, str(count), *(str(sum(getattr(s, k) for s in rows))
                                            for k in ("learned", "confirmed", "merged", "conflicts")),
                      str(sum(sum(s.dropped.values()) for s in rows)),
                      *(str(sum(getattr(s, key) for s in rows)) for key, _ in held))
    return table


def _sessions_table(statuses: list[SessionStatus], title: str) -> Table:
    held = [(key, title) for key, title in _HELD_COLUMNS if any(getattr(s, key) for s in statuses)]
    table = Table("session", "status", "learned", "confirmed", "merged", "conflicts", "dropped",
                  *(name for _, name in held), "detail", title=title)
    for s in statuses:
        detail = s.detail or ""
        table.add_row(s.session_id, s.status, str(s.learned), str(s.confirmed), str(s.merged),
                      str(s.conflicts), ", ".join(f"{k}={v}" for k, v in sorted(s.dropped.items())) or "0",
                      *(str(getattr(s, key)) for key, _ in held),
                      detail if len(detail) <= DETAIL_CHARS else detail[: DETAIL_CHARS - 1] + "…")
    return table


def review_line(agent: str, waiting: tuple[int, int] | None, where: str = "") -> str:
    """What the store holds for a person after the run, and the command that lists it; ""
    when nothing (or `waiting` is None: it could not be read).

    Args:
        agent: the agent.
        waiting: (concepts awaiting a person: contradicting reports or claims held against
            them, as `conflicts` lists them; concepts held in quarantine).
        where: what the commands add after ``--agent A`` (`options.where_args`).
    """
    if waiting is None:
        return ""
    conflicts, quarantined = waiting
    said = [f"{n} {one if n == 1 else many} ({command} --agent {agent}{where})"
            for n, one, many, command in (
                (conflicts, "concept in conflict or with claims held against it",
                 "concepts in conflict or with claims held against them", "insika-knowledge conflicts"),
                (quarantined, "concept held in quarantine", "concepts held in quarantine", "insika-knowledge list"))
            if n]
    return f"waiting for a person: {'; '.join(said)}" if said else ""
