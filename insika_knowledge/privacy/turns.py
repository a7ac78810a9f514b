"""What a finished turn keeps while it waits to be learned: nothing extraction does not need.

`for_queue` runs on every turn before it is written to the learning queue's outbox (and
its spill journal): credentials in any message (`insika_knowledge.privacy.credentials.scrub`:
API keys, tokens, passwords, connection strings) and the personal data found by their
check digits alone (`insika_knowledge.privacy.redact.UNNEEDED_KINDS`: payment cards, CPF,
CNPJ, IBAN) are replaced by their placeholders, in message text, content parts and tool
call arguments. No learned concept ever holds them (extraction redacts them from what it
stores anyway), so extraction loses nothing.

E-mails, phone numbers, addresses and names stay as written until the turn is learned:
telling a business's published contacts (which a concept may keep) from a customer's
needs the whole conversation and costs about 4 ms per KiB, too much for an engine hook.
The outbox row holding them is deleted once the turn is learned, its bytes zeroed in the
database file and the write-ahead log cut (`insika_knowledge.queue`).

Lone surrogates (text that is not valid Unicode, e.g. half of an emoji cut by a client)
become U+FFFD, so the turn can be stored and learned.
"""

from __future__ import annotations

import re
from typing import Any, Final

from insika_knowledge.privacy.credentials import scrub
from insika_knowledge.privacy.redact import redact_kinds

_SURROGATE_RE: Final = re.compile("[\ud800-\udfff]")


def for_queue(messages: list[Any]) -> list[Any]:
    """`messages` with credentials, cards, CPF, CNPJ and IBAN masked and lone surrogates
    replaced (new dicts where something changed; the others as given).
    """
    return [_message(m) for m in messages]


def clean_text(text: str) -> str:
    """One text as `for_queue` keeps it."""
    if _SURROGATE_RE.search(text):
        text = _SURROGATE_RE.sub("\ufffd", text)
    return redact_kinds(scrub(text))


def _message(message: Any) -> Any:
    if not isinstance(message, dict):
        return message
    out = dict(message)
    content = out.get("content")
    if isinstance(content, str):
        out["content"] = clean_text(content)
    elif isinstance(content, list):
        out["content"] = [_part(p) for p in content]
    calls = out.get("tool_calls")
    if isinstance(calls, list):
        out["tool_calls"] = [_call(c) for c in calls]
    return out


def _part(part: Any) -> Any:
    if isinstance(part, dict) and isinstance(part.get("text"), str):
        return {**part, "text": clean_text(part["text"])}
    if isinstance(part, dict) and isinstance(part.get("content"), str):  # a tool result part
        return {**part, "content": clean_text(part["content"])}
    return part


def _call(call: Any) -> Any:
    if not isinstance(call, dict):
        return call
    function = call.get("function")
    if isinstance(function, dict) and isinstance(function.get("arguments"), str):
        return {**call, "function": {**function, "arguments": clean_text(function["arguments"])}}
    if isinstance(call.get("input"), str):
        return {**call, "input": clean_text(call["input"])}
    return call
