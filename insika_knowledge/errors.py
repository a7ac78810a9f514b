"""The library's exceptions: one base, caller mistakes split from run-time failures.

`cli.py` alone maps these to exit codes; every other module raises them.
"""

from __future__ import annotations

from typing import Final


class InsikaError(Exception):
    """Base of every error this library raises on purpose."""


class InterruptedAfterWrite(KeyboardInterrupt):
    """An interrupt (Ctrl-C) that arrived after a write was committed, while the work that
    follows it ran (the written concept's vector): the write stands, and a caller reports it
    as done. A `KeyboardInterrupt`, so code that stops on one still stops.

    Attributes:
        name: the concept written.
    """

    def __init__(self, name: str):
        self.name = name
        super().__init__(f"interrupted after {name!r} was written (its vector is made later: reindex)")


class UserError(InsikaError):
    """The caller asked for something invalid: bad input, a bad name, a bad setting.

    Fix the input and call again; nothing was written.
    """


def missing_extra(what: str, extra: str, missing: str) -> UserError:
    """The error for `what` ("the Studio") run without optional extra `extra`: names the
    `missing` module and how to install the extra, from the package index and in a clone of
    the repository (where ``pip install 'insika-knowledge[studio]'`` installs nothing new).
    """
    return UserError(f"{what} needs the {extra} extra ({missing} is missing): pip install "
                     f"'insika-knowledge[{extra}]' (in a clone of the repository: pip install -e '.[{extra}]')")


#: The longest frontmatter key a `ConceptFormatError` shows whole.
FIELD_SHOWN = 40


class ConceptFormatError(UserError):
    """A concept's markdown or frontmatter is invalid.

    Attributes:
        line: 1-based line of the record where the problem is, or None when it
            concerns the record as a whole.
        field: the frontmatter key concerned (``name``, ``confidence``...), or None.
        problem: the problem alone, without the location prefix.
    """

    def __init__(self, problem: str, *, line: int | None = None, field: str | None = None):
        self.problem = problem
        self.line = line
        self.field = field
        where = []
        if line is not None:
            where.append(f"line {line}")
        if field is not None:  # a key that is not one of ours may be any length: shown cut
            where.append(f"field '{field}'" if len(field) <= FIELD_SHOWN else
                         f"field '{field[:FIELD_SHOWN - 1]}…' ({len(field)} characters)")
        prefix = ", ".join(where)
        super().__init__(f"{prefix}: {problem}" if prefix else problem)


class InvalidName(UserError):
    """A concept, tenant or agent name is not acceptable (and could not be normalised)."""


class NotADatabase(UserError):
    """A tenant's database file is not a SQLite database (another program's file named like
    one): nothing in it is read or changed. Listings of every tenant (`Memory.status`, the
    ``status`` and ``agents`` commands) report it and go on with the others.
    """


class ConfigError(UserError):
    """The agent's ``knowledge:`` block is invalid; the message names the key."""


class NotFound(UserError):
    """An agent, tenant, concept or version does not exist."""


class Quarantined(NotFound):
    """A concept exists but is held in quarantine (see `insika_knowledge.trust`).

    A rule only the customer supported is stored but never handed to a model until a
    person approves it (`Memory.approve`, ``insika-knowledge approve``, the Studio's
    Approve) or a later sighting the business supports
    releases it. It is a `NotFound`, so code that treats it as absent stays safe; the
    message says it is held, why and how to release it, never that it does not exist.

    Attributes:
        agent: the agent id.
        name: the concept's name.
        reason: why it is held, in one line (`insika_knowledge.trust.held_because`).
        since: when it was put in quarantine (UTC ISO-8601 ``Z``).
    """

    def __init__(self, agent: str, name: str, *, reason: str, since: str):
        self.agent = agent
        self.name = name
        self.reason = reason
        self.since = since
        super().__init__(
            f"concept '{name}' of agent '{agent}' is held in quarantine since {since}: {reason}; "
            "it is never handed to a model until an operator approves it (Memory.approve, "
            "'insika-knowledge approve', or the Studio's Approve)"
        )


class StaleVersion(UserError):
    """An edit was based on a version that is no longer current (optimistic locking).

    Attributes:
        expected: the version the edit was loaded from.
        current: the version now on record.
    """

    def __init__(self, name: str, expected: int, current: int):
        self.expected = expected
        self.current = current
        if expected > current:  # never this concept's version: not loaded from it at all
            super().__init__(f"concept '{name}' has no version {expected} (its current version is "
                             f"{current}); reload it and apply the edit again")
            return
        super().__init__(
            f"concept '{name}' changed since it was loaded (version {expected}, now {current}); "
            "reload it and apply the edit again"
        )


class NoConcepts(InsikaError):
    """The agent has no concepts in the tenant: nothing to search, show, list or export.

    Neither a mistake in the call (the name is valid; the agent may not have learned yet)
    nor a failure: the command line exits 1 for it, as grep does when nothing matches.
    The message names the agents that do have concepts there.

    Attributes:
        agent: the agent asked for.
        tenant: the tenant looked in.
        agents: the tenant's agents that have concepts, sorted.
    """

    def __init__(self, message: str, *, agent: str, tenant: str, agents: list[str]):
        self.agent = agent
        self.tenant = tenant
        self.agents = agents
        super().__init__(message)


class RunTimeFailure(InsikaError):
    """Something outside the caller's control failed (a model, the disk, the network)."""


class EndpointResting(RunTimeFailure):
    """A remote endpoint was not asked: it failed a moment ago and is left alone for a while
    (`insika_knowledge.index.embedders.remote.COOL_OFF_S`); the caller degrades as it does
    on a failure, without waiting.
    """


class DatabaseFileChanged(RunTimeFailure):
    """A database file was deleted or replaced by another file after it was opened.

    Nothing more is written through the store that opened it: a write would land in the
    deleted file (and be lost) or never reach the file now at the path. Open the store
    again (restart the process) to use the file that is there now.

    Attributes:
        problem: what happened, naming the path ("the database file ... was deleted
            after it was opened").
    """

    def __init__(self, problem: str):
        self.problem = problem
        super().__init__(f"{problem}; nothing was written. Open it again (restart) to use the "
                         "file now at that path.")


#: The outcomes a failed model call records (`ModelFailure.outcome`).
MODEL_OUTCOMES: Final = ("model_timeout", "model_rate_limited", "model_malformed", "model_empty", "model_error")


class ModelFailure(RunTimeFailure):
    """A model call failed; the turn's extraction can be retried later.

    Raises:
        ValueError: `outcome` is none of `MODEL_OUTCOMES`, or `retry_after_s` is not None nor
            a finite number of seconds >= 0 (a model object's own failure).

    Attributes:
        outcome: the recorded outcome kind: ``model_timeout``, ``model_rate_limited``,
            ``model_malformed``, ``model_empty`` or ``model_error``.
        attempts: how many attempts were made.
        raw_output: the last raw text the model answered, if any (truncated to 2000 chars).
        retry_after_s: the seconds the provider asked to wait (its ``Retry-After`` header,
            on a 429 or any other HTTP error), or None when it did not say.
        transient: True when the same call may succeed in a moment without anyone changing
            anything: a timeout, HTTP 429, 408, 409 or 5xx, a failed connection (the
            learning queue tries such a turn again by itself). An answer that was not the
            expected JSON, or any other HTTP error (401, 404: a key or a model name to fix),
            is not. Default: True for ``model_timeout`` and ``model_rate_limited``.
        configuration: True when the model cannot be used as configured, whatever the turn:
            no API key, HTTP 401, 403 or 404 (a key, a permission or a model name to fix).
            The learning queue holds such a turn until the model answers again (`ModelNotReady`).
    """

    def __init__(self, outcome: str, detail: str, *, attempts: int = 1, raw_output: str | None = None,
                 retry_after_s: float | None = None, transient: bool | None = None,
                 configuration: bool = False):
        if outcome not in MODEL_OUTCOMES:  # it is recorded as the turn's outcome, which readers match
            raise ValueError(f"ModelFailure outcome {outcome!r} is not one of {', '.join(MODEL_OUTCOMES)}")
        if retry_after_s is not None and not (isinstance(retry_after_s, (int, float)) and not isinstance(
                retry_after_s, bool) and 0 <= retry_after_s < float("inf")):
            raise ValueError(f"ModelFailure retry_after_s {retry_after_s!r} is not a finite number of seconds >= 0")
        self.outcome = outcome
        self.detail = detail
        self.attempts = attempts
        self.raw_output = raw_output[:2000] if raw_output else raw_output
        self.retry_after_s = retry_after_s
        self.transient = outcome in ("model_timeout", "model_rate_limited") if transient is None else transient
        self.configuration = configuration
        super().__init__(f"{outcome}: {detail} (after {attempts} attempt(s))")


class ModelNotReady(RunTimeFailure):
    """A queued turn's extraction failed because the configured model cannot be used: it has
    no API key, the provider refuses the key, or the model does not exist
    (`ModelFailure.configuration`). The outcome is recorded; the learning queue holds the
    turn (`insika_knowledge.queue`) instead of dropping it.

    Attributes:
        outcome: the recorded outcome (``model_error``).
        detail: what failed (no credential in it).
    """

    def __init__(self, outcome: str, detail: str):
        self.outcome = outcome
        self.detail = detail
        super().__init__(f"{outcome}: {detail}")


class StorageError(RunTimeFailure):
    """The database file failed underneath a read or a write (not the caller's input).

    Attributes:
        path: the database file concerned (as text).
    """

    def __init__(self, message: str, *, path: str = ""):
        self.path = path
        super().__init__(message)


class StorageBusy(StorageError):
    """Another writer held the database's write lock longer than this call may wait.

    Nothing was written; try again later (the engine's hooks defer and retry by themselves).

    Attributes:
        waited_ms: how long the call waited for the lock, in milliseconds.
    """

    def __init__(self, message: str, *, path: str = "", waited_ms: float = 0.0):
        self.waited_ms = waited_ms
        super().__init__(message, path=path)


class StorageFull(StorageError):
    """The disk holding the database is full: free space, then try again."""


class StorageCorrupt(StorageError):
    """The database file is damaged: restore it from a backup or an export."""


class StorageReadOnly(StorageError):
    """The database file, its folder or its disk cannot be written (read-only, permissions)."""


class ArgumentTypeError(UserError, TypeError):
    """An argument of a public call has the wrong type (see `check_types`).

    A `UserError` (the command line's exit 2; nothing was read or written) and a
    `TypeError`, so code that catches either gets it.
    """


class MemoryClosed(UserError):
    """A `Memory` was used after `Memory.close`: open a new one (nothing was read or written)."""

    def __init__(self) -> None:
        super().__init__("this Memory is closed: open a new Memory (nothing was read or written)")


#: What `check_types` takes per argument: ``(value, type or types)``, or with the expected
#: kind spelled out for the message: ``(value, types, "a list of message dicts")``.
Expected = tuple[object, type | tuple[type, ...]] | tuple[object, type | tuple[type, ...], str]


def check_types(where: str, **arguments: Expected) -> None:
    """Check each argument's type; the first that is not one of its types raises.

    ``bool`` passes only where it is named: ``True`` is never an ``int`` here.

    Args:
        where: the call, as the message starts (``Memory.search()``).
        arguments: per argument name, ``(value, types[, what is expected])``;
            ``type(None)`` among the types lets None through.

    Raises:
        ArgumentTypeError: ``<where>: <name> must be <expected>, not <type given>``.
    """
    for name, spec in arguments.items():
        value, types = spec[0], spec[1]
        kinds = types if isinstance(types, tuple) else (types,)
        if isinstance(value, kinds) and not (isinstance(value, bool) and bool not in kinds):
            continue
        raise wrong_type(where, name, value, spec[2] if len(spec) > 2 else _spelled(kinds))


def check_version(where: str, name: str, value: int | None) -> None:
    """Refuse a version number below 1 (a concept's first version is 1; None: not given).

    Raises:
        UserError: ``<where>: <name> counts from 1, not <value>``.
    """
    if value is not None and value < 1:
        raise UserError(f"{where}: {name} counts from 1 (a concept's first version is 1), not {value}")


def wrong_type(where: str, name: str, value: object, expected: str) -> ArgumentTypeError:
    """The error `check_types` raises, for checks it cannot express (a list's items)."""
    return ArgumentTypeError(f"{where}: {name} must be {expected}, not {type(value).__name__}")


def _spelled(kinds: tuple[type, ...]) -> str:
    names = [("None" if k is type(None) else k.__name__) for k in kinds]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " or " + names[-1]
class StorageUnavailable(StorageError):
    """The database cannot be reached now (a PostgreSQL server down, a store still opening).

    Raised at once, without waiting: the call goes on without memory (an engine hook
    returns its empty value), and memory comes back by itself once the database answers
    again (`insika_knowledge.store.breaker.Breaker`).

    Attributes:
        retry_in_s: seconds until the database is tried again (0: unknown).
    """

    def __init__(self, message: str, *, path: str = "", retry_in_s: float = 0.0):
        self.retry_in_s = retry_in_s
        super().__init__(message, path=path)
