"""Mining procedures from judged traces.

``prune`` (exploration collapse, hoisting, superseded steps), ``mine`` (verdicts and
grouping), ``scoring`` (how a judged run changes a stored procedure's counts, triggers and
confidence). Imports `insika_knowledge.procedures.trace` and the model, nothing above.
"""
