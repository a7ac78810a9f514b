"""Nothing raw outlives its purpose: once a turn is learned, no byte of its messages is left in
the tenant's database file or its write-ahead log; what extraction never needs (cards, CPF,
CNPJ, IBAN, credentials) is masked before the turn is even queued.
"""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any

from insika_knowledge.hookspecs import AgentSpec, Turn
from insika_knowledge.memory import Memory
from insika_knowledge.plugin import KnowledgePlugin

TENANT = "loja"
AGENT = "store-support"
EMAIL = "joana.prado@exemplo.com.br"
CPF = "123.456.789-09"
CARD = "4111 1111 1111 1111"
MARKER = "quartzo-zebra-7731"  # no detector touches it: only the deletion can remove it


class Held:
    """A model that proposes nothing once `go` is set."""

    def __init__(self) -> None:
        self.go = threading.Event()

    def propose(self, request: Any) -> list[Any]:
        self.go.wait(30)
        return []

    def merge(self, request: Any) -> Any:
        raise NotImplementedError


def _bytes_on_disk(path: Path) -> bytes:
    wal = path.with_name(path.name + "-wal")
    return path.read_bytes() + (wal.read_bytes() if wal.exists() else b"")


def test_a_learned_turn_leaves_no_raw_byte_in_the_file_or_its_log(tmp_path: Path) -> None:
    model = Held()
    memory = Memory(tmp_path / "data")
    memory._models["held"] = model
    plugin = KnowledgePlugin(memory)
    assert plugin.prepare([TENANT]) == []
    store = memory.store(TENANT)
    text = (f"Sou Joana, e-mail {EMAIL}, CPF {CPF}, cartão {CARD}; meu código é {MARKER} e a senha: "
            "hunter2x. Qual o prazo?")
    for i in range(30):  # enough rows that the outbox spans several pages
        plugin.after_turn(Turn(AgentSpec(AGENT, TENANT, {"model": "held"}), f"s{i}", "t1",
                               [{"role": "user", "content": f"{i} {text} " + "x" * 500},
                                {"role": "assistant", "content": "Em 2 dias."}]))
    queued = [json.loads(row[0]) for row in store.rows("SELECT messages FROM outbox")]
    assert len(queued) == 30
    first = queued[0][0]["content"]
    assert "[cpf]" in first and "[card]" in first and CARD not in first  # masked before queueing
    assert EMAIL in first and MARKER in first  # kept until learned: extraction reads them
    assert MARKER.encode() in _bytes_on_disk(store.path)
    model.go.set()
    assert plugin.queue.wait_empty(timeout_s=60)
    raw = [EMAIL, CPF, CARD, MARKER, "hunter2x"]
    deadline = time.monotonic() + 20  # the worker scrubs the log once its outbox is idle
    while any(r.encode() in _bytes_on_disk(store.path) for r in raw) and time.monotonic() < deadline:
        time.sleep(0.05)
    left = [r for r in raw if r.encode() in _bytes_on_disk(store.path)]
    assert left == []
    plugin.close(timeout_s=5)
