"""A long message read in pieces: where in it the customer asks is not known.

A customer who writes a paragraph of context before (or after) the question makes one long
message; read whole, its words and its meaning are the context's, and the concept the
question needs drops out of the top five (``bench --quality --long``: recall@5 0.92 on the
labelled messages, 0.49 with 1,500 characters of context before them, 0.11 with 2,500).
Retrieval reads such a message as `pieces`: its sentences, in order, grouped up to
`PIECE_CHARS` characters (a sentence longer than that cut between words), and ranks each
concept by its best piece (`insika_knowledge.retrieve`), as learning reads a long
transcript (`insika_knowledge.learn.known`).

What is read is bounded (`READ_CHARS`, the characters a query embedding reads: its cost
grows with them): the last piece first (a question usually ends a message), then the first
(or it opens it), then back from the end.
"""

from __future__ import annotations

import re
from typing import Final

#: A message up to this many characters is read whole; a longer one in pieces of at most this many.
PIECE_CHARS: Final = 400
#: The most characters of a long message that are read, over all its pieces.
READ_CHARS: Final = 2000
#: Where a sentence ends: after ``.``, ``!``, ``?``, ``;`` or an ellipsis and a space, or at a line end.
_SENTENCE_END: Final = re.compile(r"(?<=[.!?;\u2026])\s+|\s*\n\s*")


def pieces(message: str, size: int = PIECE_CHARS, budget: int = READ_CHARS) -> list[str]:
    """`message` itself when it has at most `size` characters, else the pieces read of it, in
    message order (see the module doc).

    ``pieces("Oi! " * 200 + "Quanto custa o frete?")`` ends with a piece holding the question.

    Args:
        message: the customer's message.
        size: the most characters a piece holds (> 0).
        budget: the most characters read over all pieces (at least one piece is read).
    """
    if len(message) <= size:
        return [message]
    cut: list[str] = []
    current = ""
    for sentence in filter(None, (s.strip() for s in _SENTENCE_END.split(message))):
        if len(sentence) > size:  # a long sentence: cut between words (by position: no copy of the rest)
            start, end = 0, len(sentence)
            while end - start > size:
                at = sentence.rfind(" ", start, start + size + 1) - start
                at = at if at > 0 else size
                if current:
                    cut.append(current)
                    current = ""
                cut.append(sentence[start:start + at].strip())
                start += at
                while start < end and sentence[start].isspace():
                    start += 1
            sentence = sentence[start:]
        if current and len(current) + 1 + len(sentence) > size:
            cut.append(current)
            current = sentence
        else:
            current = f"{current} {sentence}" if current else sentence
    if current:
        cut.append(current)
    order = [len(cut) - 1, 0, *range(len(cut) - 2, 0, -1)] if len(cut) > 1 else [0]
    chosen: list[int] = []
    read = 0
    for i in order:
        if chosen and read + len(cut[i]) > budget:
            break
        chosen.append(i)
        read += len(cut[i])
    return [cut[i] for i in sorted(chosen)]
