"""``bench --consolidation``, crowded stores: is a new fact of a store's domain learned, and a
rule changed under a new name held?

A real store's concepts are alike (delivery times by region, prices, returns, refunds), so a
new fact of its domain ("Boleto vence em 3 dias", express shipping beside the free-shipping
threshold) is close in meaning to several of them; a rule changed and reworded under a new
name (the free-shipping threshold raised) is far closer to its old version than to any other.
The naming step holds a candidate as a possible duplicate of a concept only when that concept
is in the candidate's neighbourhood (`learn.meaning.DISTINCT_MARGIN`: its nearest, or the
two or three nearest that stand apart together).

``benchmarks/consolidation/crowded/``: ``stores.jsonl`` (three stores of 15 concepts each: a
Brazilian shop, a US restaurant, a car-rental company; ``{"store", "name", "description",
"type", "body"}``) and ``claims.jsonl`` (24 claims per store under names the store does not
have: ``distinct``, a new fact of the store's domain, or ``changed``, a version of the stored
concept ``of`` with one thing changed; ``{"id", "store", "label", "of", "name", "description",
"type", "body", "lang"}``), written by a reader who saw no code. Each claim is learned, stated by
the agent, against its store as written (a fresh copy for each), through `Memory.learn_turn`
with the offline semantic index when it is installed (without it the lexical rules alone
run). Split by parity of the id (even = ``dev``, odd = ``test``).
"""

from __future__ import annotations

import shutil
import tempfile
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from insika_knowledge.bench.datasets import benchmark_data, half_of, jsonl_rows, labelled_cases
from insika_knowledge.concept import Concept
from insika_knowledge.config import KnowledgeConfig
from insika_knowledge.errors import UserError
from insika_knowledge.extract.given import GivenModel

#: The labels of a claim.
CROWDED_LABELS: Final = ("distinct", "changed")
#: The set's folder under ``benchmarks/``.
CROWDED_FOLDER: Final = "consolidation/crowded"
#: The sets `bench --consolidation` runs: the blind one, an attack written against the
#: first version of the rule (``crowded-attack/README.md``), and sparse stores, where each
#: rule is the only one of its kind and a new rule copies the shape of one on record
#: (``sparse/README.md``, blind: "free gift wrap over $100" beside "free shipping over $50").
CROWDED_SETS: Final = ("crowded", "crowded-attack", "sparse")
_AGENT: Final = "shop"
_TENANT: Final = "crowded"
_FIELDS: Final = ("name", "description", "type", "body")


@dataclass(frozen=True, slots=True)
class CrowdedClaim:
    """One labelled claim against a store (see the module doc)."""

    id: int
    store: str
    label: str
    of: str
    item: dict[str, str]


def load_crowded(folder: Path | None = None) -> tuple[dict[str, list[dict[str, str]]], list[CrowdedClaim]]:
    """The stores (store id -> its concepts) and the claims of the set in `folder` (None:
    ``benchmarks/consolidation/crowded``).

    Raises:
        UserError: a file is missing, a line is not a concept or a claim, or a claim names a
            store or a concept ``of`` the stores do not have (file and line named).
    """
    folder = folder if folder is not None else benchmark_data(CROWDED_FOLDER)
    stores: dict[str, list[dict[str, str]]] = {}
    for number, row in jsonl_rows(folder / "stores.jsonl", "the crowded stores", CROWDED_FOLDER):
        try:
            stores.setdefault(str(row["store"]), []).append({k: str(row[k]) for k in _FIELDS})
        except (KeyError, TypeError) as exc:
            raise UserError(f"{folder / 'stores.jsonl'}:{number}: not a stored concept ({exc})") from None
    claims = labelled_cases(folder / "claims.jsonl", "the crowded claims", "a crowded claim", CROWDED_FOLDER,
                            _claim, CROWDED_LABELS)
    for claim in claims:
        names = {c["name"] for c in stores.get(claim.store, [])}
        if not names or (claim.label == "changed" and claim.of not in names):
            raise UserError(f"{folder / 'claims.jsonl'}: claim {claim.id} names store {claim.store!r} / concept "
                            f"{claim.of!r}, which the stores do not have")
    return stores, claims


def _claim(row: Any) -> CrowdedClaim:
    return CrowdedClaim(int(row["id"]), str(row["store"]), str(row["label"]), str(row.get("of", "")),
                        {k: str(row[k]) for k in _FIELDS})


def crowded_figures(stores: dict[str, list[dict[str, str]]], claims: list[CrowdedClaim]) -> dict[str, dict[str, Any]]:
    """Learn each claim against its store (module doc).

    Returns:
        ``{"dev": {"distinct": n, "distinct_learned": k, "changed": m, "changed_held": j,
        "changed_held_against_its_rule": i, "outcomes": {"label:outcome": count}}, "test": {...}}``.
    """
    from insika_knowledge.memory import Memory  # the front door loads the whole engine

    figures: dict[str, dict[str, Any]] = {half: {"outcomes": Counter(), "changed_held_against_its_rule": 0}
                                          for half in ("dev", "test")}
    with tempfile.TemporaryDirectory(prefix="insika-crowded-") as tmp:
        for store_id, concepts in stores.items():
            _write_store(Memory, Path(tmp) / store_id, concepts)
        for claim in claims:
            copy = Path(tmp) / f"claim-{claim.id}"
            shutil.copytree(Path(tmp) / claim.store, copy)
            memory = Memory(copy)
            try:
                said = f"{claim.item['description']} {claim.item['body']}"
                report = memory.learn_turn(
                    _AGENT, KnowledgeConfig(), tenant=_TENANT, session_id=f"claim-{claim.id}", turn_id="t",
                    messages=[{"role": "user", "content": "Can you tell me about this?"},
                              {"role": "assistant", "content": said}], model=GivenModel([claim.item]))
                outcome = report.results[0][1] if report.results else "dropped"
                held = memory.store(_TENANT).possible_duplicates(_AGENT, claim.of) if claim.label == "changed" else []
            finally:
                memory.close()
                shutil.rmtree(copy, ignore_errors=True)
            f = figures[half_of(claim.id)]
            f["outcomes"][f"{claim.label}:{outcome}"] += 1
            f["changed_held_against_its_rule"] += bool(held)
    for f in figures.values():
        outcomes: Counter[str] = f["outcomes"]
        for label in CROWDED_LABELS:
            f[label] = sum(v for k, v in outcomes.items() if k.startswith(f"{label}:"))
        f["distinct_learned"] = outcomes["distinct:learned"]
        f["changed_held"] = f["changed"] - outcomes["changed:learned"]
        f["outcomes"] = dict(sorted(outcomes.items()))
    return figures


def _write_store(memory_type: Any, folder: Path, concepts: list[dict[str, str]]) -> None:
    """A store of `concepts` as learned ones (observed), with their vectors when a provider is there."""
    memory = memory_type(folder)
    try:
        store = memory.store(_TENANT)
        with store.transaction() as tx:
            for i, c in enumerate(concepts):
                tx.put(_AGENT, Concept(name=c["name"], description=c["description"], type=c["type"],
                                       provenance="observed", confidence=0.6, sources=(f"seed-{i}",), occurrences=1,
                                       created_at="2026-01-01T00:00:00Z", updated_at="2026-01-01T00:00:00Z",
                                       body=c["body"]), reason="extract", actor="bench")
        semantic = memory.retriever(_TENANT).semantic()
        if semantic is not None:
            semantic.embed_pending(_AGENT)
    finally:
        memory.close()


def crowded_lines(figures: dict[str, dict[str, Any]], name: str = CROWDED_SETS[0]) -> list[str]:
    """The report lines of `crowded_figures` of the set `name`."""
    lines = [f"crowded stores (benchmarks/consolidation/{name}; dev = even ids, test = odd ids):"]
    for half, f in figures.items():
        lines.append(f"  {half}: new facts of the store's domain learned {f['distinct_learned']} of {f['distinct']} "
                     f"(held otherwise); changed rules under a new name held {f['changed_held']} of {f['changed']} "
                     f"({f['changed_held_against_its_rule']} against the rule they change)")
    return lines
