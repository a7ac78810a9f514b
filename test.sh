#!/usr/bin/env bash
# Run the whole test suite. Builds .venv (with the dev extras) on first use.
# Extra arguments go to pytest (e.g. ./test.sh tests/test_concept.py -x).
set -euo pipefail
cd "$(dirname "$0")"
if [ ! -x .venv/bin/pytest ] || ! .venv/bin/python -c "import hypothesis, networkx, sqlite_utils, starlette, playwright, rank_bm25, bm25s, ruff, mcp" 2>/dev/null; then
  python3 -m venv .venv
  .venv/bin/pip install --quiet --upgrade pip
  .venv/bin/pip install --quiet -e '.[dev]'
fi
set +e
.venv/bin/python -m pytest -p no:cacheprovider "$@"
status=$?
set -e
[ "$status" -eq 5 ] && { echo "no tests were collected"; exit 1; }
exit "$status"
