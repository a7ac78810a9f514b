-- formerly: 007_fts_pruned
-- 012: full-text search scores only the candidates that can reach the top (PostgreSQL).
--
-- BM25 (`fts_bm25`) reads each candidate's query terms out of its tsvector
-- (setweight + ts_filter + unnest): a search costs in proportion to every concept holding
-- any query term. Most of those hold a term once, in the body (its only position is 8001),
-- where the term's weighted frequency is the body's weight alone and its share of the score
-- has a ceiling. So:
--
-- * `tsv_strong` keeps the lexemes of `tsv` that are not of that kind (in the name or
--   description, or more than once), without positions, in a GIN index of its own. It is
--   computed from `tsv` (a generated column): the terms the store writes are unchanged.
-- * `fts_bm25_pruned` scores first the concepts holding some query term strongly: the
--   window-th best of those scores is a floor of the true window's. A concept holding every
--   query term weakly or not at all scores at most the sum, over the terms it holds, of
--   idf x (k1 + 1) x wc / (wc + k1 (1 - b + b dlmin / avgdl)), dlmin the agent's shortest
--   concept. The terms with the highest such ceilings are searched in full until the other
--   terms' ceilings sum below the floor; every concept still left out then scores strictly
--   below the window, so the window is exactly the one scoring every candidate gives.

-- The lexemes of `doc` other than those whose only position is 8001, without positions.
CREATE FUNCTION fts_strong(doc tsvector) RETURNS tsvector LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT strip(ts_delete(doc, ARRAY(
        SELECT u.lexeme FROM unnest(doc) AS u(lexeme, positions, weights)
         WHERE u.positions = '{8001}'::smallint[])))
$$;

ALTER TABLE concepts ADD COLUMN tsv_strong tsvector GENERATED ALWAYS AS (fts_strong(tsv)) STORED;
CREATE INDEX concepts_tsv_strong ON concepts USING gin (tsv_strong);
-- The agent's shortest concept (the ceiling of a weak term's score), in one index probe.
CREATE INDEX concepts_agent_doc_len ON concepts (agent, doc_len);

-- BM25 (`insika_knowledge.store.postgres.fts`): SQLite's bm25() (k1 = 1.2, b = 0.75) with the
-- agent's own statistics, every query term counted, of the candidates whose `tsv` matches
-- `p_match` or whose `tsv_strong` matches `p_strong`, less those whose `tsv_strong` matches
-- `p_skip` (a NULL query matches nothing); `p_idfs` in `p_terms`' order. A term's weighted
-- frequency sums, over its positions, the weight of the field the position lies in
-- (positions 1-4000 the name, 4001-8000 the description, 8001- the body). Stored positions
-- carry no weight label: setweight + ts_filter keep only the query's terms of a
-- candidate's tsvector before it is unnested. Returns the `window_size` best (id, score),
-- best first, ties by id. Each concept's terms are summed
-- in the order they are read (lexeme order) when the rows are grouped by hashing: callers
-- plan it with enable_sort off (a sort by id would reorder them, and the float sum with
-- them), so every path gives the same floats; and with jit off (the cost of a disabled sort
-- would make every search compile its plan).
CREATE FUNCTION fts_score(p_agent text, p_terms text[], p_idfs float8[], p_match tsquery,
                          p_strong tsquery, p_skip tsquery, wa float8, wb float8, wc float8,
                          avgdl float8, window_size integer)
RETURNS TABLE (id bigint, score float8) LANGUAGE sql STABLE ROWS 32 AS $$
    SELECT c.id,
           sum(p_idfs[array_position(p_terms, u.lexeme)] * f.freq * 2.2
               / (f.freq + 1.2 * (0.25 + 0.75 * coalesce(c.doc_len, 0) / avgdl)))
      FROM concepts c
      CROSS JOIN LATERAL unnest(ts_filter(setweight(c.tsv, 'A', p_terms), '{a}'))
                 AS u(lexeme, positions, weights)
      CROSS JOIN LATERAL (
          SELECT wa * width_bucket(4000::smallint, u.positions)
                 + wb * (width_bucket(8000::smallint, u.positions) - width_bucket(4000::smallint, u.positions))
                 + wc * (cardinality(u.positions) - width_bucket(8000::smallint, u.positions)) AS freq
      ) f
     WHERE c.agent = p_agent AND (c.tsv @@ p_match OR c.tsv_strong @@ p_strong)
       AND (c.tsv_strong @@ p_skip) IS NOT TRUE
     GROUP BY c.id
     ORDER BY 2 DESC, c.id
     LIMIT window_size
$$;

-- The agent's N and average length, and each term's idf in `p_terms`' order (an idf at or
-- below 0 counts as 1e-6; a term no concept holds never matches); no row for an agent
-- without concepts.
CREATE FUNCTION fts_stats(p_agent text, p_terms text[])
RETURNS TABLE (n float8, avgdl float8, idfs float8[]) LANGUAGE sql STABLE ROWS 1 AS $$
    SELECT g.documents::float8, greatest(g.tokens::float8 / greatest(g.documents, 1), 1e-9),
           (SELECT array_agg(greatest(ln((g.documents::float8 - coalesce(t.docs, 0) + 0.5)
                                         / (coalesce(t.docs, 0) + 0.5)), 1e-6) ORDER BY w.i)
              FROM unnest(p_terms) WITH ORDINALITY AS w(term, i)
              LEFT JOIN concept_terms t ON t.agent = p_agent AND t.term = w.term)
      FROM generations g WHERE g.agent = p_agent
$$;

-- BM25 of every candidate the GIN index finds for `p_query`: the `window_size` best (id,
-- score), best first. The GIN index is always used: a sequential scan evaluates @@ on every
-- row, which the planner underestimates. (Replaces the one a schema migrated before this step had.)
CREATE OR REPLACE FUNCTION fts_bm25(p_agent text, p_terms text[], p_query tsquery,
                                    wa float8, wb float8, wc float8, window_size integer)
RETURNS TABLE (id bigint, score float8) LANGUAGE plpgsql STABLE ROWS 32
SET search_path FROM CURRENT SET enable_seqscan = off SET enable_sort = off SET jit = off AS $$
DECLARE
    s record;
BEGIN
    SELECT * INTO s FROM fts_stats(p_agent, p_terms);
    IF s.n IS NOT NULL THEN
        RETURN QUERY SELECT * FROM fts_score(p_agent, p_terms, s.idfs, p_query, NULL, NULL,
                                             wa, wb, wc, s.avgdl, window_size);
    END IF;
END $$;

-- The `window_size` best (id, score) for the analysed `p_terms` (`p_lexemes`: each quoted as
-- a tsquery lexeme, same order), best first: what `fts_bm25` returns, without scoring the
-- concepts that cannot reach the window (see the top of this file). The GIN indexes are
-- always used: a sequential scan evaluates @@ on every row.
CREATE FUNCTION fts_bm25_pruned(p_agent text, p_terms text[], p_lexemes text[],
                                wa float8, wb float8, wc float8, window_size integer)
RETURNS TABLE (id bigint, score float8) LANGUAGE plpgsql STABLE ROWS 32
SET search_path FROM CURRENT SET enable_seqscan = off SET enable_sort = off SET jit = off AS $$
DECLARE
    s record;
    dlmin float8;
    caps float8[];              -- per term: the most a weak occurrence adds to a score
    rest float8;                -- the ceilings of the terms not searched in full
    full_terms boolean[];       -- per term: searched in full (every concept holding it)
    ids bigint[];
    scores float8[];
    pick integer;
    everything tsquery := array_to_string(p_lexemes, ' | ')::tsquery;
    weak tsquery;               -- the terms searched in full (NULL: none)
BEGIN
    SELECT * INTO s FROM fts_stats(p_agent, p_terms);
    IF s.n IS NULL OR window_size < 1 THEN
        RETURN;
    END IF;
    IF least(wa, wb, wc) >= 0 THEN
        SELECT array_agg(f.score ORDER BY f.score DESC, f.id), array_agg(f.id ORDER BY f.score DESC, f.id)
          INTO scores, ids
          FROM fts_score(p_agent, p_terms, s.idfs, NULL, everything, NULL, wa, wb, wc, s.avgdl, window_size) f;
    END IF;
    IF coalesce(cardinality(ids), 0) < window_size THEN  -- no floor (or no ceiling): score every candidate
        RETURN QUERY SELECT * FROM fts_score(p_agent, p_terms, s.idfs, everything, NULL, NULL,
                                             wa, wb, wc, s.avgdl, window_size);
        RETURN;
    END IF;
    -- (plain PL/pgSQL below, no statement: each would cost more than the arithmetic)
    SELECT min(c.doc_len) INTO dlmin FROM concepts c WHERE c.agent = p_agent;
    rest := 0;
    FOR i IN 1 .. cardinality(p_terms) LOOP
        caps[i] := CASE WHEN wc = 0 THEN 0 ELSE
                   s.idfs[i] * 2.2 * wc / (wc + 1.2 * (0.25 + 0.75 * coalesce(dlmin, 0) / s.avgdl)) END;
        rest := rest + caps[i];
        full_terms[i] := false;
    END LOOP;
    WHILE rest * (1 + 1e-9) >= scores[window_size] LOOP
        pick := NULL;  -- the highest ceiling not searched in full yet (first on ties)
        FOR i IN 1 .. cardinality(p_terms) LOOP
            IF NOT full_terms[i] AND (pick IS NULL OR caps[i] > caps[pick]) THEN
                pick := i;
            END IF;
        END LOOP;
        EXIT WHEN pick IS NULL;
        full_terms[pick] := true;
        rest := rest - caps[pick];
        weak := CASE WHEN weak IS NULL THEN p_lexemes[pick]::tsquery
                     ELSE weak || p_lexemes[pick]::tsquery END;
    END LOOP;
    IF weak IS NULL THEN  -- the strong candidates hold the whole window
        RETURN QUERY SELECT w.id, w.score FROM unnest(ids, scores) AS w(id, score);
        RETURN;
    END IF;
    -- beside the strong candidates: those holding a fully searched term, weakly only
    RETURN QUERY SELECT w.id, w.score FROM (
        SELECT * FROM unnest(ids, scores) AS f(id, score)
        UNION ALL
        SELECT * FROM fts_score(p_agent, p_terms, s.idfs, weak, NULL, everything, wa, wb, wc, s.avgdl, window_size)
    ) w ORDER BY w.score DESC, w.id LIMIT window_size;
END $$;
