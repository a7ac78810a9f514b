-- 014: the semantic index's vectors (sql/sqlite/014_concept_vectors.sql), on PostgreSQL. A plain
-- bytea column ranked in the process with numpy, as on SQLite, whether or not the server has
-- pgvector (benchmarks/README.md says why).

CREATE TABLE concept_vectors (
    concept_id bigint NOT NULL REFERENCES concepts (id) ON DELETE CASCADE,  -- the concept embedded
    model      text COLLATE "C" NOT NULL,  -- the provider's model id
    agent      text COLLATE "C" NOT NULL,  -- the concept's agent
    version    integer NOT NULL,           -- the concept's version when its text was embedded
    digest     text COLLATE "C" NOT NULL,  -- SHA-256 of the text embedded
    seq        bigint NOT NULL,            -- write order (writers hold the 'vectors' lock)
    vector     bytea NOT NULL,             -- float32 little-endian, L2-normalised
    PRIMARY KEY (concept_id, model)
);
CREATE INDEX concept_vectors_seq ON concept_vectors (model, agent, seq);
