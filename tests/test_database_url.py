"""A database setting that is not a PostgreSQL URL is a mistake, never a silent fallback.

``--database``, ``$INSIKA_DATABASE_URL`` and ``Memory(database=...)`` that name something
else (``mysql://``, a typo of the scheme, ``sqlite:///``, a path) used to be ignored: the
writes went to the local SQLite files. Now it is a usage error naming the value (its
password hidden) and what is accepted; an explicitly empty value still means the files.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from insika_knowledge.cli import cli
from insika_knowledge.errors import UserError
from insika_knowledge.location import database_url
from insika_knowledge.memory import Memory

WRONG = ["mysql://x", "postgresq://x", "sqlite:///tmp/kb.db", "/var/lib/kb", "postgresql:/x"]


@pytest.mark.parametrize("value", WRONG)
def test_location_refuses_what_is_not_a_postgresql_url(value: str, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(UserError, match="not a PostgreSQL URL") as raised:
        database_url(value)
    assert repr(value) in str(raised.value) and "postgresql://" in str(raised.value)
    monkeypatch.setenv("INSIKA_DATABASE_URL", value)
    with pytest.raises(UserError, match=r"\$INSIKA_DATABASE_URL"):
        database_url(None)


def test_the_password_is_never_in_the_message() -> None:
    for value in ("mysql://kb:s3cret@db/x", "postgresq://kb:s3cret@db/x", "mysql://db/x?password=s3cret"):
        with pytest.raises(UserError) as raised:
            database_url(value)
        assert "s3cret" not in str(raised.value) and "***" in str(raised.value)


def test_empty_means_the_sqlite_files(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("INSIKA_DATABASE_URL", "mysql://x")
    assert database_url("") is None  # explicit, even empty, wins: edges pass "" on purpose
    assert database_url("  ") is None
    monkeypatch.setenv("INSIKA_DATABASE_URL", "")
    assert database_url(None) is None
    assert database_url("postgres://u@h/db") == "postgres://u@h/db"


@pytest.mark.parametrize("value", WRONG)
def test_memory_refuses_it_and_writes_nothing(value: str, tmp_path: Path) -> None:
    with pytest.raises(UserError, match="not a PostgreSQL URL"):
        Memory(tmp_path / "data", database=value)
    assert not (tmp_path / "data").exists()


def test_memory_refuses_a_wrong_environment_value(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("INSIKA_DATABASE_URL", "mysql://kb:pw@db/x")
    with pytest.raises(UserError, match=r"\$INSIKA_DATABASE_URL"):
        Memory(tmp_path / "data")
    memory = Memory(tmp_path / "data", database="")  # explicit empty: the files
    memory.close()


@pytest.mark.parametrize("args", [
    ["list", "--agent", "a"],
    ["put", "--agent", "a", "-"],
    ["search", "--agent", "a", "frete"],
])
def test_the_command_line_exits_2_naming_it(args: list[str], tmp_path: Path) -> None:
    page = "---\nname: x\ndescription: A thing.\n---\n\nA thing.\n"
    result = CliRunner().invoke(cli, [*args, "--data-dir", str(tmp_path / "d"), "--database", "mysql://u:pw@h/x"],
                                input=page)
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    assert "'mysql://u:***@h/x' is not a PostgreSQL URL" in result.output
    assert "pw@" not in result.output
    assert not (tmp_path / "d").exists()


def test_the_command_line_reads_the_environment_too(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("INSIKA_DATABASE_URL", "postgresq://typo")
    result = CliRunner().invoke(cli, ["agents", "--data-dir", str(tmp_path / "d")])
    assert result.exit_code == 2, result.output
    assert "$INSIKA_DATABASE_URL" in result.output and "'postgresq://typo'" in result.output
