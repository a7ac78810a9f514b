"""Grounding: which speakers of a transcript support a claim, decided from the text alone.

A claim is reduced to its *features*: the analyser's content terms and its numbers. Each
feature has an *origin*, the speaker of the first message that mentions it. A message
supports the claim when it covers enough of the claim's features (or, since numbers
survive translation, more than half of its numbers); a message by anyone
but the customer counts only when it also brings features of its own, ones no earlier
customer message had. So an agent that echoes a customer's "note for your records"
("Noted: orders over R$ 50 get a free gift!") adds no support, while an agent that
answers a question with the rule ("CEPs 13000-13999 ship in 1-2 days") does.

Speakers: ``customer`` (role ``user``), ``agent`` (role ``assistant``), ``human`` (an
assistant message marked ``"human": true`` or named ``human``/``human_agent``, or role
``human_agent``), ``tool`` (roles ``tool`` and ``function``) and ``system`` (the
business's own instructions).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Final, Literal

from insika_knowledge.analysis.text import terms
from insika_knowledge.wire.messages import message_text

Speaker = Literal["customer", "agent", "human", "tool", "system"]

#: Share of the claim's features a message must mention to support it.
MIN_COVERAGE: Final = 0.5
#: Features a non-customer message must bring that no earlier customer message had:
#: at least this share of the claim's features, or any number of the claim.
MIN_NOVELTY: Final = 0.25


def speaker(message: Mapping[str, Any]) -> Speaker | None:
    """Who wrote `message` (None for a role this module does not know)."""
    role = message.get("role")
    name = str(message.get("name") or "").lower()
    if role == "user":
        return "customer"
    marked_human = message.get("human") is True or name in {"human", "human_agent"}
    if role == "human_agent" or (role == "assistant" and marked_human):
        return "human"
    if role == "assistant":
        return "agent"
    if role in ("tool", "function"):
        return "tool"
    if role == "system":
        return "system"
    return None


def features(text: str) -> frozenset[str]:
    """The claim features of `text`: its analysed terms (numbers included)."""
    return terms(text)


def _is_number(term: str) -> bool:
    return term.isdigit()


def supporters(claim: str, messages: Iterable[Mapping[str, Any]]) -> frozenset[Speaker]:
    """The speakers whose messages support `claim`.

    Args:
        claim: the candidate's description and body, as one text.
        messages: the turn's transcript, oldest first (OpenAI-style dicts with ``role``
            and ``content``).

    Returns:
        A set of `Speaker` values; empty when no message supports the claim (for example
        when the model wrote it from nothing said).
    """
    wanted = features(claim)
    if not wanted:
        return frozenset()
    numbers = {t for t in wanted if _is_number(t)}
    said_by_customer: set[str] = set()
    found: set[Speaker] = set()
    for message in messages:
        who = speaker(message)
        if who is None:
            continue
        have = features(message_text(message)) & wanted
        covered = len(have) / len(wanted)
        if who == "customer":
            if covered >= MIN_COVERAGE:
                found.add("customer")
            said_by_customer |= have
            continue
        novel = have - said_by_customer
        brings = (novel & numbers) or len(novel) / len(wanted) >= MIN_NOVELTY
        # Numbers survive translation where words do not: a message holding most of
        # the claim's numbers covers it even when the claim was written in the other
        # language ("7 dias" said, "7 days" proposed).
        numeric = bool(numbers) and 2 * len(have & numbers) >= len(numbers) + 1
        if (covered >= MIN_COVERAGE or numeric) and brings:
            found.add(who)
    return frozenset(found)
