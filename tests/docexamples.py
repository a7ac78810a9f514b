"""Running the code examples of the docs as written."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def python_example(page: str, heading: str) -> str:
    """The first ```python block under `heading` of `page` (a path from the repository root)."""
    text = (ROOT / page).read_text(encoding="utf-8")
    section = text.split(f"\n{heading}\n", 1)[1].split("\n## ", 1)[0]
    match = re.search(r"```python\n(.*?)```", section, re.S)
    assert match, f"{page}: the section {heading!r} has a ```python block"
    return match.group(1)


def run_example(code: str, tmp_path: Path) -> str:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "INSIKA_KNOWLEDGE_HOME": str(tmp_path / "home")}
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout
