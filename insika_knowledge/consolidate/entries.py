"""The entries of a record's ``## Contradiction`` section: how they are written and read.

Consolidation appends one entry per distinct contradicting claim
(`insika_knowledge.consolidate.records.contradict`)::

    - session `s9` at 2026-08-24T18:00:00Z (also `s12`, `s15`): Returns are accepted within 30 days.
      Why: the merge model said the claims contradict each other.

      The body of the contradicting claim, indented two spaces.

The ``Why:`` line, right under the first line with the claim after a blank line (or in a
`NO_ROOM_NOTE` entry), says in words why the claim is held as a contradiction rather than
merged (`consolidate.Decision.conflict_reason`, the reason
`TurnReport.why` and the ``knowledge_conflict`` event gave); an entry written before it was
kept has none.

The first session is the one that made the claim first, at that time; a later session
making the same claim (description and body, spacing and letter case ignored) is named in
the ``(also ...)`` list, up to `SESSIONS_PER_ENTRY` sessions in all (enough for the
confidence cap of a kept claim: ``0.5 + 0.1 x 5`` reaches 0.95), and otherwise only in
the sightings ledger. So a claim repeated a thousand times is one entry of bounded size.

Text under the heading that is not an entry (a hand edit) is not read as one. Every
function here is pure.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

from insika_knowledge.concept import WHY_MAX, WHY_PREFIX, claim_text, has_contradiction, one_line

#: The most sessions one entry names (the first one and the ``also`` list).
SESSIONS_PER_ENTRY: Final = 5
#: What an entry says instead of its claim when the record has no room for the claim's
#: text (the claim is then held for review next to the concept, `PossibleDuplicate`).
NO_ROOM_NOTE: Final = "claim held for review: no room in the record"
_HEAD_RE: Final = re.compile(
    r"^- session `([^`\n]*)` at (\S+?)(?: \(also ((?:`[^`\n]*`, )*`[^`\n]*`)\))?: (.*)$"
)
_ALSO_RE: Final = re.compile(r"`([^`\n]*)`")
#: The line right under an entry's first line that says why it is held (`why_line`).
_WHY_RE: Final = re.compile(f"{WHY_PREFIX}(.+)")
_LINE_END: Final = re.compile(r"(\r\n|\r|\n)")


@dataclass(frozen=True, slots=True)
class Entry:
    """One contradicting claim under the heading.

    Attributes:
        head: the entry's first line, as written.
        start: where `head` starts in the body it was read from (characters).
        sessions: the sessions that made the claim, as written in the record (escaped,
            `records.safe_session_id`), the first one first; never empty.
        at: when the first of them made it (UTC ``Z``).
        description: the claim's one-line description (or `NO_ROOM_NOTE`).
        body: the claim's markdown, unindented ("" when the entry kept no text).
        why: why the claim is held as a contradiction, in words ("" when the entry says
            not: one written before the reason was kept).
    """

    head: str
    start: int
    sessions: tuple[str, ...]
    at: str
    description: str
    body: str
    why: str = ""

    @property
    def kept_text(self) -> bool:
        """False when the entry kept no claim to restore (a note that there was no room: a
        claim always has a body, so a description alone is no claim, whatever it says).
        """
        return bool(self.body.strip())

    def states(self, description: str, body: str) -> bool:
        """True when the entry's claim is (`description`, `body`), spacing and case ignored."""
        return self.kept_text and self.same_text(self.description, self.body, description, body)

    @staticmethod
    def same_text(description: str, body: str, other_description: str, other_body: str) -> bool:
        """True when two claims' texts are equal, spacing and letter case ignored."""
        return squash(description) == squash(other_description) and squash(body) == squash(other_body)


def squash(text: str) -> str:
    """`text` with runs of white space made one space, and case folded."""
    return " ".join(text.split()).casefold()


def entries(body: str) -> list[Entry]:
    """The entries of `body`'s ``## Contradiction`` section, in order ([] without one)."""
    if not has_contradiction(body):
        return []
    at = len(claim_text(body))
    heading = False
    found: list[tuple[int, re.Match[str], list[str]]] = []
    pieces = _LINE_END.split(body[at:])  # line, its end, line, ...: a lone CR ends a line too
    for line, end in zip(pieces[::2], [*pieces[1::2], ""], strict=True):
        head = _HEAD_RE.match(line) if heading else None
        if head is not None:
            found.append((at, head, []))
        elif found:
            found[-1][2].append(line)
        heading = heading or has_contradiction(line)  # the lines before it are blank
        at += len(line) + len(end)
    return [_entry(start, head, lines) for start, head, lines in found]


def _entry(start: int, head: re.Match[str], lines: list[str]) -> Entry:
    also = tuple(_ALSO_RE.findall(head.group(3) or ""))
    said = _WHY_RE.fullmatch(lines[0].rstrip()) if lines else None
    claim_after = len(lines) > 2 and not lines[1].strip() and any(line.strip() for line in lines[2:])
    if said and head.group(4).strip() != NO_ROOM_NOTE and not claim_after:
        said = None  # a claim written right under the first line (a hand edit) that opens so
    text = "\n".join(line.removeprefix("  ") for line in lines[1 if said else 0:]).strip()
    return Entry(head.group(0), start, (head.group(1), *also), head.group(2), head.group(4).strip(), text,
                 said.group(1).strip() if said else "")


def head_line(sessions: tuple[str, ...], at: str, description: str) -> str:
    """An entry's first line (`sessions` already escaped, the first one first)."""
    also = f" (also {', '.join(f'`{s}`' for s in sessions[1:])})" if len(sessions) > 1 else ""
    return f"- session `{sessions[0]}` at {at}{also}: {description}"


def why_line(why: str) -> str:
    """The line under an entry's first line that says `why` it is held ("" for no reason):
    one line, at most `WHY_MAX` characters of the reason.
    """
    said = one_line(why, WHY_MAX)
    return f"\n{WHY_PREFIX}{said}" if said else ""


def indented(body: str) -> str:
    """A claim's body as an entry holds it: every non-blank line indented two spaces."""
    return "\n".join(f"  {line}" if line else "" for line in body.split("\n"))
