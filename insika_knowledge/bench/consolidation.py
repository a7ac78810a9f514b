"""``bench --consolidation``: does consolidation keep every claim, and one idea under one name?

Two measurements, both through the real write path (`learn.learn_turn`: screening, the
naming step, `consolidate.decide`, the merge guard, a SQLite store in a temporary folder):

**Labelled pairs** (``benchmarks/consolidation/pairs.jsonl``, ``structure.jsonl`` and
``reader.jsonl``: statements ``a`` and ``b`` in English or Portuguese, labelled ``same``,
``related`` or ``contradicting``; ``structure.jsonl`` holds the pairs a bag of words cannot
tell apart, swapped values, directions, parties, dates, conditions, a region named only in
the description, and restatements that differ in wording only; ``reader.jsonl`` the 383
pairs a fresh reader wrote to break the analyser, tense, synonyms told apart, articles
and names among them). ``a`` is learned first, then
``b`` is sighted in another session:

- under the same name, with no merge model (a different claim becomes a conflict): the
  **false same** count (a related or contradicting ``b`` confirmed into ``a``: the claim is
  lost; target 0) and the share of truly-same pairs **confirmed without a model**
  (target >= 0.85);
- under the same name with a **scripted merge model** (it answers as the label says:
  ``related`` with both texts for same and related pairs, ``contradicting`` otherwise),
  with a **lossy merge model** (it answers ``related`` with the record's text only,
  so the merge guard must refuse whatever drops a detail of ``b``), and with a **listing
  merge model** (it answers ``related`` for every pair, with both texts side by side, so
  the guard must refuse a merge of two versions of one claim:
  `consolidate.merge.versions`);
- under a **new name** (``b`` proposed as another concept), no model: recorded under
  ``a``'s name, held as a possible duplicate, or learned as new; **different claims
  merged** counts a related or contradicting ``b`` recorded under ``a``'s name (target 0),
  and **unflagged contradictory pairs** a contradicting ``b`` learned as a second live
  concept, neither in conflict nor held (target 0).

**Policy changes** (``benchmarks/consolidation/changes.jsonl``): a rule on record, then the
changed rule in a later session. Under the same name with no model, and with a merge model
that wrongly answers ``related`` (with the new text, with the old one, or with both side by
side): a change
**silently folded** is one confirmed or merged (target 0). Under a drifting name with no
model: an **unflagged contradictory pair** is the change learned as a second live concept
beside the old one, neither in conflict nor held as a possible duplicate (target 0).

**Served as disputed** (`bench.disputed`): each pair and each change read as a record and a
claim held against it under another name; how many of each label would mark the record
``status="conflict"`` in the prompt (restatements should not, contradictions and changes
should).

**Renamed sightings** (``benchmarks/consolidation/renamed/``): the recorded answers for
the shared sessions (``replays/shared_sessions.json``) with each concept that recurs
proposed under a different name in each later session (``names.json``: rewordings, the
other language, word order). The shared sessions are backfilled with them (one agent per
dataset, file order); each renamed sighting is then **attributed** to its concept, **held**
as a possible duplicate, or a **duplicate created** (a new concept; target <= 5% of the
renamed sightings); a sighting recorded under another concept is **wrongly attributed**.
First sightings held as a possible duplicate are **false holds**.

The runs that name a sighting anew (``b`` under a new name, the drifting-name change) have
the semantic index a memory's defaults give (``$INSIKA_EMBEDDINGS``, else the offline
model), so a possible duplicate is found by meaning too (`insika_knowledge.learn.meaning`).

Both sets are split by parity: pairs by id, sessions by their position among the
recorded sessions of their dataset (even = ``dev``, odd = ``test``). Rules were tuned on
``dev`` only; both halves are reported.

Run ``python -m insika_knowledge.bench.consolidation [--json]`` or
``insika-knowledge bench --consolidation``.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from insika_knowledge.bench.crowded import CROWDED_SETS, crowded_figures, crowded_lines, load_crowded
from insika_knowledge.bench.datasets import benchmark_data, jsonl_rows, shared_data
from insika_knowledge.bench.disputed import disputed_figures, disputed_lines
from insika_knowledge.bench.listings import LISTING_FILES, listing_figures, listing_lines, load_listings
from insika_knowledge.bench.subjects import SUBJECT_FILES, load_subjects, subject_figures, subject_lines
from insika_knowledge.config import KnowledgeConfig
from insika_knowledge.errors import ModelFailure, UserError
from insika_knowledge.extract.model import ExtractionRequest, MergeAnswer, MergeRequest, ReplayModel
from insika_knowledge.index.embedders import resolve as resolve_embedder
from insika_knowledge.index.semantic import SemanticIndex
from insika_knowledge.index.tokenizer import TOKENIZER
from insika_knowledge.learn import learn_turn
from insika_knowledge.learn.meaning import MeaningSearch, neighbours
from insika_knowledge.store import SQLiteStore, Store

LABELS: Final = ("same", "related", "contradicting")
OUTCOMES: Final = ("confirmed", "merged", "conflict", "possible_duplicate", "learned")
#: The shared datasets of the renamed set, and the agent each is backfilled as.
DATASETS: Final = (("tau_bench_airline", "airline"), ("tau_bench_retail_fewshot", "retail"),
                   ("sgd", "sgd"))
CONFIG: Final = KnowledgeConfig()
#: The targets the figures are read against.
TARGETS: Final = {"false_same": 0, "same_without_model": 0.75, "duplicates_created": 0.05,
                  "different_merged": 0, "silently_folded": 0, "unflagged_contradictory": 0}
#: The labelled pair files, in ``benchmarks/consolidation/``.
PAIR_FILES: Final = ("pairs.jsonl", "structure.jsonl", "reader.jsonl")
#: The files whose figures are also printed on their own (`PAIR_FILES` but the first).
OWN_FIGURES: Final = PAIR_FILES[1:]


@dataclass(frozen=True)
class Pair:
    """One labelled pair: its id, language, kind of difference, label, and two statements.

    ``a_description`` and ``b_description`` are the descriptions proposed with each (the
    statement itself when the file gives none); ``source`` the file it comes from.
    """

    id: int
    lang: str
    kind: str
    label: str
    a: str
    b: str
    a_description: str = ""
    b_description: str = ""
    source: str = "pairs.jsonl"

    @property
    def half(self) -> str:
        """``dev`` for an even id, ``test`` for an odd one."""
        return "dev" if self.id % 2 == 0 else "test"


def load_pairs(path: Path | None = None) -> list[Pair]:
    """Read the labelled pairs (`path`, or every file of `PAIR_FILES`).

    Raises:
        UserError: a file is missing, a line is not a pair (file and line named), or two
            pairs share an id.
    """
    paths = [path] if path is not None else [benchmark_data(f"consolidation/{f}") for f in PAIR_FILES]
    out: list[Pair] = []
    for one in paths:
        for number, row in jsonl_rows(one, "the labelled pairs", "consolidation"):
            try:
                out.append(Pair(int(row["id"]), row["lang"], row["kind"], row["label"], row["a"], row["b"],
                                row.get("a_description") or row["a"], row.get("b_description") or row["b"],
                                one.name))
            except (KeyError, TypeError, ValueError, AttributeError) as exc:
                raise UserError(f"{one}:{number}: not a labelled pair ({exc})") from None
            if out[-1].label not in LABELS:
                raise UserError(f"{one}:{number}: label {out[-1].label!r} is not one of {', '.join(LABELS)}")
    if len({p.id for p in out}) != len(out):
        raise UserError("two labelled pairs share an id")
    return out


@dataclass(frozen=True)
class Change:
    """One policy change: a rule on record (`old`) and the changed rule (`new`).

    Each is ``{"name", "description", "body"}``; ``new["name"]`` is the drifting name the
    change is proposed under in the drifting run.
    """

    id: int
    lang: str
    kind: str
    old: dict[str, str]
    new: dict[str, str]

    @property
    def half(self) -> str:
        """``dev`` for an even id, ``test`` for an odd one."""
        return "dev" if self.id % 2 == 0 else "test"


def load_changes(path: Path | None = None) -> list[Change]:
    """Read the policy changes (``benchmarks/consolidation/changes.jsonl`` by default).

    Raises:
        UserError: the file is missing or a line is not a change (file and line named).
    """
    path = path if path is not None else benchmark_data("consolidation/changes.jsonl")
    out = []
    for number, row in jsonl_rows(path, "the policy changes", "consolidation"):
        try:
            old, new = row["old"], row["new"]
            if not all(isinstance(side.get(k), str) for side in (old, new) for k in ("name", "description", "body")):
                raise ValueError("old and new need a name, a description and a body")
            out.append(Change(int(row["id"]), row["lang"], row["kind"], old, new))
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise UserError(f"{path}:{number}: not a policy change ({exc})") from None
    return out


class ScriptedModel:
    """A `ConceptModel` answering from a script: candidates per session, merges per session.

    Args:
        proposals: session id -> the candidates the extraction answers.
        merges: session id -> the merge answer; None = no merge model (every merge call
            fails, so a sighting that is not the same claim is a conflict).
    """

    def __init__(self, proposals: dict[str, list[dict[str, str]]],
                 merges: dict[str, dict[str, Any]] | None) -> None:
        self.proposals = proposals
        self.merges = merges
        self.merge_calls = 0

    def propose(self, request: ExtractionRequest) -> list[Any]:
        """The session's scripted candidates."""
        return list(self.proposals[request.session_id])

    def merge(self, request: MergeRequest) -> MergeAnswer:
        """The session's scripted merge answer.

        Raises:
            ModelFailure: there is no merge model (``model_empty``).
        """
        self.merge_calls += 1
        if self.merges is None:
            raise ModelFailure("model_empty", "no merge model")
        answer = self.merges[request.session_id]
        return MergeAnswer(answer["verdict"], answer.get("body"))


def _semantic(store: SQLiteStore) -> tuple[SemanticIndex | None, MeaningSearch | None]:
    """The store's semantic index and its neighbours, as a memory's defaults make them
    (``$INSIKA_EMBEDDINGS``, else the offline model; none when it is off or missing).
    """
    embedder, _ = resolve_embedder(None)
    if embedder is None:
        return None, None
    semantic = SemanticIndex(store, embedder)
    return semantic, neighbours(semantic)


def _learn_pair(store: SQLiteStore, agent: str, model: ScriptedModel, sessions: Sequence[str],
                semantic: SemanticIndex | None, meaning: MeaningSearch | None) -> Any:
    """Learn each session's candidate in turn, the vectors made after each (as the worker does)."""
    report = None
    for session in sessions:
        report = learn_turn(store, agent, CONFIG, model, session_id=session, turn_id="t",
                            messages=_said(model.proposals[session][0]), meaning=meaning)
        if semantic is not None:
            semantic.embed_pending(agent)
    return report


def _candidate(name: str, text: str, description: str | None = None) -> dict[str, str]:
    return {"name": name, "description": description or text, "type": "fact", "body": text}


def _said(item: dict[str, str]) -> list[dict[str, str]]:
    """The turn a candidate comes from: the agent states it (so the trust gate admits it)."""
    return [{"role": "user", "content": "Can you tell me about this?"},
            {"role": "assistant", "content": f"{item['description']} {item['body']}"}]


def _scripted(pair: Pair) -> dict[str, Any]:
    if pair.label == "contradicting":
        return {"verdict": "contradicting"}
    return {"verdict": "related", "body": f"{pair.a} {pair.b}"}


def _lossy(pair: Pair) -> dict[str, Any]:
    if pair.label == "contradicting":
        return {"verdict": "contradicting"}
    return {"verdict": "related", "body": pair.a}


def _listing(pair: Pair) -> dict[str, Any]:
    return {"verdict": "related", "body": f"{pair.a} {pair.b}"}


#: The pair runs: name -> (b proposed under a new name?, merge answer of a pair or None).
RUNS: Final[dict[str, tuple[bool, Callable[[Pair], dict[str, Any]] | None]]] = {
    "no_model": (False, None),
    "scripted_model": (False, _scripted),
    "lossy_model": (False, _lossy),
    "listing_model": (False, _listing),
    "renamed": (True, None),
}


def run_pairs(pairs: Sequence[Pair], folder: Path) -> dict[str, dict[int, tuple[str, str]]]:
    """Sight every pair in every run of `RUNS`, through `learn_turn`.

    Returns:
        run name -> pair id -> ``(outcome of b, the name b was recorded under)``.
    """
    results: dict[str, dict[int, tuple[str, str]]] = {}
    for run, (renamed, answer) in RUNS.items():
        store = SQLiteStore(folder / f"pairs-{run}.db", tokenizer=TOKENIZER)
        semantic, meaning = _semantic(store) if renamed else (None, None)  # only a new name is searched
        try:
            out: dict[int, tuple[str, str]] = {}
            for pair in pairs:
                agent, first, second = f"pair-{pair.id}", f"p{pair.id}-a", f"p{pair.id}-b"
                b_name = f"claim-b-{pair.id}" if renamed else f"claim-{pair.id}"
                model = ScriptedModel(
                    {first: [_candidate(f"claim-{pair.id}", pair.a, pair.a_description)],
                     second: [_candidate(b_name, pair.b, pair.b_description)]},
                    None if answer is None else {second: answer(pair)},
                )
                report = _learn_pair(store, agent, model, (first, second), semantic, meaning)
                [(name, outcome)] = report.results
                if renamed and outcome == "learned" and _live_unflagged(store, agent, (f"claim-{pair.id}", name)):
                    out[pair.id] = ("learned_unflagged", name)
                else:
                    out[pair.id] = (outcome, name)
            results[run] = out
        finally:
            store.close()
    return results


def _live_unflagged(store: Store, agent: str, names: Sequence[str]) -> bool:
    """True when every concept of `names` is live, none in conflict and none quarantined."""
    for name in names:
        stored = store.get(agent, name)
        if stored is None or stored.concept.in_conflict or stored.quarantined:
            return False
    return True


def pair_figures(pairs: Sequence[Pair], results: dict[str, dict[int, tuple[str, str]]],
                 source: str | None = None) -> dict[str, Any]:
    """The per-half figures of the pair runs (see the module doc); `source` keeps one file's pairs."""
    figures: dict[str, Any] = {}
    for half in ("dev", "test"):
        chosen = [p for p in pairs if p.half == half and (source is None or p.source == source)]
        same = [p for p in chosen if p.label == "same"]
        different = [p for p in chosen if p.label != "same"]
        tables = {}
        for run in RUNS:
            table = {label: Counter[str]() for label in LABELS}
            for pair in chosen:
                table[pair.label][results[run][pair.id][0].removesuffix("_unflagged")] += 1
            tables[run] = {label: dict(counts) for label, counts in table.items()}
        no_model = results["no_model"]
        renamed = results["renamed"]
        figures[half] = {
            "pairs": len(chosen),
            "labels": dict(Counter(p.label for p in chosen)),
            "false_same": sum(1 for p in different if no_model[p.id][0] == "confirmed"),
            "different": len(different),
            "same_without_model": sum(1 for p in same if no_model[p.id][0] == "confirmed"),
            "same": len(same),
            "different_merged": sum(1 for p in different if renamed[p.id][1] == f"claim-{p.id}"),
            "unflagged_contradictory": sum(1 for p in chosen if p.label == "contradicting"
                                           and renamed[p.id][0] == "learned_unflagged"),
            "same_attributed": sum(1 for p in same if renamed[p.id][1] == f"claim-{p.id}"),
            "tables": tables,
        }
    return figures


# ----------------------------------------------------------------------------- policy changes

#: The change runs: name -> (the change proposed under its drifting name?, the merge answer).
CHANGE_RUNS: Final[dict[str, tuple[bool, Callable[[Change], dict[str, Any]] | None]]] = {
    "same_name_no_model": (False, None),
    "same_name_wrong_related_new": (False, lambda c: {"verdict": "related", "body": c.new["body"]}),
    "same_name_wrong_related_old": (False, lambda c: {"verdict": "related", "body": c.old["body"]}),
    "same_name_wrong_related_both": (False, lambda c: {"verdict": "related",
                                                       "body": f"{c.old['body']} {c.new['body']}"}),
    "drifting_name_no_model": (True, None),
}


def run_changes(changes: Sequence[Change], folder: Path) -> dict[str, dict[int, str]]:
    """Learn each change's old rule, then sight the changed rule, in every run of `CHANGE_RUNS`.

    Returns:
        run name -> change id -> the outcome of the changed rule (``learned_unflagged``
        when it was learned as a second live concept beside the old one, neither in
        conflict nor held).
    """
    results: dict[str, dict[int, str]] = {}
    for run, (drifting, answer) in CHANGE_RUNS.items():
        store = SQLiteStore(folder / f"changes-{run}.db", tokenizer=TOKENIZER)
        semantic, meaning = _semantic(store) if drifting else (None, None)  # only a new name is searched
        try:
            out: dict[int, str] = {}
            for change in changes:
                agent, first, second = f"change-{change.id}", f"c{change.id}-a", f"c{change.id}-b"
                new_name = change.new["name"] if drifting else change.old["name"]
                model = ScriptedModel(
                    {first: [_candidate(change.old["name"], change.old["body"], change.old["description"])],
                     second: [_candidate(new_name, change.new["body"], change.new["description"])]},
                    None if answer is None else {second: answer(change)},
                )
                report = _learn_pair(store, agent, model, (first, second), semantic, meaning)
                [(name, outcome)] = report.results
                unflagged = outcome == "learned" and _live_unflagged(store, agent, (change.old["name"], name))
                out[change.id] = "learned_unflagged" if unflagged else outcome
            results[run] = out
        finally:
            store.close()
    return results


def change_figures(changes: Sequence[Change], results: dict[str, dict[int, str]]) -> dict[str, Any]:
    """Per half: how each run ended, changes silently folded, unflagged contradictory pairs."""
    figures: dict[str, Any] = {}
    for half in ("dev", "test"):
        chosen = [c for c in changes if c.half == half]
        outcomes = {run: dict(Counter(results[run][c.id] for c in chosen)) for run in CHANGE_RUNS}
        folded = sum(1 for run, (drifting, _) in CHANGE_RUNS.items() if not drifting
                     for c in chosen if results[run][c.id] in ("confirmed", "merged"))
        figures[half] = {
            "changes": len(chosen),
            "silently_folded": folded,
            "same_name_sightings": len(chosen) * sum(1 for d, _ in CHANGE_RUNS.values() if not d),
            "unflagged_contradictory": sum(1 for c in chosen
                                           if results["drifting_name_no_model"][c.id] == "learned_unflagged"),
            "outcomes": outcomes,
        }
    return figures


# ----------------------------------------------------------------------------- renamed


def renamed_truth(folder: Path | None = None) -> dict[str, str]:
    """Proposed name -> the concept it names (``names.json`` inverted; others name themselves).

    Raises:
        UserError: ``names.json`` is missing or not an object of lists.
    """
    path = (folder if folder is not None else benchmark_data("consolidation/renamed")) / "names.json"
    try:
        names = json.loads(path.read_text(encoding="utf-8"))
        return {variant: original for original, variants in names.items() for variant in variants}
    except (OSError, json.JSONDecodeError, AttributeError) as exc:
        raise UserError(f"{path}: cannot read the renamed set's names ({exc})") from None


def run_renamed(folder: Path, shared: Path, renamed: Path | None = None) -> dict[str, Any]:
    """Backfill the shared sessions with the renamed answers and classify every sighting.

    Args:
        folder: where the temporary data directory goes.
        shared: the ``shared/data`` folder (the sessions).
        renamed: the renamed set's folder (``answers.json``, ``names.json``).

    Returns:
        ``{"dev": {...}, "test": {...}}``: counts per class (see the module doc).
    """
    from insika_knowledge.backfill import backfill
    from insika_knowledge.memory import Memory
    from insika_knowledge.sessions import read_sessions

    renamed = renamed if renamed is not None else benchmark_data("consolidation/renamed")
    answers = renamed / "answers.json"
    replay = ReplayModel(answers)
    truth = renamed_truth(renamed)
    memory = Memory(folder / "renamed")
    counts = {half: Counter[str]() for half in ("dev", "test")}
    try:
        config = KnowledgeConfig(model=f"replay:{answers}")
        for dataset, agent in DATASETS:
            sessions = shared / dataset / "normalized.jsonl"
            if not sessions.is_file():
                raise UserError(f"{sessions} does not exist: the renamed set needs the shared sessions")
            backfill(memory, agent, config, sessions)
            recorded = [s.session_id for s in read_sessions(sessions)
                        if s.session_id in replay.extract_answers]
            store = memory.store()
            held = {(d.name, d.session_id): d.duplicate_of for d in store.possible_duplicates(agent)}
            seen: set[str] = set()
            for position, session in enumerate(recorded):
                half = "dev" if position % 2 == 0 else "test"
                for item in replay.extract_answers[session]:
                    proposed = item["name"]
                    concept = truth.get(proposed, proposed)
                    first = concept not in seen
                    seen.add(concept)
                    counts[half][_classify(store, agent, session, proposed, concept, first, held)] += 1
    finally:
        memory.close()
    return {half: dict(c) for half, c in counts.items()}


def _classify(store: Store, agent: str, session: str, proposed: str, concept: str,
              first: bool, held: dict[tuple[str, str], str]) -> str:
    """What one sighting of the renamed backfill did (``first_*`` or ``renamed_*``)."""
    prefix = "first" if first else "renamed"
    if (proposed, session) in held:
        target = held[(proposed, session)]
        return f"{prefix}_held" if not first and target == concept else f"{prefix}_held_elsewhere"
    under = {name for name in {proposed, concept, store.alias_of(agent, proposed) or ""} if name
             and any(s[0] == session for s in store.sightings(agent, name))}
    if first:
        return "first_learned" if under == {proposed} else "first_attributed_elsewhere"
    if concept in under:
        return "renamed_attributed"
    if proposed in under:
        return "renamed_duplicate_created"
    return "renamed_wrongly_attributed"


def renamed_figures(counts: dict[str, dict[str, int]]) -> dict[str, Any]:
    """Shares of the renamed backfill per half: duplicates created over renamed sightings."""
    out: dict[str, Any] = {}
    for half, c in counts.items():
        renamed = sum(v for k, v in c.items() if k.startswith("renamed_"))
        firsts = sum(v for k, v in c.items() if k.startswith("first_"))
        out[half] = {
            "renamed_sightings": renamed,
            "attributed": c.get("renamed_attributed", 0),
            "held": c.get("renamed_held", 0) + c.get("renamed_held_elsewhere", 0),
            "held_elsewhere": c.get("renamed_held_elsewhere", 0),
            "duplicates_created": c.get("renamed_duplicate_created", 0),
            "duplicate_share": round(c.get("renamed_duplicate_created", 0) / renamed, 3) if renamed else 0.0,
            "wrongly_attributed": c.get("renamed_wrongly_attributed", 0),
            "first_sightings": firsts,
            "false_holds": c.get("first_held", 0) + c.get("first_held_elsewhere", 0),
            "first_attributed_elsewhere": c.get("first_attributed_elsewhere", 0),
        }
    return out


# ----------------------------------------------------------------------------- report


def run_consolidation(
    *,
    pairs_path: Path | None = None,
    changes_path: Path | None = None,
    renamed: Path | None = None,
    shared: Path | None = None,
    as_json: bool = False,
    echo: Callable[[str], None] = print,
) -> dict[str, Any]:
    """Run the measurements and print them (a table, or JSON with `as_json`).

    Args:
        pairs_path: the labelled pairs (None: every file of `PAIR_FILES`).
        changes_path: the policy changes (None: ``benchmarks/consolidation/changes.jsonl``).
        renamed: the renamed set's folder (None: ``benchmarks/consolidation/renamed``).
        shared: the ``shared/data`` folder; None = `datasets.shared_data`. Without it the
            renamed measurement is skipped (reported as such).
        as_json: print one JSON object instead of the tables.
        echo: where lines go.

    Returns:
        ``{"pairs": {half: ...}, "structure_pairs": {half: ...}, "changes": {half: ...},
        "targets_met": {half: ...}, "disputed": {half: ...}, "renamed": {half: ...} | None,
        "targets": ...,
        "listings": {file: {half: ...}} | None, "subjects": {file: {half: ...}} | None,
        "crowded": {set: {half: ...}} | None}``
        (disputed: `bench.disputed.disputed_figures` of the pairs and changes; listings:
        `bench.listings.listing_figures` of each file of `bench.listings.LISTING_FILES`;
        subjects: `bench.subjects.subject_figures` of each file of `bench.subjects.SUBJECT_FILES`;
        crowded: `bench.crowded.crowded_figures` of each set of `bench.crowded.CROWDED_SETS`;
        all with the default pairs only).

    Raises:
        UserError: a set is missing or malformed.
    """
    pairs = load_pairs(pairs_path)
    changes = load_changes(changes_path)
    shared = shared or shared_data()
    with tempfile.TemporaryDirectory(prefix="insika-consolidation-") as tmp:
        results = run_pairs(pairs, Path(tmp))
        figures = pair_figures(pairs, results)
        structured = {name: pair_figures(pairs, results, name) for name in OWN_FIGURES} \
            if pairs_path is None else None
        changed = change_figures(changes, run_changes(changes, Path(tmp)))
        counts = run_renamed(Path(tmp), shared, renamed) if shared is not None else None
    result = {"pairs": figures, "structure_pairs": structured, "changes": changed,
              "targets_met": {half: targets_met(figures[half], changed[half]) for half in ("dev", "test")},
              "disputed": disputed_figures(pairs, changes),
              "renamed": renamed_figures(counts) if counts else None, "targets": TARGETS,
              "listings": {name: listing_figures(load_listings(benchmark_data(f"consolidation/{name}")))
                           for name in LISTING_FILES} if pairs_path is None else None,
              "subjects": {name: subject_figures(load_subjects(benchmark_data(f"consolidation/{name}")))
                           for name in SUBJECT_FILES} if pairs_path is None else None,
              "crowded": {name: crowded_figures(*load_crowded(benchmark_data(f"consolidation/{name}")))
                          for name in CROWDED_SETS} if pairs_path is None else None}
    if as_json:
        echo(json.dumps(result, indent=2, sort_keys=True))
    else:
        shown = pairs_path if pairs_path is not None else benchmark_data("consolidation")
        for line in report_lines(result, shown, len(pairs)):
            echo(line)
    return result


def targets_met(pairs: dict[str, Any], changes: dict[str, Any]) -> dict[str, bool]:
    """Each target of `TARGETS` that the pair and change runs of one half are read on: met?"""
    return {
        "false_same": pairs["false_same"] <= TARGETS["false_same"],
        "same_without_model": pairs["same_without_model"] >= TARGETS["same_without_model"] * pairs["same"],
        "different_merged": pairs["different_merged"] <= TARGETS["different_merged"],
        "silently_folded": changes["silently_folded"] <= TARGETS["silently_folded"],
        "unflagged_contradictory": (changes["unflagged_contradictory"] + pairs["unflagged_contradictory"]
                                    <= TARGETS["unflagged_contradictory"]),
    }


def report_lines(result: dict[str, Any], pairs_path: Path, count: int) -> list[str]:
    """The human-readable report of `run_consolidation`'s result."""
    lines = [f"consolidation bench: {count} labelled pairs ({_shown(pairs_path)}; dev = even ids, "
             "test = odd ids)"]
    for half, f in result["pairs"].items():
        labels = ", ".join(f"{f['labels'].get(k, 0)} {k}" for k in LABELS)
        c = result["changes"][half]
        met = result["targets_met"][half]
        lines += [
            "",
            f"{half}: {f['pairs']} pairs ({labels}), {c['changes']} policy changes",
            f"  false same (a different claim confirmed, no model): {f['false_same']} of "
            f"{f['different']}   (target 0){_mark(met['false_same'])}",
            f"  same decided without a model: {f['same_without_model']} of {f['same']} = "
            f"{f['same_without_model'] / max(f['same'], 1):.2f}   (target >= "
            f"{TARGETS['same_without_model']}){_mark(met['same_without_model'])}",
            f"  different claims merged under one name (b proposed under a new name): "
            f"{f['different_merged']} of {f['different']}   (target 0){_mark(met['different_merged'])}; "
            f"same claims attributed: {f['same_attributed']} of {f['same']}",
            f"  policy changes silently folded (confirmed or merged; same name, no model or a merge "
            f"model wrongly saying related): {c['silently_folded']} of {c['same_name_sightings']}   "
            f"(target 0){_mark(met['silently_folded'])}",
            f"  unflagged contradictory pairs (a change or contradicting b learned beside its rule "
            f"under another name, neither in conflict nor held): {c['unflagged_contradictory']} of "
            f"{c['changes']} changes + {f['unflagged_contradictory']} of {f['labels'].get('contradicting', 0)} "
            f"pairs   (target 0){_mark(met['unflagged_contradictory'])}",
        ]
        lines += disputed_lines(result.get("disputed") or {}, half)
        for name, own in (result.get("structure_pairs") or {}).items():
            structured = own.get(half)
            if structured:
                lines.append(
                    f"  of which {name}: false same {structured['false_same']} of "
                    f"{structured['different']}, same without a model {structured['same_without_model']} of "
                    f"{structured['same']}")
        lines.append("  policy changes, outcome of the changed rule per run:")
        for run, outcomes in c["outcomes"].items():
            shown = ", ".join(f"{k} {v}" for k, v in sorted(outcomes.items()))
            lines.append(f"    {run:30} {shown}")
        for run, title in (("no_model", "no merge model"), ("scripted_model", "scripted merge model"),
                           ("lossy_model", "lossy merge model (answers the record's text)"),
                           ("listing_model", "listing merge model (answers related, both texts side by side)"),
                           ("renamed", "b under a new name, no merge model")):
            lines.append(f"  outcomes, {title}:")
            lines.append("    " + f"{'':15}" + "".join(f"{o:>20}" for o in OUTCOMES))
            for label in LABELS:
                row = f["tables"][run][label]
                lines.append("    " + f"{label:15}" + "".join(f"{row.get(o, 0):>20}" for o in OUTCOMES))
    for name, listed in (result.get("listings") or {}).items():
        lines += ["", *listing_lines(listed, name)]
    for name, subjects in (result.get("subjects") or {}).items():
        lines += ["", *subject_lines(subjects, name)]
    for name, crowded in (result.get("crowded") or {}).items():
        lines += ["", *crowded_lines(crowded, name)]
    renamed = result["renamed"]
    lines.append("")
    if renamed is None:
        lines.append("renamed sightings: skipped (the shared sessions are not available; set "
                     "INSIKA_SHARED_DATA)")
        return lines
    lines.append("renamed sightings (shared sessions backfilled with benchmarks/consolidation/renamed/"
                 "answers.json; dev = even, test = odd session positions):")
    for half, r in renamed.items():
        lines += [
            f"  {half}: {r['renamed_sightings']} renamed sightings: {r['attributed']} recorded under "
            f"their concept, {r['held']} held as possible duplicates ({r['held_elsewhere']} of "
            f"another concept), {r['duplicates_created']} duplicates created "
            f"= {r['duplicate_share']:.1%} (target <= 5%), {r['wrongly_attributed']} wrongly "
            "attributed (target 0)",
            f"        {r['first_sightings']} first sightings: {r['false_holds']} held as possible "
            f"duplicates, {r['first_attributed_elsewhere']} recorded under another concept",
        ]
    return lines


def _mark(met: bool) -> str:
    return "" if met else "   NOT MET"


def _shown(path: Path) -> str:
    for root in (Path.cwd(), Path(__file__).resolve().parents[2]):
        try:
            return str(path.resolve().relative_to(root))
        except ValueError:
            continue
    return str(path)


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m insika_knowledge.bench.consolidation [--json] [--pairs P] [--renamed D] [--shared D]``.

    Returns:
        The exit code: 0, or 2 when a set is missing or malformed.
    """
    parser = argparse.ArgumentParser(prog="python -m insika_knowledge.bench.consolidation",
                                     description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    parser.add_argument("--pairs", type=Path, default=None, help="the labelled pairs (JSONL)")
    parser.add_argument("--changes", type=Path, default=None, help="the policy changes (JSONL)")
    parser.add_argument("--renamed", type=Path, default=None, help="the renamed set's folder")
    parser.add_argument("--shared", type=Path, default=None, help="the shared/data folder")
    args = parser.parse_args(argv)
    try:
        run_consolidation(pairs_path=args.pairs, changes_path=args.changes, renamed=args.renamed,
                          shared=args.shared, as_json=args.json)
    except UserError as exc:
        print(f"error: {exc}")
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
