"""Recall: pick the procedure a new task's intent calls for, and only when the evidence is specific.

Two matchers share one index. Operation procedures (a tool-calling agent's writes,
``scope`` ``operation``) are recalled by matcher ``tasks``
(`insika_knowledge.procedures.recall.match`): a new user message is compared with what past
tasks' users asked before their first write, and the nearest tasks vote
(`RecallIndex.recall_operation`). Shell procedures (a coding agent's sub-procedures) are
recalled by matcher ``terms``, below; a tool-calling sequence procedure (mined before
operations existed) is never recalled.

Matcher ``terms``. The query is the task (the first user message) and the latest user
message, canonicalised like the triggers and analysed by the project's tokeniser
(`insika_knowledge.analysis.text.terms`). Each procedure's trigger counts, per term, the
successful runs behind it whose task had the term; the *population* counts, per term,
every shell run labelled successful (`insika_knowledge.procedures.mining.mine.Miner.population`,
stored by `insika_knowledge.store.procedure_store.ProcedureMethods.population_since`), whatever
it did: a refusal without any write, another procedure. Both hold only terms
the tasks of two distinct sessions had (`insika_knowledge.procedures.mining.shared`): a
term one session alone had carries no weight in a recall (a term the population does not
know is skipped).

The match score of a procedure P is an estimate of the share of past successful runs with
tasks like the query that did P: for each query term t the population knows,

    share(t) = (runs of P with t + a * base(P)) / (population runs with t + a)

(``a`` = 1 smooths a term seen in few runs toward P's base rate, base(P) = P's runs / all
runs), averaged over the query terms weighted by their inverse document frequency in the
population, ``ln((N+1)/(n_t+0.5)) / ln((N+1)/0.5)``. A term every successful run had weighs
almost nothing; a term only P's runs had pulls the score toward 1; a term the runs that did
something else had pulls it toward 0. So ``cancel`` recalls nothing when past ``cancel``
tasks were solved by a hand-off as often as by a cancellation, and the score is the
precision the recall can expect. A procedure is a hit when its score reaches
``min_match_score`` and it shares at least one term with the query.

Only recallable procedures are indexed: confidence (Wilson lower bound) at least
``min_confidence``, listed (`insika_knowledge.procedure.Procedure.recurs`), with steps,
and not only a hand-off or give-up (``transfer_to_human_agents`` is never the way to do a
task). A procedure that names tools is only recalled when the request offers every one of
them. Ties go to the higher confidence, then the larger support, then the smaller id.

Environment: a task that names absolute directories (``/workspace/django__django__3.0``)
is an environment; a procedure whose steps name absolute directories is only recalled
for a task whose directories reach every one of them (the same directory, one inside the
other), so the way one repository runs its scripts is never recalled for another
repository (`paths_in`; system directories such as ``/dev`` or ``/tmp`` do not count). A
task that names no directory leaves this check out. The task's directories travel in the
query as terms starting with ``/`` (`query_terms`), which no analysed term does.

Chains: beside the best procedure, other procedures that pass the same bar and share no
action with those already chosen (`action_key`: a tool, or a shell command's verbs and file
arguments; sharing one makes them alternatives) are composed after it (at most
``max_hops`` more), so a task covered by two sub-procedures gets both; the chain's
confidence is the product of theirs.

An inverted index (term -> {slot: runs}) keeps a recall proportional to the postings of the
query's terms: terms are taken rarest first; a term held by more than 1/16 of the
procedures (and over 256) only adds to the candidates the rarer terms found. Without a
population (tests, a store mined before it existed) the triggers of every known procedure,
recallable or not, stand in for it.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from insika_knowledge.analysis.text import terms
from insika_knowledge.procedure import OPERATION, Procedure, TaskRecord
from insika_knowledge.procedures.recall.match import MATCHER as TASKS_MATCHER
from insika_knowledge.procedures.recall.match import Decision as Decision
from insika_knowledge.procedures.recall.match import (
    MatchSettings,
    TaskMatcher,
    recallable_operations,
)
from insika_knowledge.procedures.trace.canonical import canonical_text
from insika_knowledge.procedures.trace.shell import retry_key
from insika_knowledge.procedures.trace.steps import TOOL, is_handoff_tool
from insika_knowledge.procedures.trace.terms import asked_terms, digests, message_terms
from insika_knowledge.procedures.trace.terms import paths_in as paths_in  # re-exported

MATCHER: Final = "terms"
#: The population's key for the number of runs itself.
RUNS: Final = ""
_SMOOTHING: Final = 1.0
_COMMON_MIN_DF: Final = 256
_COMMON_SHARE: Final = 16
@dataclass(frozen=True)
class Recall:
    """The outcome of one recall.

    Attributes:
        chain: the recalled procedures, in order (empty on a miss; more than one when
            sub-procedures were composed).
        score: the match score of the first procedure (on a miss: the best score seen,
            0.0 when nothing shares a term).
        matcher: the matcher's name (``terms``).
        abstained: on a miss, why the past tasks' vote gave no operation (`Decision.reason`:
            ``no_neighbour``, ``one_supporting_task``, ``near_tie``...; '' when not asked).
    """

    chain: tuple[Procedure, ...]
    score: float
    matcher: str = MATCHER
    abstained: str = ""

    @property
    def procedure(self) -> Procedure | None:
        """The first recalled procedure, or None on a miss."""
        return self.chain[0] if self.chain else None

    @property
    def hit(self) -> bool:
        """A procedure was recalled."""
        return bool(self.chain)

    @property
    def hops(self) -> int:
        """Procedures composed after the first (``kg_composed_hops``)."""
        return max(0, len(self.chain) - 1)

    @property
    def path_confidence(self) -> float:
        """The chain's confidence: the product of its procedures' (0.0 on a miss)."""
        if not self.chain:
            return 0.0
        return math.prod(p.confidence for p in self.chain)

    @property
    def key(self) -> str:
        """The chain's ids joined by ``+`` ('' on a miss): what a session pins."""
        return "+".join(p.id for p in self.chain)


def is_handoff(procedure: Procedure) -> bool:
    """Every step of `procedure` hands the task over or gives it up."""
    if procedure.kind != "tool" or not procedure.steps:
        return False
    return all(is_handoff_tool(s.template.split("(", 1)[0]) for s in procedure.steps)


def action_key(template: str) -> str:
    """What a step does, whatever its arguments: the tool's name, or a shell retry key.

    Two procedures with a step of the same action are alternatives (three ways to run the
    same script), never two parts of one chain.
    """
    head = template.split("(", 1)[0]
    if "(" in template and head.replace("_", "").replace(".", "").isalnum():
        return head
    return retry_key(template)


def _reaches(path: str, environment: Sequence[str]) -> bool:
    """`path` is one of `environment`'s directories, inside one, or holds one."""
    return any(
        path == place or place.startswith(path + "/") or path.startswith(place + "/")
        for place in environment
    )


def query_terms(task: str, latest: str = "", *, task_canonical: bool = False) -> tuple[str, ...]:
    """The analysed terms of a task and the latest user message (distinct, in order).

    The task's directories (`paths_in`) follow as terms starting with ``/``: the
    environment a recall checks procedures against. `task_canonical`: `task` is already
    canonical text (`canonical_text` is idempotent; this only skips the second pass).
    """
    canonical = task[:2000] if task_canonical else canonical_text(task[:2000])
    found = dict.fromkeys(terms(canonical))
    if latest and latest != task:
        found.update(dict.fromkeys(terms(canonical_text(latest[:2000]))))
    found.update(dict.fromkeys(paths_in(canonical)))
    return tuple(found)


class RecallIndex:
    """The recallable procedures, indexed by trigger term, and the past tasks, in memory.

    Args:
        min_confidence: the Wilson lower bound a procedure needs to be recalled.
        min_match_score: the score a ``terms`` match needs to be a hit (0..1).
        max_hops: procedures that may be composed after the first.
        match: the ``tasks`` matcher's settings.
        key: the key of the term digests of the task records (the store's or the miner's).
        environment_runs: runs of a task's environment a shell procedure needs (0: no check).
    """

    def __init__(self, min_confidence: float, min_match_score: float, *, max_hops: int = 2,
                 match: MatchSettings | None = None, key: bytes = b"", environment_runs: int = 2):
        self.min_confidence = min_confidence
        self.environment_runs = environment_runs
        self.min_match_score = min_match_score
        self.max_hops = max_hops
        self.key = key
        self.matcher = TaskMatcher(match or MatchSettings(), key)
        self._operations: dict[str, Procedure] = {}
        self._operation_ids: dict[str, Procedure] = {}
        self._slots: list[Procedure | None] = []
        self._trigger_runs_of: list[int] = []
        self._paths_of: list[tuple[str, ...]] = []
        self._slot_of: dict[str, int] = {}
        self._free: list[int] = []
        self._postings: dict[str, dict[int, int]] = {}
        self._known_runs: dict[str, int] = {}
        self._known_total = 0
        self._all: dict[str, Procedure] = {}
        self._population: dict[str, int] = {}

    def __len__(self) -> int:
        return len(self._slot_of)

    def get(self, procedure_id: str) -> Procedure | None:
        """The latest known version of a procedure (recallable or not), or None."""
        return self._all.get(procedure_id)

    def is_recallable(self, procedure_id: str) -> bool:
        """The procedure is in the index (see the module docstring)."""
        return procedure_id in self._slot_of or procedure_id in self._operation_ids

    def update_population(self, counts: Mapping[str, int]) -> None:
        """Set population counts: term -> successful runs whose task had it (``''``: all runs)."""
        self._population.update(counts)

    def recallable(self, procedure: Procedure) -> bool:
        """`procedure` may be recalled (confidence, listed, steps, not a hand-off).

        An operation procedure needs two supporting tasks; a tool-calling sequence
        procedure (mined before operations) is never recalled.
        """
        if procedure.kind == TOOL and procedure.scope != OPERATION:
            return False
        return (
            bool(procedure.steps)
            and procedure.confidence >= self.min_confidence
            and procedure.recurs
            and not is_handoff(procedure)
        )

    def update(self, procedures: Iterable[Procedure]) -> None:
        """Add or replace procedures; one that is no longer recallable leaves the index."""
        for procedure in procedures:
            self._remove(procedure.id)
            old = self._all.get(procedure.id)
            if old is not None:
                self._count_known(old, -1)
            self._count_known(procedure, 1)
            self._all[procedure.id] = procedure
            if procedure.scope == OPERATION:
                op = procedure.steps[-1].signature.split("(", 1)[0] if procedure.steps else ""
                if self.recallable(procedure):
                    self._operations[op] = procedure
                    self._operation_ids[procedure.id] = procedure
                else:
                    self._operations.pop(op, None)
                    self._operation_ids.pop(procedure.id, None)
                continue
            if not self.recallable(procedure):
                continue
            slot = self._free.pop() if self._free else len(self._slots)
            paths = tuple(dict.fromkeys(p for s in procedure.steps for p in paths_in(s.template)))
            if slot == len(self._slots):
                self._slots.append(procedure)
                self._trigger_runs_of.append(procedure.trigger_runs)
                self._paths_of.append(paths)
            else:
                self._slots[slot] = procedure
                self._trigger_runs_of[slot] = procedure.trigger_runs
                self._paths_of[slot] = paths
            self._slot_of[procedure.id] = slot
            for term, runs in procedure.triggers.items():
                self._postings.setdefault(term, {})[slot] = runs

    def set_key(self, key: bytes) -> None:
        """Use `key` for term digests (the store's); the task matcher is rebuilt on it."""
        if key != self.key:
            records = list(self.matcher.records())
            self.key = key
            self.matcher = TaskMatcher(self.matcher.settings, key)
            self.matcher.update(records)

    def update_tasks(self, records: Iterable[TaskRecord]) -> None:
        """Add or replace past tasks (the ``tasks`` matcher's exemplars and votes)."""
        self.matcher.update(records)

    def operation(self, name: str) -> Procedure | None:
        """The recallable procedure of the write operation `name`, or None."""
        return self._operations.get(name)

    def recall_operation(
        self, message: str, tools: Sequence[str] | None = None, *, before: str = ""
    ) -> tuple[Recall, Decision]:
        """The operation (or chain of operations) one user message asks for, by the past tasks.

        Args:
            message: a user message sent before the session's first write (raw).
            tools: the tools the request offers; None skips the tool check.
            before: the user message before it, if any (its terms are context).

        Returns:
            ``(recall, decision)``: the `Recall` (matcher ``tasks``) and how the vote went.
        """
        if not self._operations or not len(self.matcher):
            return Recall((), 0.0, TASKS_MATCHER), Decision((), 0.0, reason="no_neighbour")
        found = message_terms(message)
        context = found | message_terms(before) if before else found
        decision = self.matcher.decide(
            asked_terms(message), digests(self.key, context),
            recallable_operations(self._operations, set(tools) if tools is not None else None),
            words=found,
        )
        chain = tuple(self._operations[op] for op in decision.operations)
        return Recall(chain, decision.score, TASKS_MATCHER), decision

    def _count_known(self, procedure: Procedure, sign: int) -> None:
        """Add (or take away) a known procedure's triggers: the stand-in population."""
        self._known_total += sign * procedure.trigger_runs
        known = self._known_runs
        for term, runs in procedure.triggers.items():
            left = known.get(term, 0) + sign * runs
            if left > 0:
                known[term] = left
            else:
                known.pop(term, None)

    def _remove(self, procedure_id: str) -> None:
        slot = self._slot_of.pop(procedure_id, None)
        if slot is None:
            return
        old = self._slots[slot]
        assert old is not None
        for term in old.triggers:
            posting = self._postings.get(term)
            if posting is not None:
                posting.pop(slot, None)
                if not posting:
                    del self._postings[term]
        self._slots[slot] = None
        self._free.append(slot)

    def recall(
        self,
        task: str,
        tools: Sequence[str] | None = None,
        *,
        latest: str = "",
        prefer: str | None = None,
    ) -> Recall:
        """The procedure (or chain) for `task`.

        Args:
            task: the task (the first user message), raw; canonicalised here.
            tools: the tools the request offers; None skips the tool check.
            latest: the latest user message, raw (adds its terms to the query).
            prefer: a chain the session already follows (`Recall.key`): while its first
                procedure is recallable the chain is returned (with its own score),
                whatever else matches.

        Returns:
            A `Recall`: a hit when the best eligible score reaches ``min_match_score``.
        """
        return self.recall_terms(query_terms(task, latest), tools, prefer=prefer)

    def recall_terms(
        self, query: Iterable[str], tools: Sequence[str] | None = None, *, prefer: str | None = None
    ) -> Recall:
        """`recall` for already analysed query terms (`query_terms`)."""
        if prefer:
            pinned = self._pinned(prefer)
            if pinned and pinned[0].id in self._operation_ids:
                # carried by the session: the vote scored it on the message that recalled it
                return Recall(pinned, 0.0, TASKS_MATCHER)
        if not self._slot_of:
            return Recall((), 0.0)
        query = tuple(dict.fromkeys(query))
        environment = [t for t in query if t.startswith("/")]
        scores, base_weight, total_weight = self._score(query)
        if prefer:
            pinned = self._pinned(prefer)
            if pinned:
                slot = self._slot_of[pinned[0].id]
                value = self._value(slot, scores, base_weight, total_weight)
                return Recall(pinned, value if slot in scores else 0.0)
        if not scores or total_weight <= 0:
            return Recall((), 0.0)
        offered = set(tools) if tools is not None else None
        runs = self._population.get(RUNS) or self._known_total
        base_factor = base_weight / runs if runs else 0.0
        cut = self.min_match_score * total_weight - 1e-12
        slots, trigger_runs = self._slots, self._trigger_runs_of
        ranked = []
        best = 0.0
        for slot, raw in scores.items():
            value = raw + min(runs, trigger_runs[slot]) * base_factor
            if value > best:
                best = value
            if value < cut:
                continue
            procedure = slots[slot]
            assert procedure is not None
            if offered is not None and procedure.tools and not offered.issuperset(procedure.tools):
                continue
            if environment and not all(_reaches(p, environment) for p in self._paths_of[slot]):
                continue  # names a directory of another environment
            if environment and self.environment_runs and procedure.kind != TOOL and not any(
                procedure.triggers.get(p, 0) >= self.environment_runs for p in environment
            ):
                continue  # not two runs of this environment's tasks took it
            ranked.append(
                (
                    -value / total_weight,
                    -procedure.confidence,
                    -procedure.support,
                    procedure.id,
                    slot,
                )
            )
        if not ranked:
            return Recall((), min(1.0, best / total_weight))
        ranked.sort()
        chain: list[Procedure] = []
        used: set[str] = set()
        for item in ranked:
            procedure = self._slots[item[4]]
            assert procedure is not None
            keys = {action_key(s.template) for s in procedure.steps}
            if chain and keys & used:
                continue  # shares an action with the chain: an alternative, not a next part
            chain.append(procedure)
            used |= keys
            if len(chain) > self.max_hops:
                break
        return Recall(tuple(chain), min(1.0, -ranked[0][0]))

    def _pinned(self, prefer: str) -> tuple[Procedure, ...]:
        chain = []
        for pid in prefer.split("+"):
            operation = self._operation_ids.get(pid)
            if operation is not None:
                chain.append(operation)
                continue
            slot = self._slot_of.get(pid)
            if slot is None:
                return ()
            procedure = self._slots[slot]
            assert procedure is not None
            chain.append(procedure)
        return tuple(chain)

    def _value(
        self, slot: int, scores: Mapping[int, float], base_weight: float, total_weight: float
    ) -> float:
        if total_weight <= 0:
            return 0.0
        procedure = self._slots[slot]
        assert procedure is not None
        runs = self._population.get(RUNS) or self._known_total
        base = min(1.0, procedure.trigger_runs / runs) if runs else 0.0
        return (scores.get(slot, 0.0) + base * base_weight) / total_weight

    def _score(self, query: tuple[str, ...]) -> tuple[dict[int, float], float, float]:
        """Per-slot evidence sums, the base-rate weight and the total weight of `query`."""
        population = self._population if self._population.get(RUNS) else self._known_runs
        total = self._population.get(RUNS) or self._known_total
        if total <= 0:
            return {}, 0.0, 0.0
        scale = math.log((total + 1) / 0.5)
        postings = self._postings
        weighted = []
        base_weight = total_weight = 0.0
        for term in query:
            runs = population.get(term, 0)
            if runs <= 0:
                continue  # a term no successful run had says nothing either way
            weight = max(0.0, math.log((total + 1) / (runs + 0.5)) / scale)
            total_weight += weight
            base_weight += weight * _SMOOTHING / (runs + _SMOOTHING)
            posting = postings.get(term)
            if posting and weight > 0:
                weighted.append((len(posting), weight / (runs + _SMOOTHING), posting))
        weighted.sort(key=lambda item: item[0])
        common = max(_COMMON_MIN_DF, len(self._slot_of) // _COMMON_SHARE)
        scores: dict[int, float] = {}
        for df, factor, posting in weighted:
            if df > common and scores:
                # A frequent term only adds to the candidates the rarer terms found.
                pget = posting.get
                for slot in scores:
                    shared = pget(slot)
                    if shared is not None:
                        scores[slot] += factor * shared
                continue
            get = scores.get
            for slot, runs in posting.items():
                scores[slot] = get(slot, 0.0) + factor * runs
        return scores, base_weight, total_weight
