"""The extraction and merge prompts, and how a transcript slice is rendered into them."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any, Final

#: The transcript text sent to the model is cut to its last this-many characters.
TRANSCRIPT_MAX_CHARS: Final = 24_000

GENERIC_PROMPT: Final = """\
You maintain the long-term knowledge of a customer-facing agent. Read the finished \
conversation below and propose the durable concepts it teaches: things that will help \
answer OTHER customers later (how the business works, rules it applies, procedures it \
follows, recurring objections and how they are answered).

Answer with a JSON array only, no prose. Each item is an object with exactly these keys:
- "name": a short kebab-case identifier (lowercase letters, digits, hyphens), stable for the same idea;
- "description": one sentence that summarises the concept;
- "type": one of {types};
- "body": 1-6 sentences of markdown stating the concept; mention related concepts as [[their-name]].

Rules: never include anything about the individual customer (names, e-mails, phone numbers, \
document numbers, card numbers, addresses, order or reservation ids). Do not invent facts the \
conversation does not support. Write nothing else: no confidence, no sources, no dates, no \
other keys. If the conversation teaches nothing durable, answer [].
"""

MERGE_PROMPT: Final = """\
Two statements were recorded under the same concept name "{name}". Decide whether they are \
compatible (they can be combined into one true statement) or contradicting (they disagree \
about a fact, a number, a rule, or whether something is allowed).

Answer with a JSON object only:
- {{"verdict": "related", "body": "<one merged markdown statement that keeps every compatible \
detail of both, at most {limit} characters>"}}, or
- {{"verdict": "contradicting"}}.

On record:
{old}

New sighting:
{new}
"""


def extraction_messages(
    transcript: Sequence[dict[str, Any]], types: Iterable[str], pack_prompt: str | None
) -> list[dict[str, str]]:
    """The chat messages of one extraction call.

    Args:
        transcript: the turn's messages in the normalised schema (role, content,
            optional tool_calls / name).
        types: the agent's allowed concept types.
        pack_prompt: the agent's own half of the prompt, appended to the generic half.

    Returns:
        ``[{"role": "system", ...}, {"role": "user", ...}]``.
    """
    system = GENERIC_PROMPT.format(types=", ".join(f'"{t}"' for t in types))
    if pack_prompt:
        system += "\nWhat counts as a concept for this agent:\n" + pack_prompt.strip() + "\n"
    return [
        {"role": "system", "content": system},
        {"role": "user", "content": "Conversation:\n\n" + render_transcript(transcript)},
    ]


def render_transcript(messages: Sequence[dict[str, Any]]) -> str:
    """Render messages as ``role: text`` lines (tool calls as ``name(args)``), last 24k chars."""
    lines: list[str] = []
    for message in messages:
        role = str(message.get("role", "?"))
        content = message.get("content")
        if isinstance(content, list):  # content parts
            content = " ".join(
                str(p.get("text", "")) for p in content if isinstance(p, dict)
            )
        if content:
            label = f"tool {message.get('name')}" if role == "tool" and message.get("name") else role
            lines.append(f"{label}: {content}")
        for call in message.get("tool_calls") or []:
            if isinstance(call, dict):
                args = json.dumps(call.get("arguments", {}), ensure_ascii=False, sort_keys=True)
                lines.append(f"{role} calls {call.get('name')}({args})")
    text = "\n".join(lines)
    return text[-TRANSCRIPT_MAX_CHARS:]


def merge_messages(name: str, old: str, new: str, limit: int) -> list[dict[str, str]]:
    """The chat messages of one merge call (`old` and `new` are the two bodies)."""
    return [{"role": "user", "content": MERGE_PROMPT.format(name=name, old=old, new=new, limit=limit)}]
