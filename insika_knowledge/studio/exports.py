"""Downloads of an agent's concepts: a zip of markdown records, GraphML, or JSON.

``GET /studio/export?agent=&tenant=&format=md|graphml|json`` answers with an attachment
built in memory from the store's current records: the ``.md`` files are the records
byte for byte (as `insika-knowledge export` writes them), the GraphML is
`export.graphml`'s, and the JSON is one object per concept with every field, its
version and ``quarantined``.

The Studio is an operator's view, so its downloads include the concepts held in
quarantine, but never as if they were vouched for: in the zip they sit under
``quarantined/`` (as ``export --include-held`` writes them), a GraphML node says
``quarantined`` true, a JSON record says why it is held.
"""

from __future__ import annotations

import io
import zipfile
from typing import Final

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response

from insika_knowledge.export import HELD_FOLDER, render
from insika_knowledge.memory import StoredConcept
from insika_knowledge.studio.scope import require_scope

#: format -> (media type, file suffix)
FORMATS: Final = {
    "md": ("application/zip", "md.zip"),
    "graphml": ("application/graphml+xml", "graphml"),
    "json": ("application/json", "json"),
}


def export_download(request: Request) -> Response:
    """GET /studio/export: the agent's concepts as an attachment.

    Raises:
        HTTPException: 400 when ``format`` is not md, graphml or json.
    """
    scope = require_scope(request)
    fmt = request.query_params.get("format") or "md"
    if fmt not in FORMATS:
        raise HTTPException(400, f"format={fmt[:20]!r} is not one of: {', '.join(FORMATS)}")
    if fmt == "md":
        body = markdown_zip(scope.store.list_concepts(scope.agent))
    else:
        body = render(scope.store, scope.agent, "graphml" if fmt == "graphml" else "json",
                      include_held=True)[0].encode()
    media, suffix = FORMATS[fmt]
    filename = f"{scope.tenant}-{scope.agent}.{suffix}"
    return Response(body, media_type=media,
                    headers={"content-disposition": f'attachment; filename="{filename}"'})


def markdown_zip(concepts: list[StoredConcept]) -> bytes:
    """A zip with one ``<name>.md`` per concept, the canonical record's bytes (UTF-8); those
    held in quarantine under ``quarantined/``.
    """
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for stored in concepts:
            folder = f"{HELD_FOLDER}/" if stored.quarantined else ""
            archive.writestr(f"{folder}{stored.concept.name}.md", stored.markdown.encode())
    return buffer.getvalue()
