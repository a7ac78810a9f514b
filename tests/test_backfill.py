"""Backfill: stored sessions replayed through the extractor, resumable and failure-tolerant."""

from __future__ import annotations

import json
import re
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from conftest import LOOKED_UP

from insika_knowledge.backfill import BACKFILL_TURN, BackfillSummary, backfill
from insika_knowledge.bench.datasets import shared_data
from insika_knowledge.cli import cli
from insika_knowledge.config import load_config
from insika_knowledge.events import Recorder
from insika_knowledge.memory import Memory

ROOT = Path(__file__).resolve().parents[1]
AIRLINE = (shared_data() or Path("/work/shared/data")) / "tau_bench_airline" / "normalized.jsonl"
SHARED_REPLAY = ROOT / "replays" / "shared_sessions.json"
AGENT = "airline"
SUMMARY_RE = re.compile(
    r"backfill (?P<agent>\S+): (?P<sessions>\d+) sessions \((?P<statuses>[^)]*)\); "
    r"learned (?P<learned>\d+), confirmed (?P<confirmed>\d+), merged (?P<merged>\d+), "
    r"conflicts (?P<conflicts>\d+), dropped (?P<dropped>\d+)"
)
EVENT_KEYS = {"agent", "sessions", "concepts", "conflicts", "dropped"}

needs_shared = pytest.mark.skipif(
    not (AIRLINE.is_file() and SHARED_REPLAY.is_file()),
    reason="the shared tau-bench sample or the recorded replay is not available",
)


# ----------------------------------------------------------------------------- helpers


def _run(*args: str):  # noqa: ANN202 - click's Result
    return CliRunner().invoke(cli, ["backfill", *args])


def _summary(output: str) -> tuple[dict[str, int], Counter[str]]:
    match = SUMMARY_RE.search(output)
    assert match, output
    numbers = {k: int(v) for k, v in match.groupdict().items() if k not in {"agent", "statuses"}}
    statuses = Counter({k: int(v) for k, v in re.findall(r"([\w-]+) (\d+)", match["statuses"])})
    return numbers, statuses


def _candidate(name: str, text: str, ctype: str = "fact") -> dict[str, str]:
    return {"name": name, "description": text, "type": ctype, "body": f"{text} Details for {name}."}


def _session(session_id: str, started_at: Any = None, text: str = "hello") -> dict[str, Any]:
    record: dict[str, Any] = {
        "session_id": session_id,
        "source": "test",
        "messages": [
            {"role": "system", "content": "You are a support agent."},
            {"role": "user", "content": text},
            {"role": "assistant", "content": "Sure."},
        ],
        "outcome": None,
    }
    if started_at is not None:
        record["metadata"] = {"started_at": started_at}
    return record


def _write_jsonl(path: Path, sessions: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(s, ensure_ascii=False) + "\n" for s in sessions),
                    encoding="utf-8")
    return path


def _write_replay(path: Path, extract: dict[str, Any]) -> Path:
    path.write_text(json.dumps({"extract": extract, "consolidate": {}}), encoding="utf-8")
    return path


def _concepts(data_dir: Path, agent: str = AGENT, database: str | None = None) -> dict[str, Any]:
    memory = Memory(data_dir, database=database)
    try:
        return {s.concept.name: s for s in memory.store("default").list_concepts(agent)}
    finally:
        memory.close()


def _api_run(data_dir: Path, sessions: Path, replay: Path, agent: str = AGENT,
             database: str | None = None, **kwargs: Any) -> tuple[BackfillSummary, Recorder]:
    """One backfill with a fresh `Memory` (as a separate process run would have)."""
    memory = Memory(data_dir, database=database)
    recorder = Recorder()
    memory.events.subscribe(recorder)
    try:
        summary = backfill(memory, agent, load_config({"model": f"replay:{replay}"}), sessions,
                           **kwargs)
    finally:
        memory.close()
    return summary, recorder


def _by_id(summary: BackfillSummary) -> dict[str, str]:
    return {s.session_id: s.status for s in summary.statuses}


def _airline_ids() -> list[str]:
    lines = [line for line in AIRLINE.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [json.loads(line)["session_id"] for line in lines]


def _recorded_airline_ids() -> set[str]:
    answers = json.loads(SHARED_REPLAY.read_text(encoding="utf-8"))["extract"]
    return {i for i in _airline_ids() if i in answers}


# ----------------------------------------------------------------------------- shared sample


@needs_shared
def test_cli_backfill_of_the_airline_sample(tmp_path: Path) -> None:
    data = tmp_path / "data"
    result = _run("--agent", AGENT, "--sessions", str(AIRLINE),
                  "--model", f"replay:{SHARED_REPLAY}",
                  "--data-dir", str(data), "--quiet")
    assert result.exit_code == 0, result.output
    numbers, statuses = _summary(result.output)
    ids = _airline_ids()
    recorded = _recorded_airline_ids()
    assert numbers["sessions"] == len(ids) == 60
    assert sum(statuses.values()) == len(ids)
    # Sessions without a recorded answer are reported, and do not stop the others.
    assert statuses["model_empty"] == len(ids) - len(recorded)
    assert statuses["done"] == len(recorded)
    assert numbers["learned"] >= 1

    concepts = _concepts(data)
    assert len(concepts) == numbers["learned"]  # each "learned" is one new concept
    for stored in concepts.values():
        assert set(stored.concept.sources) <= recorded
    memory = Memory(data)
    store = memory.store("default")
    for session_id in set(ids) - recorded:
        assert store.extraction(AGENT, session_id, BACKFILL_TURN).outcome == "model_empty"
    memory.close()

    name = sorted(concepts)[0]
    show = CliRunner().invoke(cli, ["show", "--agent", AGENT, "--data-dir", str(data), name])
    assert show.exit_code == 0, show.output
    assert show.output == concepts[name].markdown


@needs_shared
def test_rerun_skips_done_sessions_and_changes_nothing(tmp_path: Path, database: str | None) -> None:
    data = tmp_path / "data"
    first, rec1 = _api_run(data, AIRLINE, SHARED_REPLAY, database=database)
    done = {i for i, s in _by_id(first).items() if s == "done"}
    assert done == _recorded_airline_ids()
    versions = {n: s.version for n, s in _concepts(data, database=database).items()}
    assert versions

    second, rec2 = _api_run(data, AIRLINE, SHARED_REPLAY, database=database)
    statuses = _by_id(second)
    assert {i for i, s in statuses.items() if s == "skipped"} == done
    assert all(s == "model_empty" for i, s in statuses.items() if i not in done)
    assert {n: s.version for n, s in _concepts(data, database=database).items()} == versions

    [event1] = rec1.named("knowledge_backfilled")
    [event2] = rec2.named("knowledge_backfilled")
    assert set(event1) == set(event2) == EVENT_KEYS
    assert event1["agent"] == event2["agent"] == AGENT
    assert event1["sessions"] == len(done)
    assert event1["concepts"] == sum(first.total(k) for k in ("learned", "confirmed", "merged"))
    assert event1["concepts"] >= len(versions)
    assert (event2["sessions"], event2["concepts"], event2["conflicts"]) == (0, 0, 0)
    # The backfill event is the last one of a run: every extraction came before it.
    assert rec1.events[-1][0] == "knowledge_backfilled"


# ----------------------------------------------------------------------------- failures


def test_one_malformed_session_does_not_stop_the_others(tmp_path: Path) -> None:
    sessions = _write_jsonl(tmp_path / "s.jsonl", [_session("s1"), _session("s2"), _session("s3")])
    replay = _write_replay(tmp_path / "r.json", {
        "s1": [_candidate("first-fact", "Bags under 23 kg fly free.")],
        "s2": '[{"name": "broken", "description": "oops"',  # truncated JSON
        "s3": [_candidate("third-fact", "Check-in closes 45 minutes before departure.")],
    })
    data = tmp_path / "data"
    result = _run("--agent", AGENT, "--sessions", str(sessions), "--model", f"replay:{replay}",
                  "--data-dir", str(data), "--quiet")
    assert result.exit_code == 0, result.output
    numbers, statuses = _summary(result.output)
    assert statuses == Counter({"done": 2, "model_malformed": 1})
    assert set(_concepts(data)) == {"first-fact", "third-fact"}
    memory = Memory(data)
    record = memory.store("default").extraction(AGENT, "s2", BACKFILL_TURN)
    memory.close()
    assert record is not None and record.outcome == "model_malformed" and record.retryable
    versions = {n: s.version for n, s in _concepts(data).items()}

    # Fix the recorded answer; a re-run processes only the session that failed.
    _write_replay(tmp_path / "r.json", {
        "s1": [_candidate("first-fact", "Bags under 23 kg fly free.")],
        "s2": [_candidate("second-fact", "Pets travel in the cabin for a fee.")],
        "s3": [_candidate("third-fact", "Check-in closes 45 minutes before departure.")],
    })
    summary, _ = _api_run(data, sessions, replay)
    assert _by_id(summary) == {"s1": "skipped", "s2": "done", "s3": "skipped"}
    after = _concepts(data)
    assert set(after) == {"first-fact", "second-fact", "third-fact"}
    assert after["second-fact"].concept.sources == ("s2",)
    assert {n: after[n].version for n in versions} == versions


def test_model_failures_are_per_session_statuses(tmp_path: Path) -> None:
    sessions = _write_jsonl(tmp_path / "s.jsonl", [_session(f"s{i}") for i in range(1, 5)])
    replay = _write_replay(tmp_path / "r.json", {
        "s1": "   ",                      # empty answer
        "s2": '{"not": "an array"}',      # valid JSON text, wrong shape
        "s4": [_candidate("kept-fact", "Seats can be chosen at booking.")],
    })                                    # s3: no recorded answer at all
    summary, recorder = _api_run(tmp_path / "data", sessions, replay)
    assert _by_id(summary) == {
        "s1": "model_empty", "s2": "model_malformed", "s3": "model_empty", "s4": "done",
    }
    assert set(_concepts(tmp_path / "data")) == {"kept-fact"}
    [event] = recorder.named("knowledge_backfilled")
    assert (event["sessions"], event["concepts"]) == (1, 1)


def test_dropped_candidates_are_counted(tmp_path: Path) -> None:
    sessions = _write_jsonl(tmp_path / "s.jsonl", [_session("s1")])
    stamped = {**_candidate("stamped", "Has an engine key."), "confidence": 1.0}
    replay = _write_replay(tmp_path / "r.json", {
        "s1": [_candidate("good-fact", "Infants fly on a lap."), stamped, "not an object"],
    })
    summary, recorder = _api_run(tmp_path / "data", sessions, replay)
    [event] = recorder.named("knowledge_backfilled")
    assert sum(event["dropped"].values()) == 2
    assert event["dropped"] == dict(summary.dropped)
    assert set(_concepts(tmp_path / "data")) == {"good-fact"}


def test_an_answer_with_no_candidate_of_the_right_shape_is_retried_when_fixed(tmp_path: Path) -> None:
    # Every candidate lacks a key: the answer held nothing usable, so the session is not done;
    # once the file is fixed, a re-run learns from it (it is not skipped as done).
    sessions = _write_jsonl(tmp_path / "s.jsonl", [_session("s1"), _session("s2")])
    replay = _write_replay(tmp_path / "r.json", {
        "s1": [{"name": "no-body", "description": "Bags under 23 kg fly free.", "type": "fact"},
               {"title": "wrong keys", "text": "Pets travel in the cabin."}],
        "s2": [_candidate("kept-fact", "Seats can be chosen at booking.")],
    })
    summary, _ = _api_run(tmp_path / "data", sessions, replay)
    assert _by_id(summary) == {"s1": "model_malformed", "s2": "done"}
    [s1] = [s for s in summary.statuses if s.session_id == "s1"]
    assert s1.detail and "candidate 0: invalid: missing body" in s1.detail
    assert sum(summary.dropped.values()) == 2
    _write_replay(tmp_path / "r.json", {
        "s1": [_candidate("fixed-fact", "Bags under 23 kg fly free.")],
        "s2": [_candidate("kept-fact", "Seats can be chosen at booking.")],
    })
    summary, _ = _api_run(tmp_path / "data", sessions, replay)
    assert _by_id(summary) == {"s1": "done", "s2": "skipped"}
    assert set(_concepts(tmp_path / "data")) == {"kept-fact", "fixed-fact"}


# ----------------------------------------------------------------------------- --since


def test_since_skips_older_sessions_only(tmp_path: Path) -> None:
    sessions = _write_jsonl(tmp_path / "s.jsonl", [
        _session("old", "2026-01-15T10:00:00Z"),
        _session("new", "2026-09-01T08:00:00Z"),
        _session("untimed"),
        # 23:30 at UTC-1 is 00:30 UTC on the day of --since: after it.
        _session("offset", "2026-07-31T23:30:00-01:00"),
        # 01:30 at UTC+3 is 22:30 UTC the day before: before it.
        _session("offset-old", "2026-08-01T01:30:00+03:00"),
    ])
    replay = _write_replay(tmp_path / "r.json", {
        sid: [_candidate(f"{sid}-fact", text)]
        for sid, text in (("old", "Pets travel in the cabin."), ("new", "Seats can be chosen online."),
                          ("untimed", "Lounges open at dawn."), ("offset", "Meals come on long flights."),
                          ("offset-old", "Wifi is sold onboard."))
    })
    data = tmp_path / "data"
    result = _run("--agent", AGENT, "--sessions", str(sessions), "--model", f"replay:{replay}",
                  "--since", "2026-08-01T00:00:00Z", "--data-dir", str(data), "--quiet")
    assert result.exit_code == 0, result.output
    _, statuses = _summary(result.output)
    assert statuses == Counter({"done": 3, "before-since": 2})
    assert set(_concepts(data)) == {"new-fact", "untimed-fact", "offset-fact"}
    memory = Memory(data)
    store = memory.store("default")
    assert store.extraction(AGENT, "old", BACKFILL_TURN) is None
    assert store.extraction(AGENT, "offset-old", BACKFILL_TURN) is None
    memory.close()

    summary, _ = _api_run(data, sessions, replay)  # without --since the old ones run now
    assert _by_id(summary) == {"old": "done", "new": "skipped", "untimed": "skipped",
                               "offset": "skipped", "offset-old": "done"}


# ----------------------------------------------------------------------------- concurrency


ONLY = ("Pets travel in the cabin.", "Seats can be chosen online.", "Lounges open at dawn.",
        "Meals come on long flights.", "Wifi is sold onboard.", "Infants fly on a lap.",
        "Blankets are handed out at night.", "Headphones are offered at the gate.", "Strollers go in the hold.",
        "Surfboards need a special tag.", "Bicycles ride boxed.", "Golf clubs count as one bag.")


def _contended(tmp_path: Path, sessions_count: int = 12) -> tuple[list[str], Path, Path]:
    """Sessions that all teach one concept, every third another, each one its own; the replay."""
    ids = [f"c{i:02d}" for i in range(sessions_count)]
    records = [_session(i) for i in ids]
    for record in records:  # the agent looked the rules up and read them out: what the model reads them from
        record["messages"][2:2] = [*LOOKED_UP, {"role": "assistant", "content": (
            "Economy includes one checked bag up to 23 kg; refunds are possible within 24 hours of booking.")}]
    sessions = _write_jsonl(tmp_path / "s.jsonl", records)
    shared = _candidate("baggage-allowance", "Economy includes one checked bag up to 23 kg.",
                        "policy")
    common = _candidate("refund-window", "Refunds are possible within 24 hours of booking.")
    extract: dict[str, Any] = {}
    for n, sid in enumerate(ids):
        # Each session's own concept is a different thing (near-identical texts under two
        # names would be held as possible duplicates).
        answer = [shared, _candidate(f"only-{sid}", ONLY[n % len(ONLY)])]
        if n % 3 == 0:
            answer.append(common)
        extract[sid] = answer
    return ids, sessions, _write_replay(tmp_path / "r.json", extract)


def _outcome(data: Path, database: str | None) -> dict[str, tuple[Any, ...]]:
    """Each concept's occurrences, sources, confidence, description and body."""
    return {
        name: (s.concept.occurrences, frozenset(s.concept.sources), s.concept.confidence,
               s.concept.description, s.concept.body)
        for name, s in _concepts(data, database=database).items()
    }


def test_concurrency_gives_the_same_concepts(tmp_path: Path, backend: str, request) -> None:
    ids, sessions, replay = _contended(tmp_path)
    results = {}
    for workers in (1, 4):
        data = tmp_path / f"data-{workers}"
        database = None if backend == "sqlite" else request.getfixturevalue("pg_cluster").url(
            request.getfixturevalue("pg_cluster").create_database())
        where = ["--data-dir", str(data)] if database is None else ["--database", database]
        result = _run("--agent", AGENT, "--sessions", str(sessions), "--model", f"replay:{replay}",
                      "--concurrency", str(workers), *where, "--quiet")
        assert result.exit_code == 0, result.output
        _, statuses = _summary(result.output)
        assert statuses == Counter({"done": len(ids)})
        results[workers] = _outcome(data, database)
    assert results[1] == results[4]
    occurrences, sources, *_ = results[4]["baggage-allowance"]
    assert (occurrences, sources) == (len(ids), frozenset(ids))
    common_ids = frozenset(ids[::3])
    assert results[4]["refund-window"][:2] == (len(common_ids), common_ids)
    assert len(results[4]) == len(ids) + 2


_REPLICA_SECONDS = 180  # generous: two spawned interpreters importing the package on a loaded machine


def _replica(data: str, database: str | None, sessions: str, replay: str, start: Any) -> dict[str, int]:
    """One replica's backfill, in its own process, started with the others (`start`)."""
    memory = Memory(data, database=database)
    memory.store("default")  # open (and migrate) before the start line
    start.wait(timeout=_REPLICA_SECONDS)  # a replica that never arrives fails the test, not hangs it
    try:
        summary = backfill(memory, AGENT, load_config({"model": f"replay:{replay}"}), sessions, concurrency=2)
    finally:
        memory.close()
    found: dict[str, Any] = dict(Counter(s.status for s in summary.statuses))
    details = sorted({s.detail for s in summary.statuses if s.status == "error" and s.detail})
    if details:  # what went wrong, in the assertion's message
        found["details"] = details[:3]
    return found


def test_two_replicas_backfilling_the_same_sessions_end_as_one_replica_alone(
    tmp_path: Path, backend: str, request
) -> None:
    import multiprocessing as mp

    ids, sessions, replay = _contended(tmp_path, 24)
    alone = tmp_path / "alone"
    shared = tmp_path / "shared"
    if backend == "sqlite":
        databases: dict[Path, str | None] = {alone: None, shared: None}
    else:
        cluster = request.getfixturevalue("pg_cluster")
        databases = {alone: cluster.url(cluster.create_database()),
                     shared: cluster.url(cluster.create_database())}
    first, _ = _api_run(alone, sessions, replay, database=databases[alone])
    assert Counter(_by_id(first).values()) == Counter({"done": len(ids)})

    ctx = mp.get_context("spawn")
    with ctx.Manager() as manager:
        start = manager.Barrier(2)
        # A process pool executor (not multiprocessing.Pool) so that a replica process that dies
        # raises BrokenProcessPool instead of leaving the test waiting for ever; a bound on each.
        with ProcessPoolExecutor(2, mp_context=ctx) as pool:
            futures = [pool.submit(_replica, str(shared), databases[shared], str(sessions), str(replay), start)
                       for _ in range(2)]
            runs = [future.result(timeout=_REPLICA_SECONDS * 2) for future in futures]
    # Every session was done by one replica or the other (or both, counting once).
    assert all(set(run) <= {"done", "skipped"} for run in runs), runs

    expected = _outcome(alone, databases[alone])
    assert _outcome(shared, databases[shared]) == expected
    assert expected["baggage-allowance"][:2] == (len(ids), frozenset(ids))
    memories = [Memory(folder, database=databases[folder]) for folder in (alone, shared)]
    try:
        one, two = (m.store("default") for m in memories)
        for name in expected:  # the same sightings (which of them came first may differ)
            ledgers = [two.sightings(AGENT, name), one.sightings(AGENT, name)]
            assert len({frozenset(s[:2] for s in ledger) for ledger in ledgers}) == 1
            assert len({frozenset(Counter(s.outcome for s in ledger).items()) for ledger in ledgers}) == 1
            assert len(ledgers[0]) == len({s[:2] for s in ledgers[0]})  # none twice
        assert len(two.extractions(AGENT)) == len(one.extractions(AGENT)) == len(ids)
    finally:
        for memory in memories:
            memory.close()


def test_concurrent_summary_keeps_file_order(tmp_path: Path) -> None:
    ids = [f"o{i}" for i in range(10)]
    sessions = _write_jsonl(tmp_path / "s.jsonl", [_session(i) for i in ids])
    replay = _write_replay(tmp_path / "r.json", {
        i: [_candidate(f"fact-{i}", f"Fact number {i}.")] for i in ids[::2]
    })
    summary, _ = _api_run(tmp_path / "data", sessions, replay, concurrency=4)
    assert [s.session_id for s in summary.statuses] == ids
    assert [s.status for s in summary.statuses] == ["done", "model_empty"] * 5


# ----------------------------------------------------------------------------- bad input


def _no_concepts_written(data: Path) -> bool:
    db = data / "default.db"
    return not db.exists() or not _concepts(data)


def test_non_json_line_is_rejected_before_any_write(tmp_path: Path) -> None:
    sessions = tmp_path / "s.jsonl"
    good = json.dumps(_session("first"))
    sessions.write_text(f"{good}\n\n{{not json at all\n{json.dumps(_session('last'))}\n",
                        encoding="utf-8")
    replay = _write_replay(tmp_path / "r.json", {
        "first": [_candidate("first-fact", "Written only if input were read lazily.")],
        "last": [_candidate("last-fact", "Also never written.")],
    })
    data = tmp_path / "data"
    result = _run("--agent", AGENT, "--sessions", str(sessions), "--model", f"replay:{replay}",
                  "--data-dir", str(data), "--quiet")
    assert result.exit_code == 2
    assert "Traceback" not in result.output
    assert f"{sessions}:3" in result.output  # file and (1-based, blank lines counted) line number
    assert _no_concepts_written(data)


@pytest.mark.parametrize("case", ["missing-sessions", "concurrency-0", "missing-replay",
                                  "bad-since", "bad-replay", "no-model", "not-an-object",
                                  "not-utf8"])
def test_bad_input_is_a_usage_error(tmp_path: Path, case: str) -> None:
    sessions = _write_jsonl(tmp_path / "s.jsonl", [_session("s1")])
    replay = _write_replay(tmp_path / "r.json", {"s1": [_candidate("some-fact", "A fact.")]})
    data = tmp_path / "data"
    args = ["--agent", AGENT, "--sessions", str(sessions), "--model", f"replay:{replay}",
            "--data-dir", str(data), "--quiet"]
    expect_in_message = None
    if case == "missing-sessions":
        missing = tmp_path / "nope.jsonl"
        args[3] = str(missing)
        expect_in_message = str(missing)
    elif case == "concurrency-0":
        args += ["--concurrency", "0"]
        expect_in_message = "--concurrency"
    elif case == "missing-replay":
        missing = tmp_path / "nope.json"
        args[5] = f"replay:{missing}"
        expect_in_message = str(missing)
    elif case == "bad-since":
        args += ["--since", "last tuesday"]
        expect_in_message = "--since"
    elif case == "bad-replay":
        (tmp_path / "r.json").write_text("{broken", encoding="utf-8")
        expect_in_message = str(replay)
    elif case == "no-model":
        args[4:6] = []
        expect_in_message = "model"
    elif case == "not-an-object":
        sessions.write_text('["a list, not a session"]\n', encoding="utf-8")
        expect_in_message = f"{sessions}:1"
    elif case == "not-utf8":
        # A valid first line (that must not be learned), then Latin-1 bytes.
        sessions.write_bytes(json.dumps(_session("s1")).encode() + b'\n{"session_id": "caf\xe9"}\n')
        expect_in_message = str(sessions)
    result = _run(*args)
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    assert expect_in_message in result.output
    assert _no_concepts_written(data)


# ----------------------------------------------------------------------------- attacks


def _args(sessions: Path, replay: Path | str, data: Path) -> list[str]:
    model = replay if isinstance(replay, str) else f"replay:{replay}"
    return ["--agent", AGENT, "--sessions", str(sessions), "--model", model,
            "--data-dir", str(data), "--quiet"]


def test_an_unusable_provider_fails_before_any_session_runs(tmp_path: Path) -> None:
    sessions = _write_jsonl(tmp_path / "s.jsonl", [_session("s1"), _session("s2")])
    data = tmp_path / "data"
    result = _run(*_args(sessions, "foo/bar", data))
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    assert "foo/bar" in result.output
    if (data / "default.db").exists():
        memory = Memory(data)
        assert memory.store("default").extraction(AGENT, "s1", BACKFILL_TURN) is None
        memory.close()


def test_a_session_that_errors_fails_the_run_and_shows_why(tmp_path: Path, monkeypatch) -> None:
    sessions = _write_jsonl(tmp_path / "s.jsonl", [_session("s1"), _session("s2")])
    replay = _write_replay(tmp_path / "r.json", {
        "s1": [_candidate("first-fact", "Bags under 23 kg fly free.")],
        "s2": [_candidate("second-fact", "Pets travel in the cabin.")],
    })
    real_learn = Memory.learn_turn

    def learn(self, agent, config, *, session_id, **kwargs):  # noqa: ANN001, ANN202
        if session_id == "s2":
            from insika_knowledge.errors import RunTimeFailure

            raise RunTimeFailure("disk full writing /somewhere/default.db")
        return real_learn(self, agent, config, session_id=session_id, **kwargs)

    monkeypatch.setattr(Memory, "learn_turn", learn)
    result = CliRunner().invoke(cli, ["backfill", *_args(sessions, replay, tmp_path / "data")[:-1]])
    assert result.exit_code == 1, result.output
    assert "Traceback" not in result.output
    _, statuses = _summary(result.output)
    assert statuses == Counter({"done": 1, "error": 1})
    assert "detail" in result.output and "disk full writing" in result.output


def test_model_outcomes_alone_do_not_fail_the_run(tmp_path: Path) -> None:
    sessions = _write_jsonl(tmp_path / "s.jsonl", [_session("s1"), _session("s2")])
    replay = _write_replay(tmp_path / "r.json", {"s1": "   "})
    result = _run(*_args(sessions, replay, tmp_path / "data"))
    assert result.exit_code == 0, result.output
    assert _summary(result.output)[1] == Counter({"model_empty": 2})


@pytest.mark.parametrize(
    ("replay", "key"),
    [({"extract": {}, "consolidate": {"s2": "not an object"}}, 'consolidate["s2"]'),
     ({"extract": {}, "consolidate": {"s3": {"bag-fee": ["related", "x"]}}},
      'consolidate["s3"]["bag-fee"]'),
     ({"extract": {"s1": 5}}, 'extract["s1"]'),
     ({"extract": {"s1": {"session": {"concepts": []}}}}, 'extract["s1"]["session"]')],
)
def test_a_replay_file_of_the_wrong_shape_is_refused_at_load(tmp_path: Path, replay, key) -> None:
    sessions = _write_jsonl(tmp_path / "s.jsonl", [_session("s1"), _session("s2")])
    path = tmp_path / "r.json"
    path.write_text(json.dumps(replay), encoding="utf-8")
    data = tmp_path / "data"
    result = _run(*_args(sessions, path, data))
    assert result.exit_code == 2, result.output
    assert key in result.output and "Traceback" not in result.output
    assert _no_concepts_written(data)


@pytest.mark.parametrize(
    ("line", "problem"),
    [('{"session_id": "' + "x" * 300 + '", "messages": []}', "at most 200"),
     ('{"session_id": "a\\nb", "messages": []}', "printable"),
     ('{"session_id": "ctl\\u0007", "messages": []}', "printable"),
     ('{"session_id": "\\ud800", "messages": []}', "printable"),
     ('{"session_id": "evil`x", "messages": []}', "backtick"),
     ('{"session_id": 5, "messages": []}', "must be text"),
     ('{"session_id": "s9", "messages": [{"role": "user", "content": "hi \\ud800"}]}',
      "messages[0]")],
)
def test_bad_session_ids_and_unencodable_text_name_file_and_line(tmp_path: Path, line, problem) -> None:
    sessions = tmp_path / "s.jsonl"
    sessions.write_text(json.dumps(_session("s1")) + "\n" + line + "\n", encoding="utf-8")
    replay = _write_replay(tmp_path / "r.json", {"s1": [_candidate("some-fact", "A fact.")]})
    data = tmp_path / "data"
    result = _run(*_args(sessions, replay, data))
    assert result.exit_code == 2, result.output
    assert f"{sessions}:2" in result.output and problem in result.output
    assert _no_concepts_written(data)


def test_an_empty_sessions_file_says_so(tmp_path: Path) -> None:
    sessions = tmp_path / "empty.jsonl"
    sessions.write_text("\n  \n", encoding="utf-8")
    replay = _write_replay(tmp_path / "r.json", {})
    result = _run(*_args(sessions, replay, tmp_path / "data"))
    assert result.exit_code == 0, result.output
    assert f"no sessions in {sessions}" in result.output


def test_a_data_directory_under_a_regular_file_is_a_usage_error(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("x", encoding="utf-8")
    sessions = _write_jsonl(tmp_path / "s.jsonl", [_session("s1")])
    replay = _write_replay(tmp_path / "r.json", {"s1": [_candidate("some-fact", "A fact.")]})
    result = _run(*_args(sessions, replay, blocker / "data"))
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    assert isinstance(result.exception, SystemExit)  # a clean exit, not an OSError
    assert str(blocker / "data") in result.output


def test_deeply_nested_sessions_and_replay_files_are_usage_errors(tmp_path) -> None:
    from insika_knowledge.errors import UserError
    from insika_knowledge.extract.model import ReplayModel
    from insika_knowledge.sessions import read_sessions

    deep = "[" * 100_000 + "]" * 100_000
    sessions = tmp_path / "s.jsonl"
    sessions.write_text('{"session_id": "a", "messages": [], "metadata": ' + deep + "}\n")
    with pytest.raises(UserError, match="nested too deeply"):
        list(read_sessions(sessions))
    replay = tmp_path / "r.json"
    replay.write_text('{"extract": ' + deep + "}")
    with pytest.raises(UserError, match="nested too deeply"):
        ReplayModel(replay)


@pytest.mark.parametrize("written", ["not-a-date", 5, ["2026-09-01"]])
def test_since_leaves_out_a_session_whose_start_time_is_no_date(tmp_path: Path, written: Any) -> None:
    # it was learned under --since in silence (a newcomer's finding): it may be old; a
    # number or a list was read as no start time at all (a second newcomer's finding)
    sessions = _write_jsonl(tmp_path / "s.jsonl", [_session("garbled", written), _session("new", "2026-09-01")])
    replay = _write_replay(tmp_path / "r.json", {
        "garbled": [_candidate("garbled-fact", "Lounges open at dawn.")],
        "new": [_candidate("new-fact", "Seats can be chosen online.")]})
    data = tmp_path / "data"
    result = _run("--agent", AGENT, "--sessions", str(sessions), "--model", f"replay:{replay}",
                  "--since", "2026-08-01", "--data-dir", str(data), "--quiet")
    assert result.exit_code == 0, result.output
    assert _summary(result.output)[1] == Counter({"done": 1, "undated": 1})
    assert set(_concepts(data)) == {"new-fact"}
    summary, _ = _api_run(data, sessions, replay)  # without --since it runs
    assert _by_id(summary) == {"garbled": "done", "new": "skipped"}


@pytest.mark.parametrize("content", ['{"x": 1}', "42", "true"])
def test_a_message_whose_content_is_not_text_is_named_not_counted_empty(tmp_path, content: str) -> None:
    # counted `empty` in silence while `Memory.learn` refused the same message (a newcomer's finding)
    from insika_knowledge.errors import UserError
    from insika_knowledge.sessions import read_sessions

    sessions = tmp_path / "s.jsonl"
    sessions.write_text('{"session_id": "a", "messages": [{"role": "user", "content": "oi"}]}\n'
                        '{"session_id": "b", "messages": [{"role": "user", "content": ' + content + "}]}\n")
    with pytest.raises(UserError, match=r":2: messages\[0\]\.content must be text, a list of parts or null"):
        list(read_sessions(sessions))


@pytest.mark.parametrize("metadata", ["5", '"airline"', '["task-1"]'])
def test_metadata_that_is_no_object_is_named_not_dropped(tmp_path, metadata: str) -> None:
    # read as {} in silence: the task, group and labels an evaluation splits on were lost
    from insika_knowledge.errors import UserError
    from insika_knowledge.sessions import read_sessions

    sessions = tmp_path / "s.jsonl"
    sessions.write_text('{"session_id": "a", "metadata": null, "messages": []}\n'
                        '{"session_id": "b", "metadata": ' + metadata + ', "messages": []}\n')
    with pytest.raises(UserError, match=r"s\.jsonl:2: 'metadata' must be a JSON object or null, not "):
        list(read_sessions(sessions))
    sessions.write_text('{"session_id": "a", "metadata": null, "messages": []}\n')
    assert [s.metadata for s in read_sessions(sessions)] == [{}]


def test_a_start_time_that_is_not_text_is_kept_as_written(tmp_path: Path) -> None:
    from insika_knowledge.backfill import session_time
    from insika_knowledge.sessions import read_sessions

    sessions = tmp_path / "s.jsonl"
    sessions.write_text(json.dumps({"session_id": "a", "started_at": 5, "messages": []}) + "\n")
    [read] = list(read_sessions(sessions))
    assert read.started_at == "5" and session_time(read) is None  # written, no date: `undated` under --since


def test_a_sessions_file_takes_the_roles_learn_takes(tmp_path: Path) -> None:
    # a newcomer's finding: backfill refused "developer", "function" and "human_agent"
    # messages that `Memory.learn` and the hooks take
    from insika_knowledge.errors import UserError
    from insika_knowledge.sessions import read_sessions

    sessions = tmp_path / "s.jsonl"
    said = [{"role": r, "content": "ok"} for r in ("developer", "user", "human_agent", "function", "assistant")]
    sessions.write_text(json.dumps({"session_id": "a", "messages": said}) + "\n"
                        + json.dumps({"session_id": "b", "messages": [{"role": "bot", "content": "x"}]}) + "\n")
    with pytest.raises(UserError, match=r":2: messages\[0\] needs a role of .*human_agent.*\(its role is 'bot'\)"):
        list(read_sessions(sessions))  # (a newcomer's: the role given was not named)
    sessions.write_text(json.dumps({"session_id": "b", "messages": ["hello"]}) + "\n")
    with pytest.raises(UserError, match=r":1: messages\[0\] needs a role of .*\(it is str, not an object\)"):
        list(read_sessions(sessions))
    sessions.write_text(json.dumps({"session_id": "a", "messages": said}) + "\n")
    [read] = list(read_sessions(sessions))
    assert [m["role"] for m in read.messages] == [m["role"] for m in said]


#: A number past CPython's limit on converting digits to an int (4,300 digits).
HUGE = "9" * 5000


@pytest.mark.parametrize("where", ["metadata", "outcome", "message"])
def test_a_huge_integer_in_a_sessions_line_names_file_line_and_column(tmp_path: Path, where: str) -> None:
    record = {"metadata": f'{{"n": {HUGE}}}', "outcome": HUGE,
              "message": f'[{{"role": "user", "content": "oi", "n": {HUGE}}}]'}[where]
    key = {"metadata": "metadata", "outcome": "outcome", "message": "messages"}[where]
    line = f'{{"session_id": "s2", "messages": [], "{key}": {record}}}'
    if where == "message":
        line = f'{{"session_id": "s2", "{key}": {record}}}'
    sessions = tmp_path / "s.jsonl"
    sessions.write_text(json.dumps(_session("s1")) + "\n" + line + "\n", encoding="utf-8")
    replay = _write_replay(tmp_path / "r.json", {"s1": [_candidate("some-fact", "A fact.")]})
    data = tmp_path / "data"
    result = _run(*_args(sessions, replay, data))
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    column = line.index(HUGE) + 1
    assert f"{sessions}:2: an integer of 5000 digits at column {column}" in result.output
    assert "4300" in result.output
    assert _no_concepts_written(data)


def test_a_huge_integer_in_the_config_file_names_file_and_line(tmp_path: Path) -> None:
    sessions = _write_jsonl(tmp_path / "s.jsonl", [_session("s1")])
    replay = _write_replay(tmp_path / "r.json", {"s1": [_candidate("some-fact", "A fact.")]})
    config = tmp_path / "agent.yaml"
    config.write_text(f"knowledge:\n  types: [fact]\n  top_k: {HUGE}\n", encoding="utf-8")
    data = tmp_path / "data"
    result = _run(*_args(sessions, replay, data), "--config", str(config))
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    assert f"--config {config}:" in result.output
    assert "an integer of 5000 digits" in result.output and "line 3, column 10" in result.output
    assert _no_concepts_written(data)


@pytest.mark.parametrize(("text", "said"), [
    # a newcomer's finding: PyYAML's own lines ("in \"<unicode string>\", line 2"), and an
    # unknown key without the file's name
    ("knowledge:\n  model: [unclosed\n", "not YAML: line 2, column 10: expected ',' or ']'"),
    ("knowledge:\n  note: \"unclosed\n", "not YAML: line 2, column 9: found unexpected end of stream"),
    ("knowledge:\n  foo: 1\n", "knowledge.foo: unknown key"),
])
def test_a_bad_config_file_is_named_with_its_line(tmp_path: Path, text: str, said: str) -> None:
    sessions = _write_jsonl(tmp_path / "s.jsonl", [_session("s1")])
    replay = _write_replay(tmp_path / "r.json", {"s1": [_candidate("some-fact", "A fact.")]})
    config = tmp_path / "agent.yaml"
    config.write_text(text, encoding="utf-8")
    data = tmp_path / "data"
    result = _run(*_args(sessions, replay, data), "--config", str(config))
    assert result.exit_code == 2, result.output
    assert f"--config {config}: {said}" in result.output and "<unicode string>" not in result.output
    assert _no_concepts_written(data)


def test_the_summary_line_names_what_trust_held_and_left_uncounted() -> None:
    from insika_knowledge.backfill import BackfillSummary, SessionStatus
    from insika_knowledge.commands.progress import total_line

    summary = BackfillSummary("airline", [
        SessionStatus("s1", "done", learned=1, quarantined=1),
        SessionStatus("s2", "done", unsupported=2),
    ])
    line = total_line(summary)
    assert line.endswith("quarantined 1, unsupported 2"), line
    assert "unsupported" not in total_line(BackfillSummary("airline", [SessionStatus("s1", "done", learned=1)]))


def test_the_sessions_table_says_zero_dropped_rather_than_leaving_the_cell_blank() -> None:
    from collections import Counter

    from rich.console import Console

    from insika_knowledge.backfill import SessionStatus
    from insika_knowledge.commands.progress import _sessions_table

    console = Console(width=200, record=True)
    console.print(_sessions_table([SessionStatus("s1", "model_malformed", detail="not JSON"),
                                   SessionStatus("s2", "done", learned=1, dropped=Counter(pii=2))], "sessions"))
    rows = {line.split("│")[1].strip(): [cell.strip() for cell in line.split("│")[1:-1]]
            for line in console.export_text().splitlines() if line.count("│") > 2}
    assert rows["s1"][6] == "0" and rows["s2"][6] == "pii=2", rows


def test_a_sessions_file_with_a_byte_order_mark_reads_and_one_in_latin_1_names_the_byte(tmp_path: Path) -> None:
    from insika_knowledge.errors import UserError
    from insika_knowledge.sessions import read_sessions

    line = '{"session_id": "s%d", "messages": [{"role": "user", "content": "%s"}]}\n'
    marked = tmp_path / "marked.jsonl"
    marked.write_bytes(b"\xef\xbb\xbf" + (line % (1, "olá") + line % (2, "oi")).encode("utf-8"))
    assert [s.session_id for s in read_sessions(marked)] == ["s1", "s2"]
    latin = tmp_path / "latin.jsonl"
    latin.write_bytes((line % (1, "oi") + line % (2, "olá")).encode("latin-1"))
    sessions = read_sessions(latin)
    assert next(sessions).session_id == "s1"  # what came before is read
    with pytest.raises(UserError, match=r"latin\.jsonl:2: byte 66 of the line \(b'\\xe1'\) is not UTF-8"):
        next(sessions)


def test_a_gzip_sessions_file_reads_as_the_plain_one_and_a_cut_one_is_named(tmp_path: Path) -> None:
    """A newcomer's ``sessions.jsonl.gz`` was refused as "not UTF-8" (its first byte named)."""
    import gzip

    from insika_knowledge.errors import UserError
    from insika_knowledge.sessions import read_sessions

    plain = _write_jsonl(tmp_path / "s.jsonl", [_session(f"s{i}") for i in range(40)])
    packed = tmp_path / "s.jsonl.gz"
    packed.write_bytes(gzip.compress(plain.read_bytes()))
    assert list(read_sessions(packed)) == list(read_sessions(plain))
    renamed = tmp_path / "s.data"  # known by its first bytes, not its name
    renamed.write_bytes(packed.read_bytes())
    assert [s.session_id for s in read_sessions(renamed)] == [f"s{i}" for i in range(40)]
    cut = tmp_path / "cut.jsonl.gz"
    cut.write_bytes(packed.read_bytes()[: len(packed.read_bytes()) - 12])  # the trailer and a little data lost
    with pytest.raises(UserError, match=r"cut\.jsonl\.gz: its gzip data is damaged or cut short after line \d+"):
        list(read_sessions(cut))
    early = tmp_path / "early.jsonl.gz"  # cut within the first line: no "after line 0"
    early.write_bytes(packed.read_bytes()[:20])
    with pytest.raises(UserError, match=r"early\.jsonl\.gz: its gzip data is damaged or cut short before its first "
                                        r"line"):
        list(read_sessions(early))
    flipped = tmp_path / "flipped.jsonl.gz"  # one byte of the compressed data changed: a newcomer was told
    data = bytearray(packed.read_bytes())
    data[len(data) // 2] ^= 0xFF  # to save the file as UTF-8 ("it looks like Latin-1")
    flipped.write_bytes(bytes(data))
    with pytest.raises(UserError, match=r"flipped\.jsonl\.gz: its gzip data is damaged \(line \d+ read wrongly"):
        list(read_sessions(flipped))


def test_an_interrupted_backfill_says_what_is_kept_and_how_to_resume(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """A newcomer's Ctrl-C printed only "Aborted!" with exit 1, a run-time failure's code."""
    import insika_knowledge.backfill as backfill_module

    sessions = _write_jsonl(tmp_path / "s.jsonl", [_session(f"s{i}") for i in range(3)])
    replay = _write_replay(tmp_path / "r.json", {})

    def interrupted(*args: Any, on_progress: Any = None, **kwargs: Any) -> BackfillSummary:
        on_progress("done")
        raise KeyboardInterrupt

    monkeypatch.setattr(backfill_module, "backfill", interrupted)
    result = _run("--agent", AGENT, "--sessions", str(sessions), "--model", f"replay:{replay}",
                  "--data-dir", str(tmp_path / "data"), "--quiet")
    assert result.exit_code == 130, result.output
    assert "interrupted after 1 session(s)" in result.output and "Run the same command again" in result.output


def test_a_session_given_twice_is_a_mistake_named_before_anything_is_written(tmp_path: Path) -> None:
    sessions = _write_jsonl(tmp_path / "s.jsonl", [_session("s1"), _session("s2"), _session("s1")])
    replay = _write_replay(tmp_path / "r.json", {})
    result = _run("--agent", AGENT, "--sessions", str(sessions), "--model", f"replay:{replay}",
                  "--data-dir", str(tmp_path / "data"), "--quiet")
    assert result.exit_code == 2, result.output
    assert "s.jsonl:3: session_id 's1' is also on line 1" in result.output
    assert not (tmp_path / "data").exists() or not list((tmp_path / "data").glob("*.db"))


def test_a_line_cut_short_names_one_line_and_its_column(tmp_path: Path) -> None:
    """A newcomer read "bad.jsonl:2: not JSON (... at line 2, column 1)": two lines in one message."""
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"session_id": "a", "messages": []}\n{"session_id": "b",\n', encoding="utf-8")
    result = _run("--agent", AGENT, "--sessions", str(bad), "--model", "replay:/nonexistent.json",
                  "--data-dir", str(tmp_path / "data"))
    assert result.exit_code == 2 and f"{bad}:2: not JSON" in result.output, result.output
    assert "at column 20" in result.output and "line 2," not in result.output


def test_a_session_with_nothing_said_is_empty_without_a_model_call(tmp_path: Path) -> None:
    blank = {**_session("blank"), "messages": [{"role": "system", "content": "You are a support agent."},
                                               {"role": "user", "content": "  "}]}
    calls: list[str] = []

    class Counting:
        def propose(self, request: Any) -> list[Any]:
            calls.append(request.session_id)
            return [_candidate("kept-fact", "Seats can be chosen at booking.")]

        def merge(self, request: Any) -> Any:
            raise NotImplementedError

    sessions = _write_jsonl(tmp_path / "s.jsonl", [{**_session("none"), "messages": []}, blank, _session("said")])
    replay = _write_replay(tmp_path / "r.json", {})
    summary, recorder = _api_run(tmp_path / "data", sessions, replay, model=Counting())
    assert _by_id(summary) == {"none": "empty", "blank": "empty", "said": "done"}
    assert calls == ["said"]
    assert not summary.unfinished
    [event] = recorder.named("knowledge_backfilled")
    assert event["sessions"] == 1
    result = _run("--data-dir", str(tmp_path / "cli"), "--agent", AGENT, "--sessions", str(sessions),
                  "--model", f"replay:{replay}", "--quiet")
    assert result.exit_code == 0, result.output
    assert _summary(result.output)[1] == {"empty": 2, "model_empty": 1}


def test_the_status_table_counts_what_was_held_for_a_person(tmp_path: Path) -> None:
    # a newcomer's finding: a quarantined session showed "learned 0" in the table, the
    # quarantine only in the one-line total; an empty file printed "0 sessions ()"
    sessions = _write_jsonl(tmp_path / "s.jsonl", [_session("a", text="O frete é grátis para todo o Brasil, né?")])
    replay = _write_replay(tmp_path / "r.json", {"a": [_candidate("frete-gratis", "O frete é grátis para todo o "
                                                                               "Brasil.", "policy")]})
    result = _run("--agent", AGENT, "--sessions", str(sessions), "--model", f"replay:{replay}",
                  "--data-dir", str(tmp_path / "data"))
    assert result.exit_code == 0, result.output
    header = next(line for line in result.output.splitlines() if "status" in line and "sessions" in line)
    assert "quarantined" in header and "possible duplicates" not in header, result.output
    total, review = result.output.strip().splitlines()[-2:]
    assert total.endswith("quarantined 1")
    # a newcomer's finding: nothing said that a person had work to do, nor where
    assert review == ("waiting for a person: 1 concept held in quarantine (insika-knowledge list --agent "
                      f"{AGENT} --data-dir {tmp_path / 'data'})")
    # a newcomer's finding: a re-run (everything skipped) said nothing of what still waits
    again = _run("--agent", AGENT, "--sessions", str(sessions), "--model", f"replay:{replay}",
                 "--data-dir", str(tmp_path / "data"))
    assert again.output.strip().splitlines()[-1] == review, again.output
    verbose = _run("--agent", AGENT, "--sessions", str(sessions), "--model", f"replay:{replay}",
                   "--data-dir", str(tmp_path / "data3"), "--verbose")
    header = next(line for line in verbose.output.splitlines() if "session" in line and "detail" in line)
    assert "quarantined" in header and "possible duplicates" not in header, verbose.output  # per session too
    quiet = _run("--agent", AGENT, "--sessions", str(sessions), "--model", f"replay:{replay}",
                 "--data-dir", str(tmp_path / "data4"), "--quiet")
    assert quiet.output.strip().splitlines()[-1].endswith("quarantined 1")  # --quiet: the one line only
    empty = tmp_path / "empty.jsonl"
    empty.write_text("", encoding="utf-8")
    none = _run("--agent", AGENT, "--sessions", str(empty), "--model", f"replay:{replay}",
                "--data-dir", str(tmp_path / "data2"))
    assert none.output.strip().splitlines()[-1].startswith(f"backfill {AGENT}: 0 sessions; learned 0"), none.output


def test_sessions_from_standard_input_are_read_as_the_file(tmp_path: Path) -> None:
    """A newcomer's ``zcat runs.jsonl.gz | insika-knowledge backfill --sessions -`` was told
    "sessions file - does not exist"; `-` is standard input, gzip-compressed too."""
    import gzip

    sessions = _write_jsonl(tmp_path / "s.jsonl", [_session(f"s{i}", text=f"hello {i}") for i in range(3)])
    replay = _write_replay(tmp_path / "r.json", {"s1": [_candidate("from-stdin", "Read from standard input.")]})
    data = tmp_path / "data"
    args = _args(Path("-"), replay, data)
    piped = CliRunner().invoke(cli, ["backfill", *args], input=gzip.compress(sessions.read_bytes()))
    assert piped.exit_code == 0, piped.output
    assert "from-stdin" in _concepts(data)
    broken = CliRunner().invoke(cli, ["backfill", *_args(Path("-"), replay, tmp_path / "other")],
                                input=b'{"session_id": "s1", "messages": []}\n{not json\n')
    assert broken.exit_code != 0 and "<stdin>:2" in broken.output, broken.output
    assert not (tmp_path / "other").exists() or not _concepts(tmp_path / "other")  # nothing written


def test_a_sessions_file_read_more_than_once_may_be_standard_input(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    import io
    import sys

    from insika_knowledge.sessions import read_sessions, rereadable

    sessions = _write_jsonl(tmp_path / "s.jsonl", [_session(f"s{i}") for i in range(4)])
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(sessions.read_bytes())))
    with rereadable(["-", str(sessions)]) as (first, second):
        assert first != "-" and second == str(sessions)
        twice = [[s.session_id for s in read_sessions(first)] for _ in range(2)]
    assert twice == [[f"s{i}" for i in range(4)]] * 2


def test_a_backfill_of_one_session_says_one_session_and_writes_no_stray_line(tmp_path: Path) -> None:
    # a newcomer's: "1 sessions", and a blank line on stderr (the progress bar of a stderr
    # that is no terminal) before every error
    sessions = _write_jsonl(tmp_path / "s.jsonl", [_session("s1")])
    replay = _write_replay(tmp_path / "r.json", {"s1": [_candidate("one", "One session.")]})
    result = CliRunner().invoke(cli, ["backfill", *_args(sessions, replay, tmp_path / "data")])
    assert result.exit_code == 0 and f"backfill {AGENT}: 1 session (done 1)" in result.output, result.output
    missing = CliRunner().invoke(cli, ["backfill", *_args(tmp_path / "nope.jsonl", replay, tmp_path / "d2")])
    assert missing.exit_code != 0 and missing.output.startswith("Error: sessions file"), repr(missing.output)
