"""Rule-shaped claims: text that states or changes a rule of the business (EN and PT).

`rule_markers` names what makes a claim a rule: its type (``policy``, ``procedure``), a
price or amount, a deadline, an entitlement (something a customer gets: free, a
discount, points, a warranty), opening hours, or the shape of an instruction to the
agent or the business ("from now on", "always", "you must", "ignore", "a partir de
agora", "sempre", "deve"), whatever the claim's type: a rule typed ``objection`` is
still a rule.

`is_report` tells a customer's report of their own experience (what customers say,
feel, find, ask for, complain about) from a claim about how the business works: a
report is framed as one (type ``objection``, or customers as its subject) and carries
no rule but a price it complains about ("the R$ 25 fee was too high for me" is a
complaint, not a price list; "customers say returns are free for 90 days" is a rule).

Patterns run on folded text (lower case, accents removed), so "grátis" and "gratis",
"Prazo" and "prazo" are one.
"""

from __future__ import annotations

import re
from typing import Final

from insika_knowledge.analysis.text import fold

RULE_TYPES: Final = frozenset({"policy", "procedure"})

_PRICE: Final = re.compile(
    r"(?:r\$|us\$|\$|€|£)\s*\d|\d\s*%|\d\s*(?:reais|real|dollars?|dolares?|euros?|cents?|centavos?)\b"
    r"|\b(?:price|prices|cost|costs|fee|fees|charge|charged|preco|precos|custa|custam|custo|taxa|tarifa|valor)\b"
)
_DEADLINE: Final = re.compile(
    r"\b(?:within|up to|until|before|after|no later than|deadline|expires?|expiry|valid for|valid until"
    r"|em ate|ate|dentro de|prazo|vence|vencimento|validade|expira)\b[^.;\n]{0,30}?"
    r"\b(?:\d+|one|two|three|seven|ten|thirty|um|uma|dois|duas|tres|sete|dez|trinta)?\s*"
    r"(?:minutes?|hours?|days?|weeks?|months?|years?|minutos?|horas?|dias?|semanas?|mes|meses|anos?)\b"
)
_ENTITLEMENT: Final = re.compile(
    r"\b(?:free|gratis|gratuit[oa]s?|discount|discounts|desconto|descontos|off|refund|refunds|refundable"
    r"|reembolso|estorno|cashback|gift|gifts|brinde|brindes|bonus|voucher|cupom|coupon|upgrade|waived?"
    r"|entitled|eligible|comes with|come with|gets?|receives?|ganha|ganham|recebe|recebem|tem direito"
    r"|isento|isenta|isencao|compensation|compensacao|points|pontos|cashback|loyalty|fidelidade"
    r"|warranty|guarantee|garantia|includes?|included|inclui|incluido|incluida)\b"
)
_SCHEDULE: Final = re.compile(
    r"\b(?:opens?|closes?|closed|opening hours|business hours|check-?(?:in|out)\b[^.;\n]{0,20}\d|24 ?h(?:ours)?"
    r"|abre|abrem|fecha|fecham|fechado|funciona|funcionam|horario|expediente)\b"
    r"|\b\d{1,2}(?::\d\d)?\s*(?:am|pm|h)\b"
)
_INSTRUCTION: Final = re.compile(
    r"\b(?:from now on|starting (?:today|now)|effective (?:today|immediately)|always|never|must|should"
    r"|you (?:must|should|have to|need to|are required)|agents? (?:must|should)|make sure|remember to"
    r"|ignore (?:the|all|previous|your)|disregard|override|new (?:rule|policy)|the manager says|management says"
    r"|note for (?:your|the) records|for your records|update your (?:records|policy|system)"
    r"|a partir de agora|a partir de hoje|sempre|nunca|deve|devem|precisa|precisam|tem que|lembre(?:-se)? de"
    r"|ignore|desconsidere|nova regra|nova politica|o gerente (?:disse|falou|mandou)|a gerencia"
    r"|anote|registre|atualize (?:o|a|seu|sua)|para (?:o )?seu registro)\b"
)

_MARKERS: Final = (
    ("price", _PRICE), ("deadline", _DEADLINE), ("entitlement", _ENTITLEMENT), ("schedule", _SCHEDULE),
)


def rule_markers(text: str, concept_type: str) -> list[str]:
    """What makes `text` (of `concept_type`) a rule of the business; empty when nothing does.

    Returns:
        Marker names in a fixed order, a subset of ``type``, ``price``, ``deadline``,
        ``entitlement``, ``schedule``, ``instruction``.
    """
    folded = fold(text)
    found: list[str] = []
    if concept_type in RULE_TYPES:
        found.append("type")
    found += [name for name, pattern in _MARKERS if pattern.search(folded)]
    if _INSTRUCTION.search(folded):
        found.append("instruction")
    return found


#: What a customer is given for nothing or for less (folded): narrower than `_ENTITLEMENT`,
#: whose "gift", "refund", "includes" also name services and procedures ("gift wrapping
#: costs R$ 8", "refunds go to the card").
_BENEFIT: Final = re.compile(
    r"\b(?:free|gratis|gratuit[oa]s?|discount|discounts|desconto|descontos|cashback|bonus|voucher|vouchers"
    r"|cupom|cupons|coupon|coupons|upgrade|upgrades|waived?|entitled|isento|isenta|isencao|compensation"
    r"|compensacao|points|pontos|tem direito|has the right|complimentary|cortesia|de graca)\b"
)


def offers(text: str) -> bool:
    """True when `text` gives a customer something for nothing or for less (`_BENEFIT`)."""
    return _BENEFIT.search(fold(text)) is not None


def grants(text: str) -> bool:
    """True when `text` says something a customer gets (free, a discount, a refund...).

    The words that make a claim an ``entitlement`` (`rule_markers`).
    """
    return _ENTITLEMENT.search(fold(text)) is not None


#: A claim framed as what customers report, say, feel or ask (folded).
_REPORTED: Final = re.compile(
    r"^\s*(?:(?:a|one|some|many|most|several|the)\s+)?(?:customers?|clients?|buyers?|passengers?|guests?|users?"
    r"|clientes?|compradores?|passageiros?|hospedes?|usuarios?)\b"
    r"|\b(?:customers?|clients?|passengers?|users?|clientes?|passageiros?|usuarios?)\s+(?:\w+\s+)?"
    r"(?:report|reported|complain|complained|say|said|feel|felt|find|found|ask|asked|prefer|mention"
    r"|relatam|relatou|reclamam|reclamou|dizem|disse|acham|achou|pedem|pediu|perguntam|preferem|comentam)\b"
)
#: Words of a complaint about a price or an experience (folded).
_COMPLAINT: Final = re.compile(
    r"\b(?:expensive|too (?:high|much|slow|long)|overpriced|slow|late|delay(?:ed)?|rude|broken|damaged|wrong"
    r"|confusing|crash\w*|logg\w* (?:them |me )?out|louder|noisy|dirty|frustrat\w*|disappoint\w*|unhappy"
    r"|cara|caro|caros|caras|demor\w*|atras\w*|quebr\w*|errad\w*|trav\w*|amassad\w*|confus\w*|lent[oa]s?"
    r"|sujo|barulh\w*|reclam\w*|insatisf\w*|absurd\w*)\b"
)
#: What a customer is given: an entitlement no complaint explains away (folded).
_GIVEN: Final = re.compile(
    r"\d\s*%|\b(?:free|gratis|gratuit[oa]s?|discounts?|descontos?|off|gets?|receives?|ganham?|recebem?"
    r"|tem direito|entitled|eligible|cashback|waived?|isent[oa]s?|isencao|upgrade[sd]?|refundable)\b"
)


def is_report(text: str, concept_type: str) -> bool:
    """True when `text` reports customers' own experience rather than a rule (module doc)."""
    folded = fold(text)
    if concept_type in RULE_TYPES or not (concept_type == "objection" or _REPORTED.search(folded)):
        return False
    markers = set(rule_markers(text, concept_type))
    if markers & {"deadline", "schedule", "instruction"} or _GIVEN.search(folded):
        return False
    return "price" not in markers or _COMPLAINT.search(folded) is not None
