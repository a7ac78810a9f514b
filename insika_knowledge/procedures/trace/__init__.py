"""Reading agent traces: from request bodies to canonical steps.

``events`` (OpenAI / Anthropic messages as events, read through `insika_knowledge.wire`),
``shell`` (command parsing), ``verify`` (verify commands and their results),
``credentials`` (secrets and their redaction), ``canonical`` (templates with placeholders
for volatile values), ``steps`` (the canonical steps of a trace), ``fixpoint`` (a
rewriting pass run until it changes nothing). Imports nothing else from
`insika_knowledge.procedures`.
"""
