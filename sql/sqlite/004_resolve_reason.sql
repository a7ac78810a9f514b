-- 004: the `resolve` reason (a conflict resolved in one step in the Studio: one claim
-- kept or a resolution written, the Contradiction section removed, confidence recomputed
-- from the sightings ledger), and an index for an agent's newest changes (the Studio's
-- activity page). SQLite cannot change a CHECK constraint in place: the table is rebuilt
-- with the same columns and rows (ids kept, so change-feed cursors stay valid).

CREATE TABLE concept_versions_new (
    id         INTEGER PRIMARY KEY,
    agent      TEXT    NOT NULL,
    name       TEXT    NOT NULL,
    version    INTEGER NOT NULL,            -- 1, 2, ... per (agent, name), across deletes
    reason     TEXT    NOT NULL CHECK (reason IN
                   ('extract','confirm','merge','conflict','edit','restore','delete','resolve')),
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
-- An agent's changes, newest first (the activity page pages by id).
CREATE INDEX concept_versions_agent_id ON concept_versions (agent, id);
