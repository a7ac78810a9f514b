"""The turn loop: one finished turn in, the model asked, each candidate screened and recorded.

A model failure (any exception the model raises, or an answer that is not a list) is the
turn's outcome (retryable), recorded and returned, never raised.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from insika_knowledge import consolidate, trust
from insika_knowledge.candidate import Candidate
from insika_knowledge.config import KnowledgeConfig
from insika_knowledge.consolidate import Outcome
from insika_knowledge.errors import ModelFailure, UserError
from insika_knowledge.events import (
    EventBus,
    KnowledgeExtracted,
)
from insika_knowledge.extract.candidates import MALFORMED_DROPS, screen
from insika_knowledge.extract.model import ConceptModel, ExtractionRequest
from insika_knowledge.ids import check_session_id
from insika_knowledge.learn.addressing import AddressingVote
from insika_knowledge.learn.known import AgentSearch, ConceptSearch, relevant_concepts
from insika_knowledge.learn.meaning import MeaningSearch
from insika_knowledge.learn.naming import record, routed
from insika_knowledge.learn.sighting import storable
from insika_knowledge.privacy import scrub
from insika_knowledge.privacy.pseudonyms import stored_ids
from insika_knowledge.privacy.redact import kept_contacts, people_named, redact
from insika_knowledge.store.base import ExtractionRecord, Store
from insika_knowledge.trust.grounding import speaker
from insika_knowledge.trust.sources import pieces as trust_pieces
from insika_knowledge.wire.messages import message_text, tool_calls

log = logging.getLogger(__name__)


@dataclass
class TurnReport:
    """What one turn's extraction did.

    Attributes:
        outcome: ``ok``, ``no_model`` or a model failure kind (``model_timeout``,
            ``model_rate_limited``, ``model_malformed``, ``model_empty``, ``model_error``).
            A model's answer whose every item was dropped for its shape
            (`extract.candidates.MALFORMED_DROPS`) is ``model_malformed``, its drops counted.
        retryable: True when the turn can be extracted again later.
        proposed: candidates the model proposed.
        dropped: reason -> candidates dropped by the gates.
        redacted: placeholder kind -> personal data items replaced.
        results: ``(concept name, outcome)`` per surviving candidate, in answer order:
            the name the sighting was recorded under (an existing concept's when the
            candidate restated it under another name; the proposed name when it was
            held as a ``possible_duplicate``).
        detail: the failure, when there is one; for an ``ok`` turn with no text and no
            tool call, says that the model was not asked (a model whose ``reads_turn`` is
            False, such as `insika_knowledge.extract.given.GivenModel`, is asked anyway).
        why: one line per dropped candidate: its position in the answer, the reason
            and what was wrong (``"candidate 0: invalid: description is 312
            characters (at most 200)"``); and one per candidate held in quarantine, by
            name (``"garantia: quarantined: no message supported it, and it states a rule
            (type, entitlement)"``, then what its quoted evidence showed when it quoted
            any: ``"(its quotes: the agent contradicts it)"``); and one per candidate held
            as a conflict, by name, with its reason (``"prazo: conflict: the merge model
            failed (model_malformed)"``: `consolidate.Decision.conflict_reason`); and one
            per candidate held as a
            possible duplicate (``"prazo-novo: possible_duplicate: it closely matches prazo
            (overlap 0.83) but states other values: 5 days here, 3 days on record"``:
            `consolidate.Naming.why`).
        retry_after_s: the wait the provider asked for (``Retry-After``, any HTTP error), in
            seconds (None when it did not say).
        transient: True when the model failed in a way that may pass by itself (a
            timeout, HTTP 429 or 5xx, a failed connection: `ModelFailure.transient`); the
            learning queue then tries the turn again later.
        configuration: True when the configured model cannot be used, whatever the turn:
            it has no API key, or the provider answered HTTP 401, 403 or 404
            (`ModelFailure.configuration`); the learning queue then holds the turn until the
            model answers again. (With no model configured at all, ``no_model``, it is
            False: such a deployment learns nothing by choice, and keeps no turn for later.)
    """

    session_id: str
    turn_id: str
    outcome: str = "ok"
    retryable: bool = False
    proposed: int = 0
    dropped: Counter[str] = field(default_factory=Counter)
    redacted: Counter[str] = field(default_factory=Counter)
    results: list[tuple[str, Outcome]] = field(default_factory=list)
    detail: str | None = None
    retry_after_s: float | None = None
    transient: bool = False
    configuration: bool = False
    why: list[str] = field(default_factory=list)

    def count(self, outcome: Outcome) -> int:
        """How many candidates ended with `outcome`."""
        return sum(1 for _, o in self.results if o == outcome)


def learn_turn(
    store: Store,
    agent: str,
    config: KnowledgeConfig,
    model: ConceptModel | None,
    *,
    session_id: str,
    turn_id: str,
    messages: list[dict[str, Any]],
    events: EventBus | None = None,
    index: ConceptSearch | None = None,
    meaning: MeaningSearch | None = None,
    withheld: Sequence[str] = (),
    addressing: AddressingVote | None = None,
) -> TurnReport:
    """Extract the concepts of one finished turn and consolidate them into the store.

    Args:
        store: the tenant's store.
        agent: the agent id.
        config: the agent's validated ``knowledge:`` block (``types``, ``prompt``,
            ``known_concepts``).
        model: the extraction and merge model; None records ``no_model`` and writes nothing.
        session_id: the conversation's id (becomes the concept's source; an id holding
            personal data, such as a customer's phone number, is stored as its pseudonym,
            `insika_knowledge.privacy.pseudonyms.stored_ids`, and the report names that).
        turn_id: the turn's id within the session (a replayed turn counts once).
        messages: the turn's transcript slice (normalised message dicts).
        withheld: the business's own texts the turn ran under that `messages` leave out
            (the system prompt a backfill does not show the model): the trust verdict
            reads the values they state as stated (`trust.assess`).
        events: where ``knowledge_learned`` / ``knowledge_conflict`` /
            ``knowledge_aliased`` / ``knowledge_possible_duplicate`` /
            ``knowledge_extracted`` go.
        index: the agent's index, searched for the prompt's known concepts and for a
            candidate's existing name; None = a `ScanIndex` over `store`, built on
            first need (pass the agent's own index to reuse its warm cache).
        meaning: the semantic index's neighbours (`insika_knowledge.learn.meaning`): a
            candidate under a new name close in meaning to a concept is held as its
            possible duplicate (None: the lexical close match alone).
        addressing: the reader by meaning of candidates that speak to the model
            (`insika_knowledge.learn.addressing`): what the rules of the screen keep and it
            reads as an instruction is dropped as ``instruction`` too (None: the rules alone).

    Returns:
        The turn's report. Model failures are in ``outcome``; nothing is raised for them.
        A merge call that fails transiently (a timeout, HTTP 429 or 5xx) records nothing
        for its candidate, no conflict for a claim no model judged, and the others are
        recorded: ``outcome`` is the first such failure's, ``transient`` and ``retryable``
        are True, and ``results`` holds the candidates recorded (a retry replays them).

    Raises:
        UserError: `session_id` or `turn_id` is not 1-200 printable characters without
            backticks (checked before any model call; nothing is recorded).
        InsikaError: only for a store failure that is not the model's (e.g. a full disk).
    """
    check_session_id(session_id, "session_id")
    check_session_id(turn_id, "turn_id")
    session_id, turn_id = stored_ids(store, session_id, turn_id)
    report = TurnReport(session_id=session_id, turn_id=turn_id)
    if model is None:
        report.outcome, report.retryable, report.detail = "no_model", True, "no model configured"
    elif getattr(model, "reads_turn", True) and not any(map(_readable, messages)):
        report.detail = "the turn has no text and no tool call: the model was not asked"
    else:
        search = AgentSearch(store, index)
        request = ExtractionRequest(
            agent, session_id, turn_id, messages, tuple(config.types), config.prompt,
            known=relevant_concepts(search, agent, messages, config.known_concepts),
        )
        items: Any = None
        try:
            items = model.propose(request)
            if isinstance(items, list):  # read the answer once, here: a failure reading it is the model's
                items = [dict(item) if isinstance(item, Mapping) else item for item in list(items)]
        except ModelFailure as failure:
            report.outcome, report.retryable, report.detail = failure.outcome, True, failure.detail
            report.retry_after_s, report.transient = failure.retry_after_s, failure.transient
            report.configuration = failure.configuration
        except Exception as exc:  # any other model failure: recorded, never raised; retryable
            # unless the model cannot be used at all (a provider that does not exist)
            log.info("extraction model failed for %s/%s", session_id, turn_id, exc_info=True)
            report.outcome, report.retryable = "model_error", not isinstance(exc, UserError)
            report.detail = f"{type(exc).__name__}: {_message_of(exc)}"[:300]
        else:
            if not isinstance(items, list):
                report.outcome, report.retryable = "model_malformed", True
                report.detail = f"the answer was {type(items).__name__}, not a list of candidates"
            elif items and not any(isinstance(item, dict) for item in items):  # ["a", "b"]: no candidate at all
                kinds = sorted({type(item).__name__ for item in items})
                report.outcome, report.retryable = "model_malformed", True
                report.detail = f"the answer was a list of {', '.join(kinds)}, not of candidates (objects)"
        if report.detail:  # a provider's error may quote a key or an Authorization header, a model
            # object's own failure the customer: never kept
            report.detail = _private_free(report.detail)
        if report.outcome == "ok":
            said = [(p.speaker, p.text) for p in trust_pieces(messages, speaker, message_text)]
            keep = kept_contacts(said)
            screened = screen(items, config.types, keep, people_named(said, keep))
            report.proposed = screened.proposed
            report.dropped = screened.dropped
            report.why = screened.why
            report.redacted = screened.redacted
            if addressing is not None:
                screened.candidates = _not_instructions(screened.candidates, addressing, report)
            if items and not screened.candidates and set(screened.dropped) <= MALFORMED_DROPS \
                    and getattr(model, "reads_turn", True):
                # no item of a model's answer had a candidate's shape: it held nothing usable, as
                # a malformed answer does (the turn is tried again; backfill does not mark it
                # done). Candidates a caller gave (`GivenModel`) are refused by their drops.
                report.outcome, report.retryable = "model_malformed", True
                report.detail = _private_free("no candidate in the answer had a candidate's shape: "
                                              + "; ".join(screened.why[:3]))[:300]
            merger = model if getattr(model, "merges", True) else None  # a proposal's `GivenModel`
            this_turn: set[str] = set()  # what this turn wrote: rows of one statement, never duplicates
            for first in screened.candidates:
                # of a name proposed twice, the first the business side supports (a rule,
                # then its correction: the model's order tells nothing of which stands)
                chosen: tuple[Candidate, trust.Assessment] | None = None
                for option in (first, *screened.alternates.get(first.name, ())):
                    shown = _vouching(store, agent, option, request.known)
                    judged = trust.assess(f"{option.description}\n{option.body}", option.type, messages,
                                          option.evidence, known=shown, withheld=withheld)
                    if chosen is None or not judged.quarantined:
                        chosen = (option, judged)
                    if not judged.quarantined:
                        break
                assert chosen is not None  # the first option is always chosen or replaced
                candidate, verdict = chosen
                if candidate is not first:
                    report.why.append(f"{first.name}: a later candidate of the name is learned: the business side "
                                      f"supports it, not the first")
                candidate = routed(store, agent, candidate, verdict)
                held_why: list[str] = []  # why a conflict or a possible duplicate is held
                try:
                    report.results.append(record(
                        store, agent, candidate, session_id=session_id, turn_id=turn_id,
                        model=merger, events=events, index=search, verdict=verdict, meaning=meaning,
                        why=held_why, redacted=report.redacted, written=frozenset(this_turn),
                    ))
                    name, outcome = report.results[-1]
                    if outcome == "learned" or (outcome == "replayed" and _first_written_by(store, agent, name,
                                                                                              session_id)):
                        this_turn.add(name)
                    if outcome == "quarantined":  # say why, as a drop says why, and what its quotes showed
                        quotes = f" (its quotes: {verdict.evidence})" if verdict.evidence else ""
                        report.why.append(f"{name}: quarantined: "
                                          f"{trust.held_because(verdict.supported_by, verdict.markers)}{quotes}")
                    elif outcome in ("conflict", "possible_duplicate", "unsupported") and held_why:
                        report.why.append(f"{name}: {outcome}: {held_why[-1]}")
                except ModelFailure as failure:  # the merge model failed transiently: no conflict
                    # is recorded for an unjudged claim; the others go on, and the turn is tried
                    # again (the candidates recorded now are then replayed, counted once)
                    if not report.transient:  # the first failure is the one reported
                        report.outcome, report.retryable, report.transient = failure.outcome, True, True
                        report.retry_after_s = failure.retry_after_s
                        report.detail = _private_free(f"merge of {candidate.name}: {failure.detail}")[:300]
    written = sum(1 for _, o in report.results if o not in ("replayed", "unsupported"))
    store.record_extraction(ExtractionRecord(
        agent=agent, session_id=session_id, turn_id=turn_id, outcome=report.outcome,
        retryable=report.retryable, candidates=report.proposed, written=written,
        dropped=dict(report.dropped), detail=storable(report.detail), attempted_at=store.clock(),
    ))
    if events is not None:
        events.emit(KnowledgeExtracted(
            agent=agent, session_id=session_id, turn_id=turn_id, outcome=report.outcome,
            candidates=report.proposed, written=written, dropped=dict(report.dropped),
        ))
    return report


def _first_written_by(store: Store, agent: str, name: str, session_id: str) -> bool:
    """True when concept `name` exists and its one sighting is this session's (a replayed
    turn's own concept, learned when the turn first ran: the replay means this turn's
    sighting of it is on record, so a single sighting is that one).
    """
    stored = store.get(agent, name)
    return stored is not None and stored.concept.occurrences == 1 and tuple(stored.concept.sources) == (session_id,)


def _readable(message: Any) -> bool:
    """True when `message` holds anything a model could read: text, a tool call (OpenAI's
    ``tool_calls``, the legacy ``function_call``, Anthropic's ``tool_use``) or a tool's
    result (Anthropic's ``tool_result`` part).
    """
    if message_text(message).strip():
        return True
    if not isinstance(message, Mapping):
        return False
    if tool_calls(message) or message.get("function_call"):
        return True
    content = message.get("content")
    return isinstance(content, list) and any(
        isinstance(part, Mapping) and part.get("type") in ("tool_result", "tool_use") for part in content)


def _vouching(store: Store, agent: str, candidate: Candidate, known: Sequence[tuple[str, str]]) -> list[str]:
    """The known concepts the model was shown that vouch for the values `candidate` states
    (``name: description``; `trust.grounding.unstated_values`).

    Each of them, except the concept the candidate restates: a concept vouches for the
    values of another claim (a new rule citing it, or an extension of it), but not for a
    restatement of itself, which must find its values in the turn ("Shipping takes 3 days"
    is no sighting of "Orders above $50 ship for free").
    """
    shown = [(name, f"{name}: {description}") for name, description in known]
    if not any(name == candidate.name for name, _ in shown):
        return [text for _, text in shown]
    stored = store.get(agent, candidate.name)
    restates = stored is not None and consolidate.same_claim(stored.concept, candidate)
    return [text for name, text in shown if not (restates and name == candidate.name)]


def _private_free(detail: str) -> str:
    """A failure's `detail` with credentials (`privacy.scrub`) and personal data
    (`privacy.redact.redact`: e-mails, phones, CPF, cards...) replaced, as it is stored and
    shown by ``status``.
    """
    return redact(scrub(detail)).text


def _message_of(exc: BaseException) -> str:
    """`exc`'s message, or a note that it has none readable (its ``__str__`` raised)."""
    try:
        return str(exc)
    except Exception:  # noqa: BLE001 - a model object's exception may break anywhere
        return "(its message could not be read)"


def _not_instructions(candidates: list[Candidate], addressing: AddressingVote, report: TurnReport) -> list[Candidate]:
    """`candidates` but those `addressing` reads as instructions to the model: each of those
    is counted in ``report.dropped["instruction"]`` and said in ``report.why``.
    """
    kept = []
    for candidate in candidates:
        vote = addressing.vote(candidate)
        if vote is None:
            kept.append(candidate)
            continue
        report.dropped["instruction"] += 1
        report.why.append(f"{candidate.name}: instruction: it reads as an order to the model, by meaning "
                          f"(nearest instruction of the bank: {vote[0]!r}; lead {vote[1]:.3f})")
    return kept
