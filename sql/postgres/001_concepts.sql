-- 001: concepts, their version history, the sightings ledger, extraction outcomes, the
-- per-agent generation number, quarantine and the full-text index (PostgreSQL). It also holds
-- what SQLite adds in its steps 002 (full text: here a tsvector), 004 and 007 (the 'resolve'
-- and 'approve' reasons, quarantine) and 005 (meta): PostgreSQL has no 002, 004, 005 or 007.
-- One schema per tenant (`insika_knowledge.store.postgres`); every table is keyed by agent
-- inside it. Applied with search_path set to the tenant's schema, in one transaction under
-- an advisory lock. Text keys sort by code point (COLLATE "C"), as SQLite sorts them.
--
-- Full text: the index layer's analyser turns name, description and body into terms (the
-- store never analyses); the store writes them as a tsvector, taken verbatim (no parser or
-- dictionary of PostgreSQL touches them, as with the `simple` configuration). Each term
-- carries one position per occurrence (at most 256, PostgreSQL's limit), numbered from 1 in
-- the name, 4001 in the description, 8001 in the body: BM25's per-field term frequencies. A GIN index finds the candidates; `concept_terms` and `generations`
-- keep BM25's per-agent statistics; `fts_bm25` and `fts_bm25_pruned` (012) rank.

CREATE TABLE concepts (
    id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    agent       text COLLATE "C" NOT NULL,  -- the agent that owns the concept
    name        text COLLATE "C" NOT NULL,  -- kebab-case slug, unique per agent
    description text NOT NULL,              -- one line, shown in the <knowledge> block
    type        text COLLATE "C" NOT NULL
                CHECK (type IN ('fact','entity','procedure','policy','objection')),
    provenance  text COLLATE "C" NOT NULL CHECK (provenance IN ('observed','policy')),
    confidence  double precision NOT NULL CHECK (confidence BETWEEN 0 AND 1),
    sources     text NOT NULL,              -- JSON array of supporting session ids, first first
    occurrences bigint NOT NULL CHECK (occurrences >= 0),  -- supporting sightings
    created_at  text COLLATE "C" NOT NULL,  -- UTC ISO-8601 'Z', first sighting or creation
    updated_at  text COLLATE "C" NOT NULL,  -- UTC ISO-8601 'Z', last change (trigger-kept)
    status      text COLLATE "C" NOT NULL CHECK (status IN ('ok','conflict')),
    body        text NOT NULL,              -- markdown body, no trailing newline
    version     integer NOT NULL,           -- number of the current concept_versions row
    tsv         tsvector,                   -- analysed terms; NULL until the store indexes the row
    doc_len     integer,                    -- terms in name + description + body (BM25's |D|)
    UNIQUE (agent, name)
);
CREATE INDEX concepts_agent_status ON concepts (agent, status);
CREATE INDEX concepts_tsv ON concepts USING gin (tsv);

CREATE TABLE concept_versions (
    id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    agent      text COLLATE "C" NOT NULL,
    name       text COLLATE "C" NOT NULL,
    version    integer NOT NULL,            -- 1, 2, ... per (agent, name), across deletes
    reason     text COLLATE "C" NOT NULL CHECK (reason IN
                   ('extract','confirm','merge','conflict','edit','restore','delete','resolve',
                    'approve')),
    actor      text COLLATE "C" NOT NULL,   -- 'engine' or the operator who made the change
    session_id text COLLATE "C",            -- the sighting's session, for engine writes
    markdown   text NOT NULL,               -- the whole record as it was after this change
    created_at text COLLATE "C" NOT NULL,   -- when the change was written (UTC 'Z')
    UNIQUE (agent, name, version)
);
-- An agent's changes in id order: the change feed (Index::Scan) and the activity page.
CREATE INDEX concept_versions_agent_id ON concept_versions (agent, id);

CREATE TABLE sightings (
    agent      text COLLATE "C" NOT NULL,
    name       text COLLATE "C" NOT NULL,
    session_id text COLLATE "C" NOT NULL,
    turn_id    text COLLATE "C" NOT NULL,
    outcome    text COLLATE "C" NOT NULL CHECK (outcome IN ('extract','confirm','merge','conflict')),
    seen_at    text COLLATE "C" NOT NULL,   -- UTC 'Z'
    PRIMARY KEY (agent, name, session_id, turn_id)  -- a replayed turn counts once
);

CREATE TABLE extractions (
    agent        text COLLATE "C" NOT NULL,
    session_id   text COLLATE "C" NOT NULL,
    turn_id      text COLLATE "C" NOT NULL,
    outcome      text COLLATE "C" NOT NULL, -- ok | no_model | model_timeout | ... | error
    retryable    integer NOT NULL,          -- 1 when a later run may succeed
    candidates   integer NOT NULL,          -- candidates the model proposed
    written      integer NOT NULL,          -- concepts learned, confirmed, merged or conflicted
    dropped      text NOT NULL,             -- JSON object reason -> count
    detail       text,                      -- the failure, for a human (never a body)
    attempted_at text COLLATE "C" NOT NULL, -- UTC 'Z'
    PRIMARY KEY (agent, session_id, turn_id)
);

-- Per agent: the generation number (moves on every change of its concepts: one indexed read
-- tells a reader whether its cache is stale) and BM25's collection statistics.
CREATE TABLE generations (
    agent      text COLLATE "C" PRIMARY KEY,
    generation bigint NOT NULL,             -- bumped by every statement changing the agent's concepts
    documents  bigint NOT NULL,             -- the agent's concepts (BM25's N)
    tokens     bigint NOT NULL              -- sum of their doc_len (N * BM25's avgdl)
);

-- Per agent: how many of its concepts hold each term (BM25's document frequency, the typo
-- corrector's vocabulary). A row at 0 is kept (readers skip it) for the term's return.
CREATE TABLE concept_terms (
    agent text COLLATE "C" NOT NULL,
    term  text COLLATE "C" NOT NULL,
    docs  bigint NOT NULL,
    PRIMARY KEY (agent, term)
);

CREATE TABLE meta (
    key   text COLLATE "C" PRIMARY KEY,     -- e.g. 'analysis_version', 'tenant'
    value text NOT NULL
);

CREATE TABLE quarantine (
    agent        text COLLATE "C" NOT NULL,
    name         text COLLATE "C" NOT NULL, -- the quarantined concept (concepts.name)
    session_id   text NOT NULL,             -- the sighting that put it here
    supported_by text NOT NULL,             -- JSON array of speakers: 'customer', ... (may be [])
    markers      text NOT NULL,             -- JSON array: why it is a rule ('price', ...)
    since        text NOT NULL,             -- UTC ISO-8601 'Z'
    PRIMARY KEY (agent, name)
);

-- A content change made outside the versioned write path (same version, same updated_at:
-- a hand-written UPDATE) still gets the current time; a change of the indexed text that
-- does not bring its terms leaves the row unindexed until a store re-indexes it.
CREATE FUNCTION concepts_before_update() RETURNS trigger LANGUAGE plpgsql
SET search_path FROM CURRENT AS $$
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
END $$;
CREATE TRIGGER concepts_before_update BEFORE UPDATE ON concepts
    FOR EACH ROW EXECUTE FUNCTION concepts_before_update();

-- Statement-level triggers over transition tables: one upsert per agent and per term for a
-- whole statement, so a bulk load does not update one row many times. The generations row is
-- written first: writers of one agent queue on it, and so never deadlock on the term rows.
CREATE FUNCTION concepts_count(delta_agent text[], delta_docs bigint[], delta_tokens bigint[])
RETURNS void LANGUAGE sql SET search_path FROM CURRENT AS $$
    INSERT INTO generations AS g (agent, generation, documents, tokens)
        SELECT d.agent, 1, sum(d.docs), sum(d.tokens)
          FROM unnest(delta_agent, delta_docs, delta_tokens) AS d(agent, docs, tokens)
         GROUP BY d.agent ORDER BY d.agent
    ON CONFLICT (agent) DO UPDATE SET generation = g.generation + 1,
        documents = g.documents + EXCLUDED.documents, tokens = g.tokens + EXCLUDED.tokens;
$$;

CREATE FUNCTION concepts_after_insert() RETURNS trigger LANGUAGE plpgsql
SET search_path FROM CURRENT AS $$
BEGIN
    PERFORM concepts_count(array_agg(agent), array_agg(1::bigint), array_agg(coalesce(doc_len, 0)::bigint))
       FROM added HAVING count(*) > 0;
    INSERT INTO concept_terms AS t (agent, term, docs)
        SELECT a.agent, w.term, count(*) FROM added a, unnest(tsvector_to_array(a.tsv)) AS w(term)
         GROUP BY 1, 2 ORDER BY 1, 2
    ON CONFLICT (agent, term) DO UPDATE SET docs = t.docs + EXCLUDED.docs;
    RETURN NULL;
END $$;
CREATE TRIGGER concepts_after_insert AFTER INSERT ON concepts
    REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION concepts_after_insert();

CREATE FUNCTION concepts_after_update() RETURNS trigger LANGUAGE plpgsql
SET search_path FROM CURRENT AS $$
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
END $$;
CREATE TRIGGER concepts_after_update AFTER UPDATE ON concepts
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION concepts_after_update();

CREATE FUNCTION concepts_after_delete() RETURNS trigger LANGUAGE plpgsql
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
    -- A deleted concept leaves quarantine with it.
    DELETE FROM quarantine q USING removed r WHERE q.agent = r.agent AND q.name = r.name;
    RETURN NULL;
END $$;
CREATE TRIGGER concepts_after_delete AFTER DELETE ON concepts
    REFERENCING OLD TABLE AS removed FOR EACH STATEMENT EXECUTE FUNCTION concepts_after_delete();
