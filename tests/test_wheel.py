"""The built wheel, installed in a fresh venv, runs `bench --quality` from outside the checkout.

The wheel is built offline (no index, no build isolation: the dev extra's hatchling) and
installed with ``--no-deps`` into a venv that borrows this interpreter's site-packages for the
dependencies only: through a ``.pth`` file written after the install (so pip sees no other
copy of the package), which puts them after the venv's own site-packages on the path.
Everything then runs from a temporary folder: the package, its labelled set and its entry
points come from the wheel alone.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.wheel


def _run(args: list[str | Path], cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(a) for a in args], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=300, check=False)


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    """A venv with the wheel installed: (its bin folder, the environment to run it in)."""
    pytest.importorskip("hatchling", reason="building the wheel needs the dev extra: pip install -e '.[dev]'")
    tmp = tmp_path_factory.mktemp("wheel")
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "--no-input"]
    offline = ["--no-deps", "--no-build-isolation", "--no-index"]  # nothing from an index
    built = _run([*pip, "wheel", "--quiet", *offline, "-w", tmp / "dist", ROOT], tmp)
    assert built.returncode == 0, built.stderr
    (wheel,) = (tmp / "dist").glob("insika_knowledge-*.whl")
    venv = tmp / "venv"
    made = _run([sys.executable, "-m", "venv", "--without-pip", venv], tmp)
    assert made.returncode == 0, made.stderr
    python = venv / "bin" / "python"
    done = _run([*pip, "--python", python, "install", "--quiet", "--no-deps", "--no-index", wheel], tmp)
    assert done.returncode == 0, done.stderr
    target = Path(_run([python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"], tmp).stdout.strip())
    borrowed = [p for p in sys.path  # this interpreter's site folders, also those a .pth file added
                if Path(p).is_dir() and {"site-packages", "dist-packages"} & set(Path(p).parts)]
    (target / "zz_dependencies.pth").write_text("\n".join(borrowed) + "\n", encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}
    env["INSIKA_KNOWLEDGE_HOME"] = str(tmp / "home")
    return venv / "bin", env


def test_the_installed_package_runs_from_the_wheel_with_its_labelled_set_and_migrations(
    installed: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    from insika_knowledge.store.migrations import steps

    bin_dir, env = installed
    code = ("import insika_knowledge.bench.datasets as d; from insika_knowledge.store import migrations as m; "
            "print(d.__file__); print(d.benchmark_data('retrieval')); print(m.sql_dir()); print(*m.steps(), sep=',')")
    where = _run([bin_dir / "python", "-c", code], tmp_path, env)
    assert where.returncode == 0, where.stderr
    module, data, sql, shipped = where.stdout.split()
    venv = bin_dir.parent
    assert Path(module).is_relative_to(venv) and Path(data).is_relative_to(venv) and Path(sql).is_relative_to(venv)
    assert not Path(module).is_relative_to(ROOT)
    assert shipped.split(",") == steps()  # both backends' series (sql/sqlite, sql/postgres) are in the wheel


def test_bench_quality_runs_from_the_installed_wheel(installed: tuple[Path, dict[str, str]], tmp_path: Path) -> None:
    bin_dir, env = installed
    done = _run([bin_dir / "insika-knowledge", "bench", "--quality", "--quick"], tmp_path, env)
    assert done.returncode == 0, done.stderr + done.stdout
    lines = (ROOT / "benchmarks" / "retrieval" / "concepts.jsonl").read_text(encoding="utf-8").splitlines()
    assert f"Retrieval quality: {sum(1 for line in lines if line.strip())} concepts" in done.stdout
    assert "scan" in done.stdout and "fts5" in done.stdout


def test_the_installed_command_line_has_the_tooling_through_its_entry_point(
    installed: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    bin_dir, env = installed
    top = _run([bin_dir / "insika-knowledge", "--help"], tmp_path, env)
    assert top.returncode == 0, top.stderr
    for name in ("bench", "procedures", "search", "studio"):
        assert name in top.stdout
    evaluate = _run([bin_dir / "insika-knowledge", "procedures", "evaluate", "--help"], tmp_path, env)
    assert evaluate.returncode == 0 and "--sessions" in evaluate.stdout
    usage = _run([bin_dir / "insika-knowledge", "bench", "--quality", "--set", tmp_path / "none"], tmp_path, env)
    assert usage.returncode == 2 and "Traceback" not in usage.stderr
