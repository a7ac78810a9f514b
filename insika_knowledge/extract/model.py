"""The models behind extraction and merging: a live one through instructor, and replay.

A model spec is a string:

- ``replay:PATH``: answers recorded in a JSON file (see `ReplayModel`), offline;
- anything else is an instructor provider string such as ``openai/gpt-4o-mini``;
  an OpenAI-compatible server is reached with ``base_url`` (or ``$OPENAI_BASE_URL``).

Every failure is raised as `ModelFailure` with a distinct ``outcome``; callers record
it per turn as retryable and never let it reach the engine. This module is the only
user of instructor.
"""

from __future__ import annotations

import json
import logging
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Literal, Protocol

from pydantic import BaseModel, ConfigDict, ValidationError, model_validator

from insika_knowledge.errors import ModelFailure, UserError
from insika_knowledge.extract.prompt import extraction_messages, merge_messages

# instructor logs each failed model call at ERROR, which Python prints when the application
# set no logging up ("Error initializing nosuchprovider client..."), beside the outcome the
# memory returns for it. A handler that drops them stops that print only: an application's
# own logging still receives them (they propagate).
logging.getLogger("instructor").addHandler(logging.NullHandler())
log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ExtractionRequest:
    """One turn to extract from: who, which turn, the messages, and the agent's settings.

    ``known`` lists ``(name, description)`` of the agent's concepts most relevant to the
    turn, best first: the prompt shows them so the model reuses a name for the same idea.
    """

    agent: str
    session_id: str
    turn_id: str
    messages: list[dict[str, Any]]
    types: tuple[str, ...]
    pack_prompt: str | None = None
    known: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class MergeRequest:
    """A non-identical repeat sighting of `name`: the body on record and the new one."""

    agent: str
    session_id: str
    name: str
    old_body: str
    new_body: str
    limit: int


@dataclass(frozen=True)
class MergeAnswer:
    """The consolidator's verdict; `body` is the merged statement when related."""

    verdict: Literal["related", "contradicting"]
    body: str | None = None


class ConceptModel(Protocol):
    """What extraction and consolidation need of a model."""

    def propose(self, request: ExtractionRequest) -> list[Any]:
        """The model's JSON array of candidates (items unvalidated).

        Raises:
            ModelFailure: timeout, rate limit, malformed or empty answer, other errors.
        """
        ...

    def merge(self, request: MergeRequest) -> MergeAnswer:
        """The model's verdict on two bodies of one name.

        Raises:
            ModelFailure: as for `propose`; the caller then treats it as contradicting.
        """
        ...


class _Proposals(BaseModel):
    """The extraction answer: a JSON array (or ``{"concepts": [...]}``) of objects."""

    model_config = ConfigDict(extra="forbid")
    concepts: list[Any]

    @model_validator(mode="before")
    @classmethod
    def _bare_array(cls, value: Any) -> Any:
        return {"concepts": value} if isinstance(value, list) else value


class _Verdict(BaseModel):
    verdict: Literal["related", "contradicting"]
    body: str | None = None


#: An Anthropic answer's limit in tokens (the messages API requires one; instructor's default).
ANTHROPIC_MAX_TOKENS: Final = 4096


class InstructorModel:
    """A live model called through instructor in JSON mode.

    Args:
        spec: instructor provider string, e.g. ``openai/gpt-4o-mini``.
        base_url: the provider's endpoint: an OpenAI-compatible one for ``openai/``
            models, an Anthropic-compatible one (without ``/v1``) for ``anthropic/``
            models (None = the provider's default, ``$OPENAI_BASE_URL`` or
            ``$ANTHROPIC_BASE_URL``).
        api_key: None = the provider's usual environment variable.
        timeout_s: per-request timeout in seconds: a reply still arriving after it is cut
            (`replies.ReplyTooSlow`, recorded as ``model_timeout``), however steadily it trickles.
        max_retries: instructor re-asks on a malformed answer this many times.
    """

    def __init__(
        self,
        spec: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout_s: float = 60.0,
        max_retries: int = 1,
    ):
        self.spec = spec
        self.base_url = base_url
        self.api_key = api_key
        self.timeout_s = timeout_s
        self.max_retries = max_retries
        self._client: Any = None

    def check(self) -> None:
        """Build the provider client now, so an unusable model fails before any work.

        Raises:
            UserError: the provider is unknown, its SDK is missing, or its client cannot
                be built (e.g. ``foo/bar``); or an ``openai/`` model has no API key
                (``$OPENAI_API_KEY``) and no base URL (``$OPENAI_BASE_URL``) to a server
                that may need none, or an ``anthropic/`` model has none
                (``$ANTHROPIC_API_KEY``).
        """
        missing = self._missing_key()
        if missing:
            raise UserError(missing + (" (or, for a server that needs none, its base URL: $OPENAI_BASE_URL, "
                                       "or --base-url where the command has it)" if self._is("openai") else ""))
        try:
            self._get_client()
        except UserError:
            raise
        except Exception as exc:
            raise UserError(f"cannot use model {self.spec!r}: {type(exc).__name__}: {exc}"[:500]) from None

    def warm(self) -> None:
        """Build the provider client now (its SDK is imported, which takes seconds the first
        time), so a call's time limit is the model's own; a failure is left for the first
        call to report (as `model_error`), as before.
        """
        try:
            self._get_client()
        except Exception as exc:  # the call reports it
            log.debug("model client for %s not built yet: %s", self.spec, exc)

    def _get_client(self) -> Any:
        if self._client is None:
            import instructor

            kwargs: dict[str, Any] = {"mode": instructor.Mode.JSON}
            if self.base_url:
                kwargs["base_url"] = self.base_url
            if self.api_key:
                kwargs["api_key"] = self.api_key
            provider, _, _ = self.spec.partition("/")
            from insika_knowledge.replies import MODEL_REPLY_MAX_BYTES, capped_transport  # httpx, as the SDKs

            if provider == "openai":
                import openai

                client = openai.OpenAI(
                    base_url=self.base_url, api_key=self.api_key or _openai_key(),
                    timeout=self.timeout_s, max_retries=0,
                    http_client=openai.DefaultHttpxClient(
                        transport=capped_transport(openai.DefaultHttpxClient, MODEL_REPLY_MAX_BYTES,
                                                   self.timeout_s)),
                )
                self._client = instructor.from_openai(client, mode=instructor.Mode.JSON)
                self._model = self.spec.partition("/")[2]
            elif provider == "anthropic":  # instructor's own builder passes base_url to each call
                try:
                    import anthropic
                except ImportError:
                    raise UserError(f"cannot use model {self.spec!r}: the anthropic package is not "
                                    "installed (pip install anthropic, or this package's [anthropic] extra)") from None
                messages_client = anthropic.Anthropic(
                    base_url=self.base_url, api_key=self.api_key, timeout=self.timeout_s, max_retries=0,
                    http_client=anthropic.DefaultHttpxClient(
                        transport=capped_transport(anthropic.DefaultHttpxClient, MODEL_REPLY_MAX_BYTES,
                                                   self.timeout_s)))
                self._client = instructor.from_anthropic(messages_client, mode=instructor.Mode.JSON,
                                                         max_tokens=ANTHROPIC_MAX_TOKENS)
                self._model = self.spec.partition("/")[2]
            else:
                auto = logging.getLogger("instructor.auto_client")
                before = auto.level
                auto.setLevel(logging.CRITICAL)  # its ERROR line says what the UserError below says
                try:
                    self._client = instructor.from_provider(self.spec, **kwargs)
                except Exception as exc:  # unknown provider, missing SDK or key
                    raise UserError(f"cannot use model {self.spec!r}: {exc}") from None
                finally:
                    auto.setLevel(before)
                self._model = self.spec.partition("/")[2]
        return self._client

    def _is(self, provider: str) -> bool:
        return self.spec.partition("/")[0] == provider

    def _missing_key(self) -> str:
        """What to set when the model has no API key, or ``""``: an ``openai/`` model with no
        base URL to a server that may need none, an ``anthropic/`` model always (its SDK sends
        no request without a key or a token).
        """
        if self.api_key:
            return ""
        if self._is("openai") and not _key_set("OPENAI_API_KEY") \
                and not (self.base_url or os.environ.get("OPENAI_BASE_URL")):
            return f"model {self.spec!r} needs an API key: set OPENAI_API_KEY"
        if self._is("anthropic") and not (_key_set("ANTHROPIC_API_KEY") or _key_set("ANTHROPIC_AUTH_TOKEN")):
            return f"model {self.spec!r} needs an API key: set ANTHROPIC_API_KEY"
        return ""

    def _call(self, response_model: type[BaseModel], messages: list[dict[str, str]]) -> Any:
        missing = self._missing_key()
        if missing:  # said as such, not as the connection error the SDK would give offline
            raise ModelFailure("model_error", missing + (" (or $OPENAI_BASE_URL for a server that needs none)"
                                                         if self._is("openai") else ""),
                               transient=False, configuration=True)
        client = self._get_client()
        try:
            return client.chat.completions.create(
                model=self._model,
                response_model=response_model,
                messages=messages,
                max_retries=self.max_retries,
                timeout=self.timeout_s,
            )
        except Exception as exc:  # classified into a recorded, retryable outcome
            raise classify_failure(exc) from exc

    def propose(self, request: ExtractionRequest) -> list[Any]:  # noqa: D102
        messages = extraction_messages(request.messages, request.types, request.pack_prompt,
                                       known=request.known)
        return list(self._call(_Proposals, messages).concepts)

    def merge(self, request: MergeRequest) -> MergeAnswer:  # noqa: D102
        messages = merge_messages(request.name, request.old_body, request.new_body, request.limit)
        answer = self._call(_Verdict, messages)
        return MergeAnswer(answer.verdict, answer.body)


def _openai_key() -> str:
    return os.environ.get("OPENAI_API_KEY") or "not-set"


def _key_set(variable: str) -> bool:
    return bool(os.environ.get(variable, "").strip())


#: HTTP statuses below 500 that say "try again" (request timeout, conflict, too many requests).
_TRANSIENT_STATUS: Final = frozenset({408, 409, 429})
#: HTTP statuses that say the model cannot be used as configured, whatever the turn: the key
#: is refused (401), not allowed this model (403), or the model does not exist (404).
_CONFIGURATION_STATUS: Final = frozenset({401, 403, 404})


def _endpoint(request: object) -> str:
    """The address a failed request went to, without its query (``http://127.0.0.1:9/v1/chat/
    completions``): which base URL did not answer. ``""`` when the error carries no request.
    """
    url = getattr(request, "url", None)
    scheme, host, path = (getattr(url, k, None) for k in ("scheme", "host", "path"))
    if not (isinstance(scheme, str) and isinstance(host, str) and host):
        return ""
    port = getattr(url, "port", None)
    return f"{scheme}://{host}{f':{port}' if isinstance(port, int) else ''}{path if isinstance(path, str) else ''}"


def classify_failure(exc: BaseException) -> ModelFailure:
    """Map an exception from a model call to a `ModelFailure` with a distinct outcome.

    Outcomes: ``model_timeout``, ``model_rate_limited``, ``model_empty``,
    ``model_malformed``, ``model_error``. The OpenAI and Anthropic SDKs' errors are told
    apart by the class names both define (``APITimeoutError``, ``RateLimitError``,
    ``APIStatusError`` with its ``status_code``, ``APIConnectionError``), anywhere in the
    exception's chain; a reply over `replies.MODEL_REPLY_MAX_BYTES` (or in an encoding not
    read) is a ``model_error`` that says so (not transient: the same request would be
    answered alike).
    """
    chain: list[BaseException] = []
    node: BaseException | None = exc
    while node is not None and node not in chain:
        chain.append(node)
        node = node.__cause__ or node.__context__
    from insika_knowledge.replies import ReplyTooSlow, refused  # httpx, imported by the SDK that raised `exc`

    attempts = int(getattr(exc, "n_attempts", 1) or 1)
    cut = refused(exc)
    if isinstance(cut, ReplyTooSlow):
        return ModelFailure("model_timeout", str(cut), attempts=attempts)
    if cut is not None:  # said as such, not as the connection error the SDK wraps it in
        return ModelFailure("model_error", str(cut), attempts=attempts, transient=False)
    raw = _last_text(exc)
    for err in chain:
        kinds = {c.__name__ for c in type(err).__mro__}
        status = getattr(err, "status_code", None)
        if "APITimeoutError" in kinds or isinstance(err, TimeoutError):
            return ModelFailure("model_timeout", str(err) or "timed out", attempts=attempts)
        if "RateLimitError" in kinds:
            wait = retry_after_s(getattr(getattr(err, "response", None), "headers", None))
            return ModelFailure("model_rate_limited", "HTTP 429", attempts=attempts, retry_after_s=wait)
        if "APIStatusError" in kinds and isinstance(status, int):  # a 503's Retry-After is as binding as a 429's
            wait = retry_after_s(getattr(getattr(err, "response", None), "headers", None))
            said = _provider_message(getattr(err, "body", None))
            return ModelFailure("model_error", f"HTTP {status}{f': {said}' if said else ''}",
                                attempts=attempts, retry_after_s=wait,
                                transient=status in _TRANSIENT_STATUS or status >= 500,
                                configuration=status in _CONFIGURATION_STATUS)
        if "APIConnectionError" in kinds:
            where = _endpoint(getattr(err, "request", None))
            return ModelFailure("model_error", f"connection failed{f' to {where}' if where else ''}: {err}",
                                attempts=attempts, transient=True)
    if raw is not None and not raw.strip():
        return ModelFailure("model_empty", "the model answered nothing", attempts=attempts, raw_output=raw)
    if raw is None and type(exc).__name__ == "InstructorRetryException":
        # no completion came back at all (an HTML page, a body that is not JSON): the base URL
        # is not a chat-completions API, which fails every turn alike, so the turn is held
        return ModelFailure("model_error", "the endpoint did not answer as a chat-completions API (is the base "
                            "URL right?)", attempts=attempts, transient=False, configuration=True)
    if any(isinstance(e, (ValidationError, json.JSONDecodeError, ValueError)) for e in chain) or \
            type(exc).__name__ in {"InstructorRetryException", "IncompleteOutputException"}:
        return ModelFailure(
            "model_malformed", "the answer was not the expected JSON", attempts=attempts, raw_output=raw
        )
    return ModelFailure("model_error", f"{type(exc).__name__}: {exc}"[:300], attempts=attempts)


def _provider_message(body: object) -> str:
    """The provider's own words for an HTTP error (OpenAI's ``{"error": {"message": ...}}``,
    or a top-level ``message``), on one line, at most 200 characters; "" when it gave none.
    A key it quotes is removed where the failure is kept (`learn.turn`: credentials and
    personal data are replaced before anything is stored).
    """
    error = body.get("error", body) if isinstance(body, dict) else None
    said = error.get("message") if isinstance(error, dict) else error if isinstance(error, str) else None
    return " ".join(said.split())[:200] if isinstance(said, str) else ""


#: The longest wait a provider's header is taken at (seconds): "1e400" asks for no less.
MAX_RETRY_AFTER_S: Final = 86_400.0


def _wait(seconds: float) -> float:
    """`seconds` within 0..`MAX_RETRY_AFTER_S` (NaN: 0)."""
    return min(MAX_RETRY_AFTER_S, max(0.0, seconds)) if seconds == seconds else 0.0


def retry_after_s(headers: Any) -> float | None:
    """The wait a ``Retry-After`` (or ``retry-after-ms``) header asks for, in seconds
    (0..`MAX_RETRY_AFTER_S`).

    Args:
        headers: a response's headers (any mapping with ``get``), or None.

    Returns:
        Seconds to wait, from a number of seconds or an HTTP date; None when absent or
        unreadable.
    """
    if headers is None or not hasattr(headers, "get"):
        return None
    millis = headers.get("retry-after-ms")
    try:
        if millis is not None:
            return _wait(float(millis) / 1000)
    except ValueError:
        pass
    value = headers.get("retry-after")
    if not isinstance(value, str) or not value.strip():
        return None
    try:
        return _wait(float(value))
    except ValueError:
        pass
    from email.utils import parsedate_to_datetime

    try:
        moment = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    from datetime import UTC, datetime

    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return _wait((moment - datetime.now(UTC)).total_seconds())


def _last_text(exc: BaseException) -> str | None:
    """The text of the answer instructor last read (an OpenAI chat completion's message, an
    Anthropic message's text blocks), ``""`` for an empty one, None for no answer read.
    """
    completion = getattr(exc, "last_completion", None)
    blocks = getattr(completion, "content", None)
    if isinstance(blocks, list):  # Anthropic: a list of content blocks
        return "".join(text for block in blocks if isinstance(text := getattr(block, "text", None), str))
    try:
        content = completion.choices[0].message.content  # type: ignore[union-attr]
    except (AttributeError, IndexError, TypeError):
        return None
    if content is None:
        return ""
    return content if isinstance(content, str) else None


class ReplayModel:
    """Answers recorded in a JSON file, through the same validation path as a live model.

    File shape::

        {"extract": {"<session_id>": [candidate, ...] | "<raw text>"
                                     | {"<turn_id>": [...] | "<raw text>", "*": ...}},
         "consolidate": {"<session_id>": {"<name>": {"verdict": "related", "body": "..."}}}}

    A raw-text answer is decoded as JSON here, so a recorded malformed answer fails
    exactly like a live one (``model_malformed``). A session without an answer gets
    ``model_empty``; a merge without an answer counts as contradicting.

    Every value is checked when the file is loaded, so a bad file fails at once (naming
    the bad key), never in the middle of a run.

    Raises:
        UserError: the file is missing or is not such a JSON document.
    """

    def __init__(self, path: str | Path):
        self.path = Path(path)
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise UserError(f"replay file {self.path} does not exist") from None
        except (OSError, json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise UserError(f"replay file {self.path} is not valid JSON: {exc}") from None
        except RecursionError:
            raise UserError(f"replay file {self.path} is nested too deeply to read") from None
        except ValueError as exc:  # an integer over Python's 4,300 digits, and the like
            what = "an integer of more than 4,300 digits" if "digits" in str(exc) else str(exc).splitlines()[0][:120]
            raise UserError(f"replay file {self.path} holds a value that cannot be read: {what}") from None
        if not isinstance(data, dict) or not isinstance(data.get("extract", {}), dict) \
                or not isinstance(data.get("consolidate", {}), dict):
            raise UserError(
                f"replay file {self.path} must be an object whose 'extract' and 'consolidate' (each optional) "
                "are objects"
            )
        unknown = sorted(str(k) for k in data if k not in ("extract", "consolidate"))
        if unknown:  # a misspelt key ("extracts") would leave every answer out, silently
            raise UserError(f"replay file {self.path}: unknown key(s) {', '.join(unknown)}; "
                            "expected 'extract' and 'consolidate'")
        self.extract_answers: dict[str, Any] = data.get("extract", {})
        self.merge_answers: dict[str, Any] = data.get("consolidate", {})
        self._check_shape()

    def _check_shape(self) -> None:
        def bad(where: str, expected: str) -> UserError:
            return UserError(f"replay file {self.path}: {where} must be {expected}")

        for session, answer in self.extract_answers.items():
            where = f"extract[{json.dumps(session, ensure_ascii=False)[:80]}]"
            if isinstance(answer, dict):
                for turn, turn_answer in answer.items():
                    if not isinstance(turn_answer, (list, str)):
                        raise bad(f"{where}[{json.dumps(turn, ensure_ascii=False)[:80]}]",
                                  "a list of candidates or the raw answer text")
            elif not isinstance(answer, (list, str)):
                raise bad(where, "a list of candidates, the raw answer text, or an object "
                                 "of those per turn id")
        for session, merges in self.merge_answers.items():
            where = f"consolidate[{json.dumps(session, ensure_ascii=False)[:80]}]"
            if not isinstance(merges, dict):
                raise bad(where, "an object of merge answers per concept name")
            for name, merge in merges.items():
                if not isinstance(merge, dict):
                    raise bad(f"{where}[{json.dumps(name, ensure_ascii=False)[:80]}]",
                              'an object like {"verdict": "related", "body": "..."}')

    def check(self) -> None:
        """Nothing to build: the file was read and checked when the model was made."""

    def propose(self, request: ExtractionRequest) -> list[Any]:  # noqa: D102
        answer = self.extract_answers.get(request.session_id)
        if isinstance(answer, dict):
            answer = answer.get(request.turn_id, answer.get("*"))
        if answer is None:
            raise ModelFailure("model_empty", f"no recorded answer for session {request.session_id}")
        if isinstance(answer, str):
            if not answer.strip():
                raise ModelFailure("model_empty", "the recorded answer is empty", raw_output=answer)
            try:
                answer = json.loads(answer)
            except (json.JSONDecodeError, RecursionError, ValueError):  # an integer over 4,300 digits too
                raise ModelFailure(
                    "model_malformed", "the recorded answer is not JSON", raw_output=answer
                ) from None
        try:
            return list(_Proposals.model_validate(answer).concepts)
        except ValidationError:
            raise ModelFailure("model_malformed", "the recorded answer is not a JSON array") from None

    def merge(self, request: MergeRequest) -> MergeAnswer:  # noqa: D102
        answer = self.merge_answers.get(request.session_id, {}).get(request.name)
        if answer is None:
            raise ModelFailure("model_empty", f"no recorded merge for {request.name}")
        try:
            verdict = _Verdict.model_validate(answer)
        except ValidationError:
            raise ModelFailure("model_malformed", "the recorded merge answer is invalid") from None
        return MergeAnswer(verdict.verdict, verdict.body)


def check_usable(model: object) -> None:
    """Check that `model` can be called, for a command that refuses to start otherwise: a
    model with a ``check`` method (`InstructorModel.check`, `ReplayModel.check`) runs it;
    any other model (or None) passes.

    Raises:
        UserError: as the model's ``check`` (an unknown provider, a missing SDK, an
            ``openai/`` model without a key or a base URL, a replay file's error).
    """
    check = getattr(model, "check", None)
    if callable(check):
        check()


def load_model(spec: str | None, *, base_url: str | None = None, api_key: str | None = None,
               timeout_s: float = 60.0) -> ConceptModel | None:
    """Build the model a spec names; None when `spec` is None (no model configured).

    Raises:
        UserError: a replay file is missing or invalid; `spec` is not ``provider/model`` (either
            part empty); `base_url` is not an ``http://`` or ``https://`` URL with a host.
    """
    if spec is None:
        return None
    if spec.startswith("replay:"):
        return ReplayModel(spec.removeprefix("replay:"))
    provider, slash, name = spec.partition("/")
    if not slash or not provider.strip() or not name.strip():
        raise UserError(
            f"model {spec!r} is not a provider string (provider/model): use e.g. 'openai/gpt-4o-mini' "
            "or 'replay:PATH'"
        )
    if base_url is not None:
        check_base_url(base_url)
    return InstructorModel(spec, base_url=base_url, api_key=api_key, timeout_s=timeout_s)


def check_base_url(base_url: str, where: str = "base URL") -> None:
    """Refuse a base URL no request could reach, before any work.

    Raises:
        UserError: `base_url` is not ``http://`` or ``https://`` with a host (its text and
            `where` it came from named).
    """
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(base_url.strip())
        ok = parts.scheme in ("http", "https") and bool(parts.hostname)
    except ValueError:  # e.g. an unclosed IPv6 bracket
        ok = False
    if not ok:
        raise UserError(f"{where} {base_url!r} is not an http:// or https:// URL with a host "
                        "(e.g. http://127.0.0.1:8000/v1)")
