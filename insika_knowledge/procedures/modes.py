"""Modes: ``off``, ``shadow``, ``prod`` and ``canary:N``, and the canary arm of a request.

- ``off``: the skill is not consulted; no capture, no recall, no stage.
- ``shadow``: capture and recall as in prod, but nothing is injected; the stage reports
  the size of the block that would have gone in (``would_inject_tokens``).
- ``prod``: capture, recall, inject, follow the session through the procedure.
- ``canary:N`` (N in 0..100): a session is in the treatment arm (behaves as prod, mode
  ``canary_treatment``) when a stable hash of its id falls in the first N of 100 buckets,
  else in control (mode ``canary_control``: nothing runs, and a stage says so). The arm
  is decided per session, so a session never changes arm between turns; a request
  without a session is hashed on its ``x-request-id`` header, else on its body
  (``canary_keyed_by: request``).

The hash is the first 8 bytes of SHA-256 of the key, modulo 100.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from insika_knowledge.errors import UserError

OFF: Final = "off"
SHADOW: Final = "shadow"
PROD: Final = "prod"
CANARY: Final = "canary"
CANARY_TREATMENT: Final = "canary_treatment"
CANARY_CONTROL: Final = "canary_control"
_CANARY_RE: Final = re.compile(r"canary:(\d{1,3})")


@dataclass(frozen=True)
class Mode:
    """A parsed mode.

    Attributes:
        name: ``off``, ``shadow``, ``prod`` or ``canary``.
        percent: N of ``canary:N`` (the share of sessions in treatment), else None.
    """

    name: str
    percent: int | None = None

    def __str__(self) -> str:
        return f"canary:{self.percent}" if self.name == CANARY else self.name


def parse_mode(text: str, *, where: str = "mode") -> Mode:
    """Parse ``off``, ``shadow``, ``prod`` or ``canary:N``.

    Raises:
        UserError: anything else, or N outside 0..100 (the message names `where`).
    """
    value = str(text).strip().lower()
    if value in (OFF, SHADOW, PROD):
        return Mode(value)
    match = _CANARY_RE.fullmatch(value)
    if match and 0 <= int(match.group(1)) <= 100:
        return Mode(CANARY, int(match.group(1)))
    raise UserError(f"{where}: {text!r} is not a mode; use off, shadow, prod or canary:N (N 0-100)")


def bucket(key: str) -> int:
    """The canary bucket (0..99) of `key`: SHA-256, first 8 bytes, modulo 100."""
    return int.from_bytes(hashlib.sha256(key.encode("utf-8")).digest()[:8], "big") % 100


@dataclass(frozen=True)
class Arm:
    """The arm a request runs in.

    Attributes:
        mode: what runs: ``shadow``, ``prod``, ``canary_treatment`` or ``canary_control``.
        canary_bucket: ``treatment`` or ``control`` under canary, else None.
        canary_percent: N under canary, else None.
        canary_keyed_by: ``session`` or ``request`` under canary, else None.
    """

    mode: str
    canary_bucket: str | None = None
    canary_percent: int | None = None
    canary_keyed_by: str | None = None

    @property
    def injects(self) -> bool:
        """Whether this arm puts the block into the request."""
        return self.mode in (PROD, CANARY_TREATMENT)


def request_key(body: Mapping[str, Any], headers: Mapping[str, str]) -> str:
    """The per-request canary key: ``x-request-id``, else the body's canonical JSON."""
    rid = headers.get("x-request-id")
    if rid:
        return "request:" + rid
    return "body:" + json.dumps(body, sort_keys=True, default=str, separators=(",", ":"))


def arm(mode: Mode, session_id: str | None, request: str) -> Arm | None:
    """The arm of a request, or None when the mode is off.

    Args:
        mode: the mode in force.
        session_id: the request's session id, or None.
        request: the per-request key (`request_key`), used without a session.
    """
    if mode.name == OFF:
        return None
    if mode.name != CANARY:
        return Arm(mode.name)
    assert mode.percent is not None
    keyed_by = "session" if session_id else "request"
    key = ("session:" + session_id) if session_id else request
    treated = bucket(key) < mode.percent
    return Arm(
        CANARY_TREATMENT if treated else CANARY_CONTROL,
        "treatment" if treated else "control",
        mode.percent,
        keyed_by,
    )
