"""`Tenant`: everything one tenant's memory owns, in one object.

A tenant is one SQLite file (``<data dir>/<tenant>.db``) or one PostgreSQL schema. Its
`Tenant` holds, for the life of the `insika_knowledge.memory.Memory` that made it:

- `store`: the concept store (concepts, versions, sightings, the outbox), opened and
  migrated once;
- `retriever`: the read cache and indexes every search of the tenant goes through;
- `procedures`: the procedural memory (opened on first use);
- `submit`: the only learning hand-off. The plugin's ``after_turn``, the relay, the
  Hermes provider and the demo all give a finished turn here (the first three through
  `insika_knowledge.memory.Memory.submit`, which defers a turn whose tenant is not open
  yet); it is written to the tenant's durable outbox (`insika_knowledge.queue`) and
  learned by the host's worker.

`learn` learns one turn now, on the caller's thread (the worker, `Memory.learn`,
`Memory.propose` and backfill use it), then makes the vectors of the concepts it wrote (and
of up to a batch of others lacking one) for the semantic index.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from insika_knowledge.config import KnowledgeConfig, load_config
from insika_knowledge.errors import InvalidName, check_types
from insika_knowledge.events import EventBus
from insika_knowledge.extract.model import ConceptModel
from insika_knowledge.hookspecs import Turn
from insika_knowledge.ids import check_agent
from insika_knowledge.learn import TurnReport, learn_turn
from insika_knowledge.learn.addressing import addressing
from insika_knowledge.learn.meaning import neighbours
from insika_knowledge.queue import ExtractionQueue, Submitted
from insika_knowledge.retrieve import Retriever
from insika_knowledge.store import ProcedureStorage, Store

if TYPE_CHECKING:
    from insika_knowledge.procedures import ProceduralMemory, ProceduresConfig

#: Builds a model from a spec (``replay:PATH``, ``openai/gpt-4o-mini``); None for None.
ModelLoader = Callable[[str | None], ConceptModel | None]


class Tenant:
    """One tenant's stores, retriever, procedural memory and learning hand-off.

    Made by `insika_knowledge.memory.Memory.tenant`; not meant to be built by hand.

    Args:
        name: the tenant name (checked by the caller).
        store: the tenant's opened concept store.
        events: where its events go (the host's bus).
        queue: returns the host's learning queue (one for every tenant of the host,
            started on first use).
        models: builds the model a ``knowledge:`` block names.
        open_procedures: opens the tenant's procedure store (called once, on first use).
        embeddings: the embedding provider's spec (`insika_knowledge.index.embedders`; None:
            ``$INSIKA_EMBEDDINGS``, else ``auto``).
        base_url: the OpenAI-compatible base URL a remote embedding model is reached at.
    """

    def __init__(self, name: str, store: Store, *, events: EventBus, queue: Callable[[], ExtractionQueue],
                 models: ModelLoader, open_procedures: Callable[[], ProcedureStorage],
                 embeddings: str | None = None, base_url: str | None = None):
        self.name = name
        self.store = store
        self.events = events
        self.retriever = Retriever(store, events=events, embeddings=embeddings, base_url=base_url)
        self._queue = queue
        self._models = models
        self._open_procedures = open_procedures
        self._procedures: ProceduralMemory | None = None
        self._lock = threading.Lock()

    # ------------------------------------------------------------------ learning

    def submit(self, turn: Turn, *, lock_budget_ms: int | None = None, defer: bool = True) -> Submitted:
        """Hand a finished turn over for learning: written to the durable outbox, then return.

        The write waits at most the queue's lock budget (``$INSIKA_LOCK_BUDGET_MS``, 50 ms;
        `lock_budget_ms` overrides it); beyond it, or when the database is down, the turn is
        deferred: written to the spill journal and to the outbox as soon as it can be
        (``deferred``, with ``knowledge_deferred`` events), or, with `defer` False,
        `StorageBusy` is raised and nothing is kept
        (the relay tries on its event loop without waiting first, then in a thread). A full
        outbox drops the turn, records it and counts it in ``knowledge_dropped``
        (``dropped``). A turn whose agent has no ``knowledge:`` block, or ``extract:
        false``, is not queued (``off``).

        Returns:
            ``queued``, ``deferred``, ``dropped`` or ``off``.

        Raises:
            InvalidName: the agent name is invalid, or the turn names another tenant.
            ConfigError: the agent's ``knowledge:`` block is invalid.
            UserError: the ids are not printable text, or the messages are not a list of dicts.
            StorageError: the tenant's database cannot be written (full, read-only, damaged).
            StorageBusy: `defer` is False and the write lock stayed busy beyond the budget.
            ArgumentTypeError: `turn` is not a `Turn`.
        """
        check_types("Tenant.submit()", turn=(turn, Turn))
        agent = turn.agent
        if agent.tenant != self.name:
            raise InvalidName(f"a turn of tenant {agent.tenant!r} was handed to tenant {self.name!r}")
        config = load_config(agent.knowledge)
        if config is None or not config.extract:
            return "off"
        return self._queue().submit(
            tenant=self.name, agent=agent.id, knowledge=agent.knowledge,
            session_id=turn.session_id, turn_id=turn.turn_id, messages=turn.messages,
            lock_budget_ms=lock_budget_ms, defer=defer,
        )

    def learn(
        self,
        agent: str,
        config: KnowledgeConfig,
        *,
        session_id: str,
        turn_id: str,
        messages: list[dict[str, Any]],
        model: ConceptModel | None = None,
        withheld: Sequence[str] = (),
    ) -> TurnReport:
        """Extract and consolidate one turn now (see `insika_knowledge.learn.learn_turn`).

        `model` overrides the config's model (``config.resolved_model()`` otherwise);
        `withheld` is the business's own text the turn ran under that `messages` leave out.

        Raises:
            InvalidName: the agent name is invalid.
            UserError: the configured model spec is unusable.
        """
        check_agent(agent)
        chosen = model if model is not None else self._models(config.resolved_model())
        semantic = self.retriever.semantic(agent) if config.index == "auto" else None
        report = learn_turn(
            self.store, agent, config, chosen, session_id=session_id, turn_id=turn_id,
            messages=messages, events=self.events,
            index=self.retriever.index_for(agent, config.index),  # the agent's own index
            meaning=neighbours(semantic),  # possible duplicates by meaning too
            withheld=withheld,
            addressing=addressing(semantic),  # instructions to the model by meaning too
        )
        if config.index == "auto":
            self.retriever.embed_pending(agent)  # the semantic index, off the customer's turn
        return report

    # ------------------------------------------------------------------ procedures

    def procedures(self, config: ProceduresConfig | Mapping[str, Any] | None = None) -> ProceduralMemory:
        """The tenant's procedural memory, opened on first use, its sweeper started.

        Args:
            config: its settings, or a mapping of them (None: the open one's, else the
                defaults). Settings that differ from the open one's replace it: the old
                one's sweeper stops and its store closes (what it captured is in the
                database already).

        Raises:
            UserError: `config` is no settings (a `ConfigError` names the setting).
        """
        from insika_knowledge.procedures import ProceduralMemory
        from insika_knowledge.procedures.config import ProceduresConfig

        config = ProceduresConfig.given(config, "Tenant.procedures()")
        replaced = None
        with self._lock:
            current = self._procedures
            if current is not None and current.closed:
                current = None  # closed by its user: open another (what it captured is in the database)
            elif current is not None and config is not None and config != current.config:
                replaced, current = current, None
            if current is None:
                current = ProceduralMemory(self._open_procedures(), config)
                current.start_sweeper()
                self._procedures = current
        if replaced is not None:
            replaced.close()
        return current

    def opened_procedures(self) -> ProceduralMemory | None:
        """The procedural memory if `procedures` has opened it, else None (never opens it)."""
        with self._lock:
            return self._procedures

    def close(self) -> None:
        """Stop the procedures' sweeper and close the stores."""
        with self._lock:
            skill, self._procedures = self._procedures, None
        if skill is not None:
            skill.close()
        self.store.close()
