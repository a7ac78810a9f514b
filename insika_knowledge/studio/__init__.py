"""The Studio: a small web page where an operator reads, edits, resolves and restores concepts.

Starlette + Jinja2 under uvicorn (the ``studio`` extra). `app.create_app` builds the
application over a `Memory`; `server.serve` is what ``insika-knowledge studio`` runs.
Nothing in this package is imported by the rest of the library.
"""
