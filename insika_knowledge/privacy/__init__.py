"""Privacy: the one fail-closed path that keeps personal data and credentials out of storage.

- `insika_knowledge.privacy.redact`: personal data in conversation text (e-mails, phone
  numbers, CPF/CNPJ, payment cards, IBANs...) replaced by typed placeholders;
- `insika_knowledge.privacy.credentials`: secrets in tool calls and their output (API keys,
  tokens, passwords, connection strings) masked.

Extraction, consolidation (the merge model's text) and procedures all redact through here.
"""

from insika_knowledge.privacy.credentials import SECRET, is_secret_key, scrub
from insika_knowledge.privacy.redact import PLACEHOLDERS, Redaction, redact

__all__ = ["PLACEHOLDERS", "SECRET", "Redaction", "is_secret_key", "redact", "scrub"]
