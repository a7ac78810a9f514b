"""The optional extras: each one installs what its command imports, and a missing one says how to install it."""

from __future__ import annotations

import sys
import tomllib
from pathlib import Path

import pytest
from click.testing import CliRunner

from insika_knowledge.cli import cli

ROOT = Path(__file__).resolve().parents[1]
#: The servers that run on `insika_knowledge.serving` (uvicorn's httptools parser with the limits).
SERVED = {"studio": "insika_knowledge/studio", "relay": "insika_knowledge/relay", "mcp": "insika_knowledge/mcp"}


@pytest.mark.parametrize("extra", sorted(SERVED))
def test_an_extra_whose_server_runs_on_serving_installs_its_parser(extra: str) -> None:
    # a newcomer's finding: the studio extra left httptools out, so `./demo.sh`'s Studio failed to start
    assert any("insika_knowledge.serving" in path.read_text(encoding="utf-8")
               for path in (ROOT / SERVED[extra]).rglob("*.py")), f"{extra} no longer uses serving"
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"]
    wanted = {line.split(">")[0].split("[")[0].strip() for line in extras[extra]}
    assert "httptools" in wanted, (extra, sorted(wanted))  # (uvicorn: listed, or the mcp SDK brings it)


def test_a_missing_extra_says_how_to_install_it_from_the_index_and_in_a_clone(monkeypatch, tmp_path: Path) -> None:
    monkeypatch.setitem(sys.modules, "insika_knowledge.studio.server", None)  # its import fails
    out = CliRunner().invoke(cli, ["studio", "--data-dir", str(tmp_path)])
    assert out.exit_code == 2, out.output
    assert "the Studio needs the studio extra" in out.output
    assert "pip install 'insika-knowledge[studio]' (in a clone of the repository: pip install -e '.[studio]')" \
        in out.output
