-- When a mapped event ends, so an event that aged out of the sync window and
-- then left the feed is kept in Google as history rather than deleted.
ALTER TABLE mappings ADD COLUMN ends_at INTEGER NOT NULL DEFAULT 0;
