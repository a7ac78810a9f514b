from __future__ import annotations

import itertools
import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import apsw
import pytest
from hypothesis import settings

sys.path.insert(0, str(Path(__file__).parent))  # tests/fakellm.py, tests/host.py

import netguard  # noqa: E402
from pgcluster import pg_cluster, pg_shared_url, pg_url, unique_tenant  # noqa: E402, F401 (fixtures)

from insika_knowledge.concept import Concept  # noqa: E402
from insika_knowledge.index.tokenizer import TOKENIZER  # noqa: E402
from insika_knowledge.store import ProcedureStorage, SQLiteStore, Store  # noqa: E402

#: The backends the `store` and `database` fixtures run a test against.
BACKENDS = ("sqlite", "postgresql")

# Hypothesis: CI's verdict must not depend on a random draw. Under CI (``$CI`` set; .ci/run
# sets it) every property runs the same examples each time (derandomize: the draws are
# seeded from the test itself), no example database carries failures over between runs,
# a failure prints its reproduction blob, and no deadline turns a slow, shared machine
# into a failure. Elsewhere the draws are random (the `dev` profile: Hypothesis' default,
# with its local example database replaying earlier failures first). A test's own
# ``@settings(max_examples=..., deadline=...)`` still applies on top of either profile.
# HYPOTHESIS_PROFILE=ci (or dev) chooses one explicitly.
settings.register_profile("ci", derandomize=True, database=None, print_blob=True, deadline=None)
settings.register_profile("dev")
HYPOTHESIS_PROFILE = os.environ.get("HYPOTHESIS_PROFILE") or ("ci" if os.environ.get("CI") else "dev")
settings.load_profile(HYPOTHESIS_PROFILE)


def pytest_report_header(config: pytest.Config) -> list[str]:
    conn = apsw.Connection(":memory:")
    try:
        conn.execute("CREATE VIRTUAL TABLE t USING fts5(x)")
        fts5 = "yes"
    except apsw.Error:
        fts5 = "no"
    return [f"SQLite {apsw.sqlite_lib_version()} (apsw {apsw.apsw_version()}), FTS5: {fts5}",
            f"Hypothesis profile: {HYPOTHESIS_PROFILE}"]


netguard.install()


@pytest.fixture(autouse=True)
def _no_network() -> Iterator[None]:
    """A test that tried to reach beyond loopback fails, even when its code swallowed the refusal."""
    netguard.take()
    yield
    refused = netguard.take()
    if refused:
        pytest.fail("reached for the network: " + "; ".join(refused[:5]), pytrace=False)


@pytest.fixture(autouse=True)
def _home_in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No test ever touches the real user data folder or a real model.

    The data folder is ``tmp_path / "home"``, not created: a test can assert that
    nothing was written there.
    """
    monkeypatch.setenv("INSIKA_KNOWLEDGE_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("INSIKA_DATABASE_URL", raising=False)
    monkeypatch.delenv("INSIKA_UTILITY_MODEL", raising=False)
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")  # closed port: no network
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    # Lexical ranking unless a test asks for embeddings (a fake provider, or the real one in
    # tests/test_semantic.py): the offline model is slow to load and would change every block.
    monkeypatch.setenv("INSIKA_EMBEDDINGS", "off")


class Clock:
    """A clock that advances one second per reading, from 2026-08-24T18:00:00Z."""

    def __init__(self) -> None:
        self._seconds = itertools.count()

    def __call__(self) -> str:
        s = next(self._seconds)
        return f"2026-08-24T{18 + s // 3600:02d}:{s // 60 % 60:02d}:{s % 60:02d}Z"


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    """Each backend in turn: ``sqlite`` (files) or ``postgresql`` (the throwaway cluster)."""
    return str(request.param)


@pytest.fixture
def store(request: pytest.FixtureRequest, backend: str, tmp_path: Path, clock: Clock) -> Iterator[Store]:
    """A tenant's empty store on each backend (PostgreSQL: a schema of its own)."""
    if backend == "sqlite":
        db: Store = SQLiteStore(tmp_path / "tenant.db", clock=clock, tokenizer=TOKENIZER)
    else:
        from insika_knowledge.store.postgres import PostgresStore

        url = request.getfixturevalue("pg_shared_url")
        db = PostgresStore(url, unique_tenant(), clock=clock, tokenizer=TOKENIZER)
    yield db
    db.close()


@pytest.fixture
def sqlite_store(tmp_path: Path, clock: Clock) -> Iterator[SQLiteStore]:
    """The SQLite store alone (tests of SQLite's own files, pragmas and failures)."""
    db = SQLiteStore(tmp_path / "tenant.db", clock=clock, tokenizer=TOKENIZER)
    yield db
    db.close()


@pytest.fixture
def open_procedures(request: pytest.FixtureRequest, backend: str, tmp_path: Path) -> Callable[[], ProcedureStorage]:
    """Opens this test's procedure store on each backend (the same store at every call)."""
    if backend == "sqlite":
        from insika_knowledge.store.sqlite.procedures import ProcedureStore

        return lambda: ProcedureStore(tmp_path / "tenant.db")
    from insika_knowledge.store.postgres.procedures import PostgresProcedureStore

    url, tenant = str(request.getfixturevalue("pg_shared_url")), unique_tenant()
    return lambda: PostgresProcedureStore(url, tenant)


@pytest.fixture
def database(request: pytest.FixtureRequest, backend: str) -> str | None:
    """What `Memory(database=...)` gets on each backend: None (SQLite files) or a fresh database."""
    if backend == "sqlite":
        return None
    return str(request.getfixturevalue("pg_url"))


def make_concept(name: str = "cep-13-campinas", **changes: object) -> Concept:
    base = Concept(
        name=name,
        description="CEPs 13000-13999 ship from the Campinas DC in 1-2 business days.",
        type="fact",
        provenance="observed",
        confidence=0.6,
        sources=("sess_1",),
        occurrences=1,
        created_at="2026-08-24T18:02:11Z",
        updated_at="2026-08-24T18:02:11Z",
        body="Orders to CEP range 13000-13999 are fulfilled by the Campinas DC. "
        "Related: [[frete-gratis-acima-199]].",
    )
    return base.replace(**changes)



def demo_turn(session_id: str) -> list[dict[str, object]]:
    """The demo conversation `session_id` (`insika_knowledge.demo.demo_conversation`)."""
    from insika_knowledge.demo import demo_conversation

    return demo_conversation(session_id)


#: A tool call and its result: the agent looked the rules up, so a rule the model writes
#: from a turn that ends with these may come from what the agent did
#: (`insika_knowledge.trust.assess`); for tests of what happens after the trust verdict.
def looked_up(*texts: str) -> list[dict[str, object]]:
    """A tool call and its result that returned `texts`: the rules the model writes from the
    turn are the ones the agent looked up, values included (`insika_knowledge.trust.assess`
    holds a rule with a value nothing in the turn states)."""
    return [
        {"role": "assistant", "content": "", "tool_calls": [
            {"id": "k1", "type": "function", "function": {"name": "search_policies", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "k1", "content": "\n".join(
            t for t in texts if not any("\ud800" <= ch <= "\udfff" for ch in t))  # no lone surrogates
         or "see the policy pages"},
    ]


LOOKED_UP: list[dict[str, object]] = [
    {"role": "assistant", "content": "", "tool_calls": [
        {"id": "k1", "type": "function", "function": {"name": "search_policies", "arguments": "{}"}}]},
    {"role": "tool", "tool_call_id": "k1", "content": '{"policies": "see the policy pages"}'},
]
