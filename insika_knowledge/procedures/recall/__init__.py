"""Recalling procedures into a live run.

``recall`` (the trigger index), ``tokens`` (token counters), ``render`` (the block),
``inject`` (cache-safe injection), ``cursor`` (adherence of the live steps). Imports
`insika_knowledge.procedures.trace` and the model, nothing above.
"""
