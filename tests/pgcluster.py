"""A throwaway PostgreSQL cluster for the test run, on a Unix socket (fixtures for conftest).

The cluster is `insika_knowledge.bench.pgcluster.Cluster` (``initdb``/``pg_ctl`` from PATH
or ``/usr/lib/postgresql/*/bin``: Debian's ``postgresql`` package, which ``.ci/run``
installs), without fsync, thrown away when the session ends. It lives in memory
(``/dev/shm``) when that has room: on a disk, each test's new database and each tenant's
schema cost about three times as long (file creation and removal), and removing the
cluster at the end took 14 s.

Tests that need it are skipped when no PostgreSQL binary exists, except under CI
(``$CI`` set), where a missing PostgreSQL fails them: CI must test both backends.
"""

from __future__ import annotations

import importlib.util
import itertools
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from insika_knowledge.bench.pgcluster import Cluster, find_bindir

_tenants = itertools.count(1)
#: The room the cluster's folder needs in memory, else it goes to the temp folder.
IN_MEMORY_ROOM = 2 << 30


def _in_memory() -> Path | None:
    """``/dev/shm`` when it is a writable folder with `IN_MEMORY_ROOM` free, else None."""
    shm = Path("/dev/shm")
    try:
        fits = shm.is_dir() and os.access(shm, os.W_OK) and shutil.disk_usage(shm).free >= IN_MEMORY_ROOM
    except OSError:
        return None
    return shm if fits else None


def _unavailable(reason: str) -> None:
    if os.environ.get("CI"):
        pytest.fail(f"PostgreSQL is required under CI: {reason}", pytrace=False)
    pytest.skip(reason)


@pytest.fixture(scope="session")
def pg_cluster() -> Iterator[Cluster]:
    """The session's throwaway cluster (started on first use)."""
    bindir = find_bindir()
    if bindir is None:
        _unavailable("no PostgreSQL binary (initdb) found")
    if importlib.util.find_spec("psycopg") is None:
        _unavailable("psycopg is not installed (the postgres extra)")
    assert bindir is not None
    cluster = Cluster(bindir, parent=_in_memory())
    try:
        cluster.start()
    except (subprocess.CalledProcessError, KeyError, OSError) as exc:
        detail = getattr(exc, "stderr", b"") or b""
        shutil.rmtree(cluster.root, ignore_errors=True)
        _unavailable(f"the PostgreSQL cluster did not start: {exc} {detail.decode(errors='replace')[-500:]}")
    yield cluster
    cluster.stop()


@pytest.fixture(scope="session")
def pg_shared_url(pg_cluster: Cluster) -> str:
    """One database for the whole session; tests isolate themselves by tenant (schema)."""
    return pg_cluster.url(pg_cluster.create_database())


@pytest.fixture
def pg_url(pg_cluster: Cluster) -> Iterator[str]:
    """A fresh, empty database for one test (dropped afterwards)."""
    name = pg_cluster.create_database()
    yield pg_cluster.url(name)
    pg_cluster.drop_database(name)


def unique_tenant() -> str:
    """A tenant name no other test of the session uses (its own schema)."""
    return f"t{next(_tenants)}"
