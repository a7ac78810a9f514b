"""Tooling: benchmarks, retrieval quality and the held-out evaluation of procedures.

The runtime never imports this package; the command line gets ``bench`` and
``procedures evaluate`` from it through the ``register_commands`` hook (entry point
``bench`` in the ``insika.commands`` group, see `insika_knowledge.bench.plugin`).
Modules, one concern each:

``timing`` (percentiles, a timer per call), ``synthetic`` (the seeded concept corpus and
queries), ``speed`` (the default ``bench`` figures), ``scale`` (``bench --scale``: Scan vs
FTS5), ``quality`` (``bench --quality`` on the labelled set), ``studio`` (the Studio's page
latency), ``procedures`` (procedural-memory speed), ``evaluate`` (``procedures evaluate``),
``traces`` (stored sessions into the miner), ``datasets`` (where the labelled sets and the
shared data are), ``cli`` and ``plugin``.
"""
