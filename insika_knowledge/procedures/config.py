"""The procedural-memory settings, validated once.

Defaults: mode ``shadow`` (recall and report, inject nothing) until an operator turns
it to ``prod`` or ``canary:N``; a 400-token budget, or ``$ACE_SKG_MAX_TOKENS`` when set
(the seed's setting).

Operation procedures (tool-calling agents): a Wilson lower bound of 0.2 over tasks (two
supporting tasks at least in any case), the 2 nearest past tasks voting at a cosine of
0.4 or more, all of the vote for the operation (agreement 1.0), no margin beyond that.
These were chosen by ``procedures evaluate`` on the dev half of the shared tau2 samples
(user groups held out one at a time), the test half never read while choosing
(``benchmarks/procedures.md``).

Shell procedures (coding agents): a match score of 0.7, the precision target itself (the
score estimates the share of past successful runs with similar tasks that did the
procedure), not a value fitted to data, and two runs of the task's repository.
Idle sessions are flushed after 600 s by a sweep every 60 s.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any

from insika_knowledge.errors import ConfigError, check_types
from insika_knowledge.procedures.modes import Mode, parse_mode

#: The default ``min_match_score``: the precision target (see the module docstring).
MATCH_DEFAULT = 0.7
#: The environment variable that sets the block budget (the seed's name).
MAX_TOKENS_ENV = "ACE_SKG_MAX_TOKENS"
DEFAULT_MAX_TOKENS = 400


def env_max_tokens() -> int:
    """``$ACE_SKG_MAX_TOKENS`` as a positive integer, else 400.

    Raises:
        ConfigError: the variable is set to something that is not a positive integer.
    """
    raw = os.environ.get(MAX_TOKENS_ENV, "").strip()
    if not raw:
        return DEFAULT_MAX_TOKENS
    if not raw.isdigit() or int(raw) < 1:
        raise ConfigError(f"{MAX_TOKENS_ENV}: {raw!r} must be a positive integer")
    return int(raw)


@dataclass(frozen=True)
class ProceduresConfig:
    r"""Settings of `insika_knowledge.procedures.skill.ProceduralMemory`.

    Attributes:
        mode: ``off``, ``shadow``, ``prod`` or ``canary:N``.
        max_injection_tokens: the block budget, tokens (a larger block is ``skipped_budget``);
            default ``$ACE_SKG_MAX_TOKENS``, else 400.
        min_confidence: the Wilson 95 % lower bound a procedure needs to be recalled (0..1).
        min_match_score: the match score a recall needs to be a hit (0..1): the estimated
            share of past successful runs with similar tasks that did the procedure
            (`insika_knowledge.procedures.recall.recall`).
        idle_flush_s: seconds without a request after which a session is flushed and mined.
        sweep_interval_s: seconds between two idle sweeps of the background sweeper.
        token_counter: ``wordpiece``, ``charsN`` or ``tiktoken:<encoding>``
            (`insika_knowledge.procedures.recall.tokens`).
        verify_patterns: extra regular expressions (``re.search`` on a command line) that
            make a shell command a verify step, e.g. ``python reproduce\.py``.
        verify_scripts: read agent scripts as checks: running a script (``python x.py``,
            ``bash x.sh``...) after an edit of another file is a verify step that passes
            when it exits 0, and a file the trace created and ran is a scratch file whose
            name is a placeholder (on by default).
        neighbours: how many nearest past tasks vote on a user message (operations).
        min_similarity: the cosine a past task needs to vote (0..1).
        min_agreement: the share of the vote an operation needs (0..1).
        margin: how far below the second supporting task the nearest other task must be
            (0..1): a near tie abstains.
        environment_runs: how many runs of a task's environment (its repository) a shell
            procedure needs to be recalled for that environment (0: no such check; the
            cache-safety replay uses 0 to place blocks in every session).
    """

    mode: str = "shadow"
    max_injection_tokens: int = field(default_factory=env_max_tokens)
    min_confidence: float = 0.2
    min_match_score: float = MATCH_DEFAULT
    idle_flush_s: float = 600.0
    sweep_interval_s: float = 60.0
    token_counter: str = "wordpiece"
    verify_patterns: tuple[str, ...] = ()
    verify_scripts: bool = True
    neighbours: int = 2
    min_similarity: float = 0.2
    min_agreement: float = 1.0
    margin: float = 0.0
    environment_runs: int = 2
    _compiled: tuple[re.Pattern[str], ...] = field(
        default=(), init=False, repr=False, compare=False
    )
    _mode: Mode = field(default=Mode("shadow"), init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_mode", parse_mode(self.mode, where="procedures mode"))
        if not isinstance(self.max_injection_tokens, int) or self.max_injection_tokens < 1:
            raise ConfigError(
                f"max_injection_tokens: {self.max_injection_tokens!r} must be a positive integer"
            )
        if not isinstance(self.neighbours, int) or self.neighbours < 1:
            raise ConfigError(f"neighbours: {self.neighbours!r} must be a positive integer")
        if not isinstance(self.environment_runs, int) or self.environment_runs < 0:
            raise ConfigError(f"environment_runs: {self.environment_runs!r} must be a whole number")
        for name in ("min_confidence", "min_match_score", "min_similarity", "min_agreement", "margin"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
                raise ConfigError(f"{name}: {value!r} must be a number from 0 to 1")
        for name in ("idle_flush_s", "sweep_interval_s"):
            value = getattr(self, name)
            if not isinstance(value, (int, float)) or value <= 0:
                raise ConfigError(f"{name}: {value!r} must be a positive number of seconds")
        if not isinstance(self.verify_scripts, bool):
            raise ConfigError(f"verify_scripts: {self.verify_scripts!r} must be true or false")
        if isinstance(self.verify_patterns, (str, bytes)):  # six one-letter patterns, read so
            raise ConfigError(f"verify_patterns: {self.verify_patterns!r} is a list of regular expressions, "
                              "not one string: write it as a list")
        compiled = []
        for pattern in self.verify_patterns:
            if not isinstance(pattern, str):
                raise ConfigError(f"verify_patterns: {pattern!r} is no text")
            try:
                compiled.append(re.compile(pattern))
            except re.error as exc:
                raise ConfigError(
                    f"verify_patterns: {pattern!r} is not a regular expression: {exc}"
                ) from None
            if compiled[-1].search(""):  # "" or "pytest|": it would make every run a verified one
                raise ConfigError(f"verify_patterns: {pattern!r} matches every command (it matches an "
                                  "empty one): no run would be unverified")
        object.__setattr__(self, "verify_patterns", tuple(self.verify_patterns))
        object.__setattr__(self, "_compiled", tuple(compiled))

    @property
    def parsed_mode(self) -> Mode:
        """`mode`, parsed."""
        return self._mode

    @property
    def verify_regexes(self) -> tuple[re.Pattern[str], ...]:
        """`verify_patterns`, compiled."""
        return self._compiled

    @classmethod
    def given(cls, config: ProceduresConfig | Mapping[str, Any] | None, where: str) -> ProceduresConfig | None:
        """`config` as settings: itself, a mapping read by `from_mapping`, or None.

        Raises:
            ArgumentTypeError: it is none of them (`where` names the call).
            ConfigError: the mapping holds an unknown key or an invalid value.
        """
        check_types(where, config=(config, (ProceduresConfig, Mapping, type(None)),
                                   "ProceduresConfig, a mapping of its settings or None"))
        return config if config is None or isinstance(config, ProceduresConfig) else cls.from_mapping(config)

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any] | None) -> ProceduresConfig:
        """Build from a mapping (a YAML block); an unknown key is an error naming it.

        Raises:
            ConfigError: an unknown key or an invalid value.
        """
        known = {f.name for f in fields(cls) if f.init}
        if data is not None and not isinstance(data, Mapping):
            raise ConfigError(f"procedures: expected a mapping of settings, got {type(data).__name__}")
        data = dict(data or {})
        for key in data:
            if key not in known:
                raise ConfigError(
                    f"procedures: unknown key {key!r} (known: {', '.join(sorted(known))})"
                )
        patterns = data.get("verify_patterns")
        if "verify_patterns" in data and not isinstance(patterns, (str, bytes)):  # one string: refused
            data["verify_patterns"] = tuple(patterns or ())
        return cls(**data)
