-- requires: fts5
-- 002: the FTS5 index over concepts (external content: the text stays in `concepts`).
-- Tokenised by the `insika` tokenizer (registered by the store on every connection), so
-- it holds the same analysed terms as Index::Scan: folded, stop words out, stemmed, with
-- numeric range blocks. Skipped (left pending) where SQLite lacks FTS5.

CREATE VIRTUAL TABLE concepts_fts USING fts5(
    name,               -- the slug, hyphens read as word breaks
    description,        -- the one-line summary
    body,               -- the markdown body
    content='concepts',
    content_rowid='id',
    tokenize='insika',
    detail='full'       -- positions kept: bm25() on detail=column would re-tokenise every match
);

-- Kept in sync by triggers; an UPDATE re-indexes the row.
CREATE TRIGGER concepts_fts_insert AFTER INSERT ON concepts BEGIN
    INSERT INTO concepts_fts (rowid, name, description, body)
        VALUES (NEW.id, NEW.name, NEW.description, NEW.body);
END;
CREATE TRIGGER concepts_fts_delete AFTER DELETE ON concepts BEGIN
    INSERT INTO concepts_fts (concepts_fts, rowid, name, description, body)
        VALUES ('delete', OLD.id, OLD.name, OLD.description, OLD.body);
END;
CREATE TRIGGER concepts_fts_update AFTER UPDATE OF name, description, body ON concepts
    WHEN OLD.name IS NOT NEW.name OR OLD.description IS NOT NEW.description
      OR OLD.body IS NOT NEW.body  -- a confirmation changes counts only: nothing to re-index
BEGIN
    INSERT INTO concepts_fts (concepts_fts, rowid, name, description, body)
        VALUES ('delete', OLD.id, OLD.name, OLD.description, OLD.body);
    INSERT INTO concepts_fts (rowid, name, description, body)
        VALUES (NEW.id, NEW.name, NEW.description, NEW.body);
END;

-- Rows written before this migration.
INSERT INTO concepts_fts (concepts_fts) VALUES ('rebuild');

-- Document frequency per term (the FTS5 adapter drops the most common query terms
-- before ranking when rarer ones are enough to fill top-k).
CREATE VIRTUAL TABLE concepts_fts_vocab USING fts5vocab(concepts_fts, 'row');
