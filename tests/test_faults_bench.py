"""`bench --faults` runs (a quick SQLite round): kills lose no acknowledged turn, restarts resume.

The figures (latency with the database down, resume times) are the benchmark's to report
(benchmarks/README.md); this only keeps the bench working and its loss count at zero.
"""

from __future__ import annotations

from insika_knowledge.bench.faults import run_faults_bench


def test_a_quick_fault_run_loses_no_acknowledged_turn() -> None:
    lines: list[str] = []
    figures = run_faults_bench(quick=True, backends=("sqlite",), echo=lines.append)["sqlite"]
    kills = figures["kills"]
    assert kills["kills_random"] == 10 and kills["kills_at_ack"] == 4
    assert kills["acknowledged"] > 0 and kills["lost"] == 0, kills["lost_ids"]
    assert kills["resumed"], kills
    assert figures["restarts"]["restarts"] == 2 and figures["restarts"]["resumed_s_max"] < 60, figures["restarts"]
    assert figures["hooks_down"]["lost"] == 0, figures["hooks_down"]
    assert any(line.startswith("sqlite: ") and "acknowledged turns lost" in line for line in lines)
