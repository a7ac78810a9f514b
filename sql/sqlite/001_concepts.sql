-- 001: concepts, their version history, the sightings ledger, per-agent generations.
-- One database file per tenant; every table is keyed by agent inside it.

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
CREATE INDEX concepts_agent_status ON concepts (agent, status);

CREATE TABLE concept_versions (
    id         INTEGER PRIMARY KEY,
    agent      TEXT    NOT NULL,
    name       TEXT    NOT NULL,
    version    INTEGER NOT NULL,            -- 1, 2, ... per (agent, name), across deletes
    reason     TEXT    NOT NULL CHECK (reason IN
                   ('extract','confirm','merge','conflict','edit','restore','delete')),
    actor      TEXT    NOT NULL,            -- 'engine' or the operator who made the change
    session_id TEXT,                        -- the sighting's session, for engine writes
    markdown   TEXT    NOT NULL,            -- the whole record as it was after this change
    created_at TEXT    NOT NULL,            -- when the change was written (UTC 'Z')
    UNIQUE (agent, name, version)
);

CREATE TABLE sightings (
    agent      TEXT NOT NULL,
    name       TEXT NOT NULL,
    session_id TEXT NOT NULL,
    turn_id    TEXT NOT NULL,
    outcome    TEXT NOT NULL CHECK (outcome IN ('extract','confirm','merge','conflict')),
    seen_at    TEXT NOT NULL,               -- UTC 'Z'
    PRIMARY KEY (agent, name, session_id, turn_id)  -- a replayed turn counts once
) WITHOUT ROWID;

CREATE TABLE generations (
    agent      TEXT PRIMARY KEY,
    generation INTEGER NOT NULL             -- bumped by every change to the agent's concepts
) WITHOUT ROWID;

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
CREATE TRIGGER concepts_generation_delete AFTER DELETE ON concepts BEGIN
    UPDATE generations SET generation = generation + 1 WHERE agent = OLD.agent;
END;
-- (No INSERT OR IGNORE inside triggers: an outer UPSERT's conflict policy would override it.)
-- A content change made outside the versioned write path (same version, same
-- updated_at: a hand-written UPDATE) still gets the current time.
CREATE TRIGGER concepts_updated_at AFTER UPDATE OF
    description, type, provenance, confidence, sources, occurrences, body ON concepts
    WHEN NEW.updated_at IS OLD.updated_at AND NEW.version IS OLD.version
BEGIN
    UPDATE concepts SET updated_at = strftime('%Y-%m-%dT%H:%M:%SZ', 'now') WHERE id = NEW.id;
END;
