"""Where the shared sample datasets are (``shared/data``), for benchmarks, demos and tests.

The datasets are third-party conversations and traces kept outside this repository
(with their licences) and read by path, never copied in.
"""

from __future__ import annotations

import os
from pathlib import Path

ENV = "INSIKA_SHARED_DATA"


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
