#!/usr/bin/env bash
# Run the whole concept loop on the demo store, offline. Builds .venv on first use.
# Extra arguments go to `insika-knowledge demo` (e.g. --data-dir DIR, --model openai/gpt-4o-mini).
# The demo runs in the directory you call this from, so relative paths are yours.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
if [ ! -x "$here/.venv/bin/insika-knowledge" ]; then
  echo "demo.sh: first run: creating the virtual environment $here/.venv" >&2
  python3 -m venv "$here/.venv"
  echo "demo.sh: upgrading pip in .venv" >&2
  "$here/.venv/bin/pip" install --quiet --upgrade pip
  echo "demo.sh: installing insika-knowledge with its studio and bench extras into .venv (from PyPI; this takes a while)" >&2
  (cd "$here" && .venv/bin/pip install --quiet -e '.[studio,bench]')
  echo "demo.sh: installed; running the demo" >&2
fi
exec "$here/.venv/bin/insika-knowledge" demo "$@"
