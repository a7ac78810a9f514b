"""The one reader of model requests and messages, and of our headers.

Modules, one concern each:

- ``messages``: what a message says, whichever format it came in: its text (the one
  definition, text parts joined by a line break), the last user text, its tool calls and
  their arguments, the tools a request offers.

Imports nothing of the library above models and errors: the memories (learning, trust,
extraction, procedures) and the edges (relay, plugin) all read through here.
"""
