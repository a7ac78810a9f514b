-- 006: one idea, one name.
-- A candidate proposed under a new name that states the same claim as a concept on record
-- is recorded under that concept; the name it was proposed under is kept as an alias, so
-- the next sighting under it goes straight to the concept. A candidate that only closely
-- matches a concept (not the same claim) is held as a possible duplicate for a human: it
-- is neither merged into the concept nor written as a second concept.

CREATE TABLE aliases (
    agent      TEXT NOT NULL,               -- the agent that owns the concept
    alias      TEXT NOT NULL,               -- the slug a model proposed (no concept had it then)
    name       TEXT NOT NULL,               -- the concept sightings under `alias` are recorded under
    session_id TEXT NOT NULL,               -- the sighting that made the alias
    turn_id    TEXT NOT NULL,
    created_at TEXT NOT NULL,               -- UTC ISO-8601 'Z'
    PRIMARY KEY (agent, alias)
) WITHOUT ROWID;
CREATE INDEX aliases_by_name ON aliases (agent, name);

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
    seen_at      TEXT NOT NULL,             -- UTC ISO-8601 'Z'
    PRIMARY KEY (agent, name, session_id, turn_id)  -- a replayed turn is held once
) WITHOUT ROWID;
CREATE INDEX possible_duplicates_of ON possible_duplicates (agent, duplicate_of, status);
