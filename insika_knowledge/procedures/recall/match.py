"""Which write operation a new session's user is asking for, by the past tasks nearest to it.

Matcher ``tasks``. Every past task (`insika_knowledge.procedure.TaskRecord`) keeps, as keyed
digests of analysed terms, the user messages its successful runs sent before their first
write, and what those runs wrote. Only *requests* count, on both sides: a message that
names the verb of some write operation the tenant's tasks made (``book``, ``cancel``,
``change``...; `verb_terms`). A new request (before the session's first write), with the
terms of the user message before it as context, is compared with every past request:
TF-IDF cosine over the digests, a term weighing ``ln((N+1)/df)`` where ``df`` counts the
past tasks whose messages had it (N tasks); a term only one task had matches nothing (a
customer's name, a product of one order), so what recurs across tasks decides. In the
request's own norm such a term, and one no past task had, weighs what the rarest counted
term weighs (``ln((N+1)/2)``): a request about things no past tasks share is far from them
all, however well its one verb matches (an attacker's "How do I change the oil in my car?"
recalled ``update_reservation_flights`` at 0.59). A past request must share with the new
one a weighted term besides the verbs (what is returned, changed, booked): "return a library
book" shares only "return" with "I'd like to return the items I received". Measured on 60
off-domain requests (``benchmarks/procedures/off_domain.jsonl``; ``procedures evaluate``):
at the dev choice, 6 of 60 dev asks recalled an operation with the verb alone, 0 with both
rules; test 2 of 60 -> 0. A task's
similarity is that of its nearest request. A message that asks for nothing (``yes, please
go ahead``, ``my user id is ...``) is never compared: it recalls nothing, and it never
makes two tasks look alike.

The vote (`TaskMatcher.decide`), each past task voting once:

1. the `neighbours` nearest tasks at `min_similarity` or more vote: each its share of
   successful runs per write operation, and the share that made no write (a refusal, a
   hand-off: a vote for nothing);
2. the best-voted operation must be *named* by the message: its tool's verb (``cancel`` in
   ``cancel_reservation``, ``update`` in ``update_reservation_flights``), by the analyser's
   terms and synonym groups (``change`` and ``modify`` are ``update``'s), in a form that
   asks for it (``book``, not ``my booking`` nor ``I booked``: `asked_terms`), so a
   message that asks for nothing (``yes, please go ahead``, ``look up my booking``)
   recalls nothing;
3. it needs `min_agreement` of the vote, at least two neighbours among the tasks that
   support it (a task supports an operation when most of its successful runs made it),
   and no near-tie: the nearest task that does not support it must be more than `margin`
   below the second supporting one; otherwise the matcher abstains. Two named writes
   with the same vote (the neighbours made both) are a tie too: unless the neighbours
   chained them (6.), the message must name the object of one of them (``address``, not
   ``items``: `told_apart`), or the matcher abstains;
4. the message must not name what another known write of a verb it names acts on while
   naming nothing the voted one acts on ("update the address on my pending order" against a
   vote for ``modify_pending_order_items``, where ``modify_pending_order_address`` is known:
   ``another_object``);
5. a hand-off is never an operation, and an operation the caller cannot recall (below its
   confidence bound, fewer than two supporting tasks, tools not offered) is never voted for;
6. other writes are chained with it only when more than half of every supporting
   neighbour's runs made the same writes in the same order (`TaskRecord.chains`: past runs
   chained them) and the message names each of them.

Speed: an inverted index (digest -> request slots); a query touches the postings of its
own terms only, rarest first, and a term held by more than an eighth of the tasks (and by
more than 64) only scores requests the rarer terms found. Norms are cached until the
tasks change.

The settings were chosen on the dev half of the shared tau2 samples, leaving one user
group out at a time (``procedures evaluate``; ``benchmarks/procedures.md``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Final

from insika_knowledge.procedure import Procedure, TaskRecord
from insika_knowledge.procedures.trace.steps import is_handoff_tool, tool_base_name
from insika_knowledge.procedures.trace.terms import asked_terms as asked_terms
from insika_knowledge.procedures.trace.terms import message_terms, term_digest

MATCHER: Final = "tasks"
#: The vote of a task that made no write.
NOTHING: Final = ""
#: From how many request slots `similarities` scores with numpy (`_vector_similarities`).
_VECTOR_SLOTS: Final = 4096
_COMMON_SHARE: Final = 8
_COMMON_MIN_DF: Final = 64
#: Two votes this close are a tie.
_TIE: Final = 1e-9


@dataclass(frozen=True)
class MatchSettings:
    """The vote's settings (defaults: `insika_knowledge.procedures.config.ProceduresConfig`).

    Attributes:
        neighbours: how many nearest tasks vote.
        min_similarity: the cosine a task needs to vote (0..1).
        min_agreement: the share of the vote the operation needs (0..1).
        margin: how far below the second supporting task the nearest other task must be.
    """

    neighbours: int = 3
    min_similarity: float = 0.3
    min_agreement: float = 0.6
    margin: float = 0.0


@dataclass(frozen=True)
class Neighbour:
    """A past task near the message: its id, similarity, and the record."""

    task: str
    similarity: float
    record: TaskRecord


@dataclass(frozen=True)
class Decision:
    """What the vote decided.

    Attributes:
        operations: the recalled writes in order (empty: abstained).
        score: the similarity of the second supporting neighbour on a hit; on a miss the
            nearest task's similarity (0.0 when no task shares a term).
        agreement: the operation's share of the vote (0.0 on a miss before a vote).
        neighbours: the voting tasks, nearest first.
        reason: why it abstained ('' on a hit): ``no_neighbour``, ``nothing_named``,
            ``not_recallable`` (the write voted for is one the message names, but its
            procedure cannot be recalled here: its tools are not offered, or it is below
            the confidence bound),
            ``nothing_asked`` (the message names no operation), ``no_write_voted`` (the
            nearest past tasks made no write: refused, handed off), ``disagreement``,
            ``another_object`` (the message names what another known write acts on, not
            what the voted one does), ``one_supporting_task``, ``near_tie``.
    """

    operations: tuple[str, ...]
    score: float
    agreement: float = 0.0
    neighbours: tuple[Neighbour, ...] = ()
    reason: str = ""


def verb_terms(operation: str) -> frozenset[str]:
    """The analysed terms of an operation's verb: the first word of its tool's base name."""
    base = tool_base_name(operation)
    return message_terms(base.split("_", 1)[0]) if base else frozenset()


def names(operation: str, message: frozenset[str]) -> bool:
    """The message's asking terms (`asked_terms`) include the operation's verb (or a synonym of it)."""
    return bool(verb_terms(operation) & message)


def _dominant_chain(record: TaskRecord) -> str:
    """The writes more than half of the task's successful runs made, in order (`TaskRecord.chains`)."""
    best, runs = "", 0
    for chain, count in record.chains.items():
        if count > runs or (count == runs and chain < best):
            best, runs = chain, count
    return best if 2 * runs > record.runs else ""


@dataclass
class TaskMatcher:
    """The past tasks' exemplar messages, indexed by digest, and the vote over them."""

    settings: MatchSettings = field(default_factory=MatchSettings)
    key: bytes = b""
    _records: dict[str, TaskRecord] = field(default_factory=dict)
    _slots_of: dict[str, list[int]] = field(default_factory=dict)
    _slot_task: list[str | None] = field(default_factory=list)
    _slot_terms: list[tuple[str, ...]] = field(default_factory=list)
    _free: list[int] = field(default_factory=list)
    _postings: dict[str, set[int]] = field(default_factory=dict)
    _df: dict[str, int] = field(default_factory=dict)
    _norms: dict[int, float] = field(default_factory=dict)
    _tasks: int = 0
    _ops: dict[str, int] = field(default_factory=dict)  # write operation -> tasks that made it
    _object_ops: dict[str, set[str]] = field(default_factory=dict)  # object term -> the operations it names
    _verbs: frozenset[str] = frozenset()  # analysed terms of those operations' verbs
    _verb_digests: frozenset[str] = frozenset()
    _posted: set[int] = field(default_factory=set)  # slots of requests (indexed)
    _arrays: dict[str, Any] = field(default_factory=dict)  # digest -> its posting as a numpy array (`_array`)
    _norm_array: Any = None  # slot -> its norm (NaN until read), for `_vector_similarities`

    @property
    def verbs(self) -> frozenset[str]:
        """The analysed terms of the verbs of every write operation a past task made."""
        return self._verbs

    def asks(self, terms: frozenset[str]) -> bool:
        """A message with these asking terms (`asked_terms`) is a request: it names a known operation's verb."""
        return bool(self._verbs & terms)

    def __len__(self) -> int:
        return len(self._records)

    def get(self, task_id: str) -> TaskRecord | None:
        """A task record, or None."""
        return self._records.get(task_id)

    def records(self) -> Iterable[TaskRecord]:
        """Every task record."""
        return self._records.values()

    def update(self, records: Iterable[TaskRecord]) -> None:
        """Add or replace task records (their exemplars replace the old ones)."""
        for record in records:
            self._remove(record.id)
            self._records[record.id] = record
            if record.runs <= 0:
                continue
            self._tasks += 1
            terms: set[str] = set()
            slots = []
            for message in record.messages:
                slot = self._free.pop() if self._free else len(self._slot_task)
                if slot == len(self._slot_task):
                    self._slot_task.append(record.id)
                    self._slot_terms.append(message)
                else:
                    self._slot_task[slot] = record.id
                    self._slot_terms[slot] = message
                slots.append(slot)
                self._post(slot)
                terms.update(message)
            self._slots_of[record.id] = slots
            for d in terms:
                self._df[d] = self._df.get(d, 0) + 1
            for op in record.ops:
                self._ops[op] = self._ops.get(op, 0) + 1
                if self._ops[op] == 1 and not is_handoff_tool(op):
                    for term in object_terms(op):
                        self._object_ops.setdefault(term, set()).add(op)
        self._norms.clear()
        self._norm_array = None
        self._reverb()

    def _post(self, slot: int) -> None:
        """Index `slot` when its message is a request (it names a known operation's verb)."""
        message = self._slot_terms[slot]
        if slot in self._posted or self._verb_digests.isdisjoint(message):
            return
        self._posted.add(slot)
        for d in message:
            self._postings.setdefault(d, set()).add(slot)
            self._arrays.pop(d, None)

    def _unpost(self, slot: int) -> None:
        if slot not in self._posted:
            return
        self._posted.discard(slot)
        for d in self._slot_terms[slot]:
            self._arrays.pop(d, None)
            posting = self._postings.get(d)
            if posting is not None:
                posting.discard(slot)
                if not posting:
                    del self._postings[d]

    def _reverb(self) -> None:
        """Follow a change of the known verbs: messages become (or stop being) requests."""
        verbs = frozenset().union(*(verb_terms(op) for op in self._ops if not is_handoff_tool(op)))
        if verbs == self._verbs:
            return
        self._verbs = verbs
        self._verb_digests = frozenset(term_digest(self.key, t) for t in verbs)
        for slot, task in enumerate(self._slot_task):
            if task is None:
                continue
            if self._verb_digests.isdisjoint(self._slot_terms[slot]):
                self._unpost(slot)
            else:
                self._post(slot)

    def _remove(self, task_id: str) -> None:
        old = self._records.pop(task_id, None)
        slots = self._slots_of.pop(task_id, [])
        if old is None or old.runs <= 0:
            return
        self._tasks -= 1
        for op in old.ops:
            left = self._ops.get(op, 0) - 1
            if left > 0:
                self._ops[op] = left
            else:
                self._ops.pop(op, None)
                for term in object_terms(op):
                    named = self._object_ops.get(term)
                    if named is not None:
                        named.discard(op)
                        if not named:
                            del self._object_ops[term]
        terms: set[str] = set()
        for slot in slots:
            terms.update(self._slot_terms[slot])
            self._unpost(slot)
            self._slot_task[slot] = None
            self._slot_terms[slot] = ()
            self._free.append(slot)
        for d in terms:
            left = self._df.get(d, 0) - 1
            if left > 0:
                self._df[d] = left
            else:
                self._df.pop(d, None)

    def _weight(self, digest: str) -> float:
        df = self._df.get(digest, 0)
        if df < 2:
            return 0.0
        return math.log((self._tasks + 1) / df)

    def _unknown_weight(self) -> float:
        """What a query term fewer than two past tasks had weighs in the query's norm: the
        weight of the rarest term that counts (``ln((N+1)/2)``), so a request mostly about
        things no past tasks share is far from all of them ("How do I change the oil in my
        car?" shares only "change" with the store's requests). It never adds to a dot product.
        """
        return math.log((self._tasks + 1) / 2) if self._tasks >= 2 else 0.0

    def _norm(self, slot: int) -> float:
        norm = self._norms.get(slot)
        if norm is None:
            norm = self._norms[slot] = math.sqrt(sum(self._weight(d) ** 2 for d in self._slot_terms[slot]))
        return norm

    def similarities(self, digests: Iterable[str], floor: float = 0.0) -> list[tuple[float, str]]:
        """``(similarity, task id)`` of the tasks with a request sharing a verb and a weighted term.

        Nearest first; tasks below `floor` may be left out. Only past requests that name one
        of the verbs the query names are compared (the query must name one: `asks`), and
        only those that share a weighted term besides the verbs: what is returned, changed
        or booked ("return an item" finds "return the items I received"; "return a library
        book" or "return to the main menu" finds nothing).
        """
        query = set(digests)
        verbs = [(w, d) for w, d in ((self._weight(d), d) for d in query & self._verb_digests) if w > 0]
        others = [(w, d) for w, d in ((self._weight(d), d) for d in query - self._verb_digests) if w > 0]
        if not verbs:
            return []
        candidates: set[int] = set()
        for _, d in verbs:
            candidates |= self._postings.get(d, set())
        verb_mass = sum(w * w for w, _ in verbs)
        unknown = sum(1 for d in query - self._verb_digests if self._df.get(d, 0) < 2) * self._unknown_weight() ** 2
        qnorm = math.sqrt(verb_mass + sum(w * w for w, _ in others) + unknown)
        # Seed terms: the heaviest terms a request must share to reach `floor` (a request
        # sharing none of them has a cosine of at most the rest's share of the query norm).
        others.sort(reverse=True)
        rest = qnorm * qnorm - unknown
        seeds = 0
        while seeds < len(others) and math.sqrt(max(rest, 0.0)) / qnorm >= floor:
            rest -= others[seeds][0] ** 2
            seeds += 1
        if len(self._slot_task) >= _VECTOR_SLOTS:
            return self._vector_similarities(verbs, others, seeds, qnorm, floor)
        dots: dict[int, float] = {}
        for i, (w, d) in enumerate(others):
            posting = self._postings.get(d)
            if not posting:
                continue
            w2 = w * w
            if i < seeds:
                for slot in posting & candidates if len(posting) > len(candidates) else candidates & posting:
                    dots[slot] = dots.get(slot, 0.0) + w2
            elif len(dots) < len(posting):
                for slot in dots:
                    if slot in posting:
                        dots[slot] += w2
            else:
                for slot in posting:
                    if slot in dots:
                        dots[slot] += w2
        for w, d in verbs:
            posting = self._postings.get(d, set())
            w2 = w * w
            for slot in dots:
                if slot in posting:
                    dots[slot] += w2
        return self._ranked(dots.items(), qnorm, floor)

    def _ranked(self, dots: Iterable[tuple[int, float]], qnorm: float, floor: float) -> list[tuple[float, str]]:
        """``(similarity, task id)`` at `floor` or more from ``(slot, dot product)`` pairs: a
        task's similarity is that of its nearest request; nearest first, ties by task id.
        """
        best: dict[str, float] = {}
        for slot, dot in dots:
            task = self._slot_task[slot]
            norm = self._norm(slot)
            if task is None or norm <= 0:
                continue
            sim = dot / (qnorm * norm)
            if sim > best.get(task, 0.0):
                best[task] = sim
        return sorted(((s, t) for t, s in best.items() if s >= floor), key=lambda st: (-st[0], st[1]))

    def _array(self, digest: str) -> Any:
        """The posting of `digest` as a numpy array of slots (cached until it changes)."""
        import numpy as np

        found = self._arrays.get(digest)
        if found is None:
            posting = self._postings.get(digest, ())
            found = self._arrays[digest] = np.fromiter(posting, dtype=np.int64, count=len(posting))
        return found

    def _vector_similarities(self, verbs: list[tuple[float, str]], others: list[tuple[float, str]], seeds: int,
                             qnorm: float, floor: float) -> list[tuple[float, str]]:
        """`similarities`' scoring with numpy over every slot (a large index): the same dot
        products, term by term in the same order, so the same floats. A slot is scored when
        it names a verb of the query and shares a seed term; its norm is read once until the
        tasks change (`_norm_array`), and only the slots whose cosine reaches `floor` are
        grouped by task in Python.
        """
        import numpy as np

        size = len(self._slot_task)
        named = np.zeros(size, dtype=bool)
        for _, d in verbs:
            named[self._array(d)] = True
        scores = np.zeros(size)
        seeded = np.zeros(size, dtype=bool)
        for i, (w, d) in enumerate(others):
            slots = self._array(d)
            if not len(slots):
                continue
            scores[slots] += w * w
            if i < seeds:
                seeded[slots] = True
        for w, d in verbs:
            scores[self._array(d)] += w * w
        kept = np.flatnonzero(seeded & named)
        if self._norm_array is None or len(self._norm_array) < size:
            self._norm_array = np.full(size, np.nan)
        norms = self._norm_array[kept]
        for j in np.flatnonzero(np.isnan(norms)).tolist():  # read once per slot until the tasks change
            norms[j] = self._norm_array[kept[j]] = self._norm(int(kept[j]))
        with np.errstate(divide="ignore", invalid="ignore"):
            near = kept[(norms > 0) & (scores[kept] / (qnorm * norms) >= floor * (1 - 1e-9))]
        return self._ranked(((slot, float(scores[slot])) for slot in near.tolist()), qnorm, floor)

    def decide(
        self,
        terms: frozenset[str],
        digests: Iterable[str],
        recallable: Callable[[str], bool],
        *,
        settings: MatchSettings | None = None,
        ranked: list[tuple[float, str]] | None = None,
        words: frozenset[str] | None = None,
    ) -> Decision:
        """Vote on one user message (see the module docstring).

        Args:
            terms: the message's asking terms (`asked_terms`), for the verb check.
            digests: the digests of its analysed terms (`message_terms`, with the context's)
                under the store's key.
            recallable: whether an operation may be recalled (its procedure passes the
                confidence bound and the tool check).
            settings: other settings than the matcher's own (the evaluation's sweep).
            ranked: `similarities` of `digests`, when the caller has them already.
            words: the message's analysed terms (`message_terms`), to tell tied writes
                apart by what they act on (`told_apart`); None: `terms`.

        Returns:
            The `Decision`.
        """
        s = settings or self.settings
        if not self.asks(terms):
            return Decision((), 0.0, reason="nothing_asked")
        if ranked is None:
            ranked = self.similarities(digests, max(0.0, s.min_similarity - s.margin))
        best = ranked[0][0] if ranked else 0.0
        voters = [Neighbour(t, sim, self._records[t]) for sim, t in ranked[: s.neighbours] if sim >= s.min_similarity]
        if not voters:
            return Decision((), best, reason="no_neighbour")
        votes: dict[str, float] = {}
        for n in voters:
            for op, runs in n.record.ops.items():
                if n.record.runs:
                    votes[op] = votes.get(op, 0.0) + runs / n.record.runs
            votes[NOTHING] = votes.get(NOTHING, 0.0) + n.record.quiet_share
        order = sorted(votes.items(), key=lambda kv: (-kv[1], kv[0]))

        def eligible(op: str) -> bool:
            return not is_handoff_tool(op) and recallable(op) and names(op, terms)

        reason = "nothing_named"
        for op, vote in order:
            if op == NOTHING:
                if vote >= s.min_agreement * len(voters):
                    return Decision((), best, vote / len(voters), tuple(voters), "no_write_voted")
                continue
            if not eligible(op):
                if reason == "nothing_named" and not is_handoff_tool(op) and not recallable(op) and names(op, terms):
                    reason = "not_recallable"  # the write asked for, whose tools are not offered (or unsure)
                continue
            tied = [o for o, v in order if o not in (op, NOTHING) and v >= vote - _TIE and eligible(o)]
            if tied:
                chained = set(self._chain(op, self._supporting(op, voters), recallable, terms))
                if not chained.issuperset(tied):
                    told = told_apart((op, *tied), words if words is not None else terms)
                    if told is None:
                        return Decision((), best, vote / len(voters), tuple(voters), "near_tie")
                    op = told
            agreement = vote / len(voters)
            if agreement < s.min_agreement:
                return Decision((), best, agreement, tuple(voters), "disagreement")
            if self._names_another_object(op, words if words is not None else terms, terms):
                return Decision((), best, agreement, tuple(voters), "another_object")
            supporters = self._supporting(op, voters)
            if len(supporters) < 2:
                return Decision((), best, agreement, tuple(voters), "one_supporting_task")
            rival = next((sim for sim, t in ranked if 2 * self._records[t].ops.get(op, 0) < self._records[t].runs), 0.0)
            if rival > supporters[1].similarity - s.margin:
                return Decision((), best, agreement, tuple(voters), "near_tie")
            return Decision(self._chain(op, supporters, recallable, terms), supporters[1].similarity, agreement,
                            tuple(voters))
        return Decision((), best, 0.0, tuple(voters), reason)

    def _names_another_object(self, op: str, words: frozenset[str], terms: frozenset[str]) -> bool:
        """Whether the message names what another known write of a verb it names acts on, and
        not what `op` acts on ("update the address on my pending order" against
        ``modify_pending_order_items``, where ``modify_pending_order_address`` is known).
        """
        mine = object_terms(op)
        if (mine & words) and not any(self._object_ops.get(w) for w in words - mine):
            return False
        others = {o for w in words - mine for o in self._object_ops.get(w, ())} - {op}
        for other in sorted(others):
            if not names(other, terms):
                continue
            theirs = object_terms(other)
            if (theirs - mine) & words and not (mine - theirs) & words:
                return True
        return False

    @staticmethod
    def _supporting(op: str, voters: list[Neighbour]) -> list[Neighbour]:
        """The voters that support `op`: most of their successful runs made it."""
        return [n for n in voters if 2 * n.record.ops.get(op, 0) >= n.record.runs > 0]

    @staticmethod
    def _chain(
        op: str, supporters: list[Neighbour], recallable: Callable[[str], bool], terms: frozenset[str]
    ) -> tuple[str, ...]:
        chains = {_dominant_chain(n.record) for n in supporters}
        if len(chains) == 1:
            (chain,) = chains
            ops = tuple(chain.split(">")) if chain else ()
            if op in ops and all(recallable(o) and not is_handoff_tool(o) and names(o, terms) for o in ops):
                return ops
        return (op,)


@lru_cache(maxsize=1024)
def object_terms(operation: str) -> frozenset[str]:
    """The analysed terms of what an operation acts on: its tool's base name after the verb
    (``pending``, ``order``, ``address`` for ``modify_pending_order_address``).
    """
    return message_terms(" ".join(tool_base_name(operation).split("_")[1:]))


def told_apart(operations: Sequence[str], words: frozenset[str]) -> str | None:
    """The one of `operations` whose own object the message names, or None.

    An operation's object is the analysed words of its tool's base name after the verb
    (``address`` in ``modify_pending_order_address``), less those every one of
    `operations` shares (``order``, ``pending``): ``change the address of my order`` tells
    ``..._address`` from ``..._items``; ``change my order`` tells neither apart, nor does a
    message naming both.
    """
    objects = {op: object_terms(op) for op in operations}
    shared = frozenset.intersection(*objects.values())
    named = [op for op, found in objects.items() if (found - shared) & words]
    return named[0] if len(named) == 1 else None


def recallable_operations(
    procedures: Mapping[str, Procedure], offered: set[str] | None
) -> Callable[[str], bool]:
    """``op -> bool``: the operation has a recallable procedure whose tools are offered."""

    def check(op: str) -> bool:
        procedure = procedures.get(op)
        if procedure is None:
            return False
        return offered is None or offered.issuperset(procedure.tools)

    return check
