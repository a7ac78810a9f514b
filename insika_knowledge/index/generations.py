"""Per-agent derived state kept in step with the store's generation number.

An index (Scan's cache, the postings index) holds one state per agent, built from the store
and valid for one generation (`ScanSource.generation`: the number a write to the agent's
concepts raises). `PerAgent.get` returns the state while the generation is unchanged and
otherwise has it refreshed once, under a lock, however many threads ask at the same time.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Generic, Protocol, TypeVar, runtime_checkable


@runtime_checkable
class _Counted(Protocol):
    def count(self, agent: str) -> int: ...


def miscounted(store: object, agent: str, held: int) -> bool:
    """True when `store` holds another number of `agent`'s concepts than `held` (or cannot count).

    A rename moves a concept's history to its new name, so the change feed can miss a
    concept cached under its old name; an index that meets a name it cannot place counts
    the concepts (one indexed query) before reading every version number.
    """
    return not isinstance(store, _Counted) or store.count(agent) != held


class _Generational(Protocol):
    @property
    def generation(self) -> int: ...


S = TypeVar("S", bound=_Generational)


class PerAgent(Generic[S]):
    """Agent id -> state `S` (with a ``generation``), refreshed by `refresh` on a new generation.

    Args:
        refresh: ``(agent, old state or None, generation) -> new state``; called with the
            lock held, so at most once per agent and generation.

    Thread-safe: a reader without a refresh takes no lock.
    """

    def __init__(self, refresh: Callable[[str, S | None, int], S]):
        self._refresh = refresh
        self._states: dict[str, S] = {}
        self._lock = threading.Lock()

    def get(self, agent: str, generation: int) -> S:
        """The state of `agent` at `generation` (refreshed when it is older)."""
        state = self._states.get(agent)
        if state is not None and state.generation == generation:
            return state
        with self._lock:
            state = self._states.get(agent)
            if state is None or state.generation != generation:
                state = self._refresh(agent, state, generation)
                self._states[agent] = state
            return state
