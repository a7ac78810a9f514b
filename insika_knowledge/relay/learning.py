"""The learning hand-off: a finished answer goes to background extraction.

The tenant's `insika_knowledge.tenant.Tenant.submit`, as the plugin's ``after_turn`` does
(the durable outbox, then the memory's worker; a failure fails the ``learn`` stage), with
the turn the relay saw: the client's request messages (without the blocks the relay added) and the
final assistant message, in the normalised schema, under the request's session.

Only a final answer is a finished turn: an answer that calls the client's tools is a step
of the agent's loop (its next request carries the results), so nothing is handed off
then. A request without a session id, for an agent with ``extract`` off, or to a relay
that does not learn (``--no-learn``), hands off nothing. The turn id is a hash of the
request's messages, so a retried request is counted once.

The hand-off is made before the answer's last byte goes to the client
(`insika_knowledge.relay.exchange.Exchange.seal`): a turn whose answer the client has
whole is in the outbox, or waiting in memory for the write lock (``deferred``).
"""

from __future__ import annotations

import hashlib
import json
from typing import Final

from insika_knowledge.concept import utc_now
from insika_knowledge.errors import StorageBusy, StorageUnavailable
from insika_knowledge.relay.degraded import LEARN, reason_of
from insika_knowledge.relay.formats import WireFormat
from insika_knowledge.relay.prepare import Prepared
from insika_knowledge.relay.runtime import Relay
from insika_knowledge.sessions import AgentSpec, Turn
from insika_knowledge.wire.answer import Answer


def turn_id(messages: object) -> str:
    """``relay-<16 letters a-p>``: a hash of the request's messages (stable across retries; a
    lone surrogate, valid in JSON text, such as half of an emoji a client cut, is hashed as
    is), its hex digits written as letters: a run of digits in an id reads as personal data
    (a phone number, a CPF) and is stored as its pseudonym (`privacy.pseudonyms`).
    """
    data = json.dumps(messages, sort_keys=True, ensure_ascii=False, default=str).encode("utf-8", "surrogatepass")
    return "relay-" + hashlib.sha256(data).hexdigest()[:16].translate(_AS_LETTERS)


#: Hex digits as letters (`turn_id`).
_AS_LETTERS: Final = str.maketrans("0123456789abcdef", "abcdefghijklmnop")


#: `hand_off`'s answer when the hand-off failed (the ``learn`` stage is degraded).
FAILED: Final = "failed"
#: `hand_off`'s answer when, not waiting, it met the write lock held: nothing was written.
BUSY: Final = "busy"


def learns(prepared: Prepared, answer: Answer) -> bool:
    """True when `answer` finishes a turn to learn: a relay that learns, an agent with
    ``extract`` on, a session, a JSON body, and an answer that calls no tools.
    """
    agent, identity = prepared.agent, prepared.identity
    if agent is None or prepared.client_body is None or identity.agent is None or identity.session_id is None:
        return False
    return prepared.learns and not answer.calls


def hand_off(relay: Relay, prepared: Prepared, wire: WireFormat, answer: Answer, *,
             without_waiting: bool = False) -> str | None:
    """Write the finished turn to the tenant's outbox (`Tenant.submit`). Never raises.

    Args:
        relay: the relay's state.
        prepared: the prepared request.
        wire: the request's wire format.
        answer: the final answer.
        without_waiting: never wait for the write lock (for the event loop): when it is
            held, write nothing and return `BUSY` (the caller tries again in a thread).

    Returns:
        `Memory.submit`'s answer (``queued``: durable; ``deferred``: the write lock was
        busy, the store still opening or the database down: the turn waits in the spill
        journal (it survives a kill) and is written as soon as it can be; ``dropped``:
        the outbox is full, counted in ``knowledge_dropped``; ``off``), `FAILED` when the
        write failed (the ``learn`` stage is degraded and logged), None when `answer` is
        not a turn to learn, `BUSY` when `without_waiting` met a held lock. Also kept in
        `Prepared.learning` (but `BUSY`).
    """
    agent, identity, body = prepared.agent, prepared.identity, prepared.client_body
    if not learns(prepared, answer):
        return None
    assert agent is not None and identity.agent is not None and identity.session_id is not None
    assert body is not None
    try:
        turn = Turn(
            AgentSpec(identity.agent, identity.tenant, agent.block),
            identity.session_id,
            turn_id(body.get("messages")),
            wire.transcript(body, answer),
            utc_now(),
        )
        if without_waiting:  # only an open store, only a free lock: else BUSY, and a thread tries
            done: str = relay.memory.submit(turn, lock_budget_ms=0, open_budget_ms=0, defer=False)
        else:  # a store still opening, or a database down: deferred (the spill journal)
            done = relay.memory.submit(turn)
    except (StorageBusy, StorageUnavailable):
        if without_waiting:
            return BUSY
        prepared.degraded.add(LEARN, "the outbox's write lock stayed busy")  # submit defers instead
        done = FAILED
    except Exception as exc:
        prepared.degraded.add(LEARN, reason_of(exc))
        done = FAILED
    prepared.learning = done
    return done
