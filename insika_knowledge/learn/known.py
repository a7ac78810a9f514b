"""What the write path searches: the agent's concepts most relevant to a turn or a candidate.

`relevant_concepts` gives the extraction prompt the agent's concepts closest to the turn
(so the model reuses a name for the same idea); `AgentSearch` is the agent's own index,
or a `ScanIndex` over the store built on first need (a caller without the agent's index).
"""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence
from typing import Any, Final, Protocol

from insika_knowledge.analysis.text import MAX_QUERY_CHARS
from insika_knowledge.index.scan import Hit, ScanIndex
from insika_knowledge.store.base import Store
from insika_knowledge.wire.messages import message_text

log = logging.getLogger(__name__)


#: The extraction prompt's concepts are searched with at most this many characters of
#: the transcript (its end), in pieces of `MAX_QUERY_CHARS`.
KNOWN_SEARCH_CHARS: Final = 24_000


class ConceptSearch(Protocol):
    """What the write path needs of the agent's index (`ScanIndex` and `Fts5Index` fit)."""

    def search(self, agent: str, query: str, top_k: int) -> list[Hit]:
        """The agent's concepts best matching `query`, best first, at most `top_k`."""
        ...


def relevant_concepts(
    index: ConceptSearch, agent: str, messages: Sequence[Any], limit: int
) -> tuple[tuple[str, str], ...]:
    """``(name, description)`` of the agent's concepts most relevant to a transcript.

    The messages' text (its last `KNOWN_SEARCH_CHARS` characters) is searched in pieces
    of `MAX_QUERY_CHARS` through `index`; a concept ranks by its best rank in any piece,
    then by the first piece that found it.

    Args:
        index: the agent's index.
        agent: the agent id.
        messages: the turn's messages (their ``content``: text or content parts).
        limit: concepts at most; 0 returns none without searching.

    Returns:
        Best first, at most `limit`.
    """
    if limit <= 0:
        return ()
    text = "\n".join(message_text(m) for m in messages if isinstance(m, dict))[-KNOWN_SEARCH_CHARS:]
    best: dict[str, tuple[float, float, str]] = {}
    for piece, start in enumerate(range(0, len(text), MAX_QUERY_CHARS)):
        chunk = text[start:start + MAX_QUERY_CHARS]
        if not chunk.strip():
            continue
        for rank, hit in enumerate(index.search(agent, chunk, limit)):
            seen = best.get(hit.entry.name, (math.inf, math.inf, ""))
            key = (rank, piece, hit.entry.description)
            if key[:2] < seen[:2]:
                best[hit.entry.name] = key
    ranked = sorted(best.items(), key=lambda item: (item[1][0], item[1][1], item[0]))
    return tuple((name, description) for name, (_, _, description) in ranked[:limit])


class AgentSearch:
    """The agent's index, or a `ScanIndex` over the store built on first use."""

    def __init__(self, store: Store, index: ConceptSearch | None) -> None:
        self.store = store
        self.index = index

    def search(self, agent: str, query: str, top_k: int) -> list[Hit]:
        """The agent's concepts best matching `query`, best first, at most `top_k`."""
        if self.index is None:
            self.index = ScanIndex(self.store)
        return self.index.search(agent, query, top_k)
