"""The analyser as a full-text index's tokenizer: the index layer gives it to the store.

The store never imports the analyser. Whoever opens a store for search gives it
`TOKENIZER` (``SQLiteStore(path, tokenizer=TOKENIZER)``, or `attach` on an open store,
which `Memory`, the retriever and `Fts5Index` do); the store registers it as its FTS5
tokenizer, and records `ANALYSIS_VERSION` with the index so that a database built under
another analysis is re-indexed at open.

A document's terms are exactly what Index::Scan indexes (`index.text.document_terms`:
folded, stop words out, stemmed, synonym groups, numeric range blocks), in order and
with repeats, so FTS5's term frequencies are real and Scan and FTS5 agree on what
matches.
"""

from __future__ import annotations

from typing import Final

from insika_knowledge.analysis.numbers import range_terms
from insika_knowledge.analysis.text import ANALYSIS_VERSION, fold, tokenize
from insika_knowledge.concept import searchable_text
from insika_knowledge.store.base import FullTextIndex

#: Texts whose terms the tokenizer remembers (the most recent; a text up to `MEMO_CHARS`).
MEMO_SIZE: Final = 256
MEMO_CHARS: Final = 16_384


class DocumentTokenizer:
    """A document's index terms, in order (a `insika_knowledge.store.base.Tokenizer`).

    The terms of the last `MEMO_SIZE` texts are remembered: FTS5 re-tokenises a row's old
    text to delete it on every update, and Index::Postings analyses the text a write just
    indexed; both then cost a dictionary lookup instead of a second analysis.

    Attributes:
        version: the analysis version (`ANALYSIS_VERSION`) the terms follow.
    """

    version: Final[int] = ANALYSIS_VERSION

    def __init__(self) -> None:
        self._memo: dict[str, tuple[str, ...]] = {}

    def __call__(self, text: str) -> tuple[str, ...]:
        """The terms of `text`: its words' terms (`tokenize`), then its range blocks."""
        found = self._memo.get(text)
        if found is None:
            read = searchable_text(text)  # a contradiction's reason is no term of the concept
            found = (*tokenize(read), *range_terms(fold(read)))
            if len(text) <= MEMO_CHARS:
                if len(self._memo) >= MEMO_SIZE:
                    self._memo.clear()
                self._memo[text] = found
        return found


#: The tokenizer every store's full-text index is built with.
TOKENIZER: Final = DocumentTokenizer()


def attach(store: FullTextIndex) -> bool:
    """Give `store` the analyser its full-text index tokenises with (see the module doc).

    Builds the index when it is missing or was built under another analysis version.

    Returns:
        True when the store's full-text index is ready (False: its SQLite lacks FTS5).

    Raises:
        RunTimeFailure: the disk is full or failing while the index is built.
        UserError: the database file cannot be written.
    """
    return store.register_tokenizer(TOKENIZER)
