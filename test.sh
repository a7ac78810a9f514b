#!/usr/bin/env bash
# Run the whole test suite. Builds .venv (with the dev extras) on first use, and .venv-hermes
# (the real Hermes Agent that tests/test_hermes.py drives; see tests/hermes_venv.py).
# Extra arguments go to pytest (e.g. ./test.sh tests/test_concept.py -x). The tests run on every
# core (pytest-xdist, -n auto); INSIKA_TEST_WORKERS=0 runs them in this process (e.g. for pdb).
set -euo pipefail
cd "$(dirname "$0")"
if [ ! -x .venv/bin/pytest ] || ! .venv/bin/python -c "import hypothesis, xdist, networkx, sqlite_utils, starlette, playwright, rank_bm25, bm25s, ruff, mcp, hatchling, mypy, importlinter, psycopg, psycopg_pool" 2>/dev/null; then
  echo "test.sh: setting up .venv (first run, or a dev dependency is missing)" >&2
  python3 -m venv .venv
  echo "test.sh: upgrading pip in .venv" >&2
  .venv/bin/pip install --quiet --upgrade pip
  echo "test.sh: installing insika-knowledge with its dev extras into .venv (from PyPI; this takes a while)" >&2
  .venv/bin/pip install --quiet -e '.[dev]'
fi
# Entry points are read from the installed metadata: reinstall when pyproject declares new ones.
if ! .venv/bin/python - 2>/dev/null <<'PY'; then
import importlib.metadata as m, sys, tomllib
declared = tomllib.load(open("pyproject.toml", "rb"))["project"]["entry-points"]
installed = {(e.group, e.name, e.value) for e in m.distribution("insika-knowledge").entry_points}
sys.exit(any((g, n, v) not in installed for g, eps in declared.items() for n, v in eps.items()))
PY
  echo "test.sh: pyproject.toml declares new entry points: reinstalling insika-knowledge into .venv" >&2
  .venv/bin/pip install --quiet --no-deps -e .
fi
# The real Hermes Agent (tests/test_hermes.py) runs in a virtualenv of its own, built here so the
# test run never reaches the network; rebuilt when its key (the pin, Python, our dependencies) changes.
if ! .venv/bin/python tests/hermes_venv.py check; then
  echo "test.sh: installing $(.venv/bin/python tests/hermes_venv.py what) into .venv-hermes (from PyPI, for tests/test_hermes.py)" >&2
  .venv/bin/python tests/hermes_venv.py build \
    || echo "test.sh: .venv-hermes was not built: the real-Hermes test is skipped (it fails under CI)" >&2
fi
set +e
.venv/bin/python -m pytest -p no:cacheprovider -n "${INSIKA_TEST_WORKERS:-auto}" "$@"
status=$?
set -e
[ "$status" -eq 5 ] && { echo "no tests were collected"; exit 1; }
exit "$status"
