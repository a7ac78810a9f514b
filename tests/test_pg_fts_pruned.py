"""PostgreSQL full text skips the candidates that cannot reach the top, and finds what scoring
every candidate finds (``sql/postgres/012_fts_pruned.sql``), float for float."""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

import pytest
from conftest import make_concept
from pgcluster import unique_tenant

from insika_knowledge.index.tokenizer import TOKENIZER
from insika_knowledge.store.postgres import PostgresStore
from insika_knowledge.store.postgres import fts as pg_fts

AGENT = "loja"
#: A few common words and many rare ones, so most candidates hold a term once, in the body.
WORDS = [f"w{i}" for i in range(60)]  # each its own analysed term
RARE = "zzrar"  # the analysed term of "zzrare"
EVERY = """SELECT * FROM fts_bm25(%(agent)s, %(terms)s::text[], %(query)s::tsquery, %(wa)s, %(wb)s,
                                  %(wc)s, %(window)s) ORDER BY 2 DESC, 1"""
PRUNED = """SELECT * FROM fts_bm25_pruned(%(agent)s, %(terms)s::text[], %(lexemes)s::text[], %(wa)s,
                                         %(wb)s, %(wc)s, %(window)s) ORDER BY 2 DESC, 1"""


def _text(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS[:8]) if rng.random() < 0.3 else rng.choice(WORDS) for _ in range(n))


@pytest.fixture(scope="module")
def store(pg_shared_url: str) -> Iterator[PostgresStore]:
    db = PostgresStore(pg_shared_url, unique_tenant(), tokenizer=TOKENIZER)
    rng = random.Random(13)
    with db.transaction() as tx:
        for i in range(400):
            name = f"c{i}-{rng.choice(WORDS)}" if rng.random() < 0.2 else f"c{i}"
            concept = make_concept(name, description=_text(rng, rng.randint(2, 8)),
                                   body=_text(rng, rng.randint(5, 60)))
            tx.put(AGENT, concept, reason="extract", actor="test")
            tx.put("other", concept, reason="extract", actor="test")  # another agent's statistics
    yield db
    db.close()


def _both(store: PostgresStore, terms: list[str], limit: int,
          weights: tuple[float, float, float]) -> tuple[list[Any], list[Any]]:
    params = pg_fts.search_params(AGENT, terms, limit, weights)
    assert params is not None
    params["query"] = pg_fts.query(terms)
    return store.rows(EVERY, params), store.rows(PRUNED, params)


@pytest.mark.parametrize("weights", [(8.0, 4.0, 1.0), (1.0, 1.0, 1.0), (0.0, 0.0, 0.0), (8.0, 4.0, -1.0)])
def test_the_window_is_the_one_scoring_every_candidate_gives(store: PostgresStore,
                                                               weights: tuple[float, float, float]) -> None:
    rng = random.Random(7)
    for _ in range(60):
        terms = sorted({rng.choice(WORDS) for _ in range(rng.randint(1, 5))})
        every, pruned = _both(store, terms, rng.choice([1, 5, 10]), weights)
        assert pruned == every, terms  # same ids, same floats, same order


def test_candidates_held_weakly_only_are_left_unscored(store: PostgresStore) -> None:
    # a strong concept for the rare term: 32 concepts hold it in the name, many in the body once
    with store.transaction() as tx:
        for i in range(40):
            tx.put(AGENT, make_concept(f"rare-{i}", description="zzrare", body="filler text"),
                   reason="extract", actor="test")
        for i in range(200):
            tx.put(AGENT, make_concept(f"plain-{i}", description="plain", body=f"once zzrare {i}"),
                   reason="extract", actor="test")
    assert store.scalar("SELECT count(*) FROM concepts WHERE agent = %s AND tsv_strong @@ %s::tsquery",
                        (AGENT, RARE)) == 40
    every, pruned = _both(store, [RARE], 5, (8.0, 4.0, 1.0))
    assert pruned == every and all(store.get(AGENT, f"rare-{i}") for i in range(3))
    names = {r.name for r, _ in store.fts_search(AGENT, [RARE], 5, (8.0, 4.0, 1.0))}
    assert names <= {f"rare-{i}" for i in range(40)} and len(names) == 5
    # an edit moving the term into the body keeps the strong lexemes in step (generated column)
    with store.transaction() as tx:
        for i in range(40):
            tx.put(AGENT, make_concept(f"rare-{i}", description="moved", body="zzrare"),
                   reason="edit", actor="test")
    assert store.scalar("SELECT count(*) FROM concepts WHERE agent = %s AND tsv_strong @@ %s::tsquery",
                        (AGENT, RARE)) == 0
    every, pruned = _both(store, [RARE], 5, (8.0, 4.0, 1.0))
    assert pruned == every and len(pruned) == 32
