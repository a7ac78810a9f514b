-- 016: a deleted concept keeps its quarantine row, so restoring it holds it again (a
-- delete and a restore released a customer-only rule before); a new concept written under
-- a deleted name clears the row (`ConceptWrites.put`: reasons `extract` and `edit`).

DROP TRIGGER quarantine_follows_delete;
