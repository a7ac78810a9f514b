"""A model whose extraction answer is given: a concept proposed by a tool or a person.

`GivenModel` lets such a proposal take the exact path of a model's answer through
`insika_knowledge.learn.learn_turn`: the same gates (`extract.candidates.screen`),
redaction, consolidation, ledger and events. Merges of a related repeat go to a real
model when there is one; without one the repeat counts as contradicting, as it does
for extraction.
"""

from __future__ import annotations

from typing import Any

from insika_knowledge.errors import ModelFailure, wrong_type
from insika_knowledge.extract.model import ConceptModel, ExtractionRequest, MergeAnswer, MergeRequest


class GivenModel:
    """A `ConceptModel` that answers every extraction with `items`.

    Args:
        items: the candidates to answer with (each a dict of name, description, type, body;
            unvalidated: the gates judge them).
        merger: the model asked to merge a related repeat; None = no merge.

    Raises:
        ArgumentTypeError: `items` is not a list or tuple (one candidate's dict given alone
            would be read as its keys).
    """

    #: It answers without reading the turn: a turn with no text is still asked (`learn_turn`).
    reads_turn = False

    def __init__(self, items: list[Any], merger: ConceptModel | None = None):
        if not isinstance(items, (list, tuple)):
            raise wrong_type("GivenModel()", "items", items, "a list of candidates (dicts)")
        self.items = items
        self.merger = merger

    @property
    def merges(self) -> bool:
        """True when a merger was given: without one, `learn_turn` asks no merge model (a
        different repeat is a conflict "no merge model could be asked").
        """
        return self.merger is not None

    def propose(self, request: ExtractionRequest) -> list[Any]:
        """The given candidates, as the model's answer."""
        return list(self.items)

    def merge(self, request: MergeRequest) -> MergeAnswer:
        """The merger's verdict.

        Raises:
            ModelFailure: there is no merger (``model_empty``; the caller then counts
                the repeat as contradicting), or the merger failed.
        """
        if self.merger is None:
            raise ModelFailure("model_empty", "no model to merge with")
        return self.merger.merge(request)
