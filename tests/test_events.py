"""The event bus and `TrackEventForwarder`, the bridge to the plugins' ``track_event`` hook."""

from __future__ import annotations

import logging
from collections.abc import Generator

import pluggy
import pytest

from insika_knowledge import hookspecs
from insika_knowledge.events import (
    Event,
    EventBus,
    KnowledgeAliased,
    KnowledgeBackfilled,
    KnowledgeConflict,
    KnowledgeDeleted,
    KnowledgeLearned,
    KnowledgePossibleDuplicate,
    KnowledgeQuarantined,
    KnowledgeRetrieved,
    Recorder,
    TrackEventForwarder,
)
from insika_knowledge.hookspecs import hookimpl


def manager(*plugins: object) -> pluggy.PluginManager:
    pm = pluggy.PluginManager(hookspecs.PROJECT)
    pm.add_hookspecs(hookspecs)
    for plugin in plugins:
        pm.register(plugin)
    return pm


class Named:
    def __init__(self, label: str, seen: list[str], fail: bool = False) -> None:
        self.label, self.seen, self.fail = label, seen, fail

    @hookimpl
    def track_event(self, event: Event) -> None:
        self.seen.append(f"{self.label}:{event.name}")
        if self.fail:
            raise ValueError("boom")


def test_every_implementation_gets_the_event_in_pluggys_order() -> None:
    seen: list[str] = []
    bus = EventBus()
    bus.subscribe(TrackEventForwarder(manager(Named("a", seen), Named("b", seen))))
    bus.emit(KnowledgeLearned(concept="x", type="fact", agent="ag"))
    assert seen == ["b:knowledge_learned", "a:knowledge_learned"]  # last registered first, as pluggy


def test_a_raising_implementation_is_logged_and_the_others_still_run(caplog: pytest.LogCaptureFixture) -> None:
    seen: list[str] = []
    recorder = Recorder()
    bus = EventBus()
    bus.subscribe(TrackEventForwarder(manager(Named("a", seen), Named("bad", seen, fail=True))))
    bus.subscribe(recorder)
    with caplog.at_level(logging.ERROR, logger="insika_knowledge.events"):
        bus.emit(KnowledgeConflict(concept="x", agent="ag"))
    assert seen == ["bad:knowledge_conflict", "a:knowledge_conflict"]
    assert recorder.events == [("knowledge_conflict", {"name": "x", "agent": "ag", "why": ""})]
    assert "track_event of plugin" in caplog.text and "knowledge_conflict" in caplog.text


def test_an_implementation_may_take_no_argument_and_wrappers_are_not_run() -> None:
    calls: list[str] = []

    class Counter:
        @hookimpl
        def track_event(self) -> None:
            calls.append("counted")

    class Wrapper:
        @hookimpl(wrapper=True)
        def track_event(self, event: Event) -> Generator[None, None, None]:
            calls.append("wrapped")
            yield

    TrackEventForwarder(manager(Counter(), Wrapper()))(KnowledgeConflict(concept="x", agent="ag"))
    assert calls == ["counted"]


def test_a_manager_without_the_hook_is_a_no_op() -> None:
    TrackEventForwarder(pluggy.PluginManager("other"))(KnowledgeConflict(concept="x", agent="ag"))


def test_concept_events_send_the_concept_as_name_in_field_order() -> None:
    payloads = [
        list(e.payload().items())
        for e in (
            KnowledgeLearned(concept="c", type="fact", agent="a"),
            KnowledgeQuarantined(concept="c", type="policy", agent="a"),
            KnowledgeConflict(concept="c", agent="a", why="w"),
            KnowledgeAliased(concept="c", alias="d", agent="a", outcome="confirmed"),
            KnowledgePossibleDuplicate(concept="c", duplicate_of="d", agent="a", why="v"),
            KnowledgeDeleted(concept="c", agent="a"),
            KnowledgeRetrieved(concept="c", agent="a"),
        )
    ]
    assert payloads == [
        [("name", "c"), ("type", "fact"), ("agent", "a")],
        [("name", "c"), ("type", "policy"), ("agent", "a")],
        [("name", "c"), ("agent", "a"), ("why", "w")],
        [("name", "c"), ("alias", "d"), ("agent", "a"), ("outcome", "confirmed")],
        [("name", "c"), ("duplicate_of", "d"), ("agent", "a"), ("why", "v")],
        [("name", "c"), ("agent", "a")],
        [("name", "c"), ("agent", "a")],
    ]
    backfilled = KnowledgeBackfilled(agent="a", sessions=1, concepts=2, conflicts=0)
    assert backfilled.payload() == {"agent": "a", "sessions": 1, "concepts": 2, "conflicts": 0,
                                    "dropped": {}}
