CREATE INDEX concepts_agent_status ON concepts (agent, status);
CREATE TABLE _insika_migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL);
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
    content='concepts',
    content_rowid='id',
    tokenize='insika',
    detail='column'     -- no positions: we never run phrase queries; smaller and faster
);
CREATE TABLE 'concepts_fts_config'(k PRIMARY KEY, v) WITHOUT ROWID;
CREATE TABLE 'concepts_fts_data'(id INTEGER PRIMARY KEY, block BLOB);
CREATE TABLE 'concepts_fts_docsize'(id INTEGER PRIMARY KEY, sz BLOB);
CREATE TABLE 'concepts_fts_idx'(segid, term, pgno, PRIMARY KEY(segid, term)) WITHOUT ROWID;
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
        VALUES ('delete', OLD.id, OLD.name, OLD.description, OLD.body);
END;
CREATE TRIGGER concepts_fts_insert AFTER INSERT ON concepts BEGIN
    INSERT INTO concepts_fts (rowid, name, description, body)
        VALUES (NEW.id, NEW.name, NEW.description, NEW.body);
END;
CREATE TRIGGER concepts_fts_update AFTER UPDATE OF name, description, body ON concepts BEGIN
    INSERT INTO concepts_fts (concepts_fts, rowid, name, description, body)
        VALUES ('delete', OLD.id, OLD.name, OLD.description, OLD.body);
    INSERT INTO concepts_fts (rowid, name, description, body)
        VALUES (NEW.id, NEW.name, NEW.description, NEW.body);
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
