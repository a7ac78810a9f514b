#!/usr/bin/env bash
# Run the whole concept loop on the demo store, offline. Builds .venv on first use.
# Extra arguments go to `insika-knowledge demo` (e.g. --data-dir DIR, --model openai/gpt-4o-mini).
set -euo pipefail
cd "$(dirname "$0")"
if [ ! -x .venv/bin/insika-knowledge ]; then
  python3 -m venv .venv
  .venv/bin/pip install --quiet --upgrade pip
  .venv/bin/pip install --quiet -e '.[studio,bench]'
fi
exec .venv/bin/insika-knowledge demo "$@"
