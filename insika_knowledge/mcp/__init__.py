"""An MCP server over one agent's concepts (``insika-knowledge mcp``; needs the ``mcp`` extra).

`insika_knowledge.mcp.server.KnowledgeServer` is the server; `insika_knowledge.mcp.cli`
the command. Nothing here is imported by the runtime.
"""
