-- The FTS5 index over concepts, layout 2 (`insika_knowledge.store.fts.LAYOUT`).
-- Not a numbered migration: the index is derived data, dropped and rebuilt by
-- `store.fts.ensure_index` whenever this layout or the analysis version differs from
-- what `meta` records. Tokenised by the `insika` tokenizer, which the index layer gives
-- the store, so it holds the same analysed terms as Index::Scan.
--
-- Each indexed text is `<agent> || char(31) || <text>`: the tokenizer indexes every term
-- as `<agent> US <term>`, so document frequencies and bm25's idf are the agent's own,
-- and a query matches only its agent's concepts.

DROP TRIGGER IF EXISTS concepts_fts_insert;
DROP TRIGGER IF EXISTS concepts_fts_delete;
DROP TRIGGER IF EXISTS concepts_fts_update;
DROP TABLE IF EXISTS concepts_fts_vocab;
DROP TABLE IF EXISTS concepts_fts;
DROP VIEW IF EXISTS concepts_fts_source;

-- What the index reads on 'rebuild' (external content: the text stays in `concepts`).
CREATE VIEW concepts_fts_source AS
    SELECT id,
           agent || char(31) || name        AS name,
           agent || char(31) || description AS description,
           agent || char(31) || body        AS body
      FROM concepts;

CREATE VIRTUAL TABLE concepts_fts USING fts5(
    name,               -- the slug, hyphens read as word breaks
    description,        -- the one-line summary
    body,               -- the markdown body
    content='concepts_fts_source',
    content_rowid='id',
    tokenize='insika',
    detail='full'       -- positions kept: bm25() on detail=column would re-tokenise every match
);

-- Kept in sync by triggers; an UPDATE of the indexed text re-indexes the row.
CREATE TRIGGER concepts_fts_insert AFTER INSERT ON concepts BEGIN
    INSERT INTO concepts_fts (rowid, name, description, body)
        VALUES (NEW.id, NEW.agent || char(31) || NEW.name,
                NEW.agent || char(31) || NEW.description, NEW.agent || char(31) || NEW.body);
END;
CREATE TRIGGER concepts_fts_delete AFTER DELETE ON concepts BEGIN
    INSERT INTO concepts_fts (concepts_fts, rowid, name, description, body)
        VALUES ('delete', OLD.id, OLD.agent || char(31) || OLD.name,
                OLD.agent || char(31) || OLD.description, OLD.agent || char(31) || OLD.body);
END;
CREATE TRIGGER concepts_fts_update AFTER UPDATE OF agent, name, description, body ON concepts
    WHEN OLD.agent IS NOT NEW.agent OR OLD.name IS NOT NEW.name
      OR OLD.description IS NOT NEW.description
      OR OLD.body IS NOT NEW.body  -- a confirmation changes counts only: nothing to re-index
BEGIN
    INSERT INTO concepts_fts (concepts_fts, rowid, name, description, body)
        VALUES ('delete', OLD.id, OLD.agent || char(31) || OLD.name,
                OLD.agent || char(31) || OLD.description, OLD.agent || char(31) || OLD.body);
    INSERT INTO concepts_fts (rowid, name, description, body)
        VALUES (NEW.id, NEW.agent || char(31) || NEW.name,
                NEW.agent || char(31) || NEW.description, NEW.agent || char(31) || NEW.body);
END;

-- Every row written before now.
INSERT INTO concepts_fts (concepts_fts) VALUES ('rebuild');

-- Document frequency per (agent, term): the FTS5 adapter reads it to correct typos and to
-- drop an agent's most common query terms when rarer ones are enough to fill top-k.
CREATE VIRTUAL TABLE concepts_fts_vocab USING fts5vocab(concepts_fts, 'row');
