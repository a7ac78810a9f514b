"""No personal datum, in any everyday format, reaches a stored byte through the write path.

A scripted model proposes concepts (and later merges) whose name, description and body
carry generated personal data; after learning, the database file and its WAL, the markdown
and GraphML exports and every event payload are searched for the datum in its written form
and in its compact form (letters and digits only).
"""

from __future__ import annotations

import functools
import re
import string
import tempfile
from pathlib import Path
from typing import Any

import phonenumbers
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from stdnum import luhn
from stdnum.br import cnpj, cpf

from insika_knowledge.config import load_config
from insika_knowledge.events import EventBus, Recorder
from insika_knowledge.export import export
from insika_knowledge.extract.model import ExtractionRequest, MergeAnswer, MergeRequest
from insika_knowledge.index.tokenizer import TOKENIZER
from insika_knowledge.learn import learn_turn
from insika_knowledge.store import SQLiteStore

SEPARATORS = [" ", ".", "-", "/"]
CONFIG = load_config({"types": ["fact", "policy", "procedure", "objection"]})


def _grouped(digits: str, layout: list[int], sep: str) -> str:
    parts, at = [], 0
    for n in layout:
        parts.append(digits[at : at + n])
        at += n
    return sep.join(parts)


@st.composite
def personal_data(draw: st.DrawFn) -> str:
    kind = draw(st.sampled_from(["cpf", "cnpj", "card", "iban", "email", "phone"]))
    sep = draw(st.sampled_from(SEPARATORS))
    if kind == "cpf":
        base = draw(st.text(alphabet=string.digits, min_size=9, max_size=9))
        assume(len(set(base)) > 1)
        number = base + cpf._calc_check_digits(base)  # noqa: SLF001
        return _grouped(number, draw(st.sampled_from([[3, 3, 3, 2], [11], [9, 2]])), sep)
    if kind == "cnpj":
        base = draw(st.text(alphabet=string.digits, min_size=12, max_size=12))
        assume(len(set(base)) > 1)
        number = base + cnpj.calc_check_digits(base)
        return _grouped(number, draw(st.sampled_from([[2, 3, 3, 4, 2], [14], [12, 2]])), sep)
    if kind == "card":
        body = draw(st.sampled_from("2345")) + draw(st.text(alphabet=string.digits, min_size=14, max_size=14))
        return _grouped(body + luhn.calc_check_digit(body), [4, 4, 4, 4], sep)
    if kind == "iban":
        value = draw(st.sampled_from(["DE89370400440532013000", "GB82WEST12345698765432", "NL91ABNA0417164300"]))
        value = " ".join(value[i : i + 4] for i in range(0, len(value), 4)) if draw(st.booleans()) else value
        return value.lower() if draw(st.booleans()) else value
    if kind == "email":
        user = draw(st.text(alphabet=string.ascii_lowercase, min_size=3, max_size=8))
        host = draw(st.sampled_from(["gmail", "empresa", "outlook"]))
        shape = draw(st.sampled_from(["{u}@{h}.com", "{u} at {h} dot com", "{u} [at] {h} [dot] com",
                                      "{u}(at){h}(dot)com.br", "{u} @ {h} . com", "{u} arroba {h} ponto com"]))
        return shape.format(u=user, h=host)
    area = draw(st.sampled_from(["11", "21", "31", "41", "51", "61", "71", "81"]))
    rest = draw(st.text(alphabet=string.digits, min_size=8, max_size=8))
    assume(phonenumbers.is_valid_number(phonenumbers.parse(f"{area}9{rest}", "BR")))
    return draw(st.sampled_from([
        f"({area}) 9{rest[:4]}-{rest[4:]}", f"+55 {area} 9{rest[:4]}-{rest[4:]}",
        f"{area} 9{rest[:4]} {rest[4:]}", f"+55{area}9{rest}",
    ]))


class Scripted:
    """A model that proposes the given candidates and merges by joining the two bodies."""

    def __init__(self, items: list[dict[str, Any]]):
        self.items = items

    def propose(self, request: ExtractionRequest) -> list[Any]:
        return self.items

    def merge(self, request: MergeRequest) -> MergeAnswer:
        return MergeAnswer(verdict="related", body=f"{request.old_body} {request.new_body}")


def _stored_bytes(folder: Path) -> bytes:
    return b"".join(p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file())


def _holds_word(haystack: bytes, form: str) -> bool:
    """`form` in `haystack` with no letter or digit right before or after it: a stored datum,
    not three letters inside a hex digest (a keyed digest holds "aaa" about one time in 70)."""
    return re.search(rb"(?<![A-Za-z0-9])" + re.escape(form.encode()) + rb"(?![A-Za-z0-9])", haystack) is not None


@functools.cache
def _empty_store_bytes() -> bytes:
    """The bytes of a store with nothing in it: its schema's words ("one line", "one row")."""
    with tempfile.TemporaryDirectory() as tmp:
        SQLiteStore(Path(tmp) / "empty.sqlite3", tokenizer=TOKENIZER).close()
        return _stored_bytes(Path(tmp))


def _forms(value: str) -> list[str]:
    compact = "".join(ch for ch in value if ch.isalnum())
    forms = [value, compact, compact.lower(), compact.upper()]
    if "@" in value or " at " in value or "(at)" in value or "[at]" in value or "arroba" in value:
        forms = [value, value.split()[0].split("(")[0].split("[")[0].split("@")[0]]
    return [f for f in forms if len(f) >= 3]


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(personal_data(), personal_data())
def test_no_personal_datum_reaches_a_stored_byte(first: str, second: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        store = SQLiteStore(folder / "db" / "tenant.sqlite3", tokenizer=TOKENIZER)
        events, recorder = EventBus(), Recorder()
        events.subscribe(recorder)
        try:
            for session, value in (("s1", first), ("s2", second)):
                item = {
                    "name": "refund-contact",
                    "description": f"Refunds go to the customer on file ({value}).",
                    "type": "fact",
                    "body": f"Refunds are paid to the account given by the customer: {value}.",
                }
                learn_turn(store, "support", CONFIG, Scripted([item]), session_id=session, turn_id="t1",
                           messages=[{"role": "user", "content": f"my data: {value}"}], events=events)
            export(store, "support", folder / "out-md", "md")
            export(store, "support", folder / "out-graphml", "graphml")
        finally:
            store.close()
        haystack = _stored_bytes(folder) + repr(recorder.events).encode()
        assert b"refund" in haystack.lower()  # the concept itself was stored and exported
        for value in (first, second):
            for form in _forms(value):  # an e-mail's local part may be a word of the schema ("one")
                assert not _holds_word(haystack, form) or _holds_word(_empty_store_bytes(), form), (value, form)


KEPT = st.one_of(
    st.builds(lambda a, b: f"CEPs {a}000-{a}999", st.integers(10, 99), st.integers(0, 9)),
    st.builds(lambda a, b: f"CEP {a:05d}-{b:03d}", st.integers(1000, 99999), st.integers(0, 999)),
    st.builds(lambda r, c: f"R$ {r:,}.{c:02d}".replace(",", "X").replace(".", ",").replace("X", "."),
              st.integers(1, 10**9), st.integers(0, 99)),
    st.builds(lambda n: f"pedido #{n}", st.integers(1000, 10**9)),
    st.builds(lambda n: f"order #W{n}", st.integers(10**6, 10**7)),
    st.builds(lambda d, m, y: f"{d:02d}/{m:02d}/{y}", st.integers(1, 28), st.integers(1, 12), st.integers(1990, 2040)),
    st.builds(lambda d, m, y: f"{y}-{m:02d}-{d:02d}", st.integers(1, 28), st.integers(1, 12), st.integers(1990, 2040)),
)


@settings(max_examples=300)
@given(KEPT)
def test_ceps_prices_orders_and_dates_survive(text: str) -> None:
    sentence = f"Confirmado: {text}, sem custo."
    from insika_knowledge.privacy.redact import redact

    assert redact(sentence).text == sentence
