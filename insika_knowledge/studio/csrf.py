"""CSRF protection: one random token per session, sent back in a hidden form field.

Every state-changing request is a POST whose form carries ``csrf``; a missing or
wrong token is refused with a 403 page before anything is read or written.
"""

from __future__ import annotations

import hmac
import secrets
from collections.abc import Mapping
from typing import Any, Final

from starlette.exceptions import HTTPException
from starlette.requests import Request

SESSION_KEY: Final = "csrf"
FIELD: Final = "csrf"


def token(request: Request) -> str:
    """The session's CSRF token, created (in the session cookie) on first use."""
    current = request.session.get(SESSION_KEY)
    if not isinstance(current, str) or not current:
        current = secrets.token_urlsafe(32)
        request.session[SESSION_KEY] = current
    return current


def check(request: Request, form: Mapping[str, Any]) -> None:
    """Refuse the request unless `form`'s ``csrf`` field equals the session's token.

    Raises:
        HTTPException: 403, when the field or the session token is missing or differs.
    """
    expected = request.session.get(SESSION_KEY)
    given = form.get(FIELD)
    if (
        not isinstance(expected, str) or not expected or not isinstance(given, str)
        or not hmac.compare_digest(given.encode(), expected.encode())
    ):
        raise HTTPException(
            403,
            "This form's security token is missing or out of date, so nothing was changed. "
            "Go back, reload the page and submit it again.",
        )
