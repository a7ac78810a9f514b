"""The command line's papercuts of issue 27: ``status``, ``export --out -``, a fast
``--version``, ``backfill --since`` with a top-level start time, ``procedures show`` and
``procedures evaluate --requests`` progress.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import demo_turn

from insika_knowledge.bench.datasets import shared_data
from insika_knowledge.cli import cli
from insika_knowledge.demo import demo_file
from insika_knowledge.memory import Memory
from insika_knowledge.store.spill import SpillJournal

ROOT = Path(__file__).resolve().parents[1]
AGENT = "loja-aurora"
REPLAY = f"replay:{demo_file('replay.json')}"
DATA = shared_data() or Path("/nonexistent")
AIRLINE = DATA / "tau_bench_airline" / "normalized.jsonl"
REQUESTS = DATA / "openhands_swebench" / "raw" / "requests.jsonl.gz"


@pytest.fixture
def data(tmp_path: Path) -> Path:
    folder = tmp_path / "data"
    memory = Memory(folder)
    for session in ("demo/sess-01", "demo/sess-02"):
        memory.learn(demo_turn(session), agent=AGENT, session_id=session, model=REPLAY)
    memory.learn([{"role": "user", "content": "oi"}], agent="sem-modelo", session_id="s-1")  # no model
    memory.close()
    return folder


def test_status_shows_the_queue_counts_and_last_failures(data: Path) -> None:
    result = CliRunner().invoke(cli, ["status", "--data-dir", str(data)])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0] == "tenant default: 0 turn(s) queued for learning, 0 dropped"
    assert lines[1].split() == ["agent", "concepts", "turns", "learned", "turns", "failed"]  # turns, not concepts
    assert lines[2].split()[0] == AGENT and lines[2].split()[2:] == ["2", "0"]
    assert lines[3].split() == ["sem-modelo", "0", "0", "1"]
    assert lines[4] == "  last failures:" and "sem-modelo  s-1/" in lines[5]
    assert lines[5].endswith("no_model: no model configured")
    as_json = json.loads(CliRunner().invoke(cli, ["status", "--data-dir", str(data), "--json"]).output)
    assert as_json[0]["failures"][0]["outcome"] == "no_model"
    missing = CliRunner().invoke(cli, ["status", "--data-dir", str(data), "--tenant", "nope"])
    assert missing.exit_code == 2 and not (data / "nope.db").exists()
    # a --data-dir that does not exist read as "no tenant has a database" and exit 0 (a newcomer's finding)
    typo = CliRunner().invoke(cli, ["status", "--data-dir", str(data) + "x"])
    assert typo.exit_code == 2 and f"--data-dir {data}x does not exist" in typo.output
    assert not Path(str(data) + "x").exists()


def test_status_counts_the_turns_waiting_in_the_spill_journal(data: Path) -> None:
    # A process that finds its tenant's store still opening keeps the turn in the spill
    # journal; `status` said "0 turn(s) queued" while it sat there (a newcomer's finding).
    journal = SpillJournal(data / "spill", "host:4242:token")
    journal.write({"tenant": "default", "agent": AGENT, "session_id": "s-9", "turn_id": "t", "messages": []})
    journal.write({"tenant": "nova", "agent": AGENT, "session_id": "s-9", "turn_id": "t", "messages": []})
    (data / "spill" / "not-a-turn.txt").write_text("x")
    result = CliRunner().invoke(cli, ["status", "--data-dir", str(data)])
    assert result.exit_code == 0, result.output
    assert "tenant default: 0 turn(s) queued for learning, 1 waiting in the spill journal, 0 dropped" in result.output
    assert "tenant nova: 0 turn(s) queued for learning, 1 waiting in the spill journal" in result.output
    as_json = json.loads(CliRunner().invoke(cli, ["status", "--data-dir", str(data), "--json"]).output)
    assert {t["tenant"]: t["spilled"] for t in as_json} == {"default": 1, "nova": 1}
    only = json.loads(CliRunner().invoke(cli, ["status", "--data-dir", str(data), "--tenant", "default",
                                               "--json"]).output)
    assert [t["tenant"] for t in only] == ["default"]
    assert not (data / "nova.db").exists()  # reading the journal creates no store


def test_a_stray_file_named_like_a_database_is_reported_and_the_other_tenants_listed(data: Path) -> None:
    # Another program's notes.db made `status` and `agents` fail for every tenant (a newcomer's finding).
    # `status` lists every tenant and then exits 1 (an attacker's finding: a corrupt tenant
    # database exited 0, so a health check passed).
    (data / "notes.db").write_text("notes\n")
    (data / "fresh.db").touch()  # an empty file: a database being created, still a tenant
    result = CliRunner().invoke(cli, ["status", "--data-dir", str(data), "--json"])
    assert result.exit_code == 1, result.output
    found = {t["tenant"]: t for t in json.loads(result.output)}
    assert set(found) == {"default", "fresh", "notes"}
    assert "is not a SQLite database" in found["notes"]["error"] and not found["default"]["error"]
    text = CliRunner().invoke(cli, ["status", "--data-dir", str(data)])
    assert text.exit_code == 1 and "tenant notes: not readable: " in text.output, text.output
    assert "tenant default: " in text.output
    healthy = CliRunner().invoke(cli, ["status", "--data-dir", str(data), "--tenant", "default"])
    assert healthy.exit_code == 0, healthy.output
    agents = CliRunner().invoke(cli, ["agents", "--data-dir", str(data)])
    assert agents.exit_code == 0 and AGENT in agents.stdout, agents.output
    assert "tenant notes left out" in agents.stderr
    asked = CliRunner().invoke(cli, ["status", "--data-dir", str(data), "--tenant", "notes"])
    assert asked.exit_code == 2 and "notes.db is not a SQLite database" in asked.output
    assert (data / "notes.db").read_text() == "notes\n"  # never touched


@pytest.mark.parametrize("fmt", ["json", "jsonl", "graphml"])
def test_export_to_standard_output(data: Path, tmp_path: Path, fmt: str) -> None:
    result = CliRunner().invoke(cli, ["export", "--agent", AGENT, "--data-dir", str(data), "--format", fmt,
                                      "--out", "-"])
    assert result.exit_code == 0, result.output
    assert not (Path.cwd() / "-").exists() and not (tmp_path / "-").exists()
    body = result.stdout
    if fmt == "json":
        assert {c["name"] for c in json.loads(body)} >= {"cep-13-campinas"}
    elif fmt == "jsonl":
        assert all(json.loads(line)["name"] for line in body.splitlines())
    else:
        assert ET.fromstring(body).tag.endswith("graphml")
    assert "exported" in result.stderr and "standard output" in result.stderr
    md = CliRunner().invoke(cli, ["export", "--agent", AGENT, "--data-dir", str(data), "--out", "-"])
    assert md.exit_code == 2 and "give --out a folder" in md.output


def test_version_is_fast_and_imports_no_command() -> None:
    code = ("import sys, time; t = time.perf_counter(); sys.argv = ['insika-knowledge', '--version']\n"
            "from insika_knowledge.console import main; main()\n"
            "print(round(time.perf_counter() - t, 3), 'click' in sys.modules, 'pydantic' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], env={**os.environ, "PYTHONPATH": str(ROOT)},
                          capture_output=True, text=True, timeout=60)
    version, timing = done.stdout.splitlines()
    assert version == "insika-knowledge, version 0.1.0"
    seconds, click_loaded, pydantic_loaded = timing.split()
    assert (click_loaded, pydantic_loaded) == ("False", "False") and float(seconds) < 0.2
    started = time.perf_counter()
    ran = subprocess.run([sys.executable, "-m", "insika_knowledge", "--version"],
                         env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True, text=True, timeout=60)
    assert ran.stdout.strip() == version and time.perf_counter() - started < 1.0


def test_backfill_since_reads_a_top_level_start_time(tmp_path: Path) -> None:
    sessions = tmp_path / "s.jsonl"
    records = [
        {"session_id": "demo/sess-01", "started_at": "2026-01-15T10:00:00Z",
         "messages": [{"role": "user", "content": "oi"}]},
        {"session_id": "demo/sess-02", "started_at": "2026-09-01T08:00:00Z",
         "messages": [{"role": "user", "content": "oi"}]},
    ]
    sessions.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    result = CliRunner().invoke(cli, ["backfill", "--agent", AGENT, "--sessions", str(sessions), "--model", REPLAY,
                                      "--since", "2026-08-01T00:00:00Z", "--data-dir", str(tmp_path / "d"),
                                      "--verbose"])
    assert result.exit_code == 0, result.output
    assert "before-since" in result.output
    memory = Memory(tmp_path / "d")
    try:
        learned = {r.session_id for r in memory.store().extractions(AGENT)}
    finally:
        memory.close()
    assert learned == {"demo/sess-02"}


@pytest.mark.skipif(not AIRLINE.exists(), reason="shared data not present")
def test_procedures_show_prints_its_shape(tmp_path: Path) -> None:
    # The block's escaping is the procedures' (being fixed there): only the shape is checked.
    runner = CliRunner()
    base = ["--data-dir", str(tmp_path)]
    assert runner.invoke(cli, ["procedures", "mine", "--sessions", str(AIRLINE), *base]).exit_code == 0
    first = json.loads(runner.invoke(cli, ["procedures", "list", "--json", *base]).output)[0]["id"]
    lines = runner.invoke(cli, ["procedures", "show", first, *base]).output.splitlines()
    assert lines[0].startswith(f"{first} (") and "Wilson lower bound" in lines[0]
    assert lines[1].startswith("triggers: ") and lines[2].startswith("sample task: ")
    assert lines[3].startswith("block (") and lines[4].startswith("[ACE recalled procedure — ")
    assert any(line.startswith("1. ") for line in lines[5:])


@pytest.mark.skipif(not REQUESTS.exists(), reason="shared data not present")
def test_evaluate_requests_reports_progress_on_stderr(tmp_path: Path) -> None:
    import gzip

    from insika_knowledge.bench.replay_eval import read_requests

    records = read_requests(REQUESTS)
    keep = list(dict.fromkeys(r["instance_id"] for r in records))[:2]
    path = tmp_path / "slice.jsonl.gz"
    with gzip.open(path, "wt", encoding="utf-8") as handle:
        for record in records:
            if record["instance_id"] in keep:
                handle.write(json.dumps(record) + "\n")
    result = CliRunner().invoke(cli, ["procedures", "evaluate", "--requests", str(path), "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["requests"] > 0  # stdout stays the report alone
    progress = [line for line in result.stderr.splitlines() if line.startswith("replaying requests: ")]
    assert [line.split("]")[0] for line in progress] == ["replaying requests: [1/2", "replaying requests: [2/2"]


def test_show_prints_a_bodys_control_characters_as_escapes(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from insika_knowledge import Memory
    from insika_knowledge.cli import cli

    with Memory(tmp_path) as memory:  # `put` refuses such a body now; one stored before is still shown safely
        memory.put("---\nname: bell\ndescription: Bell.\n---\nRing.\n", agent="a")
        stored = memory.store().get("a", "bell")
        assert stored is not None
        with memory.store().transaction() as tx:
            tx.put("a", stored.concept.replace(body="Ring \x1b[31mred\x07\tdone \u202eevil."), reason="edit",
                   actor="python")
    out = CliRunner().invoke(cli, ["show", "bell", "--agent", "a", "--data-dir", str(tmp_path)]).output
    assert "Ring \\x1b[31mred\\x07\tdone \\u202eevil.\n" in out and "\x1b" not in out and "\x07" not in out
    assert "\u202e" not in out  # a bidirectional override would show the text reordered


def test_show_says_when_claims_are_held_against_the_concept(tmp_path: Path) -> None:
    """A newcomer's report: `show` of a challenged policy printed a clean record, nothing
    saying claims waited for review (a quarantined one got a line on stderr)."""
    from click.testing import CliRunner

    from insika_knowledge import Memory
    from insika_knowledge.cli import cli

    with Memory(tmp_path) as memory:
        memory.put("---\nname: fee\ndescription: Return fee is $15.\n---\nReturn shipping costs $15.\n", agent="a")
        memory.propose({"name": "fee", "description": "Return fee is $20.", "type": "policy",
                        "body": "Return shipping costs $20."}, agent="a", session_id="s1",
                       messages=[{"role": "assistant", "content": "Return shipping costs $20."}])
        assert len(memory.held_claims(agent="a", name="fee")) == 1
    result = CliRunner().invoke(cli, ["show", "fee", "--agent", "a", "--data-dir", str(tmp_path)])
    assert result.exit_code == 0 and "Return shipping costs $15." in result.stdout
    assert "1 claim held against it for review" in result.stderr


def test_ctrl_c_while_the_commands_load_exits_130_without_a_traceback() -> None:
    """A newcomer's finding: Ctrl-C in the first half second (the imports) printed a traceback."""
    code = ("import builtins, sys; sys.argv = ['insika-knowledge', 'list', '--agent', 'a']\n"
            "real = builtins.__import__\n"
            "def loading(name, *args, **kwargs):\n"
            "    if name == 'insika_knowledge.cli':\n"
            "        raise KeyboardInterrupt\n"
            "    return real(name, *args, **kwargs)\n"
            "builtins.__import__ = loading\n"
            "from insika_knowledge.console import main; main()\n")
    done = subprocess.run([sys.executable, "-c", code], env={**os.environ, "PYTHONPATH": str(ROOT)},
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 130 and "Traceback" not in done.stderr, done.stderr


def test_show_prints_what_put_accepts_as_stored_so_a_record_goes_back_unchanged(tmp_path: Path) -> None:
    # `show` printed a right-to-left mark as the six characters \u200f, which `put` then
    # stored as text: show > file, put file changed the record (a helper's finding)
    from click.testing import CliRunner

    from insika_knowledge import Memory
    from insika_knowledge.cli import cli

    record = ("---\nname: rtl\ndescription: \"Horário \u200fde atendimento\"\n---\n"
              "Atendemos\u200b das 8h \u200eàs 18h.\n")
    base = ["--agent", "a", "--data-dir", str(tmp_path)]
    runner = CliRunner()
    assert runner.invoke(cli, ["put", "-", *base], input=record).exit_code == 0
    with Memory(tmp_path) as memory:
        before = memory.store().get("a", "rtl")
    shown = runner.invoke(cli, ["show", "rtl", *base]).output
    assert "\u200f" in shown and "\\u200f" not in shown
    assert runner.invoke(cli, ["put", "-", *base], input=shown).exit_code == 0
    with Memory(tmp_path) as memory:
        after = memory.store().get("a", "rtl")
    assert before is not None and after is not None
    assert (after.concept.description, after.concept.body) == (before.concept.description, before.concept.body)
    with Memory(tmp_path) as memory:  # a tag character (an invisible letter) stored before the rule is shown
        with memory.store().transaction() as tx:
            tx.put("a", after.concept.replace(body="Ring\U000e0041 \r over."), reason="edit", actor="python")
    shown = runner.invoke(cli, ["show", "rtl", *base]).output
    assert "Ring\\U000e0041 \\x0d over." in shown and "\U000e0041" not in shown and "\r" not in shown


@pytest.mark.parametrize("types", ["", " , ", "policy,,nonsense"])
def test_backfill_refuses_a_types_list_that_names_no_valid_type(tmp_path: Path, types: str) -> None:
    """A newcomer's finding: ``--types ""`` was read as no option at all (every type allowed)."""
    sessions = tmp_path / "sessions.jsonl"
    sessions.write_text(json.dumps({"session_id": "s1", "messages": [
        {"role": "user", "content": "Do you ship to Recife?"},
        {"role": "assistant", "content": "Yes, in 5 working days."}]}) + "\n", encoding="utf-8")
    result = CliRunner().invoke(cli, ["backfill", "--data-dir", str(tmp_path / "data"), "--agent", AGENT,
                                      "--sessions", str(sessions), "--model", REPLAY, "--types", types])
    assert result.exit_code == 2, result.output
    assert "--types" in result.output
    assert not (tmp_path / "data").exists() or not any((tmp_path / "data").rglob("*.db"))
