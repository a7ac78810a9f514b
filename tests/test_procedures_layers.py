from __future__ import annotations

from collections.abc import Collection, Mapping
from pathlib import Path

import grimp
import pytest

from insika_knowledge.procedure import Procedure, ProcedureStep, wilson_lower_bound
from insika_knowledge.procedures.mining.scoring import MinedRun
from insika_knowledge.procedures.mining.shared import MemoryNotes
from insika_knowledge.store.sqlite.procedures import ProcedureStore

STEPS = (ProcedureStep("cancel(id=<ID>)", "cancel(id)"),)
KEY = "proc-aaaaaaaaaaaa"


@pytest.fixture(scope="module")
def graph() -> grimp.ImportGraph:
    return grimp.build_graph("insika_knowledge", cache_dir=None)


def _imports(graph: grimp.ImportGraph, package: str) -> set[str]:
    """Modules outside `package` that modules inside it import (anywhere in the file)."""
    inside = {package} | graph.find_descendants(package)
    out: set[str] = set()
    for module in inside:
        out |= graph.find_modules_directly_imported_by(module)
    return {m for m in out if m != package and not m.startswith(package + ".")}


def test_the_model_and_the_store_import_nothing_from_the_procedures_service(
    graph: grimp.ImportGraph,
) -> None:
    assert _imports(graph, "insika_knowledge.procedure") == set()
    for package in ("insika_knowledge.procedure", "insika_knowledge.store"):
        leaks = {m for m in _imports(graph, package) if m.startswith("insika_knowledge.procedures")}
        assert leaks == set(), package


@pytest.mark.parametrize(
    ("package", "allowed"),
    [
        ("trace", set()),
        ("mining", {"trace"}),
        ("recall", {"trace"}),
    ],
)
def test_procedures_subpackages_only_point_down(
    graph: grimp.ImportGraph, package: str, allowed: set[str]
) -> None:
    prefix = "insika_knowledge.procedures."
    reached = {
        m[len(prefix):].split(".")[0]
        for m in _imports(graph, prefix + package)
        if m.startswith(prefix)
    }
    assert reached <= allowed


def test_the_package_exposes_its_entry_points_by_plain_import() -> None:
    import insika_knowledge.procedures as procedures

    assert not hasattr(procedures, "__getattr__")
    assert procedures.ProceduralMemory.__module__ == "insika_knowledge.procedures.skill"
    assert procedures.ProceduresConfig.__module__ == "insika_knowledge.procedures.config"


class MemoryRows:
    """`ProcedureRows` in dicts: the counting rules need nothing but these calls."""

    def __init__(self) -> None:
        self.runs: dict[tuple[str, str], str] = {}
        self.procedures: dict[str, Procedure] = {}
        self.population: dict[str, int] = {}
        self.notes = MemoryNotes()
        self.writes = 0

    def population_terms(self, terms: Collection[str]) -> set[str]:
        return {t for t in terms if t in self.population}

    def count_population(self, increments: Mapping[str, int]) -> None:
        for term, runs in increments.items():
            self.population[term] = self.population.get(term, 0) + runs

    def note_terms(self, scope: str, session: str, terms: Collection[str]) -> dict[str, int]:
        return self.notes.note(scope, session, terms)

    def now(self) -> str:
        return "2026-01-01T00:00:00Z"

    def claim_run(self, procedure_id: str, run_id: str, verdict: str, at: str) -> bool:
        if (procedure_id, run_id) in self.runs:
            return False
        self.runs[procedure_id, run_id] = verdict
        return True

    def failures_recorded(self, procedure_id: str) -> int:
        return sum(1 for (p, _), v in self.runs.items() if p == procedure_id and v == "failure")

    def get(self, procedure_id: str) -> Procedure | None:
        return self.procedures.get(procedure_id)

    def put(self, procedure: Procedure) -> None:
        self.writes += 1
        self.procedures[procedure.id] = procedure


def _success(run: str, terms: frozenset[str] = frozenset({"cancel"})) -> MinedRun:
    return MinedRun(run, "success", (KEY,), "tool", STEPS, ("cancel",), terms, "cancel it")


RUNS = [
    MinedRun("f1", "failure", (KEY, "proc-bbbbbbbbbbbb")),
    _success("s1"),
    _success("s1"),
    _success("s2", frozenset({"cancel", "flight"})),
    MinedRun("f2", "failure", (KEY,)),
]


def test_scoring_counts_runs_through_any_procedure_rows(tmp_path: Path) -> None:
    rows = MemoryRows()
    counted = [run.record(rows) for run in RUNS]
    procedure = rows.procedures[KEY]
    assert counted == [2, 1, 0, 1, 1]
    assert (procedure.successes, procedure.failures) == (2, 2)
    # "flight" was in one session's task only: not a trigger (issue 16, the two-session rule)
    assert (procedure.triggers, procedure.trigger_runs) == ({"cancel": 2}, 2)
    assert procedure.confidence == pytest.approx(wilson_lower_bound(2, 4))
    assert rows.writes == 3

    store = ProcedureStore(tmp_path / "t.db")
    assert [store.record_runs([run]) for run in RUNS] == counted
    stored = store.get(KEY)
    store.close()
    assert stored is not None
    assert (stored.successes, stored.failures, stored.triggers, stored.trigger_runs) == (
        procedure.successes,
        procedure.failures,
        procedure.triggers,
        procedure.trigger_runs,
    )
    assert stored.steps == STEPS
