-- 007: quarantine. A concept whose only support is the customer and that states or
-- changes a rule of the business (insika_knowledge.trust) is kept, versioned and visible,
-- but never injected, until a person approves it (reason `approve`) or a later sighting
-- that an agent message or a tool result supports releases it. SQLite cannot change a
-- CHECK constraint in place: concept_versions is rebuilt with the same columns and rows
-- (ids kept, so change-feed cursors stay valid) to admit `approve` (and `resolve`, the
-- Studio's one-step conflict resolution).

CREATE TABLE quarantine (
    agent        TEXT NOT NULL,
    name         TEXT NOT NULL,             -- the quarantined concept (concepts.name)
    session_id   TEXT NOT NULL,             -- the sighting that put it here
    supported_by TEXT NOT NULL,             -- JSON array of speakers: 'customer', ... (may be [])
    markers      TEXT NOT NULL,             -- JSON array: why it is a rule ('price', 'instruction', ...)
    since        TEXT NOT NULL,             -- UTC ISO-8601 'Z'
    PRIMARY KEY (agent, name)
) WITHOUT ROWID;

-- A deleted concept leaves quarantine with it.
CREATE TRIGGER quarantine_follows_delete AFTER DELETE ON concepts BEGIN
    DELETE FROM quarantine WHERE agent = old.agent AND name = old.name;
END;

CREATE TABLE concept_versions_new (
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
INSERT INTO concept_versions_new (id, agent, name, version, reason, actor, session_id, markdown,
                                  created_at)
    SELECT id, agent, name, version, reason, actor, session_id, markdown, created_at
    FROM concept_versions;
DROP TABLE concept_versions;
ALTER TABLE concept_versions_new RENAME TO concept_versions;
CREATE INDEX IF NOT EXISTS concept_versions_agent_id ON concept_versions (agent, id);
