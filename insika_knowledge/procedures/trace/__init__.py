"""Reading agent traces: from request bodies to canonical steps.

``wire`` (OpenAI / Anthropic bodies as events), ``shell`` (command parsing), ``verify``
(verify commands and their results), ``credentials`` (secrets and their redaction),
``canonical`` (templates with placeholders for volatile values), ``steps`` (the canonical
steps of a trace), ``fixpoint`` (a rewriting pass run until it changes nothing). Imports
nothing else from `insika_knowledge.procedures`.
"""
