"""Write the plugin folder the released Hermes Agent discovers: ``$HERMES_HOME/plugins/insika/``.

Hermes 0.19.0 loads a user memory provider from a folder under ``$HERMES_HOME/plugins/``
whose ``__init__.py`` mentions ``register_memory_provider``; it imports that file and calls
its ``register(ctx)``. The folder written here holds only that shim and a ``plugin.yaml``:
the code stays in the installed `insika_knowledge` package, which must be importable by
the Python that runs Hermes (``pip install insika-knowledge`` in Hermes' environment).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Final

from insika_knowledge import __version__
from insika_knowledge.errors import UserError
from insika_knowledge.hermes.settings import PROVIDER

SHIM: Final = '''"""insika-knowledge memory provider for Hermes Agent.

Written by `insika-knowledge hermes install` (insika-knowledge {version}); rerun it to update.
Hermes calls register(ctx), which calls ctx.register_memory_provider(...) with the provider
from the installed insika_knowledge package. Activate it with `memory.provider: insika`.
"""

try:
    from insika_knowledge.hermes import register
except ImportError as _missing:  # insika-knowledge is not installed in Hermes' environment
    import logging as _logging

    _problem = str(_missing)

    def register(ctx):  # noqa: D103
        _logging.getLogger(__name__).warning(
            "insika memory provider: %s; run `pip install insika-knowledge` with the Python "
            "that runs Hermes", _problem)
'''

MANIFEST: Final = '''name: {name}
version: "{version}"
description: >-
  insika-knowledge: concepts learned from the agent's own conversations,
  recalled as a <knowledge> block, with the load_knowledge tool
hooks:
  - on_session_end
'''


def install_plugin(hermes_home: str | os.PathLike[str] | None = None) -> Path:
    """Write (or overwrite) ``<hermes_home>/plugins/insika/`` and return that folder.

    Args:
        hermes_home: Hermes' home folder; None = ``$HERMES_HOME``, else ``~/.hermes``.

    Raises:
        UserError: the folder cannot be written (the message names it).
    """
    from insika_knowledge.hermes.settings import default_hermes_home

    home = Path(hermes_home).expanduser() if hermes_home else default_hermes_home()
    folder = home / "plugins" / PROVIDER
    try:
        folder.mkdir(parents=True, exist_ok=True)
        _write(folder / "__init__.py", SHIM.format(version=__version__))
        _write(folder / "plugin.yaml", MANIFEST.format(name=PROVIDER, version=__version__))
    except OSError as exc:
        raise UserError(f"cannot write the Hermes plugin into {folder}: {exc.strerror or exc}") from None
    return folder


def _write(path: Path, text: str) -> None:
    """Write `text` to `path` atomically (a temporary file, then a rename)."""
    temporary = path.with_name(f".{path.name}.tmp")
    temporary.write_text(text, encoding="utf-8")
    os.replace(temporary, path)
