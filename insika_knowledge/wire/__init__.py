"""The one reader of model requests and messages, and of our headers.

Modules, one concern each:

- ``messages``: what a message says, whichever format it came in: its text (the one
  definition, text parts joined by a line break), the last user text, its tool calls and
  their arguments, the tools a request offers;
- ``openai`` / ``anthropic``: reading each format's responses (JSON and streamed) into an
  `insika_knowledge.wire.answer.Answer`, and a request's conversation as the normalised
  session schema;
- ``answer``: the `Answer`, the `StreamReader` protocol and what an event shows;
- ``sse``: server-sent events, split without re-serialising them;
- ``headers``: the ``x-ace-*`` and ``x-insika-*`` header names and how their values read
  (session id, task outcome, skill overrides, memory off);
- ``placement``: cache-safe placement of a block, its shape given by the caller.

Imports nothing of the library above models and errors: the memories (learning, trust,
extraction, procedures) and the edges (relay, plugin) all read through here.
"""
