"""A concept's pages: the editor, saving an edit, versions and restore, delete.

GET handlers only read. POST handlers read the form and check the CSRF token first,
then write through the tenant's `Store` (or `Memory.delete`) in the thread pool, and redirect
(303) to a page that shows the result. A refused save keeps the operator's text: 422
for the text (line and field named), 409 for a stale version, 503 when the database
failed (busy, full or read-only disk, damaged file), with the reason.
"""

from __future__ import annotations

from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from insika_knowledge.candidate import Candidate
from insika_knowledge.concept import Concept, check_name, format_confidence, parse, serialize
from insika_knowledge.consolidate.claims import values_differ
from insika_knowledge.errors import (
    ConceptFormatError,
    InvalidName,
    NotFound,
    RunTimeFailure,
    StaleVersion,
    UserError,
)
from insika_knowledge.memory import PossibleDuplicate, StoredConcept
from insika_knowledge.studio import evidence, resolve
from insika_knowledge.studio.render import concept_url, diff, flash, line_count, preview, url
from insika_knowledge.studio.scope import (
    ACTOR,
    LINE_RE,
    Scope,
    concept_nav,
    concept_of,
    int_field,
    memory_of,
    nav,
    read_form,
    refused,
    renderer_of,
    require_scope,
    versioned_post,
)

# ---------------------------------------------------------------------------- editor


def concept_page(request: Request) -> Response:
    """GET /studio/knowledge/<name>: the editor, preview, links and history (and, right
    after a resolution whose claim no longer matches the name, the offer to rename it).
    """
    scope, stored = concept_of(request)
    offer = request.session.pop(resolve.RENAME_KEY, None) if "session" in request.scope else None
    if not isinstance(offer, dict) or offer.get("name") != stored.concept.name \
            or offer.get("version") != stored.version:
        offer = None
    return _editor(request, scope, stored, rename_offer=offer)


def _editor(
    request: Request, scope: Scope, stored: StoredConcept, *, text: str | None = None,
    version: int | None = None, error: str | None = None, error_line: int | None = None,
    status: int = 200, rename_offer: dict[str, object] | None = None,
) -> Response:
    """The editor page; `text`/`version`/`error` re-show an operator's refused edit."""
    concept = stored.concept
    name = concept.name
    markdown = stored.markdown if text is None else text
    links = [{"name": target, "href": concept_url(target, scope.agent, scope.tenant),
              "resolved": scope.store.get(scope.agent, target) is not None}
             for target in concept.links]
    history = [{
        "number": v.version, "created_at": v.created_at, "reason": v.reason, "actor": v.actor,
        "session_id": v.session_id, "current": v.version == stored.version,
        "href": concept_url(name, scope.agent, scope.tenant, f"/versions/{v.version}"),
    } for v in scope.store.versions(scope.agent, name)]
    return renderer_of(request).page(request, "editor.html", {
        **nav(scope),
        "name": name,
        "concept": concept,
        "confidence": format_confidence(concept.confidence),
        "version": stored.version if version is None else version,
        "current_version": stored.version,
        "markdown": markdown,
        "lines": line_count(markdown),
        "error": error,
        "error_line": error_line,
        "preview": preview(concept.body, scope.agent, scope.tenant),
        "links": links,
        "history": history,
        # --- one idea, one name (issue 15): the names it was proposed under, held candidates
        "aliases": scope.store.aliases(scope.agent, name),
        "possible_duplicates": [(held, _differs(concept, held))
                                for held in scope.store.possible_duplicates(scope.agent, name)],
        "action": concept_url(name, scope.agent, scope.tenant),
        "delete_href": concept_url(name, scope.agent, scope.tenant, "/delete"),
        "approve_action": concept_url(name, scope.agent, scope.tenant, "/approve"),
        "dismiss_action": concept_url(name, scope.agent, scope.tenant, "/dismiss"),
        "rename_offer": rename_offer,
        "rename_action": concept_url(name, scope.agent, scope.tenant, "/rename"),
        **resolve.claims_context(scope, stored),
        **evidence.context(scope, stored),
    }, status=status)


def _differs(concept: Concept, held: PossibleDuplicate) -> str:
    """What a held candidate states that `concept` does not, for the operator ("states other
    values: R$ 299 here, R$ 199 on record"; "" when no value differs).
    """
    values = values_differ(concept, Candidate(held.name, held.description, held.type, held.body))
    return f"states other values: {values}" if values else ""


async def concept_save(request: Request) -> Response:
    """POST /studio/knowledge/<name>: validate and save the operator's markdown (reason edit)."""
    form = await read_form(request)
    text = form.get("markdown")
    if not isinstance(text, str):
        raise HTTPException(400, "the form has no 'markdown' field")
    expected = int_field(form, "version")
    return await run_in_threadpool(_save, request, text.replace("\r\n", "\n"), expected)


def _save(request: Request, text: str, expected: int) -> Response:
    try:
        return _save_or_refuse(request, text, expected)
    except RunTimeFailure as exc:  # a full or read-only disk, a busy or damaged database
        return _not_saved(request, text, expected, exc)


def _not_saved(request: Request, text: str, expected: int, exc: RunTimeFailure) -> Response:
    """503: the save failed for a reason outside the operator's text; the text is kept.

    The editor is shown again with the text and the reason; if even reading the concept
    fails, an error page shows the reason and the text, to copy.
    """
    message = f"Not saved: {exc}. Your text is kept below; save again once this is fixed."
    try:
        scope = require_scope(request)
        current = scope.store.get(scope.agent, request.path_params["name"])
        if current is not None:
            return _editor(request, scope, current, text=text, version=expected, error=message,
                           status=503)
    except (RunTimeFailure, HTTPException):
        pass
    return renderer_of(request).error(request, 503, message, kept_text=text,
                                      kept_lines=line_count(text))


def _save_or_refuse(request: Request, text: str, expected: int) -> Response:
    scope = require_scope(request)
    name = request.path_params["name"]
    current = scope.store.get(scope.agent, name)
    if current is None:
        if scope.store.versions(scope.agent, name):  # deleted since it was loaded
            return _stale(request, scope, name, text)
        raise HTTPException(404, f"agent {scope.agent!r} has no concept {name!r}")
    try:
        concept = parse(text)
        if concept == current.concept and expected == current.version:
            flash(request, "No changes: nothing was saved.")
            return RedirectResponse(concept_url(name, scope.agent, scope.tenant), 303)
        saved = scope.store.edit(scope.agent, name, text, expected_version=expected, actor=ACTOR)
    except StaleVersion:
        return _stale(request, scope, name, text, expected)
    except ConceptFormatError as exc:
        return _editor(request, scope, current, text=text, version=expected,
                       error=str(exc), error_line=exc.line, status=422)
    except NotFound:
        return _stale(request, scope, name, text)
    except UserError as exc:  # the new name is taken, or invalid for this store
        match = LINE_RE.match(str(exc))
        return _editor(request, scope, current, text=text, version=expected, error=str(exc),
                       error_line=int(match.group(1)) if match else None, status=422)
    notes = [f"Saved version {saved.version}."]
    if current.concept.in_conflict and not saved.concept.in_conflict:
        notes.append("The conflict is resolved.")
    if current.concept.provenance != "policy" and saved.concept.provenance == "policy":
        notes.append("Promoted to policy.")
    if saved.concept.name != name:
        notes.append(f"Renamed from {name}.")
    flash(request, " ".join(notes))
    return RedirectResponse(concept_url(saved.concept.name, scope.agent, scope.tenant), 303)


def _stale(request: Request, scope: Scope, name: str, text: str, expected: int | None = None) -> Response:
    """409: someone wrote `name` after the operator loaded it (or the form names a version
    it never had: `expected` beyond the current one); show both texts and the diff.
    """
    current = scope.store.get(scope.agent, name)
    on_record = current.markdown if current is not None else ""
    label = f"on record (version {current.version})" if current is not None else "deleted"
    return renderer_of(request).page(request, "conflict.html", {
        **concept_nav(scope, name),
        "current": current,
        "never": expected if current is not None and expected is not None and expected > current.version else None,
        "on_record": on_record,
        "text": text,
        "lines": line_count(text),
        "diff": diff(on_record, text, label, "your text"),
        "action": concept_url(name, scope.agent, scope.tenant),
    }, status=409)


# ---------------------------------------------------------------------------- versions


def version_page(request: Request) -> Response:
    """GET /studio/knowledge/<name>/versions/<n>: one version, its diff to the current one."""
    scope = require_scope(request)
    name = request.path_params["name"]
    number = request.path_params["number"]
    if not 0 < number < 2**53:
        raise HTTPException(404, f"concept '{name}' has no version {str(number)[:20]}")
    try:
        old = scope.store.version(scope.agent, name, number)
    except NotFound as exc:
        raise HTTPException(404, str(exc)) from None
    current = scope.store.get(scope.agent, name)
    try:
        body = parse(old.markdown).body
    except ConceptFormatError:  # never for versions this store wrote; show the raw text
        body = old.markdown
    current_label = f"current (version {current.version})" if current else "current (deleted)"
    return renderer_of(request).page(request, "version.html", {
        **concept_nav(scope, name),
        "version": old,
        "current": current,
        "is_current": current is not None and current.version == number,
        "diff": diff(old.markdown, current.markdown if current else "",
                     f"version {number}", current_label),
        "preview": preview(body, scope.agent, scope.tenant),
        "lines": line_count(old.markdown),
        "restore_action": concept_url(name, scope.agent, scope.tenant, "/restore"),
        "restore_number": number - 1 if old.reason == "delete" else number,
    })


async def concept_restore(request: Request) -> Response:
    """POST /studio/knowledge/<name>/restore: make a version current again (reason restore)."""
    return await versioned_post(request, _restore)


def _restore(request: Request, scope: Scope, name: str, number: int) -> Response:
    try:
        old = scope.store.version(scope.agent, name, number)
        if old.reason == "delete":
            raise HTTPException(400, f"version {number} is a delete marker; restore the version "
                                     "before it")
        saved = scope.store.restore(scope.agent, name, number, actor=ACTOR, stamp=True)
    except NotFound as exc:
        raise HTTPException(404, str(exc)) from None
    except UserError as exc:
        raise HTTPException(409, str(exc)) from None
    flash(request, f"Restored version {number} as version {saved.version}.")
    return RedirectResponse(concept_url(name, scope.agent, scope.tenant), 303)


async def concept_rename(request: Request) -> Response:
    """POST /studio/knowledge/<name>/rename: give the concept the form's ``name`` (reason
    edit; its history moves with it), then show it under that name.
    """
    form = await read_form(request)
    expected = int_field(form, "version")
    wanted = form.get("name")
    if not isinstance(wanted, str) or not wanted.strip():
        raise HTTPException(400, "the form has no 'name' field")
    return await run_in_threadpool(_rename, request, wanted.strip(), expected)


def _rename(request: Request, wanted: str, expected: int) -> Response:
    scope = require_scope(request)
    name = request.path_params["name"]
    current = scope.store.get(scope.agent, name)
    if current is None:
        raise HTTPException(404, f"no concept {name!r}")
    try:
        check_name(wanted)
        markdown = serialize(current.concept.replace(name=wanted))
        saved = scope.store.edit(scope.agent, name, markdown, expected_version=expected, actor=ACTOR)
    except StaleVersion as exc:
        return refused(request, scope, name, f"{exc}. Nothing was renamed: review the concept first.")
    except (InvalidName, ConceptFormatError, UserError) as exc:
        raise HTTPException(400, f"cannot rename {name} to {wanted!r}: {exc}") from None
    flash(request, f"Renamed {name} to {saved.concept.name} (version {saved.version}; its history moved with it).")
    return RedirectResponse(concept_url(saved.concept.name, scope.agent, scope.tenant), 303)


# ---------------------------------------------------------------------------- delete


def delete_page(request: Request) -> Response:
    """GET /studio/knowledge/<name>/delete: ask for confirmation."""
    scope, stored = concept_of(request)
    return renderer_of(request).page(request, "delete.html", {
        **concept_nav(scope, stored.concept.name),
        "version": stored.version,
        "concept": stored.concept,
        "action": concept_url(stored.concept.name, scope.agent, scope.tenant, "/delete"),
    })


async def concept_delete(request: Request) -> Response:
    """POST /studio/knowledge/<name>/delete: delete (history kept), fire knowledge_deleted."""
    return await versioned_post(request, _delete)


def _delete(request: Request, scope: Scope, name: str, expected: int) -> Response:
    try:
        memory_of(request).delete(name, agent=scope.agent, actor=ACTOR, tenant=scope.tenant,
                                expected_version=expected)
    except StaleVersion as exc:
        return refused(request, scope, name, f"{exc}. Nothing was deleted.")
    flash(request, f"Deleted {name}. Its history is kept: restore it below.")
    return RedirectResponse(url("/studio/deleted", agent=scope.agent, tenant=scope.tenant), 303)
