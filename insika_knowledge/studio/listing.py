"""The concept list: its query parameters, one page of rows, and the links around it.

Filtering runs in SQL and the natural sort over the filtered keys
(`SQLiteStore.concept_page`). ``q`` is answered by the agent's own search (the one
retrieval uses, `Retriever.search`, held concepts included: this is an operator's list):
its hits, best first, restrict the page and rank it by default, and each row shows its
score. Whether a row is held in quarantine is read from its record
(`StoredConcept.quarantined`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, Final

from starlette.exceptions import HTTPException

from insika_knowledge.concept import CONCEPT_TYPES, PROVENANCES, format_confidence
from insika_knowledge.memory import Store
from insika_knowledge.retrieve import Retriever
from insika_knowledge.studio.render import concept_url, url

PAGE_SIZE: Final = 50
Q_MAX: Final = 500
#: A search shows the index's best `SEARCH_MAX` hits (FTS5 analyses every hit it returns:
#: all 5,000 concepts of a large agent would take most of a second).
SEARCH_MAX: Final = 100
#: (sort key, heading, first click sorts descending)
COLUMNS: Final = (
    ("name", "Name", False),
    ("type", "Type", False),
    ("confidence", "Confidence", True),
    ("occurrences", "Occurrences", True),
    ("updated_at", "Updated (UTC)", True),
    ("provenance", "Provenance", False),
    ("status", "Status", True),
)
#: The search score column (shown when ``q`` is given; the default sort then).
RANK: Final = ("rank", "Score", False)
_SORTS: Final = {key for key, _, _ in (*COLUMNS, RANK)}
#: Status filters: (key, chip label). ``conflict`` is a ``concepts.status`` value;
#: ``duplicate`` is an open possible duplicate in the naming table (a candidate under
#: another name held next to this concept, `SQLiteStore.challenged_names`);
#: ``quarantined`` is membership of the ``quarantine`` table (a customer-only rule held
#: back from prompts, see `insika_knowledge.trust`), not a status value. A chip other
#: than Conflicts shows once a concept has that state (or its filter is on).
QUARANTINED: Final = "quarantined"
STATUS_FILTERS: Final = (("conflict", "Conflicts"), (QUARANTINED, "Quarantined"),
                         ("duplicate", "Possible duplicates"))
STATUSES: Final = (*(key for key, _ in STATUS_FILTERS), "ok")
DUPLICATE: Final = "duplicate"


@dataclass(frozen=True)
class ListQuery:
    """What the list shows: ``/studio/knowledge?agent=&tenant=&status=&type=&provenance=&q=&sort=&page=``.

    ``sort`` is a column key, ``-key`` for descending (``rank``, the search score, is the
    default when ``q`` is given); ``page`` is 1-based.
    """

    agent: str
    tenant: str
    status: str | None = None
    type: str | None = None
    provenance: str | None = None
    q: str = ""
    sort: str = "name"
    desc: bool = False
    page: int = 1

    @classmethod
    def from_params(cls, params: Mapping[str, str], agent: str, tenant: str) -> ListQuery:
        """Read and check the query string.

        Raises:
            HTTPException: 400 naming the bad parameter and the accepted values.
        """
        status = params.get("status") or None
        if status is not None and status not in STATUSES:
            raise HTTPException(400, f"status={status!r} is not one of: {', '.join(STATUSES)}")
        ctype = params.get("type") or None
        if ctype is not None and ctype not in CONCEPT_TYPES:
            raise HTTPException(400, f"type={ctype!r} is not one of: {', '.join(CONCEPT_TYPES)}")
        provenance = params.get("provenance") or None
        if provenance is not None and provenance not in PROVENANCES:
            raise HTTPException(
                400, f"provenance={provenance!r} is not one of: {', '.join(PROVENANCES)}")
        q = (params.get("q") or "").strip()[:Q_MAX]
        sort = params.get("sort") or ("rank" if q else "name")
        desc = sort.startswith("-")
        if sort.lstrip("-") not in _SORTS or (sort.lstrip("-") == "rank" and not q):
            raise HTTPException(
                400, f"sort={sort!r} is not a column: use one of {', '.join(sorted(_SORTS))} "
                "(prefix '-' for descending; rank only with q)"
            )
        raw_page = params.get("page") or "1"
        if not (raw_page.isascii() and raw_page.isdigit()) or len(raw_page) > 7 or int(raw_page) < 1:
            raise HTTPException(400, f"page={raw_page!r} is not a page number (1, 2, ...)")
        return cls(agent, tenant, status, ctype, provenance, q, sort.lstrip("-"), desc,
                   int(raw_page))

    @property
    def default_sort(self) -> bool:
        """True when the sort is the default one (rank with a query, name without)."""
        return (self.sort, self.desc) == ("rank" if self.q else "name", False)

    @property
    def sort_param(self) -> str | None:
        """The ``sort`` parameter naming this sort, None for the default."""
        return None if self.default_sort else ("-" if self.desc else "") + self.sort

    def link(self, **changes: Any) -> str:
        """This list's URL with `changes` applied (a filter change goes back to page 1).

        Changing ``q`` drops an explicit rank sort (without a query there is no score).
        """
        if "page" not in changes:
            changes["page"] = 1
        target = replace(self, **changes)
        if not target.q and target.sort == "rank":
            target = replace(target, sort="name", desc=False)
        return url(
            "/studio/knowledge", agent=target.agent, tenant=target.tenant, status=target.status,
            type=target.type, provenance=target.provenance, q=target.q, sort=target.sort_param,
            page=target.page if target.page > 1 else None,
        )


def build(store: Store, retriever: Retriever, mode: str, query: ListQuery) -> dict[str, Any]:
    """The list page's template context for `query` (rows, counts, chips, sort and page links).

    With ``q``, the best `SEARCH_MAX` hits of `Retriever.search` under the config's
    ``index`` `mode` (held concepts included: an operator's list) are the rows, ranked
    best first, each with its score; ``more_hits`` says the index had more.
    """
    ranked: list[str] | None = None
    scores: dict[str, float] = {}
    more_hits = False
    if query.q:
        hits = retriever.search(query.agent, query.q, SEARCH_MAX + 1, mode, held=True)
        more_hits = len(hits) > SEARCH_MAX
        hits = hits[:SEARCH_MAX]
        ranked = [hit.entry.name for hit in hits]
        scores = {hit.entry.name: hit.score for hit in hits}
    offset = (query.page - 1) * PAGE_SIZE
    held = query.status == QUARANTINED
    duplicates = store.challenged_names(query.agent)
    in_scope = [n for n in duplicates if ranked is None or n in ranked]
    status: str | None = None if held else query.status
    if status == DUPLICATE:  # the naming table, not a status column: restrict the names
        ranked = [n for n in ranked if n in duplicates] if ranked is not None else sorted(in_scope)
        status = None
    page = store.concept_page(
        query.agent, status=status, type=query.type,
        provenance=query.provenance, quarantined=True if held else None, ranked=ranked,
        sort=query.sort, desc=query.desc, offset=offset, limit=PAGE_SIZE,
    )
    total, counts = page.total, page.counts
    pages = max(1, -(-total // PAGE_SIZE))
    return {
        "query": query,
        "index_name": retriever.index_for(query.agent, mode).name,
        "more_hits": more_hits,
        "search_max": SEARCH_MAX,
        "rows": [_row(s.concept, query, scores, s.quarantined, s.concept.name in duplicates)
                 for s in page.rows],
        "total": total,
        "first": offset + 1 if page.rows else 0,
        "last": offset + len(page.rows),
        "pages": pages,
        "past_end": query.page > pages,
        "last_href": query.link(page=pages),
        "first_href": query.link(page=1) if query.page > 1 else None,
        "prev_href": query.link(page=min(query.page - 1, pages)) if query.page > 1 else None,
        "next_href": query.link(page=query.page + 1) if query.page < pages else None,
        "end_href": query.link(page=pages) if query.page < pages else None,
        "columns": _columns(query),
        "status_chips": _status_chips(query, counts.all,
                                      {**counts.status, QUARANTINED: counts.quarantined,
                                       DUPLICATE: len(in_scope)}),
        "provenance_chips": [{
            "label": p, "count": counts.provenance.get(p, 0), "active": query.provenance == p,
            "href": query.link(provenance=None if query.provenance == p else p), "warn": False,
        } for p in PROVENANCES],
        "type_chips": [{
            "label": t, "count": counts.type.get(t, 0), "active": query.type == t,
            "href": query.link(type=None if query.type == t else t), "warn": False,
        } for t in CONCEPT_TYPES],
        "hidden": {k: v for k, v in (
            ("status", query.status), ("type", query.type), ("provenance", query.provenance),
            ("sort", None if query.sort == "rank" else query.sort_param),
        ) if v},
    }


def _row(
    concept: Any, query: ListQuery, scores: dict[str, float], quarantined: bool, duplicate: bool
) -> dict[str, Any]:
    score = scores.get(concept.name)
    return {
        "name": concept.name,
        "href": concept_url(concept.name, query.agent, query.tenant),
        "type": concept.type,
        "confidence": f"{concept.confidence:.2f}",
        "confidence_raw": format_confidence(concept.confidence),
        "occurrences": concept.occurrences,
        "updated_at": concept.updated_at,
        "provenance": concept.provenance,
        "status": concept.status,
        "conflict": concept.in_conflict,
        "quarantined": quarantined,
        "duplicate": duplicate,
        "description": concept.description,
        "score": None if score is None else f"{score:.4g}",
    }


def _columns(query: ListQuery) -> list[dict[str, Any]]:
    columns = []
    for key, heading, desc_first in (*COLUMNS, *((RANK,) if query.q else ())):
        active = key == query.sort
        next_desc = (not query.desc) if active else desc_first
        # Rank order (best first) is the Score column descending: show it that way.
        shown_desc = query.desc != (key == "rank")
        columns.append({
            "key": key, "heading": heading, "href": query.link(sort=key, desc=next_desc),
            "arrow": ("▼" if shown_desc else "▲") if active else "",
            "aria": ("descending" if shown_desc else "ascending") if active else "none",
        })
    return columns


def _status_chips(query: ListQuery, total: int, counts: dict[str, int]) -> list[dict[str, Any]]:
    chips = [{"label": "All", "count": total, "href": query.link(status=None),
              "active": query.status is None, "warn": False}]
    for key, label in STATUS_FILTERS:
        number = counts.get(key, 0)
        if number or query.status == key or key == "conflict":
            chips.append({"label": label, "count": number, "active": query.status == key,
                          "href": query.link(status=None if query.status == key else key),
                          "warn": number > 0})
    return chips
