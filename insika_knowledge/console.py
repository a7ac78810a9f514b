"""The console script's entry point: ``--version`` answers at once, anything else runs
the command line (`insika_knowledge.cli`, which imports every command).
"""

from __future__ import annotations

import sys

from insika_knowledge import __version__


def main() -> None:
    """``insika-knowledge``: the version without importing the commands, else `insika_knowledge.cli.main`."""
    if sys.argv[1:] == ["--version"]:
        print(f"insika-knowledge, version {__version__}")
        return
    try:
        from insika_knowledge.cli import main as run
    except KeyboardInterrupt:  # Ctrl-C while the commands load (about half a second): no traceback
        sys.exit(130)
    run()
