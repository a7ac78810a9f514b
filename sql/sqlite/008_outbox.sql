-- 008: the extraction outbox: finished turns waiting to be learned from.
-- `after_turn` inserts one row (one small transaction) and returns; a worker of any
-- process claims a row, extracts it and deletes it. A row whose claim has expired, or
-- whose claiming process is gone, is claimed again, so a crash loses no committed turn.

CREATE TABLE outbox (
    id            INTEGER PRIMARY KEY,       -- arrival order
    agent         TEXT    NOT NULL,          -- the agent that answered the turn
    session_id    TEXT    NOT NULL,          -- the conversation's id
    turn_id       TEXT    NOT NULL,          -- the turn's id in the session
    knowledge     TEXT    NOT NULL,          -- JSON: the agent's knowledge: block at the time of the turn
    messages      TEXT    NOT NULL,          -- JSON: the turn's messages (size-bounded by the enqueuer)
    enqueued_at   TEXT    NOT NULL,          -- UTC ISO-8601 'Z'
    attempts      INTEGER NOT NULL DEFAULT 0 CHECK (attempts >= 0), -- claims so far
    claimed_by    TEXT,                      -- 'host:pid:token' of the worker holding it; NULL = free
    claimed_until REAL,                      -- unix seconds when the claim lapses
    not_before    REAL    NOT NULL DEFAULT 0, -- unix seconds before which no worker takes it (back-off)
    UNIQUE (agent, session_id, turn_id)      -- a turn handed over twice is queued once
);
-- Small entries: `count(*)` of pending turns and the claim scan read this, not the rows.
CREATE INDEX outbox_claimed_by ON outbox (claimed_by);

-- Merge leases: while one writer asks the merge model about a concept, the others wait
-- their turn (first come, first served by ticket) instead of asking about a body that is
-- about to change and then losing the compare-and-swap. A row of a process that is gone,
-- or past its time, is removed by the next writer that looks.
CREATE TABLE merge_leases (
    agent      TEXT    NOT NULL,
    name       TEXT    NOT NULL,             -- the concept being merged
    holder     TEXT    NOT NULL,             -- 'host:pid:thread:token' of a writer
    ticket     INTEGER NOT NULL,             -- arrival order among the writers of this concept
    holding    INTEGER NOT NULL CHECK (holding IN (0, 1)), -- 1: asking the model now; 0: waiting
    expires_at REAL    NOT NULL,             -- unix seconds: the lease lapses, or a waiter that
                                             -- stopped polling is forgotten
    PRIMARY KEY (agent, name, holder)
) WITHOUT ROWID;
