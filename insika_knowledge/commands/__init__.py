"""The command line's own commands beyond the group in `insika_knowledge.cli`.

`options` holds the options and checks every concept command shares; `concepts` the
commands that list, write and delete concepts (attached through ``register_commands``);
`progress` the backfill's progress bar and summary tables. Like every command, they only
raise: `insika_knowledge.cli`'s group maps errors to exit codes.
"""
