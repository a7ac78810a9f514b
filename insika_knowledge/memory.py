"""`Memory`: the library's front door, one per process, over a data directory.

It opens tenant stores lazily (one SQLite file each), keeps one read cache per
store for the whole process, builds models from specs, and routes events. The
plugin, the CLI and the demo all go through it.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from insika_knowledge.concept import utc_now
from insika_knowledge.config import KnowledgeConfig
from insika_knowledge.events import EventBus, KnowledgeDeleted
from insika_knowledge.extract.model import ConceptModel, load_model
from insika_knowledge.index.tokenizer import TOKENIZER
from insika_knowledge.learn import TurnReport, learn_turn
from insika_knowledge.retrieve import Retriever
from insika_knowledge.store import SQLiteStore, Store, Version, data_dir, tenant_path
from insika_knowledge.store.paths import DEFAULT_TENANT, check_agent


class Memory:
    """Concepts of every tenant under one data directory.

    Args:
        directory: the data directory (None = ``$INSIKA_KNOWLEDGE_HOME`` or the user
            data folder).
        events: the event bus (a new one when None).
        clock: UTC time source for stamps.
        base_url: an OpenAI-compatible endpoint for live models (None = provider default).
    """

    def __init__(
        self,
        directory: str | os.PathLike[str] | None = None,
        *,
        events: EventBus | None = None,
        clock: Callable[[], str] = utc_now,
        base_url: str | None = None,
    ):
        self.directory = data_dir(directory)
        self.events = events or EventBus()
        self.clock = clock
        self.base_url = base_url
        self._stores: dict[str, Store] = {}
        self._retrievers: dict[str, Retriever] = {}
        self._models: dict[str, ConceptModel] = {}
        self._lock = threading.Lock()

    def store(self, tenant: str = DEFAULT_TENANT) -> Store:
        """The tenant's store, opened (and migrated) on first use.

        The store is given the analyser (`index.tokenizer.TOKENIZER`), so its full-text
        index exists, and is rebuilt at open when it was built under another analysis.

        Raises:
            InvalidName: the tenant name is invalid.
        """
        with self._lock:
            store = self._stores.get(tenant)
            if store is None:
                store = SQLiteStore(tenant_path(self.directory, tenant), clock=self.clock,
                                    tokenizer=TOKENIZER)
                self._stores[tenant] = store
            return store

    def has_tenant(self, tenant: str) -> bool:
        """True when the tenant's database file exists (without creating it)."""
        return tenant in self._stores or Path(tenant_path(self.directory, tenant)).exists()

    def retriever(self, tenant: str = DEFAULT_TENANT) -> Retriever:
        """The tenant's retriever; its read cache lives as long as this `Memory`."""
        store = self.store(tenant)
        with self._lock:
            retriever = self._retrievers.get(tenant)
            if retriever is None:
                retriever = Retriever(store, events=self.events)
                self._retrievers[tenant] = retriever
            return retriever

    def model(self, spec: str | None) -> ConceptModel | None:
        """The model a spec names (cached per spec); None for None.

        Raises:
            UserError: the spec is not usable (bad provider string, missing replay file).
        """
        if spec is None:
            return None
        with self._lock:
            model = self._models.get(spec)
            if model is None:
                model = load_model(spec, base_url=self.base_url)
                assert model is not None
                self._models[spec] = model
            return model

    def learn(
        self,
        agent: str,
        config: KnowledgeConfig,
        *,
        session_id: str,
        turn_id: str,
        messages: list[dict[str, Any]],
        tenant: str = DEFAULT_TENANT,
        model: ConceptModel | None = None,
    ) -> TurnReport:
        """Extract and consolidate one turn (see `learn.learn_turn`).

        `model` overrides the config's model (``config.resolved_model()`` otherwise).

        Raises:
            InvalidName: the agent or tenant name is invalid.
            UserError: the configured model spec is unusable.
        """
        check_agent(agent)
        chosen = model if model is not None else self.model(config.resolved_model())
        return learn_turn(
            self.store(tenant), agent, config, chosen, session_id=session_id,
            turn_id=turn_id, messages=messages, events=self.events,
        )

    def delete(
        self, agent: str, name: str, *, actor: str, tenant: str = DEFAULT_TENANT,
        expected_version: int | None = None,
    ) -> Version:
        """Delete a concept (its history is kept) and fire ``knowledge_deleted``.

        Raises:
            NotFound: no such concept.
            StaleVersion: `expected_version` is given and is not current.
        """
        version = self.store(tenant).delete(agent, name, actor=actor, expected_version=expected_version)
        self.events.emit(KnowledgeDeleted(concept=name, agent=agent))
        return version

    def close(self) -> None:
        """Close every store opened by this `Memory`."""
        with self._lock:
            for store in self._stores.values():
                store.close()
            self._stores.clear()
            self._retrievers.clear()
