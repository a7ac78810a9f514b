-- 017: the tenant's key for session pseudonyms (`insika_knowledge.privacy.pseudonyms`): a
-- session id holding personal data is stored as its redacted text and an HMAC under it.
-- Made here, under the migration's lock, so no write path waits for a lock to make it.

INSERT INTO meta (key, value) VALUES ('pseudonym_key', lower(hex(randomblob(32))))
ON CONFLICT (key) DO NOTHING;
