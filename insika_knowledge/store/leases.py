"""Who holds a lease (an outbox claim, a merge lease), and whether its process is gone.

A holder id is ``host:pid:rest``. A lease of a process that ran on this host and no
longer exists is void at once, so a crashed process never makes the others wait for
its lease to lapse.
"""

from __future__ import annotations

import os
import secrets
import socket
import threading


def holder_id(*, per_thread: bool = False) -> str:
    """A fresh holder id for this process (``host:pid:token``; with the thread when `per_thread`)."""
    thread = f"{threading.get_ident()}:" if per_thread else ""
    return f"{socket.gethostname()}:{os.getpid()}:{thread}{secrets.token_hex(4)}"


def holder_gone(holder: str) -> bool:
    """True when `holder` ran on this host and its process no longer exists.

    A holder of another host, of this very process, or whose process cannot be
    checked (no permission) counts as alive: its lease lapses by time only.
    """
    host, _, rest = holder.partition(":")
    pid_text = rest.partition(":")[0]
    if host != socket.gethostname() or not pid_text.isdigit():
        return False
    pid = int(pid_text)
    if pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except OSError:  # it exists but is not ours (EPERM): alive
        return False
    return False
