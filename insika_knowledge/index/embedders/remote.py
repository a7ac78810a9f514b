"""Any OpenAI-compatible ``/v1/embeddings`` endpoint as an embedding provider.

Configured like the extraction model: a model name and a base URL (see
`insika_knowledge.index.embedders`). Vectors are normalised here (some servers do not).
A query is sent as it is; servers that serve asymmetric models expect their own
prefixes in the model name's documentation, not from us.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any, Final

import numpy as np

from insika_knowledge.errors import EndpointResting, RunTimeFailure
from insika_knowledge.index.embedders.protocol import Vectors, normalised

#: Texts per request.
BATCH: Final = 64
#: Seconds a request of passages may take (the learning queue's, a reindex's), tried twice.
TIMEOUT_S: Final = 30.0
#: Seconds a query's request may take, tried once: it is on the customer's turn, which then
#: ranks lexically.
QUERY_TIMEOUT_S: Final = 2.0
#: Seconds after a failed request during which no request is sent: each call fails at once
#: (a down or hanging endpoint costs one turn `QUERY_TIMEOUT_S`, not every turn).
COOL_OFF_S: Final = 30.0
#: How many times a batch of passages is asked, and the seconds between two tries.
PASSAGE_TRIES: Final = 2
RETRY_WAIT_S: Final = 0.5
#: Characters of a text sent (endpoints refuse inputs past their token limit).
MAX_CHARS: Final = 6000


class RemoteEmbedder:
    """An embeddings endpoint (the `openai` client, any base URL).

    A query's request may take `QUERY_TIMEOUT_S` seconds (once), a batch of passages'
    `TIMEOUT_S` (tried twice); after a failed request none is sent for `COOL_OFF_S`
    seconds: each call raises `RunTimeFailure` at once, and the caller ranks lexically.

    Args:
        spec: the model name (``openai/`` before it is dropped).
        base_url: the endpoint (None: the client's default or ``$OPENAI_BASE_URL``).
        api_key: None: ``$OPENAI_API_KEY``, or a placeholder for a local server.
        client: an OpenAI-compatible client to use for both kinds of request (tests).
        clock: monotonic seconds (tests).
    """

    def __init__(self, spec: str, *, base_url: str | None = None, api_key: str | None = None,
                 client: Any = None, clock: Callable[[], float] = time.monotonic):
        self.model = spec.removeprefix("openai/")
        self.base_url = base_url
        self._clients: dict[bool, Any] = {} if client is None else {True: client, False: client}
        self._api_key = api_key
        self._clock = clock
        self._failed_at: float | None = None
        self.model_id = f"openai-compatible/{self.model}"
        self.dim = 0  # known after the first answer

    def _opened(self, query: bool) -> Any:
        if query not in self._clients:
            import os

            from openai import DefaultHttpxClient, OpenAI

            from insika_knowledge.replies import EMBEDDINGS_REPLY_MAX_BYTES, capped_transport

            self._clients[query] = OpenAI(
                base_url=self.base_url, timeout=QUERY_TIMEOUT_S if query else TIMEOUT_S, max_retries=0,
                http_client=DefaultHttpxClient(
                    transport=capped_transport(DefaultHttpxClient, EMBEDDINGS_REPLY_MAX_BYTES,
                                               QUERY_TIMEOUT_S if query else TIMEOUT_S)),
                api_key=self._api_key or os.environ.get("OPENAI_API_KEY") or "not-set")
        return self._clients[query]

    def _asked(self, chunk: list[str], *, query: bool) -> Any:
        """The endpoint's answer for `chunk`: a query's asked once, passages' twice (`PASSAGE_TRIES`)
        unless the failure would repeat: a reply over its cap or in an encoding not read
        (`replies.refused`; one that took too long is tried again, as a timeout is), or an
        HTTP error that is no timeout, conflict, rate limit or server error.
        """
        from insika_knowledge.replies import refused

        tries = 1 if query else PASSAGE_TRIES
        while True:
            try:
                return self._opened(query).embeddings.create(model=self.model, input=chunk)
            except Exception as exc:
                status = getattr(exc, "status_code", None)
                tries -= 1
                if tries <= 0 or _repeats(refused(exc)) or (
                        isinstance(status, int) and status < 500 and status not in (408, 409, 429)):
                    raise
                time.sleep(RETRY_WAIT_S)

    def queries(self, texts: Sequence[str]) -> Vectors:
        """Vectors of search queries, shape (n, dim).

        Raises:
            RunTimeFailure: the endpoint failed or timed out (`QUERY_TIMEOUT_S`);
                `EndpointResting` (one) when it failed less than `COOL_OFF_S` seconds ago
                (nothing sent).
        """
        return self._embed(texts, query=True)

    def passages(self, texts: Sequence[str]) -> Vectors:
        """Vectors of concepts, shape (n, dim).

        Raises:
            RunTimeFailure: as `queries`, with `TIMEOUT_S` per request.
        """
        return self._embed(texts, query=False)

    def _embed(self, texts: Sequence[str], *, query: bool) -> Vectors:
        where = f"embeddings endpoint {self.base_url or 'default'}"
        if self._failed_at is not None:
            ago = self._clock() - self._failed_at
            if ago < COOL_OFF_S:
                raise EndpointResting(f"{where} not asked: it failed {ago:.0f} s ago (tried again after "
                                     f"{COOL_OFF_S:g} s)")
        rows: list[list[float]] = []
        for start in range(0, len(texts), BATCH):
            chunk = [t[:MAX_CHARS] or " " for t in texts[start:start + BATCH]]
            try:
                answer = self._asked(chunk, query=query)
                data = sorted(answer.data, key=lambda d: d.index)
                rows.extend(list(d.embedding) for d in data)
            except Exception as exc:  # any client or server failure: the caller degrades
                self._failed_at = self._clock()
                from insika_knowledge.replies import refused

                cause = refused(exc) or exc  # the SDK says "Connection error." of a reply cut at its cap
                raise RunTimeFailure(f"{where} failed for model "
                                     f"{self.model!r}: {type(cause).__name__}: {cause}"[:300]) from exc
            if len(rows) != min(start + BATCH, len(texts)):
                raise RunTimeFailure(f"{where} answered {len(rows)} vectors for {len(texts)} texts")
        self._failed_at = None
        if not rows:
            return np.zeros((0, self.dim), dtype=np.float32)
        out = normalised(np.array(rows, dtype=np.float32))
        self.dim = out.shape[1]
        return out


def _repeats(cut: Exception | None) -> bool:
    """Whether a reply refused as `cut` (`replies.refused`) would be refused again: too large,
    or in an encoding not read; not one that took too long.
    """
    from insika_knowledge.replies import ReplyTooSlow

    return cut is not None and not isinstance(cut, ReplyTooSlow)
