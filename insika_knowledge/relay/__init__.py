"""An OpenAI/Anthropic-compatible HTTP relay that gives any agent both memories.

An agent in any language that talks HTTP to OpenAI (``POST /v1/chat/completions``) or
Anthropic (``POST /v1/messages``) points its base URL at the relay and names itself in
``x-insika-agent``. The relay puts the ``<knowledge>`` block and the procedures hook on
the way up, answers ``load_knowledge`` itself, relays the answer (streams byte for byte),
and hands the finished turn to background extraction. Any memory failure fails open; the
response says the memory's state (``x-insika-memory``).

Modules, one concern each: ``app`` (routes), ``openai_format`` / ``anthropic_format`` /
``formats`` (what the relay writes in each wire format; reading bodies, streams and
headers is `insika_knowledge.wire`'s), ``streaming`` (stream pass-through),
``exchange`` (upstream calls, JSON answers), ``prepare`` (the request stages),
``placement`` (where the block goes), ``toolloop`` (``load_knowledge``), ``learning``
(the hand-off, durable before the answer's last byte), ``identity`` (the identity
headers), ``access`` (tenants, tokens, unknown names), ``degraded`` (failing open),
``upstream`` (headers, disconnects), ``agents`` (the agents file), ``runtime`` (the
relay's state), ``server`` / ``main`` / ``cli`` (running it, with request limits:
`insika_knowledge.serving`).
Needs the ``relay`` extra: ``pip install 'insika-knowledge[relay]'``.
"""
