"""Where the tooling's data is: the labelled sets (``benchmarks/``) and the shared datasets.

The labelled sets are this repository's ``benchmarks/`` folder, shipped inside the wheel
as ``insika_knowledge/bench/data/`` (pyproject's ``force-include``), so `benchmark_data`
finds them in an installed package as in a checkout. The shared datasets are third-party
conversations and traces kept outside this repository (with their licences) and read by
path, never copied in.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, Final, TypeVar

from insika_knowledge.errors import UserError

#: A labelled case (`labelled_cases`).
T = TypeVar("T")

ENV: Final = "INSIKA_SHARED_DATA"
#: Where the wheel puts the repository's ``benchmarks/`` folder.
PACKAGED: Final = Path(__file__).resolve().parent / "data"
#: The ``benchmarks/`` folder of a checkout (the package's grandparent folder).
CHECKOUT: Final = Path(__file__).resolve().parents[2] / "benchmarks"


def benchmark_data(relative: str | Path) -> Path:
    """The file or folder `relative` under ``benchmarks/``, installed or in the checkout.

    Args:
        relative: a path under ``benchmarks/``, e.g. ``"retrieval"`` or
            ``"retrieval/queries.jsonl"``.

    Returns:
        The existing path: in the installed package (``insika_knowledge/bench/data/``)
        first, else in the checkout (``benchmarks/`` beside the package).

    Raises:
        UserError: `relative` is absolute or climbs out with ``..``, or it exists in
            neither place.
    """
    path = Path(relative)
    if path.is_absolute() or ".." in path.parts:
        raise UserError(f"{relative}: give a path under benchmarks/, like 'retrieval'")
    for base in (PACKAGED, CHECKOUT):
        if (base / path).exists():
            return base / path
    raise UserError(
        f"benchmarks/{path.as_posix()} is neither in the installed package ({PACKAGED}) nor "
        f"in a checkout ({CHECKOUT}); reinstall insika-knowledge or run from the repository"
    )


def shared_data() -> Path | None:
    """The ``shared/data`` folder: ``$INSIKA_SHARED_DATA``, else the first ``shared/data``
    beside the current folder, the checkout or one of their parents; None when absent.
    """
    env = os.environ.get(ENV)
    if env:
        path = Path(env).expanduser()
        return path if path.is_dir() else None
    starts = [Path.cwd().resolve(), Path(__file__).resolve().parent]
    for start in starts:
        for folder in [start, *start.parents]:
            candidate = folder / "shared" / "data"
            if candidate.is_dir():
                return candidate
    return None


def jsonl_rows(path: Path, what: str, folder: str) -> Iterator[tuple[int, Any]]:
    """The rows of a labelled JSONL file: ``(line number, parsed row)``, blank lines skipped.

    Args:
        path: the file.
        what: what it holds, for the error ("the labelled pairs").
        folder: where the shipped ones live under ``benchmarks/`` ("consolidation").

    Raises:
        UserError: the file is missing, or a line is not JSON (file, line and what is wrong
            named). What a row must hold is its caller's to check.
    """
    if path.is_dir():
        raise UserError(f"{path} is a directory, not a file: {what} live in benchmarks/{folder}/*.jsonl")
    if not path.is_file():
        raise UserError(f"{path} does not exist: {what} live in benchmarks/{folder}/")
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            yield number, json.loads(line)
        except json.JSONDecodeError as exc:
            raise UserError(f"{path}:{number}: {exc.msg}") from None


def half_of(case_id: int) -> str:
    """The half a labelled case's id puts it in: ``dev`` for an even id, ``test`` for an odd one."""
    return "dev" if case_id % 2 == 0 else "test"


def labelled_cases(path: Path, what: str, one: str, folder: str, build: Callable[[Any], T],
                   labels: Sequence[str]) -> list[T]:
    """Each row of a labelled JSONL file made into a case by `build` (`jsonl_rows`).

    Args:
        path: the file.
        what: what it holds, for the errors ("the listed merges").
        one: one row of it, for the errors ("a listed merge").
        folder: where the shipped ones live under ``benchmarks/`` ("consolidation").
        build: makes a case (with a ``label`` attribute) from a parsed row; a `KeyError`,
            `TypeError` or `ValueError` it raises means the row is not one.
        labels: the labels a case may have.

    Raises:
        UserError: the file is missing, a line is not JSON or not a case, or a label is
            not one of `labels` (file and line named).
    """
    out: list[T] = []
    for number, row in jsonl_rows(path, what, folder):
        try:
            case = build(row)
        except (KeyError, TypeError, ValueError) as exc:
            raise UserError(f"{path}:{number}: not {one} ({exc!r})") from None
        label = getattr(case, "label", None)
        if label not in labels:
            raise UserError(f"{path}:{number}: label {label!r} is not one of {', '.join(labels)}")
        out.append(case)
    return out
