-- 013: BM25's idf is positive on PostgreSQL as everywhere: ln(1 + (N - df + 0.5) / (df + 0.5))
-- (Lucene's), where SQLite's bm25() formula gave a term held by half or more of an agent's
-- concepts an idf of about 0 (1e-6): in a small store the words that matter ("entrega",
-- "prazo") were held by half the concepts and counted for nothing. `fts_bm25` and
-- `fts_bm25_pruned` read their idfs here, so both follow.

CREATE OR REPLACE FUNCTION fts_stats(p_agent text, p_terms text[])
RETURNS TABLE (n float8, avgdl float8, idfs float8[]) LANGUAGE sql STABLE ROWS 1 AS $$
    SELECT g.documents::float8, greatest(g.tokens::float8 / greatest(g.documents, 1), 1e-9),
           (SELECT array_agg(ln(1 + (g.documents::float8 - coalesce(t.docs, 0) + 0.5)
                                    / (coalesce(t.docs, 0) + 0.5)) ORDER BY w.i)
              FROM unnest(p_terms) WITH ORDINALITY AS w(term, i)
              LEFT JOIN concept_terms t ON t.agent = p_agent AND t.term = w.term)
      FROM generations g WHERE g.agent = p_agent
$$;
