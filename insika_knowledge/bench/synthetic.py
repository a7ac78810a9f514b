"""The synthetic concept corpus the speed benchmarks share (seeded: every run sees the same).

Concept text is drawn from a Zipf-distributed vocabulary of Portuguese and English
support words plus generated terms, so frequent words have long posting lists as in
real stores.
"""

from __future__ import annotations

import random
from typing import Final

from insika_knowledge.concept import Concept
from insika_knowledge.store import SQLiteStore

_WORDS: Final = (
    "frete entrega prazo cep campinas sao paulo devolucao troca reembolso pedido produto "
    "pagamento pix boleto cartao parcelamento desconto cupom estoque loja atendimento garantia "
    "defeito nota fiscal endereco transportadora rastreio correios sedex retirada horario "
    "shipping delivery return refund exchange order payment card discount coupon stock store "
    "warranty invoice address carrier tracking pickup hours days business free threshold "
    "flight booking reservation cancel cabin baggage insurance upgrade membership gold silver"
).split()


def _generated(i: int) -> str:
    """A letters-only made-up word per number: ``0`` -> ``"xa"``, ``27`` -> ``"xbb"``."""
    letters = ""
    i += 26
    while i:
        i, r = divmod(i, 26)
        letters = chr(97 + r) + letters
    return "x" + letters


VOCABULARY: Final = _WORDS + [_generated(i) for i in range(4000)]


def _weights() -> list[float]:
    return [1.0 / (rank + 1) ** 1.05 for rank in range(len(VOCABULARY))]


def corpus(n: int, seed: int = 7) -> list[Concept]:
    """`n` synthetic concepts named ``c0``..``c{n-1}`` (deterministic for a seed).

    Every third links to a random other concept; every tenth states a range and a price.
    """
    rnd = random.Random(seed)
    weights = _weights()

    def text(k: int) -> str:
        return " ".join(rnd.choices(VOCABULARY, weights, k=k))

    out = []
    for i in range(n):
        body = text(45) + (f" Related: [[c{rnd.randrange(n)}]]." if i % 3 == 0 else "")
        if i % 10 == 0:  # some concepts state numbers and ranges, as real ones do
            body += f" Prazo de {rnd.randint(1, 5)}-{rnd.randint(6, 10)} dias acima de R$ {rnd.randint(50, 500)}."
        out.append(Concept(
            name=f"c{i}", description=text(12), type="fact", provenance="observed",
            confidence=rnd.choice([0.4, 0.6, 0.7, 0.8, 0.9]), sources=(f"s{i}",), occurrences=1,
            created_at="2026-08-24T18:00:00Z",
            updated_at=f"2026-08-{1 + i % 28:02d}T{i % 24:02d}:00:00Z", body=body,
        ))
    return out


def queries(k: int, seed: int = 11) -> list[str]:
    """`k` customer-like messages of 6-14 words from the corpus' vocabulary."""
    rnd = random.Random(seed)
    weights = _weights()
    return [
        "Oi, " + " ".join(rnd.choices(VOCABULARY, weights, k=rnd.randint(6, 14))) + "?"
        for _ in range(k)
    ]


def fill(store: SQLiteStore, agent: str, concepts: list[Concept]) -> None:
    """Write `concepts` for `agent` in one transaction (reason ``extract``, actor ``bench``)."""
    with store.transaction() as tx:
        for concept in concepts:
            tx.put(agent, concept, reason="extract", actor="bench")
