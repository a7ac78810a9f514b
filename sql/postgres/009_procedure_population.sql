-- formerly: 003_naming_population
-- 009: procedural memory: the population recall weighs triggers against, and the block a
-- session carries on every later request (PostgreSQL; sql/sqlite/009_procedure_population.sql).
-- Databases migrated before the one numbering recorded this step and 006 together as
-- 003_naming_population.

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
