"""The front door checks what it is given: a wrong type is a `UserError` naming the argument.

Every public `Memory` method checks its arguments' types before it reads or writes
anything, and says which argument, what it got and what it takes, instead of an
`AttributeError` or `TypeError` from deep inside (or, worse, a write that happened and
then a failure). A closed `Memory` says so on use.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from insika_knowledge.config import load_config
from insika_knowledge.errors import ConfigError, UserError
from insika_knowledge.memory import Memory

AGENT = "loja"
PAGE = "---\nname: frete-gratis\ndescription: Frete grátis acima de R$ 199.\n---\n\nFrete grátis acima de R$ 199.\n"
CHAT = [{"role": "user", "content": "Frete?"}, {"role": "assistant", "content": "Grátis acima de R$ 199."}]
CANDIDATE = {"name": "frete-gratis", "description": "Frete grátis acima de R$ 199.", "type": "fact",
             "body": "Frete grátis acima de R$ 199."}


@pytest.fixture
def memory(tmp_path: Path) -> Iterator[Memory]:
    m = Memory(tmp_path / "data")
    m.put(PAGE, agent=AGENT)
    yield m
    m.close()


@pytest.mark.parametrize(("call", "argument", "given"), [
    (lambda d: Memory(123), "directory", "int"),
    (lambda d: Memory(b"x"), "directory", "bytes"),
    (lambda d: Memory(d, database=123), "database", "int"),
    (lambda d: Memory(d, events=1), "events", "int"),
    (lambda d: Memory(d, embeddings=1), "embeddings", "int"),
    (lambda d: Memory(d, plugin_manager=1), "plugin_manager", "int"),
    (lambda d: Memory(d, outbox=1), "outbox", "int"),
    (lambda d: Memory(d, base_url=1), "base_url", "int"),
    (lambda d: Memory(d, clock="now"), "clock", "str"),
])
def test_the_constructor_checks_its_arguments(tmp_path: Path, call: Callable[[Path], Memory], argument: str,
                                              given: str) -> None:
    with pytest.raises(UserError) as raised:
        call(tmp_path / "data")
    message = str(raised.value)
    assert f"Memory(): {argument} must be" in message and f"not {given}" in message, message
    assert isinstance(raised.value, TypeError)  # also what a caller catching TypeError expects
    assert not (tmp_path / "data").exists()


CALLS: list[tuple[str, Callable[[Memory], Any], str, str]] = [
    ("search None", lambda m: m.search(None, agent=AGENT), "search(): query", "NoneType"),
    ("search int", lambda m: m.search(123, agent=AGENT), "search(): query", "int"),
    ("search bytes", lambda m: m.search(b"x", agent=AGENT), "search(): query", "bytes"),
    ("search list", lambda m: m.search(["x"], agent=AGENT), "search(): query", "list"),
    ("top_k str", lambda m: m.search("frete", agent=AGENT, top_k="5"), "search(): top_k", "str"),
    ("top_k bool", lambda m: m.search("frete", agent=AGENT, top_k=True), "search(): top_k", "bool"),
    ("index int", lambda m: m.search("frete", agent=AGENT, index=1), "search(): index", "int"),
    ("block None", lambda m: m.knowledge_block(None, agent=AGENT), "knowledge_block(): message", "NoneType"),
    ("block config int", lambda m: m.knowledge_block("frete", agent=AGENT, config=1),
     "knowledge_block(): config", "int"),
    ("block config dict", lambda m: m.knowledge_block("frete", agent=AGENT, config={"top_k": 3}),
     "knowledge_block(): config", "dict"),
    ("learn None", lambda m: m.learn(None, agent=AGENT, session_id="s"), "learn(): messages", "NoneType"),
    ("learn str", lambda m: m.learn("str", agent=AGENT, session_id="s"), "learn(): messages", "str"),
    ("learn ints", lambda m: m.learn([1, 2], agent=AGENT, session_id="s"), "learn(): messages[0]", "int"),
    ("learn config", lambda m: m.learn(CHAT, agent=AGENT, session_id="s", config=1), "learn(): config", "int"),
    ("learn model", lambda m: m.learn(CHAT, agent=AGENT, session_id="s", model=1), "learn(): model", "int"),
    ("learn session", lambda m: m.learn(CHAT, agent=AGENT, session_id=1), "learn(): session_id", "int"),
    ("propose None", lambda m: m.propose(None, agent=AGENT, session_id="s"), "propose(): candidate", "NoneType"),
    ("propose str", lambda m: m.propose("x", agent=AGENT, session_id="s"), "propose(): candidate", "str"),
    ("propose messages", lambda m: m.propose(CANDIDATE, agent=AGENT, session_id="s", messages="hi"),
     "propose(): messages", "str"),
    ("put bytes", lambda m: m.put(PAGE.encode(), agent=AGENT), "put(): markdown", "bytes"),
    ("load int", lambda m: m.load(1, agent=AGENT), "load(): name", "int"),
    ("update body", lambda m: m.update("frete-gratis", agent=AGENT, body=1), "update(): body", "int"),
    ("update version", lambda m: m.update("frete-gratis", agent=AGENT, body="x", expected_version="1"),
     "update(): expected_version", "str"),
    ("restore version", lambda m: m.restore("frete-gratis", "1", agent=AGENT), "restore(): version", "str"),
    ("history name", lambda m: m.history(None, agent=AGENT), "history(): name", "NoneType"),
    ("delete name", lambda m: m.delete(agent=AGENT, name=3), "delete(): name", "int"),
    ("records held", lambda m: m.records(agent=AGENT, held="no"), "records(): held", "str"),
    ("reindex fresh", lambda m: m.reindex(agent=AGENT, fresh="yes"), "reindex(): fresh", "str"),
    ("status failures", lambda m: m.status(failures="5"), "status(): failures", "str"),
    ("status tenants", lambda m: m.status("default"), "status(): tenants", "str"),
    ("drain timeout", lambda m: m.drain("1"), "drain(): timeout_s", "str"),
    ("learn_turn withheld None", lambda m: m.learn_turn(AGENT, load_config({}), session_id="s", turn_id="t",
                                                       messages=CHAT, withheld=None),
     "learn_turn(): withheld", "NoneType"),
    ("learn_turn withheld iterator", lambda m: m.learn_turn(AGENT, load_config({}), session_id="s", turn_id="t",
                                                           messages=CHAT, withheld=iter(["x"])),
     "learn_turn(): withheld", "list_iterator"),
    ("learn_turn withheld str", lambda m: m.learn_turn(AGENT, load_config({}), session_id="s", turn_id="t",
                                                      messages=CHAT, withheld="system prompt"),
     "learn_turn(): withheld", "str"),
    ("learn_turn withheld item", lambda m: m.learn_turn(AGENT, load_config({}), session_id="s", turn_id="t",
                                                       messages=CHAT, withheld=["ok", 5]),
     "learn_turn(): withheld's items", "int"),
    ("learn_turn model", lambda m: m.learn_turn(AGENT, load_config({}), session_id="s", turn_id="t",
                                               messages=CHAT, model=1),
     "learn_turn(): model", "int"),
]


@pytest.mark.parametrize(("label", "call", "where", "given"), CALLS, ids=[c[0] for c in CALLS])
def test_each_method_checks_its_arguments_before_anything_else(
    memory: Memory, label: str, call: Callable[[Memory], Any], where: str, given: str
) -> None:
    before = [c.name for c in memory.concepts(agent=AGENT)]
    with pytest.raises(UserError) as raised:
        call(memory)
    message = str(raised.value)
    assert message.startswith(f"Memory.{where} must be") and f"not {given}" in message, message
    assert [c.name for c in memory.concepts(agent=AGENT)] == before


def test_a_dict_config_is_refused_with_the_way_to_make_one(memory: Memory) -> None:
    with pytest.raises(UserError, match=r"load_config"):
        memory.knowledge_block("frete", agent=AGENT, config={"top_k": 3})
    config = load_config({"top_k": 3})
    assert memory.knowledge_block("frete grátis", agent=AGENT, config=config) is not None


def test_the_right_types_still_work(memory: Memory, tmp_path: Path) -> None:
    assert [h.name for h in memory.search("frete grátis", agent=AGENT, top_k=3)] == ["frete-gratis"]
    assert memory.learn(tuple(CHAT), agent=AGENT, session_id="s").outcome == "no_model"
    replay = tmp_path / "replay.json"
    replay.write_text('{"extract": {"s2": []}}', encoding="utf-8")
    report = memory.learn_turn(AGENT, load_config({}), session_id="s2", turn_id="t", messages=CHAT,
                               model=f"replay:{replay}", withheld=("You are the store's agent.",))
    assert report.outcome == "ok"  # a spec string is a model, as in learn()
    assert memory.load("frete-gratis", agent=AGENT).startswith("---")
    Memory(str(tmp_path / "other"), database="").close()
    Memory(tmp_path / "other", embeddings="off").close()


def test_a_write_never_fails_after_it_happened(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The embedding step of `put` runs after the write: its failure is reported, not raised."""
    from insika_knowledge.retrieve import Retriever

    memory = Memory(tmp_path / "data")

    def broken(self: Retriever, agent: str, limit: int = 0) -> int:
        raise AttributeError("a provider that breaks in an unexpected way")

    monkeypatch.setattr(Retriever, "embed_pending", broken)
    try:
        concept = memory.put(PAGE, agent=AGENT)
        assert concept.name == "frete-gratis"
        assert [c.name for c in memory.concepts(agent=AGENT)] == ["frete-gratis"]
    finally:
        memory.close()


def test_a_file_is_no_data_directory(tmp_path: Path) -> None:
    # A newcomer's report: reads on a regular file's path found nothing, silently.
    not_a_folder = tmp_path / "notes.txt"
    not_a_folder.write_text("hello", encoding="utf-8")
    with pytest.raises(UserError, match="notes.txt' is a file, not a directory"):
        Memory(not_a_folder)
    assert not_a_folder.read_text(encoding="utf-8") == "hello"


def test_a_closed_memory_says_so(tmp_path: Path) -> None:
    memory = Memory(tmp_path / "data")
    memory.put(PAGE, agent=AGENT)
    memory.close()
    for call in (lambda: memory.search("frete", agent=AGENT), lambda: memory.put(PAGE, agent=AGENT),
                 lambda: memory.knowledge_block("frete", agent=AGENT), lambda: memory.tenants(),
                 lambda: memory.learn(CHAT, agent=AGENT, session_id="s"), lambda: memory.store(),
                 lambda: memory.status(), lambda: memory.agents(), memory.__enter__,  # `with` too
                 memory.drain):  # a closed memory cannot say its queued turns are learned
        with pytest.raises(UserError, match="this Memory is closed"):
            call()
    assert memory.close() is True  # closing again is harmless
    with Memory(tmp_path / "data") as again:  # a new one opens the same data
        assert [h.name for h in again.search("frete grátis", agent=AGENT)] == ["frete-gratis"]


@pytest.mark.parametrize(("call", "said"), [
    (lambda m: m.search("frete", agent=AGENT, top_k=0), "Memory.search(): top_k: Input should be greater"),
    (lambda m: m.search("frete", agent=AGENT, index="nope"), "Memory.search(): index: Input should be"),
    (lambda m: m.status(failures=-1), "Memory.status(): failures must be 0 or more, not -1"),
    (lambda m: m.drain(-1), "Memory.drain(): timeout_s must be 0 or more seconds (or None), not -1"),
    (lambda m: m.drain(float("nan")), "Memory.drain(): timeout_s must be 0 or more seconds (or None), not nan"),
    (lambda m: m.update("frete-gratis", agent=AGENT, rename="Bad Name!"), "Memory.update(): rename: 'Bad Name!'"),
    (lambda m: m.concepts(agent=AGENT, held="yes"), "Memory.concepts(): held must be bool"),
    # a newcomer's attack: these raised a bare OverflowError or AttributeError
    (lambda m: m.restore("frete-gratis", 2**64, agent=AGENT), "concept 'frete-gratis' of agent"),
    (lambda m: m.submit({"agent": AGENT}), "Memory.submit(): turn must be Turn, not dict"),
    (lambda m: m.submit(None), "Memory.submit(): turn must be Turn, not NoneType"),
    (lambda m: m.tenant("default").submit("turn"), "Tenant.submit(): turn must be Turn, not str"),
])
def test_a_value_out_of_range_is_named_as_the_argument_of_the_call_given(
        memory: Memory, call: Callable[[Memory], Any], said: str) -> None:
    with pytest.raises(UserError) as raised:
        call(memory)
    assert str(raised.value).startswith(said), raised.value
    assert [c.name for c in memory.concepts(agent=AGENT)] == ["frete-gratis"]


def test_any_number_of_failures_lists_those_on_record(memory: Memory) -> None:
    # a newcomer's attack: 10**30 raised a bare OverflowError (the database's LIMIT is 64 bits)
    assert memory.status(failures=10**30) == memory.status(failures=5)


@pytest.mark.parametrize("directory", ["", "  "])
def test_an_empty_directory_is_refused_not_read_as_the_default(directory: str) -> None:
    with pytest.raises(UserError, match=r"Memory\(\): directory is empty"):
        Memory(directory)


def test_a_directory_with_a_nul_is_refused_at_once() -> None:
    """A newcomer's attack: it was accepted, and the first `put` raised a bare ValueError."""
    with pytest.raises(UserError, match=r"Memory\(\): directory 'a\\x00b' holds a NUL"):
        Memory("a\x00b")


def test_an_update_that_changes_nothing_writes_no_version(memory: Memory) -> None:
    before = memory.history("frete-gratis", agent=AGENT)
    same = memory.update("frete-gratis", agent=AGENT, description="Frete grátis acima de R$ 199.")
    assert memory.history("frete-gratis", agent=AGENT) == before
    assert same == next(c for c in memory.concepts(agent=AGENT) if c.name == "frete-gratis")
    memory.update("frete-gratis", agent=AGENT, description="Frete grátis acima de R$ 200.")
    assert len(memory.history("frete-gratis", agent=AGENT)) == len(before) + 1


@pytest.mark.parametrize("length", [60, 2_000])
def test_a_long_unknown_key_is_named_cut(memory: Memory, length: int) -> None:
    with pytest.raises(UserError) as raised:
        memory.put(f"---\nname: n\ndescription: d.\n{'k' * length}: 1\n---\nbody\n", agent=AGENT)
    message = str(raised.value)
    assert f"({length} characters)" in message and len(message) < 400, message
    assert [c.name for c in memory.concepts(agent=AGENT)] == ["frete-gratis"]


@pytest.mark.parametrize(("call", "said"), [
    (lambda m: m.search("frete", agent=AGENT, top_k=0), "(got 0)"),
    (lambda m: m.search("frete", agent=AGENT, index="nope"), "(got 'nope')"),
    (lambda m: m.search("frete", agent=AGENT, index="x" * 500), "(got 'xxxx"),
])
def test_an_out_of_range_setting_says_the_value_given(memory, call, said: str) -> None:
    """A newcomer's finding: "top_k: Input should be greater than or equal to 1" did not say
    what was given."""
    with pytest.raises(ConfigError) as caught:
        call(memory)
    assert said in str(caught.value) and len(str(caught.value)) < 200
