"""The concept list: its query parameters, one SQL page of rows, and the links around it.

Filtering, sorting and paging run in SQL (`SQLiteStore.page`); the ``q`` filter is the
project's own retrieval (`ScanIndex.search`), whose hits restrict the page's names.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, Final

from starlette.exceptions import HTTPException

from insika_knowledge.concept import CONCEPT_TYPES, format_confidence
from insika_knowledge.index.scan import ScanIndex
from insika_knowledge.store import SQLiteStore
from insika_knowledge.studio.render import concept_url, url

PAGE_SIZE: Final = 50
Q_MAX: Final = 500
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
_SORTS: Final = {key for key, _, _ in COLUMNS}
STATUSES: Final = ("conflict", "ok", "duplicate")
#: The ``status`` value of the "possible duplicates" filter (issue 15): concepts with an open
#: possible duplicate (`SQLiteStore.duplicate_names`), not a column of the concepts table.
DUPLICATE_STATUS: Final = "duplicate"


@dataclass(frozen=True)
class ListQuery:
    """What the list shows: ``/studio/knowledge?agent=&tenant=&status=&type=&q=&sort=&page=``.

    ``sort`` is a column key, ``-key`` for descending; ``page`` is 1-based.
    """

    agent: str
    tenant: str
    status: str | None = None
    type: str | None = None
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
        sort = params.get("sort") or "name"
        desc = sort.startswith("-")
        if sort.lstrip("-") not in _SORTS:
            raise HTTPException(
                400, f"sort={sort!r} is not a column: use one of {', '.join(sorted(_SORTS))} "
                "(prefix '-' for descending)"
            )
        raw_page = params.get("page") or "1"
        if not (raw_page.isascii() and raw_page.isdigit()) or len(raw_page) > 7 or int(raw_page) < 1:
            raise HTTPException(400, f"page={raw_page!r} is not a page number (1, 2, ...)")
        q = (params.get("q") or "").strip()[:Q_MAX]
        return cls(agent, tenant, status, ctype, q, sort.lstrip("-"), desc, int(raw_page))

    def link(self, **changes: Any) -> str:
        """This list's URL with `changes` applied (a filter change goes back to page 1)."""
        if "page" not in changes:
            changes["page"] = 1
        target = replace(self, **changes)
        return url(
            "/studio/knowledge", agent=target.agent, tenant=target.tenant, status=target.status,
            type=target.type, q=target.q,
            sort=None if (target.sort, target.desc) == ("name", False)
            else ("-" if target.desc else "") + target.sort,
            page=target.page if target.page > 1 else None,
        )


def build(store: SQLiteStore, index: ScanIndex, query: ListQuery) -> dict[str, Any]:
    """The list page's template context for `query` (rows, counts, sort and page links)."""
    names = None
    if query.q:
        limit = max(1, store.count(query.agent))
        names = [hit.entry.name for hit in index.search(query.agent, query.q, limit)]
    # --- possible duplicates (issue 15): a filter on the naming table, beside conflicts
    duplicates = store.duplicate_names(query.agent)
    in_scope = [n for n in duplicates if names is None or n in names]
    status = query.status
    if status == DUPLICATE_STATUS:
        names, status = in_scope, None
    # --- end possible duplicates
    rows, total, counts = store.page(
        query.agent, status=status, type=query.type, names=names, sort=query.sort,
        desc=query.desc, offset=(query.page - 1) * PAGE_SIZE, limit=PAGE_SIZE,
    )
    pages = max(1, -(-total // PAGE_SIZE))
    columns = []
    for key, heading, desc_first in COLUMNS:
        active = key == query.sort
        next_desc = (not query.desc) if active else desc_first
        columns.append({
            "heading": heading, "href": query.link(sort=key, desc=next_desc),
            "arrow": ("▼" if query.desc else "▲") if active else "",
            "aria": ("descending" if query.desc else "ascending") if active else "none",
        })
    chips = [{"label": "All", "count": counts["all"], "href": query.link(status=None, type=None),
              "active": query.status is None and query.type is None, "warn": False}]
    chips.append({"label": "Conflicts", "count": counts["conflict"],
                  "href": query.link(status="conflict", type=None),
                  "active": query.status == "conflict", "warn": counts["conflict"] > 0})
    chips.append({"label": "Possible duplicates", "count": len(in_scope),  # issue 15
                  "href": query.link(status=DUPLICATE_STATUS, type=None),
                  "active": query.status == DUPLICATE_STATUS, "warn": bool(in_scope)})
    for ctype in CONCEPT_TYPES:
        chips.append({"label": ctype, "count": counts.get(ctype, 0),
                      "href": query.link(type=ctype, status=None),
                      "active": query.type == ctype and query.status is None, "warn": False})
    return {
        "query": query,
        "rows": [{
            "name": s.concept.name,
            "href": concept_url(s.concept.name, query.agent, query.tenant),
            "type": s.concept.type,
            "confidence": f"{s.concept.confidence:.2f}",
            "confidence_raw": format_confidence(s.concept.confidence),
            "occurrences": s.concept.occurrences,
            "updated_at": s.concept.updated_at,
            "provenance": s.concept.provenance,
            "conflict": s.concept.in_conflict,
            "duplicate": s.concept.name in duplicates,
            "description": s.concept.description,
        } for s in rows],
        "total": total,
        "first": (query.page - 1) * PAGE_SIZE + 1 if rows else 0,
        "last": (query.page - 1) * PAGE_SIZE + len(rows),
        "pages": pages,
        "prev_href": query.link(page=query.page - 1) if query.page > 1 else None,
        "next_href": query.link(page=query.page + 1) if query.page < pages else None,
        "columns": columns,
        "chips": chips,
        "hidden": {k: v for k, v in (
            ("status", query.status), ("type", query.type),
            ("sort", None if (query.sort, query.desc) == ("name", False)
             else ("-" if query.desc else "") + query.sort),
        ) if v},
    }
