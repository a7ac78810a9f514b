-- 015: procedural memory: operation procedures and the past tasks they are mined from
-- (PostgreSQL; columns and rules as in sql/sqlite/015_operations.sql).

CREATE TABLE procedure_tasks (
    id         text COLLATE "C" PRIMARY KEY, -- 'task-' + 12 hex digits
    record     text NOT NULL,               -- JSON of the TaskRecord: keyed term digests, never a word
    generation bigint NOT NULL,             -- procedure_generation.generation when last written
    created_at text NOT NULL,               -- UTC ISO-8601 'Z', first run counted
    updated_at text NOT NULL                -- UTC ISO-8601 'Z', last change
);
CREATE INDEX procedure_tasks_generation ON procedure_tasks (generation);

CREATE TABLE procedure_task_ops (
    operation text COLLATE "C" NOT NULL,    -- a write operation (tool name) the task made, failed or was given
    task_id   text COLLATE "C" NOT NULL,    -- procedure_tasks.id
    PRIMARY KEY (operation, task_id)        -- which tasks an operation procedure is folded from
);

-- procedures.scope gains 'operation'; the tool-calling sequence procedures of earlier
-- releases are not carried over (see the SQLite migration).
ALTER TABLE procedures DROP CONSTRAINT procedures_scope_check;
ALTER TABLE procedures ADD CONSTRAINT procedures_scope_check CHECK (scope IN ('task','part','operation'));
DELETE FROM procedures WHERE kind = 'tool';
UPDATE procedure_generation SET generation = generation + 1 WHERE id = 1;
