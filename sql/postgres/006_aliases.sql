-- formerly: 003_naming_population
-- 006: one idea, one name (PostgreSQL; sql/sqlite/006_aliases.sql). Databases migrated before
-- the one numbering recorded this step and 009 together as 003_naming_population.

-- A candidate proposed under a new name that states the same claim as a concept on record is
-- recorded under that concept; the name it was proposed under is kept as an alias, so the next
-- sighting under it goes straight to the concept.
CREATE TABLE aliases (
    agent      text COLLATE "C" NOT NULL,   -- the agent that owns the concept
    alias      text COLLATE "C" NOT NULL,   -- the slug a model proposed (no concept had it then)
    name       text COLLATE "C" NOT NULL,   -- the concept sightings under `alias` are recorded under
    session_id text COLLATE "C" NOT NULL,   -- the sighting that made the alias
    turn_id    text COLLATE "C" NOT NULL,
    created_at text COLLATE "C" NOT NULL,   -- UTC ISO-8601 'Z'
    PRIMARY KEY (agent, alias)
);
CREATE INDEX aliases_by_name ON aliases (agent, name);

-- A candidate that only closely matches a concept (not the same claim) is held for a human:
-- neither merged into the concept nor written as a second concept.
CREATE TABLE possible_duplicates (
    agent        text COLLATE "C" NOT NULL, -- the agent that owns the concept
    name         text COLLATE "C" NOT NULL, -- the slug the candidate was proposed under
    duplicate_of text COLLATE "C" NOT NULL, -- the concept on record it closely matches
    session_id   text COLLATE "C" NOT NULL, -- the sighting that proposed it
    turn_id      text COLLATE "C" NOT NULL,
    description  text NOT NULL,             -- the candidate as proposed (screened, redacted)
    type         text NOT NULL,             -- its concept type
    body         text NOT NULL,             -- its markdown body
    similarity   double precision NOT NULL CHECK (similarity BETWEEN 0 AND 1), -- content-term overlap
    status       text COLLATE "C" NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'resolved')),
    seen_at      text COLLATE "C" NOT NULL, -- UTC ISO-8601 'Z'
    PRIMARY KEY (agent, name, session_id, turn_id)  -- a replayed turn is held once
);
CREATE INDEX possible_duplicates_of ON possible_duplicates (agent, duplicate_of, status);
