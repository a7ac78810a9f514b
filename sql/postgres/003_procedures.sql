-- formerly: 002_procedures
-- 003: procedural memory (PostgreSQL): procedures mined from verified agent traces, the runs
-- that count for and against them, the capture buffer of open sessions, and the telemetry of
-- every request the skill looked at. Tenant-wide (one schema per tenant): the procedure store
-- every replica of a deployment shares. Columns as in sql/sqlite/003_procedures.sql.

CREATE TABLE procedures (
    id           text COLLATE "C" PRIMARY KEY, -- 'proc-' + 12 hex digits of blake2b(step sequence)
    kind         text NOT NULL CHECK (kind IN ('tool','shell')),
    steps        text NOT NULL,             -- JSON [[template, signature, [[param, value]...], verify]...]
    tools        text NOT NULL,             -- JSON array of the tool names the steps call, sorted
    triggers     text NOT NULL,             -- JSON {term: successful runs whose task had it}
    trigger_runs integer NOT NULL CHECK (trigger_runs >= 0),
    successes    integer NOT NULL CHECK (successes >= 0),
    failures     integer NOT NULL CHECK (failures >= 0),
    confidence   double precision NOT NULL CHECK (confidence BETWEEN 0 AND 1), -- Wilson lower bound
    sample_task  text NOT NULL,             -- canonical task text of the first success (no secrets)
    generation   bigint NOT NULL,           -- procedure_generation.generation when last written
    created_at   text NOT NULL,             -- UTC ISO-8601 'Z', first success
    updated_at   text NOT NULL              -- UTC ISO-8601 'Z', last change
);
CREATE INDEX procedures_generation ON procedures (generation);
CREATE INDEX procedures_confidence ON procedures (confidence);

CREATE TABLE procedure_runs (
    procedure_id text COLLATE "C" NOT NULL, -- a procedure id, or the id of a failed run's prefix
    run_id       text COLLATE "C" NOT NULL, -- the session id ('#n' appended for its n-th later task)
    verdict      text NOT NULL CHECK (verdict IN ('success','failure')),
    recorded_at  text NOT NULL,             -- UTC ISO-8601 'Z'
    PRIMARY KEY (procedure_id, run_id)      -- a replayed or re-mined run counts once
);

CREATE TABLE procedure_generation (
    id         integer PRIMARY KEY CHECK (id = 1), -- one row
    generation bigint NOT NULL              -- bumped by every procedure write; readers compare it
);
INSERT INTO procedure_generation (id, generation) VALUES (1, 0);

CREATE TABLE capture_sessions (
    session_id     text COLLATE "C" PRIMARY KEY, -- x-ace-session header or body session_id
    run            integer NOT NULL,        -- tasks already closed in this session
    messages_seen  integer NOT NULL,        -- messages of the request history already captured
    turns          integer NOT NULL,        -- requests captured for the current task
    task           text NOT NULL,           -- canonical first user message (no secrets)
    given          text NOT NULL,           -- JSON array of 12-hex hashes of tokens the user wrote
    tools          text NOT NULL,           -- JSON array of the tool names the last request offered
    procedure_id   text,                    -- the procedure recalled for this task, if any
    cursor_step    integer NOT NULL,        -- procedure steps followed so far
    matched_steps  integer NOT NULL,        -- live steps that followed the procedure
    diverged_steps integer NOT NULL,        -- live steps that left it
    tracked_upto   integer NOT NULL,        -- steps (by seq) the cursor has looked at
    first_turn_at  double precision NOT NULL, -- unix seconds of the task's first request
    last_turn_at   double precision NOT NULL  -- unix seconds of the latest request (idle sweep)
);
CREATE INDEX capture_sessions_idle ON capture_sessions (last_turn_at);

CREATE TABLE capture_steps (
    session_id text COLLATE "C" NOT NULL,   -- capture_sessions.session_id
    seq        integer NOT NULL,            -- 0-based position in the current task
    step       text NOT NULL,               -- JSON of the canonical step (no raw command or output)
    PRIMARY KEY (session_id, seq)
);

CREATE TABLE procedure_stages (
    id                   bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    recorded_at          text NOT NULL,     -- UTC ISO-8601 'Z'
    session_id           text,              -- NULL when the request had none
    mode                 text NOT NULL,     -- shadow | prod | canary_treatment | canary_control
    action               text COLLATE "C" NOT NULL, -- hit | miss | skipped_budget | completed | ...
    reason               text,
    injected             integer NOT NULL,
    injected_tokens      integer NOT NULL,
    would_inject_tokens  integer NOT NULL,
    block_tokens         integer NOT NULL,
    max_injection_tokens integer NOT NULL,
    matcher              text,
    match_score          double precision,
    procedure_id         text,
    path_confidence      double precision,
    composed_hops        integer,
    cursor_step          integer,
    steps_remaining      integer,
    adherence_delta      integer,
    divergence           integer,
    matched_steps        integer NOT NULL,
    diverged_steps       integer NOT NULL,
    canary_bucket        text,
    canary_percent       integer,
    canary_keyed_by      text,
    session_scoped       integer NOT NULL,
    captured_turns       integer NOT NULL,
    duration_ms          double precision NOT NULL,
    skill_attrs          text NOT NULL      -- JSON of the row's kg_* fields
);
CREATE INDEX procedure_stages_session ON procedure_stages (session_id);
