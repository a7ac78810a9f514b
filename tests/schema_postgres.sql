CREATE TABLE _insika_migrations (
    name text NOT NULL,
    applied_at text NOT NULL,
    CONSTRAINT _insika_migrations_pkey PRIMARY KEY (name)
);
CREATE TABLE aliases (
    agent text COLLATE "C" NOT NULL,
    alias text COLLATE "C" NOT NULL,
    name text COLLATE "C" NOT NULL,
    session_id text COLLATE "C" NOT NULL,
    turn_id text COLLATE "C" NOT NULL,
    created_at text COLLATE "C" NOT NULL,
    CONSTRAINT aliases_pkey PRIMARY KEY (agent, alias)
);
CREATE TABLE capture_sessions (
    session_id text COLLATE "C" NOT NULL,
    run integer NOT NULL,
    messages_seen integer NOT NULL,
    turns integer NOT NULL,
    task text NOT NULL,
    given text NOT NULL,
    tools text NOT NULL,
    procedure_id text,
    cursor_step integer NOT NULL,
    matched_steps integer NOT NULL,
    diverged_steps integer NOT NULL,
    tracked_upto integer NOT NULL,
    first_turn_at double precision NOT NULL,
    last_turn_at double precision NOT NULL,
    block text NOT NULL DEFAULT ''::text,
    anchor text NOT NULL DEFAULT ''::text,
    CONSTRAINT capture_sessions_pkey PRIMARY KEY (session_id)
);
CREATE TABLE capture_steps (
    session_id text COLLATE "C" NOT NULL,
    seq integer NOT NULL,
    step text NOT NULL,
    CONSTRAINT capture_steps_pkey PRIMARY KEY (session_id, seq)
);
CREATE TABLE concept_terms (
    agent text COLLATE "C" NOT NULL,
    term text COLLATE "C" NOT NULL,
    docs bigint NOT NULL,
    CONSTRAINT concept_terms_pkey PRIMARY KEY (agent, term)
);
CREATE TABLE concept_vectors (
    concept_id bigint NOT NULL,
    model text COLLATE "C" NOT NULL,
    agent text COLLATE "C" NOT NULL,
    version integer NOT NULL,
    digest text COLLATE "C" NOT NULL,
    seq bigint NOT NULL,
    vector bytea NOT NULL,
    CONSTRAINT concept_vectors_concept_id_fkey FOREIGN KEY (concept_id) REFERENCES concepts(id) ON DELETE CASCADE,
    CONSTRAINT concept_vectors_pkey PRIMARY KEY (concept_id, model)
);
CREATE TABLE concept_versions (
    id bigint NOT NULL GENERATED ALWAYS AS IDENTITY,
    agent text COLLATE "C" NOT NULL,
    name text COLLATE "C" NOT NULL,
    version integer NOT NULL,
    reason text COLLATE "C" NOT NULL,
    actor text COLLATE "C" NOT NULL,
    session_id text COLLATE "C",
    markdown text NOT NULL,
    created_at text COLLATE "C" NOT NULL,
    CONSTRAINT concept_versions_agent_name_version_key UNIQUE (agent, name, version),
    CONSTRAINT concept_versions_pkey PRIMARY KEY (id),
    CONSTRAINT concept_versions_reason_check CHECK ((reason = ANY (ARRAY['extract'::text, 'confirm'::text, 'merge'::text, 'conflict'::text, 'edit'::text, 'restore'::text, 'delete'::text, 'resolve'::text, 'approve'::text])))
);
CREATE TABLE concepts (
    id bigint NOT NULL GENERATED ALWAYS AS IDENTITY,
    agent text COLLATE "C" NOT NULL,
    name text COLLATE "C" NOT NULL,
    description text NOT NULL,
    type text COLLATE "C" NOT NULL,
    provenance text COLLATE "C" NOT NULL,
    confidence double precision NOT NULL,
    sources text NOT NULL,
    occurrences bigint NOT NULL,
    created_at text COLLATE "C" NOT NULL,
    updated_at text COLLATE "C" NOT NULL,
    status text COLLATE "C" NOT NULL,
    body text NOT NULL,
    version integer NOT NULL,
    tsv tsvector,
    doc_len integer,
    tsv_strong tsvector GENERATED ALWAYS AS (fts_strong(tsv)) STORED,
    CONSTRAINT concepts_agent_name_key UNIQUE (agent, name),
    CONSTRAINT concepts_confidence_check CHECK (((confidence >= (0)::double precision) AND (confidence <= (1)::double precision))),
    CONSTRAINT concepts_occurrences_check CHECK ((occurrences >= 0)),
    CONSTRAINT concepts_pkey PRIMARY KEY (id),
    CONSTRAINT concepts_provenance_check CHECK ((provenance = ANY (ARRAY['observed'::text, 'policy'::text]))),
    CONSTRAINT concepts_status_check CHECK ((status = ANY (ARRAY['ok'::text, 'conflict'::text]))),
    CONSTRAINT concepts_type_check CHECK ((type = ANY (ARRAY['fact'::text, 'entity'::text, 'procedure'::text, 'policy'::text, 'objection'::text])))
);
CREATE TABLE extractions (
    agent text COLLATE "C" NOT NULL,
    session_id text COLLATE "C" NOT NULL,
    turn_id text COLLATE "C" NOT NULL,
    outcome text COLLATE "C" NOT NULL,
    retryable integer NOT NULL,
    candidates integer NOT NULL,
    written integer NOT NULL,
    dropped text NOT NULL,
    detail text,
    attempted_at text COLLATE "C" NOT NULL,
    CONSTRAINT extractions_pkey PRIMARY KEY (agent, session_id, turn_id)
);
CREATE TABLE generations (
    agent text COLLATE "C" NOT NULL,
    generation bigint NOT NULL,
    documents bigint NOT NULL,
    tokens bigint NOT NULL,
    CONSTRAINT generations_pkey PRIMARY KEY (agent)
);
CREATE TABLE index_snapshots (
    agent text COLLATE "C" NOT NULL,
    kind text COLLATE "C" NOT NULL,
    data bytea NOT NULL,
    CONSTRAINT index_snapshots_pkey PRIMARY KEY (agent, kind)
);
CREATE TABLE merge_leases (
    agent text COLLATE "C" NOT NULL,
    name text COLLATE "C" NOT NULL,
    holder text COLLATE "C" NOT NULL,
    ticket integer NOT NULL,
    holding integer NOT NULL,
    expires_at double precision NOT NULL,
    CONSTRAINT merge_leases_holding_check CHECK ((holding = ANY (ARRAY[0, 1]))),
    CONSTRAINT merge_leases_pkey PRIMARY KEY (agent, name, holder)
);
CREATE TABLE meta (
    key text COLLATE "C" NOT NULL,
    value text NOT NULL,
    CONSTRAINT meta_pkey PRIMARY KEY (key)
);
CREATE TABLE outbox (
    id bigint NOT NULL GENERATED ALWAYS AS IDENTITY,
    agent text COLLATE "C" NOT NULL,
    session_id text COLLATE "C" NOT NULL,
    turn_id text COLLATE "C" NOT NULL,
    knowledge text NOT NULL,
    messages text NOT NULL,
    enqueued_at text COLLATE "C" NOT NULL,
    attempts integer NOT NULL DEFAULT 0,
    claimed_by text COLLATE "C",
    claimed_until double precision,
    not_before double precision NOT NULL DEFAULT 0,
    CONSTRAINT outbox_agent_session_id_turn_id_key UNIQUE (agent, session_id, turn_id),
    CONSTRAINT outbox_attempts_check CHECK ((attempts >= 0)),
    CONSTRAINT outbox_pkey PRIMARY KEY (id)
);
CREATE TABLE possible_duplicates (
    agent text COLLATE "C" NOT NULL,
    name text COLLATE "C" NOT NULL,
    duplicate_of text COLLATE "C" NOT NULL,
    session_id text COLLATE "C" NOT NULL,
    turn_id text COLLATE "C" NOT NULL,
    description text NOT NULL,
    type text NOT NULL,
    body text NOT NULL,
    similarity double precision NOT NULL,
    status text COLLATE "C" NOT NULL DEFAULT 'open'::text,
    seen_at text COLLATE "C" NOT NULL,
    why text NOT NULL DEFAULT ''::text,
    CONSTRAINT possible_duplicates_pkey PRIMARY KEY (agent, name, session_id, turn_id),
    CONSTRAINT possible_duplicates_similarity_check CHECK (((similarity >= (0)::double precision) AND (similarity <= (1)::double precision))),
    CONSTRAINT possible_duplicates_status_check CHECK ((status = ANY (ARRAY['open'::text, 'resolved'::text])))
);
CREATE TABLE procedure_generation (
    id integer NOT NULL,
    generation bigint NOT NULL,
    CONSTRAINT procedure_generation_id_check CHECK ((id = 1)),
    CONSTRAINT procedure_generation_pkey PRIMARY KEY (id)
);
CREATE TABLE procedure_population (
    term text COLLATE "C" NOT NULL,
    runs integer NOT NULL,
    generation bigint NOT NULL,
    CONSTRAINT procedure_population_pkey PRIMARY KEY (term),
    CONSTRAINT procedure_population_runs_check CHECK ((runs >= 0))
);
CREATE TABLE procedure_runs (
    procedure_id text COLLATE "C" NOT NULL,
    run_id text COLLATE "C" NOT NULL,
    verdict text NOT NULL,
    recorded_at text NOT NULL,
    CONSTRAINT procedure_runs_pkey PRIMARY KEY (procedure_id, run_id),
    CONSTRAINT procedure_runs_verdict_check CHECK ((verdict = ANY (ARRAY['success'::text, 'failure'::text])))
);
CREATE TABLE procedure_stages (
    id bigint NOT NULL GENERATED ALWAYS AS IDENTITY,
    recorded_at text NOT NULL,
    session_id text,
    mode text NOT NULL,
    action text COLLATE "C" NOT NULL,
    reason text,
    injected integer NOT NULL,
    injected_tokens integer NOT NULL,
    would_inject_tokens integer NOT NULL,
    block_tokens integer NOT NULL,
    max_injection_tokens integer NOT NULL,
    matcher text,
    match_score double precision,
    procedure_id text,
    path_confidence double precision,
    composed_hops integer,
    cursor_step integer,
    steps_remaining integer,
    adherence_delta integer,
    divergence integer,
    matched_steps integer NOT NULL,
    diverged_steps integer NOT NULL,
    canary_bucket text,
    canary_percent integer,
    canary_keyed_by text,
    session_scoped integer NOT NULL,
    captured_turns integer NOT NULL,
    duration_ms double precision NOT NULL,
    skill_attrs text NOT NULL,
    notes text NOT NULL DEFAULT '[]'::text,
    CONSTRAINT procedure_stages_pkey PRIMARY KEY (id)
);
CREATE TABLE procedure_task_ops (
    operation text COLLATE "C" NOT NULL,
    task_id text COLLATE "C" NOT NULL,
    CONSTRAINT procedure_task_ops_pkey PRIMARY KEY (operation, task_id)
);
CREATE TABLE procedure_tasks (
    id text COLLATE "C" NOT NULL,
    record text NOT NULL,
    generation bigint NOT NULL,
    created_at text NOT NULL,
    updated_at text NOT NULL,
    CONSTRAINT procedure_tasks_pkey PRIMARY KEY (id)
);
CREATE TABLE procedure_term_key (
    id integer NOT NULL,
    key text NOT NULL,
    CONSTRAINT procedure_term_key_id_check CHECK ((id = 1)),
    CONSTRAINT procedure_term_key_pkey PRIMARY KEY (id)
);
CREATE TABLE procedure_term_notes (
    scope text COLLATE "C" NOT NULL,
    term text COLLATE "C" NOT NULL,
    session text COLLATE "C" NOT NULL,
    runs integer NOT NULL,
    CONSTRAINT procedure_term_notes_pkey PRIMARY KEY (scope, term),
    CONSTRAINT procedure_term_notes_runs_check CHECK ((runs >= 1))
);
CREATE TABLE procedures (
    id text COLLATE "C" NOT NULL,
    kind text NOT NULL,
    steps text NOT NULL,
    tools text NOT NULL,
    triggers text NOT NULL,
    trigger_runs integer NOT NULL,
    successes integer NOT NULL,
    failures integer NOT NULL,
    confidence double precision NOT NULL,
    sample_task text NOT NULL,
    generation bigint NOT NULL,
    created_at text NOT NULL,
    updated_at text NOT NULL,
    scope text NOT NULL DEFAULT 'task'::text,
    CONSTRAINT procedures_confidence_check CHECK (((confidence >= (0)::double precision) AND (confidence <= (1)::double precision))),
    CONSTRAINT procedures_failures_check CHECK ((failures >= 0)),
    CONSTRAINT procedures_kind_check CHECK ((kind = ANY (ARRAY['tool'::text, 'shell'::text]))),
    CONSTRAINT procedures_pkey PRIMARY KEY (id),
    CONSTRAINT procedures_scope_check CHECK ((scope = ANY (ARRAY['task'::text, 'part'::text, 'operation'::text]))),
    CONSTRAINT procedures_successes_check CHECK ((successes >= 0)),
    CONSTRAINT procedures_trigger_runs_check CHECK ((trigger_runs >= 0))
);
CREATE TABLE quarantine (
    agent text COLLATE "C" NOT NULL,
    name text COLLATE "C" NOT NULL,
    session_id text NOT NULL,
    supported_by text NOT NULL,
    markers text NOT NULL,
    since text NOT NULL,
    CONSTRAINT quarantine_pkey PRIMARY KEY (agent, name)
);
CREATE TABLE sightings (
    agent text COLLATE "C" NOT NULL,
    name text COLLATE "C" NOT NULL,
    session_id text COLLATE "C" NOT NULL,
    turn_id text COLLATE "C" NOT NULL,
    outcome text COLLATE "C" NOT NULL,
    seen_at text COLLATE "C" NOT NULL,
    CONSTRAINT sightings_outcome_check CHECK ((outcome = ANY (ARRAY['extract'::text, 'confirm'::text, 'merge'::text, 'conflict'::text]))),
    CONSTRAINT sightings_pkey PRIMARY KEY (agent, name, session_id, turn_id)
);
CREATE INDEX aliases_by_name ON <tenant>.aliases USING btree (agent, name);
CREATE INDEX capture_sessions_idle ON <tenant>.capture_sessions USING btree (last_turn_at);
CREATE INDEX concept_vectors_seq ON <tenant>.concept_vectors USING btree (model, agent, seq);
CREATE INDEX concept_versions_agent_id ON <tenant>.concept_versions USING btree (agent, id);
CREATE INDEX concepts_agent_doc_len ON <tenant>.concepts USING btree (agent, doc_len);
CREATE INDEX concepts_agent_status ON <tenant>.concepts USING btree (agent, status);
CREATE INDEX concepts_tsv ON <tenant>.concepts USING gin (tsv);
CREATE INDEX concepts_tsv_strong ON <tenant>.concepts USING gin (tsv_strong);
CREATE INDEX outbox_claimed_by ON <tenant>.outbox USING btree (claimed_by);
CREATE INDEX possible_duplicates_of ON <tenant>.possible_duplicates USING btree (agent, duplicate_of, status);
CREATE INDEX procedure_population_generation ON <tenant>.procedure_population USING btree (generation);
CREATE INDEX procedure_stages_session ON <tenant>.procedure_stages USING btree (session_id);
CREATE INDEX procedure_tasks_generation ON <tenant>.procedure_tasks USING btree (generation);
CREATE INDEX procedures_confidence ON <tenant>.procedures USING btree (confidence);
CREATE INDEX procedures_generation ON <tenant>.procedures USING btree (generation);
CREATE OR REPLACE FUNCTION <tenant>.concepts_after_delete()
 RETURNS trigger
 LANGUAGE plpgsql
 SET search_path TO '<tenant>'
AS $function$
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
END $function$;
CREATE OR REPLACE FUNCTION <tenant>.concepts_after_insert()
 RETURNS trigger
 LANGUAGE plpgsql
 SET search_path TO '<tenant>'
AS $function$
BEGIN
    PERFORM concepts_count(array_agg(agent), array_agg(1::bigint), array_agg(coalesce(doc_len, 0)::bigint))
       FROM added HAVING count(*) > 0;
    INSERT INTO concept_terms AS t (agent, term, docs)
        SELECT a.agent, w.term, count(*) FROM added a, unnest(tsvector_to_array(a.tsv)) AS w(term)
         GROUP BY 1, 2 ORDER BY 1, 2
    ON CONFLICT (agent, term) DO UPDATE SET docs = t.docs + EXCLUDED.docs;
    RETURN NULL;
END $function$;
CREATE OR REPLACE FUNCTION <tenant>.concepts_after_update()
 RETURNS trigger
 LANGUAGE plpgsql
 SET search_path TO '<tenant>'
AS $function$
BEGIN
    PERFORM concepts_count(array_agg(d.agent), array_agg(d.docs), array_agg(d.tokens)) FROM (
        SELECT agent, -1::bigint AS docs, -coalesce(doc_len, 0)::bigint AS tokens FROM old_rows
        UNION ALL
        SELECT agent, 1::bigint, coalesce(doc_len, 0)::bigint FROM new_rows
    ) d HAVING count(*) > 0;
    WITH changed AS (
        SELECT b.agent AS old_agent, b.tsv AS old_tsv, a.agent, a.tsv
          FROM old_rows b JOIN new_rows a USING (id)
         WHERE b.tsv IS DISTINCT FROM a.tsv OR b.agent <> a.agent
    ), delta AS (
        SELECT old_agent AS agent, w.term, -1 AS d FROM changed, unnest(tsvector_to_array(old_tsv)) AS w(term)
        UNION ALL
        SELECT agent, w.term, 1 FROM changed, unnest(tsvector_to_array(tsv)) AS w(term)
    )
    INSERT INTO concept_terms AS t (agent, term, docs)
        SELECT agent, term, sum(d) FROM delta GROUP BY 1, 2 HAVING sum(d) <> 0 ORDER BY 1, 2
    ON CONFLICT (agent, term) DO UPDATE SET docs = t.docs + EXCLUDED.docs;
    RETURN NULL;
END $function$;
CREATE OR REPLACE FUNCTION <tenant>.concepts_before_update()
 RETURNS trigger
 LANGUAGE plpgsql
 SET search_path TO '<tenant>'
AS $function$
BEGIN
    IF (NEW.description, NEW.type, NEW.provenance, NEW.confidence, NEW.sources,
        NEW.occurrences, NEW.body) IS DISTINCT FROM
       (OLD.description, OLD.type, OLD.provenance, OLD.confidence, OLD.sources,
        OLD.occurrences, OLD.body)
       AND NEW.updated_at = OLD.updated_at AND NEW.version = OLD.version THEN
        NEW.updated_at := to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"');
    END IF;
    IF (NEW.name, NEW.description, NEW.body) IS DISTINCT FROM (OLD.name, OLD.description, OLD.body)
       AND NEW.tsv IS NOT DISTINCT FROM OLD.tsv THEN
        NEW.tsv := NULL;
        NEW.doc_len := NULL;
    END IF;
    RETURN NEW;
END $function$;
CREATE OR REPLACE FUNCTION <tenant>.concepts_count(delta_agent text[], delta_docs bigint[], delta_tokens bigint[])
 RETURNS void
 LANGUAGE sql
 SET search_path TO '<tenant>'
AS $function$
    INSERT INTO generations AS g (agent, generation, documents, tokens)
        SELECT d.agent, 1, sum(d.docs), sum(d.tokens)
          FROM unnest(delta_agent, delta_docs, delta_tokens) AS d(agent, docs, tokens)
         GROUP BY d.agent ORDER BY d.agent
    ON CONFLICT (agent) DO UPDATE SET generation = g.generation + 1,
        documents = g.documents + EXCLUDED.documents, tokens = g.tokens + EXCLUDED.tokens;
$function$;
CREATE OR REPLACE FUNCTION <tenant>.fts_bm25(p_agent text, p_terms text[], p_query tsquery, wa double precision, wb double precision, wc double precision, window_size integer)
 RETURNS TABLE(id bigint, score double precision)
 LANGUAGE plpgsql
 STABLE ROWS 32
 SET search_path TO '<tenant>'
 SET enable_seqscan TO 'off'
 SET enable_sort TO 'off'
 SET jit TO 'off'
AS $function$
DECLARE
    s record;
BEGIN
    SELECT * INTO s FROM fts_stats(p_agent, p_terms);
    IF s.n IS NOT NULL THEN
        RETURN QUERY SELECT * FROM fts_score(p_agent, p_terms, s.idfs, p_query, NULL, NULL,
                                             wa, wb, wc, s.avgdl, window_size);
    END IF;
END $function$;
CREATE OR REPLACE FUNCTION <tenant>.fts_bm25_pruned(p_agent text, p_terms text[], p_lexemes text[], wa double precision, wb double precision, wc double precision, window_size integer)
 RETURNS TABLE(id bigint, score double precision)
 LANGUAGE plpgsql
 STABLE ROWS 32
 SET search_path TO '<tenant>'
 SET enable_seqscan TO 'off'
 SET enable_sort TO 'off'
 SET jit TO 'off'
AS $function$
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
END $function$;
CREATE OR REPLACE FUNCTION <tenant>.fts_score(p_agent text, p_terms text[], p_idfs double precision[], p_match tsquery, p_strong tsquery, p_skip tsquery, wa double precision, wb double precision, wc double precision, avgdl double precision, window_size integer)
 RETURNS TABLE(id bigint, score double precision)
 LANGUAGE sql
 STABLE ROWS 32
AS $function$
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
$function$;
CREATE OR REPLACE FUNCTION <tenant>.fts_stats(p_agent text, p_terms text[])
 RETURNS TABLE(n double precision, avgdl double precision, idfs double precision[])
 LANGUAGE sql
 STABLE ROWS 1
AS $function$
    SELECT g.documents::float8, greatest(g.tokens::float8 / greatest(g.documents, 1), 1e-9),
           (SELECT array_agg(ln(1 + (g.documents::float8 - coalesce(t.docs, 0) + 0.5)
                                    / (coalesce(t.docs, 0) + 0.5)) ORDER BY w.i)
              FROM unnest(p_terms) WITH ORDINALITY AS w(term, i)
              LEFT JOIN concept_terms t ON t.agent = p_agent AND t.term = w.term)
      FROM generations g WHERE g.agent = p_agent
$function$;
CREATE OR REPLACE FUNCTION <tenant>.fts_strong(doc tsvector)
 RETURNS tsvector
 LANGUAGE sql
 IMMUTABLE PARALLEL SAFE
AS $function$
    SELECT strip(ts_delete(doc, ARRAY(
        SELECT u.lexeme FROM unnest(doc) AS u(lexeme, positions, weights)
         WHERE u.positions = '{8001}'::smallint[])))
$function$;
CREATE TRIGGER concepts_after_delete AFTER DELETE ON <tenant>.concepts REFERENCING OLD TABLE AS removed FOR EACH STATEMENT EXECUTE FUNCTION concepts_after_delete();
CREATE TRIGGER concepts_after_insert AFTER INSERT ON <tenant>.concepts REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION concepts_after_insert();
CREATE TRIGGER concepts_after_update AFTER UPDATE ON <tenant>.concepts REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION concepts_after_update();
CREATE TRIGGER concepts_before_update BEFORE UPDATE ON <tenant>.concepts FOR EACH ROW EXECUTE FUNCTION concepts_before_update();
