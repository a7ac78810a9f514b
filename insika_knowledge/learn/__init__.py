"""The write path: one finished turn in, concepts learned, confirmed, merged or contradicted.

One concern a module: `turn` (the turn loop), `known` (what the write path searches),
`naming` (naming a sighting), `sighting` (deciding and writing one sighting, the merge
lease).

`learn_turn` asks the model for candidates, screens them (`extract.candidates`), and
sights each one against the store (`sight`). A model failure (any exception the model
raises, or an answer that is not a list) is recorded as the turn's outcome (retryable)
and returned, never raised; a merge call that fails counts as contradicting.

What a sighting does is decided by `consolidate` (pure), and whether it is learned or
held in quarantine by the trust gate (`trust.admit`, pure: every candidate of every
writer passes it here); this module keeps only the transactions, the model calls, the
searches and the events:

- the extraction prompt lists the agent's concepts most relevant to the turn (found
  through the agent's own index, ``known_concepts`` of the config), so the model reuses a
  name for the same idea;
- `record` names each candidate (`consolidate.name_sighting`): a name no concept has is
  first searched for among the agent's concepts (the candidate's description and body);
  the sighting then goes to the concept that states the same claim (the proposed name
  kept as an alias, ``knowledge_aliased``), is held as a possible duplicate
  (``knowledge_possible_duplicate``), or is learned as new;
- `sight` decides and writes one sighting under one name, inside one ``BEGIN IMMEDIATE``
  transaction; a merge, which needs a model call, is asked outside it and its verdict
  committed with a compare-and-swap on the concept's claim.

Concurrent writers of one concept take turns at the merge model: the writer that must
ask takes the concept's merge lease (first come, first served, across processes) and
the others wait for it, then decide again against the record it left. A sighting that
agrees with the merged text is then a confirmation, one that is related a new merge;
a verdict made stale by another writer is asked again about the new body, never turned
into a conflict because the record moved (see `sight`).
"""

from insika_knowledge.consolidate import Outcome
from insika_knowledge.errors import InsikaError
from insika_knowledge.learn.known import KNOWN_SEARCH_CHARS, AgentSearch, ConceptSearch, relevant_concepts
from insika_knowledge.learn.naming import NAMING_ATTEMPTS, record, routed
from insika_knowledge.learn.sighting import (
    MERGE_ATTEMPTS,
    MERGE_LEASE_S,
    MERGE_POLL_S,
    MERGE_WAIT_TTL_S,
    sight,
    sight_once,
)
from insika_knowledge.learn.turn import TurnReport, learn_turn
from insika_knowledge.privacy.pseudonyms import stored_ids

__all__ = ["KNOWN_SEARCH_CHARS", "MERGE_ATTEMPTS", "MERGE_LEASE_S", "MERGE_POLL_S", "MERGE_WAIT_TTL_S",
           "NAMING_ATTEMPTS", "AgentSearch", "ConceptSearch", "InsikaError", "Outcome", "TurnReport",
           "learn_turn", "record", "relevant_concepts", "routed", "sight", "sight_once", "stored_ids"]
