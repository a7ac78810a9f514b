-- 003: one idea, one name (SQLite 006) and the procedure population (SQLite 009), on
-- PostgreSQL. Same tables, columns and semantics as those migrations; the quarantine table
-- and the 'resolve'/'approve' version reasons (SQLite 007) are already in 001.

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

-- The population recall weighs triggers against.
CREATE TABLE procedure_population (
    term       text COLLATE "C" PRIMARY KEY, -- an index term of a task; '' counts the runs themselves
    runs       integer NOT NULL CHECK (runs >= 0), -- runs labelled or judged successful whose task had it
    generation bigint NOT NULL               -- procedure_generation.generation when last changed
);
CREATE INDEX procedure_population_generation ON procedure_population (generation);

-- The block a session received, carried byte for byte at the same place on every later
-- request ('' until the session gets one), and where it sits (JSON, see recall/inject.py).
ALTER TABLE capture_sessions ADD COLUMN block text NOT NULL DEFAULT '';
ALTER TABLE capture_sessions ADD COLUMN anchor text NOT NULL DEFAULT '';

-- 'task': some run had exactly these steps; 'part': only ever a run of steps ending in a
-- verified step inside longer runs (listed once two runs share it).
ALTER TABLE procedures ADD COLUMN scope text NOT NULL DEFAULT 'task' CHECK (scope IN ('task','part'));

-- Notes on a request the skill read around (an outcome header that is no outcome, an
-- x-ace-skills value it ignored): JSON array of strings.
ALTER TABLE procedure_stages ADD COLUMN notes text NOT NULL DEFAULT '[]';
