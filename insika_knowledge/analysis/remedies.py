"""The form a refund takes: store credit, or money back to how the customer paid.

"Refunds are issued to the original payment card" and "the refund is issued as store credit"
share almost every word, and a customer who was told one and stored the other has been
told another rule. `refund_forms` reads which of the two forms a text names; `other_form`
says when two texts each name one form only, and not the same one.
"""

from __future__ import annotations

import re
from typing import Final

from insika_knowledge.analysis.text import fold

__all__ = ["CREDIT", "ORIGINAL", "other_form", "other_remedy", "refund_forms"]

#: Store credit, a voucher, a gift card, an exchange voucher ("vale-troca").
CREDIT: Final = "credit"
#: Money back the way it came: the original payment method or card, cash ("estorno" names no
#: form by itself: "o estorno é feito em crédito na loja").
ORIGINAL: Final = "original"

_FORMS: Final = (
    (CREDIT, re.compile(
        r"\b(?:store credits?|credits? (?:on|to|in) (?:your|the|their) (?:\w+ )?account|in credit"
        r"|credito(?:s)? (?:na|da|em) loja|credito(?:s)? na (?:sua |tua )?conta|em credito"
        r"|vales?[- ](?:troca|compras?|presente)"
        r"|gift cards?|cartao[- ]presente|vouchers?|cupo(?:m|ns) de credito"
        r"|credito(?: integral| total)? (?:para|na) (?:a |sua )?proxima compra"
        r"|credits? (?:toward|towards|for|on) (?:your |a |the )?next (?:purchase|order|booking|stay))\b")),
    (ORIGINAL, re.compile(
        r"\b(?:original (?:(?:credit |debit )?card|payment|method|form)|same (?:payment|card|method)"
        r"|(?:back )?to (?:your|the) (?:credit )?card"
        r"|(?:forma|meio|metodo) de pagamento original|mesm[oa] (?:cartao|forma|meio)|no (?:seu )?cartao"
        r"|(?:para|pro|ao) (?:o )?cartao(?: de (?:credito|debito))?(?: original| usado)?"
        r"|na (?:sua )?fatura|in cash|cash refunds?|em dinheiro|em especie)\b")),
)


def refund_forms(text: str) -> frozenset[str]:
    """The refund forms `text` names (`CREDIT`, `ORIGINAL`); empty when it names none."""
    folded = fold(text)
    return frozenset(form for form, pattern in _FORMS if pattern.search(folded))


def other_form(one: str, other: str) -> bool:
    """True when `one` and `other` both speak of a refund (`_REFUND`) and each names one
    refund form, not the same one ("issued to the original payment card" / "issued as store
    credit"); a text naming both ("to your card, or store credit if you prefer") or none says
    nothing against the other.
    """
    if not (_REFUND.search(fold(one)) and _REFUND.search(fold(other))):
        return False
    mine, theirs = refund_forms(one), refund_forms(other)
    return len(mine) == 1 and len(theirs) == 1 and mine != theirs


def other_remedy(one: str, other: str) -> bool:
    """True when one text gives money back and the other store credit for one remedy: each
    names one form, a refund that names none reading as money ("are refunded in full" /
    "earn full credit toward the next purchase"; "a partial refund" / "a free night
    voucher"), and at least one speaks of a refund (`_REFUND`). For two versions of one
    rule (`consolidate.merge.versions`); a business sentence that says "refund" alone is
    not read against a claim of store credit (`other_form`).
    """
    mine, theirs = _remedy(one), _remedy(other)
    return len(mine) == 1 and len(theirs) == 1 and mine != theirs \
        and bool(_REFUND.search(fold(one)) or _REFUND.search(fold(other)))


def _remedy(text: str) -> frozenset[str]:
    """`refund_forms` of `text`, or `ORIGINAL` for a refund that names no form."""
    forms = refund_forms(text)
    return forms or (frozenset({ORIGINAL}) if _REFUND.search(fold(text)) else frozenset())


#: A word of a refund (folded): "refund", "reimbursed", "reembolso", "estorno", "money back", "dinheiro de volta".
_REFUND: Final = re.compile(
    r"\b(?:refund\w*|reimburs\w*|reembols\w*|estorn\w*|money back|dinheiro de volta"
    r"|devolv\w* (?:o (?:dinheiro|valor)|em (?:dinheiro|especie|credito|vale)))\b")
