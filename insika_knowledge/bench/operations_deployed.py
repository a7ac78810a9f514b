"""The test half as a deployed memory meets it: each run is learned after it is scored.

`insika_knowledge.bench.operations_eval` scores the test runs against a memory frozen at
the dev half. A deployed memory keeps learning: when a session ends, the live path mines
it with its outcome and with the operations a recall gave it (`Miner.add_trace`). A task
whose successful runs made no write votes for nothing, and a successful run that made none
of the operations it was given counts against them in its task (a contradicted recall).
So a request the memory answered wrongly once (a change the customer then declined, a
refusal the policy required) is not answered the same way again.

Here the memory starts from the file's dev runs; the test runs arrive one at a time, and
each is replayed with the settings chosen on dev (`operations_eval`: nothing is tuned
here), scored once, before the memory has seen it, and then learned. The labels
(``intent``, ``gt_actions``) are read only to score, as there; a run's outcome is what the
live path is told when a session ends.

What was learned first decides later recalls, so the arrival order matters: the runs are
scored in file order and again in `ORDERS` seeded shuffles of each file's test runs
(minimum, median and maximum of each figure).
"""

from __future__ import annotations

import random
import statistics
from collections.abc import Mapping, Sequence
from typing import Any, Final

from insika_knowledge.bench.operations_runs import (
    Run,
    Setting,
    fold_from,
    learn,
    meets,
    recallable_of,
    replay_run,
    score_run,
    summarise,
)
from insika_knowledge.procedures.mining.mine import Miner

#: Shuffled arrival orders scored besides the file's own.
ORDERS: Final = 10
_FIGURES: Final = ("precision", "wrong_recall_rate", "coverage")


def arrive(files: Mapping[str, Sequence[Run]], setting: Setting, identity: str,
           order: random.Random | None = None) -> list[dict[str, Any]]:
    """The test runs of every file replayed as they arrive, each learned after it is scored.

    Args:
        files: path -> its runs (`read_runs`); each file is one tenant (its own memory).
        setting: the thresholds (chosen on dev).
        identity: ``task`` (the sessions' task ids) or ``derived`` (the first user message).
        order: shuffles each file's test runs; None: file order.

    Returns:
        One row per test run (`score_run`), in arrival order.
    """
    rows: list[dict[str, Any]] = []
    for runs in files.values():
        miner = Miner()
        for run in runs:
            if run.half == "dev":
                learn(miner, run, identity)
        test = [r for r in runs if r.half == "test"]
        if order is not None:
            order.shuffle(test)
        for run in test:
            fold = fold_from(miner, [run])
            allowed = recallable_of(fold, setting.min_confidence)
            replay = replay_run(run, fold, setting, allowed)
            rows.append(score_run(run, replay, fold, allowed))
            learn(miner, run, identity, replay["operations"])
    return rows


def deployed(files: Mapping[str, Sequence[Run]], setting: Setting, identity: str, *,
             orders: int = ORDERS, seed: int = 29) -> dict[str, Any]:
    """Score the test runs as a deployed memory meets them (see the module).

    Returns:
        ``{"summary": summarise(rows in file order), "meets_targets", "runs": rows,
        "orders": n, "shuffled": {figure: [min, median, max]}}`` (figures as `summarise`:
        precision, wrong_recall_rate, coverage; a figure no order could measure is left out).
    """
    rows = arrive(files, setting, identity)
    summary = summarise(rows)
    rnd = random.Random(seed)
    spread: dict[str, list[float]] = {name: [] for name in _FIGURES}
    for _ in range(orders):
        s = summarise(arrive(files, setting, identity, rnd))
        for name in _FIGURES:
            if s[name] is not None:
                spread[name].append(s[name])
    return {
        "summary": summary,
        "meets_targets": meets(summary),
        "runs": rows,
        "orders": orders,
        "shuffled": {name: [min(v), statistics.median(v), max(v)] for name, v in spread.items() if v},
    }


__all__ = ["ORDERS", "arrive", "deployed"]
