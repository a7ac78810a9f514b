"""Issue 16, item 3: procedures without personal data.

A term becomes a trigger (or a population term) only when the tasks of two distinct
sessions had it; the stored task text is redacted and masked; tool-call ids and booking
codes become placeholders; and after the shared tau-bench traces are captured and mined
through the real path, no stored byte holds a name, e-mail, id or code from them.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import apsw
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from insika_knowledge.analysis.text import terms
from insika_knowledge.bench.datasets import shared_data
from insika_knowledge.privacy.redact import redact
from insika_knowledge.procedure import ProcedureStep
from insika_knowledge.procedures.config import ProceduresConfig
from insika_knowledge.procedures.mining.mine import Miner
from insika_knowledge.procedures.mining.scoring import MinedRun
from insika_knowledge.procedures.mining.shared import MASK, mask_unshared, session_of
from insika_knowledge.procedures.skill import ProceduralMemory
from insika_knowledge.procedures.trace.canonical import canonical_call, canonical_command, canonical_text, personal
from insika_knowledge.procedures.trace.steps import build
from insika_knowledge.sessions import Session, read_sessions
from insika_knowledge.store.sqlite.migrations import migrations
from insika_knowledge.store.sqlite.procedures import ProcedureStore

DATA = shared_data() or Path("/nonexistent")
TRACES = (
    DATA / "tau_bench_airline" / "normalized.jsonl",
    DATA / "tau_bench_retail_fewshot" / "normalized.jsonl",
    DATA / "tau2_bench_retail" / "normalized.jsonl",  # operation procedures and their task records
)
STEPS = (ProcedureStep("cancel_reservation(reservation_id=<RESERVATION_ID>)", "cancel_reservation(reservation_id)"),)
KEY = "proc-aaaaaaaaaaaa"


class Clock:
    def __init__(self) -> None:
        self.now = 1_700_000_000.0

    def __call__(self) -> float:
        return self.now


def _stored_bytes(folder: Path) -> bytes:
    """Every stored byte in `folder`: the database, and every page version in its WAL.

    Left out are the bytes SQLite makes up rather than stores: the WAL's header and each
    frame's 24-byte header (page number, random salts, checksums), and the shared-memory
    wal-index (page numbers and hashes of them). Random bytes there once read as the name
    "Li" between two punctuation bytes (about one run in forty).
    """
    out = []
    for path in sorted(folder.iterdir()):
        if not path.is_file() or path.name.endswith("-shm"):
            continue
        data = path.read_bytes()
        if path.name.endswith("-wal") and len(data) >= 32:
            page = int.from_bytes(data[8:12], "big")
            frames = range(32, len(data) - 24 - page + 1, 24 + page)
            data = b"".join(data[at + 24:at + 24 + page] for at in frames)
        out.append(data)
    return b"".join(out)


def _found(blob: bytes, value: str) -> bool:
    """`value` in `blob` as a word of its own, in any case."""
    pattern = rb"(?<![A-Za-z0-9])" + re.escape(value.encode()) + rb"(?![A-Za-z0-9])"
    return re.search(pattern, blob, re.IGNORECASE) is not None


def _success(run: str, task: str, population: bool = True) -> MinedRun:
    return MinedRun(
        run, "success", (KEY,), "tool", STEPS, ("cancel_reservation",), terms(task), task,
        population=population,
    )


# ---------------------------------------------------------------- (a) two sessions


def test_a_term_of_one_session_is_never_stored_until_a_second_session_has_it(tmp_path: Path) -> None:
    store = ProcedureStore(tmp_path / "t.db")
    one = "Please cancel the trip of my friend Zebulon"
    store.record_runs([_success("s1", one), _success("s1#1", one)])  # two tasks, one session
    procedure = store.get(KEY)
    assert procedure is not None and procedure.successes == 2
    assert "zebulon" not in procedure.triggers and "cancel" not in procedure.triggers
    assert store.population_since(0) == {"": 2}
    # No word of it two sessions shared: only the stop words are left.
    assert procedure.sample_task == f"Please {MASK} the {MASK} of my {MASK}"
    store.close()
    assert not _found(_stored_bytes(tmp_path), "zebulon")

    store = ProcedureStore(tmp_path / "t.db")
    store.record_runs([_success("s2", "Cancel the trip Zebulon booked")])
    procedure = store.get(KEY)
    assert procedure is not None
    # Released: the term counts every run that had it, the first session's two included.
    shared = terms("cancel trip Zebulon")  # with the synonym groups' terms
    assert procedure.triggers == dict.fromkeys(shared, 3)
    assert store.population_since(0) == {"": 3, **dict.fromkeys(shared, 3)}
    assert procedure.sample_task == f"Cancel the trip Zebulon {MASK}"
    store.close()


def test_migration_010_drops_what_one_run_alone_had(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    conn = apsw.Connection(str(path))
    conn.execute("CREATE TABLE _insika_migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)")
    for migration in migrations():
        if migration.name < "010" and not migration.requires:
            conn.execute(migration.sql)
            conn.execute("INSERT INTO _insika_migrations VALUES (?, 'then')", (migration.name,))
    conn.execute(
        "INSERT INTO procedures (id, kind, steps, tools, triggers, trigger_runs, successes, failures, "
        "confidence, sample_task, generation, created_at, updated_at) VALUES (?, 'shell', '[]', '[]', ?, 3, 3, 0, "
        "0.4, 'cancel for Zebulon', 1, 'then', 'then')",
        (KEY, json.dumps({"cancel": 3, "zebulon": 1})),
    )
    conn.executemany(
        "INSERT INTO procedure_population VALUES (?, ?, 1)", [("", 3), ("cancel", 3), ("zebulon", 1)]
    )
    conn.execute(
        "INSERT INTO capture_sessions (session_id, run, messages_seen, turns, task, given, tools, cursor_step, "
        "matched_steps, diverged_steps, tracked_upto, first_turn_at, last_turn_at) "
        "VALUES ('s', 0, 1, 1, 'Zebulon', '[]', '[]', 0, 0, 0, 0, 1.0, 1.0)"
    )
    conn.close()
    store = ProcedureStore(path)
    procedure = store.get(KEY)
    assert procedure is not None and (procedure.triggers, procedure.sample_task) == ({"cancel": 3}, "")
    assert store.population_since(0) == {"": 3, "cancel": 3}
    session = store.load_session("s")
    assert session is not None and session.task == ""
    store.close()


def test_the_miner_keeps_the_same_rule_in_memory() -> None:
    messages = [
        {"role": "user", "content": "Cancel reservation for Zebulon"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c", "function": {"name": "cancel_reservation", "arguments": '{"reservation_id": "AB12CD"}'}}
        ]},
        {"role": "tool", "tool_call_id": "c", "content": '{"status": "cancelled"}'},
    ]
    other = [dict(messages[0], content="Cancel reservation please"), *messages[1:]]
    miner = Miner()
    for run, trace, task in (("a", messages, "t1"), ("a#1", messages, "t1"), ("b", other, "t2")):
        miner.add_trace(run, build(trace), "success", task_key=task)
    (procedure,) = miner.procedures()
    assert procedure.scope == "operation" and procedure.triggers == {}
    assert miner.population == {}  # a tool-calling run's words never enter the population
    assert "Zebulon" not in procedure.sample_task and "cancel" in procedure.sample_task.lower()
    # A task keeps what its users asked as keyed digests only, never a word.
    assert all(len(d) == 12 and "zebulon" not in d for t in miner.tasks.values() for m in t.messages for d in m)


def test_session_of_strips_the_later_task_suffix_only() -> None:
    assert session_of("s#3") == "s" and session_of("a#b") == "a#b" and session_of("x") == "x"


def test_mask_keeps_stop_words_placeholders_and_shared_words() -> None:
    shared = terms("cancel flight")
    text = "Hi, please cancel my flight <ID> for Ivan Smith, s'il vous plaît"
    assert mask_unshared(text, lambda wanted: wanted & shared) == (
        f"Hi, please cancel my flight <ID> for {MASK}, s'{MASK}"
    )
    assert mask_unshared("", lambda wanted: wanted) == ""


# ---------------------------------------------------------------- (b) redacted at capture


def test_the_capture_buffer_holds_no_personal_datum_nor_call_id(tmp_path: Path) -> None:
    clock = Clock()
    memory = ProceduralMemory(ProcedureStore(tmp_path / "t.db"), ProceduresConfig(mode="prod"), clock=clock)
    task = (
        "Hi, I'm Zebulon Quark, cancel booking ZFA04Y. Mail zeb at gmail dot com, phone "
        "+55 11 98765-4321, CPF 123 456 789 09, card 4111.1111.1111.1111, order #W4928371"
    )
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": task},
        {"role": "assistant", "content": None, "tool_calls": [{
            "id": "toolu_01A09q90qw90lq917835lq9",
            "function": {"name": "cancel_reservation", "arguments": json.dumps(
                {"reservation_id": "ZFA04Y", "note": "for zeb@example.org"})},
        }]},
    ]
    memory.handle_request({"messages": messages}, {"x-ace-session": "s1"})
    row = memory.session("s1")
    assert row is not None and row.task
    (step,) = memory.session_steps("s1")
    assert step.call_id.startswith("#") and "toolu" not in step.call_id
    memory.store.close()
    blob = _stored_bytes(tmp_path)
    for value in ("Zebulon", "Quark", "ZFA04Y", "zeb", "gmail", "98765", "4321", "789", "4111",
                  "W4928371", "toolu_01A09q90qw90lq917835lq9", "example"):
        assert not _found(blob, value), value


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(blacklist_characters="@\uff20", blacklist_categories=("Nd",)), max_size=80))
@example("\ufeff")  # the redactor dropped the BOM of a text it found nothing in
@example("Ｈｉ\u200b there")
def test_text_the_redactor_could_not_change_is_skipped(text: str) -> None:
    # `personal` skips the redactor without a digit, "@" or "at"/"arroba": it would change nothing.
    assert personal(text) == text == redact(text).text


@pytest.mark.parametrize("text", ["joana＠gmail．com", "joana＠gmail.com", "mail joana ａｔ gmail dot com",
                                  "joana@gm\u200bail.com"])
def test_a_masked_address_is_not_skipped(text: str) -> None:
    # What the redactor reads, with full-width "＠" and invisible characters undone, decides the skip.
    assert "<EMAIL>" in personal(text) and "joana" not in personal(text), personal(text)
    assert redact(text).counts == {"email": 1}


# ---------------------------------------------------------------- (c) placeholders


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("see toolu_01A09q90qw90lq917835lq9 now", "see <CALL_ID> now"),
        ("id call_oIHazX6yQrB8hUwl4cRilFKj", "id <CALL_ID>"),
        ("call_12345xyz and chatcmpl-B9MBs8CjcvOU2jLn4n570S5qMJKcT", "<CALL_ID> and <CALL_ID>"),
        ("booking ZFA04Y, order #W4928371, ref 2FBBAH", "booking <ID>, order #<ID>, ref <ID>"),
        # plain words, short tokens and placeholders stay
        ("README TODO HTTPS PY3 X86 <ID> <CALL_ID>", "README TODO HTTPS PY3 X86 <ID> <CALL_ID>"),
        ("call_center run_tests2 msg_handler1 fc_x", "call_center run_tests2 msg_handler1 fc_x"),
    ],
)
def test_call_ids_and_booking_codes_become_placeholders(text: str, expected: str) -> None:
    assert canonical_text(text) == expected
    assert canonical_text(expected) == expected


def test_codes_and_call_ids_in_commands_and_arguments() -> None:
    assert canonical_command("grep W4928371 orders.csv # toolu_01A09q90qw90lq917835lq9") == (
        "grep <ID> orders.csv # <CALL_ID>"
    )
    assert canonical_call("lookup", {"ref": "ZFA04Y", "path": "out/W4928371.json"}) == (
        "lookup(path=<PATH>, ref=<REF>)"
    )


# ---------------------------------------------------------------- (d) the shared traces


def _walk(value: Any, key: str = "") -> Iterator[tuple[str, Any]]:
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _walk(v, str(k))
    elif isinstance(value, list):
        for item in value:
            yield from _walk(item, key)
    else:
        yield key, value


_EMAIL_RE = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_USER_ID_RE = re.compile(r"\b[a-z]+_[a-z]+_\d{3,}\b")
_CODE_RE = re.compile(r"#?\b(?=[A-Z0-9]*\d)(?=[A-Z0-9]*[A-Z])[A-Z0-9]{6,8}\b")
_NAME_IN_TEXT_RE = re.compile(r"\b(?:[Nn]ame is|I am|I'm) ([A-Z][a-z]+) ([A-Z][a-z]+)\b")
_FIELD_RE = re.compile(r'"(first_name|last_name|email|user_id|reservation_id|order_id)": "([^"]+)"')
_NAME_KEYS = {"first_name", "last_name"}
_FIELD_KIND = {"first_name": "name", "last_name": "name", "user_id": "id", "email": "email"}
_ID_KEYS = {"user_id", "payment_id", "payment_method_id"}
_CODE_KEYS = {"reservation_id", "order_id", "reservations", "orders"}


def _personal_values(sessions: list[Session]) -> dict[str, set[str]]:
    """Names, e-mails, user and payment ids, reservation and order codes of the traces,
    from the customers' messages and the tool results."""
    found: dict[str, set[str]] = {"name": set(), "email": set(), "id": set(), "code": set()}
    for session in sessions:
        for message in session.messages:
            text = message.get("content")
            if message.get("role") not in ("user", "tool") or not isinstance(text, str):
                continue
            found["email"].update(_EMAIL_RE.findall(text))
            found["id"].update(_USER_ID_RE.findall(text))
            found["code"].update(c.lstrip("#") for c in _CODE_RE.findall(text))
            for first, last in _NAME_IN_TEXT_RE.findall(text):
                found["name"].update((first, last))
            for field, value in _FIELD_RE.findall(text):
                found[_FIELD_KIND.get(field, "code")].add(value)
            try:
                parsed = json.loads(text)
            except ValueError:
                continue
            for key, value in _walk(parsed):
                if not isinstance(value, str) or not value:
                    continue
                if key in _NAME_KEYS:
                    found["name"].add(value)
                elif key == "email":
                    found["email"].add(value)
                elif key in _ID_KEYS or (key == "id" and _USER_ID_RE.fullmatch(value)):
                    found["id"].add(value)
                elif key in _CODE_KEYS:
                    found["code"].add(value.lstrip("#"))
    return found


def _replay(memory: ProceduralMemory, clock: Clock, session: Session) -> None:
    """Every request the agent sent in `session` (one per assistant turn), then its outcome."""
    tools = sorted({c["name"] for m in session.messages for c in m.get("tool_calls") or ()})
    body: dict[str, Any] = {"tools": [{"type": "function", "function": {"name": n}} for n in tools]}
    headers = {"x-ace-session": session.session_id}
    for i, message in enumerate(session.messages):
        if message.get("role") == "assistant" and i > 0:
            clock.now += 1
            memory.handle_request(dict(body, messages=session.messages[:i]), headers)
    if session.outcome in ("success", "failure"):
        clock.now += 1
        memory.handle_request(
            dict(body, messages=session.messages), dict(headers, **{"x-ace-task-outcome": session.outcome})
        )


#: Below this length a string turns up by chance in binary bytes (the WAL's frame checksums,
#: floating-point columns): such a form counts in the raw bytes only between printable
#: non-alphanumeric bytes (text: a space, a quote, punctuation), and is also looked for as
#: a word in every stored text value. Even so, a two-letter name between two punctuation bytes
#: turns up by chance about once in a few MB of WAL, so in the raw bytes a short form counts
#: only inside a run of printable text (`_RUN` more bytes on one side at least), as text is stored
#: (a value stored alone is also looked for among the text values).
_SHORT = 4
_RUN = 3
_TEXT = frozenset(range(0x20, 0x7F))


def _library_text(folder: Path) -> list[bytes]:
    """Stored text that is the library's own, not a customer's: the schema (its comments name
    Wilson), as it is now and as the migrations first wrote it (older pages in the WAL)."""
    conn = apsw.Connection(str(folder / "t.db"), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        schema = {str(sql) for (sql,) in conn.execute("SELECT sql FROM sqlite_master WHERE sql IS NOT NULL")}
    finally:
        conn.close()
    for migration in migrations():
        for statement in migration.sql.split(";"):
            created = re.search(r"^CREATE\b[\s\S]*", statement, re.MULTILINE)
            if created:
                schema.add(created.group().strip())
    return sorted((s.encode() for s in schema), key=len, reverse=True)


def _text_values(folder: Path) -> list[str]:
    """Every text value of every table."""
    conn = apsw.Connection(str(folder / "t.db"), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        tables = [t for (t,) in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        return [v for t in tables for row in conn.execute(f'SELECT * FROM "{t}"') for v in row if isinstance(v, str)]
    finally:
        conn.close()


_PRINTABLE = frozenset(range(0x20, 0x7F)) - frozenset(b"0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")


def _in_bytes(lower: bytes, form: bytes, *, text_only: bool) -> bool:
    """`form` (lower case) in `lower` as a word of its own; with `text_only`, only between
    printable bytes that are neither letters nor digits, inside a run of printable text
    (see `_SHORT`)."""
    start = lower.find(form)
    while start >= 0:
        end = start + len(form)
        sides = (lower[start - 1] if start else None, lower[end] if end < len(lower) else None)
        if all(b is None or (b in _PRINTABLE if text_only else not chr(b).isalnum()) for b in sides) and (
            not text_only
            or all(b in _TEXT for b in lower[max(start - _RUN, 0):end])
            or all(b in _TEXT for b in lower[start:end + _RUN])
        ):
            return True
        start = lower.find(form, start + 1)
    return False


def _leaks(folder: Path, values: dict[str, set[str]]) -> list[str]:
    """The values found in the folder's bytes, each as itself (and a name as its terms)."""
    blob = _stored_bytes(folder)
    for text in _library_text(folder):
        blob = blob.replace(text, b"\0")
    # The schema's comments name Wilson (the bound); a long schema row may sit split across
    # page versions in the WAL, where the whole statement above is not found.
    blob = re.sub(rb"Wilson (?:95 % )?lower bound", b"\0", blob)
    lower = re.sub(rb"tau-bench/[\w./-]*", b"\0", blob).lower()  # session ids, cut short in index pages
    texts = "\0".join(_text_values(folder))
    leaks = []
    for kind, found in sorted(values.items()):
        for value in sorted(found):
            forms = {value}
            if kind == "name":  # a name may also be stored as an index term (stemmed)
                forms |= set(terms(value))
            for form in sorted(forms):
                short = len(form) < _SHORT
                hit = _in_bytes(lower, form.lower().encode(), text_only=short) or (
                    short and re.search(rf"(?<![A-Za-z0-9]){re.escape(form)}(?![A-Za-z0-9])", texts, re.IGNORECASE)
                )
                if hit:
                    leaks.append(f"{kind} {value!r} as {form!r}")
    return leaks


def _keep_every_version(memory: ProceduralMemory) -> None:
    """No checkpoint: every page version the store ever wrote stays in the WAL to be scanned."""
    memory.store._conn().execute("PRAGMA wal_autocheckpoint=0")


@pytest.mark.skipif(not all(p.exists() for p in TRACES), reason="shared data not present")
def test_no_stored_byte_holds_a_name_email_id_or_code_of_the_shared_traces(tmp_path: Path) -> None:
    sessions = [s for path in TRACES for s in read_sessions(path)]
    values = _personal_values(sessions)
    assert {k: len(v) >= 10 for k, v in values.items()} == dict.fromkeys(values, True), values
    assert "Ivan" in values["name"] and "SI5UKW" in values["code"]  # they are in first messages

    # Live: every request captured in prod mode (every procedure recallable, so blocks are
    # injected and carried), outcomes mined as they come, the rest flushed by the sweep.
    live_dir = tmp_path / "live"
    clock = Clock()
    config = ProceduresConfig(mode="prod", min_confidence=0.0, min_match_score=0.0, min_similarity=0.0,
                              min_agreement=0.0, neighbours=5)
    live = ProceduralMemory(ProcedureStore(live_dir / "t.db"), config, clock=clock)
    _keep_every_version(live)
    for session in sessions:
        _replay(live, clock, session)
    assert live.sweep(clock.now + 10 * config.idle_flush_s)  # the sessions without an outcome
    assert live.store.count() > 0 and live.store.tasks_since(0)
    stages = live.store.stages(limit=100000)
    assert any(s["injected"] for s in stages)

    # Batch: the same traces mined from the file.
    batch_dir = tmp_path / "batch"
    batch = ProceduralMemory(ProcedureStore(batch_dir / "t.db"))
    _keep_every_version(batch)
    report = batch.mine_sessions(sessions)
    assert report.counted > 0 and report.procedures > 0

    for folder in (live_dir, batch_dir):  # with the WAL, then checkpointed into the file
        assert len(list(folder.iterdir())) >= 2
        assert _leaks(folder, values) == [], folder.name
    live.close()
    batch.close()
    for folder in (live_dir, batch_dir):
        assert _leaks(folder, values) == [], folder.name
