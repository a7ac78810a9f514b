from __future__ import annotations

import pytest

from insika_knowledge.config import load_config
from insika_knowledge.errors import ConfigError


def test_absent_block_is_off() -> None:
    assert load_config(None) is None


def test_defaults_of_a_present_block() -> None:
    config = load_config({})
    assert (config.extract, config.retrieve, config.top_k, config.index) == (True, True, 5, "auto")
    assert config.types == ("fact", "entity", "procedure", "policy", "objection")


def test_switches_are_independent() -> None:
    config = load_config({"extract": True, "retrieve": False})
    assert config.extract and not config.retrieve


@pytest.mark.parametrize(
    ("block", "message"),
    [
        ({"topk": 3}, "knowledge.topk: unknown key"),
        ({"top_k": 0}, "knowledge.top_k"),
        ({"types": ["fact", "rumour"]}, "knowledge.types.1"),
        ({"types": []}, "knowledge.types"),
        ({"index": "faiss"}, "knowledge.index"),
        ({"model": "  "}, "knowledge.model"),
        ({"extract": "maybe"}, "knowledge.extract"),
        ({"top_k": True}, "knowledge.top_k: Input should be a valid integer"),  # YAML "true" is no 1
        ({"known_concepts": False}, "knowledge.known_concepts"),
        ({"min_coverage": True}, "knowledge.min_coverage"),
        ({"extract": "no"}, "knowledge.extract"),
        ({"retrieve": 1}, "knowledge.retrieve"),
    ],
)
def test_invalid_blocks_name_the_key(block: dict, message: str) -> None:
    with pytest.raises(ConfigError, match=message.replace(".", r"\.")):
        load_config(block)


def test_not_a_mapping_is_an_error() -> None:
    with pytest.raises(ConfigError):
        load_config(["extract"])  # type: ignore[arg-type]


def test_model_falls_back_to_the_platform_utility_model(monkeypatch) -> None:
    monkeypatch.setenv("INSIKA_UTILITY_MODEL", "openai/gpt-4o-mini")
    assert load_config({}).resolved_model() == "openai/gpt-4o-mini"
    assert load_config({"model": "replay:x.json"}).resolved_model() == "replay:x.json"
    monkeypatch.delenv("INSIKA_UTILITY_MODEL")
    assert load_config({}).resolved_model() is None


def test_every_index_mode_is_accepted() -> None:
    assert [load_config({"index": m}).index for m in ("scan", "fts5", "auto")] == ["scan", "fts5", "auto"]
