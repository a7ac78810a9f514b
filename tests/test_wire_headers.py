"""Our headers (`insika_knowledge.wire.headers`)."""

from __future__ import annotations

import pytest

from insika_knowledge.errors import UserError
from insika_knowledge.wire.headers import (
    is_private,
    lower_headers,
    memory_on,
    session_id,
    skill_override,
    task_outcome,
)


def test_session_id_outcome_and_skill_headers() -> None:
    headers = lower_headers(
        {
            "X-ACE-Session": "s-1",
            "X-Ace-Task-Outcome": "Success",
            "x-ace-skills": "other=off, skill_knowledge_graph=shadow",
        }
    )
    assert session_id({"session_id": "body"}, headers) == "s-1"
    assert session_id({"session_id": "body"}, {}) == "body"
    assert session_id({}, {}) is None
    assert task_outcome(headers) == "success"
    assert task_outcome({"x-ace-outcome": "failure"}) == "failure"
    assert task_outcome({"x-ace-task-success": "true"}) == "success"
    assert task_outcome({"x-ace-task-success": "false"}) == "failure"
    assert task_outcome({}) is None
    with pytest.raises(UserError, match="x-ace-outcome"):
        task_outcome({"x-ace-outcome": "maybe"})
    assert skill_override(headers, "skill_knowledge_graph") == "shadow"
    assert skill_override({"x-ace-skills": "*=off"}, "skill_knowledge_graph") == "off"


def test_memory_off_and_private_headers() -> None:
    assert memory_on({}) and memory_on({"x-insika-memory": "on"})
    assert not any(memory_on({"x-insika-memory": v}) for v in ("off", " OFF ", "false", "0", "no"))
    assert is_private("x-insika-tenant") and is_private("x-ace-session") and not is_private("authorization")
