"""The per-agent ``knowledge:`` block: which parts of the loop run, and how.

An agent without the block has the feature off. A present block is validated
strictly: an unknown key is an error, never ignored.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from insika_knowledge.concept import CONCEPT_TYPES, ConceptType
from insika_knowledge.errors import ConfigError
from insika_knowledge.ids import quoted

UTILITY_MODEL_ENV = "INSIKA_UTILITY_MODEL"


class KnowledgeConfig(BaseModel):
    """The validated ``knowledge:`` block of one agent.

    Attributes:
        extract: learn concepts from finished turns (default on when the block exists).
        retrieve: inject the ``<knowledge>`` block and offer ``load_knowledge``.
        types: the concept types the extractor may write; others are dropped and counted.
        top_k: concepts injected per turn (1-50), and again the cap of the one-hop links.
        prompt: the pack-authored half of the extraction prompt (what counts as a
            concept for this agent); None = the generic prompt only.
        model: the extraction and consolidation model, an instructor provider string
            such as ``openai/gpt-4o-mini`` or ``replay:PATH``; None = the platform
            utility model from ``INSIKA_UTILITY_MODEL``.
        index: ``scan`` (term overlap over a per-process read cache), ``fts5`` (SQLite's
            full-text index, BM25 ranking; scan where SQLite lacks FTS5), or ``auto``
            (hybrid: Index::Postings' exact BM25 and the semantic index, fused, with a
            no-answer floor, when an embedding provider is available; Postings alone
            otherwise; see `insika_knowledge.retrieve` and benchmarks/README.md).
        min_coverage: the lexical relevance floor, 0..1: without embeddings, the block is
            injected only when the best concept covers at least this share of the
            message's weighted terms. 0 (the default: recall first) injects whenever a
            concept shares a term; 0.15-0.3 trades recall for fewer blocks on messages no
            concept answers (see benchmarks/README.md for the measured trade-off). Hybrid
            ranking has its own floor and ignores it.
        known_concepts: how many of the agent's concepts most relevant to a turn (found
            through its own index) the extraction prompt lists by name and description,
            so the model reuses a listed name for the same idea (0-100; 0 lists none).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    extract: bool = Field(default=True, strict=True)  # "no", 1: not read as a switch
    retrieve: bool = Field(default=True, strict=True)
    types: tuple[ConceptType, ...] = CONCEPT_TYPES  # type: ignore[assignment]
    top_k: int = Field(default=5, ge=1, le=50, strict=True)  # "top_k: true" is no 1
    prompt: str | None = Field(default=None, max_length=8000)
    model: str | None = None
    index: Literal["scan", "fts5", "auto"] = "auto"
    min_coverage: float = Field(default=0.0, ge=0.0, le=1.0, strict=True)
    known_concepts: int = Field(default=20, ge=0, le=100, strict=True)

    @field_validator("types")
    @classmethod
    def _types_not_empty(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        if not value:
            raise ValueError("list at least one concept type")
        return tuple(dict.fromkeys(value))

    @field_validator("model")
    @classmethod
    def _model_not_blank(cls, value: str | None) -> str | None:
        if value is not None and not value.strip():
            raise ValueError("give a model name or leave the key out")
        return value

    def resolved_model(self) -> str | None:
        """The model to call: ``model``, else ``$INSIKA_UTILITY_MODEL``, else None (no model)."""
        return self.model or os.environ.get(UTILITY_MODEL_ENV) or None


def load_config(block: Mapping[str, Any] | None) -> KnowledgeConfig | None:
    """Validate an agent's ``knowledge:`` block.

    Args:
        block: the mapping under ``knowledge:`` in the agent's pack data, or None when
            the agent has no such block.

    Returns:
        The config, or None when the block is absent (the feature is off).

    Raises:
        ConfigError: a key is unknown or a value is invalid; the message names the key and
            the value given, e.g. ``knowledge.top_k: Input should be greater than or equal
            to 1 (got 0)``.
    """
    if block is None:
        return None
    if not isinstance(block, Mapping):
        raise ConfigError(f"knowledge: must be a mapping of settings, got {type(block).__name__}")
    try:
        return KnowledgeConfig.model_validate(dict(block))
    except ValidationError as exc:
        problems = []
        for err in exc.errors():
            where = ".".join(str(p) for p in err["loc"]) or "(block)"
            message = "unknown key" if err["type"] == "extra_forbidden" else err["msg"]
            if err["type"] not in ("extra_forbidden", "missing") and "input" in err:
                message += f" (got {quoted(err['input'])})"
            problems.append(f"knowledge.{where}: {message}")
        raise ConfigError("; ".join(problems)) from None
