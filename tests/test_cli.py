"""The command line: search, show, name checks, the demo, --help, and the entry points."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import networkx as nx
import pytest
from click.testing import CliRunner
from conftest import make_concept

import insika_knowledge
from insika_knowledge.cli import cli
from insika_knowledge.memory import Memory

AGENT = "support"
SHIPPING = make_concept(
    name="free-shipping-over-199",
    description="Orders over R$199 get free shipping.",
    type="policy",
    provenance="observed",
    confidence=0.7,
    sources=("sess-1", "sess-2"),
    occurrences=2,
    body="Orders above R$199 ship free anywhere in Brazil. Returns: [[returns-within-7-days]].",
)
RETURNS = make_concept(
    name="returns-within-7-days",
    description="Returns are accepted within 7 days of delivery.",
    type="policy",
    provenance="observed",
    confidence=0.6,
    sources=("sess-3",),
    occurrences=1,
    body="A customer may return an item within 7 days of delivery, unused.",
)
NO_MATCH = "zebra xylophone quantum"


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "data"
    memory = Memory(folder)
    with memory.store("default").transaction() as tx:
        for concept in (SHIPPING, RETURNS):
            tx.put(AGENT, concept, reason="extract", actor="engine")
    memory.close()
    return folder


def _run(*args: str):  # noqa: ANN202 - click's Result
    return CliRunner().invoke(cli, list(args))


def _files(folder: Path) -> set[Path]:
    return set(folder.rglob("*")) if folder.exists() else set()


# ----------------------------------------------------------------------------- search


def test_search_prints_the_knowledge_block(data_dir: Path) -> None:
    result = _run("search", "--agent", AGENT, "--data-dir", str(data_dir),
                  "Do orders over 199 get free shipping?")
    assert result.exit_code == 0, result.output
    block = result.output[result.output.index("<knowledge>"):result.output.index("</knowledge>")]
    assert 'name="free-shipping-over-199"' in block
    assert "(no concept matches)" not in result.output


def test_search_without_match_says_so(data_dir: Path) -> None:
    result = _run("search", "--agent", AGENT, "--data-dir", str(data_dir), NO_MATCH)
    assert result.exit_code == 0, result.output
    assert result.output.strip() == "(no concept matches)"


def test_search_reads_the_message_from_standard_input(data_dir: Path) -> None:
    """An argument is capped by the system (about 128 KiB here): '-' reads the message from
    standard input, whatever its length; a message that is not UTF-8 is refused by name."""
    story = "Ontem fui ao mercado e encontrei uma amiga da escola. " * 4000  # ~220 KB
    result = CliRunner().invoke(cli, ["search", "--agent", AGENT, "--data-dir", str(data_dir), "-"],
                                input=story + "Do orders over 199 get free shipping?")
    assert result.exit_code == 0, result.output
    assert 'name="free-shipping-over-199"' in result.output
    empty = CliRunner().invoke(cli, ["search", "--agent", AGENT, "--data-dir", str(data_dir), "-"], input="  \n")
    assert empty.exit_code != 0 and "standard input is empty" in empty.output
    blank = _run("search", "--agent", AGENT, "--data-dir", str(data_dir), "  ")  # the argument, as strict
    assert blank.exit_code != 0 and "MESSAGE is empty" in blank.output
    wrong = CliRunner().invoke(cli, ["search", "--agent", AGENT, "--data-dir", str(data_dir), "-"],
                               input=b"frete \xff")
    assert wrong.exit_code != 0 and "standard input" in wrong.output and "UTF-8" in wrong.output


def test_search_json_lists_matched_names(data_dir: Path) -> None:
    hit = _run("search", "--agent", AGENT, "--data-dir", str(data_dir), "--json",
               "Can I return an item after delivery?")
    assert hit.exit_code == 0, hit.output
    found = json.loads(hit.output)
    assert found["matched"][0]["name"] == "returns-within-7-days"  # shipping may follow: delivery ~ shipping
    assert set(found["matched"][0]) == {"name", "description", "type", "confidence", "provenance", "status",
                                        "challenged"}
    miss = _run("search", "--agent", AGENT, "--data-dir", str(data_dir), "--json", NO_MATCH)
    assert miss.exit_code == 0, miss.output
    assert json.loads(miss.output)["matched"] == []


def test_search_json_includes_linked_concepts(data_dir: Path) -> None:
    result = _run("search", "--agent", AGENT, "--data-dir", str(data_dir), "--json",
                  "--top-k", "1", "free shipping")
    found = json.loads(result.output)
    assert [e["name"] for e in found["matched"]] == ["free-shipping-over-199"]
    assert [e["name"] for e in found["linked"]] == ["returns-within-7-days"]


@pytest.mark.parametrize(("held", "status"), [
    ("A gift card can be used for 12 months after you buy it.", "ok"),  # a restatement
    ("Gift cards are valid for 24 months from the date of purchase.", "conflict"),  # another value
])
def test_search_json_says_the_status_the_block_shows(tmp_path: Path, held: str, status: str) -> None:
    """A newcomer's finding: a restatement held under another name left the block's concept
    unmarked while ``search --json`` said ``conflict`` (any held claim): two answers to one
    question. The status is now the block's; ``challenged`` says a claim awaits a person."""
    rule = {"name": "gift-card-validity", "type": "policy", "description": "Gift card validity.",
            "body": "Gift cards are valid for 12 months from the date of purchase."}
    memory = Memory(tmp_path / "data")
    try:
        for session, item in (("s1", rule), ("s2", {**rule, "name": "gift-card-expiry", "body": held})):
            said = [{"role": "user", "content": "How long is a gift card valid?"},
                    {"role": "assistant", "content": item["body"]}]
            memory.propose(item, agent=AGENT, session_id=session, messages=said)
        assert [h.name for h in memory.store().possible_duplicates(AGENT, rule["name"])] == ["gift-card-expiry"]
    finally:
        memory.close()
    where = ("--agent", AGENT, "--data-dir", str(tmp_path / "data"))
    block = _run("search", *where, "How long is a gift card valid?")
    assert block.exit_code == 0, block.output
    found = json.loads(_run("search", *where, "--json", "How long is a gift card valid?").output)
    [entry] = [e for e in found["matched"] if e["name"] == rule["name"]]
    assert (entry["status"], entry["challenged"]) == (status, True)
    line = next(x for x in block.output.splitlines() if 'name="gift-card-validity"' in x)
    assert ('status="conflict"' in line) is (status == "conflict")


def test_search_other_agent_sees_nothing(data_dir: Path) -> None:
    # Issue 11 turned this empty success into exit 1 naming the agents that exist
    # (it used to print "(no concept matches)" and exit 0).
    result = _run("search", "--agent", "someone-else", "--data-dir", str(data_dir), "free shipping")
    assert result.exit_code == 1, result.output
    assert "free-shipping-over-199" not in result.output
    assert "someone-else" in result.output and AGENT in result.output


# ----------------------------------------------------------------------------- show


def test_show_prints_the_record(data_dir: Path) -> None:
    result = _run("show", "--agent", AGENT, "--data-dir", str(data_dir), "returns-within-7-days")
    assert result.exit_code == 0, result.output
    memory = Memory(data_dir)
    assert result.output == memory.store("default").get(AGENT, "returns-within-7-days").markdown
    memory.close()


def test_show_unknown_name_suggests_close_names(data_dir: Path) -> None:
    result = _run("show", "--agent", AGENT, "--data-dir", str(data_dir), "free-shiping")
    assert result.exit_code == 2
    assert "Traceback" not in result.output
    assert "free-shiping" in result.output
    assert "free-shipping-over-199" in result.output


def test_show_unknown_tenant_creates_nothing(data_dir: Path) -> None:
    before = _files(data_dir)
    result = _run("show", "--agent", AGENT, "--tenant", "acme", "--data-dir", str(data_dir),
                  "free-shipping-over-199")
    assert result.exit_code == 2
    assert "Traceback" not in result.output
    assert "acme" in result.output
    assert not (data_dir / "acme.db").exists()
    assert _files(data_dir) == before


@pytest.mark.parametrize("command", ["search", "export"])
def test_unknown_tenant_is_an_error_for_reads(data_dir: Path, tmp_path: Path, command: str) -> None:
    extra = ["free shipping"] if command == "search" else ["--out", str(tmp_path / "out")]
    result = _run(command, "--agent", AGENT, "--tenant", "acme", "--data-dir", str(data_dir),
                  *extra)
    assert result.exit_code == 2
    assert not (data_dir / "acme.db").exists()
    assert not (tmp_path / "out").exists()


# ----------------------------------------------------------------------------- name checks


def _command_args(command: str, tmp_path: Path) -> list[str]:
    if command == "search":
        return ["free shipping"]
    if command == "show":
        return ["free-shipping-over-199"]
    if command == "export":
        return ["--out", str(tmp_path / "out")]
    sessions = tmp_path / "s.jsonl"
    sessions.write_text(json.dumps({"session_id": "s1", "messages": []}) + "\n", encoding="utf-8")
    replay = tmp_path / "r.json"
    replay.write_text('{"extract": {}}', encoding="utf-8")
    return ["--sessions", str(sessions), "--model", f"replay:{replay}", "--quiet"]


@pytest.mark.parametrize("command", ["search", "show", "export", "backfill"])
@pytest.mark.parametrize("agent", ["../x", "", "a/b", ".hidden"])
def test_invalid_agent_is_a_usage_error(
    data_dir: Path, tmp_path: Path, command: str, agent: str
) -> None:
    before = _files(tmp_path)
    result = _run(command, "--agent", agent, "--data-dir", str(data_dir),
                  *_command_args(command, tmp_path))
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    assert "agent" in result.output
    assert _files(tmp_path) - before <= {tmp_path / "s.jsonl", tmp_path / "r.json"}


@pytest.mark.parametrize("command", ["search", "show", "export", "backfill"])
@pytest.mark.parametrize("tenant", ["../../etc", "Default", "a.b", "con"])
def test_invalid_tenant_is_a_usage_error(
    data_dir: Path, tmp_path: Path, command: str, tenant: str
) -> None:
    before = _files(tmp_path)
    result = _run(command, "--agent", AGENT, "--tenant", tenant, "--data-dir", str(data_dir),
                  *_command_args(command, tmp_path))
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    assert "tenant" in result.output
    # Nothing was created anywhere: no database inside or outside the data directory.
    assert _files(tmp_path) - before <= {tmp_path / "s.jsonl", tmp_path / "r.json"}


def test_bad_top_k_is_a_usage_error(data_dir: Path) -> None:
    result = _run("search", "--agent", AGENT, "--data-dir", str(data_dir), "--top-k", "0", "x")
    assert result.exit_code == 2
    assert "'--top-k'" in result.output and "1<=x<=50" in result.output  # the option as typed, and its range
    assert "Traceback" not in result.output


# ----------------------------------------------------------------------------- demo


def test_demo_runs_the_whole_loop(tmp_path: Path) -> None:
    folder = tmp_path / "demo"
    result = _run("demo", "--data-dir", str(folder))
    assert result.exit_code == 0, result.output
    out = result.output
    for word in ("learned", "confirmed", "merged", "conflict", "model_malformed",
                 "<knowledge>", "load_knowledge"):
        assert word in out, word
    assert re.search(r"dropped [a-z_]+=\d+", out)
    export = folder / "export"
    md = sorted(p.stem for p in export.glob("*.md"))
    assert md
    assert (export / "knowledge.graphml").is_file()
    # The export reflects the demo's database: one file per concept, one node per file.
    memory = Memory(folder)
    assert md == memory.store("demo").names("loja-aurora")
    memory.close()
    assert sorted(nx.read_graphml(export / "knowledge.graphml").nodes) == md
    assert not (tmp_path / "home").exists()


# ----------------------------------------------------------------------------- help


@pytest.mark.parametrize("name", sorted(cli.commands))
def test_every_command_has_help(name: str) -> None:
    result = _run(name, "--help")
    assert result.exit_code == 0, result.output
    assert result.output.strip()
    assert f"Usage: cli {name}" in result.output or f"{name} [OPTIONS]" in result.output


def test_group_help_lists_every_command() -> None:
    result = _run("--help")
    assert result.exit_code == 0
    for name in cli.commands:
        assert name in result.output


def test_unknown_option_is_a_usage_error() -> None:
    result = _run("search", "--no-such-option")
    assert result.exit_code == 2
    assert "Traceback" not in result.output


# ----------------------------------------------------------------------------- entry points


def _env(tmp_path: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["INSIKA_KNOWLEDGE_HOME"] = str(tmp_path / "home")
    env.pop("INSIKA_UTILITY_MODEL", None)
    return env


def test_python_dash_m_help(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "insika_knowledge", "--help"], capture_output=True,
                          text=True, timeout=60, env=_env(tmp_path), check=False)
    assert done.returncode == 0, done.stderr
    for name in cli.commands:
        assert name in done.stdout


def test_console_script(tmp_path: Path) -> None:
    script = shutil.which("insika-knowledge", path=str(Path(sys.executable).parent))
    if script is None:
        pytest.skip("the insika-knowledge console script is not installed next to this Python")
    done = subprocess.run([script, "--version"], capture_output=True, text=True, timeout=60,
                          env=_env(tmp_path), check=False)
    assert done.returncode == 0, done.stderr
    assert insika_knowledge.__version__ in done.stdout
    bad = subprocess.run(
        [script, "show", "--agent", "../x", "--data-dir", str(tmp_path / "d"), "n"],
        capture_output=True, text=True, timeout=60, env=_env(tmp_path), check=False,
    )
    assert bad.returncode == 2
    assert "Traceback" not in bad.stderr + bad.stdout
    assert not (tmp_path / "d").exists()


def test_demo_with_an_unusable_data_directory_is_a_usage_error(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("x", encoding="utf-8")
    result = _run("demo", "--data-dir", str(blocker / "demo"))
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    assert isinstance(result.exception, SystemExit)  # a clean exit, not NotADirectoryError
    assert str(blocker / "demo") in result.output


def test_bench_relay_without_its_extra_says_which_extra_to_install(monkeypatch) -> None:
    """An environment without httpx (the demo's: studio and bench extras) gets one line, not a traceback."""
    import sys

    monkeypatch.delitem(sys.modules, "insika_knowledge.bench.relay", raising=False)
    monkeypatch.setitem(sys.modules, "httpx", None)  # import httpx raises ImportError
    result = CliRunner().invoke(cli, ["bench", "--relay", "--quick"])
    assert result.exit_code != 0
    assert "pip install 'insika-knowledge[relay]'" in result.output
    assert "Traceback" not in result.output
