-- 010: procedural memory keeps no term only one session's task had (the two-session rule,
-- `insika_knowledge.procedures.mining.shared`): such a term is only noted, as keyed
-- digests, until a second session's task has it.

-- The key of the digests below: 32 random bytes, one per database, so a digest of one
-- database says nothing in another.
CREATE TABLE procedure_term_key (
    id  INTEGER PRIMARY KEY CHECK (id = 1), -- one row
    key TEXT    NOT NULL                    -- 32 random bytes in hex (the blake2b key)
);
INSERT INTO procedure_term_key (id, key) VALUES (1, lower(hex(randomblob(32))));

CREATE TABLE procedure_term_notes (
    scope   TEXT    NOT NULL,               -- the counter: a procedure id, or '@population'
    term    TEXT    NOT NULL,               -- keyed blake2b of the term, 32 hex digits; never the term
    session TEXT    NOT NULL,               -- keyed blake2b of the one session whose tasks had it, 32 hex digits
    runs    INTEGER NOT NULL CHECK (runs >= 1), -- that session's runs whose task had it
    PRIMARY KEY (scope, term)
) WITHOUT ROWID;

-- What was counted before this rule: a term one run alone had goes from the population and
-- from every procedure's triggers (which sessions two runs came from was not recorded, so
-- a term two runs had stays); stored sample tasks and the task text of open sessions held
-- the task verbatim and are cleared (a later success writes a masked sample).
DELETE FROM procedure_population WHERE term <> '' AND runs < 2;
UPDATE procedures SET
    triggers = (
        SELECT coalesce(json_group_object(key, value), '{}')
        FROM json_each(procedures.triggers) WHERE value >= 2
    ),
    sample_task = '';
UPDATE capture_sessions SET task = '';
