"""Resolving a conflict in one step: keep one claim, or write the resolution.

``POST /studio/knowledge/<name>/resolve`` with ``keep=record`` or ``keep=entry-N``
keeps that claim; with ``keep=written`` and ``markdown`` it saves the operator's text.
When the claim kept states other numbers than the concept's name (``devolucao-7-dias``
now says 30 days), the editor then offers to rename it (`rename_for`;
``POST .../rename``, `insika_knowledge.studio.edit.concept_rename`).
Either way one version is written (reason ``resolve``, via `SQLiteStore.resolve`, one
transaction), the ``## Contradiction`` section is gone, and confidence is recomputed
from the sightings ledger (`consolidate.resolution`). ``GET .../resolve`` is the page where the
resolution is written, its editor holding the claim on record.

``POST /studio/knowledge/<name>/dismiss`` keeps the concept as it is and closes the claims
held against it (a policy's challenges, possible duplicates; `SQLiteStore.dismiss_held`):
no version is written.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, Final

from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from insika_knowledge.concept import NAME_RE, Concept, claim_text, format_confidence, parse, serialize
from insika_knowledge.consolidate import resolution as claims
from insika_knowledge.errors import ConceptFormatError, NotFound, StaleVersion, UserError
from insika_knowledge.memory import Sighting, StoredConcept
from insika_knowledge.studio.render import concept_url, flash, line_count
from insika_knowledge.studio.scope import (
    ACTOR,
    Scope,
    concept_nav,
    concept_of,
    current_or_404,
    int_field,
    read_form,
    refused,
    renderer_of,
    require_scope,
    versioned_post,
)


def claims_context(scope: Scope, stored: StoredConcept) -> dict[str, Any]:
    """The editor page's "Resolve" panel: each claim with its "keep this" form."""
    found = claims.claims(stored.concept)
    return {
        "claims": found,
        "resolve_action": concept_url(stored.concept.name, scope.agent, scope.tenant, "/resolve"),
    }


def resolve_page(request: Request) -> Response:
    """GET /studio/knowledge/<name>/resolve: write the resolution (the claim on record first)."""
    scope, stored = concept_of(request)
    if not stored.concept.in_conflict:
        flash(request, "This concept has no conflict to resolve.")
        return RedirectResponse(concept_url(stored.concept.name, scope.agent, scope.tenant), 303)
    draft = serialize(stored.concept.replace(body=claim_text(stored.concept.body) or "…"))
    return _page(request, scope, stored, draft)


def _page(
    request: Request, scope: Scope, stored: StoredConcept, text: str, *, version: int | None = None,
    error: str | None = None, error_line: int | None = None, status: int = 200,
) -> Response:
    name = stored.concept.name
    return renderer_of(request).page(request, "resolve.html", {
        **concept_nav(scope, name),
        "concept": stored.concept,
        "version": stored.version if version is None else version,
        "current_version": stored.version,
        "markdown": text,
        "lines": line_count(text),
        "error": error,
        "error_line": error_line,
        "claims": claims.claims(stored.concept),
        "on_record": stored.markdown,
        "action": concept_url(name, scope.agent, scope.tenant, "/resolve"),
    }, status=status)


async def concept_resolve(request: Request) -> Response:
    """POST /studio/knowledge/<name>/resolve: keep one claim, or save the written resolution."""
    form = await read_form(request)
    expected = int_field(form, "version")
    key = form.get("keep")
    if not isinstance(key, str) or not key:
        raise HTTPException(400, "the form has no 'keep' field (record, entry-N or written)")
    text = form.get("markdown")
    if key == claims.WRITTEN and not isinstance(text, str):
        raise HTTPException(400, "a written resolution needs the 'markdown' field")
    markdown = text.replace("\r\n", "\n") if isinstance(text, str) else ""
    return await run_in_threadpool(_resolve, request, key, expected, markdown)


def _resolve(request: Request, key: str, expected: int, text: str) -> Response:
    scope = require_scope(request)
    name = request.path_params["name"]
    current = current_or_404(scope, name)
    resolved: Concept | None = None

    def choose(concept: Concept, ledger: Sequence[Sighting]) -> Concept:
        if key != claims.WRITTEN:
            return claims.keep(concept, key, ledger)
        assert resolved is not None
        return claims.written(concept, resolved, ledger)

    try:
        if key == claims.WRITTEN:
            resolved = parse(text)
        saved = scope.store.resolve(scope.agent, name, choose, expected_version=expected,
                                    actor=ACTOR)
    except ConceptFormatError as exc:
        if key != claims.WRITTEN:  # the kept claim does not make a valid record
            raise HTTPException(422, str(exc)) from None
        return _page(request, scope, current, text, version=expected, error=str(exc),
                     error_line=exc.line, status=422)
    except StaleVersion as exc:
        return _stale(request, scope, name, key, text, exc)
    except NotFound as exc:
        raise HTTPException(404, str(exc)) from None
    except UserError as exc:
        if key == claims.WRITTEN:
            return _page(request, scope, current, text, version=expected, error=str(exc),
                         status=422)
        raise HTTPException(400, str(exc)) from None
    kept = "your resolution" if key == claims.WRITTEN else (
        "the claim on record" if key == claims.RECORD else f"contradiction {key.split('-')[-1]}")
    sessions = len(saved.concept.sources)
    flash(request, f"Resolved: kept {kept} as version {saved.version}. Confidence "
                   f"{format_confidence(saved.concept.confidence)} from {sessions} "
                   f"session{'' if sessions == 1 else 's'}.")
    suggested = rename_for(saved.concept)
    if suggested is not None and scope.store.get(scope.agent, suggested) is None:
        request.session[RENAME_KEY] = {"name": name, "to": suggested, "version": saved.version}
    return RedirectResponse(concept_url(name, scope.agent, scope.tenant), 303)


#: The session key of a rename the editor offers after a resolution.
RENAME_KEY: Final = "rename_offer"
_NUMBER: Final = re.compile(r"\d+")


def rename_for(concept: Concept) -> str | None:
    """A name for `concept` whose numbers agree with its claim, when its own do not.

    A name that carries numbers (``devolucao-7-dias``) none of which its claim states,
    while the claim states others (``... em até 30 dias``), gets the claim's numbers in
    place of its own, in order (``devolucao-30-dias``). None when the name has no number,
    or one the claim states, or the claim has none.
    """
    parts = concept.name.split("-")
    named = [i for i, part in enumerate(parts) if part.isdigit()]
    stated = list(dict.fromkeys(_NUMBER.findall(claim_text(concept.body))))
    if not named or not stated or any(parts[i] in stated for i in named):
        return None
    for n, i in enumerate(named):
        parts[i] = stated[min(n, len(stated) - 1)]
    suggested = "-".join(parts)
    return suggested if suggested != concept.name and NAME_RE.fullmatch(suggested) else None


def _stale(
    request: Request, scope: Scope, name: str, key: str, text: str, exc: StaleVersion
) -> Response:
    """409: the concept changed after the operator chose; nothing was written."""
    current = scope.store.get(scope.agent, name)
    if key == claims.WRITTEN and current is not None:
        return _page(request, scope, current, text, version=current.version, status=409,
                     error=f"{exc}. Nothing was written; your text is kept. Compare it with the "
                           f"record below, then save it over version {current.version}.")
    return refused(request, scope, name, f"{exc}. Nothing was written: review the concept and choose again.")


async def concept_dismiss(request: Request) -> Response:
    """POST /studio/knowledge/<name>/dismiss: keep the concept as it is and close the claims
    held against it (a policy's challenges, possible duplicates); the record is unchanged.
    """
    return await versioned_post(request, _dismiss)


def _dismiss(request: Request, scope: Scope, name: str, expected: int) -> Response:
    try:
        closed = scope.store.dismiss_held(scope.agent, name, actor=ACTOR, expected_version=expected)
    except StaleVersion as exc:
        return refused(request, scope, name, f"{exc}. Nothing was closed: review what changed, then try again.")
    flash(request, f"Kept {name} as it is: {closed} held claim{'' if closed == 1 else 's'} closed.")
    return RedirectResponse(concept_url(name, scope.agent, scope.tenant), 303)
