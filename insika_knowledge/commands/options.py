"""Options and checks the concept commands share.

`require_tenant` and `require_agent` turn an empty read into an error that says what
exists instead: a tenant without a database is a `NotFound` (exit 2), an agent without
concepts a `NoConcepts` (exit 1) naming the agents that have some, and the other tenants
where the asked agent has concepts. `agent_memory` opens the memory, runs both checks and
closes it again: what every command that reads one agent's concepts does.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Final, TypeVar

import click

from insika_knowledge.errors import NoConcepts, NotFound
from insika_knowledge.ids import DEFAULT_TENANT, check_agent
from insika_knowledge.location import DATABASE_HELP

if TYPE_CHECKING:  # imported when a command runs, so `--help` stays as fast as the models
    from insika_knowledge.memory import Memory

#: Agents named at most in an error message; the rest are counted.
NAMED_AT_MOST: Final = 10
#: Other tenants opened, at most, to say where an agent with no concepts is (a data
#: directory with more tenants than this is not searched: each is a database to open).
TENANTS_SEARCHED: Final = 20

data_dir_option = click.option(
    "--data-dir", type=click.Path(file_okay=False), default=None,
    help="Data directory (default: $INSIKA_KNOWLEDGE_HOME, else the user data folder).",
)
database_option = click.option("--database", default=None, metavar="URL", help=DATABASE_HELP)
tenant_option = click.option("--tenant", default=DEFAULT_TENANT, show_default=True, help="Tenant name.")
agent_option = click.option("--agent", required=True, help="Agent id.")
json_option = click.option("--json", "as_json", is_flag=True, help="Print JSON.")

_Command = TypeVar("_Command", bound=Callable[..., Any])


def agent_options(command: _Command) -> _Command:
    """Add ``--agent``, ``--data-dir``, ``--database`` and ``--tenant`` (in that order): the
    options naming one agent's concepts, as `agent_memory` takes them.
    """
    for option in (tenant_option, database_option, data_dir_option, agent_option):
        command = option(command)
    return command


def open_memory(data_dir: str | None, base_url: str | None = None, *, database: str | None = None) -> Memory:
    """The `Memory` over `database` (a ``postgresql://`` URL, else ``$INSIKA_DATABASE_URL``) or
    the SQLite files of `data_dir` (None = ``$INSIKA_KNOWLEDGE_HOME``, else the user data folder).

    Raises:
        UserError: `base_url` is no ``http://`` or ``https://`` URL (named as ``--base-url``).
    """
    from insika_knowledge.extract.model import check_base_url
    from insika_knowledge.memory import Memory

    if base_url is not None:
        check_base_url(base_url, "--base-url")  # the option the user typed, not Memory's argument
    return Memory(data_dir, database=database, base_url=base_url)


def require_tenant(memory: Memory, tenant: str) -> None:
    """Check that `tenant` has a database in the memory's data directory (creating nothing).

    Raises:
        InvalidName: the tenant name is invalid.
        NotFound: it has no database; the message names the tenants that have one.
    """
    if memory.has_tenant(tenant):
        return
    others = memory.tenants()
    there = f"tenants there: {', '.join(others)}" if others else "no tenant has one yet"
    raise NotFound(f"tenant {tenant!r} has no database in {memory.location} ({there})")


def require_agent(memory: Memory, agent: str, tenant: str) -> None:
    """Check that `agent` has concepts in `tenant` (after `require_tenant`).

    Raises:
        InvalidName: the agent or tenant name is invalid.
        NoConcepts: the agent has none; the message names the tenant's agents that have
            some, and the other tenants where `agent` has concepts (when the data
            directory holds at most `TENANTS_SEARCHED` other tenants).
    """
    check_agent(agent)
    agents = memory.agents(tenant=tenant)
    if agent in agents:
        return
    if agents:
        shown = [f"{name} ({count})" for name, count in sorted(agents.items())[:NAMED_AT_MOST]]
        more = len(agents) - len(shown)
        there = "agents with concepts there: " + ", ".join(shown) + (f" and {more} more" if more else "")
    else:
        there = "no agent has concepts there"
    others = [t for t in memory.tenants() if t != tenant]
    if len(others) > TENANTS_SEARCHED:
        others = []
    elsewhere = [t for t in others if agent in memory.agents(tenant=t)]
    hint = ""
    if len(elsewhere) == 1:
        hint = f"; it has concepts in tenant {elsewhere[0]!r}: pass --tenant {elsewhere[0]}"
    elif elsewhere:
        hint = f"; it has concepts in tenants {', '.join(elsewhere)}: pass --tenant with one of them"
    raise NoConcepts(
        f"agent {agent!r} has no concepts in tenant {tenant!r} ({there}){hint}",
        agent=agent, tenant=tenant, agents=sorted(agents),
    )


@contextmanager
def agent_memory(data_dir: str | None, agent: str, tenant: str, *, database: str | None = None) -> Iterator[Memory]:
    """The `Memory` (`open_memory`), checked to hold concepts of `agent` in `tenant`; closed on exit.

    Raises:
        InvalidName: the agent or tenant name is invalid.
        NotFound: the tenant has no database (`require_tenant`).
        NoConcepts: the agent has no concepts there (`require_agent`).
    """
    memory = open_memory(data_dir, database=database)
    try:
        require_tenant(memory, tenant)
        require_agent(memory, agent, tenant)
        yield memory
    finally:
        memory.close()


def where_args(data_dir: str | None, tenant: str) -> str:
    """The ``--data-dir`` and ``--tenant`` a suggested command needs to reach the same store
    as the command that suggests it ("" for the defaults; a database URL is left out: it may
    hold a password).
    """
    import shlex

    from insika_knowledge.ids import DEFAULT_TENANT

    return (f" --data-dir {shlex.quote(data_dir)}" if data_dir else "") + \
        (f" --tenant {shlex.quote(tenant)}" if tenant != DEFAULT_TENANT else "")
