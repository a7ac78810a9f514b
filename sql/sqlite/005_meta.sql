-- 005: what derived data was built with, e.g. the FTS5 index's layout and analysis version
-- (`insika_knowledge.store.fts`): a mismatch at open rebuilds the index.

CREATE TABLE meta (
    key   TEXT PRIMARY KEY,                 -- e.g. 'fts_layout', 'analysis_version'
    value TEXT NOT NULL                     -- the recorded value, as text
) WITHOUT ROWID;
