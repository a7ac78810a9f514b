"""An OpenAI/Anthropic-compatible HTTP relay that gives any agent both memories.

An agent in any language that talks HTTP to OpenAI (``POST /v1/chat/completions``) or
Anthropic (``POST /v1/messages``) points its base URL at the relay and names itself in
``x-insika-agent``. The relay puts the ``<knowledge>`` block and the procedures hook on
the way up, answers ``load_knowledge`` itself, relays the answer (streams byte for byte),
and hands the finished turn to background extraction. Any memory failure fails open.

Modules, one concern each: ``app`` (routes), ``openai_format`` / ``anthropic_format`` /
``formats`` (what the relay writes in each wire format; reading bodies, streams and
headers is `insika_knowledge.wire`'s), ``streaming`` (stream pass-through),
``exchange`` (upstream calls, JSON answers), ``prepare`` (the request stages),
``placement`` (where the block goes), ``toolloop`` (``load_knowledge``), ``learning``
(the hand-off), ``identity`` (the identity headers), ``degraded`` (failing open),
``upstream`` (headers, disconnects), ``agents`` (the agents file), ``runtime`` (the
relay's state), ``server`` / ``main`` / ``cli`` (running it), ``bench`` (its figures).
Needs the ``relay`` extra: ``pip install 'insika-knowledge[relay]'``.
"""
