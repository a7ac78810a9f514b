"""A throwaway PostgreSQL cluster on a Unix socket, for the benchmark and the test run.

`initdb` and `pg_ctl` come from PATH or ``/usr/lib/postgresql/*/bin`` (Debian's
``postgresql`` package). The cluster lives in a temporary folder, listens on no TCP
port and runs without fsync (it is thrown away: `Cluster.stop`). As root it runs as the
``postgres`` user, whom PostgreSQL requires.
"""

from __future__ import annotations

import glob
import itertools
import os
import pwd
import shutil
import subprocess
import tempfile
from pathlib import Path

_counter = itertools.count(1)


def find_bindir() -> Path | None:
    """The folder of ``initdb`` and ``pg_ctl``, or None when PostgreSQL is not installed."""
    found = shutil.which("initdb")
    if found:
        return Path(os.path.realpath(found)).parent
    candidates = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"),
                        key=lambda p: int(Path(p).parts[-3]) if Path(p).parts[-3].isdigit() else 0)
    return Path(candidates[-1]).parent if candidates else None


class Cluster:
    """A throwaway cluster: `start`, `url` of a database, `create_database`, `stop`.

    Args:
        bindir: the folder of ``initdb`` and ``pg_ctl`` (`find_bindir`).
        durable: fsync on and full-page writes (a benchmark's setting; commits still do
            not wait for the disk, as SQLite's WAL with ``synchronous=NORMAL``); off for tests.
        parent: the folder to make the cluster's folder in (default: the temp folder).

    Raises:
        KeyError: running as root and there is no ``postgres`` user.
    """

    def __init__(self, bindir: Path, *, durable: bool = False, parent: Path | None = None):
        self.bindir = bindir
        self.durable = durable
        self.root = Path(tempfile.mkdtemp(prefix="insika-pg-", dir=parent))
        self.data = self.root / "data"
        self.socket = self.root
        self.user: str | None = None
        if os.geteuid() == 0:  # PostgreSQL refuses to run as root
            self.user = "postgres"
            entry = pwd.getpwnam(self.user)
            os.chown(self.root, entry.pw_uid, entry.pw_gid)
        os.chmod(self.root, 0o755)

    def _run(self, *args: str) -> None:
        command = [str(a) for a in args]
        if self.user is not None:
            command = ["runuser", "-u", self.user, "--", *command]
        subprocess.run(command, check=True, capture_output=True, cwd=self.root)

    def start(self) -> None:
        """Create the cluster and start its server (returns once it accepts connections).

        Raises:
            subprocess.CalledProcessError: initdb or pg_ctl failed.
        """
        self._run(str(self.bindir / "initdb"), "-D", str(self.data), "-A", "trust", "-U", "postgres",
                  "-E", "UTF8", "--locale=C.UTF-8", "--no-sync", "--no-instructions")
        self.resume()

    def resume(self) -> None:
        """Start the server of a cluster made by `start` (after `halt`): an outage ends.

        Raises:
            subprocess.CalledProcessError: pg_ctl failed.
        """
        safety = "-c fsync=on -c full_page_writes=on" if self.durable else \
            "-c fsync=off -c full_page_writes=off"
        options = (f"-k {self.socket} -c listen_addresses='' {safety} -c synchronous_commit=off "
                   "-c max_connections=300 -c shared_buffers=128MB")
        self._run(str(self.bindir / "pg_ctl"), "-D", str(self.data), "-o", options,
                  "-l", str(self.root / "log"), "-w", "start")

    def halt(self) -> None:
        """Stop the server, keeping the cluster (`resume` starts it again): an outage begins.

        Raises:
            subprocess.CalledProcessError: pg_ctl failed.
        """
        self._run(str(self.bindir / "pg_ctl"), "-D", str(self.data), "-m", "fast", "-w", "stop")

    def stop(self) -> None:
        """Stop the server and delete the cluster."""
        try:
            self._run(str(self.bindir / "pg_ctl"), "-D", str(self.data), "-m", "immediate", "-w", "stop")
        finally:
            shutil.rmtree(self.root, ignore_errors=True)

    def url(self, database: str = "postgres") -> str:
        """The ``postgresql://`` URL of `database` on this cluster (over its Unix socket)."""
        return f"postgresql:///{database}?host={self.socket}&user=postgres"

    def execute(self, statement: str) -> None:
        """Run one SQL statement as the superuser (through ``psql``).

        Raises:
            subprocess.CalledProcessError: the statement failed.
        """
        subprocess.run([str(self.bindir / "psql"), "-h", str(self.socket), "-U", "postgres", "-X", "-q",
                        "-v", "ON_ERROR_STOP=1", "-d", "postgres", "-c", statement],
                       check=True, capture_output=True)

    def create_database(self) -> str:
        """A new empty database; its name."""
        name = f"insika_{next(_counter)}"
        self.execute(f"CREATE DATABASE {name}")
        return name

    def drop_database(self, name: str) -> None:
        """Drop `name`, closing any session still connected to it."""
        self.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


