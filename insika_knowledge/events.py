"""Events the loop emits: names and payloads (ids, names, types and counts, never a body).

Subscribers are plain callables taking an `Event`. A subscriber that raises is
reported through `logging` and never breaks the write that emitted the event.
`TrackEventForwarder` is the subscriber that hands every event to the plugins'
``track_event`` hook (see `insika_knowledge.hookspecs.track_event`).
"""

from __future__ import annotations

import dataclasses
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

if TYPE_CHECKING:
    import pluggy

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Event:
    """Base of every event; `name` is the event's wire name."""

    name: ClassVar[str] = ""

    def payload(self) -> dict[str, Any]:
        """The event's keys and values, as subscribers and exporters see them."""
        return dataclasses.asdict(self)


@dataclass(frozen=True)
class ConceptEvent(Event):
    """Base of the events about one concept; its ``concept`` field goes out as the key ``name``."""

    concept: str

    def payload(self) -> dict[str, Any]:
        """The event's keys and values in field order, ``concept`` renamed ``name``."""
        return {("name" if key == "concept" else key): value
                for key, value in dataclasses.asdict(self).items()}


@dataclass(frozen=True)
class AgentConceptEvent(ConceptEvent):
    """Base of the concept events that carry the concept and its agent, nothing more."""

    agent: str


@dataclass(frozen=True)
class TypedConceptEvent(ConceptEvent):
    """Base of the concept events that carry the concept, its type and its agent."""

    type: str
    agent: str


@dataclass(frozen=True)
class KnowledgeLearned(TypedConceptEvent):
    """A turn taught the agent a new concept, or a related sighting merged into one."""

    name: ClassVar[str] = "knowledge_learned"


@dataclass(frozen=True)
class KnowledgeQuarantined(TypedConceptEvent):
    """A turn proposed a rule that only the customer supports: stored, never injected.

    A person releases it in the Studio, or a later sighting that an agent message, a
    tool result or the system prompt supports does (see `insika_knowledge.trust`).
    """

    name: ClassVar[str] = "knowledge_quarantined"


@dataclass(frozen=True)
class KnowledgeConflict(AgentConceptEvent):
    """A repeat sighting contradicted what is on record; a human must resolve it.

    ``why`` says why it is a conflict, for the person who gets the event ("the merge
    model failed (model_malformed)", "it contradicts a policy, whose text the engine never
    changes": `insika_knowledge.consolidate.Decision.conflict_reason`); "" when not known.
    """

    name: ClassVar[str] = "knowledge_conflict"
    why: str = ""


@dataclass(frozen=True)
class KnowledgeAliased(ConceptEvent):
    """A candidate proposed under a new name restated a concept on record.

    The sighting was recorded under ``concept`` (with ``outcome``, normally
    ``confirmed``) and ``alias``, the name the model proposed, is kept as its alias.
    """

    name: ClassVar[str] = "knowledge_aliased"
    alias: str
    agent: str
    outcome: str


@dataclass(frozen=True)
class KnowledgePossibleDuplicate(ConceptEvent):
    """A candidate closely matched a concept without stating the same claim.

    It was held for a human (the Studio's "possible duplicates"), neither merged into
    ``duplicate_of`` nor written as a concept of its own. ``why`` says why, for that
    person ("it closely matches gift-card-validity (overlap 1.00) but states other values:
    24 months here, 12 months on record": `insika_knowledge.consolidate.Naming.why`).
    """

    name: ClassVar[str] = "knowledge_possible_duplicate"
    duplicate_of: str
    agent: str
    why: str = ""


@dataclass(frozen=True)
class KnowledgeDeleted(AgentConceptEvent):
    """An operator deleted a concept (its history is kept)."""

    name: ClassVar[str] = "knowledge_deleted"


@dataclass(frozen=True)
class KnowledgeRetrieved(AgentConceptEvent):
    """The model called ``load_knowledge`` (the adoption signal, not the injection)."""

    name: ClassVar[str] = "knowledge_retrieved"


@dataclass(frozen=True)
class KnowledgeBackfilled(Event):
    """A backfill finished replaying an agent's stored sessions.

    ``sessions``: sessions processed; ``concepts``: concepts learned, confirmed or merged;
    ``conflicts``: sightings that contradicted; ``dropped``: reason -> candidates dropped.
    """

    name: ClassVar[str] = "knowledge_backfilled"
    agent: str
    sessions: int
    concepts: int
    conflicts: int
    dropped: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class KnowledgeExtracted(Event):
    """One turn's extraction finished (ours, not the seed's: it carries the drop counts).

    ``outcome`` is ``ok`` or the failure kind (see `ExtractionRecord`); ``candidates`` is
    what the model proposed; ``written`` the sightings stored; ``dropped`` reason -> count.
    """

    name: ClassVar[str] = "knowledge_extracted"
    agent: str
    session_id: str
    turn_id: str
    outcome: str
    candidates: int
    written: int
    dropped: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class KnowledgeDegraded(Event):
    """A feature ran in a reduced form (e.g. ``index: fts5`` served by scan). Once per cause."""

    name: ClassVar[str] = "knowledge_degraded"
    agent: str
    feature: str
    reason: str


@dataclass(frozen=True)
class KnowledgeDropped(Event):
    """Finished turns were not queued for extraction (ours, not the seed's): one per window.

    ``dropped``: turns dropped since the previous event for this tenant and agent (at most
    one event per ``window_s`` seconds); ``pending``: turns waiting when the last one was
    dropped; ``limit``: the outbox's bound; ``reason``: ``dropped_outbox_full``,
    ``dropped_too_large``, ``spill_full`` (the write lock stayed busy and the in-memory
    overflow was full) or ``closed while the lock was busy``. Each turn dropped from a
    full outbox or for its size is also recorded in ``extractions`` under that outcome.
    """

    name: ClassVar[str] = "knowledge_dropped"
    agent: str
    tenant: str
    dropped: int
    pending: int
    limit: int
    window_s: float
    reason: str


@dataclass(frozen=True)
class KnowledgeDeferred(Event):
    """A finished turn could not be written to its outbox within the hook's budget (ours).

    ``outcome``: ``deferred`` (the write lock was busy, the store was still opening or the
    database was down: the turn waits in the spill journal and in memory, and is written
    as soon as it can be), then ``written`` (it is in the outbox now) or ``failed`` (it
    could not be written; ``reason`` says why). One event per turn and outcome.
    """

    name: ClassVar[str] = "knowledge_deferred"
    agent: str
    tenant: str
    session_id: str
    turn_id: str
    outcome: str
    reason: str


Subscriber = Callable[[Event], None]


class EventBus:
    """Delivers events to subscribers, synchronously, in subscription order."""

    def __init__(self) -> None:
        self._subscribers: list[Subscriber] = []
        self._lock = threading.Lock()

    def subscribe(self, subscriber: Subscriber) -> Callable[[], None]:
        """Add `subscriber`; returns a function that removes it again."""
        with self._lock:
            self._subscribers.append(subscriber)

        def unsubscribe() -> None:
            with self._lock:
                if subscriber in self._subscribers:
                    self._subscribers.remove(subscriber)

        return unsubscribe

    def emit(self, event: Event) -> None:
        """Deliver `event` to every subscriber; a failing subscriber is logged, not raised."""
        with self._lock:
            subscribers = list(self._subscribers)
        for subscriber in subscribers:
            try:
                subscriber(event)
            except Exception:  # a subscriber's bug must not undo a committed write
                log.exception("event subscriber %r failed on %s", subscriber, event.name)


class TrackEventForwarder:
    """A subscriber that calls the ``track_event`` hook of a plugin manager's plugins.

    Each implementation is called on its own, in pluggy's order (last registered
    first): one that raises is logged and skipped, so the others still get the event
    and the write that emitted it stands. Hook wrappers are not run for ``track_event``.
    A manager without the ``track_event`` hook (no plugin implements it) costs one lookup.
    """

    def __init__(self, plugin_manager: pluggy.PluginManager) -> None:
        self.plugin_manager = plugin_manager

    def __call__(self, event: Event) -> None:
        """Deliver `event` as ``track_event(event=event)`` to every implementation."""
        caller = getattr(self.plugin_manager.hook, "track_event", None)
        if caller is None:
            return
        arguments = {"event": event}
        for impl in reversed(caller.get_hookimpls()):
            if impl.wrapper or impl.hookwrapper:
                continue
            try:
                impl.function(*[arguments[name] for name in impl.argnames])
            except Exception:  # another plugin's bug must not undo a write or starve the rest
                log.exception("track_event of plugin %r failed on %s", impl.plugin_name, event.name)


class Recorder:
    """A subscriber that keeps what it receives: ``[(name, payload), ...]`` (tests, demo)."""

    def __init__(self) -> None:
        self.events: list[tuple[str, dict[str, Any]]] = []

    def __call__(self, event: Event) -> None:
        """Keep `event` as ``(name, payload)``."""
        self.events.append((event.name, event.payload()))

    def named(self, name: str) -> list[dict[str, Any]]:
        """Payloads of the events called `name`, in order."""
        return [p for n, p in self.events if n == name]
