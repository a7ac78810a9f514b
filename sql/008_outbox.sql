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
