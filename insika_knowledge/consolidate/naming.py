"""One idea, one name: under which concept a candidate's sighting is recorded.

Consolidation is keyed by the concept name, and a live model names each session's
concepts afresh ("gift-card-validity", "validade-vale-presente"...). Before a candidate
with a name no concept has is written, the write path searches the agent's concepts with
the candidate's description and body (through the agent's own index) and `name_sighting`
decides, first match wins:

1. ``KNOWN``: a concept has the candidate's name: the sighting is consolidated under it
   (`decision.decide`).
2. ``ALIASED``: the name is an alias of a concept (an earlier sighting under it was
   recorded there): consolidated under that concept.
3. ``SAME_CLAIM``: one of the best matches (`SAME_CLAIM_MATCHES`) states the same claim
   (`claims.same_claim`, the conservative rule): the sighting is recorded under that
   concept, and the proposed name is kept as its alias.
4. ``POSSIBLE_DUPLICATE``: the closest match is close (`claims.close_match`: content-term
   overlap of at least `claims.CLOSE_MATCH` with `claims.CLOSE_MATCH_SHARED` shared terms,
   or for a short rule most of its few words, values aside: a rule changed under a
   drifting name) but not the same claim: the candidate is held for a human as a possible
   duplicate; it is neither merged into the concept nor written as a second concept. A
   concept held in quarantine is no rule on record: it is never such a match. A semantic
   index may name more close matches (`meaning`: concepts close in meaning, with their
   similarity), held the same way; with one, a close match sharing under `CLOSE_MATCH` of
   the claim's terms must also be in the candidate's neighbourhood by meaning (`apart`: its
   nearest concept, or the two or three that stand apart together): a new fact of the
   store's domain ("Boleto vence em 3 dias" in a store of delivery times, returns and
   refunds) is about as close to several concepts, a rule changed under a new name far
   closer to its old version. A concept the same turn wrote (`written`) is no such match
   when the two read as two rows of what one message stated at once ("O frete para a
   região Sul custa R$ 15, para a região Nordeste R$ 30": `_rows_of_one_turn`), not as
   two versions of one claim (a message that corrects itself, "R$ 15, ou melhor, R$ 18",
   or a model that dropped the rows' subjects: still held). With no semantic index, one of
   the best matches whose body and the candidate's read as two versions of one claim
   (`merge.versions`: "O estorno é feito no cartão" / "... em crédito na loja", three
   words in common) is held the same way, when both are short (`SHORT_VERSION_TERMS`):
   short rules share too few words to be close.
5. ``NEW``: nothing close: a new concept under the proposed name.

Pure: the write path (`insika_knowledge.learn`) does the search, the reads and the writes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Final

from insika_knowledge.analysis.arrangement import rearranged
from insika_knowledge.analysis.structure import claim_terms
from insika_knowledge.analysis.text import announces_change, negation_count
from insika_knowledge.candidate import Candidate
from insika_knowledge.concept import Concept, claim_text
from insika_knowledge.consolidate.claims import CLOSE_MATCH, close_match, same_claim, similarity, values_differ
from insika_knowledge.consolidate.merge import versions

#: How many of the best search matches are checked for the same claim.
SAME_CLAIM_MATCHES: Final = 3
#: How many concepts the write path searches for (best first) before naming a sighting.
MATCHES_SEARCHED: Final = 5


class NameRule(StrEnum):
    """The naming rule that decided a sighting (see the module doc)."""

    KNOWN = "known"
    ALIASED = "aliased"
    SAME_CLAIM = "same_claim"
    POSSIBLE_DUPLICATE = "possible_duplicate"
    NEW = "new"


@dataclass(frozen=True, slots=True)
class Naming:
    """Where one sighting goes.

    Attributes:
        rule: the rule that decided it.
        name: the concept to record the sighting under (``KNOWN``, ``ALIASED``,
            ``SAME_CLAIM``, ``NEW``), or the concept the held candidate closely matches
            (``POSSIBLE_DUPLICATE``).
        similarity: how close the matched concept is, 0..1 (``SAME_CLAIM`` and
            ``POSSIBLE_DUPLICATE``; 0 otherwise): the content-term overlap, or the cosine
            for a close match the semantic index named (`meaning`).
        why: why a ``POSSIBLE_DUPLICATE`` is held, in words for a person ("it closely
            matches gift-card-validity (overlap 1.00) but states other values: 24 months
            here, 12 months on record"); "" for the other rules.
    """

    rule: NameRule
    name: str
    similarity: float = 0.0
    why: str = ""

    @property
    def alias(self) -> bool:
        """True when the proposed name becomes an alias of `name` (``SAME_CLAIM``)."""
        return self.rule is NameRule.SAME_CLAIM


def name_sighting(
    candidate: Candidate,
    *,
    known: bool,
    alias_of: str | None = None,
    matches: Sequence[Concept] = (),
    held: frozenset[str] = frozenset(),
    meaning: Sequence[tuple[Concept, float]] = (),
    written: frozenset[str] = frozenset(),
    apart: Callable[[str], bool] | None = None,
) -> Naming:
    """Decide under which concept `candidate`'s sighting is recorded (the module's rules).

    Args:
        candidate: the screened candidate, under the name the model proposed.
        known: a concept of the agent has ``candidate.name`` now.
        alias_of: the concept ``candidate.name`` is an alias of (and which exists), or None.
        matches: the agent's concepts that best match the candidate's description and
            body, best first (the search's order); a concept called ``candidate.name``
            is ignored.
        held: the names among `matches` held in quarantine (never a close match).
        meaning: concepts a semantic index finds close in meaning to the candidate, with
            their similarity 0..1 (the seam for such an index; none by default): each that
            is not the same claim is a close match too.
        written: the concepts the candidate's own turn wrote before it (rule 4 holds it
            against one only when the two read as versions of one claim; rule 3, the same
            claim, still applies).
        apart: with a semantic index, whether a concept may be held as a close match of
            fewer than `CLOSE_MATCH` shared terms: it is in the candidate's neighbourhood by
            meaning (`learn.meaning.Close.apart`: a new fact of the same domain is as close
            to several concepts, a changed rule to its own); None: any.

    Returns:
        The naming decision.
    """
    if known:
        return Naming(NameRule.KNOWN, candidate.name)
    if alias_of is not None:
        return Naming(NameRule.ALIASED, alias_of)
    others = [m for m in matches if m.name != candidate.name]
    for match in others[:SAME_CLAIM_MATCHES]:
        if same_claim(match, candidate):
            return Naming(NameRule.SAME_CLAIM, match.name, similarity(match, candidate))
    scored = [(score, -i, m, False) for i, m in enumerate(others)
              if m.name not in held and (score := close_match(m, candidate)) is not None
              and (apart is None or score >= CLOSE_MATCH or apart(m.name))
              and not _rows_of_one_turn(m, candidate, written)]
    scored += [(score, -len(others) - i, m, True) for i, (m, score) in enumerate(meaning)
               if m.name != candidate.name and m.name not in held and not same_claim(m, candidate)
               and not _rows_of_one_turn(m, candidate, written)]
    if not scored and apart is None and not meaning and _short(candidate.body):  # lexical only: a short
        scored = [(similarity(m, candidate), -i, m, False) for i, m in enumerate(others[:SAME_CLAIM_MATCHES])
                  if m.name not in held and _short(claim_text(m.body))  # rule's other version
                  and versions(claim_text(m.body), candidate.body) and not _rows_of_one_turn(m, candidate, written)]
    if scored:
        best, _, match, by_meaning = max(scored, key=lambda s: s[:2])
        return Naming(NameRule.POSSIBLE_DUPLICATE, match.name, best,
                      held_because(match, candidate, best, by_meaning=by_meaning))
    return Naming(NameRule.NEW, candidate.name)


def _short(body: str) -> bool:
    """True when `body` is a short rule: at most `SHORT_VERSION_TERMS` content terms (the
    lexical fallback reads only those: a long one shares enough words to be close).
    """
    return len(claim_terms(body)) <= SHORT_VERSION_TERMS


#: The most content terms of a rule the lexical fallback reads as another version of a match.
SHORT_VERSION_TERMS: Final = 12


def _rows_of_one_turn(match: Concept, candidate: Candidate, written: frozenset[str]) -> bool:
    """True when `match` is a concept the candidate's own turn wrote and the two bodies read
    as two rows of one statement: each names a subject of its own (a word the other does
    not say: "Frete grátis acima de R$ 199" / "Frete grátis para pedidos acima de R$ 299"
    is one rule said twice), not two versions of one claim (`merge.versions`: the same
    words with another value, one word put in place of another...), no change announced in
    either (`analysis.text.announces_change`), as many negations in each.
    """
    if match.name not in written:
        return False
    old, new = claim_text(match.body), candidate.body
    if announces_change(old) or announces_change(new) or negation_count(old) != negation_count(new):
        return False
    old_terms, new_terms = _words(old), _words(new)
    if not (old_terms - new_terms and new_terms - old_terms):
        return False  # a row names its own subject: "Frete grátis acima de R$ 199" / "... R$ 299" names none
    return not versions(old, new)  # "to Campinas: R$ 10" / "to Santos: R$ 10" too: FedEx / UPS read alike


def _words(text: str) -> frozenset[str]:
    """The content terms of `text` but its values (`analysis.structure.claim_terms`)."""
    return frozenset(t for t in claim_terms(text) if not t.startswith(("m:", "d:")))


def disputes(record: Concept, held_name: str, description: str, body: str) -> bool:
    """True when a claim held against `record` for review contradicts it, so a prompt must
    not serve the record as settled: it was held under the record's own name (a policy's
    contradicting sighting, or one its record had no room for), or it states other values
    (`claims.values_differ`), or the two read as versions of one claim (`merge.versions`:
    a party, a direction, a negation or one or two words changed; description and body
    together, or the bodies alone, where a description that repeats its body would read
    one word changed as two), or either places a part
    of the other otherwise (`analysis.arrangement.rearranged`: a value with another
    subject, a role word turned around, another party, place or basis). A close match that
    restates the record in other words disputes nothing.

    Measured on the labelled pairs of ``bench --consolidation`` (read as the record and a
    held claim), dev / test: contradicting pairs 238 of 253 / 238 of 252 dispute, policy
    changes 67 of 70 / 64 of 70, restatements 6 of 97 / 14 of 98; on the newcomers' pair
    files (``benchmarks/consolidation/newcomers*.jsonl``, writers who read no code)
    contradicting 847 of 954 / 853 of 966, restatements 277 of 726 / 289 of 714 (before a
    duration was compared in the unit it fills and `rearranged` was read, chosen on dev:
    833 / 839 and 290 / 305).

    Args:
        record: the concept on record.
        held_name: the name the claim was proposed under.
        description: the held claim's description.
        body: the held claim's body.
    """
    if held_name == record.name:
        return True
    claim = Candidate(name=held_name, type=record.type, description=description, body=body)
    return bool(values_differ(record, claim)) or versions(_text(record), f"{description}\n{body}") \
        or versions(claim_text(record.body), body) or bool(_placed_otherwise(record, claim))


def _text(record: Concept) -> str:
    """What `record` claims, as one text: its description, then its body without the contradictions."""
    return f"{record.description}\n{claim_text(record.body)}"


def _placed_otherwise(record: Concept, claim: Candidate) -> str:
    """What `claim` places otherwise than `record`, or the reverse, in a few words
    (`analysis.arrangement.rearranged`, read both ways), or ``""``.
    """
    on_record, held = _text(record), f"{claim.description}\n{claim.body}"
    return rearranged(on_record, held) or rearranged(held, on_record)


def held_because(match: Concept, candidate: Candidate, similarity: float, *, by_meaning: bool) -> str:
    """Why `candidate` is held as a possible duplicate of `match`, in words (`Naming.why`):
    the values that differ, else what it places otherwise (`analysis.arrangement.rearranged`:
    "but another party does it"), else that it is not the same claim.

    Args:
        match: the concept it closely matches.
        candidate: the held candidate.
        similarity: the term overlap (lexical close match) or the cosine (`by_meaning`), 0..1.
        by_meaning: True when the semantic index named `match`.
    """
    values = values_differ(match, candidate)
    placed = "" if values else _placed_otherwise(match, candidate)
    if by_meaning:
        said = f"it is close in meaning to {match.name} (similarity {similarity:.2f}) but is not the same claim"
        return f"{said}; it states other values: {values}" if values else f"{said}: {placed}" if placed else said
    said = f"it closely matches {match.name} (overlap {similarity:.2f})"
    if values:
        return f"{said} but states other values: {values}"
    return f"{said} but {placed}" if placed else f"{said} but is not the same claim"
