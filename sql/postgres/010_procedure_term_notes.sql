-- formerly: 005_procedure_term_notes
-- 010: procedural memory keeps no term only one session's task had (the two-session rule,
-- `insika_knowledge.procedures.mining.shared`): such a term is only noted, as keyed
-- digests, until a second session's task has it. Same tables and clean-up as the SQLite
-- ``sql/sqlite/010_procedure_term_notes.sql``.

-- The key of the digests below: 32 random bytes, one per schema, so a digest of one
-- tenant says nothing in another (two md5 of random input: no pgcrypto needed).
CREATE TABLE procedure_term_key (
    id  integer PRIMARY KEY CHECK (id = 1), -- one row
    key text NOT NULL                       -- 32 random bytes in hex (the blake2b key)
);
INSERT INTO procedure_term_key (id, key)
VALUES (1, md5(random()::text || clock_timestamp()::text) || md5(random()::text));

CREATE TABLE procedure_term_notes (
    scope   text COLLATE "C" NOT NULL,      -- the counter: a procedure id, or '@population'
    term    text COLLATE "C" NOT NULL,      -- keyed blake2b of the term, 32 hex digits; never the term
    session text COLLATE "C" NOT NULL,      -- keyed blake2b of the one session whose tasks had it, 32 hex digits
    runs    integer NOT NULL CHECK (runs >= 1), -- that session's runs whose task had it
    PRIMARY KEY (scope, term)
);

-- What was counted before this rule: a term one run alone had goes from the population and
-- from every procedure's triggers (which sessions two runs came from was not recorded, so
-- a term two runs had stays); stored sample tasks and the task text of open sessions held
-- the task verbatim and are cleared (a later success writes a masked sample).
DELETE FROM procedure_population WHERE term <> '' AND runs < 2;
UPDATE procedures SET
    triggers = (
        SELECT coalesce(jsonb_object_agg(t.key, t.value), '{}'::jsonb)::text
        FROM jsonb_each(procedures.triggers::jsonb) AS t
        WHERE (t.value)::text::numeric >= 2
    ),
    sample_task = '';
UPDATE capture_sessions SET task = '';
