"""Print the `insika_knowledge.index.embedders.axes.AXES` entries of the offline models installed here.

``python -m insika_knowledge.bench.axes``: each model embeds the parallel sentence pairs
(`insika_knowledge.index.embedders.axes.PAIRS`) and its English-Portuguese axis is printed as
the line to keep in ``AXES`` (tooling: the runtime reads the kept entries and never embeds
the pairs).
"""

from __future__ import annotations

import base64

from insika_knowledge.index.embedders.axes import measure
from insika_knowledge.index.embedders.local import VARIANTS, open_local


def main() -> None:
    """Print one ``AXES`` entry per installed variant (or why a variant is missing)."""
    for variant in VARIANTS:
        opened, why = open_local(variant, debias=False)
        if opened is None:
            print(f"# {variant}: {why}")
            continue
        key = opened.model_id.partition("@")[0]
        print(f"    {key!r}: {base64.b64encode(measure(opened).astype('<f4').tobytes()).decode()!r},")


if __name__ == "__main__":
    main()
