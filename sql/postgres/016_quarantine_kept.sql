-- 016: a deleted concept keeps its quarantine row, so restoring it holds it again (a
-- delete and a restore released a customer-only rule before); a new concept written under
-- a deleted name clears the row (`ConceptWrites.put`: reasons `extract` and `edit`). The
-- delete trigger's function, as 001 wrote it, without its quarantine delete.

CREATE OR REPLACE FUNCTION concepts_after_delete() RETURNS trigger LANGUAGE plpgsql
SET search_path FROM CURRENT AS $$
BEGIN
    PERFORM concepts_count(array_agg(agent), array_agg(-1::bigint), array_agg(-coalesce(doc_len, 0)::bigint))
       FROM removed HAVING count(*) > 0;
    WITH delta AS (
        SELECT r.agent, w.term, count(*) AS n FROM removed r, unnest(tsvector_to_array(r.tsv)) AS w(term)
         GROUP BY 1, 2 ORDER BY 1, 2
    )
    UPDATE concept_terms t SET docs = t.docs - delta.n FROM delta
     WHERE t.agent = delta.agent AND t.term = delta.term;
    RETURN NULL;
END $$;
