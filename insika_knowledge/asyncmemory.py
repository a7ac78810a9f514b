"""`AsyncMemory`: the front door for asyncio engines.

Every method is `insika_knowledge.memory.Memory`'s, awaited: the call runs in a worker
thread (`asyncio.to_thread`), so a database read or a model call never holds the event
loop. Arguments, results and errors are `Memory`'s, method for method::

    async with AsyncMemory(data_dir) as memory:
        hits = await memory.search("entrega em Campinas", agent="loja-aurora")
        report = await memory.learn(messages, agent="loja-aurora", session_id="s-1")

`memory.sync` is the `Memory` underneath (for what has no coroutine here, such as
`Memory.events` or `Memory.tenant`).
"""

from __future__ import annotations

import asyncio
import functools
import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

from insika_knowledge.concept import Concept
from insika_knowledge.learn import TurnReport
from insika_knowledge.memory import Hit, Memory, PossibleDuplicate, StoredConcept, TenantStatus
from insika_knowledge.store import Version

T = TypeVar("T")


class AsyncMemory:
    """`Memory` with every method a coroutine (see the module doc).

    Args:
        directory: as `Memory`'s (None: ``$INSIKA_KNOWLEDGE_HOME``, else the user data folder).
        memory: an open `Memory` to wrap instead (then `directory` and `options` are unused).
        options: `Memory`'s keyword arguments (``database``, ``events``, ``base_url``...).
    """

    def __init__(self, directory: str | os.PathLike[str] | None = None, *, memory: Memory | None = None,
                 **options: Any):
        self.sync = memory if memory is not None else Memory(directory, **options)

    async def _run(self, call: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        return await asyncio.to_thread(functools.partial(call, *args, **kwargs))

    async def learn(self, messages: Sequence[Mapping[str, Any]], *, agent: str, session_id: str,
                    **options: Any) -> TurnReport:
        """`Memory.learn`: extract and consolidate one finished turn."""
        return await self._run(self.sync.learn, messages, agent=agent, session_id=session_id, **options)

    async def search(self, query: str, *, agent: str, **options: Any) -> list[Hit]:
        """`Memory.search`: the best-matching concepts, each with its body (filters too)."""
        return await self._run(self.sync.search, query, agent=agent, **options)

    async def knowledge_block(self, message: str, *, agent: str, **options: Any) -> str | None:
        """`Memory.knowledge_block`: the ``<knowledge>`` block for `message`, or None."""
        return await self._run(self.sync.knowledge_block, message, agent=agent, **options)

    async def load(self, name: str, *, agent: str, **options: Any) -> str:
        """`Memory.load`: one concept's whole markdown record."""
        return await self._run(self.sync.load, name, agent=agent, **options)

    async def records(self, *, agent: str, **options: Any) -> list[StoredConcept]:
        """`Memory.records`: the stored records, with version and quarantine flag."""
        return await self._run(self.sync.records, agent=agent, **options)

    async def concepts(self, *, agent: str, **options: Any) -> list[Concept]:
        """`Memory.concepts`: every concept of the agent (filters too)."""
        return await self._run(self.sync.concepts, agent=agent, **options)

    async def conflicts(self, *, agent: str, **options: Any) -> list[Concept]:
        """`Memory.conflicts`: the concepts awaiting a person's decision."""
        return await self._run(self.sync.conflicts, agent=agent, **options)

    async def held_claims(self, *, agent: str, **options: Any) -> list[PossibleDuplicate]:
        """`Memory.held_claims`: the sightings held for a person's review."""
        return await self._run(self.sync.held_claims, agent=agent, **options)

    async def dismiss_held(self, name: str, *, agent: str, **options: Any) -> int:
        """`Memory.dismiss_held`: keep a concept as it is, closing the claims held against it."""
        return await self._run(self.sync.dismiss_held, name, agent=agent, **options)

    async def learn_held(self, name: str, *, agent: str, **options: Any) -> Concept:
        """`Memory.learn_held`: learn a claim held as a possible duplicate as a concept of its own."""
        return await self._run(self.sync.learn_held, name, agent=agent, **options)

    async def agents(self, **options: Any) -> dict[str, int]:
        """`Memory.agents`: the tenant's agents and their concept counts."""
        return await self._run(self.sync.agents, **options)

    async def put(self, markdown: str, *, agent: str, **options: Any) -> Concept:
        """`Memory.put`: add or replace a concept a person wrote."""
        return await self._run(self.sync.put, markdown, agent=agent, **options)

    async def propose(self, candidate: Mapping[str, Any], *, agent: str, session_id: str,
                      **options: Any) -> TurnReport:
        """`Memory.propose`: learn one proposed concept through the trust gate."""
        return await self._run(self.sync.propose, candidate, agent=agent, session_id=session_id, **options)

    async def update(self, name: str, *, agent: str, **changes: Any) -> Concept:
        """`Memory.update`: change some fields of a concept."""
        return await self._run(self.sync.update, name, agent=agent, **changes)

    async def history(self, name: str, *, agent: str, **options: Any) -> list[Version]:
        """`Memory.history`: every version of a concept, oldest first."""
        return await self._run(self.sync.history, name, agent=agent, **options)

    async def approve(self, name: str, *, agent: str, **options: Any) -> Concept:
        """`Memory.approve`: release a concept held in quarantine."""
        return await self._run(self.sync.approve, name, agent=agent, **options)

    async def restore(self, name: str, version: int, *, agent: str, **options: Any) -> Concept:
        """`Memory.restore`: make an old version current again."""
        return await self._run(self.sync.restore, name, version, agent=agent, **options)

    async def delete(self, name: str, *, agent: str, **options: Any) -> Version:
        """`Memory.delete`: delete a concept (its history is kept)."""
        return await self._run(self.sync.delete, name, agent=agent, **options)

    async def status(self, tenants: Sequence[str] | None = None, **options: Any) -> list[TenantStatus]:
        """`Memory.status`: the learning queue, counts and last failures per tenant."""
        return await self._run(self.sync.status, tenants, **options)

    async def drain(self, timeout_s: float | None = None) -> bool:
        """`Memory.drain`: wait for the turns this process queued."""
        return await self._run(self.sync.drain, timeout_s)

    async def close(self, timeout_s: float | None = None) -> bool:
        """`Memory.close`: stop the learning worker and close every store."""
        return await self._run(self.sync.close, timeout_s)

    async def __aenter__(self) -> AsyncMemory:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()
