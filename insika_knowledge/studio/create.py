"""Writing a new concept by hand: ``GET/POST /studio/new?agent=&tenant=``.

The form asks for the name, description, type, provenance (``policy`` by default: a
human states it), confidence and the markdown body. The record gets no sources and no
occurrences (no conversation has sighted it yet) and is stamped now. Saving writes
version 1 (reason ``edit``, actor ``studio``) through `SQLiteStore.create`; an invalid
field or a taken name re-shows the form with the operator's values and the problem.
"""

from __future__ import annotations

from typing import Final

from starlette.concurrency import run_in_threadpool
from starlette.datastructures import FormData
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from insika_knowledge.analysis.text import ascii_words
from insika_knowledge.concept import CONCEPT_TYPES, NAME_MAX, PROVENANCES, Concept, normalize_name, serialize
from insika_knowledge.errors import ConceptFormatError, InvalidName, UserError
from insika_knowledge.studio.render import concept_url, flash, line_count, url
from insika_knowledge.studio.scope import ACTOR, Scope, nav, read_form, renderer_of, require_scope

FIELDS: Final = ("name", "description", "type", "provenance", "confidence", "body")
DEFAULTS: Final = {"name": "", "description": "", "type": "policy", "provenance": "policy",
                   "confidence": "0.9", "body": ""}


def new_page(request: Request) -> Response:
    """GET /studio/new: an empty form."""
    scope = require_scope(request)
    return _form(request, scope, dict(DEFAULTS))


def _form(
    request: Request, scope: Scope, values: dict[str, str], *, error: str | None = None,
    field: str | None = None, status: int = 200,
) -> Response:
    return renderer_of(request).page(request, "new.html", {
        **nav(scope),
        "values": values,
        "types": CONCEPT_TYPES,
        "provenances": PROVENANCES,
        "error": error,
        "error_field": field,
        "markdown": values["body"],
        "lines": line_count(values["body"]),
        "error_line": None,
        "action": url("/studio/new", agent=scope.agent, tenant=scope.tenant),
        "list_href": url("/studio/knowledge", agent=scope.agent, tenant=scope.tenant),
    }, status=status)


async def concept_create(request: Request) -> Response:
    """POST /studio/new: validate the form and add the concept."""
    form = await read_form(request)
    return await run_in_threadpool(_create, request, _values(form))


def _values(form: FormData) -> dict[str, str]:
    values = {}
    for key in FIELDS:
        raw = form.get(key)
        values[key] = raw.replace("\r\n", "\n") if isinstance(raw, str) else ""
    values["name"] = values["name"].strip()
    values["description"] = values["description"].strip()
    values["body"] = values["body"].strip("\n")
    return values


def _create(request: Request, values: dict[str, str]) -> Response:
    scope = require_scope(request)
    try:
        concept = _concept(values, scope.store.clock())
        saved = scope.store.create(scope.agent, serialize(concept), actor=ACTOR)
    except ConceptFormatError as exc:
        return _form(request, scope, values, error=exc.problem if exc.field else str(exc),
                     field=exc.field, status=422)
    except UserError as exc:  # the name is taken
        return _form(request, scope, values, error=str(exc).split(": ", 1)[-1], field="name",
                     status=422)
    flash(request, f"Created {saved.concept.name} (version {saved.version}).")
    return RedirectResponse(concept_url(saved.concept.name, scope.agent, scope.tenant), 303)


def _concept(values: dict[str, str], now: str) -> Concept:
    """The record the form describes (validated when serialised).

    The name is made a slug (``Frete Grátis`` -> ``frete-gratis``) and written back
    into `values`, so a refused form shows it.

    Raises:
        ConceptFormatError: the confidence is not a number, or nothing usable is left of
            the name (other fields are checked by `serialize`).
    """
    try:
        confidence = float(values["confidence"])
    except ValueError:
        raise ConceptFormatError(f"{values['confidence'][:20]!r} is not a number between 0 and 1",
                                 field="confidence") from None
    name = values["name"]
    if name:
        try:
            slug = normalize_name(name)
        except InvalidName as exc:
            raise ConceptFormatError(str(exc), field="name") from None
        if len(whole := "-".join(ascii_words(name))) > NAME_MAX:  # a person's name is never cut unseen
            raise ConceptFormatError(f"a name is at most {NAME_MAX} characters as a slug; this one makes "
                                     f"{len(whole)} (shortened, it would be {slug!r})", field="name")
        name = values["name"] = slug
    return Concept(
        name=name, description=values["description"], type=values["type"],
        provenance=values["provenance"], confidence=round(confidence, 2), sources=(),
        occurrences=0, created_at=now, updated_at=now, body=values["body"],
    )
