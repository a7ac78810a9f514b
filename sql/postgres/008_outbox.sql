-- formerly: 004_outbox
-- 008: the extraction outbox and the merge leases, on PostgreSQL (sql/sqlite/008_outbox.sql).
-- Same tables, columns and semantics; `insika_knowledge.store.outbox` serialises enqueues
-- with an advisory lock and claims rows with FOR UPDATE SKIP LOCKED instead of BEGIN IMMEDIATE.

-- Finished turns waiting to be learned from: `after_turn` inserts one row and returns; a
-- worker of any replica claims a row, extracts it and deletes it. A row whose claim has
-- expired, or whose claiming process is gone, is claimed again.
CREATE TABLE outbox (
    id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, -- arrival order
    agent         text COLLATE "C" NOT NULL, -- the agent that answered the turn
    session_id    text COLLATE "C" NOT NULL, -- the conversation's id
    turn_id       text COLLATE "C" NOT NULL, -- the turn's id in the session
    knowledge     text NOT NULL,             -- JSON: the agent's knowledge: block at the time
    messages      text NOT NULL,             -- JSON: the turn's messages (size-bounded)
    enqueued_at   text COLLATE "C" NOT NULL, -- UTC ISO-8601 'Z'
    attempts      integer NOT NULL DEFAULT 0 CHECK (attempts >= 0), -- claims so far
    claimed_by    text COLLATE "C",          -- 'host:pid:token' of the worker holding it; NULL = free
    claimed_until double precision,          -- unix seconds when the claim lapses
    not_before    double precision NOT NULL DEFAULT 0, -- unix seconds before which no worker takes it
    UNIQUE (agent, session_id, turn_id)      -- a turn handed over twice is queued once
);
CREATE INDEX outbox_claimed_by ON outbox (claimed_by);

-- Merge leases: while one writer asks the merge model about a concept, the others wait their
-- turn (first come, first served by ticket). A row of a process that is gone, or past its
-- time, is removed by the next writer that looks (under the concept's key lock).
CREATE TABLE merge_leases (
    agent      text COLLATE "C" NOT NULL,
    name       text COLLATE "C" NOT NULL,    -- the concept being merged
    holder     text COLLATE "C" NOT NULL,    -- 'host:pid:thread:token' of a writer
    ticket     integer NOT NULL,             -- arrival order among the writers of this concept
    holding    integer NOT NULL CHECK (holding IN (0, 1)), -- 1: asking the model now; 0: waiting
    expires_at double precision NOT NULL,    -- unix seconds: the lease lapses, or a waiter that
                                             -- stopped polling is forgotten
    PRIMARY KEY (agent, name, holder)
);
