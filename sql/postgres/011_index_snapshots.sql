-- formerly: 006_index_snapshots
-- 011: derived search-index snapshots (sql/sqlite/011_index_snapshots.sql), on PostgreSQL: a replica opens an
-- agent's index from here instead of re-analysing every concept. Same table and semantics.

CREATE TABLE index_snapshots (
    agent text COLLATE "C" NOT NULL,        -- the agent whose concepts it indexes
    kind  text COLLATE "C" NOT NULL,        -- which index wrote it, e.g. 'bm25'
    data  bytea NOT NULL,                   -- the index's own format (`index.snapshot`)
    PRIMARY KEY (agent, kind)
);
