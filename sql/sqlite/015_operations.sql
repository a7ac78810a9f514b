-- 015: procedural memory: operation procedures (one per write operation of a tool-calling
-- agent, mined across tasks; `insika_knowledge.procedures.mining.operations`) and the past
-- tasks they are mined from, which recall votes on (`insika_knowledge.procedures.recall.match`).

CREATE TABLE procedure_tasks (
    id         TEXT    PRIMARY KEY,         -- 'task-' + 12 hex digits
    record     TEXT    NOT NULL,            -- JSON of the TaskRecord (insika_knowledge.procedure): keyed
                                            -- digests of the terms of what its users asked before the
                                            -- first write (never a word), its runs' writes, failures,
                                            -- contradicted recalls, and how each write was made
    generation INTEGER NOT NULL,            -- procedure_generation.generation when last written
    created_at TEXT    NOT NULL,            -- UTC ISO-8601 'Z', first run counted
    updated_at TEXT    NOT NULL             -- UTC ISO-8601 'Z', last change
) WITHOUT ROWID;
CREATE INDEX procedure_tasks_generation ON procedure_tasks (generation);

CREATE TABLE procedure_task_ops (
    operation TEXT NOT NULL,                -- a write operation (tool name) the task made, failed or was given
    task_id   TEXT NOT NULL,                -- procedure_tasks.id
    PRIMARY KEY (operation, task_id)        -- which tasks an operation procedure is folded from
) WITHOUT ROWID;

-- procedures.scope gains 'operation'. SQLite cannot change a CHECK in place, so the table is
-- rebuilt. The tool-calling sequence procedures of earlier releases (a whole run's steps,
-- literal values kept) are not carried over: recall never gives them any more, and what
-- their runs' users asked was never stored, so they cannot become operations; the shell
-- procedures are kept as they are.
CREATE TABLE procedures_015 (
    id           TEXT    PRIMARY KEY,        -- 'proc-' + 12 hex digits of blake2b(step sequence, or the operation)
    kind         TEXT    NOT NULL CHECK (kind IN ('tool','shell')), -- tool calling or shell commands
    steps        TEXT    NOT NULL,           -- JSON [[template, signature, [[param, value]...], verify, note?]...]
    tools        TEXT    NOT NULL,           -- JSON array of the tool names the steps call, sorted
    triggers     TEXT    NOT NULL,           -- JSON {term: successful runs whose task had it}
    trigger_runs INTEGER NOT NULL CHECK (trigger_runs >= 0), -- successful runs counted in triggers
    successes    INTEGER NOT NULL CHECK (successes >= 0),    -- runs (an operation: tasks) that passed
    failures     INTEGER NOT NULL CHECK (failures >= 0),     -- runs (an operation: tasks) against it
    confidence   REAL    NOT NULL CHECK (confidence BETWEEN 0 AND 1), -- Wilson 95 % lower bound
    sample_task  TEXT    NOT NULL,           -- canonical task text of a success, masked
    generation   INTEGER NOT NULL,           -- procedure_generation.generation when last written
    created_at   TEXT    NOT NULL,           -- UTC ISO-8601 'Z', first success
    updated_at   TEXT    NOT NULL,           -- UTC ISO-8601 'Z', last change
    scope        TEXT    NOT NULL DEFAULT 'task' CHECK (scope IN ('task','part','operation'))
);
INSERT INTO procedures_015 (id, kind, steps, tools, triggers, trigger_runs, successes, failures, confidence,
                            sample_task, generation, created_at, updated_at, scope)
    SELECT id, kind, steps, tools, triggers, trigger_runs, successes, failures, confidence,
           sample_task, generation, created_at, updated_at, scope
    FROM procedures WHERE kind = 'shell';
DROP TABLE procedures;
ALTER TABLE procedures_015 RENAME TO procedures;
CREATE INDEX procedures_generation ON procedures (generation);
CREATE INDEX procedures_confidence ON procedures (confidence);
UPDATE procedure_generation SET generation = generation + 1 WHERE id = 1;
