"""The code passes the project's ruff rules (pyproject.toml: pyflakes, imports, pydocstyle)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_ruff_finds_nothing() -> None:
    ruff = shutil.which("ruff", path=str(Path(sys.executable).parent)) or shutil.which("ruff")
    if ruff is None:
        pytest.skip("ruff is not installed (it is in the dev extra)")
    result = subprocess.run([ruff, "check", "insika_knowledge", "tests"], cwd=ROOT,
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def _tool(name: str) -> str:
    found = shutil.which(name, path=str(Path(sys.executable).parent)) or shutil.which(name)
    if found is None:
        pytest.skip(f"{name} is not installed (it is in the dev extra)")
    return found


def test_import_linter_contracts_are_kept() -> None:
    """The layer contracts in pyproject.toml ([tool.importlinter]) hold."""
    result = subprocess.run([_tool("lint-imports"), "--no-cache"], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr


def test_no_import_cycle_between_modules_or_first_level_packages() -> None:
    """Counting imports anywhere in a file (function-level ones too), as grimp reads them."""
    grimp = pytest.importorskip("grimp")
    nx = pytest.importorskip("networkx")
    graph = grimp.build_graph("insika_knowledge")
    modules = nx.DiGraph()
    for module in graph.modules:
        for imported in graph.find_modules_directly_imported_by(module):
            modules.add_edge(module, imported)
    assert [c for c in nx.simple_cycles(modules) if len(c) > 1] == []

    def first_level(name: str) -> str:
        return ".".join(name.split(".")[:2])

    packages = nx.DiGraph(
        (first_level(a), first_level(b)) for a, b in modules.edges() if first_level(a) != first_level(b)
    )
    assert list(nx.simple_cycles(packages)) == []


def test_mypy_strict_passes() -> None:
    """``mypy --strict insika_knowledge`` (its settings in pyproject.toml) finds nothing."""
    result = subprocess.run([sys.executable, "-m", "mypy", "--strict", "insika_knowledge"], cwd=ROOT,
                            capture_output=True, text=True)
    if result.returncode != 0 and "No module named mypy" in result.stderr:
        pytest.skip("mypy is not installed (it is in the dev extra)")
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr


def test_the_structure_contracts_are_declared() -> None:
    """The contracts the house stands on are in pyproject.toml (removing one fails here, not silently)."""
    import tomllib

    settings = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    declared = {c["name"] for c in settings["contracts"]}
    assert {
        "Layers point down",
        "Edges reach storage through Memory: none imports the store",
        "No edge goes through another: none imports the engine plugin",
        "Judging and mining never reach into extraction",
    } <= declared


def test_no_symlink_is_tracked() -> None:
    """A committed symlink (a local `.venv` pointing elsewhere) breaks a fresh clone's first command."""
    root = Path(__file__).resolve().parents[1]
    if shutil.which("git") is None or not (root / ".git").exists():
        pytest.skip("not a git checkout")
    listed = subprocess.run(["git", "ls-files", "-s"], cwd=root, capture_output=True, text=True, check=True)
    links = [line.split("\t", 1)[1] for line in listed.stdout.splitlines() if line.startswith("120000")]
    assert links == [], f"symlinks are tracked: {links}"
