"""How a benchmark prints its results: as JSON, or as the lines of its table."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from typing import TypeVar

T = TypeVar("T")


def print_results(results: T, table: Callable[[T], Iterable[str]], *, as_json: bool,
                  echo: Callable[[str], None]) -> T:
    """Echo `results` as indented JSON when `as_json`, else each line of ``table(results)``.

    Returns:
        `results`, unchanged (what the benchmark returns to its caller).
    """
    if as_json:
        echo(json.dumps(results, indent=2))
        return results
    for line in table(results):
        echo(line)
    return results
