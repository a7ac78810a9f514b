"""The concept commands a user expects: agents, list, conflicts, put, delete, export json|jsonl,
and what every read says about an agent with no concepts (issue 11, item 4)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import make_concept

from insika_knowledge.cli import cli
from insika_knowledge.memory import Memory

ROOT = Path(__file__).resolve().parents[1]
AGENT = "support"
OTHER = "sales"
SHIPPING = make_concept(
    name="free-shipping-over-199", description="Orders over R$199 get free shipping.", type="policy",
    confidence=0.7, sources=("sess-1", "sess-2"), occurrences=2,
    body="Orders above R$199 ship free anywhere in Brazil. Returns: [[returns-within-7-days]].",
)
RETURNS = make_concept(
    name="returns-within-7-days", description="Returns are accepted within 7 days of delivery.",
    type="policy", confidence=0.4, sources=("sess-3", "sess-4"), occurrences=2,
    body="A customer may return an item within 7 days of delivery.\n\n## Contradiction\n\n"
    "- sess-4 (2026-08-24T18:00:00Z): returns are accepted within 30 days.",
)
PITCH = make_concept(name="annual-plan-discount", description="The annual plan is 20% off.",
                     body="Offer the annual plan at 20% off the monthly price.")
AUTHORED = """---
name: support-hours
description: Human support answers Monday to Friday, 9 to 18.
---

Human support answers Monday to Friday, from 9:00 to 18:00 (Brasília time).
"""


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    """`support` with two concepts (one in conflict) in tenant default; `sales` in tenant acme."""
    folder = tmp_path / "data"
    memory = Memory(folder)
    with memory.store("default").transaction() as tx:
        for concept in (SHIPPING, RETURNS):
            tx.put(AGENT, concept, reason="extract", actor="engine")
    with memory.store("acme").transaction() as tx:
        tx.put(OTHER, PITCH, reason="extract", actor="engine")
    memory.close()
    return folder


def _run(*args: str, stdin: str | None = None):  # noqa: ANN202 - click's Result
    return CliRunner().invoke(cli, list(args), input=stdin)


def _files(folder: Path) -> set[Path]:
    return set(folder.rglob("*")) if folder.exists() else set()


# ----------------------------------------------------------------------------- agents


def test_agents_lists_every_tenant_with_counts(data_dir: Path) -> None:
    result = _run("agents", "--data-dir", str(data_dir))
    assert result.exit_code == 0, result.output
    lines = [line.split() for line in result.output.splitlines()]
    assert lines == [["acme", OTHER, "1", "concept"], ["default", AGENT, "2", "concepts"]]
    one = json.loads(_run("agents", "--data-dir", str(data_dir), "--tenant", "acme", "--json").output)
    assert one == [{"tenant": "acme", "agent": OTHER, "concepts": 1}]


def test_agents_leaves_out_an_agent_whose_concepts_were_all_deleted(data_dir: Path) -> None:
    assert _run("delete", "--agent", OTHER, "--tenant", "acme", "--data-dir", str(data_dir),
                PITCH.name).exit_code == 0
    result = _run("agents", "--data-dir", str(data_dir), "--tenant", "acme")
    assert result.exit_code == 0, result.output
    assert result.output.strip() == "(no agent has concepts in tenant 'acme')"


def test_agents_in_an_empty_data_directory_says_so_and_creates_nothing(tmp_path: Path) -> None:
    result = _run("agents", "--data-dir", str(tmp_path / "none"))
    assert result.exit_code == 0, result.output
    assert "no agent has concepts" in result.output
    assert not (tmp_path / "none").exists()
    unknown = _run("agents", "--data-dir", str(tmp_path / "none"), "--tenant", "acme")
    assert unknown.exit_code == 2 and "acme" in unknown.output
    assert not (tmp_path / "none").exists()


# ----------------------------------------------------------------------------- list, conflicts


def test_list_prints_every_concept_and_flags_conflicts(data_dir: Path) -> None:
    result = _run("list", "--agent", AGENT, "--data-dir", str(data_dir))
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines() == [
        "NAME                    TYPE    PROVENANCE  CONFIDENCE  FLAGS     DESCRIPTION",
        "free-shipping-over-199  policy  observed    0.70        -         Orders over R$199 get free shipping.",
        "returns-within-7-days   policy  observed    0.40        CONFLICT  "
        "Returns are accepted within 7 days of delivery.",
    ]
    assert "2 concepts of support in tenant default, 1 in conflict" in result.stderr


def test_list_json_has_the_listing_fields(data_dir: Path) -> None:
    result = _run("list", "--agent", AGENT, "--data-dir", str(data_dir), "--json")
    assert result.exit_code == 0, result.output
    found = json.loads(result.stdout)
    assert [c["name"] for c in found] == [SHIPPING.name, RETURNS.name]
    assert found[1] == {
        "name": RETURNS.name, "description": RETURNS.description, "type": "policy",
        "provenance": "observed", "confidence": 0.4, "status": "conflict", "quarantined": False, "occurrences": 2,
        "updated_at": RETURNS.updated_at,
    }


def test_list_says_why_a_concept_is_held_and_how_many_are(data_dir: Path) -> None:
    """A newcomer's finding: `list --json` flagged a held concept but said nothing of why."""
    with Memory(data_dir) as memory:
        memory.propose({"name": "garantia-estendida", "description": "Garantia estendida grátis de 2 anos.",
                        "type": "policy", "body": "Todo produto tem 2 anos de garantia estendida grátis."},
                       agent=AGENT, session_id="s-held")
    listed = json.loads(_run("list", "--agent", AGENT, "--data-dir", str(data_dir), "--json").stdout)
    held = next(c for c in listed if c["name"] == "garantia-estendida")
    assert held["quarantined"] is True and held["quarantine_reason"].startswith("no message supported it")
    assert all("quarantine_reason" not in c for c in listed if not c["quarantined"])
    shown = _run("list", "--agent", AGENT, "--data-dir", str(data_dir))
    assert "1 held in quarantine (`show NAME` says why)" in shown.stderr


def test_conflicts_lists_only_the_concepts_in_conflict(data_dir: Path) -> None:
    result = _run("conflicts", "--agent", AGENT, "--data-dir", str(data_dir))
    assert result.exit_code == 0, result.output
    table = result.output.split("\n\n")[0]
    assert [line.split()[0] for line in table.splitlines()] == ["NAME", RETURNS.name]
    # its section is no engine entry (written in another form): shown as it is
    assert "- sess-4 (2026-08-24T18:00:00Z): returns are accepted within 30 days." in result.output
    as_json = json.loads(_run("conflicts", "--agent", AGENT, "--data-dir", str(data_dir), "--json").output)
    assert [c["name"] for c in as_json] == [RETURNS.name]
    none = _run("conflicts", "--agent", OTHER, "--tenant", "acme", "--data-dir", str(data_dir))
    assert none.exit_code == 0 and none.output.strip() == "(no conflicts)"


# ----------------------------------------------------------------------------- put, delete


def test_put_writes_a_policy_that_show_prints_and_delete_removes(data_dir: Path, tmp_path: Path) -> None:
    source = tmp_path / "support-hours.md"
    source.write_text(AUTHORED, encoding="utf-8")
    put = _run("put", "--agent", AGENT, "--data-dir", str(data_dir), str(source))
    assert put.exit_code == 0, put.output
    assert "support-hours" in put.output and "policy" in put.output
    shown = _run("show", "--agent", AGENT, "--data-dir", str(data_dir), "support-hours")
    assert shown.exit_code == 0, shown.output
    assert "provenance: policy" in shown.output and "9:00 to 18:00" in shown.output

    deleted = _run("delete", "--agent", AGENT, "--data-dir", str(data_dir), "support-hours")
    assert deleted.exit_code == 0, deleted.output
    assert "history kept" in deleted.output
    gone = _run("show", "--agent", AGENT, "--data-dir", str(data_dir), "support-hours")
    assert gone.exit_code == 2 and "support-hours" in gone.output
    memory = Memory(data_dir)
    history = memory.store("default").versions(AGENT, "support-hours")
    memory.close()
    assert [(v.reason, v.actor) for v in history] == [("delete", "cli"), ("edit", "cli")]


def test_put_reads_standard_input_and_replaces_keeping_what_is_on_record(data_dir: Path) -> None:
    first = _run("put", "--agent", AGENT, "--data-dir", str(data_dir), "-", stdin=AUTHORED)
    assert first.exit_code == 0, first.output
    edited = AUTHORED.replace("9 to 18", "9 to 20").replace("18:00", "20:00")
    again = _run("put", "--agent", AGENT, "--data-dir", str(data_dir), "-", stdin=edited)
    assert again.exit_code == 0, again.output
    memory = Memory(data_dir)
    stored = memory.store("default").get(AGENT, "support-hours")
    memory.close()
    assert stored is not None and stored.version == 2
    assert "20:00" in stored.concept.body and stored.concept.provenance == "policy"


def test_put_refuses_an_invalid_record_naming_the_field(data_dir: Path, tmp_path: Path) -> None:
    before = _files(data_dir)
    bad = tmp_path / "bad.md"
    bad.write_text("---\nname: support-hours\n---\n\nNo description.\n", encoding="utf-8")
    result = _run("put", "--agent", AGENT, "--data-dir", str(data_dir), str(bad))
    assert result.exit_code == 2, result.output
    assert "description" in result.output and "Traceback" not in result.output
    latin = tmp_path / "latin.md"
    latin.write_bytes(AUTHORED.replace("Brasília", "Bras\udce9lia").encode("utf-8", "surrogateescape"))
    not_utf8 = _run("put", "--agent", AGENT, "--data-dir", str(data_dir), str(latin))
    assert not_utf8.exit_code == 2 and "UTF-8" in not_utf8.output
    line = AUTHORED[:AUTHORED.index("Brasília")].count("\n") + 1  # where the byte is, as backfill says it
    assert f"latin.md:{line}: byte " in not_utf8.output and "b'\\xe9'" in not_utf8.output, not_utf8.output
    utf16 = tmp_path / "utf16.md"
    utf16.write_bytes(AUTHORED.encode("utf-16"))  # with its byte-order mark, as an editor saves it
    wide = _run("put", "--agent", AGENT, "--data-dir", str(data_dir), str(utf16))
    assert wide.exit_code == 2 and "utf16.md: the file is UTF-16" in wide.output, wide.output
    utf16.write_bytes(AUTHORED.encode("utf-32"))  # its mark starts as UTF-16's (found by an attack)
    wider = _run("put", "--agent", AGENT, "--data-dir", str(data_dir), str(utf16))
    assert wider.exit_code == 2 and "utf16.md: the file is UTF-32" in wider.output, wider.output
    missing = _run("put", "--agent", AGENT, "--data-dir", str(data_dir), str(tmp_path / "none.md"))
    assert missing.exit_code == 2 and "none.md" in missing.output
    for empty in ("", "\n \n"):  # said as empty, not as a record that does not start with '---'
        blank = _run("put", "-", "--agent", AGENT, "--data-dir", str(data_dir), stdin=empty)
        assert blank.exit_code == 2 and "Error: standard input is empty: give a record" in blank.output
    long_name = _run("put", "-", "--agent", AGENT, "--data-dir", str(data_dir),
                     stdin=f"---\nname: {'a' * 81}\ndescription: d\n---\n\nBody.\n")  # said as too long
    assert long_name.exit_code == 2 and "field 'name': is 81 characters; at most 80" in long_name.output
    # Lines are counted in the author's file, not in the record with the defaults filled in.
    too_long = "---\nname: support-hours\ndescription: d\n---\n" + "x" * 20_001 + "\n"
    for text, said in ((too_long, "bad.md: line 5, field 'body'"),  # the file named too
                       ("---\nname: support-hours\ndescription: d\nconfidence: 7\n---\nBody.\n",
                        "bad.md: line 4, field 'confidence'")):
        bad.write_text(text, encoding="utf-8")
        wrong = _run("put", "--agent", AGENT, "--data-dir", str(data_dir), str(bad))
        assert wrong.exit_code == 2 and said in wrong.output, wrong.output
    memory = Memory(data_dir)
    assert memory.store("default").get(AGENT, "support-hours") is None
    memory.close()
    assert {p for p in _files(data_dir) - before if p.suffix == ".db"} == set()


def test_delete_of_an_unknown_concept_is_a_usage_error(data_dir: Path) -> None:
    result = _run("delete", "--agent", AGENT, "--data-dir", str(data_dir), "no-such-concept")
    assert result.exit_code == 2, result.output
    assert "no-such-concept" in result.output and "Traceback" not in result.output


# ----------------------------------------------------------------------------- export json, jsonl


def test_export_to_an_empty_folder_name_is_refused(data_dir: Path, tmp_path: Path, monkeypatch) -> None:
    here = tmp_path / "here"
    here.mkdir()
    monkeypatch.chdir(here)
    result = _run("export", "--agent", AGENT, "--data-dir", str(data_dir), "--out", "")
    assert result.exit_code == 2 and "--out is empty" in result.output, result.output
    assert list(here.iterdir()) == []  # nothing written where the command ran


def test_export_json_and_jsonl_carry_every_field_of_the_stored_records(data_dir: Path, tmp_path: Path) -> None:
    memory = Memory(data_dir)
    stored = memory.store("default").list_concepts(AGENT)
    memory.close()
    for fmt in ("json", "jsonl"):
        out = tmp_path / fmt
        result = _run("export", "--agent", AGENT, "--data-dir", str(data_dir), "--format", fmt,
                      "--out", str(out))
        assert result.exit_code == 0, result.output
        assert "exported 2 concepts" in result.output
        text = (out / f"knowledge.{fmt}").read_text(encoding="utf-8")
        records = json.loads(text) if fmt == "json" else [json.loads(line) for line in text.splitlines()]
        assert [r["name"] for r in records] == [s.concept.name for s in stored]
        for record, one in zip(records, stored, strict=True):
            c = one.concept
            assert record == {
                "name": c.name, "description": c.description, "type": c.type,
                "provenance": c.provenance, "confidence": c.confidence, "sources": list(c.sources),
                "occurrences": c.occurrences, "created_at": c.created_at, "updated_at": c.updated_at,
                "status": c.status, "version": one.version, "quarantined": False, "body": c.body,
            }
        assert sorted(p.name for p in out.iterdir()) == [f"knowledge.{fmt}"]


# ----------------------------------------------------------------------------- an agent with no concepts


def _read_args(command: str, tmp_path: Path) -> list[str]:
    return {
        "search": ["free shipping"], "show": [SHIPPING.name], "delete": [SHIPPING.name],
        "export": ["--out", str(tmp_path / "out")], "list": [], "conflicts": [],
    }[command]


@pytest.mark.parametrize("command", ["search", "show", "export", "list", "conflicts", "delete"])
def test_an_agent_with_no_concepts_exits_1_naming_the_agents_there(
    data_dir: Path, tmp_path: Path, command: str
) -> None:
    before = _files(tmp_path)
    result = _run(command, "--agent", "nobody", "--data-dir", str(data_dir), *_read_args(command, tmp_path))
    assert result.exit_code == 1, result.output
    assert "Traceback" not in result.output
    assert "agent 'nobody' has no concepts in tenant 'default'" in result.output
    assert f"{AGENT} (2)" in result.output
    assert "(no concept matches)" not in result.output
    assert _files(tmp_path) == before  # no export folder, no new database


def test_an_agent_in_another_tenant_is_pointed_at(data_dir: Path) -> None:
    result = _run("search", "--agent", OTHER, "--data-dir", str(data_dir), "annual plan")
    assert result.exit_code == 1, result.output
    assert "pass --tenant acme" in result.output
    found = _run("search", "--agent", OTHER, "--tenant", "acme", "--data-dir", str(data_dir), "annual plan")
    assert found.exit_code == 0 and PITCH.name in found.output


def test_an_unknown_tenant_names_the_tenants_there(data_dir: Path) -> None:
    result = _run("list", "--agent", AGENT, "--tenant", "nope", "--data-dir", str(data_dir))
    assert result.exit_code == 2, result.output
    assert "tenants there: acme, default" in result.output
    assert not (data_dir / "nope.db").exists()


def test_the_exit_codes_hold_from_a_real_process(data_dir: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "insika_knowledge", *args, "--data-dir", str(data_dir)],
                              capture_output=True, text=True, timeout=60, env=env, check=False)

    listed = run("list", "--agent", AGENT)
    assert listed.returncode == 0 and SHIPPING.name in listed.stdout
    unknown = run("show", "--agent", "nobody", SHIPPING.name)
    assert unknown.returncode == 1
    assert unknown.stdout == "" and "Traceback" not in unknown.stderr
    assert unknown.stderr.strip().startswith("Error: agent 'nobody' has no concepts")


def test_put_reads_at_most_what_a_record_can_hold_and_takes_a_bom_and_cr_ends(data_dir: Path, tmp_path: Path) -> None:
    huge = tmp_path / "huge.md"
    huge.write_bytes(b"---\nname: x\ndescription: d\n---\n" + b"y" * (4 * 1024 * 1024 + 1))
    result = _run("put", "--agent", AGENT, "--data-dir", str(data_dir), str(huge))
    assert result.exit_code == 2 and "is over 4,194,304 bytes" in result.output, result.output
    for name, text in (("bom.md", "\ufeff---\nname: bom-one\ndescription: d\n---\nBody.\n"),
                       ("cr.md", "---\rname: cr-one\rdescription: d\r---\rBody.\r")):
        (tmp_path / name).write_bytes(text.encode("utf-8"))
        put = _run("put", "--agent", AGENT, "--data-dir", str(data_dir), str(tmp_path / name))
        assert put.exit_code == 0, put.output
    memory = Memory(data_dir)
    assert {"bom-one", "cr-one"} <= {s.concept.name for s in memory.store("default").list_concepts(AGENT)}
    memory.close()


@pytest.mark.parametrize("args", [["search", "--agent", AGENT, "pre\udce7o"], ["show", "--agent", AGENT, "x\udcff"],
                                  ["list", "--agent", AGENT, "--data-dir", "/tmp/d\udcff"]])
def test_an_argument_that_is_not_utf8_is_named(args: list[str]) -> None:
    """A newcomer's report: `search` took such bytes silently, `show` failed without saying
    which argument, and --data-dir showed a surrogate."""
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 2, result.output
    bad = next(a for a in args if any("\udc80" <= ch <= "\udcff" for ch in a))
    assert f"the argument {bad.encode('utf-8', 'surrogateescape')!r} is not UTF-8 text" in result.output


def test_history_and_restore_bring_a_deleted_concept_back(data_dir: Path, tmp_path: Path) -> None:
    """A newcomer's report: `delete` said "history kept", but no command showed or restored it."""
    page = tmp_path / "hours.md"
    page.write_text("---\nname: support-hours\ndescription: Support hours.\n---\n\nWe answer from 8h to 18h.\n",
                    encoding="utf-8")
    assert _run("put", "--agent", AGENT, "--data-dir", str(data_dir), str(page)).exit_code == 0
    page.write_text(page.read_text(encoding="utf-8").replace("18h", "20h"), encoding="utf-8")
    assert _run("put", "--agent", AGENT, "--data-dir", str(data_dir), str(page)).exit_code == 0
    assert _run("delete", "--agent", AGENT, "--data-dir", str(data_dir), "support-hours").exit_code == 0
    listed = _run("history", "--agent", AGENT, "--data-dir", str(data_dir), "support-hours")
    assert listed.exit_code == 0, listed.output
    rows = [line.split() for line in listed.output.splitlines()[1:]]
    assert [(r[0], r[1], r[2]) for r in rows] == [("1", "edit", "cli"), ("2", "edit", "cli"), ("3", "delete", "cli")]
    as_json = json.loads(_run("history", "--agent", AGENT, "--data-dir", str(data_dir), "support-hours",
                              "--json").output)
    assert "8h to 18h" in as_json[0]["markdown"] and as_json[2]["reason"] == "delete"
    back = _run("restore", "--agent", AGENT, "--data-dir", str(data_dir), "support-hours", "1")
    assert back.exit_code == 0 and "now version 4" in back.output, back.output
    shown = _run("show", "--agent", AGENT, "--data-dir", str(data_dir), "support-hours")
    assert "We answer from 8h to 18h." in shown.output
    for wrong, said in ((["support-hours", "99"], "has no version 99"),
                        (["support-hours", "0"], "0 is not in the range"), (["never-was", "1"], "never-was")):
        result = _run("restore", "--agent", AGENT, "--data-dir", str(data_dir), *wrong)
        assert result.exit_code == 2 and said in result.output, result.output
    missing = _run("history", "--agent", AGENT, "--data-dir", str(data_dir), "never-was")
    assert missing.exit_code == 2 and "never-was" in missing.output


def test_approve_releases_a_quarantined_concept_from_the_command_line(data_dir: Path) -> None:
    """Releasing a held concept was the Studio's Approve alone, though `show` names it."""
    memory = Memory(data_dir)
    report = memory.propose({"name": "garantia-estendida", "description": "Garantia estendida grátis de 2 anos.",
                             "type": "policy", "body": "Todo produto tem 2 anos de garantia estendida grátis."},
                            agent=AGENT, session_id="s-held")
    assert report.results == [("garantia-estendida", "quarantined")]
    assert "garantia-estendida" not in [h.name for h in memory.search("garantia estendida grátis", agent=AGENT)]
    memory.close()
    shown = _run("show", "garantia-estendida", "--agent", AGENT, "--data-dir", str(data_dir))
    assert "insika-knowledge approve garantia-estendida" in shown.output
    # the command as printed reaches the same store (a newcomer's: it left out --data-dir)
    assert f"approve garantia-estendida --agent {AGENT} --data-dir {data_dir}" in shown.output
    approved = _run("approve", "garantia-estendida", "--agent", AGENT, "--data-dir", str(data_dir))
    assert approved.exit_code == 0, approved.output
    assert approved.output.startswith(f"approved {AGENT}/garantia-estendida in tenant default: out of quarantine")
    with Memory(data_dir) as memory:
        assert [h.name for h in memory.search("garantia estendida grátis", agent=AGENT)][:1] == ["garantia-estendida"]
        assert [v.reason for v in memory.history("garantia-estendida", agent=AGENT)][-1] == "approve"
        assert memory.history("garantia-estendida", agent=AGENT)[-1].actor == "cli"
    again = _run("approve", "garantia-estendida", "--agent", AGENT, "--data-dir", str(data_dir))
    assert again.exit_code == 2 and "is not in quarantine" in again.output, again.output
    missing = _run("approve", "no-such-thing", "--agent", AGENT, "--data-dir", str(data_dir))
    assert missing.exit_code != 0 and "no-such-thing" in missing.output and "Traceback" not in missing.output


@pytest.mark.parametrize("space", ["\u00a0", "\u3000", "\u202f"])
def test_put_reads_a_no_break_or_ideographic_space_in_the_description_as_a_space(
        data_dir: Path, space: str) -> None:
    """A newcomer's finding: a person's "Prix\u00a0: 10 €" (French typography) was refused as
    "not printable text", while the model path read the same space as a space."""
    record = f"---\nname: prix-livraison\ndescription: \"Prix{space}: 10 € la livraison\"\n---\n\nLivraison 10 €.\n"
    result = _run("put", "-", "--agent", AGENT, "--data-dir", str(data_dir), stdin=record)
    assert result.exit_code == 0, result.output
    with Memory(data_dir) as memory:
        assert memory.store().get(AGENT, "prix-livraison").concept.description == "Prix : 10 € la livraison"
    bidi = record.replace(space, "\u202e")  # a control that reorders what a reader sees: still refused
    refused = _run("put", "-", "--agent", AGENT, "--data-dir", str(data_dir), stdin=bidi)
    assert refused.exit_code == 2 and "U+202E" in refused.output


def test_an_interrupt_after_the_write_says_the_concept_was_put(data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A newcomer's finding: Ctrl-C while `put` made the vector printed "Aborted!" and exited 1,
    though the concept was written and served."""
    def interrupted(self: Memory, tenant: str, agent: str) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(Memory, "_embed_written", interrupted)
    result = _run("put", "-", "--agent", AGENT, "--data-dir", str(data_dir), stdin=AUTHORED)
    assert result.exit_code == 130, result.output
    assert f"put {AGENT}/support-hours in tenant default; interrupted before its vector was made" in result.output
    assert "Aborted" not in result.output
    with Memory(data_dir) as memory:
        assert memory.store().get(AGENT, "support-hours") is not None


def test_show_of_a_deleted_concept_says_it_was_deleted_and_can_be_restored(data_dir: Path) -> None:
    """A newcomer's finding: `show` of a deleted concept said only "no concept named ..."."""
    assert _run("delete", "returns-within-7-days", "--agent", AGENT, "--data-dir", str(data_dir)).exit_code == 0
    shown = _run("show", "returns-within-7-days", "--agent", AGENT, "--data-dir", str(data_dir))
    assert shown.exit_code != 0
    assert "no concept named 'returns-within-7-days'; it was deleted at " in shown.output
    assert "restoring one brings it back" in shown.output and "Traceback" not in shown.output


def test_resolve_of_a_concept_without_contradictions_names_the_commands_that_settle_held_claims(
        data_dir: Path) -> None:
    """An attacker's finding: the hint said "the Studio dismisses them", though `dismiss` and
    `learn-held` do it from the command line and `conflicts` lists the claims."""
    name = next(c.name for c in (SHIPPING, RETURNS) if not c.in_conflict)
    result = _run("resolve", name, "--agent", AGENT, "--keep", "record", "--data-dir", str(data_dir))
    assert result.exit_code == 2, result.output
    # no claim is held against it: what settles held claims is not named (a newcomer read it
    # as if some were held); how to change it is
    assert "Studio" not in result.output and "held against it" not in result.output
    assert "to change it: 'put'" in result.output


def test_rename_to_a_bad_name_names_the_argument(data_dir: Path) -> None:
    """An attacker's finding: the error named `Memory.update(): rename`, not NEW_NAME."""
    result = _run("rename", SHIPPING.name, "Bad Name", "--agent", AGENT, "--data-dir", str(data_dir))
    assert result.exit_code == 2, result.output
    assert "Error: NEW_NAME: 'Bad Name' is not a slug" in result.output and "Memory.update" not in result.output
