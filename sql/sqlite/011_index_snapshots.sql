-- 011: derived search-index snapshots, so a process opens an agent's index instead of
-- re-analysing every concept (`insika_knowledge.index.postings`). Derived data: a missing,
-- stale or unreadable snapshot is rebuilt from `concepts`; the blob names the change-feed
-- position (concept_versions id) and generation it is current at.

CREATE TABLE index_snapshots (
    agent TEXT NOT NULL,                    -- the agent whose concepts it indexes
    kind  TEXT NOT NULL,                    -- which index wrote it, e.g. 'bm25'
    data  BLOB NOT NULL,                    -- the index's own format (`index.snapshot`)
    PRIMARY KEY (agent, kind)
);  -- a rowid table: the blob is read with incremental blob I/O
