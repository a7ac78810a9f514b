-- 003: procedural memory: procedures mined from verified agent traces, the runs that
-- count for and against them, the capture buffer of open sessions, and the telemetry
-- of every request the skill looked at. Tenant-wide (one database file per tenant).

CREATE TABLE procedures (
    id           TEXT    PRIMARY KEY,        -- 'proc-' + 12 hex digits of blake2b(step sequence)
    kind         TEXT    NOT NULL CHECK (kind IN ('tool','shell')), -- tool calling or shell commands
    steps        TEXT    NOT NULL,           -- JSON [[template, signature, [[param, value]...], verify]...]
    tools        TEXT    NOT NULL,           -- JSON array of the tool names the steps call, sorted
    triggers     TEXT    NOT NULL,           -- JSON {term: successful runs whose task had it}
    trigger_runs INTEGER NOT NULL CHECK (trigger_runs >= 0), -- successful runs counted in triggers
    successes    INTEGER NOT NULL CHECK (successes >= 0),    -- runs with exactly these steps that passed
    failures     INTEGER NOT NULL CHECK (failures >= 0),     -- failed runs that followed these steps
    confidence   REAL    NOT NULL CHECK (confidence BETWEEN 0 AND 1), -- Wilson 95 % lower bound
    sample_task  TEXT    NOT NULL,           -- canonical task text of the first success (no secrets)
    generation   INTEGER NOT NULL,           -- procedure_generation.generation when last written
    created_at   TEXT    NOT NULL,           -- UTC ISO-8601 'Z', first success
    updated_at   TEXT    NOT NULL            -- UTC ISO-8601 'Z', last change
);
CREATE INDEX procedures_generation ON procedures (generation);
CREATE INDEX procedures_confidence ON procedures (confidence);

CREATE TABLE procedure_runs (
    procedure_id TEXT NOT NULL,              -- a procedure id, or the id of a failed run's prefix
    run_id       TEXT NOT NULL,              -- the session id ('#n' appended for its n-th later task)
    verdict      TEXT NOT NULL CHECK (verdict IN ('success','failure')),
    recorded_at  TEXT NOT NULL,              -- UTC ISO-8601 'Z'
    PRIMARY KEY (procedure_id, run_id)       -- a replayed or re-mined run counts once
) WITHOUT ROWID;

CREATE TABLE procedure_generation (
    id         INTEGER PRIMARY KEY CHECK (id = 1), -- one row
    generation INTEGER NOT NULL              -- bumped by every procedure write; readers compare it
);
INSERT INTO procedure_generation (id, generation) VALUES (1, 0);

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
) WITHOUT ROWID;
CREATE INDEX capture_sessions_idle ON capture_sessions (last_turn_at);

CREATE TABLE capture_steps (
    session_id TEXT    NOT NULL,             -- capture_sessions.session_id
    seq        INTEGER NOT NULL,             -- 0-based position in the current task
    step       TEXT    NOT NULL,             -- JSON of the canonical step (no raw command or output)
    PRIMARY KEY (session_id, seq)
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
);
CREATE INDEX procedure_stages_session ON procedure_stages (session_id);
