"""The virtualenv of the real Hermes Agent that tests/test_hermes.py drives: ``.venv-hermes/``.

It holds the pinned ``hermes-agent`` and this package's runtime dependencies (the package
itself comes from the checkout, through ``PYTHONPATH``). ``./test.sh`` builds it with the
rest of the install, from PyPI, so the test run itself never reaches the network; it is
rebuilt when its key changes (the pin, the Python version or pyproject's dependencies).

    python tests/hermes_venv.py check    # exit 0 when .venv-hermes is built for the current key
    python tests/hermes_venv.py what     # what a build installs, one line
    python tests/hermes_venv.py build    # (re)build it with this interpreter's Python

Only the standard library: test.sh runs it before anything else is installed.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

HERMES = "hermes-agent==0.19.0"
ROOT = Path(__file__).resolve().parents[1]
VENV = ROOT / ".venv-hermes"
#: Written last by `build`, holding the key: a half-built venv is never taken for a built one.
READY = VENV / ".ready"
PYTHON = VENV / "bin" / "python"


def dependencies() -> list[str]:
    """This package's runtime dependencies, as pyproject.toml declares them."""
    return list(tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["dependencies"])


def key() -> str:
    """What the venv is built from: the Hermes pin, this Python's version and the dependencies."""
    text = json.dumps([HERMES, list(sys.version_info[:2]), sorted(dependencies())])
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def ready() -> bool:
    """True when `VENV` is fully built for the current `key`."""
    try:
        return READY.read_text(encoding="utf-8").strip() == key() and PYTHON.exists()
    except OSError:
        return False


def what() -> str:
    """What `build` installs, for test.sh's message."""
    return f"{HERMES} and insika-knowledge's {len(dependencies())} runtime dependencies"


def build() -> None:
    """(Re)build `VENV` with this interpreter's Python; raises CalledProcessError on failure."""
    shutil.rmtree(VENV, ignore_errors=True)
    subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
    subprocess.run([str(PYTHON), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                    HERMES, *dependencies()], check=True)
    READY.write_text(key() + "\n", encoding="utf-8")


def main(argv: list[str]) -> int:
    command = argv[0] if argv else ""
    if command == "check":
        return 0 if ready() else 1
    if command == "what":
        print(what())
        return 0
    if command == "build":
        try:
            build()
        except (subprocess.CalledProcessError, OSError) as exc:
            shutil.rmtree(VENV, ignore_errors=True)
            print(f"hermes_venv.py: could not build {VENV.name}: {exc}", file=sys.stderr)
            return 1
        return 0
    print("usage: python tests/hermes_venv.py check|what|build", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
