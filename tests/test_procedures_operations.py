"""Operation procedures (issue 23): one per write, mined across tasks, recalled by a vote of past tasks."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from insika_knowledge.bench.datasets import shared_data
from insika_knowledge.procedure import TaskRecord, operation_id, wilson_lower_bound
from insika_knowledge.procedures.mining import operations
from insika_knowledge.procedures.mining.mine import Miner
from insika_knowledge.procedures.mining.operations import (
    CONFIRM,
    TaskIdentity,
    operation_procedure,
    run_operations,
    slotted,
)
from insika_knowledge.procedures.recall.match import MatchSettings, TaskMatcher, names
from insika_knowledge.procedures.recall.recall import RecallIndex
from insika_knowledge.procedures.recall.render import render
from insika_knowledge.procedures.recall.tokens import WordPieceCounter
from insika_knowledge.procedures.trace.steps import build
from insika_knowledge.procedures.trace.terms import digests, message_terms
from insika_knowledge.sessions import read_sessions

DATA = shared_data() or Path("/nonexistent")
TAU2 = [DATA / "tau2_bench_airline" / "normalized.jsonl", DATA / "tau2_bench_retail" / "normalized.jsonl"]


def call(cid: str, name: str, **arguments: object) -> dict:
    return {"role": "assistant", "content": None,
            "tool_calls": [{"id": cid, "type": "function", "function": {"name": name, "arguments": arguments}}]}


def result(cid: str, content: str) -> dict:
    return {"role": "tool", "tool_call_id": cid, "content": content}


def user(text: str) -> dict:
    return {"role": "user", "content": text}


def cancel_order(ask: str = "Please cancel my pending order", *, confirm: bool = True,
                 reason: str = "no longer needed", extra: list[dict] | None = None) -> list[dict]:
    messages = [
        {"role": "system", "content": "retail policy"},
        user(ask),
        call("a", "find_user_id_by_email", email="ana@example.com"),
        result("a", "ana_lima_1234"),
        call("b", "get_user_details", user_id="ana_lima_1234"),
        result("b", json.dumps({"orders": ["#W1234567"], "payment_methods": {"gift_card_77": {}}})),
        call("t", "think", thought="the order is pending"),
        result("t", ""),
        call("c", "get_order_details", order_id="#W1234567"),
        result("c", json.dumps({"order_id": "#W1234567", "status": "pending"})),
        *(extra or []),
    ]
    if confirm:
        messages += [{"role": "assistant", "content": "Shall I cancel #W1234567? (yes/no)"}, user("yes")]
    messages += [call("d", "cancel_pending_order", order_id="#W1234567", reason=reason),
                 result("d", json.dumps({"status": "cancelled"}))]
    return messages


# ---------------------------------------------------------------- what a run contributes


def test_a_run_contributes_each_write_with_its_reads_confirmation_and_slots() -> None:
    run = run_operations(build(cancel_order()))
    ((op, use),) = run.ops
    assert op == "cancel_pending_order" and run.names == ("cancel_pending_order",)
    assert [sig for sig, _, _ in use.reads] == [
        "find_user_id_by_email(email)", "get_user_details(user_id)", "get_order_details(order_id)"]  # no think
    assert use.reads[1][2] == (("user_id", "from find_user_id_by_email"),)
    assert use.write == "cancel_pending_order(order_id=<ORDER_ID>, reason=<REASON>)"
    assert use.values == (("reason", ("no longer needed",)),)
    assert use.confirm == 1
    assert not run_operations(build(cancel_order(confirm=False))).ops[0][1].confirm
    assert run.asked == ("Please cancel my pending order", "yes")  # the user's messages before the write


def test_a_hand_off_a_failed_write_and_a_retried_one_are_no_operations() -> None:
    messages = cancel_order(extra=[call("x", "transfer_to_human_agents", summary="wants a refund"),
                                   result("x", "Transfer successful")])
    assert run_operations(build(messages)).names == ("cancel_pending_order",)
    failed = cancel_order()[:-2] + [call("d", "cancel_pending_order", order_id="#W1", reason="x"),
                                   result("d", "Error: order is not pending")]
    assert run_operations(build(failed)).names == ()
    twice = cancel_order() + [call("e", "return_delivered_order_items", order_id="#W1", item_ids=["1"]),
                              result("e", "{}")]
    assert run_operations(build(twice)).chain == "cancel_pending_order>return_delivered_order_items"


def test_enumeration_values_become_slots_and_ids_never_show() -> None:
    assert slotted("update(cabin=economy, flights=[{date=<DATE>}], reservation_id=<RESERVATION_ID>)") == (
        "update(cabin=<CABIN>, flights=[{date=<DATE>}], reservation_id=<RESERVATION_ID>)")
    steps = build([user("book it"), call("b", "book_reservation", cabin="basic_economy", user_id="mia_li_3668",
                                         first_name="Mia", reason="no longer needed", flight_type="one_way"),
                   result("b", "{}")]).steps
    assert steps[0].values == (("cabin", "basic_economy"), ("flight_type", "one_way"),
                               ("reason", "no longer needed"))  # never a name or an id


def test_a_task_is_told_by_its_first_message() -> None:
    key = b"k"
    identity = TaskIdentity()
    first = digests(key, message_terms("I'd like to exchange the keyboard I received"))
    identity.add(TaskRecord("task-a", firsts=(first,)))
    same = digests(key, message_terms("Hi! I would like to exchange a keyboard I received recently"))
    other = digests(key, message_terms("Please cancel my pending order for the lamp"))
    assert identity.resolve(same) == "task-a" and identity.resolve(other) is None


# ---------------------------------------------------------------- the procedure, over tasks


def _mine(*runs: tuple[str, list[dict], str, str]) -> Miner:
    miner = Miner()
    for run_id, messages, outcome, task in runs:
        miner.add_trace(run_id, build(messages), outcome, task_key=task)
    return miner


def test_support_and_the_wilson_bound_count_distinct_tasks() -> None:
    miner = _mine(
        ("r1", cancel_order(), "success", "t1"),
        ("r2", cancel_order(), "success", "t1"),  # a repeated trial of t1: no recurrence
        ("r3", cancel_order(), "success", "t1"),
        ("r4", cancel_order("cancel order two"), "success", "t2"),
        ("r5", cancel_order("cancel order three"), "failure", "t3"),  # t3 never succeeded with it
        ("r6", cancel_order(), "failure", "t1"),  # t1 did succeed: not against it
    )
    miner.add_trace("r1", build(cancel_order()), "success", task_key="t1")  # a run counts once
    (procedure,) = miner.procedures()
    assert procedure.id == operation_id("cancel_pending_order") and procedure.scope == "operation"
    assert (procedure.successes, procedure.failures, procedure.trigger_runs) == (2, 1, 4)
    assert procedure.confidence == pytest.approx(wilson_lower_bound(2, 3))
    assert procedure.prior_runs == 4 and procedure.recurs


def test_steps_some_tasks_took_are_optional_and_rarer_ones_dropped() -> None:
    look = [call("p", "get_product_details", product_id="9"), result("p", "{}")]
    rare = [call("q", "list_all_product_types"), result("q", "{}")]
    miner = _mine(
        ("r1", cancel_order(extra=look + rare), "success", "t1"),
        ("r2", cancel_order("cancel the second order", extra=look), "success", "t2"),
        ("r3", cancel_order("drop my third purchase", extra=look), "success", "t3"),
        ("r4", cancel_order("cancel number four", confirm=False, reason="ordered by mistake"), "success", "t4"),
        ("r5", cancel_order("cancel five", reason="ordered by mistake"), "success", "t5"),
        ("r6", cancel_order("cancel six please"), "success", "t6"),
        ("r7", cancel_order("cancel seven now"), "success", "t7"),
    )
    (procedure,) = miner.procedures()
    keys = [s.key for s in procedure.steps]
    assert keys[:3] == ["find_user_id_by_email(email=<EMAIL>)",
                        "get_user_details(user_id=<USER_ID>) [user_id: from find_user_id_by_email]",
                        "get_order_details(order_id=<ORDER_ID>) [order_id: from get_user_details]"]
    assert "(optional, 3 of 7 tasks) get_product_details(product_id=<PRODUCT_ID>)" in keys
    assert not any("list_all_product_types" in k for k in keys)  # 1 of 7, under a third: dropped
    assert keys[-2] == CONFIRM  # 6 of 7 runs confirmed
    assert keys[-1] == ("cancel_pending_order(order_id=<ORDER_ID>, reason=<REASON>) [order_id: from "
                        "get_user_details; reason: no longer needed 5, ordered by mistake 2 of 7 tasks; "
                        "when: status is pending in all 7 tasks]")
    assert procedure.tools == ("cancel_pending_order", "find_user_id_by_email", "get_order_details",
                               "get_user_details")
    block = render(procedure, WordPieceCounter(), 400)
    assert "&lt;" not in block.text and "<ORDER_ID>" in block.text and block.fits
    assert "[order_id: from step 2; reason:" in block.text  # a source names its step in the block
    # Over the budget, the optional steps go first, and nothing else.
    tight = render(procedure, WordPieceCounter(), block.tokens - 1)
    assert tight.fits and "get_product_details" not in tight.text and "cancel_pending_order" in tight.text
    assert not render(procedure, WordPieceCounter(), 20).fits


def test_a_contradicted_recall_counts_against_the_operation() -> None:
    book = [user("book a flight to Paris"), call("b", "book_reservation", origin="JFK"), result("b", "{}")]
    miner = _mine(("r1", cancel_order(), "success", "t1"), ("r2", cancel_order("cancel two"), "success", "t2"))
    miner.add_trace("r3", build(book), "success", recalled=("cancel_pending_order",), task_key="t3")
    cancel = next(p for p in miner.procedures() if p.id == operation_id("cancel_pending_order"))
    assert (cancel.successes, cancel.failures) == (2, 1)
    assert miner.tasks[operations.task_id_of("key\x1et3")].contradicted == {"cancel_pending_order": 1}


# ---------------------------------------------------------------- the vote


def _index(records: list[TaskRecord], settings: MatchSettings | None = None, key: bytes = b"k") -> RecallIndex:
    index = RecallIndex(0.0, 1.0, key=key, match=settings or MatchSettings(3, 0.3, 0.6, 0.0))
    ops = sorted({op for r in records for op in r.ops})
    index.update(p for p in (operation_procedure(op, records) for op in ops) if p)
    index.update_tasks(records)
    return index


def _task(tid: str, asks: list[str], ops: dict[str, int], runs: int | None = None, quiet: int = 0,
          chains: dict[str, int] | None = None, key: bytes = b"k") -> TaskRecord:
    messages = tuple(digests(key, message_terms(a)) for a in asks)
    runs = runs if runs is not None else max([*ops.values(), quiet, 1])
    uses = {op: operations.OperationUse((), f"{op}(x=<X>)", f"{op}(x)") for op in ops}
    return TaskRecord(tid, (messages[0],), messages, "", runs, quiet, ops, chains or {}, uses=uses)


EXCHANGES = [
    _task("task-1", ["I want to exchange the keyboard I received", "my name is Ana"], {"exchange_items": 2}),
    _task("task-2", ["Hi, I'd like to exchange a lamp that was delivered"], {"exchange_items": 1}),
    _task("task-3", ["please exchange the delivered watch for another color"], {"exchange_items": 2}),
    _task("task-4", ["return the bicycle I received, it is damaged"], {"return_items": 2}),
    _task("task-5", ["I want to return a delivered camera for a refund"], {"return_items": 1}),
]


def test_the_nearest_past_tasks_vote_once_each() -> None:
    index = _index(EXCHANGES)
    found, decision = index.recall_operation("Hi, I want to exchange a keyboard that was delivered")
    assert [p.id for p in found.chain] == [operation_id("exchange_items")] and found.matcher == "tasks"
    # task-1 shares "keyboard", which no other task has (it weighs nothing): the two that
    # share "delivered" vote
    assert decision.agreement == pytest.approx(1.0) and [n.task for n in decision.neighbours] == ["task-2", "task-3"]
    found, _ = index.recall_operation("I'd like to return the camera I received, it was delivered")
    assert [p.id for p in found.chain] == [operation_id("return_items")]


@pytest.mark.parametrize("text", [
    "I want to exchange keys in SSH",  # an attacker's: the verb alone recalled exchange_items
    "How do I return a value from a Python function?",
    "I'd like to return a library book I borrowed",
])
def test_a_request_that_shares_only_the_verb_recalls_nothing(text: str) -> None:
    """A past request votes only when it shares a weighted term besides the verbs (what is
    exchanged or returned), and the request's words no past tasks share weigh in its norm."""
    index = _index(EXCHANGES, MatchSettings(2, 0.0, 0.5, 0.0))
    found, decision = index.recall_operation(text)
    assert not found.hit and not decision.neighbours, (text, decision)
    assert index.recall_operation("I want to exchange the watch that was delivered")[0].hit


def test_a_message_that_names_no_operation_recalls_nothing() -> None:
    index = _index(EXCHANGES)
    for text in ("yes, please go ahead", "my name is Ana and my zip is 12345", "what is the weather"):
        found, decision = index.recall_operation(text)
        assert not found.hit and decision.reason == "nothing_asked", text
    assert names("update_reservation_flights", message_terms("I need to change my flight"))  # synonyms
    assert not names("book_reservation", message_terms("cancel my trip"))


def test_it_abstains_without_two_supporting_tasks_on_disagreement_and_on_a_near_tie() -> None:
    lone = _index(EXCHANGES[:1] + EXCHANGES[3:])
    _, decision = lone.recall_operation("I want to exchange the keyboard I received")
    assert not decision.operations  # one task asked for it: its words weigh nothing yet
    far = _task("task-f", ["exchange something else entirely different words here"], {"exchange_items": 1})
    two = _index([*EXCHANGES[:1], far, _task("task-x", ["exchange the keyboard order"], {"return_items": 1}),
                  *EXCHANGES[3:]], MatchSettings(2, 0.1, 0.3, 0.0))
    _, decision = two.recall_operation("I want to exchange the keyboard I received")
    assert decision.reason == "one_supporting_task"
    mixed = _index([*EXCHANGES[:2], _task("task-9", ["I want to exchange the keyboard I received"],
                                            {"exchange_items": 1}, runs=2, quiet=1)],
                   MatchSettings(3, 0.1, 0.9, 0.0))
    _, decision = mixed.recall_operation("I want to exchange the keyboard I received")
    assert not decision.operations and decision.reason == "disagreement"
    tie = _index([*EXCHANGES[:3], _task("task-8", ["I want to exchange the keyboard I received"], {}, quiet=3)],
                 MatchSettings(2, 0.1, 0.5, 0.05))
    _, decision = tie.recall_operation("I want to exchange the keyboard I received")
    assert not decision.operations


def test_past_tasks_that_made_no_write_vote_for_nothing_and_a_hand_off_is_never_recalled() -> None:
    refused = [_task(f"task-r{i}", [f"please cancel my basic economy flight {w}"], {}, quiet=3)
               for i, w in enumerate(("now", "today", "asap"))]
    cancelled = [_task(f"task-c{i}", [f"please cancel my business flight {w}"], {"cancel_reservation": 2})
                 for i, w in enumerate(("now", "today"))]
    index = _index(refused + cancelled)
    found, decision = index.recall_operation("please cancel my basic economy flight")
    # a newcomer's finding: this was "nothing_asked", though the message asks to cancel
    assert not found.hit and decision.reason == "no_write_voted"
    handoffs = [_task(f"task-h{i}", ["transfer me to a human agent"], {"transfer_to_human_agents": 3})
                for i in range(3)]
    index = _index(handoffs)
    assert not index.recall_operation("transfer me to a human agent please")[0].hit


def test_writes_are_chained_only_as_every_supporting_task_chained_them() -> None:
    both = {"modify_address": 2, "modify_items": 2}
    tasks = [_task(f"task-{i}", [f"modify the address and the items of my order {w}"], both,
                   chains={"modify_address>modify_items": 2}) for i, w in enumerate(("one", "two", "three"))]
    found, _ = _index(tasks).recall_operation("please modify the address and items of my order")
    assert [p.steps[-1].signature for p in found.chain] == ["modify_address(x)", "modify_items(x)"]
    assert found.hops == 1
    other = [_task(f"task-{i}", [f"book a flight and cancel the old one {w}"], {"book": 2, "cancel": 2},
                   chains={"cancel>book": 2}) for i, w in enumerate(("one", "two", "three"))]
    assert len(_index(other).recall_operation("cancel the old flight and book a new one")[0].chain) == 2
    # The message must name every write of the chain.
    assert len(_index(other).recall_operation("please book a flight, the one from before")[0].chain) == 1
    tasks[2] = _task("task-2", ["modify the address and the items of my order three"], both,
                     chains={"modify_items>modify_address": 2})
    found, decision = _index(tasks).recall_operation("please modify the address and items of my order")
    # The supporting tasks did them in different orders: two writes tie, and nothing says which.
    assert not found.hit and decision.reason == "near_tie"


def test_two_writes_that_tie_in_the_vote_are_told_apart_by_what_the_message_names_or_not_at_all() -> None:
    both = {"modify_order_address": 2, "modify_order_items": 2}
    tasks = [_task(f"task-{i}", [f"I need to modify my pending order {w}"], both)
             for i, w in enumerate(("a", "b", "c"))]
    index = _index(tasks)
    # Every neighbour made both writes, in no agreed order: the message must say which one.
    found, decision = index.recall_operation("please modify my pending order, the earbuds are wrong")
    assert not found.hit and decision.reason == "near_tie"
    found, _ = index.recall_operation("please modify the address of my pending order")
    assert [p.id for p in found.chain] == [operation_id("modify_order_address")]
    found, _ = index.recall_operation("please modify the items of my pending order")
    assert [p.id for p in found.chain] == [operation_id("modify_order_items")]


def test_a_message_naming_what_another_write_acts_on_is_not_given_the_voted_one() -> None:
    """A newcomer's finding: "Can you update the address on my pending order?" got the item
    change (the nearest past requests changed items; the address change is known)."""
    records = [
        _task("t1", ["modify my pending order please"], {"modify_pending_order_items": 1}),
        _task("t2", ["please modify my pending order"], {"modify_pending_order_items": 1}),
        _task("t3", ["modify the address where the parcel goes"], {"modify_pending_order_address": 1}),
        _task("t4", ["modify my address for the parcel"], {"modify_pending_order_address": 1}),
    ]
    index = _index(records, MatchSettings(2, 0.1, 0.6, 0.0))
    found, decision = index.recall_operation("Can you update my pending order?")
    assert [p.id for p in found.chain] == [operation_id("modify_pending_order_items")], decision
    found, decision = index.recall_operation("Can you update the address on my pending order?")
    assert [n.task for n in decision.neighbours] == ["t1", "t2"]  # the item changes are nearest
    assert not found.hit and decision.reason == "another_object", decision


def test_the_request_must_offer_the_operation_tools() -> None:
    index = _index(EXCHANGES)
    text = "I want to exchange the keyboard that was delivered"
    assert index.recall_operation(text, ("exchange_items",))[0].hit
    assert not index.recall_operation(text, ("return_items",))[0].hit


def test_pruned_similarities_give_the_same_decisions() -> None:
    rnd = random.Random(23)
    words = "exchange return cancel order keyboard lamp watch delivered refund color size damaged".split()
    ops = ["exchange_items", "return_items", "cancel_order"]
    records = [_task(f"task-{i}", [" ".join(rnd.choices(words, k=6)) for _ in range(3)],
                     {rnd.choice(ops): rnd.randint(1, 3)}, quiet=rnd.randint(0, 1)) for i in range(60)]
    matcher = TaskMatcher(MatchSettings(3, 0.35, 0.6, 0.05), b"k")
    matcher.update(records)
    procedures = {op: operation_procedure(op, records) for op in ops}
    for _ in range(200):
        text = " ".join(rnd.choices(words, k=5))
        terms = message_terms(text)
        query = digests(b"k", terms)
        full = matcher.decide(terms, query, procedures.__contains__, ranked=matcher.similarities(query))
        pruned = matcher.decide(terms, query, procedures.__contains__)
        assert (full.operations, full.reason) == (pruned.operations, pruned.reason), text


def test_the_vectorised_similarities_of_a_large_index_are_the_plain_ones(monkeypatch: pytest.MonkeyPatch) -> None:
    """Past `_VECTOR_SLOTS` request slots the scores are summed with numpy: the same floats,
    term by term in the same order, as the plain loop gives."""
    from insika_knowledge.procedures.recall import match

    rnd = random.Random(7)
    words = [f"w{i}" for i in range(300)] + "order item lamp keyboard delivered received".split()
    verbs = ["exchange", "return", "cancel", "change"]
    ops = ["exchange_items", "return_items", "cancel_order", "modify_order_address"]
    records = [_task(f"task-{i}", [" ".join([rnd.choice(verbs), *rnd.choices(words, weights=[1 / (k + 1) for k in
                                                                                               range(len(words))],
                                                                               k=rnd.randint(2, 7))])
                                  for _ in range(3)], {rnd.choice(ops): rnd.randint(1, 3)}) for i in range(1500)]
    matcher = TaskMatcher(MatchSettings(2, 0.2, 0.6, 0.0), b"k")
    matcher.update(records)
    assert len(matcher._slot_task) >= match._VECTOR_SLOTS
    queries = [digests(b"k", message_terms(" ".join([rnd.choice(verbs), *rnd.choices(words, k=rnd.randint(1, 6))])))
               for _ in range(150)]
    for floor in (0.0, 0.2, 0.4):
        vectorised = [matcher.similarities(q, floor) for q in queries]
        monkeypatch.setattr(match, "_VECTOR_SLOTS", 10**9)
        plain = [matcher.similarities(q, floor) for q in queries]
        monkeypatch.undo()
        assert vectorised == plain and any(vectorised)


# ---------------------------------------------------------------- the shared samples


@pytest.mark.skipif(not all(p.exists() for p in TAU2), reason="shared data not present")
def test_the_tau2_samples_give_one_operation_procedure_per_write_without_literal_values() -> None:
    for path in TAU2:
        sessions = list(read_sessions(path))
        miner = Miner()
        for s in sessions:
            miner.add_trace(s.session_id, build(s.messages), s.outcome, task_key=str(s.metadata["task_id"]))
        procedures = miner.procedures()
        tasks = {s.metadata["task_id"] for s in sessions}
        assert procedures and len(miner.tasks) == len(tasks)
        raw = {v for s in sessions for m in s.messages for c in m.get("tool_calls") or []
               for v in c["arguments"].values() if isinstance(v, str) and any(ch.isdigit() for ch in v)}
        for p in procedures:
            assert p.scope == "operation" and p.kind == "tool" and not p.steps[-1].template.startswith("transfer")
            assert p.successes <= len(tasks) and p.trigger_runs >= p.successes
            assert p.steps[-1].signature.split("(")[0] in p.tools
            for step in p.steps:
                assert not any(value in step.key for value in raw), step.key
        for record in miner.tasks.values():
            assert all(len(d) == 12 for m in record.messages for d in m)  # digests, never words


def test_a_request_names_its_action_in_a_form_that_asks() -> None:
    from insika_knowledge.procedures.trace.terms import asked_terms

    assert names("book_reservation", asked_terms("I'd like to book a one-way flight"))
    for text in ("Can you look up my booking?", "I booked it last week", "a cancellation fee"):
        assert not names("book_reservation", asked_terms(text)) and not names("cancel_x", asked_terms(text)), text
    assert names("update_reservation_flights", asked_terms("Please change my flight to Friday"))


@pytest.mark.parametrize(("text", "asked"), [
    ("I need to downgrade all my business class bookings to economy.", True),
    ("Please upgrade reservation M20IZO to business class.", True),
    ("Can you reschedule my flight to Friday?", True),
    ("Quero remarcar meu voo para sexta.", True),
    ("My seat was upgraded yesterday.", False),  # a past names the change without asking for it
    ("I don't want to downgrade anything.", False),
])
def test_a_word_for_a_kind_of_change_asks_for_a_change(text: str, asked: bool) -> None:
    """Dev, airline tasks 18 and 37: "downgrade all my business class bookings" and "upgrade
    another one to business" asked for nothing, so the flights' update was never recalled."""
    from insika_knowledge.procedures.trace.terms import asked_terms

    assert names("update_reservation_flights", asked_terms(text)) is asked, sorted(asked_terms(text))


@pytest.mark.parametrize(("text", "asked", "not_asked"), [
    # dev, retail task 5: the exchange was recalled for a request that refuses it
    ("Actually, I've changed my mind. I don't want to exchange anything right now. Instead, I'd like to "
     "return the water bottle.", "return_delivered_order_items", "exchange_delivered_order_items"),
    ("I'd like to cancel the insurance but I don't want to cancel the flight itself",
     "cancel_reservation", None),
    ("I do not want to change the flights or passengers, just check my baggage allowance", None,
     "update_reservation_flights"),
    ("I do not want to change the flights or passengers, just downgrade the cabin", "update_reservation_flights",
     None),  # a downgrade is a change (dev, airline task 18)
    ("We no longer need to cancel it; please book the 9 am flight", "book_reservation", "cancel_reservation"),
    ("I never asked to cancel anything", None, "cancel_reservation"),
    ("Eu não quero cancelar, quero trocar o endereço", None, "cancel_reservation"),
    ("I dont want to cancel", None, "cancel_reservation"),
])
def test_a_verb_a_negation_governs_asks_for_nothing(text: str, asked: str | None, not_asked: str | None) -> None:
    from insika_knowledge.procedures.trace.terms import asked_terms

    terms = asked_terms(text)
    if asked:
        assert names(asked, terms), (text, sorted(terms))
    if not_asked:
        assert not names(not_asked, terms), (text, sorted(terms))


def test_a_run_counts_once_in_its_task_and_each_operation_is_folded_once_per_batch(open_procedures) -> None:
    from insika_knowledge.procedures.mining.scoring import OperationRun

    store = open_procedures()
    key = store.digest_key()
    assert key == store.digest_key() and len(key) == 32

    def run(run_id: str, ask: str, task: str, outcome: str = "success") -> OperationRun:
        ops = run_operations(build(cancel_order(ask)))
        first, asked = operations.run_digests(key, ops)
        return OperationRun(run_id, task, outcome, ops, first, asked, operations.sample_of(ops))

    g0 = store.generation()
    assert store.record_runs([run("r1", "cancel my order", "task-a"), run("r1", "cancel my order", "task-a"),
                              run("r2", "please cancel the pending order", "task-b"),
                              run("r3", "cancel it now", "task-c", "failure")]) == 3
    assert store.generation() > g0
    (procedure,) = store.list_procedures()
    assert (procedure.successes, procedure.failures, procedure.trigger_runs) == (2, 1, 2)
    tasks = {t.id: t for t in store.tasks_since(0)}
    assert set(tasks) == {"task-a", "task-b", "task-c"} and tasks["task-c"].failed == {"cancel_pending_order": 1}
    assert tasks["task-a"].sample.startswith("… cancel") or "cancel" in tasks["task-a"].sample
    assert store.record_runs([run("r1", "cancel my order", "task-a")]) == 0  # counted once, ever
    assert store.get_task("task-a") == tasks["task-a"]
    store.close()
