"""The ``insika`` FTS5 tokenizer: FTS5 indexes exactly the terms the one tokeniser makes.

Documents are analysed by `insika_knowledge.analysis.text.document_terms` (folding, stop
words, stemming, numeric range blocks); queries arrive already analysed (the FTS5
adapter builds every MATCH expression itself from `query_terms`, each term quoted),
so in query mode a token passes through unchanged. Scan and FTS5 therefore agree on
what matches.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Final

import apsw

from insika_knowledge.analysis.numbers import range_terms
from insika_knowledge.analysis.text import fold, tokenize

TOKENIZER: Final = "insika"
#: Bumped whenever analysis changes in a way that needs the FTS5 index rebuilt.
ANALYSIS_VERSION: Final = 1


def fts5_available(conn: apsw.Connection) -> bool:
    """True when this SQLite build has the FTS5 module."""
    try:
        return any(row[0] == "ENABLE_FTS5" for row in conn.execute("PRAGMA compile_options")) or \
            _probe(conn)
    except apsw.Error:
        return False


def _probe(conn: apsw.Connection) -> bool:
    try:
        conn.execute("CREATE VIRTUAL TABLE temp._insika_probe USING fts5(x)")
        conn.execute("DROP TABLE temp._insika_probe")
        return True
    except apsw.Error:
        return False


def _tokenizer(con: apsw.Connection, args: list[str]) -> Any:
    def tokenize_utf8(utf8: bytes, flags: int, locale: str | None) -> Iterator[str]:
        text = utf8.decode("utf-8", "replace")
        if flags & apsw.FTS5_TOKENIZE_QUERY:
            yield text  # already analysed by the adapter
            return
        yield from tokenize(text)
        yield from range_terms(fold(text))

    return tokenize_utf8


def register(conn: apsw.Connection) -> None:
    """Register the ``insika`` tokenizer on `conn` (needed by every connection that writes)."""
    conn.register_fts5_tokenizer(TOKENIZER, _tokenizer)


def match_expression(terms: frozenset[str] | list[str]) -> str | None:
    """An FTS5 MATCH expression OR-ing analysed `terms`, each quoted; None when empty.

    Terms come from our analyser, never raw user text; quoting (with ``"`` doubled)
    makes any character, operator word or column filter a plain token anyway.
    """
    quoted = ['"' + t.replace('"', '""') + '"' for t in sorted(terms) if t]
    return " OR ".join(quoted) if quoted else None
