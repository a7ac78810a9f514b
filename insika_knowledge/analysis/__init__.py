"""The one analyser: every word split, case and accent fold, stem and number parse.

A leaf package (it imports nothing else from `insika_knowledge`): the indexes, the FTS5
tokenizer, retrieval, consolidation and the concept codec all analyse text here, so they
agree on what a term is.

- `analysis.text`: folding, word splitting, stop words, stemming, index terms, the
  analysis version (`ANALYSIS_VERSION`) an index records.
- `analysis.numbers`: numbers, amounts with their units, and the numeric-term format
  (range blocks and prefixes), with `is_numeric_term`.
- `analysis.synonyms`: the support-domain synonym groups and phrases.
"""
