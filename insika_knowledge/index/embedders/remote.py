"""Any OpenAI-compatible ``/v1/embeddings`` endpoint as an embedding provider.

Configured like the extraction model: a model name and a base URL (see
`insika_knowledge.index.embedders`). Vectors are normalised here (some servers do not).
A query is sent as it is; servers that serve asymmetric models expect their own
prefixes in the model name's documentation, not from us.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

import numpy as np

from insika_knowledge.errors import RunTimeFailure
from insika_knowledge.index.embedders.protocol import Vectors, normalised

#: Texts per request.
BATCH: Final = 64
#: Seconds a request may take.
TIMEOUT_S: Final = 30.0
#: Characters of a text sent (endpoints refuse inputs past their token limit).
MAX_CHARS: Final = 6000


class RemoteEmbedder:
    """An embeddings endpoint (the `openai` client, any base URL).

    Args:
        spec: the model name (``openai/`` before it is dropped).
        base_url: the endpoint (None: the client's default or ``$OPENAI_BASE_URL``).
        api_key: None: ``$OPENAI_API_KEY``, or a placeholder for a local server.
    """

    def __init__(self, spec: str, *, base_url: str | None = None, api_key: str | None = None,
                 client: Any = None):
        self.model = spec.removeprefix("openai/")
        self.base_url = base_url
        self._client = client
        self._api_key = api_key
        self.model_id = f"openai-compatible/{self.model}"
        self.dim = 0  # known after the first answer

    def _opened(self) -> Any:
        if self._client is None:
            import os

            from openai import OpenAI

            self._client = OpenAI(base_url=self.base_url, timeout=TIMEOUT_S, max_retries=1,
                                  api_key=self._api_key or os.environ.get("OPENAI_API_KEY") or "not-set")
        return self._client

    def queries(self, texts: Sequence[str]) -> Vectors:
        """Vectors of search queries, shape (n, dim)."""
        return self._embed(texts)

    def passages(self, texts: Sequence[str]) -> Vectors:
        """Vectors of concepts, shape (n, dim)."""
        return self._embed(texts)

    def _embed(self, texts: Sequence[str]) -> Vectors:
        rows: list[list[float]] = []
        for start in range(0, len(texts), BATCH):
            chunk = [t[:MAX_CHARS] or " " for t in texts[start:start + BATCH]]
            try:
                answer = self._opened().embeddings.create(model=self.model, input=chunk)
                data = sorted(answer.data, key=lambda d: d.index)
                rows.extend(list(d.embedding) for d in data)
            except Exception as exc:  # any client or server failure: the caller degrades
                raise RunTimeFailure(f"embeddings endpoint {self.base_url or 'default'} failed for model "
                                     f"{self.model!r}: {type(exc).__name__}: {exc}"[:300]) from exc
            if len(rows) != min(start + BATCH, len(texts)):
                raise RunTimeFailure(f"embeddings endpoint answered {len(rows)} vectors for {len(texts)} texts")
        if not rows:
            return np.zeros((0, self.dim), dtype=np.float32)
        out = normalised(np.array(rows, dtype=np.float32))
        self.dim = out.shape[1]
        return out
